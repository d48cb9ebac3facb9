"""CPU time for tests that check how long something takes (issue 22, item 4).

A test on a shared 2-core machine must pass at a load of 10: a CPU hog beside it stretches wall time
(5x and more) but not the CPU time a computation uses. ``cpu_time()`` is this process's CPU time over
all its threads (HiGHS may use threads) plus that of the child processes it has waited for (a CLI run
with ``subprocess.run``), so ``cpu_time() - start`` measures the work, whatever the load.
"""

from __future__ import annotations

import resource
import time


def cpu_time() -> float:
    """CPU seconds used so far by this process (all threads) and its waited-for children."""
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + kids.ru_utime + kids.ru_stime

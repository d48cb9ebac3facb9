"""One time budget for a whole method call (docs/dev/design.md, "Deadline").

``solve(instance, method, time_limit=S)`` makes one :class:`Deadline` and passes it to the method;
every inner solve, cut loop and simulation of that method takes its own limit from it
(:meth:`Deadline.limit`) and stops when it has :meth:`expired`, so ``time_limit`` bounds the call,
not each step. A method stopped by its deadline returns what it has with status ``time_limit``.

Deadlines are read on wall time (``time.perf_counter``), so ``time_limit`` is seconds of the caller's
time. With the environment variable ``OPTSCHED_DEADLINE_CLOCK=cpu`` (read at import) they are read
on this process's CPU time (``time.process_time``, all threads) instead: a method then gets the same
CPU seconds whatever the machine's load, as on an idle machine (``benchmarks/deadlines.py`` measures
overruns this way). Inner solvers that take a limit in seconds (HiGHS, CP-SAT) still read it as wall
time, so under load they stop earlier, never later.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass

#: The shortest time limit handed to an inner solver (HiGHS needs a moment to return its incumbent).
MIN_SLICE = 0.01

#: The clocks a deadline can be read on (``OPTSCHED_DEADLINE_CLOCK``).
CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def _clock_from_env():
    name = os.environ.get("OPTSCHED_DEADLINE_CLOCK", "wall")
    if name not in CLOCKS:
        raise ValueError(f"OPTSCHED_DEADLINE_CLOCK: must be one of {', '.join(CLOCKS)}, got {name!r}")
    return CLOCKS[name]


#: The clock every deadline is read on (wall time unless ``OPTSCHED_DEADLINE_CLOCK=cpu``).
clock = _clock_from_env()


@dataclass(frozen=True)
class Deadline:
    """A point in time (on :data:`clock`) by which a method must return; None = never.

    >>> Deadline.after(None).remaining() is None
    True
    >>> d = Deadline.after(60.0)
    >>> 59.0 < d.remaining() <= 60.0 and not d.expired()
    True
    """

    end: float | None = None

    @classmethod
    def after(cls, seconds: float | None) -> "Deadline":
        """The deadline ``seconds`` from now (None: no limit)."""
        if seconds is None:
            return cls(None)
        if not seconds > 0 or math.isnan(seconds):
            raise ValueError(f"time_limit: must be > 0, got {seconds}")
        return cls(clock() + float(seconds))

    def remaining(self) -> float | None:
        """Seconds left (>= 0), or None without a limit."""
        if self.end is None:
            return None
        return max(0.0, self.end - clock())

    def expired(self) -> bool:
        """True once the deadline has passed."""
        return self.end is not None and clock() >= self.end

    def limit(self, share: float = 1.0) -> float | None:
        """A time limit for one inner step: ``share`` of what is left (at least :data:`MIN_SLICE`),
        or None without a limit."""
        left = self.remaining()
        return None if left is None else max(MIN_SLICE, share * left)

    def within(self, seconds: float | None) -> "Deadline":
        """The earlier of this deadline and ``seconds`` from now (a sub-budget for one step)."""
        if seconds is None:
            return self
        other = clock() + seconds
        return Deadline(other if self.end is None else min(self.end, other))


#: No limit.
NEVER = Deadline(None)

__all__ = ["Deadline", "MIN_SLICE", "NEVER"]

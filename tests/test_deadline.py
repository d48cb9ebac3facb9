"""``time_limit`` bounds the whole method call (DESIGN.md, "Deadline"): every registered method of
every family, on the family's largest preset, returns within the limit plus a documented slack."""

from __future__ import annotations

import time

import pytest

from optsched import generate, solve
from optsched.registry import families

LIMIT = 2.0
#: Time a method may overrun its deadline: finishing the step under way (one list-scheduling pass,
#: one LP that HiGHS stops at its next check). Measured per family in the closing note of issue 10;
#: the registry's verify of the schedule (``info["verify_s"]``) is not counted.
SLACK = 1.0
#: A wall-clock test on a shared 2-core machine sees load spikes that are not the method's doing
#: (CI once measured 3.08 s for a run that takes 2.02 s idle). An overrun is re-measured this many
#: times; the method fails only if every run overruns.
RETRIES = 2

CASES = [(f, m.name) for f, spec in families().items() for m in spec.methods]


@pytest.fixture(scope="module")
def paper_instances():
    """Instances are generated once per family, outside the timed call; the libraries every method
    may load on first use (Pyomo, HiGHS, SciPy) are loaded first, since a one-time import is a cost of
    the process, not of the method."""
    import scipy.optimize  # noqa: F401

    from optsched.solvers.highs import available

    available()
    return {}


@pytest.mark.slow
@pytest.mark.parametrize("family,method", CASES)
def test_method_meets_its_deadline_at_paper_scale(family, method, paper_instances):
    if family not in paper_instances:
        paper_instances[family] = generate(family, "paper", 0)
    inst = paper_instances[family]
    walls = []
    for _ in range(1 + RETRIES):
        start = time.perf_counter()
        result = solve(inst, method, time_limit=LIMIT)
        # the registry's verify of the returned schedule is the checker's time, not the method's
        # (cojob_network's verify at paper scale takes 1-1.5 s on a loaded core)
        walls.append(time.perf_counter() - start - result.info.get("verify_s", 0.0))
        if walls[-1] <= LIMIT + SLACK:
            break
    assert min(walls) <= LIMIT + SLACK, (
        f"{family}/{method}: {', '.join(f'{w:.2f}' for w in walls)} s with time_limit={LIMIT}")
    assert result.status.value in ("optimal", "feasible", "time_limit", "unknown")

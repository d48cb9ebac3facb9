"""The shared part of every family's robustness property (issue 15 item 3): every registered
method runs on a valid, possibly degenerate instance to a status, within a few seconds, and a
returned schedule has a finite objective (never "feasible, objective inf")."""

from __future__ import annotations

import math
from typing import Any, Iterator

from optsched.method import Method
from optsched.registry import methods, solve
from optsched.result import Result, SolveStatus
from tests.timing import cpu_time


def every_method(family: str, inst: Any, time_limit: float = 2.0,
                 wall: float = 15.0) -> Iterator[tuple[Method, Result]]:
    """``(method, result)`` for every method of ``family`` on ``inst`` with ``time_limit``; each
    call checked to use less than ``wall`` CPU seconds (CPU time, so a CPU hog beside the test does not
    count) and to end with a status and, with a schedule, a finite objective."""
    for m in methods(family):
        start = cpu_time()
        res = solve(inst, m.name, time_limit=time_limit)
        took = cpu_time() - start
        assert isinstance(res.status, SolveStatus), m.name
        assert took < wall, (m.name, took)
        if res.schedule is not None:
            assert math.isfinite(res.objective), m.name
        yield m, res

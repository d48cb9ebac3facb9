"""What many test files need, in one place (issue 20 item 5).

- :func:`brute`: a family's brute-force oracle, imported normally (``tests/solvers/brute_<family>.py``);
- :func:`optimum`: the proven optimum of a generated instance, solved once per test process;
- :func:`proven`: the exact Result of any instance when it is proven optimal, else None.
"""

from __future__ import annotations

import importlib
from functools import lru_cache
from types import ModuleType
from typing import Any

from optsched import generate, solve
from optsched.result import Result, SolveStatus
from optsched.tolerance import close

#: Seconds of the exact solves of the helpers (tiny and small instances prove in well under it).
TIME_LIMIT = 60.0


def brute(family: str) -> ModuleType:
    """The brute-force oracle of ``family`` (its ``optimum(instance)`` enumerates schedules)."""
    return importlib.import_module(f"tests.solvers.brute_{family}")


def proven(instance: Any, time_limit: float = TIME_LIMIT) -> Result | None:
    """``solve(instance, "exact")`` when it proved optimality (and the model's own objective agrees
    with the checker's), else None: a bound test compares only against proven optima."""
    res = solve(instance, "exact", time_limit=time_limit)
    if res.status is not SolveStatus.OPTIMAL:
        return None
    model = res.info.get("model_objective")
    assert model is None or close(model, res.objective), (model, res.objective)
    return res


@lru_cache(maxsize=None)
def optimum(family: str, preset: str, seed: int) -> Result | None:
    """:func:`proven` on ``generate(family, preset, seed)``, cached per test process."""
    return proven(generate(family, preset, seed))


__all__ = ["TIME_LIMIT", "brute", "optimum", "proven"]

"""Family -> methods. Each family's ``solvers`` module exports ``METHODS`` (a tuple of :class:`Method`)
and ``DEFAULT_METHOD``; the registry imports it lazily, so ``optsched.problems`` and the CLI's cheap
commands never import Pyomo.

:func:`solve` is the one place where a method's output becomes a :class:`~optsched.result.Result`:
it times the call, runs the family's independent ``verify`` on the schedule and evaluates the
method's claimed guarantee on the instance.
"""

from __future__ import annotations

import importlib
import math
import time
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Callable

from optsched.errors import UnknownMethod
from optsched.result import Outcome, Result, SolveStatus

FAMILIES: dict[str, str] = {
    "elastic_cluster": "Zhou et al. (000): online PS/all-reduce jobs on heterogeneous servers, min sum w_j c_j",
    "edge_cloud": "She et al. (001): online PS jobs in edge-cloud networks, min total flow time",
    "ring_contention": "Yu et al. (002): ring-all-reduce jobs with communication contention, min makespan",
    "cojob_network": "Zhou et al. (003), Grouper: cojob stage scheduling on a big switch, min sum SCT",
    "hetero_gpu": "Chen et al. (004), Hare: task scheduling on heterogeneous GPUs, min sum w_n C_n",
}

KINDS = ("exact", "bound", "algorithm", "baseline")


@dataclass(frozen=True)
class Method:
    """One registered method of a family.

    Attributes
    ----------
    name, kind
        ``kind`` is one of ``exact`` | ``bound`` | ``algorithm`` | ``baseline``.
    func
        ``func(instance, *, time_limit=None, seed=0) -> Outcome``.
    guarantee
        ``guarantee(instance) -> float | None``: the paper's claimed bound on this instance.
    description
        One line for ``optsched methods``.
    verify
        A checker to use instead of the family's ``verify`` (for methods that deliberately relax the
        model, e.g. preemptive baselines); None means the family's ``verify``.
    in_ratios
        False for methods whose schedules are not comparable with the exact optimum.
    """

    name: str
    kind: str
    func: Callable[..., Outcome]
    guarantee: Callable[[Any], float | None] | None = None
    description: str = ""
    verify: Callable[[Any, Any], float] | None = None
    in_ratios: bool = True

    def guarantee_on(self, instance) -> float | None:
        return None if self.guarantee is None else self.guarantee(instance)


def _module(family: str, layer: str, error=UnknownMethod, where: str = "family") -> ModuleType:
    if family not in FAMILIES:
        raise error(f"{where}: unknown family {family!r} (known: {', '.join(FAMILIES)})")
    return importlib.import_module(f"optsched.{layer}.{family}")


def problem_module(family: str, error=UnknownMethod, where: str = "family") -> ModuleType:
    return _module(family, "problems", error, where)


def workload_module(family: str) -> ModuleType:
    return _module(family, "workloads")


def solver_module(family: str) -> ModuleType:
    return _module(family, "solvers")


def methods(family: str) -> tuple[Method, ...]:
    """All methods of ``family`` in registration order."""
    return tuple(solver_module(family).METHODS)


def get_method(family: str, name: str | None = None) -> Method:
    """The method called ``name`` (default: the family's ``DEFAULT_METHOD``)."""
    module = solver_module(family)
    name = name or module.DEFAULT_METHOD
    for method in module.METHODS:
        if method.name == name:
            return method
    known = ", ".join(m.name for m in module.METHODS)
    raise UnknownMethod(f"method: {family} has no method {name!r} (known: {known})")


def solve(instance, method: str | None = None, *, time_limit: float | None = None,
          seed: int = 0) -> Result:
    """Run one method on one instance and return a verified :class:`Result`.

    The schedule is checked by the family's independent ``verify`` (or the method's own checker)
    before the Result is made; an infeasible schedule raises ``InfeasibleSchedule``.
    """
    family = instance.FAMILY
    entry = get_method(family, method)
    start = time.perf_counter()
    outcome = entry.func(instance, time_limit=time_limit, seed=seed)
    runtime = time.perf_counter() - start
    return make_result(instance, entry, outcome, runtime, seed)


def make_result(instance, entry: Method, outcome: Outcome, runtime: float, seed: int) -> Result:
    """Verify ``outcome``'s schedule and wrap it as a Result."""
    info = {"seed": seed, **outcome.info}
    objective = math.inf
    if outcome.schedule is not None:
        check = entry.verify or problem_module(instance.FAMILY).verify
        objective = float(check(instance, outcome.schedule))
        _check_model_objective(info, objective)
    status = outcome.status
    if outcome.schedule is None and status is SolveStatus.FEASIBLE:
        status = SolveStatus.UNKNOWN
    return Result(status=status, objective=objective, lower_bound=outcome.lower_bound,
                  runtime_s=runtime, method=entry.name, guarantee=entry.guarantee_on(instance),
                  schedule=outcome.schedule, info=info)


def _check_model_objective(info: dict, objective: float) -> None:
    """Record whether a model's own objective agrees with the checker's (a model bug otherwise)."""
    model_obj = info.get("model_objective")
    if model_obj is None:
        return
    agree = abs(model_obj - objective) <= 1e-6 * max(1.0, abs(objective))
    info["model_objective_agrees"] = agree

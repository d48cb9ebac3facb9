"""The registry: collects every family's :class:`~optsched.family.Family` and runs methods.

The five built-in families are imported here by name (``solvers.<family>.SPEC``); a new family is
added with :func:`register`. Nothing else in optsched resolves a family from a string.

:func:`solve` is the one place where a method's output becomes a :class:`~optsched.result.Result`:
it makes the call's :class:`~optsched.deadline.Deadline`, times the call, runs the family's
independent ``verify`` on the schedule (demoting ``optimal`` when the model's own objective
disagrees with it) and evaluates the method's claimed guarantee on the instance.
"""

from __future__ import annotations

import importlib
import time
from typing import Any

from optsched import tolerance
from optsched.deadline import Deadline
from optsched.errors import UnknownMethod
from optsched.family import Family
from optsched.method import Method
from optsched.result import Outcome, Result, SolveStatus

#: The built-in families, in the order :func:`families` lists them; each is imported on first use
#: (``optsched.solvers.<name>.SPEC``), so a command on one family loads only that one.
BUILTIN = ("elastic_cluster", "edge_cloud", "ring_contention", "cojob_network", "hetero_gpu")
_FAMILIES: dict[str, Family] = {}


def _load(name: str) -> Family:
    if name not in _FAMILIES:
        _FAMILIES[name] = importlib.import_module(f"optsched.solvers.{name}").SPEC
    return _FAMILIES[name]


def families() -> dict[str, Family]:
    """Every registered family by name, built-in ones first (imports every built-in family).

    Returns
    -------
    dict[str, Family]
        Name -> :class:`~optsched.family.Family`; :func:`family_names` lists the names without
        importing any family.

    Examples
    --------
    >>> from optsched import families
    >>> list(families())[:5]
    ['elastic_cluster', 'edge_cloud', 'ring_contention', 'cojob_network', 'hetero_gpu']
    """
    built_in = {name: _load(name) for name in BUILTIN}
    return {**built_in, **{n: f for n, f in _FAMILIES.items() if n not in built_in}}


def register(family: Family) -> None:
    """Add a family (a sixth paper, or a toy in tests); its name must be new.

    Parameters
    ----------
    family
        A :class:`~optsched.family.Family`: generators, verify, methods; every command and
        experiment then takes its name like a built-in one's.

    Raises
    ------
    ValueError
        When a family of that name is already registered.

    Examples
    --------
    >>> from optsched import get_family, register
    >>> register(get_family("ring_contention"))
    Traceback (most recent call last):
    ...
    ValueError: family 'ring_contention' is already registered
    """
    if family.name in BUILTIN or family.name in _FAMILIES:
        raise ValueError(f"family {family.name!r} is already registered")
    _FAMILIES[family.name] = family


def unregister(name: str) -> None:
    """Remove a family added with :func:`register`."""
    if name not in BUILTIN:
        _FAMILIES.pop(name, None)


def get_family(name: Any, error: type[Exception] = UnknownMethod, where: str = "family") -> Family:
    """The family called ``name``.

    Parameters
    ----------
    name
        A family name (``optsched families``).
    error, where
        The exception raised when there is no such family, and the field its message names.

    Returns
    -------
    Family

    Examples
    --------
    >>> from optsched import get_family
    >>> get_family("hetero_gpu").method().name          # its default method: the paper's algorithm
    'hare'
    >>> get_family("nosuch")
    Traceback (most recent call last):
    ...
    optsched.errors.UnknownMethod: family: unknown family 'nosuch' (known: elastic_cluster, edge_cloud, ring_contention, cojob_network, hetero_gpu)
    """
    if isinstance(name, str) and name in BUILTIN:
        return _load(name)
    if isinstance(name, str) and name in _FAMILIES:
        return _FAMILIES[name]
    raise error(f"{where}: unknown family {name!r} (known: {', '.join(family_names())})")


def family_names() -> list[str]:
    """Every registered family's name, built-in ones first, without importing any family."""
    return [*BUILTIN, *(n for n in _FAMILIES if n not in BUILTIN)]


def family_of(instance: Any) -> Family:
    """The family of an Instance (its ``FAMILY`` tag).

    Examples
    --------
    >>> from optsched import family_of, generate
    >>> family_of(generate("edge_cloud", "tiny", 0)).name
    'edge_cloud'
    """
    return get_family(getattr(instance, "FAMILY", None), where="instance")


def methods(family: str) -> tuple[Method, ...]:
    """All methods of ``family`` in registration order.

    Returns
    -------
    tuple[Method, ...]
        What ``optsched methods FAMILY`` lists: exact, bounds, the paper's algorithm(s) and
        readings, baselines.

    Examples
    --------
    >>> from optsched import methods
    >>> sorted({m.kind for m in methods("cojob_network")})
    ['algorithm', 'baseline', 'bound', 'exact']
    """
    return get_family(family).methods


def get_method(family: str, name: str | None = None) -> Method:
    """The method called ``name`` of ``family``.

    Parameters
    ----------
    family
        A family name.
    name
        A method name (None: the family's default method, its paper algorithm).

    Returns
    -------
    Method

    Raises
    ------
    UnknownMethod
        One line naming the family's methods when there is no such method.

    Examples
    --------
    >>> from optsched import get_method
    >>> m = get_method("ring_contention", "exact")
    >>> m.kind, m.model is not None      # exact methods declare the model they solve
    ('exact', True)
    """
    return get_family(family).method(name)


def solve(instance: Any, method: str | None = None, *, time_limit: float | None = None,
          seed: int = 0, solver: str | None = None) -> Result:
    """Run one method on one instance within ``time_limit`` seconds and return a verified Result.

    Parameters
    ----------
    instance
        An instance of any registered family.
    method
        A method name of the family (``optsched methods FAMILY``); None: the paper's algorithm.
    time_limit
        Seconds for the whole call, inner solves and loops included (None: no limit). Hitting it
        is a status (``time_limit``), never an exception.
    seed
        Seed of randomised methods and of the solvers.
    solver
        See below.

    Returns
    -------
    Result
        ``status``, ``objective`` (recomputed by the family's checker; inf without a schedule),
        ``lower_bound``, ``runtime_s`` (the method's, imports excluded), ``method``,
        ``guarantee`` (the paper's claimed bound on this instance, or None), ``schedule`` and
        ``info`` (solver, parameters, model sizes, ...).

    Examples
    --------
    >>> from optsched import generate
    >>> inst = generate("edge_cloud", "tiny", 0)
    >>> opt, alg = solve(inst, "exact"), solve(inst, "a_online")
    >>> opt.status.value, opt.objective <= alg.objective
    ('optimal', True)

    The schedule is checked by the family's independent ``verify`` (or the method's own checker)
    before the Result is made; an infeasible schedule raises ``InfeasibleSchedule``.

    ``solver`` names the solver of every Pyomo model the method solves (``highs``, the default
    and reference; ``scip`` with the extra ``scip``; any solver Pyomo drives when installed);
    None keeps the one in force (:func:`optsched.solvers.options.using`).

    ``exact`` on an instance whose model is not built (past its size cap, or too big for the time
    left: ``info["not_built"]``) goes on with :func:`optsched.certificate.certify` for the time
    left (its default when there is no limit): the Result is then the certified interval, with
    ``info["not_built"]`` and ``info["certified"]``.
    """
    entry = family_of(instance).method(method)
    if solver is not None:
        from dataclasses import replace

        from optsched.solvers.options import current, using

        with using(replace(current(), name=solver)):
            return solve(instance, method, time_limit=time_limit, seed=seed)
    if entry.kind in ("exact", "bound"):
        import optsched.solvers.highs  # noqa: F401 - Pyomo and HiGHS load outside runtime_s
    deadline = Deadline.after(time_limit)
    start = time.perf_counter()
    outcome = entry.run(instance, deadline, seed)
    runtime = time.perf_counter() - start
    result = make_result(instance, entry, outcome, runtime, seed)
    if entry.name == "exact" and "not_built" in result.info and not deadline.expired():
        return _certified(instance, result, deadline, seed)
    return result


def _certified(instance: Any, exact: Result, deadline: Deadline, seed: int) -> Result:
    """``exact`` whose model was not built, continued by certify for the time left."""
    from optsched.certificate import certify

    cert = certify(instance, time_limit=deadline.remaining(), seed=seed, known=[exact])
    info = {**cert.info, "not_built": exact.info["not_built"], "certified": True}
    return Result(status=cert.status, objective=cert.objective, lower_bound=cert.lower_bound,
                  runtime_s=exact.runtime_s + cert.runtime_s, method="exact", guarantee=None,
                  schedule=cert.schedule, info=info)


def make_result(instance: Any, entry: Method, outcome: Outcome, runtime: float,
                seed: int) -> Result:
    """Verify ``outcome``'s schedule and wrap it as a Result.

    A model objective (``Outcome.model_objective``) that disagrees with the checker's is a model
    bug: the status is demoted from ``optimal`` to ``feasible`` and ``info["model_objective_agrees"]``
    is False, so no ratio ever divides by it. A lower bound above the verified objective is no
    bound: it is dropped (``info["bound_dropped"]`` says why) and ``optimal`` is demoted.
    """
    info: dict[str, Any] = {"seed": seed, **outcome.info}
    if entry.params is not None:
        info["params"] = entry.params.to_dict()
    objective = float("inf")
    status = outcome.status
    if outcome.schedule is not None:
        check = entry.verify or family_of(instance).verify
        started, cpu = time.perf_counter(), time.process_time()
        objective = float(check(instance, outcome.schedule))
        info["verify_s"] = time.perf_counter() - started  # the checker's time, not the method's
        info["verify_cpu_s"] = time.process_time() - cpu  # (its CPU time: what load does not stretch)
        model_obj = outcome.model_objective
        if model_obj is not None:
            info["model_objective"] = model_obj
            info["model_objective_agrees"] = tolerance.close(model_obj, objective)
            if not info["model_objective_agrees"] and status is SolveStatus.OPTIMAL:
                status = SolveStatus.FEASIBLE
                info["demoted"] = f"model objective {model_obj:.10g} != verify {objective:.10g}"
    elif status is SolveStatus.FEASIBLE:
        status = SolveStatus.UNKNOWN
    bound = outcome.lower_bound
    if bound is not None and not tolerance.at_most(bound, objective):
        # a "lower bound" above a schedule verify accepts is no bound: a model bug, reported
        info["bound_dropped"] = f"lower bound {bound:.10g} > verified objective {objective:.10g}"
        bound = None
        if status is SolveStatus.OPTIMAL:
            status = SolveStatus.FEASIBLE
    return Result(status=status, objective=objective, lower_bound=bound,
                  runtime_s=runtime, method=entry.name, guarantee=entry.guarantee_on(instance),
                  schedule=outcome.schedule, info=info)


__all__ = ["families", "family_of", "get_family", "get_method", "make_result", "methods",
           "register", "solve", "unregister"]

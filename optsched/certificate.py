"""Certified gaps at any scale: an interval [LB, UB] on the optimum of one instance (issue 19).

:func:`certify` runs three sides against one :class:`~optsched.deadline.Deadline`:

1. **exact** (a share of the time): the family's exact method. On small instances it proves the
   optimum and certify is done; past its model-size cap it returns at once with the best
   heuristic and a bound (it is never built, ``info["not_built"]``).
2. **lower side**: the family's strongest bound method (:attr:`~optsched.family.CertifySpec.bound`),
   any-time: whatever it returns when its share of the time ends is a valid bound. It runs before
   the upper side because it needs no schedule and is the slow side at paper scale.
3. **upper side**: every start method (the family's ``algorithm`` and ``baseline`` methods, or
   :attr:`~optsched.family.CertifySpec.starts`), each verified by the family's checker (and, while
   no schedule exists, :attr:`~optsched.family.CertifySpec.fallback` with the time left); then the
   family's any-time improvement (:attr:`~optsched.family.CertifySpec.improve`: neighbourhoods of
   the best schedule re-optimised by the exact models), verified again, with the time left; an
   improvement whose signature has ``goal`` is given the best bound and stops once it meets it.

The Result's ``objective`` is the best verified schedule, ``lower_bound`` the best bound, and
``status`` ``optimal`` when they meet (within the tolerance of :mod:`optsched.tolerance`);
``info`` names the gap ``UB / LB - 1``, the method behind each side and what every step gave
(``info["steps"]``: method, side, value, status, seconds).
"""

from __future__ import annotations

import inspect
import math
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from optsched import tolerance
from optsched.deadline import Deadline
from optsched.errors import InfeasibleSchedule
from optsched.family import Family
from optsched.method import Method
from optsched.registry import family_of, make_result
from optsched.result import Outcome, Result, SolveStatus

#: Seconds certify takes when it is given no limit (the improvement and the bound are any-time
#: loops: a limit is what ends them).
DEFAULT_TIME_LIMIT = 600.0
#: Share of the time left that the exact method may use first (it proves small instances; past its
#: size cap it returns at once).
EXACT_SHARE = 0.3
#: Share of the time left that each start heuristic may use (its deadline; most take a second).
START_SHARE = 0.1
#: The share of a start heuristic while no verified schedule exists yet (certify must end with one).
FIRST_START_SHARE = 0.5
#: Share of the time left (after the exact step) that the bound may use; the start heuristics and
#: the improvement get the rest.
BOUND_SHARE = 0.5


@dataclass
class Sides:
    """The best verified schedule (upper side) and the best valid bound (lower side) so far."""

    upper: float = math.inf
    schedule: Any = None
    upper_by: str | None = None
    lower: float = -math.inf
    lower_by: str | None = None
    guide: Any = None   # the last Outcome.guide a step returned (handed to the improvement)

    def offer(self, result: Result, name: str) -> None:
        """Take ``result``'s verified schedule and its bound where they improve a side."""
        if result.schedule is not None and result.objective < self.upper:
            self.upper, self.schedule, self.upper_by = result.objective, result.schedule, name
        if result.lower_bound is not None and result.lower_bound > self.lower:
            self.lower, self.lower_by = result.lower_bound, name

    def closed(self) -> bool:
        """True when the bound meets the schedule (the schedule is optimal)."""
        return self.schedule is not None and tolerance.at_most(self.upper, self.lower)

    def gap(self) -> float | None:
        """UB / LB - 1 (0 when closed; None without a positive bound or a schedule)."""
        if self.closed():
            return 0.0
        if self.schedule is None or not self.lower > 0:
            return None
        return self.upper / self.lower - 1


def certify(instance: Any, *, time_limit: float | None = 600.0, seed: int = 0,
            known: Iterable[Result] = (),
            progress: Callable[[dict], None] | None = None) -> Result:
    """Prove an interval [LB, UB] on the optimum of ``instance`` within ``time_limit`` seconds.

    Parameters
    ----------
    instance
        An instance of any registered family.
    time_limit
        Seconds for the whole call (None: :data:`DEFAULT_TIME_LIMIT`).
    seed
        Passed to every method.
    known
        Results already computed on this instance with ``seed`` (e.g. by ``optsched compare`` or
        by ``solve(..., "exact")``): their verified schedules and bounds are offered to the sides
        first, and the methods they name are not run again.
    progress
        Called with every step's record (the lines of ``info["steps"]``) as it finishes.

    Returns
    -------
    Result
        ``method`` "certify"; ``objective`` the best verified schedule's objective (UB),
        ``lower_bound`` the best valid bound (LB), ``status`` ``optimal`` when they meet, else
        ``feasible`` (``time_limit`` when the deadline cut a step short); ``info["gap"]`` is
        UB / LB - 1, ``info["upper_by"]`` / ``info["lower_by"]`` name the method behind each
        side and ``info["steps"]`` lists every step.

    Examples
    --------
    >>> from optsched import generate
    >>> res = certify(generate("ring_contention", "tiny", 0), time_limit=60)
    >>> res.status.value, res.info["gap"]
    ('optimal', 0.0)
    """
    family = family_of(instance)
    deadline = Deadline.after(DEFAULT_TIME_LIMIT if time_limit is None else time_limit)
    started = time.perf_counter()
    sides, steps = Sides(), Steps(progress)
    done = set()
    for result in known:
        sides.offer(result, result.method)
        steps.append(_record(result.method, "known", result))
        done.add(result.method)
    if "exact" not in done:
        _run_exact(family, instance, sides, steps, deadline, seed)
    if not sides.closed():   # the bound first: it needs no schedule, and it is the slow side
        _run_bound(family, instance, sides, steps, deadline, seed, done)
    if not sides.closed():
        _run_starts(family, instance, sides, steps, deadline, seed, done)
    if sides.schedule is None:
        _run_fallback(family, instance, sides, steps, deadline, seed, done)
    if not sides.closed():
        _run_improve(family, instance, sides, steps, deadline, seed)
    return _result(instance, sides, steps, deadline, time.perf_counter() - started)


class Steps(list):
    """``info["steps"]``: a list that also reports every record appended to it."""

    def __init__(self, progress: Callable[[dict], None] | None = None):
        super().__init__()
        self.progress = progress

    def append(self, record: dict) -> None:
        super().append(record)
        if self.progress is not None:
            self.progress(record)


def _step(family: Family, instance: Any, entry: Method, deadline: Deadline, seed: int,
          side: str, sides: Sides, steps: list[dict]) -> Result | None:
    """Run one registered method under ``deadline``, verify it and offer it to ``sides``."""
    started = time.perf_counter()
    try:
        outcome = entry.run(instance, deadline, seed)
        result = make_result(instance, entry, outcome, time.perf_counter() - started, seed)
    except InfeasibleSchedule as exc:  # a method's bug must not sink the certificate
        steps.append({"method": entry.name, "side": side, "error": str(exc),
                      "seconds": time.perf_counter() - started})
        return None
    sides.offer(result, entry.name)
    if outcome.guide is not None:
        sides.guide = outcome.guide
    steps.append(_record(entry.name, side, result))
    return result


def _record(name: str, side: str, result: Result) -> dict:
    """One line of ``info["steps"]``."""
    line = {"method": name, "side": side, "status": result.status.value,
            "objective": _plain(result.objective), "lower_bound": result.lower_bound,
            "seconds": result.runtime_s}
    if "not_built" in result.info:
        line["not_built"] = result.info["not_built"]
    if "verify_cpu_s" in result.info:
        line["verify_s"] = result.info["verify_cpu_s"]
    return line


def _run_exact(family: Family, instance: Any, sides: Sides, steps: list[dict],
               deadline: Deadline, seed: int) -> None:
    entry = family.method("exact")
    _step(family, instance, entry, deadline.within(deadline.limit(EXACT_SHARE)), seed, "exact",
          sides, steps)


def start_methods(family: Family) -> list[Method]:
    """The methods whose schedules start the upper side (see :class:`~optsched.family.CertifySpec`)."""
    if family.certify.starts is not None:
        return [family.method(n) for n in family.certify.starts]
    return [m for m in family.methods if m.kind in ("algorithm", "baseline") and not m.relaxed]


def _run_starts(family: Family, instance: Any, sides: Sides, steps: list[dict],
                deadline: Deadline, seed: int, done: set[str]) -> None:
    for entry in start_methods(family):
        if entry.name in done:
            continue
        if deadline.expired():
            steps.append({"method": entry.name, "side": "upper", "skipped": "deadline"})
            continue
        # until some schedule exists a start may take half of what is left (a paper-scale
        # simulation can need more than START_SHARE on a loaded machine); then START_SHARE
        share = START_SHARE if sides.schedule is not None else FIRST_START_SHARE
        _step(family, instance, entry, deadline.within(deadline.limit(share)), seed,
              "upper", sides, steps)


def _run_fallback(family: Family, instance: Any, sides: Sides, steps: list[dict],
                  deadline: Deadline, seed: int, done: set[str]) -> None:
    """:attr:`~optsched.family.CertifySpec.fallback`: while no schedule exists, each with all the
    time left (cojob_network at load 15: exact's warm start did not finish in its share)."""
    for name in family.certify.fallback:
        if sides.schedule is not None or deadline.expired() or name in done:
            continue
        _step(family, instance, family.method(name), deadline, seed, "upper", sides, steps)


def _run_bound(family: Family, instance: Any, sides: Sides, steps: list[dict],
                deadline: Deadline, seed: int, done: set[str]) -> None:
    entry = certify_bound(family)
    if entry is None or entry.name in done or deadline.expired():
        return
    share = family.certify.bound_share or BOUND_SHARE
    share = share if family.certify.improve is not None else 1.0
    _step(family, instance, entry, deadline.within(deadline.limit(share)), seed, "lower",
          sides, steps)


def certify_bound(family: Family) -> Method | None:
    """The bound method certify runs (:attr:`~optsched.family.CertifySpec.bound`, else
    :meth:`~optsched.family.Family.bound_method`)."""
    name = family.certify.bound
    return family.method(name) if name else family.bound_method()


def _run_improve(family: Family, instance: Any, sides: Sides, steps: list[dict],
                 deadline: Deadline, seed: int) -> None:
    improve = family.certify.improve
    if improve is None or sides.schedule is None or deadline.expired():
        return
    start = sides.schedule
    # an improvement that takes a ``goal`` stops once its schedule meets the bound (it is then
    # optimal: nothing is left to find), instead of searching until the deadline
    extra: dict[str, Any] = {}
    if takes(improve, "goal") and sides.lower > -math.inf:
        extra["goal"] = sides.lower
    if takes(improve, "guide"):   # what the bound (or exact) learned, instead of a cache
        extra["guide"] = sides.guide

    def run(inst: Any, *, deadline: Deadline, seed: int = 0) -> Outcome:
        return improve(inst, start, deadline=deadline, seed=seed, **extra)

    entry = Method("improve", "algorithm", run, description="neighbourhood re-optimisation")
    _step(family, instance, entry, _before_verify(deadline, steps), seed, "upper", sides, steps)


#: Margin on the longest verify measured so far, kept free at the end of improve's time.
VERIFY_MARGIN = 1.5


def _before_verify(deadline: Deadline, steps: list[dict]) -> Deadline:
    """``deadline`` less the time the improved schedule's verify will take (the longest verify
    of the steps so far, x :data:`VERIFY_MARGIN`): improve searches until its deadline, and the
    registry verifies its schedule after it, so without this the call ends past the limit by
    one verify (cojob_network at paper scale: 1.6-1.7 CPU-s past a 20-s limit, issue 22 item 3)."""
    reserve = VERIFY_MARGIN * max((step.get("verify_s", 0.0) for step in steps), default=0.0)
    left = deadline.remaining()
    if left is None or reserve <= 0.0:
        return deadline
    return deadline.within(max(0.0, left - reserve))


def takes(improve: Callable[..., Outcome], name: str) -> bool:
    """True when ``improve`` accepts the keyword ``name`` (``goal``: a valid lower bound, stop
    once it is met; ``guide``: the last :attr:`~optsched.result.Outcome.guide` of a step)."""
    return name in inspect.signature(improve).parameters


def takes_goal(improve: Callable[..., Outcome]) -> bool:
    """True when ``improve`` accepts ``goal=`` (a valid lower bound: stop once it is met)."""
    return takes(improve, "goal")


def _result(instance: Any, sides: Sides, steps: list[dict], deadline: Deadline,
            runtime: float) -> Result:
    if sides.closed():
        status = SolveStatus.OPTIMAL
    elif sides.schedule is None:
        status = SolveStatus.UNKNOWN
    else:
        cut = any(s.get("status") == SolveStatus.TIME_LIMIT.value or "skipped" in s
                  for s in steps)
        status = SolveStatus.TIME_LIMIT if cut or deadline.expired() else SolveStatus.FEASIBLE
    info: dict[str, Any] = {"gap": sides.gap(), "upper_by": sides.upper_by,
                            "lower_by": sides.lower_by, "steps": list(steps)}
    lower = None if sides.lower == -math.inf else min(sides.lower, sides.upper)
    if lower is not None and not tolerance.at_most(sides.lower, sides.upper):
        # a bound above a verified schedule is no bound (a model bug): reported, not used
        info["bound_dropped"] = f"{sides.lower_by} bound {sides.lower:.10g} > {sides.upper:.10g}"
        lower, info["gap"], status = None, None, SolveStatus.FEASIBLE
    return Result(status=status, objective=sides.upper, lower_bound=lower, runtime_s=runtime,
                  method="certify", guarantee=None, schedule=sides.schedule, info=info)


def _plain(x: float) -> float | str:
    return "inf" if math.isinf(x) else x


__all__ = ["BOUND_SHARE", "DEFAULT_TIME_LIMIT", "EXACT_SHARE", "FIRST_START_SHARE", "START_SHARE", "Sides", "certify", "certify_bound",
           "start_methods"]

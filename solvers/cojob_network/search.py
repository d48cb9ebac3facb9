"""cojob_network: the upper side of certify (issue 19; the search is ours, its schedules the
paper's) -- an any-time local search over stage orders, each run by order-preserving priority
flow scheduling (Grouper, Zhou et al., Sec. III-D: a stage permutation ``sigma``, flows of
earlier stages first, the chains (g, k) before (g, k + 1) kept), on the event-driven simulator
of :mod:`optsched.simulate.flows`.

:func:`improve` descends by first improvement over adjacent swaps and short insertions
(:func:`_moves`) and, beyond the paper's class, merges of neighbouring stages of different cojobs
into one priority class (:class:`Blocks`), each neighbour simulated incrementally from a
checkpoint of the current run (:func:`_evaluate`), with kicks at local optima (iterated local
search). It is certify's ``improve`` (guided by the stage order of
:func:`~optsched.solvers.cojob_network.bounds.order_bound`), and
:func:`~optsched.solvers.cojob_network.exact.exact` runs it on its incumbent. Moved out of
:mod:`.exact` unchanged, so that every family's search has the same place.
"""

from __future__ import annotations

import bisect
import math
import random
import time
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from optsched.deadline import Deadline
from optsched.errors import InfeasibleSchedule
from optsched.problems import cojob_network as _problem
from optsched.problems.cojob_network import Instance, Schedule
from optsched.result import Outcome, SolveStatus
from optsched.simulate.flows import StageOrder, schedule_of, simulate, sum_sct
from optsched.solvers.cojob_network import fluid
from optsched.solvers.cojob_network.algorithm import why_stopped
from optsched.tolerance import at_most

@dataclass(frozen=True)
class Blocks:
    """A stage order whose neighbours may share a priority class: ``order[i]`` shares the class
    of ``order[i - 1]`` when ``i`` is in ``shared`` (flows of one class share the ports max-min
    fairly, :func:`~optsched.simulate.flows.allocate`). ``shared`` empty: the paper's
    order-preserving scheduling of ``order`` (Sec. III-D); every other ``shared`` is a schedule
    outside that class (stages merged into one class, as a stage's own jobs are)."""

    order: tuple
    shared: frozenset = frozenset()

    def classes(self) -> dict:
        """Each stage's class: the number of class boundaries before it."""
        out, c = {}, 0
        for n, a in enumerate(self.order):
            c += bool(n) and n not in self.shared
            out[a] = c
        return out


class BlockOrder:
    """The simulator policy of a :class:`Blocks`: a job's flows get the class of its current
    stage (:meth:`Blocks.classes`); with nothing shared, the same allocation as
    :class:`~optsched.simulate.flows.StageOrder` (classes in the same relative order)."""

    name = "block_order"

    def __init__(self, plan: Blocks):
        self.position = plan.classes()

    def classes(self, sim, events):
        return {(g, j): self.position[g, sim.stage[g]] for g, j in sim.communicating()}


def _plan(cand: Any) -> Blocks:
    """A candidate of :func:`improve` as :class:`Blocks` (a plain stage order shares nothing)."""
    return cand if isinstance(cand, Blocks) else Blocks(tuple(cand))


def _policy(plan: Blocks):
    return StageOrder(plan.order) if not plan.shared else BlockOrder(plan)


#: improve checkpoints the current order's run before every this many allocations; a neighbour is
#: simulated from the last checkpoint before the two orders first rank in-flight stages apart.
CHECK_EVERY = 40


def improve(instance: Instance, start: Schedule, *, deadline: Deadline, seed: int = 0,
            goal: float | None = None, guide: Any = None) -> Outcome:
    """Local search over stage orders, each evaluated by order-preserving priority scheduling.

    The paper's schedules are stage permutations ``sigma`` run by order-preserving flow scheduling
    (Sec. III-D, the simulator of :mod:`optsched.simulate.flows`): this searches that space from
    the better of the completion order of ``start`` and ``guide`` (a stage order, e.g. Model F's
    from :func:`.bounds.order_bound`, used when it keeps the chains, Sec. III-D precedence) by
    first-improvement moves, adjacent swaps and insertions (:func:`_moves`) and, beyond the
    paper's class, merging two neighbouring stages of different cojobs into one priority class
    or splitting them again (:class:`Blocks`, :func:`_toggles`: flows of one class share ports
    max-min fairly, as a stage's own jobs do; paper seed 0, Model F's order: 43,142 as a stage
    order, 42,593 with one merge), tried in the order of their Model F cost
    (:func:`order_cost`, a cheap surrogate; ties shuffled by ``seed``). A
    neighbour is simulated incrementally (:func:`_evaluate`): from the current order's last
    checkpoint before the first moment the two orders rank two in-flight stages apart, or not at
    all when they never do (the same run). The search stops under ``deadline`` less the time of
    one recorded simulation and two ``verify`` of ``start``, kept for the final check; at a local
    optimum with time left, the best order so far is kicked (:func:`_kick`, :data:`KICK_MOVES`
    random moves) and the descent goes on from there (iterated local search). Never worse
    than ``start`` (returned when nothing better is found or the best run fails ``verify``); the
    returned schedule is verified. ``goal`` (a valid lower bound, certify's) ends the search once
    a run meets it.
    """
    began = time.perf_counter()
    value = _problem.verify(instance, start)
    reserve = 2.0 * (time.perf_counter() - began) + 0.1
    rng = random.Random(seed)
    info: dict[str, Any] = {"start": value, "evaluated": 0, "improved": 0, "unchanged": 0}
    best: dict[str, Any] = {"value": value}
    began = time.perf_counter()
    base = _first_base(instance, start, guide, deadline, best, info)
    if base is not None and deadline.end is not None:   # one recorded run at the end
        reserve += RECORD_MARGIN * (time.perf_counter() - began) / max(1, info["evaluated"])
    if deadline.end is not None and fluid.applies(instance):   # the last FLUID_SHARE: order LPs
        reserve += FLUID_SHARE * max(0.0, (deadline.remaining() or 0.0) - reserve)
    search = deadline if deadline.end is None else Deadline(deadline.end - reserve)

    def done() -> bool:
        return search.expired() or (goal is not None and at_most(best["value"], goal))

    top = base                                        # the best run found (kicks start there)
    while base is not None and top is not None and not done():
        step = _descend(instance, base, rng, search, best, info, done)
        if step is not None:
            base = step
            top = step if step.value < top.value else top
            continue
        if search.end is None or done():              # a local optimum and no deadline: stop
            break
        kicked = None                                 # iterated local search: perturb the best
        while kicked is None and not done():          # (a kick that changes no run: again)
            info["kicks"] = info.get("kicks", 0) + 1
            _, kicked = _evaluate(instance, top, Blocks(_kick(top.order, rng), top.shared),
                                  search, best, info)
        base = kicked or top
    schedule = _checked_best(instance, start, value, best, info, deadline)
    current = info["value"] if schedule is not start else value
    schedule = _fluid_polish(instance, schedule, current, guide, deadline, goal, info)
    status = SolveStatus.TIME_LIMIT if search.expired() else SolveStatus.FEASIBLE
    return Outcome(schedule, status, None, info)


#: Share of :func:`improve`'s time left after its first runs that goes to :func:`.fluid.search`
#: from the best order found and ``guide``. Order LP schedules beat the simulated search by far at
#: paper scale (seed 0: the search reached 40,597 in 600 s, the order LP of Model F's order gives
#: 40,086 in 0.01 s and its descent 39,212.5 in ~6 s), so they get most of the time.
FLUID_SHARE = 0.7


def _fluid_polish(instance: Instance, schedule: Schedule, current: float, guide: Any,
                  deadline: Deadline, goal: float | None, info: dict) -> Schedule:
    """The better of ``schedule`` (verified at ``current``) and the best order LP schedule
    (:mod:`.fluid`) reached from the completion orders of ``schedule`` and of ``guide`` (when it
    is a stage order). Without a time limit only the descents run (no kicks); nothing runs once
    ``current`` meets ``goal``. A schedule ``verify`` rejects is dropped, never repaired."""
    if not fluid.applies(instance) or (goal is not None and at_most(current, goal)):
        return schedule
    orders = [completion_order(instance, schedule)]
    if _is_order(instance, guide):
        orders.append(tuple(guide))
    sol, extra = fluid.search(instance, orders, deadline=deadline, goal=goal)
    info.update(extra)
    if sol is None:
        return schedule
    polished = fluid.to_schedule(instance, sol)
    value = _checked_value(instance, polished, info)
    info["fluid_value"] = value
    if value is not None and value < current:
        info["value"], info["source"] = value, "fluid_lp"
        return polished
    return schedule


def _checked_value(instance: Instance, schedule: Schedule, info: dict) -> float | None:
    """``verify``'s value, or None when it rejects the schedule (dropped, never repaired; the
    reason goes to ``info["rejected"]``)."""
    try:
        return _problem.verify(instance, schedule)
    except InfeasibleSchedule as err:
        info["rejected"] = str(err)
        return None


#: :func:`improve` keeps this many times a full run's time (its first runs') for the recorded run
#: of the best order at the end: 1.5 left that run unfinished at load 11-15 (paper seed 0, 240-s
#: limit: the search's best order was never recorded and ``start`` came back).
RECORD_MARGIN = 3.0

#: Random moves of one kick of :func:`improve` at a local optimum.
KICK_MOVES = 3


def _descend(instance: Instance, base: "_Base", rng: random.Random, deadline: Deadline,
             best: dict, info: dict, done: Callable[[], bool]) -> "_Base | None":
    """First improvement: the first neighbour of ``base`` (:func:`_moves`, by Model F cost
    :func:`order_cost`) whose run costs less; None at a local optimum or when ``done()``."""
    cands = [Blocks(o, base.shared) for o in _moves(base.order, rng)] + _toggles(base)
    for cand in sorted(cands, key=lambda c: order_cost(instance, c.order)):
        if done():
            return None
        cost, moved = _evaluate(instance, base, cand, deadline, best, info)
        if moved is not None and cost < base.value and not at_most(base.value, cost):
            info["improved"] += 1
            return moved
    return None


def _toggles(base: "_Base") -> list:
    """Neighbours of ``base`` with the same order and one class boundary removed or restored
    (:class:`Blocks`), between stages of different cojobs."""
    order = base.order
    return [Blocks(order, base.shared ^ {i}) for i in range(1, len(order))
            if order[i - 1][0] != order[i][0]]


def _kick(order: tuple, rng: random.Random) -> tuple:
    """:data:`KICK_MOVES` random chain-respecting moves (:func:`_moves`) applied to ``order``."""
    for _ in range(KICK_MOVES):
        order = next(_moves(order, rng), order) if rng.random() < 0.5 else _random_insert(order, rng)
    return order


def _random_insert(order: tuple, rng: random.Random) -> tuple:
    """One stage moved to a random place where its chain still holds (``order`` if none)."""
    n = len(order)
    for _ in range(4 * n):
        i, j = rng.randrange(n), rng.randrange(n)
        moved = list(order)
        moved.insert(j, moved.pop(i))
        if i != j and _chains_kept(moved):
            return tuple(moved)
    return order


@dataclass
class _Base:
    """The current order of :func:`improve` and its run: cost, each stage's start and completion,
    and the run's checkpoints ``(t, state)`` (:meth:`~optsched.simulate.flows.Simulator.
    checkpoint`)."""

    order: tuple
    value: float
    start: dict
    end: dict
    checkpoints: list
    shared: frozenset = frozenset()


def _first_base(instance: Instance, start: Schedule, guide: Any, deadline: Deadline, best: dict,
                info: dict) -> _Base | None:
    """The better run of ``start``'s completion order and the stage order ``guide`` (if it is
    one: every stage once, chains kept)."""
    orders = [completion_order(instance, start)]
    if _is_order(instance, guide) and tuple(guide) not in orders:
        orders.append(tuple(guide))
    base = None
    for n, order in enumerate(orders):
        got = _simulate_order(instance, order, deadline, best, info)
        if got is not None and (base is None or got.value < base.value):
            base = got
            info["start_order"] = ("completion", "guide")[n]
    return base


def _simulate_order(instance: Instance, order: Any, deadline: Deadline, best: dict, info: dict,
                    resume: tuple[list, int] | None = None) -> _Base | None:
    """Run ``order`` (a stage order or :class:`Blocks`; unrecorded, checkpointed), from scratch
    or from checkpoint ``resume = (checkpoints, i)``; None when the deadline stopped it. Keeps it
    in ``best`` (``order``, ``shared``) when it beats ``best["value"]``."""
    from optsched.simulate.flows import Simulator

    plan = _plan(order)
    order = plan.order
    policy = _policy(plan)
    kept: list = []
    if resume is None:
        sim = Simulator(instance, policy, record=False)
    else:
        checkpoints, i = resume
        sim = Simulator.resume(instance, policy, checkpoints[i][1], record=False)
        kept = checkpoints[:i]                  # the resumed run checkpoints its first state again
    fresh: list = []
    run = sim.run(deadline, fresh, CHECK_EVERY)
    if not run.complete:
        return None
    info["evaluated"] += 1
    value = sum_sct(instance, run)
    if value < best["value"]:
        best.update(value=value, order=order, shared=plan.shared)
    starts = {(g, k): sim.stage_start[g][k] for g, k in instance.stages}
    ends = {(g, k): run.S[g][k] for g, k in instance.stages}
    return _Base(order, value, starts, ends, kept + fresh, plan.shared)


def _evaluate(instance: Instance, base: _Base, order: Any, deadline: Deadline, best: dict,
              info: dict) -> tuple[float, _Base | None]:
    """The cost of ``order`` and its run (None when it is ``base``'s run, or was stopped: cost inf).

    Runs of two orders are identical up to the first allocation at which some pair of stages
    the orders rank differently is in flight at once (the classes of the other pairs keep their
    relative order, and :func:`~optsched.simulate.flows.allocate` only compares classes):
    :func:`divergence` in ``base``'s run. ``order`` is resumed from ``base``'s last checkpoint
    before that moment; when there is none, its run is ``base``'s."""
    t = divergence(base, order)
    if t == math.inf:
        info["unchanged"] += 1
        return base.value, None
    i = bisect.bisect_left([c[0] for c in base.checkpoints], t) - 1
    got = _simulate_order(instance, order, deadline, best, info,
                          None if i < 0 else (base.checkpoints, i))
    return (math.inf, None) if got is None else (got.value, got)


def divergence(base: _Base, order: Any) -> float:
    """The first time ``base``'s run has in progress two stages that ``order`` (a stage order or
    :class:`Blocks`) ranks differently from ``base`` (before, after or in one class; each stage in
    progress on ``[start, completion]``, closed: a conservative overlap); inf when there is no
    such time."""
    mine = Blocks(base.order, base.shared).classes()
    theirs = _plan(order).classes()
    stages = base.order
    first = math.inf
    for n, a in enumerate(stages):
        for b in stages[n + 1:]:
            if (mine[a] > mine[b]) - (mine[a] < mine[b]) != \
                    (theirs[a] > theirs[b]) - (theirs[a] < theirs[b]):
                t = max(base.start[a], base.start[b])
                if t <= min(base.end[a], base.end[b]) and t < first:
                    first = t
    return first


def _checked_best(instance: Instance, start: Schedule, value: float, best: dict,
                  info: dict, deadline: Deadline) -> Schedule:
    """The best order's run, recorded, as a schedule if ``verify`` accepts it below ``value``;
    else ``start``."""
    if "order" not in best:
        return start
    plan = Blocks(best["order"], best.get("shared", frozenset()))
    run = simulate(instance, _policy(plan), deadline=deadline)
    if not run.complete:
        info["stopped"] = why_stopped(run)
        return start
    schedule = schedule_of(run, best["order"], _policy(plan).name)
    checked = _checked_value(instance, schedule, info)
    if checked is None:
        return start
    info["value"] = checked
    info["shared"] = len(plan.shared)
    return schedule if checked < value else start


def completion_order(instance: Instance, schedule: Schedule) -> tuple:
    """The stages of ``schedule`` by completion time (ties: by stage index, so chains are kept)."""
    done = _problem.stage_completion_times(instance, schedule)
    return tuple(sorted(instance.stages, key=lambda a: (done[a[0]][a[1]], a[1], a[0])))


def order_cost(instance: Instance, order) -> float:
    """Model F's objective of a fixed order (spec Sec. 3.5.1): ``S_b`` the larger of its chain
    bound (14) and its heaviest port prefix ``max_p sum_{a <= b} L^a_p``; ``sum_b (S_b - r_g)``.
    A lower estimate of the simulated cost of ``order``, used only to rank moves."""
    done: dict = {}
    prefix = np.zeros(instance.n_ports)
    total = 0.0
    for g, k in order:
        load = instance.loads[g, k]
        prefix = prefix + load
        chain = done.get((g, k - 1), instance.cojobs[g].arrival) + float(load.max())
        done[g, k] = max(chain, float(prefix.max()))
        total += done[g, k] - instance.cojobs[g].arrival
    return total


def _moves(order: tuple, rng: random.Random):
    """Chain-respecting neighbours of ``order``: adjacent swaps of stages of different cojobs and
    single-stage insertions up to 4 positions away (shuffled)."""
    n = len(order)
    swaps = [i for i in range(n - 1) if order[i][0] != order[i + 1][0]]
    rng.shuffle(swaps)
    for i in swaps:
        yield order[:i] + (order[i + 1], order[i]) + order[i + 2:]
    inserts = [(i, j) for i in range(n) for j in range(max(0, i - 4), min(n, i + 5))
               if abs(i - j) > 1]
    rng.shuffle(inserts)
    for i, j in inserts:
        moved = list(order)
        stage = moved.pop(i)
        moved.insert(j, stage)
        if _chains_kept(moved):
            yield tuple(moved)


def _is_order(instance: Instance, order: Any) -> bool:
    """Whether ``order`` is a stage order :func:`improve` can start from: every stage of
    ``instance`` once, chains kept."""
    try:
        return sorted(order) == sorted(instance.stages) and _chains_kept(order)
    except TypeError:
        return False


def _chains_kept(order) -> bool:
    """Whether (g, k) precedes (g, k + 1) in ``order`` for every cojob g."""
    seen: dict[int, int] = {}
    for g, k in order:
        if k != seen.get(g, -1) + 1:
            return False
        seen[g] = k
    return True

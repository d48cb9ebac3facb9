"""ring_contention: ``exact``, M1 (digest Sec. 3.3) as a pulse time-indexed MILP with its size guard,
the heuristic horizon and the stage-1 feasibility MILP at the lower bound. Certify's improvement
is :func:`~optsched.solvers.ring_contention.search.improve`.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence

from optsched.deadline import Deadline
from optsched.errors import InfeasibleSchedule, OptschedError
from optsched.problems.ring_contention import Instance, Schedule, completion_times
from optsched.result import Outcome, SolveStatus
from optsched.solvers.ring_contention.algorithm import (
    SjfBcoParams,
    proven_infeasible,
    running_speeds,
    servers_of,
    sjf_bco,
)
from optsched.solvers.guard import Refusal, guard
from optsched.solvers.ring_contention.baselines import FIRST_FIT, LIST_SCHEDULING, baseline


#: exact skips the pulse MILP when its estimated size (pulse binaries x[j,c,t,e], :func:`exact_size`)
#: exceeds this many per second left (Pyomo builds and hands over ~3,000 a CPU-second, ~1,800 a
#: wall-second at load 6-7, measured at 20-32 jobs of the small mix: the tail-energy rows are
#: dense; the solve needs the rest) — and always above EXACT_MAX_VARS.
EXACT_VARS_PER_S = 2_000
EXACT_MAX_VARS = 2_000_000
#: Non-zeros per estimated pulse variable of M1, for the shared cap
#: (:data:`optsched.solvers.highs.MAX_MODEL_TERMS`): measured 5.1-7.2 on tiny/small seeds and
#: 13.3 at 24 jobs of the small mix (the tail-energy rows grow denser with more jobs); rounded up.
EXACT_TERMS_PER_VAR = 15


# ----------------------------------------------------------------------------------------------
# Exact, bounds, guarantee
# ----------------------------------------------------------------------------------------------

def upper_bound_schedule(inst: Instance, deadline: Deadline) -> tuple[int, Schedule | None]:
    """Best of SJF-BCO, FF, LS and a contention-free longest-first list schedule: the horizon H
    of M1 (digest §3.3 "Horizon") and the MIP start of ``exact``.

    Each makespan is the checker's (``completion_times``), so H is the makespan of a schedule verify
    accepts and H >= OPT: M1's pruning to slots < H (and starts with t + rho^min <= H) keeps an
    optimum. A schedule verify rejects is skipped; with none, H = the instance horizon T. The
    searches are charged to ``deadline`` (a search stopped early still gives a valid H).
    """
    best: tuple[int, Schedule | None] = (inst.horizon, None)
    runs: list[Callable[[], Outcome]] = [
        lambda: sjf_bco(inst, SjfBcoParams(), deadline=deadline),
        lambda: baseline(inst, FIRST_FIT, deadline=deadline),
        lambda: baseline(inst, LIST_SCHEDULING, deadline=deadline),
        lambda: _longest_first(inst, deadline)]
    for run in runs:
        if deadline.expired() and best[1] is not None:
            break
        out = run()
        if out.schedule is None:
            continue
        try:
            m = max(completion_times(inst, out.schedule))
        except InfeasibleSchedule:
            continue
        if m < best[0] or best[1] is None:
            best = (m, out.schedule)
    return best


LIST_MAX_VECTORS = 20_000  # _longest_first only when a job's placement enumeration is this small


def _longest_first(inst: Instance, deadline: Deadline) -> Outcome:
    """The contention-free list schedule of the CP-SAT model's hint (longest solo duration first,
    one-server rings where they fit, split rings never overlapping; verified by its caller). At
    12-24 jobs of the small mix it is 3-6 slots shorter than SJF-BCO/FF/LS on most seeds, so the
    MILP's horizon, and its size, shrink. It enumerates product_s (min(O_s, G_j) + 1) vectors per
    job: skipped (no schedule) above :data:`LIST_MAX_VECTORS`, e.g. at paper scale."""
    from optsched.solvers import cpsat
    from optsched.solvers.ring_contention.cp import list_schedule

    vectors = max(math.prod(min(cap, job.gpus) + 1 for cap in inst.servers) for job in inst.jobs)
    if vectors > LIST_MAX_VECTORS:
        return Outcome(None, SolveStatus.UNKNOWN, info={"skipped": f"{vectors} placement vectors"})
    try:
        found = list_schedule(inst, deadline)
    except cpsat.DeadlineReached:
        return Outcome(None, SolveStatus.TIME_LIMIT)
    return Outcome(None if found is None else found[0], SolveStatus.FEASIBLE)


def run_finish(inst: Instance, schedule: Schedule) -> list[int]:
    """T_j of a (start, placement) schedule by the event-driven simulation of digest §3.1."""
    n = len(inst.jobs)
    rem = [job.iterations for job in inst.jobs]
    finish = [0] * n
    t, running, waiting = 0, set[int](), sorted(range(n), key=lambda j: schedule.starts[j])
    while waiting or running:
        while waiting and schedule.starts[waiting[0]] <= t:
            running.add(waiting.pop(0))
        if not running:
            t = schedule.starts[waiting[0]]
            continue
        speeds = running_speeds(inst, {j: servers_of(schedule.placements[j]) for j in running})
        delta = min(math.ceil(rem[j] / speeds[j]) for j in running)
        if waiting:
            delta = min(delta, schedule.starts[waiting[0]] - t)
        t += delta
        for j in list(running):
            rem[j] -= speeds[j] * delta
            if rem[j] <= 0:
                finish[j] = t
                running.discard(j)
    return finish


def count_placements(servers: Sequence[int], need: int) -> int:
    """|P_j| = #{c in Z_+^S : sum_s c_s = need, c_s <= O_s}, counted (not enumerated) by dynamic
    programming over the servers, so the size of M1 is known before anything is built."""
    ways = [1] + [0] * need
    for cap in servers:
        nxt = [0] * (need + 1)
        for total, w in enumerate(ways):
            if w:
                for k in range(min(cap, need - total) + 1):
                    nxt[total + k] += w
        ways = nxt
    return ways[need]


def exact_size(inst: Instance, horizon: int) -> int:
    """Upper estimate of the pulse model's binaries x[j,c,t,e]: per job, its one-server
    placements times ``horizon`` plus its split placements times ``horizon`` times the spread of
    its split durations (counted, not enumerated, so paper-scale instances cost nothing here)."""
    from optsched.problems.ring_contention import duration

    pmax = inst.max_contention
    total = 0
    for j, job in enumerate(inst.jobs):
        one = sum(1 for cap in inst.servers if cap >= job.gpus)
        split = count_placements(inst.servers, job.gpus) - one
        if split > 0:
            lo = max(inst.min_servers(j), 2)
            spread = max(duration(inst, j, n, pmax) - duration(inst, j, n, 1) + 1
                         for n in range(lo, inst.max_servers(j) + 1))
            total += split * spread * horizon
        total += one * horizon
    return total


def _guard(size: int, deadline: Deadline) -> Refusal | None:
    """Why M1 of ``size`` pulse variables is not built (None: build it): the shared
    :func:`~optsched.solvers.guard.guard` of its non-zeros (:data:`EXACT_TERMS_PER_VAR` per
    variable) and its build time (:data:`EXACT_VARS_PER_S` variables a second); above
    :data:`EXACT_MAX_VARS` variables, the family's second cap, it is never built either, whatever
    the deadline (the Refusal then names that cap)."""
    refusal = guard(size * EXACT_TERMS_PER_VAR, f"M1 of ~{size} variables", deadline,
                    size / EXACT_VARS_PER_S)
    if size <= EXACT_MAX_VARS:
        return refusal
    return Refusal(f"size cap: the MILP of ~{size} variables exceeds EXACT_MAX_VARS = "
                   f"{EXACT_MAX_VARS}", None if refusal is None else refusal.late)


def exact(inst: Instance, *, deadline: Deadline, seed: int = 0) -> Outcome:
    """Optimal makespan by the pulse MILP (:func:`~optsched.models.ring_contention.build_exact`,
    gap 0) with H = best heuristic makespan, C >= max(LB_len, LB_area, LB_conf) (digest §3.5),
    and the heuristic's schedule as HiGHS's MIP start. Outcome lower bound = max(MILP dual bound,
    that bound); the schedule returned is never worse than the heuristic's. Stage 1
    (:func:`_at_bound`, up to :data:`AT_BOUND_SHARE` of the time left) asks the same model for a
    schedule of makespan = that bound, and raises the bound by one when there is none. M3's theta* is not
    used: at 12-16 jobs it took 19-60 s for a bound no better than LB_area, which the model's
    tail-energy rows already imply.

    Everything is charged to ``deadline``: the heuristics behind H (:func:`upper_bound_schedule`,
    at most half of the time), building the MILP and its solve. The MILP is not built when its
    size (:func:`exact_size`, counted before any placement is enumerated) exceeds the size cap
    (:func:`_guard`, whatever the deadline) or cannot be built in the time left
    (``info["skipped"]``): the heuristic's schedule is returned, with status ``time_limit`` when
    the time left ruled M1 out and ``feasible`` when only the cap did; it is also returned when
    HiGHS finds nothing better.
    """
    from optsched.models import ring_contention as rm

    ready = _prepare(inst, deadline)
    if isinstance(ready, Outcome):  # no model can end by T: said at once
        return ready
    ub, incumbent, lb, refusal = ready
    info: dict[str, Any] = {"horizon": ub}
    if lb >= ub and incumbent is not None:  # the heuristic is provably optimal
        return _closed(incumbent, ub, info)
    skipped = Refusal(late="deadline expired") if deadline.expired() else refusal
    if skipped is not None:
        return Outcome(incumbent, skipped.status(incumbent is not None), float(lb),
                       {**info, "skipped": str(skipped),
                        "not_built": str(skipped).split("; ")[0]})
    from optsched.solvers.highs import report_outcome, solve_model

    at_bound, lb = _at_bound(inst, lb, deadline.within(deadline.limit(AT_BOUND_SHARE)), seed, info)
    if at_bound is not None:
        return at_bound
    if lb >= ub and incumbent is not None:
        return _closed(incumbent, ub, info)
    model = rm.build_exact(inst, ub, lower_bound=lb)
    if incumbent is not None:
        rm.set_start(model, inst, incumbent)
    rep = solve_model(model, deadline=deadline, seed=seed, warm_start=incumbent is not None)
    info.update(n_vars=model.nvariables(), n_constraints=model.nconstraints())
    out = report_outcome(rep, lambda: rm.extract_schedule(inst, model), lower_bound=float(lb),
                         fallback=incumbent, info=info)
    return _not_worse(inst, out, incumbent, ub)


def exact_model(inst: Instance, *, deadline: Deadline) -> Any:
    """The pulse MILP M1 :func:`exact` solves in its stage 2, built but not solved: the same
    preparation (:func:`_prepare`: horizon H = the heuristics' makespan, the area/length lower
    bound); ``optsched solve --write-model``. Raises :class:`~optsched.errors.OptschedError` (one
    line) when :func:`exact` would build no model (proven infeasible, or over the size guard)."""
    from optsched.models import ring_contention as rm

    ready = _prepare(inst, deadline)
    if isinstance(ready, Outcome):
        raise OptschedError(f"model not built: infeasible: {ready.info['infeasible']}")
    ub, _, lb, refusal = ready
    if refusal is not None:
        raise OptschedError(f"model not built: {refusal}")
    model = rm.build_exact(inst, ub, lower_bound=lb)
    model.name = f"ring_contention exact: pulse MILP M1, horizon H = {ub}, makespan >= {lb}"
    return model


def _prepare(inst: Instance,
             deadline: Deadline) -> Outcome | tuple[int, Schedule | None, int, Refusal | None]:
    """What :func:`exact` and :func:`exact_model` do before M1 is built: the infeasibility check
    (the ``infeasible`` Outcome when a lower bound exceeds T), the heuristics' horizon H and
    schedule (:func:`upper_bound_schedule`, at most half the time), the area/length lower bound
    and M1's size guard at H (:func:`_guard`). Returns ``(H, schedule, bound, refusal)``."""
    from optsched.models import ring_contention as rm

    if (why := proven_infeasible(inst)) is not None:
        return Outcome(None, SolveStatus.INFEASIBLE, None, {"infeasible": why})
    ub, incumbent = upper_bound_schedule(inst, deadline.within(deadline.limit(0.5)))
    lb = max(max(rm.simple_lower_bound(inst).values()), 1)
    return ub, incumbent, lb, _guard(exact_size(inst, ub), deadline)


def _closed(incumbent: Schedule, ub: int, info: dict[str, Any]) -> Outcome:
    """The heuristic's schedule of makespan ``ub``, proven optimal by a lower bound of ``ub``."""
    return Outcome(incumbent, SolveStatus.OPTIMAL, float(ub), {**info, "closed_by": "lower bound"},
                   model_objective=float(ub))


AT_BOUND_SHARE = 0.4  # share of exact's time for the feasibility MILP at H = the lower bound


def _at_bound(inst: Instance, lb: int, deadline: Deadline, seed: int,
              info: dict[str, Any]) -> tuple[Outcome | None, int]:
    """Stage 1 of ``exact``: the pulse MILP with H = C = ``lb`` (the area/length bound), a pure
    feasibility problem with few pulses and tight tail-energy rows. On the small mix the optimum
    equals LB_area on most instances, and this finds it faster than the full model at H = the
    heuristic makespan; when it proves infeasibility, ``lb + 1`` is a valid bound for stage 2.
    Returns (the optimal Outcome or None, the bound for stage 2)."""
    from optsched.models import ring_contention as rm
    from optsched.solvers.highs import report_outcome, solve_model

    if deadline.expired() or _guard(exact_size(inst, lb), deadline) is not None:
        return None, lb
    model = rm.build_exact(inst, lb, lower_bound=lb)
    rep = solve_model(model, deadline=deadline, seed=seed)
    info["at_bound"] = {"horizon": lb, "status": rep.status.value}
    if rep.status is SolveStatus.OPTIMAL:
        out = report_outcome(rep, lambda: rm.extract_schedule(inst, model), lower_bound=float(lb),
                             info={**info, "n_vars": model.nvariables(),
                                   "n_constraints": model.nconstraints()})
        return out, lb
    return None, lb + 1 if rep.status is SolveStatus.INFEASIBLE else lb


def _not_worse(inst: Instance, out: Outcome, incumbent: Schedule | None, ub: int) -> Outcome:
    """``out``, or the heuristic's schedule (makespan ``ub``) when ``out``'s verifies worse or not
    at all (status ``time_limit`` / ``feasible``, the MILP's bound kept)."""
    if incumbent is None or out.schedule is None or out.schedule is incumbent:
        return out
    try:
        value: float = max(completion_times(inst, out.schedule))
    except InfeasibleSchedule:
        value = math.inf
    if value <= ub:
        return out
    status = SolveStatus.TIME_LIMIT if out.status is SolveStatus.TIME_LIMIT else SolveStatus.FEASIBLE
    return Outcome(incumbent, status, out.lower_bound, {**out.info, "incumbent": "heuristic"})

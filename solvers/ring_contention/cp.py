"""ring_contention (RAR-DDLS, Yu et al. MobiHoc'22) as a CP-SAT model — an exact engine independent
of the MILP, written from :mod:`optsched.problems.ring_contention` (``verify``'s slot simulation)
and the digest.

Model (slots ``t = 0 .. T-1`` are integers: nothing is scaled)
-------------------------------------------------------------
Per job ``j``:

* one placement ``y_j`` out of every vector with ``sum_s y_js = G_j``, ``0 <= y_js <= O_s``
  (``q_{j,pi}``, exactly one; (1), (5)), kept from the start ``a_j`` to the end ``e_j``
  (interval ``[a_j, e_j)``, ``e_j <= T``; (3), (4) and the horizon);
* ``act_{j,t}`` <=> ``a_j <= t < e_j``; progress ``g_{j,t} <= phi_j * act_{j,t}`` and
  ``sum_t g_{j,t} >= F_j`` (9);
* speed (8): ``g_{j,t} <= phi(j, n_pi, 1)`` for the chosen placement; a placement spanning
  ``n >= 2`` servers is split on each of them, and when one of its servers holds at least ``c``
  active split jobs at ``t`` (``ge_{s,t,c}``, forced by ``count_{s,t} >= c``),
  ``g_{j,t} <= phi(j, n, c)`` — ``phi`` (:meth:`~optsched.problems.ring_contention.Instance.phi`,
  the same ``slot_speed`` of the same ``tau`` as ``verify``) does not increase with ``c``, so this
  bounds ``g`` by the speed at the true contention ``p_j[t]`` (6), (7);
* capacity (2): ``Cumulative`` per server with demands ``y_js`` over the jobs' intervals;
* objective: ``min max_j e_j`` (the makespan);
* redundant: ``e_j - a_j >= ceil(F_j / phi(j, n, 1))`` for the chosen placement (no slot is faster).

Why this is exact and never stricter than ``verify``: the model may keep a job active after its
progress reached ``F_j`` and may count it in a contention count while it is; both only slow other
jobs down, so in ``verify``'s simulation of the extracted (start, placement) every job ends no later
than its ``e_j`` (induction over slots: the simulated active set is a subset of the model's, hence
every simulated speed is at least the model's ``g``). Conversely every schedule, with ``e_j`` its
simulated end and ``g`` its simulated speeds, satisfies the model. So the optima coincide and the
verified makespan of a proven optimum equals the model's.

Symmetry breaking: jobs with identical parameters start in index order (swap their start and
placement).

Horizon: a contention-free list schedule (:func:`list_schedule`, checked by ``verify``'s
``completion_times``) gives a feasible makespan ``U``; the model's slots stop at ``min(T, U)``
(no optimum ends later) and the list schedule is the solver's hint.
"""

from __future__ import annotations

import itertools
from typing import Any

from optsched.deadline import Deadline
from optsched.problems.ring_contention import Instance, Schedule
from optsched.result import Outcome
from optsched.solvers import cpsat as cc


def placements(inst: Instance, j: int) -> list[tuple[int, ...]]:
    """Every placement vector of job ``j``: ``sum_s y_s = G_j``, ``0 <= y_s <= O_s``."""
    g = inst.jobs[j].gpus
    out = []
    for y in itertools.product(*(range(min(cap, g) + 1) for cap in inst.servers)):
        if sum(y) == g:
            out.append(tuple(y))
    return out


def exact_cp(instance: Instance, *, deadline: Deadline, seed: int = 0) -> Outcome:
    """Minimum-makespan schedule of RAR-DDLS by CP-SAT (one worker, ``random_seed = seed``).

    ``optimal`` only when CP-SAT proves it; ``infeasible`` when no schedule ends by the horizon;
    ``time_limit`` with the list schedule when the deadline expires before the search starts;
    ``unknown`` when the model would exceed :data:`~optsched.solvers.cpsat.MAX_MODEL_SIZE`.
    """
    inst = instance
    n_place = [count_placements(inst, j) for j in range(len(inst.jobs))]
    return cc.solve_guarded(sum(n_place) + len(inst.jobs) * inst.horizon * (inst.n_servers + 4),
                            "placements + job x slot variables",
                            _solve, instance, deadline, seed)


def count_placements(inst: Instance, j: int) -> int:
    """The number of placement vectors of job ``j`` (counted, not enumerated)."""
    ways = [1] + [0] * inst.jobs[j].gpus  # ways[g]: vectors over the servers so far summing to g
    for cap in inst.servers:
        ways = [sum(ways[g - y] for y in range(min(cap, g) + 1)) for g in range(len(ways))]
    return ways[-1]


def _solve(instance: Instance, deadline: Deadline, seed: int, keep: dict) -> Outcome:
    cp = cc.cp_model()
    inst = instance
    hint = list_schedule(inst, deadline)
    keep["fallback"] = None if hint is None else hint[0]
    T = inst.horizon if hint is None else hint[1]  # no optimum ends after a feasible makespan
    S = inst.n_servers
    J = len(inst.jobs)
    pmax = inst.max_contention
    model = cp.CpModel()

    options = [placements(inst, j) for j in range(J)]
    q: dict[int, list[Any]] = {}
    start, end, act, g = {}, {}, {}, {}
    split: dict[tuple[int, int], Any] = {}  # split[j, s]: j is split and uses server s
    intervals = []
    for j, job in enumerate(inst.jobs):
        cc.check(deadline)
        q[j] = [model.new_bool_var(f"q_{j}_{k}") for k in range(len(options[j]))]
        model.add_exactly_one(q[j])
        start[j] = model.new_int_var(0, T - 1, f"a_{j}")
        end[j] = model.new_int_var(1, T, f"e_{j}")
        length = model.new_int_var(1, T, f"L_{j}")
        intervals.append(model.new_interval_var(start[j], length, end[j], f"I_{j}"))
        spans = [sum(1 for y in pi if y) for pi in options[j]]
        top = max(inst.phi(j, n, 1) for n in spans)
        # redundant: no slot is faster than phi(j, n, 1), so the run lasts >= ceil(F_j / phi)
        model.add(length >= sum(-(-job.iterations // inst.phi(j, n, 1)) * x
                                for n, x in zip(spans, q[j])))
        before = prev_before = None
        for t in range(T):
            # act <=> a_j <= t < e_j, with monotone channels started_t (a_j <= t), open_t (e_j > t)
            started = model.new_bool_var(f"st_{j}_{t}")
            model.add(start[j] <= t).only_enforce_if(started)
            model.add(start[j] > t).only_enforce_if(~started)
            open_ = model.new_bool_var(f"op_{j}_{t}")
            model.add(end[j] > t).only_enforce_if(open_)
            model.add(end[j] <= t).only_enforce_if(~open_)
            if before is not None:
                model.add_implication(before, started)
                model.add_implication(open_, prev_before)
            before, prev_before = started, open_
            a = act[j, t] = model.new_bool_var(f"act_{j}_{t}")
            model.add_bool_and([started, open_]).only_enforce_if(a)
            model.add_bool_or([~started, ~open_, a])
            g[j, t] = model.new_int_var(0, top, f"g_{j}_{t}")
            model.add(g[j, t] <= top * a)
            model.add(g[j, t] <= sum(inst.phi(j, n, 1) * x for n, x in zip(spans, q[j])))
        model.add(sum(g[j, t] for t in range(T)) >= job.iterations)  # (9)
        for s in range(S):
            users = [x for pi, n, x in zip(options[j], spans, q[j]) if n >= 2 and pi[s] > 0]
            if users:
                split[j, s] = users
    # (6): count_{s,t} = active split jobs on s; ge_{s,t,c} forced when count >= c
    levels = range(2, pmax + 1)
    ge: dict[tuple[int, int, int], Any] = {}
    for s in range(S):
        cc.check(deadline)
        members = [j for j in range(J) if (j, s) in split]
        if len(members) < 2:
            continue
        for t in range(T):
            on = []
            for j in members:
                w = model.new_bool_var(f"w_{j}_{s}_{t}")
                model.add(w >= sum(split[j, s]) + act[j, t] - 1)
                on.append(w)
            for c in levels:
                if c > len(members):
                    break
                b = ge[s, t, c] = model.new_bool_var(f"ge_{s}_{t}_{c}")
                model.add(sum(on) <= c - 1 + (len(members) - c + 1) * b)
                if c > 2:
                    model.add_implication(b, ge[s, t, c - 1])
    # (8): a split job runs at phi(j, n, c) or slower when one of its servers holds >= c split jobs
    for j in range(J):
        cc.check(deadline)
        for k, pi in enumerate(options[j]):
            n = sum(1 for y in pi if y)
            if n < 2:
                continue
            for c in levels:
                speed = inst.phi(j, n, c)
                if speed >= inst.phi(j, n, c - 1):
                    continue  # no slower than at c - 1: implied
                for s in (s for s in range(S) if pi[s]):
                    for t in range(T):
                        if (s, t, c) in ge:
                            model.add(g[j, t] <= speed).only_enforce_if([q[j][k], ge[s, t, c]])
    # (2) capacity per server
    for s, cap in enumerate(inst.servers):
        most = [max(pi[s] for pi in options[j]) for j in range(J)]
        if sum(most) > cap:
            demands = []
            for j in range(J):
                y = model.new_int_var(0, most[j], f"y_{j}_{s}")
                model.add(y == sum(pi[s] * x for pi, x in zip(options[j], q[j])))
                demands.append(y)
            model.add_cumulative(intervals, demands, cap)
    # identical jobs start in index order
    for j in range(J):
        for k in range(j + 1, J):
            if inst.jobs[j] == inst.jobs[k]:
                model.add(start[j] <= start[k])
                break
    makespan = model.new_int_var(1, T, "makespan")
    model.add_max_equality(makespan, [end[j] for j in range(J)])
    model.minimize(makespan)
    if hint is not None:
        sched, _ = hint
        for j in range(J):
            model.add_hint(start[j], sched.starts[j])
            for pi, x in zip(options[j], q[j]):
                model.add_hint(x, pi == sched.placements[j])

    solver, status, has_solution, info = cc.run(model, deadline, seed)
    info["model_horizon"] = T

    def extract() -> Schedule:
        starts, places = [], []
        for j in range(J):
            k = next(k for k, x in enumerate(q[j]) if solver.boolean_value(x))
            starts.append(int(solver.value(start[j])))
            places.append(options[j][k])
        return Schedule(tuple(starts), tuple(places))

    return cc.finish(solver, status, has_solution, info, 1, extract)


def list_schedule(inst: Instance, deadline: Deadline) -> tuple[Schedule, int] | None:
    """A feasible schedule without contention, and its makespan as ``verify`` computes it (None when
    it does not end by the horizon).

    Jobs in decreasing order of solo duration; a job that fits one server runs there (``n = 1``: its
    speed ``phi(j, 1, .)`` depends on no other job), a larger one on the fewest servers, and split
    jobs never overlap each other (so ``p = 1``); each job takes the placement and the earliest
    start that end first under the GPU capacities. Durations are then ``ceil(F_j / phi)``.
    """
    from optsched.errors import InfeasibleSchedule
    from optsched.problems.ring_contention import completion_times

    T = inst.horizon
    S = inst.n_servers
    used = [[0] * T for _ in range(S)]
    split_busy = [False] * T
    biggest = max(inst.servers)
    chosen: dict[int, tuple[int, tuple[int, ...]]] = {}

    def duration(j: int, pi: tuple[int, ...]) -> int:
        n = sum(1 for y in pi if y)
        return -(-inst.jobs[j].iterations // inst.phi(j, n, 1))

    cands = {}
    for j, job in enumerate(inst.jobs):
        opts = placements(inst, j)
        if job.gpus <= biggest:
            opts = [pi for pi in opts if sum(1 for y in pi if y) == 1]
        else:
            least = min(sum(1 for y in pi if y) for pi in opts)
            opts = [pi for pi in opts if sum(1 for y in pi if y) == least]
        cands[j] = opts
    order = sorted(range(len(inst.jobs)), key=lambda j: -min(duration(j, pi) for pi in cands[j]))
    for j in order:
        cc.check(deadline)
        best = None
        for pi in cands[j]:
            d = duration(j, pi)
            split = sum(1 for y in pi if y) >= 2
            for t in range(T - d + 1):
                if all(used[s][u] + pi[s] <= inst.servers[s] for s in range(S) if pi[s]
                       for u in range(t, t + d)) and not (split and any(split_busy[t:t + d])):
                    if best is None or t + d < best[0]:
                        best = (t + d, t, pi, split)
                    break
        if best is None:
            return None
        end, t, pi, split = best
        for s in range(S):
            for u in range(t, end):
                used[s][u] += pi[s]
        if split:
            for u in range(t, end):
                split_busy[u] = True
        chosen[j] = (t, pi)
    sched = Schedule(tuple(chosen[j][0] for j in range(len(inst.jobs))),
                     tuple(chosen[j][1] for j in range(len(inst.jobs))))
    try:
        return sched, max(completion_times(inst, sched))
    except InfeasibleSchedule:  # pragma: no cover - the construction above is feasible
        return None


__all__ = ["count_placements", "exact_cp", "placements"]

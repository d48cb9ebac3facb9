"""Pyomo formulations of Hare (Chen et al., HPDC'22; seeds/004), digest §3.

- :func:`build_exact` — Hare_Sched (paper Sec. 5.1, eqs. (4)–(8)) as an exact MILP: assignment plus
  disjunctive big-M ordering per GPU. Continuous time, exact for the model of
  :mod:`optsched.problems.hetero_gpu` (no discretisation).
- :func:`build_rl` — Hare_Sched_RL (eq. (9) replaces (8)), with (9) linearised exactly (digest §3.5,
  (9L)); ``mode="paper_full"`` imposes (9) on the full task set per GPU as the paper does,
  ``mode="subsets"`` starts from all pairs and takes prefix cuts (9S) added by the caller.
- :func:`build_aggregate_lp` — a polynomial-size LP lower bound usable at paper scale (digest §3.5
  "aggregate LP"): tasks shrunk to their fastest times on |M| identical machines, with the
  Hall–Schulz–Shmoys–Wein parallel inequalities on the given subsets.

Tasks are ``(n, r, k)``; all tasks of a job share the job's ``T^c``/``T^s`` rows.

This module builds models and reads schedules or values out of solved ones; the solve loops (the
cut loops of the relaxations, the exact method's deadline handling) live in
:mod:`optsched.solvers.hetero_gpu`. :func:`exact_size` and :func:`rl_size` give a model's size
without building it, so a caller with a deadline can decide first.
"""

from __future__ import annotations

import heapq
import math
from itertools import combinations
from typing import Iterable, Sequence

import pyomo.environ as pyo

from optsched import tolerance
from optsched.problems.hetero_gpu import Instance, Job, Schedule, TaskRun


def trivial_horizon(inst: Instance) -> float:
    """U = max_n a_n + sum_i max_m (T^c + T^s): every semi-active schedule starts all tasks by U
    (digest §3.3: following the chain of arrivals, compute ends and barriers that fix each start)."""
    work = sum(j.rounds * j.tasks_per_round * max(c + s for c, s in zip(j.train_time, j.sync_time))
               for j in inst.jobs)
    return max(j.arrival for j in inst.jobs) + work


def completion_lower_bounds(inst: Instance) -> list[float]:
    """LBC_n = a_n + |R_n| · min_m (T^c + T^s): no schedule completes job n earlier."""
    return [j.arrival + j.rounds * min(c + s for c, s in zip(j.train_time, j.sync_time))
            for j in inst.jobs]


def deadlines(inst: Instance, upper_bound: float) -> list[float]:
    """d_n = (UB - sum_{n' != n} w_n' LBC_n') / w_n: in every schedule of cost <= UB, C_n <= d_n
    (digest §3.3). With UB the cost of a feasible schedule, every optimal schedule meets them."""
    lbc = completion_lower_bounds(inst)
    total = sum(j.weight * c for j, c in zip(inst.jobs, lbc))
    return [(upper_bound - total + j.weight * c) / j.weight for j, c in zip(inst.jobs, lbc)]


def _base(inst: Instance, horizon: float, deadline: list[float] | None) -> pyo.ConcreteModel:
    """Variables and constraints shared by Hare_Sched and Hare_Sched_RL: (4), (5), (6), (7)."""
    m = pyo.ConcreteModel(name="hare")
    jobs = range(len(inst.jobs))
    m.T = pyo.Set(initialize=inst.tasks, dimen=3, ordered=True)
    m.G = pyo.Set(initialize=range(inst.n_gpus))
    m.R = pyo.Set(initialize=[(n, r) for n in jobs for r in range(inst.jobs[n].rounds)], dimen=2)
    lbc = completion_lower_bounds(inst)
    # completions: C_n <= d_n (deadlines) or, without them, <= U + the job's longest task
    cap = deadline or [horizon + max(c + s for c, s in zip(j.train_time, j.sync_time))
                       for j in inst.jobs]
    # (4) as a variable bound: x_i >= a_n
    m.x = pyo.Var(m.T, bounds=lambda _, n, r, k: (inst.jobs[n].arrival, horizon))
    m.y = pyo.Var(m.T, m.G, domain=pyo.Binary)
    m.C = pyo.Var(jobs, bounds=lambda _, n: (lbc[n], cap[n]))
    m.F = pyo.Var(m.R, bounds=lambda _, n, r: (inst.jobs[n].arrival, cap[n]))  # round finish B_{n,r}
    busy = {(n, g): inst.jobs[n].train_time[g] + inst.jobs[n].sync_time[g] for n in jobs for g in m.G}
    m.one_gpu = pyo.Constraint(m.T, rule=lambda m, n, r, k: sum(m.y[n, r, k, g] for g in m.G) == 1)  # (5)
    m.round_end = pyo.Constraint(m.T, rule=lambda m, n, r, k: m.F[n, r] >= m.x[n, r, k] + sum(
        busy[n, g] * m.y[n, r, k, g] for g in m.G))
    # (7) via round finishes: x_j >= F[n, r-1] for j in round r >= 1
    m.barrier = pyo.Constraint(m.T, rule=lambda m, n, r, k: m.x[n, r, k] >= m.F[n, r - 1]
                               if r > 0 else pyo.Constraint.Feasible)
    # (6): C_n >= finish of every task of n, i.e. of its last round
    m.completion = pyo.Constraint(jobs, rule=lambda m, n: m.C[n] >= m.F[n, inst.jobs[n].rounds - 1])
    m.obj = pyo.Objective(expr=sum(inst.jobs[n].weight * m.C[n] for n in jobs))
    return m


def disjunctive_pairs(inst: Instance) -> list[tuple]:
    """DISJ: task pairs that may share a GPU unordered — all pairs except same job / different
    round, which (7) already orders (digest §3.3)."""
    return [(i, j) for i, j in combinations(inst.tasks, 2) if not (i[0] == j[0] and i[1] != j[1])]


def _base_terms(inst: Instance) -> int:
    """Non-zeros of :func:`_base`: (5) and the round finishes (G + 2 per task), (7), (6)."""
    tasks, gpus = len(inst.tasks), inst.n_gpus
    return tasks * (2 * gpus + 4) + 2 * len(inst.jobs)


def exact_size(inst: Instance) -> dict[str, int]:
    """Size of :func:`build_exact` without building it: ``pairs`` (``len(disjunctive_pairs)``,
    counted in O(jobs)), ``binaries``, ``rows`` and ``terms`` (non-zeros). Building the model and
    handing it to HiGHS costs time about linear in ``terms`` ((8a)/(8b): 5 per pair and GPU)."""
    tasks, gpus = len(inst.tasks), inst.n_gpus
    ordered = sum(j.tasks_per_round ** 2 * j.rounds * (j.rounds - 1) // 2 for j in inst.jobs)
    pairs = tasks * (tasks - 1) // 2 - ordered
    return {"pairs": pairs, "binaries": tasks * gpus + pairs,
            "rows": 2 * pairs * gpus + 3 * tasks + len(inst.jobs),
            "terms": 10 * pairs * gpus + _base_terms(inst)}


def rl_size(inst: Instance, mode: str = "paper_full") -> dict[str, int]:
    """Size of :func:`build_rl` without building it (as :func:`exact_size`): ``u`` has one variable
    and one row per task pair and GPU, z two rows per task and GPU, and (9) one row per GPU with
    every task and pair (``paper_full``) or one per pair and GPU (``subsets``)."""
    tasks, gpus = len(inst.tasks), inst.n_gpus
    pairs = tasks * (tasks - 1) // 2
    cuts = gpus * (tasks + pairs) if mode == "paper_full" else 3 * pairs * gpus
    return {"pairs": pairs, "binaries": tasks * gpus,
            "rows": pairs * gpus + 2 * tasks * gpus + 3 * tasks + len(inst.jobs)
            + (gpus if mode == "paper_full" else pairs * gpus),
            "terms": 3 * pairs * gpus + 4 * tasks * gpus + _base_terms(inst) + cuts}


def time_unit(inst: Instance) -> float:
    """The power of two ``s`` with ``max T^c / s`` in [1024, 2048): the exact MILP's unit of time.

    HiGHS works with absolute tolerances (feasibility 1e-7 / 1e-6, mip_abs_gap 1e-6, integrality
    1e-6 times the big-M, coefficients below 1e-9 dropped). In raw units they decided the answer
    (issue 13; tests/data/hetero_gpu/exact_*_repro.json): with every time x 1e7 or x 1e9 HiGHS
    proved a schedule 17% worse "optimal", or the model "infeasible", although the better schedule
    satisfies every row; with times x 1e-6 the absolute gap exceeded the difference between
    schedules. At unit scale (max T^c ~ 1) a start 5e-7 before its arrival still passed as feasible,
    so 1.0000005 and 0.9999995 were not told apart. With the longest compute ~1e3 units an absolute
    1e-6 is ~1e-9 of a compute time, while the big-M relative to the compute times (about the task
    count) does not depend on the unit. Dividing by a power of two is exact in floating point, so
    the normalised model describes exactly the same schedules.
    """
    longest = max(max(j.train_time) for j in inst.jobs)
    return math.ldexp(1.0, math.frexp(longest)[1] - 11)


def normalised(inst: Instance, unit: float) -> Instance:
    """``inst`` with every time (arrivals, T^c, T^s) divided by ``unit`` (a power of two: exact)."""
    return Instance(inst.gpus, tuple(
        Job(j.arrival / unit, j.weight, j.rounds, j.tasks_per_round,
            tuple(t / unit for t in j.train_time), tuple(t / unit for t in j.sync_time), j.model)
        for j in inst.jobs), inst.name)


def build_exact(inst: Instance, upper_bound: float | None = None) -> pyo.ConcreteModel:
    """Hare_Sched, eqs. (4)–(8), as an exact MILP (digest §3.3). Continuous time, no discretisation.

    Units: times are divided by :func:`time_unit` ``s`` and the objective by a power of two that puts
    it in [1024, 2048) at the trivial lower bound, so HiGHS's absolute tolerances (mip_abs_gap 1e-6
    in particular) are negligible; ``m.objective_unit`` converts the model's objective and bound
    back (multiply), ``m.time_unit`` its x values. Both are powers of two: exact conversions.

    (8) becomes, for every pair in :func:`disjunctive_pairs` and GPU m, with o_ij = 1 iff i first::

        x_j >= x_i + T^c_i,m - M (3 - y_i,m - y_j,m - o_ij)        (8a)
        x_i >= x_j + T^c_j,m - M (2 - y_i,m - y_j,m + o_ij)        (8b)

    Big-M: every optimal schedule can be left-shifted to a semi-active one whose starts are all
    <= U (:func:`trivial_horizon`), or <= max_n d_n with the deadlines of :func:`deadlines` when a
    feasible cost ``upper_bound`` (original units) is given. An inactive row must allow
    x_i + T^c - x_j up to U + max T^c, so M = U + max T^c (U alone would cut off schedules with x_i
    near U). Symmetry breaking: tasks of one round are identical (same job, same rows), so relabelling
    them by start time maps every schedule to one with x_k <= x_k' for k < k', and o = 1.
    Deadlines: C_n <= d_n holds in every schedule of cost <= UB, in particular in every optimal one.

    Tolerance: the rows are exact. ``verify`` lets each start precede its arrival, barrier or GPU
    release by ``tolerance.slack`` of that time, so a schedule using that slack along a chain of L
    dependent tasks finishes up to about L slacks earlier than any exact schedule; this is float
    noise absorbed by the checker, not a cut-off schedule (any such schedule, re-timed semi-actively
    with the same GPUs and order, is exact and at most that much later).
    """
    unit = time_unit(inst)
    inst = normalised(inst, unit)
    horizon = trivial_horizon(inst)
    dl = None
    if upper_bound is not None:
        ub = upper_bound / unit
        # keep the optimum inside despite float rounding in d_n (error ~ ulp(UB) / w_n)
        dl = [d + tolerance.slack(ub / j.weight) for d, j in zip(deadlines(inst, ub), inst.jobs)]
        horizon = min(horizon, max(dl))
    m = _base(inst, horizon, dl)
    floor = sum(j.weight * c for j, c in zip(inst.jobs, completion_lower_bounds(inst)))
    scale = math.ldexp(1.0, math.frexp(floor)[1] - 11)  # floor / scale in [1024, 2048)
    m.obj.set_value(sum(inst.jobs[n].weight / scale * m.C[n] for n in range(len(inst.jobs))))
    m.time_unit = unit
    m.objective_unit = scale * unit
    big = horizon + max(max(j.train_time) for j in inst.jobs)
    pairs = disjunctive_pairs(inst)
    m.P = pyo.Set(initialize=pairs, dimen=6, ordered=True)
    m.o = pyo.Var(m.P, domain=pyo.Binary)
    tc = inst.tc

    def first(m, *p):
        i, j, g = p[:3], p[3:6], p[6]
        return m.x[j] >= m.x[i] + tc[i[0], g] - big * (3 - m.y[(*i, g)] - m.y[(*j, g)] - m.o[p[:6]])

    def second(m, *p):
        i, j, g = p[:3], p[3:6], p[6]
        return m.x[i] >= m.x[j] + tc[j[0], g] - big * (2 - m.y[(*i, g)] - m.y[(*j, g)] + m.o[p[:6]])

    m.PG = pyo.Set(initialize=[(*i, *j, g) for i, j in pairs for g in range(inst.n_gpus)], dimen=7)
    m.first = pyo.Constraint(m.PG, rule=first)     # (8a)
    m.second = pyo.Constraint(m.PG, rule=second)   # (8b)
    sym = [(i, j) for i, j in pairs if i[:2] == j[:2] and j[2] == i[2] + 1]
    m.sym = pyo.Constraint(range(len(sym)), rule=lambda m, s: m.x[sym[s][0]] <= m.x[sym[s][1]])
    for i, j in sym:
        m.o[(*i, *j)].fix(1)
    return m


def build_rl(inst: Instance, mode: str = "paper_full") -> pyo.ConcreteModel:
    """Hare_Sched_RL: (4)–(7) plus (9) instead of (8), linearised exactly (digest §3.5).

    Because y is binary, (9) for GPU m and task set S is equivalent to
    ``sum_{i in S} T^c_i,m z_i,m >= sum_{i<j in S} T^c_i,m T^c_j,m u_ij,m`` (9L/9S) with
    ``z <= x, z <= U y`` (z stands for y·x and appears only on the >= side) and
    ``u >= y_i + y_j - 1`` (u stands for y·y and appears only on the <= side), so the one-sided
    linearisation is exact. x <= U (:func:`trivial_horizon`) keeps RL* <= OPT.

    ``mode="paper_full"``: (9) for the full task set of each GPU, as the paper states it.
    ``mode="subsets"``: (9S) for every pair; larger prefixes are added by :func:`add_subset_cut`.
    """
    horizon = trivial_horizon(inst)
    m = _base(inst, horizon, None)
    m.z = pyo.Var(m.T, m.G, bounds=(0, horizon))
    m.z_le_x = pyo.Constraint(m.T, m.G, rule=lambda m, n, r, k, g: m.z[n, r, k, g] <= m.x[n, r, k])
    m.z_le_y = pyo.Constraint(m.T, m.G, rule=lambda m, n, r, k, g: m.z[n, r, k, g] <= horizon * m.y[n, r, k, g])
    pairs = [(i, j, g) for i, j in combinations(inst.tasks, 2) for g in range(inst.n_gpus)]
    m.U = pyo.Set(initialize=[(*i, *j, g) for i, j, g in pairs], dimen=7)
    m.u = pyo.Var(m.U, bounds=(0, 1))
    m.u_ge = pyo.Constraint(m.U, rule=lambda m, *p: m.u[p] >= m.y[(*p[:3], p[6])] + m.y[(*p[3:6], p[6])] - 1)
    m.cuts = pyo.ConstraintList()
    if mode == "paper_full":
        for g in range(inst.n_gpus):
            add_subset_cut(m, inst, inst.tasks, g)  # (9) on the full set
    elif mode == "subsets":
        for i, j in combinations(inst.tasks, 2):
            for g in range(inst.n_gpus):
                add_subset_cut(m, inst, (i, j), g)
    else:
        raise ValueError(f"mode: must be paper_full or subsets, got {mode!r}")
    return m


def add_subset_cut(m: pyo.ConcreteModel, inst: Instance, subset, g: int) -> None:
    """Add (9S) for task set ``subset`` on GPU ``g`` (in the linearised z/u variables)."""
    tc = inst.tc
    lhs = sum(tc[i[0], g] * m.z[(*i, g)] for i in subset)
    rhs = sum(tc[i[0], g] * tc[j[0], g] * m.u[(*i, *j, g)] for i, j in combinations(sorted(subset), 2))
    m.cuts.add(lhs >= rhs)


def build_aggregate_lp(inst: Instance,
                       cuts: Iterable[Sequence[tuple[int, int]]] = ()) -> pyo.ConcreteModel:
    """Aggregate LP lower bound (digest §3.5; toolkit extension, not in the paper).

    Relaxes Hare_Sched by (a) shrinking every task to its fastest times p_n = min_m T^c, q_n =
    min_m T^s and (b) replacing the per-GPU disjunctions (8) by the Hall–Schulz–Shmoys–Wein
    inequalities for |M| identical machines, for each given subset S of rounds::

        sum_{i in S} p_i x_i >= p(S)^2 / (2|M|) - 1/2 sum_{i in S} p_i^2

    Valid: shrinking tasks in place keeps a schedule feasible on |M| identical machines, where the
    HSSW inequality holds for every task set. By symmetry one start X[n, r] per round suffices
    (averaging identical tasks keeps an LP optimum), each round counting its K_n tasks.
    """
    m = pyo.ConcreteModel(name="hare_aggregate_lp")
    rounds = [(n, r) for n, j in enumerate(inst.jobs) for r in range(j.rounds)]
    p = [min(j.train_time) for j in inst.jobs]
    q = [min(j.sync_time) for j in inst.jobs]
    m.R = pyo.Set(initialize=rounds, dimen=2, ordered=True)
    m.X = pyo.Var(m.R, bounds=lambda _, n, r: (inst.jobs[n].arrival, None))
    m.C = pyo.Var(range(len(inst.jobs)))
    m.chain = pyo.Constraint(m.R, rule=lambda m, n, r: m.X[n, r] >= m.X[n, r - 1] + p[n] + q[n]
                             if r > 0 else pyo.Constraint.Feasible)
    m.done = pyo.Constraint(range(len(inst.jobs)), rule=lambda m, n: m.C[n] >= m.X[
        n, inst.jobs[n].rounds - 1] + p[n] + q[n])
    m.hssw = pyo.ConstraintList()
    for subset in cuts:
        add_hssw_cut(m, inst, subset)
    m.obj = pyo.Objective(expr=sum(j.weight * m.C[n] for n, j in enumerate(inst.jobs)))
    return m


def aggregate_lp_size(inst: Instance, cuts: Iterable[Sequence[tuple[int, int]]] = ()) -> dict[str, int]:
    """Size of :func:`build_aggregate_lp` with ``cuts`` without building it (as
    :func:`exact_size`): one chain row per round after a job's first, one completion row per job,
    one HSSW row per cut with one term per round in it."""
    rounds, jobs = sum(j.rounds for j in inst.jobs), len(inst.jobs)
    cuts = list(cuts)
    return {"rows": rounds + len(cuts), "terms": 2 * rounds + jobs + sum(len(c) for c in cuts)}


def add_hssw_cut(m: pyo.ConcreteModel, inst: Instance, subset) -> None:
    """Add the HSSW inequality for the rounds in ``subset`` to a :func:`build_aggregate_lp` model."""
    p = {g: min(inst.jobs[g[0]].train_time) for g in subset}
    coef = {g: inst.jobs[g[0]].tasks_per_round * p[g] for g in subset}
    squares = sum(coef[g] * p[g] for g in subset)
    rhs = sum(coef.values()) ** 2 / (2 * inst.n_gpus) - squares / 2
    m.hssw.add(sum(coef[g] * m.X[g] for g in subset) >= rhs)


def extract_schedule(inst: Instance, m: pyo.ConcreteModel) -> Schedule:
    """Read y_i,m and the start order of a solved :func:`build_exact` model as a Schedule.

    The solver's x values carry feasibility-tolerance noise (~1e-7 of the model's time unit), so the
    schedule is rebuilt semi-actively from what the MILP decided — each task's GPU and the order of
    starts — placing every task at max(its round's barrier, its GPU's free time). Starts never move
    later than the MILP's (up to that noise), so the objective is the MILP's, in exact arithmetic.
    The order is taken by x but never lets noise put a round before its predecessor's last task.
    """
    gpu = {i: max(range(inst.n_gpus), key=lambda g: pyo.value(m.y[(*i, g)])) for i in inst.tasks}
    return semi_active(inst, start_order(inst, {i: pyo.value(m.x[i]) for i in inst.tasks}), gpu)


def start_order(inst: Instance, start: dict) -> list:
    """Tasks by ``start`` (ties by index), round r+1 of a job only after all of round r (barrier (7))."""
    ready = [(start[n, 0, k], (n, 0, k)) for n, j in enumerate(inst.jobs) for k in range(j.tasks_per_round)]
    heapq.heapify(ready)
    left = [j.tasks_per_round for j in inst.jobs]
    order = []
    while ready:
        _, (n, r, k) = heapq.heappop(ready)
        order.append((n, r, k))
        left[n] -= 1
        if left[n] == 0 and r + 1 < inst.jobs[n].rounds:
            left[n] = inst.jobs[n].tasks_per_round
            for kk in range(left[n]):
                heapq.heappush(ready, (start[n, r + 1, kk], (n, r + 1, kk)))
    return order


def semi_active(inst: Instance, order, gpu: dict) -> Schedule:
    """Place tasks in ``order`` on their GPUs as early as (4), (7) and (8) allow."""
    free = [0.0] * inst.n_gpus
    ready = {(n, 0): j.arrival for n, j in enumerate(inst.jobs)}
    finish: dict = {}
    runs = []
    for n, r, k in order:
        job, g = inst.jobs[n], gpu[n, r, k]
        if (n, r) not in ready:  # barrier (7): every task of round r-1 is placed already
            ready[n, r] = max(finish[n, r - 1, kk] for kk in range(job.tasks_per_round))
        start = max(ready[n, r], free[g])
        free[g] = start + job.train_time[g]
        finish[n, r, k] = free[g] + job.sync_time[g]
        runs.append(TaskRun(n, r, k, g, start))
    return Schedule(tuple(runs))


def relaxed_starts(inst: Instance, m: pyo.ConcreteModel) -> dict:
    """x̂_i of a solved :func:`build_rl` model."""
    return {i: float(pyo.value(m.x[i])) for i in inst.tasks}


def relaxed_assignment(inst: Instance, m: pyo.ConcreteModel) -> list[list[tuple[int, int, int]]]:
    """Per GPU, the tasks a solved :func:`build_rl` model puts there (y > 1/2), in task order."""
    return [[i for i in inst.tasks if pyo.value(m.y[(*i, g)]) > 0.5] for g in range(inst.n_gpus)]


def round_starts(m: pyo.ConcreteModel) -> dict[tuple[int, int], float]:
    """X̂ of every round ``(n, r)`` of a solved :func:`build_aggregate_lp` model."""
    return {g: float(pyo.value(m.X[g])) for g in m.R}

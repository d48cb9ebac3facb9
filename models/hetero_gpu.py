"""Pyomo formulations of Hare (Chen et al., HPDC'22; paper 004), digest §3.

- :func:`build_time_indexed` — Hare_Sched (paper Sec. 5.1, eqs. (4)–(8)) as a time-indexed MILP on
  the exact grid of the data (:func:`time_grid`: every arrival, T^c and T^s a multiple of δ, so
  no discretisation error), identical GPUs aggregated into classes; the exact method's model
  whenever the data have a grid and the model is small enough (:data:`MAX_SLOTS`).
- :func:`build_exact` — Hare_Sched as a continuous-time MILP: assignment plus disjunctive big-M
  ordering per GPU, with start windows, per-row big-Ms and symmetry breaking. Exact for any float
  data; the exact method's model when the data have no usable grid.
- :func:`set_start` / :func:`set_time_indexed_start` — a verified schedule as a MIP start.
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
from fractions import Fraction
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
    counted in O(jobs)), ``binaries``, ``rows`` and ``terms`` (non-zeros), upper estimates (rows
    that the windows make redundant are left out when built). Building the model and handing it to
    HiGHS costs time about linear in ``terms`` ((8a)/(8b): 5 per pair and GPU; ``m.gpu_order``
    and its running sums: 5 per task and pair of consecutive identical GPUs)."""
    tasks, gpus = len(inst.tasks), inst.n_gpus
    ordered = sum(j.tasks_per_round ** 2 * j.rounds * (j.rounds - 1) // 2 for j in inst.jobs)
    pairs = tasks * (tasks - 1) // 2 - ordered
    twins = sum(len(c) - 1 for c in gpu_classes(inst))  # consecutive pairs of identical GPUs
    return {"pairs": pairs, "binaries": tasks * gpus + pairs,
            "rows": 2 * pairs * gpus + 3 * tasks + len(inst.jobs) + 2 * twins * tasks,
            "terms": 10 * pairs * gpus + _base_terms(inst) + 5 * twins * tasks}


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


#: :func:`time_unit` keeps the trivial horizon below 2 ** MAX_HORIZON_EXPONENT model units.
MAX_HORIZON_EXPONENT = 23


def time_unit(inst: Instance) -> float:
    """The exact MILP's unit of time: the power of two ``s`` with ``max T^c / s`` in [1024, 2048),
    or, when that puts the trivial horizon U (:func:`trivial_horizon`) at 2 ** 23 units or more,
    the power of two with ``U / s`` in [2 ** 22, 2 ** 23) (:data:`MAX_HORIZON_EXPONENT`).

    HiGHS works with absolute tolerances (feasibility 1e-7 / 1e-6, mip_abs_gap 1e-6, integrality
    1e-6 times the big-M, coefficients below 1e-9 dropped). In raw units they decided the answer
    (issue 13; tests/data/hetero_gpu/exact_*_repro.json): with every time x 1e7 or x 1e9 HiGHS
    proved a schedule 17% worse "optimal", or the model "infeasible", although the better schedule
    satisfies every row; with times x 1e-6 the absolute gap exceeded the difference between
    schedules. At unit scale (max T^c ~ 1) a start 5e-7 before its arrival still passed as feasible,
    so 1.0000005 and 0.9999995 were not told apart. With the longest compute ~1e3 units an absolute
    1e-6 is ~1e-9 of a compute time.

    The starts, windows and big-Ms reach U, which is not bounded by the compute times: with
    arrivals far apart (U / max T^c = 7e5, tests/models/test_hetero_gpu_exact.py ``WIDE_RANGE``
    "sync_dominated") U was 1.15e9 units, where one ulp (2.4e-7) exceeds the feasibility tolerance,
    and HiGHS proved a schedule 7e-4 worse "optimal" (its own rows admit the optimum). Near 2 ** 23
    units an ulp is 1e-9 to 2e-9. Dividing by a power of two is exact in floating point, so
    the normalised model describes exactly the same schedules.
    """
    longest = max(max(j.train_time) for j in inst.jobs)
    unit = math.ldexp(1.0, math.frexp(longest)[1] - 11)
    horizon = trivial_horizon(inst)
    return max(unit, math.ldexp(1.0, math.frexp(horizon)[1] - MAX_HORIZON_EXPONENT))


def normalised(inst: Instance, unit: float) -> Instance:
    """``inst`` with every time (arrivals, T^c, T^s) divided by ``unit`` (a power of two: exact)."""
    return Instance(inst.gpus, tuple(
        Job(j.arrival / unit, j.weight, j.rounds, j.tasks_per_round,
            tuple(t / unit for t in j.train_time), tuple(t / unit for t in j.sync_time), j.model)
        for j in inst.jobs), inst.name)


def task_windows(inst: Instance, deadline: list[float] | None, horizon: float) -> tuple[dict, dict]:
    """Start windows ``[est_i, lst_i]`` of every task (in the units of ``inst``).

    ``est_i = a_n + r · minp_n`` (minp_n = min_m (T^c + T^s)): round r starts after r earlier rounds
    of at least minp_n each ((4), (7)). With deadlines d_n (:func:`deadlines`),
    ``lst_i = d_n - (R_n - r) · minp_n``: the rounds r..R_n-1 each take at least minp_n and end by
    C_n <= d_n ((6)); without them ``lst_i`` = ``horizon`` (:func:`trivial_horizon`). Every schedule
    of cost <= UB, left-shifted, has its starts in these windows.
    """
    est, lst = {}, {}
    for n, r, k in inst.tasks:
        job = inst.jobs[n]
        minp = min(c + s for c, s in zip(job.train_time, job.sync_time))
        est[n, r, k] = job.arrival + r * minp
        late = horizon if deadline is None else min(horizon, deadline[n] - (job.rounds - r) * minp)
        lst[n, r, k] = max(est[n, r, k], late)
    return est, lst


def gpu_classes(inst: Instance) -> list[list[int]]:
    """GPUs with identical T^c and T^s columns (interchangeable), each class in index order."""
    classes: dict[tuple, list[int]] = {}
    for g in range(inst.n_gpus):
        classes.setdefault((tuple(inst.tc[:, g]), tuple(inst.ts[:, g])), []).append(g)
    return list(classes.values())


#: Largest ratio :func:`weight_unit` keeps between the objective's largest and smallest coefficient.
MAX_COST_RATIO = 2.0 ** 20


def weight_unit(inst: Instance) -> float:
    """The power of two ``s`` that :func:`build_exact` divides the weights by (``inst`` in model
    units): the largest with every coefficient w_n / s >= 1 and the objective at the completion
    bound, sum_n w_n / s LBC_n (:func:`completion_lower_bounds`), >= 1024. Weights spanning more
    than :data:`MAX_COST_RATIO` are the limit: then w_max / MAX_COST_RATIO takes the place of
    w_min (so lighter jobs get coefficients below 1; below 1e-7 only beyond a span of 1e13).

    HiGHS counts a reduced cost below its dual feasibility tolerance (1e-7, absolute) as zero, so
    a coefficient below it leaves its C_n free to sit at its upper bound (the deadline d_n, or the
    horizon) in a "proven optimal" solution, with the dual bound equal to that inflated objective.
    The objective used to be scaled to [1024, 2048) at the completion bound, which made the
    coefficient w_n / s of a light job far below the tolerance when a heavy job completes late:
    with weights 5 and 5000 and completions 50 and 1e4 (tests/solvers/test_hetero_gpu_robust.py,
    times x 4096) it was 3.7e-8, C_0 sat at its cap d_0 + slack = 1393.9 instead of 50.58, and
    model and bound read 50,026,969.6 for an optimum of 50,020,252.9. Coefficients >= 1 keep every
    weight visible; the second condition keeps HiGHS's absolute gap (1e-6) below 1e-9 of the
    objective.
    """
    weights = [j.weight for j in inst.jobs]
    floor = sum(w * c for w, c in zip(weights, completion_lower_bounds(inst)))
    ref = min(max(min(weights), max(weights) / MAX_COST_RATIO), floor / 1024)
    return math.ldexp(1.0, math.frexp(ref)[1] - 1)


def _horizon_and_deadlines(inst: Instance, upper_bound: float | None,
                           unit: float) -> tuple[float, list[float] | None]:
    """The horizon and the deadlines d_n of :func:`deadlines` of ``inst`` (already divided by
    ``unit``) for a feasible cost ``upper_bound`` in original units (None: the trivial horizon,
    no deadlines). Each d_n gets the checker's slack, keeping the optimum inside despite float
    rounding (error ~ ulp(UB) / w_n)."""
    horizon = trivial_horizon(inst)
    if upper_bound is None:
        return horizon, None
    ub = upper_bound / unit
    dl = [d + tolerance.slack(ub / j.weight) for d, j in zip(deadlines(inst, ub), inst.jobs)]
    return min(horizon, max(dl)), dl


def build_exact(inst: Instance, upper_bound: float | None = None) -> pyo.ConcreteModel:
    """Hare_Sched, eqs. (4)–(8), as an exact MILP (digest §3.3). Continuous time, no discretisation.

    Units: times are divided by :func:`time_unit` and the weights by :func:`weight_unit` (every
    objective coefficient >= 1, above HiGHS's dual tolerance; the objective >= 1024, above its
    absolute gap); ``m.objective_unit`` converts the model's objective and bound back (multiply),
    ``m.time_unit`` its x values. Both are powers of two: exact conversions.

    Windows: every start lies in ``[est_i, lst_i]`` (:func:`task_windows`), with the deadlines
    d_n of :func:`deadlines` when a feasible cost ``upper_bound`` (original units) is given
    (C_n <= d_n holds in every schedule of cost <= UB, in particular in every optimal one), else
    with the horizon U of :func:`trivial_horizon` (every optimal schedule left-shifted to a
    semi-active one starts all tasks by U).

    (8) becomes, for every pair in :func:`disjunctive_pairs` and GPU m, with o_ij = 1 iff i first::

        x_j >= x_i + T^c_i,m - M^a_ijm (3 - y_i,m - y_j,m - o_ij)        (8a)
        x_i >= x_j + T^c_j,m - M^b_ijm (2 - y_i,m - y_j,m + o_ij)        (8b)

    with per-row big-Ms from the windows, M^a = lst_i + T^c_i,m - est_j (the most an inactive row
    must allow; a row with M^a <= 0 always holds and is left out). Where the windows allow neither
    order on m, ``y_i,m + y_j,m <= 1`` (``m.apart``) replaces both rows; where they allow only one
    order on every GPU, o_ij is fixed to it.

    Symmetry breaking (each keeps an optimal schedule): the tasks of one round are identical, so
    relabelling them by start gives x_k <= x_k' for k < k' and o = 1 (``m.sym``); GPUs with
    identical columns (:func:`gpu_classes`) are interchangeable, so relabelling each class by the
    first task (in ``Instance.tasks`` order) that runs on it gives, for consecutive m < m' of a
    class, ``y_i,m' <= sum_{i' < i} y_i',m`` (``m.gpu_order``, the sum kept in ``m.seen``). Both relabellings keep the starts,
    so they combine. :func:`canonical` applies them to a schedule (:func:`set_start`).

    Tolerance: the rows are exact; windows and order fixings are decided with
    :func:`optsched.tolerance.at_most`, so they never exclude a pair order that the windows allow
    within the checker's slack. ``verify`` lets each start precede its arrival, barrier or GPU
    release by ``tolerance.slack`` of that time, so a schedule using that slack along a chain of L
    dependent tasks finishes up to about L slacks earlier than any exact schedule; this is float
    noise absorbed by the checker, not a cut-off schedule (any such schedule, re-timed semi-actively
    with the same GPUs and order, is exact and at most that much later).
    """
    unit = time_unit(inst)
    inst = normalised(inst, unit)
    horizon, dl = _horizon_and_deadlines(inst, upper_bound, unit)
    m = _base(inst, horizon, dl)
    est, lst = task_windows(inst, dl, horizon)
    for i in inst.tasks:
        m.x[i].setlb(est[i])
        m.x[i].setub(lst[i])
    scale = weight_unit(inst)
    m.obj.set_value(sum(inst.jobs[n].weight / scale * m.C[n] for n in range(len(inst.jobs))))
    m.time_unit = unit
    m.objective_unit = scale * unit
    _add_disjunctions(m, inst, est, lst)
    _add_symmetry(m, inst)
    return m


def _add_disjunctions(m: pyo.ConcreteModel, inst: Instance, est: dict, lst: dict) -> None:
    """(8a)/(8b) with per-row big-Ms, ``apart`` rows and order fixings (see :func:`build_exact`)."""
    tc = inst.tc
    pairs = disjunctive_pairs(inst)
    m.P = pyo.Set(initialize=pairs, dimen=6, ordered=True)
    m.o = pyo.Var(m.P, domain=pyo.Binary)
    m.first = pyo.ConstraintList()    # (8a)
    m.second = pyo.ConstraintList()   # (8b)
    m.apart = pyo.ConstraintList()
    for i, j in pairs:
        o = m.o[(*i, *j)]
        i_first = [tolerance.at_most(est[i] + tc[i[0], g], lst[j]) for g in range(inst.n_gpus)]
        j_first = [tolerance.at_most(est[j] + tc[j[0], g], lst[i]) for g in range(inst.n_gpus)]
        for g in range(inst.n_gpus):
            yi, yj = m.y[(*i, g)], m.y[(*j, g)]
            if not (i_first[g] or j_first[g]):
                m.apart.add(yi + yj <= 1)
                continue
            big_a = lst[i] + tc[i[0], g] - est[j]
            if big_a > 0:
                m.first.add(m.x[j] >= m.x[i] + tc[i[0], g] - big_a * (3 - yi - yj - o))
            big_b = lst[j] + tc[j[0], g] - est[i]
            if big_b > 0:
                m.second.add(m.x[i] >= m.x[j] + tc[j[0], g] - big_b * (2 - yi - yj + o))
        if not any(i_first):
            o.fix(0)
        elif not any(j_first):
            o.fix(1)


def _add_symmetry(m: pyo.ConcreteModel, inst: Instance) -> None:
    """Identical tasks of a round ordered by start; identical GPUs ordered by their first task."""
    pairs = set(disjunctive_pairs(inst))
    sym = [(i, (*i[:2], i[2] + 1)) for i in inst.tasks if (i, (*i[:2], i[2] + 1)) in pairs]
    m.sym = pyo.Constraint(range(len(sym)), rule=lambda m, s: m.x[sym[s][0]] <= m.x[sym[s][1]])
    for i, j in sym:
        m.o[(*i, *j)].fix(1)
    # seen[g, t] = number of the first t+1 tasks on g (a running sum keeps the rows short)
    twins = [(g, h) for gpus in gpu_classes(inst) for g, h in zip(gpus, gpus[1:])]
    tasks = inst.tasks
    m.seen = pyo.Var([(g, t) for g, _ in twins for t in range(len(tasks))], bounds=(0, len(tasks)))
    m.seen_sum = pyo.ConstraintList()
    m.gpu_order = pyo.ConstraintList()
    for g, h in twins:
        m.y[(*tasks[0], h)].fix(0)
        m.seen_sum.add(m.seen[g, 0] == m.y[(*tasks[0], g)])
        for t in range(1, len(tasks)):
            m.seen_sum.add(m.seen[g, t] == m.seen[g, t - 1] + m.y[(*tasks[t], g)])
            m.gpu_order.add(m.y[(*tasks[t], h)] <= m.seen[g, t - 1])


def canonical(inst: Instance, schedule: Schedule) -> Schedule:
    """``schedule`` relabelled to meet :func:`build_exact`'s symmetry breaking, same starts and cost:
    the tasks of each round renumbered by (start, GPU), then the GPUs of each class of
    :func:`gpu_classes` renumbered by the first task (in ``Instance.tasks`` order) that runs on them."""
    rounds: dict = {}
    for t in schedule.runs:
        rounds.setdefault((t.job, t.round), []).append((t.start, t.gpu))
    runs = {(n, r, k): gs for (n, r), lst in rounds.items() for k, gs in enumerate(sorted(lst))}
    relabel = list(range(inst.n_gpus))
    for gpus in gpu_classes(inst):
        first = {g: next((t for t, i in enumerate(inst.tasks) if runs[i][1] == g), len(inst.tasks))
                 for g in gpus}
        for new, old in zip(gpus, sorted(gpus, key=lambda g: (first[g], g))):
            relabel[old] = new
    return Schedule(tuple(TaskRun(*i, relabel[g], s) for i, (s, g) in sorted(runs.items())))


def set_start(m: pyo.ConcreteModel, inst: Instance, schedule: Schedule) -> None:
    """Set the variables of a :func:`build_exact` model from a verified ``schedule`` (a MIP start
    for ``solve_model(..., warm_start=True)``): x, y, o, F, C and seen in the model's units, after
    :func:`canonical`. Fixed variables are left alone; HiGHS checks the start and repairs it with a
    sub-MIP if it violates a row, so a start never makes the result wrong."""
    sched = canonical(inst, schedule)
    unit = m.time_unit
    start = {t.key: t.start / unit for t in sched.runs}
    gpu = {t.key: t.gpu for t in sched.runs}
    finish: dict = {}
    for (n, r, k), x in start.items():
        job = inst.jobs[n]
        f = x + (job.train_time[gpu[n, r, k]] + job.sync_time[gpu[n, r, k]]) / unit
        finish[n, r] = max(finish.get((n, r), f), f)
    values = [(m.x[i], start[i]) for i in inst.tasks]
    values += [(m.y[(*i, g)], float(gpu[i] == g)) for i in inst.tasks for g in range(inst.n_gpus)]
    values += [(m.F[g], f) for g, f in finish.items()]
    values += [(m.C[n], finish[n, j.rounds - 1]) for n, j in enumerate(inst.jobs)]
    values += [(m.o[p], float((start[p[:3]], p[:3]) < (start[p[3:]], p[3:]))) for p in m.P]
    values += [(m.seen[g, t], float(sum(gpu[i] == g for i in inst.tasks[:t + 1]))) for g, t in m.seen]
    for var, value in values:
        if not var.fixed:
            var.set_value(value, skip_validation=True)


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


#: Largest time-indexed model :func:`build_time_indexed` is used for (start variables).
MAX_SLOTS = 40000


def time_grid(inst: Instance) -> float | None:
    """The largest δ of which every arrival, T^c and T^s is an integer multiple (exact: the
    gcd of the floats as fractions), or None when there is none (all zero times cannot occur:
    T^c > 0). In a left-shifted (semi-active) schedule, which is optimal whenever any schedule is,
    every start is an arrival, a compute end or a barrier, i.e. a sum of data: a multiple of δ."""
    values = [Fraction(v) for j in inst.jobs for v in (j.arrival, *j.train_time, *j.sync_time) if v]
    grid = Fraction(0)
    for v in values:
        grid = Fraction(math.gcd(grid.numerator * v.denominator, v.numerator * grid.denominator),
                        grid.denominator * v.denominator)
    return float(grid) if grid and float(grid) == grid else None


def time_indexed_windows(inst: Instance, upper_bound: float | None) -> tuple[float, dict, dict] | None:
    """``(δ, est, lst)`` in grid units (integers) for :func:`build_time_indexed`, or None when the
    data have no grid (:func:`time_grid`) or the trivial horizon spans more than
    :data:`MAX_SLOTS` of it. Windows as :func:`task_windows` with the deadlines of a
    feasible cost ``upper_bound``; ``lst`` is rounded down (starts are integral on the grid)
    after the deadline's slack."""
    grid = time_grid(inst)
    if grid is None or trivial_horizon(inst) / grid > MAX_SLOTS:  # more slots than variables allowed
        return None
    g_inst = normalised(inst, grid)
    horizon, dl = _horizon_and_deadlines(g_inst, upper_bound, grid)
    est, lst = task_windows(g_inst, dl, horizon)
    return grid, {i: round(e) for i, e in est.items()}, {i: math.floor(v) for i, v in lst.items()}


def time_indexed_size(inst: Instance, windows) -> dict[str, int]:
    """Size of :func:`build_time_indexed` without building it: ``binaries`` (one per task, GPU
    class and start in the window) and ``terms`` (each start variable counts in T^c capacity rows,
    its task's rows and the barrier rows of the next round)."""
    _, est, lst = windows
    classes = gpu_classes(inst)
    starts = sum((lst[i] - est[i] + 1) * len(classes) for i in inst.tasks)
    width = max(max(j.train_time) for j in inst.jobs) / windows[0] + 4
    return {"binaries": starts, "rows": len(inst.tasks) + starts, "terms": int(starts * width)}


def build_time_indexed(inst: Instance, windows) -> pyo.ConcreteModel:
    """Hare_Sched (4)–(8) as a time-indexed MILP on the exact grid δ of :func:`time_grid` (digest
    §2 ``s_{i,m,t}``, §3.4), with identical GPUs aggregated into classes (:func:`gpu_classes`).

    ``s[i, c, t] = 1`` iff task i starts at t·δ on a GPU of class c, t in its window
    (:func:`time_indexed_windows`). Rows::

        sum_{c,t} s[i,c,t] = 1                                                    (5)
        sum_i sum_{t - T^c_i,c < t' <= t} s[i,c,t'] <= |c|      for every class c, slot t   (8)
        F[n,r] >= sum_{c,t} (t + T^c_i,c + T^s_i,c) s[i,c,t]    for i in round r        (6)/(7)
        sum_{c, t' <= t} s[j,c,t'] <= sum_{c, t' + T^c_i,c + T^s_i,c <= t} s[i,c,t']   (7)

    for i in round r-1 and j the first task of round r (the tasks of a round are ordered by start,
    ``m.sym``, as in :func:`build_exact`), and ``x_j >= F[n,r-1]``; C_n = F[n, R_n - 1].

    Exact: starts on the grid lose nothing (:func:`time_grid`), and per class the capacity row is
    the whole of (8): intervals of which at most |c| overlap at any time can be given to the |c|
    GPUs without overlap (interval graph colouring; :func:`extract_time_indexed` does it greedily
    by start). Deadlines and windows as in :func:`build_exact`. Units: ``m.time_unit`` = δ,
    ``m.objective_unit`` converts the objective (powers of two when δ is one; δ and the
    conversion are exact for the data, which are multiples of it).
    """
    grid, est, lst = windows
    g_inst = normalised(inst, grid)
    classes = gpu_classes(inst)
    jobs = range(len(inst.jobs))
    tc = [[g_inst.jobs[n].train_time[c[0]] for c in classes] for n in jobs]
    busy = [[tc[n][ci] + g_inst.jobs[n].sync_time[c[0]] for ci, c in enumerate(classes)] for n in jobs]
    m = pyo.ConcreteModel(name="hare_time_indexed")
    keys = [(*i, c, t) for i in inst.tasks for c in range(len(classes)) for t in range(est[i], lst[i] + 1)]
    m.s = pyo.Var(keys, domain=pyo.Binary)
    m.x = pyo.Var(inst.tasks, bounds=lambda _, *i: (est[i], lst[i]))
    m.F = pyo.Var([(n, r) for n in jobs for r in range(inst.jobs[n].rounds)])
    m.C = pyo.Var(jobs, bounds=lambda _, n: (completion_lower_bounds(g_inst)[n], None))
    by_task: dict = {i: [] for i in inst.tasks}
    for key in keys:
        by_task[key[:3]].append(key)
    m.one = pyo.Constraint(inst.tasks, rule=lambda m, *i: sum(m.s[k] for k in by_task[i]) == 1)
    m.start = pyo.Constraint(inst.tasks, rule=lambda m, *i: m.x[i] == sum(k[4] * m.s[k] for k in by_task[i]))
    m.round_end = pyo.Constraint(inst.tasks, rule=lambda m, n, r, k: m.F[n, r] >= sum(
        (t + busy[n][c]) * m.s[n, r, k, c, t] for *_, c, t in by_task[n, r, k]))
    m.barrier = pyo.Constraint(inst.tasks, rule=lambda m, n, r, k: m.x[n, r, k] >= m.F[n, r - 1]
                               if r > 0 else pyo.Constraint.Skip)
    m.completion = pyo.Constraint(jobs, rule=lambda m, n: m.C[n] >= m.F[n, inst.jobs[n].rounds - 1])
    _add_capacity(m, inst, keys, tc, classes)
    _add_time_barriers(m, inst, by_task, busy)
    sym = [((n, r, k), (n, r, k + 1)) for n, r, k in inst.tasks if k + 1 < inst.jobs[n].tasks_per_round]
    m.sym = pyo.Constraint(range(len(sym)), rule=lambda m, s: m.x[sym[s][0]] <= m.x[sym[s][1]])
    floor = sum(j.weight * c for j, c in zip(g_inst.jobs, completion_lower_bounds(g_inst)))
    scale = math.ldexp(1.0, math.frexp(floor)[1] - 11)  # floor / scale in [1024, 2048)
    m.obj = pyo.Objective(expr=sum(inst.jobs[n].weight / scale * m.C[n] for n in jobs))
    m.time_unit, m.objective_unit, m.classes = grid, scale * grid, classes
    return m


def _add_capacity(m: pyo.ConcreteModel, inst: Instance, keys, tc, classes) -> None:
    """(8) per class and slot: the starts whose compute covers the slot, at most |c| of them."""
    cover: dict = {}
    for n, r, k, c, t in keys:
        for u in range(t, t + round(tc[n][c])):
            cover.setdefault((c, u), []).append((n, r, k, c, t))
    m.capacity = pyo.ConstraintList()
    for (c, _), ks in sorted(cover.items()):
        if len(ks) > len(classes[c]):
            m.capacity.add(sum(m.s[k] for k in ks) <= len(classes[c]))


def _add_time_barriers(m: pyo.ConcreteModel, inst: Instance, by_task: dict, busy) -> None:
    """(7) disaggregated: the first task of round r started by t only if every task of round r-1
    finished by t (the first task starts first, ``m.sym``), and, for rounds r >= 1, the
    symmetry breaking disaggregated the same way (task k started by t only if task 0 is; valid
    because the round's tasks start after the same barrier, so relabelling them by start keeps
    every row). The counts are running sums over the slots of the first task's window
    (``m.count[task, "started" | "finished", t]``), so the rows stay short."""
    m.time_barrier = pyo.ConstraintList()
    m.running = pyo.ConstraintList()
    index = []
    for n, job in enumerate(inst.jobs):
        for r in range(1, job.rounds):
            slots = sorted({key[4] for key in by_task[n, r, 0]})
            index += [((n, r, k), "started", t) for k in range(job.tasks_per_round) for t in slots]
            index += [((n, r - 1, k), "finished", t) for k in range(job.tasks_per_round) for t in slots]
    m.count = pyo.Var(index, bounds=(0, 1))

    def running(task, kind, slots, when) -> None:
        """count[task, kind, t] = sum of task's start variables with when(key) <= t, t in slots."""
        keys = sorted(by_task[task], key=when)
        pos, before = 0, None
        for t in slots:
            new = []
            while pos < len(keys) and when(keys[pos]) <= t:
                new.append(m.s[keys[pos]])
                pos += 1
            head = sum(new) if before is None else m.count[task, kind, before] + sum(new)
            m.running.add(m.count[task, kind, t] == head)
            before = t

    for n, job in enumerate(inst.jobs):
        for r in range(1, job.rounds):
            slots = sorted({key[4] for key in by_task[n, r, 0]})
            running((n, r, 0), "started", slots, lambda key: key[4])
            for k in range(job.tasks_per_round):
                running((n, r - 1, k), "finished", slots, lambda key: key[4] + busy[key[0]][key[3]])
                for t in slots:
                    m.time_barrier.add(m.count[(n, r, 0), "started", t]
                                       <= m.count[(n, r - 1, k), "finished", t])
            for k in range(1, job.tasks_per_round):  # m.sym disaggregated: task k starts after 0
                running((n, r, k), "started", slots, lambda key: key[4])
                for t in slots:
                    m.time_barrier.add(m.count[(n, r, k), "started", t] <= m.count[(n, r, 0), "started", t])


def extract_time_indexed(inst: Instance, m: pyo.ConcreteModel) -> Schedule:
    """The schedule of a solved :func:`build_time_indexed` model: each task's class and start slot,
    the class's GPUs given greedily by start (a GPU whose last compute has ended), then re-timed
    semi-actively (:func:`semi_active`) in start order: never later than the model's starts."""
    chosen = {}
    for key in m.s:
        if pyo.value(m.s[key]) > 0.5:
            chosen[key[:3]] = (key[4], key[3])
    free = {g: -math.inf for g in range(inst.n_gpus)}
    gpu = {}
    for i, (t, c) in sorted(chosen.items(), key=lambda kv: (kv[1][0], kv[0])):
        start = t * m.time_unit
        g = next(g for g in m.classes[c] if tolerance.at_most(free[g], start))
        gpu[i] = g
        free[g] = start + inst.jobs[i[0]].train_time[g]
    starts = {i: t * m.time_unit for i, (t, _) in chosen.items()}
    return semi_active(inst, start_order(inst, starts), gpu)


def set_time_indexed_start(m: pyo.ConcreteModel, inst: Instance, schedule: Schedule) -> bool:
    """Set a :func:`build_time_indexed` model's variables from a verified ``schedule`` (MIP start,
    after :func:`canonical`); False (nothing set) when a start is off the grid or its window."""
    sched = canonical(inst, schedule)
    cls = {g: c for c, gpus in enumerate(m.classes) for g in gpus}
    chosen = {}
    for t in sched.runs:
        slot = t.start / m.time_unit
        if slot != round(slot) or (*t.key, cls[t.gpu], round(slot)) not in m.s:
            return False
        chosen[t.key] = (cls[t.gpu], round(slot))
    for key in m.s:
        m.s[key].set_value(float(chosen[key[:3]] == key[3:]), skip_validation=True)
    finish: dict = {}
    for (n, r, k), (c, t) in chosen.items():
        job, g = inst.jobs[n], m.classes[c][0]
        m.x[n, r, k].set_value(t, skip_validation=True)
        f = t + (job.train_time[g] + job.sync_time[g]) / m.time_unit
        finish[n, r] = max(finish.get((n, r), f), f)
    for (n, r), f in finish.items():
        m.F[n, r].set_value(f, skip_validation=True)
    for n, job in enumerate(inst.jobs):
        m.C[n].set_value(finish[n, job.rounds - 1], skip_validation=True)
    for key in m.count:  # Pyomo flattens the index: (n, r, k, kind, t)
        task, kind, t = key[:3], key[3], key[4]
        c, s = chosen[task]
        event = s if kind == "started" else s + (finish_time(inst, task, m.classes[c][0]) / m.time_unit)
        m.count[key].set_value(float(event <= t), skip_validation=True)
    return True


def finish_time(inst: Instance, task, gpu: int) -> float:
    """T^c + T^s of ``task``'s job on ``gpu`` (original units)."""
    job = inst.jobs[task[0]]
    return job.train_time[gpu] + job.sync_time[gpu]

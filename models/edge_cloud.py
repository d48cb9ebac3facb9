"""Pyomo models of She et al. (paper 001) for edge_cloud.

- :func:`build_pattern` — the offline problem (2) as a time-indexed *configuration* MILP (integral
  slots), the model of the ``exact`` method: one binary per job, placement and start slot (the
  columns of :func:`run_columns`), exact for :func:`optsched.problems.edge_cloud.verify`'s semantics.
  A placement (:func:`placements`) fixes the PS server and the worker vector, so (2a)-(2f), (2i)
  and the run length are data; only "one run per job" and the capacities (2g)/(2h) remain
  constraints. :func:`set_start` turns a verified schedule into a MIP start.
- :func:`build_exact` — the previous compact time-indexed MILP (kept as an independent cross-check
  of :func:`build_pattern` in the tests and for before/after measurements), exact for
  :func:`optsched.problems.edge_cloud.verify`'s semantics. Non-linear parts of (2) are linearised
  exactly (digest §3.3): contiguity by start/end/active binaries, ``y = nw * al`` and ``z = pi * al``
  by product linearisation, and the throughput constraint (2e) ``p_j(xi_j) sum y >= E D M`` by the
  integer threshold form ``sum y >= R0_j - (R0_j - R1_j) xi_j`` (worker-slots are integers).
  (2f) is enforced in its binding direction ``xi_j = 1 => all workers on the PS's server``.
- :func:`build_batch` — the batch problem (3) of round ``i``: maximise the number of jobs of ``J_i``
  run entirely inside the window ``(tau_i, 2 tau_i]`` (``fixed_start=True``: all start at
  ``tau_i + 1``, the class A_maxsche searches).
- :func:`enumerate_columns`, :func:`build_packing`, :func:`build_dual` — the packing ILP (4) over
  enumerated in-window schedules (columns), its LP relaxation and the dual (5).

All index sets are sparse: a variable exists only where the job may use the server (``t >= a_j +
Delta_js``, capacity > 0) and inside the job's admissible slots. This module builds models and
reads schedules from solved ones; the solves, the horizon heuristics and the column-generation
loop live in :mod:`optsched.solvers.edge_cloud`. The per-job bounds it uses (``earliest_start``,
and ``deadlines`` for the horizon) are in :mod:`optsched.problems.edge_cloud`.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
import pyomo.environ as pyo

from optsched.problems.edge_cloud import Instance, Run, Schedule, earliest_start


# ---------------------------------------------------------------- exact model (2) and batch (3)
def build_exact(instance: Instance, deadline: list[int]) -> pyo.ConcreteModel:
    """Time-indexed MILP of (2): min ``sum_j (c_j - a_j)`` with ``c_j <= deadline[j]``.

    Exact on integral slots whenever ``deadline`` is valid (e.g. from
    :func:`optsched.problems.edge_cloud.deadlines`); job ``j`` may use the slots
    ``earliest_start(j) .. deadline[j]``. The objective is ``sum_t t ep - sum_j a_j``.
    """
    slots = {j: range(earliest_start(instance, j), deadline[j] + 1) for j in range(len(instance.jobs))}
    m = _core(instance, slots, batch=False)
    m.obj = pyo.Objective(expr=sum(t * m.ep[j, t] for j, t in m.JT) - sum(job.arrival for job in instance.jobs))
    return m


def build_batch(instance: Instance, jobs: list[int], tau: int, *, fixed_start: bool = False) -> pyo.ConcreteModel:
    """Batch problem (3) of the round deciding at ``tau``: max ``sum x_j`` over the jobs ``jobs``
    run inside the window ``tau+1..2 tau`` with full capacities (A_online's windows are disjoint, so
    a round starts on empty resources). ``fixed_start`` restricts starts to ``tau + 1``."""
    slots = {j: range(max(tau + 1, earliest_start(instance, j)), 2 * tau + 1) for j in jobs}
    m = _core(instance, slots, batch=True)
    if fixed_start:
        for j, t in m.JT:
            if t != tau + 1:
                m.sg[j, t].fix(0)
    m.obj = pyo.Objective(expr=sum(m.x[j] for j in m.J), sense=pyo.maximize)
    return m


def _core(instance: Instance, slots: dict[int, range], batch: bool) -> pyo.ConcreteModel:
    """Variables and constraints (2a)-(2l) on the sparse sets; ``batch`` adds ``x_j`` as in (3b)."""
    m = pyo.ConcreteModel()
    J = [j for j in slots if len(slots[j])]
    S = range(instance.n_servers)
    m.J = pyo.Set(initialize=J)
    m.JT = pyo.Set(dimen=2, initialize=[(j, t) for j in J for t in slots[j]])
    ws = [(j, s) for j in J for s in S if instance.workers[s][instance.jobs[j].worker_type]]
    ps = [(j, s) for j in J for s in S if instance.ps[s][instance.jobs[j].ps_type]]
    ready = {(j, s): instance.jobs[j].arrival + instance.jobs[j].delay[s] for j in J for s in S}
    m.JS_w = pyo.Set(dimen=2, initialize=ws)
    m.JS_p = pyo.Set(dimen=2, initialize=ps)
    m.Y = pyo.Set(dimen=3, initialize=[(j, s, t) for j, s in ws for t in slots[j] if t >= ready[j, s]])
    m.Z = pyo.Set(dimen=3, initialize=[(j, s, t) for j, s in ps for t in slots[j] if t >= ready[j, s]])
    ub = {(j, s): min(instance.jobs[j].chunks, instance.workers[s][instance.jobs[j].worker_type])
          for j, s in ws}
    m.y = pyo.Var(m.Y, domain=pyo.NonNegativeIntegers, bounds=lambda _, j, s, t: (0, ub[j, s]))
    m.z = pyo.Var(m.Z, domain=pyo.Binary)
    m.nw = pyo.Var(m.JS_w, domain=pyo.NonNegativeIntegers, bounds=lambda _, j, s: (0, ub[j, s]))
    m.pi = pyo.Var(m.JS_p, domain=pyo.Binary)
    m.al = pyo.Var(m.JT, domain=pyo.Binary)
    m.sg = pyo.Var(m.JT, domain=pyo.Binary)
    m.ep = pyo.Var(m.JT, domain=pyo.Binary)
    m.xi = pyo.Var(m.J, domain=pyo.Binary)
    if batch:
        m.x = pyo.Var(m.J, domain=pyo.Binary)  # (3a)
    one = (lambda j: m.x[j]) if batch else (lambda j: 1)
    c = m.c = pyo.ConstraintList()
    for j in J:
        _job_constraints(m, c, instance, j, slots[j], ready, ub, one(j))
    _capacity_constraints(m, instance)
    return m


def _job_constraints(m, c, instance, j, slots, ready, ub, one) -> None:
    """One job: one contiguous run (2c,2d,2j,2k), worker/PS products, (2a), (2b), (2e), (2f), (2i)."""
    job = instance.jobs[j]
    first = slots[0]
    c.add(sum(m.sg[j, t] for t in slots) == one)
    c.add(sum(m.ep[j, t] for t in slots) == one)
    for t in slots:
        prev_al = m.al[j, t - 1] if t > first else 0
        prev_ep = m.ep[j, t - 1] if t > first else 0
        c.add(m.al[j, t] == prev_al + m.sg[j, t] - prev_ep)
        c.add(m.ep[j, t] <= m.al[j, t])
    servers_w = [s for (jj, s) in m.JS_w if jj == j]
    servers_p = [s for (jj, s) in m.JS_p if jj == j]
    for s in servers_w:
        U = ub[j, s]
        early = [t for t in slots if t < ready[j, s]]
        # (2i): no workers on s if the job starts before s is ready
        c.add(m.nw[j, s] <= U * (1 - sum(m.sg[j, t] for t in early)))
        for t in slots:
            if t >= ready[j, s]:
                c.add(m.y[j, s, t] <= m.nw[j, s])
                c.add(m.y[j, s, t] <= U * m.al[j, t])
                c.add(m.y[j, s, t] >= m.nw[j, s] - U * (1 - m.al[j, t]))
    for s in servers_p:
        early = [t for t in slots if t < ready[j, s]]
        c.add(m.pi[j, s] <= 1 - sum(m.sg[j, t] for t in early))  # (2i) for the PS
        for t in slots:
            if t >= ready[j, s]:
                c.add(m.z[j, s, t] <= m.pi[j, s])
                c.add(m.z[j, s, t] <= m.al[j, t])
                c.add(m.z[j, s, t] >= m.pi[j, s] + m.al[j, t] - 1)
    nw_total = sum(m.nw[j, s] for s in servers_w)
    c.add(nw_total >= one)                                            # at least one worker
    c.add(nw_total <= job.chunks * one)                               # (2a)
    c.add(sum(m.pi[j, s] for s in servers_p) == one)                  # (2b)
    c.add(m.xi[j] <= one)
    for s in servers_p:                                               # (2f): xi => co-located
        others = sum(m.nw[j, q] for q in servers_w if q != s)
        c.add(others <= job.chunks * (2 - m.pi[j, s] - m.xi[j]))
    if not servers_p:
        m.xi[j].fix(0)
    r0, r1 = job.required(0), job.required(1)
    total = sum(m.y[j, s, t] for s in servers_w for t in slots if t >= ready[j, s])
    c.add(total >= r0 * one - (r0 - r1) * m.xi[j])                  # (2e), exact integer form


def _capacity_constraints(m, instance: Instance) -> None:
    """(2g) and (2h), summing only over jobs of the type (digest §8 #8)."""
    w_cells: dict[tuple, list] = {}
    for j, s, t in m.Y:
        w_cells.setdefault((s, instance.jobs[j].worker_type, t), []).append(m.y[j, s, t])
    p_cells: dict[tuple, list] = {}
    for j, s, t in m.Z:
        p_cells.setdefault((s, instance.jobs[j].ps_type, t), []).append(m.z[j, s, t])
    m.cap_w = pyo.Constraint(
        [k for k, v in w_cells.items() if sum(x.ub for x in v) > instance.workers[k[0]][k[1]]],
        rule=lambda _, s, u, t: sum(w_cells[s, u, t]) <= instance.workers[s][u])
    m.cap_p = pyo.Constraint(
        [k for k, v in p_cells.items() if len(v) > instance.ps[k[0]][k[1]]],
        rule=lambda _, s, v, t: sum(p_cells[s, v, t]) <= instance.ps[s][v])


def extract_schedule(instance: Instance, model: pyo.ConcreteModel) -> Schedule:
    """The schedule of a solved :func:`build_exact` model (one run per job)."""
    return Schedule.single([_extract_run(instance, model, j) for j in range(len(instance.jobs))])


def extract_batch(instance: Instance, model: pyo.ConcreteModel) -> dict[int, Run]:
    """Accepted jobs of a solved :func:`build_batch` model and their runs."""
    return {j: _extract_run(instance, model, j) for j in model.J if model.x[j].value > 0.5}


def _extract_run(instance: Instance, m: pyo.ConcreteModel, j: int) -> Run:
    ts = [t for (jj, t) in m.JT if jj == j]
    start = next(t for t in ts if m.sg[j, t].value > 0.5)
    end = next(t for t in ts if m.ep[j, t].value > 0.5)
    ps = next(s for (jj, s) in m.JS_p if jj == j and m.pi[j, s].value > 0.5)
    workers = tuple((s, round(m.nw[j, s].value)) for (jj, s) in m.JS_w
                    if jj == j and round(m.nw[j, s].value) > 0)
    return Run(start, end, ps, workers)


# ---------------------------------------------------------------- configuration model of (2)
def placements(instance: Instance, j: int) -> list[Run]:
    """The non-dominated placements of job ``j``, each as a :class:`Run` at its earliest start.

    A placement is a PS server ``p`` with ``P_{p v_j} >= 1`` ((2b)) and a worker vector ``n_s <=
    min(D_j, W_{s u_j})`` with ``1 <= sum_s n_s <= D_j`` ((2a)); its run starts no earlier than
    ``a_j + max Delta_js`` over the servers it uses ((2i)) and lasts ``ceil(R^xi_j / N)`` slots with
    ``xi = 1`` iff every worker sits on ``p`` ((2e), (2f)); ``R^xi_j`` =
    :meth:`~optsched.problems.edge_cloud.Job.required`, the least worker-slot count ``verify``
    accepts, so the length is the least ``verify`` accepts (never stricter than the checker).
    Placement ``A`` dominates ``B`` when both put the PS on the same server, ``A`` uses at most
    ``B``'s workers on every server, is ready no later and is no longer: any schedule running ``B``
    from slot ``h`` stays feasible, and ends no later, with ``A`` from ``h``. Dominated placements
    are dropped (pairwise test, O(n^2 S) time, O(n S) memory). Exponential in the servers: callers
    bound the count first (:func:`placement_count`)."""
    job = instance.jobs[j]
    servers = [s for s in range(instance.n_servers) if instance.workers[s][job.worker_type]]
    caps = [min(job.chunks, instance.workers[s][job.worker_type]) for s in servers]
    vecs = np.array([v for v in itertools.product(*(range(c + 1) for c in caps))
                     if 1 <= sum(v) <= job.chunks], dtype=np.int64).reshape(-1, len(servers))
    rows, runs = [], []
    required = (job.required(0), job.required(1))
    for p in range(instance.n_servers):
        if not instance.ps[p][job.ps_type]:
            continue
        for vec in vecs:
            used = [s for s, n in zip(servers, vec) if n]
            xi = int(all(s == p for s in used))
            n = int(vec.sum())
            ready = job.arrival + max(job.delay[s] for s in used + [p])
            length = -(-required[xi] // n)
            rows.append((p, ready, length, *vec))
            runs.append(Run(ready, ready + length - 1, p,
                            tuple((s, int(k)) for s, k in zip(servers, vec) if k)))
    a = np.array(rows, dtype=np.int64)
    dominated = np.zeros(len(a), dtype=bool)
    for x in a:   # x dominates y: same PS, ready/length/every worker count <=, not identical
        dominated |= (a[:, 0] == x[0]) & (x[1:] <= a[:, 1:]).all(axis=1) & (x != a).any(axis=1)
    return [run for run, out in zip(runs, dominated) if not out]


def placement_count(instance: Instance, j: int, cap: float = math.inf) -> float:
    """An upper bound on ``len(placements(instance, j))`` before dominance, ``(#PS servers) x
    prod_s (min(D_j, W_{s u_j}) + 1)``, computed without enumerating; stops at ``cap``."""
    job = instance.jobs[j]
    total = float(sum(1 for row in instance.ps if row[job.ps_type]))
    for row in instance.workers:
        total *= min(job.chunks, row[job.worker_type]) + 1
        if total > cap:
            return total
    return total


def run_columns(instance: Instance, deadline: list[int]) -> list["Column"]:
    """Every column of :func:`build_pattern`: job ``j`` with a placement of :func:`placements`
    started at any slot ``h`` from its ready slot on such that the run ends by ``deadline[j]``
    (digest §3.3's valid per-job deadlines). Columns are grouped by job, in job order."""
    cols = []
    for j in range(len(instance.jobs)):
        for run in placements(instance, j):
            for h in range(run.start, deadline[j] - run.length + 2):
                cols.append(Column(j, Run(h, h + run.length - 1, run.ps, run.workers)))
    return cols


def build_pattern(instance: Instance, columns: list["Column"], *, relax: bool = False) -> pyo.ConcreteModel:
    """Configuration MILP of (2) over ``columns`` (from :func:`run_columns`, possibly reduced):

        min  sum_k (c_k - a_{j(k)}) x_k
        s.t. sum_{k of job j} x_k = 1                    for every job (one run, (2c)-(2d), (2j)-(2k))
             (2g) sum_k n_ks x_k <= W_su over the columns of type-u jobs running at t on s
             (2h) sum_k x_k <= P_sv over the columns of type-v jobs with the PS on s at t

    ``x`` binary (``relax``: in [0, 1], the LP relaxation). A capacity row is written only where
    the columns touching it could exceed it. The columns are kept on the model (``model.columns``)
    for :func:`set_start` and :func:`extract_pattern`. This is the packing program (4) of the batch
    problem with the whole horizon as the window and the flow time as the cost."""
    m = pyo.ConcreteModel()
    m.columns = list(columns)
    m.K = pyo.RangeSet(0, len(columns) - 1)
    m.x = pyo.Var(m.K, domain=pyo.UnitInterval if relax else pyo.Binary)
    by_job: dict[int, list[int]] = {}
    for k, col in enumerate(columns):
        by_job.setdefault(col.job, []).append(k)
    m.one = pyo.Constraint(sorted(by_job), rule=lambda _, j: sum(m.x[k] for k in by_job[j]) == 1)
    wc, pc = capacity_cells(instance, columns)
    m.cap_w = pyo.Constraint(
        [c for c, v in wc.items() if sum(n for _, n in v) > instance.workers[c[0]][c[1]]],
        rule=lambda _, s, u, t: sum(n * m.x[k] for k, n in wc[s, u, t]) <= instance.workers[s][u])
    m.cap_p = pyo.Constraint(
        [c for c, v in pc.items() if len(v) > instance.ps[c[0]][c[1]]],
        rule=lambda _, s, v, t: sum(m.x[k] for k in pc[s, v, t]) <= instance.ps[s][v])
    m.obj = pyo.Objective(expr=sum((col.run.end - instance.jobs[col.job].arrival) * m.x[k]
                                   for k, col in enumerate(columns)))
    return m


def set_start(model: pyo.ConcreteModel, instance: Instance, schedule: Schedule) -> int:
    """Set ``model.x`` (a :func:`build_pattern` model) from a verified non-preemptive ``schedule``:
    for each job, the shortest column with the run's start and PS server and at most its workers
    on every server (it exists when the run ends by the job's deadline and was not removed, and
    it ends no later: the start is at least as good as ``schedule``) gets 1, the job's other
    columns 0. Jobs without such a column are left unset (a partial MIP start for HiGHS to
    complete). Returns the number of jobs set."""
    best = start_columns(model.columns, schedule)
    for k, col in enumerate(model.columns):
        if col.job in best:
            model.x[k].value = int(best[col.job] == k)
    return len(best)


def start_columns(columns: list["Column"], schedule: Schedule) -> dict[int, int]:
    """``{job: index}`` of the column of ``columns`` that stands for ``schedule``'s run of the job
    (see :func:`set_start`); jobs without one are absent."""
    best: dict[int, int] = {}
    for k, col in enumerate(columns):
        run = schedule.runs[col.job][0]
        if col.run.start != run.start or col.run.ps != run.ps or col.run.length > run.length:
            continue
        have = dict(run.workers)
        if all(n <= have.get(s, 0) for s, n in col.run.workers):
            if col.job not in best or col.run.length < columns[best[col.job]].run.length:
                best[col.job] = k
    return best


def extract_pattern(instance: Instance, model: pyo.ConcreteModel) -> Schedule:
    """The schedule of a solved :func:`build_pattern` model (the column with ``x = 1`` per job)."""
    runs = {col.job: col.run for k, col in enumerate(model.columns) if model.x[k].value > 0.5}
    return Schedule.single([runs[j] for j in range(len(instance.jobs))])


# ---------------------------------------------------------------- packing ILP (4) and dual (5)
@dataclass(frozen=True)
class Column:
    """One in-window schedule ``l in L_j`` of job ``job`` (the data gamma, delta of (4))."""

    job: int
    run: Run


def enumerate_columns(instance: Instance, jobs: list[int], tau: int, *,
                      fixed_start: bool = False) -> list[Column]:
    """Every feasible schedule of each job inside ``tau+1..2 tau`` (digest §3.5): start ``h``,
    worker vector ``(n_s)``, PS server, with the minimal duration ``ceil(R^xi / N)``. Only for tiny
    windows: the count grows as ``prod_s (W_su + 1)``."""
    cols = []
    for j in jobs:
        job = instance.jobs[j]
        starts = [tau + 1] if fixed_start else range(tau + 1, 2 * tau + 1)
        for h in starts:
            ok = [s for s in range(instance.n_servers) if h >= job.arrival + job.delay[s]]
            wsrv = [s for s in ok if instance.workers[s][job.worker_type]]
            psrv = [s for s in ok if instance.ps[s][job.ps_type]]
            ranges = [range(min(job.chunks, instance.workers[s][job.worker_type]) + 1) for s in wsrv]
            for vec in itertools.product(*ranges):
                if not 1 <= sum(vec) <= job.chunks:
                    continue
                workers = tuple((s, n) for s, n in zip(wsrv, vec) if n)
                for p in psrv:
                    xi = int(all(s == p for s, _ in workers))
                    end = h + math.ceil(job.required(xi) / sum(vec)) - 1
                    if end <= 2 * tau:
                        cols.append(Column(j, Run(h, end, p, workers)))
    return cols


def capacity_cells(instance: Instance, columns: list[Column]):
    """(4a)/(4b) cells touched by the columns: {(s,u,t): [(col, gamma)]}, {(s,v,t): [col]}."""
    wc: dict[tuple, list] = {}
    pc: dict[tuple, list] = {}
    for k, col in enumerate(columns):
        job = instance.jobs[col.job]
        for t in range(col.run.start, col.run.end + 1):
            for s, n in col.run.workers:
                wc.setdefault((s, job.worker_type, t), []).append((k, n))
            pc.setdefault((col.run.ps, job.ps_type, t), []).append(k)
    return wc, pc


def build_packing(instance: Instance, columns: list[Column], *, relax: bool = False) -> pyo.ConcreteModel:
    """Packing program (4) over ``columns``: max ``sum chi`` s.t. (4a), (4b), (4c); ``relax`` gives
    its LP relaxation (chi >= 0, the primal of the dual (5))."""
    m = pyo.ConcreteModel()
    m.L = pyo.RangeSet(0, len(columns) - 1)
    m.chi = pyo.Var(m.L, domain=pyo.NonNegativeReals if relax else pyo.Binary)
    wc, pc = capacity_cells(instance, columns)
    m.a = pyo.Constraint(list(wc), rule=lambda _, s, u, t: sum(n * m.chi[k] for k, n in wc[s, u, t])
                         <= instance.workers[s][u])                            # (4a)
    m.b = pyo.Constraint(list(pc), rule=lambda _, s, v, t: sum(m.chi[k] for k in pc[s, v, t])
                         <= instance.ps[s][v])                                  # (4b)
    jobs = sorted({col.job for col in columns})
    m.c = pyo.Constraint(jobs, rule=lambda _, j: sum(m.chi[k] for k, col in enumerate(columns)
                                                     if col.job == j) <= 1)     # (4c)
    m.obj = pyo.Objective(expr=sum(m.chi[k] for k in m.L), sense=pyo.maximize)
    return m


def build_dual(instance: Instance, columns: list[Column], jobs: list[int]) -> pyo.ConcreteModel:
    """Dual (5) of the LP relaxation of (4): min ``sum eta + sum lambda W + sum mu P`` s.t. (5a)
    ``eta_j >= 1 - cost_l(lambda, mu)`` for every column, (5b) non-negativity. Prices exist on the
    cells the columns touch (other cells would take 0 at the optimum)."""
    wc, pc = capacity_cells(instance, columns)
    m = pyo.ConcreteModel()
    m.eta = pyo.Var(jobs, domain=pyo.NonNegativeReals)
    m.lam = pyo.Var(list(wc), domain=pyo.NonNegativeReals)
    m.mu = pyo.Var(list(pc), domain=pyo.NonNegativeReals)
    m.cols = pyo.ConstraintList()
    for col in columns:
        job = instance.jobs[col.job]
        cost = sum(n * m.lam[s, job.worker_type, t] for t in range(col.run.start, col.run.end + 1)
                   for s, n in col.run.workers)
        cost += sum(m.mu[col.run.ps, job.ps_type, t] for t in range(col.run.start, col.run.end + 1))
        m.cols.add(m.eta[col.job] >= 1 - cost)                                  # (5a)
    m.obj = pyo.Objective(expr=sum(m.eta[j] for j in jobs)
                          + sum(m.lam[s, u, t] * instance.workers[s][u] for s, u, t in wc)
                          + sum(m.mu[s, v, t] * instance.ps[s][v] for s, v, t in pc))
    return m


__all__ = ["Column", "build_batch", "build_dual", "build_exact", "build_packing", "build_pattern",
           "enumerate_columns", "extract_batch", "extract_pattern", "extract_schedule",
           "placement_count", "placements", "run_columns", "set_start", "start_columns"]

"""edge_cloud (problem (2) of She et al.) as a CP-SAT model — an exact engine independent of the
MILP, written from :mod:`optsched.problems.edge_cloud` (``verify``'s rules) and the digest.

Model (semantics of the problem module; slots are integers, so nothing is scaled)
--------------------------------------------------------------------------------
Per job ``j``:

* one interval ``[h_j, h_j + L_j)`` of slots (the run ``h_j .. c_j`` with ``c_j = h_j + L_j - 1``,
  (2c), (2d), (2j), (2k)); one PS server (``y_js``, exactly one, (2b)); integer worker counts
  ``n_js >= 0`` on the servers with type-``u_j`` worker slots, ``1 <= N_j = sum_s n_js <= D_j`` (2a);
* (2i): a server that holds a worker or the PS is usable from ``a_j + Delta_js`` on;
* (2e)/(2f): ``xi_j = 1`` forces every worker onto the PS's server; with ``N_j = N`` the run needs
  ``L_j >= ceil(R^1_j / N)`` and, when ``xi_j = 0``, ``L_j >= ceil(R^0_j / N)``, where
  ``R^xi_j`` = :meth:`~optsched.problems.edge_cloud.Job.required` is the least number of
  worker-slots that ``verify`` accepts (the very product it forms), so ``N L >= R`` is (2e)
  exactly. A co-located run with ``xi_j = 0`` is only asked for more work (``R^0 >= R^1``): never
  stricter than ``verify``;
* capacities (2g)/(2h): ``Cumulative`` per (server, worker type) with demands ``n_js`` and per
  (server, PS type) with demands ``y_js`` over the jobs' intervals;
* objective (2): ``min sum_j (c_j - a_j)``.

Horizon: a serial schedule (one job at a time, in arrival order, each in its fastest configuration
alone) gives an upper bound ``UB`` on the objective, and ``c_j - a_j <= UB - sum_{i != j} LB_i``
with ``LB_i`` the least flow time of job ``i`` alone; no optimum is cut off. The serial schedule is
the solver's hint. ``Instance.horizon`` (T of A_online's prices) is not a constraint of (2)'s
``verify`` and is not used.
"""

from __future__ import annotations

from typing import Any

from optsched.deadline import Deadline
from optsched.problems.edge_cloud import Instance, Run, Schedule
from optsched.result import Outcome
from optsched.solvers import cpsat as cc


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def exact_cp(instance: Instance, *, deadline: Deadline, seed: int = 0) -> Outcome:
    """Optimal schedule of problem (2) by CP-SAT (one worker, ``random_seed = seed``).

    Returns ``optimal`` only when CP-SAT proves it, ``time_limit`` with the incumbent when the
    deadline stops the search (with the serial schedule when it expires before the search starts),
    ``unknown`` when the model would exceed :data:`~optsched.solvers.cpsat.MAX_MODEL_SIZE`.
    """
    S = instance.n_servers
    return cc.solve_guarded(sum(S * S + job.chunks for job in instance.jobs),
                            "job x (server^2 + worker count) options",
                            _solve, instance, deadline, seed)


def _solve(instance: Instance, deadline: Deadline, seed: int, keep: dict) -> Outcome:
    cp = cc.cp_model()
    inst = instance
    S = inst.n_servers
    jobs = inst.jobs
    R1 = [job.required(1) for job in jobs]
    R0 = [job.required(0) for job in jobs]
    hint, ub = _serial_schedule(inst, R0, R1)
    keep["fallback"] = Schedule.single(hint)
    lb = [_least_flow(inst, j, R1[j]) for j in range(len(jobs))]
    c_max = [jobs[j].arrival + ub - (sum(lb) - lb[j]) for j in range(len(jobs))]

    model = cp.CpModel()
    h, L, interval, xi = {}, {}, {}, {}
    y: dict[int, dict[int, Any]] = {}     # y[j][s]: PS of job j on server s
    n: dict[int, dict[int, Any]] = {}     # n[j][s]: workers of job j on server s
    used: dict[int, dict[int, Any]] = {}  # used[j][s] <=> n[j][s] >= 1
    count: dict[int, dict[int, Any]] = {}  # count[j][N] <=> N_j == N
    for j, job in enumerate(jobs):
        cc.check(deadline)
        u, v = job.worker_type, job.ps_type
        ready = [job.arrival + job.delay[s] for s in range(S)]
        wcap = {s: min(inst.workers[s][u], job.chunks) for s in range(S) if inst.workers[s][u]}
        pserv = [s for s in range(S) if inst.ps[s][v]]
        first = job.arrival + min(job.delay)
        last = max(first, c_max[j])
        h[j] = model.new_int_var(first, last, f"h_{j}")
        L[j] = model.new_int_var(1, last - first + 1, f"L_{j}")
        end = model.new_int_var(first + 1, last + 1, f"end_{j}")
        interval[j] = model.new_interval_var(h[j], L[j], end, f"I_{j}")
        model.add(end <= c_max[j] + 1)
        # (2b) exactly one PS, (2i) on a server whose data are there
        y[j] = {s: model.new_bool_var(f"y_{j}_{s}") for s in pserv}
        for s, var in y[j].items():
            model.add(h[j] >= ready[s]).only_enforce_if(var)
        model.add_exactly_one(y[j].values())
        # (2a) 1 <= N_j <= D_j workers, (2i) on servers whose data are there
        n[j], used[j] = {}, {}
        for s, cap in wcap.items():
            n[j][s] = model.new_int_var(0, cap, f"n_{j}_{s}")
            z = used[j][s] = model.new_bool_var(f"z_{j}_{s}")
            model.add(n[j][s] >= 1).only_enforce_if(z)
            model.add(n[j][s] == 0).only_enforce_if(~z)
            model.add(h[j] >= ready[s]).only_enforce_if(z)
        total = sum(n[j].values())
        # (2f) xi_j = 1 only when every worker sits on the PS's server
        xi[j] = model.new_bool_var(f"xi_{j}")
        for s, z in used[j].items():
            if s in y[j]:
                model.add_bool_or([~z, y[j][s]]).only_enforce_if(xi[j])
            else:
                model.add_implication(xi[j], ~z)
        # (2e) N L >= R^xi, by the worker count N
        count[j] = {N: model.new_bool_var(f"N_{j}_{N}") for N in range(1, job.chunks + 1)}
        model.add_exactly_one(count[j].values())
        model.add(total == sum(N * b for N, b in count[j].items()))
        for N, b in count[j].items():
            model.add(L[j] >= _ceil_div(R1[j], N)).only_enforce_if(b)
            if R0[j] > R1[j]:
                model.add(L[j] >= _ceil_div(R0[j], N)).only_enforce_if([b, ~xi[j]])

    # (2g) / (2h) capacities per server and type (skipped where they cannot bind)
    for s in range(S):
        for u in range(inst.n_wtypes):
            js = [j for j, job in enumerate(jobs) if job.worker_type == u and s in n[j]]
            cap = inst.workers[s][u]
            if js and sum(min(cap, jobs[j].chunks) for j in js) > cap:
                model.add_cumulative([interval[j] for j in js], [n[j][s] for j in js], cap)
        for v in range(inst.n_ptypes):
            js = [j for j, job in enumerate(jobs) if job.ps_type == v and s in y[j]]
            if len(js) > inst.ps[s][v]:
                model.add_cumulative([interval[j] for j in js], [y[j][s] for j in js],
                                     inst.ps[s][v])

    model.minimize(sum(h[j] + L[j] - 1 - jobs[j].arrival for j in range(len(jobs))))

    for j, run in enumerate(hint):
        model.add_hint(h[j], run.start)
        model.add_hint(L[j], run.length)
        counts = dict(run.workers)
        for s in n[j]:
            model.add_hint(n[j][s], counts.get(s, 0))
            model.add_hint(used[j][s], s in counts)
        for s, var in y[j].items():
            model.add_hint(var, s == run.ps)
        model.add_hint(xi[j], run.colocated)
        for N, b in count[j].items():
            model.add_hint(b, N == run.n_workers)

    solver, status, has_solution, info = cc.run(model, deadline, seed)
    info["serial_schedule_bound"] = float(ub)

    def extract() -> Schedule:
        runs = []
        for j in range(len(jobs)):
            start = solver.value(h[j])
            ps = next(s for s, var in y[j].items() if solver.boolean_value(var))
            workers = tuple((s, solver.value(var)) for s, var in sorted(n[j].items())
                            if solver.value(var) >= 1)
            runs.append(Run(start, start + solver.value(L[j]) - 1, ps, workers))
        return Schedule.single(runs)

    return cc.finish(solver, status, has_solution, info, 1, extract)


def _configs(inst: Instance, j: int, R0: int, R1: int):
    """Single-server-worker configurations of job ``j`` alone: ``(ready, length, Run-maker)``."""
    job = inst.jobs[j]
    u, v = job.worker_type, job.ps_type
    for p in range(inst.n_servers):
        if not inst.ps[p][v]:
            continue
        for s in range(inst.n_servers):
            N = min(inst.workers[s][u], job.chunks)
            if N < 1:
                continue
            ready = job.arrival + max(job.delay[p], job.delay[s])
            length = _ceil_div(R1 if s == p else R0, N)
            yield ready, length, p, ((s, N),)


def _serial_schedule(inst: Instance, R0, R1) -> tuple[list[Run], int]:
    """One job at a time in arrival order, each in its earliest-ending single-server-worker
    configuration: feasible (no two runs overlap); returns the runs and their total flow time."""
    runs: dict[int, Run] = {}
    free = 1
    for j in sorted(range(len(inst.jobs)), key=lambda j: (inst.jobs[j].arrival, j)):
        options = [Run(max(free, ready), max(free, ready) + length - 1, p, workers)
                   for ready, length, p, workers in _configs(inst, j, R0[j], R1[j])]
        runs[j] = min(options, key=lambda run: run.end)  # the first of the earliest-ending
        free = runs[j].end + 1
    ordered = [runs[j] for j in range(len(inst.jobs))]
    return ordered, sum(run.end - job.arrival for run, job in zip(ordered, inst.jobs))


def _least_flow(inst: Instance, j: int, R1: int) -> int:
    """A lower bound on ``c_j - a_j``: earliest usable slot, all the job's type-``u_j`` workers that
    exist (at most ``D_j``) at the co-located rate."""
    job = inst.jobs[j]
    most = min(job.chunks, sum(row[job.worker_type] for row in inst.workers))
    return min(job.delay) + _ceil_div(R1, most) - 1


__all__ = ["exact_cp"]

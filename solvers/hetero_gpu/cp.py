"""hetero_gpu (Hare_Sched, Chen et al. HPDC'22) as a CP-SAT model — an exact engine independent of
the MILP, written from :mod:`optsched.problems.hetero_gpu` (``verify``'s rules) and the digest.

Model (semantics of the problem module, constraint numbers of Hare_Sched)
-------------------------------------------------------------------------
* every task ``i = (n, r, k)`` has one start ``S_i`` and, per GPU ``m``, an optional interval
  ``[S_i, S_i + T^c_{n,m})`` present iff the task runs on ``m``; exactly one is present (5);
* ``NoOverlap`` per GPU over those intervals: the compute part holds the GPU (8); the
  synchronisation ``T^s`` does not;
* finish ``F_i = S_i + sum_m x_{i,m} (T^c_{n,m} + T^s_{n,m})``; ``S_i >= a_n`` (4); round ``r+1``
  starts after every task of round ``r`` finished (7); ``C_n >= F_i`` of the last round (6);
* objective ``min sum_n w_n C_n``.

Integer scaling: every time (``a_n``, ``T^c``, ``T^s``) is an exact rational ``p/q`` (denominator
<= 10^6, :func:`optsched.solvers.cpsat.common_denominator`); the model counts in units of
``1/D`` (``D`` = their least common denominator) and the weights in units of ``1/D_w``. Integral
starts lose nothing: in a left-shifted (semi-active) schedule, which is optimal whenever any
schedule is, every start is an arrival, a barrier or the end of a compute, i.e. a sum of data and
so a multiple of ``1/D``. Data without such a form (or too large when scaled) give ``UNKNOWN`` with
``info["reason"]``. The model is never stricter than ``verify``: it asks the exact inequalities,
``verify`` accepts them within a slack.

Symmetry breaking (each keeps an optimal schedule of every instance):
* the ``K_n`` tasks of a round are identical: ``S_{n,r,0} <= S_{n,r,1} <= ...`` (relabel them by
  start); the barrier then needs only the first task of the next round;
* GPUs with identical ``T^c`` and ``T^s`` columns are interchangeable: in each such class, the
  task (in ``Instance.tasks`` order) with the smallest index on GPU ``m'`` comes after one on the
  previous GPU ``m`` of the class (relabel GPUs by the first task they run; this keeps starts, so
  it is compatible with the round ordering).

Horizon: a list schedule (earliest finish, jobs by WSPT and by arrival, the better one) gives an
upper bound ``UB`` on the objective; then ``C_n <= (UB - sum_{i != n} w_i LB_i) / w_n`` with
``LB_i = a_i + R_i min_m(T^c + T^s)``, which bounds every start without cutting any optimum. The list
schedule is also the solver's hint.
"""

from __future__ import annotations

from optsched.deadline import Deadline
from optsched.problems.hetero_gpu import Instance, Schedule, TaskRun
from optsched.result import Outcome
from optsched.solvers import cpsat as cc


def exact_cp(instance: Instance, *, deadline: Deadline, seed: int = 0) -> Outcome:
    """Optimal Hare_Sched schedule by CP-SAT (one worker, ``random_seed = seed``).

    Returns ``optimal`` only when CP-SAT proves it; ``time_limit`` with the incumbent when the
    deadline stops the search (with the list schedule when it expires before the search starts);
    ``unknown`` (``info["reason"]``) when the data have no exact integer scaling or the model would
    exceed :data:`~optsched.solvers.cpsat.MAX_MODEL_SIZE` optional intervals.
    ``lower_bound`` and ``model_objective`` are in the instance's units.
    """
    return cc.solve_guarded(len(instance.tasks) * instance.n_gpus, "task x GPU intervals",
                            _solve, instance, deadline, seed)


def _solve(instance: Instance, deadline: Deadline, seed: int, keep: dict) -> Outcome:
    cp = cc.cp_model()
    inst = instance
    jobs = inst.jobs
    M = inst.n_gpus
    try:
        D, tf = cc.common_denominator(
            [(j.arrival, f"jobs[{n}].arrival") for n, j in enumerate(jobs)]
            + [(j.train_time[m], f"jobs[{n}].train_time[{m}]") for n, j in enumerate(jobs)
               for m in range(M)]
            + [(j.sync_time[m], f"jobs[{n}].sync_time[{m}]") for n, j in enumerate(jobs)
               for m in range(M)])
        Dw, wf = cc.common_denominator([(j.weight, f"jobs[{n}].weight") for n, j in enumerate(jobs)])
    except cc.NotIntegral as exc:
        return cc.unknown(str(exc))
    A = [cc.scaled(tf[f"jobs[{n}].arrival"], D) for n in range(len(jobs))]
    TC = [[cc.scaled(tf[f"jobs[{n}].train_time[{m}]"], D) for m in range(M)] for n in range(len(jobs))]
    TS = [[cc.scaled(tf[f"jobs[{n}].sync_time[{m}]"], D) for m in range(M)] for n in range(len(jobs))]
    W = [cc.scaled(wf[f"jobs[{n}].weight"], Dw) for n in range(len(jobs))]

    hint, ub = _list_schedule(inst, A, TC, TS, W)
    keep["fallback"] = Schedule(tuple(TaskRun(n, r, k, m, s / D)
                                      for (n, r, k), (m, s) in sorted(hint.items())))
    try:
        cc.check_magnitude(ub, "objective upper bound")
    except cc.NotIntegral as exc:
        return cc.unknown(str(exc))
    minp = [min(TC[n][m] + TS[n][m] for m in range(M)) for n in range(len(jobs))]
    lbc = [A[n] + jobs[n].rounds * minp[n] for n in range(len(jobs))]
    total_lb = sum(W[n] * lbc[n] for n in range(len(jobs)))
    c_ub = [(ub - total_lb + W[n] * lbc[n]) // W[n] for n in range(len(jobs))]

    model = cp.CpModel()
    start, finish, on = {}, {}, {}
    per_gpu: list[list] = [[] for _ in range(M)]
    for (n, r, k) in inst.tasks:
        cc.check(deadline)
        R = jobs[n].rounds
        lo = A[n] + r * minp[n]
        hi = c_ub[n] - (R - r) * minp[n]
        s = model.new_int_var(lo, max(lo, hi), f"S_{n}_{r}_{k}")
        start[n, r, k] = s
        xs = []
        for m in range(M):
            x = model.new_bool_var(f"x_{n}_{r}_{k}_{m}")
            iv = model.new_optional_fixed_size_interval_var(s, TC[n][m], x, f"I_{n}_{r}_{k}_{m}")
            per_gpu[m].append(iv)
            on[n, r, k, m] = x
            xs.append(x)
        model.add_exactly_one(xs)  # (5)
        f = model.new_int_var(lo + minp[n], max(lo, hi) + max(TC[n][m] + TS[n][m] for m in range(M)),
                              f"F_{n}_{r}_{k}")
        model.add(f == s + sum((TC[n][m] + TS[n][m]) * on[n, r, k, m] for m in range(M)))
        finish[n, r, k] = f
    for m in range(M):
        model.add_no_overlap(per_gpu[m])  # (8)
    completion = []
    for n, job in enumerate(jobs):
        K, R = job.tasks_per_round, job.rounds
        for r in range(R):
            for k in range(K - 1):  # identical tasks of a round, ordered by start
                model.add(start[n, r, k] <= start[n, r, k + 1])
            if r:
                for k in range(K):  # (7) barrier; the first task of round r starts earliest
                    model.add(start[n, r, 0] >= finish[n, r - 1, k])
        c = model.new_int_var(lbc[n], max(lbc[n], c_ub[n]), f"C_{n}")
        model.add_max_equality(c, [finish[n, R - 1, k] for k in range(K)])  # (6)
        completion.append(c)
    _break_gpu_symmetry(model, inst, on, TC, TS, deadline)
    model.minimize(sum(W[n] * completion[n] for n in range(len(jobs))))

    for key, (m, s) in hint.items():
        model.add_hint(start[key], s)
        for mm in range(M):
            model.add_hint(on[(*key, mm)], mm == m)

    solver, status, has_solution, info = cc.run(model, deadline, seed)
    info.update({"time_denominator": D, "weight_denominator": Dw, "list_schedule_bound": ub / (D * Dw)})

    def extract() -> Schedule:
        runs = []
        for (n, r, k) in inst.tasks:
            m = next(mm for mm in range(M) if solver.boolean_value(on[n, r, k, mm]))
            runs.append(TaskRun(n, r, k, m, solver.value(start[n, r, k]) / D))
        return Schedule(tuple(runs))

    return cc.finish(solver, status, has_solution, info, D * Dw, extract)


def _break_gpu_symmetry(model, inst: Instance, on: dict, TC, TS, deadline: Deadline) -> None:
    """GPUs with identical columns: GPU ``m'`` may run task ``i`` only if the previous GPU ``m`` of
    its class runs some task before ``i`` (in ``Instance.tasks`` order)."""
    M = inst.n_gpus
    classes: dict[tuple, list[int]] = {}
    for m in range(M):
        col = tuple((TC[n][m], TS[n][m]) for n in range(len(inst.jobs)))
        classes.setdefault(col, []).append(m)
    tasks = inst.tasks
    for gpus in classes.values():
        for m, m2 in zip(gpus, gpus[1:]):
            used_before = None  # "some task before i runs on m"
            for i, key in enumerate(tasks):
                if i % 64 == 0:
                    cc.check(deadline)
                if used_before is None:
                    model.add(on[(*key, m2)] == 0)
                else:
                    model.add_implication(on[(*key, m2)], used_before)
                u = model.new_bool_var(f"u_{m}_{i}")
                parts = [on[(*key, m)]] + ([used_before] if used_before is not None else [])
                model.add_max_equality(u, parts)
                used_before = u


def _list_schedule(inst: Instance, A, TC, TS, W) -> tuple[dict, int]:
    """A feasible schedule in scaled units (earliest finish per task, jobs one after the other in
    WSPT or arrival order, the better one): ``({task: (gpu, start)}, sum W_n C_n)``."""
    jobs = inst.jobs
    M = inst.n_gpus
    minp = [min(TC[n][m] + TS[n][m] for m in range(M)) for n in range(len(jobs))]
    orders = [sorted(range(len(jobs)), key=lambda n: (A[n], n)),
              sorted(range(len(jobs)), key=lambda n: (jobs[n].rounds * minp[n] / W[n], A[n], n))]
    best: tuple[dict, int] | None = None
    for order in orders:
        free = [0] * M
        plan, total = {}, 0
        for n in order:
            ready = A[n]
            for r in range(jobs[n].rounds):
                barrier = ready
                for k in range(jobs[n].tasks_per_round):
                    m = min(range(M), key=lambda m: (max(free[m], ready) + TC[n][m] + TS[n][m], m))
                    s = max(free[m], ready)
                    free[m] = s + TC[n][m]
                    plan[n, r, k] = (m, s)
                    barrier = max(barrier, s + TC[n][m] + TS[n][m])
                ready = barrier
            total += W[n] * ready
        if best is None or total < best[1]:
            best = (plan, total)
    assert best is not None
    return _canonical(inst, best[0], TC, TS), best[1]


def _canonical(inst: Instance, plan: dict, TC, TS) -> dict:
    """``plan`` relabelled to satisfy the symmetry breaking (same objective): the tasks of a round
    in start order, the GPUs of a class in the order of the first task they run."""
    out = {}
    for n, job in enumerate(inst.jobs):
        for r in range(job.rounds):
            runs = sorted(plan[n, r, k] for k in range(job.tasks_per_round))
            runs.sort(key=lambda ms: ms[1])
            for k, ms in enumerate(runs):
                out[n, r, k] = ms
    M = inst.n_gpus
    classes: dict[tuple, list[int]] = {}
    for m in range(M):
        classes.setdefault(tuple((TC[n][m], TS[n][m]) for n in range(len(inst.jobs))), []).append(m)
    relabel = list(range(M))
    for gpus in classes.values():
        first = {m: next((i for i, key in enumerate(inst.tasks) if out[key][0] == m), len(inst.tasks))
                 for m in gpus}
        for new, old in zip(gpus, sorted(gpus, key=lambda m: (first[m], m))):
            relabel[old] = new
    return {key: (relabel[m], s) for key, (m, s) in out.items()}


__all__ = ["exact_cp"]

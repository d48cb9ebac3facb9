"""elastic_cluster (Zhou et al., TCC 2022, problem (2) / (15)) as a CP-SAT model — an exact engine
independent of the MILP, written from :mod:`optsched.problems.elastic_cluster` (``verify``'s rules)
and the digest.

Model (semantics of the problem module; slots are integers)
-----------------------------------------------------------
Per job ``j``: a start ``t_j >= a_j`` (2j) and a duration ``d_j`` (interval ``[t_j, t_j + d_j)``,
completion ``c_j = t_j + d_j``); one configuration ``(m, p, q, N)`` (worker type, PS type or -1 for
all-reduce, co-location, worker count ``1 <= N <= D_j``; exactly one, (2b), (2c), (2g)); integer
workers ``y_{jhm}`` and PSs ``s_{jhp}`` per server of the chosen types with ``sum_h y = N``;

* (2f): ``d_j >= duration(j, m, p, N, q)`` (:meth:`Instance.duration
  <optsched.problems.elastic_cluster.Instance.duration>`, the least ``d`` that ``verify``'s
  ``covers(d * (N rho), W_j)`` accepts, the same float product); ``q = 0`` with a co-located
  placement is allowed (a slower rate than the truth: never stricter);
* (2d): ``q = 1`` puts every worker and PS on one server;
* (2e), (2i) (PS): ``sum_h s_jh >= 1``; a server with ``s_jh >= 1`` PSs has
  ``s_jh >= ps_raw(m, p, N - y_jh)`` (:meth:`Instance.ps_raw`: the fewest PSs whose bandwidth
  covers the remote workers', ``verify``'s predicate and products); at most
  ``max(1, ps_raw(m, p, D_j))`` PSs per server (more never help: fewer keep (2i) and use less);
* (2h)/(15b): ``Cumulative`` per (server, resource) with demands
  ``sum_m e_m^r y_jhm + sum_p z_p^r s_jhp`` over the jobs' intervals;
* objective ``min sum_j w_j c_j``.

Integer scaling: demands ``e, z`` and capacities per resource, and the weights, are exact
rationals with a common denominator (:func:`optsched.solvers.cpsat.common_denominator`); a
capacity ``C`` becomes the largest scaled load ``L`` with ``L / D_r <= C`` in exact arithmetic
(``verify``'s check, issue 22), so the model accepts exactly the loads ``verify`` accepts. Data without an
exact small rational form give ``UNKNOWN`` with ``info["reason"]``.

Horizon: a serial schedule (each job alone, in arrival order, in its fastest one-worker
configuration that fits) bounds the objective by ``UB``; then
``c_j <= (UB - sum_{i != j} w_i LB_i) / w_j`` with ``LB_i = a_i + min duration``; the serial
schedule is the solver's hint.
"""

from __future__ import annotations

import math

from optsched import tolerance
from optsched.deadline import Deadline
from optsched.problems.elastic_cluster import Instance, Plan, Schedule
from optsched.result import Outcome
from optsched.solvers import cpsat as cc


def exact_cp(instance: Instance, *, deadline: Deadline, seed: int = 0) -> Outcome:
    """Minimum ``sum_j w_j c_j`` schedule by CP-SAT (one worker, ``random_seed = seed``).

    ``optimal`` only when CP-SAT proves it; ``time_limit`` with the incumbent when the deadline
    stops the search (with the serial schedule when it expires before the search starts);
    ``unknown`` (``info["reason"]``) when the data have no exact integer scaling or the model would
    exceed :data:`~optsched.solvers.cpsat.MAX_MODEL_SIZE`.
    """
    inst = instance
    M, H = len(inst.worker_types), inst.n_servers
    P = max(1, len(inst.ps_types))
    return cc.solve_guarded(sum(M * P * (2 * job.chunks + H * H) + H * (M + P) * (job.chunks + 1)
                            for job in inst.jobs), "configuration and placement variables",
                            _solve, instance, deadline, seed)


def _solve(instance: Instance, deadline: Deadline, seed: int, keep: dict) -> Outcome:
    cp = cc.cp_model()
    inst = instance
    J, H, R = len(inst.jobs), inst.n_servers, inst.n_res
    M = len(inst.worker_types)
    PS = inst.is_ps
    P = len(inst.ps_types)
    ptypes = list(range(P)) if PS else [-1]
    try:
        scale, demand_w, demand_p, capacity = _scaled_resources(inst)
        Dw, wf = cc.common_denominator([(j.weight, f"jobs[{n}].weight")
                                        for n, j in enumerate(inst.jobs)])
    except cc.NotIntegral as exc:
        return cc.unknown(str(exc))
    W = [cc.scaled(wf[f"jobs[{n}].weight"], Dw) for n in range(J)]

    configs = {j: [(m, p, q, n, inst.duration(j, m, p, n, q)) for m in range(M) for p in ptypes
                   for q in (1, 0) for n in range(1, inst.jobs[j].chunks + 1)]
               for j in range(J)}
    serial = _serial_schedule(inst, demand_w, demand_p, capacity)
    if serial is None:
        return cc.unknown("no serial one-worker schedule fits the servers (horizon unbounded)")
    plans, ub = serial
    keep["fallback"] = Schedule(tuple(plans))
    ub_w = sum(W[j] * plans[j].completion for j in range(J))
    lbc = [inst.jobs[j].arrival + min(c[4] for c in configs[j]) for j in range(J)]
    total_lb = sum(W[j] * lbc[j] for j in range(J))
    c_ub = [(ub_w - total_lb + W[j] * lbc[j]) // W[j] for j in range(J)]

    model = cp.CpModel()
    start, dur, pick, y, s, intervals = {}, {}, {}, {}, {}, {}
    for j, job in enumerate(inst.jobs):
        cc.check(deadline)
        a, hi = job.arrival, max(job.arrival + 1, c_ub[j])
        start[j] = model.new_int_var(a, hi - 1, f"t_{j}")
        dur[j] = model.new_int_var(1, hi - a, f"d_{j}")
        end = model.new_int_var(a + 1, hi, f"c_{j}")
        intervals[j] = model.new_interval_var(start[j], dur[j], end, f"I_{j}")
        pick[j] = [model.new_bool_var(f"k_{j}_{i}") for i in range(len(configs[j]))]
        model.add_exactly_one(pick[j])
        model.add(dur[j] >= sum(c[4] * b for c, b in zip(configs[j], pick[j])))  # (2f)
        typ = {(m, p): sum(b for c, b in zip(configs[j], pick[j]) if c[:2] == (m, p))
               for m in range(M) for p in ptypes}
        wtype = {m: sum(typ[m, p] for p in ptypes) for m in range(M)}
        q = sum(b for c, b in zip(configs[j], pick[j]) if c[2] == 1)
        n_total = sum(c[3] * b for c, b in zip(configs[j], pick[j]))
        for h in range(H):
            for m in range(M):
                y[j, h, m] = model.new_int_var(0, job.chunks, f"y_{j}_{h}_{m}")
                model.add(y[j, h, m] <= job.chunks * wtype[m])
        model.add(sum(y[j, h, m] for h in range(H) for m in range(M)) == n_total)
        yh = {h: sum(y[j, h, m] for m in range(M)) for h in range(H)}
        # (2d): q = 1 -> one host server for every worker and PS
        host = [model.new_bool_var(f"host_{j}_{h}") for h in range(H)]
        qv = model.new_bool_var(f"q_{j}")
        model.add(qv == q)
        model.add(sum(host) == 1).only_enforce_if(qv)
        for h in range(H):
            model.add(yh[h] == 0).only_enforce_if([qv, ~host[h]])
        if PS:
            smax = max(1, max(inst.ps_raw(m, p, job.chunks) for m in range(M) for p in ptypes))
            ptype = {p: sum(typ[m, p] for m in range(M)) for p in ptypes}
            for h in range(H):
                for p in ptypes:
                    s[j, h, p] = model.new_int_var(0, smax, f"s_{j}_{h}_{p}")
                    model.add(s[j, h, p] <= smax * ptype[p])
                sh = sum(s[j, h, p] for p in ptypes)
                model.add(sh == 0).only_enforce_if([qv, ~host[h]])
                has = model.new_bool_var(f"hasps_{j}_{h}")
                model.add(sh >= 1).only_enforce_if(has)
                model.add(sh == 0).only_enforce_if(~has)
                remote = model.new_int_var(0, job.chunks, f"remote_{j}_{h}")
                model.add(remote == n_total - yh[h])
                for m in range(M):  # (2i)
                    for p in ptypes:
                        table = [inst.ps_raw(m, p, r) for r in range(job.chunks + 1)]
                        need = model.new_int_var(0, max(table), f"need_{j}_{h}_{m}_{p}")
                        model.add_element(remote, table, need)
                        sel = model.new_bool_var(f"mp_{j}_{m}_{p}_{h}")
                        model.add(sel == typ[m, p])
                        model.add(sh >= need).only_enforce_if([sel, has])
            model.add(sum(s[j, h, p] for h in range(H) for p in ptypes) >= 1)  # (2e)

    # (2h) / (15b): capacity per server and resource
    for h in range(H):
        for r in range(R):
            demands, most = [], 0
            for j in range(J):
                expr = sum(demand_w[m][r] * y[j, h, m] for m in range(M))
                top = max(demand_w[m][r] for m in range(M)) * inst.jobs[j].chunks
                if PS:
                    expr += sum(demand_p[p][r] * s[j, h, p] for p in ptypes)
                    top += max(demand_p[p][r] for p in ptypes) * max(
                        1, max(inst.ps_raw(m, p, inst.jobs[j].chunks) for m in range(M)
                               for p in ptypes))
                dv = model.new_int_var(0, top, f"dem_{j}_{h}_{r}")
                model.add(dv == expr)
                demands.append(dv)
                most += top
            if most > capacity[h][r]:
                model.add_cumulative([intervals[j] for j in range(J)], demands, capacity[h][r])

    model.minimize(sum(W[j] * (start[j] + dur[j]) for j in range(J)))
    for j, plan in enumerate(plans):
        model.add_hint(start[j], plan.start)
        model.add_hint(dur[j], plan.duration)
        for i, c in enumerate(configs[j]):
            model.add_hint(pick[j][i], c[:4] == (plan.worker_type, plan.ps_type, plan.colocated,
                                                 sum(plan.workers)) and c[4] == plan.duration)
        for h in range(H):
            for m in range(M):
                model.add_hint(y[j, h, m], plan.workers[h] if m == plan.worker_type else 0)
            if PS:
                for p in ptypes:
                    model.add_hint(s[j, h, p], plan.ps[h] if p == plan.ps_type else 0)

    solver, status, has_solution, info = cc.run(model, deadline, seed)
    info.update({"resource_denominators": list(scale), "weight_denominator": Dw,
                 "serial_schedule_bound": ub})

    def extract() -> Schedule:
        out = []
        for j in range(J):
            i = next(i for i, b in enumerate(pick[j]) if solver.boolean_value(b))
            m, p, q, n, _ = configs[j][i]
            workers = tuple(int(solver.value(y[j, h, m])) for h in range(H))
            ps = tuple(int(solver.value(s[j, h, p])) for h in range(H)) if PS else (0,) * H
            out.append(Plan(int(solver.value(start[j])), int(solver.value(dur[j])), m, p, q,
                            workers, ps))
        return Schedule(tuple(out))

    return cc.finish(solver, status, has_solution, info, Dw, extract)


def _scaled_resources(inst: Instance):
    """Per resource ``r`` the common denominator ``D_r`` of every demand and capacity, the scaled
    integer demands of worker and PS types, and the scaled capacities: the largest integer ``L``
    with ``L / D_r <= C_hr`` in exact arithmetic (``verify``'s check)."""
    R = inst.n_res
    scale = []
    for r in range(R):
        den, _ = cc.common_denominator(
            [(t.demand[r], f"worker_types[{m}].demand[{r}]") for m, t in enumerate(inst.worker_types)]
            + [(t.demand[r], f"ps_types[{p}].demand[{r}]") for p, t in enumerate(inst.ps_types)]
            + [(row[r], f"capacity[{h}][{r}]") for h, row in enumerate(inst.capacity)])
        scale.append(den)

    def sc(x: float, r: int, what: str) -> int:
        f = cc.as_fraction(x, what)
        if f != tolerance.exact(x):  # verify sums the decimal written; the model must too
            raise cc.NotIntegral(f"{what} = {x!r} is not the rational {f}")
        return cc.scaled(f, scale[r])

    demand_w = [[sc(t.demand[r], r, "demand") for r in range(R)] for t in inst.worker_types]
    demand_p = [[sc(t.demand[r], r, "demand") for r in range(R)] for t in inst.ps_types]
    capacity = []
    for h, row in enumerate(inst.capacity):
        caps = []
        for r, c in enumerate(row):
            L = math.floor(tolerance.exact(c) * scale[r])  # verify: load <= C, exactly
            cc.check_magnitude(L, f"capacity[{h}][{r}]")
            caps.append(L)
        capacity.append(caps)
    return scale, demand_w, demand_p, capacity


def _serial_schedule(inst: Instance, demand_w, demand_p, capacity) -> tuple[list[Plan], float] | None:
    """Each job alone, in arrival order, with one worker (and, for PS, the fewest PSs on one
    server) in the fastest configuration that fits an empty server set: ``(plans, sum w c)``, or
    None when some job has no such configuration."""
    H, R = inst.n_servers, inst.n_res
    M = len(inst.worker_types)
    ptypes = list(range(len(inst.ps_types))) if inst.is_ps else [-1]
    plans: dict[int, Plan] = {}
    free = 1
    for j in sorted(range(len(inst.jobs)), key=lambda j: (inst.jobs[j].arrival, j)):
        best = None
        for m in range(M):
            for p in ptypes:
                for hw in range(H):
                    for hp in (range(H) if inst.is_ps else [hw]):
                        q = int(hw == hp)
                        n_ps = inst.ps_needed(m, p, 0 if q else 1) if inst.is_ps else 0
                        load = [[0] * R for _ in range(H)]
                        for r in range(R):
                            load[hw][r] += demand_w[m][r]
                            if inst.is_ps:
                                load[hp][r] += n_ps * demand_p[p][r]
                        if any(load[h][r] > capacity[h][r] for h in range(H) for r in range(R)):
                            continue
                        d = inst.duration(j, m, p, 1, q)
                        if best is None or d < best[0]:
                            workers = tuple(int(h == hw) for h in range(H))
                            ps = tuple(n_ps * int(h == hp) for h in range(H)) if inst.is_ps \
                                else (0,) * H
                            best = (d, m, p, q, workers, ps)
        if best is None:
            return None
        d, m, p, q, workers, ps = best
        t = max(free, inst.jobs[j].arrival)
        plans[j] = Plan(t, d, m, p, q, workers, ps)
        free = t + d
    ordered = [plans[j] for j in range(len(inst.jobs))]
    return ordered, float(sum(job.weight * pl.completion for job, pl in zip(inst.jobs, ordered)))


__all__ = ["exact_cp"]

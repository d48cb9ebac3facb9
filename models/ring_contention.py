"""Pyomo formulations of RAR-DDLS (Yu et al., MobiHoc'22; seeds/002), digest §3.

- :func:`build_exact` — "M1": RAR-DDLS (1)–(9) as an exact time-indexed MILP. Exact for the model of
  :mod:`optsched.problems.ring_contention` (integral slots, floor speeds, contention (6)–(7)) for
  makespans <= the horizon ``H`` it is built with. Because (3) freezes a job's placement, every job
  chooses one placement vector ``c`` in ``P_j`` (enumerated) and one start slot; contention enters
  through "level" binaries ``L[s,t,l]`` = "at least l split jobs on server s in slot t", and the
  speed of a split job is capped by ``phi_j(n_c, l)`` on every server it is split on, which is the
  max of (6) linearised. Progress per slot is only bounded above (``v <= phi``): under-reporting
  progress only keeps a job active longer, which never helps (digest §3.3), so the optimum equals
  the optimum of RAR-DDLS. The extracted (start, placement) pairs are re-simulated by ``verify``.
- :func:`build_budget` — "M3": the paper's per-GPU budget ILP (14)–(16) with per-job choices (the
  GPU set of a job stands for its enumerated schedules y^k, (12) dropped, digest F2–F4). With
  ``durations="lower"`` each job's busy time is its contention-free duration on the number of servers
  it spans, so min theta is a valid lower bound on the optimal makespan (digest §3.5); with
  ``durations="estimate"`` it is the paper's rho_hat / u. ``theta`` fixes the budget theta_u of (16)
  (then the model is the paper's feasibility problem, objective still min theta).
- :func:`placements`, :func:`min_durations`, :func:`simple_lower_bound` — shared helpers.
"""

from __future__ import annotations

from functools import lru_cache

import pyomo.environ as pyo

from optsched.problems.ring_contention import Instance, Schedule


def placements(inst: Instance, j: int) -> list[tuple[int, ...]]:
    """P_j: every vector c in Z_+^S with sum_s c_s = G_j and c_s <= O_s (constraints (1), (2), (5))."""
    return _placements(inst.servers, inst.jobs[j].gpus)


@lru_cache(maxsize=4096)
def _placements(servers: tuple[int, ...], need: int) -> list[tuple[int, ...]]:
    if not servers:
        return [()] if need == 0 else []
    rest_cap = sum(servers[1:])
    out: list[tuple[int, ...]] = []
    for k in range(max(0, need - rest_cap), min(servers[0], need) + 1):
        out.extend((k,) + tail for tail in _placements(servers[1:], need - k))
    return out


def n_servers_used(c: tuple[int, ...]) -> int:
    return sum(1 for y in c if y > 0)


def duration(inst: Instance, j: int, n: int, p: int = 1) -> int:
    """Slots job ``j`` needs at constant speed phi_j(n, p): ceil(F_j / phi_j(n, p)).

    Integer arithmetic, exactly as verify counts (remaining F_j drops by the integral phi each slot).
    """
    return -(-inst.jobs[j].iterations // inst.phi(j, n, p))


def min_durations(inst: Instance) -> list[int]:
    """rho^LB_j = min_n ceil(F_j / phi_j(n, 1)): no schedule runs job j faster (digest §3.5)."""
    return [min(duration(inst, j, n) for n in range(inst.min_servers(j), inst.max_servers(j) + 1))
            for j in range(len(inst.jobs))]


def simple_lower_bound(inst: Instance) -> dict[str, int]:
    """LB_len, LB_area and LB_conf of digest §3.5 (valid for every instance size)."""
    rho = min_durations(inst)
    n = inst.n_gpus
    area = -(-sum(job.gpus * r for job, r in zip(inst.jobs, rho)) // n)  # integers: exact ceil
    conflict = sum(r for job, r in zip(inst.jobs, rho) if 2 * job.gpus > n)
    return {"length": max(rho), "area": area, "conflict": conflict}


def build_exact(inst: Instance, horizon: int, lower_bound: int = 0) -> pyo.ConcreteModel:
    """M1 (digest §3.3): min C_max s.t. RAR-DDLS (1)–(9), time-indexed over slots 0..horizon-1.

    Variables: x[j,c,t] (start at t with placement c; only where the job still fits before
    ``horizon`` at its contention-free speed), q[j,c,t] (active with c), d[j,t] (finished by the end
    of t), v[j,t] (iterations in t), L[s,t,l] (contention levels), C (makespan).
    """
    m = pyo.ConcreteModel(name="rar_ddls_m1")
    H = range(horizon)
    jobs = range(len(inst.jobs))
    m.P = {j: placements(inst, j) for j in jobs}
    nsv = {(j, c): n_servers_used(m.P[j][c]) for j in jobs for c in range(len(m.P[j]))}
    JC = list(nsv)
    first = {jc: duration(inst, jc[0], nsv[jc]) for jc in JC}
    X = [(j, c, t) for (j, c) in JC for t in H if t + first[j, c] <= horizon]
    m.x = pyo.Var(X, domain=pyo.Binary)
    m.q = pyo.Var([(j, c, t) for (j, c) in JC for t in H], domain=pyo.Binary)
    m.d = pyo.Var(jobs, H, domain=pyo.Binary)
    m.v = pyo.Var(jobs, H, domain=pyo.NonNegativeReals)
    levels = _levels(inst, m.P, nsv)
    m.L = pyo.Var([(s, t, l) for s in levels for t in H for l in levels[s]], domain=pyo.Binary)
    m.C = pyo.Var(bounds=(lower_bound, horizon))
    starts: dict[tuple[int, int], list[int]] = {jc: [] for jc in JC}
    for (j, c, t) in X:
        starts[j, c].append(t)
    z = {jc: sum(m.x[jc + (t,)] for t in starts[jc]) for jc in JC}
    started = {(j, t): sum(m.x[j, c, k] for c in range(len(m.P[j])) for k in starts[j, c] if k <= t)
               for j in jobs for t in H}
    active = {(j, t): started[j, t] - (m.d[j, t - 1] if t else 0) for j in jobs for t in H}
    speed = {(j, c): inst.phi(j, nsv[j, c], 1) for (j, c) in JC}
    cl = m.cons = pyo.ConstraintList()
    for j in jobs:
        if not any(starts[j, c] for c in range(len(m.P[j]))):  # j cannot end by the horizon:
            cl.add(m.C >= horizon + 1)  # infeasible (C <= horizon), not a trivial False
            continue
        cl.add(sum(z[j, c] for c in range(len(m.P[j]))) == 1)  # one placement, one start
        cl.add(m.d[j, horizon - 1] == 1)
        for t in H:
            if t:
                cl.add(m.d[j, t] >= m.d[j, t - 1])
            cl.add(m.d[j, t] <= started[j, t])
            # (9): done only after F_j iterations
            cl.add(inst.jobs[j].iterations * m.d[j, t] <= sum(m.v[j, k] for k in range(t + 1)))
            cl.add(sum(m.q[j, c, t] for c in range(len(m.P[j]))) == active[j, t])  # (1), (3), (4)
            cl.add(m.C >= (t + 1) * active[j, t])
            cl.add(m.v[j, t] <= sum(speed[j, c] * m.q[j, c, t] for c in range(len(m.P[j]))))
            for c in range(len(m.P[j])):
                cl.add(m.q[j, c, t] <= z[j, c])
                cl.add(m.q[j, c, t] >= z[j, c] + active[j, t] - 1)
    _capacity_and_contention(inst, m, JC, nsv, levels, H)
    m.obj = pyo.Objective(expr=m.C, sense=pyo.minimize)
    return m


def _levels(inst: Instance, P: dict, nsv: dict) -> dict[int, list[int]]:
    """Contention levels 2..P_s per server: P_s = min(O_s, jobs that can be split on s)."""
    out = {}
    for s, cap in enumerate(inst.servers):
        splittable = sum(1 for j in P
                         if any(nsv[j, c] >= 2 and P[j][c][s] > 0 for c in range(len(P[j]))))
        top = min(cap, splittable)
        if top >= 2:
            out[s] = list(range(2, top + 1))
    return out


def _capacity_and_contention(inst, m, JC, nsv, levels, H) -> None:
    """(2) capacity, level activation for (6)–(7), and the speed caps of split jobs via (8)."""
    cl = m.cons
    for s, cap in enumerate(inst.servers):
        for t in H:
            cl.add(sum(m.P[j][c][s] * m.q[j, c, t] for (j, c) in JC if m.P[j][c][s] > 0) <= cap)  # (2)
            if s not in levels:
                continue
            lev = levels[s]
            n_split = sum(m.q[j, c, t] for (j, c) in JC if nsv[j, c] >= 2 and m.P[j][c][s] > 0)
            cl.add(n_split <= 1 + sum(m.L[s, t, l] for l in lev))
            for a, b in zip(lev, lev[1:]):
                cl.add(m.L[s, t, a] >= m.L[s, t, b])
    # v[j,t] <= sum_c phi_j(n_c, 1) q[j,c,t] already holds, so a cap for placement c must allow
    # v up to the job's fastest speed over ALL its placements when q[j,c,t] = 0. Big-M =
    # fastest_j - phi_j(n, l_max): with every level on, the right-hand side is then exactly
    # fastest_j (issue 13: big-M = phi_j(n, 1) of the split placement capped v at 2 phi_j(n, 1),
    # below phi_j(1, 1) of a one-server placement when b^i >> b^e, and cut off feasible schedules).
    fastest = {j: max(inst.phi(j, nsv[j, c], 1) for c in range(len(m.P[j]))) for j in m.P}
    for (j, c) in JC:
        n = nsv[j, c]
        if n < 2:
            continue
        top = inst.phi(j, n, 1)
        for s in range(inst.n_servers):
            if m.P[j][c][s] == 0 or s not in levels:
                continue
            drops = {l: inst.phi(j, n, l - 1) - inst.phi(j, n, l) for l in levels[s]}
            if not any(drops.values()):
                continue
            big_m = fastest[j] - inst.phi(j, n, levels[s][-1])  # = fastest - top + sum(drops)
            for t in H:  # v <= phi_j(n, #split jobs on s) while j is active with c
                cl.add(m.v[j, t] <= top - sum(d * m.L[s, t, l] for l, d in drops.items() if d)
                       + big_m * (1 - m.q[j, c, t]))


def extract_schedule(inst: Instance, m: pyo.ConcreteModel) -> Schedule:
    """(start, placement) of every job from x[j,c,t] > 0.5."""
    starts = [0] * len(inst.jobs)
    places: list[tuple[int, ...]] = [()] * len(inst.jobs)
    for (j, c, t), var in m.x.items():
        if var.value is not None and var.value > 0.5:
            starts[j], places[j] = t, m.P[j][c]
    return Schedule(tuple(starts), tuple(places))


def build_budget(inst: Instance, durations: str = "lower", theta: float | None = None,
                 rho_hat: list[float] | None = None, u: float = 1.0) -> pyo.ConcreteModel:
    """M3: the per-GPU execution-time budget ILP (14)–(16), minimising theta.

    X[j,g] = 1 if GPU g hosts a worker of j (sum_g X = G_j, the schedule's GPU set G_j(y^k));
    W[j,g] >= its busy time on g, only for g in G_j(y^k) (the restriction (15) omits, digest F3);
    (16) sum_j W[j,g] <= theta. ``durations="lower"``: busy time ceil(F_j / phi_j(n, 1)) with n the
    servers used (one-hot N[j,n]) — a valid lower bound on the makespan. ``"estimate"``: the paper's
    rho_hat_j / u (``rho_hat`` given). Ignores time, idling and gang synchronisation (the paper's
    relaxation). Symmetry of a server's GPUs is broken by ordering their loads.
    """
    m = pyo.ConcreteModel(name="rar_budget_m3")
    jobs = range(len(inst.jobs))
    gpus = [(s, i) for s, cap in enumerate(inst.servers) for i in range(cap)]
    m.X = pyo.Var([(j, s, i) for j in jobs for (s, i) in gpus], domain=pyo.Binary)
    m.W = pyo.Var([(j, s, i) for j in jobs for (s, i) in gpus], domain=pyo.NonNegativeReals)
    m.theta = pyo.Var(domain=pyo.NonNegativeReals)
    cl = m.cons = pyo.ConstraintList()
    for j in jobs:
        cl.add(sum(m.X[j, s, i] for (s, i) in gpus) == inst.jobs[j].gpus)  # G_j workers
    if durations == "estimate":
        if rho_hat is None:
            raise ValueError("build_budget: durations='estimate' needs rho_hat")
        for j in jobs:
            for (s, i) in gpus:
                cl.add(m.W[j, s, i] >= rho_hat[j] / u * m.X[j, s, i])  # (15)
    else:
        _spread_durations(inst, m, gpus)
    load = {g: sum(m.W[(j,) + g] for j in jobs) for g in gpus}
    for g in gpus:
        cl.add(load[g] <= m.theta)  # (16)
        if g[1] > 0:
            cl.add(load[g[0], g[1] - 1] >= load[g])  # symmetry within a server
    if theta is not None:
        cl.add(m.theta <= theta)
    m.obj = pyo.Objective(expr=m.theta, sense=pyo.minimize)
    return m


def _spread_durations(inst: Instance, m, gpus) -> None:
    """W[j,g] >= rho^LB_j(n) (X[j,g] + N[j,n] - 1), n = servers used by j (one-hot N)."""
    jobs = range(len(inst.jobs))
    m.Y = pyo.Var([(j, s) for j in jobs for s in range(inst.n_servers)], domain=pyo.Binary)
    ns = {j: range(inst.min_servers(j), inst.max_servers(j) + 1) for j in jobs}
    m.N = pyo.Var([(j, n) for j in jobs for n in ns[j]], domain=pyo.Binary)
    cl = m.cons
    for j in jobs:
        cl.add(sum(m.N[j, n] for n in ns[j]) == 1)
        cl.add(sum(n * m.N[j, n] for n in ns[j]) >= sum(m.Y[j, s] for s in range(inst.n_servers)))
        for (s, i) in gpus:
            cl.add(m.X[j, s, i] <= m.Y[j, s])
            for n in ns[j]:
                cl.add(m.W[j, s, i] >= duration(inst, j, n) * (m.X[j, s, i] + m.N[j, n] - 1))


__all__ = ["build_budget", "build_exact", "duration", "extract_schedule", "min_durations",
           "placements", "simple_lower_bound"]

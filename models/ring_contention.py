"""Pyomo formulations of RAR-DDLS (Yu et al., MobiHoc'22; paper 002), digest §3.

- :func:`build_exact` — "M1" of digest §3.3 (RAR-DDLS (1)–(9)) reformulated as a pulse (start,
  end) time-indexed MILP (issue 14). Exact for the model of :mod:`optsched.problems.ring_contention`
  (integral slots, floor speeds, contention (6)–(7)) for makespans <= the horizon ``H`` it is built
  with. Because (3) freezes a job's placement, every job chooses one placement vector ``c`` in
  ``P_j`` (enumerated) and one run [t, e); a one-server run has its exact duration (no contention),
  a split run's progress is capped per slot by ``phi_j(n_c, l)`` through "level" binaries
  ``L[s,t,l]`` = "at least l split jobs on server s in slot t" (the max of (6) linearised).
  Progress is only bounded above: under-reporting it only keeps a job active longer, which never
  helps (digest §3.3), so the optimum equals the optimum of RAR-DDLS. Tail-energy rows (LB_area of
  §3.5 per time suffix) and symmetry breaking (equal servers, identical jobs) tighten it;
  :func:`set_start` turns a verified schedule into a MIP start. The previous M1 (start binaries,
  activity/completion binaries, per-job progress with a big-M) proved <= 10 jobs of the small mix
  in 60 s; it was replaced, not kept (cross-checks: CP-SAT ``exact_cp`` and brute force).
- :func:`build_budget` — "M3": the paper's per-GPU budget ILP (14)–(16) with per-job choices (the
  GPU set of a job stands for its enumerated schedules y^k, (12) dropped, digest F2–F4). With
  ``durations="lower"`` each job's busy time is its contention-free duration on the number of servers
  it spans, so min theta is a valid lower bound on the optimal makespan (digest §3.5); with
  ``durations="estimate"`` it is the paper's rho_hat / u. ``theta`` fixes the budget theta_u of (16)
  (then the model is the paper's feasibility problem, objective still min theta).
- :func:`placements`, :func:`duration`, :func:`min_durations`, :func:`simple_lower_bound` — shared
  helpers, defined in :mod:`optsched.problems.ring_contention` (no Pyomo needed) and re-exported.
"""

from __future__ import annotations

import pyomo.environ as pyo

from optsched.problems.ring_contention import (Instance, Schedule, completion_times, duration,
                                               min_durations, n_servers_used, placements,
                                               simple_lower_bound)


def build_exact(inst: Instance, horizon: int, lower_bound: int = 0) -> pyo.ConcreteModel:
    """M1 (digest §3.3, RAR-DDLS (1)–(9)) as a pulse (start, end) time-indexed MILP, min C_max.

    x[j,c,t,e] = 1: job j runs with placement c over slots t..e-1 (e <= ``horizon``). By (3) a job
    keeps c, so its occupancy of slot u is the exact pulse sum of x over t <= u < e (no activity
    or completion binaries). A one-server placement never contends ((6): B_j = b^i), so its
    duration is fixed, e - t = ceil(F_j / phi_j(1, 1)) (:func:`duration`, verify's integer count).
    A split placement (n_c >= 2) takes e - t between its contention-free duration and its duration
    at the highest reachable contention level; its per-slot progress v[j,c,u] is capped by
    phi_j(n_c, 1) occ and, on every server s it is split on, by phi_j(n_c, l) when the level
    binary L[s,u,l] ("at least l split jobs active on s in u", (6)–(7)) is on; sum_u v >= F_j
    (9). v belongs to one placement and is 0 outside its pulse, so no big-M is needed (the issue-13
    big-M of the per-job v is gone). As in M1 the model may keep a job active longer than verify
    would (e later than its true end, or L on above the true count); both only slow jobs down, so
    verify's makespan of the extracted (start, placement) pairs is never above C, and every
    schedule verify accepts (e = its simulated end) is a solution: the optima coincide.

    Symmetry breaking (each keeps an optimum): servers of equal capacity are interchangeable in
    (1)–(9), so the job with the most placements takes only placements non-increasing over each
    group of equal servers; jobs with identical data start in index order. ``lower_bound`` is a
    valid bound on the optimum (C >= it).
    """
    m = pyo.ConcreteModel(name="rar_ddls_pulse")
    jobs = range(len(inst.jobs))
    m.P = {j: placements(inst, j) for j in jobs}
    _break_server_symmetry(inst, m.P)
    nsv = {(j, c): n_servers_used(m.P[j][c]) for j in jobs for c in range(len(m.P[j]))}
    levels = _levels(inst, m.P, nsv)
    m.X = _pulses(inst, m.P, nsv, levels, horizon)
    m.x = pyo.Var(list(m.X), domain=pyo.Binary)
    split = [(j, c) for (j, c) in nsv if nsv[j, c] >= 2]
    m.occ = pyo.Var([(j, c, u) for (j, c) in split for u in range(horizon)], bounds=(0, 1))
    m.v = pyo.Var([(j, c, u) for (j, c) in split for u in range(horizon)], domain=pyo.NonNegativeReals)
    m.L = pyo.Var([(s, u, l) for s in levels for u in range(horizon) for l in levels[s]],
                  domain=pyo.Binary)
    m.C = pyo.Var(bounds=(lower_bound, horizon))
    cl = m.cons = pyo.ConstraintList()
    occ = _occupancy(m, horizon)
    for j in jobs:
        mine = [k for k in m.X if k[0] == j]
        if not mine:  # j cannot end by the horizon: infeasible (C <= horizon), not a trivial False
            cl.add(m.C >= horizon + 1)
            continue
        cl.add(sum(m.x[k] for k in mine) == 1)  # one placement, one start, one end
        cl.add(m.C >= sum(k[3] * m.x[k] for k in mine))  # makespan
    for (j, c) in split:
        for u in range(horizon):
            cl.add(m.occ[j, c, u] == occ.get((j, c, u), 0))
    _capacity(inst, m, occ, horizon)
    _contention(inst, m, split, nsv, levels, horizon)
    _identical_jobs(inst, m)
    _tail_energy(inst, m, horizon, int(lower_bound))
    m.obj = pyo.Objective(expr=m.C, sense=pyo.minimize)
    return m


def _break_server_symmetry(inst: Instance, P: dict) -> None:
    """Keep, for the job with the most placements, only the placements non-increasing over every
    group of servers of equal capacity. Valid: permuting equal servers maps every schedule to one
    with the same completion times (verify sees a server only through O_s), and some permutation
    sorts that job's vector within each group."""
    groups = _equal_server_groups(inst)
    if not groups or not P:
        return
    j0 = max(P, key=lambda j: (len(P[j]), -j))
    P[j0] = [c for c in P[j0] if all(c[a] >= c[b] for g in groups for a, b in zip(g, g[1:]))]


def _equal_server_groups(inst: Instance) -> list[list[int]]:
    """Groups (>= 2 servers, ascending indices) of servers with the same capacity O_s."""
    by_cap: dict[int, list[int]] = {}
    for s, cap in enumerate(inst.servers):
        by_cap.setdefault(cap, []).append(s)
    return [g for g in by_cap.values() if len(g) >= 2]


def _pulses(inst: Instance, P: dict, nsv: dict, levels: dict, horizon: int) -> dict:
    """Every (j, c, t, e) with e <= ``horizon``: e - t = duration(j, 1) on one server; on n >= 2
    servers from duration(j, n, 1) to duration(j, n, p_max), p_max the top contention level of
    the servers c uses (phi does not increase with p, so no run is shorter or longer)."""
    out: dict[tuple[int, int, int, int], None] = {}
    for (j, c), n in nsv.items():
        spans: range | list[int]
        if n == 1:
            spans = [duration(inst, j, 1)]
        else:
            top = max((levels[s][-1] for s, y in enumerate(P[j][c]) if y > 0 and s in levels),
                      default=1)
            spans = range(duration(inst, j, n, 1), duration(inst, j, n, top) + 1)
        for d in spans:
            for t in range(horizon - d + 1):
                out[j, c, t, t + d] = None
    return out


def _occupancy(m: pyo.ConcreteModel, horizon: int) -> dict:
    """occ[j,c,u] = sum of x[j,c,t,e] over the pulses with t <= u < e (linear expressions)."""
    terms: dict[tuple[int, int, int], list] = {}
    for (j, c, t, e) in m.X:
        for u in range(t, e):
            terms.setdefault((j, c, u), []).append(m.x[j, c, t, e])
    return {k: sum(v) for k, v in terms.items()}


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


def _capacity(inst: Instance, m: pyo.ConcreteModel, occ: dict, horizon: int) -> None:
    """(2): sum_j y_js occ[j,c,u] <= O_s, written only where the largest possible load exceeds O_s."""
    for s, cap in enumerate(inst.servers):
        users = [(j, c) for j in m.P for c in range(len(m.P[j])) if m.P[j][c][s] > 0]
        for u in range(horizon):
            here = [(j, c) for (j, c) in users if (j, c, u) in occ]
            most = sum(max(m.P[j][c][s] for (i, c) in here if i == j) for j in {j for j, _ in here})
            if most <= cap:
                continue
            m.cons.add(sum(m.P[j][c][s] * (m.occ[j, c, u] if (j, c, u) in m.occ else occ[j, c, u])
                           for (j, c) in here) <= cap)


def _contention(inst: Instance, m: pyo.ConcreteModel, split: list, nsv: dict, levels: dict,
                horizon: int) -> None:
    """(6)–(9) for split placements: levels L[s,u,l] forced on up to the split jobs active on s;
    v[j,c,u] <= phi_j(n, 1) occ[j,c,u] and <= phi_j(n, l) when L[s,u,l] is on, for every server
    s that c splits j on (so v <= phi_j(n, p_j[u]), the max of (6) read as a min over s);
    sum_u v[j,c,u] >= F_j z[j,c] with z[j,c] = 1 when j takes c."""
    cl = m.cons
    for s, lev in levels.items():
        mine = [(j, c) for (j, c) in split if m.P[j][c][s] > 0]
        for u in range(horizon):
            cl.add(sum(m.occ[j, c, u] for (j, c) in mine) <= 1 + sum(m.L[s, u, l] for l in lev))
            for a, b in zip(lev, lev[1:]):
                cl.add(m.L[s, u, a] >= m.L[s, u, b])
    z: dict[tuple[int, int], list] = {}
    for k in m.X:
        z.setdefault(k[:2], []).append(m.x[k])
    for (j, c) in split:
        n = nsv[j, c]
        top = inst.phi(j, n, 1)
        for u in range(horizon):
            cl.add(m.v[j, c, u] <= top * m.occ[j, c, u])
            for s, y in enumerate(m.P[j][c]):
                if y == 0 or s not in levels:
                    continue
                drops = {l: inst.phi(j, n, l - 1) - inst.phi(j, n, l) for l in levels[s]}
                if any(drops.values()):
                    cl.add(m.v[j, c, u] <= top - sum(d * m.L[s, u, l] for l, d in drops.items() if d))
        if (j, c) in z:
            cl.add(sum(m.v[j, c, u] for u in range(horizon)) >= inst.jobs[j].iterations * sum(z[j, c]))
        else:
            for u in range(horizon):
                m.v[j, c, u].fix(0)


def _tail_energy(inst: Instance, m: pyo.ConcreteModel, horizon: int, lower_bound: int) -> None:
    """Valid inequalities (the area bound LB_area of digest §3.5, per time suffix): for a slot
    u <= C, the GPU-slots that run in slots >= u fit in [u, C), so N (C - u) >= sum G_j
    (e - max(t, u)) x[j,c,t,e]. Written for u = 0 .. ``lower_bound`` (C >= lower_bound >= u; for
    u > C the right-hand side is 0 but the left negative); the time-indexed LP alone lets
    fractional pulses spread past C."""
    n = inst.n_gpus
    for u in range(min(max(lower_bound, 0), horizon - 1) + 1):
        work = [inst.jobs[j].gpus * (e - max(t, u)) * m.x[j, c, t, e]
                for (j, c, t, e) in m.X if e > u]
        if work:
            m.cons.add(n * (m.C - u) >= sum(work))


def _identical_jobs(inst: Instance, m: pyo.ConcreteModel) -> None:
    """Jobs with identical data start in index order (swapping two of them maps schedules to
    schedules with the same makespan)."""
    start: dict[int, list] = {j: [] for j in m.P}
    for (j, c, t, e) in m.X:
        start[j].append(t * m.x[j, c, t, e])
    for j, k in _identical_pairs(inst):
        if start[j] and start[k]:
            m.cons.add(sum(start[j]) <= sum(start[k]))


def _identical_pairs(inst: Instance) -> list[tuple[int, int]]:
    """(j, k): k the next job after j with the same data."""
    out = []
    for j, job in enumerate(inst.jobs):
        k = next((k for k in range(j + 1, len(inst.jobs)) if inst.jobs[k] == job), None)
        if k is not None:
            out.append((j, k))
    return out


def set_start(m: pyo.ConcreteModel, inst: Instance, schedule: Schedule) -> None:
    """Set x, occ, L and C from ``schedule`` (a schedule verify accepts, ending by the model's
    horizon) as a MIP start (``solve_model(..., warm_start=True)``); v is left to HiGHS.

    The schedule is first mapped to the model's symmetry breaking: identical jobs take its
    (start, placement) pairs in start order, and equal servers are permuted so that the job with
    restricted placements gets a non-increasing vector. Raises ValueError when the mapped schedule
    is not a solution of the model (e.g. it ends after the horizon).
    """
    schedule = _canonical(inst, m, schedule)
    finish = completion_times(inst, schedule)
    for var in m.x.values():
        var.set_value(0)
    for j, (a, c, e) in enumerate(zip(schedule.starts, schedule.placements, finish)):
        key = (j, m.P[j].index(c) if c in m.P[j] else -1, a, e)
        if key not in m.X:
            raise ValueError(f"set_start: job {j} (start {a}, placement {c}, end {e}) is not in the model")
        m.x[key].set_value(1)
    for (j, c, u), var in m.occ.items():
        var.set_value(1 if (m.P[j][c] == schedule.placements[j] and schedule.starts[j] <= u < finish[j]) else 0)
    for (s, u, l), var in m.L.items():
        count = sum(1 for j, c in enumerate(schedule.placements)
                    if n_servers_used(c) >= 2 and c[s] > 0 and schedule.starts[j] <= u < finish[j])
        var.set_value(1 if count >= l else 0)
    m.C.set_value(max(max(finish), m.C.lb or 0))


def _canonical(inst: Instance, m: pyo.ConcreteModel, schedule: Schedule) -> Schedule:
    """``schedule`` with identical jobs in start order and equal servers permuted for the job whose
    placements :func:`_break_server_symmetry` restricted (same completion times)."""
    starts, places = list(schedule.starts), list(schedule.placements)
    classes: dict = {}
    for j, job in enumerate(inst.jobs):
        classes.setdefault(job, []).append(j)
    for members in classes.values():
        pairs = sorted((starts[j], places[j]) for j in members)
        for j, (a, c) in zip(members, pairs):
            starts[j], places[j] = a, c
    restricted = [j for j in m.P if places[j] not in m.P[j]]
    if restricted:
        c = places[restricted[0]]
        perm = list(range(inst.n_servers))  # perm[new server] = old server
        for g in _equal_server_groups(inst):
            for new, old in zip(g, sorted(g, key=lambda s: (-c[s], s))):
                perm[new] = old
        places = [tuple(p[perm[s]] for s in range(inst.n_servers)) for p in places]
    return Schedule(tuple(starts), tuple(places))


def extract_schedule(inst: Instance, m: pyo.ConcreteModel) -> Schedule:
    """(start, placement) of every job from x[j,c,t,e] > 0.5."""
    starts = [0] * len(inst.jobs)
    places: list[tuple[int, ...]] = [()] * len(inst.jobs)
    for (j, c, t, e), var in m.x.items():
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
           "placements", "set_start", "simple_lower_bound"]

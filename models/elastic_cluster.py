"""Pyomo formulations of Zhou et al. (paper 000), digest Sec. 3.

- :func:`build_exact` — the model of the ``exact`` method (issue 14): (2) / (15) as a
  time-indexed MILP over each job's non-dominated placements (:func:`job_patterns`: a
  configuration plus its worker and PS vectors), X_{jlt} = job j runs placement l from slot t,
  capacity rows per (server, resource, slot) with no big-M, per-job start windows from a feasible
  schedule's cost (:func:`latest_completions`), symmetry breaking between identical servers
  (:func:`exact_patterns`) and a MIP start from a verified schedule (:func:`set_start`). Exact for
  the dominance facts below (each placement of verify is dominated by a pattern: tested against
  the brute-force oracle).
- :func:`build_offline` — the previous exact model, kept as the independent cross-check of
  :func:`build_exact` in the tests and as the body of :func:`build_batch`: the offline problem
  (2) (PS) / (15) (all-reduce) as an exact MILP by
  enumerating configurations kappa = (m, p, q, N, d) so that rho, d and the products in (2f), (2h)
  and the objective become parameters (digest Sec. 3.2, constraints M1-M12 with M9). Time-indexed,
  integral slots 1..T_max; exact for every optimal schedule when T_max = :func:`safe_horizon`
  (of the cost of any feasible schedule, which the solvers supply).
  Dominance facts used, each checked against :func:`~optsched.problems.elastic_cluster.verify`'s
  rules (one line each): (1) for fixed (m, p, q, N) the least duration verify's (2f) accepts
  (``Instance.duration`` = ceil(W rho^-1 / N) in exact arithmetic) and exactly N workers
  dominate: a longer run occupies a superset of slots and completes later, and dropping workers
  (remote ones first) keeps (2d), (2g), (2i) and lowers every load; (2) q = 1 => co-located
  suffices: verify accepts q = 0 on a co-located placement and rho(q=1) >= rho(q=0); (3) one PS
  server dominates (M9): verify checks (2i) per PS server, so keeping only one PS server's PSs
  keeps (2e), (2i) on it and lowers every load; its PS count need not be minimal in the model,
  M8 admits exactly the counts verify's (2i) accepts.
  Exact arithmetic (issues 13, 22, :mod:`optsched.tolerance`): capacities are verify's exact C
  (``Instance.cap_limit`` = floor(C) where demands are integers, so HiGHS's feasibility tolerance
  cannot admit an integral load above C) and M8 is exact for verify's (2i) (see :func:`ps_cut`), so
  the model is neither stricter nor looser than the checker.
- :func:`build_batch` — the per-round problem (7) / (16): max sum w_j over jobs finished by tau.
- :func:`build_busy_lp` — the mean-busy-time LP of ``lower_bound`` (ours; Goemans' inequalities
  are added as cuts by the solver).
- :func:`enumerate_columns`, :func:`build_packing`, :func:`build_packing_dual` — the
  compact-exponential packing ILP (8) / (17), its LP relaxation, and the dual (9) / (18), with the
  single-job schedules Gamma_j enumerated explicitly (tiny instances; digest Sec. 3.4).

This module builds models and reads schedules from them; it never solves or simulates (the
heuristics that give :func:`safe_horizon` its cost, the solves and the column-generation loop live
in ``optsched.solvers.elastic_cluster``). :func:`pattern_bound` and :func:`exact_size` size
:func:`build_exact`'s model before it is built, so a method can tell whether it fits its time.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyomo.environ as pyo

from optsched import tolerance
from optsched.deadline import NEVER, Deadline
from optsched.problems.elastic_cluster import Instance, Plan, Schedule, memo


# -------------------------------------------------------------------------------------- horizon


def safe_horizon(inst: Instance, upper_bound: float) -> int:
    """T_max such that every optimal schedule completes all jobs by T_max + 1: the largest of
    :func:`latest_completions` minus one."""
    return max(latest_completions(inst, upper_bound), default=1) - 1


def latest_completions(inst: Instance, upper_bound: float, others: list | None = None) -> list[int]:
    """Per job j the latest completion slot c_j of any schedule costing at most ``upper_bound``.

    With S = ``upper_bound`` the cost of a feasible schedule (the solvers pass their best
    heuristic's) and L_j <= sum_{i != j} w_i c_i for every schedule (``others[j]``; default
    sum_{i != j} w_i l_i with l_i = a_i + d_i^min), such a schedule has w_j c_j <= S - L_j.
    d_i^min is the shortest duration of a configuration that passes the model's own pruning
    (:func:`model_configs`), a relaxation of "fastest schedule alone" that does not depend on the
    placement heuristics; the bound is rounded up with ``at_most`` so float noise never cuts off a
    completion slot."""
    low = min_completions(inst)
    total = sum(job.weight * l for job, l in zip(inst.jobs, low))
    out = []
    for j, (job, l) in enumerate(zip(inst.jobs, low)):
        rest = total - job.weight * l if others is None else others[j]
        bound = max(l, (upper_bound - rest) / job.weight)  # the latest c_j
        c = math.floor(bound)
        if tolerance.at_most(c + 1, bound):
            c += 1
        out.append(c)
    return out


def min_completions(inst: Instance) -> list[int]:
    """l_j = a_j + d_j^min over :func:`model_configs` (no schedule completes j earlier)."""
    return [job.arrival + min(c[4] for c in model_configs(inst, j, math.inf))
            for j, job in enumerate(inst.jobs)]


# ------------------------------------------------------------------------------- configurations


def _fits(inst: Instance, m: int, p: int, q: int, n: int) -> bool:
    """Pruning of digest Sec. 3.2 with verify's capacity rule (load <= ``cap_limit``): q = 1
    needs one server that holds N workers (+1 PS); q = 0 needs the whole
    cluster to hold them (each server's load <= its cap_limit, so their sum <= the sum of the
    cap_limits; compared with ``at_most`` again, which only loosens this necessary condition).
    Memoised per instance."""
    table = memo(inst, "model_fits")
    key = (m, p, q, n)
    if key not in table:
        table[key] = _fits_now(inst, m, p, q, n)
    return table[key]


def _fits_now(inst: Instance, m: int, p: int, q: int, n: int) -> bool:
    need = n * inst.e[m] + (inst.z[p] if inst.is_ps else 0)
    if q == 1:
        return bool((need[None, :] <= inst.cap_limit).all(axis=1).any())
    total = inst.cap_limit.sum(axis=0)
    return all(tolerance.at_most(float(x), float(c)) for x, c in zip(need, total))


def model_configs(inst: Instance, j: int, max_len: float) -> list:
    """Configurations (m, p, q, N, d) of job j that fit (pruned) with d <= max_len."""
    return [c for c in inst.configurations(j) if c[4] <= max_len and _fits(inst, *c[:4])]


# ----------------------------------------------------------------------------------- the MILPs


def build_offline(inst: Instance, horizon: int) -> pyo.ConcreteModel:
    """Exact MILP of (2) / (15) on slots 1..``horizon`` (:func:`safe_horizon`): min sum_j w_j
    sum_{kappa,t} (t + d_kappa) X_{j kappa t}."""
    jobs = list(range(len(inst.jobs)))
    starts = {j: (inst.jobs[j].arrival, horizon) for j in jobs}
    model = _build(inst, jobs, starts, horizon, batch=False)
    model.obj = pyo.Objective(expr=sum(
        inst.jobs[j].weight * (t + model.conf[j, k][4]) * model.X[j, k, t]
        for j, k, t in model.JKT), sense=pyo.minimize)
    return model


def build_batch(inst: Instance, jobs, tau: int) -> pyo.ConcreteModel:
    """Problem (7) / (16) for batch ``jobs`` and deadline tau: relative slots 1..tau, every job
    available at slot 1, t + d <= tau (7b), scheduling optional (7a); max sum w_j."""
    jobs = list(jobs)
    starts = {j: (1, tau - 1) for j in jobs}
    model = _build(inst, jobs, starts, tau - 1, batch=True)
    model.obj = pyo.Objective(expr=sum(inst.jobs[j].weight * model.X[j, k, t]
                                       for j, k, t in model.JKT), sense=pyo.maximize)
    return model


def _build(inst: Instance, jobs: list, starts: dict, last_slot: int, batch: bool):
    """Variables and constraints M1-M12 (+ M9) of digest Sec. 3.2 on slots 1..last_slot."""
    m = pyo.ConcreteModel(name="elastic_cluster")
    H, ps = range(inst.n_servers), inst.is_ps
    conf = {(j, k): c for j in jobs
            for k, c in enumerate(model_configs(inst, j, last_slot - starts[j][0] + 1))}
    m.conf = conf
    jkt = [(j, k, t) for (j, k), c in conf.items() for t in range(starts[j][0], last_slot - c[4] + 2)]
    m.JKT = pyo.Set(initialize=jkt, dimen=3, ordered=True)
    m.X = pyo.Var(m.JKT, domain=pyo.Binary)
    by_jk: dict = {}
    for j, k, t in jkt:
        by_jk.setdefault((j, k), []).append(t)
    A = {jk: sum(m.X[jk[0], jk[1], t] for t in ts) for jk, ts in by_jk.items()}
    chosen = {j: sum(a for (jj, _), a in A.items() if jj == j) for j in jobs}
    q1 = {j: sum(a for (jj, k), a in A.items() if jj == j and conf[jj, k][2] == 1) for j in jobs}
    q0 = {j: chosen[j] - q1[j] for j in jobs}
    M = range(len(inst.worker_types))
    m.y = pyo.Var([(j, h, w) for j in jobs for h in H for w in M], domain=pyo.NonNegativeIntegers,
                  bounds=lambda _, j, h, w: (0, inst.jobs[j].chunks))
    m.sigma = pyo.Var([(j, h) for j in jobs for h in H], domain=pyo.Binary)
    m.c = pyo.ConstraintList()
    for j in jobs:
        d_j = inst.jobs[j].chunks
        _add(m, chosen[j] <= 1 if batch else chosen[j] == 1)  # M1 / (7a)
        for w in M:  # M2
            _add(m, sum(m.y[j, h, w] for h in H) == sum(
                c[3] * A[j, k] for (jj, k), c in conf.items() if jj == j and c[0] == w
                and (j, k) in A))
        _add(m, sum(m.sigma[j, h] for h in H) == q1[j])  # M5
        for h in H:  # M6 (workers)
            _add(m, sum(m.y[j, h, w] for w in M) <= d_j * (m.sigma[j, h] + q0[j]))
    if ps:
        _ps_constraints(m, inst, jobs, conf, A, chosen, q0)
    _capacity(m, inst, jobs, conf, by_jk, last_slot)
    return m


def ps_cut(inst: Instance, w: int, p: int, n_max: int) -> float:
    """The constant c of M8 for worker type w and PS type p: for all integers 0 <= k <= n_max
    (remote workers) and s >= 0 (PSs), B_p s >= b_w k - c  <=>  verify's (2i)
    ``s * B_p >= k * b_w`` (exact arithmetic).

    (2i) is a staircase s >= s_k (``Instance.ps_raw``); c must be at least
    b k - B s_k (accept s_k) and below b k - B (s_k - 1) (reject s_k - 1) for every k. The midpoint
    of that interval is used, so HiGHS's feasibility tolerances cannot flip a decision (a plain
    B s >= b k could, when b k / B is an integer up to float noise)."""
    b, big_b = inst.worker_types[w].bandwidth, inst.ps_types[p].bandwidth
    lo, hi = 0.0, math.inf
    for k in range(n_max + 1):
        s_k = inst.ps_raw(w, p, k)
        lo = max(lo, k * b - s_k * big_b)
        if s_k >= 1:
            hi = min(hi, k * b - (s_k - 1) * big_b)
    if not lo < hi:
        raise ValueError(f"(2i) worker type {w}, PS type {p}: no linear cut matches the tolerance "
                         f"staircase ({lo} >= {hi})")
    return lo + (min(hi, lo + big_b) - lo) / 2


def _ps_constraints(m, inst: Instance, jobs, conf, A, chosen, q0) -> None:
    """M3, M4, M6 (PSs), M7, M8 ((2i), exact for verify's check), M9."""
    H, M, P = range(inst.n_servers), range(len(inst.worker_types)), range(len(inst.ps_types))
    b = [t.bandwidth for t in inst.worker_types]
    big_b = [t.bandwidth for t in inst.ps_types]
    # the largest PS count ever useful: (2i) for all D_j workers remote (verify's predicate)
    sbar = {j: max(inst.ps_needed(w, p, inst.jobs[j].chunks) for w in M for p in P)
            for j in jobs}
    m.s = pyo.Var([(j, h, p) for j in jobs for h in H for p in P], domain=pyo.NonNegativeIntegers,
                  bounds=lambda _, j, h, p: (0, sbar[j]))
    m.eta = pyo.Var([(j, h) for j in jobs for h in H], domain=pyo.Binary)
    m.cut = pyo.Var(jobs, domain=pyo.NonNegativeReals)  # ps_cut of the chosen (w, p)
    for j in jobs:
        for p in P:
            uses_p = sum(A[j, k] for (jj, k), c in conf.items() if jj == j and c[1] == p
                         and (j, k) in A)
            for h in H:
                _add(m, m.s[j, h, p] <= sbar[j] * uses_p)  # M3
        _add(m, sum(m.s[j, h, p] for h in H for p in P) >= chosen[j])  # M4 / (2e)
        _add(m, sum(m.eta[j, h] for h in H) == chosen[j])  # M9
        # the cut c of M8 for the chosen (w, p) (one (w, p) per job by M1-M3)
        cuts = {wp: ps_cut(inst, *wp, inst.jobs[j].chunks)
                for wp in {(c[0], c[1]) for (jj, _), c in conf.items() if jj == j}}
        _add(m, m.cut[j] == sum(cuts[c[0], c[1]] * A[j, k]
                                for (jj, k), c in conf.items() if jj == j and (j, k) in A))
        for h in H:
            n_ps = sum(m.s[j, h, p] for p in P)
            _add(m, n_ps <= sbar[j] * (m.sigma[j, h] + q0[j]))  # M6 (PSs)
            _add(m, n_ps <= sbar[j] * m.eta[j, h])  # M7
            remote = sum(b[w] * m.y[j, g, w] for g in H if g != h for w in M)
            _add(m, sum(big_b[p] * m.s[j, h, p] for p in P)
                    >= remote - m.cut[j] - max(b) * inst.jobs[j].chunks * (1 - m.eta[j, h]))  # M8


def _capacity(m, inst: Instance, jobs, conf, by_jk, last_slot: int) -> None:
    """M10-M12: G_{jhrt} >= Use_{jhr} - C (1 - Run_{jt}), sum_j G <= C ((2h) / (15b)), with
    C = ``cap_limit``: verify's exact ``load <= C_h^r`` as a linear bound (floor(C) for integral
    demands).

    G exists only where some unit (a worker or a PS) fits under C; elsewhere M10 forces zero use."""
    H, R = range(inst.n_servers), range(inst.n_res)
    M, P = range(len(inst.worker_types)), range(len(inst.ps_types))
    slots = range(1, last_slot + 1)
    cap = inst.cap_limit
    units = [inst.e[w] for w in M] + ([inst.z[p] for p in P] if inst.is_ps else [])
    usable = {(h, r): any(0 < u[r] <= cap[h, r] for u in units) for h in H for r in R}
    run: dict[tuple[int, int], list[Any]] = {(j, t): [] for j in jobs for t in slots}
    for (j, k), ts in by_jk.items():
        d = conf[j, k][4]
        for t0 in ts:
            for t in range(t0, t0 + d):
                run[j, t].append(m.X[j, k, t0])
    m.G = pyo.Var([(j, h, r, t) for j in jobs for h in H for r in R for t in slots
                   if run[j, t] and usable[h, r]], domain=pyo.NonNegativeReals)
    for j in jobs:
        for h in H:
            for r in R:
                use = sum(inst.e[w, r] * m.y[j, h, w] for w in M if inst.e[w, r] > 0)
                if inst.is_ps:
                    use = use + sum(inst.z[p, r] * m.s[j, h, p] for p in P if inst.z[p, r] > 0)
                if isinstance(use, (int, float)):
                    continue
                _add(m, use <= float(cap[h, r]))  # M10
                for t in slots:
                    if run[j, t] and usable[h, r]:
                        _add(m, m.G[j, h, r, t] >= use - float(cap[h, r]) * (
                            1 - sum(run[j, t])))  # M11
    for h in H:
        for r in R:
            for t in slots:
                terms = [m.G[j, h, r, t] for j in jobs if (j, h, r, t) in m.G]
                if len(terms) > 1:
                    _add(m, sum(terms) <= float(cap[h, r]))  # M12
    _aggregate_cuts(m, inst, conf, by_jk, slots)


def _aggregate_cuts(m, inst: Instance, conf, by_jk, slots) -> None:
    """M13 (ours, valid): per resource and slot, the running configurations' least total use
    N e_m + z_p (one PS) fits the cluster's total capacity (sum of the cap_limits). Redundant for
    integer solutions; it tightens the LP, which M11's big-M leaves weak."""
    total = inst.cap_limit.sum(axis=0)
    for r in range(inst.n_res):
        load: dict = {t: [] for t in slots}
        for (j, k), ts in by_jk.items():
            w, p, _, n, d = conf[j, k]
            use = n * inst.e[w, r] + (inst.z[p, r] if inst.is_ps else 0.0)
            if use > 0:
                for t0 in ts:
                    for t in range(t0, t0 + d):
                        load[t].append(use * m.X[j, k, t0])
        for t, terms in load.items():
            if len(terms) > 1:
                _add(m, sum(terms) <= float(total[r]))


def _add(m, expr) -> None:
    """Add a constraint, skipping ones that are trivially true for jobs with no configuration."""
    if expr is True:
        return
    if expr is False:
        raise ValueError("a job has no feasible configuration within the horizon")
    m.c.add(expr)


def extract_plans(inst: Instance, m: pyo.ConcreteModel) -> dict:
    """job -> Plan read from a solved :func:`build_offline` / :func:`build_batch` model (jobs not
    scheduled in a batch model are absent)."""
    out = {}
    H, P = range(inst.n_servers), range(len(inst.ps_types))
    for j, k, t in m.JKT:
        if pyo.value(m.X[j, k, t]) > 0.5:
            w, p, q, n, d = m.conf[j, k]
            workers = tuple(int(round(pyo.value(m.y[j, h, w]))) for h in H)
            ps = tuple(int(round(sum(pyo.value(m.s[j, h, pp]) for pp in P))) if inst.is_ps else 0
                       for h in H)
            out[j] = Plan(t, d, w, p, q, workers, ps)
    return out


def extract_schedule(inst: Instance, m: pyo.ConcreteModel) -> Schedule:
    """The Schedule of a solved :func:`build_offline` model."""
    plans = extract_plans(inst, m)
    return Schedule(tuple(plans[j] for j in range(len(inst.jobs))))


# ------------------------------------------------------------- time-indexed pattern MILP (exact)


@dataclass(frozen=True)
class Pattern:
    """One non-dominated single-job placement of job j: configuration (m, p, q, N, d), workers and
    PSs per server, and its per-slot use (H x R, flattened row-major) while it runs."""

    config: tuple
    workers: tuple
    ps: tuple
    use: tuple

    @property
    def duration(self) -> int:
        return self.config[4]


def pattern_bound(inst: Instance, max_len: float, stop_above: float = math.inf) -> int:
    """An upper bound on the placements :func:`job_patterns` scans over all jobs, counted without
    enumerating them (q = 1: H per configuration; q = 0: the compositions of N over H servers
    times H PS servers for PS, times 1 for all-reduce). The count stops as soon as it exceeds
    ``stop_above`` (the partial count is returned: enough to compare with a cap)."""
    H, total = inst.n_servers, 0
    for j in range(len(inst.jobs)):
        for w, p, q, n, d in model_configs(inst, j, max_len):
            total += H if q == 1 else math.comb(n + H - 1, H - 1) * (H if inst.is_ps else 1)
        if total > stop_above:
            return total
    return total


def job_patterns(inst: Instance, j: int, max_len: float,
                 deadline: Deadline) -> list[Pattern] | None:
    """The placements of job j (configurations with d <= ``max_len``) that fit alone and that no
    other placement dominates, shortest first (digest Sec. 3.2 facts 1-3, Sec. 3.4).

    A placement is dominated when another one has d' <= d and uses no more of every (server,
    resource) (ties: the first kept): running it instead, with the same start, occupies a subset
    of the slots with no larger loads and completes no later. Placements are those of
    :func:`enumerate_columns` (q = 1: N workers + 1 PS on one server; q = 0: every worker vector,
    PS on one server, the fewest PSs verify's (2i) accepts); the single-job fit is verify's
    capacity rule (use <= ``cap_limit``). Memoised per instance: a shorter ``max_len`` filters the
    list of a longer one (a pattern dominating one with d <= max_len is no longer). None when
    the ``deadline`` expires during the scan (checked per configuration; nothing memoised)."""
    table = memo(inst, "model_patterns")
    if j not in table or table[j][0] < max_len:
        raw = []
        for c in model_configs(inst, j, max_len):
            if deadline.expired():
                return None
            for workers, ps in _placements(inst, *c[:4]):
                use = _use(inst, c[0], c[1], workers, ps)
                if (use <= inst.cap_limit).all():
                    raw.append(Pattern(c, workers, ps, tuple(float(x) for x in use.ravel())))
        table[j] = (max_len, _non_dominated(raw))
    return [p for p in table[j][1] if p.duration <= max_len]


def _use(inst: Instance, w: int, p: int, workers, ps) -> np.ndarray:
    """Per-slot use H x R of a placement (verify's ``_usage``)."""
    use = np.outer(workers, inst.e[w])
    return use + np.outer(ps, inst.z[p]) if inst.is_ps else use


def _non_dominated(raw: list[Pattern]) -> list[Pattern]:
    kept: list[Pattern] = []
    uses: list[np.ndarray] = []
    for pat in sorted(raw, key=lambda x: (x.duration, sum(x.use))):
        use = np.array(pat.use)
        if not any((u <= use).all() for u in uses):  # every kept one is no longer
            kept.append(pat)
            uses.append(use)
    return kept


def server_classes(inst: Instance) -> list[list[int]]:
    """Groups (size >= 2) of servers with identical capacity rows: permuting them maps schedules
    to schedules of the same cost."""
    groups: dict = {}
    for h, row in enumerate(inst.capacity):
        groups.setdefault(tuple(row), []).append(h)
    return [g for g in groups.values() if len(g) > 1]


def _sorted_on_classes(inst: Instance, pat: Pattern, classes) -> bool:
    """True when the pattern's use rows are lexicographically non-increasing along each class of
    identical servers (symmetry breaking: one job's placement fixes the servers' order)."""
    rows = np.array(pat.use).reshape(inst.n_servers, inst.n_res)
    return all(tuple(rows[a]) >= tuple(rows[b]) for g in classes for a, b in zip(g, g[1:]))


def exact_patterns(inst: Instance, last: list[int]) -> dict[int, list[Pattern]]:
    """job -> the patterns :func:`build_exact` uses when job j completes by ``last[j]`` + 1
    (:func:`latest_completions` minus one: its last usable slot). The job of largest
    weight (then lowest index) keeps only patterns sorted on every class of identical servers
    (:func:`server_classes`): any schedule becomes one of these by permuting identical servers,
    which keeps its cost and feasibility."""
    # no deadline on purpose: a model needs every placement (exact checks the scan's size first)
    out = {j: job_patterns(inst, j, last[j] - job.arrival + 1, NEVER) or []
           for j, job in enumerate(inst.jobs)}
    classes = server_classes(inst)
    if classes and inst.jobs:
        lead = min(range(len(inst.jobs)), key=lambda j: (-inst.jobs[j].weight, j))
        out[lead] = [p for p in out[lead] if _sorted_on_classes(inst, p, classes)]
    return out


def exact_size(patterns: dict, inst: Instance, last: list[int]) -> dict[str, int]:
    """Size of :func:`build_exact`'s model: ``binaries`` (X_{jlt}) and ``terms``, the linear
    terms of its rows (one in the job's assignment row and in the objective, and one per running
    slot, server and resource used in the capacity rows)."""
    binaries = terms = 0
    for j, pats in patterns.items():
        for pat in pats:
            starts = max(0, last[j] - pat.duration + 2 - inst.jobs[j].arrival)
            binaries += starts
            terms += starts * (2 + pat.duration * sum(1 for x in pat.use if x > 0))
    return {"binaries": binaries, "terms": terms}


def build_exact(inst: Instance, last: list[int], patterns: dict | None = None) -> pyo.ConcreteModel:
    """Time-indexed MILP of (2) / (15) over non-dominated placements (issue 14), the model of
    ``exact``: X_{jlt} = 1 when job j runs pattern l (:func:`exact_patterns`) from slot t,

        min  sum_j w_j sum_{l,t} (t + d_l) X_{jlt}                     objective of (2)
        s.t. sum_{l,t} X_{jlt} = 1                              for all j      (2a)
             sum_{j,l} sum_{t' in (t - d_l, t]} u_l^{hr} X_{jlt'} <= C_h^r          (2h)/(15b)
             X_{jlt} = 0 unless a_j <= t and t + d_l - 1 <= last_j          (2j)

    Every per-job constraint ((2b)-(2g), (2i), (14)) holds inside a pattern; capacity rows use
    ``cap_limit`` (verify's exact capacity), so the model accepts exactly the loads verify accepts. Exact
    with ``last`` = :func:`latest_completions` - 1 (of a feasible schedule's cost) by the
    dominance of :func:`job_patterns` and the symmetry of :func:`exact_patterns`. Unlike :func:`build_offline` there is no big-M: the LP relaxation is
    the time-indexed packing LP (the per-horizon version of (8)), much tighter than M11's."""
    pats = exact_patterns(inst, last) if patterns is None else patterns
    m = pyo.ConcreteModel(name="elastic_cluster_exact")
    m.pat = pats
    index = [(j, l, t) for j, ps in pats.items() for l, pat in enumerate(ps)
             for t in range(inst.jobs[j].arrival, last[j] - pat.duration + 2)]
    m.JLT = pyo.Set(initialize=index, dimen=3, ordered=True)
    m.X = pyo.Var(m.JLT, domain=pyo.Binary)
    rows: dict[int, list] = {j: [] for j in pats}
    for j, l, t in index:
        rows[j].append(m.X[j, l, t])
    m.one = pyo.Constraint(list(pats), rule=lambda _, j: sum(rows[j]) == 1)
    _pattern_capacity(m, inst, pats, index, max(last, default=0))
    m.obj = pyo.Objective(expr=sum(inst.jobs[j].weight * (t + pats[j][l].duration) * m.X[j, l, t]
                                   for j, l, t in index), sense=pyo.minimize)
    return m


def _pattern_capacity(m, inst: Instance, pats, index, horizon: int) -> None:
    """(2h) / (15b) per server, resource and slot, only where the jobs' largest uses together
    could exceed C (elsewhere the row is redundant)."""
    H, R = inst.n_servers, inst.n_res
    cap = inst.cap_limit
    most = np.zeros((H, R))
    for ps in pats.values():
        if ps:
            most += np.max([np.array(p.use).reshape(H, R) for p in ps], axis=0)
    cells = [(h, r) for h in range(H) for r in range(R) if most[h, r] > cap[h, r]]
    load: dict = {(h, r, t): [] for h, r in cells for t in range(1, horizon + 1)}
    for j, l, t0 in index:
        pat = pats[j][l]
        for h, r in cells:
            u = pat.use[h * R + r]
            if u > 0:
                for t in range(t0, t0 + pat.duration):
                    load[h, r, t].append((u, m.X[j, l, t0]))
    keys = [k for k, v in load.items() if len(v) > 1]
    m.cap = pyo.Constraint(keys, rule=lambda _, h, r, t: sum(
        u * x for u, x in load[h, r, t]) <= float(cap[h, r]))


def set_start(model: pyo.ConcreteModel, inst: Instance, schedule: Schedule) -> int:
    """Set :func:`build_exact`'s X from a verified ``schedule`` (a MIP start for
    ``solve_model(..., warm_start=True)``); returns the number of jobs set.

    Each plan maps to a pattern that dominates it: same start, d_l <= its duration and no larger
    use on every (server, resource) -- feasible whenever the schedule is (fewer slots, smaller
    loads) and no more costly. A plan whose pattern is cut by the symmetry breaking or the horizon
    has no such pattern; its job is left unset (HiGHS completes a partial start, or drops it), and
    servers of a class are first permuted so that the lead job's placement is sorted. Every X is
    set (0 or 1) for the jobs that are set."""
    plans = _permuted(inst, schedule.plans)
    chosen = {}
    for j, plan in enumerate(plans):
        use = _use(inst, plan.worker_type, plan.ps_type, plan.workers, plan.ps).ravel()
        for l, pat in enumerate(model.pat[j]):
            if pat.duration <= plan.duration and (np.array(pat.use) <= use).all() \
                    and (j, l, plan.start) in model.X:
                chosen[j] = (l, plan.start)
                break
    for j, l, t in model.JLT:
        if j in chosen:
            model.X[j, l, t].set_value(1 if chosen[j] == (l, t) else 0)
    return len(chosen)


def _permuted(inst: Instance, plans) -> list[Plan]:
    """``plans`` with identical servers renumbered so that the lead job's use rows are sorted
    (the order :func:`exact_patterns` keeps)."""
    classes = server_classes(inst)
    if not classes:
        return list(plans)
    lead = min(range(len(inst.jobs)), key=lambda j: (-inst.jobs[j].weight, j))
    p = plans[lead]
    rows = _use(inst, p.worker_type, p.ps_type, p.workers, p.ps)
    perm = list(range(inst.n_servers))
    for g in classes:
        for pos, h in zip(g, sorted(g, key=lambda h: tuple(-x for x in rows[h]))):
            perm[pos] = h  # new server pos holds old server h
    return [dataclasses.replace(pl, workers=tuple(pl.workers[h] for h in perm),
                                ps=tuple(pl.ps[h] for h in perm)) for pl in plans]


def extract_exact(inst: Instance, m: pyo.ConcreteModel) -> Schedule:
    """The Schedule of a solved :func:`build_exact` model."""
    plans: dict[int, Plan] = {}
    for j, l, t in m.JLT:
        if pyo.value(m.X[j, l, t]) > 0.5:
            w, p, q, n, d = m.pat[j][l].config
            plans[j] = Plan(t, d, w, p, q, m.pat[j][l].workers, m.pat[j][l].ps)
    return Schedule(tuple(plans[j] for j in range(len(inst.jobs))))


# ------------------------------------------------------------------- mean-busy-time LP (bound)


def build_busy_lp(inst: Instance, floor: list[float], tail: list[float]) -> pyo.ConcreteModel:
    """The mean-busy-time LP behind ``lower_bound`` (ours; Goemans' polytope, SODA 1997):
    min sum_j w_j (M_j + tail_j) s.t. M_j >= floor_j, and the cuts ``m.cuts`` the solver adds
    (:func:`add_busy_cut`): sum_{j in S} A_j M_j >= rhs for sets S of jobs."""
    m = pyo.ConcreteModel(name="elastic_cluster_busy_lp")
    jobs = range(len(inst.jobs))
    m.M = pyo.Var(jobs, bounds=lambda _, j: (float(floor[j]), None))
    m.obj = pyo.Objective(expr=sum(inst.jobs[j].weight * (m.M[j] + float(tail[j])) for j in jobs),
                          sense=pyo.minimize)
    m.cuts = pyo.ConstraintList()
    return m


def add_busy_cut(m: pyo.ConcreteModel, coef: dict, rhs: float) -> None:
    """sum_j coef_j M_j >= rhs."""
    m.cuts.add(sum(float(a) * m.M[j] for j, a in coef.items()) >= float(rhs))


# ------------------------------------------------------------------------------- packing (8)


@dataclass(frozen=True)
class Column:
    """One single-job schedule l in Gamma_j: relative start, duration, and per-slot usage f(l)."""

    job: int
    start: int
    duration: int
    plan: Plan
    usage: tuple  # ((h, r, amount), ...) with amount > 0


def enumerate_columns(inst: Instance, j: int, tau: int) -> list[Column]:
    """Gamma_j for a batch of deadline tau, dominance-pruned (digest Sec. 3.4): q = 1 on one server
    (N workers + 1 PS); q = 0 any worker vector with sum N and, for PS, one PS server n with
    max(1, ceil((N - y_n) b/B)) PSs; single-job capacity fit; starts 1..tau - d."""
    cols = []
    H = inst.n_servers
    for w, p, q, n, d in model_configs(inst, j, tau - 1):
        for workers, ps in _placements(inst, w, p, q, n):
            use = np.outer(workers, inst.e[w]) + (np.outer(ps, inst.z[p]) if inst.is_ps else 0)
            if (use > inst.cap_limit).any():  # verify's capacity rule, one job alone
                continue
            usage = tuple((h, r, float(use[h, r])) for h in range(H) for r in range(inst.n_res)
                          if use[h, r] > 0)
            for t in range(1, tau - d + 1):
                cols.append(Column(j, t, d, Plan(t, d, w, p, q, workers, ps), usage))
    return cols


def _placements(inst: Instance, w: int, p: int, q: int, n: int):
    H = inst.n_servers
    if q == 1:
        for h in range(H):
            yield (tuple(n if k == h else 0 for k in range(H)),
                   tuple(1 if k == h and inst.is_ps else 0 for k in range(H)))
        return
    for cut in itertools.combinations(range(n + H - 1), H - 1):  # compositions of n into H parts
        bounds = (-1,) + cut + (n + H - 1,)
        workers = tuple(bounds[i + 1] - bounds[i] - 1 for i in range(H))
        if not inst.is_ps:
            yield workers, (0,) * H
            continue
        for k in range(H):
            s = inst.ps_needed(w, p, n - workers[k])
            yield workers, tuple(s if i == k else 0 for i in range(H))


def build_packing(inst: Instance, columns: list[Column], tau: int,
                  relax: bool = False) -> pyo.ConcreteModel:
    """(8) / (17): max sum w_j x_jl, capacity (8a) per (t, r, h) (C = cap_limit, verify's
    capacity), one schedule per job (8b);
    ``relax`` gives the LP relaxation (x >= 0) with duals imported."""
    m = pyo.ConcreteModel(name="packing")
    m.L = pyo.Set(initialize=range(len(columns)))
    m.x = pyo.Var(m.L, domain=pyo.NonNegativeReals if relax else pyo.Binary)
    jobs = sorted({c.job for c in columns})
    m.obj = pyo.Objective(expr=sum(inst.jobs[c.job].weight * m.x[i] for i, c in enumerate(columns)),
                          sense=pyo.maximize)
    m.one = pyo.Constraint(jobs, rule=lambda _, j: sum(
        m.x[i] for i, c in enumerate(columns) if c.job == j) <= 1)
    load: dict = {}
    for i, c in enumerate(columns):
        for t in range(c.start, c.start + c.duration):
            for h, r, a in c.usage:
                load.setdefault((h, r, t), []).append((i, a))
    m.cap = pyo.Constraint(list(load), rule=lambda _, h, r, t: sum(
        a * m.x[i] for i, a in load[h, r, t]) <= float(inst.cap_limit[h, r]))
    if relax:
        m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    return m


def build_packing_dual(inst: Instance, columns: list[Column], tau: int) -> pyo.ConcreteModel:
    """(9) / (18): min sum_j u_j + sum_{t,h,r} C_h^r delta_h^r(t) s.t. (9a) (C = cap_limit, as (8))
    u_j >= w_j - sum_{t in T(l)} sum_{h,r} delta f(l) for every column l, delta, u >= 0."""
    m = pyo.ConcreteModel(name="packing_dual")
    jobs = sorted({c.job for c in columns})
    cells = sorted({(h, r, t) for c in columns for h, r, _ in c.usage
                    for t in range(c.start, c.start + c.duration)})
    m.u = pyo.Var(jobs, domain=pyo.NonNegativeReals)
    m.delta = pyo.Var(cells, domain=pyo.NonNegativeReals)
    m.obj = pyo.Objective(expr=sum(m.u[j] for j in jobs) + sum(
        float(inst.cap_limit[h, r]) * m.delta[h, r, t] for h, r, t in cells), sense=pyo.minimize)
    m.c = pyo.Constraint(range(len(columns)), rule=lambda _, i: m.u[columns[i].job] >= (
        inst.jobs[columns[i].job].weight - sum(
            a * m.delta[h, r, t] for t in range(columns[i].start, columns[i].start + columns[i].duration)
            for h, r, a in columns[i].usage)))
    return m

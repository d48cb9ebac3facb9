"""ring_contention solvers — SJF-BCO (Yu et al., MobiHoc'22; seeds/002), its baselines, exact, bounds.

Methods
-------
exact        M1 time-indexed MILP (digest §3.3), horizon = best heuristic makespan, C >= the
             ``lower_bound`` value (closed without the MILP when that bound meets the heuristic), gap 0.
lower_bound  max(LB_len, LB_area, LB_conf) and, on small instances, the dual bound of M3 (14)–(16)
             with contention-free durations (digest §3.5).
sjf_bco      Algorithm 1: SJF order, bisection on theta_u in [1, T], kappa loop, FA-FFP (Alg. 2)
             for G_j <= kappa, LBSGF (Alg. 3) otherwise.
first_fit, list_scheduling, random   the baselines of Sec. 7.2 (FF and LS with their own bisection
             on theta_u, RAND with theta_u = T), all in the same event-driven pass.

Execution semantics (the paper leaves them implicit; digest §4.0): jobs are placed one by one in
order at a monotone clock t; a GPU is *available* to j iff it is idle at t and U[g] + rho_hat_j/u <=
theta_u (text below Alg. 2); with too few available GPUs the pass waits for the next completion
("wait for some job to exit", Alg. 2 lines 8–9, Alg. 3 lines 11–12) and fails when nothing runs.
U is a budget and never decreases. Progress is simulated with the exact model (6)–(9), so T_j and
the pass makespan are exact. rho_hat_j = F_j tau_j(n_min_j, 1), u = 1 (digest A5).
Resolved ambiguities: the pass state is reset for every (theta, kappa) (A6); an infeasible pass
scores T (A7); theta = floor((left + right) / 2) (A8); FA-FFP's line 4 is taken literally (least U,
ties by server then GPU index; A1) — this makes FA-FFP identical to LS; LBSGF picks the first G_j
GPUs of its list (A11); kappa runs over the distinct G values (A12, exactly equivalent to 1..n_g).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable

import numpy as np

from optsched.models import ring_contention as rm
from optsched.errors import InfeasibleSchedule
from optsched.problems.ring_contention import Instance, Schedule, completion_times
from optsched.tolerance import slots_needed
from optsched.family import CompareSpec, Family
from optsched.problems import ring_contention as _problem
from optsched.workloads import ring_contention as _workloads
from optsched.method import Method
from optsched.result import Outcome, SolveStatus
from optsched.solvers.highs import solve_model

EPS = 1e-9
BUDGET_MAX_VARS = 600  # M3 in lower_bound only up to this many (job, GPU) pairs


def rho_hat(inst: Instance) -> list[float]:
    """Estimated execution time rho_hat_j = F_j tau_j(n_min_j, 1) in slots (digest §4.0.7)."""
    return [job.iterations * inst.tau(j, inst.min_servers(j), 1) for j, job in enumerate(inst.jobs)]


def sjf_order(inst: Instance) -> list[int]:
    """Alg. 1 line 3: jobs by G_j ascending (ties by index)."""
    return sorted(range(len(inst.jobs)), key=lambda j: (inst.jobs[j].gpus, j))


# ----------------------------------------------------------------------------------------------
# The event-driven pass (digest §4.0)
# ----------------------------------------------------------------------------------------------

@dataclass
class Pass:
    """State of one list-scheduling pass at budget ``theta``: clock, U[g], GPU occupancy, progress.

    GPUs are numbered server by server (g = first_gpu[s] + i), so index order is (s, i) order.
    """

    inst: Instance
    theta: float
    est: list[float]
    phi_cache: dict = field(default_factory=dict)
    t: int = 0
    running: dict[int, np.ndarray] = field(default_factory=dict)
    rem: dict[int, int] = field(default_factory=dict)
    start: dict[int, int] = field(default_factory=dict)
    vec: dict[int, tuple[int, ...]] = field(default_factory=dict)
    used: dict[int, list[int]] = field(default_factory=dict)
    finish: dict[int, int] = field(default_factory=dict)
    _speeds: dict[int, int] | None = None

    def __post_init__(self):
        caps = self.inst.servers
        self.server = np.repeat(np.arange(len(caps)), caps)
        self.first_gpu = np.concatenate(([0], np.cumsum(caps)[:-1])).astype(int)
        self.U = np.zeros(len(self.server))
        self.idle = np.ones(len(self.server), dtype=bool)

    def available(self, j: int) -> np.ndarray:
        """Idle GPUs whose budget admits j: U[g] + rho_hat_j / u <= theta (u = 1), index order."""
        return np.flatnonzero(self.idle & (self.U + self.est[j] <= self.theta + EPS))

    def place(self, j: int, gpus) -> None:
        """Start j now on ``gpus`` (Alg. 2 line 6, Alg. 3 lines 8–9)."""
        gpus = np.asarray(gpus, dtype=int)
        self.idle[gpus] = False
        self.U[gpus] += self.est[j]
        self.running[j] = gpus
        self.vec[j] = tuple(np.bincount(self.server[gpus], minlength=self.inst.n_servers).tolist())
        self.used[j] = servers_of(self.vec[j])
        self.rem[j] = self.inst.jobs[j].iterations
        self.start[j] = self.t
        self._speeds = None

    def speeds(self) -> dict[int, int]:
        """phi_j = floor(1 / tau_j(n_j, p_j)) of the running jobs, p_j from (6)."""
        if self._speeds is None:
            self._speeds = running_speeds(self.inst, {j: self.used[j] for j in self.running},
                                          self.phi_cache)
        return self._speeds

    def advance(self) -> None:
        """Run until the next completion (ADVANCE of digest §4.0) and free the finished jobs' GPUs."""
        speeds = self.speeds()
        delta = min(-(-self.rem[j] // speeds[j]) for j in self.running)
        self.t += delta
        for j in list(self.running):
            self.rem[j] -= speeds[j] * delta
            if self.rem[j] <= 0:
                self.finish[j] = self.t
                self.idle[self.running.pop(j)] = True
        self._speeds = None

    def schedule(self) -> Schedule:
        js = range(len(self.inst.jobs))
        return Schedule(tuple(self.start[j] for j in js), tuple(self.vec[j] for j in js))


def servers_of(c: tuple[int, ...]) -> list[int]:
    """Servers a placement vector uses."""
    return [s for s, y in enumerate(c) if y > 0]


def running_speeds(inst: Instance, used: dict[int, list[int]],
                   cache: dict | None = None) -> dict[int, int]:
    """Speeds of the running jobs, given the servers each uses (eqs. (6)–(8), floor of (9))."""
    cache = {} if cache is None else cache
    count = [0] * inst.n_servers
    for j, ss in used.items():
        if len(ss) >= 2:
            for s in ss:
                count[s] += 1
    out = {}
    for j, ss in used.items():
        key = (j, len(ss), max(count[s] for s in ss) if len(ss) >= 2 else 1)
        if key not in cache:
            cache[key] = inst.phi(*key)
        out[j] = cache[key]
    return out


Rule = Callable[[Pass, int], "list[int] | None"]


def run_pass(inst: Instance, order: list[int], theta: float, rule_for: Callable[[int], Rule],
             est: list[float] | None = None, phi_cache: dict | None = None) -> Pass | None:
    """One pass: place the jobs of ``order`` with their rule, waiting for completions when needed.

    Returns the finished pass, or None when a job finds no GPUs while nothing runs (infeasible
    theta, Alg. 2 line 10 / Alg. 3 line 13).
    """
    state = Pass(inst, theta, est if est is not None else rho_hat(inst),
                 {} if phi_cache is None else phi_cache)
    for j in order:
        rule = rule_for(j)
        while True:
            chosen = rule(state, j)
            if chosen is not None:
                state.place(j, chosen)
                break
            if not state.running:
                return None
            state.advance()
    while state.running:
        state.advance()
    return state


def makespan(state: Pass | None, horizon: int) -> int:
    """m_theta^kappa: max_j T_j, or T for an infeasible pass (digest A7)."""
    return horizon if state is None else max(state.finish.values())


# ----------------------------------------------------------------------------------------------
# Placement rules
# ----------------------------------------------------------------------------------------------

def least_u(state: Pass, j: int) -> np.ndarray | None:
    """FA-FFP (Alg. 2 lines 2–4), literal: the G_j available GPUs with least U, ties (s, i). Also LS."""
    cand = state.available(j)
    need = state.inst.jobs[j].gpus
    if len(cand) < need:
        return None
    return cand[np.lexsort((cand, state.U[cand]))[:need]]


def fa_pack(state: Pass, j: int) -> np.ndarray | None:
    """FA-FFP "pack" variant (digest §4.2, not the paper's text): partially occupied servers first."""
    cand = state.available(j)
    need = state.inst.jobs[j].gpus
    if len(cand) < need:
        return None
    busy_server = np.zeros(state.inst.n_servers, dtype=bool)
    busy_server[state.server[~state.idle]] = True
    srv = state.server[cand]
    return cand[np.lexsort((cand, state.U[cand], srv, ~busy_server[srv]))[:need]]


def first_fit(state: Pass, j: int) -> np.ndarray | None:
    """FF (Sec. 7.2): the first G_j available GPUs in (server, GPU) index order."""
    cand = state.available(j)
    need = state.inst.jobs[j].gpus
    return cand[:need] if len(cand) >= need else None


def lbsgf(lam: float) -> Rule:
    """LBSGF (Alg. 3) with server-selection factor lambda_j = ``lam``."""

    def rule(state: Pass, j: int) -> np.ndarray | None:
        inst = state.inst
        need = inst.jobs[j].gpus
        caps = np.asarray(inst.servers)
        avg = np.add.reduceat(state.U, state.first_gpu) / caps  # line 2: average U per server
        order = np.lexsort((np.arange(len(caps)), avg))
        total = np.cumsum(caps[order])
        n_sel = int(np.searchsorted(total, lam * need - EPS)) + 1  # shortest prefix >= lambda G_j
        cand = state.available(j)
        pool = []
        for s in order[:n_sel]:  # lines 4–5: available GPUs of each selected server, least U first
            gs = cand[state.server[cand] == s]
            pool.extend(gs[np.lexsort((gs, state.U[gs]))].tolist())
            if len(pool) >= need:
                return np.asarray(pool[:need])  # lines 6–7: first G_j of the list
        return None

    return rule


def random_rule(rng: np.random.Generator) -> Rule:
    """RAND (Sec. 7.2): G_j GPUs uniformly at random among the available ones (digest A15)."""

    def rule(state: Pass, j: int) -> np.ndarray | None:
        cand = state.available(j)
        need = state.inst.jobs[j].gpus
        if len(cand) < need:
            return None
        return np.sort(rng.choice(cand, size=need, replace=False))

    return rule


# ----------------------------------------------------------------------------------------------
# Algorithm 1 (SJF-BCO) and the bisection shared with FF and LS
# ----------------------------------------------------------------------------------------------

@dataclass
class SearchResult:
    """Best pass of a theta search: makespan m (T = failure), its pass, theta~_u, kappa, #passes."""

    makespan: int
    state: Pass | None
    theta: int | None
    kappa: int | None
    passes: int
    log: list = field(default_factory=list)


def kappa_values(inst: Instance, kappas: str | Iterable[int] = "distinct") -> list[int]:
    """kappa in [1, n_g] (Alg. 1 line 7); ``"distinct"``: one kappa per set {j : G_j <= kappa},
    its smallest member (gives exactly the passes and ties of ``"all"``, digest A12)."""
    n_g = inst.max_gpus
    if kappas == "all":
        return list(range(1, n_g + 1))
    if kappas == "distinct":
        return sorted({1} | {job.gpus for job in inst.jobs})
    return [int(k) for k in kappas]


def bisection(inst: Instance, horizon: int, rules: list[tuple[int | None, Callable[[int], Rule]]],
              order: list[int]) -> SearchResult:
    """Alg. 1 lines 4–24: bisection on integer theta in [1, T]; at each theta the best of ``rules``
    (the kappa loop, lines 7–18); move right <- theta - 1 iff the global best improved."""
    est, cache = rho_hat(inst), {}
    best = SearchResult(horizon, None, None, None, 0)
    left, right = 1, horizon
    while left <= right:
        theta = (left + right) // 2  # line 6 (floored)
        m_theta, s_theta, k_theta = horizon, None, None
        for kappa, rule_for in rules:
            state = run_pass(inst, order, theta, rule_for, est, cache)
            best.passes += 1
            m = makespan(state, horizon)
            best.log.append((theta, kappa, m))
            if m < m_theta:  # lines 17–18
                m_theta, s_theta, k_theta = m, state, kappa
        if m_theta < best.makespan:  # lines 19–21
            best.makespan, best.state, best.theta, best.kappa = m_theta, s_theta, theta, k_theta
            right = theta - 1
        else:  # lines 22–23
            left = theta + 1
    return best


def sjf_bco_search(inst: Instance, horizon: int | None = None, lam: float = 1.0,
                   kappas: str | Iterable[int] = "distinct", fa_variant: str = "literal") -> SearchResult:
    """Algorithm 1 (SJF-BCO) with FA-FFP for G_j <= kappa and LBSGF(lambda) otherwise."""
    horizon = horizon or inst.horizon
    fa = least_u if fa_variant == "literal" else fa_pack
    lb = lbsgf(lam)
    rules = [(k, (lambda k: lambda j: fa if inst.jobs[j].gpus <= k else lb)(k))
             for k in kappa_values(inst, kappas)]
    return bisection(inst, horizon, rules, sjf_order(inst))


def _outcome(inst: Instance, result: SearchResult, **info) -> Outcome:
    if result.state is None or result.makespan >= inst.horizon:
        return Outcome(None, SolveStatus.UNKNOWN, info={"failed": True, "passes": result.passes, **info})
    times = [result.state.finish[j] for j in range(len(inst.jobs))]
    return Outcome(result.state.schedule(), SolveStatus.FEASIBLE, info={
        "theta": result.theta, "kappa": result.kappa, "passes": result.passes,
        "avg_jct": sum(times) / len(times), **info})


def sjf_bco(inst: Instance, *, time_limit: float | None = None, seed: int = 0, lam: float = 1.0,
            kappas: str | Iterable[int] = "distinct", fa_variant: str = "literal") -> Outcome:
    """SJF-BCO (Algorithm 1) with lambda_j = ``lam`` for all j; deterministic (``seed`` unused)."""
    return _outcome(inst, sjf_bco_search(inst, lam=lam, kappas=kappas, fa_variant=fa_variant))


def first_fit_baseline(inst: Instance, *, time_limit: float | None = None, seed: int = 0) -> Outcome:
    """First-Fit (Sec. 7.2, [17]) in SJF order with its own theta_u bisection (no kappa loop)."""
    return _outcome(inst, bisection(inst, inst.horizon, [(None, lambda j: first_fit)], sjf_order(inst)))


def list_scheduling(inst: Instance, *, time_limit: float | None = None, seed: int = 0) -> Outcome:
    """List-Scheduling (Sec. 7.2, [17]): least-U GPUs, SJF order, its own theta_u bisection."""
    return _outcome(inst, bisection(inst, inst.horizon, [(None, lambda j: least_u)], sjf_order(inst)))


def random_baseline(inst: Instance, *, time_limit: float | None = None, seed: int = 0) -> Outcome:
    """RAND (Sec. 7.2, [19]): random available GPUs, theta_u = T, one seeded pass."""
    rule = random_rule(np.random.default_rng(seed))
    state = run_pass(inst, sjf_order(inst), inst.horizon, lambda j: rule)
    result = SearchResult(makespan(state, inst.horizon), state, inst.horizon, None, 1)
    return _outcome(inst, result)


# ----------------------------------------------------------------------------------------------
# Exact, bounds, guarantee
# ----------------------------------------------------------------------------------------------

def upper_bound_schedule(inst: Instance) -> tuple[int, Schedule | None]:
    """Best of SJF-BCO, FF and LS: the horizon H of M1 (digest §3.3 "Horizon").

    Each makespan is the checker's (``completion_times``), so H is the makespan of a schedule verify
    accepts and H >= OPT: M1's pruning to slots < H (and starts with t + rho^min <= H) keeps an
    optimum. A schedule verify rejects is skipped; with none, H = the instance horizon T.
    """
    best = (inst.horizon, None)
    for method in (sjf_bco, first_fit_baseline, list_scheduling):
        out = method(inst)
        if out.schedule is None:
            continue
        try:
            m = max(completion_times(inst, out.schedule))
        except InfeasibleSchedule:
            continue
        if m < best[0] or best[1] is None:
            best = (m, out.schedule)
    return best


def run_finish(inst: Instance, schedule: Schedule) -> list[int]:
    """T_j of a (start, placement) schedule by the event-driven simulation of digest §3.1."""
    n = len(inst.jobs)
    rem = [job.iterations for job in inst.jobs]
    finish = [0] * n
    t, running, waiting = 0, set(), sorted(range(n), key=lambda j: schedule.starts[j])
    while waiting or running:
        while waiting and schedule.starts[waiting[0]] <= t:
            running.add(waiting.pop(0))
        if not running:
            t = schedule.starts[waiting[0]]
            continue
        speeds = running_speeds(inst, {j: servers_of(schedule.placements[j]) for j in running})
        delta = min(math.ceil(rem[j] / speeds[j]) for j in running)
        if waiting:
            delta = min(delta, schedule.starts[waiting[0]] - t)
        t += delta
        for j in list(running):
            rem[j] -= speeds[j] * delta
            if rem[j] <= 0:
                finish[j] = t
                running.discard(j)
    return finish


def exact(inst: Instance, *, time_limit: float | None = None, seed: int = 0) -> Outcome:
    """Optimal makespan by M1 (gap 0) with H = best heuristic makespan and C >= ``lower_bound``
    (M3's theta* on small instances). Outcome lower bound = max(MILP dual bound, that bound).
    ``time_limit`` covers both solves; on a time limit the incumbent (or the heuristic) is kept."""
    start = time.perf_counter()
    ub, incumbent = upper_bound_schedule(inst)
    lb = max(max(rm.simple_lower_bound(inst).values()), 1)
    if lb < ub:  # M3 only when the simple bounds do not already close the instance (same result)
        lb = max(int(lower_bound(inst, time_limit=time_limit, seed=seed).lower_bound), 1)
    if lb >= ub and incumbent is not None:  # the heuristic is provably optimal
        return Outcome(incumbent, SolveStatus.OPTIMAL, float(ub),
                       {"model_objective": float(ub), "horizon": ub, "closed_by": "lower bound"})
    model = rm.build_exact(inst, ub, lower_bound=lb)
    left = None if time_limit is None else max(0.1, time_limit - (time.perf_counter() - start))
    rep = solve_model(model, time_limit=left, seed=seed)
    bound = float(max(lb, rep.bound if rep.bound is not None else lb))
    info = {**rep.info, "horizon": ub, "n_vars": model.nvariables(),
            "n_constraints": model.nconstraints()}
    if rep.has_solution:
        info["model_objective"] = rep.objective
        return Outcome(rm.extract_schedule(inst, model), rep.status, bound, info)
    return Outcome(incumbent, rep.status, bound, info)


def budget_bound(inst: Instance, time_limit: float | None = None, seed: int = 0) -> tuple[float | None, dict]:
    """Dual bound of M3 with contention-free durations (valid LB; digest §3.5)."""
    model = rm.build_budget(inst, durations="lower")
    rep = solve_model(model, time_limit=time_limit, seed=seed)
    bound = rep.bound if rep.bound is not None else None
    if bound is not None:  # makespans are integral: the least integer the tolerance puts >= bound
        bound = slots_needed(bound, 1.0)
    return bound, {"m3_status": rep.status.value, "m3_bound": rep.bound, "m3_runtime_s": rep.runtime_s}


def lower_bound(inst: Instance, *, time_limit: float | None = None, seed: int = 0) -> Outcome:
    """max(LB_len, LB_area, LB_conf), and M3's dual bound when |J| * N <= BUDGET_MAX_VARS."""
    parts = rm.simple_lower_bound(inst)
    value, info = max(parts.values()), dict(parts)
    if len(inst.jobs) * inst.n_gpus <= BUDGET_MAX_VARS:
        m3, m3_info = budget_bound(inst, time_limit, seed)
        info.update(m3_info)
        if m3 is not None:
            value = max(value, m3)
    return Outcome(None, SolveStatus.FEASIBLE, float(value), info)


def constants(inst: Instance) -> dict[str, float]:
    """Phi, u, l of Lemma 4 / Theorem 5 on the instance (digest §5.3), with rho_hat of §4.0.7."""
    est = rho_hat(inst)
    lo, hi = [], []
    for j in range(len(inst.jobs)):
        lo.append(rm.duration(inst, j, inst.min_servers(j)))
        n_max = inst.max_servers(j)
        hi.append(rm.duration(inst, j, n_max, inst.max_contention if n_max >= 2 else 1))
    phi = max(h / l for h, l in zip(hi, lo))
    u = max(1.0, max(e / l for e, l in zip(est, lo)))
    low = min(e / h for e, h in zip(est, hi))
    return {"n_g": inst.max_gpus, "Phi": phi, "u": u, "l": low}


def theorem5_bound(inst: Instance) -> float:
    """Theorem 5's claimed ratio n_g Phi u / l."""
    c = constants(inst)
    return c["n_g"] * c["Phi"] * c["u"] / c["l"]


METHODS = (
    Method("exact", "exact", exact, description="M1 time-indexed MILP with contention levels, C >= lower_bound, gap 0"),
    Method("lower_bound", "bound", lower_bound,
           description="max(length, area, conflict) bounds and M3 (14)-(16) dual bound when small"),
    Method("sjf_bco", "algorithm", sjf_bco, guarantee=theorem5_bound,
           description="Algorithm 1: SJF order, theta bisection, kappa loop, FA-FFP / LBSGF"),
    Method("first_fit", "baseline", first_fit_baseline,
           description="First-Fit GPUs, SJF order, own theta bisection"),
    Method("list_scheduling", "baseline", list_scheduling,
           description="least-loaded GPUs, SJF order, own theta bisection"),
    Method("random", "baseline", random_baseline, description="random available GPUs, theta = T"),
)
SPEC = Family(
    name="ring_contention",
    description="Yu et al. (002): ring-all-reduce jobs with communication contention, min makespan",
    problem=_problem,
    workloads=_workloads,
    methods=METHODS,
    default_method="sjf_bco",
    compare=CompareSpec(title='SJF-BCO vs baselines, paper scale (Fig. 4: 20 servers, T = 1200)',
                        ylabel='makespan / SJF-BCO makespan'),
)

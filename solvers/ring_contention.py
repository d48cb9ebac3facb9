"""ring_contention solvers — SJF-BCO (Yu et al., MobiHoc'22; seeds/002), its baselines, exact, bounds.

Methods
-------
exact        M1 (digest §3.3) as a pulse (start, end) time-indexed MILP, horizon = best heuristic
             makespan, warm-started from that schedule, C >= the closed-form bounds of §3.5
             (closed without the MILP when they meet the heuristic), gap 0.
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
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable, Literal, Sequence

import numpy as np

from optsched.deadline import NEVER, Deadline
from optsched.errors import InfeasibleSchedule
from optsched.family import CompareSpec, Family
from optsched.method import Method, Params, param
from optsched.problems import ring_contention as _problem
from optsched.problems.ring_contention import Instance, Schedule, completion_times
from optsched.result import Outcome, SolveStatus
from optsched.solvers.cp import cp_method
from optsched.tolerance import slack, slots_needed
from optsched.workloads import ring_contention as _workloads

if TYPE_CHECKING:
    from optsched.solvers.highs import Refusal

BUDGET_MAX_VARS = 600  # M3 in lower_bound only up to this many (job, GPU) pairs
#: exact skips the pulse MILP when its estimated size (pulse binaries x[j,c,t,e], :func:`exact_size`)
#: exceeds this many per second left (Pyomo builds and hands over ~3,000 a CPU-second, ~1,800 a
#: wall-second at load 6-7, measured at 20-32 jobs of the small mix: the tail-energy rows are
#: dense; the solve needs the rest) — and always above EXACT_MAX_VARS.
EXACT_VARS_PER_S = 2_000
EXACT_MAX_VARS = 2_000_000
#: Non-zeros per estimated pulse variable of M1, for the shared cap
#: (:data:`optsched.solvers.highs.MAX_MODEL_TERMS`): measured 5.1-7.2 on tiny/small seeds and
#: 13.3 at 24 jobs of the small mix (the tail-energy rows grow denser with more jobs); rounded up.
EXACT_TERMS_PER_VAR = 15


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
    phi_cache: dict[tuple[int, int, int], int] = field(default_factory=dict)
    t: int = 0
    running: dict[int, np.ndarray] = field(default_factory=dict)
    rem: dict[int, int] = field(default_factory=dict)
    start: dict[int, int] = field(default_factory=dict)
    vec: dict[int, tuple[int, ...]] = field(default_factory=dict)
    used: dict[int, list[int]] = field(default_factory=dict)
    finish: dict[int, int] = field(default_factory=dict)
    _speeds: dict[int, int] | None = None

    def __post_init__(self) -> None:
        caps = self.inst.servers
        self.server = np.repeat(np.arange(len(caps)), caps)
        self.first_gpu = np.concatenate(([0], np.cumsum(caps)[:-1])).astype(int)
        self.U = np.zeros(len(self.server))
        self.idle = np.ones(len(self.server), dtype=bool)

    def available(self, j: int) -> np.ndarray:
        """Idle GPUs whose budget admits j: U[g] + rho_hat_j / u <= theta (u = 1) within the
        tolerance (:func:`optsched.tolerance.at_most`), index order."""
        return np.flatnonzero(self.idle & (self.U + self.est[j] <= self.theta + slack(self.theta)))

    def place(self, j: int, gpus: Sequence[int] | np.ndarray) -> None:
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
                   cache: dict[tuple[int, int, int], int] | None = None) -> dict[int, int]:
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


Rule = Callable[[Pass, int], "np.ndarray | None"]


def run_pass(inst: Instance, order: list[int], theta: float, rule_for: Callable[[int], Rule],
             est: list[float] | None = None,
             phi_cache: dict[tuple[int, int, int], int] | None = None) -> Pass | None:
    """One pass: place the jobs of ``order`` with their rule, waiting for completions when needed.

    Returns the finished pass, or None when a job finds no GPUs while nothing runs (infeasible
    theta, Alg. 2 line 10 / Alg. 3 line 13). One pass is the unit of work the deadline checks
    between (a pass at paper scale takes a few hundredths of a second).
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
        # shortest prefix with at_least(total, lambda G_j) (optsched.tolerance)
        n_sel = int(np.searchsorted(total, lam * need - slack(lam * need))) + 1
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
    """Best pass of a theta search: makespan m (T = failure), its pass, theta~_u, kappa, #passes;
    ``stopped`` is True when the deadline ended the search before it was complete."""

    makespan: int
    state: Pass | None
    theta: int | None
    kappa: int | None
    passes: int
    log: list[tuple[int, int | None, int]] = field(default_factory=list)
    stopped: bool = False


def kappa_values(inst: Instance, kappas: str | Iterable[int] = "distinct") -> list[int]:
    """kappa in [1, n_g] (Alg. 1 line 7); ``"distinct"``: one kappa per set {j : G_j <= kappa},
    its smallest member (gives exactly the passes and ties of ``"all"``, digest A12)."""
    n_g = inst.max_gpus
    if kappas == "all":
        return list(range(1, n_g + 1))
    if kappas == "distinct":
        return sorted({1} | {job.gpus for job in inst.jobs})
    return [int(k) for k in kappas]


def _feasible(state: Pass | None, horizon: int) -> bool:
    """A pass that placed every job and ends by the horizon (verify's T_j <= T)."""
    return state is not None and max(state.finish.values()) <= horizon


def bisection(inst: Instance, horizon: int, rules: list[tuple[int | None, Callable[[int], Rule]]],
              order: list[int], *, deadline: Deadline = NEVER,
              mode: str = "pseudo_code") -> SearchResult:
    """Alg. 1 lines 4–24: bisection on integer theta in [1, T]; at each theta the best of ``rules``
    (the kappa loop, lines 7–18).

    ``mode="pseudo_code"``: move right <- theta - 1 iff the global best improved (lines 19–23).
    ``mode="proof"``: move down whenever a pass at theta is feasible, so theta decreases to the
    least feasible budget the bisection meets (proof of Lemma 2: theta~_u = W^_max); the result is
    the best pass at that final theta. The deadline is checked before every pass; when it has
    expired the search stops with what it has (``stopped``).
    """
    est: list[float] = rho_hat(inst)
    cache: dict[tuple[int, int, int], int] = {}
    best = SearchResult(horizon, None, None, None, 0)
    left, right = 1, horizon
    while left <= right:
        theta = (left + right) // 2  # line 6 (floored)
        m_theta, s_theta, k_theta = horizon, None, None
        fallback: tuple[Pass, int | None] | None = None  # a feasible pass whose makespan is T
        for kappa, rule_for in rules:
            if deadline.expired():
                best.stopped = True
                return best
            state = run_pass(inst, order, theta, rule_for, est, cache)
            best.passes += 1
            m = makespan(state, horizon)
            best.log.append((theta, kappa, m))
            if m < m_theta:  # lines 17–18
                m_theta, s_theta, k_theta = m, state, kappa
            elif state is not None and fallback is None and _feasible(state, horizon):
                fallback = (state, kappa)
        if mode == "proof":
            if s_theta is not None or fallback is not None:
                if s_theta is None and fallback is not None:
                    s_theta, k_theta = fallback
                best.makespan, best.state, best.theta, best.kappa = m_theta, s_theta, theta, k_theta
                right = theta - 1
            else:
                left = theta + 1
            continue
        if m_theta < best.makespan:  # lines 19–21
            best.makespan, best.state, best.theta, best.kappa = m_theta, s_theta, theta, k_theta
            right = theta - 1
        else:  # lines 22–23
            if best.state is None and fallback is not None:  # makespan T is feasible, not a failure
                best.state, best.theta, best.kappa = fallback[0], theta, fallback[1]
            left = theta + 1
    return best


@dataclass(frozen=True)
class SjfBcoParams(Params):
    """The choices of SJF-BCO (Algorithm 1 with FA-FFP, Alg. 2, and LBSGF, Alg. 3)."""

    lam: float = param(1.0, "Alg. 3 line 3: server-selection factor lambda_j >= 1, the same for "
                            "all j (Sec. 7.3, Fig. 7 varies it)")
    kappas: str | tuple[int, ...] = param(
        "distinct", "Alg. 1 line 7: for kappa = 1..n_g. 'all' = every kappa; 'distinct' = one "
                    "kappa per distinct G_j (the same passes and ties, digest A12); or the values")
    fa_variant: Literal["literal", "pack"] = param(
        "literal", "Alg. 2 line 4: 'literal' = the G_j available GPUs with least U (ties by "
                   "server, GPU; digest A1, equals LS); 'pack' = partially occupied servers first "
                   "(digest §4.2, not the paper's text)")
    bisection: Literal["pseudo_code", "proof"] = param(
        "pseudo_code", "Alg. 1 lines 19–23: 'pseudo_code' = right <- theta - 1 only when the "
                       "makespan improves; 'proof' = Lemma 2's proof, theta decreases while "
                       "feasible until theta~_u = W^_max")


def sjf_bco_search(inst: Instance, params: SjfBcoParams | None = None, *,
                   deadline: Deadline = NEVER, horizon: int | None = None) -> SearchResult:
    """Algorithm 1 (SJF-BCO) with FA-FFP for G_j <= kappa and LBSGF(lambda) otherwise."""
    params = SjfBcoParams() if params is None else params
    horizon = horizon or inst.horizon
    fa = least_u if params.fa_variant == "literal" else fa_pack
    lb = lbsgf(params.lam)

    def rule_for(k: int) -> Callable[[int], Rule]:
        return lambda j: fa if inst.jobs[j].gpus <= k else lb

    rules: list[tuple[int | None, Callable[[int], Rule]]] = [
        (k, rule_for(k)) for k in kappa_values(inst, params.kappas)]
    return bisection(inst, horizon, rules, sjf_order(inst), deadline=deadline,
                     mode=params.bisection)


def _outcome(inst: Instance, result: SearchResult, **info: Any) -> Outcome:
    """FEASIBLE with the best pass; TIME_LIMIT when the deadline stopped the search (schedule None
    when no pass had finished); INFEASIBLE when every pass failed and no schedule can end by the
    horizon (:func:`proven_infeasible`), UNKNOWN when every pass failed otherwise. A makespan equal
    to the horizon is feasible (verify accepts T_j <= T)."""
    stopped = {"stopped": "deadline"} if result.stopped else {}
    if not _feasible(result.state, inst.horizon):
        if not result.stopped and (why := proven_infeasible(inst)):
            return Outcome(None, SolveStatus.INFEASIBLE, info={"infeasible": why,
                                                               "passes": result.passes, **info})
        status = SolveStatus.TIME_LIMIT if result.stopped else SolveStatus.UNKNOWN
        return Outcome(None, status, info={"failed": not result.stopped, "passes": result.passes,
                                           **stopped, **info})
    assert result.state is not None
    times = [result.state.finish[j] for j in range(len(inst.jobs))]
    status = SolveStatus.TIME_LIMIT if result.stopped else SolveStatus.FEASIBLE
    return Outcome(result.state.schedule(), status, info={
        "theta": result.theta, "kappa": result.kappa, "passes": result.passes,
        "avg_jct": sum(times) / len(times), **stopped, **info})


def proven_infeasible(inst: Instance) -> str | None:
    """Why no schedule ends by the horizon T, or None: a valid lower bound on the makespan
    (LB_len, LB_area, LB_conf of digest §3.5) exceeds T (issue 15: a horizon too short is status
    ``infeasible``, not a failed heuristic). Called only after every pass failed."""
    from optsched.models.ring_contention import simple_lower_bound

    name, bound = max(simple_lower_bound(inst).items(), key=lambda kv: kv[1])
    if bound <= inst.horizon:
        return None
    return f"lower bound LB_{name} = {bound} > horizon T = {inst.horizon}: no schedule exists"


def sjf_bco(inst: Instance, params: SjfBcoParams, *, deadline: Deadline, seed: int = 0) -> Outcome:
    """SJF-BCO (Yu et al., Algorithm 1): smallest-job-first order, bisection on the per-GPU budget
    theta_u, a kappa loop choosing FA-FFP (Alg. 2) for G_j <= kappa and LBSGF (Alg. 3) otherwise.

    Parameters
    ----------
    inst
        The instance.
    params
        :class:`SjfBcoParams` (lambda, kappa values, FA-FFP reading, bisection reading).
    deadline
        Checked before every list-scheduling pass; when it expires the best pass so far is
        returned with status ``time_limit``.
    seed
        Unused (deterministic).

    Returns
    -------
    Outcome
        The best pass's schedule; ``info`` holds theta~_u, kappa and the number of passes.

    Notes
    -----
    Theorem 5 claims SJF-BCO is n_g Phi (u/l)-approximate, T <= n_g Phi (u/l) T*
    (:func:`theorem5_bound`); it holds on every instance measured (errata R4), although its proof
    does not: Lemma 2 (W^_max = theta~_u) fails (R1), Lemma 3 (T <= n_g W^_max) fails (R2),
    Lemma 4 (theta~_u <= Phi (u/l) theta*_u) fails (R3). FA-FFP as written is List-Scheduling (R5);
    Fig. 4's strict win is not reproduced (R6). The ``bisection`` parameter holds the two readings
    of lines 19–23 (pseudo-code vs the proof of Lemma 2).

    Examples
    --------
    >>> from optsched import generate, solve
    >>> solve(generate("ring_contention", "tiny", 0), "sjf_bco").status.value
    'feasible'
    """
    return _outcome(inst, sjf_bco_search(inst, params, deadline=deadline))


@dataclass(frozen=True)
class BaselineParams(Params):
    """The baselines of Sec. 7.2 (First-Fit, List-Scheduling, Random): one event-driven pass
    shape, three GPU choices."""

    gpus: Literal["first_fit", "least_u", "random"] = param(
        "first_fit", "Sec. 7.2: FF = first G_j available GPUs in (server, GPU) order [17]; LS = "
                     "least-loaded (least U) GPUs [17]; RAND = uniformly random available GPUs [19]")
    theta: Literal["bisection", "horizon"] = param(
        "bisection", "Sec. 7.2: 'theta_u^FF returned by the policy' — FF and LS run Alg. 1's "
                     "bisection without the kappa loop; RAND uses theta_u = T (one pass)")
    order: Literal["sjf", "arrival"] = param(
        "sjf", "job order of the pass: 'sjf' = SJF-BCO's smallest G_j first (Alg. 1 line 3); "
               "'arrival' = instance order (the baselines' own order, not stated)")


def baseline(inst: Instance, params: BaselineParams, *, deadline: Deadline,
             seed: int = 0) -> Outcome:
    """First-Fit, List-Scheduling or Random (Sec. 7.2), by ``params.gpus``.

    FF and LS run Alg. 1's theta_u bisection without the kappa loop (the deadline is checked
    before every pass; stopped early, the best pass so far is returned with status
    ``time_limit``); RAND is one pass at theta_u = T with ``numpy.random.default_rng(seed)``.

    Notes
    -----
    The paper claims no guarantee for its baselines; Fig. 4 claims SJF-BCO beats them (errata
    R6: not reproduced as a strict win). List-Scheduling equals SJF-BCO with kappa = n_g (R5).

    Examples
    --------
    >>> from optsched import generate, solve
    >>> solve(generate("ring_contention", "tiny", 0), "first_fit").info["params"]["gpus"]
    'first_fit'
    """
    order = sjf_order(inst) if params.order == "sjf" else list(range(len(inst.jobs)))
    if params.gpus == "random":
        rule = random_rule(np.random.default_rng(seed))
    else:
        rule = first_fit if params.gpus == "first_fit" else least_u
    if params.theta == "bisection":
        result = bisection(inst, inst.horizon, [(None, lambda j: rule)], order, deadline=deadline)
    else:
        state = run_pass(inst, order, inst.horizon, lambda j: rule)
        result = SearchResult(makespan(state, inst.horizon), state, inst.horizon, None, 1)
    return _outcome(inst, result)


FIRST_FIT = BaselineParams(gpus="first_fit")
LIST_SCHEDULING = BaselineParams(gpus="least_u")
RANDOM = BaselineParams(gpus="random", theta="horizon")
#: Readings (docs/readings.md): Lemma 2's proof for the bisection; instance order for the baselines.
SJF_BCO_PROOF = SjfBcoParams(bisection="proof")
FIRST_FIT_ARRIVAL = BaselineParams(gpus="first_fit", order="arrival")
LIST_SCHEDULING_ARRIVAL = BaselineParams(gpus="least_u", order="arrival")
RANDOM_ARRIVAL = BaselineParams(gpus="random", theta="horizon", order="arrival")


# ----------------------------------------------------------------------------------------------
# Exact, bounds, guarantee
# ----------------------------------------------------------------------------------------------

def upper_bound_schedule(inst: Instance, deadline: Deadline = NEVER) -> tuple[int, Schedule | None]:
    """Best of SJF-BCO, FF, LS and a contention-free longest-first list schedule: the horizon H
    of M1 (digest §3.3 "Horizon") and the MIP start of ``exact``.

    Each makespan is the checker's (``completion_times``), so H is the makespan of a schedule verify
    accepts and H >= OPT: M1's pruning to slots < H (and starts with t + rho^min <= H) keeps an
    optimum. A schedule verify rejects is skipped; with none, H = the instance horizon T. The
    searches are charged to ``deadline`` (a search stopped early still gives a valid H).
    """
    best: tuple[int, Schedule | None] = (inst.horizon, None)
    runs: list[Callable[[], Outcome]] = [
        lambda: sjf_bco(inst, SjfBcoParams(), deadline=deadline),
        lambda: baseline(inst, FIRST_FIT, deadline=deadline),
        lambda: baseline(inst, LIST_SCHEDULING, deadline=deadline),
        lambda: _longest_first(inst, deadline)]
    for run in runs:
        if deadline.expired() and best[1] is not None:
            break
        out = run()
        if out.schedule is None:
            continue
        try:
            m = max(completion_times(inst, out.schedule))
        except InfeasibleSchedule:
            continue
        if m < best[0] or best[1] is None:
            best = (m, out.schedule)
    return best


LIST_MAX_VECTORS = 20_000  # _longest_first only when a job's placement enumeration is this small


def _longest_first(inst: Instance, deadline: Deadline) -> Outcome:
    """The contention-free list schedule of the CP-SAT model's hint (longest solo duration first,
    one-server rings where they fit, split rings never overlapping; verified by its caller). At
    12-24 jobs of the small mix it is 3-6 slots shorter than SJF-BCO/FF/LS on most seeds, so the
    MILP's horizon, and its size, shrink. It enumerates product_s (min(O_s, G_j) + 1) vectors per
    job: skipped (no schedule) above :data:`LIST_MAX_VECTORS`, e.g. at paper scale."""
    from optsched.solvers.cp import _common
    from optsched.solvers.cp.ring_contention import list_schedule

    vectors = max(math.prod(min(cap, job.gpus) + 1 for cap in inst.servers) for job in inst.jobs)
    if vectors > LIST_MAX_VECTORS:
        return Outcome(None, SolveStatus.UNKNOWN, info={"skipped": f"{vectors} placement vectors"})
    try:
        found = list_schedule(inst, deadline)
    except _common.DeadlineReached:
        return Outcome(None, SolveStatus.TIME_LIMIT)
    return Outcome(None if found is None else found[0], SolveStatus.FEASIBLE)


def run_finish(inst: Instance, schedule: Schedule) -> list[int]:
    """T_j of a (start, placement) schedule by the event-driven simulation of digest §3.1."""
    n = len(inst.jobs)
    rem = [job.iterations for job in inst.jobs]
    finish = [0] * n
    t, running, waiting = 0, set[int](), sorted(range(n), key=lambda j: schedule.starts[j])
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


def count_placements(servers: Sequence[int], need: int) -> int:
    """|P_j| = #{c in Z_+^S : sum_s c_s = need, c_s <= O_s}, counted (not enumerated) by dynamic
    programming over the servers, so the size of M1 is known before anything is built."""
    ways = [1] + [0] * need
    for cap in servers:
        nxt = [0] * (need + 1)
        for total, w in enumerate(ways):
            if w:
                for k in range(min(cap, need - total) + 1):
                    nxt[total + k] += w
        ways = nxt
    return ways[need]


def exact_size(inst: Instance, horizon: int) -> int:
    """Upper estimate of the pulse model's binaries x[j,c,t,e]: per job, its one-server
    placements times ``horizon`` plus its split placements times ``horizon`` times the spread of
    its split durations (counted, not enumerated, so paper-scale instances cost nothing here)."""
    from optsched.models.ring_contention import duration

    pmax = inst.max_contention
    total = 0
    for j, job in enumerate(inst.jobs):
        one = sum(1 for cap in inst.servers if cap >= job.gpus)
        split = count_placements(inst.servers, job.gpus) - one
        if split > 0:
            lo = max(inst.min_servers(j), 2)
            spread = max(duration(inst, j, n, pmax) - duration(inst, j, n, 1) + 1
                         for n in range(lo, inst.max_servers(j) + 1))
            total += split * spread * horizon
        total += one * horizon
    return total


def _too_big(size: int, deadline: Deadline) -> Refusal | None:
    """Why the MILP of ``size`` pulse variables is not built (None: build it). The size cap holds
    whatever the deadline: above :data:`EXACT_MAX_VARS` variables or
    :data:`~optsched.solvers.highs.MAX_MODEL_TERMS` non-zeros (:data:`EXACT_TERMS_PER_VAR` per
    variable) M1 is never built, with or without a time limit; then the time-left check."""
    from optsched.solvers.highs import Refusal, refuse

    if size > EXACT_MAX_VARS:
        return Refusal(f"size cap: the MILP of ~{size} variables exceeds EXACT_MAX_VARS = "
                       f"{EXACT_MAX_VARS}", _late(size, deadline))
    return refuse(size * EXACT_TERMS_PER_VAR, "M1", _late(size, deadline))


def _late(size: int, deadline: Deadline) -> str | None:
    """The time-left check of :func:`_too_big` (None: M1 can be built in the time left)."""
    left = deadline.remaining()
    if left is None or size <= EXACT_VARS_PER_S * left:
        return None
    return (f"M1 of ~{size} variables needs ~{size / EXACT_VARS_PER_S:.3g} s to build and hand "
            f"to HiGHS, {left:.3g} s left")


def exact(inst: Instance, *, deadline: Deadline, seed: int = 0) -> Outcome:
    """Optimal makespan by the pulse MILP (:func:`~optsched.models.ring_contention.build_exact`,
    gap 0) with H = best heuristic makespan, C >= max(LB_len, LB_area, LB_conf) (digest §3.5),
    and the heuristic's schedule as HiGHS's MIP start. Outcome lower bound = max(MILP dual bound,
    that bound); the schedule returned is never worse than the heuristic's. Stage 1
    (:func:`_at_bound`, up to :data:`AT_BOUND_SHARE` of the time left) asks the same model for a
    schedule of makespan = that bound, and raises the bound by one when there is none. M3's theta* is not
    used: at 12-16 jobs it took 19-60 s for a bound no better than LB_area, which the model's
    tail-energy rows already imply.

    Everything is charged to ``deadline``: the heuristics behind H (:func:`upper_bound_schedule`,
    at most half of the time), building the MILP and its solve. The MILP is not built when its
    size (:func:`exact_size`, counted before any placement is enumerated) exceeds the size cap
    (:func:`_too_big`, whatever the deadline) or cannot be built in the time left
    (``info["skipped"]``): the heuristic's schedule is returned, with status ``time_limit`` when
    the time left ruled M1 out and ``feasible`` when only the cap did; it is also returned when
    HiGHS finds nothing better.
    """
    from optsched.models import ring_contention as rm

    if (why := proven_infeasible(inst)) is not None:  # no model can end by T: say so at once
        return Outcome(None, SolveStatus.INFEASIBLE, None, {"infeasible": why})
    ub, incumbent = upper_bound_schedule(inst, deadline.within(deadline.limit(0.5)))
    lb = max(max(rm.simple_lower_bound(inst).values()), 1)
    info: dict[str, Any] = {"horizon": ub}
    if lb >= ub and incumbent is not None:  # the heuristic is provably optimal
        return Outcome(incumbent, SolveStatus.OPTIMAL, float(ub),
                       {**info, "closed_by": "lower bound"}, model_objective=float(ub))
    size = exact_size(inst, ub)
    from optsched.solvers.highs import Refusal

    skipped = Refusal(late="deadline expired") if deadline.expired() else _too_big(size, deadline)
    if skipped is not None:
        return Outcome(incumbent, skipped.status(incumbent is not None), float(lb),
                       {**info, "skipped": str(skipped)})
    from optsched.solvers.highs import report_outcome, solve_model

    at_bound, lb = _at_bound(inst, lb, deadline.within(deadline.limit(AT_BOUND_SHARE)), seed, info)
    if at_bound is not None:
        return at_bound
    if lb >= ub and incumbent is not None:
        return Outcome(incumbent, SolveStatus.OPTIMAL, float(ub),
                       {**info, "closed_by": "lower bound"}, model_objective=float(ub))
    model = rm.build_exact(inst, ub, lower_bound=lb)
    if incumbent is not None:
        rm.set_start(model, inst, incumbent)
    rep = solve_model(model, deadline=deadline, seed=seed, warm_start=incumbent is not None)
    info.update(n_vars=model.nvariables(), n_constraints=model.nconstraints())
    out = report_outcome(rep, lambda: rm.extract_schedule(inst, model), lower_bound=float(lb),
                         fallback=incumbent, info=info)
    return _not_worse(inst, out, incumbent, ub)


AT_BOUND_SHARE = 0.4  # share of exact's time for the feasibility MILP at H = the lower bound


def _at_bound(inst: Instance, lb: int, deadline: Deadline, seed: int,
              info: dict[str, Any]) -> tuple[Outcome | None, int]:
    """Stage 1 of ``exact``: the pulse MILP with H = C = ``lb`` (the area/length bound), a pure
    feasibility problem with few pulses and tight tail-energy rows. On the small mix the optimum
    equals LB_area on most instances, and this finds it faster than the full model at H = the
    heuristic makespan; when it proves infeasibility, ``lb + 1`` is a valid bound for stage 2.
    Returns (the optimal Outcome or None, the bound for stage 2)."""
    from optsched.models import ring_contention as rm
    from optsched.solvers.highs import report_outcome, solve_model

    if deadline.expired() or _too_big(exact_size(inst, lb), deadline) is not None:
        return None, lb
    model = rm.build_exact(inst, lb, lower_bound=lb)
    rep = solve_model(model, deadline=deadline, seed=seed)
    info["at_bound"] = {"horizon": lb, "status": rep.status.value}
    if rep.status is SolveStatus.OPTIMAL:
        out = report_outcome(rep, lambda: rm.extract_schedule(inst, model), lower_bound=float(lb),
                             info={**info, "n_vars": model.nvariables(),
                                   "n_constraints": model.nconstraints()})
        return out, lb
    return None, lb + 1 if rep.status is SolveStatus.INFEASIBLE else lb


def _not_worse(inst: Instance, out: Outcome, incumbent: Schedule | None, ub: int) -> Outcome:
    """``out``, or the heuristic's schedule (makespan ``ub``) when ``out``'s verifies worse or not
    at all (status ``time_limit`` / ``feasible``, the MILP's bound kept)."""
    if incumbent is None or out.schedule is None or out.schedule is incumbent:
        return out
    try:
        value: float = max(completion_times(inst, out.schedule))
    except InfeasibleSchedule:
        value = math.inf
    if value <= ub:
        return out
    status = SolveStatus.TIME_LIMIT if out.status is SolveStatus.TIME_LIMIT else SolveStatus.FEASIBLE
    return Outcome(incumbent, status, out.lower_bound, {**out.info, "incumbent": "heuristic"})


def budget_bound(inst: Instance, deadline: Deadline = NEVER,
                 seed: int = 0) -> tuple[float | None, dict[str, Any]]:
    """Dual bound of M3 with contention-free durations (valid LB; digest §3.5)."""
    from optsched.models import ring_contention as rm
    from optsched.solvers.highs import solve_model

    model = rm.build_budget(inst, durations="lower")
    rep = solve_model(model, deadline=deadline, seed=seed)
    bound = rep.bound if rep.bound is not None else None
    if bound is not None:  # makespans are integral: the least integer the tolerance puts >= bound
        bound = slots_needed(bound, 1.0)
    return bound, {"m3_status": rep.status.value, "m3_bound": rep.bound, "m3_runtime_s": rep.runtime_s}


def lower_bound(inst: Instance, *, deadline: Deadline, seed: int = 0) -> Outcome:
    """max(LB_len, LB_area, LB_conf), and M3's dual bound when |J| * N <= BUDGET_MAX_VARS.

    Status (the rule of :class:`~optsched.result.Outcome`): INFEASIBLE when the bound exceeds the
    horizon T (no schedule exists; the bound is still reported); OPTIMAL when it is computed to
    its end (M3 solved to its optimum, or only the closed-form bounds apply because the instance is
    too big for M3); TIME_LIMIT when the deadline stopped M3 (its dual bound so far is still valid)
    or M3 did not run because the deadline had passed or ended without a proven optimum.
    """
    from optsched.models import ring_contention as rm

    parts = rm.simple_lower_bound(inst)
    value = max(parts.values())
    info: dict[str, Any] = dict(parts)
    status = SolveStatus.OPTIMAL
    if len(inst.jobs) * inst.n_gpus <= BUDGET_MAX_VARS:
        if deadline.expired():
            info["m3"] = "skipped: deadline expired"
            status = SolveStatus.TIME_LIMIT
        else:
            m3, m3_info = budget_bound(inst, deadline, seed)
            info.update(m3_info)
            if m3 is not None:
                value = max(value, m3)
            if m3_info["m3_status"] != SolveStatus.OPTIMAL.value:
                status = SolveStatus.TIME_LIMIT
    else:
        info["m3"] = f"skipped: |J| N = {len(inst.jobs) * inst.n_gpus} > BUDGET_MAX_VARS"
    if value > inst.horizon:  # the bound exceeds T: no schedule exists (the bound is kept)
        status, info["infeasible"] = SolveStatus.INFEASIBLE, f"bound {value:g} > horizon T"
    return Outcome(None, status, float(value), info)


def constants(inst: Instance) -> dict[str, float]:
    """Phi, u, l of Lemma 4 / Theorem 5 on the instance (digest §5.3), with rho_hat of §4.0.7."""
    from optsched.models.ring_contention import duration

    est = rho_hat(inst)
    lo, hi = [], []
    for j in range(len(inst.jobs)):
        lo.append(duration(inst, j, inst.min_servers(j)))
        n_max = inst.max_servers(j)
        hi.append(duration(inst, j, n_max, inst.max_contention if n_max >= 2 else 1))
    phi = max(h / l for h, l in zip(hi, lo))
    u = max(1.0, max(e / l for e, l in zip(est, lo)))
    low = min(e / h for e, h in zip(est, hi))
    return {"n_g": inst.max_gpus, "Phi": phi, "u": u, "l": low}


def theorem5_bound(inst: Instance) -> float:
    """Theorem 5's claimed ratio n_g Phi u / l."""
    c = constants(inst)
    return c["n_g"] * c["Phi"] * c["u"] / c["l"]


METHODS = (
    Method("exact", "exact", exact, description="pulse (start, end) time-indexed MILP with contention levels, warm start, C >= area/length bounds, gap 0"),
    cp_method("ring_contention"),
    Method("lower_bound", "bound", lower_bound,
           description="max(length, area, conflict) bounds and M3 (14)-(16) dual bound when small"),
    Method("sjf_bco", "algorithm", sjf_bco, params=SjfBcoParams(), guarantee=theorem5_bound,
           description="Algorithm 1: SJF order, theta bisection, kappa loop, FA-FFP / LBSGF"),
    Method("first_fit", "baseline", baseline, params=FIRST_FIT,
           description="First-Fit GPUs, SJF order, own theta bisection"),
    Method("list_scheduling", "baseline", baseline, params=LIST_SCHEDULING,
           description="least-loaded GPUs, SJF order, own theta bisection"),
    Method("random", "baseline", baseline, params=RANDOM,
           description="random available GPUs, theta = T"),
    Method("sjf_bco_proof", "algorithm", sjf_bco, params=SJF_BCO_PROOF, guarantee=theorem5_bound,
           description="SJF-BCO, bisection read from Lemma 2's proof (theta decreases while feasible)"),
    Method("first_fit_arrival", "baseline", baseline, params=FIRST_FIT_ARRIVAL,
           description="First-Fit GPUs, instance (arrival) order, own theta bisection"),
    Method("list_scheduling_arrival", "baseline", baseline, params=LIST_SCHEDULING_ARRIVAL,
           description="least-loaded GPUs, instance (arrival) order, own theta bisection"),
    Method("random_arrival", "baseline", baseline, params=RANDOM_ARRIVAL,
           description="random available GPUs, instance (arrival) order, theta = T"),
)
SPEC = Family(
    name="ring_contention",
    description="Yu et al. (002): ring-all-reduce jobs with communication contention, min makespan",
    problem=_problem,
    workloads=_workloads,
    methods=METHODS,
    default_method="sjf_bco",
    compare=CompareSpec(methods=("sjf_bco", "sjf_bco_proof", "first_fit", "list_scheduling",
                                 "random", "first_fit_arrival", "list_scheduling_arrival",
                                 "random_arrival"),
                        title='SJF-BCO vs baselines, paper scale (Fig. 4: 20 servers, T = 1200)',
                        ylabel='makespan / SJF-BCO makespan'),
    # issue 14 item 5: twice the tiny size, still proven in seconds by the new exact model
    ratio_preset="small",
)

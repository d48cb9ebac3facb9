"""ring_contention: SJF-BCO (Yu, Ji, Rajan, Liu, MobiHoc 2022, Algorithm 1) and the pass machinery it
shares with its baselines: the event-driven list-scheduling pass, FA-FFP (Alg. 2), LBSGF (Alg. 3),
the theta_u bisection, and Theorem 5's claimed ratio.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Literal, Sequence

import numpy as np

from optsched.deadline import Deadline
from optsched.method import Params, param
from optsched.problems.ring_contention import Instance, Schedule
from optsched.result import Outcome, SolveStatus
from optsched.tolerance import slack


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
              order: list[int], *, deadline: Deadline,
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
                   deadline: Deadline, horizon: int | None = None) -> SearchResult:
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
    from optsched.problems.ring_contention import simple_lower_bound

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
#: Readings (docs/readings.md): Lemma 2's proof for the bisection; instance order for the baselines.
SJF_BCO_PROOF = SjfBcoParams(bisection="proof")


def constants(inst: Instance) -> dict[str, float]:
    """Phi, u, l of Lemma 4 / Theorem 5 on the instance (digest §5.3), with rho_hat of §4.0.7."""
    from optsched.problems.ring_contention import duration

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

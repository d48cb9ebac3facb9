"""Hare's Algorithm 1 (Chen et al., HPDC'22, Sec. 5.2; digest §4.1) and the relaxations feeding it.

Algorithm 1 takes the relaxed starts x̂ of Hare_Sched_RL, sorts tasks by the "middle completion
time" H_i = x̂_i + ½ max_m T^c_i,m (line 3–4) and list-schedules them in that order, each on the
earliest-available GPU (line 12), after its arrival or its previous round's barrier (lines 7–10).

Every choice the paper leaves open is a field of :class:`HareParams`; ``hare``, ``hare_subsets`` and
``hare_eft`` are the one function :func:`hare` registered with different parameters. This module
imports neither Pyomo nor HiGHS at import time: the models and ``solvers.highs`` are imported inside
the functions that solve a relaxation.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from itertools import combinations
from typing import TYPE_CHECKING, Any, Literal, Sequence

import numpy as np

from optsched import tolerance
from optsched.deadline import Deadline
from optsched.method import Params, param
from optsched.problems.hetero_gpu import Instance, Schedule, TaskRun
from optsched.result import Outcome, SolveStatus
from optsched.solvers.guard import guard

if TYPE_CHECKING:
    import pyomo.environ as pyo


#: Above this many tasks ``hare`` takes x̂ from the aggregate LP instead of the RL MILP
#: (the default of :attr:`HareParams.rl_max_tasks`).
RL_MAX_TASKS = 30
#: Seconds per task kept back from the relaxation's deadline for Algorithm 1's list-scheduling pass
#: and the registry's verify (measured at the paper preset: ~0.4 s + ~0.2 s for 8,500 tasks on the
#: shared 2-core machine under load).
LIST_S_PER_TASK = 7e-5
#: Building a model and handing it to HiGHS: about this many non-zeros per second, plus a fixed
#: overhead (measured on the shared 2-core machine under load: 8.5k/s for the RL, 14k/s for the
#: exact model with 40 tasks on 8 GPUs; the smaller figure is used).
BUILD_TERMS_PER_S = 8_000.0
BUILD_OVERHEAD_S = 0.2

Relaxation = Literal["paper_full", "subsets", "aggregate_lp"]
GpuChoice = Literal["earliest_available", "earliest_start", "earliest_finish"]
Tie = Literal["fastest", "index"]
RELAXATIONS: tuple[str, ...] = ("paper_full", "subsets", "aggregate_lp")
GPU_CHOICES: tuple[str, ...] = ("earliest_available", "earliest_start", "earliest_finish")
TIES: tuple[str, ...] = ("fastest", "index")


def check_choice(name: str, value: Any, choices: Sequence[str]) -> None:
    """ValueError naming the parameter when ``value`` is not one of ``choices``."""
    if value not in choices:
        raise ValueError(f"{name}: must be one of {', '.join(choices)}, got {value!r}")


@dataclass(frozen=True)
class HareParams(Params):
    """The choices of Algorithm 1 (paper Sec. 5.2; digest §4.1, §4.2); the defaults are the
    algorithm as printed, with the digest's tie rule where the paper is silent.

    The registered methods: ``hare`` = ``HareParams()``, ``hare_subsets`` =
    ``HareParams(relaxation="subsets")``, ``hare_eft`` =
    ``HareParams(gpu_choice="earliest_finish", tie="index")``, ``hare_est`` =
    ``HareParams(gpu_choice="earliest_start")`` (the earliest-start reading of line 12 in Theorem
    4's proof, argmin max(t_i, φ_m), ties to the fastest GPU) and ``hare_est_index`` =
    ``HareParams(gpu_choice="earliest_start", tie="index")``.
    """

    relaxation: Relaxation = param(
        "paper_full", "Alg. 1 line 3 'solve Hare_Sched_RL -> x̂': (9) once per GPU on the full task "
                      "set, as printed ('paper_full'); (9) on every prefix, added by separation "
                      "('subsets', (9S): what Lemma 2's proof uses, errata H1); or the aggregate "
                      "LP with HSSW cuts ('aggregate_lp', toolkit, digest §3.5)")
    gpu_choice: GpuChoice = param(
        "earliest_available", "Alg. 1 line 12: m* = argmin_m φ_m as printed "
                              "('earliest_available'); argmin_m max(t_i, φ_m) ('earliest_start'); "
                              "argmin_m max(t_i, φ_m) + T^c_i,m ('earliest_finish', digest §4.2, "
                              "not in the paper, no bound claimed)")
    tie: Tie = param(
        "fastest", "line 12 ties (the paper is silent): the smaller T^c_i,m, then the lower GPU "
                   "index ('fastest', digest §4.1 [guess]) or the lower index ('index', literal)")
    rl_max_tasks: int = param(
        RL_MAX_TASKS, "not in the paper (it does not say how it solved the RL for thousands of "
                      "tasks): above this many tasks x̂ comes from the aggregate LP")

    def __post_init__(self) -> None:
        check_choice("relaxation", self.relaxation, RELAXATIONS)
        check_choice("gpu_choice", self.gpu_choice, GPU_CHOICES)
        check_choice("tie", self.tie, TIES)
        if isinstance(self.rl_max_tasks, bool) or not isinstance(self.rl_max_tasks, int):
            raise ValueError(f"rl_max_tasks: must be an integer, got {self.rl_max_tasks!r}")


def hare(instance: Instance, params: HareParams, *, deadline: Deadline, seed: int = 0) -> Outcome:
    """Hare's Algorithm 1: relaxation -> H_i -> sort -> GPU at line 12 (paper Sec. 5.2; digest §4.1).

    Parameters
    ----------
    instance
        The Hare_Sched instance.
    params
        The relaxation and the line-12 rule (:class:`HareParams`). Above ``params.rl_max_tasks``
        tasks the RL forms are replaced by the aggregate LP (``info["relaxation"]``;
        ``info["requested_relaxation"]`` keeps the request); an RL that finds nothing in time or is
        too big to build in the time left falls back to it too (``info["fallback"]``).
    deadline
        Bounds the whole call: the relaxation's solves and cut loop stop at it (keeping the last
        x̂), with time kept back for the list-scheduling pass (:data:`LIST_S_PER_TASK`).
    seed
        HiGHS's random seed (Algorithm 1 itself is deterministic).

    Returns
    -------
    Outcome
        A complete schedule, always; status ``feasible``, or ``time_limit`` when the deadline cut
        the relaxation short (``info["stopped"]`` says where). ``info`` also counts the tasks that
        violate Lemma 2 (10) and Lemma 3 (14) (:func:`lemma_checks`).

    Notes
    -----
    Theorem 4 claims ALG <= α(2+α) OPT, with α of Lemma 3 (:attr:`Instance.alpha`); it is the
    registered guarantee of ``hare`` and ``hare_subsets``. It fails with the relaxation as printed
    (errata H1 in docs/errata.md: hare/OPT = 3.797 > 3 with α = 1; the subset form (9S) repairs
    that instance); Lemma 2's proof puts Algorithm 1's assignment into (9) (errata H2). At paper
    scale the printed line 12 loses to every baseline (errata H3); ``hare_eft`` (earliest finish,
    digest §4.2, no claim) does not.

    Examples
    --------
    The three registered readings on one tiny instance (the same function, other parameters):

    >>> from optsched import generate, solve
    >>> inst = generate("hetero_gpu", "tiny", 0)
    >>> res = solve(inst, "hare")
    >>> res.status.value, res.objective, res.info["params"]["gpu_choice"]
    ('feasible', 110.0, 'earliest_available')
    >>> [solve(inst, name).objective for name in ("hare_subsets", "hare_eft")]
    [110.0, 90.0]
    """
    inst = instance
    requested = params.relaxation
    relaxation = requested
    if relaxation != "aggregate_lp" and len(inst.tasks) > params.rl_max_tasks:
        # the RL has O(|D|^2 |M|) linearisation variables: beyond rl_max_tasks only the LP scales
        relaxation = "aggregate_lp"
    relax_by = reserve(deadline, LIST_S_PER_TASK * len(inst.tasks))
    timed_out = False
    if relaxation == "aggregate_lp":
        lp = aggregate_lp(inst, deadline=relax_by, seed=seed)
        xhat, info, timed_out = lp.xhat, lp.info, lp.timed_out
        info["requested_relaxation"] = requested
    else:
        xhat, info = rl_starts(inst, relaxation, deadline=relax_by, seed=seed)
        timed_out = "stopped" in info
        if not xhat:  # the RL found nothing within the time limit: fall back to the LP
            lp = aggregate_lp(inst, deadline=relax_by, seed=seed)
            xhat = lp.xhat
            info["fallback"] = lp.info
            timed_out = timed_out or lp.timed_out
    schedule = list_schedule(inst, xhat, params)
    info.update(lemma_checks(inst, schedule, xhat))
    return Outcome(schedule, SolveStatus.TIME_LIMIT if timed_out else SolveStatus.FEASIBLE, info=info)


def reserve(deadline: Deadline, seconds: float) -> Deadline:
    """``deadline`` moved ``seconds`` earlier (time kept for a step that must follow)."""
    return deadline if deadline.end is None else Deadline(deadline.end - seconds)


def build_seconds(size: dict[str, int]) -> float:
    """Estimated seconds to build a model of ``size`` (``terms``) and hand it to HiGHS: what
    hetero_gpu gives :func:`~optsched.solvers.guard.guard`, the one size guard (the size cap,
    whatever the deadline, and this estimate against the time left)."""
    return BUILD_OVERHEAD_S + size["terms"] / BUILD_TERMS_PER_S


def list_schedule(inst: Instance, xhat: dict, params: HareParams = HareParams(), *,
                  phi0: Sequence[float] | None = None, backfill: bool = False) -> Schedule:
    """Algorithm 1, lines 1–18, given x̂ (digest §4.1); :func:`list_runs` as a :class:`Schedule`."""
    runs, _ = list_runs(inst, xhat, params, phi0=phi0, backfill=backfill)
    return Schedule(tuple(TaskRun(*run) for run in runs))


def list_runs(inst: Instance, xhat: dict, params: HareParams = HareParams(), *,
              phi0: Sequence[float] | None = None, backfill: bool = False,
              prices: GpuPrices | None = None
              ) -> tuple[list[tuple[int, int, int, int, float]], float]:
    """Algorithm 1, lines 1–18, given x̂ (digest §4.1): the runs ``(n, r, k, gpu, start)`` and
    their cost ``sum_n w_n C_n`` as the placement computed it (``verify`` recomputes it from the
    runs; :func:`~optsched.solvers.hetero_gpu.search.improve` verifies every schedule it keeps).

    Parameters
    ----------
    xhat
        Relaxed start x̂_i of every task ``(n, r, k)``.
    params
        ``gpu_choice`` and ``tie``: the rule of line 12 (:class:`HareParams`).
    phi0
        Initial GPU availability φ_m (line 2; zeros in the paper).
    backfill
        Not in the paper (issue 19's improvement): a task may also start in an idle gap left
        earlier on a GPU (:class:`Gaps`) when it fits there and finishes earliest there
        (earliest finish over gaps and φ_m); False is line 12-13 as the rule says.
    prices
        Not in the paper (issue 19's improvement): line 12 takes the GPU (or, with ``backfill``,
        the gap) minimising w_n x finish + the price of the GPU-time the task holds
        (:class:`GpuPrices`, e.g. a bound's capacity duals), instead of ``params``' rule.

    Sort key (H, a, n, r, k); a precedence-guarded ready queue replaces the literal loop so that a
    round is never placed before its predecessor (identical to the literal loop whenever π is
    precedence-consistent, which the RL's (7) guarantees for per-job times; digest §4.1).
    """
    tc, ts = inst.tc, inst.ts
    phi = np.zeros(inst.n_gpus) if phi0 is None else np.array(phi0, dtype=float)
    hmax = tc.max(axis=1) / 2

    def key(n, r, k):
        return (xhat[n, r, k] + hmax[n], inst.jobs[n].arrival, n, r, k)  # line 3: H_i

    ready = [key(n, 0, k) for n, j in enumerate(inst.jobs) for k in range(j.tasks_per_round)]
    heapq.heapify(ready)
    barrier = [j.arrival for j in inst.jobs]  # t_i of the current round of each job (lines 7–10)
    round_end = [0.0] * len(inst.jobs)
    left = [j.tasks_per_round for j in inst.jobs]
    runs: list[tuple[int, int, int, int, float]] = []
    cost = 0.0
    gaps = Gaps(float(tc.min())) if backfill else None
    while ready:
        _, _, n, r, k = heapq.heappop(ready)  # line 5, in π order
        t = barrier[n]
        score = None if prices is None else prices.scorer(inst.jobs[n].weight, tc[n])
        if score is None:
            g = _choose_gpu(phi, tc[n], t, params.gpu_choice, params.tie)  # line 12
        else:
            g = int(np.argmin(score(np.arange(len(phi)), np.maximum(phi, t))))
        start = max(t, phi[g])  # line 13
        if gaps is not None:
            start, g = gaps.place(phi, tc[n], t, start, g, score)
        else:
            phi[g] = start + tc[n, g]  # line 16: sync does not block the GPU
        round_end[n] = max(round_end[n], start + tc[n, g] + ts[n, g])
        runs.append((n, r, k, int(g), float(start)))
        left[n] -= 1
        if left[n] == 0 and r + 1 < inst.jobs[n].rounds:  # round r complete: release round r+1
            barrier[n], round_end[n] = round_end[n], 0.0
            left[n] = inst.jobs[n].tasks_per_round
            for kk in range(left[n]):
                heapq.heappush(ready, key(n, r + 1, kk))
        elif left[n] == 0:  # last round complete: C_n ((6))
            cost += inst.jobs[n].weight * round_end[n]
    return runs, cost


@dataclass(frozen=True)
class GpuPrices:
    """A price per GPU-slot of each GPU over time (slots of length ``delta``, none past the
    last): the GPU-time price :func:`list_runs` may weigh at line 12, e.g. the capacity prices
    of :func:`~optsched.solvers.hetero_gpu.colgen.colgen_bound` (one row per GPU class)."""

    delta: float
    cum: np.ndarray       # [rows, slots + 1] prefix sums of the price per GPU-slot
    row: np.ndarray       # [n_gpus] the row of each GPU

    def held(self, gpus: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
        """The price of holding GPU ``gpus[i]`` during [start[i], end[i])."""
        return self._at(gpus, end) - self._at(gpus, start)

    def _at(self, gpus: np.ndarray, x: np.ndarray) -> np.ndarray:
        slots = self.cum.shape[1] - 1
        pos = np.minimum(np.asarray(x) / self.delta, slots)   # times are >= 0
        i = np.minimum(pos.astype(np.int64), slots - 1)
        at = self.row[gpus] * (slots + 1) + i
        flat = self.cum.reshape(-1)
        return flat[at] + (pos - i) * (flat[at + 1] - flat[at])

    def scaled(self, factor: float) -> GpuPrices:
        """These prices times ``factor``."""
        return GpuPrices(self.delta, factor * self.cum, self.row)

    def scorer(self, weight: float, tc_row: np.ndarray) -> Score:
        """The :class:`Score` of a task with compute times ``tc_row`` of a job of ``weight``."""
        return Score(self, weight, tc_row)


@dataclass(frozen=True)
class Score:
    """``score(gpus, starts)``: weight x finish + the price of the GPU-time a task holds, on GPU
    ``gpus[i]`` from ``starts[i]`` (:class:`GpuPrices`; prices >= 0, so the score is at least
    weight x finish)."""

    prices: GpuPrices
    weight: float
    tc_row: np.ndarray

    def __call__(self, gpus: np.ndarray, starts: np.ndarray) -> np.ndarray:
        end = starts + self.tc_row[gpus]
        return self.weight * end + self.prices.held(gpus, starts, end)


class Gaps:
    """Idle gaps [lo, hi) left on the GPUs by :func:`list_schedule` with ``backfill``, as numpy
    arrays (one vectorised scan per task). Gaps shorter than the instance's shortest compute time
    are not kept (nothing fits); a used gap is split into what is left on either side.
    """

    def __init__(self, shortest: float):
        self.shortest = shortest
        self.lo, self.hi = np.zeros(64), np.full(64, -np.inf)
        self.gpu = np.zeros(64, dtype=np.int64)
        self.size = 0

    def place(self, phi: np.ndarray, tc_row: np.ndarray, ready: float, start: float,
              g: int, score: Score | None = None) -> tuple[float, int]:
        """Where the task goes: the earliest finish (least ``score(gpus, starts)`` when given)
        over the gaps it fits in and the line-12 choice ``(start, g)``; updates φ and the gaps."""
        lo, hi, gpu = self.lo[:self.size], self.hi[:self.size], self.gpu[:self.size]
        x = np.maximum(lo, ready)
        end = x + tc_row[gpu]
        end[end > hi] = np.inf
        here = start + tc_row[g]
        if score is not None and self.size:
            here = float(score(np.array([g]), np.array([start]))[0])
            fit = np.flatnonzero(score.weight * end < here)   # the others cannot score less
            end[:] = np.inf
            end[fit] = score(gpu[fit], x[fit])
        i = int(np.argmin(end)) if self.size else -1
        if i < 0 or not end[i] < here:
            self._add(g, float(phi[g]), start)
            phi[g] = start + tc_row[g]
            return start, g
        m, a, b, xi = int(gpu[i]), float(lo[i]), float(hi[i]), float(x[i])
        self.hi[i] = -np.inf  # used: split into [a, x) and [x + T^c, b)
        self._add(m, a, xi)
        self._add(m, xi + float(tc_row[m]), b)
        return xi, m

    def _add(self, m: int, lo: float, hi: float) -> None:
        if hi - lo < self.shortest:
            return
        if self.size == len(self.lo):
            keep = self.hi[:self.size] > -np.inf  # compact, then grow
            n = int(keep.sum())
            cap = max(64, 2 * n + 2)
            self.lo = np.concatenate([self.lo[:self.size][keep], np.zeros(cap - n)])
            self.hi = np.concatenate([self.hi[:self.size][keep], np.full(cap - n, -np.inf)])
            self.gpu = np.concatenate([self.gpu[:self.size][keep], np.zeros(cap - n, np.int64)])
            self.size = n
        self.lo[self.size], self.hi[self.size], self.gpu[self.size] = lo, hi, m
        self.size += 1


def _choose_gpu(phi: np.ndarray, tc_row: np.ndarray, ready: float, choice: str, tie: str) -> int:
    """Line 12: the GPUs minimising the rule's score, then ``tie`` among them."""
    if choice == "earliest_finish":
        score = np.maximum(phi, ready) + tc_row
    elif choice == "earliest_start":
        score = np.maximum(phi, ready)
    else:
        score = phi
    candidates = np.flatnonzero(score == score.min())
    if tie == "index" or len(candidates) == 1:
        return int(candidates[0])
    return int(candidates[np.argmin(tc_row[candidates])])


def rl_starts(inst: Instance, mode: str = "paper_full", *, deadline: Deadline, seed: int = 0,
              max_rounds: int = 50) -> tuple[dict, dict]:
    """Solve Hare_Sched_RL (models.hetero_gpu.build_rl) and return (x̂, info).

    ``mode="subsets"`` adds violated prefix inequalities (9S) in an outer loop of MIP solves: per
    GPU, sort the tasks the RL put there by x̂ + T^c and check every prefix (Queyranne's
    separation; digest §3.5), until none is violated. Every solve takes what is left of
    ``deadline``; the loop stops when it has expired (``info["stopped"]``), keeping the last
    solution. An RL too big to build in the time left (:func:`~optsched.solvers.guard.guard`) is not built. x̂ is empty
    when no solve found a solution.
    """
    from optsched.models import hetero_gpu as hm
    from optsched.solvers.highs import solve_model

    info: dict[str, Any] = {"relaxation": mode, "rl_solves": 0}
    size = hm.rl_size(inst, mode)
    refusal = guard(size["terms"], "Hare_Sched_RL", deadline, build_seconds(size))
    if refusal:
        info["stopped"] = f"size guard: {refusal}"
        return {}, info
    m = hm.build_rl(inst, mode)
    rep = None
    for _ in range(max_rounds):
        if deadline.expired():
            info["stopped"] = f"deadline: after {info['rl_solves']} RL solves"
            break
        rep = solve_model(m, deadline=deadline, seed=seed)
        info.update(rl_solves=info["rl_solves"] + 1, rl_status=rep.status.value,
                    rl_objective=rep.objective, rl_bound=rep.bound)
        if rep.status is SolveStatus.TIME_LIMIT:
            info["stopped"] = f"deadline: RL solve {info['rl_solves']} stopped by the time limit"
        if mode != "subsets" or not rep.has_solution or not _add_violated_prefixes(m, inst):
            break
    if rep is None or not rep.has_solution:
        return {}, info
    return hm.relaxed_starts(inst, m), info


def _add_violated_prefixes(m: pyo.ConcreteModel, inst: Instance) -> bool:
    from optsched.models import hetero_gpu as hm

    x = hm.relaxed_starts(inst, m)
    added = False
    for g, on_g in enumerate(hm.relaxed_assignment(inst, m)):
        on_g.sort(key=lambda i: x[i] + inst.tc[i[0], g])
        for size in range(3, len(on_g) + 1):
            prefix = on_g[:size]
            lhs = sum(inst.tc[i[0], g] * x[i] for i in prefix)
            rhs = sum(inst.tc[i[0], g] * inst.tc[j[0], g] for i, j in combinations(prefix, 2))
            if not tolerance.at_least(lhs, rhs):
                hm.add_subset_cut(m, inst, prefix, g)
                added = True
    return added


@dataclass
class LpBound:
    """What :func:`aggregate_lp` found.

    Attributes
    ----------
    xhat
        x̂_i of every task: its round's X̂ from the last LP solved (the arrival when none was).
    value
        A valid lower bound: the last LP solved to optimality (every such LP is a relaxation), or
        ``sum_n w_n LBC_n`` (:func:`optsched.models.hetero_gpu.completion_lower_bounds`) when none
        was.
    converged
        True when no HSSW cut was violated: ``value`` is the LP optimum over every cut.
    timed_out
        True when the deadline stopped the loop (``info["stopped"]`` says where).
    """

    xhat: dict
    value: float
    converged: bool
    timed_out: bool
    info: dict = field(default_factory=dict)


def aggregate_lp(inst: Instance, *, deadline: Deadline, seed: int = 0, max_rounds: int = 60,
                 cuts_per_round: int = 8) -> LpBound:
    """Cutting-plane solve of models.hetero_gpu.build_aggregate_lp (:class:`LpBound`).

    The model is built once and grows by the cuts found; each round solves it with the HSSW cuts
    so far (every such LP is a relaxation, so its value is a valid lower bound), then separates:
    sort rounds by X̂ + p and check every prefix (the HSSW separation; a round's K_n identical
    tasks enter a prefix together, since the violation is concave in how many of them are taken).
    x̂_i of a task is its round's X̂. Every solve takes what is left of ``deadline``, and the loop
    stops once it has expired, or when the grown LP cannot be handed to HiGHS in the time left
    (:func:`~optsched.solvers.guard.guard`: the hand-off is not covered by HiGHS's time limit), keeping the last LP
    solved to optimality; ``max_rounds`` caps it.
    """
    from optsched.models import hetero_gpu as hm
    from optsched.solvers.highs import solve_model

    info: dict[str, Any] = {"relaxation": "aggregate_lp", "lp_solves": 0, "converged": False,
                            "cuts": 0}
    value: float | None = None
    starts: dict[tuple[int, int], float] = {}
    timed_out = False
    m = None
    cuts: list[list[tuple[int, int]]] = []
    for _ in range(max_rounds):
        size = hm.aggregate_lp_size(inst, cuts)
        refusal = None if deadline.expired() else guard(size["terms"], "the aggregate LP",
                                                        deadline, build_seconds(size))
        if deadline.expired() or refusal is not None:
            timed_out = refusal is None or refusal.late is not None
            why = "expired" if refusal is None else f"size guard: {refusal}"
            info["stopped"] = (f"{'deadline' if timed_out else 'size cap'}: after "
                               f"{info['lp_solves']} LP solves, {info['cuts']} cuts ({why})")
            break
        if m is None:
            m = hm.build_aggregate_lp(inst)
        rep = solve_model(m, deadline=deadline, seed=seed)  # a fresh HiGHS on the grown model
        info["lp_solves"] += 1
        if rep.status is not SolveStatus.OPTIMAL:
            if rep.status is SolveStatus.TIME_LIMIT:
                timed_out = True
                info["stopped"] = f"deadline: LP solve {info['lp_solves']} stopped by the time limit"
            if rep.has_solution and not starts:  # not a bound, but the only x̂ there is
                starts = hm.round_starts(m)
            break
        value = rep.objective
        starts = hm.round_starts(m)
        new = _violated_hssw(inst, starts, cuts_per_round)
        if not new:
            info["converged"] = True
            break
        for subset in new:
            hm.add_hssw_cut(m, inst, subset)
        cuts.extend(new)
        info["cuts"] += len(new)
    if value is None:  # no LP solved: the completion bound is still valid
        value = float(sum(j.weight * c for j, c in zip(inst.jobs, hm.completion_lower_bounds(inst))))
        info["bound"] = "completion_lower_bounds"
    xhat = {(n, r, k): starts.get((n, r), inst.jobs[n].arrival) for n, r, k in inst.tasks}
    return LpBound(xhat, value, info["converged"], timed_out, info)


def _violated_hssw(inst: Instance, starts: dict, limit: int) -> list[list[tuple[int, int]]]:
    groups = sorted(starts, key=lambda g: (starts[g] + min(inst.jobs[g[0]].train_time), g))
    p = np.array([min(inst.jobs[n].train_time) for n, _ in groups])
    c = np.array([inst.jobs[n].tasks_per_round for n, _ in groups], dtype=float)
    x = np.array([starts[g] for g in groups])
    lhs = np.cumsum(c * p * x)
    rhs = np.cumsum(c * p) ** 2 / (2 * inst.n_gpus) - np.cumsum(c * p * p) / 2
    violation = rhs - lhs
    bad = np.flatnonzero([not tolerance.at_least(a, b) for a, b in zip(lhs, rhs)])
    if len(bad) == 0:
        return []
    worst = bad[np.argsort(-violation[bad])]
    chosen = sorted(set(worst[:1]) | set(bad[np.linspace(0, len(bad) - 1, limit).astype(int)]))
    return [groups[: i + 1] for i in chosen]


def lemma_checks(inst: Instance, schedule: Schedule, xhat: dict) -> dict:
    """Count tasks violating Lemma 2 (10) and Lemma 3 (14) on a run of Algorithm 1 (digest §5.5).

    ``schedule.runs`` must be in Algorithm 1's processing order π (as :func:`list_schedule` returns
    it). For task π(j) on its GPU m: Lemma 2 claims the load placed on m so far, its own task
    included, is <= 2 H_π(j); Lemma 3 claims the idle time on m before it, x̃ - (earlier load on m),
    is <= α H_π(j).
    """
    load = [0.0] * inst.n_gpus
    lemma2 = lemma3 = 0
    hmax = inst.tc.max(axis=1) / 2
    for run in schedule.runs:
        h = xhat[run.key] + hmax[run.job]
        lemma3 += run.start - load[run.gpu] > inst.alpha * h + 1e-9
        load[run.gpu] += inst.tc[run.job, run.gpu]
        lemma2 += load[run.gpu] > 2 * h + 1e-9
    return {"lemma2_violations": int(lemma2), "lemma3_violations": int(lemma3)}


def theorem4_bound(inst: Instance) -> float:
    """Theorem 4's claimed ratio α(2+α) (reading-dependent: errata H1).

    α of Lemma 3 (the worst per-task speed ratio across GPUs), evaluated on the instance.
    """
    return inst.alpha * (2 + inst.alpha)

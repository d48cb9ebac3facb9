"""hetero_gpu baselines — the four schemes Hare is compared against (paper Sec. 7.1; digest §6.4).

All four are online and event-driven: they see a job only from its arrival ``a_n`` on, and decide
at events (arrivals, GPUs or rounds becoming free) taken from a heap, never by time-stepping. Hare
itself is offline (Algorithm 1 sees every arrival in advance), which favours Hare, as in the paper.

Methods
-------
gavel_fifo
    Gavel's heterogeneity-aware FIFO: strict arrival order with head-of-line blocking, the head job
    gets the ``K_n`` idle GPUs on which it is fastest; non-preemptive.
srtf
    Shortest remaining (heterogeneity-oblivious) time first, preemptive at round boundaries, with
    backfilling; unweighted by default.
sched_homo
    Zhang et al. (MobiHoc'20, the paper's [47]): weighted shortest processing time computed as if
    the GPUs were homogeneous, backfilling, GPUs chosen obliviously; non-preemptive.
sched_allox
    AlloX (EuroSys'20, the paper's [24]): one job per GPU, the job's ``K_n`` tasks of a round run
    back to back on that GPU; jobs are matched to (GPU, position) slots by a min-cost bipartite
    matching at every event; non-preemptive.

Execution model (the semantics of :mod:`optsched.problems.hetero_gpu`, digest §3.2 and §4.4)
-----------------------------------------------------------------------------------------------
- **Switching overhead is 0.** The digest's recipes charge ``σ_n`` per job start; Hare_Sched and
  ``verify`` have no overhead term, so every method here (like Hare) is charged none.
- **Gang rounds** (gavel_fifo, srtf, sched_homo: the strict scale-fixed synchronisation of digest
  §4.4). A job runs on a GPU list ``A`` with ``|A| = K_n``. Round ``r`` starts at ``s_r``; its
  task ``k`` starts on ``A[k]`` at ``s_r``. The round lasts ``ρ = max_{m∈A}(T^c_{n,m} + T^s_{n,m})``
  and the job holds all of ``A`` for the whole round (fast GPUs idle while the slowest finishes);
  the next round starts at ``s_r + ρ`` (later for SRTF if the job is suspended at that boundary).
- **More tasks than GPUs.** If ``K_n > |ℳ|`` (the generators never produce it; the data allows it)
  a gang job takes every GPU and runs a round's ``K_n`` tasks in ``ceil(K_n/|ℳ|)`` back-to-back
  waves: task ``k`` runs on ``A[k mod |ℳ|]`` at ``s_r + ⌊k/|ℳ|⌋·max_{m∈A} T^c_{n,m}``, and ``ρ`` is
  the latest finish of a task of the round minus ``s_r``.
- **AlloX rounds**: on its single GPU ``m``, task ``k`` of round ``r`` starts at
  ``s_r + k·T^c_{n,m}``; the round ends at ``s_r + K_n·T^c_{n,m} + T^s_{n,m}``, when the next round
  starts. The job keeps the GPU until it completes.

All four are deterministic; sched_homo's random GPU choice (and srtf's optional one) draws from
``numpy.random.default_rng(seed)``. The choices are parameters (:class:`SrtfParams`,
:class:`SchedHomoParams`). Every simulation checks the call's deadline at each event and, once it
has expired, stops without a schedule (status ``time_limit``); at the paper's scale (200 jobs,
160 GPUs, ~8.5k tasks) each baseline runs in well under a second. scipy (sched_allox's matching)
is imported when first used.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Callable, Literal

import numpy as np

from optsched.deadline import Deadline
from optsched.method import Params, param
from optsched.problems.hetero_gpu import Instance, Schedule, TaskRun
from optsched.result import Outcome, SolveStatus
from optsched.solvers.hetero_gpu.algorithm import check_choice

GpuPick = Literal["index", "random"]
GPU_CHOICES: tuple[str, ...] = ("index", "random")
#: sched_allox prunes its matching's slot columns when the full matrix has more entries than this.
PRUNE_ABOVE = 100_000


@dataclass(frozen=True)
class SrtfParams(Params):
    """The choices of the SRTF baseline (paper Sec. 7.1; the recipe is digest §6.4's)."""

    weighted: bool = param(
        False, "Sec. 7.1 'always schedules jobs that could complete earlier': shortest remaining "
               "time rem_n (False) or rem_n / w_n (True; digest §6.4 option)")
    gpu_choice: GpuPick = param(
        "index", "digest §6.4 (the paper is silent): a job claims idle GPUs first, the lowest "
                 "index ('index') or at random ('random', numpy default_rng(seed))")

    def __post_init__(self) -> None:
        check_choice("gpu_choice", self.gpu_choice, GPU_CHOICES)
        if not isinstance(self.weighted, bool):
            raise ValueError(f"weighted: must be True or False, got {self.weighted!r}")


@dataclass(frozen=True)
class SchedHomoParams(Params):
    """The choice of the Sched_Homo baseline ([47]; paper Sec. 7.1; digest §6.4)."""

    gpu_choice: GpuPick = param(
        "random", "Sec. 7.1: [47] treats the GPUs as homogeneous, so it picks idle GPUs "
                  "obliviously: uniformly at random ('random', numpy default_rng(seed); the "
                  "generators lay GPUs out by type) or the lowest indices ('index')")

    def __post_init__(self) -> None:
        check_choice("gpu_choice", self.gpu_choice, GPU_CHOICES)


# --------------------------------------------------------------------------------------------------
# Shared gang-round simulation (gavel_fifo, srtf, sched_homo)
# --------------------------------------------------------------------------------------------------

@dataclass
class GangState:
    """What a gang policy sees at an event time ``tau``.

    Attributes
    ----------
    tau
        The event time.
    waiting
        Arrived, unfinished jobs that hold no GPU now (includes jobs in ``previous``).
    running
        Jobs in the middle of a stretch of rounds -> the GPUs they hold.
    previous
        Jobs whose stretch ended at ``tau`` with rounds left -> the GPUs they just released.
    holder
        Per GPU, the job holding it, or -1 when idle.
    free_at
        Per GPU, the time it is released (at most ``tau`` when idle).
    rounds_done
        Per job, the number of completed rounds.
    """

    tau: float
    waiting: set[int]
    running: dict[int, list[int]]
    previous: dict[int, list[int]]
    holder: list[int]
    free_at: list[float]
    rounds_done: list[int]

    def idle(self) -> list[int]:
        """Idle GPUs in index order."""
        return [m for m, h in enumerate(self.holder) if h < 0]


#: A gang policy maps the state at an event to the jobs to start now: ``(job, GPU list, rounds)``.
GangPolicy = Callable[[GangState], list[tuple[int, list[int], int]]]


def gang_round(inst: Instance, n: int,
               gpus: list[int]) -> tuple[list[tuple[int, int, float]], float]:
    """One strict-gang round of job ``n`` on ``gpus`` (digest §4.4, §6.4).

    Returns
    -------
    slots, rho
        ``slots`` = ``(task k, gpu, offset from the round start)``; ``rho`` = the round length
        ``max_{m∈A}(T^c + T^s)`` (with waves when ``K_n > |gpus|``, see the module docstring).
    """
    job = inst.jobs[n]
    width = len(gpus)
    cmax = max(job.train_time[m] for m in gpus)
    slots = [(k, gpus[k % width], (k // width) * cmax) for k in range(job.tasks_per_round)]
    rho = max(off + job.train_time[m] + job.sync_time[m] for _, m, off in slots)
    return slots, rho


def gang_width(inst: Instance, n: int) -> int:
    """GPUs a gang job needs: ``K_n``, or every GPU when ``K_n > |ℳ|``."""
    return min(inst.jobs[n].tasks_per_round, inst.n_gpus)


def simulate_gang(inst: Instance, policy: GangPolicy,
                  deadline: Deadline) -> tuple[Schedule | None, dict]:
    """Run a gang policy event by event; return the schedule and counters.

    Events are job arrivals and ends of stretches (a stretch is a run of back-to-back rounds on one
    GPU list: a whole job for the non-preemptive baselines, one round for SRTF). All events at one
    time are applied before ``policy`` is asked which jobs start. A job in ``previous`` that the
    policy does not restart is suspended (counted as a preemption). Once ``deadline`` has expired
    the simulation stops before the next event: no schedule, ``info["stopped"]`` says where.
    """
    n_jobs = len(inst.jobs)
    arrivals = sorted(range(n_jobs), key=lambda n: (inst.jobs[n].arrival, n))
    st = GangState(0.0, set(), {}, {}, [-1] * inst.n_gpus, [0.0] * inst.n_gpus, [0] * n_jobs)
    ends: list[tuple[float, int, int]] = []  # (time, job, rounds in the stretch)
    runs: list[TaskRun] = []
    nxt = events = preemptions = 0
    while nxt < n_jobs or ends:
        if deadline.expired():
            done = sum(d == j.rounds for d, j in zip(st.rounds_done, inst.jobs))
            return None, {"events": events, "preemptions": preemptions,
                          "stopped": f"deadline: after {events} events, {done} of {n_jobs} jobs done"}
        tau = min(inst.jobs[arrivals[nxt]].arrival if nxt < n_jobs else np.inf,
                  ends[0][0] if ends else np.inf)
        st.tau, st.previous = tau, {}
        while nxt < n_jobs and inst.jobs[arrivals[nxt]].arrival <= tau:
            st.waiting.add(arrivals[nxt])
            nxt += 1
        while ends and ends[0][0] <= tau:
            _, n, count = heapq.heappop(ends)
            gpus = st.running.pop(n)
            for m in gpus:
                st.holder[m] = -1
            st.rounds_done[n] += count
            if st.rounds_done[n] < inst.jobs[n].rounds:
                st.waiting.add(n)
                st.previous[n] = gpus
        events += 1
        started = set()
        for n, gpus, count in policy(st):
            end = _run_gang(inst, n, gpus, tau, st.rounds_done[n], count, runs)
            st.waiting.discard(n)
            st.running[n] = gpus
            for m in gpus:
                st.holder[m], st.free_at[m] = n, end
            heapq.heappush(ends, (end, n, count))
            started.add(n)
        preemptions += len(st.previous.keys() - started)
    return Schedule(tuple(runs)), {"events": events, "preemptions": preemptions}


def _run_gang(inst: Instance, n: int, gpus: list[int], start: float, first: int, count: int,
              runs: list[TaskRun]) -> float:
    """Append rounds ``first..first+count-1`` of job ``n`` back to back from ``start``; return
    the end."""
    slots, rho = gang_round(inst, n, gpus)
    s = start
    for r in range(first, first + count):
        runs.extend(TaskRun(n, r, k, m, s + off) for k, m, off in slots)
        s += rho
    return s


def _mean_round(inst: Instance) -> np.ndarray:
    """``τ̄_n = mean_m(T^c_{n,m} + T^s_{n,m})``, the heterogeneity-oblivious round time (§6.4)."""
    return (inst.tc + inst.ts).mean(axis=1)


def _oblivious(candidates: list[int], k: int, rng: np.random.Generator | None) -> list[int]:
    """The first ``k`` of ``candidates`` (``rng`` None), or ``k`` of them at random, sorted."""
    if rng is None:
        return candidates[:k]
    return sorted(int(m) for m in rng.choice(candidates, size=k, replace=False))


def _rng(gpu_choice: str, seed: int) -> np.random.Generator | None:
    check_choice("gpu_choice", gpu_choice, GPU_CHOICES)
    return np.random.default_rng(seed) if gpu_choice == "random" else None


def _outcome(name: str, schedule: Schedule | None, info: dict) -> Outcome:
    """``feasible`` with the schedule, or ``time_limit`` without one (the deadline stopped it)."""
    status = SolveStatus.FEASIBLE if schedule is not None else SolveStatus.TIME_LIMIT
    return Outcome(schedule=schedule, status=status, info={"baseline": name, **info})


# --------------------------------------------------------------------------------------------------
# Gavel_FIFO
# --------------------------------------------------------------------------------------------------

def gavel_fifo(instance: Instance, *, deadline: Deadline, seed: int = 0) -> Outcome:
    """Gavel's heterogeneity-aware FIFO (paper Sec. 7.1 "Gavel_FIFO"; digest §6.4).

    Jobs are served strictly in order ``(a_n, n)``. At every event, while the head job has arrived
    and at least ``K_n`` GPUs are idle, it starts on the ``K_n`` idle GPUs with the smallest
    ``T^c_{n,m} + T^s_{n,m}`` (ties: lower index) and runs all its rounds there as a gang. A head
    that does not fit blocks every job behind it (no backfilling); no preemption. Gavel's
    round-based LP policies are not used: the paper describes FIFO with fastest-GPU assignment.
    """
    inst = instance
    order = {n: (j.arrival, n) for n, j in enumerate(inst.jobs)}
    speed = inst.tc + inst.ts

    def policy(st: GangState) -> list[tuple[int, list[int], int]]:
        idle, starts = st.idle(), []
        for n in sorted(st.waiting, key=order.__getitem__):
            width = gang_width(inst, n)
            if width > len(idle):
                break  # head-of-line blocking
            gpus = sorted(idle, key=lambda m: (speed[n, m], m))[:width]
            idle = [m for m in idle if m not in gpus]
            starts.append((n, gpus, inst.jobs[n].rounds))
        return starts

    schedule, info = simulate_gang(inst, policy, deadline)
    return _outcome("gavel_fifo", schedule, info)


# --------------------------------------------------------------------------------------------------
# SRTF
# --------------------------------------------------------------------------------------------------

def srtf(instance: Instance, params: SrtfParams, *, deadline: Deadline, seed: int = 0) -> Outcome:
    """Shortest remaining time first, preemptive at round boundaries (paper Sec. 7.1; digest §6.4).

    The paper says only that SRTF "always schedules jobs that could complete earlier"; the rest is
    the digest's recipe. Remaining time ``rem_n = (|R_n| − rounds done)·τ̄_n`` with the
    heterogeneity-oblivious ``τ̄_n = mean_m(T^c_{n,m} + T^s_{n,m})`` (``rem_n / w_n`` when
    ``params.weighted``). At every arrival and round completion:

    1. active jobs (arrived, unfinished, running or not) are sorted by ``(rem_n, a_n, n)``;
    2. walking that list, each job is selected if ``K_n`` GPUs are still unclaimed (jobs that do not
       fit are skipped: backfilling);
    3. a selected job that holds GPUs (mid-round, or at the boundary just reached) keeps them;
       every other selected job claims ``K_n`` unclaimed GPUs — idle ones first, lowest index (or
       at random with ``params.gpu_choice="random"``), then busy ones in order of release;
    4. a selected job whose claimed GPUs are all idle starts its next round now; one whose claim
       includes a GPU still busy (held by a job that lost its selection) waits for the next event;
    5. a job that lost its selection finishes its current round and is then suspended.

    Rounds are never cut: preemption happens only at round boundaries, and a job may resume later
    on other GPUs.
    """
    inst = instance
    weighted, gpu_choice = params.weighted, params.gpu_choice
    rng = _rng(gpu_choice, seed)
    weights = np.array([j.weight if weighted else 1.0 for j in inst.jobs])
    per_round = (_mean_round(inst) / weights).tolist()
    rounds = [j.rounds for j in inst.jobs]
    arrival = [j.arrival for j in inst.jobs]
    width = [gang_width(inst, n) for n in range(len(inst.jobs))]

    def policy(st: GangState) -> list[tuple[int, list[int], int]]:
        done = st.rounds_done
        active = sorted(((rounds[n] - done[n]) * per_round[n], arrival[n], n)
                        for n in st.waiting | st.running.keys())
        chosen, free = [], inst.n_gpus
        for _, _, n in active:
            if width[n] <= free:
                chosen.append(n)
                free -= width[n]
                if not free:
                    break
        claim: dict[int, list[int] | None] = {n: st.running.get(n) or st.previous.get(n)
                                              for n in chosen}
        claimed = {m for held in claim.values() if held for m in held}
        idle = [m for m in st.idle() if m not in claimed]
        starts = []
        for n in chosen:
            if n in st.running:
                continue
            gpus = claim[n]
            if gpus is None:
                gpus = claim[n] = _srtf_claim(st, idle, claimed, width[n], rng)
                claimed.update(gpus)
                idle = [m for m in idle if m not in gpus]
            if all(st.holder[m] < 0 for m in gpus):
                starts.append((n, gpus, 1))
        return starts

    schedule, info = simulate_gang(inst, policy, deadline)
    return _outcome("srtf", schedule, {**info, "weighted": weighted, "gpu_choice": gpu_choice})


def _srtf_claim(st: GangState, idle: list[int], claimed: set[int], width: int,
                rng: np.random.Generator | None) -> list[int]:
    """``width`` unclaimed GPUs: ``idle`` first (oblivious choice), then busy ones by release."""
    if len(idle) >= width:
        return _oblivious(idle, width, rng)
    busy = sorted((m for m, h in enumerate(st.holder) if h >= 0 and m not in claimed),
                  key=lambda m: (st.free_at[m], m))
    return idle + busy[:width - len(idle)]


# --------------------------------------------------------------------------------------------------
# Sched_Homo
# --------------------------------------------------------------------------------------------------

def sched_homo(instance: Instance, params: SchedHomoParams, *, deadline: Deadline,
               seed: int = 0) -> Outcome:
    """Heterogeneity-oblivious weighted scheduling of [47] (paper Sec. 7.1; digest §6.4).

    Priority by WSPT computed as if GPUs were homogeneous: ``w_n / (|R_n|·τ̄_n)`` descending (ties:
    ``a_n``, ``n``), with ``τ̄_n = mean_m(T^c_{n,m} + T^s_{n,m})``. At every event the waiting jobs
    are scanned in priority order and every job that finds ``K_n`` idle GPUs starts (backfilling);
    it runs all its rounds as a gang without preemption. GPUs are chosen obliviously: uniformly at
    random from the idle ones (``numpy.random.default_rng(seed)``; the default, since the generators
    lay GPUs out by type and the lowest indices would be the fastest ones), or the lowest-index idle
    ones (``params.gpu_choice="index"``). The round time ``ρ_n(A)`` is set by the slowest GPU drawn: the
    heterogeneity penalty the paper attributes to this scheme.
    """
    inst = instance
    gpu_choice = params.gpu_choice
    rng = _rng(gpu_choice, seed)
    tbar = _mean_round(inst)
    rank = {n: (-j.weight / (j.rounds * tbar[n]), j.arrival, n) for n, j in enumerate(inst.jobs)}

    def policy(st: GangState) -> list[tuple[int, list[int], int]]:
        idle, starts = st.idle(), []
        for n in sorted(st.waiting, key=rank.__getitem__):
            width = gang_width(inst, n)
            if width <= len(idle):
                gpus = _oblivious(idle, width, rng)
                idle = [m for m in idle if m not in gpus]
                starts.append((n, gpus, inst.jobs[n].rounds))
        return starts

    schedule, info = simulate_gang(inst, policy, deadline)
    return _outcome("sched_homo", schedule, {**info, "gpu_choice": gpu_choice})


# --------------------------------------------------------------------------------------------------
# Sched_Allox
# --------------------------------------------------------------------------------------------------

def sched_allox(instance: Instance, *, deadline: Deadline, seed: int = 0) -> Outcome:
    """AlloX [24]: one dedicated GPU per job, min-cost matching (paper Sec. 7.1; digest §6.4).

    Job ``n`` on GPU ``m`` runs its ``K_n`` tasks of every round back to back, so it takes
    ``p_{n,m} = |R_n|·(K_n·T^c_{n,m} + T^s_{n,m})``. At every event ``τ`` (an arrival or a GPU
    becoming idle) with waiting jobs ``W`` and at least one idle GPU, the jobs are matched to slots
    ``(m, q)``, ``q = 1..|W|`` counted from the end of GPU ``m``'s queue, at cost
    ``q·p_{n,m} + b_m`` with backlog ``b_m = max(0, busy_until_m − τ)`` (AlloX's unweighted
    efficiency objective), by ``scipy.optimize.linear_sum_assignment`` (:func:`allox_slots`). Each
    idle GPU starts the job matched to its largest occupied ``q`` (the one that runs first); the
    others wait for the next event, where the matching is solved again. Non-preemptive. The
    deadline is checked at every event (no schedule once it has expired).
    """
    inst = instance
    jobs = inst.jobs
    rounds = np.array([j.rounds for j in jobs], dtype=float)[:, None]
    width = np.array([j.tasks_per_round for j in jobs], dtype=float)[:, None]
    proc = rounds * (width * inst.tc + inst.ts)  # p_{n,m}
    arrivals = sorted(range(len(jobs)), key=lambda n: (jobs[n].arrival, n))
    busy_until = np.zeros(inst.n_gpus)
    frees: list[float] = []
    waiting: list[int] = []
    runs: list[TaskRun] = []
    nxt = events = matchings = 0
    while nxt < len(jobs) or waiting:
        if deadline.expired():
            info = {"events": events, "matchings": matchings,
                    "stopped": f"deadline: after {events} events, {len(jobs) - nxt + len(waiting)} "
                               f"jobs not started"}
            return _outcome("sched_allox", None, info)
        tau = min(jobs[arrivals[nxt]].arrival if nxt < len(jobs) else np.inf,
                  frees[0] if frees else np.inf)
        while nxt < len(jobs) and jobs[arrivals[nxt]].arrival <= tau:
            waiting.append(arrivals[nxt])
            nxt += 1
        while frees and frees[0] <= tau:
            heapq.heappop(frees)
        events += 1
        idle = np.flatnonzero(busy_until <= tau)
        if not waiting or not len(idle):
            continue
        matchings += 1
        first = _allox_match(proc[waiting], np.maximum(busy_until - tau, 0.0))
        started = set()
        for m in map(int, idle):
            if m in first:
                n = waiting[first[m]]
                busy_until[m] = _run_allox(inst, n, m, tau, runs)
                heapq.heappush(frees, float(busy_until[m]))
                started.add(n)
        waiting = [n for n in waiting if n not in started]
    info = {"events": events, "matchings": matchings}
    return _outcome("sched_allox", Schedule(tuple(runs)), info)


def _allox_match(proc: np.ndarray, backlog: np.ndarray) -> dict[int, int]:
    """GPU -> the row of ``proc`` (waiting job) it runs first: its largest occupied ``q`` in the
    matching of :func:`allox_slots`, pruned when the full matrix exceeds ``PRUNE_ABOVE`` entries."""
    n_wait, n_gpus = proc.shape
    first: dict[int, tuple[int, int]] = {}
    for i, m, q in allox_slots(proc, backlog, prune=n_wait * n_wait * n_gpus > PRUNE_ABOVE):
        if m not in first or q > first[m][0]:
            first[m] = (q, i)
    return {m: i for m, (_, i) in first.items()}


def allox_slots(proc: np.ndarray, backlog: np.ndarray,
                prune: bool = True) -> list[tuple[int, int, int]]:
    """AlloX's min-cost matching of rows to slots ``(m, q)``: ``(row, m, q)`` for every row.

    Slot ``(m, q)``, ``q = 1..|W|`` counted from the end of GPU ``m``'s queue, costs
    ``q·proc[i, m] + backlog[m]`` for row ``i``; solved by ``scipy.optimize.linear_sum_assignment``.
    ``prune=False`` builds the full ``|W| × (|ℳ|·|W|)`` matrix. With ``prune`` only the slots
    ``q <= qmax_m`` are built, ``qmax_m`` being the largest ``q`` among the ``|W|`` cheapest slots
    of any row (:func:`_allox_depth`). This is exact: in an optimal matching every row sits in one
    of its ``|W|`` cheapest slots (otherwise one of them is free, since the other rows fill at most
    ``|W| − 1``, and moving there is cheaper).
    """
    from scipy.optimize import linear_sum_assignment  # ~0.5 s to import: only when matching

    n_wait, n_gpus = proc.shape
    depth = _allox_depth(proc, backlog) if prune else np.full(n_gpus, n_wait)
    gpu = np.repeat(np.arange(n_gpus), depth)
    pos = np.arange(len(gpu)) - np.repeat(np.cumsum(depth) - depth, depth) + 1  # q of each column
    rows, cols = linear_sum_assignment(pos[None, :] * proc[:, gpu] + backlog[gpu][None, :])
    return [(int(i), int(gpu[c]), int(pos[c])) for i, c in zip(rows, cols)]


def _allox_depth(proc: np.ndarray, backlog: np.ndarray) -> np.ndarray:
    """Per GPU, the largest ``q`` among the ``|W|`` cheapest slots of any row (:func:`allox_slots`).

    Each row's threshold ``T`` is found by bisection on
    ``count(T) = Σ_m clip(⌊(T − b_m)/p_{i,m}⌋, 0, |W|)``, keeping an upper end with
    ``count >= |W|`` (any such end keeps the pruning exact; a tighter one only prunes more).
    """
    n_wait = proc.shape[0]

    def count(t: np.ndarray) -> np.ndarray:
        return np.clip(np.floor((t[:, None] - backlog[None, :]) / proc), 0, n_wait).sum(axis=1)

    hi = (backlog[None, :] + n_wait * proc).min(axis=1)  # |W| slots on one GPU: count(hi) >= |W|
    lo = np.zeros_like(hi)
    for _ in range(24):  # precision only tightens the pruning
        mid = (lo + hi) / 2
        ok = count(mid) >= n_wait
        hi, lo = np.where(ok, mid, hi), np.where(ok, lo, mid)
    hi = hi * (1 + 1e-9) + 1e-12  # a margin against rounding, which only ever adds slots
    q = np.clip(np.floor((hi[:, None] - backlog[None, :]) / proc), 0, n_wait).max(axis=0)
    return q.astype(int)


def _run_allox(inst: Instance, n: int, m: int, start: float, runs: list[TaskRun]) -> float:
    """Append every round of job ``n`` on GPU ``m`` from ``start`` (tasks back to back); return
    the end."""
    job = inst.jobs[n]
    tc, ts = job.train_time[m], job.sync_time[m]
    s = start
    for r in range(job.rounds):
        runs.extend(TaskRun(n, r, k, m, s + k * tc) for k in range(job.tasks_per_round))
        s += job.tasks_per_round * tc + ts
    return s


__all__ = ["SchedHomoParams", "SrtfParams", "allox_slots", "gang_round", "gavel_fifo",
           "sched_allox", "sched_homo", "simulate_gang", "srtf"]

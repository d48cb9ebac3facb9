"""ring_contention: the upper side of certify (issue 19) — longest-first list scheduling with
best-fit one-server rings, and an any-time local search over the job order on the family's own
event-driven pass (:func:`~optsched.solvers.ring_contention.algorithm.run_pass`, the exact model
(6)–(9) of Yu et al., so every makespan it scores is the one verify recomputes).

SJF-BCO (Alg. 1) orders jobs smallest-first and spreads them by the budget U; for the makespan a
longest-first order that keeps rings on one server (B_j = b^i, no contention (6), one overhead
term xi_2 in (8)) is the classical LPT rule. Two evaluators score a list: the pass (jobs start
in list order at a monotone clock; per job a flag says whether a ring may be split across servers
when no single server has room) and, when every job fits on one server, a serial scheme with
backfilling over one-server rings (:class:`ServerProfiles`). :func:`climb` is an iterated local
search over the list; :func:`improve` drives it and is certify's ``improve`` (moved out of
:mod:`.exact` unchanged, issue 20, to give every family's search the same place).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Callable

import numpy as np

from optsched import tolerance
from optsched.deadline import Deadline
from optsched.problems.ring_contention import Instance, Schedule, completion_times
from optsched.result import Outcome, SolveStatus
from optsched.solvers.ring_contention.algorithm import Pass, Rule, run_pass


def one_server_fit(state: Pass, j: int) -> np.ndarray | None:
    """Best fit: the idle GPUs of the one server with the fewest idle GPUs >= G_j (ties by index),
    so the ring runs on NVLink without contention (eq. (8) with n_j = 1); None when no server has
    room now."""
    need = state.inst.jobs[j].gpus
    idle = np.bincount(state.server[state.idle], minlength=state.inst.n_servers)
    fits = np.flatnonzero(idle >= need)
    if len(fits) == 0:
        return None
    s = fits[np.argmin(idle[fits])]
    gpus = np.flatnonzero(state.idle & (state.server == s))
    return gpus[:need]


def fewest_servers(state: Pass, j: int) -> np.ndarray | None:
    """A split ring on the fewest servers: servers by idle GPUs descending (ties by index), GPUs
    taken until G_j; None when fewer than G_j GPUs are idle."""
    need = state.inst.jobs[j].gpus
    if int(state.idle.sum()) < need:
        return None
    idle = np.bincount(state.server[state.idle], minlength=state.inst.n_servers)
    pool: list[int] = []
    for s in np.lexsort((np.arange(len(idle)), -idle)):
        pool.extend(np.flatnonzero(state.idle & (state.server == s)).tolist())
        if len(pool) >= need:
            break
    return np.asarray(pool[:need])


def packing_rule(split: bool) -> Rule:
    """One-server best fit; when no server has room, a split ring if ``split`` (else wait)."""

    def rule(state: Pass, j: int) -> np.ndarray | None:
        chosen = one_server_fit(state, j)
        if chosen is None and (split or state.inst.jobs[j].gpus > max(state.inst.servers)):
            chosen = fewest_servers(state, j)
        return chosen

    return rule


WAIT, SPLIT = packing_rule(False), packing_rule(True)


@dataclass
class Candidate:
    """A list: job order and per-job split flags, with its makespan, end times and schedule."""

    order: list[int]
    split: list[bool]
    makespan: int
    finish: list[int]
    schedule: Schedule
    memo: Any = None


#: evaluate(order, split, limit, parent) -> Candidate or None (None: infeasible or makespan >
#: limit); ``parent`` (optional) is the list the order was derived from, for reuse of its state
Evaluator = Callable[..., "Candidate | None"]


def pass_evaluator(inst: Instance) -> Evaluator:
    """The family's pass (no budget: theta never binds) with :data:`WAIT` / :data:`SPLIT` rules;
    end times by the exact model (6)–(9), as verify computes them."""
    cache: dict = {}
    zero = [0.0] * len(inst.jobs)

    def evaluate(order: list[int], split: list[bool], limit: int,
                 parent: Candidate | None = None) -> Candidate | None:
        state = run_pass(inst, order, 1.0, lambda j: SPLIT if split[j] else WAIT, zero, cache)
        if state is None:
            return None
        finish = [state.finish[j] for j in range(len(inst.jobs))]
        if max(finish) > limit:
            return None
        return Candidate(list(order), list(split), max(finish), finish, state.schedule())

    return evaluate


def longest_first_orders(inst: Instance) -> list[list[int]]:
    """LPT orders: by contention-free duration rho^LB_j (digest §3.5), and by area G_j rho^LB_j."""
    from optsched.problems.ring_contention import min_durations

    rho = min_durations(inst)
    n = range(len(inst.jobs))
    return [sorted(n, key=lambda j: (-rho[j], -inst.jobs[j].gpus, j)),
            sorted(n, key=lambda j: (-inst.jobs[j].gpus * rho[j], j)),
            sorted(n, key=lambda j: (-inst.jobs[j].gpus, -rho[j], j))]


def neighbour(cand: Candidate, rng: np.random.Generator) -> tuple[list[int], list[bool]]:
    """A move: a job finishing last moves earlier in the list (insertion), a random insertion,
    a swap, or a split flag flipped."""
    order, split = list(cand.order), list(cand.split)
    n = len(order)
    kind = rng.random()
    if kind < 0.45:
        late = [j for j in order if cand.finish[j] == cand.makespan]
        i = order.index(late[int(rng.integers(len(late)))])
        if i > 0:
            order.insert(int(rng.integers(i)), order.pop(i))
            return order, split
    if kind < 0.75:
        i, k = (int(x) for x in rng.integers(n, size=2))
        order.insert(k, order.pop(i))
    elif kind < 0.95:
        i, k = (int(x) for x in rng.integers(n, size=2))
        order[i], order[k] = order[k], order[i]
    else:
        j = int(rng.integers(n))
        split[j] = not split[j]
    return order, split


def climb(evaluate: Evaluator, start: Candidate, deadline: Deadline,
          rng: np.random.Generator, target: int = 0) -> tuple[Candidate, int]:
    """Iterated local search: hill climbing with plateau moves — a neighbour
    (:func:`neighbour`) replaces the current list when its makespan is no larger (candidates past
    it are cut short by ``limit``) — restarted from a perturbation of the best list (:func:`kick`)
    after :data:`STALL` evaluations without a strictly better one. The deadline is checked
    before every evaluation; the search stops early at a makespan <= ``target`` (a lower bound:
    nothing shorter exists). Returns the best list and the #evaluations."""
    best = cur = start
    evaluations = stall = 0
    horizon = max(start.finish) if start.finish else 0
    while not deadline.expired() and best.makespan > target:
        if stall >= STALL:
            kicked = evaluate(*kick(best, rng), max(horizon, best.makespan + 1))
            evaluations, stall = evaluations + 1, 0
            cur = kicked if kicked is not None else best
            continue
        order, split = neighbour(cur, rng)
        cand = evaluate(order, split, cur.makespan, cur)
        evaluations, stall = evaluations + 1, stall + 1
        if cand is not None:
            cur = cand
            if cand.makespan < best.makespan:
                best, stall = cand, 0
    return best, evaluations


#: Evaluations without a strictly better list before :func:`climb` kicks; moves per kick.
STALL, KICK_MOVES = 300, 4


def kick(cand: Candidate, rng: np.random.Generator) -> tuple[list[int], list[bool]]:
    """A perturbation: :data:`KICK_MOVES` random neighbour moves in a row."""
    order, split = cand.order, cand.split
    for _ in range(KICK_MOVES):
        order, split = neighbour(replace(cand, order=order, split=split), rng)
    return order, split


def starts_of(evaluate: Evaluator, orders: list[list[int]], flags: list[bool],
              limit: int) -> list[Candidate]:
    """Evaluate every order under every uniform split flag; the feasible ones."""
    out = []
    for order in orders:
        for flag in flags:
            cand = evaluate(order, [flag] * len(order), limit)
            if cand is not None:
                out.append(cand)
    return out


# ----------------------------------------------------------------------------------------------
# One-server rings: a serial schedule generation scheme with backfilling
# ----------------------------------------------------------------------------------------------

#: (position k, server usage, starts, servers) after the first k jobs of a list
Snapshot = tuple[int, np.ndarray, list[int], list[int]]
SNAPSHOT_EVERY = 8


class ServerProfiles:
    """GPU usage of every server per slot, for one-server rings only.

    A ring on one server never contends ((6) counts split jobs only) and pays one overhead term
    (8), so its duration is fixed, rho_j^1 = ceil(F_j / phi_j(1, 1)) (:func:`duration`), and a
    schedule of one-server rings is a cumulative packing per server: capacity O_s per slot (2).
    Jobs are placed one by one at the earliest slot, over all servers with room, where G_j GPUs
    stay free for rho_j^1 slots (backfilling, unlike the monotone clock of the pass).
    """

    def __init__(self, inst: Instance, horizon: int):
        from optsched.problems.ring_contention import duration

        self.inst = inst
        self.cap = np.asarray(inst.servers)
        self.horizon = horizon
        self.dur = [duration(inst, j, 1) for j in range(len(inst.jobs))]

    def place_all(self, order: list[int], resume: Snapshot | None = None
                  ) -> tuple[int, list[int], list[int], list[Snapshot]] | None:
        """Place ``order`` greedily from ``resume`` (the state after its first k jobs, the same
        as ``order``'s own first k) or from empty servers; (makespan, starts, servers, snapshots
        every :data:`SNAPSHOT_EVERY` jobs), or None past the horizon."""
        k, used, starts, where = resume if resume is not None else (
            0, np.zeros((len(self.cap), self.horizon + 1), dtype=np.int32), [0] * len(order),
            [0] * len(order))
        if used.shape[1] != self.horizon + 1:  # a snapshot taken at another horizon
            return self.place_all(order)
        used, starts, where = used.copy(), list(starts), list(where)
        snaps: list[Snapshot] = []
        for pos in range(k, len(order)):
            if pos % SNAPSHOT_EVERY == 0:
                snaps.append((pos, used.copy(), list(starts), list(where)))
            j = order[pos]
            placed = self.earliest(used, self.inst.jobs[j].gpus, self.dur[j])
            if placed is None:
                return None
            s, t = placed
            used[s, t:t + self.dur[j]] += self.inst.jobs[j].gpus
            starts[j], where[j] = t, s
        return max(starts[j] + self.dur[j] for j in order), starts, where, snaps

    def earliest(self, used: np.ndarray, g: int, d: int) -> tuple[int, int] | None:
        """(server, slot) of the earliest start of a ring of ``g`` GPUs and ``d`` slots, ties by
        best fit (the least free capacity at that slot); None when it cannot end by the horizon."""
        if d > self.horizon:
            return None
        rows = np.flatnonzero(self.cap >= g)
        bad = np.zeros((len(rows), self.horizon + 2), dtype=np.int32)
        np.cumsum(used[rows] + g > self.cap[rows, None], axis=1, out=bad[:, 1:])
        ok = (bad[:, d:] - bad[:, :-d])[:, : self.horizon - d + 1] == 0
        first = np.where(ok.any(axis=1), ok.argmax(axis=1), self.horizon + 1)
        t = int(first.min())
        if t > self.horizon - d:
            return None
        tied = rows[first == t]
        return int(tied[np.argmin(self.cap[tied] - used[tied, t])]), t

    def schedule(self, starts: list[int], where: list[int]) -> Schedule:
        """The (start, placement vector) schedule of one-server rings."""
        vecs = []
        for j, s in enumerate(where):
            v = [0] * len(self.cap)
            v[s] = self.inst.jobs[j].gpus
            vecs.append(tuple(v))
        return Schedule(tuple(starts), tuple(vecs))


def profile_evaluator(inst: Instance) -> Evaluator | None:
    """The serial scheme of :class:`ServerProfiles` as an evaluator (split flags ignored), or
    None when some job fits on no single server."""
    if inst.max_gpus > max(inst.servers):
        return None
    profiles = ServerProfiles(inst, inst.horizon)

    def evaluate(order: list[int], split: list[bool], limit: int,
                 parent: Candidate | None = None) -> Candidate | None:
        profiles.horizon = min(limit, inst.horizon)
        placed = profiles.place_all(order, resume_point(parent, order))
        if placed is None:
            return None
        span, starts, where, snaps = placed
        finish = [t + d for t, d in zip(starts, profiles.dur)]
        return Candidate(list(order), list(split), span, finish,
                         profiles.schedule(starts, where), snaps)

    return evaluate


def resume_point(parent: Candidate | None, order: list[int]) -> Snapshot | None:
    """The parent's last snapshot within the prefix ``order`` shares with it (jobs placed in the
    same order reach the same state), or None."""
    if parent is None or not parent.memo:
        return None
    same = next((i for i, (a, b) in enumerate(zip(order, parent.order)) if a != b), len(order))
    usable = [snap for snap in parent.memo if snap[0] <= same]
    return usable[-1] if usable else None


# ----------------------------------------------------------------------------------------------
# Upper side of certify (issue 19)
# ----------------------------------------------------------------------------------------------

def improve(inst: Instance, start: Schedule, *, deadline: Deadline, seed: int = 0,
            goal: float | None = None) -> Outcome:
    """Any-time improvement of the verified schedule ``start`` (certify's upper side).

    Local search over the decision the family's list scheduler takes — the job order, and per
    job whether a ring may be split when no server has room — from longest-first (LPT) orders
    and from ``start``'s own start order (this module). Two evaluators share the time: the
    serial scheme with backfilling over one-server rings (:class:`ServerProfiles`,
    no contention (6), fixed durations; only when every job fits on one server), then the
    family's event-driven pass (:func:`~.algorithm.run_pass`, exact (6)–(9), split rings
    allowed). Every makespan is the one verify recomputes; the schedule returned is ``start``
    unless a strictly shorter one was found.

    Parameters
    ----------
    inst
        The instance.
    start
        A schedule verify accepts.
    deadline
        Checked before every evaluation (one evaluation takes 10-100 ms at paper scale).
    seed
        Seeds the moves (``numpy.random.default_rng``).
    goal
        A valid lower bound on the optimal makespan (certify's); the search stops once it is met,
        as it does at the family's own LB_len / LB_area / LB_conf (the larger of the two counts).

    Returns
    -------
    Outcome
        ``feasible`` with the best schedule, or ``time_limit`` when the deadline had expired
        before any search; ``info``: evaluations and makespan per evaluator.
    """
    best_value, best = max(completion_times(inst, start)), start
    rng = np.random.default_rng(seed)
    orders = longest_first_orders(inst)
    orders.append(sorted(range(len(inst.jobs)), key=lambda j: (start.starts[j], j)))
    phases = [(name, ev, flags) for name, ev, flags in (
        ("one_server", profile_evaluator(inst), [False]),
        ("pass", pass_evaluator(inst), [False, True])) if ev is not None]
    info: dict[str, Any] = {"start": best_value}
    if deadline.expired():
        return Outcome(start, SolveStatus.TIME_LIMIT, info=info)
    from optsched.problems.ring_contention import simple_lower_bound

    target = max(simple_lower_bound(inst).values())
    if goal is not None:   # makespans are integers: a bound of 7.2 is met by 8
        target = max(target, math.ceil(goal - tolerance.slack(goal)))
    for k, (name, evaluate, flags) in enumerate(phases):
        if best_value <= target:
            break
        phase = deadline.within(deadline.limit(1.0 / (len(phases) - k)))
        found = starts_of(evaluate, orders, flags, inst.horizon)
        if not found or deadline.expired():
            continue
        cand, evaluations = climb(evaluate, min(found, key=lambda c: c.makespan), phase, rng,
                                  target)
        info[name] = {"makespan": cand.makespan, "evaluations": evaluations}
        if cand.makespan < best_value:
            best_value, best = cand.makespan, cand.schedule
    info["makespan"] = best_value
    return Outcome(best, SolveStatus.FEASIBLE, info=info)

"""ring_contention: the upper side of certify (issue 19) — longest-first list scheduling with
best-fit one-server rings, and an any-time local search over the job order on the family's own
event-driven pass (:func:`~optsched.solvers.ring_contention.algorithm.run_pass`, the exact model
(6)–(9) of Yu et al., so every makespan it scores is the one verify recomputes).

SJF-BCO (Alg. 1) orders jobs smallest-first and spreads them by the budget U; for the makespan a
longest-first order that keeps rings on one server (B_j = b^i, no contention (6), one overhead
term xi_2 in (8)) is the classical LPT rule. The search keeps the pass's semantics (jobs start
in list order at a monotone clock) and only changes the order and, per job, whether a ring may
be split across servers when no single server has room.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from optsched.deadline import Deadline
from optsched.problems.ring_contention import Instance, Schedule
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


#: evaluate(order, split, limit) -> Candidate or None (None: infeasible or makespan > limit)
Evaluator = Callable[[list[int], list[bool], int], "Candidate | None"]


def pass_evaluator(inst: Instance) -> Evaluator:
    """The family's pass (no budget: theta never binds) with :data:`WAIT` / :data:`SPLIT` rules;
    end times by the exact model (6)–(9), as verify computes them."""
    cache: dict = {}
    zero = [0.0] * len(inst.jobs)

    def evaluate(order: list[int], split: list[bool], limit: int) -> Candidate | None:
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
    from optsched.models.ring_contention import min_durations

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
    """Hill climbing with plateau moves: a neighbour (:func:`neighbour`) replaces the current
    list when its makespan is no larger (candidates past it are cut short by ``limit``). The
    deadline is checked before every evaluation; the climb stops early at a makespan <=
    ``target`` (a lower bound: nothing shorter exists). Returns the best list and the
    #evaluations."""
    cur, evaluations = start, 0
    while not deadline.expired() and cur.makespan > target:
        order, split = neighbour(cur, rng)
        cand = evaluate(order, split, cur.makespan)
        evaluations += 1
        if cand is not None:
            cur = cand
    return cur, evaluations


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

class ServerProfiles:
    """GPU usage of every server per slot, for one-server rings only.

    A ring on one server never contends ((6) counts split jobs only) and pays one overhead term
    (8), so its duration is fixed, rho_j^1 = ceil(F_j / phi_j(1, 1)) (:func:`duration`), and a
    schedule of one-server rings is a cumulative packing per server: capacity O_s per slot (2).
    Jobs are placed one by one at the earliest slot, over all servers with room, where G_j GPUs
    stay free for rho_j^1 slots (backfilling, unlike the monotone clock of the pass).
    """

    def __init__(self, inst: Instance, horizon: int):
        from optsched.models.ring_contention import duration

        self.inst = inst
        self.cap = np.asarray(inst.servers)
        self.horizon = horizon
        self.dur = [duration(inst, j, 1) for j in range(len(inst.jobs))]

    def place_all(self, order: list[int]) -> tuple[int, list[int], list[int]] | None:
        """Place ``order`` greedily; (makespan, starts, servers), or None past the horizon."""
        n = len(order)
        used = np.zeros((len(self.cap), self.horizon + 1), dtype=np.int32)
        starts, where = [0] * n, [0] * n
        for j in order:
            g, d = self.inst.jobs[j].gpus, self.dur[j]
            bad = np.zeros((len(self.cap), self.horizon + 2), dtype=np.int32)
            np.cumsum(used + g > self.cap[:, None], axis=1, out=bad[:, 1:])
            window = bad[:, d:] - bad[:, :-d] if d <= self.horizon else None
            if window is None:
                return None
            ok = window[:, : self.horizon - d + 1] == 0
            ok[self.cap < g] = False
            first = np.where(ok.any(axis=1), ok.argmax(axis=1), self.horizon + 1)
            t = int(first.min())
            if t > self.horizon - d:
                return None
            tied = np.flatnonzero(first == t)  # best fit: the least free capacity at t
            s = int(tied[np.argmin(self.cap[tied] - used[tied, t])])
            used[s, t:t + d] += g
            starts[j], where[j] = t, s
        return max(starts[j] + self.dur[j] for j in order), starts, where

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

    def evaluate(order: list[int], split: list[bool], limit: int) -> Candidate | None:
        profiles.horizon = min(limit, inst.horizon)
        placed = profiles.place_all(order)
        if placed is None:
            return None
        span, starts, where = placed
        finish = [t + d for t, d in zip(starts, profiles.dur)]
        return Candidate(list(order), list(split), span, finish, profiles.schedule(starts, where))

    return evaluate

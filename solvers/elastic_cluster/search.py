"""The upper side of certify for seed 000 (Zhou et al.): earliest-finish list scheduling over every
non-dominated configuration, and a ruin-and-recreate local search on it (ours, not the paper's).

A job is inserted into a :class:`~.baselines.Timeline` (free capacity per server, resource and
slot) at the configuration (m, p, q, N, d) of :meth:`Instance.configurations` -- the paper's
decision variables of problem (2) / (15): worker type (2b), PS type (2c), co-location q_j (2d),
number of workers (2g) and duration (2f) -- and the start that complete it first. The placement
on servers is the baselines' :func:`~.baselines.place` (first server that holds all workers and
PSs, else workers packed over servers and the PSs on one server meeting (2i)). Starts are tried
at a_j (2j) and at every completion of an inserted job (the free capacity only grows there).

:func:`improve` drives them and is certify's ``improve``; moved out of :mod:`.exact` (issue 20)
unchanged, with :data:`RUIN_SIZES`, to give every family's search the same place.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from optsched.deadline import Deadline
from optsched.errors import InfeasibleSchedule
from optsched.problems.elastic_cluster import Instance, Plan, Schedule, memo, verify
from optsched.result import Outcome, SolveStatus
from optsched.solvers.elastic_cluster.baselines import Timeline, place
from optsched.solvers.elastic_cluster.placement import room
from optsched.tolerance import at_most


@dataclass(frozen=True)
class Configs:
    """Job j's configurations that fit the idle cluster, by duration ascending.

    Attributes
    ----------
    rows
        K x 5 ints (m, p, q, N, d).
    need
        K x R: the per-slot demand N e_m + z_p (one PS, the least any placement uses).
    """

    rows: np.ndarray
    need: np.ndarray


def job_configs(inst: Instance, j: int) -> Configs:
    """:class:`Configs` of job j (memoised per instance): q = 1 rows that fit one idle server,
    q = 0 rows whose demand fits the whole cluster, sorted by (d, total normalised demand)."""
    table = memo(inst, "search_configs")
    if j not in table:
        rows = np.array(inst.configurations(j), dtype=np.int64).reshape(-1, 5)
        need = rows[:, 3, None] * inst.e[rows[:, 0]]
        if inst.is_ps:
            need = need + inst.z[rows[:, 1]]
        cap = room(inst.cap)
        one = (need[:, None, :] <= cap[None, :, :]).all(axis=2).any(axis=1)
        keep = np.where(rows[:, 2] == 1, one, (need <= cap.sum(axis=0)).all(axis=1))
        rows, need = rows[keep], need[keep]
        order = np.lexsort(((need / inst.unit).sum(axis=1), rows[:, 4]))
        table[j] = Configs(rows[order], need[order])
    return table[j]


def earliest_plan(inst: Instance, line: Timeline, j: int, ends: list[int]) -> Plan:
    """The plan of job j completing first on ``line`` (ties: the first configuration in
    :func:`job_configs` order, the earlier start). ``ends`` are the completions of the plans on
    ``line``; the serial fallback (start after every end) always fits."""
    conf = job_configs(inst, j)
    a = inst.jobs[j].arrival
    starts = sorted({a} | {t for t in ends if t > a})
    best: Plan | None = None
    dmin = int(conf.rows[0, 4])
    for t in starts:
        if best is not None and t + dmin >= best.completion:
            break
        limit = None if best is None else best.completion - t
        plan = _first_fit(inst, line, j, conf, t, limit)
        if plan is not None and (best is None or plan.completion < best.completion):
            best = plan
    if best is None:
        raise AssertionError(f"job {j}: no configuration fits after the last completion")
    return best


def _first_fit(inst: Instance, line: Timeline, j: int, conf: Configs, t: int,
               limit: int | None) -> Plan | None:
    """The first configuration (shortest d first, d < ``limit``) placeable from slot t."""
    d = conf.rows[:, 4]
    mask = d < limit if limit is not None else np.ones(len(d), dtype=bool)
    if not mask.any():
        return None
    longest = int(d[mask].max())
    line.window(t, longest)  # grows the profile
    free = np.minimum.accumulate(line.free[:, :, t:t + longest], axis=2)
    space = room(free)
    idx = np.flatnonzero(mask)
    lens = d[idx] - 1
    one = np.zeros(len(idx), dtype=bool)
    co = conf.rows[idx, 2] == 1
    if co.any():
        per = space[:, :, lens[co]]  # H x R x k
        one[co] = (conf.need[idx[co]].T[None, :, :] <= per).all(axis=1).any(axis=0)
    far = ~co
    if far.any():
        total = space.sum(axis=0)[:, lens[far]]  # R x k
        one[far] = (conf.need[idx[far]].T <= total).all(axis=0)
    for k in idx[one]:
        m, p, q, n, dur = (int(x) for x in conf.rows[k])
        got = place(inst, j, m, p, n, free[:, :, dur - 1])
        if got is None or (q == 1 and got[2] != 1):
            continue
        return Plan(t, dur, m, p, q, got[0], got[1])
    return None


def list_schedule(inst: Instance, order, deadline: Deadline) -> list[Plan] | None:
    """Earliest-finish list scheduling of the jobs in ``order`` (None when the deadline expires)."""
    line = Timeline(inst)
    plans: dict[int, Plan] = {}
    ends: list[int] = []
    for j in order:
        if deadline.expired():
            return None
        plan = earliest_plan(inst, line, j, ends)
        line.take(plan)
        plans[j] = plan
        ends.append(plan.completion)
    return [plans[j] for j in range(len(inst.jobs))]


def cost(inst: Instance, plans) -> float:
    """sum_j w_j c_j of complete ``plans`` (verify's objective, unchecked)."""
    return float(sum(job.weight * p.completion for job, p in zip(inst.jobs, plans)))


def checked(inst: Instance, plans) -> float | None:
    """verify's objective of ``plans``, or None when verify rejects them."""
    try:
        return verify(inst, Schedule(tuple(plans)))
    except InfeasibleSchedule:
        return None


def orders(inst: Instance, deadline: Deadline) -> list[list[int]]:
    """Job orders to seed the search: arrival (a_j, j), and weighted shortest fastest run
    (w_j / d_j^min descending) within arrival; only the arrival order when ``deadline`` passes
    while the configurations are listed (~2 CPU-s for 100 paper-scale jobs)."""
    J = range(len(inst.jobs))
    jobs = inst.jobs
    dmin = []
    for j in J:
        if deadline.expired():
            return [sorted(J, key=lambda j: (jobs[j].arrival, j))]
        dmin.append(int(job_configs(inst, j).rows[0, 4]))
    return [sorted(J, key=lambda j: (jobs[j].arrival, j)),
            sorted(J, key=lambda j: (jobs[j].arrival, -jobs[j].weight / dmin[j], j)),
            sorted(J, key=lambda j: (jobs[j].arrival + dmin[j], -jobs[j].weight, j))]


class Search:
    """Ruin and recreate on a complete schedule: remove a few jobs whose runs overlap a random
    slot, re-insert them by :func:`earliest_plan` in a random or weight order, keep the change if
    sum_j w_j c_j drops (each kept schedule is verified)."""

    def __init__(self, inst: Instance, plans: list[Plan], seed: int):
        self.inst, self.plans = inst, list(plans)
        self.rng = np.random.default_rng(seed)
        self.line = Timeline(inst)
        for p in self.plans:
            self.line.take(p)
        self.value = cost(inst, self.plans)
        self.tries = self.kept = 0

    def step(self, size: int, deadline: Deadline) -> bool:
        """One ruin-and-recreate move of ``size`` jobs; True when it improved."""
        victims = self._victims(size)
        if self.rng.random() < 0.5:
            return self.move(sorted(victims, key=lambda j: -self.inst.jobs[j].weight), deadline)
        return self.move([int(j) for j in self.rng.permutation(victims)], deadline)

    def sweep(self, deadline: Deadline) -> None:
        """Re-insert every job alone, by arrival, at its earliest completion (any-time)."""
        for j in sorted(range(len(self.plans)), key=lambda j: (self.inst.jobs[j].arrival, j)):
            if deadline.expired():
                return
            self.move([j], deadline)

    def move(self, order: list[int], deadline: Deadline) -> bool:
        """Remove the jobs of ``order`` and re-insert them in that order; keep the result when
        sum_j w_j c_j drops and verify accepts it (True), else (or when the ``deadline`` expires
        during the move) restore the schedule."""
        inst, victims = self.inst, order
        old = {j: self.plans[j] for j in victims}
        for j in victims:
            self.line.release(_use(inst, old[j]), old[j].start, old[j].duration)
        ends = [p.completion for k, p in enumerate(self.plans) if k not in old]
        new: dict[int, Plan] = {}
        for j in order:
            if deadline.expired():
                break
            plan = earliest_plan(inst, self.line, j, ends)
            self.line.take(plan)
            new[j] = plan
            ends.append(plan.completion)
        if len(new) < len(victims):
            self._restore(old, new)
            return False
        delta = sum(inst.jobs[j].weight * (new[j].completion - old[j].completion) for j in victims)
        self.tries += 1
        if delta < -1e-9 * max(1.0, self.value):
            trial = list(self.plans)
            for j in victims:
                trial[j] = new[j]
            value = checked(inst, trial)
            if value is not None:
                self.plans, self.value, self.kept = trial, value, self.kept + 1
                return True
        self._restore(old, new)
        return False

    def _restore(self, old: dict, new: dict) -> None:
        """Take the ``new`` plans off the timeline and put the ``old`` ones back."""
        for j, plan in new.items():
            self.line.release(_use(self.inst, plan), plan.start, plan.duration)
        for plan in old.values():
            self.line.take(plan)

    def _victims(self, size: int) -> list[int]:
        """Up to ``size`` jobs running at a random slot of the schedule (or arriving near it)."""
        plans, rng = self.plans, self.rng
        horizon = max(p.completion for p in plans)
        t = int(rng.integers(1, horizon))
        near = [j for j, p in enumerate(plans)
                if p.start <= t < p.completion or abs(self.inst.jobs[j].arrival - t) <= 2]
        if len(near) < 2:
            near = list(range(len(plans)))
        k = min(size, len(near))
        return [int(x) for x in rng.choice(near, size=k, replace=False)]


def _use(inst: Instance, plan: Plan) -> np.ndarray:
    use = np.outer(plan.workers, inst.e[plan.worker_type])
    if inst.is_ps:
        use = use + np.outer(plan.ps, inst.z[plan.ps_type])
    return use


#: Jobs removed per ruin-and-recreate move of :func:`improve` (cycled).
RUIN_SIZES = (2, 3, 4, 6)


def improve(inst: Instance, start: Schedule, *, deadline: Deadline, seed: int = 0,
            goal: float | None = None) -> Outcome:
    """Any-time improvement of the verified schedule ``start`` (certify's upper side, issue 19).

    First an earliest-finish list schedule over every non-dominated configuration of (2f) / (2g)
    is built from scratch (:func:`list_schedule`, jobs by a_j + d_j^min); the better of
    it and ``start`` goes on (when the deadline cut the list short, every job of ``start`` is
    re-inserted alone at its earliest completion, :meth:`Search.sweep`) to ruin and
    recreate
    (:class:`Search`): a few jobs running at a random slot are removed and re-inserted
    at their earliest completion, the change kept when sum_j w_j c_j drops. Ours, not the
    paper's; it reuses the baselines' :class:`~.baselines.Timeline` and :func:`~.baselines.place`.

    Parameters
    ----------
    inst
        The instance.
    start
        A schedule :func:`verify` accepts (non-preemptive).
    deadline
        Checked per inserted job and per move; a move takes a fraction of a second at paper
        scale.
    seed
        Seeds the moves.
    goal
        A valid lower bound on the optimum (certify's): the search stops once its cost meets it
        (the schedule is then optimal); None: it runs until the deadline.

    Returns
    -------
    Outcome
        Status ``feasible``; the schedule is never worse than ``start`` and every schedule kept
        was verified; ``info`` gives the start's and the list schedule's costs and the moves
        tried and kept.
    """
    best, value = list(start.plans), verify(inst, start)
    info: dict[str, Any] = {"start_cost": value}
    if deadline.expired():
        return Outcome(start, SolveStatus.FEASIBLE, None, {**info, "stopped": "deadline"})
    seeded = list_schedule(inst, orders(inst, deadline)[-1], deadline)
    found = None if seeded is None else checked(inst, seeded)
    info["list_cost"] = found
    # found is not None only when seeded is not None (typed Any while this ran from exact.py)
    state = Search(inst, seeded if found is not None and found < value else best,  # type: ignore[arg-type]
                   seed)
    if found is None:  # the deadline cut the list schedule short: improve the start job by job
        state.sweep(deadline)
    while not deadline.expired() and not (goal is not None and at_most(state.value, goal)):
        state.step(RUIN_SIZES[state.tries % len(RUIN_SIZES)], deadline)
    if state.value < value:
        best, value = state.plans, state.value
    info.update({"moves": state.tries, "kept": state.kept, "cost": value})
    return Outcome(Schedule(tuple(best)), SolveStatus.FEASIBLE, None, info)

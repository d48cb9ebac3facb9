"""edge_cloud: ``exact``, the configuration MILP of (2) over the columns that survive Lagrangian
reduced-cost fixing (:func:`optsched.solvers.edge_cloud.bounds.reduced_columns`), HiGHS, gap 0.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import replace
from typing import Any

import numpy as np

from optsched.deadline import Deadline
from optsched.problems.edge_cloud import Instance, Run, Schedule, verify
from optsched.result import Outcome, SolveStatus
from optsched.solvers.edge_cloud.bounds import reduced_columns
from optsched.tolerance import at_most


def exact(instance: Instance, *, deadline: Deadline, seed: int = 0) -> Outcome:
    """Configuration MILP of (2) (:func:`optsched.models.edge_cloud.build_pattern`), HiGHS, gap 0.

    1. Incumbent: the best heuristic (:func:`incumbent`); its total flow sets the per-job
       deadlines (digest §3.3) and so the columns (job, placement, start).
    2. :func:`lagrangian` bounds (2), may improve the incumbent, and fixes to 0 every column whose
       reduced cost shows it is in no schedule better than the incumbent (``L + rc > UB - 1``:
       flows are integers), except the incumbent's own columns.
    3. The MILP over the remaining columns (the incumbent's columns always among them) is solved
       with the incumbent as MIP start (:func:`~optsched.models.edge_cloud.set_start`).

    The result is never worse than the incumbent: if HiGHS returns nothing better, the incumbent is
    returned (``info["incumbent"]``: "heuristic" or "lagrangian"), with status ``time_limit`` when
    the deadline stopped the solve. The lower bound is the largest of HiGHS' dual bound on the
    reduced model (valid for (2): every schedule it excludes is no better than the incumbent,
    which it contains), the Lagrangian bound and :func:`trivial_bound`. Above :data:`MAX_COLUMNS`
    columns, :data:`MAX_PLACEMENTS` placements of a job or
    :data:`~optsched.solvers.highs.MAX_MODEL_TERMS` non-zeros (size caps, whatever the deadline),
    or when the model cannot be built in the time left (:data:`SECONDS_PER_COLUMN`), no model is
    built (``info["skipped"]``) and the incumbent is returned, with status ``time_limit`` when the
    time left ruled the model out and ``feasible`` when only a cap did (``info["size_cap"]``);
    ``info["not_built"]`` then says why (certify's cue).

    Exact for :func:`~optsched.problems.edge_cloud.verify`'s semantics: every column's length is
    the least ``verify`` accepts (:func:`~optsched.models.edge_cloud.placements`).
    """
    from optsched.solvers.highs import not_built_status

    info: dict[str, Any] = {}
    sched, ub, bound, kept = reduced_columns(instance, deadline, info)
    if kept is None:
        info["not_built"] = info["skipped"]
        return Outcome(sched, not_built_status(sched is not None, "size_cap" not in info), bound,
                       info)
    from optsched.models.edge_cloud import build_pattern, extract_pattern, set_start
    from optsched.solvers.highs import report_outcome, solve_model

    model = build_pattern(instance, kept)
    info["start_jobs"] = set_start(model, instance, sched)
    info.update(n_vars=model.nvariables(), n_cons=model.nconstraints())
    rep = solve_model(model, deadline=deadline, seed=seed, warm_start=True)
    if rep.status is SolveStatus.INFEASIBLE:  # cannot happen: the incumbent is in the model
        rep = replace(rep, status=SolveStatus.UNKNOWN)
    if rep.has_solution and not at_most(rep.objective, ub):  # stopped early, worse than the incumbent
        rep = replace(rep, has_solution=False)
    if rep.has_solution:
        info["incumbent"] = "milp"
    return report_outcome(rep, lambda: extract_pattern(instance, model), lower_bound=bound,
                          fallback=sched, info=info)


def exact_model(instance: Instance, *, deadline: Deadline) -> Any:
    """The column MILP :func:`exact` solves in its step 3, built but not solved: the same reduced
    column set (:func:`~optsched.solvers.edge_cloud.bounds.reduced_columns`: the heuristics'
    incumbent, the Lagrangian bound, reduced-cost fixing); ``optsched solve --write-model``.
    Raises :class:`~optsched.errors.OptschedError` (one line) when :func:`exact` would build no
    model (a size cap or the time left)."""
    from optsched.errors import OptschedError
    from optsched.models.edge_cloud import build_pattern

    info: dict[str, Any] = {}
    _, ub, bound, kept = reduced_columns(instance, deadline, info)
    if kept is None:
        raise OptschedError(f"model not built: {info['skipped']}")
    model = build_pattern(instance, kept)
    model.name = (f"edge_cloud exact: column MILP of (2) over the columns kept by reduced-cost "
                  f"fixing, incumbent {ub:g}, bound {bound:g}")
    return model

# ------------------------------------------------------------ certify's upper side: improvement
#: Perturbations of the list order in :func:`improve`'s search, in run lengths (cycled).
SIGMAS = (0.05, 0.15, 0.4)


class Placer:
    """Earliest-completion placement of one job at a time on the slotted capacity of greedy_ect
    (:class:`~optsched.solvers.edge_cloud.baselines._Line`), with *distributed* placements as well
    as co-located ones (eq. (1): ``R^0`` workers-slots spread over any ready servers, PS on any
    ready server; ``R^1`` all on one server with its PS). A run may start only at a job's ready
    slot ``a_j + Delta_js`` ((2i)) or at a slot where a reservation ends: between two such slots
    the free capacity only shrinks going right, so an earlier start fits whatever a later one does
    and ends earlier. Every run respects (2a)-(2i) by construction; :func:`verify` checks it."""

    def __init__(self, instance: Instance):
        from optsched.solvers.edge_cloud.baselines import _Line

        self.instance = instance
        self.line = _Line(instance)
        self.runs: dict[int, Run] = {}
        self.releases: list[int] = []
        self.required: dict[int, tuple[int, int]] = {}

    def usage(self, j: int, run: Run) -> dict[tuple[int, int], int]:
        job = self.instance.jobs[j]
        use = {(s, job.worker_type): n for s, n in run.workers}
        use[(run.ps, self.line.n_u + job.ps_type)] = 1
        return use

    def put(self, j: int, run: Run) -> None:
        self.line.reserve(self.usage(j, run), run.start, run.length)
        self.runs[j] = run
        bisect.insort(self.releases, run.end + 1)

    def take(self, j: int) -> Run:
        run = self.runs.pop(j)
        self.line.release(self.usage(j, run), run.start, run.length)
        self.releases.pop(bisect.bisect_left(self.releases, run.end + 1))
        return run

    def best(self, j: int, limit: int | None = None) -> Run | None:
        """The run of job ``j`` that ends first (ties: earlier start, fewer workers) and ends before
        slot ``limit`` (None: any end), or None. Runs of at least ``D_j / 4`` workers are searched
        first; the rest only when none of those fits."""
        job = self.instance.jobs[j]
        if limit is not None:
            return self._scan(j, limit)
        h0 = max(self.releases[-1] if self.releases else 0, self._h0(j))
        short = self._scan(j, h0 + 4 * -(-job.required(0) // job.chunks) + 1)
        return short if short is not None else self._scan(j, h0 + job.required(0) + 1)

    def _h0(self, j: int) -> int:
        job = self.instance.jobs[j]
        ready = [job.arrival + d for d in job.delay]
        return max(min(r for r, w in zip(ready, self.instance.W[:, job.worker_type]) if w),
                   min(r for r, p in zip(ready, self.instance.P[:, job.ps_type]) if p))

    def _scan(self, j: int, limit: int) -> Run | None:
        """Earliest-ending run of ``j`` ending before ``limit`` over the candidate starts."""
        job = self.instance.jobs[j]
        h0 = self._h0(j)
        ready = np.array([job.arrival + d for d in job.delay])
        starts = sorted({int(r) for r in ready if r >= h0} |
                        set(self.releases[bisect.bisect_left(self.releases, h0):]))
        found = None
        for h in starts:
            if h >= limit:
                break
            run = self._at(j, h, limit - h, ready)
            if run is not None:
                found, limit = run, run.end
        return found

    def _at(self, j: int, h: int, span: int, ready: np.ndarray) -> Run | None:
        """The run of job ``j`` starting at ``h`` that ends first within ``span`` slots."""
        job, line = self.instance.jobs[j], self.line
        u, v = job.worker_type, line.n_u + job.ps_type
        line._grow(h + span)
        ws, ps = self._servers(j)
        wfree = np.minimum.accumulate(line.free[ws, u, h:h + span], axis=1) * (ready[ws] <= h)[:, None]
        pfree = np.minimum.accumulate(line.free[ps, v, h:h + span], axis=1) * (ready[ps] <= h)[:, None]
        R0, R1 = self._required(j)
        N = np.arange(job.chunks, 0, -1)
        best = None
        # co-located (xi = 1): one server holds N workers and a PS over the run (most N first)
        both = np.flatnonzero(np.isin(ws, ps))
        d = -(-R1 // N)
        ok = d <= span
        if len(both) and ok.any():
            n, d = N[ok], d[ok]
            fit = (wfree[both][:, d - 1] >= n) & (pfree[np.searchsorted(ps, ws[both])][:, d - 1] >= 1)
            hit = np.flatnonzero(fit.any(axis=0))
            if len(hit):
                i = hit[0]
                k = both[np.flatnonzero(fit[:, i])]
                s = int(ws[k[np.argmin(wfree[k, d[i] - 1])]])
                best = Run(h, h + int(d[i]) - 1, s, ((s, int(n[i])),))
                span = int(d[i]) - 1
        # distributed (xi = 0): any ready servers, PS on any ready server
        d = -(-R0 // N)
        ok = d <= span
        if ok.any():
            n, d = N[ok], d[ok]
            hit = np.flatnonzero((wfree[:, d - 1].sum(axis=0) >= n) & (pfree[:, d - 1] >= 1).any(axis=0))
            if len(hit):
                dd = int(d[hit[0]])
                return self._spread(h, dd, -(-R0 // dd), ws, wfree[:, dd - 1], ps, pfree[:, dd - 1])
        return best

    def _required(self, j: int) -> tuple[int, int]:
        """``(R^0_j, R^1_j)``, cached."""
        if j not in self.required:
            job = self.instance.jobs[j]
            self.required[j] = (job.required(0), job.required(1))
        return self.required[j]

    def _servers(self, j: int) -> tuple[np.ndarray, np.ndarray]:
        """Servers with a type-u_j worker slot, servers with a type-v_j PS slot (sorted)."""
        job = self.instance.jobs[j]
        return (np.flatnonzero(self.instance.W[:, job.worker_type] > 0),
                np.flatnonzero(self.instance.P[:, job.ps_type] > 0))

    @staticmethod
    def _spread(h: int, d: int, N: int, ws: np.ndarray, wfree: np.ndarray, ps: np.ndarray,
                pfree: np.ndarray) -> Run:
        """N workers on the servers with the most free slots, PS on the server with most free PS."""
        workers, left = [], N
        for k in np.argsort(-wfree, kind="stable"):
            if left == 0:
                break
            n = int(min(left, wfree[k]))
            workers.append((int(ws[k]), n))
            left -= n
        return Run(h, h + d - 1, int(ps[np.argmax(pfree)]), tuple(sorted(workers)))


def list_schedule(instance: Instance, order: list[int], deadline: Deadline) -> Placer | None:
    """Place jobs in ``order`` by :meth:`Placer.best` (None when ``deadline`` passes first or a
    job has no placement)."""
    placer = Placer(instance)
    for j in order:
        if deadline.expired():
            return None
        run = placer.best(j)
        if run is None:   # no placement at all: no list schedule in this order
            return None
        placer.put(j, run)
    return placer


def _flow(instance: Instance, runs: dict[int, Run]) -> int:
    return sum(run.end - instance.jobs[j].arrival for j, run in runs.items())


def improve(instance: Instance, start: Schedule, *, deadline: Deadline, seed: int = 0,
            goal: float | None = None) -> Outcome:
    """Any-time improvement of a verified schedule (certify's upper side; ours, not the paper's).

    1. List schedules by :class:`Placer` (earliest completion over co-located *and* distributed
       placements, eq. (1)) in the orders of: arrival, start in ``start``, arrival plus single-job
       flow, and (when :func:`~optsched.solvers.edge_cloud.bounds.colgen_bound` ran on this
       instance) the pool LP's mean start, end and midpoint (LP-based list scheduling).
    2. Randomised list orders around the best schedule (:func:`_search`): its starts perturbed
       by a normal noise of :data:`SIGMAS` run lengths; a list of no larger flow is kept.

    Never worse than ``start`` (returned when nothing beats it); every returned schedule passes
    :func:`verify`; ``deadline`` is checked before every placement. ``goal`` (a valid lower bound,
    certify's) stops step 2 once a schedule meets it.
    """
    from optsched.solvers.edge_cloud.bounds import LP_MEANS, single_job_flow

    best, best_value = start, verify(instance, start)
    info: dict[str, Any] = {"start": best_value, "moves": 0, "kept": 0}
    jobs = range(len(instance.jobs))
    arrival = [instance.jobs[j].arrival for j in jobs]
    keys = {"arrival": arrival, "start": [start.runs[j][0].start for j in jobs],
            "arrival+flow": [arrival[j] + single_job_flow(instance, j) for j in jobs]}
    if instance in LP_MEANS:       # the pool LP's mean starts (colgen_bound ran on this instance)
        lp_start, lp_end = LP_MEANS[instance]
        keys.update(lp_start=list(lp_start), lp_end=list(lp_end), lp_mid=list(lp_start + lp_end))
    order, value, runs = None, math.inf, {}
    for name, key in keys.items():
        placer = list_schedule(instance, sorted(jobs, key=lambda j: (key[j], j)), deadline)
        if placer is None:
            break
        flow = _flow(instance, placer.runs)
        info[f"list_{name}"] = flow
        if flow < value:
            order, value, runs = name, flow, dict(placer.runs)
    info["order"] = order
    if order is not None:
        value, runs = _search(instance, value, runs, deadline, seed, info, goal)
        sched = Schedule.single([runs[j] for j in jobs])
        if verify(instance, sched) < best_value:
            best, best_value = sched, verify(instance, sched)
    info["value"] = best_value
    status = SolveStatus.TIME_LIMIT if deadline.expired() else SolveStatus.FEASIBLE
    return Outcome(best, status, None, info)


def _search(instance: Instance, value: float, runs: dict[int, Run], deadline: Deadline, seed: int,
            info: dict, goal: float | None = None) -> tuple[float, dict[int, Run]]:
    """Step 2 of :func:`improve`: list schedules in the order of the best schedule's starts
    perturbed by ``N(0, sigma^2)`` times each run's length (sigma cycling through :data:`SIGMAS`);
    a schedule of no larger total flow replaces the best."""
    rng = np.random.default_rng(seed)
    jobs = range(len(instance.jobs))
    while not deadline.expired() and not (goal is not None and at_most(value, goal)):
        sigma = SIGMAS[info["moves"] % len(SIGMAS)]
        key = [runs[j].start + sigma * rng.standard_normal() * runs[j].length for j in jobs]
        placer = list_schedule(instance, sorted(jobs, key=lambda j: (key[j], j)), deadline)
        if placer is None:
            break
        info["moves"] += 1
        flow = _flow(instance, placer.runs)
        if flow <= value:
            info["kept"] += flow < value
            value, runs = flow, dict(placer.runs)
    return value, runs

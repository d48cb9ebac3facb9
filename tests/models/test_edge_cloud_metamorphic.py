"""edge_cloud's table of the metamorphic relations of its exact model (time-indexed MILP of (2));
tests/metamorphic.py states the relations once, tests/models/test_metamorphic.py runs them.

Every example is a tiny instance drawn by a hypothesis strategy (1-3 servers, 1-2 worker and PS
types, 1-3 jobs with at most 6 job-server pairs; capacities and delays that may be 0, no
communication cost or one as large as the compute time, per mini-batch times on the tolerance
edge such as 1.0000005 and 0.9999995). For each example whose ``exact`` solve is proven optimal
(others are rejected with ``assume`` and do not count), one property checks, each comparing two
independent computations:

a. relabelling: permuting the jobs, the servers, the worker types and the PS types at once gives
   the same optimum, and the relabelled optimum mapped back verifies on the original with that
   value. Problem (2) and the MILP are symmetric in all four (no symmetry breaking, sparse sets
   built per (job, server), capacities per (server, type)); only the heuristic upper bound that
   sets the MILP's deadlines depends on the labels, and the deadlines are valid for every optimum.
b. scaling: slots are integral, so scaling every time by ``c`` is not exact (durations
   ``ceil(R / N)`` do not scale and a finer time axis allows more starts). Two transformations are:
   (b1) the time unit of the work: per mini-batch times ``n_j, H_j, k_j`` divided by ``c = 2^k``
   and the work ``E_j`` multiplied by ``c``, plus a shift of every arrival by ``d`` slots. Powers
   of two scale binary floats exactly, so ``p'^xi = c p^xi``, ``d p'^xi = c (d p^xi)`` and
   ``Q' - slack(Q') = c (Q - slack(Q))`` bit for bit: every (2e) check, hence every feasible
   schedule shifted by ``d``, is the same, and the optimum is unchanged (the objective counts
   flow slots, whose number does not change).
   (b2) dilation by 2 (arrivals ``a -> 2a - 1``, delays and per mini-batch times doubled): the
   optimal run ``h..c`` mapped to ``2h-1..2c`` verifies with flow ``2 (c - a) + 1``, so
   ``OPT' <= 2 OPT + J`` exactly; only this direction holds (the dilated axis allows starts on
   even slots and two dilated slots would share one original slot's capacity), and only the
   mapped schedule is checked (solving the dilated instance doubles the horizon and the runtime).
c. local improvement: every single-move neighbour of the optimum (shift the run one slot either
   way, move its start or end by one slot, move the PS to another server, move one worker to
   another server, add or remove one worker; the placement moves take the shortest run verify
   accepts) that verify accepts has objective >= the optimum (within tolerance.close).

Statistics (``pytest --hypothesis-show-statistics``) count the neighbours checked.
"""

from __future__ import annotations

import functools
from dataclasses import replace

from hypothesis import assume, event
from hypothesis import strategies as st

from optsched import solve
from optsched.problems.edge_cloud import SLOT_SECONDS, Instance, Job, Run, Schedule, verify
from optsched.result import SolveStatus

from tests.metamorphic import Relabelling, Scaling, Table

TIME_LIMIT = 20.0
BANDWIDTH = 1000.0
# per mini-batch compute times (slots); with 0.50000005 / 1.0000005 the work is met within 1e-7
# relative by one worker-slot fewer than ceil(Q * per_batch); 0.9999995 sits just below 1
EDGE = (0.50000005, 0.9999995, 1.0000005)
COMPUTE = (0.1, 0.25, 1 / 3, 0.5, 1.0) + EDGE
COMM = (0.0, 0.25, 0.5, 1.0)                     # 2 k / B in slots


@st.composite
def instances(draw) -> Instance:
    S = draw(st.integers(1, 3))
    U = draw(st.integers(1, 2))
    V = draw(st.integers(1, 2))
    W = [[draw(st.integers(0, 2)) for _ in range(U)] for _ in range(S)]
    P = [[draw(st.integers(0, 1)) for _ in range(V)] for _ in range(S)]
    for u in range(U):                    # servable: some server has a type-u worker / type-v PS
        if not any(W[s][u] for s in range(S)):
            W[draw(st.integers(0, S - 1))][u] = draw(st.integers(1, 2))
    for v in range(V):
        if not any(P[s][v] for s in range(S)):
            P[draw(st.integers(0, S - 1))][v] = 1
    jobs = []
    for _ in range(draw(st.integers(1, 3 if S < 3 else 2))):  # J x S <= 6 keeps solves < 1 s
        comm = draw(st.sampled_from(COMM))
        jobs.append(Job(
            arrival=draw(st.integers(1, 3)), worker_type=draw(st.integers(0, U - 1)),
            ps_type=draw(st.integers(0, V - 1)), epochs=draw(st.integers(1, 2)),
            chunks=draw(st.integers(1, 3)), minibatches=1,
            compute=draw(st.sampled_from(COMPUTE)), update=draw(st.sampled_from((0.0, 0.05))),
            grad_mb=comm * BANDWIDTH * SLOT_SECONDS / 16.0, bandwidth=BANDWIDTH,
            delay=tuple(draw(st.integers(0, 2)) for _ in range(S))))
    return Instance(workers=tuple(map(tuple, W)), ps=tuple(map(tuple, P)), jobs=tuple(jobs),
                    horizon=16, cloud=(S - 1,))


def _optimum(inst: Instance):
    return solve(inst, "exact", time_limit=TIME_LIMIT)


def _proven(inst: Instance):
    """The proven optimum of a drawn instance (others are rejected)."""
    res = _optimum(inst)
    assume(res.status is SolveStatus.OPTIMAL)
    assert res.info.get("model_objective_agrees") is not False
    assert verify(inst, res.schedule) == res.objective
    if any(job.compute in EDGE for job in inst.jobs):
        event("instance has a tolerance-edge compute time")
    return res


# ------------------------------------------------------------------ (a) relabelling
def _relabel(inst: Instance, jperm, sperm, uperm, vperm) -> Instance:
    """Job k of the result is job jperm[k]; server s becomes sperm[s]; types u, v become uperm[u],
    vperm[v]."""
    S = inst.n_servers
    W = [[0] * inst.n_wtypes for _ in range(S)]
    P = [[0] * inst.n_ptypes for _ in range(S)]
    for s in range(S):
        for u in range(inst.n_wtypes):
            W[sperm[s]][uperm[u]] = inst.workers[s][u]
        for v in range(inst.n_ptypes):
            P[sperm[s]][vperm[v]] = inst.ps[s][v]
    jobs = []
    for k in range(len(inst.jobs)):
        job = inst.jobs[jperm[k]]
        delay = [0] * S
        for s in range(S):
            delay[sperm[s]] = job.delay[s]
        jobs.append(replace(job, worker_type=uperm[job.worker_type], ps_type=vperm[job.ps_type],
                            delay=tuple(delay)))
    return Instance(workers=tuple(map(tuple, W)), ps=tuple(map(tuple, P)), jobs=tuple(jobs),
                    horizon=inst.horizon, cloud=tuple(sorted(sperm[c] for c in inst.cloud)))


def _map_back(sched: Schedule, jperm, sperm) -> Schedule:
    inv = {new: old for old, new in enumerate(sperm)}
    runs = [None] * len(jperm)
    for k, (run,) in enumerate(sched.runs):
        runs[jperm[k]] = Run(run.start, run.end, inv[run.ps],
                             tuple(sorted((inv[s], n) for s, n in run.workers)))
    return Schedule.single(runs)


def relabellings(data, inst: Instance) -> list[Relabelling]:
    """(a) jobs, servers, worker types and PS types at once."""
    jperm, sperm, uperm, vperm = (data.draw(st.permutations(range(n))) for n in (
        len(inst.jobs), inst.n_servers, inst.n_wtypes, inst.n_ptypes))
    return [Relabelling("jobs, servers, worker and PS types",
                        _relabel(inst, jperm, sperm, uperm, vperm),
                        functools.partial(_map_back, jperm=jperm, sperm=sperm))]


# ------------------------------------------------------------------ (b) scaling
def _unit_scaled(inst: Instance, c: int, shift: int) -> Instance:
    """(b1): per mini-batch times / c, epochs * c (c a power of two), arrivals + shift."""
    jobs = tuple(replace(job, arrival=job.arrival + shift, epochs=job.epochs * c,
                         compute=job.compute / c, update=job.update / c, grad_mb=job.grad_mb / c)
                 for job in inst.jobs)
    return replace(inst, jobs=jobs)


def _shifted(sched: Schedule, shift: int) -> Schedule:
    return Schedule.single([Run(r.start + shift, r.end + shift, r.ps, r.workers)
                            for (r,) in sched.runs])


def _dilated(inst: Instance) -> Instance:
    """(b2): arrivals a -> 2a - 1, delays and per mini-batch times doubled (exact in binary)."""
    jobs = tuple(replace(job, arrival=2 * job.arrival - 1, delay=tuple(2 * d for d in job.delay),
                         compute=2 * job.compute, update=2 * job.update, grad_mb=2 * job.grad_mb)
                 for job in inst.jobs)
    return replace(inst, jobs=jobs)


def _dilate(sched: Schedule) -> Schedule:
    return Schedule.single([Run(2 * r.start - 1, 2 * r.end, r.ps, r.workers) for (r,) in sched.runs])


def scalings(data, inst: Instance) -> list[Scaling]:
    """(b1) work time unit: times / c, work * c, arrivals + shift -> the same optimum; (b2)
    dilation by 2: the mapped optimum verifies at exactly 2 OPT + J (an upper bound on the dilated
    optimum; its solve, on twice the horizon, is left out for the runtime budget)."""
    c, shift = 2 ** data.draw(st.integers(1, 3)), data.draw(st.integers(0, 2))
    return [Scaling(f"(b1) unit-scaled, c={c}, shift={shift}", _unit_scaled(inst, c, shift),
                    forward=functools.partial(_shifted, shift=shift),
                    back=functools.partial(_shifted, shift=-shift)),
            Scaling("(b2) dilated", _dilated(inst), factor=2.0, offset=len(inst.jobs),
                    forward=_dilate, solve=False)]


# ------------------------------------------------------------------ (c) single moves
def _placements(inst: Instance, run: Run):
    """Runs with one placement change (PS moved, one worker moved, added or removed), same start,
    ending anywhere from the start to one slot after the current end."""
    S = inst.n_servers
    workers = dict(run.workers)
    vectors = []
    for s in workers:
        for t in range(S):
            if t != s:                                        # one worker from s to t
                w = dict(workers)
                w[s] -= 1
                w[t] = w.get(t, 0) + 1
                vectors.append(w)
        if sum(workers.values()) > 1:                         # one worker fewer
            w = dict(workers)
            w[s] -= 1
            vectors.append(w)
    for t in range(S):                                        # one worker more
        w = dict(workers)
        w[t] = w.get(t, 0) + 1
        vectors.append(w)
    out = [(run.ps, w) for w in vectors]
    out += [(p, workers) for p in range(S) if p != run.ps]    # PS moved
    for ps, w in out:
        pairs = tuple(sorted((s, n) for s, n in w.items() if n > 0))
        for end in range(run.start, run.end + 2):
            yield Run(run.start, end, ps, pairs)


def _neighbours(inst: Instance, sched: Schedule):
    for j, (run,) in enumerate(sched.runs):
        moved = [Run(run.start + d, run.end + d, run.ps, run.workers) for d in (-1, 1)]
        moved += [Run(run.start + d, run.end, run.ps, run.workers) for d in (-1, 1)]
        moved += [Run(run.start, run.end + d, run.ps, run.workers) for d in (-1, 1)]
        moved += list(_placements(inst, run))
        for new in moved:
            if new.start < 1 or new.end < new.start:
                continue
            runs = list(r for (r,) in sched.runs)
            runs[j] = new
            yield Schedule.single(runs)


TABLE = Table("edge_cloud", instances(), optimum=_proven, solve=_optimum,
              relabellings=relabellings, scalings=scalings, neighbours=_neighbours,
              properties=(("relabelling", "scaling", "local"),))

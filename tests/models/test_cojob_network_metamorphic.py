"""cojob_network's table of the metamorphic relations (tests/metamorphic.py states them once;
tests/models/test_metamorphic.py runs them). Each property runs on 50 drawn tiny instances on
which ``exact`` proves optimality (``assume`` discards the others, so hypothesis keeps drawing
until 50 count) and compares two independent computations:

a. relabelling: the optimum is invariant when the cojobs are permuted, the jobs inside each cojob,
   the flows inside each job, the ingress machines and (independently) the egress machines, and
   when every flow is reversed (s -> d becomes d -> s). All are exact symmetries of (O): a flow is
   seen only through its ingress port, its egress port and its bytes, every port has the same
   capacity (so ingress and egress ports may be permuted separately, and the two sides swapped),
   and a job or cojob only through its own data. The relabelled optimum, mapped back, must verify
   on the original instance at the same objective. There are no device *types* in this family
   (no worker/PS roles at this level: a PS job is just its flows), so there is nothing more to
   relabel.
b. scaling: time is continuous (rate timelines, no slots). Multiplying every byte count, arrival
   and compute gap by c (capacity fixed) maps every feasible timeline t -> c t with the same rates
   one-to-one onto the scaled instance's feasible timelines (bytes = rate x duration scale by c,
   the port constraints are pointwise, releases and gaps scale), so OPT' = c OPT exactly; and
   multiplying bytes and capacity by c maps it with rates x c and the same times, so OPT' = OPT.
   The scaled optimum mapped back (t / c, or rates / c) must verify on the original at OPT.
   c is drawn from powers of two (bit-exact in floating point) and 3, 10 (exact up to rounding,
   compared with ``tolerance.close``).
c. local improvement: from the proven optimum, no single-move neighbour that verify accepts is
   better (within ``tolerance.close``). A schedule here is a rate timeline produced by a stage
   priority order, so a single move is one of: move one stage to another position of the order
   (chain-consistent; includes every adjacent swap), give two adjacent stages of the order one
   shared class (max-min fair between them instead of strict priority), swap two consecutive rate
   segments of the timeline, or replace two consecutive segments by their time-average (a convex
   combination: capacities hold, flows that ended in the first now end later and flows of the
   second start earlier). Timeline moves re-set each stage start to the earliest allowed
   (``S_{g,k-1}`` / the arrival); verify decides whether the move is feasible.
"""

from __future__ import annotations

import functools
import itertools

from hypothesis import assume, event
from hypothesis import strategies as st

from optsched import solve, verify
from optsched.errors import InfeasibleSchedule
from optsched.problems.cojob_network import (Cojob, Instance, Job, Schedule, Segment,
                                             stage_completion_times)
from optsched.result import SolveStatus
from optsched.simulate.flows import StageOrder, schedule_of, simulate

from tests.metamorphic import Relabelling, Scaling, Table

#: flow sizes: small integers, and degenerate / tolerance-edge values on purpose
SIZES = (1.0, 2.0, 3.0, 0.5, 0.25, 1.0000005, 0.9999995, 100.0)


@st.composite
def tiny_instances(draw) -> Instance:
    """1-3 cojobs of 1-2 jobs on 1-3 machines, 1-2 stages of 1-2 iterations, at most 5 stages in all;
    1-3 flows per job. Drawn on purpose: a single machine (every flow on one link), capacities
    other than 1, tolerance-edge and 100x sizes, killed jobs (successive halving), arrivals and
    compute gaps (rarer: Model F ignores both, so ``exact`` rarely proves those)."""
    machines = draw(st.sampled_from((1, 2, 2, 3)))
    capacity = draw(st.sampled_from((1.0, 1.0, 1.0, 0.5, 4.0, 1e-3)))
    n_cojobs = draw(st.integers(1, 3))
    stage_budget = 5
    cojobs = []
    for g in range(n_cojobs):
        left = stage_budget - (n_cojobs - g - 1)
        K = draw(st.integers(1, min(2, left)))
        stage_budget -= K
        iters = tuple(itertools.accumulate(draw(st.lists(st.integers(1, 2), min_size=K,
                                                         max_size=K))))
        n_jobs = draw(st.integers(1, 2))
        jobs = []
        for j in range(n_jobs):
            stages = K if j == 0 else draw(st.integers(1, K))
            pairs = draw(st.lists(st.tuples(st.integers(0, machines - 1),
                                            st.integers(0, machines - 1)),
                                  min_size=1, max_size=3, unique=True))
            flows = tuple((s, d, draw(st.sampled_from(SIZES)) * capacity) for s, d in pairs)
            compute = draw(st.sampled_from((0.0,) * 5 + (0.5,)))
            jobs.append(Job(stages, flows, compute))
        arrival = draw(st.sampled_from((0.0,) * 4 + (1.0, 2.5)))
        cojobs.append(Cojob(arrival, iters, tuple(jobs)))
    return Instance(machines, tuple(cojobs), capacity)


@functools.lru_cache(maxsize=512)
def _exact(inst: Instance):
    return solve(inst, "exact")


def _optimal(inst: Instance):
    res = _exact(inst)
    event(f"exact {res.status.value}")
    assume(res.status is SolveStatus.OPTIMAL)
    assert verify(inst, res.schedule) == res.objective
    return res


# ----------------------------------------------------------------------------------------------------
# a. relabelling


def _relabel(inst: Instance, pg, pj, pf, ps, pd, reverse: bool) -> Instance:
    """Cojob ``g`` becomes ``pg.index(g)``... i.e. new cojob ``n`` is old ``pg[n]``; likewise jobs
    (``pj[g]``), flows (``pf[g][j]``); machine ``s`` -> ``ps[s]`` on ingress, ``d`` -> ``pd[d]`` on
    egress; ``reverse`` swaps the two ends of every flow (after renaming)."""
    cojobs = []
    for g in pg:
        c = inst.cojobs[g]
        jobs = []
        for j in pj[g]:
            job = c.jobs[j]
            flows = []
            for f in pf[g][j]:
                s, d, x = job.flows[f]
                s, d = ps[s], pd[d]
                flows.append((d, s, x) if reverse else (s, d, x))
            jobs.append(Job(job.stages, tuple(flows), job.compute))
        cojobs.append(Cojob(c.arrival, c.iterations, tuple(jobs), c.model))
    return Instance(inst.machines, tuple(cojobs), inst.capacity)


def _map_back(sched: Schedule, pg, pj, pf) -> Schedule:
    """A schedule of the relabelled instance, in the original's names."""
    starts = [None] * len(pg)
    for n, g in enumerate(pg):
        row = [None] * len(pj[g])
        for m, j in enumerate(pj[g]):
            row[j] = sched.starts[n][m]
        starts[g] = tuple(row)
    segments = tuple(Segment(s.t0, s.t1, tuple((pg[g], pj[pg[g]][j], i, pf[pg[g]][pj[pg[g]][j]][f], r)
                                               for g, j, i, f, r in s.rates))
                     for s in sched.segments)
    order = tuple((pg[g], k) for g, k in sched.order)
    return Schedule(tuple(starts), segments, order, sched.policy)


def relabellings(data, inst: Instance) -> list[Relabelling]:
    perm = lambda n: data.draw(st.permutations(range(n)))              # noqa: E731
    pg = perm(len(inst.cojobs))
    pj = [perm(len(c.jobs)) for c in inst.cojobs]
    pf = [[perm(len(job.flows)) for job in c.jobs] for c in inst.cojobs]
    ps, pd = perm(inst.machines), perm(inst.machines)
    reverse = data.draw(st.booleans())
    # F* and the best simulated order are invariant
    return [Relabelling("cojobs, jobs, flows, ingress and egress machines"
                        + (", flows reversed" if reverse else ""),
                        _relabel(inst, pg, pj, pf, ps, pd, reverse),
                        functools.partial(_map_back, pg=pg, pj=pj, pf=pf))]


# ----------------------------------------------------------------------------------------------------
# b. scaling


def _scaled(inst: Instance, c: float, with_capacity: bool) -> Instance:
    cojobs = tuple(Cojob(co.arrival * (1 if with_capacity else c), co.iterations,
                         tuple(Job(j.stages, tuple((s, d, x * c) for s, d, x in j.flows),
                                   j.compute * (1 if with_capacity else c)) for j in co.jobs),
                         co.model)
                   for co in inst.cojobs)
    return Instance(inst.machines, cojobs, inst.capacity * (c if with_capacity else 1))


def _scaled_back(sched: Schedule, c: float, with_capacity: bool) -> Schedule:
    """The scaled instance's schedule on the original: same times and rates / c, or times / c."""
    if with_capacity:
        segs = tuple(Segment(s.t0, s.t1, tuple((*r[:4], r[4] / c) for r in s.rates))
                     for s in sched.segments)
        starts = sched.starts
    else:
        segs = tuple(Segment(s.t0 / c, s.t1 / c, s.rates) for s in sched.segments)
        starts = tuple(tuple(tuple(t / c for t in st_) for st_ in job) for job in sched.starts)
    return Schedule(starts, segs, sched.order)


def scalings(data, inst: Instance) -> list[Scaling]:
    c = data.draw(st.sampled_from((0.5, 2.0, 4.0, 0.25, 3.0, 10.0)), "c")
    with_capacity = data.draw(st.booleans(), "with capacity")
    return [Scaling(f"bytes{' and capacity' if with_capacity else ', arrivals and gaps'} x {c}",
                    _scaled(inst, c, with_capacity), factor=1.0 if with_capacity else c,
                    back=functools.partial(_scaled_back, c=c, with_capacity=with_capacity))]


# ----------------------------------------------------------------------------------------------------
# c. local improvement


class _SharedClass:
    """The stage order with stages ``order[i]`` and ``order[i + 1]`` in one class (max-min fair
    between them, strict priority otherwise)."""

    name = "shared_class"

    def __init__(self, order, i: int):
        self.position = {a: n for n, a in enumerate(order)}
        self.position[order[i + 1]] = i

    def classes(self, sim, events):
        return {(g, j): self.position[g, sim.stage[g]] for g, j in sim.communicating()}


def _chain_ok(order) -> bool:
    pos = {a: n for n, a in enumerate(order)}
    return all(pos[g, k - 1] < pos[g, k] for g, k in order if k)


def _earliest_starts(inst: Instance, segments) -> Schedule | None:
    """The timeline ``segments`` with every stage started as early as (8)-(9) allow."""
    probe = Schedule(tuple(tuple((0.0,) * job.stages for job in c.jobs) for c in inst.cojobs),
                     tuple(segments))
    try:
        S = stage_completion_times(inst, probe)
    except InfeasibleSchedule:
        return None
    starts = tuple(tuple(tuple(S[g][k - 1] if k else c.arrival for k in range(job.stages))
                         for job in c.jobs) for g, c in enumerate(inst.cojobs))
    return Schedule(starts, tuple(segments), (), "move")


def neighbours(inst: Instance, sched: Schedule):
    """Every single-move neighbour of ``sched`` (see the module docstring) as ``(kind, schedule)``."""
    order = list(sched.order)
    for i, j in itertools.permutations(range(len(order)), 2):
        moved = order[:i] + order[i + 1:]
        moved.insert(j, order[i])
        if _chain_ok(moved):
            yield "order", schedule_of(simulate(inst, StageOrder(moved)), moved, "move")
    for i in range(len(order) - 1):
        yield "shared", schedule_of(simulate(inst, _SharedClass(order, i)), (), "move")
    segs = list(sched.segments)
    for n in range(len(segs) - 1):
        a, b = segs[n], segs[n + 1]
        da, db = a.t1 - a.t0, b.t1 - b.t0
        yield "swap", _earliest_starts(inst, segs[:n] + [Segment(a.t0, a.t0 + db, b.rates),
                                                          Segment(a.t0 + db, b.t1, a.rates)]
                                        + segs[n + 2:])
        mix: dict = {}
        for seg, w in ((a, da), (b, db)):
            for *key, r in seg.rates:
                mix[tuple(key)] = mix.get(tuple(key), 0.0) + r * w / (da + db)
        yield "average", _earliest_starts(
            inst, segs[:n] + [Segment(a.t0, b.t1, tuple((*k, r) for k, r in mix.items()))]
            + segs[n + 2:])


def single_moves(inst: Instance, sched: Schedule):
    """The neighbours' schedules (None where a timeline move leaves no valid stage starts)."""
    for _, cand in neighbours(inst, sched):
        yield cand


TABLE = Table("cojob_network", tiny_instances(), optimum=_optimal, solve=_exact,
              relabellings=relabellings, scalings=scalings, neighbours=single_moves,
              properties=(("relabelling",), ("scaling",), ("local",)))

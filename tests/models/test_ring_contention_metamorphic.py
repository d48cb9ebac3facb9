"""ring_contention's table of the metamorphic relations of its exact method (tests/metamorphic.py
states them once, tests/models/test_metamorphic.py runs them). The property compares two
independent computations on >= 50 drawn tiny instances:

a. relabelling: the optimum is invariant when the jobs are permuted, and when the servers are
   permuted (capacities and placement vectors with them); the relabelled optimum, mapped back,
   verifies on the original instance at the same makespan. Both are exact symmetries of RAR-DDLS:
   verify and M1 see servers only through O_s and per-server counts, and jobs only through their
   own data. There are no device *types* in this family (all GPUs identical, one ring worker per GPU,
   no worker/PS roles), and GPUs within a server are never named (placements are counts per server),
   so there is no further relabelling to test.
b. scaling: time is slotted and the speed is floor(1 / tau) (within the tolerance), so the makespan
   is NOT homogeneous in the times: scaling every time by c changes floor(1 / (c tau)) in a way no
   formula predicts. The transform used is "split every iteration into k sub-iterations":
   F_j -> k F_j and every time term of (8) divided by k (fp_time, bp_time, xi2 divided, b^e, b^i,
   C multiplied), k a power of two so that tau' = tau / k bit for bit (power-of-two scaling is exact
   in binary floating point). Then k phi(tau) <= phi(tau / k) exactly (the float product
   (k phi)(tau / k) equals phi tau), so every job progresses at least as fast relative to its work:
   OPT' <= OPT always, and when phi' = k phi for every (job, servers, contention) the remaining work
   of every schedule is exactly k times the original in every slot, so every schedule has the same
   completion times and OPT' == OPT (the makespan scales by c = 1; the slot is unchanged). The
   "reciprocal" examples (no gradient, no overhead, bp_time = 1 / q) make that equality hold.
c. local improvement: no single-move neighbour of the proven optimum that verify accepts (one job's
   start +-1, one job moved to any other placement vector, two jobs' starts swapped) is better; and
   M1 built directly with horizon = OPT and no lower bound (so the model itself, not the
   lower-bound shortcut of ``exact``) finds a schedule of makespan OPT, and with horizon OPT - 1 is
   infeasible when ``exact`` closed the instance by its lower bound.
"""

from __future__ import annotations

import functools
import itertools

from hypothesis import assume, event
from hypothesis import strategies as st

from optsched import solve, verify
from optsched.errors import InvalidInstance
from optsched.models import ring_contention as rm
from optsched.problems.ring_contention import Instance, Schedule
from optsched.result import SolveStatus
from optsched.solvers.highs import solve_model
from optsched.tolerance import close

from tests.metamorphic import Relabelling, Scaling, Table, with_fields


def _floats(lo: float, hi: float):
    """No subnormals: dividing one by k must stay exact (property b)."""
    return st.floats(lo, hi, allow_subnormal=False)


@st.composite
def tiny_instances(draw) -> Instance:
    """2-4 jobs on 1-3 servers of 1-4 GPUs; degenerate values (F = 1, m = 0, xi2 = 0, alpha = 0,
    b^i < b^e, one server, G = all GPUs) are drawn on purpose. ``reciprocal`` instances have
    tau = 1 / q for every placement (no gradient, no overhead); ``intra_fast`` ones have b^i = 100
    and rings of >= 2 GPUs, so a one-server placement is several times faster than a split one
    (the case where issue 13's big-M cut off schedules)."""
    mode = draw(st.sampled_from(("general", "intra_fast", "general", "reciprocal")))
    reciprocal, intra_fast = mode == "reciprocal", mode == "intra_fast"
    servers = draw(st.lists(st.integers(2, 3), min_size=2, max_size=2) if intra_fast
                   else st.lists(st.integers(1, 4), min_size=1, max_size=3))
    n_gpus = sum(servers)
    n_jobs = 2 if intra_fast else draw(st.integers(2, 4 if n_gpus <= 4 else 3))
    jobs = []
    for _ in range(n_jobs):
        g = draw(st.integers(2, 3) if intra_fast else st.integers(1, min(4, n_gpus)))
        f = draw(st.sampled_from((1, 2, 7)) | st.integers(1, 30))
        if intra_fast:  # b^i >> b^e: one-server rings several times faster than split ones
            jobs.append(dict(gpus=g, iterations=draw(st.integers(30, 150)),
                             grad_size=draw(_floats(0.01, 0.04)), batch=16, fp_time=0.0,
                             bp_time=draw(_floats(0.005, 0.02))))
            continue
        if reciprocal:
            q = draw(st.integers(3, 12))
            jobs.append(dict(gpus=g, iterations=f, grad_size=0.0, batch=1, fp_time=0.0,
                             bp_time=1.0 / q))
            continue
        jobs.append(dict(
            gpus=g, iterations=f,
            grad_size=draw(st.just(0.0) | _floats(0.0, 0.08)),
            batch=draw(st.integers(1, 32)),
            fp_time=draw(st.just(0.0) | _floats(0.0, 0.002)),
            bp_time=draw(_floats(0.005, 0.15))))
    consts = dict(bw_inter=1.0 if intra_fast else draw(st.just(1.0) | _floats(0.5, 4.0)),
                  bw_intra=100.0 if intra_fast else draw(st.just(10.0) | _floats(0.5, 100.0)),
                  reduce_speed=draw(_floats(5.0, 100.0)),
                  alpha=0.1 if intra_fast else draw(st.just(0.0) | _floats(0.0, 2.0)),
                  xi1=draw(st.just(1.0) | _floats(0.2, 1.0)),
                  xi2=0.0 if reciprocal else draw(st.just(0.0) | _floats(0.0, 0.02)))
    doc = {"family": "ring_contention", "format_version": 1, "servers": servers, "jobs": jobs,
           **consts, "horizon": 1000}
    try:
        inst = Instance.from_dict(doc)
    except InvalidInstance:
        assume(False)
    # horizon: the jobs one after another, each on its fewest servers, plus a little slack
    sequential = sum(rm.duration(inst, j, inst.min_servers(j)) for j in range(n_jobs))
    doc["horizon"] = sequential + draw(st.integers(0, 2))
    return Instance.from_dict(doc)


def _optimum(inst: Instance):
    r = solve(inst, "exact")
    assert r.status is SolveStatus.OPTIMAL, (r.status, inst.to_dict())
    assert verify(inst, r.schedule) == r.objective
    return r


# ----------------------------------------------------------------------------------------------
# a. relabelling
# ----------------------------------------------------------------------------------------------

def _jobs_back(schedule: Schedule, perm: list[int]) -> Schedule:
    """Job i of the relabelled instance is job perm[i] of the original."""
    starts, places = [None] * len(perm), [None] * len(perm)
    for i, k in enumerate(perm):
        starts[k], places[k] = schedule.starts[i], schedule.placements[i]
    return Schedule(tuple(starts), tuple(places))


def _servers_back(schedule: Schedule, perm: list[int]) -> Schedule:
    """Server i of the relabelled instance is server perm[i] of the original."""
    back = []
    for c in schedule.placements:
        orig = [0] * len(perm)
        for i, s in enumerate(perm):
            orig[s] = c[i]
        back.append(tuple(orig))
    return Schedule(schedule.starts, tuple(back))


def _moved(perm: list[int]) -> list[int]:
    """``perm``, or a rotation when it is the identity."""
    return perm[1:] + perm[:1] if perm == sorted(perm) else perm


def relabellings(data, inst: Instance) -> list[Relabelling]:
    """The jobs, then the servers (a drawn identity is replaced by a rotation; one server has
    nothing to relabel)."""
    perm = _moved(data.draw(st.permutations(range(len(inst.jobs))), "job perm"))
    d = inst.to_dict()
    out = [Relabelling(f"jobs {perm}", with_fields(inst, jobs=[d["jobs"][k] for k in perm]),
                       functools.partial(_jobs_back, perm=perm))]
    if inst.n_servers > 1:
        perm = _moved(data.draw(st.permutations(range(inst.n_servers)), "server perm"))
        relabelled = with_fields(inst, servers=[inst.servers[s] for s in perm])
        out.append(Relabelling(f"servers {perm}", relabelled,
                               functools.partial(_servers_back, perm=perm)))
    event(f"servers relabelled: {inst.n_servers > 1}")
    return out


# ----------------------------------------------------------------------------------------------
# b. scaling: k sub-iterations per iteration
# ----------------------------------------------------------------------------------------------

def refine(inst: Instance, k: int) -> Instance:
    """F_j -> k F_j and every time of (8) / k (k a power of two: tau' = tau / k exactly)."""
    d = inst.to_dict()
    jobs = [dict(jd, iterations=jd["iterations"] * k, fp_time=jd["fp_time"] / k,
                 bp_time=jd["bp_time"] / k) for jd in d["jobs"]]
    return with_fields(inst, jobs=jobs, xi2=inst.xi2 / k, bw_inter=inst.bw_inter * k,
                       bw_intra=inst.bw_intra * k, reduce_speed=inst.reduce_speed * k)


def speeds_scale_exactly(inst: Instance, fine: Instance, k: int) -> bool:
    """phi' = k phi for every job, server count and contention level reachable."""
    for j in range(len(inst.jobs)):
        for n in range(inst.min_servers(j), inst.max_servers(j) + 1):
            for p in range(1, inst.max_contention + 1):
                assert fine.tau(j, n, p) == inst.tau(j, n, p) / k  # bit for bit
                assert fine.phi(j, n, p) >= k * inst.phi(j, n, p)
                if fine.phi(j, n, p) != k * inst.phi(j, n, p):
                    return False
    return True


def _same(schedule: Schedule) -> Schedule:
    """Slots and placements are unchanged by the refinement: a schedule maps to itself."""
    return schedule


def scalings(data, inst: Instance) -> list[Scaling]:
    """k sub-iterations per iteration: the original optimum is at least as fast relative to its
    work (OPT' <= OPT), and OPT' = OPT where phi' = k phi everywhere."""
    k = data.draw(st.sampled_from((2, 4)), "k")
    fine = refine(inst, k)
    exact_scaling = speeds_scale_exactly(inst, fine, k)
    event(f"scaling exact (phi' = k phi everywhere): {exact_scaling}")
    return [Scaling(f"k={k}", fine, exact=exact_scaling, forward=_same, back=_same)]


# ----------------------------------------------------------------------------------------------
# c. local improvement, and M1 on its own at H = OPT
# ----------------------------------------------------------------------------------------------

def all_placements(inst: Instance, j: int) -> list[tuple[int, ...]]:
    g = inst.jobs[j].gpus
    return [c for c in itertools.product(*(range(min(cap, g) + 1) for cap in inst.servers))
            if sum(c) == g]


def neighbours(inst: Instance, s: Schedule):
    n = len(inst.jobs)
    for j in range(n):
        for delta in (-1, 1):
            a = s.starts[j] + delta
            if 0 <= a < inst.horizon:
                yield Schedule(s.starts[:j] + (a,) + s.starts[j + 1:], s.placements)
        for c in all_placements(inst, j):
            if c != s.placements[j]:
                yield Schedule(s.starts, s.placements[:j] + (c,) + s.placements[j + 1:])
    for j, k in itertools.combinations(range(n), 2):
        if s.starts[j] != s.starts[k]:
            starts = list(s.starts)
            starts[j], starts[k] = starts[k], starts[j]
            yield Schedule(tuple(starts), s.placements)


def model_alone_reaches_the_optimum(inst: Instance, r) -> None:
    """M1 built with horizon = OPT and no lower bound (the model itself, not the lower-bound
    shortcut of ``exact``) finds a schedule of makespan OPT, and with OPT - 1 is infeasible when
    ``exact`` closed the instance by its lower bound."""
    opt = r.objective
    event(f"exact closed by lower bound: {'closed_by' in r.info}")
    m1 = rm.build_exact(inst, int(opt))
    rep = solve_model(m1)
    assert rep.status is SolveStatus.OPTIMAL and close(rep.objective, opt), (rep.status, rep.objective)
    assert verify(inst, rm.extract_schedule(inst, m1)) == opt
    if "closed_by" in r.info and opt > 1:  # exact proved OPT by its lower bound: M1 must agree
        assert solve_model(rm.build_exact(inst, int(opt) - 1)).status is SolveStatus.INFEASIBLE


TABLE = Table("ring_contention", tiny_instances(), optimum=_optimum, solve=_optimum,
              relabellings=relabellings, scalings=scalings, neighbours=neighbours,
              properties=(("relabelling", "scaling", "local", "own"),), exact_objective=True,
              own=model_alone_reaches_the_optimum)

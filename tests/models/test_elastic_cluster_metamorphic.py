"""elastic_cluster's table of the metamorphic relations of its exact method (tests/metamorphic.py
states them once, tests/models/test_metamorphic.py runs them). The property compares two
independent computations on 50 drawn tiny instances (2-3 jobs, 1-2 servers, 1-2 worker and PS
types, both architectures; degenerate and tolerance-edge values such as a zero update time, no
gradient, a zero-capacity resource, 0.6000005 / 0.9999995 / 1.0000005 are drawn on purpose):

a. relabelling: the optimum is invariant when jobs, servers, worker types, PS types and resources
   are permuted (every instance field with them); the relabelled optimum, mapped back, verifies on
   the original instance at the same objective. The model is symmetric in all five: verify and the
   MILP see a job only through its own data, a server only through its capacity row and the
   per-server counts, a type only through its demand, bandwidth and the jobs' per-type times, and a
   resource only through its column. (The baselines that ``exact`` uses for its upper bound are not
   symmetric — Tiresias reads the resource named "gpu", first fit scans servers in order — but they
   only bound the horizon, so the optimum is unaffected.) The permutations are drawn
   independently, so hypothesis shrinks a failure to the one relabelling that breaks it.
b. scaling: time is slotted, so durations d = least d with d (N rho) covering W are NOT homogeneous
   in the times (ceil(2 x) != 2 ceil(x)). The transform used is exact by construction: weights times
   c (c in {2, 3, 0.5}: integral weights make every product exact), every arrival shifted by delta
   slots (nothing in verify or the model is anchored at slot 1 except a_j, and capacities are the
   same in every slot, so shifting a schedule by delta maps feasible schedules one to one), and work
   and speed scaled together by k = 2 (epochs 2 E_j, every time v, U, pi / 2; power-of-two scaling
   is exact in binary floating point, so rho' = 2 rho and d (N rho') = 2 d (N rho) bit for bit, and
   covers(2 x, 2 W) == covers(x, W) because slack(2 W) = 2 slack(W) for W >= 1). Hence
   OPT' = c (OPT + delta sum_j w_j) exactly, and the original optimum shifted by delta verifies on
   the transformed instance at that value.
c. local improvement: no single-move neighbour of the proven optimum that verify accepts is better:
   one job's start +-1, its duration -1 (the issue-13 defect: a model whose durations are one slot
   too long fails here), one worker or all its PSs moved to another server, a worker added or
   removed, another worker or PS type, the q flag toggled — each also with the duration one slot
   shorter.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools

from hypothesis import event
from hypothesis import strategies as st

from optsched import solve, verify
from optsched.problems.elastic_cluster import Instance, Plan, Schedule
from optsched.result import SolveStatus
from optsched.tolerance import close

from tests.metamorphic import Relabelling, Scaling, Table, with_fields

EDGE_TIMES = (0.6000005, 0.9999995, 1.0000005, 0.5, 0.25)


def _time(draw) -> float:
    """A per-mini-batch compute time: a tolerance-edge value or a 3-decimal one in [0.2, 0.8]."""
    return draw(st.sampled_from(EDGE_TIMES) | st.floats(0.2, 0.8).map(lambda x: round(x, 3)))


@st.composite
def tiny_instances(draw) -> Instance:
    """2-3 jobs with W_j <= 4 on 1-2 servers (R = 2: gpu, cpu), 1-2 worker types, 1-2 PS types."""
    arch = "allreduce" if draw(st.integers(0, 2)) == 2 else "ps"  # PS has more to get wrong
    n_servers = draw(st.integers(1, 2))
    workers = [dict(demand=[draw(st.integers(1, 2)), draw(st.integers(0, 2))],
                    bandwidth=draw(st.sampled_from((1.0, 2.0, 0.5, 1.0000005))))
               for _ in range(draw(st.integers(1, 2)))]
    ps_types = [dict(demand=[0, draw(st.integers(1, 2))],
                     bandwidth=draw(st.sampled_from((1.0, 2.0, 3.0, 0.9999995))))
                for _ in range(draw(st.integers(1, 2)))] if arch == "ps" else []
    n_update = len(ps_types) if arch == "ps" else 1
    # server 0 holds one worker of every type plus a PS; others may lack a resource entirely
    need = [max(w["demand"][r] + (max(p["demand"][r] for p in ps_types) if ps_types else 0)
                for w in workers) for r in range(2)]
    capacity = [[need[0] + draw(st.integers(0, 1)), need[1] + draw(st.integers(0, 2))]]
    for _ in range(n_servers - 1):
        capacity.append([draw(st.integers(0, 3)), draw(st.integers(0, 4))])
    jobs = []
    for _ in range(draw(st.integers(2, 3))):
        epochs, chunks = draw(st.integers(1, 2)), draw(st.integers(1, 2))
        jobs.append(dict(
            arrival=draw(st.integers(1, 3)), weight=draw(st.integers(1, 6)), epochs=epochs,
            chunks=chunks, batches=draw(st.integers(1, max(1, 4 // (epochs * chunks)))),
            compute=[_time(draw) for _ in workers],
            update=[draw(st.sampled_from((0.0, 0.1, 0.4, 0.2500001))) for _ in range(n_update)],
            grad_size=draw(st.sampled_from((0.0, 0.05, 0.1, 0.25)))))
    doc = {"family": "elastic_cluster", "format_version": 1, "architecture": arch,
           "resources": ["gpu", "cpu"], "capacity": capacity, "worker_types": workers,
           "ps_types": ps_types, "jobs": jobs, "horizon": 6}
    return Instance.from_dict(doc)


def _optimum(inst: Instance):
    r = solve(inst, "exact", time_limit=60)
    assert r.status is SolveStatus.OPTIMAL, (r.status, inst.to_dict())
    assert close(verify(inst, r.schedule), r.objective)
    assert close(r.info["model_objective"], r.objective), (r.info, inst.to_dict())
    event(f"architecture {inst.architecture}")
    return r


# ----------------------------------------------------------------------------------------------
# a. relabelling
# ----------------------------------------------------------------------------------------------

def relabel(inst: Instance, jobs, servers, wtypes, ptypes, res) -> Instance:
    """New job i / server i / worker type i / PS type i / resource i is the original's perm[i]."""
    d = inst.to_dict()
    new_jobs = []
    for k in jobs:
        jd = dict(d["jobs"][k])
        jd["compute"] = [jd["compute"][m] for m in wtypes]
        if inst.is_ps:
            jd["update"] = [jd["update"][p] for p in ptypes]
        new_jobs.append(jd)

    def types(ts, perm):
        return [dict(ts[t], demand=[ts[t]["demand"][r] for r in res]) for t in perm]

    return with_fields(inst, jobs=new_jobs,
                       capacity=[[d["capacity"][h][r] for r in res] for h in servers],
                       resources=[d["resources"][r] for r in res],
                       worker_types=types(d["worker_types"], wtypes),
                       ps_types=types(d["ps_types"], ptypes) if inst.is_ps else [])


def map_back(schedule: Schedule, jobs, servers, wtypes, ptypes) -> Schedule:
    plans = [None] * len(jobs)
    for i, k in enumerate(jobs):
        p = schedule.plans[i]
        workers, ps = [0] * len(servers), [0] * len(servers)
        for h, s in enumerate(servers):
            workers[s], ps[s] = p.workers[h], p.ps[h]
        plans[k] = dataclasses.replace(
            p, worker_type=wtypes[p.worker_type],
            ps_type=ptypes[p.ps_type] if p.ps_type >= 0 else -1,
            workers=tuple(workers), ps=tuple(ps))
    return Schedule(tuple(plans))


def relabellings(data, inst: Instance) -> list[Relabelling]:
    """Jobs, servers, worker types, PS types and resources, each drawn independently."""
    perms = dict(jobs=data.draw(st.permutations(range(len(inst.jobs))), "job perm"),
                 servers=data.draw(st.permutations(range(inst.n_servers)), "server perm"),
                 wtypes=data.draw(st.permutations(range(len(inst.worker_types))), "worker types"),
                 ptypes=data.draw(st.permutations(range(len(inst.ps_types))), "PS types"),
                 res=data.draw(st.permutations(range(inst.n_res)), "resources"))
    back = functools.partial(map_back, jobs=perms["jobs"], servers=perms["servers"],
                             wtypes=perms["wtypes"], ptypes=perms["ptypes"])
    return [Relabelling(f"relabelling {perms}", relabel(inst, **perms), back)]


# ----------------------------------------------------------------------------------------------
# b. scaling: weights x c, arrivals + delta, work and speed x 2
# ----------------------------------------------------------------------------------------------

def transform(inst: Instance, c: float, delta: int) -> Instance:
    d = inst.to_dict()
    jobs = [dict(jd, weight=jd["weight"] * c, arrival=jd["arrival"] + delta,
                 epochs=jd["epochs"] * 2, compute=[x / 2 for x in jd["compute"]],
                 update=[x / 2 for x in jd["update"]], grad_size=jd["grad_size"] / 2)
            for jd in d["jobs"]]
    return with_fields(inst, jobs=jobs)


def _shifted(schedule: Schedule, delta: int) -> Schedule:
    return Schedule(tuple(dataclasses.replace(p, start=p.start + delta) for p in schedule.plans))


def scalings(data, inst: Instance) -> list[Scaling]:
    """OPT' = c (OPT + delta sum_j w_j); the original optimum shifted by delta verifies at it."""
    c = data.draw(st.sampled_from((2.0, 3.0, 0.5)), "c")
    delta = data.draw(st.integers(0, 2), "delta")
    new = transform(inst, c, delta)
    for j in range(len(inst.jobs)):  # durations agree bit for bit (the reason this is exact)
        for m, p, q, n, dur in inst.configurations(j):
            assert new.duration(j, m, p, n, q) == dur
    return [Scaling(f"c={c}, delta={delta}", new, factor=c,
                    offset=c * delta * sum(job.weight for job in inst.jobs),
                    forward=functools.partial(_shifted, delta=delta))]


# ----------------------------------------------------------------------------------------------
# c. local improvement
# ----------------------------------------------------------------------------------------------

def _moves(inst: Instance, p: Plan):
    """Single moves of one plan (duration unchanged)."""
    H = inst.n_servers
    yield dataclasses.replace(p, start=p.start - 1)
    yield dataclasses.replace(p, start=p.start + 1)
    yield dataclasses.replace(p, colocated=1 - p.colocated)
    for m in range(len(inst.worker_types)):
        if m != p.worker_type:
            yield dataclasses.replace(p, worker_type=m)
    for t in range(len(inst.ps_types)):
        if t != p.ps_type:
            yield dataclasses.replace(p, ps_type=t)
    for h, g in itertools.permutations(range(H), 2):
        if p.workers[h] > 0:  # one worker h -> g
            w = list(p.workers)
            w[h] -= 1
            w[g] += 1
            for q in (0, 1):
                yield dataclasses.replace(p, workers=tuple(w), colocated=q)
        if p.ps[h] > 0:  # all PSs h -> g
            s = list(p.ps)
            s[g] += s[h]
            s[h] = 0
            for q in (0, 1):
                yield dataclasses.replace(p, ps=tuple(s), colocated=q)
    for h in range(H):
        for delta in (-1, 1):
            w = list(p.workers)
            w[h] += delta
            if w[h] >= 0:
                yield dataclasses.replace(p, workers=tuple(w))
        s = list(p.ps)
        s[h] += 1
        yield dataclasses.replace(p, ps=tuple(s))
        if s[h] >= 2:
            s[h] -= 2
            yield dataclasses.replace(p, ps=tuple(s))


def neighbours(inst: Instance, schedule: Schedule):
    for j, p in enumerate(schedule.plans):
        for nb in itertools.chain([p], _moves(inst, p)):
            for shorter in (0, 1):
                new = dataclasses.replace(nb, duration=nb.duration - shorter)
                if new != p and new.start >= 1 and new.duration >= 1:
                    yield Schedule(schedule.plans[:j] + (new,) + schedule.plans[j + 1:])


TABLE = Table("elastic_cluster", tiny_instances(), optimum=_optimum, solve=_optimum,
              relabellings=relabellings, scalings=scalings, neighbours=neighbours,
              properties=(("relabelling", "scaling", "local"),))

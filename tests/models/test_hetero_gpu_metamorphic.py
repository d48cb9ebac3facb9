"""hetero_gpu's table of the metamorphic relations of its exact method (tests/metamorphic.py states
them once, tests/models/test_metamorphic.py runs them). Each property compares two independent
computations on >= 50 drawn tiny instances (1-3 GPUs, 1-3 jobs, <= 5 tasks; degenerate values
drawn on purpose: one GPU, arrival 0, T^s = 0, identical jobs, a GPU 100x faster, times
1.0000005 / 0.9999995 at the tolerance's edge):

a. relabelling: the optimum is invariant when the jobs are permuted and when the GPUs are permuted
   (the columns of T^c / T^s and the type names with them); the relabelled optimum, mapped back,
   verifies on the original instance at the same cost. Both are exact symmetries of Hare_Sched:
   verify and the MILP see a job only through its own row and a GPU only through its column (while
   the MILP's Hare upper bound, deadlines, symmetry breaking and extraction order all depend on the
   labels, so the two solves are genuinely different computations). GPU *types* are names only —
   every time is per GPU column — so renaming or permuting types is the GPU permutation above. The
   tasks of one round are identical (same job, same rows); relabelling them maps the instance to
   itself, so there is nothing to compare (the model breaks that symmetry by index, which (a) on
   jobs exercises through the permuted job's tasks).
b. scaling: time is continuous and every constraint, (4) x >= a, (7) x >= barrier, (8) x_j >= x_i +
   T^c and C = x + T^c + T^s, is homogeneous linear in the times, so multiplying every arrival, T^c and
   T^s by c > 0 maps feasible schedules one-to-one (x -> c x) and multiplies every C_n by c; the
   objective sum w_n C_n is linear in the weights. Hence OPT(c times, lambda weights) =
   c lambda OPT exactly (in floating point up to rounding, hence tolerance.close). c and lambda are
   mostly not powers of two, so the normalised MILPs differ; the scaled optimum, scaled back, must
   also verify on the original instance.
c. local improvement: no single-move neighbour of the proven optimum that verify accepts is better
   (within tolerance.close): one task shifted by +-delta (delta = 1, 1/2 and 1/4 of the shortest
   compute time, "one slot" of continuous time); one task moved to another GPU at the same start;
   one task moved to another GPU and the schedule re-timed as early as (4), (7), (8) allow in the
   same start order; two tasks adjacent in the start order swapped and re-timed. The re-timing is
   written here from the problem statement, not taken from the model.
"""

from __future__ import annotations

import functools

from hypothesis import assume
from hypothesis import strategies as st

from optsched import solve
from optsched.problems.hetero_gpu import Instance, Job, Schedule, TaskRun
from optsched.result import SolveStatus

from tests.metamorphic import Relabelling, Scaling, Table

MAX_TASKS = 5
TIMES = (1.0, 2.0, 3.0, 0.5, 4.0, 1.0000005, 0.9999995, 100.0)
SYNCS = (0.0, 1.0, 0.5, 2.0, 0.9999995)
ARRIVALS = (0.0, 1.0, 2.0, 0.5, 0.9999995, 3.0)
WEIGHTS = (1.0, 2.0, 5.0, 0.5, 1.0000005)


@st.composite
def tiny_instances(draw) -> Instance:
    n_gpus = draw(st.integers(1, 3))
    n_jobs = draw(st.integers(1, 3))
    twins = draw(st.booleans()) and draw(st.booleans())  # identical jobs: exact ties
    jobs, tasks = [], 0
    for _ in range(n_jobs):
        if twins and jobs:
            job = jobs[0]
        else:
            rounds = draw(st.integers(1, 2))
            k = draw(st.integers(1, 2))
            fast = draw(st.sampled_from((None,) * 3 + tuple(range(n_gpus))))  # one GPU 100x faster
            train = [draw(st.sampled_from(TIMES)) for _ in range(n_gpus)]
            if fast is not None:
                train = [t / 100 if g == fast else t for g, t in enumerate(train)]
            flat_sync = draw(st.booleans())
            sync = [draw(st.sampled_from(SYNCS))] * n_gpus if flat_sync else \
                [draw(st.sampled_from(SYNCS)) for _ in range(n_gpus)]
            job = Job(draw(st.sampled_from(ARRIVALS)), draw(st.sampled_from(WEIGHTS)), rounds, k,
                      tuple(train), tuple(sync))
        if tasks + job.rounds * job.tasks_per_round > MAX_TASKS:
            break
        tasks += job.rounds * job.tasks_per_round
        jobs.append(job)
    return Instance(tuple(f"type{g % 2}" for g in range(n_gpus)), tuple(jobs))


def optimum(inst: Instance):
    result = solve(inst, "exact", time_limit=60)
    assume(result.status is SolveStatus.OPTIMAL)  # only proven optima count
    return result


# --- a. relabelling -----------------------------------------------------------------------------

def relabel(inst: Instance, job_perm, gpu_perm) -> Instance:
    """Job ``job_perm[n]`` of the new instance is job ``n`` of ``inst``; GPU ``gpu_perm[g]`` is ``g``."""
    jobs = [None] * len(inst.jobs)
    inv = sorted(range(inst.n_gpus), key=lambda g: gpu_perm[g])  # new GPU h was old GPU inv[h]
    for n, j in enumerate(inst.jobs):
        jobs[job_perm[n]] = Job(j.arrival, j.weight, j.rounds, j.tasks_per_round,
                                tuple(j.train_time[g] for g in inv), tuple(j.sync_time[g] for g in inv))
    return Instance(tuple(inst.gpus[g] for g in inv), tuple(jobs))


def map_back(schedule: Schedule, job_perm, gpu_perm) -> Schedule:
    job_inv = {new: old for old, new in enumerate(job_perm)}
    gpu_inv = {new: old for old, new in enumerate(gpu_perm)}
    return Schedule(tuple(TaskRun(job_inv[t.job], t.round, t.task, gpu_inv[t.gpu], t.start)
                          for t in schedule.runs))


def relabellings(data, inst: Instance) -> list[Relabelling]:
    """The jobs permuted, then (separately) the GPUs."""
    job_perm = data.draw(st.permutations(range(len(inst.jobs))))
    gpu_perm = data.draw(st.permutations(range(inst.n_gpus)))
    return [Relabelling(f"jobs {jp}, GPUs {gp}", relabel(inst, jp, gp),
                        functools.partial(map_back, job_perm=jp, gpu_perm=gp))
            for jp, gp in ((job_perm, list(range(inst.n_gpus))),
                           (list(range(len(inst.jobs))), gpu_perm))]


# --- b. scaling ---------------------------------------------------------------------------------

def scaled(inst: Instance, c: float, lam: float) -> Instance:
    return Instance(inst.gpus, tuple(
        Job(j.arrival * c, j.weight * lam, j.rounds, j.tasks_per_round,
            tuple(t * c for t in j.train_time), tuple(t * c for t in j.sync_time)) for j in inst.jobs))


def _scaled_back(schedule: Schedule, c: float) -> Schedule:
    return Schedule(tuple(TaskRun(t.job, t.round, t.task, t.gpu, t.start / c)
                          for t in schedule.runs))


def scalings(data, inst: Instance) -> list[Scaling]:
    """Times x c, weights x lambda: OPT' = c lambda OPT, compared in the original's units."""
    c = data.draw(st.sampled_from((3.0, 0.37, 1e-3, 1e3, 1e-7, 1e7, 1e9, 0.25)), "c")
    lam = data.draw(st.sampled_from((1.0, 7.0, 0.01, 1e4)), "lam")
    return [Scaling(f"times x {c}, weights x {lam}", scaled(inst, c, lam), factor=c * lam,
                    unit=c * lam, back=functools.partial(_scaled_back, c=c))]


# --- c. local improvement -----------------------------------------------------------------------

def retime(inst: Instance, order, gpu: dict) -> Schedule | None:
    """Place tasks in ``order`` on ``gpu[task]`` as early as (4), (7), (8) allow; None if the order
    lists a task before a task of its job's previous round."""
    free = [0.0] * inst.n_gpus
    finish: dict = {}
    runs = []
    for n, r, k in order:
        job, g = inst.jobs[n], gpu[n, r, k]
        ready = job.arrival
        if r > 0:
            prev = [(n, r - 1, kk) for kk in range(job.tasks_per_round)]
            if any(p not in finish for p in prev):
                return None
            ready = max(finish[p] for p in prev)
        start = max(ready, free[g])
        free[g] = start + job.train_time[g]
        finish[n, r, k] = free[g] + job.sync_time[g]
        runs.append(TaskRun(n, r, k, g, start))
    return Schedule(tuple(runs))


def neighbours(inst: Instance, schedule: Schedule):
    runs = list(schedule.runs)
    shortest = min(min(j.train_time) for j in inst.jobs)
    for i, t in enumerate(runs):
        for delta in (1.0, shortest / 2, shortest / 4):
            for sign in (-1, 1):
                moved = TaskRun(t.job, t.round, t.task, t.gpu, t.start + sign * delta)
                yield Schedule(tuple(runs[:i] + [moved] + runs[i + 1:]))
        for g in range(inst.n_gpus):
            if g != t.gpu:
                moved = TaskRun(t.job, t.round, t.task, g, t.start)
                yield Schedule(tuple(runs[:i] + [moved] + runs[i + 1:]))
    order = [t.key for t in sorted(runs, key=lambda t: (t.start, t.key))]
    gpu = {t.key: t.gpu for t in runs}
    for key in order:
        for g in range(inst.n_gpus):
            if g != gpu[key]:
                yield retime(inst, order, {**gpu, key: g})
    for a in range(len(order) - 1):
        swapped = order[:a] + [order[a + 1], order[a]] + order[a + 2:]
        yield retime(inst, swapped, gpu)


def neighbours_and_optimum(inst: Instance, schedule: Schedule):
    """The optimum re-timed (it always verifies), then its single-move neighbours."""
    order = [t.key for t in sorted(schedule.runs, key=lambda t: (t.start, t.key))]
    yield retime(inst, order, {t.key: t.gpu for t in schedule.runs})
    yield from neighbours(inst, schedule)


TABLE = Table("hetero_gpu", tiny_instances(), optimum=optimum, solve=optimum,
              relabellings=relabellings, scalings=scalings, neighbours=neighbours_and_optimum,
              properties=(("relabelling",), ("scaling",), ("local",)), optimum_is_a_neighbour=True)

"""Brute-force oracle for ring_contention: enumerate every (placement, start) per job.

Independent of the MILP: placements by itertools.product, makespans by the problem module's
slot-by-slot ``completion_times`` (verify). Starts are enumerated up to ``ub - 1`` (ub = a known
feasible makespan), including deliberately delayed starts, which can pay off under contention.
"""

from __future__ import annotations

import itertools
import math

from optsched.errors import InfeasibleSchedule
from optsched.problems.ring_contention import Instance, Schedule, completion_times


def job_options(inst: Instance, j: int, ub: int) -> list[tuple[int, tuple[int, ...]]]:
    """(start, placement) pairs of job j that could end by ``ub`` at its fastest speed."""
    g = inst.jobs[j].gpus
    out = []
    for c in itertools.product(*(range(min(cap, g) + 1) for cap in inst.servers)):
        if sum(c) != g:
            continue
        n = sum(1 for y in c if y > 0)
        # verify's speed k satisfies k tau <= 1 + 1e-6 (tolerance), so k <= floor((1 + 1e-5) / tau):
        # a deliberately loose cap, independent of the model's phi, that never prunes a valid start
        fastest = math.ceil(inst.jobs[j].iterations / math.floor((1 + 1e-5) / inst.tau(j, n, 1)))
        out.extend((a, c) for a in range(ub - fastest + 1))
    return out


def brute_force(inst: Instance, ub: int) -> tuple[int, Schedule]:
    """The optimal makespan (<= ub) and one optimal schedule, by full enumeration."""
    options = [job_options(inst, j, ub) for j in range(len(inst.jobs))]
    best, best_schedule = ub + 1, None
    for combo in itertools.product(*options):
        if max(a for a, _ in combo) >= best:  # some job would end at or after the best
            continue
        schedule = Schedule(tuple(a for a, _ in combo), tuple(c for _, c in combo))
        try:
            value = max(completion_times(inst, schedule))
        except InfeasibleSchedule:
            continue
        if value < best:
            best, best_schedule = value, schedule
    return best, best_schedule

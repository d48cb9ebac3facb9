"""Brute-force optimum of Hare_Sched for tiny instances (an oracle independent of the MILP).

Some optimal schedule is semi-active; listing its tasks by start time and placing each, in that
order, on its GPU at max(ready time, GPU free time) reproduces starts no later than the optimum's.
So enumerating every precedence-consistent task order and every GPU per task finds OPT. Identical
tasks of one round are taken in index order (symmetry).
"""

from __future__ import annotations

import math


def brute_force(inst) -> float:
    jobs = inst.jobs
    best = [math.inf]
    phi = [0.0] * inst.n_gpus
    next_k = [0] * len(jobs)           # next task index in the current round of job n
    rnd = [0] * len(jobs)              # current round of job n
    ready = [j.arrival for j in jobs]  # barrier of the current round
    round_end = [0.0] * len(jobs)
    done = [0.0] * len(jobs)

    def cost_so_far():
        return sum(j.weight * d for j, d in zip(jobs, done))

    def dfs(left):
        if left == 0:
            best[0] = min(best[0], cost_so_far())
            return
        if cost_so_far() >= best[0]:
            return
        for n, job in enumerate(jobs):
            if rnd[n] >= job.rounds:
                continue
            for g in range(inst.n_gpus):
                saved = (phi[g], next_k[n], rnd[n], ready[n], round_end[n], done[n])
                start = max(ready[n], phi[g])
                phi[g] = start + job.train_time[g]
                finish = phi[g] + job.sync_time[g]
                round_end[n] = max(round_end[n], finish)
                done[n] = max(done[n], finish)
                next_k[n] += 1
                if next_k[n] == job.tasks_per_round:
                    rnd[n], next_k[n], ready[n], round_end[n] = rnd[n] + 1, 0, round_end[n], 0.0
                dfs(left - 1)
                phi[g], next_k[n], rnd[n], ready[n], round_end[n], done[n] = saved

    dfs(len(inst.tasks))
    return best[0]

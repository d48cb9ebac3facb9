"""A tiny enumerative oracle for elastic_cluster, independent of models/ and solvers/.

Every job's schedules are enumerated: worker type, PS type, q, worker count N, worker vector
(every composition of N over the servers), for PS one PS server with the fewest PSs meeting (2i)
(dominance fact 3), the minimal duration for that rate, and every start; a depth-first branch and
bound over jobs (pruned by sum w_i (a_i + fastest_i) of the jobs left and by capacity) returns the
optimal sum w_j c_j. Durations and PS counts are computed by counting up, not by the problem
module; every comparison is exact (issue 22: Fractions of the decimals the data are written as,
for (2f), (2i) and capacities), so the oracle accepts exactly what the checker accepts.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np


def _x(v) -> Fraction:
    """The decimal a number is written as (shares no code with optsched.tolerance)."""
    return Fraction(repr(float(v)))


def _rate(inst, j, m, p, n, q):
    job = inst.jobs[j]
    comm = 0 if q else _x(inst.comm_factor) * 2 * _x(job.grad_size) / _x(
        inst.worker_types[m].bandwidth)
    if inst.architecture == "ps":
        return 1 / (_x(job.compute[m]) + _x(job.update[p]) + comm)
    return 1 / (_x(job.compute[m]) + Fraction(n - 1, n) * (_x(job.update[0]) + comm))


def _slots(work, speed):
    d = 1
    while d * speed < work:
        d += 1
    return d


def _ps_count(remote_bw, big_b):
    s = 1
    while s * big_b < remote_bw:
        s += 1
    return s


def _vectors(n, H):
    for combo in itertools.product(range(n + 1), repeat=H):
        if sum(combo) == n:
            yield combo


def placements(inst, j):
    """(duration, usage H x R as floats) of every (type, q, N, vector, PS) choice of job j that
    fits alone."""
    return [(d, use.astype(float)) for d, use in _placements(inst, j)]


def _placements(inst, j):
    """:func:`placements` with exact (Fraction) usages."""
    H = len(inst.capacity)
    cap = np.array([[_x(c) for c in row] for row in inst.capacity], dtype=object)
    e = np.array([[_x(v) for v in t.demand] for t in inst.worker_types], dtype=object)
    ps = inst.architecture == "ps"
    out = []
    for m in range(len(inst.worker_types)):
        for p in (range(len(inst.ps_types)) if ps else (-1,)):
            for n in range(1, inst.jobs[j].chunks + 1):
                for y in _vectors(n, H):
                    hosts = [h for h in range(H) if y[h]]
                    for host in (range(H) if ps else (None,)):
                        use = np.outer(y, e[m])
                        if ps:
                            z = np.array([_x(v) for v in inst.ps_types[p].demand], dtype=object)
                            remote = (n - y[host]) * _x(inst.worker_types[m].bandwidth)
                            s = _ps_count(remote, _x(inst.ps_types[p].bandwidth))
                            use = use + np.outer([s if h == host else 0 for h in range(H)], z)
                            co = set(hosts) <= {host}
                        else:
                            co = len(hosts) == 1
                        if not all(use[h, r] <= cap[h, r]
                                   for h in range(H) for r in range(cap.shape[1])):
                            continue
                        for q in ((0, 1) if co else (0,)):
                            d = _slots(inst.jobs[j].work, n * _rate(inst, j, m, p, n, q))
                            out.append((d, use))
    best = {}
    for d, use in out:  # drop exact duplicates
        best.setdefault((d, tuple(use.ravel())), (d, use))
    return sorted(best.values(), key=lambda x: x[0])


def brute_force(inst) -> float:
    """Optimal sum_j w_j c_j by depth-first branch and bound."""
    J = len(inst.jobs)
    cols = [_placements(inst, j) for j in range(J)]
    w = [job.weight for job in inst.jobs]
    a = [job.arrival for job in inst.jobs]
    low = [a[j] + cols[j][0][0] for j in range(J)]
    # incumbent: jobs one after another in arrival order, each with its fastest placement
    t, incumbent = 1, 0.0
    for j in sorted(range(J), key=lambda j: a[j]):
        t = max(t, a[j]) + cols[j][0][0]
        incumbent += w[j] * t
    horizon = int(max(incumbent / w[j] for j in range(J))) + 2
    # free room = the capacity (exact) minus what is placed
    limit = np.array([[_x(c) for c in row] for row in inst.capacity], dtype=object)
    free = np.repeat(limit[:, :, None], horizon, axis=2)
    order = sorted(range(J), key=lambda j: -w[j])
    best = [incumbent]

    def dfs(k, partial):
        if k == J:
            best[0] = min(best[0], partial)
            return
        j = order[k]
        rest = sum(w[i] * low[i] for i in order[k + 1:])
        for d, use in cols[j]:
            t = a[j]
            while partial + w[j] * (t + d) + rest < best[0] - 1e-9 and t + d < horizon:
                window = free[:, :, t:t + d]
                if (window >= use[:, :, None]).all():
                    window -= use[:, :, None]
                    dfs(k + 1, partial + w[j] * (t + d))
                    window += use[:, :, None]
                t += 1

    dfs(0, 0.0)
    return best[0]

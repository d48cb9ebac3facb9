"""A tiny enumerative oracle for elastic_cluster, independent of models/ and solvers/.

Every job's schedules are enumerated: worker type, PS type, q, worker count N, worker vector
(every composition of N over the servers), for PS one PS server with the fewest PSs meeting (2i)
(dominance fact 3), the minimal duration for that rate, and every start; a depth-first branch and
bound over jobs (pruned by sum w_i (a_i + fastest_i) of the jobs left and by capacity) returns the
optimal sum w_j c_j. Durations and PS counts are computed by counting up, not by the problem
module; every comparison is verify's (optsched.tolerance: ``covers`` for (2f) and (2i), ``at_most``
for capacities), so the oracle accepts exactly what the checker accepts.
"""

from __future__ import annotations

import itertools

import numpy as np

from optsched.tolerance import REL, at_most, covers


def _rate(inst, j, m, p, n, q):
    job = inst.jobs[j]
    comm = 0.0 if q else inst.comm_factor * 2 * job.grad_size / inst.worker_types[m].bandwidth
    if inst.architecture == "ps":
        return 1.0 / (job.compute[m] + job.update[p] + comm)
    return 1.0 / (job.compute[m] + (n - 1) / n * (job.update[0] + comm))


def _slots(work, speed):
    d = 1
    while not covers(d * speed, work):
        d += 1
    return d


def _ps_count(remote_bw, big_b):
    s = 1
    while not covers(s * big_b, remote_bw):
        s += 1
    return s


def _vectors(n, H):
    for combo in itertools.product(range(n + 1), repeat=H):
        if sum(combo) == n:
            yield combo


def placements(inst, j):
    """(duration, usage H x R) of every (type, q, N, vector, PS) choice of job j that fits alone."""
    H = len(inst.capacity)
    cap = np.array(inst.capacity, dtype=float)
    e = np.array([t.demand for t in inst.worker_types], dtype=float)
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
                            z = np.array(inst.ps_types[p].demand, dtype=float)
                            remote = (n - y[host]) * inst.worker_types[m].bandwidth
                            s = _ps_count(remote, inst.ps_types[p].bandwidth)
                            use = use + np.outer([s if h == host else 0 for h in range(H)], z)
                            co = set(hosts) <= {host}
                        else:
                            co = len(hosts) == 1
                        if not all(at_most(float(use[h, r]), float(cap[h, r]))
                                   for h in range(H) for r in range(cap.shape[1])):
                            continue
                        for q in ((0, 1) if co else (0,)):
                            d = _slots(inst.jobs[j].work, n * _rate(inst, j, m, p, n, q))
                            out.append((d, use))
    best = {}
    for d, use in out:  # drop exact duplicates
        best.setdefault((d, use.tobytes()), (d, use))
    return sorted(best.values(), key=lambda x: x[0])


def brute_force(inst) -> float:
    """Optimal sum_j w_j c_j by depth-first branch and bound."""
    J = len(inst.jobs)
    cols = [placements(inst, j) for j in range(J)]
    w = [job.weight for job in inst.jobs]
    a = [job.arrival for job in inst.jobs]
    low = [a[j] + cols[j][0][0] for j in range(J)]
    # incumbent: jobs one after another in arrival order, each with its fastest placement
    t, incumbent = 1, 0.0
    for j in sorted(range(J), key=lambda j: a[j]):
        t = max(t, a[j]) + cols[j][0][0]
        incumbent += w[j] * t
    horizon = int(max(incumbent / w[j] for j in range(J))) + 2
    # free room = the largest load verify's at_most accepts (C + slack) minus what is placed
    limit = np.array([[c + REL * max(1.0, abs(c)) for c in row] for row in inst.capacity])
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

"""The event-driven big-switch flow simulator: closed forms, the paper's Fig. 3, allocation properties."""

from __future__ import annotations

import numpy as np
import pytest

from optsched.io import load_instance
from optsched.problems.cojob_network import Cojob, Instance, Job, verify
from optsched.simulate.flows import (FairShare, JobPriority, StageOrder, allocate, schedule_of,
                                     simulate, sum_sct)
from optsched.workloads.cojob_network import generate


def _one(machines, *jobs, iterations=(1,), capacity=1.0):
    """One cojob, one stage, given jobs (flows lists)."""
    return Instance(machines, (Cojob(0.0, iterations, tuple(Job(1, f) for f in jobs)),),
                    capacity=capacity)


def test_single_flow_one_port():
    inst = _one(1, ((0, 0, 3.0),), capacity=2.0)
    res = simulate(inst, FairShare())
    assert res.S == [[1.5]]
    assert res.allocations == 1          # event-driven: one rate computation, no time slots
    assert verify(inst, schedule_of(res)) == pytest.approx(1.5)


def test_two_flows_share_a_port_fairly():
    inst = _one(2, ((0, 0, 1.0),), ((0, 1, 3.0),))
    res = simulate(inst, FairShare())
    # both at 1/2 on ingress 0 until t = 2, then the big flow alone: 2 more bytes at rate 1
    assert res.job_end[0] == pytest.approx([2.0, 4.0])
    assert res.allocations == 2


def test_priority_vs_fair():
    inst = _one(2, ((0, 0, 1.0),), ((0, 1, 3.0),))
    small_first = simulate(inst, JobPriority({(0, 0): 0, (0, 1): 1}))
    big_first = simulate(inst, JobPriority({(0, 0): 1, (0, 1): 0}))
    assert small_first.job_end[0] == pytest.approx([1.0, 4.0])
    assert big_first.job_end[0] == pytest.approx([4.0, 3.0])


def test_priority_is_work_conserving():
    """A low-priority flow takes what the high-priority flow leaves on its other port."""
    inst = _one(2, ((0, 0, 2.0),), ((0, 1, 2.0), (1, 1, 2.0)))
    res = simulate(inst, JobPriority({(0, 0): 0, (0, 1): 1}))
    seg = res.segments[0][2]
    rates = {(j, f): r for _, j, _, f, r in seg}
    assert rates[0, 0] == pytest.approx(1.0)
    assert rates[1, 1] == pytest.approx(1.0)        # 1 -> 1 is not blocked
    assert (1, 0) not in rates                       # 0 -> 1 waits for ingress 0


def test_iterations_are_sequential_and_compute_gaps():
    flows = ((0, 0, 1.0),)
    inst = Instance(1, (Cojob(0.0, (3,), (Job(1, flows, compute=0.5),)),))
    res = simulate(inst, FairShare())
    assert res.S == [[pytest.approx(4.5)]]          # 3 x (0.5 compute + 1 transfer)
    assert verify(inst, schedule_of(res)) == pytest.approx(4.5)


def test_fig3_fair_sptf_optimal(data):
    """Paper Fig. 3: average SCT 8 under FS, 7.5 under SPTF, 6.5 for the optimal order."""
    inst = load_instance(data / "cojob_network" / "fig3.json")
    fs = simulate(inst, FairShare())
    assert fs.S == [[4.0, 9.0], [7.0, 12.0]]
    assert sum_sct(inst, fs) / 4 == pytest.approx(8.0)
    # SPTF by remaining job bytes (3, 1, 6, 2): job A2 < B2 < A1 < B1, unchanged over the run
    sptf = simulate(inst, JobPriority({(0, 1): 0, (1, 1): 1, (0, 0): 2, (1, 0): 3}))
    assert sum_sct(inst, sptf) / 4 == pytest.approx(7.5)
    opt = simulate(inst, StageOrder([(0, 0), (0, 1), (1, 0), (1, 1)]))
    assert opt.S == [[2.0, 4.0], [8.0, 12.0]]
    assert sum_sct(inst, opt) / 4 == pytest.approx(6.5)
    for res in (fs, sptf, opt):
        assert verify(inst, schedule_of(res)) == pytest.approx(sum_sct(inst, res))


def _maxmin_ok(src, dst, rate, n_ports, cap):
    """Every flow has a saturated port on which it has the largest rate (max-min fairness)."""
    load = np.zeros(n_ports)
    for s, d, r in zip(src, dst, rate):
        load[s] += r
        load[d] += r
    assert (load <= cap + 1e-9).all()
    for f, (s, d) in enumerate(zip(src, dst)):
        ok = False
        for p in (s, d):
            top = max(rate[g] for g in range(len(src)) if p in (src[g], dst[g]))
            if load[p] >= cap - 1e-9 and rate[f] >= top - 1e-9:
                ok = True
        assert ok, f


@pytest.mark.parametrize("seed", range(10))
def test_allocate_is_max_min_fair(seed):
    rng = np.random.default_rng(seed)
    P = 4
    n = int(rng.integers(1, 15))
    src = [int(x) for x in rng.integers(0, P, n)]
    dst = [P + int(x) for x in rng.integers(0, P, n)]
    rate = allocate(src, dst, [0] * n, 2 * P, 1.0)
    _maxmin_ok(src, dst, rate, 2 * P, 1.0)


def test_strict_priority_classes_are_served_first():
    src, dst = [0, 0, 1], [2, 3, 3]
    rate = allocate(src, dst, [1, 0, 2], 4, 1.0)
    assert rate == pytest.approx([0.0, 1.0, 0.0])
    rate = allocate(src, dst, [0, 1, 1], 4, 1.0)
    assert rate == pytest.approx([1.0, 0.0, 1.0])


def test_every_tiny_run_verifies_and_is_deterministic():
    for seed in range(5):
        inst = generate("tiny", seed)
        a, b = simulate(inst, FairShare()), simulate(inst, FairShare())
        assert a.S == b.S and a.segments == b.segments
        assert verify(inst, schedule_of(a)) == pytest.approx(sum_sct(inst, a))

"""The third simulator speed-up (fair_share at paper scale, issue 19 item 7) runs bit-identically to
the simulator before it.

tests/simulate/reference_flows_d93e235.py is optsched/simulate/flows.py as it was at commit d93e235:
a heap picked the next port of every filling round, and every allocation was computed afresh. Now
a scan of the ports' shares picks it (up to :data:`~optsched.simulate.flows.SCAN_PORTS` ports), an
allocation that repeats an earlier one (same jobs, flows with bytes left and classes) reuses its
rates from a memo, and the garbage collector is paused during a run. Every policy of
cojob_network runs on both and the timelines must be equal, not close.
"""

from __future__ import annotations

import gc
import hashlib
import pytest

from optsched.deadline import Deadline
from optsched.simulate import flows
from optsched.solvers.cojob_network.baselines import make_policy
from optsched.workloads.cojob_network import generate
from tests.simulate import reference_flows_d93e235 as before

POLICIES = ("pda", "grouper", "grouper_offline", "grouper_authors", "baraat", "baraat_fifo",
            "sincronia", "sincronia_full", "fair_share")


def _medium(seed: int):
    """10 machines, 6 cojobs, up to 5 jobs of up to 3 stages: 500-1,100 allocations, 30-90k rate
    entries per run (paper seed 0 has 15,696 and 1.44 million under fair_share)."""
    return generate("small", seed, machines=10, cojobs=(6, 6), max_jobs=5, max_size=3,
                    density=0.3, stage_iterations=(1, 2, 3), arrivals=bool(seed % 2))


def _same(a, b) -> bool:
    return (a.S == b.S and a.job_end == b.job_end and a.starts == b.starts
            and a.segments == b.segments and (a.events, a.allocations) == (b.events, b.allocations))


def _check(inst, names) -> None:
    for name in names:
        now = flows.simulate(inst, make_policy(inst, name))
        then = before.simulate(inst, make_policy(inst, name))
        assert now.complete and _same(now, then), name


@pytest.mark.parametrize("preset,seed", [("tiny", s) for s in range(3)] + [("small", 0), ("small", 1)])
def test_every_policy_runs_as_before_on_small_instances(preset, seed):
    _check(generate(preset, seed), POLICIES)


@pytest.mark.parametrize("seed,names", [(0, ("fair_share", "grouper", "sincronia")),
                                         (1, ("fair_share", "pda", "baraat"))])
def test_every_policy_runs_as_before_on_medium_instances(seed, names):
    _check(_medium(seed), names)


def test_the_memo_is_used_and_changes_nothing(monkeypatch):
    """An allocation repeats (the memo answers some of them), and a run with a one-entry memo,
    which misses nearly always, is the same run; so is one on the heap (no port scan)."""
    inst = _medium(0)
    calls = []
    real = flows.allocate_groups
    monkeypatch.setattr(flows, "allocate_groups", lambda *a: calls.append(1) or real(*a))
    full = flows.simulate(inst, make_policy(inst, "fair_share"))
    assert 0 < len(calls) < full.allocations
    monkeypatch.setattr(flows, "MEMO", 1)
    monkeypatch.setattr(flows, "SCAN_PORTS", 0)
    assert _same(flows.simulate(inst, make_policy(inst, "fair_share")), full)


@pytest.mark.parametrize("seed", range(6))
def test_scan_and_heap_fill_alike(seed, monkeypatch):
    """The port scan and the heap pick the same port in every round: the same rates, bit for bit,
    on random flows with several classes and ports at capacity 0 after the first class."""
    import numpy as np

    rng = np.random.default_rng(seed)
    P = int(rng.integers(1, 9))
    n = int(rng.integers(1, 60))
    src = [int(x) for x in rng.integers(0, P, n)]
    dst = [P + int(x) for x in rng.integers(0, P, n)]
    cls = [int(x) for x in rng.integers(0, 3, n)]
    scan = flows.allocate(src, dst, cls, 2 * P, 1.0)
    monkeypatch.setattr(flows, "SCAN_PORTS", 0)
    assert flows.allocate(src, dst, cls, 2 * P, 1.0) == scan == before.allocate(src, dst, cls,
                                                                                 2 * P, 1.0)


def test_a_run_leaves_the_collector_as_it_found_it():
    inst = generate("small", 0)
    assert gc.isenabled()
    flows.simulate(inst, make_policy(inst, "fair_share"))
    assert gc.isenabled()
    stopped = flows.simulate(inst, make_policy(inst, "fair_share"), deadline=Deadline(0.0))
    assert not stopped.complete and gc.isenabled()
    gc.disable()
    try:
        flows.simulate(inst, make_policy(inst, "fair_share"))
        assert not gc.isenabled()
    finally:
        gc.enable()


def _digest(result) -> str:
    """SHA-256 of the run's timeline (repr of every float: exact)."""
    text = repr((result.S, result.starts, result.segments))
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.mark.slow  # ~5 + 7 CPU-s per policy at paper scale
@pytest.mark.parametrize("name", ["fair_share", "sincronia", "pda", "grouper", "baraat"])
def test_paper_runs_are_bit_identical_to_the_simulator_before(name):
    """Paper seed 0, where the speed-up is for (issue 19 item 7: <= 10 s per method)."""
    inst = generate("paper", 0)
    now = flows.simulate(inst, make_policy(inst, name))
    then = before.simulate(inst, make_policy(inst, name))
    assert _digest(now) == _digest(then)

"""cojob_network workloads: presets, determinism, the paper's testbed and simulation parameters."""

from __future__ import annotations

import pytest

from optsched.errors import InvalidInstance
from optsched.workloads.cojob_network import MODELS, PRESETS, TRACE_GAPS, generate, ps_flows


def test_presets_and_determinism():
    assert PRESETS == ("tiny", "small", "paper")
    for preset in ("tiny", "small"):
        assert generate(preset, 7) == generate(preset, 7)
        assert generate(preset, 7) != generate(preset, 8)
    with pytest.raises(InvalidInstance, match="preset: unknown preset 'huge'"):
        generate("huge")
    with pytest.raises(InvalidInstance, match="scenario: unknown scenario"):
        generate("paper", scenario="cloud")


def test_tiny_is_brute_forcible():
    for seed in range(20):
        inst = generate("tiny", seed)
        assert inst.machines == 2 and len(inst.stages) <= 6
        assert all(c.n_stages <= 2 for c in inst.cojobs)


def test_testbed_matches_paper():
    inst = generate("paper", 0)
    assert inst.machines == 23 and inst.capacity == 125.0              # 1 GbE, MB/s
    assert [c.model for c in inst.cojobs] == list(MODELS)
    full = generate("paper", 0, iteration_scale=1)
    assert all(c.iterations == (500, 1500, 3500, 7500) for c in full.cojobs)   # 500/1000/2000/4000
    for c in inst.cojobs:
        assert c.iterations == (50, 150, 350, 750)                       # default scale 0.1
        assert [len(c.alive(k)) for k in range(4)] == [8, 4, 2, 1]       # successive halving
        for job in c.jobs:
            # 2 workers + 2 PS on distinct hosts: 8 flows of Theta/2 each
            assert len(job.flows) == 8
            assert {x for _, _, x in job.flows} == {MODELS[c.model] / 2}
    assert generate("paper", 0) == inst


def test_simulation_scenario_load_scaling():
    a = generate("paper", 1, scenario="simulation", cojobs=12, load=1.0)
    b = generate("paper", 1, scenario="simulation", cojobs=12, load=2.0)
    assert a.machines == 60 and a.capacity == 1250.0                    # 10 Gbps
    gaps = [y.arrival - x.arrival for x, y in zip(a.cojobs, a.cojobs[1:])]
    assert all(any(abs(g - t) < 1e-9 for t in TRACE_GAPS) for g in gaps)
    assert b.cojobs[-1].arrival == pytest.approx(a.cojobs[-1].arrival / 2)
    assert all(c.iterations == (20, 40, 80, 480) for c in a.cojobs)
    with pytest.raises(InvalidInstance, match="load: must be > 0"):
        generate("paper", scenario="simulation", load=0)


def test_comm_comp_ratio_sets_compute_gaps():
    inst = generate("paper", 2, scenario="simulation", cojobs=3, comm_comp=0.5)
    for c in inst.cojobs:
        for job in c.jobs:
            load = {}
            for s, d, x in job.flows:
                load[s] = load.get(s, 0) + x
                load[60 + d] = load.get(60 + d, 0) + x
            assert job.compute == pytest.approx(max(load.values()) / 1250.0 / 0.5)


def test_ps_flows_drop_local_traffic():
    flows = ps_flows([0, 1], [1, 2], 100.0)
    assert (1, 1, 50.0) not in flows and (0, 1, 50.0) in flows and (2, 0, 50.0) in flows
    assert len(flows) == 6


def test_testbed_gpu_server_placement():
    inst = generate("paper", 0, placement="gpu_servers")
    for c in inst.cojobs:
        for job in c.jobs:
            workers = {s for s, d, _ in job.flows if s < 3}
            assert len(workers) == 2 and all((s < 3) != (d < 3) for s, d, _ in job.flows)
    with pytest.raises(InvalidInstance, match="placement: must be random or gpu_servers"):
        generate("paper", 0, placement="rack")

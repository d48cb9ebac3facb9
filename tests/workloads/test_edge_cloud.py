"""edge_cloud generators (presets, determinism, Sec. VI ranges) and the Philly machine-list loader."""

from __future__ import annotations

import numpy as np
import pytest

from optsched.errors import InvalidInstance
from optsched.workloads.edge_cloud import PRESETS, generate, load_machine_list


@pytest.mark.parametrize("preset", PRESETS)
def test_same_seed_same_instance(preset):
    assert generate(preset, 5) == generate(preset, 5)
    assert generate(preset, 5) != generate(preset, 6)


def test_tiny_and_small_sizes():
    tiny, small = generate("tiny", 0), generate("small", 0)
    assert (len(tiny.jobs), tiny.n_servers, tiny.n_wtypes) == (4, 2, 1)
    assert (len(small.jobs), small.n_servers, small.n_wtypes, small.n_ptypes) == (8, 3, 2, 2)
    assert tiny.cloud == (1,) and small.cloud == (2,)


def test_paper_ranges_follow_section_vi():
    inst = generate("paper", 1)
    S = inst.n_servers
    assert S == 201 and len(inst.jobs) == 200 and 8 <= inst.n_wtypes <= 10 and 8 <= inst.n_ptypes <= 10
    assert inst.workers[-1] == (100,) * inst.n_wtypes          # the cloud
    assert sum(inst.workers[0]) in (2, 4, 8)                    # fallback GPU counts
    for job in inst.jobs:
        assert 1 <= job.arrival <= 1024 / 1.5
        assert 50 <= job.epochs <= 100 and 20 <= job.chunks <= 50 and 10 <= job.minibatches <= 50
        assert 0.001 <= job.compute <= 0.05 and 10 / 3.6e6 - 1e-12 <= job.update <= 100 / 3.6e6 + 1e-12
        assert 30 <= job.grad_mb <= 575 and 100 <= job.bandwidth <= 5120
        assert all(1 <= d <= 4 for d in job.delay[:-1]) and 10 <= job.delay[-1] <= 40


def test_overrides():
    inst = generate("paper", 2, n_jobs=30, n_edge=50, horizon=512, f1=2.0)
    assert (len(inst.jobs), inst.n_servers, inst.horizon, inst.f1) == (30, 51, 512, 2.0)
    assert max(j.arrival for j in inst.jobs) <= 512 / 1.5
    with pytest.raises(InvalidInstance, match="unknown parameter 'speed'"):
        generate("tiny", 0, speed=2)


def test_unknown_preset():
    with pytest.raises(InvalidInstance, match="preset: unknown preset 'huge'"):
        generate("huge")


def test_machine_list_sample(data):
    path = data / "edge_cloud" / "philly_machine_list_sample.csv"
    counts = load_machine_list(path)
    assert counts == (8, 8, 2, 8, 4, 8, 2, 0, 4, 8)
    inst = generate("paper", 0, machine_list=path, n_edge=40, n_jobs=5)
    gpus = [sum(row) for row in inst.workers[:-1]]
    assert set(gpus) <= {2, 4, 8} and 8 in gpus                 # machines without GPUs are skipped
    assert np.mean(gpus) > 4                                    # the sample is mostly 8-GPU machines


def test_machine_list_errors(tmp_path):
    bad = tmp_path / "m.csv"
    bad.write_text("machineId,number of GPUs,single GPU mem\nm0,eight,24GB\n")
    with pytest.raises(InvalidInstance, match="line 2: GPU count must be an integer"):
        load_machine_list(bad)
    bad.write_text("id,mem\n")
    with pytest.raises(InvalidInstance, match="header"):
        load_machine_list(bad)
    with pytest.raises(InvalidInstance, match="machine_list file"):
        load_machine_list(tmp_path / "missing.csv")

"""elastic_cluster workloads: presets, determinism, the paper's ranges (Sec. 7)."""

from __future__ import annotations

import numpy as np
import pytest

from optsched.errors import InvalidInstance
from optsched.workloads.elastic_cluster import (
    MB_MBPS_TO_SLOTS, MS_PER_SLOT, PRESETS, PS_TYPES, WORKERS, generate,
)


def test_presets_and_unknown_preset():
    assert PRESETS == ("tiny", "small", "paper")
    with pytest.raises(InvalidInstance, match="preset: unknown preset 'huge'"):
        generate("huge")


@pytest.mark.parametrize("preset", ["tiny", "small"])
def test_small_presets_alternate_architecture_and_are_seeded(preset):
    for seed in range(6):
        inst = generate(preset, seed)
        assert inst.architecture == ("ps" if seed % 2 == 0 else "allreduce")
        assert inst == generate(preset, seed)
        assert inst.weight_ratio >= 1
        assert all(job.chunks <= 3 for job in inst.jobs)
    assert generate(preset, 0, architecture="allreduce").ps_types == ()
    assert generate(preset, 1) != generate(preset, 3)


def test_paper_preset_matches_section_7():
    inst = generate("paper", 3, n_jobs=60)
    assert inst.n_servers == 150 and inst.horizon == 150 and inst.n_res == 3
    assert len(inst.worker_types) == len(WORKERS) == 8 and len(inst.ps_types) == len(PS_TYPES) == 10
    jobs = inst.jobs
    assert all(200 <= j.weight <= 5000 and 50 <= j.epochs <= 100 for j in jobs)
    assert all(5 <= j.chunks <= 50 and 10 <= j.batches <= 50 for j in jobs)
    assert all(1 <= j.arrival <= 150 and 30 <= j.grad_size <= 575 for j in jobs)
    assert all(0.001 <= v <= 0.05 for j in jobs for v in j.compute)
    assert all(10 <= u * MS_PER_SLOT <= 100 + 1e-6 for j in jobs for u in j.update)
    assert inst.comm_factor == MB_MBPS_TO_SLOTS
    # bandwidths: workers 100 Mbps - 5 Gbps, PSs 5 - 20 Gbps
    assert min(t.bandwidth for t in inst.worker_types) == 100 and max(
        t.bandwidth for t in inst.worker_types) == 5000
    assert min(t.bandwidth for t in inst.ps_types) == 5000 and max(
        t.bandwidth for t in inst.ps_types) == 20000
    # total capacity is 0.2-0.5 of the ideal demand (GPU/vCPU rounded down, so slightly less)
    ideal_gpu = sum(j.chunks * inst.worker_types[int(np.argmin(j.compute))].demand[0] for j in jobs)
    assert 0.15 * ideal_gpu <= inst.cap[:, 0].sum() <= 0.5 * ideal_gpu + 1e-6
    ra = generate("paper", 3, n_jobs=60, architecture="allreduce")
    assert ra.ps_types == () and all(len(j.update) == 1 for j in ra.jobs)


def test_small_exact_sizes_stay_small():
    inst = generate("small", 0)
    assert len(inst.jobs) == 4 and inst.n_servers == 2

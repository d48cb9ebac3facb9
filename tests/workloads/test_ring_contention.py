"""ring_contention workloads: presets, determinism and the paper's Sec. 7 setting."""

from __future__ import annotations

from collections import Counter

import pytest

from optsched.errors import InvalidInstance
from optsched.workloads.ring_contention import PAPER_MIX, PRESETS, generate


@pytest.mark.parametrize("preset", PRESETS)
def test_seeded_and_round_trip(preset):
    a, b = generate(preset, 7), generate(preset, 7)
    assert a == b
    assert type(a).from_dict(a.to_dict()) == a
    assert generate(preset, 8) != a


def test_unknown_preset():
    with pytest.raises(InvalidInstance, match="preset: unknown preset 'huge'"):
        generate("huge")


def test_paper_setting():
    inst = generate("paper", 0)
    assert Counter(j.gpus for j in inst.jobs) == Counter(PAPER_MIX)
    assert len(inst.jobs) == 160 and sum(j.gpus for j in inst.jobs) == 644
    assert len(inst.servers) == 20 and set(inst.servers) <= {4, 8, 16, 32}
    assert inst.horizon == 1200
    for j, job in enumerate(inst.jobs):
        assert 1000 <= job.iterations <= 6000
        tau0 = inst.tau(j, 1, 1)
        assert 0.01 - 1e-12 <= tau0 <= 0.05 + 1e-12
        assert 50 <= job.iterations * tau0 <= 300  # rho_hat in [50, 300]
        # contention + overhead <= 15% of the execution time, worst case (digest X2)
        n = inst.max_servers(j)
        worst = inst.tau(j, n, inst.max_contention if n >= 2 else 1)
        assert (worst - tau0) / worst <= 0.15 + 1e-9


def test_worst_case_shares_are_equal():
    """xi1 = xi2 read as equal worst-case contention and overhead shares (digest E3)."""
    inst = generate("paper", 1)
    j = next(k for k, job in enumerate(inst.jobs) if job.gpus == 32)
    base = inst.tau(j, 2, 1)
    contention = inst.tau(j, 2, inst.max_contention) - base
    assert contention > 0 and inst.xi2 > 0


def test_fig6_override():
    inst = generate("paper", 0, n_servers=10, horizon=1500)
    assert len(inst.servers) == 10 and inst.horizon == 1500


@pytest.mark.parametrize("seed", range(5))
def test_small_presets_shapes(seed):
    tiny, small = generate("tiny", seed), generate("small", seed)
    assert len(tiny.jobs) == 3 and tiny.servers in ((4, 4), (3, 2), (3, 3))
    assert sorted(j.gpus for j in small.jobs) == [1, 1, 1, 2, 2, 4] and small.servers == (4, 4)

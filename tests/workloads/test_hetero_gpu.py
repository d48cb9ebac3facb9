"""hetero_gpu generators: sizes of each preset, determinism, the paper's mixes."""

import pytest

from optsched import InvalidInstance, generate
from optsched.workloads.hetero_gpu import CLASSES, MIXES


@pytest.mark.parametrize("seed", range(10))
def test_tiny_and_small_sizes(seed):
    tiny, small = generate("hetero_gpu", "tiny", seed), generate("hetero_gpu", "small", seed)
    assert 1 <= len(tiny.tasks) <= 8 and 2 <= tiny.n_gpus <= 3
    assert len(small.tasks) <= 10 and small.n_gpus == 3
    assert all(j.tasks_per_round <= tiny.n_gpus for j in tiny.jobs)


def test_same_seed_same_instance():
    assert generate("hetero_gpu", "paper", 4, n_jobs=30) == generate("hetero_gpu", "paper", 4, n_jobs=30)
    assert generate("hetero_gpu", "tiny", 4) != generate("hetero_gpu", "tiny", 5)


@pytest.mark.parametrize("level", list(MIXES))
def test_paper_mixes(level):
    inst = generate("hetero_gpu", "paper", 0, n_jobs=40, heterogeneity=level)
    assert inst.n_gpus == 160 and len(inst.jobs) == 40
    assert set(inst.gpus) == set(MIXES[level])
    assert all(j.rounds <= 20 and j.tasks_per_round in (1, 2, 4, 8) for j in inst.jobs)
    models = {m for ms, _ in CLASSES.values() for m in ms}
    assert {j.model for j in inst.jobs} <= models
    assert (inst.alpha > 5) == (level != "low")


def test_paper_default_scale():
    inst = generate("hetero_gpu", "paper", 1)
    assert len(inst.jobs) == 200 and inst.n_gpus == 160
    arrivals = [j.arrival for j in inst.jobs]
    assert arrivals == sorted(arrivals) and len(set(arrivals)) < len(arrivals)  # bursty


def test_unknown_preset():
    with pytest.raises(InvalidInstance, match="preset"):
        generate("hetero_gpu", "huge", 0)

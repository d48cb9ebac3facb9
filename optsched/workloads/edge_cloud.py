"""Seeded instance generators for edge_cloud (She et al., paper 001, Sec. VI) and a loader for
Philly-style machine lists.

Presets
-------
``tiny``   4 jobs, one edge server + the cloud, one worker and one PS type: brute-forcible.
``small``  8 jobs, two edge servers + the cloud, two types (digest §7.1): exact MILP in seconds.
``paper``  Sec. VI: 200 edge servers + one cloud, U, V in [8, 10], worker bandwidth [100, 5120]
           Mbps, PS bandwidth [5, 20] Gbps, E in [50, 100], D in [20, 50], M in [10, 50],
           n in [0.001, 0.05] h, H in [10, 100] ms, k in [30, 575] MB, Delta in [1, 4] slots (edge)
           and [10, 40] (cloud), arrivals in [1, T/1.5] with T = 1024.

Choices the paper leaves open (digest §8 #28-#31): edge GPU counts come from a Philly machine list
when one is given (else uniform over {2, 4, 8}); every GPU / PS slot of an edge server gets a random
type; edge PS slots ~ U{4..16} (the public trace has no CPU counts); the cloud has ``cloud_slots``
(100) slots of every type; ``B_j = min(b_{u_j}, b_{v_j})`` with per-type bandwidths.

Overrides (keyword arguments of :func:`generate`): ``n_jobs``, ``n_edge``, ``horizon``, ``f1``,
``f2``, ``machine_list`` (path or GPU counts, paper preset), ``cloud_slots``, ``grad_mb_max``.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Sequence

import numpy as np

from optsched.errors import InvalidInstance
from optsched.problems.edge_cloud import (MAX_CAPACITY, MAX_HORIZON, MAX_JOBS, MAX_SERVERS,
                                          SLOT_SECONDS, Instance, Job, as_int)

PRESETS = ("tiny", "small", "paper")

_SMALL = {
    "tiny": dict(n_jobs=4, n_edge=1, n_wtypes=1, n_ptypes=1, edge_w=(1, 2), cloud_w=2,
                 edge_p=(1, 1), cloud_p=1, arrival=(1, 3), epochs=(1, 2), chunks=(1, 3),
                 minibatches=(1, 2), edge_delay=(1, 2), cloud_delay=(2, 4), horizon=32),
    "small": dict(n_jobs=8, n_edge=2, n_wtypes=2, n_ptypes=2, edge_w=(1, 3), cloud_w=4,
                  edge_p=(1, 2), cloud_p=3, arrival=(1, 6), epochs=(1, 2), chunks=(2, 4),
                  minibatches=(1, 3), edge_delay=(1, 2), cloud_delay=(3, 6), horizon=64),
}
_PAPER = dict(n_jobs=200, n_edge=200, horizon=1024, cloud_slots=100, grad_mb_max=575.0)
_ALLOWED = {"n_jobs", "n_edge", "horizon", "f1", "f2", "machine_list", "cloud_slots", "grad_mb_max"}


def generate(preset: str = "tiny", seed: int = 0, **overrides) -> Instance:
    """A seeded instance of ``preset`` (see the module docstring); ``overrides`` change sizes."""
    if preset not in PRESETS:
        raise InvalidInstance(f"preset: unknown preset {preset!r} (known: {', '.join(PRESETS)})")
    unknown = sorted(set(overrides) - _ALLOWED)
    if unknown:
        raise InvalidInstance(f"overrides: unknown parameter {unknown[0]!r}")
    _check_sizes(overrides)
    rng = np.random.default_rng(seed)
    if preset == "paper":
        return _paper(rng, {**_PAPER, **overrides}, f"paper-{seed}")
    return _small(rng, {**_SMALL[preset], **overrides}, f"{preset}-{seed}")


#: Integer overrides and their ranges: checked before anything is drawn, so a huge size is
#: refused at once (issue 15) instead of looping before the instance's own checks.
_SIZES = {"n_jobs": (1, MAX_JOBS, "MAX_JOBS"), "n_edge": (0, MAX_SERVERS - 1, "MAX_SERVERS"),
          "horizon": (1, MAX_HORIZON, "MAX_HORIZON"),
          "cloud_slots": (0, MAX_CAPACITY, "MAX_CAPACITY")}


def _check_sizes(overrides: dict) -> None:
    """The size overrides within the instance limits (InvalidInstance naming ``overrides.KEY``)."""
    for key, (low, high, limit) in _SIZES.items():
        if key in overrides:
            as_int(overrides[key], f"overrides.{key}", min=low, max=high, limit=limit)


def _uint(rng: np.random.Generator, bounds: tuple[int, int]) -> int:
    return int(rng.integers(bounds[0], bounds[1] + 1))


def _small(rng: np.random.Generator, p: dict, name: str) -> Instance:
    """Digest §7.1 (compressed arrivals for contention); times drawn directly in slots."""
    S = p["n_edge"] + 1
    workers = [[_uint(rng, p["edge_w"]) for _ in range(p["n_wtypes"])] for _ in range(S - 1)]
    workers.append([p["cloud_w"]] * p["n_wtypes"])
    ps = [[_uint(rng, p["edge_p"]) for _ in range(p["n_ptypes"])] for _ in range(S - 1)]
    ps.append([p["cloud_p"]] * p["n_ptypes"])
    jobs = []
    for _ in range(p["n_jobs"]):
        bandwidth = 1000.0
        comm = float(rng.uniform(0.05, 0.5))  # 2k/B in slots
        delay = [_uint(rng, p["edge_delay"]) for _ in range(S - 1)] + [_uint(rng, p["cloud_delay"])]
        jobs.append(Job(
            arrival=_uint(rng, p["arrival"]), worker_type=int(rng.integers(p["n_wtypes"])),
            ps_type=int(rng.integers(p["n_ptypes"])), epochs=_uint(rng, p["epochs"]),
            chunks=_uint(rng, p["chunks"]), minibatches=_uint(rng, p["minibatches"]),
            compute=round(float(rng.uniform(0.1, 0.5)), 4), update=round(float(rng.uniform(0.01, 0.05)), 4),
            grad_mb=round(comm * bandwidth * SLOT_SECONDS / 16.0, 3), bandwidth=bandwidth,
            delay=tuple(delay)))
    return Instance(workers=_tuple2(workers), ps=_tuple2(ps), jobs=tuple(jobs),
                    horizon=p["horizon"], f1=p.get("f1", 1.0), f2=p.get("f2", 1.0),
                    cloud=(S - 1,), name=name)


def _paper(rng: np.random.Generator, p: dict, name: str) -> Instance:
    """Sec. VI of the paper with the choices listed in the module docstring."""
    U, V, S = _uint(rng, (8, 10)), _uint(rng, (8, 10)), p["n_edge"] + 1
    b_u = rng.uniform(100.0, 5120.0, size=U)
    b_v = rng.uniform(5 * 1024.0, 20 * 1024.0, size=V)
    gpus = _gpu_counts(rng, p.get("machine_list"), S - 1)
    workers = [np.bincount(rng.integers(U, size=g), minlength=U).tolist() for g in gpus]
    ps = [np.bincount(rng.integers(V, size=_uint(rng, (4, 16))), minlength=V).tolist()
          for _ in range(S - 1)]
    workers.append([p["cloud_slots"]] * U)
    ps.append([p["cloud_slots"]] * V)
    jobs = []
    for _ in range(p["n_jobs"]):
        u, v = int(rng.integers(U)), int(rng.integers(V))
        delay = rng.integers(1, 5, size=S - 1).tolist() + [_uint(rng, (10, 40))]
        jobs.append(Job(
            arrival=_uint(rng, (1, max(1, int(p["horizon"] / 1.5)))), worker_type=u, ps_type=v,
            epochs=_uint(rng, (50, 100)), chunks=_uint(rng, (20, 50)), minibatches=_uint(rng, (10, 50)),
            compute=round(float(rng.uniform(0.001, 0.05)), 6),
            update=round(float(rng.uniform(10.0, 100.0)) / 3.6e6, 9),
            grad_mb=round(float(rng.uniform(30.0, p["grad_mb_max"])), 3),
            bandwidth=round(float(min(b_u[u], b_v[v])), 3), delay=tuple(delay)))
    return Instance(workers=_tuple2(workers), ps=_tuple2(ps), jobs=tuple(jobs),
                    horizon=p["horizon"], f1=p.get("f1", 1.0), f2=p.get("f2", 1.0),
                    cloud=(S - 1,), name=name)


def _gpu_counts(rng: np.random.Generator, machine_list, n: int) -> list[int]:
    """GPU counts of ``n`` edge servers: sampled from a machine list, else uniform over {2, 4, 8}."""
    if machine_list is None:
        return rng.choice([2, 4, 8], size=n).tolist()
    counts = load_machine_list(machine_list) if isinstance(machine_list, (str, Path)) else machine_list
    counts = [c for c in counts if c > 0]
    if not counts:
        raise InvalidInstance("machine_list: no machine with a GPU")
    return rng.choice(counts, size=n).tolist()


def load_machine_list(path: str | Path) -> tuple[int, ...]:
    """GPU counts from a Philly-style ``cluster_machine_list`` CSV.

    The format (msr-fiddle/philly-traces) has a header ``machineId,number of GPUs,single GPU mem``
    and one machine per line; only the GPU column is used.
    """
    try:
        with open(path, newline="") as fh:
            rows = list(csv.reader(fh))
    except OSError as exc:
        raise InvalidInstance(f"machine_list file {path}: {exc.strerror or exc}") from None
    if not rows or len(rows[0]) < 2 or "gpu" not in rows[0][1].lower():
        raise InvalidInstance(f"machine_list file {path}: header must be "
                              "'machineId,number of GPUs,single GPU mem'")
    counts = []
    for i, row in enumerate(rows[1:], start=2):
        try:
            value = int(row[1])
        except (IndexError, ValueError):
            raise InvalidInstance(f"machine_list file {path} line {i}: GPU count must be an "
                                  f"integer, got {row[1:2]}") from None
        if value < 0:
            raise InvalidInstance(f"machine_list file {path} line {i}: negative GPU count {value}")
        counts.append(value)
    if not counts:
        raise InvalidInstance(f"machine_list file {path}: no machines")
    return tuple(counts)


def _tuple2(rows: Sequence[Sequence[int]]) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(int(x) for x in row) for row in rows)


# --------------------------------------------------------------------------- size (optsched worst)

#: What :func:`size` counts, and the list patterns it counts (``WorstSpec.what``, ``.grows``).
SIZE_WHAT = "jobs"
SIZE_GROWS: tuple[str, ...] = ("jobs",)


def size(doc: dict) -> int:
    """The size of an instance JSON document: its number of jobs."""
    return len(doc["jobs"])


__all__ = ["PRESETS", "generate", "load_machine_list", "SIZE_GROWS", "SIZE_WHAT", "size"]

"""Seeded hetero_gpu (Hare) instances.

Presets
-------
tiny
    2–3 jobs, <= 8 tasks, 2–3 GPUs, integer times (digest §7.2): brute-forcible, exact in ~1 s.
small
    3–4 jobs, <= 10 tasks, 3 GPUs, integer times: exact (big-M with deadlines) within 60 s.
paper
    The paper's simulation (Sec. 7; digest §7.3): the 8 models of Table 2 in 4 job classes (CV, NLP,
    Speech, Rec) at 25% each, 160 GPUs in the ``high`` heterogeneity mix (V100/T4/K80/M60 in equal
    shares; ``middle`` = V100 + K80, ``low`` = V100 only), 200 jobs (100–300 via ``n_jobs``), bursty
    arrivals. Times in seconds. Every number the paper does not give is the digest's [guess]; the
    deviations are listed in :func:`paper`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from optsched.errors import InvalidInstance
from optsched.problems.hetero_gpu import Instance, Job

if TYPE_CHECKING:
    from optsched.family import MutationContext

PRESETS = ("tiny", "small", "paper")

#: Per-batch compute time (ms) on K80, M60, T4, V100 (digest §7.3; ResNet50 and GraphSAGE from Fig. 2).
MODEL_MS = {
    "VGG19": (1120, 862, 448, 149), "ResNet50": (370, 285, 185, 53),
    "InceptionV3": (1102, 848, 501, 170), "BERT-base": (3521, 2708, 1174, 440),
    "Transformer": (3149, 2422, 1125, 420), "DeepSpeech": (1686, 1405, 843, 337),
    "FastGCN": (77, 70, 51, 39), "GraphSAGE": (55, 50, 37, 28),
}
GPU_TYPES = ("K80", "M60", "T4", "V100")
#: fp32 model size (MB) used for the sync time 2·S/B (digest §7.3).
MODEL_MB = {"VGG19": 80, "ResNet50": 95, "InceptionV3": 90, "BERT-base": 440, "Transformer": 250,
            "DeepSpeech": 190, "FastGCN": 0.1, "GraphSAGE": 1}
#: Table 2's job classes and the single-V100 work range of each (minutes; digest §7.3 [guess]).
CLASSES = {"CV": (("VGG19", "ResNet50", "InceptionV3"), (5, 30)),
           "NLP": (("BERT-base", "Transformer"), (15, 60)),
           "Speech": (("DeepSpeech",), (10, 40)), "Rec": (("FastGCN", "GraphSAGE"), (2, 10))}
MIXES = {"low": ("V100",), "middle": ("V100", "K80"), "high": ("V100", "T4", "K80", "M60")}
#: Sync scale K_n: Philly-derived distribution of Gavel's simulator (digest §7.3).
SCALES, SCALE_P = (1, 2, 4, 8), (0.70, 0.10, 0.15, 0.05)


def generate(preset: str = "tiny", seed: int = 0, **overrides) -> Instance:
    """A seeded instance of ``preset`` (``tiny`` | ``small`` | ``paper``); ``overrides`` go to the preset."""
    if preset not in PRESETS:
        raise InvalidInstance(f"preset: unknown preset {preset!r} (known: {', '.join(PRESETS)})")
    rng = np.random.default_rng(seed)
    if preset == "paper":
        return paper(rng, **overrides)
    limits = {"tiny": dict(n_jobs=(2, 3), n_gpus=(2, 3), max_tasks=8),
              "small": dict(n_jobs=(3, 4), n_gpus=(3, 3), max_tasks=10)}[preset]
    return random_small(rng, **{**limits, **overrides}, name=f"{preset}-{seed}")


def random_small(rng: np.random.Generator, n_jobs=(2, 3), n_gpus=(2, 3), max_tasks=8,
                 max_rounds=2, max_k=2, max_base=4, name="") -> Instance:
    """Integer-data instance of digest §7.2: GPU speeds in {1,2,3}, T^c = ceil(3·base/speed),
    T^s = 1, a ~ U{0..4}, w ~ U{1..5}; jobs are added while the task count stays <= ``max_tasks``."""
    gpus = int(rng.integers(n_gpus[0], n_gpus[1] + 1))
    speeds = rng.integers(1, 4, size=gpus)
    jobs: list[Job] = []
    for _ in range(int(rng.integers(n_jobs[0], n_jobs[1] + 1))):
        rounds = int(rng.integers(1, max_rounds + 1))
        k = int(rng.integers(1, min(max_k, gpus) + 1))
        used = sum(j.rounds * j.tasks_per_round for j in jobs)
        if used + rounds * k > max_tasks:
            rounds, k = 1, 1
            if used + 1 > max_tasks:
                break
        base = int(rng.integers(1, max_base + 1))
        tc = tuple(float(math.ceil(3 * base / s)) for s in speeds)
        jobs.append(Job(arrival=float(rng.integers(0, 5)), weight=float(rng.integers(1, 6)),
                        rounds=rounds, tasks_per_round=k, train_time=tc, sync_time=(1.0,) * gpus))
    return Instance(gpus=tuple(f"speed{s}" for s in speeds), jobs=tuple(jobs), name=name)


def paper(rng: np.random.Generator, n_jobs: int = 200, n_gpus: int = 160, heterogeneity: str = "high",
          bandwidth_gbps: float = 25.0, load: float = 1.0, max_rounds: int = 20,
          class_mix: dict | None = None, unit_weights: bool = False) -> Instance:
    """Paper-scale instance (Sec. 7; digest §7.3).

    Deviations, all forced by what the paper leaves out: per-model times from the digest's speed-up
    table; ``K_n`` from Gavel's Philly distribution, capped at the GPU count; rounds from the class's
    V100 work, grouped ``g`` iterations per simulated round so that ``rounds <= max_rounds`` (task
    times scale by ``g``); arrivals are a bursty Poisson process at the given ``load`` instead of the
    Google 2019 trace (no network here); weights U{1..5}.
    """
    if heterogeneity not in MIXES:
        raise InvalidInstance(f"heterogeneity: must be one of {', '.join(MIXES)}, got {heterogeneity!r}")
    mix = MIXES[heterogeneity]
    # types in equal shares, in a seeded random order: a GPU's index carries no speed information,
    # so index-based (heterogeneity-oblivious) baselines are not handed the fast GPUs first
    gpus = tuple(rng.permutation([mix[m * len(mix) // n_gpus] for m in range(n_gpus)]).tolist())
    classes = list(CLASSES)
    probs = np.array([(class_mix or {}).get(c, 1.0) for c in classes], dtype=float)
    jobs, work = [], []
    for _ in range(n_jobs):
        cls = classes[int(rng.choice(len(classes), p=probs / probs.sum()))]
        models, (lo, hi) = CLASSES[cls]
        model = models[int(rng.integers(len(models)))]
        minutes = float(rng.uniform(lo, hi))
        work.append(minutes)
        jobs.append(_paper_job(rng, model, minutes, gpus, bandwidth_gbps, max_rounds, unit_weights))
    arrivals = _bursty_arrivals(rng, n_jobs, float(np.mean(work)) * 60 / (load * _v100_capacity(gpus)))
    jobs = [Job(float(a), j.weight, j.rounds, j.tasks_per_round, j.train_time, j.sync_time, j.model)
            for a, j in zip(arrivals, jobs)]
    return Instance(gpus=gpus, jobs=tuple(jobs), name=f"paper-{heterogeneity}-{n_jobs}x{n_gpus}")


def _paper_job(rng, model, minutes, gpus, bandwidth_gbps, max_rounds, unit_weights) -> Job:
    k = min(int(rng.choice(SCALES, p=SCALE_P)), len(gpus))
    ms = dict(zip(GPU_TYPES, MODEL_MS[model]))
    iterations = math.ceil(60000 * minutes / (k * ms["V100"]))
    group = math.ceil(iterations / max_rounds)
    rounds = math.ceil(iterations / group)
    sync = 2 * MODEL_MB[model] * 8 / (bandwidth_gbps * 1000)  # seconds per iteration
    jitter = rng.uniform(1.0, 1.1, size=len(gpus))
    return Job(arrival=0.0, weight=1.0 if unit_weights else float(rng.integers(1, 6)), rounds=rounds,
               tasks_per_round=k, model=model,
               train_time=tuple(round(group * ms[g] / 1000, 6) for g in gpus),
               sync_time=tuple(round(float(group * sync * x), 6) for x in jitter))


def _v100_capacity(gpus) -> float:
    """Sum over GPUs of the mean (over models) speed relative to a V100."""
    rel = {t: np.mean([MODEL_MS[m][3] / MODEL_MS[m][i] for m in MODEL_MS]) for i, t in enumerate(GPU_TYPES)}
    return float(sum(rel[g] for g in gpus))


def _bursty_arrivals(rng, n_jobs: int, mean_gap: float) -> np.ndarray:
    """Arrival times (s) in bursts: burst sizes 1 + Geometric(1/2), exponential gaps between bursts
    with the mean that gives ``mean_gap`` per job."""
    times: list[float] = []
    t = 0.0
    while len(times) < n_jobs:
        size = int(rng.geometric(0.5))
        times.extend([round(t, 3)] * size)
        t += float(rng.exponential(2 * mean_gap))
    return np.array(times[:n_jobs])


# --------------------------------------------------------------------------- size (optsched worst)

#: What :func:`size` counts, and the list patterns it counts (``WorstSpec.what``, ``.grows``).
SIZE_WHAT = "tasks"
SIZE_GROWS: tuple[str, ...] = ("jobs",)


def size(doc: dict) -> int:
    """The size of an instance JSON document: its number of tasks (rounds x tasks per round,
    over every job)."""
    return sum(j["rounds"] * j["tasks_per_round"] for j in doc["jobs"])


def gpu_column(doc: dict, ctx: MutationContext) -> dict | None:
    """Mutation operator of ``optsched worst``: copy or remove one GPU (its name and its column
    of every job's times)."""
    lo, hi = ctx.profile.list_range("gpus", ctx.grows)
    n = len(doc["gpus"])
    if any(len(j["train_time"]) != n or len(j["sync_time"]) != n for j in doc["jobs"]):
        return None                    # an earlier operator broke the shape; validation rejects
    m = int(ctx.rng.integers(n))
    if ctx.rng.random() < 0.5 and n < hi:
        doc["gpus"].append(doc["gpus"][m])
        for job in doc["jobs"]:
            job["train_time"].append(job["train_time"][m])
            job["sync_time"].append(job["sync_time"][m])
    elif n > max(lo, 1):
        del doc["gpus"][m]
        for job in doc["jobs"]:
            del job["train_time"][m]
            del job["sync_time"][m]
    else:
        return None
    return doc

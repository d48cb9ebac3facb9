"""Seeded instance generators for cojob_network (Grouper, paper Sec. V).

Presets
-------
tiny
    P = 2 machines, 2-3 cojobs of 1-2 jobs, at most 2 stages (l <= 6 stages), 1-2 iterations per
    stage, random flows of integer size 1-3. Brute force (all chain-consistent stage orders) and the
    exact ordering MILP solve in well under a second.
small
    P = 3, 4 cojobs of 1-4 jobs, up to 3 stages (l <= 12), successive halving, 1-2-4 iterations.
paper
    ``scenario="testbed"`` (default): paper Sec. V-A/Table III — one cojob per model (DeepSpeech2
    160 MB, ResNet152 230 MB, AlexNet 250 MB, VGG19 580 MB), 8 jobs each, 4 stages of
    500/1000/2000/4000 iterations with successive halving 8 -> 4 -> 2 -> 1, every job 2 workers + 2 PS
    placed on random distinct hosts of 23 servers with 1 Gbps (125 MB/s) links, all released at 0.
    The iteration counts are multiplied by ``iteration_scale`` (default 0.1: 50/100/200/400, so a
    recorded, verified run has ~13k events instead of ~130k; stage loads keep their proportions, so
    PDA's orders are the same; ``iteration_scale=1`` gives the paper's counts).
    ``placement="gpu_servers"`` puts every worker on one of the testbed's 3 GPU servers (hosts 0-2)
    and the PS on the 20 CPU servers (the paper does not give the mapping: digest E32); the default
    ``random`` spreads workers and PS over all 23 servers
    (the closed loop of the testbed, which re-launches a cojob when one finishes its third stage,
    depends on the schedule and cannot be a fixed arrival time; ``waves`` > 1 releases further
    rounds of the four cojobs at fixed gaps instead).
    ``scenario="simulation"``: paper Sec. V-C — 60 servers, 10 Gbps (1250 MB/s), ``cojobs`` cojobs
    (default 40, the authors' trace size) whose arrival gaps are resampled from the authors' trace
    (39 gaps, mean 14.8 s) and divided by the workload scale ``load`` (0.1x-2x); W workers = W PS with
    the trace's W frequencies; iterations 20/20/40/400 per stage as in the authors' simulator (the
    testbed counts are 16x more coflows; pass ``iterations=(500, 1000, 2000, 4000)`` for them).
    ``comm_comp`` sets a compute gap per iteration of (per-iteration bottleneck time)/comm_comp.

The leaf-spine topology of the paper is not modelled: both scenarios are solved and simulated on
the paper's big-switch abstraction (Sec. III-A) with P = number of servers.
"""

from __future__ import annotations

import numpy as np

from optsched.errors import InvalidInstance
from optsched.problems.cojob_network import Cojob, Instance, Job

PRESETS = ("tiny", "small", "paper")

MODELS = {"DeepSpeech2": 160.0, "ResNet152": 230.0, "AlexNet": 250.0, "VGG19": 580.0}  # Table III, MB
TRACE_GAPS = (1,) * 14 + (2,) + (6,) * 6 + (8,) * 4 + (
    11.84, 12.06, 12.13, 14.33, 16.10, 16.97, 17.53, 22.08, 23.94, 26.32, 35.81, 44.43, 59.58, 180.81)
TRACE_W = {1: 6, 2: 7, 3: 11, 4: 10, 5: 2, 6: 4}   # per-cojob worker counts in the authors' trace


def generate(preset: str = "tiny", seed: int = 0, **overrides) -> Instance:
    """A seeded instance of ``preset`` (see module docstring); ``overrides`` change parameters."""
    rng = np.random.default_rng(seed)
    if preset == "tiny":
        params = dict(machines=2, cojobs=(2, 3), max_stages=2, max_jobs=2, max_size=3,
                      density=0.5, stage_iterations=(1, 2))
        return _random(rng, f"tiny-{seed}", **{**params, **overrides})
    if preset == "small":
        params = dict(machines=3, cojobs=(4, 4), max_stages=3, max_jobs=4, max_size=3,
                      density=0.4, stage_iterations=(1, 2, 4))
        return _random(rng, f"small-{seed}", **{**params, **overrides})
    if preset == "paper":
        scenario = overrides.pop("scenario", "testbed")
        if scenario == "testbed":
            return _testbed(rng, seed, **overrides)
        if scenario == "simulation":
            return _simulation(rng, seed, **overrides)
        raise InvalidInstance(f"scenario: unknown scenario {scenario!r} (known: testbed, simulation)")
    raise InvalidInstance(f"preset: unknown preset {preset!r} (known: {', '.join(PRESETS)})")


def _random(rng, name, *, machines, cojobs, max_stages, max_jobs, max_size, density,
            stage_iterations, arrivals: bool = False) -> Instance:
    """Spec Sec. 7.2 ``gen_small`` with abstract random port pairs; halving eta = 2."""
    out = []
    for g in range(int(rng.integers(cojobs[0], cojobs[1] + 1))):
        K = int(rng.integers(1, max_stages + 1))
        N = int(rng.integers(1, max_jobs + 1))
        jobs = []
        for j in range(N):
            stages = _halving_stages(j, N, K)
            jobs.append(Job(stages, _random_flows(rng, machines, density, max_size)))
        iters = tuple(int(x) for x in np.cumsum(stage_iterations[:K]))
        arrival = float(rng.integers(0, 4)) if arrivals else 0.0
        out.append(Cojob(arrival, iters, tuple(jobs)))
    return Instance(machines, tuple(out), name=name)


def _halving_stages(j: int, n_jobs: int, n_stages: int) -> int:
    """Stages run by job ``j`` under successive halving: stage k keeps max(1, N // 2^k) jobs."""
    return max(k + 1 for k in range(n_stages) if j < max(1, n_jobs // 2 ** k))


def _random_flows(rng, machines: int, density: float, max_size: int):
    flows = [(s, d, float(rng.integers(1, max_size + 1)))
             for s in range(machines) for d in range(machines) if rng.random() < density]
    if not flows:
        flows = [(int(rng.integers(machines)), int(rng.integers(machines)),
                  float(rng.integers(1, max_size + 1)))]
    return tuple(flows)


def ps_flows(workers, servers, model_mb: float) -> tuple:
    """PS-architecture coflow (spec Sec. 3.2): each worker pushes Theta/V to every PS and pulls it
    back; flows between a worker and a PS on the same host are dropped (keep_local=False)."""
    flows: dict[tuple[int, int], float] = {}
    share = model_mb / len(servers)
    for w in workers:
        for s in servers:
            if w != s:
                flows[w, s] = flows.get((w, s), 0.0) + share
                flows[s, w] = flows.get((s, w), 0.0) + share
    return tuple((s, d, x) for (s, d), x in sorted(flows.items()))


def _ps_cojob(rng, machines, model, arrival, n_jobs, W, iterations, comm_comp, capacity,
              gpu_hosts: int = 0) -> Cojob:
    jobs = []
    for j in range(n_jobs):
        if gpu_hosts:   # workers on the GPU servers 0..gpu_hosts-1, PS on the CPU servers
            workers = rng.choice(gpu_hosts, size=W, replace=False)
            servers = gpu_hosts + rng.choice(machines - gpu_hosts, size=W, replace=False)
        else:
            hosts = rng.choice(machines, size=2 * W, replace=False)
            workers, servers = hosts[:W], hosts[W:]
        flows = ps_flows(sorted(int(h) for h in workers), sorted(int(h) for h in servers),
                         MODELS[model])
        compute = 0.0
        if comm_comp is not None:
            compute = _bottleneck(flows, machines) / capacity / comm_comp
        jobs.append(Job(_halving_stages(j, n_jobs, len(iterations)), flows, compute))
    return Cojob(float(arrival), tuple(int(x) for x in np.cumsum(iterations)), tuple(jobs), model)


def _bottleneck(flows, machines: int) -> float:
    load = np.zeros(2 * machines)
    for s, d, x in flows:
        load[s] += x
        load[machines + d] += x
    return float(load.max())


def _testbed(rng, seed, *, machines=23, capacity=125.0, workers=2, jobs=8,
             iterations=(500, 1000, 2000, 4000), iteration_scale=0.1, waves=1, wave_gap=0.0,
             comm_comp=None, placement="random") -> Instance:
    if placement not in ("random", "gpu_servers"):
        raise InvalidInstance(f"placement: must be random or gpu_servers, got {placement!r}")
    gpu_hosts = 3 if placement == "gpu_servers" else 0
    if iteration_scale <= 0:
        raise InvalidInstance(f"iteration_scale: must be > 0, got {iteration_scale}")
    iterations = tuple(max(1, round(n * iteration_scale)) for n in iterations)
    cojobs = [_ps_cojob(rng, machines, model, w * wave_gap, jobs, workers, iterations, comm_comp,
                        capacity, gpu_hosts)
              for w in range(waves) for model in MODELS]
    return Instance(machines, tuple(cojobs), capacity, name=f"paper-testbed-{seed}")


def _simulation(rng, seed, *, machines=60, capacity=1250.0, cojobs=40, jobs=8, load=1.0,
                iterations=(20, 20, 40, 400), comm_comp=None) -> Instance:
    if load <= 0:
        raise InvalidInstance(f"load: must be > 0, got {load}")
    ws = np.repeat(list(TRACE_W), list(TRACE_W.values()))
    models = list(MODELS)
    out, t = [], 0.0
    for g in range(cojobs):
        if g:
            t += float(rng.choice(TRACE_GAPS)) / load
        model = models[int(rng.integers(len(models)))]
        out.append(_ps_cojob(rng, machines, model, t, jobs, int(rng.choice(ws)), iterations,
                             comm_comp, capacity))
    return Instance(machines, tuple(out), capacity, name=f"paper-simulation-{seed}-x{load:g}")


# --------------------------------------------------------------------------- size (optsched worst)

#: What :func:`size` counts, and the list patterns it counts (``WorstSpec.what``, ``.grows``).
SIZE_WHAT = "jobs"
SIZE_GROWS: tuple[str, ...] = ("cojobs", "cojobs.*.jobs", "cojobs.*.jobs.*.flows",
                              "cojobs.*.iterations")


def size(doc: dict) -> int:
    """The size of an instance JSON document: its number of jobs, over every cojob."""
    return sum(len(c["jobs"]) for c in doc["cojobs"])

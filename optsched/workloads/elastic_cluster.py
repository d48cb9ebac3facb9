"""Seeded elastic_cluster instances (Zhou et al., paper 000).

Presets
-------
tiny
    3 jobs arriving in slots 1-2, 2 servers, R = 2 (gpu, cpu), 2 worker and 2 PS types, D_j <= 3, W_j <= 6,
    durations of 1-8 slots (digest Sec. 7.1 "tiny"): brute-forcible, exact in about a second.
small
    4 jobs, 2 servers, R = 2, 2 x 2 types, D_j <= 3 (digest Sec. 7.1 "small", shrunk so that the
    exact MILP proves optimality within 60 s on this machine).
paper
    Sec. 7: 150 servers drawn from EC2 P3/P2/G3 (digest Sec. 6.2 catalogue), R = 3 (gpu, vcpu,
    bandwidth in Mbps), the 8 worker and 10 PS types of digest Sec. 6.2, T = 150, J = 100 jobs
    (``n_jobs``) arriving uniformly on 1..T, w ~ U[200, 5000], E ~ U{50..100}, D ~ U{5..50},
    K ~ U{10..50}, v ~ U[0.001, 0.05] slots, U ~ U[10, 100] ms, pi ~ U[30, 575] MB; capacities
    scaled so that each resource's total is kappa ~ U[0.2, 0.5] times the total ideal demand.
    With very few jobs (about 10 at H = 150) no server can hold a worker any more; that raises
    InvalidInstance (lower ``n_servers`` then).

Tiny and small alternate the architecture by seed (even: ``ps``, odd: ``allreduce``); ``paper``
defaults to ``ps``; ``architecture=`` overrides both. F (``weight_ratio``) is set to the (A1) upper
ratio max_j w_j / min-resource-time_j (>= 1) in normalised units (digest Sec. 3.7).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from optsched.errors import InvalidInstance
from optsched.family import Claim, last_call
from optsched.problems.elastic_cluster import Instance, Job, NodeType

PRESETS = ("tiny", "small", "paper")

#: EC2 GPU instances (GPU, vCPU, network Gbps) of digest Sec. 6.2; p2.xlarge's network set to 1.25.
EC2 = {"p3.2xlarge": (1, 8, 10), "p3.8xlarge": (4, 32, 10), "p3.16xlarge": (8, 64, 25),
       "p2.xlarge": (1, 4, 1.25), "p2.8xlarge": (8, 32, 10), "p2.16xlarge": (16, 64, 25),
       "g3.4xlarge": (1, 16, 10), "g3.8xlarge": (2, 32, 10), "g3.16xlarge": (4, 64, 25)}
#: Worker types (GPU, vCPU, Gbps) and PS types (vCPU, Gbps), digest Sec. 6.2 default tables.
WORKERS = ((1, 1, 0.1), (1, 4, 0.5), (1, 8, 1), (2, 4, 1), (2, 8, 2), (3, 12, 3), (4, 8, 4),
           (4, 16, 5))
PS_TYPES = ((1, 5), (2, 6), (4, 8), (4, 10), (8, 10), (8, 12), (12, 15), (16, 16), (16, 18),
            (16, 20))
MS_PER_SLOT = 3.6e6     # one slot = 1 hour
MB_MBPS_TO_SLOTS = 8 / 3600.0   # pi [MB] * 8 / b [Mbps] seconds -> hours


def generate(preset: str = "tiny", seed: int = 0, **overrides) -> Instance:
    """A seeded instance of ``preset``; ``overrides`` go to the preset's builder."""
    if preset not in PRESETS:
        raise InvalidInstance(f"preset: unknown preset {preset!r} (known: {', '.join(PRESETS)})")
    rng = np.random.default_rng(seed)
    if preset == "paper":
        return paper(rng, **{"name": f"paper-{seed}", **overrides})
    arch = "ps" if seed % 2 == 0 else "allreduce"
    sizes: dict[str, dict[str, Any]] = {"tiny": {"n_jobs": (3, 3), "horizon": 4},
                                        "small": {"n_jobs": (4, 4)}}
    size = sizes[preset]
    return random_small(rng, **{"architecture": arch, **size, "name": f"{preset}-{seed}",
                                **overrides})


def random_small(rng: np.random.Generator, architecture: str = "ps", n_jobs=(2, 3),
                 n_servers: int = 2, max_chunks: int = 3, horizon: int = 6,
                 name: str = "") -> Instance:
    """Small integer-capacity instance (digest Sec. 7.2 mode "small", shrunk): GPU/CPU servers,
    v ~ U[0.3, 1.0], U ~ U[0.05, 0.3] slots, comm 2 pi/b ~ 0.05..0.75 slots, a ~ U{1..horizon/2},
    w ~ U{1..9}."""
    ps = architecture == "ps"
    capacity = tuple((float(rng.integers(2, 4)), float(rng.integers(3, 6)))
                     for _ in range(n_servers))
    workers = tuple(NodeType((float(g), float(rng.integers(1, 3))), float(rng.integers(1, 4)))
                    for g in (1, 2))
    ps_types = tuple(NodeType((0.0, float(rng.integers(1, 3))), float(rng.integers(2, 7)))
                     for _ in range(2)) if ps else ()
    jobs = []
    for _ in range(int(rng.integers(n_jobs[0], n_jobs[1] + 1))):
        n_update = len(ps_types) if ps else 1
        jobs.append(Job(
            arrival=int(rng.integers(1, horizon // 2 + 1)), weight=float(rng.integers(1, 10)),
            epochs=1, chunks=int(rng.integers(1, max_chunks + 1)),
            batches=int(rng.integers(1, 3)),
            compute=tuple(round(float(x), 3) for x in rng.uniform(0.3, 1.0, 2)),
            update=tuple(round(float(x), 3) for x in rng.uniform(0.05, 0.3, n_update)),
            grad_size=round(float(rng.uniform(0.05, 0.25)), 3)))
    inst = Instance(architecture, ("gpu", "cpu"), capacity, workers, ps_types, tuple(jobs),
                    horizon=horizon, name=name)
    return with_weight_ratio(inst)


def paper(rng: np.random.Generator, architecture: str = "ps", n_jobs: int = 100,
          n_servers: int = 150, horizon: int = 150, kappa: float | None = None,
          name: str = "") -> Instance:
    """Sec. 7 settings (see the module docstring). Bandwidth in Mbps, times in slots (1 hour)."""
    ps = architecture == "ps"
    workers = tuple(NodeType((float(g), float(c), 1000.0 * bw), 1000.0 * bw)
                    for g, c, bw in WORKERS)
    ps_types = tuple(NodeType((0.0, float(c), 1000.0 * bw), 1000.0 * bw)
                     for c, bw in PS_TYPES) if ps else ()
    jobs = [_paper_job(rng, ps, len(ps_types), horizon) for _ in range(n_jobs)]
    kinds = list(EC2.values())
    raw = np.array([kinds[k] for k in rng.integers(0, len(kinds), n_servers)], dtype=float)
    raw[:, 2] *= 1000.0
    kappa = float(rng.uniform(0.2, 0.5)) if kappa is None else kappa
    demand = _ideal_demand(jobs, workers, ps_types, ps)
    scale = kappa * demand / raw.sum(axis=0)
    cap = raw * scale
    cap[:, :2] = np.maximum(1.0, np.floor(cap[:, :2]))
    inst = Instance(architecture, ("gpu", "vcpu", "bw"), tuple(map(tuple, cap.tolist())),
                    workers, ps_types, tuple(jobs), horizon=horizon,
                    comm_factor=MB_MBPS_TO_SLOTS, name=name)
    _check_fits(inst)
    return with_weight_ratio(inst)


def _paper_job(rng: np.random.Generator, ps: bool, n_ps: int, horizon: int) -> Job:
    n_update = n_ps if ps else 1
    return Job(arrival=int(rng.integers(1, horizon + 1)),
               weight=round(float(rng.uniform(200, 5000)), 2),
               epochs=int(rng.integers(50, 101)), chunks=int(rng.integers(5, 51)),
               batches=int(rng.integers(10, 51)),
               compute=tuple(round(float(x), 5) for x in rng.uniform(0.001, 0.05, len(WORKERS))),
               update=tuple(round(float(x) / MS_PER_SLOT, 12)
                            for x in rng.uniform(10, 100, n_update)),
               grad_size=round(float(rng.uniform(30, 575)), 2))


def _ideal_demand(jobs, workers, ps_types, ps: bool) -> np.ndarray:
    """Per-slot ideal demand of all jobs: D_j workers of the fastest type plus, for PS,
    max(1, ceil(D_j b / B)) PSs of the widest PS type (digest Sec. 6.2 [guess])."""
    total = np.zeros(3)
    for job in jobs:
        m = int(np.argmin(job.compute))
        total += job.chunks * np.array(workers[m].demand)
        if ps:
            p = int(np.argmax([t.bandwidth for t in ps_types]))
            n_ps = max(1, int(np.ceil(job.chunks * workers[m].bandwidth / ps_types[p].bandwidth)))
            total += n_ps * np.array(ps_types[p].demand)
    return total


def _check_fits(inst: Instance) -> None:
    """Some worker type (with some PS type) must fit on some empty server (then every job fits)."""
    pairs = [inst.e[m] + (inst.z[p] if inst.is_ps else 0) for m in range(len(inst.worker_types))
             for p in (range(len(inst.ps_types)) if inst.is_ps else (0,))]
    if not any((need <= inst.cap + 1e-9).all(axis=1).any() for need in pairs):
        raise InvalidInstance("capacity: no worker (+ PS) fits on any server; raise the capacities")


def with_weight_ratio(inst: Instance) -> Instance:
    """``inst`` with F = max(1, max_j w_j / min-resource-time_j) (the (A1) upper ratio)."""
    ratio = max(inst.jobs[j].weight / inst.min_resource_time(j) for j in range(len(inst.jobs)))
    return dataclasses.replace(inst, weight_ratio=float(max(1.0, ratio)))


# --------------------------------------------------------------------------- size (optsched worst)

#: What :func:`size` counts, and the list patterns it counts (``WorstSpec.what``, ``.grows``).
SIZE_WHAT = "jobs"
SIZE_GROWS: tuple[str, ...] = ("jobs",)


def size(doc: dict) -> int:
    """The size of an instance JSON document: its number of jobs."""
    return len(doc["jobs"])


# --------------------------------------------------------------------------- claims (optsched worst)

#: Relative slots of the Algorithm 3 batch replayed by :func:`mincost1_violation` (the doubling
#: rounds of A_online use tau_i = 1, 2, 4, ...; Z1's counterexample has tau = 2).
MINCOST1_TAU = 4


def _cost_factor(greedy: float, exact: float) -> float:
    """greedy / exact; 1 + greedy when the exact cost is 0 (any positive greedy cost fails)."""
    return greedy / exact if exact > 1e-12 else (1.0 + greedy if greedy > 1e-9 else 1.0)


def mincost1_violation(inst: Instance, result) -> float | None:
    """Theorem 1 (Sec. 4.2): A_mincost1 (Alg. 4) finds a minimum-cost PS schedule with q = 0.

    Replays Algorithm 3 (A_maxweight, lines 3-6 with the method's pricing and tie-break) on all
    jobs as one batch over :data:`MINCOST1_TAU` slots, and before every admission decision
    compares Alg. 4's cost with the exact A_mincost1 (``mincost_distributed_ps(exact=True)``) on
    the same prices for every job of the batch (the theorem is stated for any prices). Returns
    the largest greedy / exact cost (1 = Theorem 1 holds on every call; errata Z1), None for an
    all-reduce instance, for the exact pricing reading or when no call had a plan."""
    replay = _mincost1_replay(inst, result.method)
    return max(replay[0]) if replay is not None and replay[0] else None


def mincost1_grade(inst: Instance, result) -> float | None:
    """Theorem 1's closeness on the same replay as :func:`mincost1_violation`: of Alg. 4's
    placement steps -- lines 6-22 place ONE configuration (m', p', N, L) at one start t^- --
    the share where the step does worse than the exact placement of the same configuration and
    start (:func:`_exact_ps_server`): it places nothing where the exact one places it, or
    costs more. Over every call of the replay and every configuration and start the exact
    placement can place; 0 when every step matches it.

    A_mincost1 is the minimum over configurations and starts of that step (line 23 keeps the
    cheapest), so the step matching the exact placement on every configuration and start is
    what makes the minimum optimal (Theorem 1). A step that misses or overpays changes no cost
    while another configuration of the call is at least as cheap -- the factor, a ratio of
    the call's costs, sits at exactly 1 -- and refutes the theorem once prices make that
    configuration the cheapest. The share rises as the greedy construction (servers in Omega
    order filled to capacity, the PS server at the first position where the largest feasible
    worker count fits, the other workers after it) covers less of what the exact placement
    reaches. Search guidance only (never a violation)."""
    replay = _mincost1_replay(inst, result.method)
    if replay is None or not replay[0]:
        return None
    steps = replay[1]
    return sum(x > 1 + 1e-9 for x in steps) / len(steps) if steps else 0.0


@last_call
def _mincost1_replay(inst: Instance, method: str) -> tuple[list[float], list[float]] | None:
    """(greedy / exact cost of every A_mincost1 call of the replay where both found a plan
    (:func:`mincost1_violation`), greedy / exact cost of every placement step the exact
    placement can place, inf where Alg. 4's cannot (:func:`mincost1_grade`)); None when the
    claim does not apply."""
    import numpy as np

    from optsched.registry import get_family
    from optsched.solvers.elastic_cluster.placement import (
        PriceState,
        job_best,
        mincost_distributed_ps,
    )
    from optsched.solvers.online import Candidate, UsageLedger, exponential_price, primal_dual_admission

    params = get_family("elastic_cluster").method(method).params
    pricing = getattr(params, "pricing", "exact")
    tie_break = getattr(params, "tie_break", "paper")
    if not inst.is_ps or pricing == "exact":
        return None
    H, R, tau = inst.n_servers, inst.n_res, MINCOST1_TAU
    ledger = UsageLedger(inst.cap.reshape(-1), slots=range(1, tau + 1),
                         price=exponential_price(inst.price_base))
    factors: list[float] = []
    steps: list[float] = []
    order = sorted(range(len(inst.jobs)), key=lambda j: (inst.jobs[j].arrival, j))

    def best_plan(j: int, led: UsageLedger) -> Candidate | None:
        omega = led.residual.reshape(H, R, tau)
        delta = np.where(np.isinf(led.prices), 0.0, led.prices).reshape(H, R, tau)
        for k in order:                 # Theorem 1 holds for any prices: every job as the next
            greedy = mincost_distributed_ps(PriceState(inst, omega, delta), k,
                                            literal=pricing == "literal")
            exact = mincost_distributed_ps(PriceState(inst, omega, delta), k, exact=True)
            if greedy.plan is not None and exact.plan is not None:
                factors.append(_cost_factor(greedy.cost, exact.cost))
            steps.extend(_placement_steps(PriceState(inst, omega, delta), k,
                                          literal=pricing == "literal"))
        best = job_best(PriceState(inst, omega, delta), j, pricing, tie_break)
        if best.plan is None:
            return None
        plan = best.plan
        use = plan.usage(inst).reshape(-1)
        rows = np.flatnonzero(use)

        def charge(lg: UsageLedger) -> None:
            lg.charge_block(rows, plan.start, plan.start + plan.duration - 1, use[rows])

        return Candidate(best.cost, plan=plan, charge=charge)

    primal_dual_admission(order, weight=lambda j: inst.jobs[j].weight, best_plan=best_plan,
                          ledger=ledger)
    return factors, steps


def _placement_steps(state, j: int, literal: bool) -> list[float]:
    """greedy / exact cost of Alg. 4's placement step (lines 6-22) for every q = 0
    configuration of job j and start the exact placement can place (inf where Alg. 4's places
    nothing; :func:`mincost1_grade`)."""
    import numpy as np

    from optsched.solvers.elastic_cluster.placement import (
        _configs,
        _exact_ps_server,
        _faithful_ps_server,
        _per_unit,
        _ps_counts,
    )

    inst, out = state.inst, []
    for m, p, n, length in _configs(inst, j, 0, state.tau - 1):
        e, z = _per_unit(inst, m, p)
        raw = _ps_counts(inst, m, p, n)
        ws, wm = state.windows(length)
        omega_cost, caps, _ = state.worker_side(length, m)
        psi_cost = np.einsum("hrs,r->sh", ws, z)
        for s in range(state.tau - length):
            args = (wm[:, :, s], omega_cost[s], psi_cost[s], caps[s], e, z, n, raw)
            exact = _exact_ps_server(*args, False)
            if exact is not None:
                greedy = _faithful_ps_server(*args, literal)
                out.append(math.inf if greedy is None else _cost_factor(greedy[0], exact[0]))
    return out


#: Theorem 1 (A_mincost1 optimal) as an ``optsched worst --target lemma:mincost1`` predicate.
CLAIMS = (
    Claim("mincost1", "Theorem 1: A_mincost1 (Alg. 4) is a minimum-cost q = 0 PS schedule",
          ("a_online", "a_online_literal_pricing", "a_online_alpha4", "a_online_paper_eft",
           "a_online_per_round"), mincost1_violation, grade=mincost1_grade),
)

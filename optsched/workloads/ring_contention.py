"""Seeded ring_contention (SJF-BCO, paper 002) instances.

Presets
-------
tiny
    servers (4, 4), (3, 2) or (3, 3), 3 jobs with G in {1..4}, F in [60, 120], tau0 in [0.02, 0.05],
    worst-case contention+overhead share 50% so that contention matters (digest §7.1): brute-forcible.
small
    2 x 4 GPUs, 6 jobs {1:3, 2:2, 4:1}, F in [100, 300]: the exact MILP solves in seconds.
paper
    Sec. 7: 160 jobs (80x1, 14x2, 26x4, 30x8, 8x16, 2x32 GPUs), F in [1000, 6000], tau0 in
    [0.01, 0.05] with rho_hat = F tau0 in [50, 300] (rejection sampling, digest X1), 20 servers with
    O_s uniform in {4, 8, 16, 32}, T = 1200, contention + overhead <= 15% of the execution time in
    the worst case, contention and overhead given equal worst-case shares (our reading of xi1 = xi2,
    digest E3).

Calibration (digest §7.2; the paper gives none of alpha, b^e, b^i, C, m_j, M_j, Δ^f, Δ^b): b^e = 1,
b^i = 10, alpha = 0.1, xi1 = 1, C = 50. ``extra_cap`` X/(1+X) bounds the worst-case extra time.
"""

from __future__ import annotations

import inspect
import math

import numpy as np

from optsched.errors import InvalidInstance
from optsched.family import Claim, last_call
from optsched.problems.fields import fail
from optsched.problems.ring_contention import MAX_JOBS, MAX_SERVERS, Instance, Job

PRESETS = ("tiny", "small", "paper")

PAPER_MIX = {1: 80, 2: 14, 4: 26, 8: 30, 16: 8, 32: 2}
BW_RATIO, ALPHA, REDUCE_SPEED = 10.0, 0.1, 50.0
#: Draws of (F_j, tau0_j) before ``rho_range`` is declared unreachable (the paper preset needs a
#: handful per job; an override such as rho_range=(1e9, 2e9) must not loop forever).
MAX_REDRAWS = 10_000


def generate(preset: str = "tiny", seed: int = 0, **overrides) -> Instance:
    """A seeded instance of ``preset`` (``tiny`` | ``small`` | ``paper``); ``overrides`` go to
    :func:`build` (e.g. ``n_servers=10, horizon=1500`` for Fig. 6)."""
    if preset not in PRESETS:
        raise InvalidInstance(f"preset: unknown preset {preset!r} (known: {', '.join(PRESETS)})")
    rng = np.random.default_rng(seed)
    if preset == "tiny":
        shape = int(rng.integers(3))
        servers = ((4, 4), (3, 2), (3, 3))[shape]
        sizes = tuple(int(g) for g in rng.integers(1, 5, size=3))
        params = dict(servers=servers, sizes=sizes, f_range=(60, 120), tau_range=(0.02, 0.05),
                      extra_cap=0.5, horizon=40)
    elif preset == "small":
        params = dict(servers=(4, 4), sizes=(1, 1, 1, 2, 2, 4), f_range=(100, 300),
                      tau_range=(0.02, 0.05), extra_cap=0.5, horizon=60)
    else:
        params = dict(n_servers=20, sizes=_expand(PAPER_MIX), f_range=(1000, 6000),
                      tau_range=(0.01, 0.05), rho_range=(50, 300), extra_cap=0.15, horizon=1200)
    known = set(inspect.signature(build).parameters) - {"rng", "name"}
    for key in overrides:
        if key not in known:
            fail(f"override {key}", f"unknown (known: {', '.join(sorted(known))})")
    params.update(overrides)
    try:
        return build(rng, name=f"{preset}-{seed}", **params)
    except InvalidInstance:
        raise
    except (TypeError, ValueError, OverflowError) as err:  # a malformed override (e.g. a string
        if not overrides:                                 # range) reaches numpy: name it
            raise
        raise InvalidInstance(f"overrides {', '.join(sorted(overrides))}: {err}") from None


def build(rng: np.random.Generator, *, sizes, f_range, tau_range, extra_cap, horizon,
          servers=None, n_servers=None, capacities=(4, 8, 16, 32), rho_range=None,
          shuffle=True, name="") -> Instance:
    """Instance from job sizes ``sizes`` (G_j) and calibration ranges (digest §7.2 steps 1–7).

    The sizes that allocate (``n_servers``, ``sizes``) are checked against the problem's limits
    before anything is drawn; every value is then validated by :class:`Instance`."""
    _check_counts(n_servers, sizes)
    if servers is None:  # own stream, so that the jobs do not depend on n_servers (Fig. 6)
        server_rng = np.random.default_rng(int(rng.integers(2**62)))
        servers = tuple(int(c) for c in server_rng.choice(capacities, size=n_servers))
    sizes = list(sizes)
    if shuffle:
        rng.shuffle(sizes)  # trace order
    base = [_draw_job(rng, f_range, tau_range, rho_range) for _ in sizes]
    extra = extra_cap / (1 - extra_cap)
    p_max = max(1, min(max(servers), sum(1 for g in sizes if g >= 2)))
    f_max = p_max + ALPHA * (p_max - 1)
    xi2 = _overhead(servers, sizes, base, extra)
    jobs = tuple(_job(rng, g, f, tau0, extra, f_max, xi2) for g, (f, tau0) in zip(sizes, base))
    return Instance(servers=tuple(servers), jobs=jobs, bw_inter=1.0, bw_intra=BW_RATIO,
                    reduce_speed=REDUCE_SPEED, alpha=ALPHA, xi1=1.0, xi2=xi2, horizon=horizon,
                    name=name)


def _expand(mix: dict[int, int]) -> tuple[int, ...]:
    return tuple(g for g, count in mix.items() for _ in range(count))


def _check_counts(n_servers, sizes) -> None:
    """``n_servers`` and the number of jobs within MAX_SERVERS and MAX_JOBS (checked before the
    generator allocates arrays of those sizes)."""
    if n_servers is not None and (isinstance(n_servers, bool) or not isinstance(n_servers, int)
                                  or not 1 <= n_servers <= MAX_SERVERS):
        fail("n_servers", f"must be an integer in [1, {MAX_SERVERS}] (MAX_SERVERS), got {n_servers!r}")
    if not isinstance(sizes, (list, tuple)) or not 1 <= len(sizes) <= MAX_JOBS:
        fail("sizes", f"must be a list of 1 to {MAX_JOBS} GPU counts (MAX_JOBS)")


def _draw_job(rng, f_range, tau_range, rho_range) -> tuple[int, float]:
    """F_j and tau0_j; with ``rho_range``, redrawn until F tau0 lies in it (digest X1), at most
    MAX_REDRAWS times."""
    for _ in range(MAX_REDRAWS):
        f = int(rng.integers(f_range[0], f_range[1] + 1))
        tau0 = float(rng.uniform(*tau_range))
        if rho_range is None or rho_range[0] <= f * tau0 <= rho_range[1]:
            return f, tau0
    raise InvalidInstance(f"rho_range: no F x tau0 in {rho_range} after {MAX_REDRAWS} draws "
                          f"(f_range {f_range}, tau_range {tau_range})")


def _overhead(servers, sizes, base, extra) -> float:
    """xi2: half of the worst-case extra for the widest ring, and <= tau0 / 4 (digest §7.2 step 5)."""
    cands = [0.25 * min(tau0 for _, tau0 in base)]
    for g, (_, tau0) in zip(sizes, base):
        n_max = min(g, len(servers))
        if n_max >= 2:
            cands.append(extra * tau0 / (2 * (n_max - 1)))
    return round(min(cands), 9)


def _job(rng, g, f, tau0, extra, f_max, xi2) -> Job:
    """Physical parameters with tau(1 server) = tau0 and worst-case extra <= extra * tau0."""
    if g == 1:
        grad, red = 0.0, 0.0
        e_intra = 0.0
    else:
        e_inter = (extra * tau0 / 2) / (f_max - 1 / BW_RATIO)  # exchange time at b^e, no contention
        grad = e_inter * g / (2 * (g - 1))  # b^e = 1: e_inter = 2 m (g-1)/g
        e_intra = e_inter / BW_RATIO
        red = grad * (g - 1) / g / REDUCE_SPEED
    rest = tau0 - e_intra - red - xi2
    batch = int(rng.choice((16, 32, 64)))
    return Job(gpus=int(g), iterations=int(f), grad_size=grad, batch=batch,
               fp_time=0.7 * rest / batch, bp_time=0.3 * rest)


# --------------------------------------------------------------------------- size (optsched worst)

#: What :func:`size` counts, and the list patterns it counts (``WorstSpec.what``, ``.grows``).
SIZE_WHAT = "jobs"
SIZE_GROWS: tuple[str, ...] = ("jobs",)


def size(doc: dict) -> int:
    """The size of an instance JSON document: its number of jobs."""
    return len(doc["jobs"])


# --------------------------------------------------------------------------- claims (optsched worst)


def _search_of(inst: Instance, method: str):
    """SJF-BCO's bisection re-run with ``method``'s parameters (deterministic: the same pass as
    the run being checked), for the quantities the schedule does not show (U[g], theta~)."""
    from optsched.deadline import NEVER
    from optsched.registry import get_family
    from optsched.solvers.ring_contention.algorithm import sjf_bco_search

    return sjf_bco_search(inst, get_family("ring_contention").method(method).params,
                          deadline=NEVER)


def lemma3_violation(inst: Instance, result) -> float | None:
    """Lemma 3 (Sec. 5.3): T^total <= n_g W^_max, with W^_max = max_g U[g] (the estimated load
    rho_hat / u placed on GPU g, Alg. 2 line 6). Returns T / (n_g W^_max) (errata R2)."""
    if result.schedule is None:
        return None
    w_max = float(_search_of(inst, result.method).state.U.max())
    return None if w_max <= 0 else float(result.objective) / (inst.max_gpus * w_max)


@last_call
def _lemma4_terms(inst: Instance, method: str) -> tuple[int, float, float] | None:
    """(theta~, W^_max of the pass at theta~, Phi (u/l) theta*) of Lemma 4 on ``method``'s
    run, or None (no theta~, or theta* not proven by HiGHS)."""
    from optsched.models import ring_contention as rm
    from optsched.result import SolveStatus
    from optsched.solvers.highs import solve_model
    from optsched.solvers.ring_contention.algorithm import constants, rho_hat

    search = _search_of(inst, method)
    theta = search.theta
    report = solve_model(rm.build_budget(inst, durations="estimate", rho_hat=rho_hat(inst)),
                         time_limit=20.0)
    if theta is None or report.status is not SolveStatus.OPTIMAL or not report.objective:
        return None
    c = constants(inst)
    w_max = float(search.state.U.max()) if search.state is not None else float(theta)
    return int(theta), w_max, c["Phi"] * c["u"] / c["l"] * float(report.objective)


def _allowed(allowed: float) -> float:
    """Lemma 4's allowed side rounded up (Alg. 1 searches theta on the integers)."""
    return max(math.ceil(allowed - 1e-9), allowed)


def lemma4_violation(inst: Instance, result) -> float | None:
    """Lemma 4 (Sec. 5.3): theta~_u <= Phi (u/l) theta*_u, theta* the optimum of the budget
    problem with estimated durations (proven by HiGHS, else None). Alg. 1 searches theta on the
    integers (lines 4-6, 21, 23; errata R1), so the allowed side is rounded up: returns
    theta~ / ceil(Phi u/l theta*) (errata R3), > 1 only beyond the rounding."""
    terms = _lemma4_terms(inst, result.method)
    if terms is None:
        return None
    theta, _, allowed = terms
    return float(theta) / _allowed(allowed)


def lemma4_grade(inst: Instance, result) -> float | None:
    """Lemma 4's closeness: W^_max - ceil(Phi (u/l) theta*), W^_max = max_g U[g] the largest
    estimated load Alg. 2 placed on a GPU in the pass at theta~ (line 6; every GPU keeps
    U[g] <= theta~), i.e. theta~ before its rounding to the integers (the proof of Lemma 2
    equates the two: W^_max = theta~, errata R1).

    :func:`lemma4_violation` is exactly 1 wherever theta~ meets ceil(Phi (u/l) theta*) -- on
    whole regions, e.g. wherever Phi = u = l = 1 and theta~ = theta* -- and says nothing about
    how much of the budget the pass used. A grade above 0 means the loads the pass placed need
    more than the allowed side: theta~ >= W^_max > ceil(Phi (u/l) theta*), the lemma fails;
    below 0 it measures (in budget units, the same threshold on every instance) how far the
    placed load is from needing the next integer budget above the allowed one. Search guidance
    only (never a violation)."""
    terms = _lemma4_terms(inst, result.method)
    if terms is None:
        return None
    _, w_max, allowed = terms
    return w_max - _allowed(allowed)


#: Lemmas of the SJF-BCO proof as ``optsched worst --target lemma:NAME`` predicates.
CLAIMS = (
    Claim("lemma3", "Lemma 3: T^total <= n_g W^_max", ("sjf_bco", "sjf_bco_proof"),
          lemma3_violation),
    Claim("lemma4", "Lemma 4: theta~_u <= Phi (u/l) theta*_u", ("sjf_bco", "sjf_bco_proof"),
          lemma4_violation, grade=lemma4_grade),
)

__all__ = ["PRESETS", "PAPER_MIX", "build", "generate", "SIZE_GROWS", "SIZE_WHAT", "size", "CLAIMS"]

"""A_online's fast paths (issue 19 item 7) change no schedule.

* Pins: the sha256 (16 hex digits) of ``repr(schedule)`` of every A_online reading and baseline on
  tiny seeds 0-3 and small seeds 0-7, and of every A_online reading on paper seeds 0-2 (slow),
  recorded with the code before the fast paths (commit d78eb9e).
* Oracles: the per-job subroutines before the fast paths (:func:`_old_colocated`,
  :func:`_old_distributed_ps`, copied from that commit) against the current ones on random price
  states with idle stretches (the zero-cost ties of the earliest-finish readings), every job,
  every pricing and tie-break.
* The vectorised feasibility filter skips exactly the starts where the per-start Algorithm 4
  finds nothing, the cached per-(L, m) sorts give the costs the per-configuration computation
  gave, and the idle-cluster tests are necessary conditions.
"""

from __future__ import annotations

import hashlib
import math

import numpy as np
import pytest

from optsched.registry import solve
from optsched.solvers.elastic_cluster import READINGS
from optsched.solvers.elastic_cluster.placement import (
    Best,
    PriceState,
    SubPlan,
    _caps,
    _colocated_fits_idle,
    _colocated_plan,
    _configs,
    _exact_ps_server,
    _faithful_feasible,
    _faithful_fits_idle,
    _faithful_ps_server,
    _greedy_costs,
    _greedy_fill,
    _per_unit,
    _ps_counts,
    job_best,
    mincost_distributed_ps,
)
from optsched.workloads.elastic_cluster import generate

METHODS = READINGS + ("fifo", "drf", "antman", "tiresias")

SMALL_PINS = {
    "tiny/0/a_online": "9845e17f6c9d93a8",
    "tiny/0/a_online_exact_pricing": "9845e17f6c9d93a8",
    "tiny/0/a_online_literal_pricing": "9845e17f6c9d93a8",
    "tiny/0/a_online_paper_eft": "9845e17f6c9d93a8",
    "tiny/0/a_online_per_round": "bea964f439a17980",
    "tiny/0/a_online_alpha4": "29a4dee34ba05481",
    "tiny/0/a_online_alpha4_eft": "29a4dee34ba05481",
    "tiny/0/a_online_compact": "5a5720c115940f60",
    "tiny/0/a_online_eft": "5a5720c115940f60",
    "tiny/0/fifo": "a7e2c7c1bfcdb23a",
    "tiny/0/drf": "08b6610153c5df3a",
    "tiny/0/antman": "a7e2c7c1bfcdb23a",
    "tiny/0/tiresias": "6407180ac9d65fd9",
    "tiny/1/a_online": "207b5f972e12cefb",
    "tiny/1/a_online_exact_pricing": "207b5f972e12cefb",
    "tiny/1/a_online_literal_pricing": "207b5f972e12cefb",
    "tiny/1/a_online_paper_eft": "78576535f00575da",
    "tiny/1/a_online_per_round": "1aca6d675afd9ecf",
    "tiny/1/a_online_alpha4": "5dd75fa4790ac9c7",
    "tiny/1/a_online_alpha4_eft": "0be3ceed711b1f02",
    "tiny/1/a_online_compact": "0492d1d25696cef2",
    "tiny/1/a_online_eft": "6c711cb1d02d7abc",
    "tiny/1/fifo": "23116c964610e3aa",
    "tiny/1/drf": "134bde90de71c85c",
    "tiny/1/antman": "23116c964610e3aa",
    "tiny/1/tiresias": "ef43315b94b6c7cd",
    "tiny/2/a_online": "2c621db99273c537",
    "tiny/2/a_online_exact_pricing": "613360d9e6d325c4",
    "tiny/2/a_online_literal_pricing": "cf80216adfa1ef41",
    "tiny/2/a_online_paper_eft": "2c621db99273c537",
    "tiny/2/a_online_per_round": "c5e2751b78b33a85",
    "tiny/2/a_online_alpha4": "6b6c511f992d5130",
    "tiny/2/a_online_alpha4_eft": "6b6c511f992d5130",
    "tiny/2/a_online_compact": "73ec56aa41df9354",
    "tiny/2/a_online_eft": "73ec56aa41df9354",
    "tiny/2/fifo": "1fe1f16516cec4ee",
    "tiny/2/drf": "1fe1f16516cec4ee",
    "tiny/2/antman": "530096dbea5ddc1d",
    "tiny/2/tiresias": "a4fc87d2293b6daa",
    "tiny/3/a_online": "6a4944a1295fb6d7",
    "tiny/3/a_online_exact_pricing": "6a4944a1295fb6d7",
    "tiny/3/a_online_literal_pricing": "6a4944a1295fb6d7",
    "tiny/3/a_online_paper_eft": "885f97013ec0362b",
    "tiny/3/a_online_per_round": "951b77b5781557af",
    "tiny/3/a_online_alpha4": "ca6e42eb66c52d69",
    "tiny/3/a_online_alpha4_eft": "31def9b02130be9a",
    "tiny/3/a_online_compact": "399890f38f4070a2",
    "tiny/3/a_online_eft": "fce0378c0c9978fc",
    "tiny/3/fifo": "cae3300562e8d46f",
    "tiny/3/drf": "cae3300562e8d46f",
    "tiny/3/antman": "114c8a1a4cca1922",
    "tiny/3/tiresias": "cae3300562e8d46f",
    "small/0/a_online": "e1503a778c3d00d8",
    "small/0/a_online_exact_pricing": "e1503a778c3d00d8",
    "small/0/a_online_literal_pricing": "e1503a778c3d00d8",
    "small/0/a_online_paper_eft": "e1503a778c3d00d8",
    "small/0/a_online_per_round": "72257a300d8b4217",
    "small/0/a_online_alpha4": "300648e00bd0a301",
    "small/0/a_online_alpha4_eft": "300648e00bd0a301",
    "small/0/a_online_compact": "cca781daf44d8997",
    "small/0/a_online_eft": "cca781daf44d8997",
    "small/0/fifo": "7442a4fc0165ea39",
    "small/0/drf": "4f8f1ac624df50a1",
    "small/0/antman": "fae47a895aac7804",
    "small/0/tiresias": "055f07a77237049e",
    "small/1/a_online": "991dba2589011e08",
    "small/1/a_online_exact_pricing": "991dba2589011e08",
    "small/1/a_online_literal_pricing": "991dba2589011e08",
    "small/1/a_online_paper_eft": "8566713050675a7f",
    "small/1/a_online_per_round": "991dba2589011e08",
    "small/1/a_online_alpha4": "1a3cf4d39d82f439",
    "small/1/a_online_alpha4_eft": "52a39e2997c514bd",
    "small/1/a_online_compact": "cd0d253df2b783ba",
    "small/1/a_online_eft": "bc2e1f00198cd489",
    "small/1/fifo": "9308cc3fccee368e",
    "small/1/drf": "7d056a8dedd189cd",
    "small/1/antman": "26bcc8ef6e6fc087",
    "small/1/tiresias": "b87e83085e6bc66d",
    "small/2/a_online": "36e1620b6aaa8968",
    "small/2/a_online_exact_pricing": "36e1620b6aaa8968",
    "small/2/a_online_literal_pricing": "36e1620b6aaa8968",
    "small/2/a_online_paper_eft": "36e1620b6aaa8968",
    "small/2/a_online_per_round": "b4a27f0984790170",
    "small/2/a_online_alpha4": "9be6230e0a97b4c6",
    "small/2/a_online_alpha4_eft": "9be6230e0a97b4c6",
    "small/2/a_online_compact": "32b69a6d1a937650",
    "small/2/a_online_eft": "32b69a6d1a937650",
    "small/2/fifo": "93a34c5a66b5e7f7",
    "small/2/drf": "93a34c5a66b5e7f7",
    "small/2/antman": "c14ec3f3797afb4d",
    "small/2/tiresias": "6a6df0b1ac221bcd",
    "small/3/a_online": "5e651ecfc09145cf",
    "small/3/a_online_exact_pricing": "5e651ecfc09145cf",
    "small/3/a_online_literal_pricing": "5e651ecfc09145cf",
    "small/3/a_online_paper_eft": "ebfb1f8f24952a57",
    "small/3/a_online_per_round": "5cafe22fa9961478",
    "small/3/a_online_alpha4": "1010b95424024e81",
    "small/3/a_online_alpha4_eft": "4471290ef4f6d9af",
    "small/3/a_online_compact": "4fc75558f666db83",
    "small/3/a_online_eft": "675bfedf4000bcf5",
    "small/3/fifo": "a772d3b5f002f811",
    "small/3/drf": "a772d3b5f002f811",
    "small/3/antman": "a772d3b5f002f811",
    "small/3/tiresias": "4ae3808adf89ae8a",
    "small/4/a_online": "0a9e55c629f4f349",
    "small/4/a_online_exact_pricing": "f13b84d3b60731a1",
    "small/4/a_online_literal_pricing": "0a9e55c629f4f349",
    "small/4/a_online_paper_eft": "d3d46487ebe46305",
    "small/4/a_online_per_round": "d4700b3d43958c60",
    "small/4/a_online_alpha4": "097d06640e01d3f4",
    "small/4/a_online_alpha4_eft": "d4e5ea984120f6d7",
    "small/4/a_online_compact": "adf00a6419b6b683",
    "small/4/a_online_eft": "e62502c0575f1361",
    "small/4/fifo": "8163a2ffc48dc0d7",
    "small/4/drf": "4f6a1f4f5a8c1357",
    "small/4/antman": "6b7de469152f86cd",
    "small/4/tiresias": "fd1177b77c1ed445",
    "small/5/a_online": "8ec5f20e99f67190",
    "small/5/a_online_exact_pricing": "8ec5f20e99f67190",
    "small/5/a_online_literal_pricing": "8ec5f20e99f67190",
    "small/5/a_online_paper_eft": "8ec5f20e99f67190",
    "small/5/a_online_per_round": "c8f96dc2b08de90e",
    "small/5/a_online_alpha4": "4d2289fbe7049585",
    "small/5/a_online_alpha4_eft": "4d2289fbe7049585",
    "small/5/a_online_compact": "0e22b56f7eedef68",
    "small/5/a_online_eft": "0e22b56f7eedef68",
    "small/5/fifo": "dc2dad6d15bcadcf",
    "small/5/drf": "19c07e36988f405a",
    "small/5/antman": "dc2dad6d15bcadcf",
    "small/5/tiresias": "1d7b430fc5fd2975",
    "small/6/a_online": "eab46916eb890a48",
    "small/6/a_online_exact_pricing": "eab46916eb890a48",
    "small/6/a_online_literal_pricing": "eab46916eb890a48",
    "small/6/a_online_paper_eft": "eab46916eb890a48",
    "small/6/a_online_per_round": "b2e1cf1d0f6d43ba",
    "small/6/a_online_alpha4": "7576a31d3ca4e7ba",
    "small/6/a_online_alpha4_eft": "7576a31d3ca4e7ba",
    "small/6/a_online_compact": "f89552d1839bda41",
    "small/6/a_online_eft": "f89552d1839bda41",
    "small/6/fifo": "b4928e9461d3eaa0",
    "small/6/drf": "9de79e0caf4a3446",
    "small/6/antman": "777fd2452609ef91",
    "small/6/tiresias": "9bdd1ad1033ffd72",
    "small/7/a_online": "15c80a50f5417993",
    "small/7/a_online_exact_pricing": "15c80a50f5417993",
    "small/7/a_online_literal_pricing": "15c80a50f5417993",
    "small/7/a_online_paper_eft": "998bafb97a8a9826",
    "small/7/a_online_per_round": "33c3f385027a6fbb",
    "small/7/a_online_alpha4": "2d39a82715d86637",
    "small/7/a_online_alpha4_eft": "d8abbc0ab6bfa832",
    "small/7/a_online_compact": "8c49774e7cb886f4",
    "small/7/a_online_eft": "04e71c0d77af1aa8",
    "small/7/fifo": "4056861997df7506",
    "small/7/drf": "92aa0dca4cc00415",
    "small/7/antman": "f1feb6acc8df9c79",
    "small/7/tiresias": "1b98bb0476dcbe48",
}

PAPER_PINS = {
    "paper/0/a_online": "49c03a3846055b10",
    "paper/0/a_online_exact_pricing": "5126bbd82e72cf2f",
    "paper/0/a_online_literal_pricing": "49c03a3846055b10",
    "paper/0/a_online_paper_eft": "32ca21644a223588",
    "paper/0/a_online_per_round": "aa7e20991bfe8b38",
    "paper/0/a_online_alpha4": "1d1d5e274b1e0a9c",
    "paper/0/a_online_alpha4_eft": "26e387b96e31ab94",
    "paper/0/a_online_compact": "96048ba570672007",
    "paper/0/a_online_eft": "43c5d60d0dbe0df2",
    "paper/1/a_online": "224f733d9300975d",
    "paper/1/a_online_exact_pricing": "a89ddb464b809491",
    "paper/1/a_online_literal_pricing": "224f733d9300975d",
    "paper/1/a_online_paper_eft": "c9c05eeb90e631c1",
    "paper/1/a_online_per_round": "626213b9ecad4730",
    "paper/1/a_online_alpha4": "56071f2260556e73",
    "paper/1/a_online_alpha4_eft": "68873c28c598467e",
    "paper/1/a_online_compact": "e5a50dbb7c9c515b",
    "paper/1/a_online_eft": "1ca2e69032cc4e9a",
    "paper/2/a_online": "34c5f50a28437479",
    "paper/2/a_online_exact_pricing": "f6dc99e5d635181c",
    "paper/2/a_online_literal_pricing": "34c5f50a28437479",
    "paper/2/a_online_paper_eft": "e68ab4fa8e3dbaf5",
    "paper/2/a_online_per_round": "118d7fc6202da385",
    "paper/2/a_online_alpha4": "d01f9d0aff2473b9",
    "paper/2/a_online_alpha4_eft": "594dbedf3378517d",
    "paper/2/a_online_compact": "00bbb061b34992bd",
    "paper/2/a_online_eft": "ca7652d0403cde9d",
}


def _digest(schedule) -> str:
    return hashlib.sha256(repr(schedule).encode()).hexdigest()[:16]


@pytest.mark.parametrize("preset,seed", [("tiny", s) for s in range(4)]
                         + [("small", s) for s in range(8)])
def test_schedules_are_those_before_the_fast_paths(preset, seed):
    inst = generate(preset, seed)
    for name in METHODS:
        res = solve(inst, name)
        assert _digest(res.schedule) == SMALL_PINS[f"{preset}/{seed}/{name}"], name


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(3))
def test_paper_schedules_are_those_before_the_fast_paths(seed):
    inst = generate("paper", seed)
    for name in READINGS:
        res = solve(inst, name)
        assert res.status.value == "feasible", name
        assert _digest(res.schedule) == PAPER_PINS[f"paper/{seed}/{name}"], name


# ------------------------------------------------------------------ the subroutines before


def _old_colocated(state: PriceState, j: int, best: Best) -> Best:
    """mincost_colocated at d78eb9e (every start's cost, then the reach)."""
    inst = state.inst
    for m, p, n, length in _configs(inst, j, 1, state.tau - 1):
        if best.hopeless(length):
            continue
        e, z = _per_unit(inst, m, p)
        need = n * e + z
        ws = state.windows(length)[0]
        cost = np.einsum("hrs,r->sh", ws, need)
        reach = best.reach(length, len(cost))
        if reach == 0:
            continue
        ok = (need[None, :, None] <= state.room(length)[:, :, :reach]).all(axis=1).T
        cost = np.where(ok, cost[:reach], math.inf)
        flat = int(np.argmin(cost))
        s, h = divmod(flat, inst.n_servers)
        best.offer(float(cost[s, h]), lambda: _colocated_plan(inst, s + 1, length, m, p, n, h),
                   s + 1 + length)
    return best


def _old_distributed_ps(state: PriceState, j: int, best: Best, exact: bool,
                        literal: bool) -> Best:
    """mincost_distributed_ps at d78eb9e (every start, every configuration)."""
    inst = state.inst
    for m, p, n, length in _configs(inst, j, 0, state.tau - 1):
        if best.hopeless(length):
            continue
        e, z = _per_unit(inst, m, p)
        raw = _ps_counts(inst, m, p, n)
        wm = state.windows(length)[1]
        omega_cost, caps, ranked = state.worker_side(length, m)
        psi_cost = np.einsum("hrs,r->sh", state.windows(length)[0], z)
        ps_fits = (z[None, :, None] <= state.room(length)).all(axis=1).T
        lower = ranked.costs(n) + np.where(ps_fits, psi_cost, math.inf).min(axis=1)
        solve_one = _exact_ps_server if exact else _faithful_ps_server
        finish = np.arange(1, len(lower) + 1) + length
        starts = [int(s) for s in np.flatnonzero(best.better_each(lower, finish))]
        if not exact and starts:
            fits = _faithful_feasible(wm, ranked, np.array(starts), e, z, n, raw, literal)
            starts = [s for s, ok in zip(starts, fits) if ok]
        for s in starts:
            if not best.better(float(lower[s]), float(finish[s])):
                continue
            found = solve_one(wm[:, :, s], omega_cost[s], psi_cost[s], caps[s], e, z, n, raw,
                              literal)
            if found is not None:
                cost, y, sv = found
                best.offer(cost, lambda: SubPlan(int(s) + 1, length, m, p, 0,
                                                 tuple(int(v) for v in y),
                                                 tuple(int(v) for v in sv)), float(finish[s]))
                if best.hopeless(length):
                    break
    return best


def _old_distributed_ra(state: PriceState, j: int, best: Best) -> Best:
    """mincost_distributed_ra at d78eb9e (every start)."""
    inst = state.inst
    for m, _, n, length in _configs(inst, j, 0, state.tau - 1):
        if best.hopeless(length):
            continue
        omega_cost, caps, ranked = state.worker_side(length, m)
        costs = ranked.costs(n)
        s = int(np.argmin(costs))
        if best.better(float(costs[s]), s + 1 + length):
            y = _greedy_fill(np.argsort(omega_cost[s], kind="stable"), caps[s], n)
            best.offer(float(costs[s]),
                       lambda: SubPlan(s + 1, length, m, -1, 0, tuple(int(v) for v in y),
                                       (0,) * inst.n_servers), s + 1 + length)
    return best


def _idle_stretch_state(inst, tau: int, rng) -> PriceState:
    """Random integer usage beta <= C and its prices (11), with idle (beta = 0) stretches of
    slots and servers: zero-cost windows where the earliest-finish tie-break decides."""
    beta = np.floor(rng.uniform(0, 1, (inst.n_servers, inst.n_res, tau)) * (inst.cap[:, :, None] + 1))
    beta = np.minimum(beta, inst.cap[:, :, None])
    beta[:, :, int(rng.integers(0, tau)):] *= rng.uniform() < 0.5
    beta[rng.uniform(size=inst.n_servers) < 0.5] = 0
    return PriceState(inst, inst.cap[:, :, None] - beta,
                      inst.price_base ** (beta / inst.cap[:, :, None]) - 1)


def _old_job_best(state: PriceState, j: int, pricing: str, tie_break: str) -> Best:
    best = _old_colocated(state, j, Best(eft=tie_break == "earliest_finish"))
    if state.inst.is_ps:
        return _old_distributed_ps(state, j, best, pricing == "exact", pricing == "literal")
    return _old_distributed_ra(state, j, best)


def _oracle_instance(kind: str, seed: int):
    """small (parameter server for even seeds) or the paper's generator cut to 3 jobs and 12
    servers (up to ~40 workers per job: configurations that fit no server)."""
    if kind == "small":
        return generate("small", seed), (6, 20)
    arch = "ps" if seed % 2 == 0 else "allreduce"
    return generate("paper", seed, n_jobs=3, n_servers=12, architecture=arch), (12, 32)


@pytest.mark.parametrize("kind,seed", [("small", s) for s in range(6)]
                         + [("paper_cut", s) for s in (0, 1, 3, 4)])
@pytest.mark.parametrize("tie_break", ["paper", "earliest_finish"])
@pytest.mark.parametrize("pricing", ["paper", "literal", "exact"])
def test_job_best_equals_the_subroutines_before(kind, seed, tie_break, pricing):
    inst, taus = _oracle_instance(kind, seed)
    if not inst.is_ps and pricing != "paper":
        pytest.skip("all-reduce: no A_mincost1, pricing is not read")
    if kind == "paper_cut" and pricing == "exact":
        pytest.skip("the exact A_mincost1 takes no new shortcut; small instances cover it")
    rng = np.random.default_rng(seed)
    for _ in range(3):
        state = _idle_stretch_state(inst, int(rng.integers(*taus)), rng)
        for j in range(len(inst.jobs)):
            old = _old_job_best(PriceState(inst, state.omega, state.delta), j, pricing,
                                tie_break)
            new = job_best(PriceState(inst, state.omega, state.delta), j, pricing, tie_break)
            assert (new.cost, new.finish, new.plan) == (old.cost, old.finish, old.plan), j
            if inst.is_ps:                    # A_mincost1 alone (not hidden behind q = 1)
                eft, exact, literal = (tie_break == "earliest_finish", pricing == "exact",
                                       pricing == "literal")
                old = _old_distributed_ps(PriceState(inst, state.omega, state.delta), j,
                                          Best(eft=eft), exact, literal)
                new = mincost_distributed_ps(PriceState(inst, state.omega, state.delta), j,
                                             Best(eft=eft), exact, literal)
                assert (new.cost, new.finish, new.plan) == (old.cost, old.finish, old.plan), j


# -------------------------------------------------------------------------- the filters


def _state(inst, tau: int, rng) -> PriceState:
    beta = np.floor(rng.uniform(0, 1, (inst.n_servers, inst.n_res, tau)) * (inst.cap[:, :, None] + 1))
    beta = np.minimum(beta, inst.cap[:, :, None])
    return PriceState(inst, inst.cap[:, :, None] - beta,
                      inst.price_base ** (beta / inst.cap[:, :, None]) - 1)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("literal", [False, True])
def test_feasibility_filter_matches_the_per_start_algorithm(seed, literal):
    inst = generate("small", seed * 2)          # even seeds: parameter-server instances
    assert inst.is_ps
    rng = np.random.default_rng(seed)
    state = _state(inst, 12, rng)
    checked = infeasible = 0
    for j in range(len(inst.jobs)):
        for m, p, n, length in _configs(inst, j, 0, state.tau - 1):
            e, z = _per_unit(inst, m, p)
            raw = _ps_counts(inst, m, p, n)
            ws, wm = state.windows(length)
            omega_cost, caps, ranked = state.worker_side(length, m)
            assert np.array_equal(omega_cost, np.einsum("hrs,r->sh", ws, e))
            assert np.array_equal(caps, _caps(wm, e))
            assert np.array_equal(ranked.costs(n), _greedy_costs(omega_cost, caps, n))
            assert np.array_equal(ranked.costs(n, 3), ranked.costs(n)[:3])
            starts = np.arange(len(caps))
            fits = _faithful_feasible(wm, ranked, starts, e, z, n, raw, literal)
            assert _faithful_fits_idle(inst, m, p, n, literal) or not fits.any()
            for s in starts:
                got = _faithful_ps_server(wm[:, :, s], omega_cost[s], np.zeros(len(caps[s])),
                                          caps[s], e, z, n, raw, literal)
                assert fits[s] == (got is not None), (j, m, p, n, length, s)
                checked += 1
                infeasible += got is None
    assert checked > 100 and 0 < infeasible < checked    # both outcomes were exercised


@pytest.mark.parametrize("seed", range(8))
def test_idle_cluster_tests_are_necessary(seed):
    """A configuration that fits no server of the idle cluster fits no window of a state with
    omega <= C (q = 1); Alg. 4 likewise (q = 0, both readings); both outcomes occur."""
    inst = generate("small", seed)
    state = _state(inst, 10, np.random.default_rng(seed))
    assert state.below_capacity
    seen = set()
    for j in range(len(inst.jobs)):
        for m, p, n, length in _configs(inst, j, 1, state.tau - 1):
            need = n * inst.e[m] + (inst.z[p] if inst.is_ps else 0)
            fits = (need[None, :, None] <= state.room(length)).all(axis=1).any()
            idle = _colocated_fits_idle(inst, m, p, n)
            assert idle or not fits
            seen.add(idle)
    assert seen == {True, False}


def test_a_state_above_capacity_takes_no_shortcut():
    inst = generate("small", 0)
    omega = np.repeat(inst.cap[:, :, None], 4, axis=2) + 1.0
    assert not PriceState(inst, omega, np.zeros_like(omega)).below_capacity

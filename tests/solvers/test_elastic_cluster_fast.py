"""A_mincost1's fast path (issue 19 item 7): the vectorised feasibility filter skips exactly the
starts where the per-start Algorithm 4 finds nothing, and the cached per-(L, m) sorts give the
costs the per-configuration computation gave."""

from __future__ import annotations

import numpy as np
import pytest

from optsched.solvers.elastic_cluster.placement import (
    PriceState,
    _caps,
    _configs,
    _faithful_feasible,
    _faithful_ps_server,
    _greedy_costs,
    _per_unit,
    _ps_counts,
)
from optsched.workloads.elastic_cluster import generate


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
            starts = np.arange(len(caps))
            fits = _faithful_feasible(wm, ranked, starts, e, z, n, raw, literal)
            for s in starts:
                got = _faithful_ps_server(wm[:, :, s], omega_cost[s], np.zeros(len(caps[s])),
                                          caps[s], e, z, n, raw, literal)
                assert fits[s] == (got is not None), (j, m, p, n, length, s)
                checked += 1
                infeasible += got is None
    assert checked > 100 and 0 < infeasible < checked    # both outcomes were exercised

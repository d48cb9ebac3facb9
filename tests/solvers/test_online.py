"""Unit tests of the shared online framework (solvers/online.py)."""

from __future__ import annotations

import doctest
import math

import numpy as np
import pytest

from optsched.solvers import online
from optsched.solvers.online import (
    BatchResult, Candidate, UsageLedger, compact_window, doubling_rounds, exponential_price,
    linear_price, next_window, primal_dual_admission, scaled_window,
)


def test_module_docstring_example_runs():
    failures, tried = doctest.testmod(online)
    assert tried >= 5 and failures == 0


def test_exponential_price_values():
    price = exponential_price(5.0)
    got = price(np.array([0.0, 1.0, 2.0, 1.0]), np.array([2.0, 2.0, 2.0, 0.0]))
    assert got[0] == 0.0
    assert got[1] == pytest.approx(math.sqrt(5) - 1)
    assert got[2] == pytest.approx(4.0)
    assert math.isinf(got[3])
    with pytest.raises(ValueError):
        exponential_price(1.0)


def test_ledger_charge_updates_prices_and_residual():
    ledger = UsageLedger([4.0, 2.0], slots=range(3, 7), price=exponential_price(3.0))
    ledger.charge([(0, 3, 2.0), (1, 6, 2.0)])
    assert ledger.used[0].tolist() == [2.0, 0, 0, 0]
    assert ledger.prices[0, 0] == pytest.approx(math.sqrt(3) - 1)
    assert ledger.prices[1, 3] == pytest.approx(2.0)
    assert ledger.residual[1, 3] == 0.0
    assert ledger.cost([(0, 3, 1.0), (1, 6, 0.5)]) == pytest.approx(math.sqrt(3) - 1 + 1.0)
    assert ledger.fits([(0, 3, 2.0)]) and not ledger.fits([(0, 3, 1.0), (0, 3, 1.5)])
    with pytest.raises(ValueError):
        ledger.column(7)


def test_charge_block_equals_charge():
    a = UsageLedger([4.0, 3.0, 5.0], slots=range(1, 9), price=exponential_price(7.0))
    b = UsageLedger([4.0, 3.0, 5.0], slots=range(1, 9), price=exponential_price(7.0))
    a.charge_block([0, 2], 3, 5, [1.5, 2.0])
    b.charge([(k, t, amt) for k, amt in ((0, 1.5), (2, 2.0)) for t in range(3, 6)])
    assert np.array_equal(a.used, b.used)
    assert np.allclose(a.prices, b.prices)


def test_admission_strict_positive_utility_and_order():
    # one resource of capacity 1, one slot: the first job is free, the second would cost
    # lambda - 1 = 1 >= weight 1, so it is rejected (utility must be strictly > 0).
    ledger = UsageLedger([1.0], slots=range(1, 2), price=exponential_price(2.0))

    def best(job, led):
        usage = ((0, 1, 0.5),)
        return Candidate(led.cost(usage), usage, plan=job) if led.fits(usage) else None

    res = primal_dual_admission([1, 2, 3], weight=lambda j: 1.0 if j < 3 else 5.0, best_plan=best,
                                ledger=ledger)
    # job 1 free; job 2 costs 0.5*(2^0.5-1)=0.207 < 1 admitted; job 3 does not fit
    assert [a.job for a in res.admitted] == [1, 2]
    assert res.rejected == [3]
    assert res.utility[1] == 1.0 and res.utility[3] == 0.0
    assert res.weight == pytest.approx(2.0)
    # a costlier price base rejects job 2
    ledger = UsageLedger([1.0], slots=range(1, 2), price=linear_price(4.0))
    res = primal_dual_admission([1, 2], weight=lambda j: 1.0, best_plan=best, ledger=ledger)
    assert [a.job for a in res.admitted] == [1] and res.rejected == [2]


def test_admission_uses_custom_charge():
    ledger = UsageLedger([2.0], slots=range(1, 4), price=exponential_price(10.0))
    cand = Candidate(0.0, (), "p", charge=lambda led: led.charge_block([0], 1, 3, [1.0]))
    res = primal_dual_admission(["j"], weight=lambda j: 1.0, best_plan=lambda j, l: cand,
                                ledger=ledger)
    assert res.admitted[0].plan == "p"
    assert ledger.used.tolist() == [[1.0, 1.0, 1.0]]


def test_doubling_rounds_carry_over_and_windows():
    arrivals = {"a": 1, "b": 1, "c": 3, "d": 9}
    seen = []

    def batch(rnd, pending):
        seen.append((rnd.index, rnd.tau, rnd.window, tuple(pending)))
        return BatchResult({pending[0]: rnd.window}, last_slot=rnd.window[1])

    out = doubling_rounds(list(arrivals), arrival=arrivals.get, schedule_batch=batch)
    assert seen[0] == (1, 1, (2, 2), ("a", "b"))
    assert seen[1] == (2, 2, (3, 4), ("b",))
    assert seen[2] == (3, 4, (5, 8), ("c",))  # c arrives at 3 <= tau_3 = 4
    assert seen[3][:2] == (5, 16) and seen[3][3] == ("d",)  # round 4 (tau 8) has an empty batch
    assert out.unscheduled == [] and out.plans["d"] == (17, 32)
    assert [r.round.index for r in out.rounds] == [1, 2, 3, 5]


def test_doubling_rounds_cap_and_stray_job():
    out = doubling_rounds([0, 1], arrival=lambda j: 1, max_rounds=3,
                          schedule_batch=lambda r, b: BatchResult({}))
    assert out.unscheduled == [0, 1] and len(out.rounds) == 3
    with pytest.raises(ValueError, match="not in the batch"):
        doubling_rounds([0, 1], arrival=lambda j: 2 * j + 1,
                        schedule_batch=lambda r, b: BatchResult({1: None}))


def test_window_policies():
    assert next_window(3, 4, 8, 0) == (5, 8)
    assert scaled_window(3)(3, 4, 8, 0) == (12, 23)
    assert scaled_window(3)(3, 4, 8, 20) == (21, 32)
    assert compact_window(3, 4, 8, 10) == (11, None)
    assert compact_window(3, 4, 8, 1) == (4, None)


def test_busy_until_tracks_last_slot():
    def batch(rnd, pending):
        return BatchResult({j: rnd.window[0] for j in pending}, last_slot=rnd.window[0] + 10)

    out = doubling_rounds([0, 1], arrival=lambda j: 1 + 3 * j, schedule_batch=batch,
                          window=compact_window)
    assert out.rounds[0].busy_until == 11
    assert out.rounds[1].round.window == (12, None)

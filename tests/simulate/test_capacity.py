"""The shared capacity timelines (optsched/simulate/capacity.py) against naive per-slot references."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optsched import tolerance
from optsched.simulate.capacity import CapacityProfile, ReleasePool, room

# amounts chosen to land on and just around tolerance boundaries (1 + 5e-7 fits 1, 1 + 2e-6 not)
FLOATS = [0.0, 0.25, 0.5, 1.0, 1.0000005, 1.000002, 2.5, 3.0, 4.0]
INTS = [0, 1, 2, 3, 5]


class NaiveProfile:
    """One (D, K) array per slot, created on first write; the fit rule written with the scalar
    predicates of optsched.tolerance (exact for integers)."""

    def __init__(self, capacity: np.ndarray):
        self.cap = np.array(capacity)
        self.exact = np.issubdtype(self.cap.dtype, np.integer)
        self.slots: dict[int, np.ndarray] = {}

    def at(self, t: int) -> np.ndarray:
        return self.slots.get(t, self.cap)

    def reserve(self, usage, start, length, sign=-1):
        for t in range(start, start + length):
            self.slots[t] = self.at(t) + usage if sign > 0 else self.at(t) - usage

    def window(self, start, length):
        out = self.at(start).copy()
        for t in range(start + 1, start + length):
            out = np.minimum(out, self.at(t))
        return out

    def _cell_fits(self, amount, free) -> bool:
        if amount <= 0:
            return True
        return amount <= free if self.exact else tolerance.fits(float(amount), float(free))

    def fits(self, usage, start, length) -> bool:
        return all(self._cell_fits(usage[d, k], self.at(t)[d, k])
                   for t in range(start, start + length)
                   for d, k in itertools.product(*map(range, usage.shape)))

    def earliest_fit(self, usage, length, after):
        if not all(self._cell_fits(usage[d, k], self.cap[d, k])
                   for d, k in itertools.product(*map(range, usage.shape))):
            return None
        last = max(self.slots, default=0) + 1
        for s in itertools.count(after):
            if self.fits(usage, s, length):
                return s
            assert s <= max(after, last), "the reference must find a start past every reservation"


def _sparse(usage: np.ndarray) -> dict:
    """{(d, k): amount} of the non-zero cells."""
    return {(int(d), int(k)): usage[d, k].item() for d, k in zip(*np.nonzero(usage))}


def _dense(usage, cap: np.ndarray) -> np.ndarray:
    if isinstance(usage, np.ndarray):
        return usage
    out = np.zeros_like(cap)
    for (d, k), a in usage.items():
        out[d, k] = a
    return out


@st.composite
def profiles(draw):
    """(capacity, initial length, operations) with usages drawn from the capacity's value set."""
    D, K = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    integer = draw(st.booleans())
    values = INTS if integer else FLOATS
    dtype = np.int64 if integer else float
    matrix = st.lists(st.sampled_from(values), min_size=D * K, max_size=D * K).map(
        lambda v: np.array(v, dtype=dtype).reshape(D, K))
    cap = draw(st.lists(st.sampled_from([v for v in values if v > 0]), min_size=D * K,
                        max_size=D * K).map(lambda v: np.array(v, dtype=dtype).reshape(D, K)))
    start, length = st.integers(0, 20), st.integers(1, 8)
    op = st.one_of(
        st.tuples(st.just("reserve"), matrix, start, length),
        st.tuples(st.just("release"), matrix, start, length),
        st.tuples(st.just("window"), start, length),
        st.tuples(st.just("fits"), matrix, start, length),
        st.tuples(st.just("earliest"), matrix, length, start),
    )
    return cap, draw(st.integers(1, 4)), draw(st.lists(op, max_size=25))


@settings(max_examples=300, deadline=None)
@given(profiles())
def test_profile_agrees_with_naive_reference(case):
    cap, length, ops = case
    prof, ref = CapacityProfile(cap, length), NaiveProfile(cap)
    for op in ops:
        kind, args = op[0], op[1:]
        if kind in ("reserve", "fits", "earliest") and len(ops) % 2:
            args = (_sparse(args[0]),) + args[1:]  # the sparse form of the same usage
        if kind == "reserve":
            prof.reserve(*args)
            ref.reserve(_dense(args[0], cap), *args[1:])
        elif kind == "release":
            prof.release(*args)
            ref.reserve(*args, sign=+1)
        elif kind == "window":
            # the same float operations in the same order on both sides: equal, not just close
            assert np.array_equal(prof.window(*args), ref.window(*args))
        elif kind == "fits":
            assert prof.fits(*args) == ref.fits(_dense(args[0], cap), *args[1:])
        else:
            assert prof.earliest_fit(*args) == ref.earliest_fit(_dense(args[0], cap), *args[1:])
    for t in range(0, 40):
        assert np.array_equal(prof.window(t, 1), ref.at(t))


@settings(max_examples=200, deadline=None)
@given(profiles(), st.integers(0, 15), st.integers(1, 6))
def test_earliest_fit_is_the_least_feasible_start(case, after, length):
    cap, init, ops = case
    prof = CapacityProfile(cap, init)
    for op in ops:
        if op[0] == "reserve":
            prof.reserve(*op[1:])
    rng = np.random.default_rng(len(ops))
    usage = cap * rng.integers(0, 2, size=cap.shape)  # a part of the capacity: always fits idle
    s = prof.earliest_fit(usage, length, after)
    assert s is not None and s >= after
    assert prof.fits(usage, s, length)
    assert not any(prof.fits(usage, t, length) for t in range(after, s))


def test_earliest_fit_none_when_capacity_is_too_small():
    prof = CapacityProfile(np.array([[2.0, 1.0]]))
    assert prof.earliest_fit(np.array([[2.0, 1.5]]), 3) is None
    assert prof.earliest_fit(np.array([[2.0000015, 1.0]]), 3) is None  # verify is exact (issue 22)
    assert prof.earliest_fit(np.array([[2.000000001, 1.0]]), 3) == 0  # within fits' float noise
    assert prof.earliest_fit(np.zeros((1, 2)), 3, after=7) == 7


def test_zero_usage_cells_ignore_over_reservation():
    prof = CapacityProfile(np.array([[1, 4]]))
    prof.reserve(np.array([[3, 0]]), 2, 2)  # slot 2, 3 over-reserved on kind 0
    assert prof.window(0, 5).tolist() == [[-2, 4]]
    assert prof.fits(np.array([[0, 4]]), 2, 2)
    assert not prof.fits(np.array([[1, 0]]), 3, 1)
    assert prof.earliest_fit(np.array([[1, 0]]), 2, after=1) == 4


def test_growth_is_invisible():
    small, big = CapacityProfile(np.array([[3.0]]), 1), CapacityProfile(np.array([[3.0]]), 512)
    for p in (small, big):
        p.reserve(np.array([[1.0]]), 100, 50)
        p.reserve(np.array([[0.5]]), 140, 300)
    assert small.free.shape[2] >= 440
    for s, n in [(0, 1), (99, 2), (100, 40), (145, 10), (150, 400), (1000, 3)]:
        assert np.array_equal(small.window(s, n), big.window(s, n))
    for use, after, want in [(2.6, 95, 440), (2.5, 95, 150), (2.6, 50, 50), (1.0, 0, 0)]:
        assert small.earliest_fit(np.array([[use]]), 10, after) == want
        assert big.earliest_fit(np.array([[use]]), 10, after) == want


@settings(max_examples=200, deadline=None)
@given(profiles())
def test_profile_reserve_release_round_trip(case):
    cap, length, ops = case
    prof = CapacityProfile(cap, length)
    done = [op[1:] for op in ops if op[0] == "reserve"]
    for args in done:
        prof.reserve(*args)
    for args in reversed(done):
        prof.release(*args)
    for t in range(0, 40):
        got = prof.window(t, 1)
        if prof.exact:
            assert np.array_equal(got, cap)
        else:
            assert all(tolerance.close(float(a), float(b)) for a, b in zip(got.ravel(), cap.ravel()))


@settings(max_examples=300, deadline=None)
@given(st.floats(-1e7, 1e7, allow_nan=False), st.floats(-1e7, 1e7, allow_nan=False))
def test_room_is_fits(amount, free):
    assert bool(amount <= room(np.array([free]))[0]) == tolerance.fits(amount, free)


@st.composite
def pool_ops(draw):
    D, K = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    cap = np.array(draw(st.lists(st.integers(0, 6), min_size=D * K, max_size=D * K))).reshape(D, K)
    cell = st.tuples(st.integers(0, D - 1), st.integers(0, K - 1), st.integers(0, 4))
    take = st.tuples(st.just("take"), st.lists(cell, max_size=4), st.integers(0, 30))
    release = st.tuples(st.just("release"), st.integers(0, 30))
    return cap, draw(st.lists(st.one_of(take, release), max_size=30))


@settings(max_examples=300, deadline=None)
@given(pool_ops())
def test_pool_take_release_round_trip(case):
    cap, ops = case
    pool = ReleasePool(cap)
    view = pool.free[:, :1]  # views of free stay valid (free is never reallocated)
    held: list[tuple[list, int, int]] = []  # naive: every holding with its release time
    for i, op in enumerate(ops):
        if op[0] == "take":
            pool.take(op[1], op[2], payload=i)
            held.append((op[1], op[2], i))
        else:
            t = op[1]
            due = sorted((until, k) for _, until, k in held if until <= t)
            assert pool.release_until(t) == [k for _, k in due]
            held = [h for h in held if h[1] > t]
        naive = cap.copy()
        for cells, _, _ in held:
            for d, k, a in cells:
                naive[d, k] -= a
        assert np.array_equal(pool.free, naive)
        assert np.array_equal(view, naive[:, :1])
        assert len(pool) == len(held)
        assert pool.next_release() == min((h[1] for h in held), default=None)
    pool.release_until(10**9)
    assert np.array_equal(pool.free, cap) and len(pool) == 0 and pool.next_release() is None


def test_bad_arguments():
    with pytest.raises(ValueError):
        CapacityProfile(np.zeros(3))
    with pytest.raises(ValueError):
        CapacityProfile(np.zeros((1, 1)), 0)
    prof = CapacityProfile(np.ones((1, 1)))
    with pytest.raises(ValueError):
        prof.window(-1, 2)
    with pytest.raises(ValueError):
        prof.reserve(np.ones((1, 1)), 0, 0)
    with pytest.raises(ValueError):
        ReleasePool(np.zeros(2))

"""Capacity timelines shared by the list-scheduling simulations of several families (issue 10).

Two shapes of "how much of each resource is free when" recur in the baselines; each lives here once.

:class:`CapacityProfile` (slotted time)
    ``free[d, k, t]``: the free amount of kind ``k`` on device ``d`` in integer slot ``t`` (array
    column ``t``), starting at ``capacity[d, k]`` in every slot and growing on demand, so the horizon
    is unbounded. Reservations are usages ``use[d, k]`` (a ``(D, K)`` array, or a sparse mapping
    ``{(d, k): amount}``) held over the half-open window ``[start, start + length)``. Queries: the minimum free amount over a window
    (:meth:`~CapacityProfile.window`), whether a usage fits a window (:meth:`~CapacityProfile.fits`)
    and the least start ``>= after`` at which it fits for ``length`` slots
    (:meth:`~CapacityProfile.earliest_fit`). The profile never checks a reservation: a caller may
    over-reserve (the baselines check with their own placement rules first).

:class:`ReleasePool` (event-driven time)
    ``free[d, k]`` *now*; :meth:`~ReleasePool.take` removes amounts until a given release time and
    :meth:`~ReleasePool.release_until` gives back everything due by ``t`` (a heap of releases).
    There is no time axis: what is free later is only known by releasing up to that time.

Fit rule (one tolerance policy, :mod:`optsched.tolerance`): an amount ``a > 0`` fits a free amount
``f`` when ``tolerance.fits(a, f)`` (``f`` up to float noise, ``NOISE = 1e-9`` relative), computed
elementwise by :func:`room` (the same float expression); verify decides capacities exactly (issue
22), and with integer amounts below 1e9 this fit rule is exactly ``a <= f``.
Integer profiles (integer ``capacity`` dtype: worker slots, PS slots) compare exactly, ``a <= f``.
Cells with usage 0 always fit (a reservation that does not use a cell is not blocked by it, even if
the cell is over-reserved). Time stamps (slots, release times) are compared exactly: they are the
caller's own numbers, never the result of float arithmetic here.

The private copies, and whether each maps onto this module
----------------------------------------------------------
``solvers/elastic_cluster/baselines.py`` ``Timeline`` (FIFO, DRF, Jain et al.'s greedy)
    **Maps** onto :class:`CapacityProfile`: float capacities ``C[h, r]``, slots, growth on demand,
    ``window`` = min over a window, ``take`` = reserve a plan's usage over its duration. The
    family keeps only what is its own: the usage matrix of a plan (``_usage``) and the placement
    rule that reads a window (``place`` / ``_try_start``, first fit per server with the family's
    ``room`` — which is :func:`room`'s expression).
``solvers/edge_cloud/baselines.py`` ``_Pool`` (FIFO, DRF)
    **Maps** onto :class:`ReleasePool`: integer worker slots ``W[s, u]`` and PS slots ``P[s, v]``
    (kinds = the U worker types then the V PS types), a run's slots come back at ``end + 1``. The
    family keeps ``w`` / ``p`` as views of the pool's ``free``.
``solvers/edge_cloud/baselines.py`` ``greedy_ect`` (``_row`` / ``_book`` / ``_earliest_block``)
    **Maps** onto :class:`CapacityProfile` (integer, exact): per-(server, type) usage rows and
    "earliest slot ``>= a_j + Delta_js`` with room on both the worker and the PS row for ``d``
    slots" is :meth:`~CapacityProfile.earliest_fit` of a two-cell usage. The old code searched a
    doubling horizon and re-searched when nothing fitted; the profile's search is unbounded, which
    gives the same placement (a candidate beyond a horizon ends later than every candidate within it,
    and candidates are compared by end first).
``solvers/elastic_cluster/placement.py`` ``PriceState`` (A_online's A_mincost*)
    **Differs**: a fixed window of ``tau`` relative slots, read-only after the first query, carrying
    prices ``delta`` beside the residual ``omega`` and answering *all* window starts of one length
    at once (prefix sums and a sparse table); it is rebuilt after every admission. A profile would
    give the same minima but not the all-starts batch query it exists for.
``solvers/online.py`` ``UsageLedger`` (A_online of 000 and 001)
    **Differs** and is already shared: a fixed slot range with a price per cell, usage given as
    (resource, slot, amount) triples; it tracks used amounts and prices, not free capacity.
``solvers/hetero_gpu/baselines.py`` ``GangState`` / ``simulate_gang``, and ``sched_allox``'s ``busy_until``
    **Differ**: continuous (float) time; every GPU is held exclusively by one job, and the policies
    read *who* holds a GPU (``holder``) and when it frees (``free_at``, to claim busy GPUs in release
    order); the end-of-stretch events carry job state (rounds done, suspension) that drives the
    queue, not amounts to add back. The capacity part is a boolean per GPU; wrapping it in a pool
    would add an indirection without removing any logic, so it stays with the event loop.
``solvers/ring_contention.py`` ``Pass``
    **Differs**: ``U[g]`` is a *budget* (sum of estimated run times placed on GPU ``g``) that only
    grows and is compared with ``theta`` — not a capacity that comes back; occupancy is exclusive
    (``idle[g]``); and a job's completion is not known when it starts, because its speed depends on
    the contention of jobs placed later (eqs. (6)-(9)), so there is neither a release time to push
    on a heap nor a window to reserve.
"""

from __future__ import annotations

import heapq
from typing import Any, Iterable, Mapping, Union

import numpy as np

from optsched import tolerance


def room(free: np.ndarray) -> np.ndarray:
    """Elementwise the largest amount ``tolerance.fits`` accepts against ``free``:
    ``free + NOISE * max(1, |free|)`` (the same float expression); ``free`` itself for integer
    arrays (exact comparison)."""
    free = np.asarray(free)
    if np.issubdtype(free.dtype, np.integer):
        return free
    return free + tolerance.NOISE * np.maximum(1.0, np.abs(free))


#: A usage: a ``(D, K)`` array, or a sparse mapping ``{(device, kind): amount}``.
Usage = Union[np.ndarray, Mapping[tuple[int, int], Any]]


def _cells(usage: Usage) -> list[tuple[int, int, Any]]:
    """``(device, kind, amount)`` of the cells of ``usage`` with a positive amount."""
    if isinstance(usage, dict) or isinstance(usage, Mapping):  # dict first: the ABC check is slow
        return [(d, k, a) for (d, k), a in usage.items() if a > 0]
    rows, cols = np.nonzero(usage > 0)
    return list(zip(rows.tolist(), cols.tolist(), usage[rows, cols].tolist()))


class CapacityProfile:
    """Free amount per (device, kind, slot), starting at ``capacity`` and growing on demand.

    Parameters
    ----------
    capacity
        ``(D, K)`` array: the free amount of every slot before any reservation. An integer dtype
        makes fit queries exact; a float dtype uses :func:`room` (``tolerance.fits``).
    length
        Slots stored initially (columns ``0..length-1``); the array doubles when a query or a
        reservation reaches past its end. The stored length is never observable in results.

    Attributes
    ----------
    capacity
        The ``(D, K)`` capacity (a read-only copy).
    free
        ``(D, K, T)``: column ``t`` is slot ``t``. Read it, never write it (use :meth:`reserve` and
        :meth:`release`); it is reallocated when the profile grows.
    """

    def __init__(self, capacity: np.ndarray, length: int = 64):
        cap = np.array(capacity)
        if cap.ndim != 2:
            raise ValueError(f"capacity must be a (devices, kinds) array, got shape {cap.shape}")
        if length < 1:
            raise ValueError(f"length must be >= 1, got {length}")
        cap.flags.writeable = False
        self.capacity = cap
        self._cap = cap.tolist()  # Python scalars for the per-cell idle check
        self.exact = bool(np.issubdtype(cap.dtype, np.integer))
        self.free = np.repeat(cap[:, :, None], length, axis=2)
        self._end = 0  # every slot >= _end is untouched (free == capacity)

    def grow(self, stop: int) -> None:
        """Make columns ``0..stop-1`` exist (doubling)."""
        n = self.free.shape[2]
        if stop <= n:
            return
        size = n
        while size < stop:
            size *= 2
        free = np.empty(self.free.shape[:2] + (size,), dtype=self.free.dtype)
        free[:, :, :n] = self.free
        free[:, :, n:] = self.capacity[:, :, None]
        self.free = free

    @staticmethod
    def _check(start: int, length: int) -> int:
        if start < 0 or length < 1:
            raise ValueError(f"window [start={start}, +{length}) must have start >= 0, length >= 1")
        return start + length

    def window(self, start: int, length: int) -> np.ndarray:
        """``(D, K)``: the minimum free amount over slots ``[start, start + length)``."""
        stop = self._check(start, length)
        if stop > self.free.shape[2]:
            self.grow(stop)
        return self.free[:, :, start:stop].min(axis=2)

    def reserve(self, usage: Usage, start: int, length: int) -> None:
        """Subtract ``usage`` from every slot of ``[start, start + length)``; unchecked."""
        self._add(usage, start, length, -1)

    def release(self, usage: Usage, start: int, length: int) -> None:
        """Add ``usage`` back to every slot of ``[start, start + length)`` (undo :meth:`reserve`;
        with floats the result equals the old value up to rounding)."""
        self._add(usage, start, length, +1)

    def _add(self, usage: Usage, start: int, length: int, sign: int) -> None:
        stop = self._check(start, length)
        if stop > self.free.shape[2]:
            self.grow(stop)
        if isinstance(usage, Mapping):
            for (d, k), a in usage.items():
                if sign < 0:
                    self.free[d, k, start:stop] -= a
                else:
                    self.free[d, k, start:stop] += a
        elif sign < 0:
            self.free[:, :, start:stop] -= usage[:, :, None]
        else:
            self.free[:, :, start:stop] += usage[:, :, None]
        if stop > self._end:
            self._end = stop

    def _bad(self, cells: list, lo: int, hi: int) -> np.ndarray:
        """Per slot of ``[lo, hi)`` (stored slots only): True where some cell does not fit."""
        bad = None
        for d, k, a in cells:
            free = self.free[d, k, lo:hi]
            over = (free < a) if self.exact else (a > room(free))
            if bad is None:
                bad = over
            else:
                bad |= over
        return np.zeros(max(0, hi - lo), dtype=bool) if bad is None else bad

    def _fit_idle(self, cells: list) -> bool:
        """Every cell fits the idle capacity."""
        cap = self._cap
        if self.exact:
            return all(a <= cap[d][k] for d, k, a in cells)
        return all(tolerance.fits(float(a), cap[d][k]) for d, k, a in cells)

    def fits(self, usage: Usage, start: int, length: int) -> bool:
        """True when every cell with a positive amount fits its free amount in every slot of
        ``[start, start + length)``."""
        stop = self._check(start, length)
        cells = _cells(usage)
        if stop > self.free.shape[2]:
            self.grow(stop)
        return not self._bad(cells, start, stop).any()

    def earliest_fit(self, usage: Usage, length: int, after: int = 0) -> int | None:
        """The least start ``s >= after`` with :meth:`fits` ``(usage, s, length)``; None when the
        usage does not fit even the idle ``capacity`` (then no start ever fits).

        Reads only the stored slots up to the last one ever reserved (every later slot holds the
        idle capacity), so a long ``length`` costs nothing and never grows the profile.
        """
        self._check(after, length)
        cells = _cells(usage)
        if not self._fit_idle(cells):
            return None
        end = max(after, self._end)  # every slot >= end is idle, so a start at end fits
        bad = self._bad(cells, after, end).nonzero()[0] + after
        if not len(bad) or bad[0] - after >= length:
            return after
        # the least fitting start is just past a bad slot; the first bad slot at or after
        # candidate bad[i] + 1 is bad[i + 1] (none for the last one: sentinel end + length)
        gaps = np.append(bad[1:], end + length) - bad - 1
        return int(bad[np.flatnonzero(gaps >= length)[0]]) + 1


class ReleasePool:
    """Free amount per (device, kind) now, with amounts held until given release times.

    Parameters
    ----------
    capacity
        ``(D, K)`` array of the initial free amounts (copied; its dtype is kept). With integer
        amounts a take/release round trip is exact; with floats the order of the releases at one
        time (take order) fixes the rounding.

    Attributes
    ----------
    free
        ``(D, K)``: the free amounts now. Never reallocated, so callers may keep views of it
        (column blocks); write it only through :meth:`take` and :meth:`release_until`.
    """

    def __init__(self, capacity: np.ndarray):
        self.free = np.array(capacity)
        if self.free.ndim != 2:
            raise ValueError(f"capacity must be a (devices, kinds) array, got shape {self.free.shape}")
        self._heap: list[tuple[Any, int, tuple, Any]] = []
        self._seq = 0

    def take(self, cells: Iterable[tuple[int, int, Any]], until: Any, payload: Any = None) -> None:
        """Remove ``amount`` from ``free[device, kind]`` for each ``(device, kind, amount)`` now and
        give it back at time ``until`` (unchecked: ``free`` may go negative)."""
        cells = tuple(cells)
        for d, k, a in cells:
            self.free[d, k] -= a
        heapq.heappush(self._heap, (until, self._seq, cells, payload))
        self._seq += 1

    def release_until(self, t: Any) -> list:
        """Give back every holding due at or before ``t``; the payloads, by (time, take order)."""
        out = []
        while self._heap and self._heap[0][0] <= t:
            _, _, cells, payload = heapq.heappop(self._heap)
            for d, k, a in cells:
                self.free[d, k] += a
            out.append(payload)
        return out

    def next_release(self) -> Any:
        """The earliest pending release time, or None when nothing is held."""
        return self._heap[0][0] if self._heap else None

    def __len__(self) -> int:
        """Pending holdings."""
        return len(self._heap)


__all__ = ["CapacityProfile", "ReleasePool", "room"]

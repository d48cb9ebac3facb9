"""The one numeric policy of optsched: exact where the data allow it, a tolerance only for
computed continuous values (docs/dev/family_contract.md, "Tolerance"; issue 22 item 1).

Exact part
----------
Every quantity that is discrete or given as data is decided in exact rational arithmetic:
slot counts, "is this work done after d slots at rate r", iterations per slot, capacity sums of
given numbers, and every objective a checker adds up from data.

* :func:`exact` is the number a value of an instance or schedule denotes, as a
  :class:`fractions.Fraction`: an int as it is; a float as the *decimal it is written as*, i.e.
  ``Fraction(repr(x))``. ``repr`` is what ``json.dumps`` writes, so a Python-built instance and the
  same instance read back from its JSON denote the same numbers; a JSON number with at most 15
  significant digits (every hand-written one) denotes exactly its text (DBL_DIG = 15 digits
  round-trip through a double). Why the decimal and not the binary value ``Fraction(x)`` of the
  double: data such as ``n_j = 0.1`` h or ``Delta^f M + Delta^b = 36 * 0.001 + 0.004`` mean
  0.1 and 0.04; their doubles are ``0.1000000000000000055...`` and a sum above ``0.04``, so binary
  exactness would make ten 0.1-hour mini-batches need 2 slots and ring_contention's phi = 1/0.04
  be 24 iterations per slot instead of 25, although the text says 1 slot and 25.
* :func:`slots_needed` ``(need, per_slot)`` is the least integer ``d >= 0`` with
  ``d * per_slot >= need``, and :func:`count_within` ``(limit, per_item)`` the largest ``k >= 0``
  with ``k * per_item <= limit``, both in that exact arithmetic. A model, CP model or algorithm
  takes its durations and speeds from these (through the family's ``Instance`` helpers), so it
  follows the checker exactly: never one slot shorter (looser) nor longer (stricter).
* :func:`count_within_filtered` and :func:`slots_needed_filtered` are :func:`count_within` and
  :func:`slots_needed` with a float filter: a float evaluation
  of a positive expression (error ~1e-15 relative) decides the floor when its quotient lies more
  than 1e-9 relative from an integer, and the exact rational is computed only otherwise (ring
  verify and elastic_cluster's 422k-configuration scan stay at the float version's CPU time).
* :func:`upper_float` reports an exact objective as a float never below it (the least double
  ``>= q``), so rounding never lowers an objective either.

Work short of its need by any amount, however small (``W_j = 1.0000005`` trained as 1 mini-batch
per slot needs 2 slots), is not done: before issue 22 a relative 1e-6 tolerance counted it done
and changed proven optima (edge_cloud: 2 where exact arithmetic gives 5;
``tests/data/*/exact_arith_*.json``).

Tolerance part
--------------
Only values *computed* in floating point by the method that made a schedule (simulated times and
rate timelines, LP-derived start times) get a tolerance, and it never makes an exactly infeasible
schedule pass for a better one: acceptance within the tolerance is paid for in the objective
(hetero_gpu re-times the schedule's decisions exactly, cojob_network charges overload and byte
shortfall back as a time scaling), so the objective reported is one an exactly feasible schedule
achieves.

* ``REL = 1e-6`` relative, with an absolute floor of ``REL`` for quantities near 0:
  ``slack(y) = REL * max(1, |y|)``.
* ``covers(done, need)``: ``done >= need - slack(need)``; ``at_most(x, limit)``:
  ``x <= limit + slack(limit)``; ``at_least(x, floor)``: ``x >= floor - slack(floor)``;
  ``close(a, b)`` for objectives that should agree.
* ``NOISE = 1e-9`` relative: the float-noise level of a computed schedule (a fluid simulator stops
  a flow when ``1e-9`` of its bytes are left). cojob_network's charge-back charges only what
  exceeds ``NOISE``, so an exactly computed objective is reported unchanged; the uncharged part is
  at most ``~2 NOISE`` relative of a rate timeline that is itself a float computation.
"""

from __future__ import annotations

import functools
import math
import numbers
from fractions import Fraction
from typing import Callable, Union

#: A number an instance or schedule holds (numpy scalars are accepted too).
Real = Union[int, float, Fraction]

REL = 1e-6
#: Relative float-noise level a charge-back of accepted slack ignores (module docstring).
NOISE = 1e-9


@functools.lru_cache(maxsize=1 << 16)
def _decimal(x: float) -> Fraction:
    if not math.isfinite(x):
        raise ValueError(f"not a finite number: {x!r}")
    if x.is_integer():
        return Fraction(int(x))
    return Fraction(float.__repr__(x))


def exact(x: Real) -> Fraction:
    """The exact rational an instance or schedule value denotes (module docstring): ints and
    Fractions as they are, a float as the decimal ``repr`` writes (numpy scalars alike).

    >>> exact(0.1), exact(3), exact(2.5e-07)
    (Fraction(1, 10), Fraction(3, 1), Fraction(1, 4000000))
    >>> exact(36 * 0.001 + 0.004) == Fraction(4, 100), exact(36) * exact(0.001) + exact(0.004)
    (False, Fraction(1, 25))
    """
    kind = type(x)
    if kind is float:  # the common case first: no ABC checks
        return _decimal(x)
    if kind is int:
        return Fraction(x)
    if isinstance(x, Fraction):
        return x
    if isinstance(x, numbers.Integral):
        return Fraction(int(x))
    return _decimal(float(x))


def slots_needed(need: Real, per_slot: Real) -> int:
    """Least integer ``d >= 0`` with ``d * per_slot >= need``, in exact arithmetic (:func:`exact`).

    >>> slots_needed(2, Fraction(1) / exact(1.0000005))   # 2 slots train 1.9999990...
    3
    >>> slots_needed(1.0000005, 1), slots_needed(3.0, 1.0), slots_needed(10 * exact(0.1), 1)
    (2, 3, 1)
    """
    q = exact(per_slot)
    if q <= 0:
        raise ValueError(f"per_slot must be > 0, got {per_slot}")
    return max(0, math.ceil(exact(need) / q))


def count_within(limit: Real, per_item: Real) -> int:
    """Largest integer ``k >= 0`` with ``k * per_item <= limit``, in exact arithmetic.

    >>> count_within(1, 36 * exact(0.001) + exact(0.004)), count_within(1, 0.3)
    (25, 3)
    """
    q = exact(per_item)
    if q <= 0:
        raise ValueError(f"per_item must be > 0, got {per_item}")
    return max(0, math.floor(exact(limit) / q))


def slots_needed_filtered(approx: float, exact_quotient: Callable[[], Fraction]) -> int:
    """``max(0, ceil(q))`` of a quotient ``q = need / per_slot`` (:func:`slots_needed`), exact,
    with the rational computed only when needed: ``approx`` is a float evaluation of ``q`` with
    relative error below 1e-12 (sums, products and quotients of positive data: ~1e-15), so when it
    lies more than 1e-9 relative away from an integer its ceiling is the exact answer.

    >>> slots_needed_filtered(2.5, lambda: Fraction(5, 2))                    # float decides: 3
    3
    >>> slots_needed_filtered(2.0000000000000004, lambda: Fraction(2))        # exact: 2
    2
    """
    if approx >= 0 and math.isfinite(approx):
        k = math.ceil(approx)
        margin = 1e-9 * max(1.0, approx)
        if k - approx > margin and approx - (k - 1) > margin:
            return k
    return max(0, math.ceil(exact_quotient()))


def count_within_filtered(limit: float, approx: float, exact_item: Callable[[], Fraction]) -> int:
    """:func:`count_within` ``(limit, exact_item())``, with the exact rational computed only when
    needed: ``approx`` is a float evaluation of the per-item value with relative error below
    1e-12 (a float expression of sums, products and quotients of positive data: ~1e-15), so when
    the float quotient ``limit / approx`` is more than 1e-9 relative away from an integer its
    floor is the exact answer.

    >>> count_within_filtered(1.0, 0.3, lambda: exact(0.3))                 # float decides: 3
    3
    >>> count_within_filtered(1.0, 36 * 0.001 + 0.004, lambda: Fraction(1, 25))  # exact: 25
    25
    """
    if approx > 0 and math.isfinite(approx):
        q = limit / approx
        k = math.floor(q)
        margin = 1e-9 * max(1.0, q)
        if q - k > margin and k + 1 - q > margin:
            return max(0, k)
    return count_within(limit, exact_item())


def upper_float(q: Real) -> float:
    """The least float ``>= q`` (``q`` exact): how a checker reports an exact objective, so
    rounding to a float never lowers it.

    >>> upper_float(Fraction(1, 10)) >= Fraction(1, 10), upper_float(Fraction(7, 2))
    (True, 3.5)
    """
    q = exact(q)
    f = float(q)
    if Fraction(f) < q:
        f = math.nextafter(f, math.inf)
    return f


def slack(y: float) -> float:
    """The allowed error around a computed ``y``: ``REL * max(1, |y|)``."""
    return REL * max(1.0, abs(y))


def covers(done: float, need: float) -> bool:
    """True when computed work ``done`` meets ``need`` within the tolerance (continuous values
    only; work on data is decided by :func:`slots_needed`)."""
    return done >= need - slack(need)


def at_most(x: float, limit: float) -> bool:
    """True when a computed ``x <= limit`` within the tolerance."""
    return x <= limit + slack(limit)


def at_least(x: float, floor: float) -> bool:
    """True when a computed ``x >= floor`` within the tolerance."""
    return x >= floor - slack(floor)


def fits(x: float, limit: float) -> bool:
    """True when a float sum ``x`` of data is at most ``limit`` up to float noise:
    ``x <= limit + NOISE * max(1, |limit|)``. For heuristics' fit tests (capacity left after
    float additions and subtractions), never for a checker: with integer loads below 1e9 it is
    exactly ``x <= limit``; otherwise it can accept a load above ``limit`` by at most ``NOISE``
    relative, which the exact :func:`verify` then refuses (an error, never a wrong acceptance)."""
    return x <= limit + NOISE * max(1.0, abs(limit))


def close(a: float, b: float) -> bool:
    """True when ``a`` and ``b`` agree within the tolerance (relative to the larger)."""
    return abs(a - b) <= REL * max(1.0, abs(a), abs(b))


__all__ = ["NOISE", "REL", "at_least", "at_most", "close", "count_within", "count_within_filtered",
           "covers", "exact", "fits", "slack", "slots_needed", "slots_needed_filtered",
           "upper_float"]

"""The one numeric tolerance policy of optsched (docs/dev/family_contract.md, "Tolerance").

Every ``verify`` and every model or algorithm that rounds, discretises or compares floats uses the
predicates here, so that a model is never stricter than its checker: a schedule that ``verify``
accepts is never cut off by a model (which would let a worse schedule be called optimal; issue 13,
elastic_cluster case: a model that rounded durations with ``ceil(x - 1e-9)`` while verify accepted
work met within a relative 1e-6 reported 25 as optimal where 19 verifies).

Policy
------
* ``REL = 1e-6`` relative, with an absolute floor of ``REL`` for quantities near 0:
  ``slack(y) = REL * max(1, |y|)``.
* ``covers(done, need)``: work ``done`` meets a requirement ``need`` when
  ``done >= need - slack(need)``.
* ``at_most(x, limit)``: ``x <= limit + slack(limit)`` (capacities, deadlines, overlaps);
  ``at_least(x, floor)``: ``x >= floor - slack(floor)`` (release times, barriers).
* ``slots_needed(need, per_slot)``: the least integer ``d >= 0`` with ``covers(d * per_slot, need)``,
  computed with that very predicate, so a duration a model derives is exactly the shortest one the
  checker accepts (never one slot longer through float noise or a different rounding).
* ``NOISE = 1e-9`` relative: the float-noise level of a computed schedule (a fluid simulator stops
  a flow when ``1e-9`` of its bytes are left). A checker that charges accepted slack back into its
  objective (cojob_network's ``verify``: overload and byte shortfall become a time scaling) charges
  only what exceeds ``NOISE``, so an exactly computed objective is reported unchanged and the
  uncharged part is a fixed ``~2 NOISE`` relative, far below ``close``'s ``REL``, that does not
  add up along chains.
"""

from __future__ import annotations

import math

REL = 1e-6
#: Relative float-noise level a charge-back of accepted slack ignores (module docstring).
NOISE = 1e-9


def slack(y: float) -> float:
    """The allowed error around ``y``: ``REL * max(1, |y|)``."""
    return REL * max(1.0, abs(y))


def covers(done: float, need: float) -> bool:
    """True when ``done`` meets ``need`` within the tolerance."""
    return done >= need - slack(need)


def at_most(x: float, limit: float) -> bool:
    """True when ``x <= limit`` within the tolerance."""
    return x <= limit + slack(limit)


def at_least(x: float, floor: float) -> bool:
    """True when ``x >= floor`` within the tolerance."""
    return x >= floor - slack(floor)


def close(a: float, b: float) -> bool:
    """True when ``a`` and ``b`` agree within the tolerance (relative to the larger)."""
    return abs(a - b) <= REL * max(1.0, abs(a), abs(b))


def slots_needed(need: float, per_slot: float) -> int:
    """Least integer ``d >= 0`` with ``covers(d * per_slot, need)``.

    >>> slots_needed(2.0, 1 / 1.0000005)   # 2 slots train 1.999999 >= 2 - 2e-6
    2
    >>> slots_needed(3.0, 1.0)
    3
    """
    if per_slot <= 0:
        raise ValueError(f"per_slot must be > 0, got {per_slot}")
    d = max(0, math.ceil(need / per_slot) + 1)
    while d > 0 and covers((d - 1) * per_slot, need):
        d -= 1
    while not covers(d * per_slot, need):
        d += 1
    return d


__all__ = ["NOISE", "REL", "at_least", "at_most", "close", "covers", "slack", "slots_needed"]

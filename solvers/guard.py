"""The one size guard of every exact and bound model: :func:`guard` (the cap and the time left, as
one call), :func:`too_large` (the cap, whatever the deadline), :class:`Refusal` (why a model is not
built: the cap, the time left, or both), :func:`refuse` (the two combined) and
:func:`not_built_status` (the status a method reports then).

Every family's MILP guard and the CP-SAT guard (:func:`optsched.solvers.cpsat.too_large`) return a
:class:`Refusal` or None. Kept apart from :mod:`optsched.solvers.highs` so that a guard does not
import Pyomo; that module re-exports these names.
"""

from __future__ import annotations

from dataclasses import dataclass

from typing import TYPE_CHECKING

from optsched.result import SolveStatus

if TYPE_CHECKING:
    from optsched.deadline import Deadline

#: The most non-zeros (constraint-matrix terms) of any exact or bound model optsched builds,
#: whatever the deadline: a model above it is never built (:func:`too_large`). Without a time
#: limit the families' time-left guards let anything through (``solve(generate("cojob_network",
#: "paper", 0), "exact")`` started Model E with ~3.1e9 non-zeros and reached 12 GB in 3 min).
#: Measured on cojob_network's Model E (2 x 8-job paper testbed, ``iteration_scale`` 0.002 and
#: 0.0035: 345k and 1.13M non-zeros, idle 2-core machine): Pyomo's build ~160 B per non-zero
#: (1.1M in 4.8 s), the hand-off to HiGHS another ~330 B (17 s), ~490-540 B per non-zero (RSS)
#: and ~51k non-zeros a wall-second in all. At the cap that is ~1.1 GB before HiGHS' own presolve
#: copies (about 2 GB in all) and, at the families' own loaded build rates (hetero_gpu 8k,
#: cojob_network 15k, elastic_cluster 25k non-zeros/s), 2-4 minutes of building.
MAX_MODEL_TERMS = 2_000_000


def too_large(terms: float, what: str) -> str | None:
    """Why a model of ``terms`` non-zeros is never built, whatever the deadline (None: it is
    within :data:`MAX_MODEL_TERMS`). Every family's size guard calls this before its time-left
    check; a method whose model it refuses returns what it has with :func:`not_built_status`.

    >>> too_large(10, "M") is None
    True
    >>> too_large(MAX_MODEL_TERMS + 1, "M").startswith("size cap: M has ~2000001 non-zeros")
    True
    """
    if terms <= MAX_MODEL_TERMS:
        return None
    return (f"size cap: {what} has ~{terms:.0f} non-zeros > MAX_MODEL_TERMS = {MAX_MODEL_TERMS} "
            f"(never built, whatever the time limit)")


@dataclass(frozen=True)
class Refusal:
    """Why a model is not built: over the size cap (:func:`too_large`, whatever the deadline),
    too big for the time left (``late``), or both. Every family's size guard returns one (or None:
    build it), so which reason held is read from the fields, never from the message.

    >>> r = Refusal(cap=too_large(MAX_MODEL_TERMS + 1, "M"))
    >>> r.status(True).value, str(r).startswith("size cap: M")
    ('feasible', True)
    >>> Refusal(late="10 s > 2 s left").status(True).value
    'time_limit'
    """

    cap: str | None = None
    late: str | None = None

    def __str__(self) -> str:
        return "; ".join(why for why in (self.cap, self.late) if why is not None)

    def status(self, has_schedule: bool) -> SolveStatus:
        """:func:`not_built_status` of an exact method refused for these reasons."""
        return not_built_status(has_schedule, self.late is not None)


def refuse(terms: float, what: str, late: str | None) -> Refusal | None:
    """The :class:`Refusal` of a model of ``terms`` non-zeros (``late``: the family's own time-left
    reason, None when it fits), or None when it is built."""
    cap = too_large(terms, what)
    return None if cap is None and late is None else Refusal(cap, late)


def guard(terms: float, what: str, deadline: Deadline, build_seconds: float) -> Refusal | None:
    """The one size guard of every model build: None when the model of ``terms`` non-zeros may be
    built, else the :class:`Refusal` saying why -- over the size cap (:func:`too_large`, whatever
    the deadline) and/or ``build_seconds`` (the family's estimate of building it and handing it to
    the solver) more than the time ``deadline`` leaves.

    >>> from optsched.deadline import Deadline
    >>> guard(10, "M", Deadline.after(None), 1e9) is None
    True
    >>> str(guard(10, "M", Deadline.after(1.0), 30.0))
    'M: ~30.0 s to build > 1.0 s left'
    >>> guard(MAX_MODEL_TERMS + 1, "M", Deadline.after(None), 0.0).cap is not None
    True
    """
    left = deadline.remaining()
    late = (f"{what}: ~{build_seconds:.1f} s to build > {left:.1f} s left"
            if left is not None and build_seconds > left else None)
    return refuse(terms, what, late)


def not_built_status(has_schedule: bool, late: bool) -> SolveStatus:
    """Status of an exact method whose model was not built: ``time_limit`` only when the time
    left also ruled the model out (``late``); otherwise ``feasible`` with the fallback schedule
    and ``unknown`` without one, so no status says "time limit" where there was none (the reason
    goes to the method's ``info``).

    >>> not_built_status(True, False).value, not_built_status(False, False).value
    ('feasible', 'unknown')
    >>> not_built_status(True, True).value
    'time_limit'
    """
    if late:
        return SolveStatus.TIME_LIMIT
    return SolveStatus.FEASIBLE if has_schedule else SolveStatus.UNKNOWN


__all__ = ["MAX_MODEL_TERMS", "Refusal", "guard", "not_built_status", "refuse", "too_large"]

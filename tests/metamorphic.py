"""The metamorphic relations of the exact methods (issue 13: a model is never stricter than its
checker; docs/dev/design.md "Tolerance"), each stated once for every family.

A family says how its instances are drawn, relabelled, scaled and moved in one :class:`Table`
(tests/models/test_<family>_metamorphic.py, whose docstring argues why each of its
transformations is exact); tests/models/test_metamorphic.py runs every table through :func:`run`.
Each relation compares two independent computations on the proven optimum OPT of a drawn tiny
instance I:

relabelling  renaming jobs, devices or types: the relabelled instance's optimum is OPT, and mapped
             back to the original names it verifies on I at OPT.
scaling      a transformation T whose effect is known, OPT(T(I)) = a OPT + b: the optimum of I
             mapped forward verifies on T(I) at a OPT + b, T(I)'s optimum is a OPT + b, and mapped
             back it verifies on I at OPT. Where T only bounds the optimum (``exact=False``), the
             mapped optimum verifies at most at a OPT + b and T(I)'s optimum is at most that.
local        no single-move neighbour of the optimum that verify accepts is better than OPT.
own          a family's own check of its model on the optimum (``Table.own``).

Every transformation is drawn before any solve, so an example is never discarded after its
solves were paid for. A property passes only when it checked ``SETTINGS.max_examples`` proven
optima (hypothesis discards the examples that ``assume`` rejects).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable

from hypothesis import HealthCheck, event, given, seed, settings
from hypothesis import strategies as st

from optsched import verify
from optsched.errors import InfeasibleSchedule
from optsched.result import Result, SolveStatus
from optsched.tolerance import at_least, close

#: the same for every family: 50 counted examples, no example database; ``run`` seeds each
#: property by its family and relations (derandomize would give them all one seed)
SETTINGS = settings(max_examples=50, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                           HealthCheck.data_too_large])

Schedule = Any
Instance = Any


@dataclass(frozen=True)
class Relabelling:
    """``instance`` is the original renamed; ``back`` maps one of its schedules to the original's
    names."""

    name: str
    instance: Instance
    back: Callable[[Schedule], Schedule]


@dataclass(frozen=True)
class Scaling:
    """``instance`` = T(I) with OPT(T(I)) = ``factor`` OPT + ``offset`` (at most that unless
    ``exact``). ``forward`` maps I's optimum to a schedule of T(I); ``back`` maps T(I)'s optimum to
    one of I; ``solve=False`` checks the forward map only (the mapped optimum verifies at exactly, or
    with ``exact=False`` at most, ``factor`` OPT + ``offset``: a bound on OPT(T(I))). The two
    optima are compared in units of ``unit`` (so a scale of 1e-7 is not lost in the tolerance's
    absolute floor)."""

    name: str
    instance: Instance
    factor: float = 1.0
    offset: float = 0.0
    exact: bool = True
    forward: Callable[[Schedule], Schedule] | None = None
    back: Callable[[Schedule], Schedule] | None = None
    solve: bool = True
    unit: float = 1.0


Draw = Callable[[st.DataObject, Instance], list]


@dataclass(frozen=True)
class Table:
    """How one family's instances are drawn, transformed and moved.

    ``optimum`` solves a drawn instance (rejecting it with ``assume``, or failing, when not proven
    optimal); ``solve`` solves a transformed one. ``properties`` lists the relations checked on
    one drawn instance, one hypothesis property each. ``exact_objective``: objectives are integers,
    so a mapped schedule must verify at OPT exactly. ``optimum_is_a_neighbour``: ``neighbours``
    yields the optimum itself (re-timed), so at least one neighbour verifies."""

    family: str
    instances: st.SearchStrategy
    optimum: Callable[[Instance], Result]
    solve: Callable[[Instance], Result]
    relabellings: Draw
    scalings: Draw
    neighbours: Callable[[Instance, Schedule], Iterable[Schedule | None]]
    properties: tuple[tuple[str, ...], ...]
    exact_objective: bool = False
    optimum_is_a_neighbour: bool = False
    own: Callable[[Instance, Result], None] | None = None


def with_fields(inst: Instance, **fields) -> Instance:
    """``inst`` with some JSON fields replaced, validated again by its ``from_dict``."""
    return type(inst).from_dict({**inst.to_dict(), **fields})


def _agrees(table: Table, value: float, opt: float) -> bool:
    return value == opt if table.exact_objective else close(value, opt)


def check_relabelling(table: Table, inst: Instance, base: Result, r: Relabelling) -> None:
    opt = base.objective
    other = table.solve(r.instance)
    assert other.status is SolveStatus.OPTIMAL, (r.name, other.status)
    assert close(other.objective, opt), (r.name, other.objective, opt)
    value = verify(inst, r.back(other.schedule))
    assert _agrees(table, value, opt), (r.name, "mapped back", value, opt)
    event(f"relabelled: {r.name}")


def check_scaling(table: Table, inst: Instance, base: Result, s: Scaling) -> None:
    opt = base.objective
    expected = s.factor * opt + s.offset
    event(f"scaling {s.name}: exact {s.exact}")
    mapped = None
    if s.forward is not None:
        mapped = verify(s.instance, s.forward(base.schedule))
        assert _agrees(table, mapped, expected) if s.exact else mapped <= expected, \
            (s.name, "mapped forward", mapped, expected)
    if not s.solve:
        return
    other = table.solve(s.instance)
    assert other.status is SolveStatus.OPTIMAL, (s.name, other.status)
    if not s.exact:
        assert mapped is not None and other.objective <= mapped, (s.name, other.objective, mapped)
        return
    assert close(other.objective / s.unit, expected / s.unit), (s.name, other.objective, expected)
    if s.back is not None:
        value = verify(inst, s.back(other.schedule))
        assert _agrees(table, value, opt), (s.name, "mapped back", value, opt)


def check_local_improvement(table: Table, inst: Instance, base: Result) -> None:
    opt = base.objective
    accepted = 0
    for nb in table.neighbours(inst, base.schedule):
        if nb is None:
            continue
        assert type(nb) is type(base.schedule), type(nb)  # else verify rejects it unread
        try:
            value = verify(inst, nb)
        except InfeasibleSchedule:
            continue
        accepted += 1
        assert at_least(value, opt) or close(value, opt), ("better neighbour", value, opt, nb)
    if table.optimum_is_a_neighbour:
        assert accepted >= 1
    event("verified neighbours: " + ("0" if not accepted else "1-9" if accepted < 10 else "10+"))


RELATIONS = ("relabelling", "scaling", "local", "own")


def run(table: Table, relations: tuple[str, ...]) -> None:
    """Check ``relations`` on ``SETTINGS.max_examples`` drawn instances with a proven optimum; the
    examples are seeded by the family and the relations."""
    assert set(relations) <= set(RELATIONS), relations
    checked = []

    @seed(f"{table.family}: {' '.join(relations)}")
    @SETTINGS
    @given(data=st.data())
    def prop(data):
        inst = data.draw(table.instances, "instance")
        relabellings = table.relabellings(data, inst) if "relabelling" in relations else []
        scalings = table.scalings(data, inst) if "scaling" in relations else []
        base = table.optimum(inst)
        for r in relabellings:
            check_relabelling(table, inst, base, r)
        for s in scalings:
            check_scaling(table, inst, base, s)
        if "local" in relations:
            check_local_improvement(table, inst, base)
        if "own" in relations:
            table.own(inst, base)
        checked.append(1)

    prop()
    assert len(checked) >= SETTINGS.max_examples, (table.family, relations, len(checked))

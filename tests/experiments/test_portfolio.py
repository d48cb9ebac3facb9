"""``optsched ratios --exact {milp,cp,portfolio}`` (issue 14 item 3): where OPT comes from, the
portfolio's joint proof (one engine's incumbent meets the other's bound) and a disagreement between
two proven optima reported as a violation, never averaged away."""

from __future__ import annotations

import dataclasses

import pytest

from optsched import registry
from optsched.errors import InvalidInstance
from optsched.experiments.ratios import plan, run_ratios
from optsched.experiments.table import format_table, is_violation
from optsched.result import Outcome, SolveStatus

from .conftest import FAMILY, KEEP, trimmed, wrap

RUN = dict(families=[FAMILY], seeds=2, progress=False, exact="portfolio")


@pytest.fixture
def hetero(monkeypatch):
    """hetero_gpu trimmed to the fast methods plus ``exact_cp``; ``patch(name, func)`` swaps one
    method's function for the test."""
    monkeypatch.setitem(registry._FAMILIES, FAMILY,
                        trimmed(registry.get_family(FAMILY), KEEP + ("exact_cp",)))

    def patch(name, func):
        now = registry.get_family(FAMILY)
        methods = tuple(dataclasses.replace(m, func=func) if m.name == name else m
                        for m in now.methods)
        monkeypatch.setitem(registry._FAMILIES, FAMILY, dataclasses.replace(now, methods=methods))

    patch.method = lambda name: registry.get_family(FAMILY).method(name)
    return patch


def _by(rows, method):
    return [r for r in rows if r["method"] == method]


def test_plan_puts_the_chosen_engines_first(hetero):
    first = {exact: list(plan([FAMILY], seeds=1, exact=exact)[0][0].methods[:3])
             for exact in ("milp", "cp", "portfolio")}
    assert first["milp"][0] == "exact" and "exact_cp" not in first["milp"]
    assert first["cp"][0] == "exact_cp" and "exact" not in first["cp"]
    assert first["portfolio"] == ["portfolio", "exact", "exact_cp"]
    with pytest.raises(InvalidInstance, match="exact: one of milp, cp, portfolio"):
        plan([FAMILY], seeds=1, exact="gurobi")


def test_family_without_a_cp_model_uses_its_milp(monkeypatch):
    spec = registry.get_family(FAMILY)
    monkeypatch.setitem(registry._FAMILIES, FAMILY, trimmed(spec))  # no exact_cp
    for exact in ("cp", "portfolio"):
        assert plan([FAMILY], seeds=1, exact=exact)[0][0].reference == ("exact",)


def test_both_engines_prove_and_agree(hetero):
    rows = run_ratios(**RUN)
    for joint, milp, cp in zip(_by(rows, "portfolio"), _by(rows, "exact"), _by(rows, "exact_cp")):
        assert joint["status"] == "optimal" and joint["checks"]["model_agrees"] is True
        assert joint["opt"] == pytest.approx(milp["opt"]) == pytest.approx(cp["opt"])
        assert joint["params"]["proven_by"] == ["exact", "exact_cp"]
    hare = _by(rows, "hare")
    assert all(r["ratio"] == pytest.approx(r["objective"] / r["opt"]) for r in hare)
    assert "portfolio hetero_gpu (which engine proved OPT): exact + exact_cp on 2" in format_table(rows)


def test_incumbent_of_one_meets_the_bound_of_the_other(hetero):
    """Neither engine proves alone: the MILP keeps its (optimal) schedule but no bound, CP-SAT keeps
    its (tight) bound but no schedule; together they are a proof."""
    def no_bound(out):
        return dataclasses.replace(out, status=SolveStatus.TIME_LIMIT, lower_bound=None,
                                   model_objective=None)

    def no_schedule(out):
        return Outcome(None, SolveStatus.TIME_LIMIT, out.lower_bound, {})

    hetero("exact", wrap(hetero.method("exact"), after=no_bound))
    hetero("exact_cp", wrap(hetero.method("exact_cp"), after=no_schedule))
    rows = run_ratios(**RUN)
    assert all(r["opt"] is None for r in _by(rows, "exact") + _by(rows, "exact_cp"))
    for joint in _by(rows, "portfolio"):
        assert joint["status"] == "optimal" and joint["opt"] is not None
        assert joint["params"]["proven_by"] == ["incumbent meets bound"]
    assert all(r["ratio"] is not None for r in _by(rows, "hare"))


def test_two_proven_optima_that_differ_are_a_violation(hetero):
    """CP-SAT claims optimality for Sched_Allox's (worse) schedule: the instance gets no OPT."""
    def wrong_cp(instance, *, deadline, seed=0):
        worse = registry.solve(instance, "sched_allox")
        return Outcome(worse.schedule, SolveStatus.OPTIMAL, worse.objective, {})

    hetero("exact_cp", wrong_cp)
    rows = run_ratios(**RUN)
    disputed = [r for r in _by(rows, "portfolio") if r["checks"]["model_agrees"] is False]
    assert disputed, "sched_allox is optimal on both instances: pick other seeds"
    assert all(is_violation(r) and r["opt"] is None for r in disputed)
    seeds = {r["seed"] for r in disputed}
    assert all(r["ratio"] is None for r in _by(rows, "hare") if r["seed"] in seeds)
    assert "VIOLATIONS" in format_table(rows)

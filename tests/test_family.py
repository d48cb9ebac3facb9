"""A sixth family is one Family object: the toy single-machine family (tests/toy/) end to end
through solve, verify, ratios and compare; the registry's demotion of a model/verify disagreement."""

from __future__ import annotations

import dataclasses

import pytest

from optsched import registry, solve, verify
from optsched.errors import InfeasibleSchedule, UnknownMethod
from optsched.experiments.compare import run_compare
from optsched.experiments.ratios import run_ratios
from optsched.family import Family
from optsched.io import instance_from_dict, schedule_from_dict
from optsched.result import SolveStatus


@pytest.fixture
def toy():
    from tests.toy.solvers import SPEC

    registry.register(SPEC)
    yield SPEC
    registry.unregister(SPEC.name)


def test_toy_family_solve_verify_and_json(toy):
    inst = toy.generate("tiny", 1)
    assert instance_from_dict(inst.to_dict()) == inst
    opt, alg, fifo = (solve(inst, m) for m in ("exact", "wspt", "fifo"))
    assert opt.status is SolveStatus.OPTIMAL and opt.info["model_objective_agrees"]
    assert alg.objective == pytest.approx(opt.objective)        # Smith's rule is optimal
    assert fifo.objective >= opt.objective - 1e-9
    assert alg.info["params"] == {"rule": "wspt"} and fifo.info["params"] == {"rule": "fifo"}
    assert verify(inst, schedule_from_dict(alg.schedule.to_dict())) == alg.objective
    with pytest.raises(InfeasibleSchedule, match="overlap"):
        verify(inst, dataclasses.replace(alg.schedule, starts=(0,) * len(inst.times)))


def test_toy_family_ratios_and_compare(toy, tmp_path):
    rows = run_ratios(families=[toy.name], progress=False, out=tmp_path)
    assert len(rows) == toy.ratio_seeds * len(toy.methods)
    assert all(r["ratio"] == pytest.approx(1.0) for r in rows if r["method"] == "wspt")
    assert all(r["checks"]["lb_le_opt"] for r in rows if r["method"] == "lower_bound")
    assert {r["params"]["rule"] for r in rows if r["params"]} == {"wspt", "fifo"}
    rows, table = run_compare(toy.name, preset="small", seeds=2, progress=False)
    assert {r["method"] for r in rows} == {"wspt", "fifo", "lower_bound"} and "/ref" in table
    assert all(r["alg_lb"] >= 1 - 1e-9 for r in rows if r["kind"] != "bound")


def test_family_object_is_checked(toy):
    with pytest.raises(ValueError, match="no method 'nope'"):
        dataclasses.replace(toy, default_method="nope")
    with pytest.raises(ValueError, match="duplicate"):
        dataclasses.replace(toy, methods=toy.methods + toy.methods[:1])
    with pytest.raises(ValueError, match="already registered"):
        registry.register(toy)
    with pytest.raises(UnknownMethod, match="no method 'x'"):
        toy.method("x")
    assert isinstance(registry.get_family("single_machine"), Family)


def test_model_objective_disagreeing_with_verify_demotes_optimal(toy, monkeypatch):
    exact = toy.method("exact")

    def lying(*args, **kw):
        out = exact.func(*args, **kw)
        return dataclasses.replace(out, model_objective=out.model_objective - 1)

    lying.__wrapped__ = exact.func
    spec = dataclasses.replace(toy, methods=tuple(
        dataclasses.replace(m, func=lying) if m.name == "exact" else m for m in toy.methods))
    monkeypatch.setitem(registry._FAMILIES, toy.name, spec)
    res = solve(toy.generate("tiny", 0), "exact")
    assert res.status is SolveStatus.FEASIBLE and res.info["model_objective_agrees"] is False
    assert "!= verify" in res.info["demoted"]

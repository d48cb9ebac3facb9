"""The CP-SAT engine (each family's ``solvers/<family>/cp.py``, issue 14 item 3) against the MILPs and the checkers.

For every family with an ``exact_cp``: on 20 tiny instances both the registry's ``exact`` (HiGHS)
and ``exact_cp`` (called directly) prove optimality and agree within ``tolerance.close``; the CP
schedule passes ``verify`` and ``verify``'s objective equals the CP model's objective.
"""

from __future__ import annotations

import importlib.util
import math
import sys
from fractions import Fraction

import pytest

pytest.importorskip("ortools")

import optsched  # noqa: E402
from optsched import tolerance  # noqa: E402
from optsched.deadline import Deadline  # noqa: E402
from optsched.errors import OptschedError, UnknownMethod  # noqa: E402
from optsched.registry import families, get_method, make_result  # noqa: E402
from optsched.result import SolveStatus  # noqa: E402
from optsched.solvers import cpsat as _common  # noqa: E402
from tests.timing import cpu_time  # noqa: E402

#: ``exact_cp`` of every family that registers one (the registry is the only place it is named).
EXACT_CP = {name: fam.method("exact_cp").func for name, fam in families().items()
            if any(m.name == "exact_cp" for m in fam.methods)}

SEEDS = range(20)
FAMILIES = sorted(EXACT_CP)


def _cp(inst, limit: float = 60.0, seed: int = 0):
    return EXACT_CP[inst.FAMILY](inst, deadline=Deadline.after(limit), seed=seed)


@pytest.mark.parametrize("family", FAMILIES)
def test_cp_agrees_with_milp_on_tiny(family):
    """>= 20 tiny instances: both engines prove, optima agree, the CP schedule verifies."""
    for seed in SEEDS:
        inst = optsched.generate(family, "tiny", seed)
        milp = optsched.solve(inst, "exact", time_limit=60)
        cp = _cp(inst)
        where = f"{family} tiny seed {seed}"
        assert milp.status is SolveStatus.OPTIMAL, where
        assert cp.status is SolveStatus.OPTIMAL, where
        obj = optsched.verify(inst, cp.schedule)
        assert tolerance.close(obj, cp.model_objective), (where, obj, cp.model_objective)
        assert tolerance.close(obj, milp.objective), (where, obj, milp.objective)
        assert cp.lower_bound is not None and tolerance.close(cp.lower_bound, obj), where


@pytest.mark.slow
@pytest.mark.parametrize("family", FAMILIES)
def test_cp_agrees_with_milp_on_small(family):
    """Three ``small`` instances (bigger than tiny), where the MILP still proves."""
    for seed in range(3):
        inst = optsched.generate(family, "small", seed)
        milp = optsched.solve(inst, "exact", time_limit=60)
        cp = _cp(inst)
        if milp.status is SolveStatus.OPTIMAL and cp.status is SolveStatus.OPTIMAL:
            assert tolerance.close(optsched.verify(inst, cp.schedule), milp.objective), seed


def test_hetero_gpu_matches_brute_force():
    from tests.solvers.brute_hetero_gpu import brute_force

    for seed in range(6):
        inst = optsched.generate("hetero_gpu", "tiny", seed)
        cp = _cp(inst)
        assert cp.status is SolveStatus.OPTIMAL
        assert tolerance.close(optsched.verify(inst, cp.schedule), brute_force(inst)), seed


def test_hetero_gpu_scales_rational_times():
    """Non-integral times (halves, thirds, tenths) are scaled exactly by a common denominator; the
    optimum agrees with the MILP's."""
    from dataclasses import replace

    base = optsched.generate("hetero_gpu", "tiny", 3)
    jobs = tuple(replace(j, arrival=j.arrival / 2, weight=j.weight / 10,
                         train_time=tuple(t / 3 for t in j.train_time),
                         sync_time=tuple(t / 4 for t in j.sync_time)) for j in base.jobs)
    inst = replace(base, jobs=jobs)
    cp = _cp(inst)
    assert cp.status is SolveStatus.OPTIMAL
    times = [x for j in jobs for x in (j.arrival, *j.train_time, *j.sync_time)]
    expected = math.lcm(*(Fraction(x).limit_denominator(1000).denominator for x in times))
    assert cp.info["time_denominator"] == expected > 1
    assert cp.info["weight_denominator"] == math.lcm(
        *(Fraction(j.weight).limit_denominator(1000).denominator for j in jobs))
    milp = optsched.solve(inst, "exact", time_limit=60)
    assert milp.status is SolveStatus.OPTIMAL
    obj = optsched.verify(inst, cp.schedule)
    assert tolerance.close(obj, cp.model_objective) and tolerance.close(obj, milp.objective)


def test_hetero_gpu_without_exact_integer_form_is_unknown():
    """Times with no small rational form give UNKNOWN and a reason, never a wrong optimum."""
    from dataclasses import replace

    base = optsched.generate("hetero_gpu", "tiny", 0)
    jobs = (replace(base.jobs[0], train_time=(3.14159265358979,) * base.n_gpus),) + base.jobs[1:]
    out = _cp(replace(base, jobs=jobs))
    assert out.status is SolveStatus.UNKNOWN and out.schedule is None
    assert "train_time" in out.info["reason"]


def test_edge_cloud_matches_brute_force():
    from tests.solvers.brute_edge_cloud import brute_force

    for seed in range(4):
        inst = optsched.generate("edge_cloud", "tiny", seed)
        cp = _cp(inst)
        assert cp.status is SolveStatus.OPTIMAL
        obj = optsched.verify(inst, cp.schedule)
        assert tolerance.close(obj, brute_force(inst, obj)), seed


def test_ring_contention_matches_brute_force():
    from tests.solvers.brute_ring_contention import brute_force

    for seed in range(4):
        inst = optsched.generate("ring_contention", "tiny", seed)
        cp = _cp(inst)
        assert cp.status is SolveStatus.OPTIMAL
        obj = optsched.verify(inst, cp.schedule)
        assert obj == brute_force(inst, int(obj))[0], seed


def test_ring_contention_infeasible_horizon():
    """No schedule ends by a too-short horizon: proven infeasible, no schedule."""
    from dataclasses import replace

    inst = optsched.generate("ring_contention", "tiny", 1)
    short = replace(inst, horizon=1)
    out = _cp(short)
    assert out.status is SolveStatus.INFEASIBLE and out.schedule is None


def test_elastic_cluster_matches_brute_force():
    from tests.solvers.brute_elastic_cluster import brute_force

    for seed in range(4):  # both architectures
        inst = optsched.generate("elastic_cluster", "tiny", seed)
        cp = _cp(inst)
        assert cp.status is SolveStatus.OPTIMAL
        assert tolerance.close(optsched.verify(inst, cp.schedule), brute_force(inst)), seed


def test_elastic_cluster_scales_rational_resources():
    """Halved demands and capacities (denominator 2) give the same optimum as the original."""
    from dataclasses import replace

    from optsched.problems.elastic_cluster import NodeType

    base = optsched.generate("elastic_cluster", "tiny", 0)
    half = replace(base, capacity=tuple(tuple(c / 2 for c in row) for row in base.capacity),
                   worker_types=tuple(NodeType(tuple(d / 2 for d in t.demand), t.bandwidth)
                                      for t in base.worker_types),
                   ps_types=tuple(NodeType(tuple(d / 2 for d in t.demand), t.bandwidth)
                                  for t in base.ps_types))
    a, b = _cp(base), _cp(half)
    assert a.status is b.status is SolveStatus.OPTIMAL
    assert tolerance.close(a.model_objective, b.model_objective)
    assert tolerance.close(optsched.verify(half, b.schedule), b.model_objective)


@pytest.mark.parametrize("family", FAMILIES)
def test_cp_method_through_make_result(family):
    """``exact_cp`` is a registry-ready exact Method; its Result is verified and optimal."""
    entry = get_method(family, "exact_cp")
    assert (entry.name, entry.kind) == ("exact_cp", "exact") and "CP-SAT" in entry.description
    inst = optsched.generate(family, "tiny", 1)
    result = make_result(inst, entry, entry.run(inst, Deadline.after(30), 0), 0.0, 0)
    assert result.status is SolveStatus.OPTIMAL and result.info["model_objective_agrees"]
    assert result.info["solver"] == "cp-sat" and result.info["threads"] == 1


@pytest.mark.parametrize("family", FAMILIES)
def test_short_deadline_is_a_status(family):
    """A deadline that stops CP-SAT is a status (with the incumbent when there is one)."""
    inst = optsched.generate(family, "small", 0)
    out = EXACT_CP[family](inst, deadline=Deadline.after(0.001), seed=0)
    assert out.status in (SolveStatus.OPTIMAL, SolveStatus.TIME_LIMIT, SolveStatus.UNKNOWN)
    if out.schedule is not None:
        assert optsched.verify(inst, out.schedule) >= (out.lower_bound or 0) - 1e-6


@pytest.mark.parametrize("family", FAMILIES)
def test_deadline_while_building_returns_the_heuristic(family):
    """A deadline that expires while the model is built: ``time_limit`` with the (feasible) schedule
    that bounded the model, or none; never an exception."""
    inst = optsched.generate(family, "small", 1)
    out = EXACT_CP[family](inst, deadline=Deadline(0.0), seed=0)  # expired from the start
    assert out.status is SolveStatus.TIME_LIMIT and "deadline" in out.info["reason"]
    if out.schedule is not None:
        optsched.verify(inst, out.schedule)


@pytest.mark.parametrize("family", FAMILIES)
def test_paper_scale_is_refused_at_once(family):
    """Paper-scale models exceed MAX_MODEL_SIZE: ``unknown`` with a reason, without building."""
    inst = optsched.generate(family, "paper", 0)
    start = cpu_time()
    out = EXACT_CP[family](inst, deadline=Deadline.after(2.0), seed=0)
    assert cpu_time() - start < 1.0
    assert out.status is SolveStatus.UNKNOWN
    assert out.info["reason"].startswith("size cap: exact_cp model")


def test_unknown_family():
    assert "cojob_network" not in EXACT_CP
    with pytest.raises(UnknownMethod, match="exact_cp"):
        get_method("cojob_network", "exact_cp")


def test_missing_extra_names_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "ortools.sat.python", None)
    with pytest.raises(OptschedError, match=r"optsched\[cp\]"):
        _common.cp_model()


def test_ortools_bundling_highs_is_refused(monkeypatch):
    """OR-Tools wheels that ship libhighs.so.1 break highspy in the same process: refused."""
    monkeypatch.setattr(_common, "_bundled_highs", lambda: "/x/ortools/.libs/libhighs.so.1")
    with pytest.raises(OptschedError, match="or-tools#5246"):
        _common.cp_model()


def test_installed_ortools_coexists_with_highspy():
    """The installed OR-Tools does not bundle HiGHS, and HiGHS still solves after CP-SAT ran."""
    assert _common._bundled_highs() is None
    _common.cp_model()
    assert importlib.util.find_spec("highspy") is not None
    import highspy

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    assert h.getInfinity() > 1e20

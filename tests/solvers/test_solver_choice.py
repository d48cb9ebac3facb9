"""Any solver Pyomo drives (issue 21 items 1-2): ``solve(..., solver="scip")`` proves the same
optima as HiGHS on every family's exact model, ``--write-model`` writes the model a method
solves without solving it (read back into highspy it gives the same optimum), and an unknown
solver is a one-line error."""

from __future__ import annotations

import pytest

import optsched
from optsched import tolerance
from optsched.cli import main
from optsched.errors import OptschedError
from optsched.result import SolveStatus
from optsched.solvers.options import SolverOptions, using

FAMILIES = ("hetero_gpu", "edge_cloud", "ring_contention", "elastic_cluster", "cojob_network")


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("seed", range(4))
def test_scip_and_highs_prove_the_same_optimum(family, seed):
    pytest.importorskip("pyscipopt")
    inst = optsched.generate(family, "tiny", seed)
    highs = optsched.solve(inst, "exact", time_limit=60)
    scip = optsched.solve(inst, "exact", time_limit=60, solver="scip")
    assert highs.status is scip.status is SolveStatus.OPTIMAL
    assert tolerance.close(highs.objective, scip.objective)
    assert optsched.verify(inst, scip.schedule) == pytest.approx(scip.objective)


def test_scip_is_used_and_highs_still_works_after_it():
    """The solver really is SCIP (info names it), and HiGHS and CP-SAT still solve afterwards in
    the same process (the pinned ortools, pyscipopt and highspy do not clash)."""
    pytest.importorskip("pyscipopt")
    inst = optsched.generate("hetero_gpu", "tiny", 1)
    scip = optsched.solve(inst, "exact", solver="scip")
    assert scip.info["solver"] == "scip"
    assert optsched.solve(inst, "exact").info["solver"] == "highs"
    if pytest.importorskip("ortools"):
        assert optsched.solve(inst, "exact_cp").status is SolveStatus.OPTIMAL


def test_unknown_solver_is_one_line(capsys):
    with pytest.raises(OptschedError, match="'nosuch' is not available"):
        optsched.solve(optsched.generate("hetero_gpu", "tiny", 0), "exact", solver="nosuch")
    assert main(["families"]) == 0
    capsys.readouterr()


def test_cli_unknown_solver_exits_2(tmp_path, capsys):
    path = tmp_path / "i.json"
    optsched.dump(optsched.generate("hetero_gpu", "tiny", 0), path)
    assert main(["solve", str(path), "--solver", "nosuch"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "nosuch" in err[0]


def _highspy_optimum(path) -> float:
    import highspy

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.readModel(str(path))
    h.run()
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    return h.getInfo().objective_function_value


@pytest.mark.parametrize("family", FAMILIES)
def test_write_model_writes_the_exact_model_without_solving(family, tmp_path, capsys,
                                                            monkeypatch):
    """``solve --method exact --write-model m.mps`` writes the model exact solves, names it, and
    solves nothing (no MILP of that model reaches HiGHS); read back into highspy, its optimum is
    the proven optimum (in the model's units), for cojob_network Model F's F*."""
    inst = optsched.generate(family, "tiny", 1)
    path = tmp_path / "i.json"
    optsched.dump(inst, path)
    model_path = tmp_path / "m.mps"
    def no_solve(*args, **kwargs):
        raise AssertionError("--write-model ran the method")

    monkeypatch.setattr(optsched, "solve", no_solve)
    assert main(["solve", str(path), "--method", "exact", "--write-model", str(model_path)]) == 0
    out = capsys.readouterr().out
    assert f"wrote {model_path}, not solved" in out and family in out
    monkeypatch.undo()
    value = _highspy_optimum(model_path)
    exact = optsched.solve(inst, "exact", time_limit=60)
    assert exact.status is SolveStatus.OPTIMAL
    model = optsched.get_method(family, "exact").build_model(inst)
    expected = exact.info["f_star"] if family == "cojob_network" else exact.objective
    assert tolerance.close(value * getattr(model, "objective_unit", 1.0), expected)


def test_write_model_of_a_method_without_a_declared_model_writes_what_it_solves(tmp_path, capsys):
    """hare declares no model; it solves its relaxation, which is written numbered (m.1.lp)."""
    inst = optsched.generate("hetero_gpu", "tiny", 0)
    path = tmp_path / "i.json"
    optsched.dump(inst, path)
    assert optsched.get_method("hetero_gpu", "hare").model is None
    assert main(["solve", str(path), "--method", "hare", "--write-model",
                 str(tmp_path / "m.lp")]) == 0
    captured = capsys.readouterr()
    assert "status" in captured.out and (tmp_path / "m.1.lp").exists()
    assert f"to {tmp_path / 'm.1.lp'}" in captured.err


def test_write_model_over_the_size_cap_is_one_line(tmp_path, capsys):
    """At paper scale hetero_gpu's exact model is over the cap: exit 2, one line saying why."""
    path = tmp_path / "i.json"
    optsched.dump(optsched.generate("hetero_gpu", "paper", 0), path)
    assert main(["solve", str(path), "--method", "exact", "--write-model",
                 str(tmp_path / "m.lp")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "model not built: size cap" in err[0]
    assert not (tmp_path / "m.lp").exists()


def test_write_model_refuses_other_suffixes(tmp_path):
    with pytest.raises(OptschedError, match=r"\.lp or \.mps"):
        with using(SolverOptions(write_model=str(tmp_path / "m.txt"))):
            optsched.solve(optsched.generate("hetero_gpu", "tiny", 3), "exact")


def test_certify_cli_prints_the_gap_and_the_steps(tmp_path, capsys):
    path = tmp_path / "i.json"
    optsched.dump(optsched.generate("ring_contention", "tiny", 0), path)
    assert main(["certify", str(path), "--time-limit", "30", "-o", str(tmp_path / "s.json")]) == 0
    out = capsys.readouterr().out
    assert "gap        0.00%" in out and "exact" in out
    assert optsched.load_schedule(tmp_path / "s.json", "ring_contention") is not None


def test_ratios_with_scip_proves_the_same_optima():
    """``optsched ratios --solver scip``: the workers solve with SCIP, OPT as with HiGHS."""
    pytest.importorskip("pyscipopt")
    from optsched.experiments.ratios import run_ratios

    def opts(solver):
        rows = run_ratios(families=["elastic_cluster"], preset="tiny", seeds=2, progress=False,
                          solver=solver)
        return {r["seed"]: r["opt"] for r in rows if r["method"] == "exact"}

    assert opts("scip") == pytest.approx(opts("highs"))


@pytest.mark.parametrize("solver", ["highs", "scip"])
def test_log_goes_to_stderr_not_stdout(solver, tmp_path, capfd):
    """``--log``: the solver's own output (Python or C level) is on stderr; stdout holds only the
    result, so ``optsched solve ... --log > result.txt`` stays readable."""
    if solver == "scip":
        pytest.importorskip("pyscipopt")
    path = tmp_path / "i.json"
    optsched.dump(optsched.generate("ring_contention", "tiny", 0), path)
    assert main(["solve", str(path), "--method", "exact", "--log", "--solver", solver]) == 0
    out, err = capfd.readouterr()
    assert out.startswith("method     exact") and "presolv" not in out.lower()
    assert "presolv" in err.lower() or "coefficient ranges" in err.lower()

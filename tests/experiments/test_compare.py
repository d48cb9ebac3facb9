"""run_compare on a small preset: rows, relative objective, table, csv and plot."""

from __future__ import annotations

import csv

import pytest

from optsched.experiments.compare import COMPARE_FIELDS, run_compare

from .conftest import FAMILY, wrap


def test_compare_tiny(hetero, tmp_path):
    rows, table = run_compare(FAMILY, preset="tiny", seeds=2, out=tmp_path, progress=False)
    methods = {m.name for m in hetero.spec().methods if m.kind in ("algorithm", "baseline")}
    assert {r["method"] for r in rows} == methods | {"lower_bound"}
    assert len(rows) == 2 * (len(methods) + 1)
    for r in rows:
        assert tuple(r) == COMPARE_FIELDS and r["status"] in ("feasible", "optimal")
        if r["method"] == "hare":
            assert r["relative"] == 1.0
    lines = table.splitlines()
    assert lines[0].split()[:3] == ["method", "kind", "n"] and "/ref" in lines[0]
    assert lines[2].startswith("hare *")                 # the paper's algorithm first
    assert "relative = objective / hare" in table
    with (tmp_path / "compare.csv").open() as fh:
        assert len(list(csv.DictReader(fh))) == len(rows)
    assert (tmp_path / "compare.png").stat().st_size > 1000


def test_compare_reports_failures(hetero):
    def boom(name):
        raise RuntimeError("no luck")

    hetero("gavel_fifo", func=wrap(hetero.spec().method("gavel_fifo"), before=boom))
    rows, table = run_compare(FAMILY, preset="tiny", seeds=1, progress=False)
    row = next(r for r in rows if r["method"] == "gavel_fifo")
    assert row["status"] == "error" and row["relative"] is None
    assert "gavel_fifo seed 0: RuntimeError: no luck" in table


def test_compare_shows_alg_over_lb(hetero):
    """Issue 14 item 6: the family's lower bound runs on every instance, every method gets
    objective / LB >= 1 (LB <= OPT <= ALG), and the table names the best gap."""
    rows, table = run_compare(FAMILY, preset="tiny", seeds=2, progress=False)
    for seed in (0, 1):
        lb = next(r["lower_bound"] for r in rows if r["seed"] == seed and r["kind"] == "bound")
        for r in rows:
            if r["seed"] == seed and r["kind"] != "bound":
                assert r["alg_lb"] == pytest.approx(r["objective"] / lb)
                assert r["alg_lb"] >= 1 - 1e-9
    assert "ALG/LB" in table.splitlines()[0]
    assert "best ALG/LB: " in table and "the best of lower_bound" in table


def test_relaxed_methods_get_no_alg_over_lb(hetero):
    from optsched.problems.hetero_gpu import verify

    hetero("gavel_fifo", verify=verify)   # pretend it solves a relaxed model
    rows, table = run_compare(FAMILY, preset="tiny", seeds=1, progress=False)
    assert all(r["alg_lb"] is None for r in rows if r["method"] == "gavel_fifo")
    assert all(r["alg_lb"] is not None for r in rows if r["method"] == "hare")

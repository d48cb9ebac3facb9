"""run_compare on a small preset: rows, relative objective, table, csv and plot."""

from __future__ import annotations

import csv

from optsched.experiments.compare import COMPARE_FIELDS, run_compare

from .conftest import FAMILY, wrap


def test_compare_tiny(hetero, tmp_path):
    rows, table = run_compare(FAMILY, preset="tiny", seeds=2, out=tmp_path, progress=False)
    methods = {m.name for m in hetero.spec().methods if m.kind in ("algorithm", "baseline")}
    assert {r["method"] for r in rows} == methods and len(rows) == 2 * len(methods)
    for r in rows:
        assert tuple(r) == COMPARE_FIELDS and r["status"] == "feasible"
        if r["method"] == "hare":
            assert r["relative"] == 1.0
    lines = table.splitlines()
    assert lines[0].split()[:3] == ["method", "kind", "n"] and "/ hare" in lines[0]
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

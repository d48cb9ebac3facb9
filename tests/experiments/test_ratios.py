"""run_ratios: row contents, invariant checks, resume, SIGKILL + restart, table, skipped families."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from optsched.experiments import ratios
from optsched.experiments.ratios import ROW_KEYS, format_table, run_ratios
from optsched.experiments.store import read_rows, row_key
from optsched.experiments.table import DETERMINISTIC_FIELDS, summarize
from optsched.result import SolveStatus

from .conftest import FAMILY, KEEP, wrap

RUN = dict(families=[FAMILY], seeds=2, progress=False)


def _by(rows, method):
    return [r for r in rows if r["method"] == method]


def test_rows_have_the_keys_and_hold_the_invariants(hetero, tmp_path):
    rows = run_ratios(**RUN, out=tmp_path)
    assert len(rows) == 2 * len(KEEP)
    for row in rows:
        assert tuple(row) == ROW_KEYS
        assert set(row["versions"]) >= {"optsched", "pyomo", "highspy"}
        assert row["status"] not in ("error", "violation"), row
        assert row["opt"] is not None and row["time_limit"] == ratios.DEFAULT_TIME_LIMIT
    for row in _by(rows, "hare"):
        assert row["kind"] == "algorithm" and row["checks"]["verified"] is True
        assert row["checks"]["opt_le_alg"] is True and row["ratio"] >= 1 - 1e-9
        assert row["ratio"] == pytest.approx(row["objective"] / row["opt"])
        assert row["guarantee"] is not None and row["checks"]["within_guarantee"] is True
    for row in _by(rows, "lower_bound"):
        assert row["ratio"] == pytest.approx(row["lower_bound"] / row["opt"])
        assert row["checks"]["lb_le_opt"] is True and row["objective"] is None
    for row in _by(rows, "exact"):
        assert row["status"] == "optimal" and row["ratio"] is None
        assert row["opt"] == row["objective"]
    assert [r["method"] for r in rows[:len(KEEP)]][0] == "exact"
    # files
    stored = read_rows(tmp_path / "results.jsonl")
    assert sorted(map(row_key, stored)) == sorted(map(row_key, rows))
    assert (tmp_path / "summary.csv").read_text().startswith("family,method,kind,instances")
    assert (tmp_path / "ratios.png").stat().st_size > 1000


def test_resume_skips_finished_rows(hetero, tmp_path, monkeypatch):
    first = run_ratios(**RUN, out=tmp_path)
    path = tmp_path / "results.jsonl"
    lines = path.read_text().splitlines()
    # everything finished: no task runs at all
    real = ratios.run_instance
    monkeypatch.setattr(ratios, "run_instance", lambda task: pytest.fail(f"re-ran {task}"))
    again = run_ratios(**RUN, out=tmp_path)
    assert again == first and path.read_text().splitlines() == lines
    monkeypatch.setattr(ratios, "run_instance", real)
    # drop one algorithm row: only that row is redone, the stored exact optimum is reused
    dropped = [ln for ln in lines if json.loads(ln)["method"] == "hare"][0]
    path.write_text("\n".join(ln for ln in lines if ln != dropped) + "\n")
    calls = []
    for entry in hetero.spec().methods:
        hetero(entry.name, func=wrap(entry, before=calls.append))
    resumed = run_ratios(**RUN, out=tmp_path)
    assert calls == ["hare"]
    assert len(path.read_text().splitlines()) == len(lines)
    assert _strip(resumed) == _strip(first)


def _strip(rows):
    return [{k: v for k, v in r.items() if k != "runtime_s"} for r in rows]


def test_sigkill_and_restart_loses_and_duplicates_nothing(hetero, tmp_path):
    seeds = 5
    out = tmp_path / "killed"
    code = ("from optsched import registry; "
            "from tests.experiments.conftest import trimmed; "
            f"registry._FAMILIES[{FAMILY!r}] = trimmed(registry.get_family({FAMILY!r})); "
            "from optsched.experiments.ratios import run_ratios; "
            f"run_ratios(families=[{FAMILY!r}], seeds={seeds}, out={str(out)!r}, progress=False)")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    path = out / "results.jsonl"
    deadline = time.monotonic() + 300  # a wait, not a claim: ~5 s idle, far more under a CPU hog
    try:
        while time.monotonic() < deadline:
            if path.exists() and len(path.read_bytes().splitlines()) >= 3:
                break
            assert proc.poll() is None, proc.stderr.read().decode()
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    n_before = len(read_rows(path))
    assert 3 <= n_before < seeds * len(KEEP)
    with path.open("ab") as fh:                      # the worst a SIGKILL can leave: a torn line
        fh.write(b'{"family": "hetero_gpu", "preset": "tiny", "seed": 0, "meth')
    rows = run_ratios(families=[FAMILY], seeds=seeds, out=out, progress=False)
    lines = path.read_text().splitlines()
    keys = [row_key(json.loads(line)) for line in lines]
    assert len(keys) == len(set(keys)) == len(rows) == seeds * len(KEEP)
    reference = run_ratios(families=[FAMILY], seeds=seeds, out=tmp_path / "ref", progress=False)
    assert _summary(rows) == _summary(reference)
    assert _strip(rows) == _strip(reference)
    assert (out / "summary.csv").read_text().count("\n") == len(KEEP) + 1


def _summary(rows):
    return [{k: s[k] for k in DETERMINISTIC_FIELDS} for s in summarize(rows)]


def test_bad_schedule_is_a_violation_not_swallowed(hetero):
    from optsched.problems.hetero_gpu import Schedule

    def broken(out):
        runs = tuple(dataclasses.replace(t, gpu=0, start=0.0) for t in out.schedule.runs)
        return dataclasses.replace(out, schedule=Schedule(runs))

    hetero("hare", func=wrap(hetero.spec().method("hare"), after=broken))
    rows = run_ratios(**RUN)
    bad = _by(rows, "hare")
    assert all(r["status"] == "violation" and r["checks"]["verified"] is False for r in bad)
    assert all(r["error"].startswith("InfeasibleSchedule: (") for r in bad)
    table = format_table(rows)
    line = next(ln for ln in table.splitlines() if ln.startswith("hare "))
    assert line.split()[-4] == "2"                   # viol column
    preset = bad[0]["preset"]
    assert "VIOLATIONS" in table and f"hetero_gpu/hare {preset} seed 0: InfeasibleSchedule" in table


def test_ratio_above_guarantee_is_marked(hetero):
    hetero("sched_allox", guarantee=lambda inst: 1.0)
    rows = run_ratios(**RUN)
    over = [r for r in _by(rows, "sched_allox") if r["ratio"] > 1 + 1e-9]
    assert over, "sched_allox is optimal on both instances: pick other seeds"
    assert all(r["checks"]["within_guarantee"] is False for r in over)
    table = format_table(rows)
    line = next(ln for ln in table.splitlines() if "sched_allox" in ln)
    assert f"1 !{len(over)}" in line
    assert "above the claimed guarantee" in table


def test_lower_bound_above_opt_is_a_violation(hetero):
    def too_high(out):
        return dataclasses.replace(out, lower_bound=out.lower_bound * 2 + 1)

    hetero("lower_bound", func=wrap(hetero.spec().method("lower_bound"), after=too_high))
    rows = run_ratios(**RUN)
    assert all(r["checks"]["lb_le_opt"] is False for r in _by(rows, "lower_bound"))
    assert "lb_le_opt false" in format_table(rows)


def test_exact_time_out_is_never_optimal(hetero):
    def timed_out(out):
        return dataclasses.replace(out, status=SolveStatus.TIME_LIMIT)

    hetero("exact", func=wrap(hetero.spec().method("exact"), after=timed_out))
    rows = run_ratios(**RUN)
    assert all(r["opt"] is None and r["ratio"] is None for r in rows)
    summary = {s["method"]: s for s in summarize(rows)}
    assert summary["exact"]["timeouts"] == 2 and summary["hare"]["measured"] == 0
    assert "time-outs: exact hit its time limit on 2 instance(s)" in format_table(rows)


def test_time_limited_method_rows_are_flagged(hetero):
    """An algorithm cut by its deadline (status time_limit) keeps its ratio, counted under t/o and
    named in a note: its result depends on the time limit and on the machine's load (issue 22)."""
    def cut(out):
        return dataclasses.replace(out, status=SolveStatus.TIME_LIMIT)

    hetero("hare", func=wrap(hetero.spec().method("hare"), after=cut))
    rows = run_ratios(**RUN)
    hare = _by(rows, "hare")
    assert hare and all(r["status"] == "time_limit" for r in hare)
    assert {s["method"]: s for s in summarize(rows)}["hare"]["timeouts"] == len(hare)
    table = format_table(rows)
    assert f"time-limited: {len(hare)} row(s) of other methods hit the time limit" in table
    assert f"{FAMILY}/hare" in table.split("time-limited:")[1]


def test_exception_is_a_failure_row_and_is_redone(hetero, tmp_path):
    def boom(name):
        raise RuntimeError("boom")

    good = hetero.spec().method("gavel_fifo").func
    hetero("gavel_fifo", func=wrap(hetero.spec().method("gavel_fifo"), before=boom))
    rows = run_ratios(**RUN, out=tmp_path)
    failed = _by(rows, "gavel_fifo")
    assert all(r["status"] == "error" and "RuntimeError: boom" in r["error"] for r in failed)
    assert "failures:" in format_table(rows)
    hetero("gavel_fifo", func=good)
    rows = run_ratios(**RUN, out=tmp_path)
    assert all(r["status"] == "feasible" for r in _by(rows, "gavel_fifo"))
    assert len(read_rows(tmp_path / "results.jsonl")) == len(rows)


def test_relaxed_method_is_listed_as_not_comparable(hetero):
    hetero("gavel_fifo", verify=lambda inst, schedule: 0.0)   # its own checker: a relaxed model
    rows = run_ratios(families=[FAMILY], seeds=1, progress=False)
    listed = [r for r in rows if r["status"] == "not comparable"]
    assert [r["method"] for r in listed] == ["gavel_fifo"]
    assert not [r for r in rows if r["method"] == "gavel_fifo" and r["seed"] >= 0]
    table = format_table(rows)
    assert any("gavel_fifo" in ln and "not comparable" in ln for ln in table.splitlines())


def test_unknown_family_is_a_user_error():
    from optsched.errors import InvalidInstance

    with pytest.raises(InvalidInstance, match="unknown family 'no_such_family'"):
        run_ratios(families=["no_such_family"], seeds=1, progress=False)


def test_unknown_preset_is_a_user_error(hetero):
    from optsched.errors import InvalidInstance

    with pytest.raises(InvalidInstance, match="no preset 'huge'"):
        run_ratios(families=[FAMILY], preset="huge", seeds=1, progress=False)


def test_format_table_layout():
    row = dict.fromkeys(ROW_KEYS)
    rows = [
        {**row, "family": "f", "preset": "tiny", "seed": 0, "method": "exact", "kind": "exact",
         "status": "optimal", "objective": 10.0, "opt": 10.0, "runtime_s": 0.5, "checks": {}},
        {**row, "family": "f", "preset": "tiny", "seed": 0, "method": "alg", "kind": "algorithm",
         "status": "feasible", "objective": 12.0, "opt": 10.0, "ratio": 1.2, "guarantee": 1.5,
         "runtime_s": 0.1, "checks": {"within_guarantee": True}},
        {**row, "family": "f", "preset": "tiny", "seed": 0, "method": "lb", "kind": "bound",
         "status": "optimal", "lower_bound": 8.0, "opt": 10.0, "ratio": 0.8, "runtime_s": 0.2,
         "checks": {"lb_le_opt": True}},
    ]
    lines = format_table(rows).splitlines()
    assert lines[0] == "f: 1 instance(s) (tiny), exact optimum proven on 1/1"
    assert lines[1].split()[:3] == ["method", "kind", "on"]
    for name in ("ratio mean", "worst", "guarantee", "viol", "fail", "t/o", "median s"):
        assert name in lines[1]
    assert lines[3].split()[:3] == ["exact", "exact", "1/1"]
    assert lines[4].split() == ["alg", "alg", "1/1", "1.2000", "1.2000", "1.5", "0", "0", "0",
                                "0.100"]
    assert lines[5].split()[:5] == ["lb", "bound", "1/1", "0.8000", "0.8000"]
    assert "3 rows, 1 instances" in format_table(rows)
    assert all(len(ln) == len(ln.rstrip()) and len(ln) <= 100 for ln in lines)
    wide = format_table(rows, wide=True).splitlines()
    assert wide[0].split()[:4] == ["family", "method", "kind", "n"]
    for name in ("ALG/OPT mean", "guarantee", "LB/OPT mean", "viol", "fail", "t/o"):
        assert name in wide[0]
    alg = wide[3].split()
    assert alg[:4] == ["f", "alg", "algorithm", "1"] and alg[4:7] == ["1.2000", "1.2000", "1.5"]
    lb = wide[4].split()
    assert lb[:6] == ["f", "lb", "bound", "1", "0.8000", "0.8000"]


def test_progress_bar_only_when_asked(hetero, capsys):
    run_ratios(**{**RUN, "seeds": 1, "progress": False})
    assert capsys.readouterr().err == ""             # -q: nothing on stderr
    run_ratios(**{**RUN, "seeds": 1, "progress": True})
    assert "1/1" in capsys.readouterr().err


def test_verbose_progress_names_every_finished_instance(hetero, capsys):
    """-v: one line per finished instance, with its reference's status and OPT, then the count."""
    rows = run_ratios(**{**RUN, "progress": "verbose"})
    lines = capsys.readouterr().err.splitlines()
    seeds = sorted({r["seed"] for r in rows})
    for seed in seeds:
        line = next(ln for ln in lines if f" seed {seed}:" in ln)
        opt = next(r["opt"] for r in rows if r["seed"] == seed and r["method"] == "exact")
        assert line.startswith(f"ratios: {FAMILY} ") and f"OPT {opt:,.10g}" in line
    assert lines[-1].startswith(f"ratios: {len(seeds)}/{len(seeds)} done")


def test_progress_lines_when_stderr_is_not_a_terminal(hetero, capsys):
    """issue 21 item 5: under a pipe or a log (pytest's stderr) a long run still reports, as
    plain lines ("ratios: k/n done, t s"), at most every LINE_EVERY seconds and at the end."""
    run_ratios(**{**RUN, "seeds": 1, "progress": None})
    lines = capsys.readouterr().err.splitlines()
    assert lines and lines[-1].startswith("ratios: 1/1 done")

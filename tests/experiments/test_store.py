"""The resumable JSONL store: partial lines, first-row-wins, error rows redone, folder lock."""

from __future__ import annotations

import json

import pytest

from optsched.errors import OptschedError
from optsched.experiments.store import ResultStore, read_rows, row_key


def _row(seed, method="m", status="optimal"):
    return {"family": "f", "preset": "tiny", "seed": seed, "method": method, "status": status}


def test_append_and_reload(tmp_path):
    with ResultStore(tmp_path) as store:
        assert store.append(_row(0))
        assert not store.append(_row(0))          # same key: not written twice
        assert store.append(_row(1))
    lines = (tmp_path / "results.jsonl").read_text().splitlines()
    assert len(lines) == 2 and all(json.loads(line) for line in lines)
    with ResultStore(tmp_path) as store:
        assert ("f", "tiny", 0, "m") in store and ("f", "tiny", 2, "m") not in store


def test_partial_last_line_is_ignored_and_dropped(tmp_path):
    path = tmp_path / "results.jsonl"
    path.write_text(json.dumps(_row(0)) + "\n" + '{"family": "f", "preset": "ti')
    assert [row_key(r) for r in read_rows(path)] == [("f", "tiny", 0, "m")]
    with ResultStore(tmp_path) as store:
        assert len(store.rows) == 1
        store.append(_row(1))
    lines = path.read_text().splitlines()
    assert [json.loads(line)["seed"] for line in lines] == [0, 1]   # the fragment is gone


def test_partial_only_line(tmp_path):
    (tmp_path / "results.jsonl").write_text('{"fam')
    with ResultStore(tmp_path) as store:
        assert store.rows == {}
        store.append(_row(0))
    assert len(read_rows(tmp_path / "results.jsonl")) == 1


def test_garbage_line_in_the_middle_is_reported_not_skipped(tmp_path):
    """Issue 22 R10: a line that is not a row stops the run (count, line numbers); the file is
    left as it is."""
    path = tmp_path / "results.jsonl"
    path.write_text(json.dumps(_row(0)) + "\nnot json\n" + json.dumps(_row(1)) + "\n")
    before = path.read_bytes()
    with pytest.raises(OptschedError, match=r"1 line\(s\) are not result rows \(line\(s\) 2;"):
        read_rows(path)
    with pytest.raises(OptschedError, match="line 2: not JSON"):
        ResultStore(tmp_path).open()
    assert path.read_bytes() == before
    with ResultStore(tmp_path / "other"):        # the lock was released
        pass


@pytest.mark.parametrize("seed, shown", [("3", '"3"'), (3.7, "3.7"), (3.0, "3.0"), (-1, "-1"),
                                         (True, "true"), (None, "null")])
def test_a_row_with_a_bad_seed_is_reported_not_coerced(tmp_path, seed, shown):
    """Issue 22 R3/R10: a string seed raised TypeError on resume; 3.7 was taken as seed 3."""
    path = tmp_path / "results.jsonl"
    path.write_text(json.dumps(_row(0)) + "\n" + json.dumps({**_row(1), "seed": seed}) + "\n")
    before = path.read_bytes()
    with pytest.raises(OptschedError, match=f"line 2: seed must be an integer >= 0, got {shown}"):
        ResultStore(tmp_path).open()
    assert path.read_bytes() == before


def test_a_partial_line_that_is_not_an_object_start_is_reported(tmp_path):
    path = tmp_path / "results.jsonl"
    path.write_text(json.dumps(_row(0)) + "\ngarbage")
    with pytest.raises(OptschedError, match=r"line\(s\) 2;"):
        ResultStore(tmp_path).open()
    assert path.read_text().endswith("garbage")


def test_a_complete_last_row_without_newline_is_kept(tmp_path):
    path = tmp_path / "results.jsonl"
    path.write_text(json.dumps(_row(0)) + "\n" + json.dumps(_row(1)))
    with ResultStore(tmp_path) as store:
        assert ("f", "tiny", 1, "m") in store
        store.append(_row(2))
    assert [json.loads(line)["seed"] for line in path.read_text().splitlines()] == [0, 1, 2]


def test_results_that_is_a_directory_is_one_line(tmp_path):
    (tmp_path / "results.jsonl").mkdir()
    with pytest.raises(OptschedError, match="results.jsonl is not a regular file"):
        ResultStore(tmp_path).open()


def test_error_rows_are_redone_and_superseded(tmp_path):
    with ResultStore(tmp_path) as store:
        store.append(_row(0, status="error"))
    with ResultStore(tmp_path) as store:
        assert ("f", "tiny", 0, "m") not in store          # unfinished
        assert store.append(_row(0, status="feasible"))
    rows = read_rows(tmp_path / "results.jsonl")
    assert len(rows) == 1 and rows[0]["status"] == "feasible"


def test_lock_refuses_a_second_writer(tmp_path):
    import subprocess
    import sys

    code = ("import sys, time; from optsched.experiments.store import ResultStore; "
            f"s = ResultStore({str(tmp_path)!r}); s.open(); print('locked', flush=True); "
            "sys.stdin.read()")
    holder = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(OptschedError, match="another optsched run"):
            ResultStore(tmp_path).open()
    finally:
        holder.kill()
        holder.wait()
    with ResultStore(tmp_path):                            # freed when the holder died
        pass


def test_numpy_scalars_are_stored_as_plain_json(tmp_path):
    import numpy as np

    with ResultStore(tmp_path) as store:
        store.append({**_row(0), "objective": np.float64(2.5), "checks": {"ok": np.bool_(True)}})
    row = read_rows(tmp_path / "results.jsonl")[0]
    assert row["objective"] == 2.5 and row["checks"]["ok"] is True

"""The optsched CLI: commands, JSON output, exit codes, no traceback on bad input."""

import json
import subprocess
import sys

import pytest

from optsched.cli import main
from optsched.result import RESULT_KEYS

from tests.conftest import DATA


def run(*args):
    proc = subprocess.run([sys.executable, "-m", "optsched.cli", *args], capture_output=True, text=True)
    return proc.returncode, proc.stdout, proc.stderr


def test_families_and_methods(capsys):
    assert main(["families"]) == 0
    assert "hetero_gpu" in capsys.readouterr().out
    assert main(["methods", "hetero_gpu", "--json"]) == 0
    entries = json.loads(capsys.readouterr().out)
    assert {"exact", "lower_bound", "hare", "sched_allox"} <= {e["name"] for e in entries}
    assert {e["kind"] for e in entries} == {"exact", "bound", "algorithm", "baseline"}


def test_generate_solve_verify_round_trip(tmp_path, capsys):
    inst, sched = tmp_path / "i.json", tmp_path / "s.json"
    assert main(["generate", "hetero_gpu", "--seed", "2", "-o", str(inst)]) == 0
    assert main(["solve", str(inst), "--method", "exact", "--json", "-o", str(sched)]) == 0
    result = json.loads(capsys.readouterr().out)
    assert set(result) == set(RESULT_KEYS) and result["status"] == "optimal"
    assert main(["verify", str(inst), str(sched)]) == 0
    assert f"{result['objective']:.10g}" in capsys.readouterr().out


@pytest.mark.parametrize("args, fragment", [
    (["solve", "/nonexistent.json"], "No such file"),
    (["solve", str(DATA / "hetero_gpu" / "broken" / "missing_weight.json")], "jobs[1]: missing field 'weight'"),
    (["solve", str(DATA / "hetero_gpu" / "worked_example.json"), "--method", "nope"], "no method 'nope'"),
    (["verify", str(DATA / "hetero_gpu" / "worked_example.json"), str(DATA / "hetero_gpu" / "worked_example.json")],
     "schedule"),
    (["generate", "hetero_gpu", "--preset", "huge"], "preset"),
    (["solve", str(DATA / "hetero_gpu" / "worked_example.json"), "--time-limit", "-1"], "must be > 0"),
])
def test_user_errors_exit_2_with_one_line(args, fragment):
    code, out, err = run(*args)
    assert code == 2
    assert fragment in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_bad_json_file(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    code, _, err = run("solve", str(bad))
    assert code == 2 and "invalid JSON at line 1" in err and "Traceback" not in err


def test_verify_reports_infeasible_schedule(tmp_path):
    sched = tmp_path / "s.json"
    sched.write_text(json.dumps({"family": "hetero_gpu", "format_version": 1, "tasks": [[0, 0, 0, 0, 0]]}))
    code, _, err = run("verify", str(DATA / "hetero_gpu" / "worked_example.json"), str(sched))
    assert code == 2 and "(5)" in err

"""The optsched CLI: commands, JSON output, exit codes, no traceback on bad input."""

import json
import subprocess
import sys

import pytest

from optsched.cli import main
from optsched.result import RESULT_KEYS

from tests.conftest import DATA
from tests.timing import cpu_time


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


# --------------------------------------------------------------------------- help, version, errors
# (issue 15 items 5 and the CLI part of "Found"): in-process where possible, so the whole block
# costs one registry import; the subprocess tests check what only a real process shows.

from optsched import __version__  # noqa: E402
from optsched.registry import families  # noqa: E402

COMMANDS = ("families", "methods", "generate", "solve", "verify", "plot", "ratios", "compare",
            "worst")
WORKED = str(DATA / "hetero_gpu" / "worked_example.json")


def call(capsys, *args):
    """Run ``main`` in this process: (exit code, stdout, stderr, CPU seconds)."""
    start = cpu_time()
    try:
        code = main(list(args))
    except SystemExit as exc:  # argparse's --help, --version and usage errors
        code = exc.code
    seconds = cpu_time() - start
    out, err = capsys.readouterr()
    return code, out, err, seconds


def test_top_level_help_lists_every_command_and_cites_nothing_outside_the_repo(capsys):
    code, out, err, _ = call(capsys, "--help")
    assert code == 0 and not err
    for command in COMMANDS:
        assert f"\n    {command} " in out
    assert "--version" in out
    assert out.rstrip().endswith(".")  # a finished sentence, not one cut mid-way
    for outside in ("DESIGN.md", "digest", "shared/", "specs/", "seeds/"):
        assert outside not in out


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_help_has_a_description_choices_and_defaults(capsys, command):
    code, out, err, _ = call(capsys, command, "--help")
    assert code == 0 and not err
    usage, _, rest = out.partition("\n\n")
    assert usage.startswith(f"usage: optsched {command}")
    description = rest.split("\n\n")[0]
    assert len(description) > 40 and not description.startswith(("positional", "options"))
    names = list(families())
    if command in ("methods", "generate", "compare", "ratios"):
        assert ", ".join(names) in " ".join(out.split())  # the family choices are shown
    if command in ("generate", "compare", "ratios"):
        assert "tiny, small, paper" in out
    for option in ("--seed", "--seeds", "--time-limit", "--workers", "--preset", "--output"):
        for line in out.split("\n  " + option)[1:]:  # every option with a default says which
            assert "default" in line.split("\n  -")[0]
    for outside in ("DESIGN.md", "digest", "shared/", "specs/", "seeds/"):
        assert outside not in out


def test_ratios_help_shows_the_real_defaults(capsys):
    from optsched.experiments.ratios import DEFAULT_TIME_LIMIT

    _, out, _, _ = call(capsys, "ratios", "--help")
    text = " ".join(out.split())
    seeds = {f.ratio_seeds for f in families().values()}
    presets = {f.ratio_preset for f in families().values()}
    if len(seeds) == 1:
        assert f"(default: {seeds.pop()} for every family)" in text
    else:
        assert all(f"{n} {f.ratio_seeds}" in text for n, f in families().items())
    if len(presets) == 1:
        assert f"(default: {presets.pop()} for every family)" in text
    else:
        assert all(f"{n} {f.ratio_preset}" in text for n, f in families().items())
    assert f"default: {DEFAULT_TIME_LIMIT:g};" in text
    assert "default: every family" in text


def test_version(capsys):
    code, out, _, _ = call(capsys, "--version")
    assert code == 0 and out.strip() == f"optsched {__version__}"


def _write(path, data: bytes):
    path.write_bytes(data)
    return str(path)


@pytest.mark.parametrize("case, fragment", [
    ("missing_dir", "does not exist"),
    ("seed_negative", "--seed: must be >= 0"),
    ("solve_seed_negative", "--seed: must be >= 0"),
    ("time_limit_inf", "--time-limit: must be > 0 and finite"),
    ("deep", "nested too deeply"),
    ("latin1", "not UTF-8"),
    ("family_list", "instance.family: must be a string naming a family, got an array"),
    ("schedule_family_list", "schedule.family"),
    ("big_int", "beyond the float range"),
    ("big_float", "beyond the float range"),
    ("nan", "no NaN or Infinity"),
    ("plot_missing_dir", "does not exist"),
    ("plot_bad_suffix", "must end in one of .png"),
    ("solve_plot_missing_dir", "does not exist"),
    ("output_is_dir", "is a directory"),
    ("unknown_family", "invalid choice: 'nope'"),
    ("compare_out", "--out: cannot create"),
    ("ratios_out", "--out: cannot create"),
])
def test_bad_input_is_one_line_exit_2(tmp_path, capsys, case, fragment):
    good = WORKED
    text = (DATA / "hetero_gpu" / "worked_example.json").read_text()
    args = {
        "missing_dir": ["generate", "hetero_gpu", "-o", str(tmp_path / "no" / "such" / "i.json")],
        "seed_negative": ["generate", "hetero_gpu", "--seed", "-1"],
        "solve_seed_negative": ["solve", good, "--seed", "-3"],
        "time_limit_inf": ["solve", good, "--time-limit", "inf"],
        "deep": ["solve", _write(tmp_path / "d.json", b"[" * 100_000 + b"]" * 100_000)],
        "latin1": ["solve", _write(tmp_path / "l.json", '{"family": "h\xe9"}'.encode("latin-1"))],
        "family_list": ["solve", _write(tmp_path / "f.json", b'{"family": ["hetero_gpu"]}')],
        "schedule_family_list": ["verify", good,
                                 _write(tmp_path / "s.json", b'{"family": ["hetero_gpu"], '
                                                       b'"format_version": 1, "tasks": []}')],
        "big_int": ["solve", _write(tmp_path / "b.json", text.replace(
            '"weight": ', '"weight": 1' + "0" * 400 + ', "w": ', 1).encode())],
        "big_float": ["solve", _write(tmp_path / "bf.json", b'{"family": "hetero_gpu", "x": 1e999}')],
        "nan": ["solve", _write(tmp_path / "n.json", b'{"family": "hetero_gpu", "x": NaN}')],
        "plot_missing_dir": ["plot", good, good, "-o", str(tmp_path / "no" / "g.png")],
        "plot_bad_suffix": ["plot", good, good, "-o", str(tmp_path / "g.txt")],
        "solve_plot_missing_dir": ["solve", good, "--plot", str(tmp_path / "no" / "g.png")],
        "output_is_dir": ["generate", "hetero_gpu", "-o", str(tmp_path)],
        "unknown_family": ["methods", "nope"],
        "compare_out": ["compare", "hetero_gpu", "--out", str(tmp_path / "f.json" / "x")],
        "ratios_out": ["ratios", "--family", "hetero_gpu", "--out", str(tmp_path / "f.json" / "x")],
    }[case]
    if case.endswith("_out"):
        (tmp_path / "f.json").write_text("{}")  # a file where a directory is needed
    code, out, err, seconds = call(capsys, *args)
    assert code == 2, (out, err)
    assert fragment in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
    assert seconds < 10
    assert not (tmp_path / "no").exists()  # nothing created on the way to an error


def test_bad_input_in_a_real_process_is_one_line_without_traceback(tmp_path):
    bad = tmp_path / "l.json"
    bad.write_bytes(b"\xff\xfe{")
    start = cpu_time()
    code, out, err = run("verify", str(bad), str(bad))
    assert code == 2 and not out and "Traceback" not in err
    assert err.strip() == f"optsched: error: instance file {bad}: not UTF-8 text (byte 0xff at offset 0)"
    assert cpu_time() - start < 30


def test_closed_pipe_is_quiet():
    """``optsched generate ... | head -1``: no BrokenPipeError traceback (the output is > 64 KB, so
    the writer really meets the closed pipe)."""
    proc = subprocess.Popen([sys.executable, "-m", "optsched.cli", "generate", "hetero_gpu",
                             "--preset", "paper"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout.readline().strip() == b"{"
    proc.stdout.close()
    err = proc.stderr.read().decode()
    code = proc.wait(timeout=120)
    assert err == "" and code == 141


@pytest.mark.parametrize("family", ["hetero_gpu", "edge_cloud", "ring_contention",
                                    "elastic_cluster", "cojob_network"])
def test_methods_table_fits_100_columns(family, capsys):
    """issue 21 item 5: every table at most 100 columns by default; --wide for one line each."""
    assert main(["methods", family]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:2] == ["method", "kind"] and max(map(len, lines)) <= 100
    assert main(["methods", family, "--wide"]) == 0
    wide = capsys.readouterr().out.splitlines()
    from optsched.registry import get_family

    assert len(wide) == len(get_family(family).methods) + 1


def test_worst_hypothesis_is_listed_checked_and_used(tmp_path, capsys):
    """``optsched worst --hypothesis NAME`` (issue 23): the names in --help, an unknown name or
    one about another family is one line with exit 2, and a replay refuses an instance outside
    the claim's statement while it reproduces one inside it."""
    from optsched.experiments.worst.hypotheses import HYPOTHESES

    code, out, _, _ = call(capsys, "worst", "--help")
    assert code == 0 and all(name in out for name in HYPOTHESES)
    found = str(DATA / "cojob_network" / "refute_thm2_found.json")
    base = ["worst", "cojob_network", "--method", "pda", "--target", "violation"]
    code, out, err, _ = call(capsys, *base, "--hypothesis", "nope", "--replay", found)
    assert code == 2 and not out and "unknown 'nope'" in err and "released_at_zero" in err
    assert len(err.strip().splitlines()) == 1
    code, _, err, _ = call(capsys, *base, "--hypothesis", "alpha_defined", "--replay", found)
    assert code == 2 and "is about hetero_gpu" in err
    late = json.loads(open(found).read())
    late["cojobs"][0]["arrival"] = 1
    late_path = tmp_path / "late.json"
    late_path.write_text(json.dumps(late))
    code, _, err, _ = call(capsys, *base, "--hypothesis", "released_at_zero", "--replay",
                           str(late_path))
    assert code == 2 and "outside the claim's statement (released_at_zero)" in err
    code, out, err, _ = call(capsys, *base, "--hypothesis", "released_at_zero", "--replay", found)
    assert code == 0 and "the claim FAILS" in out

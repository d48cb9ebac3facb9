"""Gantt charts (optsched.gantt, each family's ``bars``, ``optsched plot`` and ``solve --plot``)."""

import dataclasses
import json

import pytest

from optsched import generate, solve
from optsched.cli import main
from optsched.gantt import Bar, _lanes, _natural_key, draw
from optsched.registry import get_family

from tests.conftest import DATA, READY

PNG = b"\x89PNG\r\n\x1a\n"


def test_bar_is_frozen_with_an_empty_default_label():
    bar = Bar("gpu 0", 0.0, 1.5, 3)
    assert bar.label == ""
    with pytest.raises(dataclasses.FrozenInstanceError):
        bar.start = 2.0


def test_devices_sort_naturally():
    names = ["gpu 10", "gpu 2", "gpu 1", "edge 0", "cloud 3"]
    assert sorted(names, key=_natural_key) == ["cloud 3", "edge 0", "gpu 1", "gpu 2", "gpu 10"]


def test_overlapping_bars_of_one_device_get_lanes_and_touching_ones_do_not():
    bars = [Bar("s", 0, 2, 0), Bar("s", 1, 3, 1), Bar("s", 2, 4, 2), Bar("t", 0, 1, 0),
            Bar("t", 1, 2, 1)]
    ypos, thick = _lanes(bars, {"s": 0, "t": 1})
    assert ypos[0] != ypos[1] and ypos[0] == ypos[2]  # bar 2 reuses bar 0's lane (touching)
    assert ypos[3] == ypos[4] == 1.0 and thick[3] > thick[0]  # t needs one lane only
    assert all(-0.5 < y < 0.5 for y in ypos[:3])


def test_draw_writes_an_image_with_idle_rows_and_many_jobs(tmp_path):
    bars = [Bar("idle", 0, 0, -1)] + [Bar(f"d{j % 7}", j, j + 1.5, j, f"j{j}") for j in range(40)]
    draw(bars, "forty jobs", tmp_path / "g.png")
    draw([], "nothing", tmp_path / "empty.svg")
    assert (tmp_path / "g.png").read_bytes().startswith(PNG)
    assert b"<svg" in (tmp_path / "empty.svg").read_bytes()


@pytest.mark.parametrize("family", READY)
def test_plot_every_family(tmp_path, capsys, family):
    """generate tiny -> solve with the default method (and --plot) -> plot: two PNGs, and the
    family's bars cover every device row and only the schedule's jobs."""
    inst, sched = tmp_path / "i.json", tmp_path / "s.json"
    assert main(["generate", family, "-o", str(inst)]) == 0
    assert main(["solve", str(inst), "-o", str(sched), "--plot", str(tmp_path / "solve.png")]) == 0
    assert main(["plot", str(inst), str(sched), "-o", str(tmp_path / "gantt.png")]) == 0
    out = capsys.readouterr().out
    assert "feasible; objective" in out and "wrote" in out
    for name in ("solve.png", "gantt.png"):
        assert (tmp_path / name).read_bytes().startswith(PNG)

    fam = get_family(family)
    instance = generate(family, "tiny", 0)
    result = solve(instance, fam.default_method)
    bars = fam.problem.bars(instance, result.schedule)
    drawn = [b for b in bars if b.end > b.start]
    assert drawn and all(isinstance(b, Bar) for b in bars)
    assert all(b.job >= 0 for b in drawn) and all(b.job == -1 for b in bars if b.end <= b.start)
    assert min(b.start for b in drawn) >= 0


def test_bars_follow_the_hetero_gpu_semantics():
    """A task holds its GPU for exactly T^c (sync does not occupy it); every GPU has a row."""
    fam = get_family("hetero_gpu")
    instance = generate("hetero_gpu", "tiny", 1)
    schedule = solve(instance, "hare").schedule
    bars = fam.problem.bars(instance, schedule)
    assert len({b.device for b in bars}) == instance.n_gpus
    drawn = [b for b in bars if b.end > b.start]
    assert len(drawn) == len(instance.tasks)
    for b, t in zip(drawn, schedule.runs):
        assert b.end - b.start == pytest.approx(instance.jobs[t.job].train_time[t.gpu])


def test_bars_of_ring_contention_use_each_gpu_once_at_a_time():
    fam = get_family("ring_contention")
    instance = generate("ring_contention", "tiny", 2)
    schedule = solve(instance, fam.default_method).schedule
    bars = [b for b in fam.problem.bars(instance, schedule) if b.end > b.start]
    assert sum(b.end - b.start for b in bars) > 0
    by_gpu = {}
    for b in bars:
        by_gpu.setdefault(b.device, []).append((b.start, b.end))
    for items in by_gpu.values():
        items.sort()
        assert all(e1 <= s2 for (_, e1), (s2, _) in zip(items, items[1:]))
    assert len(by_gpu) <= sum(instance.servers)


def test_plot_of_an_infeasible_schedule_is_an_error_and_writes_nothing(tmp_path, capsys):
    sched = tmp_path / "s.json"
    sched.write_text(json.dumps({"family": "hetero_gpu", "format_version": 1,
                                 "tasks": [[0, 0, 0, 0, 0]]}))
    png = tmp_path / "g.png"
    code = main(["plot", str(DATA / "hetero_gpu" / "worked_example.json"), str(sched), "-o", str(png)])
    err = capsys.readouterr().err
    assert code == 2 and "(5)" in err and len(err.strip().splitlines()) == 1
    assert not png.exists()

"""The family contract, checked for every family whose modules import (docs/dev/design.md "Contracts").

JSON round trip, determinism, broken instance files, format_version and foreign schedules, every
method's schedule through verify, and LB <= OPT <= every in-ratios method on tiny instances.
"""

import json

import pytest

from optsched import InfeasibleSchedule, InvalidInstance, generate, methods, solve, verify
from optsched.io import dumps, instance_from_dict, read_json, schedule_from_dict
from optsched.result import RESULT_KEYS

from tests.conftest import DATA, READY

SEEDS = (0, 1)


@pytest.mark.parametrize("family", READY)
def test_json_round_trip_and_determinism(family):
    for preset in ("tiny", "small"):
        for seed in (0, 1, 2, 3, 5):
            inst = generate(family, preset, seed)
            assert instance_from_dict(json.loads(dumps(inst))) == inst
        assert generate(family, preset, 5) == inst


@pytest.mark.parametrize("family", READY)
def test_format_version_true_is_rejected(family):
    data = generate(family, "tiny", 0).to_dict()
    data["format_version"] = True
    with pytest.raises(InvalidInstance, match=r"^instance\.format_version: expected 1, got True$"):
        instance_from_dict(data)


def _a_schedule(family: str):
    """A schedule of ``family``'s tiny instance (seed 0), by its first baseline."""
    baseline = next(m.name for m in methods(family) if m.kind == "baseline" and not m.relaxed)
    return solve(generate(family, "tiny", 0), baseline).schedule


@pytest.mark.parametrize("family", READY)
def test_verify_rejects_a_schedule_of_another_family(family):
    inst = generate(family, "tiny", 0)
    other = _a_schedule(READY[(READY.index(family) + 1) % len(READY)])
    with pytest.raises(InfeasibleSchedule, match=rf"must be an? {family} Schedule"):
        verify(inst, other)
    with pytest.raises(InfeasibleSchedule):
        verify(inst, None)


@pytest.mark.parametrize("family", READY)
def test_every_family_ships_broken_instances(family):
    assert len(json.loads((DATA / family / "broken" / "expected.json").read_text())) >= 10


def _broken_cases():
    for family in READY:
        folder = DATA / family / "broken"
        if (folder / "expected.json").exists():
            for name, expect in json.loads((folder / "expected.json").read_text()).items():
                yield pytest.param(folder / name, expect, id=f"{family}-{name}")


@pytest.mark.parametrize("path, expect", list(_broken_cases()))
def test_broken_files_name_the_field(path, expect):
    with pytest.raises(InvalidInstance) as err:
        instance_from_dict(read_json(path))
    assert expect in str(err.value)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("family", READY)
@pytest.mark.parametrize("seed", SEEDS)
def test_every_method_verifies_and_is_bounded(family, seed):
    inst = generate(family, "tiny", seed)
    opt = solve(inst, "exact", time_limit=60, seed=seed)
    assert opt.status.value == "optimal"
    for method in methods(family):
        res = solve(inst, method.name, time_limit=60, seed=seed)
        assert set(res.to_dict()) == set(RESULT_KEYS)
        if method.kind == "bound":
            assert res.lower_bound <= opt.objective + 1e-6 * max(1, abs(opt.objective)), method.name
        elif not method.relaxed:
            assert res.schedule is not None, method.name
            assert opt.objective <= res.objective + 1e-6 * max(1, abs(res.objective)), method.name
            again = schedule_from_dict(json.loads(json.dumps(res.schedule.to_dict())), family)
            assert again == res.schedule


@pytest.mark.parametrize("family", READY)
def test_same_seed_same_schedules(family):
    inst = generate(family, "tiny", 3)
    for method in methods(family):
        if method.kind in ("algorithm", "baseline"):
            a, b = solve(inst, method.name, seed=4), solve(inst, method.name, seed=4)
            assert a.schedule == b.schedule, method.name


@pytest.mark.parametrize("family", READY)
def test_paper_preset_generates(family):
    inst = generate(family, "paper", 0)
    assert inst.FAMILY == family
    assert instance_from_dict(json.loads(dumps(inst))) == inst

"""The family contract, checked for every family whose modules import (docs/dev/design.md "Contracts").

JSON round trip, determinism, broken instance files, every method's schedule through verify, and
LB <= OPT <= every in-ratios method on tiny instances.
"""

import json

import pytest

from optsched import InvalidInstance, generate, methods, solve
from optsched.io import instance_from_dict, read_json, schedule_from_dict
from optsched.result import RESULT_KEYS

from tests.conftest import DATA, READY

SEEDS = (0, 1)


@pytest.mark.parametrize("family", READY)
def test_json_round_trip_and_determinism(family):
    for preset in ("tiny", "small"):
        inst = generate(family, preset, 5)
        assert instance_from_dict(json.loads(json.dumps(inst.to_dict()))) == inst
        assert generate(family, preset, 5) == inst


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

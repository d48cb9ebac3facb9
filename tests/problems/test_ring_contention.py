"""ring_contention problem layer: validation, JSON, and verify on hand-computed contention cases.

Hand computation for tests/data/ring_contention/two_jobs.json (b^e = 1, b^i = 10, C = 1,
alpha = 0.5, xi2 = 0.01, FP + BP = 30 * 0.001 + 0.005 = 0.035; jobs 0 and 1: G = 2, m = 0.04, F = 20;
job 2: G = 1, F = 30). Eq. (8) with (m/G)(G-1) = 0.02:
  one server:        tau = 2*0.02/10 + 0.02/1 + 0.01*1 + 0.035 = 0.069 -> phi = floor(14.49) = 14
  split, p = 1:      tau = 2*0.02/1  + 0.02   + 0.01*2 + 0.035 = 0.115 -> phi = floor(8.70)  = 8
  split, p = 2:      B = 1/(2 + 0.5*1) = 0.4, tau = 0.1 + 0.02 + 0.02 + 0.035 = 0.175 -> phi = 5
  job 2 (G = 1):     tau = 0.01 + 0.035 = 0.045 -> phi = 22
"""

from __future__ import annotations

import json
import math

import pytest

from optsched.errors import InfeasibleSchedule, InvalidInstance
from optsched.io import load_instance
from optsched.tolerance import exact
from optsched.problems.ring_contention import (Instance, Schedule, average_jct, completion_times,
                                               slot_speed, verify)


@pytest.fixture
def two(data) -> Instance:
    return load_instance(data / "ring_contention" / "two_jobs.json")


def sched(*jobs) -> Schedule:
    return Schedule(tuple(a for a, _ in jobs), tuple(tuple(c) for _, c in jobs))


def test_speeds_match_hand_computation(two):
    assert [two.phi(0, 1, 1), two.phi(0, 2, 1), two.phi(0, 2, 2), two.phi(2, 1, 1)] == [14, 8, 5, 22]


def test_two_split_jobs_contend(two):
    # both split over (1, 1) from slot 0: p = 2 on both servers, phi = 5 -> 20 iterations in 4 slots
    s = sched((0, (1, 1)), (0, (1, 1)), (4, (1, 0)))
    # job 2 (G = 1) waits until slot 4 on server 0: 30 / 22 -> 2 slots
    assert completion_times(two, s) == [4, 4, 6]
    assert verify(two, s) == 6.0


def test_no_contention_when_packed(two):
    s = sched((0, (2, 0)), (0, (0, 2)), (2, (1, 0)))
    assert completion_times(two, s) == [2, 2, 4]  # 20 / 14 -> 2 slots each, no split jobs


def test_contention_changes_over_time(two):
    # job 0 split alone in slots 0-1 (phi 8: 16 done), joined by job 1 at slot 2 (p = 2, phi 5):
    # job 0 reaches 21 >= 20 in slot 2 -> T_0 = 3; job 1: 5 in slot 2, then alone 8 per slot:
    # 13 after slot 3, 21 after slot 4 -> T_1 = 5. Job 2 (single GPU) never counts as contention.
    s = sched((0, (1, 1)), (2, (1, 1)), (3, (1, 0)))
    assert completion_times(two, s) == [3, 5, 5]
    assert average_jct(two, s) == pytest.approx(13 / 3)


def test_single_server_job_does_not_count_as_contention(data):
    inst = load_instance(data / "ring_contention" / "two_jobs.json")
    d = inst.to_dict()
    d["servers"] = [3, 3]
    wide = Instance.from_dict(d)
    # job 1 on one server next to split job 0: p_0 stays 1 (phi 8): 20 -> 3 slots; job 1 phi 14 -> 2
    assert completion_times(wide, sched((0, (1, 1)), (0, (2, 0)), (0, (0, 1)))) == [3, 2, 2]


def test_xi1_scales_contention(data):
    d = load_instance(data / "ring_contention" / "two_jobs.json").to_dict()
    d["xi1"] = 0.4  # k = 0.4 * 2 = 0.8, clamped to 1 (digest E2): contention vanishes
    inst = Instance.from_dict(d)
    assert inst.phi(0, 2, 2) == inst.phi(0, 2, 1) == 8
    assert completion_times(inst, sched((0, (1, 1)), (0, (1, 1)), (3, (1, 0)))) == [3, 3, 5]


@pytest.mark.parametrize("schedule, equation", [
    (sched((0, (2, 0)), (0, (1, 0)), (5, (1, 0))), "(1) job 1"),
    (sched((0, (2, 0)), (0, (1, 1)), (0, (0, 1))), "(2) server 0 over capacity at slot 0: 3 > 2"),
    (sched((0, (2, 0)), (0, (0, 2)), (0, (1, 0))), "(2) server 0 over capacity at slot 0"),
    (sched((0, (0, 3)), (2, (0, 2)), (5, (1, 0))), "(2) job 0 server 1: 3 GPUs > capacity 2"),
    (sched((0, (2, 0)), (2, (0, 2)), (20, (1, 0))), "(4) job 2: start 20"),
    (sched((0, (2, 0)), (2, (0, 2)), (19, (1, 0))), "(9) job 2 does not finish by the horizon"),
])
def test_verify_rejects_violations(two, schedule, equation):
    with pytest.raises(InfeasibleSchedule, match=equation.replace("(", r"\(").replace(")", r"\)")):
        verify(two, schedule)


def test_capacity_checked_per_slot_as_jobs_end(two):
    # job 0 ends at 2 on server 0, so job 2 may use server 0 from slot 2 but not slot 1
    assert verify(two, sched((0, (2, 0)), (0, (0, 2)), (2, (1, 0)))) == 4.0
    with pytest.raises(InfeasibleSchedule, match=r"\(2\) server 0 over capacity at slot 1"):
        verify(two, sched((0, (2, 0)), (0, (0, 2)), (1, (1, 0))))


def test_negative_placement_is_refused_on_construction():
    """(5) y_js in Z_+: a negative count never reaches verify (issue 15: one validation layer)."""
    with pytest.raises(InvalidInstance, match=r"^schedule.jobs\[0\].placement\[0\]: must be >= 0"):
        sched((0, (-1, 3)), (2, (0, 2)), (5, (1, 0)))


def test_wrong_job_count(two):
    with pytest.raises(InfeasibleSchedule, match=r"\(1\) schedule has 2 starts"):
        verify(two, sched((0, (2, 0)), (0, (0, 2))))


def test_json_round_trip(two):
    assert Instance.from_dict(json.loads(json.dumps(two.to_dict()))) == two
    s = sched((0, (1, 1)), (2, (1, 1)), (3, (1, 0)))
    assert Schedule.from_dict(json.loads(json.dumps(s.to_dict()))) == s


def test_schedule_json_validation():
    bad = {"family": "ring_contention", "format_version": 1, "jobs": [{"start": -1, "placement": [1]}]}
    with pytest.raises(InvalidInstance, match=r"schedule.jobs\[0\].start: must be >= 0"):
        Schedule.from_dict(bad)
    bad["jobs"][0] = {"start": 0, "placement": [1, "x"]}
    with pytest.raises(InvalidInstance, match=r"schedule.jobs\[0\].placement\[1\]"):
        Schedule.from_dict(bad)


def test_python_built_instances_are_validated(two):
    with pytest.raises(InvalidInstance, match=r"jobs\[0\].gpus: 9 exceeds"):
        Instance(servers=(2, 2), jobs=(two.jobs[0].__class__(9, 20, 0.04, 30, 0.001, 0.005),),
                 bw_inter=1.0, bw_intra=10.0, reduce_speed=1.0, alpha=0.5, xi1=1.0, xi2=0.01,
                 horizon=20)


def test_slot_speed_is_floor_in_exact_arithmetic():
    """phi = the most iterations k with k tau <= 1 exactly, the data read as the decimals they are
    written as (issue 22; optsched.tolerance.count_within)."""
    assert slot_speed(0.2) == 5 and slot_speed(0.25) == 4 and slot_speed(0.3) == 3
    tau = 36 * 0.001 + 0.004  # FP (batch 36 x 0.001) + BP = 0.04 slots, a float sum 0.04000000000000001
    assert math.floor(1 / tau) == 24 and slot_speed(36 * exact(0.001) + exact(0.004)) == 25
    assert slot_speed(1.0000005 / 4) == 3  # 4 tau = 1.0000005 > 1: short by any amount is short
    assert slot_speed(0.9999995 / 4) == 4 and slot_speed(1.0000015 / 4) == 3
    assert slot_speed(1.0) == 1 and slot_speed(1.0000005) == 0
    with pytest.raises(ValueError):
        slot_speed(0.0)


def test_verify_uses_the_exact_speed(two):
    d = two.to_dict()
    d["jobs"][2].update(grad_size=0.0, fp_time=0.036, bp_time=0.004)  # tau = 36 x 0.001 + 0.004
    d["jobs"][2]["batch"] = 1
    d["xi2"] = 0.0
    d["jobs"][2]["iterations"] = 50
    inst = Instance.from_dict(d)
    assert inst.phi(2, 1, 1) == 25
    # job 2 alone on server 0 from slot 0: 50 iterations at 25 per slot -> T = 2 (float floor: 3)
    assert completion_times(inst, sched((2, (2, 0)), (2, (0, 2)), (0, (1, 0))))[2] == 2
    d["jobs"][2].update(fp_time=0.0, bp_time=1.0000005 / 4, iterations=8)  # 4 tau > 1: phi = 3
    inst = Instance.from_dict(d)
    assert inst.phi(2, 1, 1) == 3  # 8 iterations at 3 per slot: T = 3 (within 1e-6 it was 2)
    assert completion_times(inst, sched((3, (2, 0)), (3, (0, 2)), (0, (1, 0))))[2] == 3


def test_zero_iteration_time_is_invalid(two):
    d = two.to_dict()
    d["xi2"] = 0.0
    d["jobs"][2].update(grad_size=0.0, fp_time=0.0, bp_time=0.0)  # tau = 0: unbounded speed
    with pytest.raises(InvalidInstance, match=r"jobs\[2\]: per-iteration time 0 at n=1 must be > 0"):
        Instance.from_dict(d)

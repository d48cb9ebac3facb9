"""verify re-checks every schedule it is given (issue 22 item 2) without re-walking the rate entries
Schedule's construction already checked, while they are the very tuple objects it checked.

A tuple of tuples of ints and floats cannot change; a segment whose ``rates`` were replaced after
construction (``object.__setattr__``) holds another object and is checked entry by entry again.
"""

from __future__ import annotations

import copy
import pickle

import pytest

from optsched.errors import InvalidInstance
from optsched.problems import cojob_network as problem
from optsched.problems.cojob_network import Schedule, Segment, verify
from optsched.simulate.flows import FairShare, schedule_of, simulate
from optsched.workloads.cojob_network import generate


@pytest.fixture
def made():
    inst = generate("small", 0)
    return inst, schedule_of(simulate(inst, FairShare()), (), "fair_share")


def _count_entry_checks(monkeypatch) -> list:
    calls: list = []
    real = problem._plain_rates
    monkeypatch.setattr(problem, "_plain_rates", lambda rates: calls.append(rates) or real(rates))
    return calls


def test_verify_skips_only_the_entries_construction_checked(made, monkeypatch):
    inst, schedule = made
    calls = _count_entry_checks(monkeypatch)
    expected = verify(inst, schedule)
    assert calls == []                                  # every segment as constructed
    seg = schedule.segments[1]
    object.__setattr__(seg, "rates", tuple(list(seg.rates)))  # an equal tuple, another object
    assert verify(inst, schedule) == expected
    assert len(calls) == 1                              # that segment, entry by entry


@pytest.mark.parametrize("entry,message", [
    ((0, 0, 1, 0, float("nan")), "must be finite"),
    ((0, 0, 0, 0, 1.0), ">= 1"),
    ((0, True, 1, 0, 1.0), "must be an integer, got True"),
    ((0, 0, 1, 0, 1), None),                            # int rate: normalised to float, accepted
])
def test_rates_replaced_after_construction_are_checked_again(made, entry, message):
    inst, schedule = made
    seg = schedule.segments[0]
    object.__setattr__(seg, "rates", (entry,) + seg.rates[1:])
    if message is None:
        Schedule.__post_init__(schedule)
        assert type(seg.rates[0][4]) is float and seg.__dict__["_checked"] is seg.rates
        return
    with pytest.raises(InvalidInstance, match=message):
        verify(inst, schedule)


def test_a_duplicate_flow_put_in_after_construction_is_found(made):
    inst, schedule = made
    seg = next(s for s in schedule.segments if s.rates)
    object.__setattr__(seg, "rates", seg.rates + seg.rates[:1])
    with pytest.raises(InvalidInstance, match="duplicate flow"):
        verify(inst, schedule)


def test_copies_keep_the_mark_consistent(made, monkeypatch):
    """A copy or a pickled schedule holds its rates and its mark as one object (copy shares the
    tuple, pickle's memo restores one object for both references), or is checked again."""
    inst, schedule = made
    expected = verify(inst, schedule)
    for other in (copy.copy(schedule), copy.deepcopy(schedule),
                  pickle.loads(pickle.dumps(schedule))):
        for seg in other.segments:
            assert seg.__dict__.get("_checked") in (None, seg.rates)
            if "_checked" in seg.__dict__:
                assert seg.__dict__["_checked"] is seg.rates
        assert verify(inst, other) == expected


def test_a_segment_built_alone_is_not_marked():
    seg = Segment(0.0, 1.0, ((0, 0, 1, 0, 1.0),))
    assert "_checked" not in seg.__dict__

"""Issue 22 item 2: every family's verify re-validates the schedule it is given.

A frozen dataclass can still be patched in place (``object.__setattr__``). For each of the five
families a verified schedule of a tiny instance is patched (NaN, inf, out of range, wrong types,
on every numeric field); verify must then raise a named one-line error (InvalidInstance or
InfeasibleSchedule), or return a finite objective equal to that of the same schedule rebuilt from
its JSON (so a value it accepts is one it would accept from a file).
"""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from optsched import generate, io, solve
from optsched.errors import InfeasibleSchedule, InvalidInstance
from optsched.registry import get_family

ERRORS = (InvalidInstance, InfeasibleSchedule)
BAD = st.one_of(st.integers(-3, 12), st.floats(allow_nan=True, allow_infinity=True),
                st.booleans(), st.just(10 ** 400), st.text(max_size=2), st.none())

#: A fast method whose schedule verify accepts, per family.
METHOD = {"edge_cloud": "greedy_ect", "elastic_cluster": "fifo", "ring_contention": "first_fit",
          "hetero_gpu": "gavel_fifo", "cojob_network": "fair_share"}

_CACHE: dict = {}


def _solved(family: str):
    """The tiny instance and a fresh copy of its verified schedule (patching never leaks)."""
    if family not in _CACHE:
        inst = generate(family, "tiny", 1)
        _CACHE[family] = (inst, json.dumps(solve(inst, METHOD[family]).schedule.to_dict()))
    inst, text = _CACHE[family]
    return inst, io.schedule_from_dict(json.loads(text), family)


def _slots(obj) -> list[tuple[object, str]]:
    """Every (object, field) of a schedule that holds a number or a tuple of numbers."""
    out = []
    todo = [obj]
    while todo:
        x = todo.pop()
        fields = getattr(x, "__dataclass_fields__", None)
        if fields is None:
            continue
        for name in fields:
            value = getattr(x, name)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                out.append((x, name))
            elif isinstance(value, tuple):
                flat = [v for v in value if getattr(v, "__dataclass_fields__", None) is not None]
                todo.extend(flat)
                if not flat:
                    out.append((x, name))
    return out


def _patched(value, bad, data):
    """``value`` with ``bad`` put in: a scalar replaced, or one entry of a (nested) tuple."""
    if not isinstance(value, tuple) or not value:
        return bad
    i = data.draw(st.integers(0, len(value) - 1))
    return value[:i] + (_patched(value[i], bad, data),) + value[i + 1:]


@pytest.mark.parametrize("family", sorted(METHOD))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_patched_schedules_are_rejected_or_recomputed(family, data):
    inst, sched = _solved(family)
    verify = get_family(family).problem.verify
    assert math.isfinite(verify(inst, sched))
    slots = _slots(sched)
    for _ in range(data.draw(st.integers(1, 2))):
        obj, name = slots[data.draw(st.integers(0, len(slots) - 1))]
        object.__setattr__(obj, name, _patched(getattr(obj, name), data.draw(BAD), data))
    try:
        value = verify(inst, sched)
    except ERRORS as exc:
        assert "\n" not in str(exc) and str(exc)
        return
    assert math.isfinite(value)
    again = io.schedule_from_dict(json.loads(json.dumps(sched.to_dict())), family)
    assert verify(inst, again) == value


@pytest.mark.parametrize("family", sorted(METHOD))
@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, 10 ** 400, 0.5, "1", None, True])
def test_every_numeric_field_patched_to_garbage_is_refused(family, bad):
    """Each numeric field in turn set to a value no schedule may hold: verify refuses it (no
    objective, no traceback of another kind), in all five families alike."""
    inst, _ = _solved(family)
    verify = get_family(family).problem.verify
    probe = _solved(family)[1]
    for k in range(len(_slots(probe))):
        sched = _solved(family)[1]
        obj, name = _slots(sched)[k]
        value = getattr(obj, name)
        if isinstance(value, tuple):
            if not value:
                continue
            value = (bad,) + value[1:] if not isinstance(value[0], tuple) else (
                (bad,) + value[0][1:],) + value[1:]
        else:
            value = bad
        if bad == 0.5 and isinstance(getattr(obj, name), float):
            continue  # 0.5 is a valid time in the continuous families
        object.__setattr__(obj, name, value)
        with pytest.raises(ERRORS):
            verify(inst, sched)

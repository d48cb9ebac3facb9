"""Validated reading of instance/schedule JSON objects.

Every family's ``from_dict`` reads its data through :class:`Reader`, so every error message has the
same form: ``"<path>: <what is wrong>"``, e.g. ``"jobs[3].weight: must be > 0, got -1"``.
"""

from __future__ import annotations

import builtins
import math
from typing import Any, NoReturn, Sequence

import numpy as np

from optsched.errors import InfeasibleSchedule, InvalidInstance


def fail(where: str, message: str, error: type[ValueError] = InvalidInstance) -> NoReturn:
    """Raise ``error`` with the message ``"where: message"``."""
    raise error(f"{where}: {message}")


class Reader:
    """Read typed fields from one JSON object; unknown and missing keys are errors.

    Parameters
    ----------
    data
        The object read from JSON.
    where
        Its path, used in every message (``"instance"``, ``"jobs[2]"``).
    required, optional
        The keys it must and may hold.
    """

    def __init__(self, data: Any, where: builtins.str, required: Sequence[builtins.str], optional: Sequence[builtins.str] = ()):
        if not isinstance(data, dict):
            fail(where, f"must be an object, got {type(data).__name__}")
        unknown = sorted(set(data) - set(required) - set(optional))
        if unknown:
            fail(where, f"unknown field '{unknown[0]}'")
        missing = [k for k in required if k not in data]
        if missing:
            fail(where, f"missing field '{missing[0]}'")
        self.data = data
        self.where = where

    @classmethod
    def top(cls, data: Any, family: builtins.str, version: builtins.int, required: Sequence[builtins.str],
            optional: Sequence[builtins.str] = (), what: str = "instance") -> "Reader":
        """Reader for a top-level document tagged with ``family`` and ``format_version``.

        The family is checked before the fields, so a document of another family is named as
        such (``schedule.family: expected 'elastic_cluster', got 'hetero_gpu'``), not by the
        first field the two formats do not share.
        """
        if isinstance(data, dict) and "family" in data and data["family"] != family:
            fail(f"{what}.family", f"expected '{family}', got {data['family']!r}")
        reader = cls(data, what, ("family", "format_version", *required), optional)
        if isinstance(data["format_version"], bool) or data["format_version"] != version:
            fail(f"{what}.format_version", f"expected {version}, got {data['format_version']!r}")
        return reader

    def has(self, key: builtins.str) -> bool:
        return key in self.data

    def path(self, key: builtins.str) -> builtins.str:
        return f"{self.where}.{key}" if self.where else key

    def int(self, key: builtins.str, *, min: builtins.int | None = None, max: builtins.int | None = None,
            default: builtins.int | None = None) -> builtins.int:
        if key not in self.data and default is not None:
            return default
        return as_int(self.data[key], self.path(key), min=min, max=max)

    def float(self, key: builtins.str, *, min: builtins.float | None = None, positive: bool = False,
              default: builtins.float | None = None) -> builtins.float:
        if key not in self.data and default is not None:
            return default
        return as_float(self.data[key], self.path(key), min=min, positive=positive)

    def str(self, key: builtins.str, *, choices: Sequence[builtins.str] | None = None, default: builtins.str | None = None) -> builtins.str:
        if key not in self.data and default is not None:
            return default
        value = self.data[key]
        if not isinstance(value, str):
            fail(self.path(key), f"must be a string, got {type(value).__name__}")
        if choices is not None and value not in choices:
            fail(self.path(key), f"must be one of {', '.join(choices)}, got {value!r}")
        return value

    def list(self, key: builtins.str, *, length: builtins.int | None = None, nonempty: bool = False) -> builtins.list:
        return as_list(self.data[key], self.path(key), length=length, nonempty=nonempty)

    def objects(self, key: builtins.str, required: Sequence[builtins.str], optional: Sequence[builtins.str] = (), *,
                length: builtins.int | None = None, nonempty: bool = True) -> builtins.list["Reader"]:
        """A list of objects, each returned as a Reader named ``key[i]``."""
        items = self.list(key, length=length, nonempty=nonempty)
        return [Reader(item, f"{self.path(key)}[{i}]", required, optional) for i, item in enumerate(items)]

    def ints(self, key: builtins.str, *, length: builtins.int | None = None, min: builtins.int | None = None,
             max: builtins.int | None = None) -> tuple[builtins.int, ...]:
        items = self.list(key, length=length)
        return tuple(as_int(v, f"{self.path(key)}[{i}]", min=min, max=max) for i, v in enumerate(items))

    def floats(self, key: builtins.str, *, length: builtins.int | None = None, min: builtins.float | None = None,
               positive: bool = False) -> tuple[builtins.float, ...]:
        items = self.list(key, length=length)
        return tuple(as_float(v, f"{self.path(key)}[{i}]", min=min, positive=positive)
                     for i, v in enumerate(items))

    def matrix(self, key: builtins.str, shape: tuple[builtins.int, builtins.int], *, min: builtins.float | None = None,
               positive: bool = False) -> tuple[tuple[builtins.float, ...], ...]:
        """A rows x cols matrix of floats, as nested tuples."""
        rows = self.list(key, length=shape[0])
        return tuple(
            tuple(as_float(v, f"{self.path(key)}[{i}][{k}]", min=min, positive=positive)
                  for k, v in enumerate(as_list(row, f"{self.path(key)}[{i}]", length=shape[1])))
            for i, row in enumerate(rows)
        )


def as_list(value: Any, where: str, *, length: int | None = None, nonempty: bool = False) -> list:
    if not isinstance(value, list):
        fail(where, f"must be a list, got {type(value).__name__}")
    if length is not None and len(value) != length:
        fail(where, f"must have {length} entries, got {len(value)}")
    if nonempty and not value:
        fail(where, "must not be empty")
    return value


def sequence(value: Any, where: str, *, length: int | None = None, nonempty: bool = False,
             most: int | None = None, limit: str = "", item: type | None = None,
             tuple_only: bool = False, must_have: bool = True) -> Any:
    """``value`` as a sequence (a tuple, or a list from JSON; a tuple only with ``tuple_only``: the
    shape check of a field built in Python), with :func:`as_list`'s messages: ``length`` entries,
    ``nonempty``, at most ``most`` (the limit named ``limit``; the message starts "must have at
    most", or "at most" without ``must_have``), each an instance of ``item``. Returns ``value``.
    """
    if not isinstance(value, tuple if tuple_only else (tuple, list)):
        fail(where, f"must be a list, got {type(value).__name__}")
    if length is not None and len(value) != length:
        fail(where, f"must have {length} entries, got {len(value)}")
    if nonempty and not value:
        fail(where, "must not be empty")
    if most is not None and len(value) > most:
        fail(where, f"{'must have ' if must_have else ''}at most {most} entries ({limit}), "
                    f"got {len(value)}")
    if item is not None:
        for i, entry in enumerate(value):
            if not isinstance(entry, item):
                fail(f"{where}[{i}]", f"must be a {item.__name__}, got {type(entry).__name__}")
    return value


def check_types(instance: Any, schedule: Any, family: str, instance_type: type,
                schedule_type: type, *, schedule_first: bool = False,
                qualified: bool = True) -> None:
    """verify's arguments must be ``family``'s Instance and Schedule: ``InvalidInstance``
    ("instance: must be an edge_cloud Instance, got ...") or ``InfeasibleSchedule`` ("schedule:
    ..."), an object of another family never an AttributeError. ``schedule_first``: which is
    checked first; ``qualified``: the wrong type named with its module.
    """
    article = "an" if family[:1] in "aeiou" else "a"

    def name(obj: Any) -> str:
        cls = type(obj)
        return f"{cls.__module__}.{cls.__name__}" if qualified else cls.__name__

    def check_instance() -> None:
        if not isinstance(instance, instance_type):
            fail("instance", f"must be {article} {family} Instance, got {name(instance)}")

    if not schedule_first:
        check_instance()
    if not isinstance(schedule, schedule_type):
        infeasible(f"schedule: must be {article} {family} Schedule, got {name(schedule)}")
    if schedule_first:
        check_instance()


def as_int(value: Any, where: str, *, min: int | None = None, max: int | None = None,
           limit: str = "") -> int:
    """An integer: bool is not one; numpy integers and integral floats are. ``limit`` (a
    ``MAX_*`` name) is named in the message of ``max``; huge literals are shortened.

    >>> as_int(10**40, "instance.horizon", min=1, max=10**6, limit="MAX_HORIZON")
    Traceback (most recent call last):
    ...
    optsched.errors.InvalidInstance: instance.horizon: must be <= 1000000 (MAX_HORIZON), got 100000...(41 digits)
    """
    if isinstance(value, np.integer) or isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        fail(where, f"must be an integer, got {value!r}")
    if min is not None and value < min:
        fail(where, f"must be >= {min}, got {short(value)}")
    if max is not None and value > max:
        fail(where, f"must be <= {max}{f' ({limit})' if limit else ''}, got {short(value)}")
    return value


def as_float(value: Any, where: str, *, min: float | None = None, positive: bool = False,
             max_value: float | None = None, min_positive: float | None = None) -> float:
    """A finite real number: bool is not one; numpy numbers are. With ``max_value`` (a family's
    MAX_VALUE) at most that in magnitude, and with ``min_positive`` (its MIN_POSITIVE) 0 or at
    least that in magnitude (at least that when ``positive``). An integer literal beyond the float
    range is named, never an OverflowError.

    >>> as_float(10**400, "instance.jobs[0].weight")
    Traceback (most recent call last):
    ...
    optsched.errors.InvalidInstance: instance.jobs[0].weight: must be finite, got an integer beyond the float range
    >>> as_float(1e300, "instance.jobs[0].weight", max_value=1e9)
    Traceback (most recent call last):
    ...
    optsched.errors.InvalidInstance: instance.jobs[0].weight: must be <= 1e+09 (MAX_VALUE), got 1e+300
    """
    if isinstance(value, np.integer):
        value = int(value)
    elif isinstance(value, np.floating):
        value = float(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        fail(where, f"must be a number, got {value!r}")
    if isinstance(value, int) and max_value is not None and abs(value) > max_value:
        fail(where, f"must be <= {max_value:g} (MAX_VALUE), got {short(value)}")
    try:
        x = float(value)
    except OverflowError:
        fail(where, "must be finite, got an integer beyond the float range")
    if not math.isfinite(x):
        fail(where, f"must be finite, got {x}")
    if positive and x <= 0:
        fail(where, f"must be > 0, got {x:g}")
    if min is not None and x < min:
        fail(where, f"must be >= {min:g}, got {x:g}")
    if max_value is not None and abs(x) > max_value:
        fail(where, f"must be <= {max_value:g} (MAX_VALUE), got {x:g}")
    if min_positive is not None and x != 0 and abs(x) < min_positive:
        fail(where, f"must be {'' if positive else '0 or '}>= {min_positive:g} (MIN_POSITIVE), "
                    f"got {x:g}")
    return x


def short(value: int) -> str:
    """An integer for a message, kept short (a huge literal by its first digits and length)."""
    text = str(value)
    return text if len(text) <= 24 else f"{text[:6]}...({len(text)} digits)"


def infeasible(message: str) -> NoReturn:
    """Raise InfeasibleSchedule; ``message`` starts with the paper's equation, e.g. ``"(8) gpu 1: ..."``."""
    raise InfeasibleSchedule(message)


def readonly(rows, dtype=float) -> np.ndarray:
    """``rows`` as a read-only numpy array (for cached views of tuple-stored instance data)."""
    arr = np.array(rows, dtype=dtype)
    arr.setflags(write=False)
    return arr

"""JSON in and out for every family: the ``"family"`` tag picks the family's problems module."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

from optsched.errors import InvalidInstance
from optsched.registry import get_family


def family_name(data: Any, what: str = "instance") -> str:
    """The family named by a document's ``"family"`` key (validated against the registry)."""
    if not isinstance(data, dict):
        raise InvalidInstance(f"{what}: must be a JSON object, got {_json_type(data)}")
    if "family" not in data:
        raise InvalidInstance(f"{what}: missing field 'family'")
    name = data["family"]
    if not isinstance(name, str):
        raise InvalidInstance(f"{what}.family: must be a string naming a family, "
                              f"got {_json_type(name)}")
    return get_family(name, error=InvalidInstance, where=f"{what}.family").name


def _json_type(value: Any) -> str:
    """The JSON name of a parsed value's type (for messages)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    return {dict: "an object", list: "an array", str: "a string", int: "a number",
            float: "a number"}.get(type(value), type(value).__name__)


def instance_from_dict(data: Any):
    """Validate ``data`` and build the family's ``Instance``."""
    return get_family(family_name(data)).problem.Instance.from_dict(data)


def schedule_from_dict(data: Any, family: str | None = None):
    """Validate ``data`` and build the family's ``Schedule``."""
    family = family or family_name(data, "schedule")
    return get_family(family).problem.Schedule.from_dict(data)


class _BadNumber(ValueError):
    """A number literal JSON allows but no field can hold; ``literal`` is its text."""

    def __init__(self, literal: str, why: str):
        super().__init__(why)
        self.literal = literal


def _parse_int(text: str) -> int:
    # int() refuses > 4300 digits anyway; 309 digits is already past the float range
    if len(text.lstrip("-")) > 309 or abs(int(text)) > sys.float_info.max:
        raise _BadNumber(text, f"integer with {len(text.lstrip('-'))} digits is beyond the float "
                               f"range (about 1.8e308)")
    return int(text)


def _parse_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        shown = text if len(text) <= 24 else f"{text[:12]}... ({len(text)} characters)"
        raise _BadNumber(text, f"number {shown} is beyond the float range (about 1.8e308)")
    return value


def _parse_constant(text: str):
    raise _BadNumber(text, f"{text} is not a number (standard JSON has no NaN or Infinity)")


def read_json(path: str | Path, what: str = "instance") -> Any:
    """Parse a JSON file (strict UTF-8 JSON, RFC 8259; a leading BOM is skipped).

    Every problem becomes an InvalidInstance naming the file: a missing or unreadable file, bytes
    that are not UTF-8, bad JSON, nesting too deep for the parser, NaN/Infinity, and numbers beyond
    the float range (which no field can hold)."""
    where = f"{what} file {path}"
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise InvalidInstance(f"{where}: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInstance(f"{where}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset "
                              f"{exc.start})") from None
    if text.startswith("\ufeff"):
        text = text[1:]
    try:
        return json.loads(text, parse_int=_parse_int, parse_float=_parse_float,
                          parse_constant=_parse_constant)
    except json.JSONDecodeError as exc:
        raise InvalidInstance(f"{where}: invalid JSON at line {exc.lineno}: {exc.msg}") from None
    except _BadNumber as exc:
        line = text.count("\n", 0, max(0, text.find(exc.literal))) + 1
        raise InvalidInstance(f"{where}: line {line}: {exc}") from None
    except RecursionError:
        raise InvalidInstance(f"{where}: arrays/objects nested too deeply") from None


def load_instance(path: str | Path):
    return instance_from_dict(read_json(path))


def load_schedule(path: str | Path, family: str | None = None):
    return schedule_from_dict(read_json(path, "schedule"), family)


def dumps(obj: Any) -> str:
    """Instance or Schedule (anything with ``to_dict``) as JSON text."""
    return json.dumps(obj.to_dict(), indent=1)


def dump(obj: Any, path: str | Path) -> None:
    """Write ``obj`` as JSON, atomically (a crash never leaves half a file)."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(dumps(obj) + "\n")
    tmp.replace(path)

"""JSON in and out for every family: the ``"family"`` tag picks the family's problems module."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from optsched.errors import InvalidInstance
from optsched.registry import get_family


def family_name(data: Any, what: str = "instance") -> str:
    """The family named by a document's ``"family"`` key (validated against the registry)."""
    if not isinstance(data, dict):
        raise InvalidInstance(f"{what}: must be a JSON object, got {type(data).__name__}")
    if "family" not in data:
        raise InvalidInstance(f"{what}: missing field 'family'")
    return get_family(data["family"], error=InvalidInstance, where=f"{what}.family").name


def instance_from_dict(data: Any):
    """Validate ``data`` and build the family's ``Instance``."""
    return get_family(family_name(data)).problem.Instance.from_dict(data)


def schedule_from_dict(data: Any, family: str | None = None):
    """Validate ``data`` and build the family's ``Schedule``."""
    family = family or family_name(data, "schedule")
    return get_family(family).problem.Schedule.from_dict(data)


def read_json(path: str | Path, what: str = "instance") -> Any:
    """Parse a JSON file; a missing file or bad JSON becomes an InvalidInstance naming the file."""
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise InvalidInstance(f"{what} file {path}: {exc.strerror or exc}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInstance(f"{what} file {path}: invalid JSON at line {exc.lineno}: {exc.msg}") from None


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

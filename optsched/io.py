"""JSON in and out for every family: the ``"family"`` tag picks the family's problems module."""

from __future__ import annotations

import errno
import json
import math
import os
import re
import stat
import sys
from pathlib import Path
from typing import Any

from optsched.errors import InvalidInstance
from optsched.registry import get_family

#: The largest instance or schedule file read (bytes): about 70 times the largest paper-scale
#: instance (hetero_gpu, 0.9 MB). A file is read up to this size and refused beyond it before any
#: parsing, so /dev/zero or a runaway file costs a fraction of a second, not the machine's memory.
MAX_INPUT_BYTES = 64 * 2**20


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

    Every problem becomes an InvalidInstance naming the file: a missing or unreadable file, one
    larger than :data:`MAX_INPUT_BYTES` (refused before parsing), bytes that are not UTF-8, bad
    JSON, nesting too deep for the parser, NaN/Infinity, numbers beyond the float range (which no
    field can hold), a key repeated in one object (the field is named) and a string holding a lone
    UTF-16 surrogate (``"\\ud800"``: not a character, it cannot be printed or written as UTF-8)."""
    where = f"{what} file {path}"
    text = _decode(_read_capped(path, where), where)
    seen = _Duplicates()
    try:
        data = json.loads(text, parse_int=_parse_int, parse_float=_parse_float,
                          parse_constant=_parse_constant, object_pairs_hook=seen)
    except json.JSONDecodeError as exc:
        raise InvalidInstance(f"{where}: invalid JSON at line {exc.lineno}: {exc.msg}") from None
    except _BadNumber as exc:
        line = text.count("\n", 0, max(0, text.find(exc.literal))) + 1
        raise InvalidInstance(f"{where}: line {line}: {exc}") from None
    except RecursionError:
        raise InvalidInstance(f"{where}: arrays/objects nested too deeply") from None
    if seen.found is not None:
        obj, key = seen.found
        raise InvalidInstance(f"{where}: {_path_to(data, obj, what)}: duplicate key {key!r} "
                              f"(each key may appear once in an object)")
    _check_surrogates(data, text, where)
    return data


def _read_capped(path: str | Path, where: str) -> bytes:
    """The bytes of ``path``, refused (InvalidInstance) past :data:`MAX_INPUT_BYTES`."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_INPUT_BYTES + 1)
    except OSError as exc:
        raise InvalidInstance(f"{where}: {exc.strerror or exc}") from None
    if len(raw) > MAX_INPUT_BYTES:
        raise InvalidInstance(f"{where}: larger than {MAX_INPUT_BYTES // 2**20} MiB "
                              f"(MAX_INPUT_BYTES); not read further")
    return raw


def _decode(raw: bytes, where: str) -> str:
    """``raw`` as UTF-8 text without a leading BOM."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInstance(f"{where}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset "
                              f"{exc.start})") from None
    return text[1:] if text.startswith("\ufeff") else text


class _Duplicates:
    """``object_pairs_hook`` that builds each object as a dict and remembers the first object in
    which a key repeats (JSON lets the last value win silently, hiding the first)."""

    def __init__(self) -> None:
        self.found: tuple[dict, str] | None = None

    def __call__(self, pairs: list[tuple[str, Any]]) -> dict:
        obj = dict(pairs)
        if len(obj) != len(pairs) and self.found is None:
            key = _first_repeat([k for k, _ in pairs])
            self.found = (obj, key)
        return obj


def _first_repeat(keys: list[str]) -> str:
    """The first key that occurs a second time."""
    seen: set[str] = set()
    for k in keys:
        if k in seen:
            return k
        seen.add(k)
    raise ValueError("no repeated key")


def _path_to(data: Any, target: dict, root: str) -> str:
    """The field path (``instance.jobs[2]``) of the object ``target`` inside ``data``."""
    stack = [(data, root)]
    while stack:
        node, where = stack.pop()
        if node is target:
            return where
        if isinstance(node, dict):
            stack += [(v, f"{where}.{k}") for k, v in node.items()]
        elif isinstance(node, list):
            stack += [(v, f"{where}[{i}]") for i, v in enumerate(node)]
    return root


#: A JSON escape of a UTF-16 surrogate; only texts that hold one are searched for a lone one.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def _check_surrogates(data: Any, text: str, where: str) -> None:
    """Refuse a string holding a lone UTF-16 surrogate (a paired one decodes to one character)."""
    if not _SURROGATE_ESCAPE.search(text):
        return
    stack = [data]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            stack += [*node.keys(), *node.values()]
        elif isinstance(node, list):
            stack += node
        elif isinstance(node, str):
            lone = next((c for c in node if "\ud800" <= c <= "\udfff"), None)
            if lone is not None:
                escape = f"\\u{ord(lone):04x}"
                at = text.lower().find(escape)
                line = text.count("\n", 0, max(0, at)) + 1
                raise InvalidInstance(f"{where}: line {line}: string with a lone UTF-16 surrogate "
                                      f"{escape} (not a Unicode character)")


def load_instance(path: str | Path):
    """Read and validate an instance JSON file (any family; its ``family`` field says which).

    Parameters
    ----------
    path
        The file (read with a size cap before parsing; duplicate keys and non-finite numbers are
        refused). Its format: ``optsched schema FAMILY instance`` and docs/formats.md.

    Returns
    -------
    Instance
        The family's validated, immutable ``Instance``.

    Raises
    ------
    InvalidInstance
        One line naming the file, field and index at fault (the CLI exits with 2).

    Examples
    --------
    >>> import tempfile, os
    >>> from optsched import generate, dump, load_instance
    >>> inst = generate("hetero_gpu", "tiny", 0)
    >>> path = os.path.join(tempfile.mkdtemp(), "i.json")
    >>> dump(inst, path)
    >>> load_instance(path) == inst
    True
    """
    return instance_from_dict(read_json(path))


def load_schedule(path: str | Path, family: str | None = None):
    """Read a schedule JSON file (``optsched solve -o``, :func:`dump`).

    Parameters
    ----------
    path
        The file; read with a size cap before parsing.
    family
        The family the schedule must belong to (None: the file's own ``family`` field).

    Returns
    -------
    Schedule
        The family's schedule object; :func:`optsched.verify` checks it against an instance.

    Raises
    ------
    InvalidInstance
        One line naming the field at fault on a malformed file, or when ``family`` and the
        file's family differ.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from optsched import dump, generate, load_schedule, solve, verify
    >>> inst = generate("ring_contention", "tiny", 0)
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "s.json"
    >>> dump(solve(inst).schedule, path)
    >>> verify(inst, load_schedule(path, "ring_contention")) == solve(inst).objective
    True
    """
    return schedule_from_dict(read_json(path, "schedule"), family)


def dumps(obj: Any) -> str:
    """An Instance or Schedule (anything with ``to_dict``) as JSON text, one space indent.

    >>> from optsched import generate
    >>> dumps(generate("ring_contention", "tiny", 0)).startswith('{\\n "family": "ring_contention"')
    True
    """
    return json.dumps(obj.to_dict(), indent=1)


def dump(obj: Any, path: str | Path) -> None:
    """Write ``obj`` (an Instance or Schedule) as JSON to ``path``.

    Atomic: a crash never leaves half a file, and a FIFO or device is written into, never
    replaced (:func:`write_text`). :func:`load_instance` / :func:`load_schedule` read it back.

    Parameters
    ----------
    obj
        An Instance or Schedule of any family (anything with ``to_dict``).
    path
        The file to write; its directory must exist.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from optsched import dump, generate, load_instance
    >>> inst = generate("edge_cloud", "tiny", 1)
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "i.json"
    >>> dump(inst, path)
    >>> load_instance(path) == inst
    True
    """
    write_text(path, dumps(obj) + "\n")


def write_text(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` without ever replacing anything but a regular file.

    A new or regular file (also through a symbolic link) is replaced atomically: written to
    ``<name>.tmp`` beside it and renamed over it, so a crash never leaves half a file. A FIFO or a
    character device (``/dev/null``, ``/dev/stdout``, a terminal) is written into, never replaced
    (a rename would put a regular file in its place). Anything else (block device, socket) is
    refused with an OSError.
    """
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and (stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)):
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
        return
    if mode is not None and not stat.S_ISREG(mode):
        raise OSError(errno.EINVAL, "not a regular file, FIFO or character device; not replaced")
    target = Path(os.path.realpath(path))
    tmp = target.with_name(target.name + ".tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise

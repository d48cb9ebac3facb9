"""The resumable result store: ``results.jsonl`` in an output folder.

One JSON object per line, one line per (instance x method) row. Each row is written with a single
``os.write`` on an ``O_APPEND`` descriptor and flushed to disk, so a run killed at any moment (even by
SIGKILL) leaves at most a partial last line: an unfinished JSON object without its newline. Opening
the store drops such a line (it is redone). Any other line that is not a row (not JSON, or a key field
of the wrong type: a string or fractional seed) stops the run with one line naming the count and the
line numbers, and the file is left untouched: nothing is skipped, coerced or rewritten silently.

A row's key is ``(family, preset, seed, method)``; the first complete row of a key wins, so a re-run
never duplicates a row -- except that a row with ``status == "error"`` (an exception, not a result)
counts as unfinished: the next run redoes it and the new row supersedes it.

An advisory lock (``fcntl.lockf`` on ``results.lock``) stops two runs from writing one folder at once.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from optsched.errors import OptschedError

RESULTS = "results.jsonl"
LOCK = "results.lock"

Key = tuple[str, str, int, str]


def row_key(row: dict) -> Key:
    """The identity of a row: (family, preset, seed, method)."""
    return (row["family"], row["preset"], int(row["seed"]), row["method"])


def read_rows(path: str | os.PathLike) -> list[dict]:
    """Complete rows of a ``results.jsonl`` in file order, first row per key.

    A partial last line (what a killed run leaves) is ignored.

    Raises
    ------
    OptschedError
        When the file cannot be read or holds lines that are not rows (count and line numbers).
    """
    return list(_first_per_key(scan(Path(path)).rows).values())


def _first_per_key(found: list[dict]) -> dict[Key, dict]:
    """The first row of each key, an error row superseded by a later row of its key."""
    rows: dict[Key, dict] = {}
    for row in found:
        key = row_key(row)
        if key not in rows or is_error(rows[key]):
            rows[key] = row
    return rows


def is_error(row: dict) -> bool:
    """A row that records an exception rather than a result; it is redone on the next run."""
    return row.get("status") == "error"


def row_problem(row: Any) -> str | None:
    """Why a parsed line is not a row (its key fields' types), or None when it is one."""
    if not isinstance(row, dict):
        return "not a JSON object"
    for name in ("family", "preset", "method"):
        if not isinstance(row.get(name), str):
            return f"{name} must be a string, got {_shown(row, name)}"
    seed = row.get("seed")
    if type(seed) is not int or seed < 0:
        return f"seed must be an integer >= 0, got {_shown(row, 'seed')}"
    return None


def _shown(row: dict, name: str) -> str:
    """A field's JSON value for a message (shortened), or that it is missing."""
    return json.dumps(row[name])[:40] if name in row else "nothing (missing)"


@dataclass
class Scan:
    """What :func:`scan` found in a ``results.jsonl``.

    Attributes
    ----------
    rows
        The rows, in file order.
    tail
        ``"partial"`` when the last line is an unfinished object without its newline (dropped),
        ``"unterminated"`` when it is a complete row without its newline, else ``""``.
    """

    rows: list[dict] = field(default_factory=list)
    tail: str = ""


def scan(path: Path) -> Scan:
    """Read every line of ``path`` (absent: no rows).

    Raises
    ------
    OptschedError
        When ``path`` is not a regular file or cannot be read, or some lines are not rows.
    """
    found, bad = Scan(), []
    if not path.exists():
        return found
    if not path.is_file():
        raise OptschedError(f"--out: {path} is not a regular file")
    try:
        lines = path.read_bytes().split(b"\n")
    except OSError as exc:
        raise OptschedError(f"--out: cannot read {path}: {exc.strerror or exc}") from None
    last = len(lines) - 1                   # lines[last] is what follows the last newline
    for number, line in enumerate(lines, 1):
        if number - 1 == last and not line:
            break
        try:
            row = json.loads(line)
        except ValueError:
            if number - 1 == last and line.startswith(b"{"):
                found.tail = "partial"      # a killed run's unfinished row: redone
                break
            bad.append((number, "not JSON"))
            continue
        problem = row_problem(row)
        if problem:
            bad.append((number, problem))
            continue
        found.rows.append(row)
        if number - 1 == last:
            found.tail = "unterminated"
    if bad:
        raise OptschedError(_bad_lines_message(path, bad))
    return found


def _bad_lines_message(path: Path, bad: list[tuple[int, str]]) -> str:
    """One line: how many lines are not rows, which, and why (the first few)."""
    numbers = ", ".join(str(n) for n, _ in bad[:20]) + (", ..." if len(bad) > 20 else "")
    why = "; ".join(f"line {n}: {text}" for n, text in bad[:3])
    return (f"--out: {path}: {len(bad)} line(s) are not result rows (line(s) {numbers}; {why}); "
            f"the file is left as it is: fix or remove them, or use another --out")


class ResultStore:
    """Append-only row store in folder ``out`` (created if needed). Use as a context manager.

    Parameters
    ----------
    out
        The output folder; rows go to ``out/results.jsonl``.
    """

    def __init__(self, out: str | os.PathLike):
        self.dir = Path(out)
        self.path = self.dir / RESULTS
        self._fd: int | None = None
        self._lock_fd: int | None = None
        self.rows: dict[Key, dict] = {}

    def __enter__(self) -> "ResultStore":
        self.open()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def open(self) -> None:
        """Lock the folder, load the finished rows, drop a partial last line.

        Raises
        ------
        OptschedError
            When the folder or ``results.jsonl`` cannot be created, read or written, is locked by
            another run, or holds lines that are not rows (the file is then left untouched).
        """
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OptschedError(f"--out: cannot create {self.dir}: {exc.strerror or exc}") from None
        self._lock()
        try:
            found = scan(self.path)         # refuses before anything is written
            self.rows = _first_per_key(found.rows)
            self._fd = self._writable(found.tail)
        except BaseException:
            self.close()
            raise

    def _writable(self, tail: str) -> int:
        """The append descriptor, after dropping a partial last line (or ending a complete one)."""
        try:
            if tail == "partial":
                _truncate_partial_line(self.path)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            if tail == "unterminated":
                os.write(fd, b"\n")
            return fd
        except OSError as exc:
            raise OptschedError(f"--out: cannot write {self.path}: {exc.strerror or exc}") from None

    def _lock(self) -> None:
        import fcntl

        try:
            self._lock_fd = os.open(self.dir / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise OptschedError(f"--out: cannot write {self.dir / LOCK}: "
                                f"{exc.strerror or exc}") from None
        try:
            # a POSIX record lock: held per process, so forked workers do not inherit it and a
            # killed run frees the folder at once
            fcntl.lockf(self._lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(self._lock_fd)
            self._lock_fd = None
            raise OptschedError(f"--out: another optsched run is writing {self.dir}") from None

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if self._lock_fd is not None:
            os.close(self._lock_fd)     # releases the lock
            self._lock_fd = None

    def __contains__(self, key: Key) -> bool:
        """True when ``key`` has a finished (non-error) row."""
        row = self.rows.get(key)
        return row is not None and not is_error(row)

    def get(self, key: Key) -> dict | None:
        return self.rows.get(key)

    def append(self, row: dict) -> bool:
        """Write ``row`` (one line, flushed and fsynced) unless its key is already finished.

        Returns True when the row was written.
        """
        key = row_key(row)
        if key in self:
            return False
        data = (json.dumps(row, separators=(",", ":"), allow_nan=False, default=_plain)
                + "\n").encode()
        assert self._fd is not None, "store is not open"
        written = os.write(self._fd, data)
        while written < len(data):      # a short write is rare; finish the line
            written += os.write(self._fd, data[written:])
        os.fsync(self._fd)
        self.rows[key] = row
        return True

    def extend(self, rows: Iterable[dict]) -> None:
        for row in rows:
            self.append(row)


def _plain(value):
    """JSON for numpy scalars (``.item()``) and anything else a method put in a row (``str``)."""
    item = getattr(value, "item", None)
    if callable(item):
        try:
            return item()
        except (TypeError, ValueError):
            pass
    return str(value)


def _truncate_partial_line(path: Path) -> None:
    """Cut a trailing line without its newline (what SIGKILL can leave) so appends start clean."""
    if not path.exists():
        return
    size = path.stat().st_size
    if size == 0:
        return
    with path.open("rb+") as fh:
        fh.seek(-1, os.SEEK_END)
        if fh.read(1) == b"\n":
            return
        pos, chunk = size, 4096
        while pos > 0:
            start = max(0, pos - chunk)
            fh.seek(start)
            block = fh.read(pos - start)
            nl = block.rfind(b"\n")
            if nl >= 0:
                fh.truncate(start + nl + 1)
                return
            pos = start
        fh.truncate(0)

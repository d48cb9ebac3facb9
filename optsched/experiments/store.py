"""The resumable result store: ``results.jsonl`` in an output folder.

One JSON object per line, one line per (instance x method) row. Each row is written with a single
``os.write`` on an ``O_APPEND`` descriptor and flushed to disk, so a run killed at any moment (even by
SIGKILL) leaves at most a partial last line. Opening the store drops such a line (it is redone);
reading ignores any line that does not parse. A row's key is ``(family, preset, seed, method)``;
the first complete row of a key wins, so a re-run never duplicates a row -- except that a row with
``status == "error"`` (an exception, not a result) counts as unfinished: the next run redoes it and
the new row supersedes it.

An advisory lock (``fcntl.lockf`` on ``results.lock``) stops two runs from writing one folder at once.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Iterable, Iterator

from optsched.errors import OptschedError

RESULTS = "results.jsonl"
LOCK = "results.lock"

Key = tuple[str, str, int, str]


def row_key(row: dict) -> Key:
    """The identity of a row: (family, preset, seed, method)."""
    return (row["family"], row["preset"], int(row["seed"]), row["method"])


def read_rows(path: str | os.PathLike) -> list[dict]:
    """Complete rows of a ``results.jsonl`` in file order, first row per key, partial lines ignored."""
    rows: dict[Key, dict] = {}
    for row in _parse(Path(path)):
        key = row_key(row)
        if key not in rows or is_error(rows[key]):
            rows[key] = row
    return list(rows.values())


def is_error(row: dict) -> bool:
    """A row that records an exception rather than a result; it is redone on the next run."""
    return row.get("status") == "error"


def _parse(path: Path) -> Iterator[dict]:
    if not path.exists():
        return
    with path.open("rb") as fh:
        for line in fh:
            if not line.endswith(b"\n"):
                break                      # a partial last line from a killed run
            try:
                row = json.loads(line)
                row_key(row)
            except (ValueError, KeyError, TypeError):
                continue
            yield row


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
        """Lock the folder, drop a partial last line, load the finished rows."""
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OptschedError(f"--out: cannot create {self.dir}: {exc.strerror}") from None
        self._lock()
        _truncate_partial_line(self.path)
        self.rows = {row_key(r): r for r in read_rows(self.path)}
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def _lock(self) -> None:
        import fcntl

        self._lock_fd = os.open(self.dir / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
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

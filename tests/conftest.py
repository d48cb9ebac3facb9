"""Shared test helpers: the data folder, the registered families, and the fast loop (``--fast``
leaves out the tests tests/durations.json records above FAST_S seconds; ``--record-durations``
writes that file)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from optsched.registry import families

DATA = Path(__file__).parent / "data"

#: Every registered family (the generic contract tests run for each).
READY = list(families())


@pytest.fixture
def data():
    return DATA


# --------------------------------------------------------------------------- the fast loop
#: Tests whose recorded time (setup + call + teardown, one worker) is above this are left out by
#: ``--fast``.
FAST_S = 0.5
#: The recorded times above FAST_S (``pytest --record-durations tests/durations.json``).
DURATIONS = Path(__file__).parent / "durations.json"


def pytest_addoption(parser):
    parser.addoption("--fast", action="store_true",
                     help=f"the fast loop: leave out the tests {DURATIONS.name} records as taking "
                          f"more than {FAST_S} s")
    parser.addoption("--record-durations", metavar="FILE", default=None,
                     help=f"write the tests taking more than {FAST_S} s, with their seconds, to "
                          f"FILE (JSON; the list --fast reads is {DURATIONS.name})")


def pytest_collection_modifyitems(config, items):
    if not config.getoption("--fast") or not DURATIONS.exists():
        return
    slow = json.loads(DURATIONS.read_text())
    keep = [item for item in items if item.nodeid not in slow]
    if len(keep) < len(items):
        config.hook.pytest_deselected(items=[item for item in items if item.nodeid in slow])
        items[:] = keep


_TIMES: dict[str, float] = {}


def pytest_runtest_logreport(report):
    _TIMES[report.nodeid] = _TIMES.get(report.nodeid, 0.0) + report.duration


def pytest_sessionfinish(session):
    path = session.config.getoption("--record-durations")
    if path is None or hasattr(session.config, "workerinput"):   # the controller writes it
        return
    slow = {k: round(v, 2) for k, v in sorted(_TIMES.items()) if v > FAST_S}
    Path(path).write_text(json.dumps(slow, indent=0) + "\n")

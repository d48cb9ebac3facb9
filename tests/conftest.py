"""Shared test helpers: the data folder and the registered families."""

from __future__ import annotations

from pathlib import Path

import pytest

from optsched.registry import families

DATA = Path(__file__).parent / "data"

#: Every registered family (the generic contract tests run for each).
READY = list(families())


@pytest.fixture
def data():
    return DATA

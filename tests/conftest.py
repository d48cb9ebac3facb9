"""Shared test helpers: the data folder and the families whose modules import."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from optsched.registry import FAMILIES

DATA = Path(__file__).parent / "data"


def family_ready(family: str) -> bool:
    """True when the family's problems, workloads and solvers modules all import."""
    try:
        for layer in ("problems", "workloads", "solvers"):
            importlib.import_module(f"optsched.{layer}.{family}")
    except ImportError:
        return False
    return True


READY = [f for f in FAMILIES if family_ready(f)]


@pytest.fixture
def data():
    return DATA

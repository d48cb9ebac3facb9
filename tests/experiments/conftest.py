"""Helpers for the experiments tests: a trimmed hetero_gpu method list and method patching."""

from __future__ import annotations

import dataclasses
import importlib

import pytest

FAMILY = "hetero_gpu"
KEEP = ("exact", "lower_bound", "hare", "gavel_fifo", "sched_allox")


@pytest.fixture
def hetero(monkeypatch):
    """The hetero_gpu solvers module with its METHODS trimmed to :data:`KEEP` (fast tests).

    Returns a function ``patch(name, **changes)`` replacing fields of one Method (func, guarantee,
    ...) for the duration of the test.
    """
    module = importlib.import_module(f"optsched.solvers.{FAMILY}")
    monkeypatch.setattr(module, "METHODS", tuple(m for m in module.METHODS if m.name in KEEP))
    monkeypatch.setattr(module, "COMPARE_METHODS", None, raising=False)  # every kept method

    def patch(name, **changes):
        monkeypatch.setattr(module, "METHODS", tuple(
            dataclasses.replace(m, **changes) if m.name == name else m for m in module.METHODS))

    patch.module = module
    return patch

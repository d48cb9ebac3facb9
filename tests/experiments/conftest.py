"""Helpers for the experiments tests: a trimmed hetero_gpu method list and method patching."""

from __future__ import annotations

import dataclasses

import pytest

from optsched import registry
from optsched.family import CertifySpec, CompareSpec

FAMILY = "hetero_gpu"
KEEP = ("exact", "lower_bound", "hare", "gavel_fifo", "sched_allox")


def trimmed(spec, keep=KEEP):
    """``spec`` with only the methods in ``keep`` (and a compare spec running every kept one; a
    certify spec that names only kept methods)."""
    return dataclasses.replace(spec, methods=tuple(m for m in spec.methods if m.name in keep),
                               compare=CompareSpec(),
                               certify=CertifySpec(improve=spec.certify.improve))


@pytest.fixture
def hetero(monkeypatch):
    """The hetero_gpu Family with its methods trimmed to :data:`KEEP` (fast tests).

    Returns a function ``patch(name, **changes)`` replacing fields of one Method (func, guarantee,
    ...) for the duration of the test; ``patch.spec()`` is the current Family.
    """
    spec = trimmed(registry.get_family(FAMILY))
    monkeypatch.setitem(registry._FAMILIES, FAMILY, spec)

    def patch(name, **changes):
        now = registry.get_family(FAMILY)
        methods = tuple(dataclasses.replace(m, **changes) if m.name == name else m
                        for m in now.methods)
        monkeypatch.setitem(registry._FAMILIES, FAMILY, dataclasses.replace(now, methods=methods))

    patch.spec = lambda: registry.get_family(FAMILY)
    return patch


def wrap(entry, before=None, after=None):
    """``entry.func`` wrapped (same signature, so the registry calls it the same way): ``before(
    name)`` runs first, ``after(outcome)`` may replace the Outcome."""
    import functools

    @functools.wraps(entry.func)
    def func(*args, **kw):
        if before is not None:
            before(entry.name)
        out = entry.func(*args, **kw)
        return out if after is None else after(out)

    return func

"""The type checker verifies every family against the Family / Method / Params types (issue 10):
mypy over optsched/, models/ and solvers/ (configuration in pyproject.toml) reports no error."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_mypy_is_clean(monkeypatch):
    api = pytest.importorskip("mypy.api")
    monkeypatch.chdir(ROOT)
    out, err, code = api.run(["--no-incremental"])
    assert code == 0, out + err

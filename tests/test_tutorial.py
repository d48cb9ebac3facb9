"""docs/tutorial.md runs as written: every ```python block, in order, in one namespace."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

TUTORIAL = Path(__file__).resolve().parents[1] / "docs" / "tutorial.md"


def blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", TUTORIAL.read_text(), flags=re.S)


def test_tutorial_has_the_three_uses():
    text = TUTORIAL.read_text()
    assert all(h in text for h in ("## 1. Prove", "## 2. Bound", "## 3. Compare"))
    assert len(blocks()) >= 5


@pytest.mark.slow
def test_tutorial_runs(capsys):
    namespace: dict = {}
    for i, code in enumerate(blocks()):
        exec(compile(code, f"{TUTORIAL.name} block {i + 1}", "exec"), namespace)  # noqa: S102
    assert "gap" in capsys.readouterr().out

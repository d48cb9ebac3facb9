"""pyproject.toml lists every package, so a non-editable install (the README's first command) works."""

import tomllib
from pathlib import Path

ROOT = Path(__file__).parent.parent
MAPPED = {"optsched": ROOT / "optsched", "optsched.models": ROOT / "models", "optsched.solvers": ROOT / "solvers"}


def packages_on_disk() -> set[str]:
    found = set()
    for name, folder in MAPPED.items():
        for init in folder.rglob("__init__.py"):
            rel = init.parent.relative_to(folder).parts
            if "__pycache__" not in rel:
                found.add(".".join((name, *rel)))
    return found


def test_every_package_is_listed():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert set(config["packages"]) == packages_on_disk()
    assert config["package-dir"] == {"optsched.models": "models", "optsched.solvers": "solvers"}

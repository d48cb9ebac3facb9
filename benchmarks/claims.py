"""Render the claims table (paper x headline claim x verdict) into README.md.

Each family's ``benchmarks/claims_<family>.py`` measures the paper's headline claims under every
registered reading and writes ``benchmarks/claims/<family>.json``: a list of objects with ``paper``,
``claim``, ``verdict`` (``refuted under every reading`` | ``reading-dependent`` | ``reproduced``),
``readings`` (method -> the numbers measured under that reading) and ``detail``. This script only
renders those files, so the README table is generated from the benchmarks, never typed by hand::

    python benchmarks/claims.py            # rewrite the table between the README markers
    python benchmarks/claims.py --check    # exit 1 if README.md is out of date
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLAIMS = ROOT / "benchmarks" / "claims"
README = ROOT / "README.md"
START, END = "<!-- claims:start -->", "<!-- claims:end -->"
FAMILY_ORDER = ("elastic_cluster", "edge_cloud", "ring_contention", "cojob_network", "hetero_gpu")


def label(holds: list[bool]) -> str:
    """The verdict on a claim from whether it held under each reading tested (the project's rule:
    refuted only if it fails under every reading)."""
    if all(holds):
        return "reproduced"
    return "reading-dependent" if any(holds) else "refuted under every reading"


def write(claims: list[dict], out: Path, started: float) -> None:
    """Write one family's ``claims`` to ``out`` (what :func:`render` reads) and print them."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(claims, indent=1, ensure_ascii=False) + "\n")
    for c in claims:
        print(f"[{c['verdict']}] {c['claim']}")
        for reading, measured in c["readings"].items():
            print(f"    {reading}: {measured}")
    print(f"wrote {out} in {time.perf_counter() - started:.0f} s")


def load() -> list[tuple[str, dict]]:
    """(family, claim) pairs in family order, claims in file order."""
    files = {p.stem: p for p in CLAIMS.glob("*.json")}
    order = [f for f in FAMILY_ORDER if f in files] + sorted(set(files) - set(FAMILY_ORDER))
    return [(f, claim) for f in order for claim in json.loads(files[f].read_text())]


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def render(rows: list[tuple[str, dict]]) -> str:
    """The markdown table."""
    lines = ["| family | paper | claim | verdict | readings tested (measured) |",
             "|---|---|---|---|---|"]
    for family, c in rows:
        readings = "; ".join(f"`{m}`: {v}" for m, v in c.get("readings", {}).items())
        lines.append(f"| `{family}` | {_cell(c['paper'])} | {_cell(c['claim'])} | "
                     f"**{_cell(c['verdict'])}** | {_cell(readings)} |")
    return "\n".join(lines)


def updated_readme(text: str, table: str) -> str:
    if START not in text or END not in text:
        raise SystemExit(f"README.md has no {START} ... {END} markers")
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{START}\n{table}\n{END}{tail}"


def main(argv: list[str]) -> int:
    text = README.read_text()
    new = updated_readme(text, render(load()))
    if "--check" in argv:
        return 0 if new == text else 1
    README.write_text(new)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

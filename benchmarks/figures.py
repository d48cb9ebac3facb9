"""Regenerate every figure in docs/ with the commands the README shows (issue 21 item 7).

    python benchmarks/figures.py            # all three, into docs/
    python benchmarks/figures.py --only gantt --out /tmp/figs

- docs/ratios.png: ``optsched ratios --out DIR`` (the default run: every family, 8 seeds), DIR's
  ratios.png;
- docs/compare_hetero_gpu.png: ``optsched compare hetero_gpu --preset paper --seeds 3 --out DIR``,
  DIR's compare.png (every method compare runs, with the best lower bound);
- docs/gantt_hetero_gpu.png: ``optsched solve`` of the tiny hetero_gpu instance of seed 7 with
  ``--method hare --plot``.

Each runs the installed ``optsched`` command in a subprocess, so a figure is exactly what a user
gets. Look at each figure after regenerating it (labels, legend, title) before committing it.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DOCS = Path(__file__).resolve().parent.parent / "docs"


def _optsched(*args: str) -> None:
    cmd = [sys.executable, "-m", "optsched.cli", *args]
    print("$ optsched " + " ".join(args), file=sys.stderr, flush=True)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def ratios(work: Path) -> Path:
    _optsched("ratios", "--out", str(work / "ratios"), "-q")
    return work / "ratios" / "ratios.png"


def compare_hetero_gpu(work: Path) -> Path:
    _optsched("compare", "hetero_gpu", "--preset", "paper", "--seeds", "3", "--out",
              str(work / "compare"), "-q")
    return work / "compare" / "compare.png"


def gantt_hetero_gpu(work: Path) -> Path:
    inst = work / "hetero_tiny_7.json"
    _optsched("generate", "hetero_gpu", "--preset", "tiny", "--seed", "7", "-o", str(inst))
    png = work / "gantt.png"
    _optsched("solve", str(inst), "--method", "hare", "--plot", str(png))
    return png


FIGURES = {"ratios": (ratios, "ratios.png"),
           "compare": (compare_hetero_gpu, "compare_hetero_gpu.png"),
           "gantt": (gantt_hetero_gpu, "gantt_hetero_gpu.png")}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", action="append", choices=sorted(FIGURES),
                    help="repeatable (default: every figure)")
    ap.add_argument("--out", type=Path, default=DOCS, help="folder of the figures (default: docs/)")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.only or list(FIGURES):
            make, target = FIGURES[name]
            start = time.perf_counter()
            shutil.copyfile(make(Path(tmp)), args.out / target)
            print(f"{args.out / target}: {time.perf_counter() - start:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()

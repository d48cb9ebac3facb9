"""Gantt charts of schedules: one row per device (GPU, server, port), one colour per job.

Each family says what a device and a bar are in its problem module
(``optsched.problems.<family>.bars(instance, schedule) -> list[Bar]``, :class:`Bar` in
:mod:`optsched.problems.bars`); this module only draws.
``optsched plot INSTANCE SCHEDULE -o gantt.png`` and ``optsched solve ... --plot FILE`` call
:func:`plot_schedule`. matplotlib is imported only when a chart is drawn (Agg backend, no display).
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any, Iterable

from optsched.errors import OptschedError
from optsched.problems.bars import Bar

#: At most this many jobs get a legend entry (beyond it the colours cycle and the legend would hide
#: the chart).
LEGEND_MAX_JOBS = 12
#: Bars are labelled with their text only when there are at most this many.
LABEL_MAX_BARS = 80


def _natural_key(text: str) -> list:
    """Sort key that puts ``gpu 2`` before ``gpu 10``."""
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", text)]


def job_color(job: int, n_jobs: int):
    """The colour of ``job``: tab10/tab20 for few jobs, an evenly spaced hue wheel beyond."""
    from matplotlib import colormaps

    if n_jobs <= 10:
        return colormaps["tab10"](job % 10)
    if n_jobs <= 20:
        return colormaps["tab20"](job % 20)
    golden = 0.618033988749895  # spread consecutive jobs far apart on the wheel
    return colormaps["hsv"]((job * golden) % 1.0)


def draw(bars: Iterable[Bar], title: str, path: str | Path, *, xlabel: str = "time",
         job_name: str = "job") -> None:
    """Write a Gantt chart of ``bars`` to ``path`` (the suffix picks the format: .png, .svg, ...).

    One row per device (natural order, first device on top; overlapping bars of a device in lanes),
    one colour per job, a legend when there are at most :data:`LEGEND_MAX_JOBS` jobs, bar labels
    when there are few bars. ``job_name`` names what a colour stands for in the legend.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    bars = list(bars)
    devices = sorted({b.device for b in bars}, key=_natural_key)
    row = {d: i for i, d in enumerate(devices)}
    bars = [b for b in bars if b.end > b.start]
    ypos, thick = _lanes(bars, row)
    jobs = sorted({b.job for b in bars if b.job >= 0})
    n_jobs = max(jobs) + 1 if jobs else 0
    height = min(40.0, 1.6 + 0.38 * max(1, len(devices)))
    fig, ax = plt.subplots(figsize=(10.0, height))
    try:
        by_job: dict[int, list[int]] = {}
        for i, b in enumerate(bars):
            by_job.setdefault(b.job, []).append(i)
        edge = 0.4 if len(bars) <= 400 else 0.0  # outlines would drown many small bars
        for job, items in sorted(by_job.items()):
            ax.barh([ypos[i] for i in items], [bars[i].end - bars[i].start for i in items],
                    left=[bars[i].start for i in items], height=[thick[i] for i in items],
                    color=job_color(job, n_jobs), edgecolor="black", linewidth=edge)
        end = max((b.end for b in bars), default=1.0)
        start = min((b.start for b in bars), default=0.0)
        span = max(end - start, 1e-9)
        if len(bars) <= LABEL_MAX_BARS:
            for i, b in enumerate(bars):
                if b.label and (b.end - b.start) / span * 10.0 >= 0.12 * max(1, len(b.label)):
                    ax.text((b.start + b.end) / 2, ypos[i], b.label, ha="center", va="center",
                            fontsize=7 if thick[i] > 0.3 else 5, clip_on=True)
        ax.set_yticks(range(len(devices)), devices)
        ax.set_ylim(max(1, len(devices)) - 0.5, -0.5)
        ax.set_xlim(min(0.0, start), end + 0.02 * span)
        ax.set_xlabel(xlabel)
        ax.grid(axis="x", alpha=0.3)
        ax.set_axisbelow(True)
        ax.set_title(plain_text(title), fontsize=10)
        if 0 < len(jobs) <= LEGEND_MAX_JOBS:
            handles = [Patch(facecolor=job_color(j, n_jobs), edgecolor="black", linewidth=0.4,
                             label=f"{job_name} {j}") for j in jobs]
            ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0),
                      fontsize=8, frameon=False)
        fig.tight_layout()
        fig.savefig(path, dpi=110)
    finally:
        plt.close(fig)


def _lanes(bars: list[Bar], row: dict[str, int]) -> tuple[list[float], list[float]]:
    """Centre and thickness of every bar: a device whose bars overlap in time gets as many lanes
    as it needs (greedy interval partitioning in start order), each ``0.8 / lanes`` thick."""
    lane_of = [0] * len(bars)
    lanes_of: dict[str, int] = {}
    by_device: dict[str, list[int]] = {}
    for i, b in enumerate(bars):
        by_device.setdefault(b.device, []).append(i)
    for device, items in by_device.items():
        ends: list[float] = []  # end of the last bar in each lane
        for i in sorted(items, key=lambda i: (bars[i].start, bars[i].end)):
            b = bars[i]
            tol = 1e-9 * max(1.0, abs(b.start))
            lane = next((k for k, e in enumerate(ends) if e <= b.start + tol), len(ends))
            if lane == len(ends):
                ends.append(b.end)
            else:
                ends[lane] = b.end
            lane_of[i] = lane
        lanes_of[device] = max(1, len(ends))
    ypos, thick = [], []
    for i, b in enumerate(bars):
        n = lanes_of[b.device]
        h = 0.8 / n
        ypos.append(row[b.device] - 0.4 + (lane_of[i] + 0.5) * h)
        thick.append(h * (0.9 if n > 1 else 0.875))
    return ypos, thick


def plot_schedule(instance: Any, schedule: Any, path: str | Path, *, objective: float | None = None,
                  title: str | None = None) -> float:
    """Draw ``schedule`` of ``instance`` to ``path`` with its family's :func:`bars`.

    ``objective`` defaults to the family's ``verify`` (which raises ``InfeasibleSchedule`` for an
    infeasible schedule); the title defaults to :func:`title_of`. A problem module whose bar colours
    stand for something else than a job says so in ``BAR_JOB`` (cojob_network: ``"cojob"``).
    Returns the objective.
    """
    from optsched.registry import family_of

    family = family_of(instance)
    if objective is None:
        objective = float(family.verify(instance, schedule))
    bars = getattr(family.problem, "bars", None)
    if bars is None:
        raise OptschedError(f"family {family.name} cannot draw schedules (its problem module has "
                            f"no bars())")
    draw(bars(instance, schedule), title or title_of(instance, objective), path,
         job_name=getattr(family.problem, "BAR_JOB", "job"))
    return objective


def plain_text(text: str) -> str:
    """``text`` drawable as it is: a lone UTF-16 surrogate (no glyph, matplotlib raised a
    TypeError) shown as its escape ``\\ud800``, and ``$`` escaped (not read as mathtext).

    >>> plain_text("a\\ud800 $x$")
    'a\\\\ud800 \\\\$x\\\\$'
    """
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text.replace("$", r"\$")


def title_of(instance: Any, objective: float, what: str = "") -> str:
    """``"<family> <instance name>: <what>, objective <value>"`` (name and what when present)."""
    name = getattr(instance, "name", "") or ""
    value = f"{objective:.6g}" if math.isfinite(objective) else str(objective)
    head = f"{instance.FAMILY} {name}".strip()
    return f"{head}: {what + ', ' if what else ''}objective {value}"


__all__ = ["Bar", "LABEL_MAX_BARS", "LEGEND_MAX_JOBS", "draw", "job_color", "plain_text",
           "plot_schedule", "title_of"]

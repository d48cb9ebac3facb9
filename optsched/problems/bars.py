"""The data a Gantt chart draws (:class:`Bar`): what each family's ``bars(instance, schedule)``
returns and :mod:`optsched.gantt` draws. It lives in problems/ so problems/ imports nothing above it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Bar:
    """One busy interval ``[start, end)`` of ``device`` on behalf of job ``job``.

    ``label`` is a short text drawn inside the bar when it fits (e.g. ``"r0"`` for a task of round
    0, ``"2W+1PS"`` for a run of workers and parameter servers). A bar with ``end <= start`` draws
    nothing but still gives its device a row: families list idle devices this way (``job`` -1).
    Bars of one device that overlap in time (jobs sharing a server or a port) are drawn in lanes
    within the device's row.
    """

    device: str
    start: float
    end: float
    job: int
    label: str = ""


__all__ = ["Bar"]

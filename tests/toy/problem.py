"""Toy family ``single_machine`` (1 || sum w_j C_j): the problem module of the sixth-family test."""

from __future__ import annotations

from dataclasses import dataclass

from optsched.problems.fields import Reader, infeasible

FAMILY = "single_machine"
FORMAT_VERSION = 1


@dataclass(frozen=True)
class Instance:
    """Processing times ``p_j`` (integral slots) and weights ``w_j``."""

    times: tuple[int, ...]
    weights: tuple[float, ...]
    FAMILY = FAMILY

    def to_dict(self) -> dict:
        return {"family": FAMILY, "format_version": FORMAT_VERSION, "times": list(self.times),
                "weights": list(self.weights)}

    @classmethod
    def from_dict(cls, data) -> "Instance":
        r = Reader.top(data, FAMILY, FORMAT_VERSION, ("times", "weights"))
        return cls(r.ints("times", min=1), r.floats("weights", min=0.0))


@dataclass(frozen=True)
class Schedule:
    """Start slot of every job."""

    starts: tuple[int, ...]
    FAMILY = FAMILY

    def to_dict(self) -> dict:
        return {"family": FAMILY, "format_version": FORMAT_VERSION, "starts": list(self.starts)}

    @classmethod
    def from_dict(cls, data) -> "Schedule":
        return cls(Reader.top(data, FAMILY, FORMAT_VERSION, ("starts",), what="schedule")
                   .ints("starts", min=0))


def verify(instance: Instance, schedule: Schedule) -> float:
    """No two jobs overlap; returns sum_j w_j (s_j + p_j)."""
    if len(schedule.starts) != len(instance.times):
        infeasible(f"schedule has {len(schedule.starts)} starts for {len(instance.times)} jobs")
    spans = sorted(zip(schedule.starts, instance.times, range(len(instance.times))))
    for (s1, p1, j1), (s2, _, j2) in zip(spans, spans[1:]):
        if s2 < s1 + p1:
            infeasible(f"jobs {j1} and {j2} overlap at slot {s2}")
    return float(sum(w * (s + p) for s, p, w in zip(schedule.starts, instance.times,
                                                     instance.weights)))

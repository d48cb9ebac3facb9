"""Size measures of instance documents: the family's (``Family.worst``) or a generic count.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from optsched.experiments.worst.doc import walk_nodes

# --------------------------------------------------------------------------- size measures


@dataclass(frozen=True)
class Size:
    """A family's size measure: ``measure(doc) -> int`` and the list patterns it counts (these
    may grow and shrink whatever the generator does)."""

    what: str
    measure: Callable[[dict], int]
    grows: tuple[str, ...]


SIZES: dict[str, Size] = {
    "elastic_cluster": Size("jobs", lambda d: len(d["jobs"]), ("jobs",)),
    "edge_cloud": Size("jobs", lambda d: len(d["jobs"]), ("jobs",)),
    "ring_contention": Size("jobs", lambda d: len(d["jobs"]), ("jobs",)),
    "cojob_network": Size("jobs", lambda d: sum(len(c["jobs"]) for c in d["cojobs"]),
                          ("cojobs", "cojobs.*.jobs", "cojobs.*.jobs.*.flows",
                           "cojobs.*.iterations")),
    "hetero_gpu": Size("tasks", lambda d: sum(j["rounds"] * j["tasks_per_round"]
                                              for j in d["jobs"]), ("jobs",)),
}


def _generic_size(doc: dict) -> int:
    """Objects inside lists (jobs, servers, ...): the size of a family without a measure."""
    return sum(1 for path, node in walk_nodes(doc) if isinstance(node, dict) and path)


def size_of(family: str, doc: dict) -> int:
    """The family's size measure of an instance document."""
    spec = SIZES.get(family)
    return spec.measure(doc) if spec else _generic_size(doc)

"""Size measures of instance documents: the family's (``Family.worst``) or a generic count.
"""

from __future__ import annotations

from optsched.experiments.worst.doc import walk_nodes
from optsched.family import Family

# --------------------------------------------------------------------------- size measures


def generic_size(doc: dict) -> int:
    """Objects inside lists (jobs, servers, ...): the size of a family without a measure."""
    return sum(1 for path, node in walk_nodes(doc) if isinstance(node, dict) and path)


def size_of(family: Family, doc: dict) -> int:
    """The family's size measure of an instance document (``family.worst.measure``; the generic
    count when the family has no :class:`~optsched.family.WorstSpec`)."""
    return family.worst.measure(doc) if family.worst is not None else generic_size(doc)

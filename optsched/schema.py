"""The JSON Schemas (draft 2020-12) of every family's instance and schedule documents.

The schemas ship with the package as ``optsched/schemas/<family>.<kind>.json``. They describe
the JSON shape the family's ``from_dict`` reads: every field with its meaning (in the paper's
notation), its type, whether it is required, and its simple per-value bounds; positional arrays
(such as a hetero_gpu task ``[job, round, task, gpu, start]``) name every position. What depends
on other fields (list lengths that must match a count, indices within range, totals) is checked
by the loader and by ``verify``, not by the schema. ``optsched schema FAMILY [KIND]`` prints one.

>>> doc = schema("hetero_gpu", "schedule")
>>> [p["title"] for p in doc["properties"]["tasks"]["items"]["prefixItems"]]
['job', 'round', 'task', 'gpu', 'start']
"""

from __future__ import annotations

import json
from importlib import resources

from optsched.errors import OptschedError

#: The families whose schemas ship with optsched.
FAMILIES = ("elastic_cluster", "edge_cloud", "ring_contention", "cojob_network", "hetero_gpu")
#: The two documents of a family.
KINDS = ("instance", "schedule")


class UnknownSchema(OptschedError):
    """A family or document kind that has no shipped schema."""


def schema(family: str, kind: str = "instance") -> dict:
    """The JSON Schema of one family's instance or schedule document.

    Parameters
    ----------
    family
        A family name, one of :data:`FAMILIES`.
    kind
        ``"instance"`` (the default) or ``"schedule"``.

    Returns
    -------
    dict
        The parsed schema (a fresh copy on every call).

    Raises
    ------
    UnknownSchema
        When ``family`` or ``kind`` is unknown; the message names the choices.

    Examples
    --------
    >>> schema("ring_contention")["properties"]["family"]["const"]
    'ring_contention'
    >>> schema("nope")
    Traceback (most recent call last):
    ...
    optsched.schema.UnknownSchema: schema: unknown family 'nope' (known: elastic_cluster, edge_cloud, ring_contention, cojob_network, hetero_gpu)
    """
    _check(family, FAMILIES, "family")
    _check(kind, KINDS, "kind")
    text = resources.files("optsched").joinpath("schemas", f"{family}.{kind}.json").read_text(
        encoding="utf-8")
    return json.loads(text)


def _check(value: object, known: tuple[str, ...], what: str) -> None:
    """Raise :class:`UnknownSchema` unless ``value`` is one of ``known``."""
    if value not in known:
        raise UnknownSchema(f"schema: unknown {what} {value!r} (known: {', '.join(known)})")

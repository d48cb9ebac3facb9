"""Helpers on instance JSON trees: walk, read and write by path, field patterns, a stable key.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math

# --------------------------------------------------------------------------- JSON tree helpers


def walk_nodes(node, path=()):
    """Every (path, node) of a JSON tree, depth first."""
    yield path, node
    if isinstance(node, dict):
        for k, v in node.items():
            yield from walk_nodes(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from walk_nodes(v, path + (i,))


def pattern_of(path) -> str:
    return ".".join("*" if isinstance(p, int) else str(p) for p in path)


def is_number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


SKIP_KEYS = ("family", "format_version", "name")


def leaf_paths(doc) -> list[tuple]:
    """Paths of the numeric leaves that mutations may change."""
    return [p for p, v in walk_nodes(doc) if is_number(v) and p and p[0] not in SKIP_KEYS]


def list_paths(doc) -> list[tuple]:
    return [p for p, v in walk_nodes(doc) if isinstance(v, list) and p and p[0] not in SKIP_KEYS]


def get_at(doc, path):
    for p in path:
        doc = doc[p]
    return doc


def set_at(doc, path, value):
    get_at(doc, path[:-1])[path[-1]] = value


def copy_doc(doc):
    return copy.deepcopy(doc)


def doc_key(doc: dict) -> str:
    """Content hash of an instance document (its name excluded)."""
    data = {k: v for k, v in doc.items() if k != "name"}
    text = json.dumps(data, sort_keys=True, separators=(",", ":"))
    return hashlib.sha1(text.encode()).hexdigest()[:16]


def round_sig(x: float, digits: int) -> float:
    if x == 0 or not math.isfinite(x):
        return x
    return float(f"{x:.{digits}g}")

"""Mutation operators on instance JSON trees: generic ones and the family's own (``Family.worst``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from optsched.experiments.worst.doc import (
    copy_doc,
    get_at,
    leaf_paths,
    list_paths,
    pattern_of,
    round_sig,
    set_at,
)
from optsched.experiments.worst.profile import Profile

# --------------------------------------------------------------------------- mutations


@dataclass
class Ctx:
    """What a mutation operator may read: the profile, the family's growable lists, the rng."""

    profile: Profile
    grows: tuple[str, ...]
    rng: np.random.Generator


def _pick(rng, items):
    return items[int(rng.integers(len(items)))] if items else None


def _clamp(ctx: Ctx, pattern: str, value: float):
    lo, hi, is_int = ctx.profile.num_cap(pattern)
    value = min(max(value, lo), hi)
    return int(round(value)) if is_int else round_sig(float(value), 6)


def op_perturb(doc, ctx: Ctx):
    """One numeric field: +-1..|v|/2 for integers, times exp(N(0, 0.5)) for reals."""
    path = _pick(ctx.rng, leaf_paths(doc))
    if path is None:
        return None
    v, pat = get_at(doc, path), pattern_of(path)
    if ctx.profile.num_cap(pat)[2]:
        step = int(ctx.rng.integers(1, max(1, abs(int(v)) // 2) + 1))
        new = v + (step if ctx.rng.random() < 0.5 else -step)
    else:
        new = v * math.exp(ctx.rng.normal(0, 0.5)) if v else abs(ctx.rng.normal(0, 1))
    set_at(doc, path, _clamp(ctx, pat, new))
    return doc


def op_scale(doc, ctx: Ctx):
    """One numeric field times 0.1, 0.5, 2 or 10."""
    path = _pick(ctx.rng, leaf_paths(doc))
    if path is None:
        return None
    factor = _pick(ctx.rng, (0.1, 0.5, 2.0, 10.0))
    set_at(doc, path, _clamp(ctx, pattern_of(path), get_at(doc, path) * factor))
    return doc


def op_extreme(doc, ctx: Ctx):
    """One numeric field to an extreme of its range: 0, 1, the generator's min or max, the cap."""
    path = _pick(ctx.rng, leaf_paths(doc))
    if path is None:
        return None
    pat = pattern_of(path)
    lo, hi, _ = ctx.profile.nums.get(pat, (0, 1, False))
    cap = ctx.profile.num_cap(pat)[1]
    set_at(doc, path, _clamp(ctx, pat, _pick(ctx.rng, (0, 1, lo, hi, cap))))
    return doc


def _repeated_field(doc, ctx: Ctx) -> tuple[dict[str, list], str | None]:
    """The leaf paths of ``doc`` by field pattern, and a random pattern with at least two
    leaves (None when there is none)."""
    groups: dict[str, list] = {}
    for p in leaf_paths(doc):
        groups.setdefault(pattern_of(p), []).append(p)
    return groups, _pick(ctx.rng, [k for k, v in groups.items() if len(v) >= 2])


def op_equalise(doc, ctx: Ctx):
    """Two values of the same field made equal (merge two arrivals, one type for two jobs)."""
    groups, pat = _repeated_field(doc, ctx)
    if pat is None:
        return None
    a, b = ctx.rng.choice(len(groups[pat]), size=2, replace=False)
    set_at(doc, groups[pat][a], get_at(doc, groups[pat][b]))
    return doc


def op_redraw(doc, ctx: Ctx):
    """An integer field redrawn within the generator's range (a type index, a count)."""
    paths = [p for p in leaf_paths(doc) if ctx.profile.num_cap(pattern_of(p))[2]]
    path = _pick(ctx.rng, paths)
    if path is None:
        return None
    lo, hi, _ = ctx.profile.nums.get(pattern_of(path), (0, 1, True))
    set_at(doc, path, int(ctx.rng.integers(int(lo), int(hi) + 1)))
    return doc


def _resizable(doc, ctx: Ctx, grow: bool):
    out = []
    for path in list_paths(doc):
        lo, hi = ctx.profile.list_range(pattern_of(path), ctx.grows)
        n = len(get_at(doc, path))
        if (grow and 1 <= n < hi) or (not grow and n > max(lo, 1)):
            out.append(path)
    return out


def _resizable_list(doc, ctx: Ctx, grow: bool):
    """A random list of ``doc`` that may grow (``grow``) or shrink, or None."""
    path = _pick(ctx.rng, _resizable(doc, ctx, grow=grow))
    return None if path is None else get_at(doc, path)


def op_copy(doc, ctx: Ctx):
    """A list element (job, task, flow, server) copied to a random position."""
    if (items := _resizable_list(doc, ctx, grow=True)) is None:
        return None
    item = copy_doc(items[int(ctx.rng.integers(len(items)))])
    items.insert(int(ctx.rng.integers(len(items) + 1)), item)
    return doc


def op_remove(doc, ctx: Ctx):
    """A list element removed."""
    if (items := _resizable_list(doc, ctx, grow=False)) is None:
        return None
    del items[int(ctx.rng.integers(len(items)))]
    return doc


def _two_elements(doc, ctx: Ctx):
    """A random list of ``doc`` with at least two elements and two distinct indices in it."""
    path = _pick(ctx.rng, [p for p in list_paths(doc) if len(get_at(doc, p)) >= 2])
    if path is None:
        return None
    items = get_at(doc, path)
    i, j = ctx.rng.choice(len(items), size=2, replace=False)
    return items, i, j


def op_swap(doc, ctx: Ctx):
    """Two elements of a list swapped (orders and tie-breaks by index)."""
    if (pick := _two_elements(doc, ctx)) is None:
        return None
    items, i, j = pick
    items[i], items[j] = items[j], items[i]
    return doc


def op_replace(doc, ctx: Ctx):
    """A list element overwritten by a copy of another (a copy that keeps the size)."""
    if (pick := _two_elements(doc, ctx)) is None:
        return None
    items, i, j = pick
    items[j] = copy_doc(items[i])
    return doc


def op_flatten(doc, ctx: Ctx):
    """Every value of one field set to one value (all arrivals equal, all sync times 0): 0,
    the smallest present, or one of them."""
    groups, pat = _repeated_field(doc, ctx)
    if pat is None:
        return None
    values = [get_at(doc, p) for p in groups[pat]]
    value = _pick(ctx.rng, (0, min(values), _pick(ctx.rng, values)))
    for p in groups[pat]:
        set_at(doc, p, _clamp(ctx, pat, value))
    return doc


GENERIC_OPS = (op_perturb, op_scale, op_extreme, op_equalise, op_flatten, op_redraw, op_copy,
               op_remove, op_replace, op_swap)

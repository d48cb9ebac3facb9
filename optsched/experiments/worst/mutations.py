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


# ---- priors of issue 23: wide (log-scale) spreads, many elements at once, sequences

#: Largest factor of a log-scale move: a value is multiplied by exp(U(-ln LOG_SPREAD,
#: ln LOG_SPREAD)). Adversarial instances mix weights and sizes that differ by orders of
#: magnitude (a heavy job among light ones, one long stage before many short ones); a uniform
#: step of +-50 % needs a dozen accepted moves to get there, a log-uniform one a single move.
LOG_SPREAD = 1000.0
#: Mean number of elements a many-element move copies or removes (1 + geometric).
MANY_P = 0.35


def _scalable(doc, under=()) -> list[tuple]:
    """Leaf paths (below ``under``) a log-scale move may change: every number except integers
    at list positions (indices such as a flow's machines; a sequence has its own moves)."""
    out = []
    for path in leaf_paths(doc):
        if path[:len(under)] != under:
            continue
        if isinstance(path[-1], int) and isinstance(get_at(doc, path), int):
            continue
        out.append(path)
    return out


def _log_scale_at(doc, ctx: Ctx, path) -> None:
    v, pat = get_at(doc, path), pattern_of(path)
    factor = math.exp(ctx.rng.uniform(-1.0, 1.0) * math.log(LOG_SPREAD))
    new = (v if v else ctx.profile.nums.get(pat, (0, 1, False))[1] or 1.0) * factor
    if ctx.profile.num_cap(pat)[2] and v >= 1:
        new = max(1, new)
    set_at(doc, path, _clamp(ctx, pat, new))


def op_log_scale(doc, ctx: Ctx):
    """One numeric field times a log-uniform factor in [1/LOG_SPREAD, LOG_SPREAD] (integers
    rounded, kept >= 1 when they were)."""
    path = _pick(ctx.rng, _scalable(doc))
    if path is None:
        return None
    _log_scale_at(doc, ctx, path)
    return doc


def _how_many(ctx: Ctx, room: int) -> int:
    return max(1, min(room, int(ctx.rng.geometric(MANY_P))))


def op_copy_many(doc, ctx: Ctx):
    """One list element copied k times (k = 1 + geometric, up to the list's room): many light
    jobs beside one heavy one in one move."""
    paths = _resizable(doc, ctx, grow=True)
    path = _pick(ctx.rng, paths)
    if path is None:
        return None
    items = get_at(doc, path)
    room = ctx.profile.list_range(pattern_of(path), ctx.grows)[1] - len(items)
    item = items[int(ctx.rng.integers(len(items)))]
    for _ in range(_how_many(ctx, room)):
        items.insert(int(ctx.rng.integers(len(items) + 1)), copy_doc(item))
    return doc


def op_remove_many(doc, ctx: Ctx):
    """k elements of one list removed (k = 1 + geometric, down to the list's minimum)."""
    path = _pick(ctx.rng, _resizable(doc, ctx, grow=False))
    if path is None:
        return None
    items = get_at(doc, path)
    lo = max(ctx.profile.list_range(pattern_of(path), ctx.grows)[0], 1)
    for _ in range(_how_many(ctx, len(items) - lo)):
        del items[int(ctx.rng.integers(len(items)))]
    return doc


def op_flatten_list(doc, ctx: Ctx):
    """Every number of one list set to one of its values (one job's time on every GPU: a
    homogeneous row)."""
    paths = [p for p in list_paths(doc)
             if len(items := get_at(doc, p)) >= 2 and all(is_num(x) for x in items)
             and pattern_of(p) not in ctx.profile.sequences]
    path = _pick(ctx.rng, paths)
    if path is None:
        return None
    items = get_at(doc, path)
    value = _pick(ctx.rng, items)
    items[:] = [value] * len(items)
    return doc


def is_num(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _sequence(doc, ctx: Ctx):
    """A random sequence list of ``doc`` (a pattern the profile found strictly increasing)
    with the path of its nearest enclosing object, or None."""
    paths = [p for p in list_paths(doc) if pattern_of(p) in ctx.profile.sequences
             and isinstance(p[-1], str) and get_at(doc, p)]
    path = _pick(ctx.rng, paths)
    return None if path is None else (path, get_at(doc, path[:-1]))


def _linked_counts(owner, old: int, new: int, at_least: bool) -> None:
    """Named integer fields inside ``owner`` (a job's ``stages``) that count the sequence's
    elements follow its new length: those equal to ``old`` become ``new`` (growing), those
    above ``new`` become ``new`` (shrinking)."""
    for path, node in walk_named_ints(owner):
        if (at_least and node > new) or (not at_least and node == old):
            set_at(owner, path, new)


def walk_named_ints(node, path=()):
    """(path, value) of every integer stored under a dict key (not a list position)."""
    if isinstance(node, dict):
        for k, v in node.items():
            if isinstance(v, int) and not isinstance(v, bool):
                yield path + (k,), v
            else:
                yield from walk_named_ints(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            if isinstance(v, (dict, list)):
                yield from walk_named_ints(v, path + (i,))


def op_grow_sequence(doc, ctx: Ctx):
    """k elements appended to a sequence (a stage with its cumulative iteration count), each
    one step beyond the last, the step log-uniform in [1, the largest step] (``op_step`` spreads
    them further); the counts that reached the old end (jobs running the last stage) run on to
    the new end."""
    if (pick := _sequence(doc, ctx)) is None:
        return None
    path, owner = pick
    items = get_at(doc, path)
    room = ctx.profile.list_range(pattern_of(path), ctx.grows)[1] - len(items)
    if room <= 0:
        return None
    old = len(items)
    steps = [b - a for a, b in zip([0] + items, items)]
    top = max(max(steps), 2)
    for _ in range(_how_many(ctx, room)):
        step = max(1, int(round(math.exp(ctx.rng.uniform(0, math.log(top))))))
        items.append(items[-1] + step)
    _linked_counts(owner, old, len(items), at_least=False)
    return doc


def op_shrink_sequence(doc, ctx: Ctx):
    """The last k elements of a sequence removed; counts beyond its new end cut to it."""
    if (pick := _sequence(doc, ctx)) is None:
        return None
    path, owner = pick
    items = get_at(doc, path)
    if len(items) < 2:
        return None
    del items[len(items) - _how_many(ctx, len(items) - 1):]
    _linked_counts(owner, 0, len(items), at_least=True)
    return doc


def op_step(doc, ctx: Ctx):
    """One step of a sequence (the iterations of one stage) times a log-uniform factor, the
    later elements shifted with it."""
    if (pick := _sequence(doc, ctx)) is None:
        return None
    items = get_at(doc, pick[0])
    i = int(ctx.rng.integers(len(items)))
    step = items[i] - (items[i - 1] if i else 0)
    factor = math.exp(ctx.rng.uniform(-1.0, 1.0) * math.log(LOG_SPREAD))
    delta = max(1, int(round(step * factor))) - step
    items[i:] = [x + delta for x in items[i:]]
    return doc


def op_outlier(doc, ctx: Ctx):
    """A counted list (jobs, cojobs) made of copies of one of its elements, up to a random
    length within its room, and one copy changed by a log-scale move: the shape of the classic
    worst cases of greedy rules (many identical light jobs and one heavy one; ties everywhere
    but one)."""
    paths = [p for p in list_paths(doc) if pattern_of(p) in ctx.grows and get_at(doc, p)
             and isinstance(get_at(doc, p)[0], dict)]
    path = _pick(ctx.rng, paths)
    if path is None:
        return None
    items = get_at(doc, path)
    hi = ctx.profile.list_range(pattern_of(path), ctx.grows)[1]
    n = int(ctx.rng.integers(max(2, len(items) - 1), max(2, hi) + 1))
    item = items[int(ctx.rng.integers(len(items)))]
    items[:] = [copy_doc(item) for _ in range(n)]
    i = int(ctx.rng.integers(n))
    field = _pick(ctx.rng, _scalable(doc, path + (i,)))
    if field is not None:
        _log_scale_at(doc, ctx, field)
    return doc


def op_zero_entry(doc, ctx: Ctx):
    """One positive entry of a numeric row set to 0 (a resource an element does not demand, a
    device where a task costs nothing): degenerate vectors are the classic worst cases of
    multi-resource packing, and a uniform or log-scale move never reaches 0 exactly
    (``op_extreme`` does for one field at a time, among all of them). The field (a row
    pattern: worker demands, capacities, a job's times) is drawn first, then a row of it, so a
    field with few rows (two worker types) is as likely as one with many (jobs). Only the fields
    where a zero is valid (:attr:`.profile.Profile.zeroable`; not sequences)."""
    by_field: dict[str, list] = {}
    for p in list_paths(doc):
        items = get_at(doc, p)
        if pattern_of(p) in ctx.profile.zeroable and any(x > 0 for x in items):
            by_field.setdefault(pattern_of(p), []).append(p)
    field = _pick(ctx.rng, sorted(by_field))
    if field is None:
        return None
    items = get_at(doc, _pick(ctx.rng, by_field[field]))
    i = _pick(ctx.rng, [k for k, x in enumerate(items) if x > 0])
    items[i] = 0 if isinstance(items[i], int) else 0.0
    return doc


#: Operators that change how many elements a list holds or how its numbers spread by orders of
#: magnitude (the priors above); part of the generic set.
PRIOR_OPS = (op_log_scale, op_copy_many, op_remove_many, op_flatten_list, op_grow_sequence,
             op_shrink_sequence, op_step, op_outlier, op_zero_entry)

GENERIC_OPS = (op_perturb, op_scale, op_extreme, op_equalise, op_flatten, op_redraw, op_copy,
               op_remove, op_replace, op_swap) + PRIOR_OPS

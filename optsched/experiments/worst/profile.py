"""What the generator produces for a family and preset: the range of every field and list length.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from optsched.experiments.worst.doc import get_at, leaf_paths, list_paths, pattern_of
from optsched.experiments.worst.sizes import size_of

#: Generator seeds profiled to learn field ranges, list lengths and the default size bound.
PROFILE_SEEDS = 16
#: Elements a growable *sequence* (a strictly increasing list of integers, e.g. cumulative
#: iteration counts, one entry per stage) may gain over the generator's longest: a guarantee
#: that rises with such a count (PDA's 2 - 2/(l+1), l stages) is violated, if at all, by
#: instances with many more of them than a tiny generator draws.
SEQUENCE_EXTRA = 10
#: Elements a *device* list (a list the size does not count whose element can be copied without
#: breaking the instance: servers, GPUs) may gain over the generator's longest. A claim can need
#: more devices than a tiny generator draws (issue 23 item 2b: add/remove devices).
DEVICE_EXTRA = 2


# --------------------------------------------------------------------------- profile


@dataclass
class Profile:
    """What the generator produces for this family/preset/overrides: numeric ranges per field
    pattern, list lengths per pattern, the largest size."""

    nums: dict[str, tuple[float, float, bool]] = field(default_factory=dict)
    lists: dict[str, tuple[int, int]] = field(default_factory=dict)
    size_max: int = 0
    #: List patterns whose elements were integers in strictly increasing order in every
    #: generated instance, at least one of them with two or more elements (cumulative counts).
    sequences: set[str] = field(default_factory=set)
    #: List patterns the size does not count whose last element, copied, leaves a generated
    #: instance valid (servers, GPUs; not a job's row of times per device, whose length the
    #: device list fixes).
    devices: set[str] = field(default_factory=set)
    #: Numeric row patterns (lists of numbers) in which an entry set to 0 leaves a generated
    #: instance valid (a demand, a capacity; not a job's compute times, which must be > 0).
    zeroable: set[str] = field(default_factory=set)

    def num_cap(self, pattern: str) -> tuple[float, float, bool]:
        """(low, high, integer) of the values a mutation may set; validation has the last word.
        Integers (counts, slots, horizons) up to twice the generator's maximum, reals up to 1000
        times (weights and times of an adversarial instance are extreme)."""
        lo, hi, is_int = self.nums.get(pattern, (0.0, 1.0, False))
        if is_int:
            return 0, max(2 * hi, hi + 2), True
        return 0.0, (1000.0 * hi if hi > 0 else 1.0), False

    def list_range(self, pattern: str, grows: tuple[str, ...]) -> tuple[int, int]:
        """(min, max) length of a list: free (up to twice the generator's) for the lists the
        size measure counts; for the others at most the generator's longest, and down to one
        element (one GPU: with the counted size bounded, fewer resources mean more contention,
        and hetero_gpu's tiny preset never draws fewer than two GPUs; lists of a fixed shape,
        such as a job's row of times per GPU, are kept consistent by validation); device lists
        (:attr:`devices`) up to :data:`DEVICE_EXTRA` more than the generator's longest."""
        if pattern in grows:
            lo, hi = self.lists.get(pattern, (1, 1))
            extra = SEQUENCE_EXTRA if pattern in self.sequences else 2
            return 1, max(2 * hi, hi + extra)
        hi = self.lists.get(pattern, (1, 1 << 30))[1]
        return 1, hi + DEVICE_EXTRA if pattern in self.devices else hi


def profile(family, preset: str, overrides: dict) -> Profile:
    """Generate :data:`PROFILE_SEEDS` instances and record their ranges."""
    prof = Profile()
    increasing: dict[str, bool] = {}
    longest: dict[str, int] = {}
    for seed in range(PROFILE_SEEDS):
        doc = family.generate(preset, seed, **overrides).to_dict()
        prof.size_max = max(prof.size_max, size_of(family, doc))
        for path in leaf_paths(doc):
            v, pat = get_at(doc, path), pattern_of(path)
            lo, hi, is_int = prof.nums.get(pat, (v, v, True))
            prof.nums[pat] = (min(lo, v), max(hi, v), is_int and isinstance(v, int))
        for path in list_paths(doc):
            n, pat = len(get_at(doc, path)), pattern_of(path)
            lo, hi = prof.lists.get(pat, (n, n))
            prof.lists[pat] = (min(lo, n), max(hi, n))
            items = get_at(doc, path)
            increasing[pat] = increasing.get(pat, True) and _increasing_ints(items)
            longest[pat] = max(longest.get(pat, 0), n)
    prof.sequences = {pat for pat, ok in increasing.items() if ok and longest[pat] >= 2}
    first = family.generate(preset, 0, **overrides).to_dict()
    prof.devices = _devices(family, first)
    prof.zeroable = _zeroable(family, first, prof.sequences)
    return prof


def _valid(family, doc: dict) -> bool:
    from optsched.errors import InvalidInstance

    try:
        family.problem.Instance.from_dict(doc)
    except (InvalidInstance, ValueError, TypeError, KeyError, IndexError):
        return False
    return True


def _zeroable(family, doc: dict, sequences: set[str]) -> set[str]:
    """Patterns of the numeric rows of ``doc`` (not sequences) whose first positive entry, set
    to 0 in one row, keeps the instance valid."""
    import copy

    out: set[str] = set()
    for path in list_paths(doc):
        pat, items = pattern_of(path), get_at(doc, path)
        if pat in out or pat in sequences or len(items) < 2 or not all(
                isinstance(x, (int, float)) and not isinstance(x, bool) for x in items):
            continue
        i = next((k for k, x in enumerate(items) if x > 0), None)
        if i is None:
            continue
        trial = copy.deepcopy(doc)
        get_at(trial, path)[i] = 0
        if _valid(family, trial):
            out.add(pat)
    return out


def _devices(family, doc: dict) -> set[str]:
    """Patterns of the lists of ``doc`` the size does not count whose last element, copied
    once, keeps the instance valid (a server's capacity row; not a row of one job's times)."""
    import copy

    grows = family.worst.grows if family.worst is not None else ()
    out: set[str] = set()
    for path in list_paths(doc):
        pat, items = pattern_of(path), get_at(doc, path)
        if pat in grows or pat in out or not items:
            continue
        trial = copy.deepcopy(doc)
        get_at(trial, path).append(copy.deepcopy(items[-1]))
        if _valid(family, trial):
            out.add(pat)
    return out


def _increasing_ints(items: list) -> bool:
    """Integers (not booleans) in strictly increasing order."""
    if not all(isinstance(x, int) and not isinstance(x, bool) for x in items):
        return False
    return all(a < b for a, b in zip(items, items[1:]))

"""Seeded generator of the toy family."""

from __future__ import annotations

import numpy as np

from tests.toy.problem import Instance

PRESETS = ("tiny", "small", "paper")
SIZES = {"tiny": 4, "small": 6, "paper": 200}


def generate(preset: str = "tiny", seed: int = 0, **overrides) -> Instance:
    rng = np.random.default_rng(seed)
    n = SIZES[preset]
    return Instance(tuple(int(x) for x in rng.integers(1, 10, n)),
                    tuple(float(x) for x in rng.integers(1, 5, n)))

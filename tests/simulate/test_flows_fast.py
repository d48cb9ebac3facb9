"""The optimised flow simulator gives bit-identical runs to the first version (issue 19 item 7).

tests/simulate/reference_flows.py is optsched/simulate/flows.py as it was before its allocation was
optimised; every policy of cojob_network runs on both and the timelines must be equal, not close.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from optsched.simulate import flows
from optsched.solvers.cojob_network.baselines import make_policy
from optsched.workloads.cojob_network import generate

_spec = importlib.util.spec_from_file_location("reference_flows",
                                               Path(__file__).parent / "reference_flows.py")
reference = importlib.util.module_from_spec(_spec)
sys.modules["reference_flows"] = reference
_spec.loader.exec_module(reference)

POLICIES = ("pda", "grouper", "grouper_authors", "baraat", "sincronia", "fair_share")


def _same(a, b) -> bool:
    return (a.S == b.S and a.job_end == b.job_end and a.starts == b.starts
            and a.segments == b.segments and (a.events, a.allocations) == (b.events, b.allocations))


@pytest.mark.parametrize("preset,seed", [("tiny", s) for s in range(4)] + [("small", 0)])
def test_every_policy_runs_bit_identical_to_the_reference(preset, seed):
    inst = generate(preset, seed)
    for name in POLICIES:
        fast = flows.simulate(inst, make_policy(inst, name))
        ref = reference.simulate(inst, make_policy(inst, name))
        assert _same(fast, ref), name


@pytest.mark.parametrize("seed", range(20))
def test_allocate_is_bit_identical_to_the_reference(seed):
    rng = np.random.default_rng(seed)
    P = int(rng.integers(1, 6))
    n = int(rng.integers(1, 40))
    src = [int(x) for x in rng.integers(0, P, n)]
    dst = [P + int(x) for x in rng.integers(0, P, n)]
    cls = [int(x) for x in rng.integers(0, 4, n)]
    cap = float(rng.choice([1.0, 0.3, 125.0]))
    assert flows.allocate(src, dst, cls, 2 * P, cap) == reference.allocate(src, dst, cls, 2 * P, cap)

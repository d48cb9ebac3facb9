"""The optimised flow simulator gives bit-identical runs to the first version (issue 19 item 7).

tests/simulate/reference_flows_d93e235.py is optsched/simulate/flows.py as it was before its third
speed-up (it ran bit-identically to the first version, before its allocation was optimised, which
this file compared with until that copy was retired); tests/simulate/reference_issue19.py holds Sincronia's numpy BSSI and verify's numpy
integration as they were before the second speed-up. Every policy of cojob_network runs on both and
the timelines must be equal, not close; so must verify's integration of them.
"""

from __future__ import annotations

import numpy as np
import pytest

from optsched.problems import cojob_network as problem
from optsched.simulate import flows
from optsched.solvers.cojob_network import SPEC
from optsched.solvers.cojob_network.algorithm import pda_order
from optsched.solvers.cojob_network.baselines import BSSI, bssi_order, make_policy
from optsched.workloads.cojob_network import generate
from tests.simulate import reference_flows_d93e235 as reference
from tests.simulate import reference_issue19 as old

POLICIES = ("pda", "grouper", "grouper_authors", "baraat", "sincronia", "fair_share")


def _same(a, b) -> bool:
    return (a.S == b.S and a.job_end == b.job_end and a.starts == b.starts
            and a.segments == b.segments and (a.events, a.allocations) == (b.events, b.allocations))


def _reference_policy(inst, name: str):
    """The policy as it was: Sincronia with numpy BSSI, every other one as registered."""
    if name.startswith("sincronia"):
        return old.Sincronia(inst, SPEC.method(name).params)
    return make_policy(inst, name)


def _check(inst, names) -> None:
    for name in names:
        fast = flows.simulate(inst, make_policy(inst, name))
        ref = reference.simulate(inst, _reference_policy(inst, name))
        assert _same(fast, ref), name
        schedule = flows.schedule_of(fast, (), name)
        new_tl, old_tl = problem._timeline(inst, schedule), old._timeline(inst, schedule)
        assert new_tl == old_tl, name


@pytest.mark.parametrize("preset,seed", [("tiny", s) for s in range(4)] + [("small", 0)])
def test_every_policy_runs_bit_identical_to_the_reference(preset, seed):
    _check(generate(preset, seed), POLICIES + ("sincronia_full",))


@pytest.mark.slow  # 25-70 s each at load 8; tiny and small stay in the default run
@pytest.mark.parametrize("name", ["sincronia", "fair_share", "pda"])
def test_paper_runs_are_bit_identical_to_the_reference(name):
    """Paper seed 0, where the speed-up is for (issue 19 item 7: <= 10 s per method)."""
    _check(generate("paper", 0), (name,))


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


@pytest.mark.parametrize("seed", range(40))
def test_bssi_order_is_pda_order_with_bssi_params(seed):
    """The plain-Python BSSI gives numpy pda_order's order, ties and zero loads included."""
    rng = np.random.default_rng(seed)
    n, P = int(rng.integers(0, 30)), int(rng.integers(1, 8))
    loads = {}
    for key in [(int(g), int(j)) for g, j in rng.integers(0, 10, (n, 2))]:
        if seed % 2:
            row = rng.choice([0.0, 1.0, 2.5, 1 / 3, float(rng.random() * 100)], 2 * P)
        else:
            row = rng.random(2 * P) * (rng.random(2 * P) < 0.4)
        loads[key] = [float(x) for x in row]
    expected, _ = pda_order({a: np.array(v) for a, v in loads.items()}, {a: [a] for a in loads},
                            BSSI)
    assert bssi_order(loads) == expected

"""Violations found by ``optsched worst`` (issue 23, benchmarks/refute.py; one by a directed
sampler, see FOUND), shrunk and saved as tests/data/<family>/refute_*.json: each is checked
again here from the saved instance
through the same path as ``optsched worst FAMILY --method M --target T --replay FILE`` (every
schedule verified; the optimum proven for the violation target)."""

from __future__ import annotations

from pathlib import Path

import pytest

from optsched.experiments.worst import replay

DATA = Path(__file__).resolve().parent.parent / "data"

#: (file, family, method, target, violation factor when found)
FOUND = [
    ("ring_contention/refute_lemma3.json", "ring_contention", "sjf_bco", "lemma:lemma3", 100.0),
    ("ring_contention/refute_lemma3.json", "ring_contention", "sjf_bco_proof", "lemma:lemma3",
     100.0),
    ("ring_contention/refute_lemma3_found.json", "ring_contention", "sjf_bco", "lemma:lemma3",
     1.4027898761312525),
    # Lemma 4 under the proof reading (errata R3): theta~ = 12 > ceil(Phi (u/l) theta*) = 11,
    # and theta~ = 6 > ceil(4.013) = 5
    ("ring_contention/refute_lemma4_proof.json", "ring_contention", "sjf_bco_proof",
     "lemma:lemma4", 12 / 11),
    ("ring_contention/refute_lemma4_proof.json", "ring_contention", "sjf_bco", "lemma:lemma4",
     20 / 11),
    ("ring_contention/refute_lemma4_proof_2.json", "ring_contention", "sjf_bco_proof",
     "lemma:lemma4", 6 / 5),
    # found by a directed random sampler (worker types without CPU demand), shrunk by worst's
    # shrinker: Alg. 4 costs 2.817 where the exact A_mincost1 finds 0 (factor 1 + 2.817)
    ("elastic_cluster/refute_mincost1.json", "elastic_cluster", "a_online", "lemma:mincost1",
     3.816606519251038),
    ("elastic_cluster/refute_mincost1.json", "elastic_cluster", "a_online_literal_pricing",
     "lemma:mincost1", 3.816606519251038),
]


@pytest.mark.parametrize("path, family, method, target, factor", FOUND,
                         ids=[f"{f[0]}:{f[2]}" for f in FOUND])
def test_saved_violation_still_violates(path, family, method, target, factor):
    res = replay(family, method, DATA / path, target=target, time_limit=60.0)
    assert res.violation is not None and res.exceeds_guarantee
    assert res.violation > 1 + 1e-6
    assert res.violation == pytest.approx(factor, rel=1e-6)
    if target == "violation":
        assert res.ratio is not None and res.ratio > res.guarantee

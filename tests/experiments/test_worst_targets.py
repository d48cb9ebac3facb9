"""optsched worst targets and strategies (issue 23): the violation target (ALG / (OPT x
guarantee)), lemma targets (registered Claim predicates), the continuous and hybrid strategies,
--replay, and the CLI's errors and default output folder."""

from __future__ import annotations

import json

import pytest

from optsched import registry
from optsched.cli import main
from optsched.experiments.worst import replay, run_worst
from optsched.io import load_instance

from .conftest import FAMILY

#: A few evaluations of Hare on tiny hetero_gpu instances (exact ~0.1 s each).
FAST = dict(budget=300.0, time_limit=20.0, max_evals=4, plots=False)


def test_violation_target_is_ratio_over_guarantee(hetero, tmp_path):
    res = run_worst(FAMILY, "hare", seed=0, target="violation", out=tmp_path, **FAST)
    assert res.ratio is not None and res.guarantee is not None
    assert res.violation == pytest.approx(res.ratio / res.guarantee, rel=1e-12)
    assert res.exceeds_guarantee == (res.violation > 1 + 1e-6)
    saved = json.loads((tmp_path / "result.json").read_text())
    assert saved["violation"] == res.violation and saved["target"] == "violation"
    assert "exceeds_guarantee" in saved


def test_violation_target_needs_a_guarantee(hetero):
    with pytest.raises(Exception, match="no claimed guarantee"):
        run_worst(FAMILY, "gavel_fifo", target="violation", **FAST)


def test_lemma_target_scores_the_claim_and_solves_no_reference():
    res = run_worst("ring_contention", "sjf_bco", seed=0, target="lemma:lemma3",
                    budget=300.0, time_limit=20.0, max_evals=6, plots=False)
    assert res.violation is not None and res.reference is None and res.ratio is None
    inst = registry.get_family("ring_contention").problem.Instance.from_dict(res.instance)
    again = registry.solve(inst, "sjf_bco")
    claim = registry.get_family("ring_contention").worst.claim("lemma3")
    assert claim.check(inst, again) == pytest.approx(res.violation, rel=1e-12)


def test_lemma_predicates_reproduce_the_hand_made_counterexamples(data):
    """errata R2 (Lemma 3 under both readings: 4 > 3.134) and R3 (on its shipped instance,
    Lemma 4 fails only under the pseudo-code reading: 20 > ceil(10.60) = 11)."""
    spec = registry.get_family("ring_contention").worst
    inst3 = load_instance(data / "ring_contention" / "lemma3_counterexample.json")
    inst4 = load_instance(data / "ring_contention" / "lemma4_counterexample.json")
    for name in ("sjf_bco", "sjf_bco_proof"):
        assert spec.claim("lemma3").check(inst3, registry.solve(inst3, name)) == pytest.approx(
            4 / 3.1344, rel=1e-3)
    lemma4 = {name: spec.claim("lemma4").check(inst4, registry.solve(inst4, name))
              for name in ("sjf_bco", "sjf_bco_proof")}
    assert lemma4["sjf_bco"] == pytest.approx(20 / 11) and lemma4["sjf_bco_proof"] < 1


@pytest.mark.parametrize("strategy", ["continuous", "hybrid"])
def test_continuous_strategies_are_deterministic(hetero, strategy):
    kw = {**FAST, "max_evals": 10}
    a = run_worst(FAMILY, "hare", seed=5, strategy=strategy, target="violation", shrink=False, **kw)
    b = run_worst(FAMILY, "hare", seed=5, strategy=strategy, target="violation", shrink=False, **kw)
    assert a.violation is not None and a.counted >= 1
    assert a.instance == b.instance and a.violation == b.violation


def test_replay_of_a_saved_instance(hetero, tmp_path, capsys):
    res = run_worst(FAMILY, "hare", seed=1, target="violation", out=tmp_path, **FAST)
    again = replay(FAMILY, "hare", tmp_path / "worst.json", target="violation")
    assert again.violation == pytest.approx(res.violation, rel=1e-9)
    assert main(["worst", FAMILY, "--method", "hare", "--target", "violation",
                 "--replay", str(tmp_path / "worst.json")]) in (0, None)
    out = capsys.readouterr().out
    assert "violation" in out and "ratio / guarantee" in out




def test_cli_saves_by_default_and_explains(hetero, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["worst", FAMILY, "--method", "hare", "--budget", "8", "--time-limit", "5",
                 "--target", "violation"]) in (0, None)
    out = capsys.readouterr().out
    folders = list(tmp_path.glob(f"worst-{FAMILY}-hare-*"))
    assert len(folders) == 1 and (folders[0] / "result.json").exists()
    if "no candidate" not in out:
        assert (folders[0] / "worst.json").exists()
        assert "ratio / guarantee" in out and "replay" in out and folders[0].name in out


def test_excess_is_above_one_exactly_when_the_factor_is():
    """The violation target ranks by (ratio - 1) / (guarantee - 1): no credit for a guarantee of
    1 met trivially (PDA on one stage), the same verdict as ratio / guarantee otherwise."""
    from optsched.experiments.worst.evaluate import excess

    assert excess(1.0, 1.0) == 0.0 and excess(1.25, 1.0) == 1.25
    for ratio, g in [(3.5, 3.0), (2.9, 3.0), (1.4, 4 / 3), (1.3, 4 / 3), (3.0, 3.0)]:
        assert (excess(ratio, g) > 1) == (ratio > g)
    assert excess(2.0, 3.0) < excess(2.5, 3.0)

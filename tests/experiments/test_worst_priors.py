"""optsched worst, issue 23 item 3: the search-space priors (log-scale and many-element moves,
sequences, the guarantee descent), pruning by a lower bound, the faster exact reference, and a
claim's hypotheses."""

from __future__ import annotations

import numpy as np
import pytest

from optsched import registry
from optsched.experiments.worst import doc_key, run_worst
from optsched.experiments.worst import evaluate
from optsched.experiments.worst.evaluate import evaluate_here
from optsched.experiments.worst.mutations import (
    Ctx,
    op_grow_sequence,
    op_outlier,
    op_shrink_sequence,
    op_step,
)
from optsched.experiments.worst.profile import profile
from optsched.experiments.worst.state import Run

from .conftest import FAMILY


def _ctx(family: str, seed: int = 0, **overrides) -> Ctx:
    fam = registry.get_family(family)
    assert fam.worst is not None
    return Ctx(profile(fam, "tiny", overrides), fam.worst.grows, np.random.default_rng(seed))


def test_profile_finds_the_cumulative_iteration_lists():
    assert profile(registry.get_family("cojob_network"), "tiny", {}).sequences == {
        "cojobs.*.iterations"}
    assert profile(registry.get_family("hetero_gpu"), "tiny", {}).sequences == set()


@pytest.mark.parametrize("op", [op_grow_sequence, op_shrink_sequence, op_step])
def test_sequence_moves_keep_cojob_instances_valid(op):
    fam = registry.get_family("cojob_network")
    ctx = _ctx("cojob_network")
    changed = 0
    for seed in range(30):
        doc = fam.generate("tiny", seed).to_dict()
        before = [len(c["iterations"]) for c in doc["cojobs"]]
        out = op(doc, ctx)
        if out is None:
            continue
        inst = fam.problem.Instance.from_dict(out)          # raises if the move broke it
        changed += [len(c.iterations) for c in inst.cojobs] != before or op is op_step
    assert changed >= 10


def test_growing_a_sequence_lets_the_jobs_at_its_end_run_on():
    fam = registry.get_family("cojob_network")
    ctx = _ctx("cojob_network", seed=3)
    doc = fam.generate("tiny", 0).to_dict()
    doc["cojobs"] = doc["cojobs"][:1]
    n = len(doc["cojobs"][0]["iterations"])
    last = [j["stages"] == n for j in doc["cojobs"][0]["jobs"]]
    out = op_grow_sequence(doc, ctx)
    cojob = out["cojobs"][0]
    assert len(cojob["iterations"]) > n
    assert all(a < b for a, b in zip(cojob["iterations"], cojob["iterations"][1:]))
    for ran_to_end, job in zip(last, cojob["jobs"]):
        assert (job["stages"] == len(cojob["iterations"])) == ran_to_end
    fam.problem.Instance.from_dict(out)


def test_outlier_move_makes_copies_and_one_outlier():
    fam = registry.get_family("hetero_gpu")
    ctx = _ctx("hetero_gpu", seed=1)
    outs = [op_outlier(fam.generate("tiny", s).to_dict(), ctx) for s in range(20)]
    shapes = []
    for out in outs:
        jobs = out["jobs"]
        distinct = {doc_key({"j": j}) for j in jobs}
        shapes.append((len(jobs), len(distinct)))
    assert all(d <= 2 for _, d in shapes)
    assert any(n >= 3 and d == 2 for n, d in shapes)


def _run(family="hetero_gpu", method="hare", **kw):
    return Run(family, [method], "exact", size=None, budget=60, time_limit=10, seed=0,
               preset="tiny", overrides={}, workers=1, scheduler=None, out=None,
               strategy="search", max_evals=None, stop_at=None, shrink_share=0.0,
               target="violation", **kw)


def test_guarantee_descent_makes_the_gpus_alike():
    """Hare's alpha(2+alpha) falls to its smallest, 3, without losing a task."""
    run = _run()
    fam = run.fam
    starts = [fam.generate("tiny", s).to_dict() for s in range(8)]
    assert any(run.guarantee(d) > 3 + 1e-9 for d in starts)
    for doc in starts:
        doc.pop("name", None)
        out = run.descend(doc)
        assert run.guarantee(out) == pytest.approx(3.0)
        assert fam.worst.measure(out) == fam.worst.measure(doc)
        assert len(out["gpus"]) == 1        # level removals: the most contention per task


def test_guarantee_descent_leaves_pda_stages_alone():
    """PDA's 2 - 2/(l+1) grows with the stages, which the size measure's lists count: the
    descent may not remove one."""
    run = _run("cojob_network", "pda")
    for seed in range(4):
        doc = run.fam.generate("tiny", seed).to_dict()
        doc.pop("name", None)
        out = run.descend(doc)
        assert run.guarantee(out) == pytest.approx(run.guarantee(doc))


def _task(doc, **kw):
    return {"family": "hetero_gpu", "instance": doc, "key": doc_key(doc), "methods": ["hare"],
            "against": "exact", "time_limit": 20.0, "target": "violation", **kw}


def test_pruning_skips_the_exact_solve_only_below_the_threshold():
    fam = registry.get_family("hetero_gpu")
    doc = fam.generate("tiny", 1).to_dict()
    doc.pop("name")
    pruned = evaluate_here(_task(doc, bound="lower_bound", prune_below=10.0))[0]
    assert pruned["status"] == "pruned" and pruned["reference"] is None
    inst = fam.problem.Instance.from_dict(doc)
    lb = registry.solve(inst, "lower_bound").lower_bound
    alg = registry.solve(inst, "hare")
    ub = (alg.objective / lb - 1) / (alg.guarantee - 1)
    assert pruned["score_ub"] == pytest.approx(ub)
    # the bound is an upper bound on the score the exact solve gives
    solved = evaluate_here(_task(doc, bound="lower_bound", prune_below=0.0))[0]
    assert solved["status"] == "ok" and solved["excess"] <= pruned["score_ub"] + 1e-9


def test_a_faster_exact_method_serves_as_the_reference_when_it_proves(monkeypatch):
    pytest.importorskip("ortools")
    monkeypatch.setattr(evaluate, "FAST_EXACT_LIMIT", 30.0)      # a loaded machine
    fam = registry.get_family("hetero_gpu")
    doc = fam.generate("tiny", 2).to_dict()
    doc.pop("name")
    fast = evaluate_here(_task(doc, fast_exact=("exact_cp",)))[0]
    slow = evaluate_here(_task(doc))[0]
    assert fast["ref_method"] == "exact_cp" and slow["ref_method"] == "exact"
    assert fast["reference"] == pytest.approx(slow["reference"], rel=1e-9)
    assert fast["ratio"] == pytest.approx(slow["ratio"], rel=1e-9)


def test_a_claims_hypothesis_discards_candidates(hetero):
    res = run_worst(FAMILY, "hare", seed=0, target="violation", budget=60.0, time_limit=20.0,
                    max_evals=2, plots=False, shrink=False, hypothesis=lambda doc: False)
    assert res.counted == 0 and res.ratio is None


# ---- issue 23, what was left: devices, zero entries, degenerate starts, the lemma proxy climb


def test_profile_finds_the_device_lists():
    """A server's capacity row may be copied (elastic_cluster, ring_contention); a job's row of
    times per GPU may not (its length is fixed by the GPU list), nor a counted list."""
    assert profile(registry.get_family("elastic_cluster"), "tiny", {}).devices == {"capacity"}
    assert profile(registry.get_family("ring_contention"), "tiny", {}).devices == {"servers"}
    assert profile(registry.get_family("hetero_gpu"), "tiny", {}).devices == set()


def test_profile_finds_where_a_zero_is_valid():
    """A worker type may demand no CPU and a server may have none; a job's compute time on a
    worker type must stay > 0 (validation), so zero moves never touch it."""
    zeroable = profile(registry.get_family("elastic_cluster"), "tiny", {}).zeroable
    assert {"worker_types.*.demand", "capacity.*"} <= zeroable
    assert "jobs.*.compute" not in zeroable


def test_device_lists_grow_beyond_the_generator():
    from optsched.experiments.worst.mutations import op_copy
    from optsched.experiments.worst.profile import DEVICE_EXTRA

    fam = registry.get_family("elastic_cluster")
    ctx = _ctx("elastic_cluster", seed=4)
    longest = ctx.profile.lists["capacity"][1]
    assert ctx.profile.list_range("capacity", ctx.grows) == (1, longest + DEVICE_EXTRA)
    assert ctx.profile.list_range("capacity.*", ctx.grows)[1] == ctx.profile.lists["capacity.*"][1]
    grown = 0
    for seed in range(30):
        doc = op_copy(fam.generate("tiny", seed).to_dict(), ctx)
        if doc is not None and len(doc["capacity"]) > longest:
            fam.problem.Instance.from_dict(doc)             # raises if the copy broke it
            grown += 1
    assert grown >= 3


def test_zero_entry_zeroes_one_positive_entry_of_a_row():
    from optsched.experiments.worst.doc import leaf_paths
    from optsched.experiments.worst.mutations import op_zero_entry

    fam = registry.get_family("elastic_cluster")
    ctx = _ctx("elastic_cluster", seed=2)
    fields = set()
    for seed in range(40):
        doc = fam.generate("tiny", seed).to_dict()
        before = {p: v for p, v in ((p, _at(doc, p)) for p in leaf_paths(doc))}
        out = op_zero_entry(doc, ctx)
        changed = [p for p in before if _at(out, p) != before[p]]
        assert len(changed) == 1 and _at(out, changed[0]) == 0 and before[changed[0]] > 0
        assert isinstance(changed[0][-1], int)                 # an entry of a row
        fields.add(".".join(str(k) for k in changed[0] if not isinstance(k, int)))
    assert "worker_types.demand" in fields and len(fields) >= 4


def _at(doc, path):
    for k in path:
        doc = doc[k]
    return doc


def test_lemma_targets_start_degenerate_every_other_time():
    run = Run("elastic_cluster", ["a_online"], "lemma:mincost1", size=None, budget=60,
              time_limit=10, seed=0, preset="tiny", overrides={"architecture": "ps"},
              workers=1, scheduler=None, out=None, strategy="search", max_evals=None,
              stop_at=None, shrink_share=0.0, target="lemma:mincost1")
    docs = [run.random_doc() for _ in range(40)]
    zeros = [sum(x == 0 for row in _rows(d) for x in row) for d in docs]
    plain = [sum(x == 0 for row in _rows(run.fam.generate("tiny", 2 * s).to_dict())
                 for x in row) for s in range(20)]
    assert sum(zeros[1::2]) > sum(zeros[0::2]) and max(zeros) > max(plain)
    run.strategy = "random"                 # the baseline samples the generator only
    docs = [run.random_doc() for _ in range(20)]
    assert all(sum(x == 0 for row in _rows(d) for x in row) <= max(plain) for d in docs)


def _rows(doc):
    return [w["demand"] for w in doc["worker_types"]] + doc["capacity"] + \
        [j["compute"] for j in doc["jobs"]]


def test_lemma_rows_carry_the_baseline_proxy_only_when_asked():
    fam = registry.get_family("ring_contention")
    doc = fam.generate("tiny", 0).to_dict()
    doc.pop("name")
    task = {"family": "ring_contention", "instance": doc, "key": doc_key(doc),
            "methods": ["sjf_bco"], "against": "lemma:lemma3", "time_limit": 20.0,
            "target": "lemma:lemma3"}
    plain = evaluate_here(task)[0]
    asked = evaluate_here({**task, "proxy_methods": ["first_fit", "list_scheduling"]})[0]
    assert plain["status"] == asked["status"] == "ok" and "proxy" not in plain
    inst = fam.problem.Instance.from_dict(doc)
    best = min(registry.solve(inst, m).objective for m in ("sjf_bco", "first_fit",
                                                            "list_scheduling"))
    assert asked["proxy"] == pytest.approx(asked["objective"] / best) and asked["proxy"] >= 1


def test_lemma_ties_do_not_shrink_the_instance():
    """On a lemma target a child that ties with its parent but is smaller is refused (drift on
    the plateau at 1 ran down to one job); other targets and real improvements are unaffected."""
    from optsched.experiments.worst.search import _smaller

    run = Run("ring_contention", ["sjf_bco_proof"], "lemma:lemma4", size=None, budget=60,
              time_limit=10, seed=0, preset="tiny", overrides={}, workers=1, scheduler=None,
              out=None, strategy="search", max_evals=None, stop_at=None, shrink_share=0.0,
              target="lemma:lemma4")
    parent = run.fam.generate("tiny", 0).to_dict()
    child = {**parent, "jobs": parent["jobs"][:1]}
    assert _smaller(run, child, parent) and not _smaller(run, parent, child)
    run.target = "ratio"
    assert not _smaller(run, child, parent)

"""``run_worst``: the entry point, its outputs (``result.json``, the instance and schedules) and its text.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from optsched import registry
from optsched.errors import OptschedError
from optsched.experiments.executors import cap_workers, executor
from optsched.experiments.worst.doc import doc_key
from optsched.experiments.worst.evaluate import evaluate
from optsched.experiments.worst.continuous import continuous, hybrid
from optsched.experiments.worst.search import evolve, sample_random, shrink_doc
from optsched.experiments.worst.sizes import size_of
from optsched.experiments.worst.state import (
    DEFAULT_BUDGET,
    DEFAULT_TIME_LIMIT,
    SHRINK_SHARE,
    Run,
    WorstResult,
)

RESULT = "result.json"
RUN = "run.json"
#: Search strategies by name (``random`` is the baseline, run by :func:`sample_random`).
SEARCHES = {"search": evolve, "continuous": continuous, "hybrid": hybrid}
STRATEGIES = (*SEARCHES, "random")


# --------------------------------------------------------------------------- entry point


def check_methods(family: str, methods: list[str], against: str) -> None:
    """Raise OptschedError (exit 2) for a method or reference that cannot be compared."""
    fam = registry.get_family(family, error=OptschedError)
    ref = fam.method(against)
    if ref.kind == "bound":
        raise OptschedError(f"--against: {against} is a bound, not a schedule")
    if ref.relaxed:
        raise OptschedError(f"--against: {against} solves a relaxed model (not comparable)")
    for name in methods:
        entry = fam.method(name)
        if entry.kind in ("exact", "bound"):
            raise OptschedError(f"--method: {name} is {entry.kind}; choose an algorithm or "
                                f"baseline")
        if entry.relaxed:
            raise OptschedError(f"--method: {name} solves a relaxed model; its schedules are not "
                                f"comparable with {against}")
        if name == against:
            raise OptschedError(f"--method: {name} is also the reference")


def check_target(family: str, methods: list[str], target: str, against: str) -> str:
    """Raise OptschedError (exit 2) for a target the methods cannot be measured on; return the
    reference actually used (``lemma:NAME`` for a lemma target, which solves no reference)."""
    fam = registry.get_family(family, error=OptschedError)
    if target == "ratio":
        return against
    if target == "violation":
        for name in methods:
            if fam.method(name).guarantee is None:
                raise OptschedError(f"--target violation: {name} has no claimed guarantee "
                                    f"(optsched methods {family})")
        if against != "exact":
            raise OptschedError("--target violation: the guarantee is relative to the optimum; "
                                "use --against exact")
        return against
    kind, _, name = target.partition(":")
    claims = fam.worst.claims if fam.worst is not None else ()
    claim = next((c for c in claims if c.name == name), None)
    if kind != "lemma" or claim is None:
        known = ", ".join(f"lemma:{c.name}" for c in claims) or "none registered"
        raise OptschedError(f"--target: ratio, violation or lemma:NAME ({family}: {known}), "
                            f"got {target!r}")
    for m in methods:
        if m not in claim.methods:
            raise OptschedError(f"--target {target}: is about {', '.join(claim.methods)}, "
                                f"not {m}")
    return target


def run_worst(family: str, method: str | list[str], against: str = "exact", *,
              size: int | None = None, budget: float = DEFAULT_BUDGET,
              time_limit: float = DEFAULT_TIME_LIMIT, seed: int = 0, preset: str = "tiny",
              overrides: dict | None = None, workers: int = 1, scheduler=None, out=None,
              strategy: str = "search", max_evals: int | None = None,
              target: str = "ratio", stop_at: float | None = None, shrink: bool = True,
              shrink_share: float = SHRINK_SHARE, plots: bool = True,
              hypothesis=None) -> WorstResult:
    """Search for the instance maximising ``objective(method) / objective(against)``, or the
    violation of the method's claimed guarantee or of a paper lemma (``target``).

    Parameters
    ----------
    family, method, against
        ``method``: one name (search) or a list (``strategy="random"`` measures them all on the
        same instances; the result is for the first, ``per_method`` has all).
    size
        Bound on the family's size measure (``Family.worst``); None = the largest the generator
        produced for ``preset`` and ``overrides``.
    budget, time_limit
        Wall-clock seconds for the run, and for one solve.
    seed
        Seed of the search (the trajectory is a function of it and of the evaluations).
    preset, overrides
        Where starting instances come from (``overrides`` go to the generator, e.g.
        ``{"n_gpus": (1, 1)}`` for hetero_gpu on one GPU).
    workers, scheduler
        Candidates of a generation in K local processes (at most the cores available) or on a
        Dask cluster.
    out
        Folder: resumable ``results.jsonl``, the worst instance, schedules, ``result.json``.
    strategy
        ``"search"`` (mutations), ``"continuous"`` (an evolution strategy on the numbers,
        structure fixed), ``"hybrid"`` (the continuous search with structure moves between its
        runs) or ``"random"`` (:mod:`.search`).
    max_evals
        Stop after this many new evaluations, and shrink with at most as many (deterministic
        stopping, for tests).
    target
        What is maximised: ``"ratio"`` (ALG/OPT), ``"violation"`` (ALG / (OPT x guarantee):
        > 1 means the method's claimed guarantee fails on the instance; only methods with a
        registered guarantee; the search ranks by the excess (ALG/OPT - 1) / (guarantee - 1),
        > 1 exactly when the factor is, :func:`~.evaluate.excess`) or ``"lemma:NAME"`` (the violation factor of the family's claim
        NAME, :class:`optsched.family.Claim`, on the method's run; no reference is solved).
    stop_at
        Stop searching (then shrink) once this score (ratio, excess or lemma violation factor)
        is reached.
    shrink, shrink_share
        Shrink the best instance, in the last ``shrink_share`` of the budget.
    plots
        Draw the two schedules as Gantt charts in ``out`` (when matplotlib is installed).
    hypothesis
        ``hypothesis(doc) -> bool``: the hypotheses of the claim under test (Theorem 2 of
        Grouper is stated for cojobs all released at 0); a candidate that breaks them is
        discarded, never evaluated (benchmarks/refute.py gives one per claim).

    Returns
    -------
    WorstResult
        The worst instance found (``instance``, its document), ``ratio`` (or ``violation``, the
        factor, and ``exceeds_guarantee``), both objectives, the size, how many instances were
        evaluated and when the best was found; ``summary()`` prints it as ``optsched worst`` does.
        Every schedule in it passed verify, and for ``ratio``/``violation`` the reference is a
        proven optimum.

    Raises
    ------
    OptschedError
        One line naming the argument at fault (an unknown strategy, method or target; a budget
        that is not positive and finite).

    Examples
    --------
    A short ratio search (ring_contention's SJF-BCO against the proven optimum; ``max_evals``
    makes the run deterministic):

    >>> from optsched.experiments.worst import run_worst
    >>> res = run_worst("ring_contention", "sjf_bco", budget=60, max_evals=3, shrink=False,
    ...                 plots=False)
    >>> res.ratio >= 1.0, res.evaluations >= 1
    (True, True)
    """
    methods = [method] if isinstance(method, str) else list(method)
    if strategy not in STRATEGIES:
        raise OptschedError(f"--strategy: must be one of {', '.join(STRATEGIES)}, got "
                            f"{strategy!r}")
    if strategy != "random" and len(methods) != 1:
        raise OptschedError("--method: the search takes exactly one method")
    if not (0 < budget < math.inf) or not (0 < time_limit < math.inf):
        raise OptschedError("--budget/--time-limit: must be > 0 and finite")
    if size is not None and size < 1:
        raise OptschedError(f"--size: must be >= 1, got {size}")
    check_methods(family, methods, against)
    against = check_target(family, methods, target, against)
    if scheduler is None:
        workers = cap_workers(workers)
    try:
        run = Run(family, methods, against, size=size, budget=budget, time_limit=time_limit,
                   seed=seed, preset=preset, overrides=overrides, workers=workers,
                   scheduler=scheduler, out=out, strategy=strategy, max_evals=max_evals,
                   stop_at=stop_at, target=target, hypothesis=hypothesis,
                   shrink_share=shrink_share if (shrink and strategy != "random") else 0.0)
    except TypeError as exc:         # an override the generator does not take
        raise OptschedError(f"--override: {exc}") from None
    if out is not None:
        _check_run_file(Path(out), run, overrides)
    _preload()
    run.open()
    found = shrunk = None
    try:
        preload = [f"optsched.solvers.{family}"]      # a toy family's: ignored by forkserver
        with executor(workers, scheduler, preload) as ex:
            if strategy != "random":
                run.calibrate(ex)
            if strategy == "random":
                sample_random(run, ex)
            else:
                SEARCHES[strategy](run, ex)
                best = run.best.get(methods[0])
                score = run.score(best)
                if best is not None and score is not None:
                    found = shrunk = (best["instance"], score)
                    run.evaluations = 0
                    if shrink:
                        shrunk = shrink_doc(run, found[0], found[1], ex)
            result = _result(run, shrunk, ex)
    finally:
        run.close()
    if out is not None:
        _write_outputs(Path(out), run, result, found, plots)
    return result


#: Imported before the first guarded evaluation so that forked children do not import them again
#: (Pyomo and HiGHS cost seconds per child otherwise).
PRELOAD = ("pyomo.environ", "highspy", "optsched.solvers.highs")


def _preload() -> None:
    import importlib

    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:
            pass


def _check_run_file(out: Path, run: Run, overrides) -> None:
    """One --out folder holds one search: refuse one with other parameters."""
    params = {"family": run.fam.name, "methods": run.methods, "against": run.against,
              "preset": run.preset, "size": run.size_bound, "strategy": run.strategy,
              "target": run.target,
              "overrides": json.loads(json.dumps(overrides or {}, default=list))}
    if run.hypothesis is not None:
        params["hypothesis"] = getattr(run.hypothesis, "__name__", "given")
    path = out / RUN
    if path.exists():
        try:
            old = json.loads(path.read_text())
        except ValueError:
            old = None
        if isinstance(old, dict) and old != params:
            diff = ", ".join(k for k in params if old.get(k) != params[k])
            raise OptschedError(f"--out {out}: holds a run with other parameters ({diff}); use "
                                f"another folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(params, indent=1) + "\n")
    except OSError as exc:
        raise OptschedError(f"--out: cannot write {path}: {exc.strerror or exc}") from None


def _result(run: Run, shrunk, ex) -> WorstResult:
    m = run.methods[0]
    per_method = {}
    for name in run.methods:
        b = run.best.get(name)
        per_method[name] = None if b is None else {
            "ratio": b.get("ratio"), "violation": b.get("violation"),
            "guarantee": b.get("guarantee"), "exceeds": b.get("exceeds"),
            "size": b.get("size"), "elapsed": b.get("elapsed")}
    mine = [r for (_, name), r in run.cache.items() if name == m]
    res = WorstResult(family=run.fam.name, method=m, against=run.against, strategy=run.strategy,
                      ratio=None, ratio_found=None, objective=None, reference=None, guarantee=None,
                      exceeds_guarantee=None, instance=None, schedules={}, size=None,
                      size_bound=run.size_bound, evaluations=len(mine),
                      counted=sum(1 for r in mine if run.score(r) is not None),
                      unproven=sum(1 for r in mine if r.get("status") == "unproven"),
                      discarded=run.invalid, time_to_best=None, elapsed=round(run.elapsed(), 3),
                      seed=run.seed, budget=run.budget, improvements=run.improvements,
                      violations=run.violations, per_method=per_method, target=run.target,
                      pruned=sum(1 for r in mine if r.get("status") == "pruned"),
                      bound=run.bound)
    best = run.best.get(m)
    if best is None:
        return res
    res.time_to_best, res.ratio_found = best.get("elapsed"), best.get("ratio")
    res.violation_found = best.get("violation")
    doc = best["instance"] if shrunk is None else shrunk[0]
    key = doc_key(doc)
    row, scheds = run.known(key, m), run.schedules.get((key, m))
    if row is None or not scheds:        # resumed run: solve the winner again for its schedules
        rows = ex.submit(evaluate, {"family": run.fam.name, "instance": doc, "key": key,
                                    "methods": [m], "against": run.against,
                                    "time_limit": run.time_limit, "guard": run.guard,
                                    "target": run.target}).result()
        row = rows[0]
        scheds = row.pop("_schedules", {})
    res.ratio = row.get("ratio")
    res.objective, res.reference = row.get("objective"), row.get("reference")
    res.guarantee, res.exceeds_guarantee = row.get("guarantee"), row.get("exceeds")
    res.violation = row.get("violation")
    res.instance, res.schedules, res.size = doc, scheds, size_of(run.fam, doc)
    return res


def _write_outputs(out: Path, run: Run, res: WorstResult, found, plots: bool) -> None:
    from optsched.io import dump

    problem = run.fam.problem
    (out / RESULT).write_text(json.dumps(res.to_dict(), indent=1, default=str) + "\n")
    if res.instance is None:
        return
    inst = problem.Instance.from_dict({**res.instance, "name": f"worst-{res.method}"})
    dump(inst, out / "worst.json")
    if found is not None:
        dump(problem.Instance.from_dict({**found[0], "name": f"worst-{res.method}-found"}),
             out / "worst_found.json")
    for name, sched in res.schedules.items():
        schedule = problem.Schedule.from_dict(sched)
        dump(schedule, out / f"schedule_{name}.json")
        if plots:
            try:
                from optsched.gantt import plot_schedule, title_of

                obj = run.fam.verify(inst, schedule)
                plot_schedule(inst, schedule, out / f"schedule_{name}.png", objective=obj,
                              title=title_of(inst, obj, name))
            except Exception:  # noqa: BLE001 - a chart is a convenience, never a failure
                pass


def format_result(res: WorstResult, out=None) -> str:
    """Lines for the terminal, each figure with what it means."""
    lemma = res.target.startswith("lemma:")
    score = res.violation if res.target != "ratio" else res.ratio
    if score is None:
        what = "no run where the claim applies" if lemma else "no candidate counted"
        return (f"{res.family} {res.method} ({res.target}): {what} ({res.evaluations} "
                f"evaluated, {res.unproven} without a proven optimum) in {res.elapsed:.1f} s")
    lines = [f"family     {res.family}",
             f"method     {res.method} vs {res.against} ({res.strategy}, target {res.target})"]
    if not lemma:
        g = "-" if res.guarantee is None else f"{res.guarantee:.6g}"
        found = "" if res.ratio_found is None else f" (before shrinking {res.ratio_found:.6g})"
        lines += [f"ratio      {res.ratio:.6g} = objective({res.method}) / objective"
                  f"({res.against}){found}",
                  f"objective  {res.objective:.6g} vs {res.reference:.6g}",
                  f"guarantee  {g} (the paper's claimed ratio on this instance)"
                  + ("  EXCEEDED" if res.exceeds_guarantee else "")]
    elif res.objective is not None:
        lines.append(f"objective  {res.objective:.6g} ({res.method}'s, verified)")
    if res.violation is not None:
        meaning = ("ratio / guarantee" if not lemma else
                   f"claimed side / allowed side of {res.target[6:]}")
        verdict = ("> 1: the claim FAILS on this instance" if res.exceeds_guarantee
                   else "<= 1: the claim holds on this instance")
        found = ("" if res.violation_found is None
                 else f" (before shrinking {res.violation_found:.6g})")
        lines.append(f"violation  {res.violation:.6g} = {meaning}{found}")
        lines.append(f"           {verdict}")
    best = "-" if res.time_to_best is None else f"{res.time_to_best:.1f} s"
    lines.append(f"size       {res.size} (bound {res.size_bound})")
    if res.strategy != "replay":
        lines.append(f"evaluated  {res.evaluations} instances ({res.counted} counted, "
                     f"{res.unproven} without a proven optimum); best after {best} of "
                     f"{res.elapsed:.1f} s")
    if res.violations:
        lines.append(f"verify     {len(res.violations)} schedule(s) failed verify: "
                     f"{res.violations[0]['error'][:120]}")
    if out is not None:
        lines.append(f"wrote      {out}/worst.json (the instance), schedule_*.json, result.json "
                     f"(every")
        lines.append("           figure), results.jsonl (every evaluation; resumable)")
        lines.append(f"replay     optsched worst {res.family} --method {res.method} --target "
                     f"{res.target} --replay {out}/worst.json")
    return "\n".join(lines)


def replay(family: str, method: str, path, against: str = "exact", *, target: str = "ratio",
           time_limit: float = DEFAULT_TIME_LIMIT, hypothesis=None) -> WorstResult:
    """Evaluate one saved instance exactly as a search would (the reproduction of a finding):
    ``optsched worst FAMILY --method M --target T --replay FILE``; with ``hypothesis``
    (``--hypothesis NAME``) an instance outside the claim's statement raises OptschedError."""
    from optsched.io import load_instance

    check_methods(family, [method], against)
    against = check_target(family, [method], target, against)
    fam = registry.get_family(family, error=OptschedError)
    inst = load_instance(path)
    if getattr(inst, "FAMILY", None) != family:
        raise OptschedError(f"--replay {path}: not a {family} instance")
    doc = inst.to_dict()
    doc.pop("name", None)
    if hypothesis is not None and not hypothesis(doc):
        name = getattr(hypothesis, "__name__", "the hypothesis")
        raise OptschedError(f"--replay {path}: outside the claim's statement ({name})")
    row = evaluate({"family": family, "instance": doc, "key": doc_key(doc), "methods": [method],
                    "against": against, "time_limit": time_limit, "guard": False,
                    "target": target})[0]
    scheds = row.pop("_schedules", {})
    res = WorstResult(family=family, method=method, against=against, strategy="replay",
                      ratio=row.get("ratio"), ratio_found=None, objective=row.get("objective"),
                      reference=row.get("reference"), guarantee=row.get("guarantee"),
                      exceeds_guarantee=row.get("exceeds"), instance=doc, schedules=scheds,
                      size=size_of(fam, doc), size_bound=size_of(fam, doc), evaluations=1,
                      counted=int(row.get("status") == "ok"),
                      unproven=int(row.get("status") == "unproven"), discarded=0,
                      time_to_best=None, elapsed=float(row.get("runtime_s") or 0.0), seed=0,
                      budget=time_limit, target=target, violation=row.get("violation"))
    if row.get("status") != "ok":
        res.violations = [{"method": method, "error": row.get("error") or row.get("status"),
                           "instance": doc}] if row.get("status") == "violation" else []
    return res

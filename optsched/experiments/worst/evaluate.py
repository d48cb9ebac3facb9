"""Evaluating a candidate instance: every method and the reference solved, guarded by time and memory.
"""

from __future__ import annotations

import math
import time
from typing import Any, Callable

from optsched import registry
from optsched.errors import InfeasibleSchedule
from optsched.experiments.ratios import finite_or_none, ratio_of
from optsched.experiments.worst.sizes import size_of
from optsched.result import SolveStatus
from optsched.tolerance import REL



# --------------------------------------------------------------------------- evaluation


#: Memory (bytes) one guarded evaluation may add to the process, and its hard wall-clock limit as
#: a multiple of the per-solve time limit (plus :data:`GUARD_SLACK` s): a mutated instance can make
#: a model or a heuristic blow up before any deadline is consulted.
GUARD_MEMORY = 2 << 30
GUARD_FACTOR, GUARD_SLACK = 3.0, 10.0
#: Seconds a guarded task may run past the run's budget before it is killed.
GUARD_GRACE = 2.0


def guarded(fn: Callable[[dict], Any], task: dict):
    """``fn(task)`` in a forked child with a memory cap and a hard wall-clock limit.

    Returns ``("ok", value)``, or ``("too_big", message)`` when the child ran out of its memory
    cap, overran the hard limit (killed) or died; ``("error", message)`` for an exception. Where
    ``os.fork`` is missing, or ``task["guard"]`` is false (Dask workers are threaded), ``fn`` runs
    in this process. The parent never runs a solver itself, so it stays single-threaded and
    forking it is safe.
    """
    import os

    if not task.get("guard", True) or not hasattr(os, "fork"):
        try:
            return "ok", fn(task)
        except Exception as exc:  # noqa: BLE001
            return "error", f"{type(exc).__name__}: {exc}"
    import pickle
    import select
    import signal

    limit = task.get("hard_limit") or GUARD_FACTOR * task["time_limit"] + GUARD_SLACK
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:                                    # the child: never returns
        code = 0
        try:
            os.close(r)
            _cap_memory(GUARD_MEMORY)
            try:
                out = ("ok", fn(task))
            except MemoryError:
                out = ("too_big", f"over the memory cap of {GUARD_MEMORY >> 20} MiB")
            except BaseException as exc:  # noqa: BLE001
                out = ("error", f"{type(exc).__name__}: {exc}")
            data = pickle.dumps(out)
            view = memoryview(data)
            while view:
                view = view[os.write(w, view):]
        except BaseException:  # noqa: BLE001
            code = 1
        finally:
            os._exit(code)
    os.close(w)
    chunks, end, killed = [], time.monotonic() + limit, False
    try:
        while True:
            left = end - time.monotonic()
            if left <= 0:
                os.kill(pid, signal.SIGKILL)
                killed = True
                break
            ready, _, _ = select.select([r], [], [], min(left, 1.0))
            if ready:
                chunk = os.read(r, 1 << 16)
                if not chunk:
                    break
                chunks.append(chunk)
    finally:
        os.close(r)
        os.waitpid(pid, 0)
    if killed:
        return "too_big", f"killed after {limit:.0f} s (hard limit)"
    try:
        return pickle.loads(b"".join(chunks))
    except Exception:  # noqa: BLE001 - no complete answer: the child died (OOM killer, crash)
        return "too_big", "the evaluation process died"


def _cap_memory(extra: int) -> None:
    try:
        import resource

        with open("/proc/self/statm") as fh:
            vsize = int(fh.read().split()[0]) * resource.getpagesize()
        resource.setrlimit(resource.RLIMIT_AS, (vsize + extra, vsize + extra))
    except (OSError, ValueError, ImportError):
        pass


def evaluate(task: dict) -> list[dict]:
    """:func:`evaluate_here` in a guarded child process (:func:`guarded`); a blow-up becomes rows
    with status ``too_big`` (never counted, not redone on resume)."""
    status, value = guarded(evaluate_here, task)
    if status == "ok":
        return value
    if status == "too_big" and task.get("cut") and "killed" in value:
        status = "error"              # stopped by the run's budget, not by its own size: redo
    rows = []
    for name in task["methods"]:
        rows.append({"family": task["family"], "preset": f"worst:{task['against']}:{task['key']}",
                     "seed": 0, "against": task["against"],
                     "size": size_of(registry.get_family(task["family"]), task["instance"]),
                     "instance": task["instance"], "method": name, "status": status,
                     "ratio": None, "objective": None, "reference": None, "error": value,
                     "_schedules": {}})
    return rows


def evaluate_here(task: dict) -> list[dict]:
    """Solve one candidate with the reference and every method of ``task`` (the unit of work of
    every executor; never raises for a method's failure).

    ``task``: ``family, instance (doc), key, methods, against, time_limit, cut`` (True when the
    time limit was shortened by the run's budget). Returns one row per method; each row carries
    the schedules under ``"_schedules"`` (not stored).
    """
    fam = registry.get_family(task["family"])
    inst = fam.problem.Instance.from_dict(task["instance"])
    against, limit = task["against"], task["time_limit"]
    base = {"family": task["family"], "preset": f"worst:{against}:{task['key']}", "seed": 0,
            "against": against, "size": size_of(fam, task["instance"]),
            "instance": task["instance"]}
    if str(task.get("target", "ratio")).startswith("lemma:"):
        return _lemma_rows(fam, inst, task, base)

    def run(name, limit=limit):
        start = time.perf_counter()
        try:
            return registry.solve(inst, name, time_limit=limit, seed=0), None
        except InfeasibleSchedule as exc:
            return None, ("violation", f"{name}: InfeasibleSchedule: {exc}")
        except Exception as exc:  # noqa: BLE001
            return None, ("error", f"{name}: {type(exc).__name__}: {exc} "
                                   f"(after {time.perf_counter() - start:.2f} s)")

    done: dict[str, tuple] = {}
    if task.get("prune_below") is not None and task.get("bound") and len(task["methods"]) == 1:
        name = task["methods"][0]
        done[name] = run(name)
        pruned = _pruned(fam, inst, task, done[name][0], base)
        if pruned is not None:
            return [pruned]
    ref, ref_err, ref_name = _reference(run, against, task.get("fast_exact", ()), limit)
    ref_obj = None if ref is None else finite_or_none(ref.objective)
    rows = []
    for name in task["methods"]:
        row = {**base, "method": name, "status": None, "ratio": None, "objective": None,
               "reference": ref_obj, "ref_method": ref_name,
               "ref_status": None if ref is None else ref.status.value,
               "ref_runtime_s": None if ref is None else ref.runtime_s,
               "guarantee": None, "violation": None, "excess": None, "exceeds": None,
               "runtime_s": None, "error": None}
        schedules = {}
        if ref_err is not None:
            row["status"], row["error"] = ref_err
        elif against == "exact" and ref.status is not SolveStatus.OPTIMAL:
            # never counted; a time limit shortened by the budget is redone on resume
            row["status"] = "error" if task.get("cut") else "unproven"
            row["error"] = f"exact: {ref.status.value} (optimality not proven)"
        elif ref_obj is None:
            row["status"] = "no_reference"
            row["error"] = f"{against}: no schedule ({ref.status.value})"
        else:
            res, err = done.get(name) or run(name)
            if err is not None:
                row["status"], row["error"] = err
            else:
                obj = finite_or_none(res.objective)
                row.update(objective=obj, runtime_s=res.runtime_s,
                           guarantee=finite_or_none(res.guarantee))
                ratio = None if obj is None else ratio_of(obj, ref_obj)
                if obj is None:
                    row["status"] = "no_schedule"
                    row["error"] = f"{name}: no schedule ({res.status.value})"
                elif ratio is None:
                    row["status"] = "no_reference"
                    row["error"] = f"{against}: objective 0"
                elif against == "exact" and ratio < 1 - 1e-6:
                    row["status"] = "violation"
                    row["error"] = (f"{name} objective {obj:.10g} below the proven optimum "
                                    f"{ref_obj:.10g}")
                else:
                    row["status"], row["ratio"] = "ok", ratio
                    if row["guarantee"]:
                        row["violation"] = ratio / row["guarantee"]
                        row["excess"] = excess(ratio, row["guarantee"])
                        row["exceeds"] = exceeds(row["violation"])
                    schedules = {name: res.schedule.to_dict(), against: ref.schedule.to_dict()}
        row["_schedules"] = schedules
        rows.append(row)
    return rows


#: Time limit (s) of one try of a faster exact method (``exact_cp``) before the family's
#: ``exact``: tiny optima are proven by CP-SAT in ~0.02 s where the MILP takes ~0.7 s.
FAST_EXACT_LIMIT = 2.0


def _reference(run, against: str, fast_exact, limit: float) -> tuple:
    """(result, error, method name) of the reference: against ``exact``, the family's other
    exact methods first (``fast_exact``, each with :data:`FAST_EXACT_LIMIT`); the first that
    proves optimality is the reference, else ``exact`` itself. Every one is an exact method of
    the family, its schedule verified by solve(); the saved findings are proven again by
    ``exact`` (tests/experiments/test_refute.py)."""
    if against == "exact":
        for name in fast_exact:
            res, err = run(name, min(FAST_EXACT_LIMIT, limit))
            if err is None and res is not None and res.status is SolveStatus.OPTIMAL:
                return res, None, name
    res, err = run(against)
    return res, err, against


def _pruned(fam, inst, task: dict, res, base: dict) -> dict | None:
    """The row of a candidate that cannot reach ``task["prune_below"]``, or None.

    ALG/OPT <= ALG/LB for every valid lower bound LB, so the score (ratio, or the excess over
    the guarantee) computed on ALG/LB bounds the candidate's score from above; when that bound
    is below the threshold (the parent's score in the search, the shrink's target) the exact
    reference is not solved. The row (status ``pruned``) is never counted."""
    if res is None or not math.isfinite(res.objective):
        return None
    try:
        lb = registry.solve(inst, task["bound"], time_limit=min(BOUND_LIMIT, task["time_limit"]),
                            seed=0).lower_bound
    except Exception:  # noqa: BLE001 - no bound: no pruning
        return None
    if lb is None or not lb > 0 or not math.isfinite(lb):
        return None
    ub = res.objective / lb
    g = finite_or_none(res.guarantee)
    on = task.get("prune_on") or task.get("target", "ratio")
    score = ub if on == "ratio" else (excess(ub, g) if g else None)
    if score is None or score >= task["prune_below"]:
        return None
    name = task["methods"][0]
    return {**base, "method": name, "status": "pruned", "ratio": None,
            "objective": finite_or_none(res.objective), "reference": None, "lower_bound": lb,
            "score_ub": score, "guarantee": g, "violation": None, "excess": None,
            "exceeds": None, "runtime_s": res.runtime_s, "error": None, "_schedules": {}}


#: Time limit (s) of the lower bound computed for pruning.
BOUND_LIMIT = 2.0


def calibrate(task: dict) -> dict:
    """Seconds and LB/OPT of every ``bound`` method of the family and seconds of the reference
    (:func:`_reference`) on ``task["instances"]``: what :meth:`~.state.Run.pick_bound` decides
    from."""
    fam = registry.get_family(task["family"])
    out: dict[str, list] = {"reference": []}
    for doc in task["instances"]:
        inst = fam.problem.Instance.from_dict(doc)

        def run(name, limit=task["time_limit"]):
            try:
                return registry.solve(inst, name, time_limit=limit, seed=0), None
            except Exception as exc:  # noqa: BLE001
                return None, str(exc)

        timed = []
        for m in fam.methods:                # the bounds first: the reference's caches
            if m.kind != "bound":            # must not speed them up
                continue
            t0 = time.perf_counter()
            res, _ = run(m.name, min(BOUND_LIMIT, task["time_limit"]))
            timed.append((m.name, time.perf_counter() - t0, None if res is None else res.lower_bound))
        t0 = time.perf_counter()
        ref, _, _ = _reference(run, task["against"], task.get("fast_exact", ()),
                               task["time_limit"])
        out["reference"].append(time.perf_counter() - t0)
        opt = None if ref is None or ref.status is not SolveStatus.OPTIMAL else ref.objective
        for name, seconds, lb in timed:
            q = lb / opt if (lb is not None and opt and math.isfinite(lb)) else 0.0
            out.setdefault(name, []).append((seconds, q))
    return out


def exceeds(violation: float | None) -> bool | None:
    """A violation factor above 1 beyond the tolerance: the claim fails (None: not measured)."""
    return None if violation is None else violation > (1 + REL) + REL


def excess(ratio: float, guarantee: float) -> float:
    """What the ``violation`` target ranks by: (ratio - 1) / (guarantee - 1), above 1 exactly when
    ratio / guarantee is. Unlike ratio / guarantee it gives no credit to an instance whose
    guarantee is 1 and trivially met (PDA on one stage: 2 - 2/(l+1) = 1 = ALG/OPT), a plateau
    the search would otherwise never leave; a guarantee of 1 that fails scores ratio."""
    if guarantee <= 1 + REL:
        return ratio if ratio > (1 + REL) * guarantee + REL else 0.0
    return (ratio - 1) / (guarantee - 1)


def _lemma_rows(fam, inst, task: dict, base: dict) -> list[dict]:
    """Rows of a ``lemma:NAME`` target: every method run (and verified by solve()) and the
    claim's predicate evaluated on its result (``violation``), with the claim's closeness
    (``grade``, when it has one: a tie-breaker of the search, never a violation); no reference
    is solved."""
    claim = fam.worst.claim(task["target"].split(":", 1)[1])
    rows = []
    for name in task["methods"]:
        row = {**base, "method": name, "status": None, "ratio": None, "objective": None,
               "reference": None, "guarantee": None, "violation": None, "exceeds": None,
               "runtime_s": None, "error": None, "_schedules": {}}
        start = time.perf_counter()
        try:
            res = registry.solve(inst, name, time_limit=task["time_limit"], seed=0)
            value = None if res.schedule is None else claim.check(inst, res)
            grade = None if value is None or claim.grade is None else claim.grade(inst, res)
        except InfeasibleSchedule as exc:
            row["status"], row["error"] = "violation", f"{name}: InfeasibleSchedule: {exc}"
            rows.append(row)
            continue
        except Exception as exc:  # noqa: BLE001
            row["status"] = "error"
            row["error"] = (f"{name}: {type(exc).__name__}: {exc} "
                            f"(after {time.perf_counter() - start:.2f} s)")
            rows.append(row)
            continue
        row.update(objective=finite_or_none(res.objective), runtime_s=res.runtime_s)
        value = finite_or_none(value) if value is not None else None
        if res.schedule is None:
            row["status"], row["error"] = "no_schedule", f"{name}: no schedule ({res.status.value})"
        elif value is None:
            row["status"], row["error"] = "no_reference", f"{claim.name}: does not apply"
        else:
            row.update(status="ok", violation=value, exceeds=exceeds(value))
            if grade is not None and finite_or_none(grade) is not None:
                row["grade"] = float(grade)        # search guidance only (Claim.grade)
            row["_schedules"] = {name: res.schedule.to_dict()}
            if task.get("proxy_methods"):
                row["proxy"] = _proxy(inst, res.objective, task)
        rows.append(row)
    return rows


def _proxy(inst, objective: float, task: dict) -> float | None:
    """objective(M) / the best objective of M and ``task["proxy_methods"]`` (the family's
    baselines, each verified by solve()): the plain-ratio climb of a lemma target's plateau
    restarts (:func:`~.search.evolve`), a lower bound on ALG/OPT that needs no exact solve."""
    objs = [objective] if math.isfinite(objective) else []
    for name in task["proxy_methods"]:
        try:
            res = registry.solve(inst, name, time_limit=min(task["time_limit"], PROXY_LIMIT),
                                 seed=0)
        except Exception:  # noqa: BLE001 - a failing baseline only weakens the proxy
            continue
        if math.isfinite(res.objective):
            objs.append(res.objective)
    return ratio_of(objective, min(objs)) if objs and math.isfinite(objective) else None


#: Time limit (s) of one baseline in a lemma target's proxy (:func:`_proxy`).
PROXY_LIMIT = 1.0


def screen(task: dict) -> float | None:
    """:func:`screen_here` in a guarded child process; None when it blows up."""
    status, value = guarded(screen_here, task)
    return value if status == "ok" else None


def screen_here(task: dict) -> float | None:
    """A cheap lower bound on a candidate's ratio: objective(M) / the best objective of M and the
    family's baselines (an upper bound on OPT), all verified by solve(); divided by M's
    guarantee for the ``violation`` target. None when M fails."""
    fam = registry.get_family(task["family"])
    inst = fam.problem.Instance.from_dict(task["instance"])
    objs = {}
    for name in task["methods"]:
        try:
            res = registry.solve(inst, name, time_limit=task["time_limit"], seed=0)
        except Exception:  # noqa: BLE001 - a failing heuristic only weakens the proxy
            continue
        if math.isfinite(res.objective):
            objs[name] = res.objective
    target = objs.get(task["method"])
    if target is None or not objs:
        return None
    proxy = ratio_of(target, min(objs.values()))
    if task.get("target") == "violation" and proxy is not None:
        g = fam.method(task["method"]).guarantee_on(inst)
        return excess(proxy, g) if g else None
    return proxy

"""``optsched worst``: search for the instance on which a method is furthest from a reference.

The search maximises ``objective(M) / objective(reference)`` over *valid instances of bounded
size*. The reference is the proven optimum of the family's ``exact`` method (default) or another
method ("when is the paper's algorithm worse than FIFO?").

Counting rules (what makes a found ratio trustworthy):

- every candidate is a JSON document validated by the family's ``Instance.from_dict``
  (``InvalidInstance`` -> discarded, never evaluated);
- every schedule goes through :func:`optsched.registry.solve`, which runs the family's independent
  ``verify``; a schedule that fails it is logged as ``violation`` (a finding) and never counted;
- with ``against="exact"`` a candidate counts only when the exact method *proved* optimality
  (status ``optimal``; solve() already demotes a model whose objective disagrees with verify).

Strategy (``strategy="search"``): a (1+lambda) evolution with restarts on the instance JSON.

- *Starts* are instances of the family's generator (``preset``, ``overrides``; seeds drawn from the
  run's ``numpy`` generator), cut down to the size bound if needed.
- *Mutations* are generic -- they act on the JSON tree, whatever the family: perturb or scale one
  numeric field, set it to an extreme of its range, equalise two values of the same field (merge two
  arrivals, give two jobs one type) or all of them (every sync time 0), redraw an integer field
  within its range (a type index), copy, remove, overwrite or swap list elements (a job, a task, a
  flow, a server). Lists whose length never varies in
  the generator's output (e.g. the GPU list under ``overrides={"n_gpus": (1, 1)}``) keep it, except
  those the family's size measure counts. :data:`FAMILY_OPS` adds family-specific operators (a GPU
  column for hetero_gpu).
- *Size*: :data:`SIZES` gives each family's measure (jobs, tasks, ...); the default bound is the
  largest size the generator produced, so the exact solver stays fast.
- *Screening*: while M is cheap next to the exact solve (:meth:`_Run.screening`), each generation
  mutates ``SCREEN * lambda`` children and ranks them by a cheap proxy -- objective(M) / the best
  objective of M and the family's baselines, a lower bound on the ratio -- so the exact reference
  is solved only for the ``lambda`` most promising ones.
- A child replaces its parent when its ratio is >= the parent's (neutral drift over the many ties at
  1.0); after :data:`PATIENCE` generations without a new best the search restarts, alternately from
  fresh generator instances and from the best instance kicked by a few operators (iterated local
  search).
- *Shrinking* (the last ``shrink_share`` of the budget): delta-debugging style, as property-based
  testers shrink -- remove list elements, then replace numbers by simpler ones (0, 1, rounded,
  another value of the same field), keeping every change whose ratio stays >= the found ratio
  (relative tolerance :data:`TOL`). The result's ``ratio`` is that of the shrunk instance.

``strategy="random"`` is the baseline: generator instances only, for the whole budget, several
methods at once (one exact solve per instance serves all of them).

Determinism: the trajectory depends only on ``seed`` and the evaluation results (lambda is
``max(4, workers)``); the wall-clock ``budget`` decides only where it stops. ``max_evals`` stops it
at a fixed number of evaluations instead (tests).

Resumability: with ``out`` every evaluation is one row of ``out/results.jsonl`` in the resumable
:class:`~optsched.experiments.store.ResultStore` (key ``(family, "worst:<against>:<hash>", 0,
method)``). A re-run with the same ``out`` replays the search from its seed, taking every evaluation
it already has from the store, and continues with what is left of the budget (rows record the
run's elapsed time). Budget cuts of a solve are stored as ``error`` rows and redone.
Outputs: ``worst.json`` (shrunk instance), ``worst_found.json`` (before shrinking),
``schedule_<method>.json``, ``schedule_<reference>.json`` (+ ``.png`` Gantt charts when matplotlib
is present) and ``result.json`` (ratio, objectives, claimed guarantee, progress).
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import time
from concurrent.futures import wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from optsched import registry
from optsched.deadline import Deadline
from optsched.errors import InfeasibleSchedule, InvalidInstance, OptschedError
from optsched.experiments.executors import cap_workers, executor
from optsched.experiments.store import ResultStore, is_error
from optsched.result import SolveStatus

#: Default wall-clock budget (s) of a run, and time limit (s) of one solve.
DEFAULT_BUDGET = 60.0
DEFAULT_TIME_LIMIT = 10.0
#: Share of the budget kept for shrinking the best instance.
SHRINK_SHARE = 0.25
#: Relative tolerance: shrinking keeps ratio >= found * (1 - TOL); a guarantee is exceeded when
#: ratio > bound * (1 + TOL).
TOL = 1e-6
#: Generator seeds profiled to learn field ranges, list lengths and the default size bound.
PROFILE_SEEDS = 16
#: Generations without a new best before a restart.
PATIENCE = 8
#: Children per generation (at least; ``max(LAMBDA, workers)``).
LAMBDA = 4
#: Children screened per evaluated child: the search mutates SCREEN * lambda children, ranks them
#: by the cheap proxy objective(M) / best heuristic objective (a lower bound on the ratio) and
#: solves the exact reference only for the best lambda.
SCREEN = 3
#: Time limit (s) of one heuristic in screening.
SCREEN_LIMIT = 1.0
#: Screening is used while the method's median runtime is below this share of the exact solve's.
SCREEN_COST = 0.2
#: Operators per kick of an iterated-local-search restart.
KICK = (3, 4, 5)
RESULT = "result.json"
RUN = "run.json"


# --------------------------------------------------------------------------- size measures


@dataclass(frozen=True)
class Size:
    """A family's size measure: ``measure(doc) -> int`` and the list patterns it counts (these
    may grow and shrink whatever the generator does)."""

    what: str
    measure: Callable[[dict], int]
    grows: tuple[str, ...]


SIZES: dict[str, Size] = {
    "elastic_cluster": Size("jobs", lambda d: len(d["jobs"]), ("jobs",)),
    "edge_cloud": Size("jobs", lambda d: len(d["jobs"]), ("jobs",)),
    "ring_contention": Size("jobs", lambda d: len(d["jobs"]), ("jobs",)),
    "cojob_network": Size("jobs", lambda d: sum(len(c["jobs"]) for c in d["cojobs"]),
                          ("cojobs", "cojobs.*.jobs", "cojobs.*.jobs.*.flows",
                           "cojobs.*.iterations")),
    "hetero_gpu": Size("tasks", lambda d: sum(j["rounds"] * j["tasks_per_round"]
                                              for j in d["jobs"]), ("jobs",)),
}


def _generic_size(doc: dict) -> int:
    """Objects inside lists (jobs, servers, ...): the size of a family without a measure."""
    return sum(1 for path, node in _nodes(doc) if isinstance(node, dict) and path)


def size_of(family: str, doc: dict) -> int:
    """The family's size measure of an instance document."""
    spec = SIZES.get(family)
    return spec.measure(doc) if spec else _generic_size(doc)


# --------------------------------------------------------------------------- JSON tree helpers


def _nodes(node, path=()):
    """Every (path, node) of a JSON tree, depth first."""
    yield path, node
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _nodes(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _nodes(v, path + (i,))


def _pattern(path) -> str:
    return ".".join("*" if isinstance(p, int) else str(p) for p in path)


def _is_number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


SKIP_KEYS = ("family", "format_version", "name")


def _leaves(doc) -> list[tuple]:
    """Paths of the numeric leaves that mutations may change."""
    return [p for p, v in _nodes(doc) if _is_number(v) and p and p[0] not in SKIP_KEYS]


def _lists(doc) -> list[tuple]:
    return [p for p, v in _nodes(doc) if isinstance(v, list) and p and p[0] not in SKIP_KEYS]


def _get(doc, path):
    for p in path:
        doc = doc[p]
    return doc


def _set(doc, path, value):
    _get(doc, path[:-1])[path[-1]] = value


def _copy(doc):
    return copy.deepcopy(doc)


def doc_key(doc: dict) -> str:
    """Content hash of an instance document (its name excluded)."""
    data = {k: v for k, v in doc.items() if k != "name"}
    text = json.dumps(data, sort_keys=True, separators=(",", ":"))
    return hashlib.sha1(text.encode()).hexdigest()[:16]


def _round_sig(x: float, digits: int) -> float:
    if x == 0 or not math.isfinite(x):
        return x
    return float(f"{x:.{digits}g}")


# --------------------------------------------------------------------------- profile


@dataclass
class Profile:
    """What the generator produces for this family/preset/overrides: numeric ranges per field
    pattern, list lengths per pattern, the largest size."""

    nums: dict[str, tuple[float, float, bool]] = field(default_factory=dict)
    lists: dict[str, tuple[int, int]] = field(default_factory=dict)
    size_max: int = 0

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
        size measure counts, the generator's range for the others."""
        if pattern in grows:
            lo, hi = self.lists.get(pattern, (1, 1))
            return 1, max(2 * hi, hi + 2)
        return self.lists.get(pattern, (1, 1 << 30))


def profile(family, preset: str, overrides: dict) -> Profile:
    """Generate :data:`PROFILE_SEEDS` instances and record their ranges."""
    prof = Profile()
    for seed in range(PROFILE_SEEDS):
        doc = family.generate(preset, seed, **overrides).to_dict()
        prof.size_max = max(prof.size_max, size_of(family.name, doc))
        for path in _leaves(doc):
            v, pat = _get(doc, path), _pattern(path)
            lo, hi, is_int = prof.nums.get(pat, (v, v, True))
            prof.nums[pat] = (min(lo, v), max(hi, v), is_int and isinstance(v, int))
        for path in _lists(doc):
            n, pat = len(_get(doc, path)), _pattern(path)
            lo, hi = prof.lists.get(pat, (n, n))
            prof.lists[pat] = (min(lo, n), max(hi, n))
    return prof


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
    return int(round(value)) if is_int else _round_sig(float(value), 6)


def op_perturb(doc, ctx: Ctx):
    """One numeric field: +-1..|v|/2 for integers, times exp(N(0, 0.5)) for reals."""
    path = _pick(ctx.rng, _leaves(doc))
    if path is None:
        return None
    v, pat = _get(doc, path), _pattern(path)
    if ctx.profile.num_cap(pat)[2]:
        step = int(ctx.rng.integers(1, max(1, abs(int(v)) // 2) + 1))
        new = v + (step if ctx.rng.random() < 0.5 else -step)
    else:
        new = v * math.exp(ctx.rng.normal(0, 0.5)) if v else abs(ctx.rng.normal(0, 1))
    _set(doc, path, _clamp(ctx, pat, new))
    return doc


def op_scale(doc, ctx: Ctx):
    """One numeric field times 0.1, 0.5, 2 or 10."""
    path = _pick(ctx.rng, _leaves(doc))
    if path is None:
        return None
    factor = _pick(ctx.rng, (0.1, 0.5, 2.0, 10.0))
    _set(doc, path, _clamp(ctx, _pattern(path), _get(doc, path) * factor))
    return doc


def op_extreme(doc, ctx: Ctx):
    """One numeric field to an extreme of its range: 0, 1, the generator's min or max, the cap."""
    path = _pick(ctx.rng, _leaves(doc))
    if path is None:
        return None
    pat = _pattern(path)
    lo, hi, _ = ctx.profile.nums.get(pat, (0, 1, False))
    cap = ctx.profile.num_cap(pat)[1]
    _set(doc, path, _clamp(ctx, pat, _pick(ctx.rng, (0, 1, lo, hi, cap))))
    return doc


def op_equalise(doc, ctx: Ctx):
    """Two values of the same field made equal (merge two arrivals, one type for two jobs)."""
    groups: dict[str, list] = {}
    for p in _leaves(doc):
        groups.setdefault(_pattern(p), []).append(p)
    pats = [k for k, v in groups.items() if len(v) >= 2]
    pat = _pick(ctx.rng, pats)
    if pat is None:
        return None
    a, b = ctx.rng.choice(len(groups[pat]), size=2, replace=False)
    _set(doc, groups[pat][a], _get(doc, groups[pat][b]))
    return doc


def op_redraw(doc, ctx: Ctx):
    """An integer field redrawn within the generator's range (a type index, a count)."""
    paths = [p for p in _leaves(doc) if ctx.profile.num_cap(_pattern(p))[2]]
    path = _pick(ctx.rng, paths)
    if path is None:
        return None
    lo, hi, _ = ctx.profile.nums.get(_pattern(path), (0, 1, True))
    _set(doc, path, int(ctx.rng.integers(int(lo), int(hi) + 1)))
    return doc


def _resizable(doc, ctx: Ctx, grow: bool):
    out = []
    for path in _lists(doc):
        lo, hi = ctx.profile.list_range(_pattern(path), ctx.grows)
        n = len(_get(doc, path))
        if (grow and 1 <= n < hi) or (not grow and n > max(lo, 1)):
            out.append(path)
    return out


def _resizable_list(doc, ctx: Ctx, grow: bool):
    """A random list of ``doc`` that may grow (``grow``) or shrink, or None."""
    path = _pick(ctx.rng, _resizable(doc, ctx, grow=grow))
    return None if path is None else _get(doc, path)


def op_copy(doc, ctx: Ctx):
    """A list element (job, task, flow, server) copied to a random position."""
    if (items := _resizable_list(doc, ctx, grow=True)) is None:
        return None
    item = _copy(items[int(ctx.rng.integers(len(items)))])
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
    path = _pick(ctx.rng, [p for p in _lists(doc) if len(_get(doc, p)) >= 2])
    if path is None:
        return None
    items = _get(doc, path)
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
    items[j] = _copy(items[i])
    return doc


def op_flatten(doc, ctx: Ctx):
    """Every value of one field set to one value (all arrivals equal, all sync times 0): 0,
    the smallest present, or one of them."""
    groups: dict[str, list] = {}
    for p in _leaves(doc):
        groups.setdefault(_pattern(p), []).append(p)
    pats = [k for k, v in groups.items() if len(v) >= 2]
    pat = _pick(ctx.rng, pats)
    if pat is None:
        return None
    values = [_get(doc, p) for p in groups[pat]]
    value = _pick(ctx.rng, (0, min(values), _pick(ctx.rng, values)))
    for p in groups[pat]:
        _set(doc, p, _clamp(ctx, pat, value))
    return doc


def op_gpu_column(doc, ctx: Ctx):
    """hetero_gpu: copy or remove one GPU (its name and its column of every job's times)."""
    lo, hi = ctx.profile.list_range("gpus", ctx.grows)
    n = len(doc["gpus"])
    if any(len(j["train_time"]) != n or len(j["sync_time"]) != n for j in doc["jobs"]):
        return None                    # an earlier operator broke the shape; validation rejects
    m = int(ctx.rng.integers(n))
    if ctx.rng.random() < 0.5 and n < hi:
        doc["gpus"].append(doc["gpus"][m])
        for job in doc["jobs"]:
            job["train_time"].append(job["train_time"][m])
            job["sync_time"].append(job["sync_time"][m])
    elif n > max(lo, 1):
        del doc["gpus"][m]
        for job in doc["jobs"]:
            del job["train_time"][m]
            del job["sync_time"][m]
    else:
        return None
    return doc


GENERIC_OPS = (op_perturb, op_scale, op_extreme, op_equalise, op_flatten, op_redraw, op_copy,
               op_remove, op_replace, op_swap)
#: Family-specific operators, added to the generic ones.
FAMILY_OPS: dict[str, tuple] = {"hetero_gpu": (op_gpu_column,)}


# --------------------------------------------------------------------------- evaluation


def _finite(x) -> float | None:
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def _ratio(value: float, ref: float) -> float | None:
    if abs(ref) <= TOL:
        return 1.0 if abs(value) <= TOL else None
    return value / ref


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
                     "size": size_of(task["family"], task["instance"]),
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
            "against": against, "size": size_of(task["family"], task["instance"]),
            "instance": task["instance"]}

    def run(name):
        start = time.perf_counter()
        try:
            return registry.solve(inst, name, time_limit=limit, seed=0), None
        except InfeasibleSchedule as exc:
            return None, ("violation", f"{name}: InfeasibleSchedule: {exc}")
        except Exception as exc:  # noqa: BLE001
            return None, ("error", f"{name}: {type(exc).__name__}: {exc} "
                                   f"(after {time.perf_counter() - start:.2f} s)")

    ref, ref_err = run(against)
    ref_obj = None if ref is None else _finite(ref.objective)
    rows = []
    for name in task["methods"]:
        row = {**base, "method": name, "status": None, "ratio": None, "objective": None,
               "reference": ref_obj, "ref_status": None if ref is None else ref.status.value,
               "ref_runtime_s": None if ref is None else ref.runtime_s,
               "guarantee": None, "exceeds": None, "runtime_s": None, "error": None}
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
            res, err = run(name)
            if err is not None:
                row["status"], row["error"] = err
            else:
                obj = _finite(res.objective)
                row.update(objective=obj, runtime_s=res.runtime_s,
                           guarantee=_finite(res.guarantee))
                ratio = None if obj is None else _ratio(obj, ref_obj)
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
                    if row["guarantee"] is not None:
                        row["exceeds"] = ratio > row["guarantee"] * (1 + TOL) + TOL
                    schedules = {name: res.schedule.to_dict(), against: ref.schedule.to_dict()}
        row["_schedules"] = schedules
        rows.append(row)
    return rows


def screen(task: dict) -> float | None:
    """:func:`screen_here` in a guarded child process; None when it blows up."""
    status, value = guarded(screen_here, task)
    return value if status == "ok" else None


def screen_here(task: dict) -> float | None:
    """A cheap lower bound on a candidate's ratio: objective(M) / the best objective of M and the
    family's baselines (an upper bound on OPT), all verified by solve(). None when M fails."""
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
    return _ratio(target, min(objs.values()))


# --------------------------------------------------------------------------- the run


@dataclass
class WorstResult:
    """What a run found (``ratio`` None when no candidate was counted).

    ``ratio`` is that of the (shrunk) ``instance``; ``ratio_found`` the best before shrinking;
    ``time_to_best`` the run's elapsed seconds when the best was first evaluated;
    ``improvements`` lists ``[elapsed, ratio, method]`` at every new best; ``per_method`` the
    best ratio of every method of a multi-method (random) run.
    """

    family: str
    method: str
    against: str
    strategy: str
    ratio: float | None
    ratio_found: float | None
    objective: float | None
    reference: float | None
    guarantee: float | None
    exceeds_guarantee: bool | None
    instance: dict | None
    schedules: dict
    size: int | None
    size_bound: int
    evaluations: int
    counted: int
    unproven: int
    discarded: int
    time_to_best: float | None
    elapsed: float
    seed: int
    budget: float
    improvements: list = field(default_factory=list)
    violations: list = field(default_factory=list)
    per_method: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__}
        d.pop("schedules")
        return d

    def first_above(self, value: float) -> float | None:
        """Elapsed seconds at which a ratio above ``value`` was first found (or None)."""
        return next((t for t, r, m in self.improvements if m == self.method and r > value), None)


class _Run:
    """Shared machinery of both strategies: candidates, the cache/store, evaluation, clock."""

    def __init__(self, family: str, methods: list[str], against: str, *, size, budget,
                 time_limit, seed, preset, overrides, workers, scheduler, out, strategy,
                 max_evals, target, shrink_share):
        self.fam = registry.get_family(family, error=OptschedError)
        self.methods, self.against = methods, against
        self.preset, self.overrides = preset, dict(overrides or {})
        self.prof = profile(self.fam, preset, self.overrides)
        self.size_bound = int(size) if size is not None else self.prof.size_max
        self.grows = SIZES[family].grows if family in SIZES else tuple(self.prof.lists)
        self.ctx = Ctx(self.prof, self.grows, np.random.default_rng(seed))
        self.ops = GENERIC_OPS + FAMILY_OPS.get(family, ())
        self.budget, self.time_limit, self.seed = float(budget), float(time_limit), seed
        self.strategy, self.max_evals, self.target = strategy, max_evals, target
        self.reserve = shrink_share * self.budget
        self.workers, self.scheduler, self.out = workers, scheduler, out
        self.lam = max(LAMBDA, workers or 1) if scheduler is None else 2 * LAMBDA
        self.parallel = scheduler is not None or (workers or 1) > 1
        self.guard = scheduler is None
        self.screen_methods = [m.name for m in self.fam.methods if m.name == methods[0]
                               or (m.kind == "baseline" and not m.relaxed)]
        self.screened: dict[str, float | None] = {}
        self.screen_off = False
        self.cache: dict[tuple[str, str], dict] = {}
        self.schedules: dict[tuple[str, str], dict] = {}
        self.store: ResultStore | None = None
        self.used_before = 0.0
        self.evaluations = self.invalid = 0
        self.best: dict[str, dict] = {}
        self.improvements: list = []
        self.violations: list = []

    # ---- clock and store

    def open(self):
        if self.out is not None:
            self.store = ResultStore(self.out)
            self.store.open()
            mine = [r for r in self.store.rows.values()
                    if r.get("run_seed") == self.seed and r.get("strategy") == self.strategy]
            self.used_before = max((r.get("elapsed") or 0.0 for r in mine), default=0.0)
        left = self.budget - self.used_before
        self.deadline = Deadline.after(left) if left > 0 else Deadline(time.perf_counter())
        self.t0 = time.perf_counter()

    def close(self):
        if self.store is not None:
            self.store.close()

    def elapsed(self) -> float:
        return self.used_before + time.perf_counter() - self.t0

    def _stored(self, key: str, method: str) -> dict | None:
        k = (self.fam.name, f"worst:{self.against}:{key}", 0, method)
        if self.store is not None and k in self.store:
            return self.store.get(k)
        return None

    def known(self, key: str, method: str) -> dict | None:
        row = self.cache.get((key, method)) or self._stored(key, method)
        if row is not None:
            self.cache[(key, method)] = row
        return row

    def cached(self, doc) -> bool:
        key = doc_key(doc)
        return all(self.known(key, m) is not None for m in self.methods)

    def may_continue(self, docs, reserve: float) -> bool:
        """Go on with this batch? Always when every candidate is already evaluated (replay of a
        resumed run); else while the budget (minus ``reserve``) and ``max_evals`` allow."""
        if docs and all(self.cached(d) for d in docs):
            return True
        if self.max_evals is not None and self.evaluations >= self.max_evals:
            return False         # (the shrink phase starts a new count)
        left = self.deadline.remaining()
        return left is None or left > reserve + 0.05

    # ---- candidates

    def valid(self, doc) -> dict | None:
        """The canonical document of a valid candidate within the size bound, else None."""
        try:
            inst = self.fam.problem.Instance.from_dict(doc)
        except (InvalidInstance, ValueError, TypeError, KeyError, IndexError):
            self.invalid += 1
            return None
        canon = inst.to_dict()
        canon.pop("name", None)
        try:
            if size_of(self.fam.name, canon) > self.size_bound:
                return None
        except (KeyError, TypeError):
            return None
        return canon

    def random_doc(self) -> dict | None:
        """A generator instance (seed from the run's rng), cut down to the size bound."""
        rng = self.ctx.rng
        for _ in range(20):
            seed = int(rng.integers(2**31))
            fresh: dict = self.fam.generate(self.preset, seed, **self.overrides).to_dict()
            fresh.pop("name", None)
            doc: dict | None = fresh
            for _ in range(50):
                if doc is None or size_of(self.fam.name, doc) <= self.size_bound:
                    break
                cut = op_remove(_copy(doc), self.ctx)
                doc = None if cut is None else self._valid_any_size(cut)
            if doc is not None and (canon := self.valid(doc)) is not None:
                return canon
        return None

    def _valid_any_size(self, doc) -> dict | None:
        try:
            canon = self.fam.problem.Instance.from_dict(doc).to_dict()
        except (InvalidInstance, ValueError, TypeError, KeyError, IndexError):
            return None
        canon.pop("name", None)
        return canon

    def mutate(self, parent: dict, seen: set, ops=(1, 1, 1, 2, 2, 3)) -> dict | None:
        """A valid child of ``parent`` (a number of operators drawn from ``ops``), preferably
        one not evaluated yet."""
        rng = self.ctx.rng
        fallback = None
        parent_key = doc_key(parent)
        for _ in range(30):
            doc = _copy(parent)
            for _ in range(int(rng.choice(ops))):
                op = self.ops[int(rng.integers(len(self.ops)))]
                try:
                    doc = op(doc, self.ctx) or doc
                except (IndexError, KeyError, TypeError, ValueError):
                    break                      # a shape an operator cannot read: drop this try
            canon = self.valid(doc)
            if canon is None:
                continue
            key = doc_key(canon)
            if key == parent_key:
                continue
            if key not in seen:
                return canon
            fallback = fallback or canon
        return fallback

    # ---- evaluation

    def screening(self) -> bool:
        """Screen children? Only against ``exact``, while screening has not proved too costly
        (:meth:`screen`) and while the method is cheap next to the exact solve: its median
        runtime below :data:`SCREEN_COST` times the exact solve's (runtimes are stored in the
        rows, so a resumed run decides the same)."""
        if self.against != "exact" or self.screen_off:
            return False
        alg, ref = self._median("runtime_s"), self._median("ref_runtime_s")
        return alg is not None and ref is not None and alg < SCREEN_COST * ref

    def limits(self, per_solve: float) -> tuple[float, float, bool]:
        """(time limit of one solve, hard limit of one guarded task, cut by the budget?)."""
        left = self.deadline.remaining()
        if left is None:
            return per_solve, GUARD_FACTOR * per_solve + GUARD_SLACK, False
        limit = max(0.05, min(per_solve, left))
        hard = min(GUARD_FACTOR * limit + GUARD_SLACK, left + GUARD_GRACE)
        return limit, hard, limit < per_solve or hard < GUARD_FACTOR * limit + GUARD_SLACK

    def screen(self, docs: list[dict], ex) -> list[float | None]:
        """The cheap proxy (:func:`screen`) of every candidate (kept in memory).

        Candidates are screened in chunks (one per worker); once a chunk costs more per candidate
        than :data:`SCREEN_COST` times the median exact solve, screening is switched off for the
        rest of the run (the unscreened candidates keep their order)."""
        keys = [doc_key(d) for d in docs]
        todo = [(k, d) for k, d in zip(keys, docs) if k not in self.screened]
        chunk = self.lam if self.parallel else 1
        for start in range(0, len(todo), chunk):
            if self.screen_off:
                break
            part = todo[start:start + chunk]
            limit, hard, _ = self.limits(min(self.time_limit, SCREEN_LIMIT))
            hard = min(hard, 1.5 * limit * len(self.screen_methods) + GUARD_SLACK)
            t0 = time.perf_counter()
            futures = [ex.submit(screen, {"family": self.fam.name, "instance": d,
                                          "method": self.methods[0],
                                          "methods": self.screen_methods, "time_limit": limit,
                                          "hard_limit": hard, "guard": self.guard})
                       for _, d in part]
            wait(futures)
            for (k, _), fut in zip(part, futures):
                try:
                    self.screened[k] = fut.result()
                except Exception:  # noqa: BLE001
                    self.screened[k] = None
            cost = (time.perf_counter() - t0) / len(part) * (chunk if self.parallel else 1)
            ref = self._median("ref_runtime_s")
            if ref is None or cost > SCREEN_COST * ref:
                self.screen_off = True
        return [self.screened.get(k) for k in keys]

    def _median(self, field_name: str) -> float | None:
        values = sorted(r[field_name] for (_, m), r in self.cache.items()
                        if m == self.methods[0] and r.get(field_name) is not None)
        return values[len(values) // 2] if values else None

    def evaluate(self, docs: list[dict], phase: str, ex) -> list[dict[str, dict]]:
        """Rows (per method) of every candidate, from the cache/store or solved now."""
        out: list[dict[str, dict]] = [{} for _ in docs]
        todo = []
        for i, doc in enumerate(docs):
            key = doc_key(doc)
            have = {m: r for m in self.methods if (r := self.known(key, m)) is not None}
            if len(have) == len(self.methods):
                out[i] = have
            else:
                todo.append((i, key, doc))
        if todo:
            limit, hard, cut = self.limits(self.time_limit)
            futures = [ex.submit(evaluate, {"family": self.fam.name, "instance": doc, "key": key,
                                            "methods": self.methods, "against": self.against,
                                            "time_limit": limit, "hard_limit": hard, "cut": cut,
                                            "guard": self.guard})
                       for _, key, doc in todo]
            wait(futures)
            for (i, key, doc), fut in zip(todo, futures):
                rows: list[dict]
                try:
                    rows = fut.result()
                except Exception as exc:  # noqa: BLE001 - a worker died
                    rows = [{"family": self.fam.name, "preset": f"worst:{self.against}:{key}",
                             "seed": 0, "method": m, "status": "error", "ratio": None,
                             "instance": doc, "error": f"task failed: {exc}"}
                            for m in self.methods]
                self.evaluations += 1
                now = round(self.elapsed(), 3)
                for row in rows:
                    scheds = row.pop("_schedules", {})
                    row.update(phase=phase, run_seed=self.seed, strategy=self.strategy,
                               elapsed=now)
                    if row["status"] == "violation":
                        self.violations.append({"method": row["method"], "error": row["error"],
                                                "instance": doc})
                    if self.store is not None:
                        self.store.append(row)
                    if not is_error(row):
                        self.cache[(key, row["method"])] = row
                    if scheds:
                        self.schedules[(key, row["method"])] = scheds
                    out[i][row["method"]] = row
        if phase in ("search", "random"):
            for per_method in out:
                for m, row in per_method.items():
                    self._note_best(m, row)
        return out

    def _note_best(self, method: str, row: dict):
        r = row.get("ratio")
        if r is None:
            return
        best = self.best.get(method)
        if best is None or r > best["ratio"] * (1 + TOL):
            self.best[method] = row
            self.improvements.append([row.get("elapsed") or 0.0, r, method])

    @staticmethod
    def fitness(rows: dict[str, dict], method: str) -> float | None:
        row = rows.get(method)
        return None if row is None else row.get("ratio")


# --------------------------------------------------------------------------- strategies


def _search(run: _Run, ex) -> None:
    """(1+lambda) evolution with restarts until the budget minus the shrink reserve is spent."""
    m = run.methods[0]
    parent, parent_fit, stale, restarts = None, None, 0, 0
    seen: set[str] = set()
    while True:
        if run.target is not None and m in run.best and run.best[m]["ratio"] >= run.target:
            return
        if parent is None and restarts % 2 == 1 and m in run.best:
            # iterated local search: every other restart kicks the best instance with a few
            # operators instead of starting afresh
            kicked = [run.mutate(run.best[m]["instance"], seen, ops=KICK) for _ in range(run.lam)]
            docs = [d for d in kicked if d is not None]
        elif parent is None:
            docs = [d for d in (run.random_doc() for _ in range(run.lam)) if d is not None]
        else:
            wide = run.lam * (SCREEN if run.screening() else 1)
            docs = [d for d in (run.mutate(parent, seen) for _ in range(wide)) if d is not None]
            if len(docs) > run.lam:
                if not any(run.cached(d) for d in docs) and not run.may_continue([], run.reserve):
                    return
                proxy = run.screen(docs, ex)
                order = sorted(range(len(docs)), key=lambda i: (-(proxy[i] or 0.0), i))
                docs = [docs[i] for i in sorted(order[:run.lam])]
        if not docs or not run.may_continue(docs, run.reserve):
            return
        seen.update(doc_key(d) for d in docs)
        before = run.best.get(m, {}).get("ratio")
        fits = [run.fitness(rows, m) for rows in run.evaluate(docs, "search", ex)]
        scored = [(f, -i) for i, f in enumerate(fits) if f is not None]
        if scored:
            f, neg = max(scored)              # the best child, the first one on ties
            if parent_fit is None or f >= parent_fit * (1 - TOL):
                parent, parent_fit = docs[-neg], f
        after = run.best.get(m, {}).get("ratio")
        stale = 0 if (after is not None and (before is None or after > before)) else stale + 1
        if stale >= PATIENCE or parent_fit is None:
            parent, parent_fit, stale, restarts = None, None, 0, restarts + 1


def _simpler(v, prof: Profile, pattern: str) -> list:
    """Numbers simpler than ``v`` (shorter to write, then smaller), simplest first."""
    lo = prof.nums.get(pattern, (0, 1, False))[0]
    is_int = isinstance(v, int)
    cands = {0, 1, round(v), _round_sig(float(v), 1), _round_sig(float(v), 2), lo}
    if not is_int:
        cands |= {round(float(v), 1), round(float(v), 2)}

    def cost(x):
        x = float(x)
        text = str(int(x)) if x.is_integer() else repr(x)
        return (len(text), abs(x))

    out = sorted({float(c) for c in cands if cost(c) < cost(v)}, key=cost)
    return [int(c) if is_int else c for c in out]


def _shrink(run: _Run, doc: dict, ratio: float, ex) -> tuple[dict, float]:
    """Delta-debugging shrink: remove list elements, then simplify numbers, keeping ratio >=
    ``ratio`` (within :data:`TOL`); stops when nothing changes or the budget is spent. Candidates
    are tried in a fixed order and the first that keeps the ratio wins, so the result does not
    depend on how many are evaluated in parallel."""
    m = run.methods[0]
    target = ratio * (1 - TOL)
    batch = run.lam if run.parallel else 1
    best: dict[str, Any] = {"doc": doc, "ratio": ratio}

    def first_passing(candidates) -> bool:
        pending, seen = [], {doc_key(best["doc"])}
        for c in candidates:
            c = run.valid(c)
            if c is not None and doc_key(c) not in seen:
                seen.add(doc_key(c))
                pending.append(c)
        for k in range(0, len(pending), batch):
            chunk = pending[k:k + batch]
            if not run.may_continue(chunk, 0.0):
                raise TimeoutError
            for c, rows in zip(chunk, run.evaluate(chunk, "shrink", ex)):
                f = run.fitness(rows, m)
                if f is not None and f >= target:
                    best["doc"], best["ratio"] = c, f
                    return True
        return False

    try:
        changed = True
        while changed:
            changed = False
            progress = True
            while progress:                 # 1. remove elements, the size-counted lists first
                progress = False
                cur = best["doc"]
                paths = sorted((p for p in _lists(cur) if len(_get(cur, p)) > 1),
                               key=lambda p: (_pattern(p) not in run.grows, len(p)))
                for path in paths:
                    lo, _ = run.prof.list_range(_pattern(path), run.grows)
                    n = len(_get(cur, path))
                    if n <= max(lo, 1):
                        continue
                    cands = []
                    for i in reversed(range(n)):
                        c = _copy(cur)
                        del _get(c, path)[i]
                        cands.append(c)
                    if first_passing(cands):
                        progress = changed = True
                        break
            for path in _leaves(best["doc"]):   # 2. simpler numbers, one field at a time
                cur = best["doc"]
                try:
                    v = _get(cur, path)
                except (IndexError, KeyError, TypeError):
                    continue
                if not _is_number(v):
                    continue
                cands = []
                for s in _simpler(v, run.prof, _pattern(path)):
                    c = _copy(cur)
                    _set(c, path, s)
                    cands.append(c)
                if cands and first_passing(cands):
                    changed = True
    except TimeoutError:
        pass
    return best["doc"], best["ratio"]


def _random(run: _Run, ex) -> None:
    """Generator instances only, every method of the run, for the whole budget."""
    while True:
        docs = [d for d in (run.random_doc() for _ in range(run.lam)) if d is not None]
        if not docs or not run.may_continue(docs, 0.0):
            return
        run.evaluate(docs, "random", ex)


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


def run_worst(family: str, method: str | list[str], against: str = "exact", *,
              size: int | None = None, budget: float = DEFAULT_BUDGET,
              time_limit: float = DEFAULT_TIME_LIMIT, seed: int = 0, preset: str = "tiny",
              overrides: dict | None = None, workers: int = 1, scheduler=None, out=None,
              strategy: str = "search", max_evals: int | None = None,
              target: float | None = None, shrink: bool = True,
              shrink_share: float = SHRINK_SHARE, plots: bool = True) -> WorstResult:
    """Search for the instance maximising ``objective(method) / objective(against)``.

    Parameters
    ----------
    family, method, against
        ``method``: one name (search) or a list (``strategy="random"`` measures them all on the
        same instances; the result is for the first, ``per_method`` has all).
    size
        Bound on the family's size measure (:data:`SIZES`); None = the largest the generator
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
        ``"search"`` or ``"random"``.
    max_evals
        Stop after this many new evaluations, and shrink with at most as many (deterministic
        stopping, for tests).
    target
        Stop searching (then shrink) once this ratio is reached.
    shrink, shrink_share
        Shrink the best instance, in the last ``shrink_share`` of the budget.
    plots
        Draw the two schedules as Gantt charts in ``out`` (when matplotlib is installed).
    """
    methods = [method] if isinstance(method, str) else list(method)
    if strategy not in ("search", "random"):
        raise OptschedError(f"--strategy: must be search or random, got {strategy!r}")
    if strategy == "search" and len(methods) != 1:
        raise OptschedError("--method: the search takes exactly one method")
    if not (0 < budget < math.inf) or not (0 < time_limit < math.inf):
        raise OptschedError("--budget/--time-limit: must be > 0 and finite")
    if size is not None and size < 1:
        raise OptschedError(f"--size: must be >= 1, got {size}")
    check_methods(family, methods, against)
    if scheduler is None:
        workers = cap_workers(workers)
    try:
        run = _Run(family, methods, against, size=size, budget=budget, time_limit=time_limit,
                   seed=seed, preset=preset, overrides=overrides, workers=workers,
                   scheduler=scheduler, out=out, strategy=strategy, max_evals=max_evals,
                   target=target,
                   shrink_share=shrink_share if (shrink and strategy == "search") else 0.0)
    except TypeError as exc:         # an override the generator does not take
        raise OptschedError(f"--override: {exc}") from None
    if out is not None:
        _check_run_file(Path(out), run, overrides)
    _preload()
    run.open()
    found = shrunk = None
    try:
        preload = [f"optsched.solvers.{family}"] if family in SIZES else []
        with executor(workers, scheduler, preload) as ex:
            if strategy == "random":
                _random(run, ex)
            else:
                _search(run, ex)
                best = run.best.get(methods[0])
                if best is not None:
                    found = shrunk = (best["instance"], best["ratio"])
                    run.evaluations = 0
                    if shrink:
                        shrunk = _shrink(run, found[0], found[1], ex)
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


def _check_run_file(out: Path, run: _Run, overrides) -> None:
    """One --out folder holds one search: refuse one with other parameters."""
    params = {"family": run.fam.name, "methods": run.methods, "against": run.against,
              "preset": run.preset, "size": run.size_bound, "strategy": run.strategy,
              "overrides": json.loads(json.dumps(overrides or {}, default=list))}
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


def _result(run: _Run, shrunk, ex) -> WorstResult:
    m = run.methods[0]
    per_method = {}
    for name in run.methods:
        b = run.best.get(name)
        per_method[name] = None if b is None else {
            "ratio": b["ratio"], "guarantee": b.get("guarantee"), "exceeds": b.get("exceeds"),
            "size": b.get("size"), "elapsed": b.get("elapsed")}
    mine = [r for (_, name), r in run.cache.items() if name == m]
    res = WorstResult(family=run.fam.name, method=m, against=run.against, strategy=run.strategy,
                      ratio=None, ratio_found=None, objective=None, reference=None, guarantee=None,
                      exceeds_guarantee=None, instance=None, schedules={}, size=None,
                      size_bound=run.size_bound, evaluations=len(mine),
                      counted=sum(1 for r in mine if r.get("ratio") is not None),
                      unproven=sum(1 for r in mine if r.get("status") == "unproven"),
                      discarded=run.invalid, time_to_best=None, elapsed=round(run.elapsed(), 3),
                      seed=run.seed, budget=run.budget, improvements=run.improvements,
                      violations=run.violations, per_method=per_method)
    best = run.best.get(m)
    if best is None:
        return res
    res.time_to_best, res.ratio_found = best.get("elapsed"), best["ratio"]
    doc = best["instance"] if shrunk is None else shrunk[0]
    key = doc_key(doc)
    row, scheds = run.known(key, m), run.schedules.get((key, m))
    if row is None or not scheds:        # resumed run: solve the winner again for its schedules
        rows = ex.submit(evaluate, {"family": run.fam.name, "instance": doc, "key": key,
                                    "methods": [m], "against": run.against,
                                    "time_limit": run.time_limit, "guard": run.guard}).result()
        row = rows[0]
        scheds = row.pop("_schedules", {})
    res.ratio = row.get("ratio")
    res.objective, res.reference = row.get("objective"), row.get("reference")
    res.guarantee, res.exceeds_guarantee = row.get("guarantee"), row.get("exceeds")
    res.instance, res.schedules, res.size = doc, scheds, size_of(run.fam.name, doc)
    return res


def _write_outputs(out: Path, run: _Run, res: WorstResult, found, plots: bool) -> None:
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
    """Lines for the terminal."""
    if res.ratio is None:
        return (f"{res.family} {res.method} vs {res.against}: no candidate counted "
                f"({res.evaluations} evaluated, {res.unproven} without a proven optimum) in "
                f"{res.elapsed:.1f} s")
    g = "-" if res.guarantee is None else f"{res.guarantee:.6g}"
    lines = [f"family     {res.family}",
             f"method     {res.method} vs {res.against} ({res.strategy})",
             f"ratio      {res.ratio:.6g} (found {res.ratio_found:.6g}; instance size "
             f"{res.size}, bound {res.size_bound})",
             f"objective  {res.objective:.6g} vs {res.reference:.6g}",
             f"guarantee  {g}" + ("  EXCEEDED" if res.exceeds_guarantee else ""),
             f"evaluated  {res.evaluations} instances ({res.counted} counted, {res.unproven} "
             f"without a proven optimum); best after {res.time_to_best:.1f} s of "
             f"{res.elapsed:.1f} s"]
    if res.violations:
        lines.append(f"violation  {len(res.violations)} schedule(s) failed verify: "
                     f"{res.violations[0]['error'][:120]}")
    if out is not None:
        lines.append(f"wrote      {out}/worst.json, schedule_*.json, result.json, results.jsonl")
    return "\n".join(lines)


__all__ = ["DEFAULT_BUDGET", "DEFAULT_TIME_LIMIT", "FAMILY_OPS", "GENERIC_OPS", "SIZES",
           "WorstResult", "check_methods", "evaluate", "format_result", "profile", "run_worst",
           "size_of"]

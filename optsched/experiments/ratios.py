"""``optsched ratios``: empirical ALG/OPT and LB/OPT of every method against the exact optimum.

One *task* is one instance (family, preset, seed): it runs the family's ``exact`` method first, then
every other method whose schedules follow the family's model, and returns one *row* per method. The exact optimum is
shared by all rows of the instance. Tasks run in this process, in K local processes or on a Dask
cluster through the same ``concurrent.futures`` code path (:mod:`.executors`); rows go to a resumable
store (:mod:`.store`) as each task finishes.

A row (all values JSON; ``objective`` is null when there is no schedule)::

    family, preset, seed, method, kind, status, objective, lower_bound, runtime_s, guarantee,
    opt, ratio, checks, time_limit, versions, error

``status`` is the solver status (optimal | feasible | time_limit | infeasible | unknown), or
``violation`` when the schedule failed the family's ``verify`` (``error`` holds its message), or
``error`` for any other exception (``error`` holds the exception text; the row is redone on resume).
``opt`` is the exact objective when proven optimal, else null (a time-out is never counted as
optimal). ``ratio`` is objective/opt for algorithms and baselines, lower_bound/opt for bounds, null for
the exact method and whenever opt is unknown. ``checks`` re-tests the invariants: ``verified``,
``lb_le_opt``, ``opt_le_alg``, ``within_guarantee`` and, for the exact method, ``model_agrees`` (the
MILP's objective equals the checker's); each is true, false, or null when it does not apply.

The reference optimum (``exact=``, CLI ``--exact``) comes from the MILP ``exact`` (``milp``, the
default), the CP-SAT ``exact_cp`` (``cp``; a family without one uses its MILP), or both
(``portfolio``): the engines run one after the other, each with the full time limit, and a row
``portfolio`` (kind ``exact``) holds their joint answer. It is ``optimal`` when either engine proved
its optimum or when the best verified incumbent of either meets the best dual bound of either (so
the portfolio proves instances that neither engine proves alone); ``params.proven_by`` records
which. Two proven optima that differ are a violation (``checks.model_agrees`` false): the instance
gets no OPT, nothing is averaged away.
"""

from __future__ import annotations

import math
import sys
import time
import traceback
from dataclasses import dataclass, replace
from concurrent.futures import FIRST_COMPLETED, wait
from pathlib import Path
from typing import Iterable

from optsched.errors import InfeasibleSchedule, InvalidInstance, OptschedError
from optsched.experiments.executors import InlineExecutor, cap_workers, executor
from optsched.experiments.store import ResultStore, row_key
from optsched.experiments.table import (NOT_COMPARABLE, format_table, is_failure,  # noqa: F401
                                        is_violation, summarize, write_summary_csv)
from optsched.registry import families, get_family
from optsched.tolerance import REL, at_most, close

#: Default time limit (s) per exact solve, and per bound/algorithm call.
DEFAULT_TIME_LIMIT = 30.0
#: ``--exact`` choices: the exact methods each runs, in order.
REFERENCES = {"milp": ("exact",), "cp": ("exact_cp",), "portfolio": ("exact", "exact_cp")}
#: Name of the row that holds the joint answer of several exact engines.
PORTFOLIO = "portfolio"

ROW_KEYS = ("family", "preset", "seed", "method", "kind", "params", "status", "objective",
            "lower_bound", "runtime_s", "guarantee", "opt", "ratio", "checks", "time_limit",
            "versions", "error")
CHECKS = ("verified", "lb_le_opt", "opt_le_alg", "within_guarantee", "model_agrees")


# --------------------------------------------------------------------------- planning


@dataclass(frozen=True)
class Task:
    """One instance of a ratio study: the unit of work of every executor (picklable).

    Attributes
    ----------
    family, preset, seed
        The instance (``generate(family, preset, seed)``).
    methods
        Method names in the order run: the reference rows of :func:`reference_methods` first,
        then every other method whose schedules follow the family's model.
    reference
        The methods that give the instance its OPT (``--exact``; the first holds it).
    time_limit
        Seconds per method call.
    solver
        The solver of every Pyomo model.
    exact_row
        A stored row of the reference method, reused instead of solving again (resumed runs).
    """

    family: str
    preset: str
    seed: int
    methods: tuple[str, ...]
    reference: tuple[str, ...] = ("exact",)
    time_limit: float | None = None
    solver: str = "highs"
    exact_row: dict | None = None


def plan(family_names=None, preset=None, seeds=None, exact="milp"):
    """The instances to run and the families skipped.

    Returns
    -------
    (tasks, skipped)
        ``tasks``: a :class:`Task` per instance (without time limit and solver, which
        :func:`run_ratios` sets); ``skipped``: one row with ``status ==
        "not comparable"`` per relaxed-model method (its own checker), so none is dropped silently.
    """
    tasks, skipped = [], []
    order = list(families())
    for name in family_names or order:
        family = get_family(name, error=InvalidInstance)
        fam_preset = preset or family.ratio_preset
        if fam_preset not in family.workloads.PRESETS:
            raise InvalidInstance(f"preset: {name} has no preset {fam_preset!r} "
                                  f"(known: {', '.join(family.workloads.PRESETS)})")
        family.method("exact")
        refs = reference_methods(family, exact)
        names = refs + [m.name for m in family.methods if m.kind != "exact" and not m.relaxed]
        skipped += [_skipped_row(name, fam_preset, m) for m in family.methods if m.relaxed]
        for seed in _seed_list(seeds, family.ratio_seeds):
            tasks.append(Task(name, fam_preset, seed, tuple(names), tuple(refs)))
    # interleave families so a slow family does not leave workers idle at the end
    tasks.sort(key=lambda t: (t.seed, order.index(t.family)))
    return tasks, skipped


def reference_methods(family, exact: str) -> list[str]:
    """The rows that give an instance its OPT under ``--exact`` (the first holds it)."""
    if exact not in REFERENCES:
        raise InvalidInstance(f"exact: one of {', '.join(REFERENCES)}, got {exact!r}")
    have = {m.name for m in family.methods if m.kind == "exact"}
    engines = [n for n in REFERENCES[exact] if n in have] or ["exact"]
    return [PORTFOLIO, *engines] if exact == "portfolio" and len(engines) > 1 else engines


def _seed_list(seeds, default) -> list[int]:
    if seeds is None:
        seeds = default
    if isinstance(seeds, int):
        if seeds < 1:
            raise InvalidInstance(f"seeds: must be >= 1, got {seeds}")
        return list(range(seeds))
    return [int(s) for s in seeds]


def _skipped_row(family, preset, method) -> dict:
    row = dict.fromkeys(ROW_KEYS)
    row.update(family=family, preset=preset, seed=-1, method=method.name, kind=method.kind,
               status=NOT_COMPARABLE, checks={},
               error="solves a relaxed model (own checker); its schedules are not comparable with "
                     "the exact optimum")
    return row


# --------------------------------------------------------------------------- one instance


_VERSIONS: dict | None = None


def versions() -> dict:
    """Versions of optsched, pyomo and highspy in this process."""
    global _VERSIONS
    if _VERSIONS is None:
        from importlib.metadata import PackageNotFoundError, version

        import optsched

        out: dict[str, str | None] = {"optsched": optsched.__version__, "python": sys.version.split()[0]}
        for pkg in ("pyomo", "highspy"):
            try:
                out[pkg] = version(pkg)
            except PackageNotFoundError:
                out[pkg] = None
        _VERSIONS = out
    return _VERSIONS


def run_instance(task: Task) -> list[dict]:
    """Run the methods of one instance (the unit of work of every executor).

    Returns one row per method in ``task.methods`` (never raises for a method's failure).
    """
    from optsched.solvers.options import SolverOptions, using

    with using(SolverOptions(name=task.solver)):
        return _run_instance(task)


def _run_instance(task: Task) -> list[dict]:
    from optsched import generate

    family, preset, seed = task.family, task.preset, task.seed
    base = {"family": family, "preset": preset, "seed": seed, "time_limit": task.time_limit,
            "versions": versions()}
    try:
        inst = generate(family, preset, seed)
    except Exception as exc:  # noqa: BLE001
        return [_error_row(base, name, None, f"generate: {exc_text(exc)}")
                for name in task.methods]

    refs = list(task.reference)
    rows = _reference_rows(inst, family, refs, [m for m in task.methods if m in refs], base,
                           task.time_limit)
    exact_row = rows[0] if rows else task.exact_row
    opt = exact_row.get("opt") if exact_row else None
    for name in task.methods:
        if name in refs:
            continue
        try:
            entry = get_family(family).method(name)
        except Exception as exc:  # noqa: BLE001
            rows.append(_error_row(base, name, None, exc_text(exc)))
            continue
        rows.append(_run_method(inst, entry, base, opt, task.time_limit))
    return rows


def _reference_rows(inst, family: str, refs: list[str], todo: list[str], base: dict,
                    time_limit) -> list[dict]:
    """The rows of the exact engines in ``todo`` (all of ``refs`` when any is to do), and the
    portfolio row when ``refs`` has one (its ``opt`` is the instance's OPT)."""
    if not todo:
        return []
    engines = [get_family(family).method(n) for n in refs if n != PORTFOLIO]
    rows = [_run_method(inst, e, base, None, time_limit) for e in engines]
    return [portfolio_row(base, rows), *rows] if PORTFOLIO in refs else rows


def portfolio_row(base: dict, rows: list[dict]) -> dict:
    """The joint answer of several exact engines' rows (see the module docstring)."""
    proven = {r["method"]: r["opt"] for r in rows if r.get("opt") is not None}
    found = [r["objective"] for r in rows if r.get("objective") is not None
             and (r.get("checks") or {}).get("verified")]
    bounds = [r["lower_bound"] for r in rows if r.get("lower_bound") is not None]
    best, bound = min(found, default=None), max(bounds, default=None)
    agree = all(close(v, best) for v in proven.values()) if proven and best is not None else None
    opt, by = None, sorted(proven)
    if proven and agree:
        opt = best
    elif not proven and best is not None and bound is not None and at_most(best, bound):
        opt, by = best, ["incumbent meets bound"]
    checks = {**dict.fromkeys(CHECKS), "verified": True if found else None, "model_agrees": agree}
    if best is not None and bound is not None:
        checks["lb_le_opt"] = at_most(bound, best)
    times = [r["runtime_s"] for r in rows if r.get("runtime_s") is not None]
    row = {**base, "method": PORTFOLIO, "kind": "exact",
           "params": {"engines": [r["method"] for r in rows], "proven_by": by if opt is not None else []},
           "status": "optimal" if opt is not None else _joint_status(rows),
           "objective": best, "lower_bound": bound, "runtime_s": sum(times) if times else None,
           "guarantee": None, "opt": opt if agree is not False else None, "ratio": None,
           "checks": checks, "error": None}
    return _ordered(row)


def _joint_status(rows: list[dict]) -> str:
    statuses = {r.get("status") for r in rows}
    for status in ("infeasible", "time_limit", "feasible"):
        if status in statuses:
            return status
    return "unknown"


def _run_method(inst, entry, base: dict, opt: float | None, time_limit) -> dict:
    """Solve, verify and check one method; the row records any failure."""
    from optsched.registry import solve

    row = {**base, "method": entry.name, "kind": entry.kind,
           "params": None if entry.params is None else entry.params.to_dict()}
    start = time.perf_counter()
    try:
        result = solve(inst, entry.name, time_limit=time_limit, seed=base["seed"])
    except InfeasibleSchedule as exc:
        row.update(status="violation", objective=None, lower_bound=None,
                   runtime_s=time.perf_counter() - start, guarantee=_guarantee(entry, inst),
                   opt=opt, ratio=None, error=f"InfeasibleSchedule: {exc}",
                   checks={**dict.fromkeys(CHECKS), "verified": False})
        return _ordered(row)
    except Exception as exc:  # noqa: BLE001
        return _error_row(base, entry.name, entry.kind, exc_text(exc),
                          runtime=time.perf_counter() - start, opt=opt)

    objective = None if math.isinf(result.objective) else result.objective
    lb = finite_or_none(result.lower_bound)
    checks = dict.fromkeys(CHECKS)
    checks["verified"] = True if result.schedule is not None else None
    if "bound_dropped" in result.info:  # the method's bound exceeded its own verified schedule
        checks["lb_le_opt"] = False
    if entry.kind == "exact":
        agrees = result.info.get("model_objective_agrees")
        checks["model_agrees"] = agrees
        if lb is not None and objective is not None:
            checks["lb_le_opt"] = at_most(lb, objective)
        proven = result.status.value == "optimal" and objective is not None and agrees is not False
        opt = objective if proven else None
        ratio = None
    else:
        ratio = None
        if opt is not None:
            if lb is not None:
                checks["lb_le_opt"] = at_most(lb, opt)
            if entry.kind == "bound":
                ratio = ratio_of(lb, opt)
            elif objective is not None:
                checks["opt_le_alg"] = at_most(opt, objective)
                ratio = ratio_of(objective, opt)
        if ratio is not None and result.guarantee is not None and entry.kind != "bound":
            checks["within_guarantee"] = ratio <= result.guarantee * (1 + REL) + REL
    row.update(status=result.status.value, objective=objective, lower_bound=lb,
               runtime_s=result.runtime_s, guarantee=finite_or_none(result.guarantee), opt=opt,
               ratio=ratio, checks=checks, error=None)
    return _ordered(row)


def ratio_of(value: float | None, opt: float) -> float | None:
    """value / opt; 1 when both are 0 (within REL), None when only ``opt`` is (or no value)."""
    if value is None:
        return None
    if abs(opt) <= REL:
        return 1.0 if abs(value) <= REL else None
    return value / opt


def finite_or_none(x) -> float | None:
    """``x`` as a float, or None when it is None or not finite."""
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def _guarantee(entry, inst) -> float | None:
    try:
        return finite_or_none(entry.guarantee_on(inst))
    except Exception:  # noqa: BLE001
        return None


def exc_text(exc: BaseException) -> str:
    """``Type: message`` plus the innermost frame, so a failure can be traced from the row."""
    tb = traceback.extract_tb(exc.__traceback__)
    where = f" [{Path(tb[-1].filename).name}:{tb[-1].lineno}]" if tb else ""
    return f"{type(exc).__name__}: {exc}{where}"


def _error_row(base, method, kind, text, runtime=None, opt=None) -> dict:
    row = {**base, "method": method, "kind": kind, "status": "error", "objective": None,
           "lower_bound": None, "runtime_s": runtime, "guarantee": None, "opt": opt,
           "ratio": None, "checks": dict.fromkeys(CHECKS), "error": text}
    return _ordered(row)


def _ordered(row: dict) -> dict:
    return {k: row.get(k) for k in ROW_KEYS}


# --------------------------------------------------------------------------- the sweep


def run_ratios(families=None, preset=None, seeds=None, time_limit=None, workers=1, scheduler=None,
               out=None, progress=None, exact="milp", solver="highs") -> list[dict]:
    """Run the ratio study and return its rows (stored rows included when resuming from ``out``).

    Parameters
    ----------
    families
        Family names; None = every family. Relaxed-model methods are reported by one row each with
        ``status == "not comparable"``.
    preset
        Instance preset for every family; None = each family's ``ratio_preset``.
    seeds
        Number of seeds (0..N-1) or an iterable of seeds; None = each family's ``RATIO_SEEDS``
        (the family's ``ratio_seeds``).
    time_limit
        Seconds per exact solve (and per other method); None = :data:`DEFAULT_TIME_LIMIT`.
    workers
        Local processes (1 = this process), at most the cores available (a note on stderr).
    scheduler
        Dask scheduler address (or a ``distributed.Client``); overrides ``workers``.
    out
        Folder for ``results.jsonl`` (resumable), ``summary.csv`` and ``ratios.png``.
    progress
        True: a progress bar; None: a bar on a terminal, a line every few seconds otherwise;
        ``"verbose"``: lines, plus one per finished instance; False: nothing.
    exact
        Where OPT comes from: ``milp``, ``cp`` or ``portfolio`` (module docstring).
    solver
        The solver of every Pyomo model (``highs``, ``scip``, ...); rows resumed from ``out``
        keep the solver they were made with.

    Returns
    -------
    list[dict]
        Rows ordered by family, seed and method registration order, each with the keys of
        :data:`ROW_KEYS` (``ratio`` = objective / proven OPT, LB / OPT for bounds; ``checks``).
        :func:`format_table` prints them as ``optsched ratios`` does.

    Examples
    --------
    >>> rows = run_ratios(["ring_contention"], preset="tiny", seeds=1, progress=False)
    >>> exact = next(r for r in rows if r["method"] == "exact")
    >>> exact["status"], all(r["ratio"] >= 1 for r in rows if r["kind"] == "algorithm")
    ('optimal', True)
    """
    time_limit = DEFAULT_TIME_LIMIT if time_limit is None else float(time_limit)
    from optsched.solvers.options import check_solver

    check_solver(solver)
    if scheduler is None:
        workers = cap_workers(workers)
    tasks, skipped = plan(families, preset, seeds, exact)
    store = ResultStore(out) if out is not None else None
    if store is not None:
        store.open()
    try:
        rows = _sweep(tasks, store, time_limit, workers, scheduler, progress, solver)
    finally:
        if store is not None:
            store.close()
    rows = _sorted(rows) + skipped
    if out is not None:
        _write_outputs(rows, Path(out))
    return rows


def _write_outputs(rows: list[dict], out: Path) -> None:
    """``summary.csv`` and ``ratios.png`` in ``out``; an OS error is a one-line user error (the
    rows are safe in ``results.jsonl`` by then)."""
    path = out / "summary.csv"
    try:
        write_summary_csv(rows, path)
        path = out / "ratios.png"
        try:
            from optsched.experiments.plot import plot_ratios

            plot_ratios(rows, path)
        except ImportError as exc:  # matplotlib is optional for the sweep itself
            print(f"optsched: no plot ({exc})", file=sys.stderr)
    except OSError as exc:
        raise OptschedError(f"--out: cannot write {path}: {exc.strerror or exc}") from None


def _sweep(tasks, store, time_limit, workers, scheduler, progress, solver="highs") -> list[dict]:
    done_rows, todo = [], []
    for task in tasks:
        keys = [(task.family, task.preset, task.seed, m) for m in task.methods]
        finished = [k for k in keys if store is not None and k in store]
        done_rows += [store.get(k) for k in finished]
        missing = [k[3] for k in keys if k not in finished]
        if missing:
            reuse = None if set(task.reference) & set(missing) else store.get(keys[0])
            todo.append(replace(task, methods=tuple(missing), time_limit=time_limit,
                                solver=solver, exact_row=reuse))
    new_rows: list[dict] = []
    bar = _NoBar()
    try:
        preload = sorted({f"optsched.solvers.{t.family}" for t in todo})
        with executor(workers, scheduler, preload) as ex:
            bar = progress_bar(progress, total=len(tasks), initial=len(tasks) - len(todo))
            # InlineExecutor runs a task on submit: keep one in flight so rows are stored as they come
            limit = 1 if isinstance(ex, InlineExecutor) else len(todo)
            pending: dict = {}
            queue = list(todo)
            while queue or pending:
                while queue and len(pending) < limit:
                    task = queue.pop(0)
                    pending[ex.submit(run_instance, task)] = task
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for fut in done:
                    task = pending.pop(fut)
                    rows = _task_rows(fut, task)
                    if store is not None:
                        store.extend(rows)
                    new_rows += rows
                    bar.update(1)
                    bar.note(_task_line(task, rows))
    finally:
        bar.close()
    return done_rows + new_rows


def _task_rows(fut, task: Task) -> list[dict]:
    """The task's rows, or error rows when the task itself failed (worker died, pickling, ...)."""
    try:
        return fut.result()
    except Exception as exc:  # noqa: BLE001
        base = {"family": task.family, "preset": task.preset, "seed": task.seed,
                "time_limit": task.time_limit, "versions": versions()}
        return [_error_row(base, m, None, f"task failed: {exc_text(exc)}") for m in task.methods]


def _task_line(task: Task, rows: list[dict]) -> str:
    """One line on a finished instance (``--verbose``): its reference optimum and any findings."""
    ref = next((r for r in rows if r["method"] in task.reference), None)
    opt = "no reference row" if ref is None else (
        f"{ref['method']} {ref.get('status')}, OPT {ref['opt']:,.10g}" if ref.get("opt") is not None
        else f"{ref['method']} {ref.get('status')}, no proven OPT")
    bad = sum(map(is_violation, rows)) + sum(map(is_failure, rows))
    return (f"{task.family} {task.preset} seed {task.seed}: {len(rows)} method(s), "
            f"{opt}, {bad} violation(s)/failure(s)")


class _NoBar:
    def update(self, n=1):
        pass

    def note(self, text: str) -> None:
        pass

    def close(self):
        pass


class LineProgress:
    """Progress for a stderr that is not a terminal (a log, a pipe, CI): one line at most every
    :data:`LINE_EVERY` seconds, and one at the end (issue 21 item 5: long runs are not silent)."""

    def __init__(self, desc: str, total: int, initial: int = 0, verbose: bool = False):
        self.desc, self.total, self.done, self.verbose = desc, total, initial, verbose
        self.start = self.last = time.perf_counter()

    def note(self, text: str) -> None:
        """With ``verbose`` (``-v``): a line on a finished unit of work, at once."""
        if self.verbose:
            print(f"{self.desc}: {text}", file=sys.stderr, flush=True)

    def update(self, n: int = 1) -> None:
        self.done += n
        now = time.perf_counter()
        if now - self.last >= LINE_EVERY:
            self.last = now
            self._line(now)

    def close(self) -> None:
        self._line(time.perf_counter())

    def _line(self, now: float) -> None:
        print(f"{self.desc}: {self.done}/{self.total} done, {now - self.start:.0f} s",
              file=sys.stderr, flush=True)


#: Seconds between two progress lines when stderr is not a terminal.
LINE_EVERY = 5.0


def progress_bar(progress, total, initial, desc: str = "ratios"):
    """A progress bar on stderr: tqdm on a terminal, :class:`LineProgress` lines otherwise
    (``progress`` None); none when ``progress`` is False; ``"verbose"``: lines, plus one line per
    finished unit (``-v``)."""
    if progress is False:
        return _NoBar()
    if progress == "verbose" or (progress is None and not sys.stderr.isatty()):
        return LineProgress(desc, total, initial, verbose=progress == "verbose")
    from tqdm import tqdm

    class Bar(tqdm):
        monitor_interval = 0       # no monitor thread: local workers are forked after this

        def note(self, text: str) -> None:
            pass

    return Bar(total=total, initial=initial, desc=desc, unit="inst", file=sys.stderr)


def _sorted(rows: Iterable[dict]) -> list[dict]:
    order = {f: i for i, f in enumerate(families())}
    method_order: dict = {}

    def key(row):
        fam = row["family"]
        if fam not in method_order:
            kinds = ("exact", "bound", "algorithm", "baseline")
            ms = get_family(fam).methods if fam in order else ()
            method_order[fam] = {m.name: (kinds.index(m.kind), i) for i, m in enumerate(ms)}
        first = (0, -1) if row["method"] == PORTFOLIO else (99, 0)
        return (order.get(fam, 99), fam, row["preset"], row["seed"],
                method_order[fam].get(row["method"], first), row["method"])

    unique = {row_key(r): r for r in rows}
    return sorted(unique.values(), key=key)

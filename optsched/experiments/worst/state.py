"""The state of one ``optsched worst`` run (:class:`Run`: parameters, evaluations, best so far) and its
result (:class:`WorstResult`).
"""

from __future__ import annotations

import time
from concurrent.futures import wait
from dataclasses import dataclass, field

import numpy as np

from optsched import registry
from optsched.deadline import Deadline
from optsched.errors import InvalidInstance, OptschedError
from optsched.experiments.store import ResultStore, is_error
from optsched.experiments.worst.doc import copy_doc, doc_key, get_at
from optsched.experiments.worst.evaluate import (
    GUARD_FACTOR,
    GUARD_GRACE,
    GUARD_SLACK,
    calibrate,
    evaluate,
    guarded,
    screen,
)
from optsched.experiments.worst.mutations import (
    GENERIC_OPS,
    Ctx,
    op_equalise,
    op_flatten,
    op_flatten_list,
    op_remove,
    op_zero_entry,
)
from optsched.experiments.worst.profile import profile
from optsched.experiments.worst.sizes import size_of
from optsched.tolerance import REL

#: Default wall-clock budget (s) of a run, and time limit (s) of one solve.
DEFAULT_BUDGET = 60.0
DEFAULT_TIME_LIMIT = 10.0
#: Share of the budget kept for shrinking the best instance.
SHRINK_SHARE = 0.25
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
#: Pruning (:func:`~.evaluate._pruned`) uses the tightest ``bound`` method of the family whose
#: median time on the calibration instances is below this share of the reference's.
PRUNE_COST = 0.5
#: A bound within this of the tightest mean LB/OPT counts as tight enough (the cheapest wins).
TIGHT_SLACK = 0.05
#: Generator seeds of the calibration instances.
CALIBRATION_SEEDS = (0, 1)
#: Failed tries before the guarantee descent of a start (:meth:`Run.descend`) gives up.
DESCENT_TRIES = 40
#: Value moves of the guarantee descent (with ``op_remove`` on lists the size does not count and
#: the family's own operators).
DESCENT_OPS = (op_flatten_list, op_equalise, op_flatten)
#: Most zero entries a degenerate start of a lemma target gets (:meth:`Run.degenerate`).
DEGENERATE_MAX = 3
#: Whether the search breaks ties of a lemma's factor by the claim's grade (:meth:`Run.grade`;
#: False: the ablation of benchmarks/refute.py ``--no-grade``).
GRADE = True


# --------------------------------------------------------------------------- the run


@dataclass
class WorstResult:
    """What a run found (``ratio`` None when no candidate was counted).

    ``ratio`` is that of the (shrunk) ``instance``; ``ratio_found`` the best before shrinking;
    ``time_to_best`` the run's elapsed seconds when the best was first evaluated;
    ``improvements`` lists ``[elapsed, score, method]`` at every new best (the score is what
    ``target`` maximises); ``per_method`` the best of every method of a multi-method (random) run.
    ``violation`` is the claim's violation factor on ``instance`` (``target="violation"``: ALG /
    (OPT x guarantee); ``"lemma:NAME"``: the lemma's predicate; > 1 means the claim fails), also
    filled for the ratio target when the method has a guarantee; ``violation_found`` before
    shrinking.
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
    target: str = "ratio"
    violation: float | None = None
    violation_found: float | None = None
    #: Candidates whose score bound ALG/LB ruled them out before the exact solve.
    pruned: int = 0
    #: The lower bound used for pruning (None: none was cheap enough).
    bound: str | None = None

    def to_dict(self) -> dict:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__}
        d.pop("schedules")
        return d

    def first_above(self, value: float) -> float | None:
        """Elapsed seconds at which a score (ratio, or violation factor) above ``value`` was first
        found (or None)."""
        return next((t for t, r, m in self.improvements if m == self.method and r > value), None)


class Run:
    """Shared machinery of both strategies: candidates, the cache/store, evaluation, clock."""

    def __init__(self, family: str, methods: list[str], against: str, *, size, budget,
                 time_limit, seed, preset, overrides, workers, scheduler, out, strategy,
                 max_evals, stop_at, shrink_share, target="ratio", hypothesis=None):
        self.fam = registry.get_family(family, error=OptschedError)
        self.methods, self.against = methods, against
        self.preset, self.overrides = preset, dict(overrides or {})
        self.prof = profile(self.fam, preset, self.overrides)
        self.size_bound = int(size) if size is not None else self.prof.size_max
        spec = self.fam.worst
        self.grows = spec.grows if spec is not None else tuple(self.prof.lists)
        self.ctx = Ctx(self.prof, self.grows, np.random.default_rng(seed))
        self.ops = GENERIC_OPS + (spec.mutations if spec is not None else ())
        self.budget, self.time_limit, self.seed = float(budget), float(time_limit), seed
        self.strategy, self.max_evals, self.stop_at = strategy, max_evals, stop_at
        self.target = target
        self.hypothesis = hypothesis
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
        self.fast_exact = tuple(m.name for m in self.fam.methods
                                if m.kind == "exact" and m.name != "exact") \
            if against == "exact" else ()
        self.bound: str | None = None
        self.bound_cost = 0.0
        self.fresh = 0

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
        if self.hypothesis is not None and not self.hypothesis(canon):
            return None
        try:
            if size_of(self.fam, canon) > self.size_bound:
                return None
        except (KeyError, TypeError):
            return None
        return canon

    def random_doc(self) -> dict | None:
        """A generator instance (seed from the run's rng), cut down to the size bound; for a search
        strategy every other one gets the target's start prior (:meth:`descend` for ``violation``,
        :meth:`degenerate` for ``lemma:NAME``), the ``random`` baseline none."""
        rng = self.ctx.rng
        for _ in range(20):
            seed = int(rng.integers(2**31))
            fresh: dict = self.fam.generate(self.preset, seed, **self.overrides).to_dict()
            fresh.pop("name", None)
            doc: dict | None = fresh
            for _ in range(50):
                if doc is None or size_of(self.fam, doc) <= self.size_bound:
                    break
                cut = op_remove(copy_doc(doc), self.ctx)
                doc = None if cut is None else self._valid_any_size(cut)
            if doc is not None and (canon := self.valid(doc)) is not None:
                self.fresh += 1
                if self.strategy == "random" or self.fresh % 2 == 1:
                    return canon          # the baseline samples the generator only
                if self.target == "violation":
                    canon = self.descend(canon)
                elif self.target.startswith("lemma:"):
                    canon = self.degenerate(canon)
                return canon
        return None

    # ---- the guarantee prior

    def guarantee(self, doc: dict) -> float | None:
        """The method's claimed bound on the instance (cheap: no solve)."""
        try:
            inst = self.fam.problem.Instance.from_dict(doc)
        except (InvalidInstance, ValueError, TypeError, KeyError, IndexError):
            return None
        return self.fam.method(self.methods[0]).guarantee_on(inst)

    def _counted(self, doc: dict) -> dict[str, int]:
        """Elements of the lists the size measure counts (``grows``), by pattern."""
        from optsched.experiments.worst.doc import list_paths, pattern_of

        out: dict[str, int] = {}
        for path in list_paths(doc):
            pat = pattern_of(path)
            if pat in self.grows:
                out[pat] = out.get(pat, 0) + len(get_at(doc, path))
        return out

    def descend(self, doc: dict) -> dict:
        """Greedy descent on the claimed guarantee, a prior of the ``violation`` target.

        The target divides by the guarantee, so a start where the bound is smallest needs the
        least from the algorithm. Moves that do not shrink what the family's size counts (value
        moves: a homogeneous row, equal values, one field flattened; removals from lists the
        size does not count, e.g. a GPU; the family's own operators) are kept while the
        guarantee falls (a homogeneous row also when it stays level): Hare's alpha(2+alpha) falls to 3 as the GPUs become alike. A guarantee
        that grows with the counted structure (PDA's 2 - 2/(l+1), l stages) is left alone: the
        ratio an algorithm can be pushed to grows with it too."""
        g = self.guarantee(doc)
        if g is None:
            return doc
        size, counted = size_of(self.fam, doc), self._counted(doc)
        spec = self.fam.worst
        ops = DESCENT_OPS + (op_remove,) + (spec.mutations if spec is not None else ())
        misses = 0
        while misses < DESCENT_TRIES:
            misses += 1
            op = ops[int(self.ctx.rng.integers(len(ops)))]
            try:
                child = op(copy_doc(doc), self.ctx)
            except (IndexError, KeyError, TypeError, ValueError):
                continue
            canon = None if child is None else self._valid_any_size(child)
            if canon is None or size_of(self.fam, canon) < size:
                continue
            now = self._counted(canon)
            if any(now.get(k, 0) < v for k, v in counted.items()):
                continue
            g2 = self.guarantee(canon)
            if g2 is not None and g2 < g * (1 - REL):
                doc, g, misses = canon, g2, 0
            elif g2 is not None and g2 <= g * (1 + REL) and (
                    op is op_flatten_list or _elements(canon) < _elements(doc)):
                # level moves: a homogeneous row (a step towards the one that lowers the bound
                # when several rows share the max) and a resource the size does not count
                # removed (with the counted size fixed, fewer GPUs mean more contention)
                doc = canon
        return doc

    def degenerate(self, doc: dict) -> dict:
        """A start with 1 to :data:`DEGENERATE_MAX` zero entries in its numeric rows
        (:func:`~.mutations.op_zero_entry`: a resource a worker type does not demand), a prior
        of the ``lemma:NAME`` targets, which have no guarantee to descend: a subroutine's
        claim (A_mincost1's optimality) tends to fail on degenerate vectors, where a greedy
        rule's tie-breaks and fill order decide, and the lemma's score is flat (exactly 1)
        everywhere else, so the search has no gradient towards them. Each zero is kept only
        when the instance stays valid."""
        k = int(self.ctx.rng.integers(1, DEGENERATE_MAX + 1))
        for _ in range(k):
            child = op_zero_entry(copy_doc(doc), self.ctx)
            canon = None if child is None else self.valid(child)
            if canon is not None:
                doc = canon
        return doc

    # ---- pruning

    def calibrate(self, ex) -> None:
        """Choose the lower bound of pruning (``self.bound``, its median seconds
        ``self.bound_cost``): of the family's ``bound`` methods on the generator instances of
        :data:`CALIBRATION_SEEDS`, the cheapest whose mean LB/OPT is within :data:`TIGHT_SLACK`
        of the tightest. Pruning is used only while it pays (:meth:`pruning`)."""
        if self.against != "exact" or self.target not in ("ratio", "violation"):
            return
        docs = [self.fam.generate(self.preset, s, **self.overrides).to_dict()
                for s in CALIBRATION_SEEDS]
        task = {"family": self.fam.name, "instances": docs, "against": self.against,
                "time_limit": self.time_limit, "fast_exact": self.fast_exact,
                "guard": self.guard}
        status, times = ex.submit(guarded, calibrate, task).result()
        if status != "ok":
            return
        times.pop("reference", None)
        stats = [(sum(q for _, q in runs) / len(runs), _median_of([t for t, _ in runs]), name)
                 for name, runs in times.items() if runs]
        if not stats or max(q for q, _, _ in stats) <= 0:
            return
        top = max(q for q, _, _ in stats)
        self.bound_cost, self.bound = min((c, n) for q, c, n in stats if q >= top - TIGHT_SLACK)

    def pruning(self) -> str | None:
        """The bound to prune with, while it pays: the median exact reference of the run so far
        costs more than the bound's calibrated time over :data:`PRUNE_COST`."""
        if self.bound is None:
            return None
        ref = self._median("ref_runtime_s")
        return self.bound if ref is not None and PRUNE_COST * ref > self.bound_cost else None

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
            doc = copy_doc(parent)
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
                                          "hard_limit": hard, "guard": self.guard,
                                          "target": self.target})
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

    def evaluate(self, docs: list[dict], phase: str, ex, prune_below: float | None = None,
                 prune_on: str | None = None) -> list[dict[str, dict]]:
        """Rows (per method) of every candidate, from the cache/store or solved now; with
        ``prune_below`` (and a bound chosen by :meth:`calibrate`) a candidate whose score
        cannot reach it is not solved exactly (a ``pruned`` row)."""
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
                                            "guard": self.guard, "target": self.target,
                                            "fast_exact": self.fast_exact, "bound": self.pruning(),
                                            "prune_below": prune_below,
                                            "prune_on": prune_on or self.target,
                                            "proxy_methods": self.proxy_methods(prune_on)})
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

    def proxy_methods(self, metric: str | None) -> list[str]:
        """The baselines of a lemma target's proxy climb (``metric="proxy"``), else none."""
        if metric != "proxy":
            return []
        return [m for m in self.screen_methods if m != self.methods[0]]

    def score(self, row: dict | None) -> float | None:
        """What the run maximises on a row: its ratio (target ``ratio``), the excess over the
        guarantee (``violation``: > 1 exactly when the violation factor is, see
        :func:`~.evaluate.excess`) or the lemma's violation factor (``lemma:NAME``)."""
        if row is None:
            return None
        if self.target == "ratio":
            return row.get("ratio")
        return row.get("excess") if self.target == "violation" else row.get("violation")

    def _note_best(self, method: str, row: dict):
        r = self.score(row)
        if r is None:
            return
        old = self.score(self.best.get(method))
        if old is None or r > old * (1 + REL):
            self.best[method] = row
            self.improvements.append([row.get("elapsed") or 0.0, r, method])
        elif GRADE and r >= old and graded_above(row.get("grade"),
                                                 self.best[method].get("grade")):
            # the same score, closer to breaking the claim (Claim.grade): the kicks of the
            # search start from here; not an improvement of the score
            self.best[method] = row

    def best_score(self, method: str) -> float | None:
        return self.score(self.best.get(method))

    def grade(self, rows: dict[str, dict], method: str) -> float | None:
        """The claim's closeness on ``method``'s row (``lemma:NAME`` targets whose
        :class:`~optsched.family.Claim` has a ``grade``), else None: the search's secondary key
        on ties of the score."""
        row = rows.get(method)
        if row is None or not GRADE or not self.target.startswith("lemma:"):
            return None
        return row.get("grade")

    def fitness(self, rows: dict[str, dict], method: str,
                metric: str | None = None) -> float | None:
        """The run's score of ``method``'s row, or its plain ratio with ``metric="ratio"``, or
        ALG / the best baseline with ``metric="proxy"`` (a lemma target's plateau climb)."""
        row = rows.get(method)
        if metric in ("ratio", "proxy"):
            return None if row is None else row.get(metric)
        return self.score(row)


def graded_above(grade: float | None, other: float | None) -> bool:
    """``grade`` above ``other`` beyond the tolerance (a missing grade is below every one)."""
    if grade is None:
        return False
    return other is None or grade > other + REL * max(1.0, abs(other))


def _median_of(values: list[float]) -> float:
    values = sorted(values)
    return values[len(values) // 2] if values else float("inf")


def _elements(doc: dict) -> int:
    """Elements of every list of ``doc`` (a removal lowers it)."""
    from optsched.experiments.worst.doc import list_paths

    return sum(len(get_at(doc, p)) for p in list_paths(doc))

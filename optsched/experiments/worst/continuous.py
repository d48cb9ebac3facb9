"""Continuous search over an instance's numbers with its structure fixed (``strategy="continuous"``)
and the same search with structure moves between its runs (``strategy="hybrid"``).

*Continuous*: the real-valued leaves of the instance document (times, weights, loads, capacities;
integers such as counts and type indices stay fixed) form a vector z in log space (z = log v, so
every value stays positive and a step is a relative change). A (mu/mu_w, lambda) evolution strategy
-- CMA-ES without the covariance matrix: weighted recombination of the best half, a global step
size sigma adapted by the 1/5 success rule -- moves the mean; a value whose exp(z) falls below
:data:`ZERO_SHARE` times its field's generator maximum is set to 0 (sync times, arrivals), and
every value is capped as mutations cap it (:meth:`Profile.num_cap`). A run ends when sigma falls
below :data:`SIGMA_MIN` or after :data:`PATIENCE` generations without a better child; restarts
alternate between a fresh generator instance and the best instance so far with sigma reset.

*Hybrid*: every other restart applies :data:`STRUCTURE_MOVES` (1 to 3) to the best instance --
copy, remove, overwrite or swap a list element (job, task, device), redraw an integer (a type, a
count), equalise or flatten a field, the family's own operators (a GPU column) -- and runs the
continuous search from there.

Both count exactly as the mutation search does (:class:`~.state.Run`: validity, proven optima,
verify); the score is the run's target (ratio or violation factor).
"""

from __future__ import annotations

import math

import numpy as np

from optsched.experiments.worst.doc import copy_doc, doc_key, get_at, leaf_paths, pattern_of, set_at
from optsched.experiments.worst.mutations import (
    op_copy,
    op_equalise,
    op_flatten,
    op_redraw,
    op_remove,
    op_replace,
    op_swap,
)
from optsched.experiments.worst.state import PATIENCE, Run, graded_above

#: Initial step size (log space: a factor of about e^0.5 per coordinate) and the smallest one.
SIGMA0, SIGMA_MIN = 0.5, 0.02
#: Values below this share of their field's generator maximum decode to 0.
ZERO_SHARE = 1e-3
#: Structure moves of the hybrid strategy (the family's own operators are added).
STRUCTURE_MOVES = (op_copy, op_remove, op_replace, op_swap, op_redraw, op_equalise, op_flatten)


class Encoding:
    """The real-valued leaves of one document as a log-space vector, and back."""

    def __init__(self, run: Run, doc: dict):
        self.doc = doc
        prof = run.prof
        self.paths = [p for p in leaf_paths(doc) if not prof.num_cap(pattern_of(p))[2]]
        self.floor = np.array([ZERO_SHARE * max(prof.nums.get(pattern_of(p), (0, 1, False))[1],
                                                1e-9) for p in self.paths])
        self.cap = np.array([prof.num_cap(pattern_of(p))[1] for p in self.paths])
        values = np.array([float(get_at(doc, p)) for p in self.paths])
        self.z = np.log(np.where(values > 0, values, self.floor / math.e))

    def decode(self, z: np.ndarray) -> dict:
        doc = copy_doc(self.doc)
        values = np.minimum(np.exp(z), self.cap)
        for p, v, lo in zip(self.paths, values, self.floor):
            set_at(doc, p, 0.0 if v < lo else float(f"{v:.6g}"))
        return doc


def es_run(run: Run, ex, start: dict) -> bool:
    """One (mu/mu_w, lambda)-ES run from ``start``; False when the budget is spent."""
    m = run.methods[0]
    if not run.may_continue([start], run.reserve):
        return False
    first = run.evaluate([start], "search", ex)[0]
    incumbent, inc_grade = run.fitness(first, m), run.grade(first, m)
    enc = Encoding(run, start)
    if not enc.paths:
        return True
    rng = run.ctx.rng
    lam = 2 * run.lam
    mu = lam // 2
    w = np.log(mu + 0.5) - np.log(np.arange(1, mu + 1))
    w /= w.sum()
    mean, sigma = enc.z.copy(), SIGMA0
    stale = 0
    while sigma > SIGMA_MIN and stale < PATIENCE:
        if run.stop_at is not None and (run.best_score(m) or -1.0) >= run.stop_at:
            return False
        zs = mean + sigma * rng.standard_normal((lam, len(mean)))
        docs, rows_of = [], []
        for i, z in enumerate(zs):
            canon = run.valid(enc.decode(z))
            if canon is not None:
                docs.append(canon)
                rows_of.append(i)
        if not run.may_continue(docs, run.reserve):
            return False
        fits = np.full(lam, -math.inf)
        grades: list[float | None] = [None] * lam
        if docs:
            for i, rows in zip(rows_of, run.evaluate(docs, "search", ex)):
                f = run.fitness(rows, m)
                fits[i] = -math.inf if f is None else f
                grades[i] = run.grade(rows, m)
        # ranked by the score, ties (a lemma's plateau at exactly 1) by the claim's grade
        neg_grade = [math.inf if g is None else -g for g in grades]
        order = np.array(sorted(range(lam), key=lambda i: (-fits[i], neg_grade[i], i)))
        inc = incumbent if incumbent is not None else -math.inf
        wins = [bool(fits[i] > inc) or (bool(fits[i] == inc) and graded_above(grades[i], inc_grade))
                for i in range(lam)]
        better = sum(wins)
        if np.isfinite(fits[order[0]]):
            mean = w @ zs[order[:mu]]
        sigma *= math.exp((better / lam - 0.2) / 0.8)
        if better:
            top = int(order[0])
            incumbent, inc_grade, stale = float(fits[top]), grades[top], 0
        else:
            stale += 1
    return True


def _start(run: Run, restarts: int, moves: tuple) -> dict | None:
    """A fresh generator instance on even restarts; on odd ones the best so far, after 1-3
    structure ``moves`` when there are any."""
    m = run.methods[0]
    if restarts % 2 == 0 or m not in run.best:
        return run.random_doc()
    doc = copy_doc(run.best[m]["instance"])
    if not moves:
        return doc
    rng = run.ctx.rng
    for _ in range(20):
        child = copy_doc(doc)
        for _ in range(int(rng.integers(1, 4))):
            op = moves[int(rng.integers(len(moves)))]
            try:
                child = op(child, run.ctx) or child
            except (IndexError, KeyError, TypeError, ValueError):
                break
        canon = run.valid(child)
        if canon is not None and doc_key(canon) != doc_key(doc):
            return canon
    return doc


def _restarts(run: Run, ex, moves: tuple) -> None:
    restarts = 0
    while True:
        start = _start(run, restarts, moves)
        if start is None or not es_run(run, ex, start):
            return
        restarts += 1
        if not run.may_continue([], run.reserve):
            return


def continuous(run: Run, ex) -> None:
    """The continuous search with restarts until the budget minus the shrink reserve is spent."""
    _restarts(run, ex, ())


def hybrid(run: Run, ex) -> None:
    """The continuous search with structure moves (:data:`STRUCTURE_MOVES` and the family's
    operators) applied to the best instance at every other restart."""
    spec = run.fam.worst
    _restarts(run, ex, STRUCTURE_MOVES + (spec.mutations if spec is not None else ()))

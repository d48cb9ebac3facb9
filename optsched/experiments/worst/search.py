"""The search strategies: (1+lambda) evolution with restarts and screening, shrinking, random sampling.
"""

from __future__ import annotations

from typing import Any

from optsched.experiments.worst.doc import (
    copy_doc,
    doc_key,
    get_at,
    is_number,
    leaf_paths,
    list_paths,
    pattern_of,
    round_sig,
    set_at,
)
from optsched.experiments.worst.profile import Profile
from optsched.experiments.worst.sizes import size_of
from optsched.experiments.worst.state import KICK, PATIENCE, SCREEN, Run, graded_above

#: What every other fresh restart of a ``lemma:NAME`` target climbs instead of the lemma's
#: score: ``"proxy"`` (ALG / the best baseline) or None (the lemma's score, as every restart).
LEMMA_CLIMB: str | None = "proxy"
#: Iterated-local-search kicks in a row without a new best after which the search only
#: restarts from fresh instances (until a fresh restart finds a new best).
KICKS_TRIED = 2
from optsched.tolerance import REL

# --------------------------------------------------------------------------- strategies


def evolve(run: Run, ex) -> None:
    """(1+lambda) evolution with restarts until the budget minus the shrink reserve is spent.

    On a ``lemma:NAME`` target whose claim has a grade (:class:`~optsched.family.Claim`), a
    child that ties with its parent on the lemma's factor replaces it when its grade is higher
    (a climb), and is refused when lower."""
    m = run.methods[0]
    parent, parent_fit, stale, restarts = None, None, 0, 0
    parent_grade: float | None = None
    kicks_failed, kicked, fresh, metric = 0, False, 0, None
    seen: set[str] = set()
    while True:
        if run.stop_at is not None and (run.best_score(m) or -1.0) >= run.stop_at:
            return
        if parent is None:
            kicked = restarts % 2 == 1 and m in run.best and kicks_failed < KICKS_TRIED
            best_then = run.best_score(m)
            fresh += int(not kicked)
            # the violation target: every other fresh restart climbs the plain ratio ALG/OPT
            # (every instance it evaluates is still scored on the violation): tight small
            # instances (the claim met with equality) are the maxima of any violation score,
            # while the way to a violation can run through instances far below them on it
            # and rising on the ratio (PDA with more and more stages behind a long one)
            # a lemma target has no reference: its climb is on ALG / the best baseline (the
            # lemma's score is flat at 1 where the statement is tight -- Lemma 4's rounded
            # theta, A_mincost1 equal to the exact cost -- and gives no direction there but
            # through the claim's grade, which the other restarts break its ties by)
            metric = None
            if not kicked and fresh % 2 == 0:
                metric = {"violation": "ratio"}.get(run.target,
                                                    LEMMA_CLIMB if run.target != "ratio" else None)
        if parent is None and kicked:
            # iterated local search: every other restart kicks the best instance with a few
            # operators instead of starting afresh -- until KICKS_TRIED kicks in a row found
            # nothing better (a plateau where the claim is tight: PDA meeting 2 - 2/(l+1) on
            # two one-stage cojobs took 121 of 287 evaluations)
            kids = [run.mutate(run.best[m]["instance"], seen, ops=KICK) for _ in range(run.lam)]
            docs = [d for d in kids if d is not None]
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
        before = run.best_score(m)
        # a child replaces the parent only with a score >= the parent's: prune the others
        prune: float | None = None if parent_fit is None else parent_fit * (1 - REL)
        rows_of = run.evaluate(docs, "search", ex, prune, metric)
        fits = [run.fitness(rows, m, metric) for rows in rows_of]
        # the claim's closeness (Claim.grade) breaks ties of the lemma's own score: where the
        # factor is flat at exactly 1 (Lemma 4's rounded theta, A_mincost1's tied costs) it is
        # the only direction the search has
        grades = [run.grade(rows, m) if metric is None else None for rows in rows_of]
        climbed = False
        if any(f is not None for f in fits):
            i = _best_child(fits, grades)
            f, g = fits[i], grades[i]
            assert f is not None
            tie = parent_fit is not None and f <= parent_fit * (1 + REL)
            graded = tie and graded_above(g, parent_grade)
            worse_graded = tie and graded_above(parent_grade, g) and g is not None
            if parent_fit is None or (f >= parent_fit * (1 - REL) and not worse_graded and not (
                    tie and not graded and _smaller(run, docs[i], parent))):
                climbed = parent_fit is not None and (f > parent_fit * (1 + REL) or graded)
                parent, parent_fit, parent_grade = docs[i], f, g
        after = run.best_score(m)
        # a restart goes on while it climbs, not only while it beats the best of the run: the
        # way to a violation can start far below a plateau where the claim is tight (PDA on two
        # one-stage cojobs meets 2 - 2/(l+1) exactly)
        improved = after is not None and (before is None or after > before)
        stale = 0 if (improved or climbed) else stale + 1
        if stale >= PATIENCE or parent_fit is None:
            now = run.best_score(m)
            better = now is not None and (best_then is None or now > best_then)
            kicks_failed = 0 if better else kicks_failed + int(kicked)
            parent, parent_fit, stale, restarts = None, None, 0, restarts + 1
            parent_grade = None


def _best_child(fits: list, grades: list) -> int:
    """Index of the best child: the highest score; among the scores within :data:`REL` of it,
    the highest grade (:meth:`~.state.Run.grade`; a missing one lowest), then the first."""
    top = max(f for f in fits if f is not None)
    tied = [i for i, f in enumerate(fits) if f is not None and f >= top - REL * abs(top)]
    best = tied[0]
    for i in tied[1:]:
        if graded_above(grades[i], grades[best]):
            best = i
    return best


#: Targets whose neutral drift may not shrink the instance (:func:`_smaller`).
KEEP_SIZE_ON_TIES = ("lemma",)


def _smaller(run: Run, child: dict, parent: dict | None) -> bool:
    """A lemma target's tie that loses size: not accepted. A lemma's score is exactly 1 on the
    smallest instances (one job: Lemma 4's theta~ meets its rounded bound), so drift on that
    plateau ran down to one job and stayed there, where no violation lives; the search stops
    shrinking on ties (the shrink phase still does)."""
    if parent is None or run.target.split(":")[0] not in KEEP_SIZE_ON_TIES:
        return False
    return size_of(run.fam, child) < size_of(run.fam, parent)


def _simpler(v, prof: Profile, pattern: str) -> list:
    """Numbers simpler than ``v`` (shorter to write, then smaller), simplest first."""
    lo = prof.nums.get(pattern, (0, 1, False))[0]
    is_int = isinstance(v, int)
    cands = {0, 1, round(v), round_sig(float(v), 1), round_sig(float(v), 2), lo}
    if not is_int:
        cands |= {round(float(v), 1), round(float(v), 2)}

    def cost(x):
        x = float(x)
        text = str(int(x)) if x.is_integer() else repr(x)
        return (len(text), abs(x))

    out = sorted({float(c) for c in cands if cost(c) < cost(v)}, key=cost)
    return [int(c) if is_int else c for c in out]


#: A violation target's shrink keeps every change whose score stays above this (a smaller
#: instance that still refutes the claim, with a margin over the tolerance), not only those that
#: keep the score found.
VIOLATION_KEEP = 1.01


def shrink_doc(run: Run, doc: dict, ratio: float, ex) -> tuple[dict, float]:
    """Delta-debugging shrink: remove list elements, then simplify numbers, keeping ratio >=
    ``ratio`` (within :data:`REL`) -- for a violation or lemma target whose score is above
    :data:`VIOLATION_KEEP`, keeping it above that; stops when nothing changes or the budget is
    spent. Candidates
    are tried in a fixed order and the first that keeps the ratio wins, so the result does not
    depend on how many are evaluated in parallel."""
    m = run.methods[0]
    target = ratio * (1 - REL)
    if run.target != "ratio" and ratio > VIOLATION_KEEP:
        target = VIOLATION_KEEP          # a refutation: any smaller instance that still violates
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
            for c, rows in zip(chunk, run.evaluate(chunk, "shrink", ex, target)):
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
                paths = sorted((p for p in list_paths(cur) if len(get_at(cur, p)) > 1),
                               key=lambda p: (pattern_of(p) not in run.grows, len(p)))
                for path in paths:
                    lo, _ = run.prof.list_range(pattern_of(path), run.grows)
                    n = len(get_at(cur, path))
                    if n <= max(lo, 1):
                        continue
                    cands = []
                    for i in reversed(range(n)):
                        c = copy_doc(cur)
                        del get_at(c, path)[i]
                        cands.append(c)
                    if first_passing(cands):
                        progress = changed = True
                        break
            for path in leaf_paths(best["doc"]):   # 2. simpler numbers, one field at a time
                cur = best["doc"]
                try:
                    v = get_at(cur, path)
                except (IndexError, KeyError, TypeError):
                    continue
                if not is_number(v):
                    continue
                cands = []
                for s in _simpler(v, run.prof, pattern_of(path)):
                    c = copy_doc(cur)
                    set_at(c, path, s)
                    cands.append(c)
                if cands and first_passing(cands):
                    changed = True
    except TimeoutError:
        pass
    return best["doc"], best["ratio"]


def sample_random(run: Run, ex) -> None:
    """Generator instances only, every method of the run, for the whole budget (or until the
    first method's score reaches ``stop_at``)."""
    while True:
        if run.stop_at is not None and (run.best_score(run.methods[0]) or -1.0) >= run.stop_at:
            return
        docs = [d for d in (run.random_doc() for _ in range(run.lam)) if d is not None]
        if not docs or not run.may_continue(docs, 0.0):
            return
        run.evaluate(docs, "random", ex)

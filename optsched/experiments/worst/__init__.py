"""``optsched worst``: search for the instance on which a method is furthest from a reference, or
on which a paper's claim fails.

The search maximises a *target* over *valid instances of bounded size*:

- ``ratio`` (default): ``objective(M) / objective(reference)``. The reference is the proven
  optimum of the family's ``exact`` method (default) or another method ("when is the paper's
  algorithm worse than FIFO?").
- ``violation``: ``ALG / (OPT x guarantee(instance))`` for a method with a registered guarantee
  (:attr:`optsched.method.Method.guarantee`); > 1 refutes the claimed ratio on the instance. The
  guarantee grows with some instances (Hare's alpha(2+alpha)), so maximising the ratio runs to
  instances where the bound is astronomically loose; this target keeps the search where the
  guarantee is small.
- ``lemma:NAME``: the violation factor of a paper lemma or subroutine claim registered as a
  :class:`optsched.family.Claim` predicate ``check(instance, result)`` in
  ``optsched.workloads.<family>.CLAIMS`` (``Family.worst.claims``): ring_contention ``lemma3``,
  ``lemma4`` (SJF-BCO, Sec. 5.3), elastic_cluster ``mincost1`` (Theorem 1: A_mincost1 is optimal,
  on the prices Algorithm 3 creates). No reference is solved. A claim may also register a
  ``grade`` (how close the run is to breaking it, where the factor is flat at exactly 1): the
  search breaks ties of the factor by it (``grade`` in the rows; never a violation).

``result.json`` carries ``violation`` (the factor) beside ``exceeds_guarantee`` (violation > 1
beyond the tolerance) for the last two, and for the ratio target when the method has a guarantee.
``optsched worst ... --replay FILE`` evaluates one saved instance the same way (the one-command
reproduction of a finding).

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
  those the family's size measure counts. ``Family.worst.mutations`` adds family-specific operators
  (a GPU column for hetero_gpu).
- *Priors* (issue 23 item 3; every one follows from the target or from the known shape of
  worst cases, none from a known answer): log-scale moves (a field times a log-uniform factor up
  to 1000: weights and sizes that differ by orders of magnitude in one move); many-element
  moves (copy or remove k elements at once, k geometric); the *outlier* move (a counted list
  made of copies of one element, one copy changed by a log-scale move: many identical light
  jobs and one heavy one, the classic worst case of a greedy rule); *sequence* moves on the
  lists the generator always produces strictly increasing (cumulative iteration counts, one per
  stage: append stages -- the jobs that ran to the old last stage run on --, remove the last
  ones, scale one step and shift the rest); growable sequences may reach the generator's
  longest + 10. *Devices*: a list the size does not count whose element can be copied without
  breaking a generated instance (servers; :attr:`.profile.Profile.devices`) may grow 2 beyond
  the generator's longest. *Zero entries*: one positive entry of a numeric row set to 0 (a
  resource a worker type does not demand), the field drawn first. For the ``violation`` target every other fresh start first descends the
  guarantee (:meth:`.state.Run.descend`: value moves and removals that keep what the size
  counts, kept while the bound falls -- Hare's alpha(2+alpha) to 3 as the GPUs become alike;
  PDA's 2 - 2/(l+1), which grows with the counted stages, is left alone), and every other
  fresh restart climbs the plain ratio instead of the violation (tight small instances, where
  the claim holds with equality, are maxima of any violation score). A ``lemma:NAME`` target has
  no guarantee to descend and no reference: every other fresh start is *degenerate* (1-3 zero
  entries, :meth:`.state.Run.degenerate`) and every other fresh restart climbs ALG / the best
  of the family's baselines (row ``proxy``) instead of the lemma's score, which is flat at 1
  where the statement is tight (Lemma 4's rounded theta, A_mincost1 equal to the exact cost);
  its neutral drift refuses a smaller child on a tie (:func:`.search._smaller`: drift on that
  plateau ran down to one job, where Lemma 4 always holds).
- *Hypotheses*: ``hypothesis(doc)`` discards candidates outside the claim's statement
  (:mod:`.hypotheses`, ``--hypothesis NAME``: Grouper's Theorem 2 is for cojobs released at 0,
  Hare's Theorem 4 needs a finite alpha).
- *Throughput*: against ``exact``, the family's other exact methods are tried first with a
  short limit (``exact_cp``: CP-SAT proves tiny hetero_gpu optima in ~0.02 s where the MILP
  takes ~0.7 s); the first that proves optimality is the reference (``ref_method`` in the row).
  *Pruning*: ALG/OPT <= ALG/LB for every valid lower bound, so a child whose score computed on
  ALG/LB is below its parent's (it could not replace it) or below the shrink's target is not
  solved exactly (a ``pruned`` row, never counted); the bound is the cheapest of the family's
  ``bound`` methods within 0.05 of the tightest LB/OPT on two generator instances, used while
  the run's median reference costs more than twice its time.
- *Size*: ``Family.worst`` gives each family's measure (jobs, tasks, ...; a generic count of the
  objects inside lists without it); the default bound is the
  largest size the generator produced, so the exact solver stays fast.
- *Screening*: while M is cheap next to the exact solve (:meth:`Run.screening`), each generation
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
  (relative tolerance :data:`optsched.tolerance.REL`). The result's ``ratio`` is that of the shrunk instance.

``strategy="continuous"`` and ``"hybrid"`` (:mod:`.continuous`): a log-space (mu/mu_w, lambda)
evolution strategy on the instance's real numbers with its structure fixed, restarted from fresh
generator instances and from the best one; the hybrid applies structure moves (copy/remove/swap
jobs, tasks, devices; the family's operators) to the best instance at every other restart.

``strategy="random"`` is the baseline: generator instances only, for the whole budget, several
methods at once (one exact solve per instance serves all of them).

Not built: a MetaOpt-style bilevel MILP (the algorithm's choices as linear constraints on the
instance's numbers, the gap to a fixed alternative schedule maximised). For a fixed structure the
choices of none of the claimed algorithms are linear in the data: Hare orders tasks by the
solution of its relaxation, an LP whose coefficients are the task times (optimality of the lower
level needs KKT conditions with products of data and duals); PDA's dual update w -= rho L[:, lam]
multiplies the ratios it compares by the loads (bilinear in the flow sizes); SJF-BCO bisects an
integer budget through slot-by-slot contention speeds. The one fit is A_mincost1 on its prices
(Theorem 1 is stated for any prices: for a fixed fill order of the servers the greedy's cost and
a fixed alternative placement's cost are linear in the prices, and the order is a chain of linear
inequalities), but the prices of an instance are those Algorithm 3 creates, not free numbers, so
what such an LP finds is not an instance ``verify`` and ``exact`` can check.

Determinism: the trajectory depends only on ``seed`` and the evaluation results (lambda is
``max(4, workers)``); the wall-clock ``budget`` decides only where it stops. ``max_evals`` stops it
at a fixed number of evaluations instead (tests).

Resumability: with ``out`` every evaluation is one row of ``out/results.jsonl`` in the resumable
:class:`~optsched.experiments.store.ResultStore` (key ``(family, "worst:<against>:<hash>", 0,
method)``). A re-run with the same ``out`` replays the search from its seed, taking every evaluation
it already has from the store, and continues with what is left of the budget (rows record the
run's elapsed time). Budget cuts of a solve are stored as ``error`` rows and redone.
Outputs (the CLI writes them by default to a new folder ``worst-FAMILY-METHOD-DATE-TIME``):
``worst.json`` (shrunk instance), ``worst_found.json`` (before shrinking),
``schedule_<method>.json``, ``schedule_<reference>.json`` (+ ``.png`` Gantt charts when matplotlib
is present) and ``result.json`` (ratio, objectives, claimed guarantee, progress).

The package, by concern: :mod:`.doc` (JSON tree helpers), :mod:`.sizes` (size measures),
:mod:`.profile` (what the generator produces), :mod:`.mutations` (operators), :mod:`.evaluate`
(guarded evaluation of a candidate), :mod:`.state` (one run's state and result), :mod:`.search`
(strategies and shrinking), :mod:`.continuous` (the evolution strategy), :mod:`.run` (the entry
point, replay and outputs), :mod:`.hypotheses` (the claims' hypotheses).
"""

from optsched.experiments.worst.doc import doc_key
from optsched.experiments.worst.profile import PROFILE_SEEDS
from optsched.experiments.worst.run import (
    STRATEGIES,
    check_methods,
    check_target,
    format_result,
    replay,
    run_worst,
)
from optsched.experiments.worst.state import WorstResult

__all__ = ["PROFILE_SEEDS", "STRATEGIES", "WorstResult", "check_methods", "check_target",
           "doc_key", "format_result", "replay", "run_worst"]

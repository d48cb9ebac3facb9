"""edge_cloud methods — She et al., "Online Scheduling of Machine Learning Jobs in Edge-Cloud
Networks" (paper 001).

Algorithms (kind ``algorithm``) are the one function :func:`~.algorithm.a_online` (Algorithm 1 +
A_maxsche, COST_C, COST_D) registered with four :class:`~.algorithm.AOnlineParams`: ``a_online``
(as reconstructed, paper eligibility rule), ``a_online_dstar`` (the exact COST_D* and exact server
order), ``a_online_model`` (COST_D*, eligibility exactly (2i)), ``a_online_ect`` (COST_D*, equal
utilities broken by earliest completion instead of the fewest workers; not in the paper), and the
readings of Alg. 2 line 3 as a loop over the completion slot c_j: ``a_online_completion``
(eligibility as printed) and ``a_online_completion_model`` (eligibility (2i) at the run's start).
Baselines: ``fifo``, ``drf``, ``batchsche`` (A_online without COST_C: the same function with
:data:`~.algorithm.BATCHSCHE`; ``batchsche_completion`` under the completion-slot reading), ``preemptive`` (no overhead, Delta ignored; Figs. 7-8) and
``preemptive_overhead`` (the same function with Delta respected, 0.25 slot lost per
preemption/migration; Figs. 9-10), and ``greedy_ect`` (ours: earliest-completion list scheduling, a
reference upper bound on OPT at paper scale); the preemptive ones break (2c)/(2d) by design, are
checked by ``verify_preemptive`` and are left out of ratio studies. ``exact`` (time-indexed MILP
of (2)), ``lower_bound`` and ``colgen_bound`` (column generation on a server-pool relaxation,
certify's lower side; certify's upper side is :func:`~.search.improve`).

The paper states no approximation or competitive ratio, so every ``guarantee`` is None. Importing
this package imports neither Pyomo nor HiGHS (the exact and bound methods import them when run).
"""

from __future__ import annotations

from functools import partial

from optsched.family import CertifySpec, CompareSpec, Family, WorstSpec
from optsched.method import Method
from optsched.problems import edge_cloud as _problem
from optsched.problems.edge_cloud import verify_preemptive
from optsched.solvers.cpsat import cp_method
from optsched.solvers.edge_cloud.algorithm import (
    BATCHSCHE,
    BATCHSCHE_COMPLETION,
    COMPLETION,
    COMPLETION_MODEL,
    DSTAR,
    ECT,
    FAITHFUL,
    MODEL,
    a_online,
)
from optsched.solvers.edge_cloud.baselines import (
    PreemptiveParams,
    drf,
    fifo,
    greedy_ect,
    preemptive,
)
from optsched.solvers.edge_cloud.bounds import lower_bound
from optsched.solvers.edge_cloud.colgen import colgen_bound
from optsched.solvers.edge_cloud.cp import exact_cp
from optsched.solvers.edge_cloud import exact, search
from optsched.workloads import edge_cloud as _workloads

#: ``preemptive_overhead``: slots of progress lost per preemption (paper: not given; digest §6.2),
#: with the upload delay respected (Figs. 9-10).
OVERHEAD = PreemptiveParams(overhead=0.25, respect_delay=True)

METHODS = (
    Method("a_online", "algorithm", a_online, params=FAITHFUL,
           description="Alg. 1 + A_maxsche with COST_C/COST_D as written (paper eligibility)"),
    Method("a_online_dstar", "algorithm", a_online, params=DSTAR,
           description="A_online with the exact distributed placement COST_D*"),
    Method("a_online_model", "algorithm", a_online, params=MODEL,
           description="A_online with COST_D* and eligibility exactly (2i)"),
    Method("a_online_ect", "algorithm", a_online, params=ECT,
           description="A_online with COST_D* and equal utilities broken by earliest completion (not in the paper)"),
    Method("a_online_completion", "algorithm", a_online, params=COMPLETION,
           description="A_online reading Alg. 2 line 3 as a loop over the completion slot c_j (COST_D*)"),
    Method("a_online_completion_model", "algorithm", a_online, params=COMPLETION_MODEL,
           description="A_online, completion-slot reading, eligibility exactly (2i) at the start"),
    Method("fifo", "baseline", fifo, description="FIFO, head-of-line, co-located (our reimpl.)"),
    Method("drf", "baseline", drf, description="DRF progressive filling per slot (our reimpl.)"),
    Method("batchsche", "baseline", a_online, params=BATCHSCHE,
           description="BatchSche: A_online batching without COST_C (every job at p^0)"),
    Method("batchsche_completion", "baseline", a_online, params=BATCHSCHE_COMPLETION,
           description="BatchSche under the completion-slot reading of Alg. 2 line 3"),
    Method("greedy_ect", "baseline", greedy_ect,
           description="earliest-completion list scheduling, co-located (ours; UB on OPT at scale)"),
    Method("preemptive", "baseline", preemptive, params=PreemptiveParams(), verify=verify_preemptive,
           description="SRPT reallocation every slot, no overhead, delay ignored (Figs. 7-8)"),
    Method("preemptive_overhead", "baseline", preemptive, params=OVERHEAD,
           verify=partial(verify_preemptive, overhead=OVERHEAD.overhead,
                          respect_delay=OVERHEAD.respect_delay),
           description="Preemptive with delay and 0.25-slot preemption cost (Figs. 9-10)"),
    Method("exact", "exact", exact.exact, model=exact.exact_model,
           description="time-indexed MILP of (2), HiGHS, gap 0"),
    cp_method(exact_cp, "interval per job, cumulative worker/PS capacity per server"),
    Method("lower_bound", "bound", lower_bound,
           description="max(per-job bound, LP relaxation of the exact MILP)"),
    Method("colgen_bound", "bound", colgen_bound,
           description="column generation on the edge/cloud pool relaxation of (4)/(5), any-time"),
)
# `optsched compare edge_cloud`: Figs. 3-4 and 7-10 of the paper (a_online_ect, a slow non-paper
# variant, is left out; run it by name).
SPEC = Family(
    name="edge_cloud",
    description="She et al. (001): online PS jobs in edge-cloud networks, min total flow time",
    problem=_problem,
    workloads=_workloads,
    methods=METHODS,
    default_method="a_online",
    compare=CompareSpec(methods=("a_online", "a_online_dstar", "a_online_model", "a_online_completion",
                                 "a_online_completion_model", "fifo", "drf", "batchsche",
                                 "batchsche_completion", "greedy_ect", "preemptive",
                                 "preemptive_overhead"),
                        title='edge_cloud (Sec. VI scale): total flow time vs baselines (Figs. 3-4, 7-10)',
                        ylabel='total completion (flow) time, slots'),
    # issue 14 item 5: twice the tiny size, still proven in seconds by the new exact model
    ratio_preset="small",
    # issue 19: the pool column-generation bound and the list-scheduling improvement
    # (starts: greedy_ect, and a_online_model for instances where no server co-locates a job; the
    # improvement builds its own list schedules, the other heuristics are far behind at scale)
    certify=CertifySpec(bound="colgen_bound", improve=search.improve,
                        starts=("greedy_ect", "a_online_model")),
    worst=WorstSpec(_workloads.SIZE_WHAT, _workloads.size, _workloads.SIZE_GROWS),
)

__all__ = ["METHODS", "SPEC"]

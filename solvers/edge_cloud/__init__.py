"""edge_cloud methods — She et al., "Online Scheduling of Machine Learning Jobs in Edge-Cloud
Networks" (seeds/001).

Algorithms (kind ``algorithm``): ``a_online`` (Algorithm 1 + A_maxsche, COST_C, COST_D as
reconstructed, paper eligibility rule), ``a_online_dstar`` (the same with the exact COST_D* and
exact server order), ``a_online_model`` (COST_D*, eligibility exactly (2i)), ``a_online_ect``
(COST_D*, equal utilities broken by earliest completion instead of the fewest workers; not in the
paper). Baselines: ``fifo``, ``drf``, ``batchsche`` (A_online without COST_C), ``preemptive`` (no overhead, Delta ignored;
Figs. 7-8) and ``preemptive_overhead`` (Delta respected, 0.25 slot lost per preemption/migration;
Figs. 9-10), and ``greedy_ect`` (ours: earliest-completion list scheduling, a reference upper
bound on OPT at paper scale); the preemptive ones break (2c)/(2d) by design, are checked by ``verify_preemptive`` and
are left out of ratio studies. ``exact`` (time-indexed MILP of (2)) and ``lower_bound``.

The paper states no approximation or competitive ratio, so every ``guarantee`` is None.
"""

from __future__ import annotations

from functools import partial

from optsched.problems.edge_cloud import Instance, verify_preemptive
from optsched.family import CompareSpec, Family
from optsched.problems import edge_cloud as _problem
from optsched.workloads import edge_cloud as _workloads
from optsched.method import Method
from optsched.result import Outcome, SolveStatus
from optsched.solvers.edge_cloud import algorithm as _alg
from optsched.solvers.edge_cloud import baselines as _base
from optsched.solvers.edge_cloud.bounds import exact, lower_bound

PREEMPTION_OVERHEAD = 0.25  # slots of progress lost per preemption (paper: not given; digest §6.2)


def _online(cfg: _alg.Config):
    def run(instance: Instance, *, time_limit: float | None = None, seed: int = 0) -> Outcome:
        schedule, log = _alg.a_online(instance, cfg)
        info = {"rounds": log, "priced_out": sum(r["priced_out"] for r in log),
                "rejected": sum(r["rejected"] for r in log),
                "not_ready": sum(r["not_ready"] for r in log)}
        return Outcome(schedule=schedule, status=SolveStatus.FEASIBLE, info=info)
    return run


def _wrap(func):
    def run(instance: Instance, *, time_limit: float | None = None, seed: int = 0) -> Outcome:
        return Outcome(schedule=func(instance), status=SolveStatus.FEASIBLE)
    return run


a_online = _online(_alg.FAITHFUL)
a_online_dstar = _online(_alg.DSTAR)
a_online_model = _online(_alg.MODEL)
a_online_ect = _online(_alg.ECT)
batchsche = _online(_alg.BATCHSCHE)
fifo = _wrap(_base.fifo)
drf = _wrap(_base.drf)
greedy_ect = _wrap(_base.greedy_ect)
preemptive = _wrap(_base.preemptive)
preemptive_overhead = _wrap(partial(_base.preemptive, overhead=PREEMPTION_OVERHEAD, respect_delay=True))

METHODS = (
    Method("a_online", "algorithm", a_online,
           description="Alg. 1 + A_maxsche with COST_C/COST_D as written (paper eligibility)"),
    Method("a_online_dstar", "algorithm", a_online_dstar,
           description="A_online with the exact distributed placement COST_D*"),
    Method("a_online_model", "algorithm", a_online_model,
           description="A_online with COST_D* and eligibility exactly (2i)"),
    Method("a_online_ect", "algorithm", a_online_ect,
           description="A_online with COST_D* and equal utilities broken by earliest completion (not in the paper)"),
    Method("fifo", "baseline", fifo, description="FIFO, head-of-line, co-located (our reimpl.)"),
    Method("drf", "baseline", drf, description="DRF progressive filling per slot (our reimpl.)"),
    Method("batchsche", "baseline", batchsche,
           description="BatchSche: A_online batching without COST_C (every job at p^0)"),
    Method("greedy_ect", "baseline", greedy_ect,
           description="earliest-completion list scheduling, co-located (ours; UB on OPT at scale)"),
    Method("preemptive", "baseline", preemptive, verify=verify_preemptive,
           description="SRPT reallocation every slot, no overhead, delay ignored (Figs. 7-8)"),
    Method("preemptive_overhead", "baseline", preemptive_overhead,
           verify=partial(verify_preemptive, overhead=PREEMPTION_OVERHEAD, respect_delay=True),
           description="Preemptive with delay and 0.25-slot preemption cost (Figs. 9-10)"),
    Method("exact", "exact", exact, description="time-indexed MILP of (2), HiGHS, gap 0"),
    Method("lower_bound", "bound", lower_bound,
           description="max(per-job bound, LP relaxation of the exact MILP)"),
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
    compare=CompareSpec(methods=("a_online", "a_online_model", "fifo", "drf", "batchsche", "greedy_ect", "preemptive",
                   "preemptive_overhead"),
                        title='edge_cloud (Sec. VI scale): total flow time vs baselines (Figs. 3-4, 7-10)',
                        ylabel='total completion (flow) time, slots'),
)

__all__ = ["METHODS", "SPEC", "a_online", "a_online_dstar", "a_online_ect", "a_online_model", "batchsche",
           "drf", "exact", "fifo", "greedy_ect", "lower_bound", "preemptive", "preemptive_overhead"]

"""hetero_gpu solvers — Hare (Chen et al., HPDC'22; seeds/004).

Methods
-------
exact        Hare_Sched (4)–(8) as a big-M MILP with deadlines from a Hare schedule (digest §3.3).
lower_bound  aggregate LP with HSSW cuts (polynomial; valid at paper scale; digest §3.5).
rl_bound     Hare_Sched_RL as the paper states it (9), solved as an exact MILP: its dual bound.
hare         Algorithm 1 on x̂ of Hare_Sched_RL (paper form) — the aggregate LP above
             ``RL_MAX_TASKS`` tasks; claimed guarantee α(2+α) (Theorem 4).
hare_subsets Algorithm 1 on x̂ of the RL with every prefix inequality (9S) (what Lemma 2 needs).
hare_eft     Algorithm 1 with an earliest-finish GPU choice at line 12 (digest §4.2; not the paper's).
gavel_fifo, srtf, sched_homo, sched_allox   the paper's baselines (Sec. 7; digest §6.4).
"""

from __future__ import annotations

from dataclasses import replace

from optsched.models import hetero_gpu as hm
from optsched.problems.hetero_gpu import Instance, verify
from optsched.family import CompareSpec, Family
from optsched.problems import hetero_gpu as _problem
from optsched.workloads import hetero_gpu as _workloads
from optsched.method import Method
from optsched.result import Outcome, SolveStatus
from optsched.solvers.hetero_gpu.baselines import gavel_fifo, sched_allox, sched_homo, srtf
from optsched.solvers.hetero_gpu.hare import (RL_MAX_TASKS, aggregate_lp, lemma_checks, list_schedule,
                                             rl_starts)
from optsched.solvers.highs import report_outcome, solve_model


def hare(inst: Instance, *, time_limit: float | None = None, seed: int = 0,
         relaxation: str = "auto", **options) -> Outcome:
    """Hare's Algorithm 1: relaxation -> H_i -> sort -> earliest-available GPU (digest §4.1).

    ``relaxation``: ``paper_full`` (the paper's RL; ``auto``), ``subsets`` (9S) or ``aggregate_lp``.
    Above RL_MAX_TASKS tasks the RL forms are replaced by ``aggregate_lp`` (recorded in ``info``). ``options`` go to
    :func:`list_schedule` (``assign``, ``gpu_tie``, ``phi0``).
    """
    requested = "paper_full" if relaxation == "auto" else relaxation
    relaxation = requested
    if relaxation != "aggregate_lp" and len(inst.tasks) > RL_MAX_TASKS:
        # the RL has O(|D|^2 |M|) linearisation variables: beyond RL_MAX_TASKS only the LP scales
        relaxation = "aggregate_lp"
    if relaxation == "aggregate_lp":
        xhat, _, info = aggregate_lp(inst, time_limit, seed)
        info["requested_relaxation"] = requested
    else:
        xhat, info = rl_starts(inst, relaxation, time_limit, seed)
        if not xhat:  # the RL found nothing within the time limit: fall back to the LP
            xhat, _, lp_info = aggregate_lp(inst, time_limit, seed)
            info["fallback"] = lp_info
    schedule = list_schedule(inst, xhat, **options)
    info.update(lemma_checks(inst, schedule, xhat))
    return Outcome(schedule, SolveStatus.FEASIBLE, info=info)


def hare_subsets(inst: Instance, *, time_limit: float | None = None, seed: int = 0) -> Outcome:
    """Algorithm 1 on the subset relaxation (9S) (digest §3.5, §5.4)."""
    return hare(inst, time_limit=time_limit, seed=seed, relaxation="subsets")


def hare_eft(inst: Instance, *, time_limit: float | None = None, seed: int = 0) -> Outcome:
    """Algorithm 1 with line 12 replaced by earliest finish, argmin_m max(t_i, φ_m) + T^c_i,m
    (digest §4.2; not in the paper, no bound claimed)."""
    return hare(inst, time_limit=time_limit, seed=seed, assign="earliest_finish")


def exact(inst: Instance, *, time_limit: float | None = None, seed: int = 0) -> Outcome:
    """Optimal schedule of Hare_Sched (big-M MILP, gap 0), deadlines from Hare on the aggregate LP.

    The MILP is built in normalised units (:func:`optsched.models.hetero_gpu.time_unit`); its
    objective and bound are converted back (a power of two: exact) before they are reported.
    """
    start = hare(inst, time_limit=time_limit, seed=seed, relaxation="aggregate_lp").schedule
    m = hm.build_exact(inst, upper_bound=verify(inst, start))
    rep = solve_model(m, time_limit=time_limit, seed=seed)
    unit = m.objective_unit
    rep = replace(rep, objective=rep.objective * unit, bound=None if rep.bound is None else rep.bound * unit)
    return report_outcome(rep, lambda: hm.extract_schedule(inst, m))


def lower_bound(inst: Instance, *, time_limit: float | None = None, seed: int = 0) -> Outcome:
    """Aggregate-LP bound (valid whether or not the cut loop converged)."""
    _, value, info = aggregate_lp(inst, time_limit, seed)
    return Outcome(None, SolveStatus.OPTIMAL, value, info)


def rl_bound(inst: Instance, *, time_limit: float | None = None, seed: int = 0) -> Outcome:
    """The paper's relaxation Hare_Sched_RL: its MILP dual bound (= RL* when solved)."""
    m = hm.build_rl(inst, "paper_full")
    rep = solve_model(m, time_limit=time_limit, seed=seed)
    return Outcome(None, rep.status, rep.bound, rep.info)


def theorem4_bound(inst: Instance) -> float:
    """Theorem 4's claimed ratio α(2+α).

    α of Lemma 3 (the worst per-task speed ratio across GPUs), evaluated on the instance.
    """
    return inst.alpha * (2 + inst.alpha)


METHODS = (
    Method("exact", "exact", exact, description="Hare_Sched (4)-(8), big-M MILP, gap 0"),
    Method("lower_bound", "bound", lower_bound, description="aggregate LP with HSSW cuts"),
    Method("rl_bound", "bound", rl_bound, description="Hare_Sched_RL (9) as in the paper, MILP bound"),
    Method("hare", "algorithm", hare, guarantee=theorem4_bound,
           description="Algorithm 1 on the paper's relaxation"),
    Method("hare_subsets", "algorithm", hare_subsets, guarantee=theorem4_bound,
           description="Algorithm 1 on the subset relaxation (9S)"),
    Method("hare_eft", "algorithm", hare_eft,
           description="Algorithm 1, earliest-finish GPU at line 12 (variant)"),
    Method("gavel_fifo", "baseline", gavel_fifo, description="FIFO on the fastest idle GPUs, gang"),
    Method("srtf", "baseline", srtf, description="shortest remaining time, preempt at rounds"),
    Method("sched_homo", "baseline", sched_homo, description="weighted, heterogeneity-oblivious gang"),
    Method("sched_allox", "baseline", sched_allox, description="one GPU per job, min-cost matching"),
)
#: At paper scale hare_subsets equals hare (both use the aggregate LP), so compare leaves it out.
SPEC = Family(
    name="hetero_gpu",
    description="Chen et al. (004), Hare: task scheduling on heterogeneous GPUs, min sum w_n C_n",
    problem=_problem,
    workloads=_workloads,
    methods=METHODS,
    default_method="hare",
    compare=CompareSpec(methods=("hare", "hare_eft", "gavel_fifo", "srtf", "sched_homo", "sched_allox"),
                        title='Hare vs baselines at paper scale (Figs. 12/15: 200 jobs, 160 GPUs)',
                        ylabel="total weighted completion time / Hare's"),
)

"""hetero_gpu: ``lower_bound`` (the aggregate LP with HSSW cuts) and ``rl_bound`` (Hare_Sched_RL (9)
solved as an exact MILP: its dual bound).
"""

from __future__ import annotations

from optsched.deadline import Deadline
from optsched.problems.hetero_gpu import Instance
from optsched.result import Outcome, SolveStatus
from optsched.solvers.hetero_gpu.algorithm import aggregate_lp, too_big


def lower_bound(instance: Instance, *, deadline: Deadline, seed: int = 0) -> Outcome:
    """Aggregate-LP bound (:func:`~optsched.solvers.hetero_gpu.algorithm.aggregate_lp`).

    Status rule of bounds: ``optimal`` when the cut loop converged (no HSSW inequality violated:
    the LP optimum over every cut), ``time_limit`` when the deadline or the round cap stopped it
    first; the bound is valid either way (the last LP solved to optimality, or the completion
    bound when none was), and ``info["stopped"]`` says why it stopped.
    """
    lp = aggregate_lp(instance, deadline=deadline, seed=seed)
    if not lp.converged and "stopped" not in lp.info:
        lp.info["stopped"] = f"cut cap: {lp.info['lp_solves']} LP solves without convergence"
    return Outcome(None, SolveStatus.OPTIMAL if lp.converged else SolveStatus.TIME_LIMIT,
                   lp.value, lp.info)


def rl_bound(instance: Instance, *, deadline: Deadline, seed: int = 0) -> Outcome:
    """The paper's relaxation Hare_Sched_RL: its MILP dual bound (= RL* when solved).

    ``optimal`` when HiGHS proved RL*; otherwise the dual bound so far, or the completion bound
    ``sum_n w_n LBC_n`` when there is none or the RL is over the size cap (whatever the deadline)
    or too big to build in the time left (:func:`~optsched.solvers.hetero_gpu.algorithm.too_big`;
    ``time_limit``, the bound contract's status for a stop by a cap, ``info["stopped"]``): valid
    either way, since RL* <= OPT.
    """
    from optsched.models import hetero_gpu as hm
    from optsched.solvers.highs import solve_model

    inst = instance
    trivial = float(sum(j.weight * c for j, c in zip(inst.jobs, hm.completion_lower_bounds(inst))))
    guard = too_big(hm.rl_size(inst, "paper_full"), deadline)
    if guard:
        return Outcome(None, SolveStatus.TIME_LIMIT, trivial,
                       {"stopped": f"Hare_Sched_RL not built: size guard: {guard}",
                        "bound": "completion_lower_bounds"})
    m = hm.build_rl(inst, "paper_full")
    rep = solve_model(m, deadline=deadline, seed=seed)
    if rep.status is SolveStatus.TIME_LIMIT:
        info = {**rep.info, "stopped": "deadline: RL solve stopped by the time limit"}
        bound = trivial if rep.bound is None else max(rep.bound, trivial)
        return Outcome(None, SolveStatus.TIME_LIMIT, bound, info)
    return Outcome(None, rep.status, rep.bound, rep.info)

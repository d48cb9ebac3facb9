"""ring_contention: the baselines of Sec. 7.2 (First-Fit, List-Scheduling, Random), in SJF or arrival
order, on the same pass as SJF-BCO (:mod:`.algorithm`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from optsched.deadline import Deadline
from optsched.method import Params, param
from optsched.problems.ring_contention import Instance
from optsched.result import Outcome
from optsched.solvers.ring_contention.algorithm import (
    SearchResult,
    _outcome,
    bisection,
    first_fit,
    least_u,
    makespan,
    random_rule,
    run_pass,
    sjf_order,
)


@dataclass(frozen=True)
class BaselineParams(Params):
    """The baselines of Sec. 7.2 (First-Fit, List-Scheduling, Random): one event-driven pass
    shape, three GPU choices."""

    gpus: Literal["first_fit", "least_u", "random"] = param(
        "first_fit", "Sec. 7.2: FF = first G_j available GPUs in (server, GPU) order [17]; LS = "
                     "least-loaded (least U) GPUs [17]; RAND = uniformly random available GPUs [19]")
    theta: Literal["bisection", "horizon"] = param(
        "bisection", "Sec. 7.2: 'theta_u^FF returned by the policy' — FF and LS run Alg. 1's "
                     "bisection without the kappa loop; RAND uses theta_u = T (one pass)")
    order: Literal["sjf", "arrival"] = param(
        "sjf", "job order of the pass: 'sjf' = SJF-BCO's smallest G_j first (Alg. 1 line 3); "
               "'arrival' = instance order (the baselines' own order, not stated)")


def baseline(inst: Instance, params: BaselineParams, *, deadline: Deadline,
             seed: int = 0) -> Outcome:
    """First-Fit, List-Scheduling or Random (Sec. 7.2), by ``params.gpus``.

    FF and LS run Alg. 1's theta_u bisection without the kappa loop (the deadline is checked
    before every pass; stopped early, the best pass so far is returned with status
    ``time_limit``); RAND is one pass at theta_u = T with ``numpy.random.default_rng(seed)``.

    Notes
    -----
    The paper claims no guarantee for its baselines; Fig. 4 claims SJF-BCO beats them (errata
    R6: not reproduced as a strict win). List-Scheduling equals SJF-BCO with kappa = n_g (R5).

    Examples
    --------
    >>> from optsched import generate, solve
    >>> solve(generate("ring_contention", "tiny", 0), "first_fit").info["params"]["gpus"]
    'first_fit'
    """
    order = sjf_order(inst) if params.order == "sjf" else list(range(len(inst.jobs)))
    if params.gpus == "random":
        rule = random_rule(np.random.default_rng(seed))
    else:
        rule = first_fit if params.gpus == "first_fit" else least_u
    if params.theta == "bisection":
        result = bisection(inst, inst.horizon, [(None, lambda j: rule)], order, deadline=deadline)
    else:
        state = run_pass(inst, order, inst.horizon, lambda j: rule)
        result = SearchResult(makespan(state, inst.horizon), state, inst.horizon, None, 1)
    return _outcome(inst, result)


FIRST_FIT = BaselineParams(gpus="first_fit")
LIST_SCHEDULING = BaselineParams(gpus="least_u")
RANDOM = BaselineParams(gpus="random", theta="horizon")
FIRST_FIT_ARRIVAL = BaselineParams(gpus="first_fit", order="arrival")
LIST_SCHEDULING_ARRIVAL = BaselineParams(gpus="least_u", order="arrival")
RANDOM_ARRIVAL = BaselineParams(gpus="random", theta="horizon", order="arrival")

"""ring_contention solvers — SJF-BCO (Yu et al., MobiHoc'22; paper 002), its baselines, exact, bounds.

Methods
-------
exact        M1 (digest §3.3) as a pulse (start, end) time-indexed MILP, horizon = best heuristic
             makespan, warm-started from that schedule, C >= the closed-form bounds of §3.5
             (closed without the MILP when they meet the heuristic), gap 0.
lower_bound  max(LB_len, LB_area, LB_conf) and, on small instances, the dual bound of M3 (14)–(16)
             with contention-free durations (digest §3.5).
sjf_bco      Algorithm 1: SJF order, bisection on theta_u in [1, T], kappa loop, FA-FFP (Alg. 2)
             for G_j <= kappa, LBSGF (Alg. 3) otherwise.
certify      (issue 19) bound = ``lower_bound``; improve = :func:`.search.improve`, iterated local
             search over LPT lists on a one-server backfilling scheme and on the pass (:mod:`.search`).
first_fit, list_scheduling, random   the baselines of Sec. 7.2 (FF and LS with their own bisection
             on theta_u, RAND with theta_u = T), all in the same event-driven pass.

Execution semantics (the paper leaves them implicit; digest §4.0): jobs are placed one by one in
order at a monotone clock t; a GPU is *available* to j iff it is idle at t and U[g] + rho_hat_j/u <=
theta_u (text below Alg. 2); with too few available GPUs the pass waits for the next completion
("wait for some job to exit", Alg. 2 lines 8–9, Alg. 3 lines 11–12) and fails when nothing runs.
U is a budget and never decreases. Progress is simulated with the exact model (6)–(9), so T_j and
the pass makespan are exact. rho_hat_j = F_j tau_j(n_min_j, 1), u = 1 (digest A5).
Resolved ambiguities: the pass state is reset for every (theta, kappa) (A6); an infeasible pass
scores T (A7); theta = floor((left + right) / 2) (A8); FA-FFP's line 4 is taken literally (least U,
ties by server then GPU index; A1) — this makes FA-FFP identical to LS; LBSGF picks the first G_j
GPUs of its list (A11); kappa runs over the distinct G values (A12, exactly equivalent to 1..n_g).
"""

from __future__ import annotations

from optsched.family import CertifySpec, CompareSpec, Family, WorstSpec
from optsched.method import Method
from optsched.problems import ring_contention as _problem
from optsched.solvers.cpsat import cp_method
from optsched.solvers.ring_contention.algorithm import (
    SJF_BCO_PROOF,
    SjfBcoParams,
    sjf_bco,
    theorem5_bound,
)
from optsched.solvers.ring_contention.baselines import (
    FIRST_FIT,
    FIRST_FIT_ARRIVAL,
    LIST_SCHEDULING,
    LIST_SCHEDULING_ARRIVAL,
    RANDOM,
    RANDOM_ARRIVAL,
    baseline,
)
from optsched.solvers.ring_contention.bounds import lower_bound
from optsched.solvers.ring_contention.cp import exact_cp
from optsched.solvers.ring_contention import exact, search
from optsched.workloads import ring_contention as _workloads

METHODS = (
    Method("exact", "exact", exact.exact, model=exact.exact_model,
           description="pulse (start, end) time-indexed MILP with contention levels, warm start, C >= area/length bounds, gap 0"),
    cp_method(exact_cp, "placement x start, time-indexed speeds under contention levels"),
    Method("lower_bound", "bound", lower_bound,
           description="max(length, area, conflict) bounds and M3 (14)-(16) dual bound when small"),
    Method("sjf_bco", "algorithm", sjf_bco, params=SjfBcoParams(), guarantee=theorem5_bound,
           description="Algorithm 1: SJF order, theta bisection, kappa loop, FA-FFP / LBSGF"),
    Method("first_fit", "baseline", baseline, params=FIRST_FIT,
           description="First-Fit GPUs, SJF order, own theta bisection"),
    Method("list_scheduling", "baseline", baseline, params=LIST_SCHEDULING,
           description="least-loaded GPUs, SJF order, own theta bisection"),
    Method("random", "baseline", baseline, params=RANDOM,
           description="random available GPUs, theta = T"),
    Method("sjf_bco_proof", "algorithm", sjf_bco, params=SJF_BCO_PROOF, guarantee=theorem5_bound,
           description="SJF-BCO, bisection read from Lemma 2's proof (theta decreases while feasible)"),
    Method("first_fit_arrival", "baseline", baseline, params=FIRST_FIT_ARRIVAL,
           description="First-Fit GPUs, instance (arrival) order, own theta bisection"),
    Method("list_scheduling_arrival", "baseline", baseline, params=LIST_SCHEDULING_ARRIVAL,
           description="least-loaded GPUs, instance (arrival) order, own theta bisection"),
    Method("random_arrival", "baseline", baseline, params=RANDOM_ARRIVAL,
           description="random available GPUs, instance (arrival) order, theta = T"),
)
SPEC = Family(
    name="ring_contention",
    description="Yu et al. (002): ring-all-reduce jobs with communication contention, min makespan",
    problem=_problem,
    workloads=_workloads,
    methods=METHODS,
    default_method="sjf_bco",
    compare=CompareSpec(methods=("sjf_bco", "sjf_bco_proof", "first_fit", "list_scheduling",
                                 "random", "first_fit_arrival", "list_scheduling_arrival",
                                 "random_arrival"),
                        title='SJF-BCO vs baselines, paper scale (Fig. 4: 20 servers, T = 1200)',
                        ylabel='makespan / SJF-BCO makespan'),
    # issue 14 item 5: twice the tiny size, still proven in seconds by the new exact model
    ratio_preset="small",
    # issue 19: the closed-form bounds (M3 only when small), LPT local search as the upper side
    certify=CertifySpec(bound="lower_bound", improve=search.improve),
    worst=WorstSpec(_workloads.SIZE_WHAT, _workloads.size, _workloads.SIZE_GROWS,
                    claims=_workloads.CLAIMS),
)

"""Pyomo models for cojob_network (Grouper, Zhou et al. TNSM 2020, paper 003).

The first three models work on *stages* ``a = (g, k)`` with the port loads ``L^a_p`` of paper Eq. (27)
(true survivors, time units at port capacity) and bound the flow-level problem (O) of Eqs. (1)–(12)
from below, so every simulated (verified) schedule costs at least their value:

- :func:`build_lp_primal` — LP-Primal (13)–(15). Lemma 1: order the stages of any set ``M`` by their
  completion time in a feasible schedule; the n-th cannot finish before all port-p bytes of the
  first n have crossed p, so ``S_(n) >= sum_{m<=n} L_p^(m)``; multiplying by ``L_p^(n)`` and summing
  gives (15). (14) holds because stage k+1 starts after ``S_{g,k}`` (barrier (8)) and needs its
  bottleneck load. Queyranne constraints (15) are added either all at once (:func:`all_cuts`,
  subset enumeration, tiny instances) or by a cutting-plane loop (``solve_lp_primal`` in
  ``optsched.solvers.cojob_network``) whose separation :func:`separate` sorts stages by their current
  ``S`` (polynomial; Queyranne 1993: a most violated set is a prefix of that order).
- :func:`build_dual` — the dual (17)–(20) with one ``beta`` per (port, subset): tiny instances only
  (strong duality check; its optimum equals LP-Primal's).
- :func:`build_ordering_milp` — exact MILP of the stage-level *sequencing* problem (spec Model F):
  choose a total order of the stages consistent with the chains; stage ``b`` completes at
  ``max(S_pred(b) + Lambda_b, max_p (L^b_p + sum_{a before b} L^a_p))``. Any feasible flow schedule
  induces such an order (its completion order), and its S satisfy these inequalities, so the optimum
  ``F*`` is a lower bound on OPT(O); its LP relaxation implies every (15), so ``LP* <= F*``. It is not
  an upper bound: it ignores the coupling of a flow's two ports and idle time.
- :func:`build_event_milp` — Model E, an exact MILP of (O) itself over rate timelines: one event
  per iteration completion (and per arrival time), bytes per flow and interval, capacities per
  interval (issue 14 item 4). Its optimum is OPT(O) (proof in its docstring), with
  :func:`extract_event_schedule` giving a schedule verify accepts at that cost.

Objectives are ``sum_{g,k} (S_{g,k} - r_g)`` (the paper's ``sum S`` when all ``r_g = 0``).

This module builds models and reads their solutions (:func:`stage_values`, :func:`extract_order`);
solving, cut loops and simulating an order into a schedule live in ``optsched.solvers.cojob_network``.
"""

from __future__ import annotations

import itertools

import numpy as np

import pyomo.environ as pyo

from optsched.tolerance import at_least

Stage = tuple[int, int]


def _bottleneck(instance) -> dict:
    return {a: float(instance.loads[a].max()) for a in instance.stages}


def _arrival_sum(instance) -> float:
    return sum(c.arrival * c.n_stages for c in instance.cojobs)


def port_stages(instance) -> dict[int, list]:
    """``M_p``: stages with positive load on port p (spec E4: only these enter (15))."""
    return {p: [a for a in instance.stages if instance.loads[a][p] > 0] for p in range(instance.n_ports)}


def queyranne_rhs(instance, p: int, subset) -> float:
    """``f_p(M)`` of Eq. (16)."""
    loads = [float(instance.loads[a][p]) for a in subset]
    return 0.5 * (sum(x * x for x in loads) + sum(loads) ** 2)


def build_lp_primal(instance, cuts=()) -> pyo.ConcreteModel:
    """LP-Primal (13)–(14) plus the Queyranne cuts (15) listed in ``cuts`` as ``(p, stages)``.

    (14) is written once per stage in its max-over-ports form ``S_{g,k} - S_{g,k-1} >= Lambda_{g,k}``
    (same LP value as the per-port form), with ``S_{g,0} = r_g``.
    """
    m = pyo.ConcreteModel(name="cojob_lp_primal")
    m.A = pyo.Set(initialize=list(instance.stages), dimen=2)
    m.S = pyo.Var(m.A, domain=pyo.NonNegativeReals)
    lam = _bottleneck(instance)

    def chain(m, g, k):
        prev = m.S[g, k - 1] if k else instance.cojobs[g].arrival
        return m.S[g, k] - prev >= lam[g, k]
    m.chain = pyo.Constraint(m.A, rule=chain)                      # (14)
    m.cuts = pyo.ConstraintList()                                  # (15)
    for p, subset in cuts:
        add_cut(instance, m, p, subset)
    m.obj = pyo.Objective(expr=sum(m.S[a] for a in m.A) - _arrival_sum(instance))   # (13)
    return m


def add_cut(instance, model, p: int, subset) -> None:
    """Add Queyranne inequality (15) for port ``p`` and stage set ``subset``."""
    model.cuts.add(sum(float(instance.loads[a][p]) * model.S[a] for a in subset)
                   >= queyranne_rhs(instance, p, subset))


def all_cuts(instance) -> list[tuple[int, tuple[Stage, ...]]]:
    """Every Queyranne inequality (15): ``(p, M)`` for each port and each non-empty ``M`` of ``M_p``
    (``sum_p (2^|M_p| - 1)`` of them: tiny instances only)."""
    return [(p, sub) for p, ms in port_stages(instance).items()
            for r in range(1, len(ms) + 1) for sub in itertools.combinations(ms, r)]


def stage_values(instance, model) -> dict[Stage, float]:
    """``S_a`` of every stage in a solved LP-Primal (or ordering MILP)."""
    return {a: float(pyo.value(model.S[a])) for a in instance.stages}


def separate(instance, values: dict) -> list:
    """Most violated Queyranne prefix per port (spec Sec. 3.3 implementation B).

    A prefix counts as violated only when (15) fails the tolerance policy
    (:func:`optsched.tolerance.at_least`): a cut that is met within the tolerance is not added, so
    the LP can only be weaker (a lower bound stays a lower bound), never stricter than the checker."""
    out = []
    for p, ms in port_stages(instance).items():
        order = sorted(ms, key=lambda a: (values[a], a))
        lin = sq = lhs = 0.0
        best, best_n = 0.0, 0
        for n, a in enumerate(order, 1):
            x = float(instance.loads[a][p])
            lin, sq, lhs = lin + x, sq + x * x, lhs + x * values[a]
            rhs = 0.5 * (sq + lin * lin)
            viol = rhs - lhs
            if not at_least(lhs, rhs) and viol > best:
                best, best_n = viol, n
        if best_n:
            out.append((p, tuple(order[:best_n])))
    return out


def build_dual(instance) -> pyo.ConcreteModel:
    """The dual (17)–(20) of LP-Primal, with the max-form (14): one ``alpha_{g,k} >= 0`` per stage
    (the paper's ``sum_p alpha_{p,g,k}`` collapsed onto the bottleneck, which is optimal) and one
    ``beta_{p,M} >= 0`` per port and non-empty subset of ``M_p``; ``alpha_{g,K_g+1} := 0``.
    Objective (17) includes ``sum alpha_{g,1} r_g`` (release dates) minus the constant of (13).
    Exponential in ``|M_p|``: tiny instances only."""
    m = pyo.ConcreteModel(name="cojob_dual")
    stages = list(instance.stages)
    subsets = all_cuts(instance)
    m.A = pyo.Set(initialize=stages, dimen=2)
    m.B = pyo.Set(initialize=range(len(subsets)))
    m.alpha = pyo.Var(m.A, domain=pyo.NonNegativeReals)            # (19)
    m.beta = pyo.Var(m.B, domain=pyo.NonNegativeReals)             # (20)
    lam = _bottleneck(instance)
    containing: dict[Stage, list[int]] = {a: [] for a in stages}
    for b, (p, sub) in enumerate(subsets):
        for a in sub:
            containing[a].append(b)

    def dual_row(m, g, k):                                         # (18)
        nxt = m.alpha[g, k + 1] if k + 1 < instance.cojobs[g].n_stages else 0.0
        return (m.alpha[g, k] - nxt + sum(float(instance.loads[g, k][subsets[b][0]]) * m.beta[b]
                                          for b in containing[g, k]) <= 1.0)
    m.row = pyo.Constraint(m.A, rule=dual_row)
    obj = sum(m.alpha[g, k] * (lam[g, k] + (instance.cojobs[g].arrival if k == 0 else 0.0))
              for g, k in stages)
    obj += sum(queyranne_rhs(instance, *subsets[b]) * m.beta[b] for b in m.B)
    m.obj = pyo.Objective(expr=obj - _arrival_sum(instance), sense=pyo.maximize)   # (17)
    return m


def ordering_milp_size(instance) -> dict[str, int]:
    """Size of :func:`build_ordering_milp` without building it: ``binaries``, ``rows`` and
    ``terms`` (non-zeros). Building and handing the model to HiGHS costs time roughly linear in
    ``terms`` (``l^3`` triangles dominate), which is what a caller with a deadline checks first."""
    l = len(instance.stages)
    per_port = [len(ms) for ms in port_stages(instance).values()]
    chain_rows = sum(1 for _, k in instance.stages if k)
    triangles = l * (l - 1) * (l - 2) // 3
    prefix_rows = sum(per_port)
    rows = l * (l - 1) // 2 + triangles + chain_rows + l + prefix_rows
    terms = l * (l - 1) + 3 * triangles + chain_rows + 2 * l + sum(n * n for n in per_port)
    return {"binaries": l * (l - 1), "rows": rows, "terms": terms}


def build_ordering_milp(instance) -> pyo.ConcreteModel:
    """Model F: linear-ordering MILP of the stage sequencing problem (see module docstring).

    Variables ``x[a, b]`` (binary, 1 if stage a is before b) on ordered pairs of distinct stages and
    ``S[a] >= 0``. Constraints: antisymmetry ``x_ab + x_ba = 1``; transitivity
    ``x_ab + x_bc + x_ca <= 2``; chains ``x_{(g,k),(g,k+1)} = 1``; (14) ``S_{g,k} >= S_{g,k-1} +
    Lambda``; port prefix ``S_b >= L^b_p + sum_a L^a_p x_ab`` for every port p loaded by b.
    ``l(l-1)`` binaries and ``O(l^3)`` triangles: fine for ``l <= 12``.
    """
    m = pyo.ConcreteModel(name="cojob_ordering")
    stages = list(instance.stages)
    pairs = [(a, b) for a in stages for b in stages if a != b]
    m.A = pyo.Set(initialize=stages, dimen=2)
    m.PAIRS = pyo.Set(initialize=[(*a, *b) for a, b in pairs], dimen=4)
    m.x = pyo.Var(m.PAIRS, domain=pyo.Binary)
    m.S = pyo.Var(m.A, domain=pyo.NonNegativeReals)
    lam = _bottleneck(instance)
    m.anti = pyo.Constraint([(*a, *b) for a, b in pairs if a < b],
                            rule=lambda m, g, k, h, q: m.x[g, k, h, q] + m.x[h, q, g, k] == 1)
    triples = [(a, b, c) for a, b, c in itertools.permutations(stages, 3) if a < b and a < c]
    m.tri = pyo.ConstraintList()
    for a, b, c in triples:
        m.tri.add(m.x[(*a, *b)] + m.x[(*b, *c)] + m.x[(*c, *a)] <= 2)
    m.chain_order = pyo.ConstraintList()
    for g, k in stages:
        if k:
            m.chain_order.add(m.x[g, k - 1, g, k] == 1)

    def chain(m, g, k):
        prev = m.S[g, k - 1] if k else instance.cojobs[g].arrival
        return m.S[g, k] >= prev + lam[g, k]
    m.chain = pyo.Constraint(m.A, rule=chain)
    m.prefix = pyo.ConstraintList()
    for b in stages:
        for p in range(instance.n_ports):
            lb = float(instance.loads[b][p])
            if lb > 0:
                m.prefix.add(m.S[b] >= lb + sum(float(instance.loads[a][p]) * m.x[(*a, *b)]
                                                for a in stages if a != b and instance.loads[a][p] > 0))
    m.obj = pyo.Objective(expr=sum(m.S[a] for a in m.A) - _arrival_sum(instance))
    return m


def extract_order(instance, model) -> tuple[Stage, ...]:
    """The stage order of a solved ordering MILP: by number of predecessors (ties impossible in a
    total order; chains hold by ``x_{(g,k),(g,k+1)} = 1``)."""
    preds = {a: sum(round(pyo.value(model.x[(*b, *a)])) for b in instance.stages if b != a)
             for a in instance.stages}
    return tuple(sorted(instance.stages, key=lambda a: (preds[a], a)))


# ----------------------------------------------------------------------------------------------------
# Model E: event-indexed MILP of (O) itself (issue 14 item 4)


class EventIndex:
    """The index sets of :func:`build_event_milp`, in plain Python.

    Attributes
    ----------
    items
        What completes at an event: ``("it", g, j, i)`` for iteration ``i`` (1-based, cumulative)
        of job ``(g, j)``, for every iteration the job runs; ``("arr", r)`` for each distinct
        positive arrival time ``r`` (a marker that gates the first stage of the cojobs arriving at
        ``r``). One item per event, so there are ``len(items)`` events.
    flows
        Flow instances ``(u, g, j, i, f, size)``: flow ``f`` of iteration ``i`` of job ``(g, j)``,
        ``u`` its item's position in ``items``.
    preds
        ``preds[u]``: the items whose completion releases item ``u``: the previous iteration of
        the job (7); for a stage's first iteration, the last iteration of stage ``k-1`` of every
        job of ``J_{g,k-1}`` (barrier (8): ``t* >= S_{g,k-1}``); for stage 1, the arrival marker
        of ``r_g > 0`` (9).
    finals
        ``finals[g, k]``: the items whose latest completion is ``S_{g,k}`` ((2)-(3)).
    """

    def __init__(self, instance):
        self.items: list[tuple] = [("arr", r) for r in
                                   sorted({c.arrival for c in instance.cojobs if c.arrival > 0})]
        marker = {it[1]: u for u, it in enumerate(self.items)}
        self.flows: list[tuple] = []
        self.preds: dict[int, tuple[int, ...]] = {}
        self.finals: dict[Stage, tuple[int, ...]] = {}
        position: dict[tuple, int] = {}
        for g, cojob in enumerate(instance.cojobs):
            for j, job in enumerate(cojob.jobs):
                for i in range(1, cojob.iterations[job.stages - 1] + 1):
                    position[g, j, i] = len(self.items)
                    self.items.append(("it", g, j, i))
                    for f, (_, _, size) in enumerate(job.flows):
                        self.flows.append((position[g, j, i], g, j, i, f, float(size)))
            for k in range(cojob.n_stages):
                last = cojob.iterations[k]
                self.finals[g, k] = tuple(position[g, j, last] for j in cojob.alive(k))
                first = last - cojob.stage_iterations(k) + 1
                for j in cojob.alive(k):
                    for i in range(first, last + 1):
                        if i > first:
                            pre: tuple[int, ...] = (position[g, j, i - 1],)
                        elif k:
                            pre = self.finals[g, k - 1]
                        else:
                            pre = (marker[cojob.arrival],) if cojob.arrival > 0 else ()
                        self.preds[position[g, j, i]] = pre

    @property
    def n_events(self) -> int:
        return len(self.items)


def event_milp_size(instance) -> dict[str, int]:
    """Size of :func:`build_event_milp` without building it or its index (``binaries``,
    ``events``, ``flows``, ``terms`` = non-zeros, roughly): counted per job and stage, so it is cheap
    at paper scale, where a caller with a deadline checks it before building."""
    items = len({c.arrival for c in instance.cojobs if c.arrival > 0})
    flows = n_pred = n_final = 0
    for cojob in instance.cojobs:
        for k in range(cojob.n_stages):
            alive = cojob.alive(k)
            n_final += len(alive)
            gate = len(cojob.alive(k - 1)) if k else int(cojob.arrival > 0)
            for j in alive:
                n = len(cojob.jobs[j].flows)
                items += cojob.stage_iterations(k)
                flows += n * cojob.stage_iterations(k)
                n_pred += n * (cojob.stage_iterations(k) - 1 + gate)
    terms = items * (7 * flows + 2 * n_pred + 3 * items + 3 * n_final)
    return {"binaries": items * items, "events": items, "flows": flows, "terms": terms}


def build_event_milp(instance, horizon: float, cuts=()) -> pyo.ConcreteModel:
    """Model E: event-indexed MILP of problem (O), paper Eqs. (1)-(12), over rate timelines.

    Index sets: :class:`EventIndex` (items ``u`` = iterations and arrival markers, events
    ``e = 1..E`` with ``E`` = number of items, flow instances ``f``).

    Variables: event times ``t_0 = 0 <= t_1 <= ... <= t_E <= horizon``; ``y[u, e]`` binary,
    1 when item ``u`` has completed by event ``e`` (``y[u, 0] = 0``, ``y[u, E] = 1``, monotone);
    ``X[f, e]`` bytes of flow instance ``f`` sent in ``[0, t_e]`` (``X[f, 0] = 0``);
    ``C[u]`` completion time of each stage-final iteration; ``S[a]`` stage completion times.

    Constraints:

    * ``sum_u y[u, e] = e``: exactly one item completes at each event (ties are events at the same
      time);
    * (10)-(11) ``sum_{f on p} (X[f,e] - X[f,e-1]) <= cap (t_e - t_{e-1})`` per port and interval:
      with constant rates inside an interval this is the port capacity at every instant;
    * (5) ``X[f, E] = size``, ``X`` non-decreasing (12), ``X[f, e] >= size y[u, e]`` (an iteration
      completed by ``e`` has sent all its bytes by ``t_e``);
    * (6)-(9) ``X[f, e] <= size y[v, e - 1]`` for every ``v`` in ``preds[u]``: no byte in interval
      ``e`` or before unless every releasing item has completed at an earlier event;
      an arrival marker ``m`` of time ``r``: ``t_e >= r y[m, e]``;
    * (2)-(4) ``C[u] >= t_e - horizon * y[u, e - 1]`` (``C[u] >= t_e`` for every event up to its
      completion event), ``S[g,k] >= C[u]`` for ``u`` in ``finals[g, k]``;
    * valid stage inequalities (14) and the Queyranne cuts (15) listed in ``cuts`` (both hold for
      every feasible schedule, Lemma 1; they only tighten the relaxation).

    Objective (1): ``sum_{g,k} (S_{g,k} - r_g)``.

    Exactness (for compute gaps ``c_{g,j} = 0``; :func:`event_milp_applies`).
    (i) *Every feasible schedule of cost <= U is a solution of cost equal or lower, with
    horizon >= U + max_g r_g* (or any bound on the makespan of the schedules of cost <= U, such as
    ``optsched.solvers.cojob_network.exact.event_horizon``). Take an exactly feasible rate
    timeline. Its makespan is the largest ``S_{g,k}`` and ``S_{g,k} <= r_g + sum (S - r) <= max r
    + U``. Rank the items by completion time
    (arrival markers at ``r``; ties: markers first, then by iteration index, so a releasing item
    always ranks first — a released iteration sends positive bytes after its release, so it
    completes strictly later), set ``t_e`` to the ``e``-th completion time, ``y`` from the ranks and
    ``X[f, e]`` = bytes of ``f`` sent by ``t_e``. Capacity holds on every interval by integrating
    (10)-(11); an item with rank ``<= e`` has finished by ``t_e``; a flow whose releasing item ``v``
    ranks ``>= e`` sends nothing before ``t_{rank(v)} >= t_e`` (release (6)-(9), with ``t* >=
    S_{g,k-1}`` for the barrier), so ``X[f, e] = 0``; ``C`` and ``S`` take their true values.
    (ii) *Every solution is a feasible schedule of cost at most its objective.* Rate of ``f`` in
    interval ``e`` = ``(X[f,e] - X[f,e-1]) / (t_e - t_{e-1})`` (:func:`extract_event_schedule`):
    capacities hold, a flow sends only in intervals after its releasing items' completion events
    (so after their completion times: these are at most the event times), and each iteration has
    sent all bytes by its completion event, so its completion time is at most ``t_e``; starts
    ``t*_{g,k} = S_{g,k-1}`` of the timeline (barrier (8)). Hence ``C``, ``S`` are upper bounds of
    the timeline's completion times. Constant rates per interval lose nothing: in any schedule the
    set of released, unfinished flows is constant between consecutive items' times, and averaging
    each flow's rate over an interval keeps capacities and per-interval bytes (the argument of (i)
    uses only per-interval bytes).
    So the optimum of Model E is OPT(O) whenever some schedule costs at most ``U``: the horizon
    from a verified heuristic schedule of cost ``U`` loses nothing. Verify accepts rates and bytes
    within the relative tolerance ``REL`` of :mod:`optsched.tolerance`, so a verified schedule can
    undercut OPT(O) by O(REL) relative, which is what ``at_most``/``close`` allow around a bound.
    """
    idx = EventIndex(instance)
    E, P, cap = idx.n_events, instance.machines, float(instance.capacity)
    m = pyo.ConcreteModel(name="cojob_event")
    m.E = pyo.RangeSet(0, E)
    m.U = pyo.RangeSet(0, len(idx.items) - 1)
    m.F = pyo.RangeSet(0, len(idx.flows) - 1)
    m.t = pyo.Var(m.E, bounds=(0.0, horizon))
    m.t[0].setub(0.0)           # bounds, not fix(): a fixed variable resets a MIP start
    m.y = pyo.Var(m.U, m.E, domain=pyo.Binary)
    m.X = pyo.Var(m.F, m.E, domain=pyo.NonNegativeReals)
    for u in m.U:
        m.y[u, 0].setub(0)
        m.y[u, E].setlb(1)
    for n, (_, _, _, _, _, size) in enumerate(idx.flows):
        m.X[n, 0].setub(0.0)
        m.X[n, E].setlb(size)
        m.X[n, E].setub(size)
    ev = range(1, E + 1)
    m.mono_t = pyo.Constraint(ev, rule=lambda m, e: m.t[e] >= m.t[e - 1])
    m.mono_y = pyo.Constraint(m.U, ev, rule=lambda m, u, e: m.y[u, e] >= m.y[u, e - 1])
    m.mono_x = pyo.Constraint(m.F, ev, rule=lambda m, n, e: m.X[n, e] >= m.X[n, e - 1])
    m.one = pyo.Constraint(ev, rule=lambda m, e: sum(m.y[u, e] for u in m.U) == e)
    on_port: dict[int, list[int]] = {p: [] for p in range(2 * P)}
    for n, (_, g, j, _, f, _) in enumerate(idx.flows):
        s, d, _ = instance.cojobs[g].jobs[j].flows[f]
        on_port[s].append(n)
        on_port[P + d].append(n)
    ports = [p for p, fl in on_port.items() if fl]
    m.cap = pyo.Constraint(ports, ev, rule=lambda m, p, e: sum(
        m.X[n, e] - m.X[n, e - 1] for n in on_port[p]) <= cap * (m.t[e] - m.t[e - 1]))
    m.done = pyo.Constraint(m.F, ev, rule=lambda m, n, e: m.X[n, e] >= idx.flows[n][5] * m.y[
        idx.flows[n][0], e])
    m.release = pyo.ConstraintList()
    for n, (u, *_, size) in enumerate(idx.flows):
        for v in idx.preds[u]:
            for e in ev:
                m.release.add(m.X[n, e] <= size * m.y[v, e - 1])
    m.arrive = pyo.ConstraintList()
    for u, item in enumerate(idx.items):
        if item[0] == "arr":
            for e in ev:
                m.arrive.add(m.t[e] >= item[1] * m.y[u, e])
    finals = sorted({u for us in idx.finals.values() for u in us})
    m.C = pyo.Var(finals, domain=pyo.NonNegativeReals)
    m.completion = pyo.Constraint(finals, ev, rule=lambda m, u, e: m.C[u] >= m.t[e] - horizon * m.y[
        u, e - 1])
    m.A = pyo.Set(initialize=list(instance.stages), dimen=2)
    m.S = pyo.Var(m.A, domain=pyo.NonNegativeReals)
    m.stage = pyo.ConstraintList()
    for a, us in idx.finals.items():
        for u in us:
            m.stage.add(m.S[a] >= m.C[u])
    lam = _bottleneck(instance)
    m.chain = pyo.Constraint(m.A, rule=lambda m, g, k: m.S[g, k] >= lam[g, k] + (
        m.S[g, k - 1] if k else instance.cojobs[g].arrival))                      # (14)
    m.cuts = pyo.ConstraintList()                                                  # (15)
    for p, subset in cuts:
        add_cut(instance, m, p, subset)
    m.obj = pyo.Objective(expr=sum(m.S[a] for a in m.A) - _arrival_sum(instance))  # (1)
    m.index = idx
    return m


def event_milp_applies(instance) -> bool:
    """Model E assumes no compute gaps (a release at ``C + c_{g,j}`` is no completion event)."""
    return all(job.compute == 0 for c in instance.cojobs for job in c.jobs)


def event_ranks(instance, schedule, idx: EventIndex) -> list[int]:
    """The event (1-based rank) of each item in a verified ``schedule``: items sorted by completion
    time (arrival markers at their time), ties by (marker first, iteration index), as in the proof
    of :func:`build_event_milp` (i)."""
    from optsched.problems.cojob_network import flow_times

    _, finish, _ = flow_times(instance, schedule)
    keys = []
    for u, item in enumerate(idx.items):
        if item[0] == "arr":
            keys.append((item[1], -1, u))
            continue
        _, g, j, i = item
        n = len(instance.cojobs[g].jobs[j].flows)
        keys.append((max(finish[g, j, i, f] for f in range(n)), i, u))
    ranks = [0] * len(idx.items)
    for e, (_, _, u) in enumerate(sorted(keys), 1):
        ranks[u] = e
    return ranks


def set_event_start(instance, model, schedule) -> None:
    """Set ``y`` of Model E from a verified ``schedule`` (a partial MIP start: HiGHS completes the
    continuous variables by an LP, which is feasible by the proof (i) when the horizon is at least
    the schedule's makespan)."""
    idx = model.index
    for u, r in enumerate(event_ranks(instance, schedule, idx)):
        for e in range(1, idx.n_events):
            model.y[u, e].set_value(1 if e >= r else 0)


def extract_event_schedule(instance, model):
    """The rate timeline of a solved Model E (proof (ii) of :func:`build_event_milp`).

    Solver noise is removed before dividing bytes by interval lengths: the completion events are
    read from ``y`` (rounded), a flow's bytes are kept only in the intervals its item may use
    (after every releasing item's event, up to its own) and rescaled to its exact size, and an
    interval is stretched when its port loads need slightly more than its length (rates then
    meet the capacities exactly), and starts no earlier than the arrival (9) of any cojob that
    sends in it (the solver may meet ``t_e >= r_g`` to its tolerance only: a hypothesis case
    sent 5e-7 bytes before an arrival); times move by the solver's feasibility tolerance only."""
    from optsched.problems.cojob_network import Schedule, Segment

    idx: EventIndex = model.index
    E, P, cap = idx.n_events, instance.machines, float(instance.capacity)
    rank = [next(e for e in range(1, E + 1) if pyo.value(model.y[u, e]) > 0.5)
            for u in range(len(idx.items))]
    sent = []
    for n, (u, g, j, i, f, size) in enumerate(idx.flows):
        first = max([rank[v] for v in idx.preds[u]], default=0) + 1
        xs = [max(0.0, pyo.value(model.X[n, e]) - pyo.value(model.X[n, e - 1]))
              if first <= e <= rank[u] else 0.0 for e in range(1, E + 1)]
        total = sum(xs)
        if not total > 0:  # a flow of ~1e-6 bytes lost in the solver's tolerance: it is sent in
            xs = [0.0] * E  # its own completion interval (stretched below if the ports need it)
            xs[rank[u] - 1], total = 1.0, 1.0
        sent.append([x * size / total for x in xs])
    segments, now, done = [], 0.0, [0.0] * len(idx.items)
    for e in range(1, E + 1):
        now = max([now] + [instance.cojobs[g].arrival for n, (_, g, *_rest) in enumerate(idx.flows)
                           if sent[n][e - 1] > 0])      # an event the solver put 1e-7 early
        load = [0.0] * (2 * P)
        for n, (_, g, j, _, f, _) in enumerate(idx.flows):
            s, d, _ = instance.cojobs[g].jobs[j].flows[f]
            load[s] += sent[n][e - 1]
            load[P + d] += sent[n][e - 1]
        length = max(pyo.value(model.t[e]) - pyo.value(model.t[e - 1]), max(load) / cap)
        if length <= 0:
            continue
        rates = tuple((g, j, i, f, sent[n][e - 1] / length)
                      for n, (u, g, j, i, f, _) in enumerate(idx.flows) if sent[n][e - 1] > 0)
        if rates:
            segments.append(Segment(now, now + length, rates))
            for n, (u, *_rest) in enumerate(idx.flows):
                if sent[n][e - 1] > 0:
                    done[u] = now + length
        now += length
    return _event_schedule(instance, idx, done, tuple(segments), Schedule)


def _event_schedule(instance, idx: EventIndex, done: list, segments, schedule_type):
    """Stage starts ``t*_{g,k} = S_{g,k-1}`` of the timeline (``r_g`` for the first stage) and the
    stage order by completion (information only)."""
    S = {a: max(done[u] for u in us) for a, us in idx.finals.items()}
    starts = tuple(tuple(tuple(S[g, k - 1] if k else c.arrival for k in range(job.stages))
                         for job in c.jobs) for g, c in enumerate(instance.cojobs))
    order = tuple(sorted(instance.stages, key=lambda a: (S[a], a)))
    return schedule_type(starts, segments, order, "event_milp")


# ----------------------------------------------------------------------------------------------------
# Model I: item-level ordering MILP (a lower bound tighter than Model F; issue 19 item 6)


class ItemOrder:
    """Model I: the linear-ordering MILP of Model F written over *iterations* (items) instead of
    stages, as plain sparse arrays for :class:`optsched.solvers.highs.ArrayModel`.

    Items ``u`` are the iterations ``(g, j, i)`` (``i`` 1-based, cumulative) of every job for every
    stage it runs, with their per-iteration port loads ``d^u_p`` (paper Eq. (27) for one coflow,
    in time units at the port capacity). Variables: ``x_uv`` in {0, 1} (u completes before v) for
    the *free* pairs, item completion times ``C_u`` and stage completion times ``S_a``.
    Constraints:

    * linear ordering: ``0 <= x_uv + x_vw - x_uw <= 1`` for ``u < v < w`` (no 3-cycle);
    * fixed pairs (no variable): in one cojob every item of stage k completes before every item
      of stage k+1 (barrier (8): stage k+1 starts at ``S_{g,k}`` and sends positive bytes after
      it), and within one job and stage iteration i before i+1 (7);
    * chains: ``C_u >= C_{u-1} + max_p d^u_p`` (iteration ``u-1`` of the job, same stage, (7)),
      ``C_u >= S_{g,k-1} + max_p d^u_p`` for the first iteration of stage k >= 1 ((8)),
      ``C_u >= r_g + max_p d^u_p`` for stage 1 ((9));
    * port prefix (Lemma 1 for items): ``C_u >= d^u_p + sum_{v before u} d^v_p`` for every port
      p that u loads: all port-p bytes of the items completed by ``C_u`` have crossed p;
    * ``S_{g,k} >= C_u`` for the last iteration u of stage k of every job of ``J_{g,k}`` ((2)-(3));
    * optionally ``sum_a (S_a - r_g) >= floor`` (a lower bound already proven, e.g. Model F's).

    Objective ``sum_{g,k} (S_{g,k} - r_g)``. Validity: rank the items of any schedule ``verify``
    accepts by completion time (ties by iteration index); the fixed pairs hold (strictly later
    completions), the completion times satisfy every row (compute gaps ``c_{g,j} >= 0`` only
    delay releases), so the optimum ``I*`` is <= OPT(O). It ignores only the coupling of a
    flow's two ports, so ``F* <= I*``: given an item order, a stage completing before ``b`` has all
    its items before ``b``'s last item.
    """

    def __init__(self, instance, floor: float | None = None):
        P = instance.machines
        self.instance = instance
        self.items: list[tuple[int, int, int, int]] = []      # (g, j, i, k)
        loads: list[np.ndarray] = []
        self.chain: list[int | None] = []                      # previous iteration, same stage
        self.finals: dict[Stage, list[int]] = {}
        for g, cojob in enumerate(instance.cojobs):
            for j, job in enumerate(cojob.jobs):
                d = np.zeros(2 * P)
                for s, t, x in job.flows:
                    d[s] += x
                    d[P + t] += x
                d /= float(instance.capacity)
                for k in range(job.stages):
                    prev = None
                    for i in range(cojob.iterations[k] - cojob.stage_iterations(k) + 1,
                                   cojob.iterations[k] + 1):
                        self.chain.append(prev)
                        prev = len(self.items)
                        self.items.append((g, j, i, k))
                        loads.append(d)
                    self.finals.setdefault((g, k), []).append(len(self.items) - 1)
        self.load = np.array(loads).reshape(len(self.items), 2 * P)
        self.stages = list(instance.stages)
        self.floor = floor
        n = len(self.items)
        self.col: dict[tuple[int, int], int] = {}
        for u in range(n):
            for v in range(u + 1, n):
                if self.fixed(u, v) is None:
                    self.col[u, v] = len(self.col)
        self.c_col = len(self.col)                              # C_u at c_col + u
        self.s_col = {a: self.c_col + n + q for q, a in enumerate(self.stages)}
        self.n_cols = self.c_col + n + len(self.stages)

    def fixed(self, u: int, v: int) -> bool | None:
        """True when u must complete before v, False when after, None when free."""
        g, j, i, k = self.items[u]
        h, q, i2, k2 = self.items[v]
        if g != h:
            return None
        if k != k2:
            return k < k2
        if j == q:
            return i < i2
        return None

    def before(self, u: int, v: int) -> tuple[float, int | None, float]:
        """``[u before v]`` as ``const + coef * x[col]`` (col None when fixed)."""
        f = self.fixed(u, v)
        if f is not None:
            return float(f), None, 0.0
        if u < v:
            return 0.0, self.col[u, v], 1.0
        return 1.0, self.col[v, u], -1.0

    @staticmethod
    def size(instance) -> dict[str, int]:
        """``items``, ``binaries`` (at most; pairs fixed by the chains are not counted off) and
        ``terms`` (non-zeros, an upper estimate), from the instance alone (cheap at any scale)."""
        n = sum(c.stage_iterations(k) * len(c.alive(k)) for c in instance.cojobs
                for k in range(c.n_stages))
        ports = 2 * instance.machines
        triples = n * (n - 1) * (n - 2) // 6
        return {"items": n, "binaries": n * (n - 1) // 2,
                "terms": 6 * triples + n * min(ports, n) * n + 3 * n}

    def columns(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Cost, lower and upper bounds of the columns (x binary, then C, then S)."""
        n, nx = len(self.items), len(self.col)
        cost = np.zeros(self.n_cols)
        cost[self.c_col + n:] = 1.0
        lo = np.zeros(self.n_cols)
        hi = np.full(self.n_cols, np.inf)
        hi[:nx] = 1.0
        for u, (g, _, _, k) in enumerate(self.items):
            if k == 0 and self.chain[u] is None:
                lo[self.c_col + u] = self.instance.cojobs[g].arrival + float(self.load[u].max())
        return cost, lo, hi

    def rows(self):
        """The rows as CSR arrays ``(lo, hi, starts, cols, values)``."""
        lo: list[float] = []
        hi: list[float] = []
        starts: list[int] = []
        cols: list[int] = []
        vals: list[float] = []

        def add(row: dict[int, float], rlo: float, rhi: float) -> None:
            starts.append(len(cols))
            cols.extend(row)
            vals.extend(row.values())
            lo.append(rlo)
            hi.append(rhi)

        self._triangles(add)
        self._chains(add)
        self._prefixes(add)
        for a, us in self.finals.items():
            for u in us:
                add({self.s_col[a]: 1.0, self.c_col + u: -1.0}, 0.0, np.inf)
        if self.floor is not None:
            arr = sum(c.arrival * c.n_stages for c in self.instance.cojobs)
            add({self.s_col[a]: 1.0 for a in self.stages}, self.floor + arr, np.inf)
        return (np.array(lo), np.array(hi), np.array(starts, dtype=np.int32),
                np.array(cols, dtype=np.int32), np.array(vals))

    def _triangles(self, add) -> None:
        n = len(self.items)
        for u in range(n):
            for v in range(u + 1, n):
                c1, x1, a1 = self.before(u, v)
                for w in range(v + 1, n):
                    c2, x2, a2 = self.before(v, w)
                    c3, x3, a3 = self.before(u, w)
                    if x1 is None and x2 is None and x3 is None:
                        continue
                    row: dict[int, float] = {}
                    for x, a in ((x1, a1), (x2, a2), (x3, -a3)):
                        if x is not None:
                            row[x] = row.get(x, 0.0) + a
                    const = c1 + c2 - c3
                    add(row, -const, 1.0 - const)

    def _chains(self, add) -> None:
        for u, (g, _, _, k) in enumerate(self.items):
            bott = float(self.load[u].max())
            prev = self.chain[u]
            if prev is not None:
                add({self.c_col + u: 1.0, self.c_col + prev: -1.0}, bott, np.inf)
            elif k:
                add({self.c_col + u: 1.0, self.s_col[g, k - 1]: -1.0}, bott, np.inf)

    def _prefixes(self, add) -> None:
        n = len(self.items)
        for u in range(n):
            for p in np.flatnonzero(self.load[u] > 0):
                row = {self.c_col + u: 1.0}
                rhs = float(self.load[u, p])
                for v in range(n):
                    dv = float(self.load[v, p])
                    if v == u or dv <= 0:
                        continue
                    const, x, a = self.before(v, u)
                    rhs += dv * const
                    if x is not None:
                        row[x] = row.get(x, 0.0) - dv * a
                add(row, rhs, np.inf)

    def start(self, rank: list[int]) -> np.ndarray:
        """A feasible column vector from an item order (``rank[u]``, distinct, consistent with the
        fixed pairs, e.g. the completion order of a verified schedule): x from the ranks, C and S
        by the recursion of the rows (each the smallest value its rows allow)."""
        x = np.zeros(self.n_cols)
        for (u, v), c in self.col.items():
            x[c] = 1.0 if rank[u] < rank[v] else 0.0
        n = len(self.items)
        done = np.zeros(2 * self.instance.machines)
        S: dict[Stage, float] = {}
        C = [0.0] * n
        for u in sorted(range(n), key=lambda w: rank[w]):
            g, _, _, k = self.items[u]
            done = done + self.load[u]
            prev = self.chain[u]
            rel = (C[prev] if prev is not None else S[g, k - 1] if k
                   else self.instance.cojobs[g].arrival)
            C[u] = max(rel + float(self.load[u].max()),
                       max(float(done[p]) for p in np.flatnonzero(self.load[u] > 0)))
            x[self.c_col + u] = C[u]
            if u == max(self.finals[g, k], key=lambda w: rank[w]):
                S[g, k] = max(C[w] for w in self.finals[g, k])
        for a, q in self.s_col.items():
            x[q] = S[a]
        return x

    def stage_order(self, values: np.ndarray) -> tuple[Stage, ...]:
        """The stages of a solution by ``S`` (ties: by stage index, so chains are kept)."""
        return tuple(sorted(self.stages, key=lambda a: (values[self.s_col[a]], a[1], a[0])))

    def ranks_of(self, instance, schedule) -> list[int]:
        """Each item's completion rank in a verified ``schedule`` (ties by iteration index)."""
        from optsched.problems.cojob_network import flow_times

        _, finish, _ = flow_times(instance, schedule)
        keys = []
        for u, (g, j, i, _) in enumerate(self.items):
            n = len(instance.cojobs[g].jobs[j].flows)
            keys.append((max(finish[g, j, i, f] for f in range(n)), i, u))
        rank = [0] * len(self.items)
        for r, (_, _, u) in enumerate(sorted(keys)):
            rank[u] = r
        return rank

"""Methods of the toy family and its one Family object."""

from __future__ import annotations

from dataclasses import dataclass

import pyomo.environ as pyo

from optsched.deadline import Deadline
from optsched.family import Family
from optsched.method import Method, Params, param
from optsched.result import Outcome, SolveStatus
from optsched.solvers.highs import report_outcome, solve_model
from tests.toy import problem, workloads
from tests.toy.problem import Instance, Schedule


def _in_order(inst: Instance, order) -> Schedule:
    starts, t = [0] * len(inst.times), 0
    for j in order:
        starts[j], t = t, t + inst.times[j]
    return Schedule(tuple(starts))


@dataclass(frozen=True)
class ListParams(Params):
    rule: str = param("wspt", "Smith's rule (wspt: p_j / w_j ascending) or index order (fifo)")


def list_schedule(inst: Instance, params: ListParams, *, deadline: Deadline, seed: int = 0):
    key = (lambda j: inst.times[j] / max(inst.weights[j], 1e-12)) if params.rule == "wspt" else int
    return Outcome(_in_order(inst, sorted(range(len(inst.times)), key=key)))


def exact(inst: Instance, *, deadline: Deadline, seed: int = 0) -> Outcome:
    """Disjunctive MILP with big-M = sum p."""
    n, big = len(inst.times), sum(inst.times)
    m = pyo.ConcreteModel()
    m.s = pyo.Var(range(n), domain=pyo.NonNegativeIntegers, bounds=(0, big))
    m.y = pyo.Var([(i, j) for i in range(n) for j in range(i + 1, n)], domain=pyo.Binary)
    m.c = pyo.ConstraintList()
    for (i, j) in m.y:
        m.c.add(m.s[i] + inst.times[i] <= m.s[j] + big * (1 - m.y[i, j]))
        m.c.add(m.s[j] + inst.times[j] <= m.s[i] + big * m.y[i, j])
    m.obj = pyo.Objective(expr=sum(w * (m.s[j] + p) for j, (p, w) in
                                   enumerate(zip(inst.times, inst.weights))))
    rep = solve_model(m, deadline=deadline, seed=seed)
    return report_outcome(rep, lambda: Schedule(tuple(round(m.s[j].value) for j in range(n))))


def lower_bound(inst: Instance, *, deadline: Deadline, seed: int = 0) -> Outcome:
    """sum w_j p_j: every job at least its own length."""
    return Outcome(None, SolveStatus.OPTIMAL, float(sum(w * p for p, w in zip(inst.times,
                                                                             inst.weights))))


SPEC = Family(
    name="single_machine", description="toy: 1 || sum w_j C_j", problem=problem,
    workloads=workloads, default_method="wspt", ratio_seeds=3,
    methods=(Method("exact", "exact", exact), Method("lower_bound", "bound", lower_bound),
             Method("wspt", "algorithm", list_schedule, params=ListParams("wspt"),
                    guarantee=lambda inst: 1.0),
             Method("fifo", "baseline", list_schedule, params=ListParams("fifo"))))

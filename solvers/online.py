"""Shared online framework: doubling rounds and price-based primal-dual admission.

Two papers of optsched schedule jobs online the same way, and both call this module:

* elastic_cluster (Zhou et al., seed 000): Algorithm 1 (A_online, rounds tau_i = 2^(i-1)), Algorithm 3
  (A_maxweight, admission under the exponential price (11) ``lambda^(beta/C) - 1``);
* edge_cloud (She et al., seed 001): Algorithm 1 (geometric batching, deciding at tau_i for the window
  tau_i+1..tau_{i+1}) and Algorithm 2 (A_maxsche, prices (7), (8) of the same exponential form).

The module knows nothing about either family. It offers three pieces:

:func:`doubling_rounds`
    Rounds i = 1, 2, ... at tau_i = 2^(i-1). Round i's batch is every job that has arrived by tau_i
    (``arrival <= tau_i``) and is not scheduled yet, in (arrival, input order); jobs not admitted are
    carried over to the next round. A family callback schedules the batch and returns the admitted
    jobs' plans (:class:`BatchResult`). A window policy proposes the slots a round may use
    (:func:`next_window`: tau_i+1..tau_{i+1}; :func:`scaled_window`: Algorithm 1 of seed 000 with
    start alpha*tau_i; :func:`compact_window`: start right after the last busy slot). ``max_rounds``
    caps the loop; jobs still pending then are returned as ``unscheduled``.
:class:`UsageLedger`
    Usage of K resources (any keys the family chooses, e.g. (server, resource type)) over a range of
    integer slots, with a capacity per resource and a pluggable price function of (used, capacity),
    e.g. :func:`exponential_price` for eq. (11) of seed 000 and (7), (8) of seed 001. Prices are kept
    in a numpy array and updated only where usage is charged.
:func:`primal_dual_admission`
    The primal-dual loop: for each job in order, the family's ``best_plan(job, ledger)`` returns the
    cheapest plan under the current prices as a :class:`Candidate` (cost and per-(resource, slot)
    usage) or None; utility = weight - cost (the dual u_j of (10)); the job is admitted iff the
    utility is > 0, and its usage is charged into the ledger, which updates the prices.

Both loops take an optional :class:`~optsched.deadline.Deadline` (``deadline=``): they stop when it
has expired and say so (``stopped``), so a method's ``time_limit`` bounds them (docs/dev/design.md,
"Deadline"); without one they run to the end, exactly as before.

Example
-------
>>> ledger = UsageLedger([2.0], slots=range(1, 5), price=exponential_price(9.0))
>>> def best_plan(job, ledger):
...     # one unit of resource 0 for 2 slots, the cheapest start
...     starts = [(ledger.cost([(0, t, 1.0), (0, t + 1, 1.0)]), t) for t in (1, 2, 3)
...               if ledger.fits([(0, t, 1.0), (0, t + 1, 1.0)])]
...     if not starts:
...         return None
...     cost, t = min(starts)
...     return Candidate(cost, ((0, t, 1.0), (0, t + 1, 1.0)), plan=t)
>>> res = primal_dual_admission(["a", "b", "c"], weight=lambda j: 3.0, best_plan=best_plan,
...                             ledger=ledger)
>>> [(a.job, a.plan) for a in res.admitted]
[('a', 1), ('b', 3)]
>>> res.rejected, ledger.used.tolist()
(['c'], [[1.0, 1.0, 1.0, 1.0]])
>>> def batch(rnd, pending):
...     return BatchResult({j: rnd.window[0] for j in pending[:1]}, last_slot=rnd.window[0])
>>> out = doubling_rounds(["x", "y"], arrival={"x": 1, "y": 1}.get, schedule_batch=batch)
>>> out.plans
{'x': 2, 'y': 3}
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Hashable, Iterable, Mapping, Sequence

import numpy as np

from optsched.deadline import Deadline

PriceFn = Callable[[np.ndarray, np.ndarray], np.ndarray]
"""``price(used, capacity) -> price``, elementwise on numpy arrays."""

Usage = Iterable[tuple[int, int, float]]
"""Triples (resource index, slot, amount)."""


# --------------------------------------------------------------------------------------- prices


def exponential_price(base: float) -> PriceFn:
    """The exponential price ``base^(used/capacity) - 1`` (seed 000 eq. (11); seed 001 (7), (8)).

    It is 0 on an idle resource and ``base - 1`` on a full one. A resource with capacity <= 0 has
    price +inf (it cannot be used).

    Parameters
    ----------
    base
        The price base (lambda = 2 T H R F + 1 in seed 000), > 1.
    """
    if not base > 1:
        raise ValueError(f"price base must be > 1, got {base}")

    def price(used: np.ndarray, capacity: np.ndarray) -> np.ndarray:
        used = np.asarray(used, dtype=float)
        capacity = np.asarray(capacity, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            value = np.power(base, used / np.where(capacity > 0, capacity, 1.0)) - 1.0
        return np.where(capacity > 0, value, math.inf)

    return price


def linear_price(scale: float = 1.0) -> PriceFn:
    """The price ``scale * used / capacity`` (a simple alternative for tests and ablations)."""

    def price(used: np.ndarray, capacity: np.ndarray) -> np.ndarray:
        capacity = np.asarray(capacity, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            value = scale * np.asarray(used, dtype=float) / np.where(capacity > 0, capacity, 1.0)
        return np.where(capacity > 0, value, math.inf)

    return price


# --------------------------------------------------------------------------------------- ledger


class UsageLedger:
    """Usage, residual capacity and price of K resources over a range of integer slots.

    Parameters
    ----------
    capacity
        Capacity of each resource (length K); constant over the slots.
    slots
        The consecutive integer slots the ledger covers, e.g. ``range(tau + 1, tau_next + 1)``.
    price
        The price function of (used, capacity), e.g. :func:`exponential_price`.

    Attributes
    ----------
    used, prices
        Arrays of shape (K, len(slots)); column ``t - slots.start`` is slot t. ``prices`` always
        equals ``price(used, capacity)``; treat both as read-only.
    """

    def __init__(self, capacity: Sequence[float], slots: range, price: PriceFn):
        if slots.step != 1 or len(slots) == 0:
            raise ValueError(f"slots must be a non-empty range with step 1, got {slots}")
        self.capacity = np.asarray(capacity, dtype=float)
        self.slots = slots
        self.price_fn = price
        self.used = np.zeros((len(self.capacity), len(slots)))
        self.prices = np.asarray(price(self.used, self.capacity[:, None]), dtype=float)

    @property
    def residual(self) -> np.ndarray:
        """Capacity minus usage, shape (K, len(slots))."""
        return self.capacity[:, None] - self.used

    def column(self, slot: int) -> int:
        """Array column of ``slot``; raises ValueError outside the ledger's slots."""
        if slot not in self.slots:
            raise ValueError(f"slot {slot} outside the ledger's slots {self.slots}")
        return slot - self.slots.start

    def cost(self, usage: Usage) -> float:
        """Sum of amount * current price over the usage triples."""
        return float(sum(a * self.prices[k, self.column(t)] for k, t, a in usage if a))

    def fits(self, usage: Usage, tol: float = 1e-9) -> bool:
        """True when adding ``usage`` keeps every (resource, slot) within capacity."""
        extra: dict[tuple[int, int], float] = {}
        for k, t, a in usage:
            extra[k, self.column(t)] = extra.get((k, self.column(t)), 0.0) + a
        return all(self.used[k, c] + a <= self.capacity[k] + tol for (k, c), a in extra.items())

    def charge(self, usage: Usage) -> None:
        """Add ``usage`` to the ledger and update the prices of the touched cells."""
        for k, t, a in usage:
            c = self.column(t)
            self.used[k, c] += a
            self.prices[k, c] = float(self.price_fn(self.used[k, c], self.capacity[k]))

    def charge_block(self, resources: Sequence[int], first: int, last: int,
                     amounts: Sequence[float]) -> None:
        """Charge ``amounts[i]`` to resource ``resources[i]`` in every slot first..last (inclusive).

        A vectorised :meth:`charge` for plans that hold constant usage over consecutive slots.
        """
        c0, c1 = self.column(first), self.column(last) + 1
        rows = np.asarray(resources, dtype=int)
        np.add.at(self.used, (rows[:, None], np.arange(c0, c1)[None, :]),
                  np.asarray(amounts, dtype=float)[:, None])
        block = self.used[rows, c0:c1]
        self.prices[rows, c0:c1] = self.price_fn(block, self.capacity[rows][:, None])


# ------------------------------------------------------------------------------------ admission


@dataclass(frozen=True)
class Candidate:
    """The cheapest plan of one job under the current prices.

    Attributes
    ----------
    cost
        Its price cost, sum over usage of amount * price (the sum in (9a) of seed 000).
    usage
        Its (resource index, slot, amount) triples, charged on admission. May be empty when the
        family charges the ledger itself through ``charge``.
    plan
        Whatever the family needs to build its schedule.
    charge
        Optional ``charge(ledger)`` used instead of charging ``usage`` (e.g. with
        :meth:`UsageLedger.charge_block`).
    """

    cost: float
    usage: tuple = ()
    plan: Any = None
    charge: Callable[[UsageLedger], None] | None = None


@dataclass(frozen=True)
class Admitted:
    """One admitted job: its plan, cost and utility (weight - cost > 0)."""

    job: Hashable
    plan: Any
    cost: float
    utility: float


@dataclass
class AdmissionResult:
    """Output of :func:`primal_dual_admission`.

    ``utility`` maps every job to max(0, weight - best cost), the dual variable u_j of (10) in seed
    000 (0 for rejected jobs, also when no plan exists). ``stopped`` is True when the deadline cut
    the loop short: the jobs not examined are neither admitted nor rejected.
    """

    admitted: list[Admitted] = field(default_factory=list)
    rejected: list[Hashable] = field(default_factory=list)
    utility: dict[Hashable, float] = field(default_factory=dict)
    stopped: bool = False

    @property
    def weight(self) -> float:
        """Sum of the admitted jobs' weights (cost + utility)."""
        return sum(a.cost + a.utility for a in self.admitted)


def primal_dual_admission(jobs: Sequence[Hashable], *, weight: Callable[[Hashable], float],
                          best_plan: Callable[[Hashable, UsageLedger], Candidate | None],
                          ledger: UsageLedger, deadline: Deadline | None = None) -> AdmissionResult:
    """Price-based primal-dual admission (seed 000 Algorithm 3; seed 001 Algorithm 2).

    For each job in the given order: ``best_plan(job, ledger)`` gives its cheapest plan under the
    current prices (or None if no plan fits); utility = weight(job) - cost; the job is admitted iff
    utility > 0 (strict, as the papers), and its usage is charged into ``ledger``.

    Parameters
    ----------
    jobs
        The batch, in the order the jobs are examined.
    weight
        ``weight(job)``: the job's value (w_j in seed 000, 1 in seed 001).
    best_plan
        Family callback; must only propose plans that fit the ledger's residual capacity.
    ledger
        The usage ledger; it is modified in place.
    deadline
        When it expires the loop stops (``result.stopped``): before examining the next job, and
        after a ``best_plan`` call that ran past it (that candidate may be cut short and is
        dropped, not admitted).
    """
    result = AdmissionResult()
    for job in jobs:
        if deadline is not None and deadline.expired():
            result.stopped = True
            break
        cand = best_plan(job, ledger)
        if deadline is not None and deadline.expired():
            result.stopped = True
            break
        utility = -math.inf if cand is None else weight(job) - cand.cost
        if cand is not None and utility > 0:
            if cand.charge is not None:
                cand.charge(ledger)
            else:
                ledger.charge(cand.usage)
            result.admitted.append(Admitted(job, cand.plan, cand.cost, utility))
            result.utility[job] = utility
        else:
            result.rejected.append(job)
            result.utility[job] = 0.0
    return result


# --------------------------------------------------------------------------------------- rounds


@dataclass(frozen=True)
class Round:
    """One round of the doubling framework.

    Attributes
    ----------
    index
        i = 1, 2, ...
    tau, tau_next
        tau_i = 2^(i-1) and tau_{i+1} = 2^i.
    window
        (first, last) slots, inclusive, proposed by the window policy; ``last`` may be None when the
        policy leaves the length to the family (e.g. alpha depends on the batch).
    busy_until
        Last slot used by an earlier round's admitted jobs (0 if none).
    """

    index: int
    tau: int
    tau_next: int
    window: tuple[int, int | None]
    busy_until: int


@dataclass(frozen=True)
class BatchResult:
    """What a round's batch callback returns.

    Attributes
    ----------
    admitted
        job -> plan for the jobs scheduled in this round (a subset of the batch).
    last_slot
        Last slot any admitted job uses (None: the window's last slot, if known).
    info
        Free-form per-round details (kept in the round record).
    """

    admitted: Mapping[Hashable, Any]
    last_slot: int | None = None
    info: dict = field(default_factory=dict)


@dataclass(frozen=True)
class RoundRecord:
    """What happened in one round: its :class:`Round`, batch, admitted jobs, last busy slot."""

    round: Round
    batch: tuple
    admitted: tuple
    busy_until: int
    info: dict


@dataclass
class OnlineResult:
    """Output of :func:`doubling_rounds`: plans of the scheduled jobs, round log, leftovers;
    ``stopped`` is True when the deadline ended the loop (the leftovers were not all tried)."""

    plans: dict[Hashable, Any]
    rounds: list[RoundRecord]
    unscheduled: list[Hashable]
    stopped: bool = False


WindowPolicy = Callable[[int, int, int, int], tuple[int, int | None]]
"""``policy(index, tau, tau_next, busy_until) -> (first, last)`` slots of a round."""


def next_window(index: int, tau: int, tau_next: int, busy_until: int) -> tuple[int, int]:
    """Decide at tau_i for the window tau_i + 1 .. tau_{i+1} (seed 001 Algorithm 1)."""
    return tau + 1, tau_next


def scaled_window(alpha: int) -> WindowPolicy:
    """Seed 000 Algorithm 1 with a constant alpha: the window starts at alpha*tau_i, has length
    alpha*tau_i, and never starts before the previous round's last busy slot + 1."""

    def policy(index: int, tau: int, tau_next: int, busy_until: int) -> tuple[int, int]:
        first = max(alpha * tau, busy_until + 1)
        return first, first + alpha * tau - 1

    return policy


def compact_window(index: int, tau: int, tau_next: int, busy_until: int) -> tuple[int, None]:
    """Start at max(tau_i, busy_until + 1); the family chooses the length (non-paper, seed 000
    digest Sec. 4.1 "compact")."""
    return max(tau, busy_until + 1), None


def doubling_rounds(jobs: Sequence[Hashable], *, arrival: Callable[[Hashable], float],
                    schedule_batch: Callable[[Round, list], BatchResult],
                    window: WindowPolicy = next_window, max_rounds: int = 40,
                    deadline: Deadline | None = None) -> OnlineResult:
    """The doubling-round online framework (seed 000 Algorithm 1; seed 001 Algorithm 1).

    In round i (tau_i = 2^(i-1)) the batch is every job with ``arrival(job) <= tau_i`` that is not
    yet scheduled, ordered by (arrival, position in ``jobs``); empty batches are skipped. The batch
    callback returns the admitted jobs with their plans; the others are carried over. The loop stops
    when every job is scheduled or after ``max_rounds`` rounds.

    Parameters
    ----------
    jobs
        All jobs (hashable keys, e.g. indices); the framework only reveals them on arrival.
    arrival
        ``arrival(job)``: its arrival slot.
    schedule_batch
        ``schedule_batch(round, batch) -> BatchResult``; it must admit only jobs of ``batch``.
    window
        The window policy (:func:`next_window`, :func:`scaled_window`, :func:`compact_window`).
    max_rounds
        Round cap (guards against jobs that can never be scheduled).
    deadline
        When it has expired the loop stops before the next round, or after a batch callback that
        ran past it (``stopped``; pass the same deadline to the callback so that it returns early).
    """
    order = {job: k for k, job in enumerate(jobs)}
    todo = sorted(jobs, key=lambda j: (arrival(j), order[j]))
    plans: dict[Hashable, Any] = {}
    records: list[RoundRecord] = []
    busy = 0
    stopped = False
    for index in range(1, max_rounds + 1):
        if len(plans) == len(todo):
            break
        if deadline is not None and deadline.expired():
            stopped = True
            break
        tau, tau_next = 2 ** (index - 1), 2 ** index
        batch = [j for j in todo if j not in plans and arrival(j) <= tau]
        if not batch:
            continue
        rnd = Round(index, tau, tau_next, window(index, tau, tau_next, busy), busy)
        out = schedule_batch(rnd, batch)
        stray = [j for j in out.admitted if j not in set(batch)]
        if stray:
            raise ValueError(f"round {index}: admitted job {stray[0]!r} is not in the batch")
        plans.update(out.admitted)
        last = out.last_slot if out.last_slot is not None else rnd.window[1]
        if out.admitted and last is not None:
            busy = max(busy, last)
        records.append(RoundRecord(rnd, tuple(batch), tuple(out.admitted), busy, dict(out.info)))
        if deadline is not None and deadline.expired() and len(plans) < len(todo):
            stopped = True
            break
    return OnlineResult(plans, records, [j for j in todo if j not in plans], stopped)

"""Event-driven, flow-level (fluid) simulator of the big switch (Grouper, paper Sec. III-A and V-B).

The fabric has ``2P`` ports of equal capacity; a flow ``s -> d`` uses ingress port ``s`` and egress
port ``P + d``. Rates are piecewise constant: the simulator jumps from event to event (the next flow
completion, compute end or cojob arrival), never in fixed slots. At every event the policy assigns a
*class* to each job whose coflow is in flight, and :func:`allocate` gives rates by strict priority
among classes (smaller class first) and max-min fair progressive filling inside a class, passing the
leftover capacity on (work-conserving). One class for everything is per-flow fair share (FS).

Job life cycle, paper Eqs. (6)–(9): each iteration is a compute gap ``c_{g,j}`` followed by one
coflow (all flows of the job at once); iterations are sequential; all jobs of ``J_{g,k}`` start stage
``k`` together once every job of stage ``k-1`` has finished (stage barrier); the job stops after its
stage ``K_{g,j}``. The simulator knows the true ``K_{g,j}`` (the world does); policies decide what
they may look at (online Grouper does not look at it).
"""

from __future__ import annotations

import contextlib
import gc
import heapq
import math
import time
from dataclasses import dataclass, field
from typing import Hashable, Protocol

from optsched.deadline import Deadline

EPS = 1e-12


class Policy(Protocol):
    """A rate-allocation policy: classes for the jobs whose coflow is in flight."""

    name: str

    def classes(self, sim: "Simulator", events: list[tuple]) -> dict[tuple[int, int], Hashable]:
        """Class of every communicating job ``(g, j)`` (smaller = higher priority).

        ``events`` lists what happened since the last call: ``("arrival", g)``,
        ``("stage_start", g, k)``, ``("stage_end", g, k)``, ``("coflow_start", g, j, i)``,
        ``("coflow_end", g, j, i)``, ``("job_end", g, j)``.
        """
        ...


class FairShare:
    """Per-flow max-min fair share (FS, the paper's TCP/DCTCP baseline): one class for all flows."""

    name = "fair_share"

    def classes(self, sim, events):
        return dict.fromkeys(sim.communicating(), 0)


class JobPriority:
    """Fixed strict priority per job (``rank[(g, j)]``, smaller first); for closed-form tests."""

    name = "job_priority"

    def __init__(self, rank: dict[tuple[int, int], Hashable]):
        self.rank = rank

    def classes(self, sim, events):
        return {key: self.rank[key] for key in sim.communicating()}


class StageOrder:
    """Order-preserving scheduling of a fixed stage permutation ``sigma`` (paper Sec. III-D): a job's
    flows get the class of its current stage's position in ``order`` (highest priority first)."""

    name = "stage_order"

    def __init__(self, order):
        self.order = tuple(tuple(a) for a in order)
        self.position = {a: n for n, a in enumerate(self.order)}

    def classes(self, sim, events):
        return {(g, j): self.position[g, sim.stage[g]] for g, j in sim.communicating()}


@dataclass
class SimResult:
    """What a run produced. Times are absolute; ``S[g][k]`` is the stage completion time."""

    S: list[list[float]]
    job_end: list[list[float]]
    starts: list[list[list[float]]]
    segments: list[tuple[float, float, tuple]]
    events: int
    allocations: int
    wall_s: float = 0.0
    info: dict = field(default_factory=dict)
    complete: bool = True
    """False when the run stopped at its deadline before every job was done (``S`` then holds
    NaN for the stages not finished; the timeline is a prefix, not a schedule)."""


def allocate(src, dst, cls, n_ports: int, capacity: float) -> list[float]:
    """Strict priority across classes (ascending), max-min fair progressive filling inside a class,
    work-conserving (paper Sec. III-D with priority queues, Sec. IV-B).

    Parameters
    ----------
    src, dst
        Port indices of each flow (ingress, egress).
    cls
        Class of each flow (any sortable keys).

    Returns
    -------
    list of float
        The rate of each flow.
    """
    groups: dict[Hashable, list[int]] = {}
    for f, c in enumerate(cls):
        members = groups.get(c)
        if members is None:
            groups[c] = [f]
        else:
            members.append(f)
    return allocate_groups(src, dst, groups, n_ports, capacity)


def allocate_groups(src, dst, groups: dict[Hashable, list[int]], n_ports: int,
                    capacity: float) -> list[float]:
    """:func:`allocate` with the flows already grouped by class (``groups[c]``: the flows of class
    ``c`` in increasing index order); the simulator builds the groups job by job."""
    cap = [float(capacity)] * n_ports
    rate = [0.0] * len(src)
    count = [0] * n_ports
    fresh = capacity > 0                  # before the first class every port has room
    for c in sorted(groups):  # type: ignore[type-var]  # class keys are comparable numbers/tuples
        _fill(groups[c], src, dst, cap, rate, count, fresh)
        fresh = False
    return rate


def _fill(members: list[int], src, dst, cap: list[float], rate: list[float],
          count: list[int], fresh: bool = False) -> None:
    """Progressive filling (water-filling) of ``members`` on the residual capacities ``cap``.

    Ports are taken in increasing fair share ``cap_p / n_p`` (ties: the smaller port); all unfixed
    flows through the port with the smallest share get that share, which can only raise the shares
    of their other ports. Max-min fair. ``count`` is scratch space of one zero per port (left all
    zero on return).

    The arithmetic is that of the first version (kept in tests/simulate/reference_flows.py): the
    same ports in the same order, the same subtractions in the same order, ``max(v, 0.0)`` written
    as ``0.0 if 0.0 > v else v`` (the value ``max`` returns), so every rate is bit-identical. A flow
    with a port already at capacity 0 is left at rate 0 up front: its port has share 0, the least
    there is, so the first version fixed it at rate 0 before any other port, subtracting 0 from
    its other port (no change but a smaller count, which the filtered count gives directly);
    ``fresh`` says no port is at 0 yet (the first class on a switch of positive capacity).

    The next port is the first smallest entry of a list of current shares (one per port in use,
    in port order, ``inf`` once a port is done), found by ``min`` and ``index`` at C speed; past
    :data:`SCAN_PORTS` ports in use, a heap with lazy deletion (:func:`_fill_heap`) does it in
    O(F log P). Both take the port with the smallest ``(share, port)``, so they agree bit for bit.
    """
    live = members if fresh else [f for f in members if cap[src[f]] > 0.0 and cap[dst[f]] > 0.0]
    if not live:
        return
    by_port: dict[int, list[int]] = {}
    for f in live:
        fs = by_port.get(src[f])
        if fs is None:
            by_port[src[f]] = [f]
        else:
            fs.append(f)
        fs = by_port.get(dst[f])
        if fs is None:
            by_port[dst[f]] = [f]
        else:
            fs.append(f)
    if len(by_port) > SCAN_PORTS:
        _fill_heap(by_port, src, dst, cap, rate, count)
        return
    inf = math.inf
    used = sorted(by_port)
    at = {p: k for k, p in enumerate(used)}
    shares = []
    for p in used:
        n = count[p] = len(by_port[p])
        shares.append(cap[p] / n)
    done = [False] * len(rate)
    while True:
        share = min(shares)
        if share == inf:
            break
        k = shares.index(share)
        p = used[k]
        x = 0.0 if 0.0 > share else share
        for f in by_port[p]:
            if done[f]:
                continue
            done[f] = True
            rate[f] = x
            v = cap[p] - x
            cap[p] = 0.0 if 0.0 > v else v
            q = src[f] if dst[f] == p else dst[f]       # the flow's other port (src < P <= dst)
            v = cap[q] - x
            c = cap[q] = 0.0 if 0.0 > v else v
            n_q = count[q] = count[q] - 1
            shares[at[q]] = c / n_q if n_q > 0 else inf  # the last of the round stays: the
        count[p] = 0                                      # value as computed after the round
        shares[k] = inf
    for p in by_port:
        count[p] = 0


#: Allocations :meth:`Simulator._rates` remembers (cleared when full).
MEMO = 256

#: Ports in use up to which :func:`_fill` scans a list for the next port (C-speed ``min`` over
#: a short list beats a heap's pushes and stale entries); above it, the heap.
SCAN_PORTS = 256


def _fix(p: int, share: float, flows: list[int], done: dict, src, dst, cap: list[float],
         rate: list[float], count: list[int]) -> set[int]:
    """One filling round: every unfixed flow through port ``p`` gets ``share`` (clipped at 0),
    subtracted from ``p`` and from the flow's other port; returns the other ports touched
    (``count[p]`` becomes 0)."""
    x = 0.0 if 0.0 > share else share
    touched = set()
    for f in flows:
        if done[f]:
            continue
        done[f] = True
        rate[f] = x
        v = cap[p] - x
        cap[p] = 0.0 if 0.0 > v else v
        q = src[f] if dst[f] == p else dst[f]       # the flow's other port (src < P <= dst)
        v = cap[q] - x
        cap[q] = 0.0 if 0.0 > v else v
        count[q] -= 1
        touched.add(q)
    count[p] = 0
    return touched


def _fill_heap(by_port: dict[int, list[int]], src, dst, cap: list[float], rate: list[float],
               count: list[int]) -> None:
    """:func:`_fill`'s rounds with the next port from a heap (lazy deletion: an entry is used only
    while it equals its port's current share; one entry per port whose share changed in a
    round)."""
    for p, fs in by_port.items():
        count[p] = len(fs)
    heap = [(cap[p] / len(fs), p) for p, fs in by_port.items()]
    heapq.heapify(heap)
    done = {f: False for fs in by_port.values() for f in fs}
    while heap:
        share, p = heapq.heappop(heap)
        n = count[p]
        if n == 0 or share != cap[p] / n:
            continue  # stale entry
        for q in _fix(p, share, by_port[p], done, src, dst, cap, rate, count):
            n_q = count[q]
            if n_q > 0:
                heapq.heappush(heap, (cap[q] / n_q, q))
    for p in by_port:
        count[p] = 0


class Simulator:
    """One simulation of an :class:`~optsched.problems.cojob_network.Instance` under a policy.

    Parameters
    ----------
    instance
        The cojob_network instance.
    policy
        See :class:`Policy`.
    record
        Keep the rate timeline (needed to build a verifiable Schedule; off for large runs).
    """

    def __init__(self, instance, policy: Policy, record: bool = True):
        self.inst = instance
        self.policy = policy
        self.record = record
        self.t = 0.0
        cj = instance.cojobs
        self.stage = [-1] * len(cj)                       # current stage of each cojob (-1: not arrived)
        self.pending = [0] * len(cj)                      # jobs of the current stage still running
        self.iteration = [[0] * len(c.jobs) for c in cj]  # current (1-based) iteration of each job
        self.rem: dict[tuple[int, int], list[float]] = {}  # remaining bytes of in-flight coflows
        self.S = [[math.nan] * c.n_stages for c in cj]
        self.job_end = [[math.nan] * len(c.jobs) for c in cj]
        self.starts: list[list[list[float]]] = [[[] for _ in c.jobs] for c in cj]
        self.stage_start = [[math.nan] * c.n_stages for c in cj]
        self.sent = [[[0.0] * c.n_stages for _ in c.jobs] for c in cj]   # bytes sent per job stage
        self._compute: list[tuple[float, int, int, int]] = []
        self.computing: set[tuple[int, int]] = set()
        self._arrivals = sorted(range(len(cj)), key=lambda g: (cj[g].arrival, g))
        self._events: list[tuple] = []
        self._left = sum(len(c.jobs) for c in cj)
        self.segments: list[tuple[float, float, tuple]] = []
        self.n_events = 0
        self.n_alloc = 0
        self._memo: dict = {}                             # allocations seen (see _rates)
        P = instance.machines                             # per job: ingress, egress ports, sizes
        self._ports = {(g, j): ([s for s, _, _ in job.flows], [P + d for _, d, _ in job.flows],
                                [x for _, _, x in job.flows])
                       for g, c in enumerate(cj) for j, job in enumerate(c.jobs)}

    # ---- queries for policies ----
    def communicating(self) -> list[tuple[int, int]]:
        """Jobs whose coflow is in flight (flows with bytes left)."""
        return list(self.rem)

    def busy(self, g: int, j: int) -> bool:
        """True while job (g, j)'s current iteration is computing or communicating."""
        return (g, j) in self.rem or (g, j) in self.computing

    def active_cojobs(self) -> list[int]:
        """Arrived cojobs that have not finished their last stage."""
        return [g for g, k in enumerate(self.stage) if k >= 0 and math.isnan(self.S[g][-1])]

    # ---- checkpoints: resume a run from a state another run passed through ----
    def checkpoint(self) -> dict:
        """A copy of the whole mutable state (between two allocations), for :meth:`resume`."""
        return _copied({key: getattr(self, key) for key in _STATE})

    @classmethod
    def resume(cls, instance, policy: Policy, state: dict, record: bool = True) -> "Simulator":
        """A simulator in the state of :meth:`checkpoint` ``state`` (copied again, so one
        checkpoint serves many resumptions) under ``policy`` from there on. Resumed under the
        policy the checkpointed run had, it ends exactly as that run; under another policy it ends
        exactly as a full run of that policy whenever the two policies ranked every allocation
        before the checkpoint alike (the run is deterministic)."""
        sim = cls(instance, policy, record)
        for key, value in _copied(state).items():
            setattr(sim, key, value)
        return sim

    # ---- main loop ----
    def run(self, deadline: Deadline | None = None, checkpoints: list | None = None,
            every: int = 0) -> SimResult:
        """Simulate until every job is done and return the :class:`SimResult`.

        With a ``deadline``, the run is checked before every allocation and stops once it has
        expired (``SimResult.complete`` False). With ``checkpoints`` (a list) and ``every > 0``,
        ``(t, checkpoint())`` is appended before every ``every``-th allocation. The cyclic
        garbage collector is paused meanwhile (:func:`_no_gc`).
        """
        with _no_gc():
            return self._run(deadline, checkpoints, every)

    def _run(self, deadline: Deadline | None, checkpoints: list | None, every: int) -> SimResult:
        wall = time.perf_counter()
        while self._left > 0:
            if checkpoints is not None and every > 0 and self.n_alloc % every == 0:
                checkpoints.append((self.t, self.checkpoint()))
            if deadline is not None and deadline.expired():
                return SimResult(self.S, self.job_end, self.starts, self.segments, self.n_events,
                                 self.n_alloc, time.perf_counter() - wall, complete=False)
            self._admit_arrivals()
            self._finish_computes()
            if self._left == 0:
                break
            classes = self.policy.classes(self, self._events)
            self._events = []
            self._advance(classes)
        return SimResult(self.S, self.job_end, self.starts, self.segments, self.n_events,
                         self.n_alloc, time.perf_counter() - wall)

    def _advance(self, classes: dict) -> None:
        """Rates for every in-flight flow (:func:`allocate`), then move to the next event.

        Flows are listed job by job (``chunks``: job, its remaining bytes, the indices of its flows
        with bytes left or None for all) in the order of the first version; :meth:`_rates` gives
        their rates. The step ``dt`` is the least time a flow needs to finish at its rate, or the
        time to the next compute end or arrival."""
        chunks = []
        key = []
        for job, rem in self.rem.items():
            if min(rem) > 0:                   # the common case: every flow has bytes left
                fl = None
            else:
                fl = tuple(f for f, left in enumerate(rem) if left > 0)
                if not fl:
                    continue
            chunks.append((job, rem, fl))
            key.append((job, fl, classes[job]))
        rates = self._rates(chunks, frozenset(key), classes)
        self.n_alloc += 1
        dt = math.inf
        for (_, rem, fl), rate in zip(chunks, rates):
            for left, r in zip(rem if fl is None else [rem[f] for f in fl], rate):
                if r > EPS:
                    d = left / r
                    if d < dt:
                        dt = d
        dt = min(dt, self._next_timed() - self.t)
        if not math.isfinite(dt):
            raise RuntimeError(f"simulator deadlock at t={self.t}: no flow has a rate")
        self._move(chunks, rates, dt)

    def _rates(self, chunks, key: frozenset, classes: dict) -> list[tuple[float, ...]]:
        """The rates of each chunk's flows, by :func:`allocate_groups` or from a memo.

        The rates depend only on which flows are in flight and on the order of their classes, not
        on the order the flows are listed in (a filling round gives every flow it fixes the same
        share and subtracts it once per flow from each of the flow's ports, so the subtractions on
        a port are the same whatever the order of the flows; the next port is the least
        ``(share, port)``). So an allocation whose jobs, flows with bytes left and classes
        (``key``) repeat an earlier one (a coflow ends and the job's next iteration starts the
        same flows) reuses its rates: the same floats. The memo holds at most :data:`MEMO`
        allocations."""
        known = self._memo.get(key)
        if known is None:
            known = self._allocate(chunks, classes)
            if len(self._memo) >= MEMO:
                self._memo.clear()
            self._memo[key] = known
        return [known[job] for job, _, _ in chunks]

    def _allocate(self, chunks, classes: dict) -> dict:
        """``job -> rates of its listed flows`` by :func:`allocate_groups`."""
        src: list[int] = []
        dst: list[int] = []
        groups: dict[Hashable, list[int]] = {}
        spans = []
        ports = self._ports
        for job, _, fl in chunks:
            s_ports, d_ports, _ = ports[job]
            off = len(src)
            if fl is None:
                src += s_ports
                dst += d_ports
            else:
                src += [s_ports[f] for f in fl]
                dst += [d_ports[f] for f in fl]
            spans.append((job, off, len(src)))
            members = groups.get(classes[job])
            if members is None:
                groups[classes[job]] = list(range(off, len(src)))
            else:
                members += range(off, len(src))
        rate = allocate_groups(src, dst, groups, 2 * self.inst.machines,
                               self.inst.capacity) if src else []
        return {job: tuple(rate[a:b]) for job, a, b in spans}

    def _next_timed(self) -> float:
        nxt = math.inf
        if self._compute:
            nxt = self._compute[0][0]
        if self._arrivals:
            nxt = min(nxt, self.inst.cojobs[self._arrivals[0]].arrival)
        return nxt

    def _move(self, chunks, rates: list[tuple[float, ...]], dt: float) -> None:
        """Advance ``dt`` at ``rates`` (job by job, flows in order, the arithmetic of the first
        version); record the segment; finish the coflows left without bytes."""
        t1 = self.t + dt
        if self.record and dt > 0:
            seg = []
            for ((g, j), rem, fl), rate in zip(chunks, rates):
                it = self.iteration[g][j]
                seg += [(g, j, it, f, r) for f, r in zip(fl or range(len(rem)), rate) if r > 0]
            self.segments.append((self.t, t1, tuple(seg)))
        done = []
        ports, sent, stage = self._ports, self.sent, self.stage
        for (job, rem, fl), rate in zip(chunks, rates):
            g, j = job
            size = ports[job][2]
            row, k = sent[g][j], stage[g]
            acc, ended = row[k], False
            for f, r in zip(fl or range(len(rem)), rate):
                if r <= 0:
                    continue
                moved = r * dt
                v = rem[f] - moved
                acc += moved
                if v <= 1e-9 * size[f] or v <= moved * 1e-12:
                    v, ended = 0.0, True
                rem[f] = v
            row[k] = acc
            if ended and not any(x > 0 for x in rem):
                done.append(job)
        self.t = t1
        for g, j in sorted(done):
            self._coflow_done(g, j)

    # ---- job life cycle ----
    def _admit_arrivals(self) -> None:
        while self._arrivals and self.inst.cojobs[self._arrivals[0]].arrival <= self.t + EPS:
            g = self._arrivals.pop(0)
            self._emit(("arrival", g))
            self._start_stage(g, 0)

    def _finish_computes(self) -> None:
        while self._compute and self._compute[0][0] <= self.t + EPS:
            _, g, j, _ = heapq.heappop(self._compute)
            self.computing.discard((g, j))
            self._start_coflow(g, j)

    def _start_stage(self, g: int, k: int) -> None:
        cojob = self.inst.cojobs[g]
        self.stage[g] = k
        self.stage_start[g][k] = self.t
        alive = cojob.alive(k)
        self.pending[g] = len(alive)
        self._emit(("stage_start", g, k))
        for j in alive:
            self.starts[g][j].append(self.t)
            self._begin_iteration(g, j)

    def _begin_iteration(self, g: int, j: int) -> None:
        self.iteration[g][j] += 1
        c = self.inst.cojobs[g].jobs[j].compute
        if c > 0:
            heapq.heappush(self._compute, (self.t + c, g, j, self.iteration[g][j]))
            self.computing.add((g, j))
        else:
            self._start_coflow(g, j)

    def _start_coflow(self, g: int, j: int) -> None:
        self.rem[g, j] = list(self._ports[g, j][2])
        self._emit(("coflow_start", g, j, self.iteration[g][j]))

    def _coflow_done(self, g: int, j: int) -> None:
        del self.rem[g, j]
        cojob = self.inst.cojobs[g]
        i, k = self.iteration[g][j], self.stage[g]
        self._emit(("coflow_end", g, j, i))
        if i < cojob.iterations[k]:
            self._begin_iteration(g, j)
            return
        if cojob.jobs[j].stages == k + 1:
            self.job_end[g][j] = self.t
            self._left -= 1
            self._emit(("job_end", g, j))
        self.pending[g] -= 1
        if self.pending[g] == 0:
            self.S[g][k] = self.t
            self._emit(("stage_end", g, k))
            if k + 1 < cojob.n_stages:
                self._start_stage(g, k + 1)

    def _emit(self, event: tuple) -> None:
        self.n_events += 1
        self._events.append(event)


#: The mutable state of a :class:`Simulator` and how deep a checkpoint copies it: 0 = immutable
#: value, 1 = list/set of immutables, 2 = list of lists or dict of lists, 3 = three levels.
_STATE = {"t": 0, "_left": 0, "n_events": 0, "n_alloc": 0, "stage": 1, "pending": 1,
          "iteration": 2, "rem": 2, "S": 2, "job_end": 2, "starts": 3, "stage_start": 2,
          "sent": 3, "_compute": 1, "computing": 1, "_arrivals": 1, "_events": 1, "segments": 1}


def _copied(state: dict) -> dict:
    """A copy of a checkpoint, each value to its depth in :data:`_STATE`."""
    out = {}
    for key, depth in _STATE.items():
        value = state[key]
        if depth == 1:
            value = type(value)(value)
        elif depth == 2 and isinstance(value, dict):
            value = {k: v[:] for k, v in value.items()}
        elif depth == 2:
            value = [row[:] for row in value]
        elif depth == 3:
            value = [[row[:] for row in rows] for rows in value]
        out[key] = value
    return out


@contextlib.contextmanager
def _no_gc():
    """Pause the cyclic garbage collector (if it runs) for the block. A run allocates millions of
    short-lived tuples and lists (the recorded rates, ~1.4 million at paper scale) and no reference
    cycles; the collector's passes over them cost 0.4-0.7 CPU-s of a 5-s run at paper scale and
    free nothing. Reference counting still frees everything as usual."""
    running = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if running:
            gc.enable()


def simulate(instance, policy: Policy, record: bool = True,
             deadline: Deadline | None = None) -> SimResult:
    """Run :class:`Simulator` on ``instance`` under ``policy`` (until ``deadline``, if given:
    see :meth:`Simulator.run`)."""
    return Simulator(instance, policy, record).run(deadline)


def sum_sct(instance, result: SimResult) -> float:
    """``sum_{g,k} (S_{g,k} - r_g)``: the family's objective."""
    return float(sum(s - instance.cojobs[g].arrival for g, row in enumerate(result.S) for s in row))


def schedule_of(result: SimResult, order=(), policy: str = ""):
    """The recorded run as a verifiable :class:`~optsched.problems.cojob_network.Schedule`."""
    from optsched.problems.cojob_network import Schedule, Segment
    segments = tuple(Segment(t0, t1, rates) for t0, t1, rates in result.segments)
    starts = tuple(tuple(tuple(s) for s in job) for job in result.starts)
    return Schedule(starts, segments, tuple(tuple(a) for a in order), policy)

"""cojob_network — Grouper (Zhou, Yu, Sun, IEEE TNSM 17(3) 2020; paper 003): network scheduling of
hyper-parameter-search cojobs on a big switch, minimising the sum of stage completion times (SCT).

Problem (O), paper Eqs. (1)–(12), as implemented here:

- ``P`` machines; the fabric is the paper's non-blocking *big switch* with ``P`` ingress ports
  (port ``s`` = uplink of machine ``s``) and ``P`` egress ports (port ``P + d`` = downlink of machine
  ``d``), every port of capacity ``capacity`` (1 in the paper's model). Paper-scale presets may
  describe a leaf-spine topology, but what is solved, simulated and verified is this big switch.
- cojob ``g`` arrives at ``r_g`` (0 in the offline model, Eq. (9)) and has ``K_g`` stages with
  *cumulative* iteration counts ``I_{g,1} < ... < I_{g,K_g}``; job ``j`` runs stages ``1..K_{g,j}``
  (it is killed after stage ``K_{g,j}``; successive halving), so ``J_{g,k} = {j : K_{g,j} >= k}``.
- every iteration ``i`` of job ``(g, j)`` is one coflow: the flows ``(s, d, D^{g,j}_{s,d})`` of the
  job (push and pull together), identical in every iteration; the iterations of a job are sequential
  (7) and may carry a compute gap ``c_{g,j}`` before each coflow (Fig. 15's comm/comp ratio).
- stage barrier (8), as decided for this project: all jobs of ``J_{g,k}`` start stage ``k`` at the
  same time ``t*_{g,k}``, and not before ``S_{g,k-1}`` (every job of stage ``k-1``, also those killed
  after it, must have finished: successive halving ranks all of them before it kills any).
- ``S_{g,k} = max_{j in J_{g,k}} C_{g,j,I_{g,k}}`` ((2), (3)); objective ``sum_{g,k} (S_{g,k} - r_g)``
  (= the paper's ``sum S`` offline; the average SCT is this divided by the number of stages).

A schedule is the flow-level rate timeline (piecewise constant segments, as the event-driven
simulator in :mod:`optsched.simulate.flows` produces it), the per-job stage start times ``t*`` and,
for information, the stage order ``sigma`` of the policy that made it. :func:`verify` shares no code
with the simulator: it integrates the rates and checks (5)–(11) itself.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from optsched.tolerance import NOISE, at_least, at_most, close, covers
from optsched.problems.bars import Bar
from optsched.problems.fields import (Reader, as_float, as_int, as_list, check_types, fail,
                                      infeasible, readonly, sequence)

FAMILY = "cojob_network"
FORMAT_VERSION = 1

# Resource limits (issue 15), checked when an Instance is constructed (from JSON or in Python), so no
# input makes a command hang or allocate gigabytes. The paper presets are far below them: testbed
# 23 machines, 4 cojobs x 8 jobs, 7,500 iterations, 512,000 flow instances; simulation 60 machines,
# 20 cojobs, 160 jobs, 374,400 flow instances; bytes <= 290, capacity <= 1,250, arrivals <= 511.
#: Machines P (2P switch ports).
MAX_MACHINES = 10_000
#: Cojobs, and jobs over all cojobs.
MAX_COJOBS = 10_000
MAX_JOBS = 100_000
#: Stages of one cojob, and flows of one job.
MAX_STAGES = 1_000
MAX_FLOWS = 100_000
#: Cumulative iterations of a cojob (every iteration is a coflow the simulator and verify walk).
MAX_ITERATIONS = 10_000_000
#: Flow instances (iterations x flows, summed over jobs): the events of a simulation / verify.
MAX_FLOW_INSTANCES = 5_000_000
#: Stage-load entries (stages x 2P), the size of ``Instance.loads`` and of every PDA run.
MAX_LOAD_ENTRIES = 10_000_000
#: Any number (bytes, arrival, compute gap, capacity).
MAX_VALUE = 1e12
#: The time to run everything one after the other (latest arrival + every flow instance's bytes at
#: the port capacity + every compute gap): every time a schedule holds stays far from overflow and
#: keeps ~1e-3 relative resolution in the simulator's absolute event tolerance.
MAX_HORIZON = 1e15
#: The serial horizon over the shortest flow's time at full port capacity. Times are floats: a flow
#: of duration d at time T is integrated with an error ~ T * 2.2e-16 / d relative to its bytes, which
#: must stay far below the tolerance 1e-6 of (5) (a 1e-6-byte flow arriving at t = 1e6 "sent"
#: 1.0000076e-6 bytes in the simulator's schedule, rejected by verify). Paper presets: <= 1.6e6.
MAX_TIME_RANGE = 1e8


@dataclass(frozen=True)
class Job:
    """One training job of a cojob.

    Attributes
    ----------
    stages
        ``K_{g,j}``: the job runs stages ``1..stages`` and is killed (or finishes) after that.
    flows
        Per-iteration flows ``(s, d, bytes)``: ingress machine ``s`` to egress machine ``d``
        (egress port ``P + d``); one coflow per iteration, identical across iterations.
    compute
        Compute time before each iteration's coflow (0 in the paper's model).
    """

    stages: int
    flows: tuple[tuple[int, int, float], ...]
    compute: float = 0.0

    def __post_init__(self) -> None:
        """Normalisation only: lists become tuples (so a Job is hashable). The checks need the
        machine count and the job's path, so :class:`Instance` runs them."""
        flows = _tuples(self.flows, depth=2)
        if flows is not self.flows:
            object.__setattr__(self, "flows", flows)

    def to_dict(self) -> dict:
        d = {"stages": self.stages, "flows": [[s, t, x] for s, t, x in self.flows]}
        if self.compute:
            d["compute"] = self.compute
        return d


@dataclass(frozen=True)
class Cojob:
    """A hyper-parameter-search group: arrival ``r_g``, cumulative iterations ``I_{g,k}``, jobs."""

    arrival: float
    iterations: tuple[int, ...]
    jobs: tuple[Job, ...]
    model: str = ""

    def __post_init__(self) -> None:
        """Normalisation only (lists become tuples); :class:`Instance` checks the values."""
        for key in ("iterations", "jobs"):
            value = getattr(self, key)
            if _tuples(value) is not value:
                object.__setattr__(self, key, _tuples(value))

    @property
    def n_stages(self) -> int:
        return len(self.iterations)

    def stage_iterations(self, k: int) -> int:
        """``n_{g,k}``: iterations in stage ``k`` (0-based ``k``)."""
        return self.iterations[k] - (self.iterations[k - 1] if k else 0)

    def alive(self, k: int) -> tuple[int, ...]:
        """``J_{g,k}`` (0-based ``k``): jobs that run stage ``k``."""
        return tuple(j for j, job in enumerate(self.jobs) if job.stages > k)

    def to_dict(self) -> dict:
        d = {"arrival": self.arrival, "iterations": list(self.iterations),
             "jobs": [j.to_dict() for j in self.jobs]}
        if self.model:
            d["model"] = self.model
        return d


@dataclass(frozen=True)
class Instance:
    """A Grouper instance: ``machines`` = P, port ``capacity`` and the cojobs.

    Stages are ``(g, k)`` with 0-based ``g`` and ``k`` (the paper's ``M_{g,k+1}``). Every instance,
    loaded from JSON or built in Python, is validated on construction (:meth:`__post_init__`).
    """

    machines: int
    cojobs: tuple[Cojob, ...]
    capacity: float = 1.0
    name: str = ""
    FAMILY = FAMILY

    def __post_init__(self) -> None:
        """Validate (docs/dev/design.md, "Instance JSON"): wrong type, negative size, index out of range or
        inconsistent dimensions raise InvalidInstance naming the field, e.g.
        ``instance.cojobs[0].jobs[1].flows[2][1]: must be <= 1, got 2``."""
        if _tuples(self.cojobs) is not self.cojobs:
            object.__setattr__(self, "cojobs", _tuples(self.cojobs))
        machines = as_int(self.machines, "instance.machines", min=1, max=MAX_MACHINES)
        capacity = real(self.capacity, "instance.capacity", positive=True)
        if not isinstance(self.name, str):
            fail("instance.name", f"must be a string, got {type(self.name).__name__}")
        cojobs = sequence(self.cojobs, "instance.cojobs", item=Cojob, tuple_only=True)
        if not cojobs:
            fail("instance.cojobs", "must not be empty")
        if len(cojobs) > MAX_COJOBS:
            fail("instance.cojobs", f"at most {MAX_COJOBS} cojobs (MAX_COJOBS), got {len(cojobs)}")
        for g, cojob in enumerate(cojobs):
            _validate_cojob(cojob, f"instance.cojobs[{g}]", machines)
        _check_totals(cojobs, machines, capacity)

    @property
    def n_ports(self) -> int:
        return 2 * self.machines

    @cached_property
    def stages(self) -> tuple[tuple[int, int], ...]:
        """All stages ``(g, k)``, cojob by cojob (the paper's set M, |M| = l)."""
        return tuple((g, k) for g, c in enumerate(self.cojobs) for k in range(c.n_stages))

    @cached_property
    def loads(self) -> dict[tuple[int, int], np.ndarray]:
        """``L^{g,k}_p`` over the 2P ports (paper Eq. (27) over the true survivors J_{g,k}), in
        time units at the port capacity. Read-only arrays."""
        out = {}
        for g, k in self.stages:
            out[g, k] = readonly(stage_load(self, g, k))
        return out

    def to_dict(self) -> dict:
        d = {"family": FAMILY, "format_version": FORMAT_VERSION, "machines": self.machines,
             "cojobs": [c.to_dict() for c in self.cojobs]}
        if self.capacity != 1.0:
            d["capacity"] = self.capacity
        if self.name:
            d["name"] = self.name
        return d

    @classmethod
    def from_dict(cls, data) -> "Instance":
        """Read the JSON fields (unknown/missing keys, types, list shapes) and construct; the values
        are checked by the constructor."""
        _version(data, "instance")
        r = Reader.top(data, FAMILY, FORMAT_VERSION, ("machines", "cojobs"), ("capacity", "name"))
        _precount(r.data["cojobs"])
        machines = r.int("machines")
        capacity = as_float(r.data["capacity"], "instance.capacity") if r.has("capacity") else 1.0
        cojobs = tuple(_read_cojob(cr) for cr in r.objects(
            "cojobs", ("arrival", "iterations", "jobs"), ("model",), nonempty=False))
        return cls(machines, cojobs, capacity, r.str("name") if r.has("name") else "")


def _precount(cojobs) -> None:
    """MAX_COJOBS and MAX_JOBS on the parsed lists, before any object is built (a 1e5-cojob file
    was refused only after every cojob had been read and validated)."""
    if not isinstance(cojobs, list):
        return                                        # the reader names the type
    if len(cojobs) > MAX_COJOBS:
        fail("instance.cojobs", f"at most {MAX_COJOBS} cojobs (MAX_COJOBS), got {len(cojobs)}")
    jobs = sum(len(c["jobs"]) for c in cojobs if isinstance(c, dict)
               and isinstance(c.get("jobs"), list))
    if jobs > MAX_JOBS:
        fail("instance.cojobs", f"at most {MAX_JOBS} jobs in all (MAX_JOBS), got {jobs}")


def _version(data, what: str) -> None:
    """``format_version`` must be the integer FORMAT_VERSION: ``true == 1`` in Python, so a bool
    passed the shared reader's comparison (issue 15)."""
    if isinstance(data, dict) and isinstance(data.get("format_version"), bool):
        fail(f"{what}.format_version", f"expected {FORMAT_VERSION}, got {data['format_version']!r}")


def stage_load(instance: Instance, g: int, k: int, jobs=None) -> np.ndarray:
    """Port loads of stage ``(g, k)`` (paper Eq. (27)) in time units: ``n_{g,k}`` times the bytes of
    the jobs in ``jobs`` (default: the true survivors ``J_{g,k}``), divided by the capacity."""
    cojob = instance.cojobs[g]
    load = np.zeros(instance.n_ports)
    n = cojob.stage_iterations(k)
    for j in (cojob.alive(k) if jobs is None else jobs):
        for s, d, x in cojob.jobs[j].flows:
            load[s] += n * x
            load[instance.machines + d] += n * x
    return load / instance.capacity


def _read_cojob(r: Reader) -> Cojob:
    jobs = tuple(_read_job(jr) for jr in r.objects("jobs", ("stages", "flows"), ("compute",),
                                                  nonempty=False))
    return Cojob(as_float(r.data["arrival"], r.path("arrival")), r.ints("iterations"), jobs,
                 r.str("model") if r.has("model") else "")


def _read_job(r: Reader) -> Job:
    flows = []
    for i, row in enumerate(r.list("flows")):
        where = f"{r.path('flows')}[{i}]"
        row = as_list(row, where, length=3)
        flows.append((as_int(row[0], f"{where}[0]"), as_int(row[1], f"{where}[1]"),
                      as_float(row[2], f"{where}[2]")))
    compute = as_float(r.data["compute"], r.path("compute")) if r.has("compute") else 0.0
    return Job(r.int("stages"), tuple(flows), compute)


def _tuples(value, depth: int = 1):
    """``value`` with lists turned into tuples down to ``depth`` levels (the same object when
    there is nothing to convert; anything else is left for the checks to name)."""
    if not isinstance(value, (list, tuple)):
        return value
    if type(value) is tuple and (depth == 1 or all(type(v) is tuple for v in value)) and depth <= 2:
        return value                    # the common case, fast: already tuples
    items = [_tuples(v, depth - 1) if depth > 1 else v for v in value]
    if isinstance(value, tuple) and all(a is b for a, b in zip(items, value)):
        return value
    return tuple(items)


def _checked(seg: "Segment") -> None:
    """Remember that ``seg.rates`` passed :class:`Schedule`'s checks: the very tuple object, kept
    alive by the reference, so its id cannot be reused. A tuple of tuples of ints and floats cannot
    change, so while ``seg.rates`` *is* that object a re-check (``verify`` re-runs the checks on
    every schedule it is given, issue 22 item 2) has nothing to find and skips the entries; a
    segment whose ``rates`` were replaced after construction (``object.__setattr__``) holds another
    object and is checked entry by entry again."""
    object.__setattr__(seg, "_checked", seg.rates)


def _plain_rates(rates) -> bool:
    """True when ``rates`` is a tuple of 5-tuples ``(g, j, i, f, rate)`` of ints ``g, j, f >= 0``,
    ``i >= 1`` and a finite float rate, no flow twice: what :class:`Schedule`'s per-entry checks
    accept without normalising, decided column-wise at C speed (anything else takes the loop)."""
    if type(rates) is not tuple or not rates:
        return type(rates) is tuple
    if set(map(type, rates)) != {tuple} or set(map(len, rates)) != {5}:
        return False
    g, j, i, f, rate = zip(*rates)
    if set(map(type, g + j + i + f)) != {int} or set(map(type, rate)) != {float}:
        return False
    return (min(g) >= 0 and min(j) >= 0 and min(i) >= 1 and min(f) >= 0
            and all(map(math.isfinite, rate)) and len(set(zip(g, j, i, f))) == len(rates))


#: :func:`~optsched.problems.fields.as_float` within MAX_VALUE (a field built in Python).
real = functools.partial(as_float, max_value=MAX_VALUE)


def _check_totals(cojobs: tuple, machines: int, capacity: float) -> None:
    """The instance-wide limits (MAX_JOBS, MAX_FLOW_INSTANCES, MAX_LOAD_ENTRIES, MAX_HORIZON)."""
    jobs = sum(len(c.jobs) for c in cojobs)
    if jobs > MAX_JOBS:
        fail("instance.cojobs", f"at most {MAX_JOBS} jobs in all (MAX_JOBS), got {jobs}")
    stages = sum(len(c.iterations) for c in cojobs)
    if stages * 2 * machines > MAX_LOAD_ENTRIES:
        fail("instance.cojobs", f"{stages} stages x {2 * machines} ports = "
                                f"{stages * 2 * machines} stage loads > {MAX_LOAD_ENTRIES} "
                                f"(MAX_LOAD_ENTRIES)")
    instances, horizon = 0, max(c.arrival for c in cojobs)
    smallest, where = math.inf, ""
    for g, c in enumerate(cojobs):
        for j, job in enumerate(c.jobs):
            n = c.iterations[job.stages - 1]
            instances += n * len(job.flows)
            horizon += n * (sum(x for _, _, x in job.flows) / capacity + job.compute)
            for f, (_, _, x) in enumerate(job.flows):
                if x < smallest:
                    smallest, where = x, f"instance.cojobs[{g}].jobs[{j}].flows[{f}][2]"
    if instances > MAX_FLOW_INSTANCES:
        fail("instance.cojobs", f"{instances} flow instances (iterations x flows) > "
                                f"{MAX_FLOW_INSTANCES} (MAX_FLOW_INSTANCES)")
    if not horizon <= MAX_HORIZON:
        fail("instance.cojobs", f"serial horizon (arrival + bytes / capacity + compute gaps) "
                                f"{horizon:g} > {MAX_HORIZON:g} (MAX_HORIZON)")
    if horizon > MAX_TIME_RANGE * (smallest / capacity):
        fail(where, f"{smallest:g} bytes take {smallest / capacity:g} at full capacity, less than "
                    f"the serial horizon {horizon:g} / {MAX_TIME_RANGE:g} (MAX_TIME_RANGE): times "
                    f"would lose the resolution verify needs")


def _validate_cojob(cojob: Cojob, where: str, machines: int) -> None:
    real(cojob.arrival, f"{where}.arrival", min=0.0)
    iterations = sequence(cojob.iterations, f"{where}.iterations", tuple_only=True)
    if not iterations:
        fail(f"{where}.iterations", "must not be empty")
    if len(iterations) > MAX_STAGES:
        fail(f"{where}.iterations", f"at most {MAX_STAGES} stages (MAX_STAGES), got "
                                    f"{len(iterations)}")
    for k, n in enumerate(iterations):
        as_int(n, f"{where}.iterations[{k}]", min=1, max=MAX_ITERATIONS)
        if k and n <= iterations[k - 1]:
            fail(f"{where}.iterations[{k}]",
                 f"cumulative iterations must increase, got {n} after {iterations[k - 1]}")
    jobs = sequence(cojob.jobs, f"{where}.jobs", item=Job, tuple_only=True)
    if not jobs:
        fail(f"{where}.jobs", "must not be empty")
    for j, job in enumerate(jobs):
        _validate_job(job, f"{where}.jobs[{j}]", machines, len(iterations))
    if max(j.stages for j in jobs) != len(iterations):
        fail(f"{where}.jobs", f"no job runs the last stage {len(iterations)} (max stages "
                              f"{max(j.stages for j in jobs)})")
    if not isinstance(cojob.model, str):
        fail(f"{where}.model", f"must be a string, got {type(cojob.model).__name__}")


def _validate_job(job: Job, where: str, machines: int, n_stages: int) -> None:
    as_int(job.stages, f"{where}.stages", min=1, max=n_stages)
    flows = sequence(job.flows, f"{where}.flows", tuple_only=True)
    if not flows:
        fail(f"{where}.flows", "must not be empty")
    if len(flows) > MAX_FLOWS:
        fail(f"{where}.flows", f"at most {MAX_FLOWS} flows (MAX_FLOWS), got {len(flows)}")
    seen = set()
    for i, row in enumerate(flows):
        at = f"{where}.flows[{i}]"
        row = sequence(row, at, tuple_only=True)
        if len(row) != 3:
            fail(at, f"must have 3 entries, got {len(row)}")
        s = as_int(row[0], f"{at}[0]", min=0, max=machines - 1)
        d = as_int(row[1], f"{at}[1]", min=0, max=machines - 1)
        real(row[2], f"{at}[2]", positive=True)
        if (s, d) in seen:
            fail(at, f"duplicate flow {s}->{d}")
        seen.add((s, d))
    real(job.compute, f"{where}.compute", min=0.0)


# ----------------------------------------------------------------------------------------------------
# Schedule


@dataclass(frozen=True)
class Segment:
    """Rates constant on ``[t0, t1)``: ``rates`` holds ``(g, j, i, f, rate)`` for flow ``f`` (index into
    the job's ``flows``) of iteration ``i`` (1-based, cumulative over stages) of job ``(g, j)``."""

    t0: float
    t1: float
    rates: tuple[tuple[int, int, int, int, float], ...]

    def __post_init__(self) -> None:
        """Normalisation only (lists become tuples); :class:`Schedule` checks the shape."""
        rates = _tuples(self.rates, depth=2)
        if rates is not self.rates:
            object.__setattr__(self, "rates", rates)


@dataclass(frozen=True)
class Schedule:
    """A flow-level schedule.

    Attributes
    ----------
    starts
        ``starts[g][j][k]``: stage start ``t*`` of job ``j`` in stage ``k`` (for ``k < K_{g,j}``).
    segments
        The rate timeline, sorted and non-overlapping.
    order
        Stage priority order ``sigma`` of the policy (highest first); empty if the policy has none.
    policy
        Name of the rate-allocation policy (information only).
    """

    starts: tuple[tuple[tuple[float, ...], ...], ...]
    segments: tuple[Segment, ...]
    order: tuple[tuple[int, int], ...] = ()
    policy: str = ""
    FAMILY = FAMILY

    def __post_init__(self) -> None:
        """Validate every value, built in Python or read from JSON (issue 15; lists become tuples):
        times (starts, segment ends) finite and >= 0, rates finite, indices integers (not bool)
        >= 0 (iterations >= 1), no duplicate stage in ``order`` and no flow twice in one segment.
        Messages name the field and index (``schedule.starts[0][1][0]: must be finite, got nan``).
        Feasibility (ranges against the instance, negative rates (12), capacities, releases) is
        :func:`verify`'s job, so it can name the equation at fault."""
        for key, depth in (("starts", 3), ("segments", 1), ("order", 2)):
            value = getattr(self, key)
            if _tuples(value, depth) is not value:
                object.__setattr__(self, key, _tuples(value, depth))
        for g, jobs in enumerate(sequence(self.starts, "schedule.starts", tuple_only=True)):
            for j, row in enumerate(sequence(jobs, f"schedule.starts[{g}]", tuple_only=True)):
                for k, t in enumerate(sequence(row, f"schedule.starts[{g}][{j}]", tuple_only=True)):
                    _time(t, f"schedule.starts[{g}][{j}][{k}]")
        seen: set = set()
        for i, a in enumerate(sequence(self.order, "schedule.order", tuple_only=True)):
            if len(sequence(a, f"schedule.order[{i}]", tuple_only=True)) != 2:
                fail(f"schedule.order[{i}]", f"must have 2 entries, got {len(a)}")
            a = tuple(as_int(v, f"schedule.order[{i}][{q}]", min=0) for q, v in enumerate(a))
            if a in seen:
                fail(f"schedule.order[{i}]", f"duplicate stage {list(a)}")
            seen.add(a)
        for n, seg in enumerate(sequence(self.segments, "schedule.segments", item=Segment, tuple_only=True)):
            _time(seg.t0, f"schedule.segments[{n}][0]")
            _time(seg.t1, f"schedule.segments[{n}][1]")
            if seg.__dict__.get("_checked") is seg.rates or _plain_rates(seg.rates):
                _checked(seg)           # well-formed, nothing to normalise: the loop has no work
                continue
            keys: set = set()
            rates = list(sequence(seg.rates, f"schedule.segments[{n}][2]", tuple_only=True))
            normal = False
            for q, x in enumerate(rates):  # the hot loop of a re-check: no work when all is well
                if type(x) is not tuple or len(x) != 5:
                    fail(f"schedule.segments[{n}][2][{q}]", f"must have 5 entries, got {x!r}")
                g, j, i, f, rate = x
                if not (type(g) is type(j) is type(i) is type(f) is int
                        and g >= 0 and j >= 0 and i >= 1 and f >= 0):
                    at = f"schedule.segments[{n}][2][{q}]"
                    g, j, i, f = (as_int(v, f"{at}[{p}]", min=1 if p == 2 else 0)
                                  for p, v in enumerate(x[:4]))   # numpy / 1.0 -> int
                    rates[q], normal = (g, j, i, f, rate), True
                if type(rate) is not float or not -math.inf < rate < math.inf:
                    rate = as_float(rate, f"schedule.segments[{n}][2][{q}][4]")
                    rates[q], normal = (g, j, i, f, rate), True
                flow = (g, j, i, f)
                if flow in keys:
                    fail(f"schedule.segments[{n}][2][{q}]", f"duplicate flow {list(flow)} in one "
                                                            "segment")
                keys.add(flow)
            if normal:  # normalisation of the frozen field (indices are used as indices)
                object.__setattr__(seg, "rates", tuple(rates))
            _checked(seg)
        if not isinstance(self.policy, str):
            fail("schedule.policy", f"must be a string, got {type(self.policy).__name__}")

    def to_dict(self) -> dict:
        return {"family": FAMILY, "format_version": FORMAT_VERSION, "policy": self.policy,
                "order": [list(a) for a in self.order],
                "starts": [[list(s) for s in job] for job in self.starts],
                "segments": [[s.t0, s.t1, [list(x) for x in s.rates]] for s in self.segments]}

    @classmethod
    def from_dict(cls, data) -> "Schedule":
        _version(data, "schedule")
        r = Reader.top(data, FAMILY, FORMAT_VERSION, ("starts", "segments"), ("order", "policy"),
                       what="schedule")
        order = tuple(_read_pair(a, f"schedule.order[{i}]")
                      for i, a in enumerate(r.list("order") if r.has("order") else []))
        starts = tuple(
            tuple(tuple(as_float(t, f"schedule.starts[{g}][{j}][{k}]", min=0.0)
                        for k, t in enumerate(as_list(st, f"schedule.starts[{g}][{j}]")))
                  for j, st in enumerate(as_list(js, f"schedule.starts[{g}]")))
            for g, js in enumerate(r.list("starts")))
        segments = tuple(_read_segment(s, f"schedule.segments[{n}]")
                         for n, s in enumerate(r.list("segments")))
        policy = r.str("policy") if r.has("policy") else ""
        return cls(starts, segments, order, policy)


def _time(value, where: str) -> None:
    """A finite number >= 0 (int or float, not bool)."""
    if type(value) is not float or not 0 <= value < math.inf:
        as_float(value, where, min=0.0)


def _read_pair(row, where: str) -> tuple[int, int]:
    a, b = as_list(row, where, length=2)
    return as_int(a, f"{where}[0]", min=0), as_int(b, f"{where}[1]", min=0)


def _read_segment(row, where: str) -> Segment:
    row = as_list(row, where, length=3)
    t0 = as_float(row[0], f"{where}[0]", min=0.0)
    t1 = as_float(row[1], f"{where}[1]", min=0.0)
    rates = []
    for q, x in enumerate(as_list(row[2], f"{where}[2]")):
        x = as_list(x, f"{where}[2][{q}]", length=5)
        g, j, i, f = (as_int(v, f"{where}[2][{q}][{n}]", min=0) for n, v in enumerate(x[:4]))
        rates.append((g, j, i, f, as_float(x[4], f"{where}[2][{q}][4]")))
    return Segment(t0, t1, tuple(rates))


# ----------------------------------------------------------------------------------------------------
# Independent checker


def verify(instance: Instance, schedule: Schedule) -> float:
    """Check the rate timeline against (O) and return ``sum_{g,k} (lam * S_{g,k} - r_g)``, the
    objective of an *exactly* feasible schedule derived from this one (``lam = 1`` unless the
    schedule uses more than float-noise slack; see "Slack" below).

    Checks, in this order: rates non-negative (12) and ports within capacity (10)–(11) in every
    segment; every flow of every iteration the job runs delivers exactly its bytes (5); no flow sends
    before its iteration's release (6): the previous iteration's completion plus the compute gap (7),
    or, for a stage's first iteration, the stage start ``t*`` plus the gap; ``t*`` equal for all jobs
    of the stage (8), not before ``S_{g,k-1}`` nor the arrival (9). ``S_{g,k}`` is recomputed by (2)–(4).

    Tolerances are those of :mod:`optsched.tolerance`, applied to scale-free quantities where the
    quantity has a unit of its own: a port load is compared with its capacity as ``load / capacity
    <= 1`` and the bytes of a flow as ``sent / size`` against 1 (relative, so rescaling bytes or
    capacity never widens what is accepted; an absolute floor on bytes let a flow of 0.001 bytes
    stop 0.1% early); time points (segment order, releases, barrier) use ``at_least``/``close``.
    Every time, start and rate must be a finite number (a NaN start compared false everywhere and
    silently disabled the barrier (8) and the releases (6)-(7)).

    Slack: it is charged back, so it never lowers the objective below what an exactly feasible
    schedule achieves (issue 13 class: each tolerance alone is small, but along a chain of
    iterations and stages they added up; ``fig3.json``, proven optimum 26, verified at 25.99990709
    with the old rule, ``tests/data/cojob_network/issue13_slack_chain_fig3.json``):

    1. *Time slack becomes byte slack.* Time relations are evaluated exactly on effective times:
       a segment that starts within the tolerance before the previous one ended counts from that
       end; the stage start of (g, k) is ``t*_eff = max(max_j t*_{g,j,k}, S_{g,k-1})`` (``r_g``
       for k = 1), the same for every job (8); bytes a flow sends before its release (computed from
       ``t*_eff`` and the true completions) do not count towards (5). So the counted transmission
       satisfies (6)–(9) exactly, and all that remains of a tolerated early start is a byte
       shortfall.
    2. *Rate and byte slack are charged by a time scaling.* Let ``a`` be the largest relative port
       overload and ``b`` the largest relative shortfall of counted bytes (both >= 0, each at most
       ``REL`` when accepted). Dividing every rate by ``1 + a`` and multiplying every time by
       ``(1 + a) / (1 - b)`` gives a schedule that meets the capacities and every byte count
       exactly, keeps every release, barrier and arrival (times only grow, by a factor >= 1), and
       completes stage (g, k) by that factor times ``S_{g,k}``. The charged factor ignores float
       noise: ``lam = (1 + a') / (1 - b')`` with ``a' = max(0, a - NOISE)`` and
       ``b' = max(0, b - NOISE)``
       (:data:`optsched.tolerance.NOISE` = 1e-9; simulated schedules have ``b <= ~1e-9``, the
       simulator's byte cut-off, so their objective is the plain ``sum (S_{g,k} - r_g)``).

    Bound: the returned ``sum (lam * S_{g,k} - r_g) >= OPT - 2.1 * NOISE * sum S_{g,k}`` (up to
    float rounding of the sums), whatever the number of iterations, stages or segments, i.e.
    ``>= OPT * (1 - 2.1e-9)`` offline (``r_g = 0``), far above ``OPT * (1 - REL)``. The charge
    ``(lam - 1) sum S_{g,k}`` is at most ``~2 REL`` relative and 0 for an exactly feasible schedule.

    Raises
    ------
    InfeasibleSchedule
        Naming the violated equation, e.g. ``"(11) port 0 at [2, 3): load 1.5 > capacity 1"``.
    """
    check_types(instance, schedule, FAMILY, Instance, Schedule, qualified=False)
    Schedule.__post_init__(schedule)  # re-check: a frozen dataclass can still be patched (issue 22)
    _check_starts_shape(instance, schedule)
    _check_order(instance, schedule)
    tl = _timeline(instance, schedule)
    stage_done = completion_times(instance, schedule, tl.finish)
    eff = _stage_starts(instance, schedule, stage_done)
    short = 0.0
    for g, cojob in enumerate(instance.cojobs):
        for j in range(len(cojob.jobs)):
            short = max(short, _check_job(instance, g, j, tl, eff, schedule))
    lam = (1.0 + max(0.0, tl.overload - NOISE)) / (1.0 - max(0.0, short - NOISE))
    plain = sum(s - instance.cojobs[g].arrival for g, row in enumerate(stage_done) for s in row)
    charge = (lam - 1.0) * sum(s for row in stage_done for s in row)
    return float(plain + charge)


def stage_completion_times(instance: Instance, schedule: Schedule) -> list[list[float]]:
    """``S_{g,k}`` of a schedule (no feasibility check beyond what integrating the rates needs)."""
    check_types(instance, schedule, FAMILY, Instance, Schedule, qualified=False)
    _check_starts_shape(instance, schedule)
    return completion_times(instance, schedule, _timeline(instance, schedule).finish)


def completion_times(instance: Instance, schedule: Schedule, finish: dict) -> list[list[float]]:
    """(2)–(4): ``S_{g,k}`` = latest completion of the last iteration of stage k over ``J_{g,k}``."""
    out = []
    for g, cojob in enumerate(instance.cojobs):
        row = []
        for k in range(cojob.n_stages):
            i = cojob.iterations[k]
            row.append(max(_coflow_done(instance, finish, g, j, i) for j in cojob.alive(k)))
        out.append(row)
    return out


def _coflow_done(instance: Instance, finish: dict, g: int, j: int, i: int) -> float:
    flows = instance.cojobs[g].jobs[j].flows
    done: list[float] = []
    for f in range(len(flows)):
        t = finish.get((g, j, i, f))
        if t is None:
            infeasible(f"(5) flow {f} of iteration {i} of job ({g},{j}) never sends")
        done.append(t)
    return max(done)


def _check_order(instance: Instance, schedule: Schedule) -> None:
    """``order`` (sigma) names each stage of the instance at most once (unknown stages and
    duplicates were accepted)."""
    known = set(instance.stages)
    seen: set = set()
    for i, a in enumerate(schedule.order):
        if a not in known:
            infeasible(f"(sigma) order[{i}] = {list(a)} is not a stage of the instance")
        if a in seen:
            infeasible(f"(sigma) order[{i}] = {list(a)} is a duplicate stage")
        seen.add(a)


def _check_starts_shape(instance: Instance, schedule: Schedule) -> None:
    if len(schedule.starts) != len(instance.cojobs):
        infeasible(f"(8) starts has {len(schedule.starts)} cojobs, instance {len(instance.cojobs)}")
    for g, cojob in enumerate(instance.cojobs):
        if len(schedule.starts[g]) != len(cojob.jobs):
            infeasible(f"(8) starts[{g}] has {len(schedule.starts[g])} jobs, need {len(cojob.jobs)}")
        for j, job in enumerate(cojob.jobs):
            if len(schedule.starts[g][j]) != job.stages:
                infeasible(f"(8) starts[{g}][{j}] has {len(schedule.starts[g][j])} stages, "
                            f"job runs {job.stages}")
            for k, t in enumerate(schedule.starts[g][j]):
                if not math.isfinite(t):
                    infeasible(f"(8) starts[{g}][{j}][{k}] is {t}, not a finite time")


@dataclass
class _Timeline:
    """What :func:`_timeline` found, per flow instance ``(g, j, i, f)``: the first effective time
    and segment with a positive rate, the last such end time, and the bytes sent; per segment the
    effective start (clipped to the previous end); the largest relative port overload ``a``."""

    first: dict
    first_seg: dict
    finish: dict
    sent: dict
    t0: list
    overload: float


def flow_times(instance: Instance, schedule: Schedule):
    """Per flow instance: first effective time with positive rate, last such end time, bytes sent
    (the :class:`_Timeline` fields ``first``, ``finish``, ``sent``; models/cojob_network.py reads
    the completions)."""
    tl = _timeline(instance, schedule)
    return tl.first, tl.finish, tl.sent


def _timeline(instance: Instance, schedule: Schedule) -> _Timeline:
    """Integrate the rates over the effective segments ``[max(t0, previous end), t1)``: a segment
    may start within the tolerance before the previous one ended (``at_least``), but the overlap
    sends nothing, so no port carries two segments' rates at once (see :func:`verify`, 1.).

    Port loads are summed in a list in the order of the rates (the same additions as the numpy
    version had); a flow known to the instance with a finite rate >= 0 takes the fast path, any
    other entry the checks that name the fault. A flow instance that has sent before keeps its
    two ports beside its sums, so its later entries need one look-up (their rate is still
    checked); the sums are the same additions in the same order."""
    tl = _Timeline({}, {}, {}, {}, [], 0.0)
    state: dict = {}    # flow instance -> [first t0, first segment, finish, sent, in port, out port]
    ports = _flow_ports(instance)
    n_ports, inf = instance.n_ports, math.inf
    last_end = 0.0
    for n, seg in enumerate(schedule.segments):
        if not (math.isfinite(seg.t0) and math.isfinite(seg.t1)):
            infeasible(f"(12) segment {n} [{seg.t0:g}, {seg.t1:g}) has a non-finite time")
        if seg.t1 < seg.t0 or not at_least(seg.t0, last_end):
            infeasible(f"(12) segment {n} [{seg.t0:g}, {seg.t1:g}) is empty-negative or overlaps "
                        f"the previous one")
        t0 = max(seg.t0, last_end)
        t1 = seg.t1
        tl.t0.append(t0)
        last_end = max(last_end, t1)
        port = [0.0] * n_ports
        width = t1 - t0
        sends = t1 > t0
        for g, j, i, f, rate in seg.rates:
            st = state.get((g, j, i, f))
            if st is not None and 0.0 <= rate < inf:    # a flow instance seen (and checked) before
                port[st[4]] += rate
                port[st[5]] += rate
                if rate > 0 and sends:
                    st[2] = t1
                    st[3] += rate * width
                continue
            known = ports.get((g, j, f))
            if known is None or not 1 <= i <= known[2] or not 0.0 <= rate < inf:
                _check_rate(instance, g, j, i, f, rate, n)
                known = ports[g, j, f]
            port[known[0]] += rate
            port[known[1]] += rate
            if rate > 0 and sends:
                state[g, j, i, f] = [t0, n, t1, 0.0 + rate * width, known[0], known[1]]
        tl.overload = max(tl.overload, _check_ports(instance, port, seg))
    for key, (t_first, n_first, t_end, got, _, _) in state.items():
        tl.first[key], tl.first_seg[key], tl.finish[key], tl.sent[key] = t_first, n_first, t_end, got
    return tl


def _flow_ports(instance: Instance) -> dict:
    """``(g, j, f) -> (ingress port, egress port, last iteration)`` of every flow."""
    P = instance.machines
    return {(g, j, f): (s, P + d, cojob.iterations[job.stages - 1])
            for g, cojob in enumerate(instance.cojobs) for j, job in enumerate(cojob.jobs)
            for f, (s, d, _) in enumerate(job.flows)}


def _check_rate(instance: Instance, g, j, i, f, rate, n: int) -> None:
    """(5), (12) for one rate entry of segment ``n``: the flow exists, the rate is finite, >= 0."""
    _flow(instance, g, j, i, f, n)
    if not math.isfinite(rate):
        infeasible(f"(12) flow ({g},{j},{i},{f}) has rate {rate:g} in segment {n}")
    if rate < 0:
        infeasible(f"(12) flow ({g},{j},{i},{f}) has rate {rate:g} < 0 in segment {n}")


def _sent_before(schedule: Schedule, tl: _Timeline, key: tuple, release: float) -> float:
    """Bytes flow instance ``key`` sends before ``release`` (only called when it starts earlier,
    within the tolerance, so the walk covers the few segments of that window)."""
    out = 0.0
    for n in range(tl.first_seg[key], len(schedule.segments)):
        seg, t0 = schedule.segments[n], tl.t0[n]
        if t0 >= release:
            break
        rate = next((x[4] for x in seg.rates if x[:4] == key), 0.0)
        if rate > 0 and seg.t1 > t0:
            out += rate * (min(seg.t1, release) - t0)
    return out


def _flow(instance: Instance, g: int, j: int, i: int, f: int, n: int):
    cojobs = instance.cojobs
    if not (0 <= g < len(cojobs) and 0 <= j < len(cojobs[g].jobs)
            and 0 <= f < len(cojobs[g].jobs[j].flows)):          # negative indices wrapped
        infeasible(f"(5) segment {n} names flow ({g},{j},{i},{f}), which does not exist")
    job = cojobs[g].jobs[j]
    flow = job.flows[f]
    if not 1 <= i <= instance.cojobs[g].iterations[job.stages - 1]:
        infeasible(f"(5) segment {n}: job ({g},{j}) has no iteration {i}")
    return flow


def _check_ports(instance: Instance, port: list[float], seg: Segment) -> float:
    """(10)–(11) within the tolerance; returns the relative overload ``max(0, load / cap - 1)``."""
    if not len(port):
        return 0.0
    top = max(port)
    p = port.index(top)                                            # the first heaviest port
    use = top / instance.capacity
    if not at_most(use, 1.0):                                      # all ports have one capacity
        eq = "(11)" if p < instance.machines else "(10)"
        kind = "ingress" if p < instance.machines else "egress"
        infeasible(f"{eq} {kind} port {p} at [{seg.t0:g}, {seg.t1:g}): load {port[p]:.9g} > "
                    f"capacity {instance.capacity:g}")
    return max(0.0, use - 1.0)


def _stage_starts(instance: Instance, schedule: Schedule, stage_done) -> list[list[float]]:
    """(8)–(9) on the declared starts (within the tolerance) and the effective stage starts
    ``t*_eff[g][k]`` (:func:`verify`, 1.)."""
    out = []
    for g, cojob in enumerate(instance.cojobs):
        row = []
        for k in range(cojob.n_stages):
            row.append(max(_check_stage_start(instance, schedule, g, j, k, stage_done)
                           for j in cojob.alive(k)))
        out.append(row)
    return out


def _check_job(instance, g, j, tl: _Timeline, eff, schedule) -> float:
    """(5)–(9) for job ``(g, j)`` on effective times (:func:`verify`, 1.); returns the largest
    relative shortfall ``1 - counted / size`` of its flows (0 if none is short)."""
    cojob = instance.cojobs[g]
    job = cojob.jobs[j]
    prev_done, short = None, 0.0
    for k in range(job.stages):
        start = eff[g][k]
        first_i = (cojob.iterations[k - 1] if k else 0) + 1
        for i in range(first_i, cojob.iterations[k] + 1):
            release = (start if i == first_i else prev_done) + job.compute
            for f, (_, _, size) in enumerate(job.flows):
                key = (g, j, i, f)
                got = tl.sent.get(key, 0.0)
                counted = got
                if key in tl.first and tl.first[key] < release:
                    if not at_least(tl.first[key], release):
                        eq = "(6)-(7)" if i > first_i else "(6)-(8)"
                        infeasible(f"{eq} flow {f} of iteration {i} of job ({g},{j}) sends at "
                                    f"{tl.first[key]:g} before its release {release:g}")
                    counted = got - _sent_before(schedule, tl, key, release)
                if not (covers(counted / size, 1.0) and at_most(got / size, 1.0)):
                    early = f" after its release ({got:.9g} in all)" if counted != got else ""
                    infeasible(f"(5) flow {f} of iteration {i} of job ({g},{j}) sends "
                                f"{counted:.9g} of {size:g} bytes{early}")
                short = max(short, 1.0 - counted / size)
            prev_done = max(tl.finish[g, j, i, f] for f in range(len(job.flows)))
    return short


def _check_stage_start(instance, schedule, g, j, k, stage_done) -> float:
    """(8)–(9) for job ``j``'s declared ``t*`` within the tolerance; returns
    ``max(t*_{g,j,k}, S_{g,k-1} or r_g)`` (the stage's ``t*_eff`` is the largest over its jobs)."""
    cojob = instance.cojobs[g]
    start = schedule.starts[g][j][k]
    ref = cojob.alive(k)[0]
    other = schedule.starts[g][ref][k]
    if not close(start, other):
        infeasible(f"(8) cojob {g} stage {k + 1}: job {j} starts at {start:g}, job {ref} at {other:g}")
    earliest = stage_done[g][k - 1] if k else cojob.arrival
    if not at_least(start, earliest):
        eq = "(8)" if k else "(9)"
        infeasible(f"{eq} cojob {g} stage {k + 1}: job {j} starts at {start:g} before "
                    f"{'S_{g,k-1}' if k else 'arrival'} = {earliest:g}")
    return max(earliest, start)



BAR_JOB = "cojob"  # what a bar colour of bars() stands for (the legend of optsched plot)


def bars(instance: Instance, schedule: Schedule) -> list:
    """Gantt bars for ``optsched plot``: one row per switch port (``in s`` = uplink of machine
    ``s``, ``out d`` = downlink of machine ``d``), one bar per maximal interval in which stage ``k``
    of cojob ``g`` sends on that port at a positive rate (contiguous segments merged), coloured by
    cojob and labelled ``s<k>`` (1-based, as the paper). Cojobs sharing a port at once are drawn in
    lanes. No feasibility check."""
    from bisect import bisect_left


    P = instance.machines
    names = [f"in {p}" for p in range(P)] + [f"out {p}" for p in range(P)]
    out = [Bar(name, 0.0, 0.0, -1) for name in names]
    open_: dict[tuple[int, int, int], list[float]] = {}  # (port, g, stage) -> [start, end]
    for seg in schedule.segments:
        active = set()
        for g, j, i, f, rate in seg.rates:
            if rate > 0 and seg.t1 > seg.t0:
                s, d, _ = instance.cojobs[g].jobs[j].flows[f]
                k = bisect_left(instance.cojobs[g].iterations, i)  # stage of iteration i
                active |= {(s, g, k), (P + d, g, k)}
        for key in active:
            run = open_.get(key)
            if run is not None and close(run[1], seg.t0):
                run[1] = seg.t1
                continue
            if run is not None:
                out.append(Bar(names[key[0]], run[0], run[1], key[1], f"s{key[2] + 1}"))
            open_[key] = [seg.t0, seg.t1]
    out += [Bar(names[p], a, b, g, f"s{k + 1}") for (p, g, k), (a, b) in open_.items()]
    return out

"""The typed :class:`Family` object: the only way the rest of optsched learns about a family.

Each family's solvers module ends with one ``SPEC = Family(...)``; :mod:`optsched.registry`
collects them. Adding a family means writing ``problems/<f>.py``, ``workloads/<f>.py``,
``models/<f>.py``, ``solvers/<f>.py`` and that one object (tests/test_family.py registers a toy
single-machine family end to end).
"""

from __future__ import annotations

import functools
import numbers
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

import numpy as np

from optsched.errors import InvalidInstance, UnknownMethod
from optsched.method import Method
from optsched.result import Outcome


class ProblemModule(Protocol):
    """What ``optsched.problems.<family>`` provides (docs/dev/design.md, "Contracts")."""

    @property
    def FAMILY(self) -> str: ...

    @property
    def Instance(self) -> Any: ...

    @property
    def Schedule(self) -> Any: ...

    def verify(self, instance: Any, schedule: Any) -> float: ...

    def bars(self, instance: Any, schedule: Any) -> list[Any]:
        """The schedule as :class:`optsched.problems.bars.Bar` s, one per busy interval of a device (GPU,
        server, port): what ``optsched plot`` draws. No feasibility check."""
        ...


class WorkloadModule(Protocol):
    """What ``optsched.workloads.<family>`` provides: presets and a seeded generator."""

    @property
    def PRESETS(self) -> tuple[str, ...]: ...

    def generate(self, preset: str = ..., seed: int = ..., **overrides: Any) -> Any: ...


@dataclass(frozen=True)
class CompareSpec:
    """How ``optsched compare`` runs a family at paper scale.

    Attributes
    ----------
    methods
        Names to run (None: every ``algorithm`` and ``baseline`` method).
    reference
        The method objectives are normalised by (None: the family's default method).
    bound
        The bound method shown beside them as ALG/LB (None: ``lower_bound`` if registered).
    title, ylabel
        Figure labels (None: generated).
    """

    methods: tuple[str, ...] | None = None
    reference: str | None = None
    bound: str | None = None
    title: str | None = None
    ylabel: str | None = None


@dataclass(frozen=True)
class CertifySpec:
    """How :func:`optsched.certificate.certify` proves an interval [LB, UB] on a family's optimum
    (issue 19).

    Attributes
    ----------
    bound
        The registered ``bound`` method giving the lower side (any-time: valid whenever it
        stops); None: :meth:`Family.bound_method`.
    improve
        ``improve(instance, start, *, deadline, seed) -> Outcome``: re-optimises neighbourhoods of
        the verified schedule ``start`` (the upper side); its schedule is never worse than
        ``start`` and is verified again by certify. None: the heuristics' best is the upper side.
        If it accepts ``goal=`` it gets the best bound (stop once met); if it accepts ``guide=``
        it gets the last :attr:`~optsched.result.Outcome.guide` an earlier step returned (None
        when none did), so nothing has to be cached per instance between the steps.
    starts
        The methods whose schedules start the upper side (None: every ``algorithm`` and
        ``baseline`` method that is not relaxed).
    fallback
        Methods run in turn, each with all the time left, only while no verified schedule exists
        after the exact, bound and start steps (certify must end with a schedule: a family whose
        exact step is its only start can lose it to the load).
    bound_share
        Share of the time left after the exact step that the bound may use (None:
        :data:`optsched.certificate.BOUND_SHARE`); a family whose improvement converges fast
        and whose bound is the slow side gives the bound more.
    """

    bound: str | None = None
    improve: Callable[..., Outcome] | None = None
    starts: tuple[str, ...] | None = None
    fallback: tuple[str, ...] = ()
    bound_share: float | None = None


class MutationProfile(Protocol):
    """What a mutation operator may ask of the generator's profile (``optsched worst``)."""

    def list_range(self, pattern: str, grows: tuple[str, ...]) -> tuple[int, int]:
        """(min, max) length a list matching ``pattern`` may have."""
        ...


class MutationContext(Protocol):
    """The ``ctx`` of a mutation operator ``op(doc, ctx) -> doc | None``: the generator's
    profile, the list patterns the size measure counts, the run's random generator."""

    @property
    def profile(self) -> MutationProfile: ...

    @property
    def grows(self) -> tuple[str, ...]: ...

    @property
    def rng(self) -> np.random.Generator: ...


#: A mutation operator of ``optsched worst``: changes the instance document in place and returns
#: it, or returns None when it does not apply.
Mutation = Callable[[dict, MutationContext], "dict | None"]


@dataclass(frozen=True)
class Claim:
    """A paper statement other than the approximation ratio, checkable on one run of a method
    (a lemma, or a subroutine's optimality); ``optsched worst --target lemma:NAME`` searches for
    instances that break it.

    Attributes
    ----------
    name
        Short name (``lemma3``), unique within the family.
    text
        The statement and where the paper makes it (equation / lemma number).
    methods
        The methods whose runs it is about (``check`` is called only on their results).
    check
        ``check(instance, result) -> float | None``: the violation factor on this run
        (claimed side / allowed side; > 1 means the statement fails), None when it does not
        apply. ``result`` is the verified :class:`~optsched.result.Result` of one of
        ``methods``; a check that needs the algorithm's internal quantities recomputes them from
        the instance and the method's parameters (it never changes the algorithm).
    grade
        Optional ``grade(instance, result) -> float | None``: how close the run is to breaking
        the statement where ``check`` cannot tell (the factor sits at exactly 1 on whole
        regions: a rounded quantity, or a cost that ties). Larger is closer; only comparable
        between runs of the same claim. It guides ``optsched worst``'s search as a secondary
        key on ties of the factor and is never counted as a violation (``check`` alone
        decides). Called right after ``check`` on the same two objects, so a claim may compute
        both in one pass (:func:`last_call`).
    """

    name: str
    text: str
    methods: tuple[str, ...]
    check: Callable[[Any, Any], "float | None"]
    grade: Callable[[Any, Any], "float | None"] | None = None


def last_call(fn: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """``fn(instance, result)`` remembered for its last two arguments (by identity, holding
    them so the ids stay theirs): what a :class:`Claim`'s ``check`` and ``grade`` share when
    both come from one costly pass (an exact solve, a replay)."""
    last: list = []

    @functools.wraps(fn)
    def wrapped(instance: Any, result: Any) -> Any:
        if last and last[0] is instance and last[1] is result:
            return last[2]
        value = fn(instance, result)
        last[:] = [instance, result, value]
        return value

    return wrapped


@dataclass(frozen=True)
class WorstSpec:
    """How ``optsched worst`` measures and mutates a family's instance documents.

    Attributes
    ----------
    what
        What the size measure counts ("jobs", "tasks"), for messages.
    measure
        ``measure(doc) -> int``: the size of an instance JSON document.
    grows
        The list patterns the measure counts (``"jobs"``, ``"cojobs.*.jobs"``): these may grow
        and shrink whatever the generator does.
    mutations
        Operators ``op(doc, ctx) -> doc | None`` added to the generic ones.
    claims
        The paper's lemmas and subroutine claims as :class:`Claim` predicates (filled from
        ``optsched.workloads.<family>.CLAIMS``).
    """

    what: str
    measure: Callable[[dict], int]
    grows: tuple[str, ...]
    mutations: tuple[Mutation, ...] = ()
    claims: tuple[Claim, ...] = ()

    def claim(self, name: str) -> Claim | None:
        """The claim called ``name``, or None."""
        return next((c for c in self.claims if c.name == name), None)


@dataclass(frozen=True)
class Family:
    """One problem family: its paper, modules, methods and experiment settings.

    Attributes
    ----------
    name
        The ``"family"`` tag of its JSON documents.
    description
        One line for ``optsched families``.
    problem, workloads
        ``optsched.problems.<name>`` and ``optsched.workloads.<name>``.
    methods
        Every registered method, in display order; one must be named ``exact``.
    default_method
        The paper's algorithm (what ``solve`` runs without ``--method``).
    compare
        Settings of ``optsched compare``.
    ratio_preset, ratio_seeds
        What the default ``optsched ratios`` runs for this family.
    certify
        How ``optsched certify`` bounds and improves this family's instances.
    worst
        How ``optsched worst`` measures and mutates its instances (None: a generic count of the
        objects inside lists, the generic operators only).

    Examples
    --------
    A new family is one Family registered with :func:`optsched.register` (tests/toy/ is a
    complete one); the built-in ones are looked up by name:

    >>> from optsched import get_family
    >>> fam = get_family("ring_contention")
    >>> fam.default_method, fam.method("exact").kind, fam.workloads.PRESETS
    ('sjf_bco', 'exact', ('tiny', 'small', 'paper'))
    >>> inst = fam.generate("tiny", 0)
    >>> from optsched.deadline import Deadline
    >>> fam.verify(inst, fam.method().run(inst, Deadline.after(10)).schedule) > 0
    True
    """

    name: str
    description: str
    problem: ProblemModule
    workloads: WorkloadModule
    methods: tuple[Method, ...]
    default_method: str
    compare: CompareSpec = field(default_factory=CompareSpec)
    ratio_preset: str = "tiny"
    ratio_seeds: int = 8
    certify: CertifySpec = field(default_factory=CertifySpec)
    worst: WorstSpec | None = None

    def __post_init__(self) -> None:
        names = [m.name for m in self.methods]
        if len(set(names)) != len(names):
            raise ValueError(f"family {self.name}: duplicate method names in {names}")
        wanted = [self.default_method, *(self.compare.methods or ()),
                  *(n for n in (self.compare.reference, self.compare.bound) if n)]
        wanted += [*(n for n in (self.certify.bound,) if n), *(self.certify.starts or ())]
        for name in wanted:
            if name not in names:
                raise ValueError(f"family {self.name}: no method {name!r} (known: {names})")
        if self.problem.FAMILY != self.name:
            raise ValueError(f"family {self.name}: problem module is for {self.problem.FAMILY!r}")
        if self.ratio_preset not in self.workloads.PRESETS:
            raise ValueError(f"family {self.name}: ratio preset {self.ratio_preset!r} unknown")

    def method(self, name: str | None = None) -> Method:
        """The method called ``name`` (default: :attr:`default_method`)."""
        name = name or self.default_method
        for m in self.methods:
            if m.name == name:
                return m
        known = ", ".join(m.name for m in self.methods)
        raise UnknownMethod(f"method: {self.name} has no method {name!r} (known: {known})")

    def generate(self, preset: str = "tiny", seed: int = 0, **overrides: Any) -> Any:
        """A seeded instance from the family's workload generator.

        Raises
        ------
        InvalidInstance
            When ``seed`` is not an integer >= 0 (numpy's own error named no field).
        """
        if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
            raise InvalidInstance(f"seed: must be an integer >= 0, got {seed!r}")
        return self.workloads.generate(preset, int(seed), **overrides)

    def verify(self, instance: Any, schedule: Any) -> float:
        """The family's independent checker."""
        return self.problem.verify(instance, schedule)

    def compare_methods(self) -> tuple[list[Method], str]:
        """The methods ``optsched compare`` runs (reference first if not among them) and the
        reference's name."""
        if self.compare.methods is None:
            entries = [m for m in self.methods if m.kind in ("algorithm", "baseline")]
        else:
            entries = [self.method(n) for n in self.compare.methods]
        reference = self.compare.reference or self.default_method
        if reference not in [e.name for e in entries]:
            entries.insert(0, self.method(reference))
        return entries, reference

    def bound_method(self) -> Method | None:
        """The bound shown at paper scale (``compare.bound`` or ``lower_bound``), if any."""
        name = self.compare.bound or "lower_bound"
        return next((m for m in self.methods if m.name == name and m.kind == "bound"), None)


__all__ = ["CertifySpec", "Claim", "CompareSpec", "Family", "Mutation", "MutationContext",
           "MutationProfile", "ProblemModule", "WorkloadModule", "WorstSpec", "last_call"]

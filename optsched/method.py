"""A registered method (:class:`Method`) and the parameter shape of every algorithm (:class:`Params`).

Every paper algorithm and parametrised baseline takes one frozen :class:`Params` subclass whose
fields document the paper text they read (:func:`param`). A variant or a *reading* of an ambiguous
paper line is the same function registered again with other parameters::

    Method("hare", "algorithm", hare, params=HareParams())
    Method("hare_eft", "algorithm", hare, params=HareParams(gpu_choice="earliest_finish"))

A method function is called as ``func(instance, *, deadline, seed)`` or, when the method has
``params``, ``func(instance, params, *, deadline, seed)``; it returns an
:class:`~optsched.result.Outcome`. ``info["params"]`` of every Result records the parameters.
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass, field
from typing import Any, Callable, Literal

from optsched.deadline import Deadline
from optsched.result import Outcome

Kind = Literal["exact", "bound", "algorithm", "baseline"]
KINDS: tuple[Kind, ...] = ("exact", "bound", "algorithm", "baseline")


def param(default: Any, paper: str) -> Any:
    """A :class:`Params` field with its default and the paper text it reads (shown by
    ``optsched methods FAMILY --json``)."""
    return field(default=default, metadata={"paper": paper})


@dataclass(frozen=True)
class Params:
    """Base of every algorithm's parameter dataclass (frozen; one field per choice the paper makes).

    >>> @dataclass(frozen=True)
    ... class Demo(Params):
    ...     alpha: float = param(2.0, "Alg. 1 line 3: alpha >= 1")
    >>> Demo().to_dict(), Demo.describe()[0]["paper"]
    ({'alpha': 2.0}, 'Alg. 1 line 3: alpha >= 1')
    """

    def to_dict(self) -> dict[str, Any]:
        """The field values as JSON-ready data."""
        return {f.name: _plain(getattr(self, f.name)) for f in dataclasses.fields(self)}

    @classmethod
    def describe(cls) -> list[dict[str, Any]]:
        """name, default and paper text of every field."""
        out = []
        for f in dataclasses.fields(cls):
            default = None if f.default is dataclasses.MISSING else _plain(f.default)
            out.append({"name": f.name, "default": default, "paper": f.metadata.get("paper", "")})
        return out


def _plain(value: Any) -> Any:
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


@dataclass(frozen=True)
class Method:
    """One registered method of a family.

    Attributes
    ----------
    name, kind
        ``kind`` is one of :data:`KINDS`.
    func
        The function run by :meth:`run` (see the module docstring for its signature).
    params
        The method's :class:`Params` (None for methods without choices).
    guarantee
        ``guarantee(instance) -> float | None``: the paper's claimed bound on this instance.
    description
        One line for ``optsched methods``.
    verify
        A checker to use instead of the family's ``verify``, for methods that solve a *relaxed*
        model on purpose (e.g. preemptive baselines); None means the family's ``verify``.
    model
        ``model(instance, *, deadline) -> pyomo ConcreteModel``: builds, *without solving it*, the
        model whose optimum the method proves (after the cheap preparation the method does itself,
        e.g. a heuristic's upper bound), its ``name`` saying which model it is; None when the method
        declares none. ``optsched solve --write-model`` writes it (:meth:`build_model`).

    Examples
    --------
    >>> from optsched import generate, get_method
    >>> m = get_method("hetero_gpu", "hare")
    >>> m.kind, m.params.to_dict()["gpu_choice"], m.guarantee_text() is not None
    ('algorithm', 'earliest_available', True)
    >>> inst = generate("hetero_gpu", "tiny", 0)
    >>> m.guarantee_on(inst) >= 3.0          # Theorem 4: alpha (2 + alpha), alpha >= 1
    True
    """

    name: str
    kind: Kind
    func: Callable[..., Outcome]
    params: Params | None = None
    guarantee: Callable[[Any], float | None] | None = None
    description: str = ""
    verify: Callable[[Any, Any], float] | None = None
    model: Callable[..., Any] | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"method {self.name}: kind {self.kind!r} is not one of {KINDS}")

    @property
    def relaxed(self) -> bool:
        """True when the method's schedules follow a relaxed model (its own checker): they are not
        comparable with the exact optimum, and ``ratios`` lists them as "not comparable"."""
        return self.verify is not None

    def guarantee_on(self, instance: Any) -> float | None:
        """The paper's claimed bound on ALG/OPT for ``instance`` (None: the method claims none)."""
        return None if self.guarantee is None else self.guarantee(instance)

    def run(self, instance: Any, deadline: Deadline, seed: int = 0) -> Outcome:
        """Call the method's function with its parameters, deadline and seed."""
        if self.params is None:
            return self.func(instance, deadline=deadline, seed=seed)
        return self.func(instance, self.params, deadline=deadline, seed=seed)

    def build_model(self, instance: Any, deadline: Deadline | None = None) -> Any:
        """The model :attr:`model` builds for ``instance``, not solved (None: none declared);
        ``deadline`` bounds the preparation (default: none)."""
        if self.model is None:
            return None
        return self.model(instance, deadline=Deadline(None) if deadline is None else deadline)

    def to_dict(self) -> dict[str, Any]:
        """What ``optsched methods FAMILY --json`` prints for this method."""
        return {"name": self.name, "kind": self.kind, "guarantee": self.guarantee_text(),
                "description": self.description, "relaxed": self.relaxed,
                "params": None if self.params is None else self.params.to_dict(),
                "params_doc": None if self.params is None else type(self.params).describe()}

    def guarantee_text(self) -> str | None:
        """The first line of the guarantee function's docstring (its value depends on the instance)."""
        if self.guarantee is None:
            return None
        lines = (self.guarantee.__doc__ or "").strip().splitlines()
        return lines[0].rstrip(".") if lines else "instance-dependent"


__all__ = ["KINDS", "Kind", "Method", "Params", "param"]

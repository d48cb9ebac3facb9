"""optsched: exact models, paper algorithms and baselines for scheduling distributed ML jobs.

Quick use::

    from optsched import generate, solve
    inst = generate("hetero_gpu", "tiny", seed=1)
    print(solve(inst, "exact").objective)
"""

from optsched.errors import InfeasibleSchedule, InvalidInstance, UnknownMethod
from optsched.io import dump, dumps, load_instance, load_schedule
from optsched.registry import families, family_of, get_family, get_method, methods, register, solve
from optsched.result import Outcome, Result, SolveStatus

__version__ = "0.1.0"


def certify(instance, *, time_limit: float | None = 600.0, seed: int = 0) -> Result:
    """Certified interval [LB, UB] on the optimum of ``instance`` (see :func:`optsched.certificate.certify`)."""
    from optsched.certificate import certify as _certify

    return _certify(instance, time_limit=time_limit, seed=seed)


def generate(family: str, preset: str = "tiny", seed: int = 0, **overrides):
    """A seeded instance of ``family`` from its workload generator (presets tiny/small/paper)."""
    return get_family(family).generate(preset, seed, **overrides)


def verify(instance, schedule) -> float:
    """Check ``schedule`` with the family's independent checker and return its objective."""
    return family_of(instance).verify(instance, schedule)


__all__ = [
    "InfeasibleSchedule", "InvalidInstance", "Outcome", "Result", "SolveStatus", "UnknownMethod",
    "certify", "dump", "dumps", "families", "family_of", "generate", "get_family", "get_method",
    "load_instance", "load_schedule", "methods", "register", "solve", "verify", "__version__",
]

"""optsched: exact models, paper algorithms and baselines for scheduling distributed ML jobs.

Quick use::

    from optsched import generate, solve
    inst = generate("hetero_gpu", "tiny", seed=1)
    print(solve(inst, "exact").objective)
"""

from optsched.errors import InfeasibleSchedule, InvalidInstance, UnknownMethod
from optsched.io import dump, dumps, load_instance, load_schedule
from optsched.registry import FAMILIES, get_method, methods, solve, workload_module
from optsched.result import Outcome, Result, SolveStatus

__version__ = "0.1.0"


def generate(family: str, preset: str = "tiny", seed: int = 0, **overrides):
    """A seeded instance of ``family`` from its workload generator (presets tiny/small/paper)."""
    return workload_module(family).generate(preset, seed, **overrides)


def verify(instance, schedule) -> float:
    """Check ``schedule`` with the family's independent checker and return its objective."""
    from optsched.registry import problem_module

    return problem_module(instance.FAMILY).verify(instance, schedule)


__all__ = [
    "FAMILIES", "InfeasibleSchedule", "InvalidInstance", "Outcome", "Result", "SolveStatus",
    "UnknownMethod", "dump", "dumps", "generate", "get_method", "load_instance", "load_schedule",
    "methods", "solve", "verify", "__version__",
]

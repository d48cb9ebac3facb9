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


def certify(instance, *, time_limit: float | None = 600.0, seed: int = 0, known=(),
            progress=None) -> Result:
    """Prove an interval [LB, UB] on the optimum of ``instance``, at any scale.

    The exact method first (it proves small instances), then every algorithm and baseline, the
    family's strongest lower bound (any-time) and its any-time improvement; every schedule is
    verified (:func:`optsched.certificate.certify` has the details).

    Parameters
    ----------
    instance
        An instance of any family (:func:`generate`, :func:`load_instance`).
    time_limit
        Seconds for the whole call (None: 600).
    seed
        Seed of randomised methods.
    known, progress
        Results already computed on this instance (not run again), and a callback given every
        step's record as it finishes.

    Returns
    -------
    Result
        ``objective`` = UB (the best verified schedule, in ``schedule``), ``lower_bound`` = LB,
        ``status`` ``optimal`` when they meet; ``info["gap"]`` = UB / LB - 1 and
        ``info["upper_by"]`` / ``info["lower_by"]`` the methods behind the two sides.

    Examples
    --------
    >>> res = certify(generate("cojob_network", "tiny", 0), time_limit=60)
    >>> res.status.value, res.objective == res.lower_bound, res.info["gap"]
    ('optimal', True, 0.0)
    """
    from optsched.certificate import certify as _certify

    return _certify(instance, time_limit=time_limit, seed=seed, known=known, progress=progress)


def generate(family: str, preset: str = "tiny", seed: int = 0, **overrides):
    """A seeded, validated instance of ``family`` from its workload generator.

    Parameters
    ----------
    family
        One of :func:`families` (``hetero_gpu``, ``edge_cloud``, ``ring_contention``,
        ``elastic_cluster``, ``cojob_network``).
    preset
        ``tiny`` and ``small`` (exact-solvable in seconds), ``paper`` (the paper's evaluation
        scale); some families have more (``optsched generate --help`` lists them).
    seed
        An integer >= 0; the same seed gives the same instance.
    overrides
        Generator parameters of the family's workload module (e.g. ``max_tasks=6``).

    Returns
    -------
    Instance
        The family's frozen ``Instance`` (``to_dict()`` / :func:`dump` for JSON).

    Examples
    --------
    >>> inst = generate("ring_contention", "tiny", seed=0)
    >>> inst.FAMILY, inst == generate("ring_contention", "tiny", seed=0)
    ('ring_contention', True)
    """
    return get_family(family).generate(preset, seed, **overrides)


def verify(instance, schedule) -> float:
    """Check ``schedule`` against ``instance`` with the family's independent checker.

    Parameters
    ----------
    instance, schedule
        An instance and a schedule of the same family.

    Returns
    -------
    float
        The objective, recomputed from the schedule alone.

    Raises
    ------
    InfeasibleSchedule
        Naming the violated constraint by the paper's equation number.

    Examples
    --------
    >>> inst = generate("hetero_gpu", "tiny", 1)
    >>> verify(inst, solve(inst, "hare").schedule) == solve(inst, "hare").objective
    True
    """
    return family_of(instance).verify(instance, schedule)


__all__ = [
    "InfeasibleSchedule", "InvalidInstance", "Outcome", "Result", "SolveStatus", "UnknownMethod",
    "certify", "dump", "dumps", "families", "family_of", "generate", "get_family", "get_method",
    "load_instance", "load_schedule", "methods", "register", "solve", "verify", "__version__",
]

"""A second, independent exact engine: OR-Tools CP-SAT models of the families' semantics
(DESIGN.md, "Solver conventions"; issue 14 item 3).

Each module ``solvers/cp/<family>.py`` is written from ``optsched.problems.<family>`` (its Instance
fields and ``verify``'s rules) and the paper digest, never from the MILP in ``models/``; where both
engines prove optimality their optima must agree (tests/solvers/test_cp.py). OR-Tools is the
optional extra ``cp``: the modules import it only when a model is built, and raise
:class:`optsched.errors.OptschedError` naming the extra when it is missing.

``exact_cp(instance, *, deadline, seed=0) -> Outcome`` of every family solves with one worker
(threads = 1), ``random_seed = seed`` and the time left on ``deadline``.
"""

from __future__ import annotations

from typing import Callable

from optsched.method import Method
from optsched.result import Outcome
from optsched.solvers.cp import edge_cloud, elastic_cluster, hetero_gpu, ring_contention

#: ``exact_cp`` of every family that has a CP-SAT model, by family name.
EXACT_CP: dict[str, Callable[..., Outcome]] = {
    "hetero_gpu": hetero_gpu.exact_cp,
    "edge_cloud": edge_cloud.exact_cp,
    "ring_contention": ring_contention.exact_cp,
    "elastic_cluster": elastic_cluster.exact_cp,
}

_DESCRIPTIONS = {
    "hetero_gpu": "CP-SAT: optional interval per task x GPU, NoOverlap per GPU, round barriers",
    "edge_cloud": "CP-SAT: interval per job, cumulative worker/PS capacity per server",
    "ring_contention": "CP-SAT: placement x start, time-indexed speeds under contention levels",
    "elastic_cluster": "CP-SAT: interval per job, configuration choice, cumulative per resource",
}


def exact_cp(family_name: str) -> Callable[..., Outcome]:
    """The ``exact_cp`` function of ``family_name`` (KeyError naming the families that have one)."""
    try:
        return EXACT_CP[family_name]
    except KeyError:
        raise KeyError(f"no CP-SAT model for family {family_name!r} "
                       f"(have: {', '.join(EXACT_CP)})") from None


def cp_method(family_name: str) -> Method:
    """The registry entry ``exact_cp`` (kind ``exact``) of ``family_name``."""
    return Method("exact_cp", "exact", exact_cp(family_name),
                  description=_DESCRIPTIONS[family_name] + ", gap 0 (optional extra cp)")


__all__ = ["EXACT_CP", "cp_method", "exact_cp"]

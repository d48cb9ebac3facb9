"""Which solver every Pyomo model is solved with: :class:`SolverOptions` and :func:`using`.

Kept apart from :mod:`optsched.solvers.highs` so that choosing a solver (the CLI's ``--solver``,
``--log``, ``--threads``, ``--write-model``) does not import Pyomo: a method that solves no model
never pays for it. :mod:`optsched.solvers.highs` re-exports these names.
"""

from __future__ import annotations

import contextlib
import contextvars
from dataclasses import dataclass, field

from optsched.errors import OptschedError


@dataclass(frozen=True)
class SolverOptions:
    """The solver of every :func:`solve_model` call in a :func:`using` block.

    Attributes
    ----------
    name
        ``highs`` (default), ``scip`` (pyscipopt, extra ``scip``) or any name Pyomo's
        ``SolverFactory`` knows (``gurobi``, ``cplex``, ``cbc``, ``glpk``, ...).
    log
        Solver output to stderr.
    threads
        Solver threads (None: 1, the project's default; one value per process for HiGHS).
    write_model
        When set (a path ending in ``.lp`` or ``.mps``), every model :func:`solve_model` is given
        is first written there, numbered in the order solved (``x.lp`` -> ``x.1.lp``,
        ``x.2.lp``, ...), and listed in :attr:`written` (path, the model's name, its size):
        ``optsched solve --write-model`` (the exact model is the last one an exact method solves).
    """

    name: str = "highs"
    log: bool = False
    threads: int | None = None
    write_model: str | None = None
    written: list = field(default_factory=list)


_OPTIONS: contextvars.ContextVar[SolverOptions] = contextvars.ContextVar(
    "optsched_solver", default=SolverOptions())


@contextlib.contextmanager
def using(options: SolverOptions):
    """Use ``options`` for every :func:`solve_model` in the block (checks the solver first:
    :class:`~optsched.errors.OptschedError` naming a solver that is not installed)."""
    check_solver(options.name)
    token = _OPTIONS.set(options)
    try:
        yield options
    finally:
        _OPTIONS.reset(token)


def current() -> SolverOptions:
    """The options in force (:func:`using`)."""
    return _OPTIONS.get()


def check_solver(name: str) -> None:
    """One-line error when ``name`` cannot be used here."""
    if name == "highs":
        return
    if name == "scip":
        try:
            import pyscipopt  # noqa: F401
        except ImportError:
            raise OptschedError("solver: scip needs the optional extra: pip install "
                                "'optsched[scip]'") from None
        return
    import logging

    from pyomo.opt import SolverFactory

    quiet = logging.getLogger("pyomo")
    level, quiet.level = quiet.level, logging.CRITICAL  # Pyomo logs a traceback for unknown names
    try:
        ok = SolverFactory(name).available(exception_flag=False)
    except Exception:  # noqa: BLE001 - an unknown name raises in some Pyomo plugins
        ok = False
    finally:
        quiet.level = level
    if not ok:
        raise OptschedError(f"solver: {name!r} is not available here (not installed, or not a "
                            f"solver Pyomo knows); 'highs' is the default, 'scip' the extra scip")


__all__ = ["SolverOptions", "check_solver", "current", "using"]

"""Where instance tasks run: in this process, in K local processes, or on a Dask cluster.

All three give a ``concurrent.futures``-style executor (``submit`` returning a
``concurrent.futures.Future``), so :func:`optsched.experiments.ratios.run_ratios` has one code path:
``ProcessPoolExecutor`` for ``workers=K``, ``distributed.Client(address).get_executor()`` for a Dask
scheduler, and :class:`InlineExecutor` (runs each task when submitted) for ``workers=1``.

Each local worker process solves with HiGHS ``threads=1`` (``solve_model``'s default), so K workers use
about K cores.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import sys
import threading
import time
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from typing import Iterator

from optsched.errors import OptschedError

#: Seconds to wait for a Dask scheduler to answer.
CONNECT_TIMEOUT = 30


class InlineExecutor(Executor):
    """Runs each task synchronously in the calling process (no pickling, no start-up cost)."""

    def submit(self, fn, /, *args, **kwargs) -> Future:
        future: Future = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:     # noqa: BLE001 - handed to the caller through the future
            if isinstance(exc, KeyboardInterrupt):
                raise
            future.set_exception(exc)
        return future


@contextlib.contextmanager
def executor(workers: int = 1, scheduler=None, preload=()) -> Iterator[Executor]:
    """A context-managed executor for ``workers`` local processes or a Dask ``scheduler``.

    Parameters
    ----------
    workers
        Number of local processes; 1 runs tasks in this process.
    scheduler
        A Dask scheduler address (``"tcp://host:8786"``), a ``distributed.Client``, or None.
    preload
        Modules the local workers import once, before forking (the families' solvers).
    """
    if scheduler is not None:
        with _dask_executor(scheduler) as ex:
            yield ex
        return
    workers = cap_workers(workers)
    if workers <= 1:
        yield InlineExecutor()
        return
    ctx = multiprocessing.get_context(_start_method())
    if ctx.get_start_method() == "forkserver":
        ctx.set_forkserver_preload(["optsched.experiments.ratios", "pyomo.environ",
                                    "optsched.solvers.highs", *preload])
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_worker_init,
                               initargs=(os.getpid(),))
    try:
        yield pool
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    else:
        pool.shutdown(wait=True)


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity where the OS tells it)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def cap_workers(workers: int | None) -> int:
    """``workers`` local processes, at most :func:`available_cores` (a note on stderr when cut).

    Each worker solves with one thread, so more workers than cores only slow every solve down and
    make time limits meaningless; ``--workers 100000`` tried to start 100,000 processes.

    Parameters
    ----------
    workers
        The number asked for (None: 1).

    Returns
    -------
    int
        ``min(workers, cores)``, at least 1.
    """
    workers = max(1, workers or 1)
    cores = available_cores()
    if workers > cores:
        print(f"optsched: note: --workers {workers} is more than the {cores} cores available; "
              f"using {cores}", file=sys.stderr)
        return cores
    return workers


def _worker_init(run_pid: int) -> None:
    """Make a local worker die with the run (a SIGKILLed run must not leave orphans solving)."""
    if os.getppid() == run_pid:                            # forked from the run itself
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)   # PR_SET_PDEATHSIG
            if os.getppid() == run_pid:                    # else the run died before prctl
                return
            os._exit(1)
        except (OSError, AttributeError):
            pass

    def watch():                                           # forkserver / non-Linux: poll
        while True:
            try:
                os.kill(run_pid, 0)
            except ProcessLookupError:
                os._exit(1)
            except PermissionError:
                pass
            time.sleep(1.0)

    threading.Thread(target=watch, daemon=True, name="optsched-parent-watch").start()


def _start_method() -> str:
    """``fork`` while this process has a single thread (workers inherit the imported solvers: no
    start-up cost; HiGHS has not run here), else ``forkserver`` (forking a threaded process is
    unsafe) -- unless ``__main__`` cannot be re-imported (``python -``), where only fork works."""
    import sys

    if "fork" not in multiprocessing.get_all_start_methods():
        return "spawn"
    if threading.active_count() == 1:
        return "fork"
    main_file = getattr(sys.modules.get("__main__"), "__file__", None)
    if main_file is not None and not os.path.exists(main_file):
        return "fork"
    return "forkserver"


@contextlib.contextmanager
def _dask_executor(scheduler) -> Iterator[Executor]:
    try:
        from distributed import Client
    except ImportError:
        raise OptschedError("--scheduler: needs dask.distributed "
                            "(pip install 'optsched[distributed]')") from None
    own = not isinstance(scheduler, Client)
    if own:
        try:
            client = Client(scheduler, timeout=CONNECT_TIMEOUT)
        except (OSError, TimeoutError, ValueError) as exc:
            raise OptschedError(f"--scheduler: cannot connect to {scheduler}: {exc}") from None
    else:
        client = scheduler
    ex = client.get_executor(pure=False)
    try:
        yield ex
    finally:
        ex.shutdown(wait=False)
        if own:
            client.close()

"""The same sweep through local processes and a Dask LocalCluster gives the same rows."""

from __future__ import annotations

import pytest

from optsched.experiments import executors
from optsched.experiments.executors import InlineExecutor
from optsched.experiments.ratios import run_ratios

# worker processes see the real method lists (no monkeypatching): use the quickest family
FAMILY = "ring_contention"
RUN = dict(families=[FAMILY], seeds=2, progress=False)


def _comparable(rows):
    return [{k: v for k, v in r.items() if k != "runtime_s"} for r in rows]


@pytest.fixture(scope="module")
def inline_rows():
    return run_ratios(**RUN)


def test_inline_executor_hands_exceptions_to_the_future():
    fut = InlineExecutor().submit(lambda: 1 / 0)
    assert isinstance(fut.exception(), ZeroDivisionError)


@pytest.mark.slow
def test_process_pool_matches_inline(inline_rows, tmp_path):
    rows = run_ratios(**RUN, workers=2, out=tmp_path)
    assert _comparable(rows) == _comparable(inline_rows)
    assert not [r for r in rows if r["status"] == "error"]


@pytest.mark.slow
def test_dask_local_cluster_matches_inline(inline_rows, tmp_path):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        rows = run_ratios(**RUN, scheduler=cluster.scheduler_address, out=tmp_path)
        assert _comparable(rows) == _comparable(inline_rows)
        with distributed.Client(cluster) as client:      # a Client object works too; all resumed
            again = run_ratios(**RUN, scheduler=client, out=tmp_path)
    assert _comparable(again) == _comparable(rows)


def test_bad_scheduler_address_is_a_user_error(monkeypatch):
    pytest.importorskip("distributed")
    monkeypatch.setattr(executors, "CONNECT_TIMEOUT", 1)
    from optsched.errors import OptschedError
    from optsched.experiments.executors import executor

    with pytest.raises(OptschedError, match="--scheduler: cannot connect"):
        with executor(scheduler="tcp://127.0.0.1:1"):
            pass


def _procs_with(marker: str) -> list[int]:
    from pathlib import Path

    pids = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and marker in (proc / "cmdline").read_bytes().decode(errors="ignore"):
                pids.append(int(proc.name))
        except OSError:
            continue
    return pids


@pytest.mark.slow
@pytest.mark.skipif(not __import__("os").path.isdir("/proc"), reason="needs /proc")
def test_sigkilled_run_leaves_no_worker_behind(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "pool"
    code = ("from optsched.experiments.ratios import run_ratios; "
            f"run_ratios(families=[{FAMILY!r}], seeds=40, workers=2, out={str(out)!r}, "
            "progress=False)")
    proc = subprocess.Popen([sys.executable, "-c", code])
    path = out / "results.jsonl"
    deadline = time.monotonic() + 300  # waits, not claims: generous for a loaded machine
    while time.monotonic() < deadline and not (path.exists() and path.stat().st_size):
        assert proc.poll() is None
        time.sleep(0.05)
    assert len(_procs_with(str(out))) >= 3              # the run and its two workers
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 60
    while _procs_with(str(out)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _procs_with(str(out)) == []

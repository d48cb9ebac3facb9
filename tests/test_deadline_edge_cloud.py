"""edge_cloud keeps ``time_limit`` at paper scale (issue 22 item 3), in CPU seconds.

``benchmarks/deadlines.py`` found ``exact`` with ``time_limit=5`` on ``generate("edge_cloud",
"paper", 0)`` killed after 65 CPU-s at 1.7 GB: past its size cap ``exact`` hands over to certify,
whose bound ``colgen_bound`` starts from the list schedule; with 1 CPU-s for it the list schedule
was cut short, the serial schedule (flow 40 million slots) set the horizon, and the pool
relaxation's per-job limits were built over 40 million slots, with no deadline check.
"""

from __future__ import annotations

import pytest

from optsched import generate, solve
from optsched.deadline import Deadline
from optsched.problems.edge_cloud import deadlines, verify
from optsched.solvers.edge_cloud.bounds import serial_schedule, trivial_bound
from optsched.solvers.edge_cloud.colgen import MAX_POOL_CELLS, colgen_bound
from tests.timing import cpu_time

#: CPU seconds a call may use past its limit (tests/test_deadline.py's SLACK).
SLACK = 1.0


@pytest.fixture(scope="module")
def paper():
    return generate("edge_cloud", "paper", 0)


def test_colgen_bound_refuses_the_serial_horizon(paper):
    """From the serial schedule the pool relaxation would exceed MAX_POOL_CELLS: the trivial bound
    comes back at once, status time_limit, with the reason."""
    start = serial_schedule(paper)
    assert len(paper.jobs) * 2 * (max(deadlines(paper, verify(paper, start))) + 1) > MAX_POOL_CELLS
    began = cpu_time()
    out = colgen_bound(paper, deadline=Deadline.after(5.0), start=start)
    assert cpu_time() - began <= 1.0
    assert out.status.value == "time_limit" and "MAX_POOL_CELLS" in out.info["skipped"]
    assert out.lower_bound >= trivial_bound(paper) - 1


def test_colgen_bound_stops_while_setting_up_the_pools(paper):
    """From the complete list schedule (horizon ~2,200 slots, under the cap) a deadline that has
    passed stops the per-job limits: no LP, the trivial bound."""
    from optsched.problems.edge_cloud import Schedule
    from optsched.solvers.edge_cloud.search import list_schedule

    order = sorted(range(len(paper.jobs)), key=lambda j: (paper.jobs[j].arrival, j))
    placer = list_schedule(paper, order, Deadline(None))
    assert placer is not None
    start = Schedule.single([placer.runs[j] for j in range(len(paper.jobs))])
    out = colgen_bound(paper, deadline=Deadline(0.0), start=start)
    assert out.status.value == "time_limit" and out.info["skipped"].startswith("deadline")
    assert out.lower_bound >= trivial_bound(paper) - 1


@pytest.mark.slow
@pytest.mark.parametrize("method", ["exact", "colgen_bound", "certify"])
def test_paper_scale_calls_keep_five_seconds(paper, method):
    """The calls that overran (exact) or could (its bound, certify) with ``time_limit=5``: at
    most 5 + SLACK CPU-s, the registry's verify not counted."""
    from optsched.certificate import certify

    began = cpu_time()
    if method == "certify":
        res = certify(paper, time_limit=5.0)
    else:
        res = solve(paper, method, time_limit=5.0)
    used = cpu_time() - began - res.info.get("verify_cpu_s", 0.0)
    assert used <= 5.0 + SLACK, f"{method}: {used:.2f} CPU-s"

"""Does ``time_limit`` hold? CPU, wall and memory of every time-limited call (issue 22, item 3).

Cases: every family's ``paper`` preset (seed 0), and hard cojob_network instances
(``small`` preset with 6, 7 and 8 cojobs, seed 0: the sizes at which issue 22 saw ``exact`` overrun
a 60 s limit by 44-281 s at up to 1.4 GB).

Calls: every registered method and ``certify``. Exact methods, bounds and certify run with
``time_limit`` 1, 5 and 10 s (stopping early when a call neither hits its limit nor uses half of it);
the paper's algorithms and baselines with 1 s (``--all-limits``: also 5 and 10 when they hit it).

Clock: by default the calls' deadlines are read on their CPU time (``OPTSCHED_DEADLINE_CLOCK=cpu``,
:mod:`optsched.deadline`), so every call gets its limit in CPU seconds, as on an idle machine,
whatever the load, and ``cpu_past`` = CPU used - limit is the CPU time it used after its deadline
(the step under way and the registry's verify). ``--clock wall`` keeps the wall-clock deadline a
user gets; the parent then reads the child's CPU time from /proc when the deadline passes.

Every call runs in its own interpreter at ``nice 10`` (``--nice N`` to change it; ``--one``), so
``ru_maxrss`` is that call's peak RSS; imports and instance generation happen before the call is timed. Recorded per call: CPU
seconds of the call (``time.process_time``, all threads, plus child processes'), CPU past the
deadline, wall seconds, the CPU time of the registry's verify inside them
(``info["verify_cpu_s"]``), peak RSS and the RSS before the call. A call that uses more than
``limit + 60`` CPU seconds is killed and recorded as such.

Run: ``python benchmarks/deadlines.py [--limits 1 5 10] [--family F ...] [--case C ...] [--json PATH]``.
Prints a Markdown table of every call and, per family and case group, the most CPU used past a
deadline, the largest wall overrun and the largest peak RSS; report the load average beside them.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

PAPER = {"hetero_gpu": {}, "edge_cloud": {}, "ring_contention": {}, "elastic_cluster": {},
         "cojob_network": {}}
#: (family, label, preset, seed, generator overrides)
CASES = [(f, "paper", "paper", 0, kw) for f, kw in PAPER.items()] + [
    ("cojob_network", f"small-{k}cojobs", "small", 0, {"cojobs": [k, k]}) for k in (6, 7, 8)]


#: Niceness of the measured calls. This process only sleeps until a call's deadline and then reads
#: its CPU time; run it un-niced, so that on a loaded machine it wakes on time.
NICE = 10


def one(family: str, preset: str, seed: int, overrides: dict, method: str, limit: float,
        mark: str) -> dict:
    """One timed call in this interpreter; writes its start (``time.monotonic``) to ``mark`` just
    before it and returns the measures as a dict."""
    import scipy.optimize  # noqa: F401  (one-time imports are the process's, not the method's)

    from optsched import generate, solve
    from optsched.certificate import certify
    from optsched.solvers.highs import available

    available()
    over = {k: tuple(v) if isinstance(v, list) else v for k, v in overrides.items()}
    instance = generate(family, preset, seed, **over)
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    kids0 = _children_cpu()
    c0 = time.process_time()
    with open(mark, "w") as f:
        f.write(repr(time.monotonic()))
    w0 = time.perf_counter()
    if method == "certify":
        result = certify(instance, time_limit=limit, seed=seed)
    else:
        result = solve(instance, method, time_limit=limit, seed=seed)
    wall = time.perf_counter() - w0
    cpu = time.process_time() - c0 + _children_cpu() - kids0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return {"wall": wall, "cpu": cpu, "cpu_total": ru.ru_utime + ru.ru_stime,
            "verify_s": result.info.get("verify_s", 0.0),
            "verify_cpu_s": result.info.get("verify_cpu_s", 0.0),
            "rss_mb": rss / 1024, "rss0_mb": rss0 / 1024, "status": result.status.value,
            "not_built": "not_built" in result.info}


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def _proc_cpu(pid: int) -> float | None:
    """CPU seconds (user + system, all threads) process ``pid`` has used so far, from /proc."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run(case: tuple, method: str, limit: float, clock: str = "cpu", nice: int = NICE) -> dict:
    """``one`` in a fresh interpreter (killed past ``limit + KILL_CPU_S`` CPU seconds), its deadlines
    read on ``clock`` (``OPTSCHED_DEADLINE_CLOCK``). ``cpu_past`` = CPU seconds the call used after
    its deadline (the step under way, and the registry's verify): on the CPU clock, CPU used minus
    the limit; on the wall clock, read from /proc when the deadline passes."""
    family, label, preset, seed, overrides = case
    row = {"family": family, "case": label, "method": method, "limit": limit}
    with tempfile.TemporaryDirectory() as tmp:
        mark, out, err = (os.path.join(tmp, n) for n in ("start", "out", "err"))
        cmd = [sys.executable, __file__, "--one",
               json.dumps([family, preset, seed, overrides, method, limit, mark])]
        with open(out, "w") as fo, open(err, "w") as fe:
            proc = subprocess.Popen(cmd, stdout=fo, stderr=fe, preexec_fn=lambda: os.nice(nice),
                                    env={**os.environ, "OPTSCHED_DEADLINE_CLOCK": clock})
            at_deadline = _cpu_at_deadline(proc, mark, limit) if clock == "wall" else None
            if not _wait(proc, limit):
                return {**row, "status": f"killed (over {limit + KILL_CPU_S:g} CPU-s)"}
        if proc.returncode != 0:
            tail = (open(err).read().strip().splitlines() or ["?"])[-1]
            return {**row, "status": f"error: {tail[:80]}"}
        result = json.loads(open(out).read().strip().splitlines()[-1])
    if clock == "cpu":
        past = max(0.0, result["cpu"] - limit)
    else:
        past = 0.0 if at_deadline is None else max(0.0, result["cpu_total"] - at_deadline)
    return {**row, **result, "cpu_past": past, "clock": clock}


#: CPU seconds past its limit after which a call is killed (imports included: ~3 CPU-s); a wall
#: backstop of :data:`KILL_WALL_S` catches a call that hangs without using CPU.
KILL_CPU_S = 60.0
KILL_WALL_S = 3600.0


def _wait(proc: subprocess.Popen, limit: float) -> bool:
    """Wait for ``proc``; False (and kill it) once it has used ``limit + KILL_CPU_S`` CPU seconds
    or run :data:`KILL_WALL_S` wall seconds. A CPU watchdog, not a wall timeout: at nice 10 on a
    loaded machine a call's wall time says nothing about its work."""
    end = time.monotonic() + KILL_WALL_S
    while proc.poll() is None:
        used = _proc_cpu(proc.pid)
        if time.monotonic() > end or used is not None and used > limit + KILL_CPU_S:
            proc.kill()
            proc.wait()
            return False
        time.sleep(0.5)
    return True


def _cpu_at_deadline(proc: subprocess.Popen, mark: str, limit: float) -> float | None:
    """The child's CPU time when its call's deadline passes; None when it ended before."""
    while not os.path.exists(mark) or not open(mark).read():
        if proc.poll() is not None:
            return None
        time.sleep(0.01)
    deadline = float(open(mark).read()) + limit
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return None
        time.sleep(min(0.01, max(0.0, deadline - time.monotonic())))
    return _proc_cpu(proc.pid) if proc.poll() is None else None


def limited(row: dict) -> bool:
    """Whether a call's result depends on its time limit (it hit it, or used over half of it in CPU
    time: wall time under load says little)."""
    return (row.get("status") == "time_limit" or row["status"].startswith("killed")
            or row.get("cpu", 0.0) > row["limit"] / 2)


#: Kinds that take a time limit to do their work (any-time bounds, exact searches, certify); they
#: are run at every limit, the paper's algorithms and baselines at the first (and at the others
#: with ``--all-limits``, when they hit it).
TIMED_KINDS = ("exact", "bound", "certify")


def methods_of(family: str) -> list[tuple[str, str]]:
    """``(name, kind)`` of every method of ``family`` and certify, timed kinds first."""
    from optsched.registry import families

    pairs = [(m.name, m.kind) for m in families()[family].methods] + [("certify", "certify")]
    return sorted(pairs, key=lambda p: p[1] not in TIMED_KINDS)


HEADER = ("| family | case | method | limit (s) | CPU used (s) | CPU past deadline (s) "
          "| wall - limit (s) | verify CPU (s) | peak RSS MB (before the call) | status |\n"
          "|---|---|---|---|---|---|---|---|---|---|")


def fmt(row: dict) -> str:
    head = f"| {row['family']} | {row['case']} | {row['method']} | {row['limit']:g} "
    if "cpu" not in row:
        return head + f"| | | | | | {row['status']} |"
    return head + (f"| {row['cpu']:.2f} | {row['cpu_past']:.2f} | {row['wall'] - row['limit']:+.2f} "
                   f"| {row['verify_cpu_s']:.2f} | {row['rss_mb']:.0f} ({row['rss0_mb']:.0f}) "
                   f"| {row['status']}{' (not built)' if row.get('not_built') else ''} |")


def worst(rows: list[dict]) -> list[str]:
    """Per family and case group: the largest CPU time used past the deadline (verify included),
    the largest wall overrun, the largest peak RSS."""
    out = ["| family | cases | most CPU past the deadline (s) | largest wall - limit (s) "
           "| peak RSS (MB) | calls |", "|---|---|---|---|---|---|"]
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault((r["family"], "paper" if r["case"] == "paper" else "hard"), []).append(r)
    for (family, group), rs in groups.items():
        timed = [r for r in rs if "cpu_past" in r]
        other = [r for r in rs if "cpu_past" not in r]
        if not timed:
            continue
        c = max(timed, key=lambda r: r["cpu_past"])
        w = max(timed, key=lambda r: r["wall"] - r["limit"])
        m = max(timed, key=lambda r: r["rss_mb"])
        out.append(f"| {family} | {group} | {c['cpu_past']:.2f} ({c['method']}, {c['limit']:g} s; "
                   f"verify {c['verify_cpu_s']:.2f}) | {w['wall'] - w['limit']:+.2f} ({w['method']}, "
                   f"{w['limit']:g} s) | {m['rss_mb']:.0f} ({m['method']}) | {len(rs)}"
                   + "".join(f"; {r['method']} {r['limit']:g} s: {r['status']}" for r in other) + " |")
    return out


def _done(path: str) -> list[dict]:
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--one", help=argparse.SUPPRESS)
    parser.add_argument("--limits", type=float, nargs="+", default=[1.0, 5.0, 10.0])
    parser.add_argument("--family", action="append")
    parser.add_argument("--method", action="append")
    parser.add_argument("--case", action="append", help="a case label (paper, small-8cojobs, ...)")
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                        help="the clock the calls' deadlines are read on (default cpu: as on an "
                             "idle machine, whatever the load)")
    parser.add_argument("--all-limits", action="store_true",
                        help="run algorithms and baselines at every limit too (when they hit it)")
    parser.add_argument("--nice", type=int, default=NICE,
                        help="niceness of the measured calls (default %(default)s; on the CPU "
                             "clock it changes their wall time, not their figures)")
    parser.add_argument("--json", help="append every row to this JSON-lines file")
    parser.add_argument("--resume", action="store_true",
                        help="skip the (case, method) pairs the --json file has; table them too")
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(one(*json.loads(args.one))))
        return
    print(f"deadlines on the {args.clock} clock; load at the start {os.getloadavg()[0]:.1f}\n")
    print(HEADER)
    rows = _done(args.json) if args.resume and args.json else []
    seen = {(r["family"], r["case"], r["method"]) for r in rows}
    for r in rows:
        print(fmt(r))
    for case in CASES:
        if args.family and case[0] not in args.family or args.case and case[1] not in args.case:
            continue
        for method, kind in methods_of(case[0]):
            if args.method and method not in args.method or (case[0], case[1], method) in seen:
                continue
            for limit in args.limits:
                row = run(case, method, limit, args.clock, args.nice)
                row["load"] = os.getloadavg()[0]
                rows.append(row)
                print(fmt(row), flush=True)
                if args.json:
                    with open(args.json, "a") as f:
                        f.write(json.dumps(row) + "\n")
                if not limited(row) or kind not in TIMED_KINDS and not args.all_limits:
                    break
    print(f"\nload at the end {os.getloadavg()[0]:.1f}\n")
    print("\n".join(worst(rows)))


if __name__ == "__main__":
    main()

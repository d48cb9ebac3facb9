"""The ``optsched`` command line.

Every command exits 0 on success and 2 with one line on stderr for any user error (missing or
unreadable file, bad JSON, an invalid field, unknown family or method, an output path whose
directory does not exist); never a traceback.

Startup is kept cheap: the registry (which imports every family's solvers) is loaded only when a
command or a subcommand's ``--help`` needs a family, and matplotlib only when a chart is drawn.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import textwrap
import time
from pathlib import Path
from typing import Callable

from optsched import __version__
from optsched.errors import OptschedError

DESCRIPTION = ("Exact models, the papers' algorithms and their baselines for five families of "
               "scheduling problems of distributed machine-learning jobs; every schedule is "
               "checked by the family's independent verifier.")
EPILOG = ("Exit status: 0 on success, 2 with a one-line message on bad input. "
          "Run 'optsched COMMAND --help' for a command's options and defaults.")


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    try:
        args = parser.parse_args(argv)
        code = args.run(args) or 0
        sys.stdout.flush()
        return code
    except OptschedError as exc:
        print(f"optsched: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # the reader went away (``optsched generate ... | head -1``): stop quietly, like any Unix
        # filter, and keep Python from complaining again when it flushes stdout at exit
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, what a shell reports for a filter killed by SIGPIPE
    except KeyboardInterrupt:
        print("optsched: interrupted", file=sys.stderr)
        return 130


# --------------------------------------------------------------------------- commands


def cmd_families(args) -> None:
    from optsched.registry import families

    known = families()
    width = max(map(len, known))
    for name, fam in known.items():
        print(f"{name:<{width}}  {fam.description}")


def cmd_methods(args) -> None:
    from optsched.registry import get_family

    entries = get_family(args.family).methods
    if args.json:
        print(json.dumps([m.to_dict() for m in entries], indent=1))
        return
    rows: list[tuple[str, ...]] = [("method", "kind", "claimed guarantee", "description")]
    rows += [(m.name, m.kind + (" (relaxed)" if m.relaxed else ""), m.guarantee_text() or "-",
              m.description) for m in entries]
    print(_table(rows, width=None if args.wide else TABLE_WIDTH))


#: Width of the tables the CLI prints (``--wide``: no limit).
TABLE_WIDTH = 100


def _table(rows: list[tuple[str, ...]], width: int | None, cap: int = 28) -> str:
    """Rows as aligned columns, cells wrapped so that no line exceeds ``width``: the last column
    takes the room left, the others at most ``cap`` characters each (None: no wrapping)."""
    import itertools
    import textwrap

    n = len(rows[0])
    widths = [max(len(r[i]) for r in rows) for i in range(n - 1)]
    if width is not None:
        widths = [min(w, cap) for w in widths]
        widths.append(max(20, width - sum(widths) - 2 * (n - 1)))
    else:
        widths.append(max(len(r[-1]) for r in rows))
    lines = []
    for row in rows:
        cells = [textwrap.wrap(v, w) or [""] for v, w in zip(row, widths)]
        for parts in itertools.zip_longest(*cells, fillvalue=""):
            lines.append("  ".join(f"{v:<{w}}" for v, w in zip(parts, widths)).rstrip())
    return "\n".join(lines)


def cmd_generate(args) -> None:
    from optsched import dump, dumps, generate

    output = _output_path(args.output, "-o")
    inst = generate(args.family, args.preset, args.seed)
    if output:
        _write(lambda path: dump(inst, path), output)
    else:
        print(dumps(inst))


def cmd_solve(args) -> None:
    from optsched import dump, load_instance, solve

    output = _output_path(args.output, "-o")
    plot = _output_path(args.plot, "--plot", image=True)
    inst = load_instance(args.file)
    if args.write_model and _write_declared_model(inst, args):
        return
    with _solver_options(args) as options:
        result = solve(inst, args.method, time_limit=args.time_limit, seed=args.seed)
    if args.json:
        print(json.dumps(result.to_dict(), indent=1))
    else:
        print(result.summary())
    _report_written(options)
    if result.schedule is None:
        for flag, path in (("-o", output), ("--plot", plot)):
            if path:
                print(f"optsched: note: no schedule (status {result.status.value}); {flag} {path} "
                      f"not written", file=sys.stderr)
        return
    if output:
        _write(lambda path: dump(result.schedule, path), output)
    if plot:
        from optsched.gantt import plot_schedule, title_of

        title = title_of(inst, result.objective, f"{result.method}, {result.status.value}")
        _write(lambda path: plot_schedule(inst, result.schedule, path, objective=result.objective,
                                          title=title), plot)


def _write_declared_model(inst, args) -> bool:
    """``--write-model`` for a method that declares its model (:attr:`Method.model`): build it,
    write it to the file and say which model it is, without solving (False: none declared)."""
    from optsched.deadline import Deadline
    from optsched.registry import get_method

    entry = get_method(inst.FAMILY, args.method)
    if entry.model is None:
        return False
    from optsched.solvers.highs import write_model

    model = entry.build_model(inst, Deadline.after(args.time_limit))
    w = write_model(model, args.write_model)
    print(textwrap.fill(f"wrote {w['path']}, not solved: the model {entry.name} solves "
                        f"({w['model']}; {w['variables']:,} variables, {w['constraints']:,} "
                        f"constraints)", 100, subsequent_indent="  ", break_on_hyphens=False))
    return True


def cmd_certify(args) -> None:
    from optsched import certify, load_instance

    output = _output_path(args.output, "-o")
    inst = load_instance(args.file)
    progress = None if args.quiet else (lambda step: print(_step_line(step), file=sys.stderr,
                                                            flush=True))
    with _solver_options(args):
        result = certify(inst, time_limit=args.time_limit, seed=args.seed, progress=progress)
    if args.json:
        print(json.dumps(result.to_dict(), indent=1))
    else:
        print(result.summary())
        for step in result.info["steps"]:
            print(_step_line(step))
    if output and result.schedule is not None:
        from optsched import dump

        _write(lambda path: dump(result.schedule, path), output)


def _step_line(step: dict) -> str:
    """One step of certify for the terminal."""
    if "error" in step or "skipped" in step:
        return f"  {step['side']:<6} {step['method']:<24} {step.get('error') or step['skipped']}"
    obj, lb = step.get("objective"), step.get("lower_bound")
    value = f"UB {obj:,.10g}" if isinstance(obj, float) and obj != float("inf") else "no schedule"
    bound = "" if lb is None else f", LB {lb:,.10g}"
    return (f"  {step['side']:<6} {step['method']:<24} {step['status']:<10} {value}{bound} "
            f"({step['seconds']:.1f} s)")


def _solver_options(args):
    """The solver options of ``--solver``, ``--log``, ``--threads`` and ``--write-model``."""
    from optsched.solvers.options import SolverOptions, using

    return using(SolverOptions(name=args.solver, log=args.log, threads=args.threads,
                               write_model=getattr(args, "write_model", None)))


def _report_written(options) -> None:
    for w in options.written:
        print(f"wrote model {w['model']!r} ({w['variables']:,} variables, {w['constraints']:,} "
              f"constraints) to {w['path']}", file=sys.stderr)
    if options.write_model and not options.written:
        print(f"optsched: note: the method solved no model; nothing written to "
              f"{options.write_model}", file=sys.stderr)


def cmd_verify(args) -> None:
    from optsched import load_instance, load_schedule, verify

    inst = load_instance(args.file)
    schedule = load_schedule(args.schedule, inst.FAMILY)
    print(f"feasible; objective {verify(inst, schedule):.10g}")


def cmd_plot(args) -> None:
    from optsched import load_instance, load_schedule
    from optsched.gantt import plot_schedule

    output = _checked_output(args.output, "-o", image=True)
    inst = load_instance(args.file)
    schedule = load_schedule(args.schedule, inst.FAMILY)
    objective = _write(lambda path: plot_schedule(inst, schedule, path), output)
    print(f"feasible; objective {objective:.10g}; wrote {output}")


def cmd_ratios(args) -> None:
    from optsched.experiments.ratios import format_table, run_ratios

    rows = run_ratios(families=args.family, preset=args.preset, seeds=args.seeds,
                      time_limit=args.time_limit, workers=args.workers, scheduler=args.scheduler,
                      out=args.out, exact=args.exact, solver=args.solver,
                      progress=_progress(args))
    print(format_table(rows, wide=args.wide))


def cmd_compare(args) -> None:
    from optsched.experiments.compare import run_compare

    _output_dir(args.out, "--out")
    with _solver_options(args):
        _, table = run_compare(args.family, preset=args.preset, seeds=args.seeds, out=args.out,
                               time_limit=args.time_limit, certify=args.certify,
                               progress=_progress(args))
    print(table)


def cmd_worst(args) -> None:
    from optsched.experiments.worst import format_result, replay, run_worst

    from optsched.experiments.worst.hypotheses import hypothesis_of

    hypothesis = None if args.hypothesis is None else hypothesis_of(args.hypothesis, args.family)
    if args.replay:
        print(format_result(replay(args.family, args.method, args.replay, args.against,
                                   target=args.target, time_limit=args.time_limit,
                                   hypothesis=hypothesis)))
        return
    out = args.out or time.strftime(f"worst-{args.family}-{args.method}-%Y%m%d-%H%M%S")

    overrides = {}
    for item in args.override or ():
        key, sep, text = item.partition("=")
        if not sep or not key:
            raise OptschedError(f"--override {item}: expected KEY=VALUE")
        try:
            value = json.loads(text)
        except ValueError:
            value = text
        overrides[key] = tuple(value) if isinstance(value, list) else value
    res = run_worst(args.family, args.method, args.against, size=args.size, budget=args.budget,
                    time_limit=args.time_limit, seed=args.seed, preset=args.preset,
                    overrides=overrides, workers=args.workers, scheduler=args.scheduler,
                    out=out, strategy=args.strategy, target=args.target,
                    hypothesis=hypothesis)
    print(format_result(res, out))


# --------------------------------------------------------------------------- output files


#: Image formats of ``plot -o`` and ``solve --plot`` (matplotlib picks the format from the suffix).
IMAGE_SUFFIXES = (".png", ".svg", ".pdf", ".jpg", ".jpeg", ".webp", ".eps", ".ps", ".tif", ".tiff")


def _output_path(path: str | None, flag: str, image: bool = False) -> Path | None:
    """:func:`_checked_output` of an optional FILE (None when not given)."""
    return _checked_output(path, flag, image) if path else None


def _checked_output(path: str, flag: str, image: bool = False) -> Path:
    """Check an output FILE before any work is done: its directory must exist (optsched never
    creates directories for ``-o``/``--plot``; a typo in a path is an error, not a new tree), and
    an image's suffix names a format."""
    out = Path(path)
    if image and out.suffix.lower() not in IMAGE_SUFFIXES:
        raise OptschedError(f"{flag} {path}: the file name must end in one of "
                            f"{', '.join(IMAGE_SUFFIXES)}")
    parent = out.parent
    if not parent.is_dir():
        what = "is not a directory" if parent.exists() else "does not exist"
        raise OptschedError(f"{flag} {path}: directory {parent} {what}")
    if out.is_dir():
        raise OptschedError(f"{flag} {path}: is a directory")
    return out


def _output_dir(path: str | None, flag: str) -> None:
    """Create an output DIR (``--out``) before any work is done; failing that, a one-line error."""
    if path:
        try:
            Path(path).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OptschedError(f"{flag}: cannot create {path}: {exc.strerror or exc}") from None


def _write(writer: Callable[[Path], object], path: Path):
    """``writer(path)`` with an OS error (permission, full disk) as a one-line user error."""
    try:
        return writer(path)
    except OSError as exc:
        raise OptschedError(f"cannot write {path}: {exc.strerror or exc}") from None


# --------------------------------------------------------------------------- parser


class _Parser(argparse.ArgumentParser):
    """argparse with one-line usage errors (exit 2) and help texts computed only when shown.

    Help that needs the registry (family names, presets, per-family defaults) is attached with
    :func:`_later`, so ``optsched --help`` and plain runs never import the families' solvers.
    """

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)
        self._later: list[tuple[argparse.Action, Callable[[], str]]] = []

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")

    def format_help(self):
        for action, text in self._later:
            action.help = text()
        return super().format_help()


class _Formatter(argparse.HelpFormatter):
    def __init__(self, prog):
        super().__init__(prog, max_help_position=30, width=min(100, _terminal_width()))


def _terminal_width() -> int:
    try:
        return os.get_terminal_size().columns
    except OSError:
        return 100


def _later(parser: _Parser, action: argparse.Action, text: Callable[[], str]) -> None:
    parser._later.append((action, text))


class _FamilyNames:
    """The registered family names as argparse ``choices``, looked up on first use."""

    def __contains__(self, name) -> bool:
        from optsched.registry import family_names

        return name in family_names()

    def __iter__(self):
        from optsched.registry import family_names

        return iter(family_names())


def _presets() -> str:
    from optsched.registry import families

    seen: list[str] = []
    for fam in families().values():
        seen += [p for p in fam.workloads.PRESETS if p not in seen]
    return ", ".join(seen)


def _ratio_defaults(what: str) -> str:
    from optsched.registry import families

    values = {name: getattr(fam, what) for name, fam in families().items()}
    if len(set(values.values())) == 1:
        return f"{next(iter(values.values()))} for every family"
    return ", ".join(f"{name} {v}" for name, v in values.items())


def _ratios_time_limit() -> str:
    from optsched.experiments.ratios import DEFAULT_TIME_LIMIT

    return (f"seconds per exact solve and per other method call (default: {DEFAULT_TIME_LIMIT:g}; "
            f"a time-out is a status, never counted as optimal)")


def _family_arg(s: _Parser, **kw) -> argparse.Action:
    return s.add_argument("family", choices=_FamilyNames(), metavar="FAMILY",
                          help=kw.pop("help", "one of: %(choices)s"), **kw)


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="optsched", description=DESCRIPTION, epilog=EPILOG)
    p.add_argument("--version", action="version", version=f"optsched {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=_Parser,
                           title="commands")

    def command(name: str, summary: str, description: str = "") -> _Parser:
        return sub.add_parser(name, help=summary, description=description or summary[0].upper()
                              + summary[1:] + ".")

    for add in COMMANDS:
        add(command)
    return p


def _add_families(command: Callable[..., _Parser]) -> None:
    s = command("families", "list the five problem families, one line each",
                "List every problem family: its name (the \"family\" tag of instance and schedule "
                "JSON), the paper and the objective.")
    s.set_defaults(run=cmd_families)


def _add_methods(command: Callable[..., _Parser]) -> None:
    s = command("methods", "list the methods of a family: name, kind, claimed guarantee",
                "List the methods of FAMILY: name, kind (exact | bound | algorithm | baseline; "
                "\"relaxed\" marks methods that solve a relaxed model on purpose, checked by their "
                "own verifier and not comparable with the exact optimum), the paper's claimed "
                "guarantee, and a description.")
    _family_arg(s)
    s.add_argument("--json", action="store_true",
                   help="print a JSON list of objects (name, kind, guarantee, description, "
                        "relaxed, params with the paper text each parameter reads)")
    s.add_argument("--wide", action="store_true",
                   help=f"do not wrap the table at {TABLE_WIDTH} columns")
    s.set_defaults(run=cmd_methods)


def _add_generate(command: Callable[..., _Parser]) -> None:
    s = command("generate", "write a seeded instance as JSON",
                "Generate a seeded, validated instance of FAMILY following the paper's evaluation "
                "(tiny and small are exact-solvable; paper is the paper's scale).")
    _family_arg(s)
    a = s.add_argument("--preset", default="tiny", metavar="P")
    _later(s, a, lambda: f"one of: {_presets()} (default: %(default)s)")
    s.add_argument("--seed", type=_nonnegative_int, default=0, metavar="N",
                   help="random seed, an integer >= 0 (default: %(default)s)")
    s.add_argument("-o", "--output", metavar="FILE",
                   help="write to FILE (its directory must exist) instead of stdout")
    s.set_defaults(run=cmd_generate)


def _add_solve(command: Callable[..., _Parser]) -> None:
    s = command("solve", "solve an instance file with one method",
                "Solve the instance in FILE with one method and print the Result (status, "
                "objective recomputed by the family's verifier, lower bound, runtime, the paper's "
                "claimed guarantee on this instance). A time limit is a status, never an error.")
    s.add_argument("file", metavar="FILE", help="instance JSON (from 'optsched generate')")
    s.add_argument("--method", metavar="M",
                   help="a method of the instance's family, see 'optsched methods FAMILY' "
                        "(default: the family's paper algorithm)")
    s.add_argument("--time-limit", type=_positive, default=None, metavar="S",
                   help="seconds for the whole method call (default: no limit)")
    s.add_argument("--seed", type=_nonnegative_int, default=0, metavar="N",
                   help="seed of randomised methods, an integer >= 0 (default: %(default)s)")
    s.add_argument("--json", action="store_true", help="print the Result as JSON")
    s.add_argument("-o", "--output", metavar="FILE",
                   help="also write the schedule JSON to FILE (its directory must exist)")
    s.add_argument("--plot", metavar="FILE",
                   help="also draw the schedule as a Gantt chart to FILE (.png, .svg, .pdf)")
    _solver_args(s)
    s.add_argument("--write-model", metavar="FILE",
                   help="write the model the method solves to FILE (.lp or .mps) without "
                        "solving it, naming which model it is (every exact method declares one); "
                        "for a method that declares none, solve and write every Pyomo model it "
                        "solves, numbered in order, to FILE.1.lp, FILE.2.lp, ... and list them on "
                        "stderr")
    s.set_defaults(run=cmd_solve)


def _add_certify(command: Callable[..., _Parser]) -> None:
    s = command("certify", "prove an interval [LB, UB] on the optimum, at any scale",
                "Certify the instance in FILE: the exact method (which proves small instances), "
                "then every algorithm and baseline, the family's strongest lower bound and its "
                "any-time improvement, each schedule verified; print the best verified schedule "
                "(UB), the best bound (LB), the gap UB/LB - 1 and every step.")
    s.add_argument("file", metavar="FILE", help="instance JSON (from 'optsched generate')")
    s.add_argument("--time-limit", type=_positive, default=600.0, metavar="S",
                   help="seconds for the whole call (default: %(default)s)")
    s.add_argument("--seed", type=_nonnegative_int, default=0, metavar="N",
                   help="seed of randomised methods (default: %(default)s)")
    s.add_argument("--json", action="store_true", help="print the Result as JSON")
    s.add_argument("-o", "--output", metavar="FILE",
                   help="also write the best schedule JSON to FILE")
    s.add_argument("-q", "--quiet", action="store_true",
                   help="no progress lines on stderr (one per step as it finishes)")
    _solver_args(s)
    s.set_defaults(run=cmd_certify)


def _add_verify(command: Callable[..., _Parser]) -> None:
    s = command("verify", "check a schedule against an instance, print its objective",
                "Check SCHEDULE against the instance in FILE with the family's independent "
                "verifier; print the objective, or exit 2 naming the violated constraint (the "
                "paper's equation number).")
    s.add_argument("file", metavar="FILE", help="instance JSON")
    s.add_argument("schedule", metavar="SCHEDULE", help="schedule JSON (from 'optsched solve -o')")
    s.set_defaults(run=cmd_verify)


def _add_plot(command: Callable[..., _Parser]) -> None:
    s = command("plot", "draw a schedule as a Gantt chart",
                "Verify SCHEDULE against the instance in FILE and draw it as a Gantt chart: one "
                "row per device (GPU, server or switch port, by family), one colour per job, the "
                "objective in the title. An infeasible schedule is an error (exit 2), not a chart.")
    s.add_argument("file", metavar="FILE", help="instance JSON")
    s.add_argument("schedule", metavar="SCHEDULE", help="schedule JSON")
    s.add_argument("-o", "--output", default="gantt.png", metavar="FILE",
                   help="image file; the format follows the suffix: .png, .svg, .pdf "
                        "(default: %(default)s)")
    s.set_defaults(run=cmd_plot)


def _add_ratios(command: Callable[..., _Parser]) -> None:
    s = command("ratios", "THE MAIN JOB: empirical ratios against the exact optimum",
                "Run every method of every chosen family on seeded instances, check each "
                "schedule with the family's verifier, and print ALG/OPT (LB/OPT for bounds) "
                "against the proven optimum beside the paper's claimed guarantee. Relaxed-model "
                "methods are listed as \"not comparable\". With --out the run is resumable.")
    a = s.add_argument("--family", action="append", choices=_FamilyNames(), metavar="FAMILY",
                       help="repeatable; one of: %(choices)s (default: every family)")
    a = s.add_argument("--preset", default=None, metavar="P")
    _later(s, a, lambda: f"one of: {_presets()} (default: {_ratio_defaults('ratio_preset')})")
    a = s.add_argument("--seeds", type=_positive_int, default=None, metavar="N")
    _later(s, a, lambda: f"instances per family, seeds 0..N-1 (default: "
                         f"{_ratio_defaults('ratio_seeds')})")
    a = s.add_argument("--time-limit", type=_positive, default=None, metavar="S")
    _later(s, a, _ratios_time_limit)
    s.add_argument("--exact", default="milp", choices=("milp", "cp", "portfolio"),
                   help="where OPT comes from: the HiGHS MILP `exact`, the CP-SAT `exact_cp` "
                        "(extra cp; the MILP where a family has none), or both one after the "
                        "other, each with the full time limit, proven when either proves or "
                        "when one's incumbent meets the other's bound; one of: %(choices)s "
                        "(default: %(default)s)")
    s.add_argument("--workers", type=_positive_int, default=1, metavar="K",
                   help="local processes, HiGHS threads=1 each, at most the cores available "
                        "(default: %(default)s)")
    s.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="send the instances to this Dask distributed scheduler instead "
                        "(default: run locally)")
    s.add_argument("--out", default=None, metavar="DIR",
                   help="write results.jsonl, summary.csv and ratios.png to DIR, created if "
                        "missing; re-running with the same DIR skips rows already there "
                        "(default: print only)")
    s.add_argument("--solver", default="highs", metavar="NAME",
                   help="solver of every Pyomo model: highs (the reference), scip (extra scip) "
                        "or any solver Pyomo drives when installed (default: %(default)s)")
    s.add_argument("--wide", action="store_true",
                   help="one table with a family column and separate ALG/OPT and LB/OPT "
                        "columns, wider than 100 columns (default: a block per family)")
    _quiet_arg(s)
    s.set_defaults(run=cmd_ratios)


def _add_compare(command: Callable[..., _Parser]) -> None:
    s = command("compare", "the paper's algorithm against its baselines at scale",
                "Run the paper's algorithm (every reading of it) and its baselines on larger "
                "instances, normalised by the paper's algorithm, with the best lower bound.")
    _family_arg(s)
    a = s.add_argument("--preset", default="paper", metavar="P")
    _later(s, a, lambda: f"one of: {_presets()} (default: %(default)s)")
    s.add_argument("--seeds", type=_positive_int, default=3, metavar="N",
                   help="instances, seeds 0..N-1 (default: %(default)s)")
    s.add_argument("--time-limit", type=_positive, default=None, metavar="S",
                   help="seconds per method call (default: no limit)")
    s.add_argument("--out", default=None, metavar="DIR",
                   help="write compare.csv and compare.png to DIR, created if missing "
                        "(default: print only)")
    s.add_argument("--certify", type=_positive, default=None, metavar="S",
                   help="also certify every instance for S seconds (from the schedules and "
                        "bound just computed): ALG/UB and the certified gap (default: off)")
    _solver_args(s)
    _quiet_arg(s)
    s.set_defaults(run=cmd_compare)


def _add_worst(command: Callable[..., _Parser]) -> None:
    s = command("worst", "search for the instance on which a method is worst",
                "Search valid instances of bounded size for the largest "
                "objective(M)/objective(reference), or (--target) for a violation of M's "
                "claimed guarantee or of a paper lemma: mutation-based (1+lambda) evolution, "
                "an evolution strategy on the numbers, or both, with restarts, then "
                "delta-debugging shrinking. Only proven optima count; every schedule is "
                "verified. The instance, schedules and figures are saved (--out; the run is "
                "resumable); --replay FILE checks a saved instance again.")
    _family_arg(s)
    s.add_argument("--method", required=True, metavar="M", help="the algorithm or baseline")
    s.add_argument("--against", default="exact", metavar="R",
                   help="exact (the proven optimum) or another method (default: %(default)s)")
    s.add_argument("--size", type=_positive_int, default=None, metavar="N",
                   help="bound on the family's size (jobs; tasks for hetero_gpu) (default: the "
                        "largest the generator gives for the preset)")
    s.add_argument("--budget", type=_positive, default=60.0, metavar="S",
                   help="wall-clock seconds of the run (default: %(default)s)")
    s.add_argument("--time-limit", type=_positive, default=10.0, metavar="S",
                   help="seconds per solve; an unproven optimum is never counted "
                        "(default: %(default)s)")
    s.add_argument("--seed", type=_nonnegative_int, default=0, metavar="N",
                   help="seed of the search (default: %(default)s)")
    s.add_argument("--preset", default="tiny", metavar="P",
                   help="generator preset of the starting instances (default: %(default)s)")
    s.add_argument("--override", action="append", metavar="KEY=VALUE",
                   help="generator override, VALUE in JSON, repeatable (e.g. n_gpus=[1,1])")
    s.add_argument("--target", default="ratio", metavar="T",
                   help="what to maximise: ratio (ALG/OPT), violation (ALG/(OPT x the method's "
                        "claimed guarantee); > 1 refutes the claim) or lemma:NAME (a paper "
                        "lemma registered for the family, e.g. lemma:lemma3 for "
                        "ring_contention) (default: %(default)s)")
    s.add_argument("--strategy", choices=("search", "continuous", "hybrid", "random"),
                   default="search",
                   help="search (mutations), continuous (evolution strategy on the numbers), "
                        "hybrid (continuous + structure moves) or random (baseline) "
                        "(default: %(default)s)")
    from optsched.experiments.worst.hypotheses import HYPOTHESES

    known = "; ".join(f"{h.name} ({h.family}: {h.text})" for h in HYPOTHESES.values())
    s.add_argument("--hypothesis", default=None, metavar="NAME",
                   help="discard candidates outside the claim's statement, never evaluated "
                        f"(with --replay: refuse an instance outside it): {known}")
    s.add_argument("--replay", default=None, metavar="FILE",
                   help="evaluate the instance FILE once with --method, --against and --target "
                        "(the one-command reproduction of a finding) instead of searching")
    s.add_argument("--workers", type=_positive_int, default=1, metavar="K",
                   help="local processes, at most the cores available (default: %(default)s)")
    s.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="a Dask distributed scheduler instead of local processes")
    s.add_argument("--out", default=None, metavar="DIR",
                   help="write worst.json, the two schedules, result.json and results.jsonl "
                        "(resumable) to DIR (default: a new folder "
                        "worst-FAMILY-METHOD-DATE-TIME)")
    s.set_defaults(run=cmd_worst)


def _add_schema(command: Callable[..., _Parser]) -> None:
    s = command("schema", "print the JSON Schema of a family's instance or schedule format",
                "Print the JSON Schema (draft 2020-12) of FAMILY's instance or schedule JSON: "
                "every field with its meaning in the paper's notation, its type and its bounds; "
                "every position of a positional array is named.")
    s.add_argument("family", metavar="FAMILY", help="a family, see 'optsched families'")
    s.add_argument("kind", nargs="?", default="instance", choices=("instance", "schedule"),
                   metavar="KIND", help="instance or schedule (default: %(default)s)")
    s.set_defaults(run=cmd_schema)


#: The subcommands in the order ``optsched --help`` lists them.
COMMANDS = (_add_families, _add_methods, _add_generate, _add_solve, _add_certify, _add_verify, _add_plot, _add_ratios, _add_compare, _add_worst, _add_schema)


def cmd_schema(args) -> None:
    """Print the JSON Schema of a family's instance or schedule document (indent 2)."""
    from optsched.schema import schema

    print(json.dumps(schema(args.family, args.kind), indent=2, ensure_ascii=False))


def _quiet_arg(s: argparse.ArgumentParser) -> None:
    group = s.add_mutually_exclusive_group()
    group.add_argument("-q", "--quiet", action="store_true",
                       help="no progress on stderr (default: a bar on a terminal, else a line "
                            "every few seconds)")
    group.add_argument("-v", "--verbose", action="store_true",
                       help="progress lines on stderr, plus one line per finished instance "
                            "(ratios) or method call (compare)")


def _progress(args):
    """The ``progress`` argument of run_ratios / run_compare from ``-q`` and ``-v``."""
    return False if args.quiet else "verbose" if args.verbose else None


def _solver_args(s: argparse.ArgumentParser) -> None:
    """--solver, --log and --threads: which solver every Pyomo model is solved with."""
    s.add_argument("--solver", default="highs", metavar="NAME",
                   help="highs (the reference), scip (extra scip) or any solver Pyomo drives "
                        "when installed: gurobi, cplex, cbc, glpk, ... (default: %(default)s)")
    s.add_argument("--log", action="store_true", help="solver output to stderr")
    s.add_argument("--threads", type=_positive_int, default=None, metavar="N",
                   help="solver threads (default: 1)")


def _positive(text: str) -> float:
    return _number(text, float, lambda v: 0 < v < float("inf"), "> 0 and finite")


def _positive_int(text: str) -> int:
    return _number(text, int, lambda v: v >= 1, ">= 1")


def _nonnegative_int(text: str) -> int:
    return _number(text, int, lambda v: v >= 0, ">= 0")


def _number(text: str, kind, ok, rule: str):
    """argparse type: ``kind(text)`` satisfying ``ok``, else a one-line error naming ``rule``."""
    try:
        value = kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not {'an integer' if kind is int else 'a number'}: "
                                         f"{text!r}") from None
    if not ok(value):
        raise argparse.ArgumentTypeError(f"must be {rule}, got {text}")
    return value


if __name__ == "__main__":
    sys.exit(main())

"""The ``optsched`` command line (DESIGN.md, "CLI"). Exit 0 on success, 2 with one line on stderr for
any user error (missing file, bad JSON, invalid instance, unknown family/method)."""

from __future__ import annotations

import argparse
import json
import sys

from optsched.errors import OptschedError
from optsched.registry import families, get_family


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return args.run(args) or 0
    except OptschedError as exc:
        print(f"optsched: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("optsched: interrupted", file=sys.stderr)
        return 130


def cmd_families(args) -> None:
    known = families()
    width = max(map(len, known))
    for name, fam in known.items():
        print(f"{name:<{width}}  {fam.description}")


def cmd_methods(args) -> None:
    entries = get_family(args.family).methods
    if args.json:
        print(json.dumps([m.to_dict() for m in entries], indent=1))
        return
    rows = [(m.name, m.kind, m.guarantee_text() or "-", m.description) for m in entries]
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    for row in rows:
        print("  ".join(f"{v:<{w}}" for v, w in zip(row, widths)) + "  " + row[3])


def cmd_generate(args) -> None:
    from optsched import dump, dumps, generate

    inst = generate(args.family, args.preset, args.seed)
    if args.output:
        dump(inst, args.output)
    else:
        print(dumps(inst))


def cmd_solve(args) -> None:
    from optsched import dump, load_instance, solve

    inst = load_instance(args.file)
    result = solve(inst, args.method, time_limit=args.time_limit, seed=args.seed)
    if args.output and result.schedule is not None:
        dump(result.schedule, args.output)
    if args.json:
        print(json.dumps(result.to_dict(), indent=1))
    else:
        print(result.summary())


def cmd_verify(args) -> None:
    from optsched import load_instance, load_schedule, verify

    inst = load_instance(args.file)
    schedule = load_schedule(args.schedule, inst.FAMILY)
    print(f"feasible; objective {verify(inst, schedule):.10g}")


def cmd_ratios(args) -> None:
    from optsched.experiments.ratios import format_table, run_ratios

    for family in args.family or ():
        get_family(family, error=OptschedError, where="--family")
    rows = run_ratios(families=args.family, preset=args.preset, seeds=args.seeds,
                      time_limit=args.time_limit, workers=args.workers, scheduler=args.scheduler,
                      out=args.out)
    print(format_table(rows))


def cmd_compare(args) -> None:
    from optsched.experiments.compare import run_compare

    _, table = run_compare(args.family, preset=args.preset, seeds=args.seeds, out=args.out,
                           time_limit=args.time_limit)
    print(table)


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr (exit 2), like every other user error."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="optsched", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=_Parser)
    family = dict(choices=list(families()), metavar="FAMILY")

    s = sub.add_parser("families", help="the five families, one line each")
    s.set_defaults(run=cmd_families)

    s = sub.add_parser("methods", help="methods of a family: name, kind, guarantee")
    s.add_argument("family", **family)
    s.add_argument("--json", action="store_true", help="a JSON list of objects")
    s.set_defaults(run=cmd_methods)

    s = sub.add_parser("generate", help="a seeded instance as JSON")
    s.add_argument("family", **family)
    s.add_argument("--preset", default="tiny", help="tiny | small | paper (default tiny)")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("-o", "--output", help="write to FILE instead of stdout")
    s.set_defaults(run=cmd_generate)

    s = sub.add_parser("solve", help="solve an instance file with one method")
    s.add_argument("file")
    s.add_argument("--method", help="default: the family's paper algorithm")
    s.add_argument("--time-limit", type=_positive, default=None, metavar="S")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--json", action="store_true", help="print the Result as JSON")
    s.add_argument("-o", "--output", help="also write the schedule JSON to FILE")
    s.set_defaults(run=cmd_solve)

    s = sub.add_parser("verify", help="check a schedule against an instance, print its objective")
    s.add_argument("file")
    s.add_argument("schedule")
    s.set_defaults(run=cmd_verify)

    s = sub.add_parser("ratios", help="THE MAIN JOB: empirical ratios vs the exact optimum")
    s.add_argument("--family", action="append", help="repeatable; default: every family")
    s.add_argument("--preset", default=None, help="default: each family's tiny preset")
    s.add_argument("--seeds", type=_positive_int, default=None, metavar="N")
    s.add_argument("--time-limit", type=_positive, default=None, metavar="S",
                   help="per exact solve")
    s.add_argument("--workers", type=_positive_int, default=1, metavar="K")
    s.add_argument("--scheduler", default=None, metavar="ADDRESS", help="a Dask scheduler address")
    s.add_argument("--out", default=None, metavar="DIR", help="results.jsonl, summary.csv, ratios.png")
    s.set_defaults(run=cmd_ratios)

    s = sub.add_parser("compare", help="the paper's algorithm vs its baselines at scale")
    s.add_argument("family", **family)
    s.add_argument("--preset", default="paper")
    s.add_argument("--seeds", type=_positive_int, default=3, metavar="N")
    s.add_argument("--time-limit", type=_positive, default=None, metavar="S")
    s.add_argument("--out", default=None, metavar="DIR")
    s.set_defaults(run=cmd_compare)
    return p


def _positive(text: str) -> float:
    return _number(text, float, lambda v: v > 0, "> 0")


def _positive_int(text: str) -> int:
    return _number(text, int, lambda v: v >= 1, ">= 1")


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

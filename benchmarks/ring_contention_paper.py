"""ring_contention at paper scale (Sec. 7, Figs. 4–7) and SJF-BCO's run time (not a test).

Fig. 4: makespan and average JCT of SJF-BCO vs FF, LS and RAND (mean of 10 seeds), 20 servers,
T = 1200. Fig. 5: kappa = 1..32 (Alg. 1 with the single kappa). Fig. 6: servers 10 -> 20, T = 1500
(same jobs, servers drawn from their own stream). Fig. 7: lambda in {1, 2, 4, 8} with kappa = 1.
Also the run time of the full theta x kappa search with kappa over the distinct G values and over
all of 1..32 (the paper's loop). All makespans are the exact simulation of (6)–(9), checked by verify.

    python benchmarks/ring_contention_paper.py [--seeds 3] [--figs 4,5,6,7,time,variants] [--extra-cap 0.5]
        [--out DIR]
"""

from __future__ import annotations

import argparse
import statistics
import time

from optsched.deadline import NEVER
from optsched.problems.ring_contention import average_jct, verify
from optsched.registry import solve
from optsched.solvers.ring_contention import algorithm as rc
from optsched.workloads.ring_contention import generate

BASELINES = ("first_fit", "list_scheduling")


def mean(xs):
    return statistics.mean(xs)


def policies(inst, rand_seeds: int = 10) -> dict[str, tuple[float, float, float]]:
    """(makespan, average JCT, run time) per policy; RAND averaged over ``rand_seeds`` seeds."""
    out = {}
    for name in ("sjf_bco",) + BASELINES:
        r = solve(inst, name)
        out[name] = (r.objective, average_jct(inst, r.schedule), r.runtime_s)
    rs = [solve(inst, "random", seed=s) for s in range(rand_seeds)]
    out["random"] = (mean([r.objective for r in rs]), mean([average_jct(inst, r.schedule) for r in rs]),
                     mean([r.runtime_s for r in rs]))
    return out


EXTRA = {}  # generator overrides from the command line (e.g. extra_cap)
DATA: dict[str, dict] = {"4": {}, "5": {}, "6": {}, "7": {}}  # figure -> series, for --out


def fig4(seeds):
    print(f"Fig. 4 (20 servers, T = 1200, {EXTRA or 'default calibration'}): "
          "makespan / avg JCT / run time [s]; LB = lower_bound")
    for seed in seeds:
        inst = generate("paper", seed, **EXTRA)
        lb = solve(inst, "lower_bound").lower_bound
        row = policies(inst)
        DATA["4"][seed] = {k: m for k, (m, _, _) in row.items()}
        print(f"  seed {seed} N={inst.n_gpus} LB={lb:.0f} " + "  ".join(
            f"{k} {m:.1f}/{j:.1f}/{t:.2f}" for k, (m, j, t) in row.items()), flush=True)


def fig5(seeds):
    print("Fig. 5 (kappa sweep, 20 servers, T = 1200): makespan of Alg. 1 with the single kappa")
    for seed in seeds:
        inst = generate("paper", seed)
        vals = [rc.sjf_bco_search(inst, rc.SjfBcoParams(kappas=(k,)), deadline=NEVER).makespan for k in range(1, 33)]
        DATA["5"][seed] = vals
        print(f"  seed {seed}: " + " ".join(f"{k}:{v}" for k, v in zip(range(1, 33), vals)), flush=True)


def fig6(seeds):
    print("Fig. 6 (T = 1500): makespan by number of servers")
    for seed in seeds:
        for n in (10, 12, 14, 16, 18, 20):
            inst = generate("paper", seed, n_servers=n, horizon=1500)
            row = policies(inst, rand_seeds=3)
            for k, (m, _, _) in row.items():
                DATA["6"].setdefault((seed, k), []).append((n, m))
            print(f"  seed {seed} servers {n:2d} N={inst.n_gpus:3d} " + "  ".join(
                f"{k} {m:.1f}" for k, (m, _, _) in row.items()), flush=True)


def fig7(seeds):
    print("Fig. 7 (kappa = 1, 20 servers, T = 1200): makespan by lambda")
    for seed in seeds:
        inst = generate("paper", seed)
        vals = []
        for lam in (1, 2, 4, 8):
            out = rc.sjf_bco(inst, rc.SjfBcoParams(kappas=(1,), lam=lam), deadline=NEVER)
            vals.append(verify(inst, out.schedule))
        DATA["7"][seed] = vals
        print(f"  seed {seed}: " + " ".join(f"lambda {l}: {v:.0f}" for l, v in zip((1, 2, 4, 8), vals)),
              flush=True)


def variants(seeds):
    print(f"SJF-BCO variants ({EXTRA or 'default calibration'}): makespan / avg JCT")
    for seed in seeds:
        inst = generate("paper", seed, **EXTRA)
        cells = []
        for label, kw in (("literal", {}), ("pack", {"fa_variant": "pack"}),
                          ("literal lambda=2", {"lam": 2.0}),
                          ("pack lambda=2", {"fa_variant": "pack", "lam": 2.0})):
            out = rc.sjf_bco(inst, rc.SjfBcoParams(**kw), deadline=NEVER)
            cells.append(f"{label} {verify(inst, out.schedule):.0f}/{average_jct(inst, out.schedule):.1f}")
        print(f"  seed {seed}: " + "  ".join(cells), flush=True)


def timing(seeds):
    print("SJF-BCO full theta x kappa search: run time")
    for seed in seeds:
        inst = generate("paper", seed)
        for kappas in ("distinct", "all"):
            t0 = time.perf_counter()
            res = rc.sjf_bco_search(inst, rc.SjfBcoParams(kappas=kappas), deadline=NEVER)
            dt = time.perf_counter() - t0
            print(f"  seed {seed} kappas={kappas:8s} passes {res.passes:3d} makespan {res.makespan} "
                  f"theta~ {res.theta} kappa {res.kappa} time {dt:.2f} s", flush=True)


def plot(folder: str) -> None:
    """One PNG per figure that ran (matplotlib, Agg)."""
    from pathlib import Path

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    specs = {"5": ("kappa", list(range(1, 33))), "7": ("lambda", [1, 2, 4, 8])}
    for fig, (xlabel, xs) in specs.items():
        if DATA[fig]:
            plt.figure(figsize=(5, 3.5))
            for seed, ys in DATA[fig].items():
                if fig == "5":
                    plt.step(xs, ys, where="post", label=f"seed {seed}")
                else:
                    plt.plot(xs, ys, "o-", label=f"seed {seed}")
            plt.xlabel(xlabel), plt.ylabel("makespan (slots)"), plt.legend(), plt.tight_layout()
            plt.savefig(out / f"ring_contention_fig{fig}.png", dpi=120), plt.close()
    if DATA["6"]:
        plt.figure(figsize=(5, 3.5))
        for (seed, k), pts in DATA["6"].items():
            plt.plot(*zip(*pts), "o-", label=f"{k} s{seed}")
        plt.xlabel("servers"), plt.ylabel("makespan (slots)"), plt.legend(fontsize=6), plt.tight_layout()
        plt.savefig(out / "ring_contention_fig6.png", dpi=120), plt.close()
    if DATA["4"]:
        plt.figure(figsize=(5, 3.5))
        names = list(next(iter(DATA["4"].values())))
        for i, (seed, row) in enumerate(DATA["4"].items()):
            plt.bar([x + 0.25 * i for x in range(len(names))], [row[k] for k in names], 0.25,
                    label=f"seed {seed}")
        plt.xticks(range(len(names)), names, fontsize=7), plt.ylabel("makespan (slots)")
        plt.legend(), plt.tight_layout()
        plt.savefig(out / "ring_contention_fig4.png", dpi=120), plt.close()
    print(f"plots in {out}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--figs", default="4,5,6,7,time")
    ap.add_argument("--out", default=None, help="folder for PNG plots of the figures run")
    ap.add_argument("--extra-cap", type=float, default=None,
                    help="worst-case contention+overhead share (paper: 0.15)")
    args = ap.parse_args()
    if args.extra_cap is not None:
        EXTRA["extra_cap"] = args.extra_cap
    seeds = range(args.seeds)
    table = {"4": fig4, "5": fig5, "6": fig6, "7": fig7, "time": timing, "variants": variants}
    for key in args.figs.split(","):
        table[key](seeds)
    if args.out:
        plot(args.out)


if __name__ == "__main__":
    main()

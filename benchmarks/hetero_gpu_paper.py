"""hetero_gpu at paper scale (Hare Sec. 7, Figs. 14–16): total weighted completion time per scheme.

    python benchmarks/hetero_gpu_paper.py --figure 15 --seeds 3
    python benchmarks/hetero_gpu_paper.py --figure 16
    python benchmarks/hetero_gpu_paper.py --figure 14

Fig. 14 varies the GPU count (200 jobs), Fig. 15 the job count (160 GPUs), Fig. 16 the
heterogeneity mix (160 GPUs, 200 jobs). Each cell is the median over seeds of sum w_n C_n, relative to
hare; the last columns are the median run times (s). Every schedule passes verify (through solve()).
"""

from __future__ import annotations

import argparse
import statistics

from optsched import generate, solve

SCHEMES = ("hare", "hare_eft", "sched_allox", "srtf", "gavel_fifo", "sched_homo", "lower_bound")
SWEEPS = {
    14: ("n_gpus", (40, 80, 120, 160, 200)),
    15: ("n_jobs", (100, 150, 200, 250, 300)),
    16: ("heterogeneity", ("low", "middle", "high")),
}


def run(figure: int, seeds: int) -> None:
    knob, values = SWEEPS[figure]
    print(f"Fig. {figure}: {knob}; cells = median over {seeds} seeds of sum w C / hare's")
    print(f"{knob:>13} " + " ".join(f"{s:>11}" for s in SCHEMES) + "   hare s  allox s")
    for value in values:
        cost = {s: [] for s in SCHEMES}
        secs = {s: [] for s in SCHEMES}
        for seed in range(seeds):
            inst = generate("hetero_gpu", "paper", seed, **{knob: value})
            for scheme in SCHEMES:
                res = solve(inst, scheme)
                cost[scheme].append(res.lower_bound if scheme == "lower_bound" else res.objective)
                secs[scheme].append(res.runtime_s)
        base = statistics.median(cost["hare"])
        cells = " ".join(f"{statistics.median(cost[s]) / base:11.3f}" for s in SCHEMES)
        print(f"{value!s:>13} {cells}   {statistics.median(secs['hare']):6.2f}  "
              f"{statistics.median(secs['sched_allox']):7.2f}")


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--figure", type=int, choices=sorted(SWEEPS), default=15)
    p.add_argument("--seeds", type=int, default=3)
    a = p.parse_args()
    run(a.figure, a.seeds)

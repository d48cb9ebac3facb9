"""hetero_gpu on exact-solvable instances: ALG/OPT beside Theorem 4's α(2+α), LB/OPT, exact times.

    python benchmarks/hetero_gpu_small.py [--seeds 20] [--preset small] [--time-limit 60]
    python benchmarks/hetero_gpu_small.py --sizes 8 10 12 14 16   # largest size proven optimal

Prints one line per method: instances, mean and max ratio, how often the claimed bound was exceeded.
"""

from __future__ import annotations

import argparse
import statistics

from optsched import generate, methods, solve


def ratio_table(preset: str, seeds: int, time_limit: float) -> None:
    ratios: dict[str, list[float]] = {}
    over: dict[str, int] = {}
    lemma2: dict[str, int] = {}  # instances where some task violates Lemma 2 (10)
    times = []
    for seed in range(seeds):
        inst = generate("hetero_gpu", preset, seed)
        opt = solve(inst, "exact", time_limit=time_limit)
        if opt.status.value != "optimal":
            print(f"seed {seed}: exact {opt.status.value}, skipped")
            continue
        times.append((opt.runtime_s, len(inst.tasks)))
        for m in methods("hetero_gpu"):
            if m.kind == "exact":
                continue
            res = solve(inst, m.name, time_limit=time_limit)
            value = res.lower_bound if m.kind == "bound" else res.objective
            ratios.setdefault(m.name, []).append(value / opt.objective)
            if res.guarantee is not None and res.objective > res.guarantee * opt.objective + 1e-6:
                over[m.name] = over.get(m.name, 0) + 1
            if res.info.get("lemma2_violations"):
                lemma2[m.name] = lemma2.get(m.name, 0) + 1
    print(f"{'method':<14} {'n':>3} {'mean':>7} {'max':>7}  exceeded-bound  lemma2-violated")
    for name, values in ratios.items():
        print(f"{name:<14} {len(values):>3} {statistics.mean(values):7.3f} {max(values):7.3f}"
              f"  {over.get(name, 0):>14}  {lemma2.get(name, 0):>15}")
    secs = [t for t, _ in times]
    print(f"exact: median {statistics.median(secs):.2f} s, max {max(secs):.2f} s, "
          f"tasks {min(n for _, n in times)}-{max(n for _, n in times)}")


def size_sweep(sizes: list[int], seeds: int, time_limit: float) -> None:
    for size in sizes:
        solved, secs = 0, []
        for seed in range(seeds):
            inst = generate("hetero_gpu", "small", seed, max_tasks=size, n_jobs=(size // 2, size // 2))
            res = solve(inst, "exact", time_limit=time_limit)
            solved += res.status.value == "optimal"
            secs.append(res.runtime_s)
        print(f"<= {size} tasks: {solved}/{seeds} proven optimal in {time_limit:g} s; "
              f"median {statistics.median(secs):.1f} s")


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--preset", default="small")
    p.add_argument("--seeds", type=int, default=20)
    p.add_argument("--time-limit", type=float, default=60.0)
    p.add_argument("--sizes", type=int, nargs="*")
    a = p.parse_args()
    if a.sizes:
        size_sweep(a.sizes, a.seeds, a.time_limit)
    else:
        ratio_table(a.preset, a.seeds, a.time_limit)

"""Headline claims of the Hare paper (Chen et al., HPDC'22) measured under every registered reading
of Algorithm 1 (issue 11); writes benchmarks/claims/hetero_gpu.json for the README claims table.

Readings (registered methods of the same ``hare`` function, :class:`HareParams`):
hare (line 12 argmin φ_m, as printed), hare_est (argmin max(t_i, φ_m), Theorem 4's proof, ties to
the fastest GPU), hare_est_index (the same, ties by index), hare_subsets (line 3 with the prefix
inequalities (9S) that Lemma 2's proof uses); hare_eft (earliest finish, not the paper's) is reported
beside them but never counted as a reading. Baseline readings: srtf / srtf_weighted.

Claims and what is measured (seeds fixed; about 3 min on a free core):

1. Theorem 4, α(2+α)-approximation: ALG/OPT on tests/data/hetero_gpu/theorem4_counterexample.json
   and the max over tiny seeds 0-7 (OPT from ``exact``, proven).
2. Lemma 2 (10): tasks violating it on tests/data/hetero_gpu/lemma2_counterexample.json and on
   tiny seeds 0-7 (``info["lemma2_violations"]``).
3. Fig. 12: Hare cuts total weighted JCT by 47.6-75.3 % vs the four baselines: paper preset
   (200 jobs, 160 GPUs, high mix), seeds 0-2, on sum w_n C_n and on sum w_n (C_n - a_n).
4. Abstract / Figs. 14-16: Hare beats the best baseline (Sched_Allox) by "about 2x": the ratio
   sched_allox / Hare on the same runs (counted as "about 2x" when >= 1.5).
5. Direction of Fig. 12: Hare beats every baseline on every seed.
6. Fig. 16: Hare ~ Sched_Homo at low heterogeneity (V100 only): seed 0, |ratio - 1| <= 10 %.

Usage:  python benchmarks/claims_hetero_gpu.py [--seeds 3]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from claims import label, write
from optsched import generate, load_instance, solve

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "claims" / "hetero_gpu.json"
PAPER = "Chen et al.: Hare (HPDC 2022), hetero_gpu"
READINGS = ("hare", "hare_est", "hare_est_index", "hare_subsets")
LINE12 = ("hare", "hare_est", "hare_est_index")  # at paper scale hare_subsets = hare (aggregate LP)
VARIANT = "hare_eft"
BASELINES = {"Gavel_FIFO": ("gavel_fifo",), "SRTF": ("srtf", "srtf_weighted"),
             "Sched_Homo": ("sched_homo",), "Sched_Allox": ("sched_allox",)}
DATA = ROOT / "tests" / "data" / "hetero_gpu"


def small_claims(tiny_seeds: int) -> list[dict]:
    t4 = load_instance(DATA / "theorem4_counterexample.json")
    l2 = load_instance(DATA / "lemma2_counterexample.json")
    opt_t4 = solve(t4, "exact").objective
    tiny = [generate("hetero_gpu", "tiny", s) for s in range(tiny_seeds)]
    opts = [solve(i, "exact", time_limit=30) for i in tiny]
    thm, lem, thm_ok, lem_ok = {}, {}, [], []
    for name in READINGS + (VARIANT,):
        out = solve(t4, name)
        ratios, viol = [], 0
        for inst, opt in zip(tiny, opts):
            res = solve(inst, name, time_limit=30)
            viol += res.info.get("lemma2_violations", 0)
            if opt.status.value == "optimal":
                ratios.append(res.objective / opt.objective)
        bound = out.guarantee
        l2_out = solve(l2, name)
        thm[name] = (f"H1 {out.objective:.0f}/{opt_t4:.0f} = {out.objective / opt_t4:.3f} "
                     f"(claim {3.0:.0f}); tiny max {max(ratios):.3f} over {len(ratios)} proven"
                     + ("" if bound is not None else "; variant, no bound claimed"))
        lem[name] = (f"lemma2 instance: {l2_out.info.get('lemma2_violations')} violating task(s); "
                     f"tiny 0-{tiny_seeds - 1}: {viol}")
        if name in READINGS:
            thm_ok.append(out.objective / opt_t4 <= 3.0 + 1e-9)
            lem_ok.append(l2_out.info.get("lemma2_violations", 0) == 0 and viol == 0)
    return [
        {"paper": PAPER, "claim": "Theorem 4: Algorithm 1 is an alpha(2+alpha)-approximation",
         "verdict": label(thm_ok), "readings": thm,
         "detail": "tests/data/hetero_gpu/theorem4_counterexample.json (one GPU, alpha = 1, bound 3): "
                   "above the bound for every reading of line 12 (one GPU makes the choice moot) "
                   "with the RL as printed ((9) once per GPU); the subset relaxation (9S) of "
                   "hare_subsets, which Lemma 2's proof uses, gives OPT there (errata H1). No "
                   "violation on tiny instances under any reading."},
        {"paper": PAPER, "claim": "Lemma 2 (10): the load before a task on its GPU is at most 2 H",
         "verdict": label(lem_ok), "readings": lem,
         "detail": "Lemma 2's proof puts Algorithm 1's assignment into (9), which holds only for "
                   "the RL's (errata H2); counts of tasks violating (10) per reading."},
    ]


def paper_claims(seeds: int) -> list[dict]:
    algos = LINE12 + (VARIANT,)
    base = [b for bs in BASELINES.values() for b in bs]
    obj: dict[str, list[float]] = {m: [] for m in algos + tuple(base)}
    jct: dict[str, list[float]] = {m: [] for m in obj}
    for seed in range(seeds):
        inst = generate("hetero_gpu", "paper", seed)
        wa = sum(j.weight * j.arrival for j in inst.jobs)
        for m in obj:
            res = solve(inst, m)
            obj[m].append(res.objective)
            jct[m].append(res.objective - wa)

    def cut(a: str, b: str, metric: dict) -> list[float]:
        return [100 * (y - x) / y for x, y in zip(metric[a], metric[b])]

    fig12, dir_, twox = {}, {}, {}
    fig12_ok, dir_ok, twox_ok = [], [], []
    for a in algos:
        parts, lows, wins = [], [], []
        for paper_name, bs in BASELINES.items():
            for b in bs:
                c, j = cut(a, b, obj), cut(a, b, jct)
                parts.append(f"{b} {min(c):+.1f}..{max(c):+.1f}% (JCT {min(j):+.1f}..{max(j):+.1f}%)")
            # the best reading of each baseline decides (a claim must hold against it)
            lows.append(max(min(min(cut(a, b, obj)), min(cut(a, b, jct))) for b in bs))
            wins.append(all(min(cut(a, b, obj)) > 0 for b in bs))
        fig12[a] = "; ".join(parts)
        dir_[a] = "beats " + ", ".join(
            n for n, w in zip(BASELINES, wins) if w) if any(wins) else "beats none on every seed"
        ratio = [y / x for x, y in zip(obj[a], obj["sched_allox"])]
        twox[a] = "sched_allox / " + a + " = " + ", ".join(f"{r:.2f}" for r in ratio)
        if a != VARIANT:
            fig12_ok.append(all(x >= 47.6 for x in lows))
            dir_ok.append(all(wins))
            twox_ok.append(min(ratio) >= 1.5)
    scale = f"paper preset (200 jobs, 160 GPUs, high mix), seeds 0-{seeds - 1}"
    return [
        {"paper": PAPER, "claim": "Fig. 12: Hare cuts total weighted JCT by 47.6-75.3% vs the baselines",
         "verdict": label(fig12_ok), "readings": fig12,
         "detail": f"{scale}; reduction (baseline - Hare)/baseline on sum w C and on sum w (C - a) "
                   f"(JCT). Holds for a reading only if >= 47.6% against every baseline reading on "
                   f"every seed. hare_eft (earliest finish, not the paper's) is shown but not a "
                   f"reading; hare_subsets = hare at this scale (aggregate LP). Errata H3."},
        {"paper": PAPER, "claim": "Fig. 12 direction: Hare beats every baseline",
         "verdict": label(dir_ok), "readings": dir_,
         "detail": f"{scale}; hare_est (line 12 as Theorem 4's proof reads it, ties to the fastest "
                   f"GPU) beats all four; the printed argmin phi_m and index ties lose to some."},
        {"paper": PAPER, "claim": "Abstract / Figs. 14-16: Sched_Allox (next best) is about 2x Hare",
         "verdict": label(twox_ok), "readings": twox,
         "detail": f"{scale}; counted as 'about 2x' when sched_allox / Hare >= 1.5 on every seed."},
    ]


def low_heterogeneity() -> dict:
    inst = generate("hetero_gpu", "paper", 0, heterogeneity="low")
    homo = solve(inst, "sched_homo").objective
    readings, ok = {}, []
    for a in LINE12 + (VARIANT,):
        r = solve(inst, a).objective / homo
        readings[a] = f"{a} / sched_homo = {r:.3f}"
        if a != VARIANT:
            ok.append(abs(r - 1) <= 0.10)
    return {"paper": PAPER, "claim": "Fig. 16: Hare ~ Sched_Homo at low heterogeneity (V100 only)",
            "verdict": label(ok), "readings": readings,
            "detail": "paper preset with heterogeneity='low', seed 0; 'about equal' = within 10%."}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=3, help="paper-scale seeds 0..N-1 (default 3)")
    ap.add_argument("--tiny-seeds", type=int, default=8, help="tiny seeds 0..N-1 (default 8)")
    args = ap.parse_args()
    t0 = time.perf_counter()
    claims = small_claims(args.tiny_seeds) + paper_claims(args.seeds) + [low_heterogeneity()]
    write(claims, OUT, t0)


if __name__ == "__main__":
    main()

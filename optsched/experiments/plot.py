"""Plots of the experiments (matplotlib, Agg backend: no display needed)."""

from __future__ import annotations

import math
from pathlib import Path


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_ratios(rows: list[dict], path: str | Path) -> None:
    """``ratios.png``: one panel per family; per method the ALG/OPT values of its instances
    (LB/OPT for bounds, in grey) with the claimed guarantee marked by a red bar (max over instances).
    """
    plt = _pyplot()
    families: dict[str, dict[str, list[dict]]] = {}
    for row in rows:
        if row.get("status") == "not comparable" or row.get("kind") == "exact":
            continue
        families.setdefault(row["family"], {}).setdefault(row["method"], []).append(row)
    from matplotlib.ticker import FuncFormatter, LogLocator

    n = max(1, len(families))
    ncols = min(3, n)
    nrows = math.ceil(n / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.2 * ncols, 3.6 * nrows), squeeze=False)
    flat = list(axes.flat)
    for ax in flat[len(families):]:
        ax.set_visible(False)
    for ax, (family, methods) in zip(flat, families.items()):
        names = list(methods)
        top = 1.0
        labelled: tuple[int, float] | None = None   # (x, value) of the last guarantee label
        for x, name in enumerate(names):
            group = methods[name]
            bound = any(r.get("kind") == "bound" for r in group)
            ratios = [r["ratio"] for r in group if r.get("ratio") is not None]
            if ratios:
                jitter = [x + 0.25 * ((i * 0.618) % 1 - 0.5) for i in range(len(ratios))]
                over = [r for r in group if (r.get("checks") or {}).get("within_guarantee") is False]
                ax.scatter(jitter, ratios, s=14, alpha=0.7, color="0.55" if bound else "C0",
                           zorder=3)
                if len(ratios) > 2:
                    ax.boxplot([ratios], positions=[x], widths=0.5, showfliers=False,
                               medianprops={"color": "C1"}, zorder=2)
                if over:
                    ax.scatter([x] * len(over), [r["ratio"] for r in over], s=40,
                               facecolors="none", edgecolors="red", zorder=4)
                top = max(top, max(ratios))
            guarantees = [r["guarantee"] for r in group if r.get("guarantee") is not None]
            if guarantees and not bound:
                g = max(guarantees)
                ax.hlines(g, x - 0.35, x + 0.35, color="red", linewidth=2, zorder=4)
                if labelled is None or labelled[1] != g or labelled[0] != x - 1:
                    # one label per run of equal neighbouring guarantees (they overlapped)
                    ax.annotate(f"{g:.3g}", (x, g), fontsize=7, color="red", ha="left",
                                va="bottom", xytext=(-8, 1), textcoords="offset points")
                labelled = (x, g)
                top = max(top, g)
        ax.axhline(1.0, color="0.3", linewidth=0.8, linestyle=":")
        ax.set_xticks(range(len(names)), names, rotation=35, ha="right", fontsize=8)
        ax.set_xlim(-0.6, len(names) - 0.4)
        if top > 3:
            ax.set_yscale("log")
            ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
            ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: ""))
            ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.set_ylim(top=top * (1.8 if top > 3 else 1.25))   # room for the guarantee labels
        ax.set_title(family, fontsize=10)
    for row_axes in axes:
        row_axes[0].set_ylabel("ALG/OPT  (grey: LB/OPT)")
    sep = "; " if ncols > 1 else "\n"   # one panel: two lines, or the title is cut
    fig.suptitle(f"empirical ratios per instance{sep}red bar = claimed guarantee (max over "
                 f"instances)", fontsize=9)
    fig.tight_layout()
    _save(fig, path)
    plt.close(fig)


def plot_compare(rows: list[dict], path: str | Path, family: str, reference: str,
                 title: str | None = None, ylabel: str | None = None) -> None:
    """``compare.png``: mean objective of every method relative to the paper's algorithm
    (``reference`` = 1), one bar per method with min-max whiskers over seeds, the paper's algorithm
    first -- the shape of the papers' headline figures (normalised objective per scheduler); the
    family's lower bound (the ``bound`` rows) as a dashed line."""
    plt = _pyplot()
    methods: dict[str, list[float]] = {}
    kinds: dict[str, str | None] = {}
    bound = _best_bound(rows)
    certified = [r["relative"] for r in rows if r.get("kind") == "certify"
                 and r.get("relative") is not None and math.isfinite(r["relative"])]
    for row in rows:
        if row.get("kind") in ("bound", "certify"):
            continue
        rel = row.get("relative")
        if rel is None or not math.isfinite(rel):
            methods.setdefault(row["method"], [])
        else:
            methods.setdefault(row["method"], []).append(rel)
        kinds[row["method"]] = row.get("kind")
    names = sorted(methods, key=lambda m: (m != reference, kinds.get(m) != "algorithm"))
    means = [sum(v) / len(v) if v else 0.0 for v in (methods[m] for m in names)]
    lo = [mean - min(v) if v else 0 for mean, v in zip(means, (methods[m] for m in names))]
    hi = [max(v) - mean if v else 0 for mean, v in zip(means, (methods[m] for m in names))]
    colors = ["C3" if m == reference else ("C0" if kinds.get(m) == "algorithm" else "0.6")
              for m in names]
    fig, ax = plt.subplots(figsize=(max(4.0, 0.9 * len(names) + 2), 3.8))
    ax.bar(range(len(names)), means, color=colors, yerr=[lo, hi], capsize=3)
    shown = [m for m in means if m > 0]
    log = bool(shown) and max(shown) / min(shown) > 20      # orders of magnitude apart
    if log:
        ax.set_yscale("log")
    for x, (m, v) in enumerate(zip(means, (methods[n] for n in names))):
        if log or not v:       # above the bar (log axis: the whisker may hide it, fine)
            ax.annotate(f"{m:.3g}" if v else "n/a", (x, m if v else 1), ha="center", va="bottom",
                        fontsize=8, xytext=(8, 2), textcoords="offset points")
        else:
            ax.annotate(f"{m:.2f}", (x, m / 2), ha="center", va="center", fontsize=8,
                        color="white")
    ax.axhline(1.0, color="0.3", linewidth=0.8, linestyle=":")
    _legend(ax, reference, bound, certified)
    ax.set_xticks(range(len(names)), names, rotation=30, ha="right")
    ax.set_ylabel(ylabel or f"objective / {reference}")
    ax.set_title(title or f"{family}: objective normalised to {reference}", fontsize=10)
    fig.tight_layout()
    _save(fig, path)
    plt.close(fig)


def _best_bound(rows: list[dict]) -> list[float]:
    """Per seed, the best lower bound (bound rows and certify's LB) relative to the reference."""
    best: dict = {}
    for r in rows:
        ref = _reference_objective(r)
        lb = r.get("lower_bound")
        if r.get("kind") in ("bound", "certify") and lb is not None and ref:
            best[r["seed"]] = max(best.get(r["seed"], -math.inf), lb / ref)
    return [v for v in best.values() if math.isfinite(v)]


def _reference_objective(row: dict) -> float | None:
    """The reference's objective on the row's instance (from the row's ``relative``)."""
    value = row.get("lower_bound") if row.get("kind") == "bound" else row.get("objective")
    rel = row.get("relative")
    return value / rel if value and rel else None


def _legend(ax, reference: str, bound: list[float], certified: list[float]) -> None:
    """What the colours, whiskers and lines of compare.png mean."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    handles = [Patch(color="C3", label=f"{reference} (the paper's algorithm)"),
               Patch(color="C0", label="its other readings"), Patch(color="0.6", label="baselines"),
               Line2D([], [], color="k", marker="|", linestyle="none", markersize=9,
                      label="whiskers: min-max over seeds")]
    if bound:   # the best lower bound, relative to the same reference (mean over seeds)
        mean = sum(bound) / len(bound)
        ax.axhline(mean, color="C2", linewidth=1.2, linestyle="--")
        handles.append(Line2D([], [], color="C2", linestyle="--", label="best lower bound"))
    if certified:
        ax.axhline(sum(certified) / len(certified), color="C4", linewidth=1.2, linestyle="-.")
        handles.append(Line2D([], [], color="C4", linestyle="-.",
                              label="certified UB (best schedule found)"))
    ax.legend(handles=handles, fontsize=7, loc="upper right", framealpha=0.9)


def _save(fig, path) -> None:
    path = Path(path)
    tmp = path.with_name(path.stem + ".tmp.png")
    fig.savefig(tmp, dpi=120)
    tmp.replace(path)

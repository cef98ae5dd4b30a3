"""PNG plots of ``benchmarks.tpch_bench`` (matplotlib, Agg backend): rows read, wall time, estimated
vs measured, rows read per template, build time. Everything comes in computed by ``tpch_report``."""
from __future__ import annotations

from pathlib import Path

import numpy as np

USER_BASELINES = ("copy", "sort_shipdate", "month", "month_o")


def plots(results: dict, summary: dict, out: Path, name: str, *, rho: float, templates: list[dict],
          template_keys: list[str]) -> list[str]:
    """Write the PNGs; ``templates`` are ``tpch_report.per_template`` rows for ``template_keys``."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = summary["tpch"]["rows"]
    pick = results["pick"].key
    labels = [f"li_{r['key']}" for r in rows]
    colors = ["tab:red" if r["key"] == pick else ("tab:gray" if r["key"] in USER_BASELINES else "tab:blue")
              for r in rows]
    files = []

    def save(fig, suffix):
        path = out / f"{name}_{suffix}.png"
        fig.tight_layout()
        fig.savefig(path, dpi=110)
        plt.close(fig)
        files.append(path.name)

    y = np.arange(len(rows))
    fig, ax = plt.subplots(figsize=(9, 0.42 * len(rows) + 1.5))
    ax.barh(y, [r["read"] for r in rows], color=colors, label="measured rows read")
    ax.scatter([r["est"] for r in rows], y, marker="x", color="black", zorder=3, label="estimated")
    ax.axvline(float(summary["tpch"]["match"].sum()), color="green", ls="--", label="lower bound (rows matching)")
    ax.set_yticks(y, labels)
    ax.invert_yaxis()
    ax.set_xlabel("rows read by the held-out TPC-H lineitem scans")
    ax.set_title("Rows read per layout (red: planner's pick, gray: user baselines)")
    ax.legend(loc="lower right", fontsize=8)
    save(fig, "rows")

    fig, ax = plt.subplots(figsize=(9, 0.42 * len(rows) + 1.5))
    ax.barh(y, [r["wall"] for r in rows], color=colors)
    ax.axvline(rows[0]["wall"] / 2, color="green", ls="--", label="2× faster than full scan")
    ax.set_yticks(y, labels)
    ax.invert_yaxis()
    ax.set_xlabel(f"wall time, s (median of {results['config'].runs} warm runs, "
                  f"{summary['tpch']['timed_queries']} held-out queries)")
    ax.legend(loc="lower right", fontsize=8)
    save(fig, "wall")

    fig, ax = plt.subplots(figsize=(6.5, 6))
    ax.scatter([r["est"] for r in rows], [r["read"] for r in rows], c=colors)
    for r, l in zip(rows, labels):
        ax.annotate(l, (r["est"], r["read"]), fontsize=7, xytext=(3, 3), textcoords="offset points")
    lo = min(min(r["est"] for r in rows), min(r["read"] for r in rows)) * 0.9
    hi = max(max(r["est"] for r in rows), max(r["read"] for r in rows)) * 1.1
    ax.plot([lo, hi], [lo, hi], color="gray", lw=0.8, ls=":")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("estimated rows read (cost model)")
    ax.set_ylabel("measured rows read (Spark numOutputRows)")
    ax.set_title(f"Estimated vs measured rows read, Spearman ρ = {rho:.3f}")
    save(fig, "est_vs_measured")

    keys, tmpl = template_keys, templates
    x = np.arange(len(tmpl))
    width = 0.8 / (len(keys) + 1)
    fig, ax = plt.subplots(figsize=(11, 4.5))
    ax.bar(x, [t["match"] for t in tmpl], width, label="lower bound", color="green")
    for j, k in enumerate(keys):
        ax.bar(x + (j + 1) * width, [t[k] for t in tmpl], width, label=f"li_{k}")
    ax.set_xticks(x + width * len(keys) / 2, [t["template"].replace("tpch ", "") for t in tmpl], rotation=45)
    ax.set_yscale("log")
    ax.set_ylabel("rows read (sum over held-out scans)")
    ax.legend(fontsize=8, ncol=len(keys) + 1, loc="upper center", bbox_to_anchor=(0.5, -0.18))
    ax.set_title("Rows read per TPC-H template: lower bound, user baselines and the planner's pick")
    save(fig, "templates")

    built = [r for r in rows if r["build"] is not None]
    if built:
        fig, ax = plt.subplots(figsize=(9, 0.42 * len(built) + 1.5))
        yb = np.arange(len(built))
        ax.barh(yb, [r["build"] for r in built], color=[colors[rows.index(r)] for r in built])
        ax.axvline(results["builds"]["copy"].seconds or 0, color="black", ls=":", label="CTAS copy")
        ax.axvline(1.5 * (results["builds"]["copy"].seconds or 0), color="green", ls="--", label="1.5× CTAS")
        ax.set_yticks(yb, [f"li_{r['key']}" for r in built])
        ax.invert_yaxis()
        ax.set_xlabel("build time, s")
        ax.legend(loc="lower right", fontsize=8)
        save(fig, "build")
    return files

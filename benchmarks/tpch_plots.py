"""PNG plots of ``benchmarks.tpch_bench`` (matplotlib, Agg backend): rows read, wall time, estimated
vs measured, rows read per template, build time.

Every plot has a title and a legend, and every layout keeps one colour in all of them (the
planner's pick drawn with a black edge); the scatter names its points in the legend, not next to
them, so no label covers another. The plots are drawn from plain numbers (``PlotData``), which
``tpch_report`` extracts from a run and ``python -m benchmarks.tpch_plots results/tpch_sf1.json``
rebuilds from the raw JSON a run keeps, so the PNGs can be redrawn without running Spark again.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from benchmarks.harness import spearman

USER_BASELINES = ("current", "copy", "sort_shipdate", "month", "month_o")
LOWER_BOUND_COLOR = "black"


@dataclass
class PlotData:
    rows: list[dict]  # per layout: key, label, read, est, wall, build
    pick: str
    runs: int
    timed_queries: int
    match: float  # rows the held-out scans match: the lower bound
    copy_build: float | None
    rho: float
    templates: list[dict] = field(default_factory=list)  # per template: template, match, <key>: rows read
    template_keys: list[str] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)  # every layout of the run, in a fixed order (for colours)
    wall_statistic: str = "fastest"  # of the warm runs (runs before the harness kept their median)


def layout_colors(keys: list[str]) -> dict[str, tuple]:
    """One colour per layout, the same in every plot (tab20, then tab20b for more layouts)."""
    import matplotlib

    palette = list(matplotlib.colormaps["tab20"].colors) + list(matplotlib.colormaps["tab20b"].colors)
    return {k: palette[i % len(palette)] for i, k in enumerate(keys)}


def plots(results: dict, summary: dict, out: Path, name: str, *, rho: float, templates: list[dict],
          template_keys: list[str]) -> list[str]:
    """Write the PNGs of a run; ``templates`` are ``tpch_report.per_template`` rows for ``template_keys``."""
    copy = results["builds"].get("copy")
    data = PlotData(rows=summary["tpch"]["rows"], pick=results["pick"].key, runs=results["config"].runs,
                    timed_queries=summary["tpch"]["timed_queries"], match=float(np.sum(summary["tpch"]["match"])),
                    copy_build=copy.seconds if copy is not None else None, rho=rho, templates=templates,
                    template_keys=template_keys, keys=[s.key for s in results["specs"]])
    return draw(data, out, name)


def draw(data: PlotData, out: Path, name: str) -> list[str]:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    rows = data.rows
    keys = data.keys or [r["key"] for r in rows]
    color = layout_colors(keys + [r["key"] for r in rows if r["key"] not in keys])
    labels = [f"li_{r['key']}" for r in rows]
    edges = ["black" if r["key"] == data.pick else "none" for r in rows]
    files = []

    def save(fig, suffix):
        path = out / f"{name}_{suffix}.png"
        fig.tight_layout()
        fig.savefig(path, dpi=110)
        plt.close(fig)
        files.append(path.name)

    def kind_legend(extra=()):
        return [Patch(facecolor="white", edgecolor="black", linewidth=1.5, label=f"li_{data.pick}: the planner's pick"),
                *extra]

    y = np.arange(len(rows))
    height = 0.42 * len(rows) + 1.8
    fig, ax = plt.subplots(figsize=(9, height))
    ax.barh(y, [r["read"] for r in rows], color=[color[r["key"]] for r in rows], edgecolor=edges, linewidth=1.5)
    est = ax.scatter([r["est"] for r in rows], y, marker="x", color="black", zorder=3, label="estimated (cost model)")
    lb = ax.axvline(data.match, color=LOWER_BOUND_COLOR, ls="--", label="lower bound: rows that match")
    ax.set_yticks(y, labels)
    ax.invert_yaxis()
    ax.set_xlabel("rows read by the held-out TPC-H lineitem scans (Spark's numOutputRows)")
    ax.set_title("Rows read per layout (bars: measured)")
    ax.legend(handles=kind_legend([est, lb]), loc="lower right", fontsize=8)
    save(fig, "rows")

    fig, ax = plt.subplots(figsize=(9, height))
    ax.barh(y, [r["wall"] for r in rows], color=[color[r["key"]] for r in rows], edgecolor=edges, linewidth=1.5)
    half = ax.axvline(rows[0]["wall"] / 2, color=LOWER_BOUND_COLOR, ls="--", label="2× faster than the full scan")
    ax.set_yticks(y, labels)
    ax.invert_yaxis()
    ax.set_xlabel(f"wall time, s ({data.wall_statistic} of {data.runs} warm runs, "
                  f"{data.timed_queries} held-out queries)")
    ax.set_title("Wall time per layout")
    ax.legend(handles=kind_legend([half]), loc="lower right", fontsize=8)
    save(fig, "wall")

    fig, ax = plt.subplots(figsize=(9, 6))
    for r, label in zip(rows, labels):
        ax.scatter([r["est"]], [r["read"]], color=color[r["key"]], s=60 if r["key"] == data.pick else 36,
                   edgecolors="black" if r["key"] == data.pick else "none", label=label, zorder=3)
    lo = min(min(r["est"] for r in rows), min(r["read"] for r in rows)) * 0.9
    hi = max(max(r["est"] for r in rows), max(r["read"] for r in rows)) * 1.1
    ax.plot([lo, hi], [lo, hi], color="gray", lw=0.8, ls=":", label="estimate = measured")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("estimated rows read (cost model)")
    ax.set_ylabel("measured rows read (Spark numOutputRows)")
    ax.set_title(f"Estimated vs measured rows read, Spearman ρ = {data.rho:.3f}")
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    save(fig, "est_vs_measured")

    if data.templates:
        tkeys, tmpl = data.template_keys, data.templates
        x = np.arange(len(tmpl))
        width = 0.8 / (len(tkeys) + 1)
        fig, ax = plt.subplots(figsize=(11, 5))
        ax.bar(x, [t["match"] for t in tmpl], width, label="lower bound: rows that match", color="white",
               edgecolor=LOWER_BOUND_COLOR, hatch="//")
        for j, k in enumerate(tkeys):
            ax.bar(x + (j + 1) * width, [t.get(k, 0) for t in tmpl], width, color=color.get(k),
                   edgecolor="black" if k == data.pick else "none",
                   label=f"li_{k}" + (" (the planner's pick)" if k == data.pick else ""))
        ax.set_xticks(x + width * len(tkeys) / 2, [t["template"].replace("tpch ", "") for t in tmpl], rotation=45,
                      ha="right")
        ax.set_yscale("log")
        ax.set_ylabel("rows read (sum over held-out scans)")
        ax.legend(fontsize=8, ncol=min(len(tkeys) + 1, 4), loc="upper center", bbox_to_anchor=(0.5, -0.22))
        ax.set_title("Rows read per TPC-H template: lower bound, user baselines and the planner's pick")
        save(fig, "templates")

    built = [r for r in rows if r.get("build") is not None]
    if built:
        fig, ax = plt.subplots(figsize=(9, 0.42 * len(built) + 1.8))
        yb = np.arange(len(built))
        ax.barh(yb, [r["build"] for r in built], color=[color[r["key"]] for r in built],
                edgecolor=["black" if r["key"] == data.pick else "none" for r in built], linewidth=1.5)
        extra = []
        if data.copy_build:
            extra.append(ax.axvline(data.copy_build, color=LOWER_BOUND_COLOR, ls=":", label="CTAS copy"))
            extra.append(ax.axvline(1.5 * data.copy_build, color=LOWER_BOUND_COLOR, ls="--", label="1.5× CTAS"))
        ax.set_yticks(yb, [f"li_{r['key']}" for r in built])
        ax.invert_yaxis()
        ax.set_xlabel("build time, s")
        ax.set_title("Time to build each layout")
        ax.legend(handles=kind_legend(extra), loc="lower right", fontsize=8)
        save(fig, "build")
    return files


def data_from_json(path: Path) -> PlotData:
    """The plot data of a run, from the raw JSON ``tpch_report`` writes next to the report."""
    raw = json.loads(Path(path).read_text())
    w = raw["workloads"]["tpch"]
    rows = w["summary"]
    timed = {s["query"] for s in w["scans"] if s["timed"]}
    # every layout reads the same matching rows; the baseline measured may be the copy or the table as loaded
    matching = next(iter(w["measured"].values()))
    agg: dict[str, dict] = defaultdict(lambda: defaultdict(float))
    present = {r["key"] for r in rows}  # as tpch_report.template_keys: the user baselines and the pick
    keys_t = list(dict.fromkeys(k for k in (*USER_BASELINES, raw["pick"]) if k in present))
    for i, scan in enumerate(w["scans"]):
        a = agg[scan["template"]]
        a["match"] += matching[i]["n"]
        for k in keys_t:
            if k in w["measured"]:
                a[k] += w["measured"][k][i]["rows"]
    return PlotData(rows=rows, pick=raw["pick"], runs=int(raw["config"].get("runs", 3)), timed_queries=len(timed),
                    match=float(rows[0]["match"]), copy_build=raw["layouts"].get("copy", {}).get("build", {}).get(
                        "seconds"), rho=spearman([r["est"] for r in rows], [r["read"] for r in rows]),
                    templates=[{"template": t, **v} for t, v in sorted(agg.items())], template_keys=keys_t,
                    keys=list(raw["layouts"]), wall_statistic=raw.get("wall_statistic", "median"))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.tpch_plots", description="Redraw a run's plots from its "
                                 "raw JSON (benchmarks/results/tpch_sf1.json).")
    ap.add_argument("json", type=Path)
    ap.add_argument("--out", type=Path, default=None, help="folder (default: the JSON's)")
    args = ap.parse_args(argv)
    name = args.json.stem
    out = args.out or args.json.parent
    out.mkdir(parents=True, exist_ok=True)
    for f in draw(data_from_json(args.json), out, name):
        print(f"wrote {f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

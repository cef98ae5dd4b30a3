"""Figures and the markdown report of ``benchmarks.tpch_bench``: tables, targets, plots, raw JSON.

Definitions (per workload and layout, summed over the measured held-out lineitem scans; T is the
table's row count, ``read`` Spark's ``numOutputRows`` of the scan, ``match`` the rows the scan's
predicate matches, i.e. the probe's ``count(*)``, ``now`` what the scan reads on the table as
loaded):

    skip ratio      Σ (T − read) / Σ (T − match)     (Amoeba's measure; 1 = only matching rows read)
    read / LB       Σ read / Σ match
    regressions     held-out queries whose scans read > 1.2 × what they read on the table as loaded
    est. error      Σ estimated / Σ read − 1, and the share of queries estimated within 10 %
    wall            Σ over the timed queries of Σ over their scans of the fastest warm run
    speedup         wall(table as loaded) / wall(layout), on the same timed queries
    rank corr.      Spearman's ρ between estimated and measured Σ read across the layouts
"""
from __future__ import annotations

import platform
from collections import defaultdict
from pathlib import Path

import numpy as np

from benchmarks.harness import default_first, markdown_table, spearman, write_result
from benchmarks.tpch_plots import plots

GUARD = 1.2
SLOWER = (1.2, 0.2)  # issue 31: a held-out query is slower than as loaded by > 20 % and > 0.2 s
TARGETS = {"q6_skip": 0.9, "adhoc_skip": 0.6, "regressions": 0, "tpch_read_over_lb": 1.06, "est_error": 0.10,
           "amoeba_paper_skip": 0.80, "tpch_skip_default": 0.93, "q6_skip_default": 0.85}


# ---- the numbers --------------------------------------------------------------------------------
def _per_query(probes, values) -> dict[int, float]:
    out: dict[int, float] = defaultdict(float)
    for p, v in zip(probes, values):
        out[p.query] += v
    return out


def summarise(results: dict) -> dict:
    T = results["source"]["rows"]
    out: dict = {}
    for kind, w in results["workloads"].items():
        probes = w["probes"]
        now = w["layouts"][0]["run"].results  # the table as loaded is always measured first
        match = np.array([r.n for r in now], dtype=float)
        now_read = np.array([r.rows for r in now], dtype=float)
        now_q = _per_query(probes, now_read)
        wall_q = set(range(len(w["run"].wall_idx)))
        timed = [i for i, p in enumerate(probes) if p.query in wall_q]
        now_wall_q = _per_query([probes[i] for i in timed], [now[i].wall for i in timed])
        rows = []
        for entry in w["layouts"]:
            spec, res = entry["spec"], entry["run"].results
            read = np.array([r.rows for r in res], dtype=float)
            est = np.array(entry["estimated"], dtype=float)
            denom = float((T - match).sum())
            wrong = sum(1 for a, b in zip(res, now) if a.answer != b.answer)
            read_q, est_q = _per_query(probes, read), _per_query(probes, est)
            worse = {q: read_q[q] / max(now_q[q], 1.0) for q in read_q if read_q[q] > GUARD * now_q[q] + 1}
            layout_wall_q = _per_query([probes[i] for i in timed], [res[i].wall for i in timed])
            slower = {q: t - now_wall_q[q] for q, t in layout_wall_q.items()
                      if t > SLOWER[0] * now_wall_q[q] and t - now_wall_q[q] > SLOWER[1]}
            close = sum(1 for q in read_q if abs(est_q[q] - read_q[q]) <= 0.10 * max(read_q[q], 1.0))
            b = results["builds"].get(spec.key)
            rows.append({
                "key": spec.key, "label": spec.label, "family": spec.family, "aliases": list(spec.aliases),
                "read": float(read.sum()), "est": float(est.sum()), "match": float(match.sum()),
                "now": float(now_read.sum()),
                "bytes": float(sum(r.bytes for r in res)), "files": int(sum(r.files for r in res)),
                "partitions": None if any(r.partitions is None for r in res) else int(
                    sum(r.partitions for r in res)),
                "skip": float((T - read).sum()) / denom if denom > 0 else float("nan"),
                "read_over_lb": float(read.sum() / max(match.sum(), 1.0)),
                "est_error": float(est.sum() / max(read.sum(), 1.0) - 1.0),
                "est_close": close / max(len(read_q), 1),
                "regressions": len(worse), "queries": len(read_q), "slower": len(slower),
                "slowest_by": max(slower.values(), default=None),
                "worst_regression": max(worse.values(), default=None),
                "wall": float(sum(res[i].wall for i in timed)),
                "wall_rounds": [float(sum(res[i].seconds[k] for i in timed))
                                for k in range(min((len(res[i].seconds) for i in timed), default=0))],
                "advise_cost": spec.advise_cost,
                "first_run": float(sum(r.first for r in res)),
                "wrong": wrong, "unstable": len(entry["run"].unstable),
                "build": None if b is None else b.seconds,
                "table_partitions": None if b is None else b.partitions,
                "table_files": None if b is None else b.files,
                "table_row_groups": None if b is None else b.row_groups,
                "table_bytes": None if b is None else b.bytes,
                "per_scan_read": read.tolist(), "per_scan_est": est.tolist(),
            })
        ref = rows[0]
        copy_build = results["builds"]["copy"].seconds
        for r in rows:
            r["speedup"] = ref["wall"] / r["wall"] if r["wall"] > 0 else float("nan")
            r["speedup_rounds"] = [a / b for a, b in zip(ref["wall_rounds"], r["wall_rounds"]) if b > 0]
            r["build_ratio"] = (r["build"] / copy_build) if (r["build"] and copy_build) else None
        out[kind] = {"rows": rows, "scans": len(probes), "queries": len(w["run"].held_idx),
                     "held_total": w["run"].held_total, "advise_queries": len(w["run"].advise_idx),
                     "timed_queries": len(wall_q), "timed_scans": len(timed), "match": match,
                     "advise_seconds": w["run"].advise_seconds, "seeds": w["run"].generator_seeds}
    return out


def _row(rows, key):
    return next((r for r in rows if r["key"] == key), None)


def _find(summary: dict, kind: str, label: str) -> dict | None:
    """The row of the layout labelled (or aliased) ``label`` in ``kind``'s table."""
    if kind not in summary:
        return None
    return next((r for r in summary[kind]["rows"] if r["label"] == label or label in r["aliases"]), None)


def _fmt(n: float | None) -> str:
    if n is None or (isinstance(n, float) and np.isnan(n)):
        return "–"
    for unit, div in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(n) >= div:
            return f"{n / div:.2f}{unit}"
    return f"{n:.0f}"


def _s(x: float | None, digits: int = 2) -> str:
    return "–" if x is None or (isinstance(x, float) and np.isnan(x)) else f"{x:.{digits}f}"


def template_keys(results: dict, summary: dict) -> list[str]:
    """Layouts compared per template: the user baselines and the picks, each once, if measured."""
    present = {r["key"] for r in summary["tpch"]["rows"]}
    keys = ["current", "sort_shipdate", "month", _row(summary["tpch"]["rows"], results["pick"].key)["key"],
            "tpch_allow"]
    return [k for i, k in enumerate(keys) if k in present and k not in keys[:i]]


def per_template(results: dict, kind: str, keys: list[str]) -> list[dict]:
    w = results["workloads"][kind]
    by_key = {e["spec"].key: e["run"].results for e in w["layouts"]}
    now = w["layouts"][0]["run"].results
    T = results["source"]["rows"]
    agg: dict[str, dict] = defaultdict(lambda: defaultdict(float))
    for i, p in enumerate(w["probes"]):
        a = agg[p.template]
        a["scans"] += 1
        a["match"] += now[i].n
        a["T"] += T
        for k in keys:
            if k in by_key:
                a[k] += by_key[k][i].rows
    return [{"template": t, **v} for t, v in sorted(agg.items())]


# ---- markdown --------------------------------------------------------------------------------------
def _name(r: dict) -> str:
    table = "`bench.lineitem`" if r["key"] == "current" else f"`li_{r['key']}`"
    return f"{table} {r['label']}" + (f" (= {'; '.join(r['aliases'])})" if r["aliases"] else "")


def _layout_table(rows, with_build: bool, kind: str) -> list[str]:
    """One row per layout, the workload's default advice first (then the table as loaded)."""
    header = ["layout", "est. rows", "rows read", "est. error", "est. within 10 %", "skip ratio", "read/LB",
              "worse than as loaded", "bytes read", "files", "parts", "wall s", "speedup"]
    if with_build:
        header += ["build s", "build/CTAS", "table parts / files / row groups"]
    cells = []
    for r in default_first(rows, lambda r: f"{kind} pick" in (r["label"], *r["aliases"])):
        worse = "–" if r["key"] == "current" else (
            f"{r['regressions']}/{r['queries']}" + (f" (worst {r['worst_regression']:.1f}×)" if r["regressions"] else ""))
        row = [_name(r), _fmt(r["est"]), _fmt(r["read"]), f"{r['est_error']:+.1%}", f"{r['est_close']:.0%}",
               _s(r["skip"], 3), _s(r["read_over_lb"]), worse, _fmt(r["bytes"]) + "B", f"{r['files']:,}",
               "–" if r["partitions"] is None else f"{r['partitions']:,}", _s(r["wall"], 1), _s(r["speedup"]) + "×"]
        if with_build:
            row += [_s(r["build"], 1) if r["build"] is not None else ("–" if r["key"] == "current" else "reused"),
                    _s(r["build_ratio"]) + ("×" if r["build_ratio"] else ""),
                    "–" if r["table_files"] is None else
                    f"{r['table_partitions'] or 1} / {r['table_files']} / {r['table_row_groups']}"]
        cells.append(row)
    return markdown_table(header, cells)


def _met(ok: bool | None) -> str:
    return "–" if ok is None else ("**met**" if ok else "**missed**")


def issue11_figures(results: dict, summary: dict) -> tuple[list[str], dict]:
    """The figures issue #11 asks for, each for the default advice and with regressions allowed."""
    def get(kind, label, field):
        r = _find(summary, kind, label)
        return None if r is None else r[field]

    fig = {}
    lines = ["| figure | default (guarded) | regressions allowed | target | verdict (default / allowed) |",
             "|---|---:|---:|---|---|"]

    def row(name, kind, label, field, target, better, fmt=lambda x: _s(x, 3)):
        d, a = get(kind, label, field), get(kind, label + ", regressions allowed", field)
        if d is None and a is None:
            return
        # est_error is signed (under- and over-estimates): its target bounds the size of the error
        size = abs if field == "est_error" else (lambda x: x)
        ok = lambda x: None if x is None else (x >= target if better == "high" else size(x) <= target)  # noqa: E731
        fig[name] = {"default": d, "allowed": a, "target": target}
        lines.append(f"| {name} | {fmt(d)} | {fmt(a)} | {'≥' if better == 'high' else '≤'} {target} | "
                     f"{_met(ok(d))} / {_met(ok(a))} |")

    row("Q6 variants, advised on own half: skip ratio", "q6", "q6 pick", "skip", TARGETS["q6_skip"], "high")
    row("ad-hoc, advised on own half: skip ratio", "adhoc", "adhoc pick", "skip", TARGETS["adhoc_skip"], "high")
    z = _find(summary, "adhoc", "4-column z-order")
    if z is not None:
        row("ad-hoc measured on the TPC-H-advised layout: skip ratio", "adhoc", "tpch pick", "skip",
            round(z["skip"], 3), "high")
    row("TPC-H, advised on own half: skip ratio (issue 31)", "tpch", "tpch pick", "skip", TARGETS["tpch_skip_default"],
        "high")
    row("Q6 variants: skip ratio (issue 31)", "q6", "q6 pick", "skip", TARGETS["q6_skip_default"], "high")
    for kind, label in (("tpch", "tpch pick"), ("q6", "q6 pick"), ("adhoc", "adhoc pick")):
        d, a = get(kind, label, "skip"), get(kind, label + ", regressions allowed", "skip")
        if d is not None and a:
            fig[f"{kind}_guarded_share_of_allowed"] = d / a
            lines.append(f"| {kind}: guarded skip ÷ allowed skip (issue 31) | {d / a:.3f} | – | ≥ 0.9 | "
                         f"{_met(d / a >= 0.9)} / – |")
    for kind, label in (("tpch", "tpch pick"), ("q6", "q6 pick"), ("adhoc", "adhoc pick")):
        row(f"held-out {kind} queries reading > 1.2× their rows as loaded", kind, label, "regressions", 0, "low",
            fmt=lambda x: "–" if x is None else f"{x}/{summary[kind]['queries']}")
        row(f"timed held-out {kind} queries slower than as loaded by > 20 % and > 0.2 s (issue 31)", kind, label,
            "slower", 0, "low", fmt=lambda x, k=kind: "–" if x is None else f"{x}/{summary[k]['timed_queries']}")
    sort = _find(summary, "tpch", "full scan sorted by l_shipdate")
    pick = _find(summary, "tpch", "tpch pick")
    if sort is not None and pick is not None:
        # ahead on wall only beyond the rounds' spread: every round of the pick faster than any of the sort's
        ahead = pick["skip"] > sort["skip"] and (max(pick["wall_rounds"]) < min(sort["wall_rounds"])
                                                 if pick["wall_rounds"] and sort["wall_rounds"] else pick["wall"] < sort["wall"])
        fig["tpch_default_vs_dba_sort"] = {"skip": (pick["skip"], sort["skip"]), "wall": (pick["wall"], sort["wall"])}
        lines.append(f"| TPC-H default vs a DBA's sort by ship date: skip / wall s (issue 31) | "
                     f"{_s(pick['skip'], 3)} vs {_s(sort['skip'], 3)} / {pick['wall']:.2f} vs {sort['wall']:.2f} | – | "
                     f"ahead on both | {_met(ahead)} / – |")
    row("held-out TPC-H read ÷ matching", "tpch", "tpch pick", "read_over_lb", TARGETS["tpch_read_over_lb"], "low",
        fmt=lambda x: _s(x))
    for kind, label in (("tpch", "tpch pick"), ("q6", "q6 pick"), ("adhoc", "adhoc pick")):
        row(f"{kind}: estimated ÷ measured rows − 1 (own pick)", kind, label, "est_error", TARGETS["est_error"], "low",
            fmt=lambda x: "–" if x is None else f"{x:+.1%}")
    errs = [abs(r["est_error"]) for s in summary.values() for r in s["rows"]]
    fig["max_est_error_all_layouts"] = max(errs, default=None)
    amoeba = _find(summary, "adhoc", "Amoeba's upfront tree (hybrid)")
    if amoeba is not None:
        fig["amoeba_adhoc_skip"] = amoeba["skip"]
        lines.append(f"| Amoeba's upfront tree on ad-hoc: skip ratio (paper: 0.80 after adapting) | "
                     f"{_s(amoeba['skip'], 3)} | – | {TARGETS['amoeba_paper_skip']} (paper) | – |")
    if z is not None:
        fig["zorder4_adhoc_skip"] = z["skip"]
    return lines, fig


def _options(cfg) -> str:
    """The command-line options that narrowed the run (none for a full run)."""
    out = f" --runs {cfg.runs}" if cfg.runs != 3 and not cfg.quick else ""
    return out + (f" --layouts {','.join(cfg.layouts)}" if cfg.layouts else "")


def markdown(results: dict, summary: dict, plots: list[str]) -> str:
    cfg, src = results["config"], results["source"]
    T = src["rows"]
    fig_lines, fig = issue11_figures(results, summary)
    tp = summary["tpch"]
    measured_part = ("its whole held-out half" if tp["queries"] >= tp["held_total"]
                     else f"{tp['queries']} of its {tp['held_total']} held-out queries")
    seeds = "; ".join(f"{k}: advised on seed {s['seeds'][0]}, measured on seed {s['seeds'][1]}"
                      for k, s in summary.items())
    lines = [
        f"# TPC-H benchmark: measured rows, bytes and wall time per layout (SF {cfg.scale:g})",
        "",
        f"Reproduce: `.venv/bin/python -m benchmarks.tpch_bench "
        f"{'--quick' if cfg.quick else f'--scale {cfg.scale:g}'}{_options(cfg)}` "
        f"(seed {cfg.seed}; {results['seconds'] / 60:.0f} min on this machine: {platform.machine()}, 2 cores, "
        f"Spark {results['spark_version']} local[2], shared with other jobs: load average "
        f"{results['load'][0]:.1f} at the start, {results['load'][-1]:.1f} at the end, so wall times carry "
        f"noise of other processes; row counts do not). Raw figures: `{cfg.name}.json`.",
        "",
        f"Data: TPC-H lineitem from tpchgen-cli, {T:,} rows in Hive Parquet table `{src['table']}` as loaded "
        f"(tpchgen's `l_orderkey` order): {src['files']} files, {src['row_groups']} row groups "
        f"(~{src['rows_per_group']:,} rows each, `parquet.block.size` {cfg.row_group_bytes:,}), "
        f"{src['bytes'] / 2**20:.0f} MiB. Every layout is written with the same row groups and pages of "
        f"{src.get('page_rows', 0):,} rows by the planner's own SQL (`planner.emit`) into a table of its own.",
        "",
        "## How it is measured",
        "",
        "* **Split.** Each workload is halved inside every template: `advise` sees one half. TPC-H is measured on "
        f"its other half ({measured_part}, {tp['scans']} lineitem scans); Q6 variants and ad-hoc on the held-out "
        f"half of a fresh draw with a new seed ({seeds}), so no measured query was seen by `advise` and the "
        "figures are not tuned to one draw.",
        "* **Two picks per workload.** The default advice (guarded: no query of the workload or of the "
        "robustness set may take, by the time model, more than 1.2× its seconds on the table as loaded and more "
        "than 0.2 s (or a tenth of a full scan) more; `planner/advice/guard.py`) and the advice with "
        "`--allow-regressions`. The rows a query reads beyond 1.2× its rows as loaded are counted beside it "
        "(`worse than as loaded`).",
        "* **What runs.** Every lineitem scan of a held-out query runs as a probe on the layout's table: "
        "`SELECT count(*), bit_xor(xxhash64(<columns the query reads>)) FROM <table> WHERE <the scan's pushable "
        "predicate on lineitem's own columns>`, rewritten by `planner.rewrite.query_rewrite.rewrite_query` to read only the "
        "partitions it needs. The reference is the table as loaded itself (`bench.lineitem`).",
        "* **Figures.** rows/bytes/files/partitions read are Spark's scan metrics (`numOutputRows`, `filesSize`, "
        "`numFiles`, `numPartitions`) from `hive_integration.spark.metrics.run_measured`, in a first pass over each "
        "table. `numOutputRows` counts the rows of the row groups and pages Spark keeps (Parquet statistics and "
        "column index). " + (f"Wall time is the fastest of {cfg.runs} further runs of the timed queries, in rounds "
                             "over all layouts. " if cfg.runs else "Wall time was not measured in this run "
                             "(`--runs 0`): the wall and speedup columns are empty. ") +
        "The lower bound (LB) is the probe's `count(*)`. Every layout's probe answers (count and "
        "checksum) are compared with the table as loaded.",
        "* **Estimates.** `est. rows` is the cost model's estimate for the same held-out scans, from the "
        "advise-time statistics (200k-row sample; the table as loaded priced from its footers).",
        "",
        "## Figures (issue #11)",
        "",
        *fig_lines,
        "",
        f"Largest estimate error over every layout and workload measured: "
        f"{_s(100 * (fig.get('max_est_error_all_layouts') or float('nan')), 1)} %.",
        "",
        f"## Held-out TPC-H ({tp['queries']} queries, {tp['scans']} lineitem scans; lower bound "
        f"{_fmt(float(tp['match'].sum()))} rows, full scan {_fmt(float(T * tp['scans']))})",
        "",
        *_layout_table(tp["rows"], with_build=True, kind="tpch"),
        "",
        "### Per template: rows read (held-out TPC-H)",
        "",
    ]
    keys = template_keys(results, summary)
    lines.append("| template | scans | LB (match) | " + " | ".join(f"`{k}`" for k in keys) + " |")
    lines.append("|---" + "|---:" * (2 + len(keys)) + "|")
    for t in per_template(results, "tpch", keys):
        lines.append(f"| {t['template']} | {int(t['scans'])} | {_fmt(t['match'])} | " +
                     " | ".join(_fmt(t[k]) for k in keys) + " |")
    for kind, title in (("q6", "Held-out Q6 variants"), ("adhoc", "Robustness: ad-hoc workload (Amoeba's case)")):
        if kind not in summary:
            continue
        s = summary[kind]
        lines += ["", f"## {title}", "",
                  f"{s['queries']} held-out queries of a fresh draw measured ({s['scans']} scans), "
                  f"{s['timed_queries']} timed; lower bound {_fmt(float(s['match'].sum()))} rows. The {kind} picks "
                  f"were advised on the {kind} advise half ({s['advise_queries']} queries).", "",
                  *_layout_table(s["rows"], with_build=False, kind=kind)]
    lines += ["", "## Notes", "", *notes(results, summary)]
    problems = [(k, r) for k, s in summary.items() for r in s["rows"] if r["wrong"] or r["unstable"]]
    lines += ["", "## Checks", ""]
    if problems:
        lines += [f"* **{k} on `{r['key']}`: {r['wrong']} probe answers differ from the table as loaded, "
                  f"{r['unstable']} probes had metrics that changed between runs.**" for k, r in problems]
    else:
        lines.append("* Every probe returned the same count and checksum on every layout as on the table as loaded, "
                     "and Spark's scan metrics were identical across the repeated runs.")
    lines += [f"* Planner speed: `advise` on the TPC-H advise half took {tp['advise_seconds']:.1f} s here "
              "(statistics cached); against workload size see [advise.md](advise.md).", "", "## Plots", ""]
    lines += [f"![{p}]({p})" for p in plots]
    return "\n".join(lines) + "\n"


def notes(results: dict, summary: dict) -> list[str]:
    """Observations computed from the figures (each names the numbers it rests on)."""
    out = []
    every = [(k, r) for k, s in summary.items() for r in s["rows"] if r["key"] != "current"]
    gaps = sorted(every, key=lambda kr: -abs(kr[1]["est_error"]))[:3]
    out.append("* Largest estimate errors (estimated ÷ measured − 1): " + ", ".join(
        f"{k} on `li_{r['key']}` {r['est_error']:+.1%}" for k, r in gaps) + ".")
    cur = [(k, s["rows"][0]) for k, s in summary.items()]
    out.append("* The table as loaded is priced from its Parquet footers: estimated " + ", ".join(
        f"{k} {_fmt(r['est'])} vs measured {_fmt(r['read'])}" for k, r in cur) + ".")
    dup = [r for r in summary["tpch"]["rows"] if r["aliases"]]
    if dup:
        out.append("* Identical layouts are built and measured once: " + "; ".join(
            f"`{r['key']}` is also {', '.join(r['aliases'])}" for r in dup) + ".")
    out.append("* SF 10 runs with `--scale 10` (not run for this file).")
    return out


# ---- raw JSON ----------------------------------------------------------------------------------------
def raw_json(results: dict, summary: dict) -> dict:
    cfg = results["config"]
    _, fig = issue11_figures(results, summary)
    out = {"config": {k: (str(v) if isinstance(v, Path) else v) for k, v in cfg.__dict__.items()},
           "source": results["source"], "seconds": results["seconds"], "spark": results["spark_version"],
           "pick": results["pick"].key, "figures": fig, "wall_statistic": "fastest",
           "layouts": {s.key: {"label": s.label, "aliases": s.aliases,
                               "layout": s.layout.to_json() if s.layout is not None else None,
                               "build": results["builds"][s.key].__dict__ if s.key in results["builds"] else None}
                       for s in results["specs"]},
           "workloads": {}}
    for kind, w in results["workloads"].items():
        qs = w["held"].queries
        out["workloads"][kind] = {
            "summary": [{k: v for k, v in r.items() if not k.startswith("per_scan")} for r in summary[kind]["rows"]],
            "scans": [{"query": qs[p.query].number, "template": p.template, "sql": p.sql("lineitem"),
                       "timed": p.query < len(w["run"].wall_idx)} for p in w["probes"]],
            "measured": {e["spec"].key: [{"n": r.n, "rows": r.rows, "bytes": r.bytes, "files": r.files,
                                          "partitions": r.partitions, "first": r.first, "seconds": r.seconds,
                                          "loads": r.loads, "est": est}
                                         for r, est in zip(e["run"].results, e["estimated"])]
                         for e in w["layouts"]},
        }
    return out


def write_report(results: dict, out: Path, name: str) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    summary = summarise(results)
    rows = summary["tpch"]["rows"]
    keys = template_keys(results, summary)
    pngs = plots(results, summary, out, name, rho=spearman([r["est"] for r in rows], [r["read"] for r in rows]),
                 templates=per_template(results, "tpch", keys), template_keys=keys)
    written = write_result(name, markdown(results, summary, pngs), raw_json(results, summary), out, indent=None)
    return written + [out / p for p in pngs]


def main(argv=None) -> int:
    """Re-render the report from the results a run pickled into its state dir."""
    import argparse
    import pickle

    ap = argparse.ArgumentParser(prog="python -m benchmarks.tpch_report")
    ap.add_argument("results", help="<state dir>/tpch_sf1.results.pickle (written by benchmarks.tpch_bench)")
    ap.add_argument("--out", default=None, help="folder (default: the run's results folder)")
    args = ap.parse_args(argv)
    with open(args.results, "rb") as f:
        results = pickle.load(f)  # our own file, written by tpch_bench
    cfg = results["config"]
    for p in write_report(results, Path(args.out) if args.out else cfg.out_dir, cfg.name):
        print(f"wrote {p}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

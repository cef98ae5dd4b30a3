"""Issue 32: the aggregate index on held-out Q6 variants, measured by Spark.

    .venv/bin/python -m benchmarks.agg_index_bench [--scale 1] [--state-dir DIR] [--reuse] [--runs 3] [--report-only]

1. TPC-H lineitem (tpchgen-cli) loaded as ``aggbench.lineitem`` in its own order, with the row
   groups ``benchmarks.tpch_bench`` uses: *the table as loaded*;
2. the Q6 variants (``sql/q6_variants.sql``'s generator, seed 2) halved inside every template
   as ``tpch_bench`` halves them (seed 5); ``advise`` sees one half; the measured queries are the
   held-out half of a fresh draw (seed 12), so nothing measured was seen by ``advise``;
3. advised twice (guarded, and regressions allowed); each pick is applied with ``planner apply``
   to its own copy of the table (``aggbench.li_<key>``); where the pick carries an aggregate
   index, the same layout without it is applied too (the best layout without the index);
4. each held-out query runs, as a user runs it, on: the table as loaded read whole (Parquet
   filter pushdown off: the full scan), the table as loaded, every layout through ``planner.sql``
   (partition pruning only, and with the index where its layout has one); Spark's scan metrics
   give the rows read of the table and of the index (``numOutputRows`` of each scan), the wall
   time is the median of ``--runs`` warm runs, and every answer is compared with the table as
   loaded (DOUBLE: none here; every value must be equal);
5. the index's build (a rebuild, timed step by step) against a plain ``CREATE TABLE AS SELECT``
   copy, each the fastest of ``BUILD_ROUNDS``, in turns; and its size against the table's.

The machine is shared: the load average is recorded at the start and the end, and wall times are
only comparable within one run. The report goes to ``benchmarks/results/agg_index_sf<scale>.md``
(and ``.json``).
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from benchmarks.tpch_setup import TABLE, Config, generated, load_source, split_by_template

ROOT = Path(__file__).resolve().parent.parent
DB = "aggbench"
ADVISE_SEED, MEASURED_SEED, SPLIT_SEED = 2, 12, 5


@dataclass
class Target:
    key: str
    label: str
    table: str
    layout: object | None  # Layout; None: the table as loaded
    full_scan: bool = False  # Parquet filter pushdown off: every row read
    index: bool = False  # the layout carries an aggregate index
    results: list = field(default_factory=list)


def _rewrite_sql(text: str, table: str) -> str:
    """A workload query (``FROM lineitem``) against ``table``."""
    import sqlglot
    from sqlglot import exp

    tree = sqlglot.parse_one(text, read="hive")
    for t in tree.find_all(exp.Table):
        if t.name.lower() == TABLE:
            db, _, name = table.rpartition(".")
            t.set("this", exp.to_identifier(name))
            t.set("db", exp.to_identifier(db) if db else None)
    return tree.sql(dialect="spark")


def _apply(spark, src, key: str, layout, block_bytes: int, log) -> tuple[str, float]:
    """A copy of the table as loaded, laid out by ``planner apply`` (the index built with it)."""
    from benchmarks.builds import build_copy
    from hive_integration.apply.apply_layout import SparkRunner, apply_layout

    table = f"{DB}.li_{key}"
    build_copy(spark, src.table, table, block_bytes)
    t = time.perf_counter()
    apply_layout(SparkRunner(spark), replace(layout, table=table), drop_old=True, progress=log)
    return table, time.perf_counter() - t


def _measure(spark, target: Target, sql: str, runs: int):
    from hive_integration.metastore.layouts import rewritten
    from hive_integration.spark.metrics import run_measured

    text, explanation = (sql, None) if target.layout is None else rewritten(spark, sql)
    if target.full_scan:
        spark.conf.set("spark.sql.parquet.filterPushdown", "false")
    try:
        rows, metrics = run_measured(spark, text)
        walls = []
        for _ in range(runs):
            t = time.perf_counter()
            spark.sql(text).collect()
            walls.append(time.perf_counter() - t)
    finally:
        spark.conf.unset("spark.sql.parquet.filterPushdown")
    cells = sum(m.rows for m in metrics if m.table.endswith("__cells"))
    table_rows = sum(m.rows for m in metrics if not m.table.endswith("__cells"))
    return {"answer": [tuple(r) for r in rows], "rows": table_rows, "index_rows": cells,
            "wall": statistics.median(walls) if walls else None,
            "used": bool(explanation is not None and explanation.used),
            "reason": "" if explanation is None else explanation.reason}


BUILD_ROUNDS = 2


def run(spark, scale: float, state_dir: Path, runs: int, reuse: bool, log=print, time_params=None) -> dict:
    from benchmarks.builds import build_copy, footprint
    from hive_integration.spark.cells import build
    from planner.advice.ranking import advise
    from planner.analysis.table_analysis import analyze_table
    from planner.workload import Workload

    load = [os.getloadavg()]
    cfg = dataclasses.replace(Config(), scale=scale, state_dir=state_dir, db=DB, reuse=reuse)
    src = load_source(spark, cfg, log)
    if time_params is not None:  # ``planner calibrate``'s coefficients, as a user who ran it advises
        src = replace(src, params=replace(src.params, time=time_params))
    wl = generated("q6", 100, ADVISE_SEED, scale, src.columns)
    adv_idx, _ = split_by_template(wl.queries, SPLIT_SEED)
    measured_wl = generated("q6", 100, MEASURED_SEED, scale, src.columns)
    _, held = split_by_template(measured_wl.queries, SPLIT_SEED)
    adv_wl = Workload("q6_variants[advise]", wl.dialect, tuple(wl.queries[i] for i in adv_idx))
    analysis = analyze_table(adv_wl, TABLE, src.columns)
    t = time.perf_counter()
    advice = advise(adv_wl, analysis, src.stats, src.params, log)
    allow = advice.allowing_regressions()
    advise_seconds = time.perf_counter() - t
    picks = {"pick": advice, "allow": allow}
    targets = [Target("full", "full scan (table as loaded, no Parquet filter)", src.table, None, full_scan=True),
               Target("current", "table as loaded", src.table, None)]
    builds = {}
    seen = {}
    indexed: list[tuple[str, object]] = []  # (key, layout on its table) of the layouts with an index
    for key, adv in picks.items():
        layout = adv.layout
        variants = [(key, layout)]
        if layout.aggregate_index is not None:
            without = next((c for c in adv.result.ranked if c.layout.aggregate_index is None and
                            c.layout.strategy == layout.strategy.removesuffix(" + aggregate index")), None)
            if without is not None:
                variants.append((f"{key}_noindex", adv.recorded(without)))
        for k, lay in variants:
            sig = (lay.partitions, lay.order, lay.aggregate_index)
            if sig in seen:
                continue
            seen[sig] = k
            table, seconds = _apply(spark, src, k, replace(lay, table=f"{DB}.li_{k}"), cfg.row_group_bytes, log)
            label = f"{key} ({lay.strategy}, order {lay.order.describe()})"
            targets.append(Target(k, label, table, lay, index=lay.aggregate_index is not None))
            builds[k] = {"apply_seconds": seconds}
            if lay.aggregate_index is not None:
                indexed.append((k, replace(lay, table=table)))
    # the index build against a plain copy: fastest of BUILD_ROUNDS each, in turns (apply built each
    # index once already; a build replaces it)
    copy_seconds = None
    for _ in range(BUILD_ROUNDS):
        copy = build_copy(spark, src.table, f"{DB}.li_copy", cfg.row_group_bytes)
        copy_seconds = copy.seconds if copy_seconds is None else min(copy_seconds, copy.seconds)
        for k, lay in indexed:
            t = time.perf_counter()
            steps: dict[str, float] = {}
            state = build(spark, lay, log, steps)
            seconds = time.perf_counter() - t
            if seconds < builds[k].get("index_seconds", float("inf")):
                builds[k] |= {"index_seconds": seconds, "index_steps": steps}
            builds[k] |= {"index_bytes": state.bytes if state else None, "cells": state.cells if state else None}
    shapes = {t.key: dict(zip(("files", "row_groups", "bytes"), footprint(spark, t.table))) for t in targets}
    table_bytes = shapes["current"]["bytes"]
    queries = [measured_wl.queries[i] for i in held]
    log(f"measuring {len(queries)} held-out queries on {len(targets)} targets")
    matching = []
    for q in queries:
        sql = _rewrite_sql(q.sql, src.table)
        where = sql.split(" WHERE ", 1)[1] if " WHERE " in sql else "TRUE"
        matching.append(spark.sql(f"SELECT count(*) FROM {src.table} WHERE {where}").collect()[0][0])
        reference = None
        for target in targets:
            got = _measure(spark, target, _rewrite_sql(q.sql, target.table), runs)
            got["template"] = q.template
            if reference is None:
                reference = got["answer"]
            got["same"] = got["answer"] == reference
            target.results.append(got)
    for target in targets:
        if not target.full_scan:
            _count_holding(spark, target, queries)
    load.append(os.getloadavg())
    out = {"scale": scale, "load_average": load, "build_rounds": BUILD_ROUNDS, "advise_seconds": advise_seconds, "copy_seconds": copy_seconds,
           "table_bytes": table_bytes, "builds": builds, "matching": matching, "shapes": shapes,
           "table_rows": src.stats.rows,
           "picks": {k: a.layout.describe() + (f" + {a.layout.aggregate_index.describe()}" if a.layout.aggregate_index
                                               else "") for k, a in picks.items()},
           "targets": [{"key": t.key, "label": t.label, "index": t.index,
                        "results": [{k: v for k, v in r.items() if k != "answer"} for r in t.results]}
                       for t in targets]}
    return out


def report(fig: dict) -> str:
    m = sum(fig["matching"])
    runs = fig.get("runs", 3)
    runs_arg = "" if runs == 3 else f" --runs {runs}"
    lines = [f"# Aggregate index on held-out Q6 variants (SF {fig['scale']:g})", "",
             "Reproduce: `.venv/bin/python -m benchmarks.agg_index_bench --scale "
             f"{fig['scale']:g}{runs_arg}` (under `flock /work/spark.lock`). Load average at the start "
             f"{fig['load_average'][0][0]:.1f}, at the end {fig['load_average'][-1][0]:.1f} (2 cores, shared): wall "
             f"times carry the noise of other jobs; rows read do not. Wall time per query: the median of {runs} "
             f"warm run{'s' if runs != 1 else ''} after the measured one.", "",
             f"Advised on half of the seed-{ADVISE_SEED} draw (split seed {SPLIT_SEED}); measured on the held-out half "
             f"of the seed-{MEASURED_SEED} draw: {len(fig['matching'])} queries, {m:,} matching rows. Time model: "
             f"{fig.get('time_params', 'defaults')}"
             + (" (`--calibration`)." if fig.get("time_params", "defaults") != "defaults" else "."), ""]
    for k, v in fig["picks"].items():
        lines.append(f"- {k}: {v}")
    full = next(t for t in fig["targets"] if t["key"] == "full")
    full_wall = sum(r["wall"] or 0 for r in full["results"])
    lines += ["", "| layout | rows read (table) | rows read (index) | read ÷ matching | wall s | vs full scan | "
              "answered from the index | wrong answers |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for t in fig["targets"]:
        rs = t["results"]
        rows, cells = sum(r["rows"] for r in rs), sum(r["index_rows"] for r in rs)
        wall = sum(r["wall"] or 0 for r in rs)
        lines.append(f"| {t['label']} | {rows:,} | {cells:,} | {(rows + cells) / max(m, 1):.3f} | {wall:.1f} | "
                     f"{full_wall / max(wall, 1e-9):.1f}x | {sum(r['used'] for r in rs)}/{len(rs)} | "
                     f"{sum(not r['same'] for r in rs)} |")
    lines += ["", "Builds:", ""]
    for k, b in fig["builds"].items():
        line = f"- `{k}`: apply {b['apply_seconds']:.1f} s"
        if "index_seconds" in b:
            line += (f"; index build {b['index_seconds']:.1f} s = {b['index_seconds'] / max(fig['copy_seconds'] or 1, 1e-9):.2f}"
                     f"× a plain copy ({fig['copy_seconds']:.1f} s; each the fastest of {fig.get('build_rounds', 1)}, "
                     f"in turns); {b['cells']:,} cells, "
                     f"{(b['index_bytes'] or 0) / 2**20:.2f} MiB = {(b['index_bytes'] or 0) / fig['table_bytes']:.2%} of "
                     f"the table ({fig['table_bytes'] / 2**20:.0f} MiB)")
            if b.get("index_steps"):
                line += "; its steps: " + ", ".join(f"{name} {s:.1f} s" for name, s in b["index_steps"].items())
        lines.append(line)
    lines += _lookups(fig)
    per: dict[str, list] = {}
    idx = [t for t in fig["targets"] if t["index"]]
    if idx:
        lines += ["", f"Per template, `{idx[0]['key']}` (rows read of the table + the index ÷ matching rows):", "",
                  "| template | queries | matching | table rows | index rows | from the index |", "|---|---:|---:|---:|---:|---:|"]
        for r, mm in zip(idx[0]["results"], fig["matching"]):
            p = per.setdefault(r["template"], [0, 0, 0, 0, 0])
            p[0] += 1
            p[1] += mm
            p[2] += r["rows"]
            p[3] += r["index_rows"]
            p[4] += r["used"]
        for k, p in sorted(per.items(), key=lambda kv: -kv[1][2]):
            lines.append(f"| {k} | {p[0]} | {p[1]:,} | {p[2]:,} | {p[3]:,} | {p[4]} |")
        lines += ["", _floor(idx[0], fig["matching"])]
    return "\n".join(lines) + "\n"


def _floor(target: dict, matching: list) -> str:
    """The lowest read ÷ matching this index allows: a query it does not answer scans, and a scan
    reads at least the rows that match (Spark counts the rows of every row group it keeps)."""
    m = max(sum(matching), 1)
    plain: dict[str, int] = {}
    for r, mm in zip(target["results"], matching):
        if not r["used"]:
            name = r["template"].split(",")[0]
            plain[name] = plain.get(name, 0) + mm
    total = sum(plain.values())
    top = ", ".join(f"{k} {v / m:.3f}" for k, v in sorted(plain.items(), key=lambda kv: -kv[1])[:3])
    return (f"Floor: the queries `{target['key']}` does not answer from the index match {total:,} of the {m:,} "
            f"rows and read at least those, so read ÷ matching cannot go below {total / m:.3f} with this index, "
            f"however its answered queries read (largest shares: {top}).")


LOOKUPS = {"q6 variant q-o, point per predicate": "l_orderkey", "q6 variant q-e, point per predicate": "l_extendedprice"}


def _looked_up(sql: str):
    """The one value a lookup query compares its column with (``column = literal``)."""
    from decimal import Decimal

    import sqlglot
    from sqlglot import exp

    eq = sqlglot.parse_one(sql, read="hive").find(exp.EQ)
    text = eq.expression.this
    return int(text) if text.lstrip("-").isdigit() else Decimal(text)


def _count_holding(spark, target: Target, queries) -> None:
    """For each lookup of ``LOOKUPS``: the row groups of ``target``'s files that hold the value,
    the floor no filter can go below (an order's lines may sit in several partitions)."""
    from hive_integration.spark.footers import groups_holding, local_path

    paths = [local_path(u) for u in spark.table(target.table).inputFiles()]
    for q, result in zip(queries, target.results):
        if q.template in LOOKUPS:
            result["holding"] = len(groups_holding(paths, LOOKUPS[q.template], _looked_up(q.sql))[0])


def _lookups(fig: dict) -> list[str]:
    """Issue 32's lookup target: the row groups a one-value lookup reads, per layout (rows read ÷
    the table's rows per row group: Spark reads whole row groups of the files it does not skip)."""
    shapes = fig.get("shapes")
    if not shapes:
        return []
    lines = ["", "Lookups on one value (target: at most 2 row groups in every advised layout); row groups read "
             "= rows read ÷ the layout's rows per row group, and in brackets the row groups that hold the value "
             "(read from the files: no filter can skip those):", "",
             "| layout | rows per row group | " + " | ".join(f"`{c} = v`" for c in LOOKUPS.values()) + " |",
             "|---|---:|" + "---:|" * len(LOOKUPS)]
    for t in fig["targets"]:
        if t["key"] == "full":
            continue
        per_group = fig["table_rows"] / max(shapes[t["key"]]["row_groups"], 1)
        cells = []
        for template in LOOKUPS:
            got = [r for r in t["results"] if r["template"] == template]
            cells.append(", ".join(f"{r['rows'] / per_group:.1f}" + (f" ({r['holding']})" if "holding" in r else "")
                                   for r in got) if got else "–")
        lines.append(f"| {t['label']} | {per_group:,.0f} | " + " | ".join(cells) + " |")
    return lines


def main(argv=None) -> int:
    from hive_integration.spark.session import build_spark_session

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--state-dir", type=Path, default=Path("/tmp/planner-agg-bench"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--reuse", action="store_true")
    ap.add_argument("--out-dir", type=Path, default=ROOT / "benchmarks" / "results")
    ap.add_argument("--report-only", action="store_true", help="render the report again from the JSON")
    ap.add_argument("--calibration", type=Path, default=None,
                    help="advise with this `planner calibrate` result (calibration.json); the report is named *_calibrated")
    args = ap.parse_args(argv)
    name = f"agg_index_sf{args.scale:g}" + ("_calibrated" if args.calibration else "")
    if args.report_only:
        fig = json.loads((args.out_dir / f"{name}.json").read_text())
        (args.out_dir / f"{name}.md").write_text(report(fig))
        print(report(fig))
        return 0
    spark = build_spark_session(args.state_dir / "spark", app_name="agg-index-bench",
                                conf={"spark.driver.memory": "4g"})
    started = time.perf_counter()
    time_params = None
    if args.calibration:
        from planner.cli.calibrate import load_time_params

        time_params = load_time_params(args.state_dir, str(args.calibration))
    fig = run(spark, args.scale, args.state_dir, args.runs, args.reuse,
              lambda m: print(f"[{time.perf_counter() - started:7.1f}s] {m}", flush=True), time_params)
    fig["time_params"] = "defaults" if time_params is None else time_params.source
    fig["runs"] = args.runs
    args.out_dir.mkdir(parents=True, exist_ok=True)
    (args.out_dir / f"{name}.json").write_text(json.dumps(fig, indent=2, default=str))
    (args.out_dir / f"{name}.md").write_text(report(fig))
    print(report(fig))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Check the drift benchmark's quarter-drift point on real Spark: rows read (scan metrics), rows
rewritten, and full results compared with the table before any layout, during and after.

1. lineitem (tpchgen-cli, SF ``--scale``) is loaded as a plain Hive Parquet table;
2. the layout advised on Q6/Q14 is applied (the plain table is kept as ``…__before_…``: the
   reference every result is compared with);
3. the drift window (``l_quantity = v AND l_shipdate >= <75th percentile>``) is run through the
   rewrite, measured; then the partial re-layout chosen for it is applied, interrupted once after
   its verification (queries run in that state too), resumed, and the window measured again.

    .venv/bin/python -m benchmarks.drift_check [--scale 1] [--queries 40] [--out drift_spark.md]
        [--stats parquet|spark] [--seed 111]
"""
from __future__ import annotations

import argparse
import os
import random
import time
from dataclasses import replace

from benchmarks.drift_bench import ROOT, TABLE, _best_new, table_stats
from devtools.tpch_data import generate_lineitem, load_table
from devtools.workload_gen.tpch import tpch_workload
from hive_integration.apply.apply_layout import SparkRunner, apply_layout
from hive_integration.apply.relayout import SimulatedCrash, relayout
from hive_integration.metastore.layouts import sql as planner_sql
from hive_integration.spark.metrics import collect_scan_metrics, scans_kept
from hive_integration.spark.session import build_spark_session
from hive_integration.spark.statistics_pass import gather_stats, table_schema
from planner.advice.ranking import advise
from planner.advice.relayout_plan import model_for, plan_relayout
from planner.analysis.table_analysis import analyze_table
from planner.costmodel.cost import CostModel, CostParams
from planner.model.layout import with_generation
from planner.workload import Schema, parse_workload


def measured(spark, text: str) -> tuple[list, int]:
    """(the query's rows, sorted; the rows its scans read) through the planner's rewrite."""
    with scans_kept(spark):
        df = planner_sql(spark, text, dialect="spark")
        rows = sorted(tuple(r) for r in df.collect())
        return rows, sum(m.rows for m in collect_scan_metrics(df))


def run(scale: float, n: int, seed: int = 111, stats_from: str = "parquet", log=print) -> dict:
    """``seed``: 111, the drift benchmark's quarter drift (its seed 11 + 100). ``stats_from``:
    ``parquet``, the drift benchmark's statistics (a sample read from the
    generated file, ``benchmarks.drift_bench.table_stats``), so the layouts are the benchmark's
    chosen points; ``spark``, statistics of the loaded table (``gather_stats``)."""
    state = ROOT / ".planner" / "drift_check"
    spark = build_spark_session(state, app_name="drift-check")
    db = "drift_check"
    spark.sql(f"DROP DATABASE IF EXISTS {db} CASCADE")
    spark.sql(f"CREATE DATABASE {db}")
    table = f"{db}.{TABLE}"
    data = generate_lineitem(scale, ROOT / ".planner" / "data")
    load_table(spark, data, table)
    columns = table_schema(spark, table)
    # below SF 1 the table is a few dozen MB: let the layouts cut it
    params = CostParams() if scale >= 1 else CostParams(min_partition_bytes=1 << 20)
    stats = table_stats(data, 100_000) if stats_from == "parquet" else gather_stats(spark, table, sample_rows=100_000)
    base_text = "".join(q.replace("lineitem", table) + ";\n" for q in tpch_workload(40, seed, templates=("q06", "q14")))
    base_wl = parse_workload(base_text, "ship-dates.sql", schema=Schema({table: columns}), tables=[table])
    base = _best_new(advise(base_wl, analyze_table(base_wl, table, columns), stats, params))
    base = with_generation(replace(base, types=tuple((a, columns[a]) for a in base.attributes if a in columns)))
    t = time.perf_counter()
    applied = apply_layout(SparkRunner(spark), base)
    log(f"applied {base.describe()} in {time.perf_counter() - t:.0f} s")
    reference = applied.backup
    dates = sorted(stats.sample.column("l_shipdate").to_pylist())
    cut = dates[int(len(dates) * 0.75)]
    rng = random.Random(seed)
    queries = [f"SELECT l_orderkey, l_linenumber, l_extendedprice FROM {table} WHERE l_shipdate >= DATE '{cut}' "
               f"AND l_quantity = {rng.randint(1, 50)}" for _ in range(n)]
    queries += [f"SELECT count(*), sum(l_extendedprice) FROM {table} WHERE l_shipdate < DATE '{cut}'",
                f"SELECT count(*), sum(l_quantity) FROM {table}"]
    expected = [sorted(tuple(r) for r in spark.sql(q.replace(table, reference)).collect()) for q in queries]
    wrong = 0

    def window(label: str) -> int:
        nonlocal wrong
        read = 0
        for q, want in zip(queries, expected):
            got, rows = measured(spark, q)
            wrong += got != want
            read += rows if q in queries[:n] else 0
        log(f"{label}: drift window read {read:,} rows; wrong answers so far {wrong}")
        return read

    before = window("before")
    drift_text = "".join(q + ";\n" for q in queries[:n])
    wl = parse_workload(drift_text, "drift.sql", schema=Schema({table: columns}), tables=[table])
    analysis = analyze_table(wl, table, columns)
    model = CostModel(analysis, stats, params)
    target = _best_new(advise(wl, analysis, stats, params))
    current = planner_layout(spark, table)
    plan = plan_relayout(model, current, target, max_partitions=params.max_partitions)
    log(f"partial re-layout{' (the whole table)' if plan.whole else ''}: {len(plan.chosen)} of {len(plan.gains)} "
        f"partitions, ~{plan.rows_rewritten:,.0f} rows")
    try:
        relayout(spark, plan, crash_at="after_verify")
    except SimulatedCrash:
        window("during (interrupted after verify)")
    t = time.perf_counter()
    report = relayout(spark, plan, break_lease=True)
    seconds = time.perf_counter() - t
    after = window("after")
    est_before = model_for(model, current).evaluate(current).rows
    est_after = model_for(model, plan.layout).evaluate(plan.layout).rows
    spark.stop()
    return {"scale": scale, "queries": n, "base": base.describe(), "partitions": len(plan.gains),
            "recut": len(plan.chosen), "rows": stats.rows, "rewritten": report.rows,
            "rewritten_est": round(plan.rows_rewritten), "read_before": before, "read_after": after,
            "est_before": round(est_before), "est_after": round(est_after), "wrong": wrong, "cut": str(cut),
            "seconds": round(seconds, 1), "load": round(os.getloadavg()[0], 2)}


def planner_layout(spark, table: str):
    from hive_integration.metastore.layouts import SparkCatalogLayouts

    return SparkCatalogLayouts(spark).lookup(*table.split(".")).layout


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--queries", type=int, default=40, help="drift window (the drift benchmark's is 40)")
    ap.add_argument("--out", default="drift_spark.md", help="file under benchmarks/results/")
    ap.add_argument("--stats", choices=("parquet", "spark"), default="parquet",
                    help="parquet: the drift benchmark's statistics (its chosen points); spark: the loaded table's")
    ap.add_argument("--seed", type=int, default=111, help="111: the drift benchmark's quarter drift")
    a = ap.parse_args(argv)
    r = run(a.scale, a.queries, a.seed, stats_from=a.stats)
    text = "\n".join([
        "# Drift check on Spark (issue 15): the quarter-drift point", "",
        f"Command: `.venv/bin/python -m benchmarks.drift_check --scale {a.scale:g} --queries {a.queries} --out {a.out} "
        f"--stats {a.stats} --seed {a.seed}`. "
        f"TPC-H lineitem SF {a.scale:g} ({r['rows']:,} rows), layout advised on Q6/Q14 (`{r['base']}`), "
        f"drift window of {a.queries} queries `l_quantity = v AND l_shipdate >= {r['cut']}`. Rows read are "
        f"Spark's scan metrics; load average {r['load']} (the re-layout took {r['seconds']} s, inflated by load).",
        "", "| figure | Spark | model |", "|---|---:|---:|",
        f"| drift window rows read, before | {r['read_before']:,} | {r['est_before']:,} |",
        f"| drift window rows read, after the partial re-layout | {r['read_after']:,} | {r['est_after']:,} |",
        f"| partitions re-cut | {r['recut']} of {r['partitions']} | |",
        f"| rows rewritten | {r['rewritten']:,} ({r['rewritten'] / r['rows']:.3f} x table) | "
        f"{r['rewritten_est']:,} |",
        f"| wrong answers before, during (interrupted after verify) and after; full results compared with "
        f"the table before any layout | {r['wrong']} | target 0 |", ""])
    out = ROOT / "benchmarks" / "results" / a.out
    out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

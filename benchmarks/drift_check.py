"""Check the drift benchmark's quarter-drift point on real Spark: rows read (scan metrics), rows
rewritten, and full results compared with the table before any layout, during and after.

1. lineitem (tpchgen-cli, SF ``--scale``) is loaded as a plain Hive Parquet table;
2. the layout advised on Q6/Q14 is applied (the plain table is kept as ``…__before_…``: the
   reference every result is compared with);
3. the drift window (``l_quantity = v AND l_shipdate >= <75th percentile>``) is run through the
   rewrite, measured; then the partial re-layout chosen for it is applied, interrupted once after
   its verification (queries run in that state too), resumed, and the window measured again.

    .venv/bin/python -m benchmarks.drift_check [--scale 1] [--queries 40] [--out drift_spark_sf1.md]
        [--stats parquet|spark] [--seed 111]
"""
from __future__ import annotations

import argparse
import random
import time
from dataclasses import replace
from pathlib import Path

from benchmarks.drift_bench import ROOT, TABLE, table_stats
from benchmarks.harness import RESULTS, Answer, load_average, markdown_table, measure, reproduce, write_result
from devtools.tpch_data import generate_lineitem, load_table
from devtools.workload_gen.tpch import tpch_workload
from hive_integration.apply.apply_layout import SparkRunner, apply_layout
from hive_integration.apply.relayout import SimulatedCrash, relayout
from hive_integration.metastore.layouts import sql as planner_sql
from hive_integration.spark.session import build_spark_session
from hive_integration.spark.statistics_pass import gather_stats, table_schema
from planner.advice.ranking import advise
from planner.advice.relayout_plan import model_for, plan_relayout
from planner.analysis.table_analysis import analyze_table
from planner.costmodel.cost import CostModel, CostParams
from planner.model.layout import with_generation
from planner.workload import Schema, parse_workload


def through_rewrite(spark, text: str):
    """``text`` run through the planner's rewrite (``planner.sql``), measured: its answer and what
    its scans read."""
    return measure(spark, lambda: planner_sql(spark, text, dialect="spark"))


def run(scale: float, n: int, seed: int = 111, stats_from: str = "parquet", log=print, spark=None,
        data_dir: Path | None = None) -> dict:
    """``seed``: 111, the drift benchmark's quarter drift (its seed 11 + 100). ``stats_from``:
    ``parquet``, the drift benchmark's statistics (a sample read from the
    generated file, ``benchmarks.drift_bench.table_stats``), so the layouts are the benchmark's
    chosen points; ``spark``, statistics of the loaded table (``gather_stats``). ``spark``: a
    session to use (default: one of its own, stopped at the end); ``data_dir``: where lineitem is
    generated (default ``.planner/data``)."""
    own = spark is None
    if own:
        spark = build_spark_session(ROOT / ".planner" / "drift_check", app_name="drift-check")
    db = "drift_check"
    spark.sql(f"DROP DATABASE IF EXISTS {db} CASCADE")
    spark.sql(f"CREATE DATABASE {db}")
    table = f"{db}.{TABLE}"
    data = generate_lineitem(scale, data_dir or ROOT / ".planner" / "data")
    load_table(spark, data, table)
    columns = table_schema(spark, table)
    # below SF 1 the table is a few dozen MB: let the layouts cut it
    params = CostParams() if scale >= 1 else CostParams(min_partition_bytes=1 << 20)
    stats = table_stats(data, 100_000) if stats_from == "parquet" else gather_stats(spark, table, sample_rows=100_000)
    base_text = "".join(q.replace("lineitem", table) + ";\n" for q in tpch_workload(40, seed, templates=("q06", "q14")))
    base_wl = parse_workload(base_text, "ship-dates.sql", schema=Schema({table: columns}), tables=[table])
    base = advise(base_wl, analyze_table(base_wl, table, columns), stats, params).best_new
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
    expected = [Answer.of(spark.sql(q.replace(table, reference)).collect()) for q in queries]
    wrong = 0

    def window(label: str) -> int:
        nonlocal wrong
        read = 0
        for q, want in zip(queries, expected):
            got = through_rewrite(spark, q)
            wrong += got.answer != want
            read += got.read() if q in queries[:n] else 0
        log(f"{label}: drift window read {read:,} rows; wrong answers so far {wrong}")
        return read

    before = window("before")
    drift_text = "".join(q + ";\n" for q in queries[:n])
    wl = parse_workload(drift_text, "drift.sql", schema=Schema({table: columns}), tables=[table])
    analysis = analyze_table(wl, table, columns)
    model = CostModel(analysis, stats, params)
    target = advise(wl, analysis, stats, params).best_new
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
    if own:
        spark.stop()
    return {"scale": scale, "queries": n, "base": base.describe(), "partitions": len(plan.gains),
            "recut": len(plan.chosen), "rows": stats.rows, "rewritten": report.rows,
            "rewritten_est": round(plan.rows_rewritten), "read_before": before, "read_after": after,
            "est_before": round(est_before), "est_after": round(est_after), "wrong": wrong, "cut": str(cut),
            "seconds": round(seconds, 1), "load": round(load_average(), 2)}


def planner_layout(spark, table: str):
    from hive_integration.metastore.layouts import SparkCatalogLayouts

    return SparkCatalogLayouts(spark).lookup(*table.split(".")).layout


def report(r: dict, command: str) -> str:
    n = r["queries"]
    return "\n".join([
        "# Drift check on Spark (issue 15): the quarter-drift point", "",
        f"Command: `{command}`. "
        f"TPC-H lineitem SF {r['scale']:g} ({r['rows']:,} rows), layout advised on Q6/Q14 (`{r['base']}`), "
        f"drift window of {n} queries `l_quantity = v AND l_shipdate >= {r['cut']}`. Rows read are "
        f"Spark's scan metrics; load average {r['load']} (the re-layout took {r['seconds']} s, inflated by load).",
        "", *markdown_table(["figure", "Spark", "model"], [
            ["drift window rows read, before", f"{r['read_before']:,}", f"{r['est_before']:,}"],
            ["drift window rows read, after the partial re-layout", f"{r['read_after']:,}", f"{r['est_after']:,}"],
            ["partitions re-cut", f"{r['recut']} of {r['partitions']}", ""],
            ["rows rewritten", f"{r['rewritten']:,} ({r['rewritten'] / r['rows']:.3f} x table)",
             f"{r['rewritten_est']:,}"],
            ["wrong answers before, during (interrupted after verify) and after; every result's count and "
             "checksum compared with the table before any layout", r["wrong"], "target 0"]]), ""])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--queries", type=int, default=40, help="drift window (the drift benchmark's is 40)")
    ap.add_argument("--out", default=None, help="file under benchmarks/results/ (default drift_spark_sf<scale>.md)")
    ap.add_argument("--stats", choices=("parquet", "spark"), default="parquet",
                    help="parquet: the drift benchmark's statistics (its chosen points); spark: the loaded table's")
    ap.add_argument("--seed", type=int, default=111, help="111: the drift benchmark's quarter drift")
    a = ap.parse_args(argv)
    a.out = a.out or f"drift_spark_sf{a.scale:g}.md"
    r = run(a.scale, a.queries, a.seed, stats_from=a.stats)
    command = reproduce("benchmarks.drift_check", [
        "--scale", f"{a.scale:g}", "--queries", str(a.queries), "--out", a.out, "--stats", a.stats, "--seed", str(a.seed)])
    text = report(r, command)
    write_result(Path(a.out).stem, text, out_dir=RESULTS)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Join-induced pruning on TPC-H (issue 13): what the lineitem scans of join queries read, and how fast.

Unlike ``tpch_bench`` (whose probes keep only each scan's own lineitem predicate), this runs the
*whole* held-out join queries (Q3, Q4, Q5, Q8, Q10, Q21; parameters drawn with a seed of their own,
not the workload's) on all eight TPC-H tables, in four set-ups:

* ``copy``: lineitem as loaded (plain Parquet, no layout): the full scan;
* ``layout``: lineitem laid out as ``advise`` picks on ``sql/tpch_workload.sql``, its cost model
  pricing the induced predicates on the sample joined to the other tables (``--layout month``: the
  hand-built month ranges of ``l_shipdate`` instead), queries rewritten by the planner with their
  own lineitem predicates only;
* ``layout+joins``: the same table, the rewrite also prunes through the joins, by the per-partition
  ranges of ``o_orderdate``, ``o_orderstatus``, ``r_name``, … recorded at apply;
* the copy and ``layout+joins`` also with Spark's dynamic partition pruning and runtime bloom filters
  off (both are on by default), to tell Spark's gain from the planner's.

``--layout sideways``: the advised layout with every partition split by the supplier's region (a
sideways cut, ``planner.costmodel.sideways``, built by hand because ``advise`` does not pick it at
SF 1), in a database of its own.

``--with-orders``: orders laid out too, as ``advise`` picks for it on the same workload (a DBA
advises each large table), in a database of its own with lineitem laid out as in the main one;
the copy then reads both tables as loaded.

Figures: rows, partitions and files the lineitem scans read (Spark's scan metrics, not estimates)
and the wall time of each query (the fastest of ``--rounds`` runs, the set-ups' order rotated from
round to round and query to query by ``benchmarks.harness.schedule``; the load average is
recorded with every run). Every run's answer (count and checksum of its rows) is compared with
the copy's.

    .venv/bin/python -m benchmarks.tpch_joins [--scale 1] [--rounds 3] [--state-dir .planner/bench-joins] [--layout month]
"""
from __future__ import annotations

import argparse
import datetime as dt
import random
import re
import time
from dataclasses import replace
from pathlib import Path

from benchmarks.harness import RESULTS, load_average, schedule, write_result
from benchmarks.harness import measure as measured
from benchmarks.tpch_setup import session_conf, tiny_params
from devtools.tpch_data import generate_table, load_table
from devtools.workload_gen.tpch import TEMPLATES
from hive_integration.apply.apply_layout import SparkRunner, apply_layout
from hive_integration.metastore.layouts import sql as planner_sql
from hive_integration.spark import join_ranges
from hive_integration.spark.session import build_spark_session
from planner.analysis.table_analysis import analyze_table
from planner.cnf.valueset import ValueSet
from planner.model.layout import Layout, Partition, keyed_by_id, with_generation
from planner.pruning.join_pruning import with_join_columns
from planner.semantics.kinds import Kind
from planner.workload import parse_workload
from planner.workload.scans import schema_from_ddl

ROOT = Path(__file__).resolve().parent.parent
TABLES = ("lineitem", "orders", "customer", "nation", "region", "supplier", "part", "partsupp")
HELD_OUT = ("q05", "q08", "q21", "q03", "q04", "q10")
TINY_BYTES = 16 * 2**20
COPY_MARK = "bench.copy"  # lineitem_copy's property: "loader" once loaded as lineitem is (its row groups)
SPARK_JOIN_CONF = ("spark.sql.optimizer.dynamicPartitionPruning.enabled",
                   "spark.sql.optimizer.runtime.bloomFilter.enabled")


def month_layout(table: str) -> Layout:
    """Month ranges of ``l_shipdate`` (1992-01 … 1998-12) and one partition for everything else."""
    parts, months = [], []
    for year in range(1992, 1999):
        for month in range(1, 13):
            lo = dt.date(year, month, 1)
            hi = dt.date(year + (month == 12), 1 if month == 12 else month + 1, 1)
            months.append(ValueSet.range(Kind.DATE, lo, hi, True, False))
    for i, vs in enumerate(months, 1):
        parts.append(Partition(i, (("l_shipdate", vs),)))
    rest = ValueSet.union_all(Kind.DATE, months).complement()
    parts.append(Partition(len(months) + 1, (("l_shipdate", rest),)))
    return with_generation(Layout(table, "month ranges", tuple(parts), kinds=(("l_shipdate", Kind.DATE),),
                                  types=(("l_shipdate", "date"),)))


def held_out_queries(seed: int, per_template: int) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    out = []
    for _ in range(per_template):
        for name in HELD_OUT:
            t = TEMPLATES[name]
            sql = t.render(t.draw(rng))
            out.append((name, re.sub(r"\blimit\s+\d+\s*$", "", sql.strip(), flags=re.I)))  # full answers compared
    return out


def advised_layout(spark, db: str, wl, analysis, state: Path, log, table: str = "lineitem") -> Layout:
    """What ``planner advise`` picks for ``table`` on the training workload (``sql/tpch_workload.sql``),
    its cost model pricing the induced predicates on the sample joined to the other tables.

    Statistics come from ``<table>_copy`` (the same rows as loaded, never laid out): the table itself
    may hold an earlier run's layout."""
    from hive_integration.spark.join_sample import with_joined_columns
    from hive_integration.spark.statistics_pass import gather_stats
    from planner.advice.ranking import advice_text, advise
    from planner.costmodel.cost import CostParams
    from planner.pruning.join_pruning import MAX_COLUMNS

    t0 = time.monotonic()
    stats = gather_stats(spark, f"{db}.{table}_copy", cache_dir=state / "stats", progress=log)
    stats = with_joined_columns(spark, replace(stats, table=f"{db}.{table}"),
                                analysis.join_columns()[:MAX_COLUMNS], log)
    groups = sum(len(f.row_groups or ()) for f in stats.data_files or ())
    params = CostParams(row_group_rows=max(1, round(stats.rows / max(groups, 1))))
    if stats.bytes < TINY_BYTES:  # the smoke run's few MB: partitions small enough to cut them
        params = tiny_params(params)
    t1 = time.monotonic()
    advice = advise(wl, analysis, stats, params, log)
    log(f"statistics and sample join in {t1 - t0:.1f} s, search in {time.monotonic() - t1:.1f} s "
        f"(CPU {time.process_time():.1f} s so far)")
    log(advice_text(advice))
    if advice.keeps_current:

        # as issue 11's benchmark does: the pick of `--allow-regressions` (the guard's reasons are above)
        advice = advice.allowing_regressions()
        log("the guarded advice keeps the table as it is; measuring the --allow-regressions pick: "
            + advice.result.best.layout.describe())
    if advice.keeps_current:
        raise SystemExit(f"advise keeps {table} as it is even with regressions allowed: no layout to measure")
    return advice.layout


REGIONS = ("AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST")


def sideways_layout(base: Layout, analysis) -> Layout:
    """``base`` with every partition split by the region of the row's supplier (five groups, the
    last also taking any other name and NULL); its order and write hints kept."""
    from planner.costmodel.joined import joined_attribute
    from planner.costmodel.sideways import split

    column = next(c for c in analysis.join_columns()
                  if c.column == "r_name" and c.path.hops[0].column == "l_suppkey")
    a = joined_attribute(column)
    groups = [ValueSet.points(Kind.STRING, [n]) for n in REGIONS]
    groups[-1] = groups[-1].union(ValueSet.union_all(Kind.STRING, groups).complement())
    cut = Layout(base.table, "supplier region", tuple(Partition(i, ((a, g),)) for i, g in enumerate(groups, 1)),
                 kinds=((a, Kind.STRING),), joined=((a, column),))
    meta = tuple((k, v) for k, v in base.meta if not keyed_by_id(v))  # hints keyed by the old ids go
    both = split(replace(base, generation=None), cut, 10_000)
    return with_generation(replace(both, order=base.order, types=base.types, settings=base.settings, meta=meta))


def table_properties(spark, table: str) -> dict[str, str]:
    return {r[0]: r[1] for r in spark.sql(f"SHOW TBLPROPERTIES {table}").collect()}


def setup(spark, scale: float, data: Path, db: str, log, layout_choice: str = "advised",
          state: Path | None = None, laid_out: bool = True) -> str:
    """Load the tables, lay lineitem out (advised, by month, or as it is held), record its join ranges; returns the
    layout's description. ``laid_out=False``: load the tables and lineitem's copy only."""
    spark.sql(f"CREATE DATABASE IF NOT EXISTS {db}")
    have = {r[1] for r in spark.sql(f"SHOW TABLES IN {db}").collect()}
    for t in TABLES:
        if t not in have:
            t0 = time.monotonic()
            load_table(spark, generate_table(scale, data, t), f"{db}.{t}", row_group_bytes=2_000_000)
            log(f"loaded {db}.{t} in {time.monotonic() - t0:.1f} s")
    if "lineitem_copy" not in have or table_properties(spark, f"{db}.lineitem_copy").get(COPY_MARK) != "loader":
        # the rows as loaded, with the loader's row groups (the size the layouts are written with,
        # as the issue asks): an earlier run's CTAS copy had one 100 MB row group per file, which
        # favoured the copy's plain scans and told advise that lineitem's row groups held 3M rows
        t0 = time.monotonic()
        load_table(spark, generate_table(scale, data, "lineitem"), f"{db}.lineitem_copy", row_group_bytes=2_000_000)
        spark.sql(f"ALTER TABLE {db}.lineitem_copy SET TBLPROPERTIES ('{COPY_MARK}' = 'loader')")
        log(f"loaded {db}.lineitem_copy in {time.monotonic() - t0:.1f} s")
    if not laid_out:
        return ""
    from planner.emit.ddl import layout_from_properties

    schema = schema_from_ddl((ROOT / "sql" / "tpch_schema.sql").read_text())
    wl = parse_workload((ROOT / "sql" / "tpch_workload.sql").read_text(), schema=schema, database=db,
                        tables=[f"{db}.lineitem"])
    analysis = analyze_table(wl, f"{db}.lineitem", schema.columns("lineitem"))
    properties = lambda: table_properties(spark, f"{db}.lineitem")  # noqa: E731
    props = properties()
    held = layout_from_properties(props) if "planner.layout.parts" in props else None
    if layout_choice == "held" and held is not None and join_ranges.load(spark, f"{db}.lineitem"):
        return held.describe()  # measured as it is: no advise, no apply
    if layout_choice == "month":
        layout = month_layout(f"{db}.lineitem")
    elif layout_choice == "sideways":
        layout = sideways_layout(advised_layout(spark, db, wl, analysis, state, log), analysis)
    else:
        layout = advised_layout(spark, db, wl, analysis, state, log)
    layout = with_join_columns(layout, analysis.join_columns())
    if held is None or (held.partitions, held.order) != (layout.partitions, layout.order):
        report = apply_layout(SparkRunner(spark), layout, drop_old=True, progress=log)
        log(f"applied {layout.describe()}, join ranges included, in {report.seconds:.1f} s")
        held = layout_from_properties(properties())
    if join_ranges.load(spark, f"{db}.lineitem") is None:  # stored by an older run, or unreadable: record anew
        t0 = time.monotonic()
        join_ranges.refresh(spark, held, log)
        log(f"join ranges recorded in {time.monotonic() - t0:.1f} s")
    return held.describe()


def setup_orders(spark, db: str, lineitem_db: str, state: Path, log) -> str:
    """``db`` (tables loaded by ``setup``): lineitem laid out as ``lineitem_db.lineitem`` is, orders as
    ``advise`` picks for it on the same training workload, then lineitem's join ranges recorded
    (they depend on orders' snapshot). ``orders_copy`` keeps orders as loaded for the copy."""
    from planner.emit.ddl import layout_from_properties

    def props(table: str) -> dict:
        return table_properties(spark, table)

    have = {r[1] for r in spark.sql(f"SHOW TABLES IN {db}").collect()}
    if "orders_copy" not in have:
        if "planner.layout.parts" in props(f"{db}.orders"):
            raise SystemExit(f"{db}.orders is laid out but {db}.orders_copy (the rows as loaded) is missing")
        spark.sql(f"CREATE TABLE {db}.orders_copy STORED AS PARQUET AS SELECT * FROM {db}.orders")
    source = props(f"{lineitem_db}.lineitem")
    if "planner.layout.parts" not in source:
        raise SystemExit(f"{lineitem_db}.lineitem holds no layout: run the benchmark without --with-orders first")
    schema = schema_from_ddl((ROOT / "sql" / "tpch_schema.sql").read_text())
    wl = parse_workload((ROOT / "sql" / "tpch_workload.sql").read_text(), schema=schema, database=db,
                        tables=[f"{db}.lineitem"])
    joined = analyze_table(wl, f"{db}.lineitem", schema.columns("lineitem")).join_columns()  # this database's tables
    want = with_join_columns(replace(layout_from_properties(source), table=f"{db}.lineitem"), joined)
    mine = props(f"{db}.lineitem")
    held = layout_from_properties(mine) if "planner.layout.parts" in mine else None
    if held is None or (held.partitions, held.order, held.meta) != (want.partitions, want.order, want.meta):
        report = apply_layout(SparkRunner(spark), want, drop_old=True, progress=log)
        log(f"applied lineitem's layout in {report.seconds:.1f} s")
    mine = props(f"{db}.orders")
    if "planner.layout.parts" not in mine:
        wl = parse_workload((ROOT / "sql" / "tpch_workload.sql").read_text(), schema=schema, database=db,
                            tables=[f"{db}.orders"])
        analysis = analyze_table(wl, f"{db}.orders", schema.columns("orders"))
        layout = with_join_columns(advised_layout(spark, db, wl, analysis, state, log, "orders"),
                                   analysis.join_columns())
        report = apply_layout(SparkRunner(spark), layout, drop_old=True, progress=log)
        log(f"applied orders' {layout.describe()} in {report.seconds:.1f} s")
        mine = props(f"{db}.orders")
    held = layout_from_properties(props(f"{db}.lineitem"))
    ranges = join_ranges.load(spark, f"{db}.lineitem")
    current = join_ranges.snapshots(spark, [t for t, _ in ranges.snapshots]) if ranges else None
    if ranges is None or dict(ranges.snapshots) != current:  # orders laid out after lineitem: record anew
        join_ranges.refresh(spark, held, log)
    return f"{held.describe()}; orders: {layout_from_properties(mine).describe()}"


def copy_text(sql: str, tables: tuple[str, ...]) -> str:
    """``sql`` reading each of ``tables`` as loaded (``<table>_copy``)."""
    for t in tables:
        sql = re.sub(rf"\b{t}\b", f"{t}_copy", sql)
    return sql


def measure(spark, db: str, sql: str, mode: str, laid_out: tuple[str, ...] = ("lineitem",)) -> dict:
    """One run of ``sql``: its answer, the lineitem scans' metrics and the wall time. The copy reads
    the ``laid_out`` tables as loaded."""
    text = sql if mode != "copy" else copy_text(sql, laid_out)
    if mode == "layout+joins":
        m = measured(spark, lambda: planner_sql(spark, text))
    elif mode == "layout":
        m = measured(spark, lambda: _without_join_ranges(spark, text))
    else:
        m = measured(spark, text)
    scans = m.scans_of("lineitem", "lineitem_copy")
    # planned: the planner's rewrite (its metastore and file look-ups), or Spark's parse
    return {"answer": (m.answer.count, m.answer.checksum), "wall": m.seconds, "planned": m.planned,
            "li_rows": sum(s.rows for s in scans), "li_parts": sum(s.partitions or 0 for s in scans),
            "li_files": sum(s.files for s in scans), "li_scans": len(scans),
            "o_rows": m.read("orders", "orders_copy"), "load": m.load}


def _without_join_ranges(spark, text: str):
    import hive_integration.spark.join_ranges as jr

    saved = jr.join_context
    jr.join_context = lambda *a, **k: None
    try:
        return planner_sql(spark, text)
    finally:
        jr.join_context = saved


RUNS = (("copy", True), ("copy", False), ("layout", True), ("layout+joins", True), ("layout+joins", False))


def run(spark, db: str, queries, log, done=lambda results: None, rounds: int = 3,
        laid_out: tuple[str, ...] = ("lineitem",)) -> list[dict]:
    """Every query in every set-up of ``RUNS``, ``rounds`` times (``done`` sees the results after each
    query). The set-ups' order rotates from round to round and from query to query, so no set-up is
    always the first to meet a query's plan and data (the first run of a query is the slowest)."""
    out = []
    for r, (name, sql), (mode, spark_on) in schedule(RUNS, rounds, queries):
        for key in SPARK_JOIN_CONF:
            spark.conf.set(key, "true" if spark_on else "false")
        m = measure(spark, db, sql, mode, laid_out)
        m.update(query=name, mode=mode, spark_joins=spark_on, round=r + 1)
        out.append(m)
        log(f"round {r + 1} {name} {mode:13} dpp/bloom {'on ' if spark_on else 'off'}: lineitem rows "
            f"{m['li_rows']:,} parts {m['li_parts']} in {m['wall']:.1f} s")
        if len(out) % len(RUNS) == 0:
            done(out)
    for key in SPARK_JOIN_CONF:
        spark.conf.unset(key)
    return out


def fastest(results: list[dict]) -> dict[tuple, dict]:
    """(query, set-up, DPP/bloom) -> its fastest run, with every run's wall time in ``walls``."""
    by: dict[tuple, dict] = {}
    for r in results:
        key = (r["query"], r["mode"], r["spark_joins"])
        walls = by[key]["walls"] + [r["wall"]] if key in by else [r["wall"]]
        if key not in by or r["wall"] < by[key]["wall"]:
            by[key] = dict(r)
        by[key]["walls"] = walls
    return by


def report(results: list[dict], total_rows: int, scale: float, load: tuple, minutes: float,
           layout: str = "by month of `l_shipdate` (85 partitions)", flags: str = "") -> str:
    by = fastest(results)
    wrong = [f"{r['query']} {r['mode']} round {r['round']}" for r in results
             if r["answer"] != by[(r["query"], "copy", True)]["answer"]]
    rounds = max(r["round"] for r in results)
    lines = [f"# Join-induced pruning on TPC-H SF {scale:g}: lineitem scans of whole join queries", "",
             f"Reproduce: `.venv/bin/python -m benchmarks.tpch_joins --scale {scale:g} --rounds {rounds}{flags}` "
             f"({minutes:.0f} min; "
             f"load average {load[0]:.1f} at the start, {load[1]:.1f} at the end; each wall time is the fastest of "
             f"{rounds} rounds, the set-ups' order rotated from round to round and query to query). lineitem: "
             f"{total_rows:,} rows, laid out {layout}.", "",
             "Rows, partitions and files are Spark's scan metrics of every lineitem scan of the query (Q21 has "
             "three), not estimates. `layout` prunes by the query's own lineitem predicates, `+joins` also "
             "through its inner joins by the per-partition ranges recorded at apply. DPP/bloom: Spark's dynamic "
             "partition pruning and runtime bloom filters (both on by default; `off` sets both to false).", "",
             f"Wrong answers (every run's count and checksum of its rows compared with the plain copy's): {len(wrong)}"
             + (f" ({', '.join(wrong)})" if wrong else ""), "",
             "| query | rows copy | rows layout | rows layout+joins | % of table | partitions layout → +joins "
             "| wall copy s (DPP/bloom on / off) | wall layout s | wall +joins s (on / off) | of which rewrite s |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    sums: dict = {}
    rewrite = 0.0
    for q in dict.fromkeys(r["query"] for r in results):
        if any((q, m, o) not in by for m, o in RUNS):
            continue
        c, c0, l, j, j0 = (by[(q, m, o)] for m, o in RUNS)
        for key, r in zip(RUNS, (c, c0, l, j, j0)):
            sums[key] = sums.get(key, 0.0) + r["wall"]
        lines.append(f"| {q} | {c['li_rows']:,} | {l['li_rows']:,} | {j['li_rows']:,} | "
                     f"{100 * j['li_rows'] / (total_rows * max(c['li_scans'], 1)):.0f} % | "
                     f"{l['li_parts']} → {j['li_parts']} | {c['wall']:.1f} / {c0['wall']:.1f} | {l['wall']:.1f} | "
                     f"{j['wall']:.1f} / {j0['wall']:.1f} | {j.get('planned', float('nan')):.2f} |")
        rewrite += j.get("planned", float("nan"))
    if sums:
        c, c0, l, j, j0 = (sums[k] for k in RUNS)
        lines += ["", f"Sum of wall times: copy {c:.1f} s (DPP/bloom off: {c0:.1f} s), layout {l:.1f} s, "
                  f"layout+joins {j:.1f} s (off: {j0:.1f} s): layout+joins is {c / j:.2f}× the copy's speed, "
                  f"the layout alone {c / l:.2f}×. Of layout+joins' time, the planner's rewrite (reading each "
                  f"table's layout and columns, the joined tables' snapshots, sqlglot) took {rewrite:.1f} s."]
        queries = dict.fromkeys(r["query"] for r in results)
        o_copy = sum(by.get((q, "copy", True), {}).get("o_rows", 0) for q in queries)
        o_joins = sum(by.get((q, "layout+joins", True), {}).get("o_rows", 0) for q in queries)
        lines += ["", f"Rows the orders scans read (Spark's scan metrics), all queries: copy {o_copy:,}, "
                  f"layout+joins {o_joins:,}."]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.tpch_joins", description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--state-dir", default=str(ROOT / ".planner" / "bench-joins"))
    ap.add_argument("--seed", type=int, default=131, help="seed of the held-out query parameters")
    ap.add_argument("--per-template", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=3, help="rounds of every query in every set-up (the set-ups' "
                    "order rotated); each wall time is the fastest")
    ap.add_argument("--only", nargs="*", default=None, help="templates to run (q05 q08 q21 q03 q04 q10)")
    ap.add_argument("--out", default=str(RESULTS))
    ap.add_argument("--layout", choices=("advised", "month", "held", "sideways"), default="advised",
                    help="lineitem's layout: what advise picks (default), the hand-built month ranges, or the "
                         "layout it holds from an earlier run (with its join ranges; no advise, no apply)")
    ap.add_argument("--with-orders", action="store_true",
                    help="also lay out orders as advise picks on the same workload, in a database of its own "
                         "(bench_joins_orders; lineitem as it is laid out in bench_joins): the copy then reads "
                         "both tables as loaded")
    ap.add_argument("--setup-only", action="store_true", help="advise and apply, then stop")
    args = ap.parse_args(argv)
    started, load0 = time.monotonic(), load_average()
    state = Path(args.state_dir) / f"sf{args.scale:g}"
    spark = build_spark_session(state / "spark", app_name="tpch-joins", conf=session_conf(args.scale))
    db = "bench_joins" + ("_sideways" if args.layout == "sideways" else "")
    log = lambda m: print(m, flush=True)  # noqa: E731
    described = setup(spark, args.scale, state / "data", db, log, args.layout, state)
    laid_out = ("lineitem",)
    if args.with_orders:
        setup(spark, args.scale, state / "data", db + "_orders", log, "held", state, laid_out=False)
        described = setup_orders(spark, db + "_orders", db, state, log)
        db, laid_out = db + "_orders", ("lineitem", "orders")
    log(f"lineitem: {described}")
    if args.setup_only:
        spark.stop()
        return 0
    spark.catalog.setCurrentDatabase(db)
    total = spark.sql(f"SELECT count(*) FROM {db}.lineitem_copy").collect()[0][0]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    name = f"tpch_joins_sf{args.scale:g}" + ("_orders" if args.with_orders else "") + \
        ("_sideways" if args.layout == "sideways" else "")

    def write(results: list[dict]) -> str:
        text = report(results, total, args.scale, (load0, load_average()), (time.monotonic() - started) / 60,
                      {"advised": f"as advised: {described}", "held": f"as advised by an earlier run: {described}",
                       "month": "by month of `l_shipdate` (85 partitions, hand-built)",
                       "sideways": f"as advised, each partition split by the supplier's region: {described}"
                       }[args.layout],
                      (f" --layout {args.layout}" if args.layout != "advised" else "")
                      + (" --with-orders" if args.with_orders else ""))
        write_result(name, text, results, out)
        return text

    queries = [q for q in held_out_queries(args.seed, args.per_template) if not args.only or q[0] in args.only]
    print(write(run(spark, db, queries, log, write, args.rounds, laid_out)))
    spark.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

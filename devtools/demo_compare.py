"""The second half of ``./dev run``: apply the advice, explain, and run queries before and after.

Every figure printed is measured by Spark (its scan metrics: partitions, files, bytes and rows
read) on the table before (the ``<t>__before_<stamp>`` copy of the original table that ``apply``
keeps) and after (the laid-out table, queried through ``planner.sql``); results must be identical.
The partitions column is what Spark listed and read, out of all the table's partitions: the
pruning itself, not only the row groups Parquet skipped inside the files it opened.
"""
from __future__ import annotations

import statistics
import time
from pathlib import Path

import sqlglot
from sqlglot import exp

from hive_integration.apply.apply_layout import SparkRunner, apply_layout
from hive_integration.metastore.layouts import SparkCatalogLayouts
from hive_integration.metastore.layouts import sql as planner_sql
from hive_integration.spark.metrics import collect_scan_metrics, scans_kept
from planner.cli.apply import read_layout
from planner.model.layout import Layout
from planner.rewrite.query_rewrite import explain_query
from planner.workload.reader import read_workload

ROOT = Path(__file__).resolve().parent.parent
DEMO_QUERIES = 8


def single_table_queries(workload_path: str, table: str, layout: Layout | None = None,
                         limit: int = DEMO_QUERIES) -> list[tuple[str, str]]:
    """(label, sql) of queries on ``table`` alone: the first query of each template that reads only
    it, and the part of a join query that reads it (its own filters, ``… (lineitem part)``), since
    the demo loads no other table. With a layout, those that skip the most partitions come first
    (the run shows pruning at work), then the others (it shows what is not pruned as well)."""
    short = table.split(".")[-1]
    out, seen = [], set()
    for path in (workload_path, ROOT / "sql" / "q6_variants.sql"):
        for q in read_workload(path).queries:
            if q.template in seen:
                continue
            tree = sqlglot.parse_one(q.sql, read="hive")
            names = {t.name.lower() for t in tree.find_all(exp.Table)}
            if names == {short}:
                seen.add(q.template)
                out.append((q.template, q.sql))
            elif short in names and layout is not None:
                part = _own_filters(tree, short)
                if part is not None:
                    seen.add(q.template)
                    out.append((f"{q.template} ({short} part)", part))
    if layout is not None:
        def share_read(item) -> float:
            scans = explain_query(item[1], {short: layout})
            return min((len(s.partitions_read) / s.partitions_total for s in scans), default=1.0)

        pruned = sorted((q for q in out if share_read(q) < 1.0), key=share_read)[:limit - limit // 4]
        out = pruned + [q for q in out if q not in pruned]
    return out[:limit]


def _own_filters(tree: exp.Expression, table: str) -> str | None:
    """``SELECT count(*) FROM table WHERE <the outer query's conditions on table's columns alone>``
    (columns named ``l_…`` for lineitem, as TPC-H names them), or None when there are none."""
    select = tree if isinstance(tree, exp.Select) else tree.find(exp.Select)
    where = select.args.get("where") if select is not None else None
    if where is None:
        return None
    prefix = table[:1] + "_"
    own = [c for c in where.this.flatten() if not c.find(exp.Select, exp.Subquery) and (cols := list(
        c.find_all(exp.Column))) and all(col.name.lower().startswith(prefix) for col in cols)]
    if not own:
        return None
    conditions = [c.copy() for c in own]
    for c in conditions:
        for col in c.find_all(exp.Column):
            col.set("table", None)  # the join's alias (l1) is not there any more
    query = exp.select(exp.Count(this=exp.Star())).from_(table).where(exp.and_(*conditions))
    return query.sql(dialect="hive")


def with_table(sql: str, old: str, new: str) -> str:
    """``sql`` reading table ``new`` wherever it read ``old`` (sqlglot tree, not text)."""
    db, _, name = new.rpartition(".")

    def swap(node):
        if isinstance(node, exp.Table) and node.name.lower() == old.split(".")[-1]:
            node = node.copy()
            if not node.alias:  # column references may be qualified with the old name
                node.set("alias", exp.TableAlias(this=exp.to_identifier(node.name)))
            node.set("this", exp.to_identifier(name))
            node.set("db", exp.to_identifier(db) if db else None)
        return node

    return sqlglot.parse_one(sql, read="hive").transform(swap).sql(dialect="spark")


def measure(spark, run, runs: int = 3) -> dict:
    """Scan metrics of one run, and the median wall time of ``runs`` warm runs."""
    with scans_kept(spark):
        df = run()
        rows = df.collect()
        metrics = collect_scan_metrics(df)
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        run().collect()
        times.append(time.perf_counter() - t)
    return {"result": sorted(map(tuple, rows), key=repr), "rows": sum(m.rows for m in metrics),
            "bytes": sum(m.bytes for m in metrics), "files": sum(m.files for m in metrics),
            "partitions": sum(m.partitions or 0 for m in metrics), "seconds": statistics.median(times)}


def current_layout(spark, table: str) -> Layout | None:
    found = SparkCatalogLayouts(spark).lookup(*table.split("."))
    return None if found is None else found.layout


def apply_and_compare(spark, advice_dir: Path | None, table: str, workload_path: str) -> int:
    """Apply the advice in ``advice_dir`` (None: keep the layout the table has), then compare."""
    db = table.split(".")[0]
    if advice_dir is not None:
        layout = read_layout(advice_dir)
        previous = current_layout(spark, table)
        if previous is not None and previous == layout:
            print(f"  {table} already has this layout: not re-applied")
        else:
            # a re-layout drops the intermediate copy: the one "before" kept is the original table
            report = apply_layout(SparkRunner(spark), layout, progress=lambda m: print("  " + m, flush=True),
                                  drop_old=previous is not None)
            print("  " + report.text().replace("\n", "\n  "))
    layout = current_layout(spark, table)
    before = _original(spark, table)
    if layout is None or before is None:
        print("  (no copy of the table from before the layout is left: nothing to compare)")
        return 0
    queries = single_table_queries(workload_path, table, layout)
    spark.catalog.setCurrentDatabase(db)
    total_parts = spark.sql(f"SHOW PARTITIONS {table}").count()  # the ones that hold rows
    print(f"\n  {len(queries)} queries run before (on {before}) and after (on the laid-out {table}), "
          f"measured by Spark; the table has {total_parts} partitions")
    print(f"  {'query':<30}{'partitions read':>16}{'rows read before':>18}{'after':>12}{'x less':>8}"
          f"{'s before':>10}{'s after':>9}  same result")
    totals = [0, 0, 0.0, 0.0]
    mismatches = 0
    try:
        for template, sql in queries:
            old = measure(spark, lambda: spark.sql(with_table(sql, table, before)))
            new = measure(spark, lambda: planner_sql(spark, sql, dialect="hive"))
            same = old["result"] == new["result"]
            mismatches += not same
            print(f"  {template[:29]:<30}{new['partitions']:>9} of {total_parts:<4}{old['rows']:>18,}{new['rows']:>12,}"
                  f"{old['rows'] / max(new['rows'], 1):>8.1f}{old['seconds']:>10.2f}{new['seconds']:>9.2f}"
                  f"  {'yes' if same else 'NO'}")
            totals = [totals[0] + old["rows"], totals[1] + new["rows"], totals[2] + old["seconds"],
                      totals[3] + new["seconds"]]
    finally:
        spark.catalog.setCurrentDatabase("default")
    print(f"  {'total':<30}{'':>16}{totals[0]:>18,}{totals[1]:>12,}{totals[0] / max(totals[1], 1):>8.1f}"
          f"{totals[2]:>10.2f}{totals[3]:>9.2f}")
    if mismatches:
        print(f"  {mismatches} queries returned different results: please report this as a bug")
        return 1
    return 0


def _original(spark, table: str) -> str | None:
    """The kept copy of the table as it was before any layout (the oldest unpartitioned backup)."""
    db, name = table.split(".")
    backups = sorted(r.tableName for r in spark.sql(f"SHOW TABLES IN {db}").collect()
                     if r.tableName.startswith(f"{name}__before_"))
    for b in backups:
        if current_layout(spark, f"{db}.{b}") is None:
            return f"{db}.{b}"
    return None

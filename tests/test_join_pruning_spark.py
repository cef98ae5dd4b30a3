"""Join-induced pruning end to end on real Spark (TPC-H SF 0.01, every table).

lineitem is laid out by quarter of ``l_shipdate``; apply records the per-partition ranges of the
joined columns the TPC-H queries filter (``o_orderdate``, ``o_orderstatus``, ``r_name``, …).
Every query returns exactly what it returns without the rewrite, the lineitem scans of Q5, Q8,
Q21, Q3, Q4 and Q10 read fewer partitions by Spark's own scan metrics, and a change to a joined
table (or to lineitem) turns join pruning off until the ranges are refreshed.
"""
from __future__ import annotations

import datetime as dt
import re

import pytest

from devtools.tpch_data import generate_table, load_table
from devtools.workload_gen.tpch import golden_query
from hive_integration.spark import join_ranges
from hive_integration.apply.apply_layout import SparkRunner, apply_layout
from hive_integration.metastore.layouts import sql as planner_sql
from hive_integration.spark.metrics import collect_scan_metrics, scans_kept
from planner.analysis.table_analysis import analyze_table
from planner.cnf.valueset import ValueSet
from planner.model.layout import Layout, Partition, with_generation
from planner.pruning.join_pruning import join_columns_of, with_join_columns
from planner.semantics.kinds import Kind
from planner.workload import parse_workload
from planner.workload.scans import schema_from_ddl
from tests.test_joins import ROOT

TABLES = ("lineitem", "orders", "customer", "nation", "region", "supplier", "part")
QUERIES = ("q03", "q04", "q05", "q08", "q10", "q21")
DB = "joinprune"


def quarter_layout(table: str) -> Layout:
    parts, i = [], 1
    for year in range(1992, 1999):
        for month in (1, 4, 7, 10):
            lo = dt.date(year, month, 1)
            hi = dt.date(year + (month == 10), 1 if month == 10 else month + 3, 1)
            parts.append(Partition(i, (("l_shipdate", ValueSet.of(Kind.DATE, [
                ValueSet.range(Kind.DATE, lo, hi, True, False).intervals[0]])),)))
            i += 1
    rest = ValueSet.range(Kind.DATE, dt.date(1992, 1, 1), dt.date(1999, 1, 1), True, False).complement()
    parts.append(Partition(i, (("l_shipdate", rest),)))
    return with_generation(Layout(table, "quarters", tuple(parts), kinds=(("l_shipdate", Kind.DATE),),
                                  types=(("l_shipdate", "date"),)))


def _no_limit(sql: str) -> str:
    return re.sub(r"\blimit\s+\d+\s*$", "", sql.strip(), flags=re.I)


def load_tpch(spark, out, db: str, queries):
    """Every TPC-H table at SF 0.01 in ``db``; the analysis of lineitem under ``queries``' golden SQL."""
    spark.sql(f"CREATE DATABASE IF NOT EXISTS {db}")
    for t in TABLES:
        load_table(spark, generate_table(0.01, out, t), f"{db}.{t}", row_group_bytes=64 * 1024)
    schema = schema_from_ddl((ROOT / "sql" / "tpch_schema.sql").read_text())
    text = ";\n".join(golden_query(q) for q in queries) + ";\n"
    wl = parse_workload(text, schema=schema, database=db, tables=[f"{db}.lineitem"])
    return analyze_table(wl, f"{db}.lineitem", schema.columns("lineitem"))


@pytest.fixture(scope="module")
def tpch_db(spark, tmp_path_factory):
    analysis = load_tpch(spark, tmp_path_factory.mktemp("tpch_all"), DB, QUERIES)
    layout = with_join_columns(quarter_layout(f"{DB}.lineitem"), analysis.join_columns())
    apply_layout(SparkRunner(spark), layout, drop_old=True)
    previous = spark.catalog.currentDatabase()
    spark.catalog.setCurrentDatabase(DB)
    yield DB
    spark.catalog.setCurrentDatabase(previous)
    spark.sql(f"DROP DATABASE IF EXISTS {DB} CASCADE")


def _lineitem_partitions(spark, sql: str, *, prune: bool) -> tuple[list, list[int]]:
    with scans_kept(spark):
        df = planner_sql(spark, sql) if prune else spark.sql(sql)
        rows = df.collect()
        parts = [m.partitions for m in collect_scan_metrics(df) if m.table.endswith(".lineitem")]
    return sorted(map(tuple, rows)), parts


def test_apply_records_join_ranges(spark, tpch_db):
    ranges = join_ranges.load(spark, f"{DB}.lineitem")
    assert ranges is not None
    got = {r.column.describe() for r in ranges.columns}
    assert f"{DB}.orders(o_orderkey = l_orderkey).o_orderdate" in got
    assert any(d.endswith(".r_name") for d in got)
    assert not any("customer(c_nationkey = s_nationkey)" in d for d in got)  # fans out: not recorded
    assert join_columns_of(_stored_layout(spark))  # advise's join columns travel with the layout


def test_sample_join_prices_what_spark_reads(spark, tpch_db):
    """The sample joined to the other tables carries each sampled row's joined values; with the whole
    table as the sample, the cost model's partitions per query are Spark's own (join pruning included)."""
    from hive_integration.spark.join_sample import with_joined_columns
    from hive_integration.spark.statistics_pass import gather_stats
    from planner.costmodel.cost import CostModel
    from planner.costmodel.joined import joined_attribute

    schema = schema_from_ddl((ROOT / "sql" / "tpch_schema.sql").read_text())
    wl = parse_workload(";\n".join(_no_limit(golden_query(q)) for q in QUERIES) + ";\n", schema=schema,
                        database=DB, tables=[f"{DB}.lineitem"])
    analysis = analyze_table(wl, f"{DB}.lineitem", schema.columns("lineitem"))
    stats = gather_stats(spark, f"{DB}.lineitem", sample_rows=1_000_000)
    stats = with_joined_columns(spark, stats, analysis.join_columns())
    dates = next(c for c in analysis.join_columns() if c.describe().endswith("o_orderkey = l_orderkey).o_orderdate"))
    assert (joined_attribute(dates), "date") in stats.joined
    assert not any("c_nationkey = s_nationkey" in name for name, _ in stats.joined)  # fans out: not sampled
    orders = dict(spark.sql(f"SELECT o_orderkey, o_orderdate FROM {DB}.orders").collect())
    sample = stats.sample.to_pydict()
    assert sample[joined_attribute(dates)] == [orders.get(k) for k in sample["l_orderkey"]]
    cost = CostModel(analysis, stats).evaluate(_stored_layout(spark))
    for i, q in enumerate(QUERIES):
        _, parts = _lineitem_partitions(spark, _no_limit(golden_query(q)), prune=True)
        assert sum(s.partitions for s in cost.per_scan if s.query == i) == sum(parts), q


@pytest.mark.parametrize("q", QUERIES)
def test_join_queries_same_answer_fewer_partitions(spark, tpch_db, q):
    sql = _no_limit(golden_query(q))
    want, full = _lineitem_partitions(spark, sql, prune=False)
    got, pruned = _lineitem_partitions(spark, sql, prune=True)
    assert got == want
    assert pruned and full
    assert sum(pruned) < sum(full), (q, pruned, full)


def test_a_query_reads_each_tables_catalog_entry_once_and_runs_no_statement_of_its_own(spark, tpch_db, monkeypatch):
    # the layout look-up, the joined tables' columns and their snapshots share one catalog entry per
    # table, read from the session catalog (the query's tables together): no SHOW TBLPROPERTIES or
    # DESCRIBE goes through Spark SQL. The session's cache is emptied first: a cached query reads no
    # entry at all (tests/test_catalog_cache_spark.py)
    import hive_integration.spark.catalog as catalog
    from hive_integration.spark.catalog_cache import session_cache

    session_cache(spark).forget()

    statements, entries = [], []
    real_sql, real_entry = spark.sql, catalog._entry

    def counting_sql(text, *args, **kwargs):
        statements.append(text)
        return real_sql(text, *args, **kwargs)

    def counting_entry(jvm, table, raw):
        entries.append(table)
        return real_entry(jvm, table, raw)

    sql = _no_limit(golden_query("q05"))
    want, full = _lineitem_partitions(spark, sql, prune=False)
    monkeypatch.setattr(spark, "sql", counting_sql)
    monkeypatch.setattr(catalog, "_entry", counting_entry)
    got, parts = _lineitem_partitions(spark, sql, prune=True)
    monkeypatch.undo()
    assert got == want and sum(parts) < sum(full)
    assert len(statements) == 1, statements  # the query itself
    assert sorted(entries) == sorted({f"{DB}.{t}" for t in ("lineitem", "orders", "customer", "supplier", "nation",
                                                            "region")}), entries


def test_a_changed_joined_table_turns_join_pruning_off_until_refreshed(spark, tpch_db):
    sql = _no_limit(golden_query("q05"))
    want, full = _lineitem_partitions(spark, sql, prune=False)
    spark.sql(f"INSERT INTO {DB}.orders SELECT o_orderkey + 100000000, o_custkey, o_orderstatus, o_totalprice, "
              f"o_orderdate, o_orderpriority, o_clerk, o_shippriority, o_comment FROM {DB}.orders LIMIT 5")
    got, parts = _lineitem_partitions(spark, sql, prune=True)
    assert got == want and sum(parts) == sum(full)
    join_ranges.refresh(spark, _stored_layout(spark))
    got, parts = _lineitem_partitions(spark, sql, prune=True)
    assert got == want and sum(parts) < sum(full)


def test_new_lineitem_rows_turn_join_pruning_off_until_refreshed(spark, tpch_db):
    sql = _no_limit(golden_query("q08"))
    spark.sql(f"INSERT INTO {DB}.lineitem SELECT * FROM {DB}.lineitem WHERE l_orderkey < 40")
    want, full = _lineitem_partitions(spark, sql, prune=False)
    got, parts = _lineitem_partitions(spark, sql, prune=True)
    assert got == want and sum(parts) == sum(full)
    join_ranges.refresh(spark, _stored_layout(spark))
    got, parts = _lineitem_partitions(spark, sql, prune=True)
    assert got == want and sum(parts) < sum(full)


def _stored_layout(spark) -> Layout:
    from planner.emit.ddl import layout_from_properties

    return layout_from_properties({r[0]: r[1] for r in spark.sql(f"SHOW TBLPROPERTIES {DB}.lineitem").collect()})


def test_a_temporary_view_that_shadows_a_laid_out_or_joined_table_is_read_whole(spark, tpch_db):
    # Spark reads an unqualified name as the session's temporary view of that name, if there is
    # one, not as the table of the current database: neither the table's layout nor the ranges
    # recorded from a joined table say anything about the view's rows
    own = "SELECT count(*) FROM lineitem WHERE l_shipdate > DATE '1998-12-31'"
    joined = ("SELECT count(*) FROM lineitem, orders WHERE l_orderkey = o_orderkey "
              "AND o_orderdate > DATE '1998-12-31'")
    try:
        spark.sql(f"CREATE TEMP VIEW lineitem AS SELECT l_orderkey, date_add(l_shipdate, 400) AS l_shipdate, "
                  f"planner_pid FROM {DB}.lineitem")
        assert planner_sql(spark, own).collect() == spark.sql(own).collect() != [(0,)]
        spark.catalog.dropTempView("lineitem")
        spark.sql(f"CREATE TEMP VIEW orders AS SELECT o_orderkey, date_add(o_orderdate, 400) AS o_orderdate "
                  f"FROM {DB}.orders")
        assert planner_sql(spark, joined).collect() == spark.sql(joined).collect() != [(0,)]
    finally:
        spark.catalog.dropTempView("lineitem")
        spark.catalog.dropTempView("orders")


def _chained_ranges_query(table: str, partition_column: str, columns, small):
    """The ranges query as one chain of LEFT JOINs from the laid-out table (how it was first written):
    the reference the nested form must agree with."""
    from sqlglot import exp

    from planner.emit.join_sql import chained, join_chain, qualified_column, table_ref

    aliases, joins = join_chain([c for c, _ in columns])
    q = exp.select(qualified_column("t", partition_column).as_("pid"))
    for i, (c, _) in enumerate(columns):
        end = aliases[c.path.hops]
        value, key = qualified_column(end, c.column), qualified_column(end, c.path.hops[-1].key)
        null_seen = exp.Case(ifs=[exp.If(this=exp.and_(exp.Not(this=exp.Is(this=key, expression=exp.Null())),
                                                             exp.Is(this=value.copy(), expression=exp.Null())),
                                         true=exp.Literal.number(1))], default=exp.Literal.number(0))
        q = q.select(exp.Min(this=value.copy()).as_(f"c{i}_min"), exp.Max(this=value.copy()).as_(f"c{i}_max"),
                     exp.Max(this=null_seen).as_(f"c{i}_null"), copy=False)
        if small.get(c):
            q = q.select(exp.Anonymous(this="sort_array", expressions=[
                exp.Anonymous(this="collect_set", expressions=[value.copy()])]).as_(f"c{i}_set"), copy=False)
    return chained(q, table_ref(table), joins).group_by(qualified_column("t", partition_column), copy=False)


@pytest.mark.parametrize("broadcast", [False, True])
def test_the_ranges_query_joins_each_first_hop_once_and_agrees_with_the_plain_chain(spark, tpch_db, broadcast):
    layout = _stored_layout(spark)
    usable = join_ranges.usable_columns(spark, layout.table, join_columns_of(layout))
    assert len({c.path.hops[0] for c, _ in usable}) >= 2  # more than one first hop (orders, supplier, …)
    small = {c: t == "string" for c, t in usable}
    firsts = {c.path.hops[0].table for c, _ in usable} if broadcast else set()
    nested = join_ranges.ranges_query(layout.table, layout.partition_column, usable, small, firsts)
    plain = _chained_ranges_query(layout.table, layout.partition_column, usable, small)

    def by_pid(q):
        out = {}
        for r in spark.sql(q.sql(dialect="spark")).collect():
            d = r.asDict()
            out[d.pop("pid")] = {k: sorted(v, key=repr) if isinstance(v, list) else v for k, v in d.items()}
        return out

    assert by_pid(nested) == by_pid(plain)

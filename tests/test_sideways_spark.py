"""Sideways cuts on real Spark (TPC-H SF 0.01): lineitem cut by its supplier's nation.

lineitem is laid out by halves of ``l_shipdate`` times five groups of supplier nations, the nation
computed at apply through ``supplier`` and ``nation``. Every row lands with its supplier's nation;
queries filtered by nation (Q5, Q7, Q21) return what they return without the rewrite and read
fewer partitions by Spark's scan metrics; an append places its rows by nation the same way; and a
join key that stopped being unique stops apply before it writes anything.
"""
from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from devtools.workload_gen.tpch import golden_query
from hive_integration.apply.apply_layout import ApplyError, SparkRunner, apply_layout
from planner.cnf.valueset import ValueSet
from planner.costmodel.joined import joined_attribute
from planner.emit.ddl import layout_from_properties
from planner.model.layout import Layout, Partition, with_generation
from planner.pruning.join_pruning import with_join_columns
from planner.semantics.kinds import Kind
from tests.test_e2e import invoke
from tests.test_join_pruning_spark import _lineitem_partitions, _no_limit, load_tpch

QUERIES = ("q05", "q07", "q21")
DB = "sideways"
NATIONS = ("ALGERIA", "ARGENTINA", "BRAZIL", "CANADA", "CHINA", "EGYPT", "ETHIOPIA", "FRANCE", "GERMANY", "INDIA",
           "INDONESIA", "IRAN", "IRAQ", "JAPAN", "JORDAN", "KENYA", "MOROCCO", "MOZAMBIQUE", "PERU", "ROMANIA",
           "RUSSIA", "SAUDI ARABIA", "UNITED KINGDOM", "UNITED STATES", "VIETNAM")


def nation_layout(table: str, column) -> Layout:
    a = joined_attribute(column)
    groups = [ValueSet.points(Kind.STRING, NATIONS[i::5]) for i in range(5)]
    groups[-1] = groups[-1].union(ValueSet.union_all(Kind.STRING, groups).complement())  # any other name, NULL
    half = ValueSet.range(Kind.DATE, dt.date(1995, 6, 17), None, True, False)
    parts = tuple(Partition(i, (("l_shipdate", d), (a, g)))
                  for i, (d, g) in enumerate(((d, g) for d in (half.complement(), half) for g in groups), 1))
    return with_generation(Layout(table, "shipdate x supplier nation", parts,
                                  kinds=(("l_shipdate", Kind.DATE), (a, Kind.STRING)),
                                  types=(("l_shipdate", "date"),), joined=((a, column),)))


@pytest.fixture(scope="module")
def sideways_db(spark, tmp_path_factory):
    analysis = load_tpch(spark, tmp_path_factory.mktemp("tpch_sideways"), DB, QUERIES)
    spark.sql(f"CREATE TABLE {DB}.lineitem_plain STORED AS PARQUET AS SELECT * FROM {DB}.lineitem")
    nation = next(c for c in analysis.join_columns()
                  if c.column == "n_name" and [h.table for h in c.path.hops] == [f"{DB}.supplier", f"{DB}.nation"])
    layout = with_join_columns(nation_layout(f"{DB}.lineitem", nation), analysis.join_columns())
    apply_layout(SparkRunner(spark), layout, drop_old=True)
    previous = spark.catalog.currentDatabase()
    spark.catalog.setCurrentDatabase(DB)
    yield nation
    spark.catalog.setCurrentDatabase(previous)
    spark.sql(f"DROP DATABASE IF EXISTS {DB} CASCADE")


def _stored(spark) -> Layout:
    props = {r[0]: r[1] for r in spark.sql(f"SHOW TBLPROPERTIES {DB}.lineitem").collect()}
    return layout_from_properties(props)


def _misplaced(spark, layout: Layout) -> list:
    """(partition, supplier nations of its rows) where a nation is not in the partition's group."""
    a = next(a for a, _ in layout.joined)
    rows = spark.sql(f"""SELECT l.planner_pid, collect_set(n.n_name), count(*) FROM {DB}.lineitem l
        LEFT JOIN {DB}.supplier s ON l.l_suppkey = s.s_suppkey LEFT JOIN {DB}.nation n ON s.s_nationkey = n.n_nationkey
        GROUP BY l.planner_pid""").collect()
    groups = {p.id: p.conditions[a] for p in layout.partitions}
    assert sum(r[2] for r in rows) == spark.table(f"{DB}.lineitem_plain").count() + _appended(spark)
    return [(pid, names) for pid, names, _ in rows if not all(groups[pid].contains(x) for x in names)]


def _appended(spark) -> int:
    return spark.sql(f"SELECT count(*) FROM {DB}.lineitem WHERE l_comment = 'appended'").collect()[0][0]


def test_every_row_lands_with_its_suppliers_nation(spark, sideways_db):
    layout = _stored(spark)
    assert layout.joined == ((joined_attribute(sideways_db), sideways_db),)
    assert _misplaced(spark, layout) == []
    assert "planner_join_1" not in spark.table(f"{DB}.lineitem").columns


@pytest.mark.parametrize("q", QUERIES)
def test_queries_filtered_by_nation_same_answer_fewer_partitions(spark, sideways_db, q):
    sql = _no_limit(golden_query(q))
    want, full = _lineitem_partitions(spark, sql, prune=False)
    got, pruned = _lineitem_partitions(spark, sql, prune=True)
    assert got == want
    assert sum(pruned) < sum(full), (q, pruned, full)
    if q == "q21":  # the supplier's scan reads one nation group of its shipped half or both halves
        assert min(pruned) <= 2, pruned


def test_an_append_places_its_rows_by_nation(spark, sideways_db):
    batch = f"{DB}.batch"
    spark.sql(f"CREATE TABLE {batch} STORED AS PARQUET AS SELECT l_orderkey, l_partkey, l_suppkey, l_linenumber, "
              "l_quantity, l_extendedprice, l_discount, l_tax, l_returnflag, l_linestatus, l_shipdate, l_commitdate, "
              f"l_receiptdate, l_shipinstruct, l_shipmode, 'appended' AS l_comment FROM {DB}.lineitem_plain "
              "WHERE l_orderkey % 97 = 0")
    n = spark.table(batch).count()
    state = ["--state-dir", str(Path(spark.conf.get("spark.sql.warehouse.dir").removeprefix("file:")).parent)]
    assert "LEFT JOIN" in invoke("append", batch, "--into", f"{DB}.lineitem", "--print-sql", *state)
    assert f"appended {n:,} rows" in invoke("append", batch, "--into", f"{DB}.lineitem", *state)
    assert _appended(spark) == n
    assert _misplaced(spark, _stored(spark)) == []


def test_a_join_key_that_is_no_longer_unique_stops_apply_before_it_writes(spark, sideways_db):
    spark.sql(f"CREATE TABLE {DB}.supplier2 STORED AS PARQUET AS SELECT * FROM {DB}.supplier "
              f"UNION ALL SELECT * FROM {DB}.supplier WHERE s_suppkey = 1")
    spark.sql(f"CREATE TABLE {DB}.copy STORED AS PARQUET AS SELECT * FROM {DB}.lineitem_plain")
    hops = sideways_db.path.hops
    column = type(sideways_db)(type(sideways_db.path)((type(hops[0])(hops[0].column, f"{DB}.supplier2", hops[0].key),
                                                       hops[1])), sideways_db.column)
    before = spark.table(f"{DB}.copy").count()
    with pytest.raises(ApplyError, match="no longer unique"):
        apply_layout(SparkRunner(spark), nation_layout(f"{DB}.copy", column), drop_old=True)
    assert spark.table(f"{DB}.copy").count() == before
    assert "planner_pid" not in spark.table(f"{DB}.copy").columns

"""``planner.sql``'s cache of catalog entries and file snapshots on real Spark: a cached query asks
the metastore nothing and lists the tables' files in one call, and it never serves a stale layout
or stale join ranges: after an apply, an append, a re-layout or an INSERT into a joined table,
made here or (files only, no hook) by another process, the next query sees the change."""
from __future__ import annotations

import shutil
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from click.testing import CliRunner

import hive_integration.apply.apply_layout as apply_module
import hive_integration.apply.relayout as relayout_module
import hive_integration.spark.catalog as catalog
import hive_integration.spark.catalog_cache as catalog_cache
import hive_integration.spark.join_ranges as join_ranges_module
from devtools.workload_gen.tpch import golden_query
from hive_integration.apply.apply_layout import SparkRunner, apply_layout
from hive_integration.metastore.layouts import rewrite
from hive_integration.metastore.layouts import sql as planner_sql
from hive_integration.spark import join_ranges
from hive_integration.spark.catalog_cache import session_cache
from hive_integration.spark.metrics import collect_scan_metrics, scans_kept
from planner.cli.main import cli
from planner.cnf.valueset import ValueSet
from planner.emit.ddl import layout_from_properties
from planner.model.layout import Layout, Partition, with_generation
from planner.pruning.join_pruning import with_join_columns
from planner.semantics.kinds import Kind
from tests.test_join_pruning_spark import _no_limit, load_tpch, quarter_layout

DB = "cachejoin"
Q05 = _no_limit(golden_query("q05"))


@pytest.fixture(scope="module")
def tpch_db(spark, tmp_path_factory):
    analysis = load_tpch(spark, tmp_path_factory.mktemp("tpch_cache"), DB, ("q05", "q08"))
    apply_layout(SparkRunner(spark), with_join_columns(quarter_layout(f"{DB}.lineitem"), analysis.join_columns()),
                 drop_old=True)
    previous = spark.catalog.currentDatabase()
    spark.catalog.setCurrentDatabase(DB)
    yield analysis
    spark.catalog.setCurrentDatabase(previous)
    spark.sql(f"DROP DATABASE IF EXISTS {DB} CASCADE")


@pytest.fixture
def no_hooks(monkeypatch):
    """The planner's own writes do not tell this process's caches: as if another process made them."""
    for module in (apply_module, relayout_module, join_ranges_module):
        monkeypatch.setattr(module, "forget", lambda table=None: None)


def _parts(spark, sql: str, *, prune: bool = True) -> tuple[list, int]:
    with scans_kept(spark):
        df = planner_sql(spark, sql) if prune else spark.sql(sql)
        rows = sorted(map(tuple, df.collect()))
        parts = sum(m.partitions for m in collect_scan_metrics(df) if m.table.endswith(".lineitem"))
    return rows, parts


def _fresh(spark, sql: str) -> str:
    """What a session with nothing cached rewrites ``sql`` to."""
    return rewrite(spark, sql, fresh=True)


def test_a_cached_query_reads_no_catalog_entry_and_lists_every_file_in_one_call(spark, tpch_db, monkeypatch):
    session_cache(spark).forget()
    want, full = _parts(spark, Q05, prune=False)
    got, first = _parts(spark, Q05)
    assert got == want and first < full
    calls = {"entry": 0, "statements": [], "listings": 0, "trees": 0}
    real_entry, real_sql = catalog._entry, spark.sql
    real_statuses, real_tree, real_local = catalog.listed_statuses, catalog.table_tree, catalog_cache.local_statuses

    def count(name, fn):
        def counted(*a, **k):
            calls[name] += 1
            return fn(*a, **k)
        return counted

    monkeypatch.setattr(catalog, "_entry", count("entry", real_entry))
    monkeypatch.setattr(catalog, "listed_statuses", count("listings", real_statuses))  # through Hadoop
    monkeypatch.setattr(catalog_cache, "local_statuses", count("listings", real_local))  # local: by Python
    monkeypatch.setattr(catalog, "table_tree", count("trees", real_tree))
    monkeypatch.setattr(spark, "sql", lambda text, *a, **k: calls["statements"].append(text) or real_sql(text, *a, **k))
    other = Q05.replace("1994-01-01", "1995-01-01")  # a text not seen before: the catalog is cached all the same
    answers = [planner_sql(spark, text).collect() for text in (Q05, other)]
    monkeypatch.undo()
    assert calls["entry"] == 0 and calls["trees"] == 0, calls
    assert calls["listings"] == 2, calls  # one listing call per query, every table's directories in it
    assert len(calls["statements"]) == 2, calls["statements"]  # the queries themselves
    assert [sorted(map(tuple, a)) for a in answers] == [sorted(map(tuple, spark.sql(q).collect())) for q in (Q05, other)]
    assert _parts(spark, Q05) == (got, first)


def test_an_insert_into_a_joined_table_is_seen_by_the_next_query(spark, tpch_db):
    want, full = _parts(spark, Q05, prune=False)
    got, parts = _parts(spark, Q05)
    assert got == want and parts < full  # cached now
    spark.sql(f"INSERT INTO {DB}.orders SELECT o_orderkey + 200000000, o_custkey, o_orderstatus, o_totalprice, "
              f"o_orderdate, o_orderpriority, o_clerk, o_shippriority, o_comment FROM {DB}.orders LIMIT 3")
    got, parts = _parts(spark, Q05)
    assert got == want and parts == full  # the ranges no longer hold: nothing prunes through the joins
    join_ranges.refresh(spark, layout_from_properties(dict(catalog.catalog_entry(spark, f"{DB}.lineitem").properties)))
    got, parts = _parts(spark, Q05)
    assert got == want and parts < full


def test_files_another_process_writes_are_seen_by_the_next_query(spark, tpch_db, no_hooks):
    want, full = _parts(spark, Q05, prune=False)
    assert _parts(spark, Q05)[1] < full
    entry = catalog.catalog_entry(spark, f"{DB}.orders")
    folder = Path(unquote(urlsplit(entry.location).path))
    part = next(p for p in sorted(folder.iterdir()) if p.is_file() and not catalog.spark_skips(p.name))
    copy = folder / ("zz-another-process-" + part.name)
    shutil.copy(part, copy)  # a writer this session knows nothing of: only the files tell
    try:
        assert rewrite(spark, Q05) == _fresh(spark, Q05)
        spark.catalog.refreshTable(f"{DB}.orders")  # Spark's own file index, for the answer
        got, parts = _parts(spark, Q05)
        assert got == _parts(spark, Q05, prune=False)[0] and parts == full  # the ranges no longer hold
    finally:
        copy.unlink()
        spark.catalog.refreshTable(f"{DB}.orders")
    got, parts = _parts(spark, Q05)  # the files the ranges were recorded on, again
    assert got == want and parts < full


def test_an_apply_in_another_process_is_seen_by_the_next_query(spark, tpch_db, no_hooks):
    before = rewrite(spark, Q05)
    halves = _halves(f"{DB}.lineitem")
    apply_layout(SparkRunner(spark), with_join_columns(halves, tpch_db.join_columns()))
    after = rewrite(spark, Q05)
    assert after != before and after == _fresh(spark, Q05)
    want, full = _parts(spark, Q05, prune=False)
    got, parts = _parts(spark, Q05)
    assert got == want and parts <= full


def test_an_append_in_another_process_is_seen_by_the_next_query(spark, tpch_db, no_hooks):
    before = rewrite(spark, Q05)  # pruned through the joins under either layout these tests apply
    assert before != Q05
    columns = [c for c in spark.table(f"{DB}.lineitem").columns if c != "planner_pid"]
    spark.sql(f"CREATE TABLE {DB}.batch STORED AS PARQUET AS SELECT {', '.join(columns)} FROM {DB}.lineitem "
              "WHERE l_orderkey < 40")
    state = str(Path(spark.conf.get("spark.sql.warehouse.dir").removeprefix("file:")).parent)
    done = CliRunner().invoke(cli, ["append", f"{DB}.batch", "--into", f"{DB}.lineitem", "--state-dir", state])
    assert done.exit_code == 0, done.output
    after = rewrite(spark, Q05)
    assert after == _fresh(spark, Q05)
    assert _parts(spark, Q05)[0] == _parts(spark, Q05, prune=False)[0]


def test_a_relayout_in_another_process_is_seen_by_the_next_query(spark, fresh_db, tmp_path, no_hooks):
    from planner.advice.relayout_plan import plan_relayout
    from tests.test_relayout_spark import WINDOW, _laid_out, by_y, quarters

    from hive_integration.apply.relayout import relayout

    t = f"{fresh_db}.events"
    _, model = _laid_out(spark, t, tmp_path, WINDOW)
    query = f"SELECT x, y, s FROM {t} WHERE x < 800 AND y = 7"
    before = rewrite(spark, query)
    relayout(spark, plan_relayout(model, quarters(t), by_y(t)))
    after = rewrite(spark, query)
    assert after != before and after == _fresh(spark, query)
    assert sorted(map(tuple, planner_sql(spark, query).collect())) == sorted(map(tuple, spark.sql(query).collect()))


def test_a_change_only_the_metastore_sees_is_read_within_the_ttl_or_at_once_when_fresh(spark, fresh_db):
    t = f"{fresh_db}.t"
    spark.sql(f"CREATE TABLE {t} (k INT, s STRING) STORED AS PARQUET")
    spark.sql(f"INSERT INTO {t} VALUES (1, 'a'), (50, 'b')")
    r = lambda lo, hi: ValueSet.range(Kind.INTEGER, lo, hi, True, False)  # noqa: E731
    apply_layout(SparkRunner(spark), Layout(t, "halves", (Partition(1, (("k", r(None, 10)),)),
                                                          Partition(2, (("k", r(10, None)),))),
                                            kinds=(("k", Kind.INTEGER),)), drop_old=True)
    assert planner_sql(spark, f"SELECT * FROM {t}").columns == ["k", "s"]
    spark.sql(f"ALTER TABLE {t} ADD COLUMNS (extra INT)")  # the metastore alone changes
    assert planner_sql(spark, f"SELECT * FROM {t}", fresh=True).columns == ["k", "s", "extra"]
    cache = session_cache(spark)
    spark.sql(f"ALTER TABLE {t} ADD COLUMNS (more INT)")
    saved, cache.ttl = cache.ttl, 0.0
    try:
        assert planner_sql(spark, f"SELECT * FROM {t}").columns == ["k", "s", "extra", "more"]
    finally:
        cache.ttl = saved


def test_a_rollback_by_hand_that_no_file_shows_still_runs_the_query(spark, fresh_db, tmp_path):
    """An external table's apply leaves the old files where they were, and a rollback by hand
    (``DROP TABLE``, ``RENAME`` the backup back) changes only the metastore: the cached layout names
    ``planner_pid``, which the old table has not. Spark refuses that text; the rewrite reads the
    catalog again and the query runs, every row."""
    t = f"{fresh_db}.ext"
    spark.sql(f"CREATE EXTERNAL TABLE {t} (k INT, s STRING) STORED AS PARQUET "
              f"LOCATION '{(tmp_path / 'lake' / 'ext').as_uri()}'")
    spark.sql(f"INSERT INTO {t} VALUES (1, 'a'), (50, 'b'), (NULL, 'c')")
    r = lambda lo, hi: ValueSet.range(Kind.INTEGER, lo, hi, True, False)  # noqa: E731
    report = apply_layout(SparkRunner(spark), with_generation(Layout(
        t, "halves", (Partition(1, (("k", r(None, 10)),)), Partition(2, (("k", r(10, None)),))),
        kinds=(("k", Kind.INTEGER),))))
    query = f"SELECT k, s FROM {t} WHERE k < 5"
    assert "planner_pid" in rewrite(spark, query)  # cached: the laid-out table's entry and files
    assert sorted(map(tuple, planner_sql(spark, query).collect())) == [(1, "a")]
    spark.sql(f"DROP TABLE {t}")  # external: the laid-out copy's files stay where the cache lists them
    spark.sql(f"ALTER TABLE {report.backup} RENAME TO {t}")
    assert "planner_pid" in rewrite(spark, query)  # the metastore alone changed: still cached
    assert sorted(map(tuple, planner_sql(spark, query).collect())) == [(1, "a")]
    assert rewrite(spark, query) == query  # read again: the table is not laid out


def _halves(table: str) -> Layout:
    import datetime as dt

    lo = ValueSet.range(Kind.DATE, None, dt.date(1995, 6, 17), True, False)
    return with_generation(Layout(table, "halves", (Partition(1, (("l_shipdate", lo),)),
                                                    Partition(2, (("l_shipdate", lo.complement()),))),
                                  kinds=(("l_shipdate", Kind.DATE),), types=(("l_shipdate", "date"),)))

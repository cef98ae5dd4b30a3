"""advise's statistics pass: one read of the table, the cached snapshot reused while nothing changed.

The row count comes from the Parquet footers (no count scan); where the files cannot be read here,
the sample's own pass observes it. Either way it equals Spark's ``count()``.
"""
from __future__ import annotations

from hive_integration.spark.statistics_pass import (
    _catalog_column_stats,
    _column_stats,
    _sample,
    gather_stats,
    table_schema,
)


def _copy(spark, db: str, source: str) -> str:
    table = f"{db}.li"
    spark.sql(f"CREATE TABLE {table} STORED AS PARQUET AS SELECT * FROM {source}")  # our own names
    return table


def _jobs_during(spark, fn) -> tuple[object, int]:
    sc = spark.sparkContext
    group = f"stats-pass-{id(fn)}"
    sc.setJobGroup(group, group)
    try:
        out = fn()
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)
    return out, len(sc.statusTracker().getJobIdsForGroup(group))


def test_row_count_from_the_footers_equals_a_count_scan(spark, lineitem_table, fresh_db):
    table = _copy(spark, fresh_db, lineitem_table)
    timings: dict = {}
    stats = gather_stats(spark, table, sample_rows=2_000, timings=timings)
    assert stats.rows == spark.table(table).count() == 60_175
    assert 0 < stats.sample.num_rows <= 2_000
    assert timings["cached"] is False and timings["total"] >= timings["sample"]


def test_partition_directories_whose_names_a_uri_escapes_are_read(spark, fresh_db):
    # "s=a b%" is "s=a%20b%25" in the URIs Spark lists; a Hadoop Path built from that string
    # escapes it again and finds no file (advise stopped with a py4j traceback)
    table = f"{fresh_db}.spaced"
    spark.sql(f"CREATE TABLE {table} (a BIGINT) PARTITIONED BY (s STRING) STORED AS PARQUET")
    spark.sql(f"INSERT INTO {table} SELECT id, CASE WHEN id % 2 = 0 THEN 'a b%' ELSE 'é' END FROM range(10)")
    stats = gather_stats(spark, table, sample_rows=100)
    assert stats.rows == 10
    assert sorted(stats.sample.column("s").to_pylist()) == ["a b%"] * 5 + ["é"] * 5


def test_without_footers_the_sample_pass_observes_the_row_count(spark, lineitem_table):
    sample, rows = _sample(spark, lineitem_table, None, 1_000, 7)
    assert rows == 60_175
    assert sample.num_rows == 1_000
    again, _ = _sample(spark, lineitem_table, None, 1_000, 7)
    assert again.equals(sample)  # seeded: the same rows every time


def test_cached_snapshot_is_reused_until_the_table_changes(spark, lineitem_table, fresh_db, tmp_path):
    table = _copy(spark, fresh_db, lineitem_table)
    first = gather_stats(spark, table, sample_rows=2_000, cache_dir=tmp_path)
    timings: dict = {}
    again, jobs = _jobs_during(spark, lambda: gather_stats(spark, table, sample_rows=2_000, cache_dir=tmp_path,
                                                          timings=timings))
    assert timings["cached"] is True and jobs == 0  # no Spark job: nothing read but the file listing
    assert again.snapshot == first.snapshot and again.rows == first.rows
    assert again.sample.equals(first.sample)
    spark.sql(f"INSERT INTO {table} SELECT * FROM {lineitem_table} LIMIT 10")
    changed: dict = {}
    after = gather_stats(spark, table, sample_rows=2_000, cache_dir=tmp_path, timings=changed)
    assert changed["cached"] is False and after.snapshot != first.snapshot
    assert after.rows == 60_185


def test_one_catalog_lookup_gives_what_describe_gives_per_column(spark, lineitem_table, fresh_db):
    table = _copy(spark, fresh_db, lineitem_table)
    assert _catalog_column_stats(spark, table) == {}  # no statistics computed yet
    spark.sql(f"ANALYZE TABLE {table} COMPUTE STATISTICS FOR COLUMNS l_shipdate, l_quantity, l_shipmode, l_comment")
    known = _catalog_column_stats(spark, table)
    assert set(known) == {"l_shipdate", "l_quantity", "l_shipmode", "l_comment"}
    for column in table_schema(spark, table):
        assert _column_stats(spark, table, column, known) == _column_stats(spark, table, column)
    lowest = spark.sql(f"SELECT min(l_shipdate) FROM {table}").first()[0]
    assert _column_stats(spark, table, "l_shipdate", known)["min"] == lowest.isoformat()

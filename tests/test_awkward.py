"""Awkward data: each case gets sensible advice or a clear refusal, and applying it loses nothing.

The cases: one value holding 90% of the rows; an empty table; a one-row table; an all-NULL
column; very long strings; doubles with NaN, infinities and -0.0; map, array and struct columns
(never partitioned on, with a note); a workload that asks for more partitions than the limit; a
table that already has a column called ``planner_pid``.

Each one is advised on statistics gathered by Spark, applied with ``apply_layout`` (verified
and swapped), and then the laid-out table must hold the same rows as the old one, and queries
through ``planner.sql`` must return what they return on the old table.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import replace

import pytest

import planner
from hive_integration.apply.apply_layout import SparkRunner, apply_layout
from hive_integration.spark.statistics_pass import gather_stats, table_schema
from planner.advice.ranking import advice_text, advise
from planner.analysis.table_analysis import analyze_table
from planner.costmodel.cost import CostParams
from time_params import ROWS_AS_SECONDS
from planner.errors import ApplyError, PlannerError
from planner.workload import Schema, parse_workload

SMALL = CostParams(partition_overhead_rows=1.0, file_overhead_rows=0.0, min_partition_bytes=1,
                   target_file_bytes=1 << 20, row_group_rows=64, time=ROWS_AS_SECONDS)


def rows_of(spark, table: str, columns) -> Counter:
    cols = ", ".join(f"`{c}`" for c in columns)
    return Counter(repr(r) for r in spark.sql(f"SELECT {cols} FROM {table}").collect())


def advise_apply_compare(spark, table: str, workload: list[str], queries: list[str], params: CostParams = SMALL):
    """Advise on ``workload``, apply, and check the data and every query (``{t}`` is the table)."""
    columns = table_schema(spark, table)
    wl = parse_workload(";\n".join(w.replace("{t}", table) for w in workload), "awkward.sql", dialect="spark",
                        schema=Schema({table: columns}), tables=[table])
    advice = advise(wl, analyze_table(wl, table, columns), gather_stats(spark, table), params)
    text = advice_text(advice)  # the report renders for every case
    before = rows_of(spark, table, columns)
    report = apply_layout(SparkRunner(spark), advice.layout)
    assert report.rows == sum(before.values())
    assert rows_of(spark, table, columns) == before  # same rows, none lost, none twice
    for q in queries:
        want = Counter(repr(r) for r in spark.sql(q.replace("{t}", report.backup)).collect())
        got = Counter(repr(r) for r in planner.sql(spark, q.replace("{t}", table)).collect())
        assert got == want, q
    return advice, text


def test_one_value_holds_ninety_percent_of_the_rows(spark, fresh_db):
    t = f"{fresh_db}.skew"
    spark.sql(f"CREATE TABLE {t} (id BIGINT, mode STRING, qty INT) STORED AS PARQUET")
    spark.sql(f"""INSERT INTO {t} SELECT id, CASE WHEN id % 10 = 0 THEN concat('m', CAST(id % 7 AS STRING))
                  ELSE 'MAIL' END, CAST(id % 50 AS INT) FROM range(3000)""")
    advice, _ = advise_apply_compare(
        spark, t,
        ["SELECT * FROM {t} WHERE mode = 'MAIL'", "SELECT * FROM {t} WHERE mode IN ('m1', 'm2') AND qty < 10",
         "SELECT * FROM {t} WHERE mode = 'm3'", "SELECT count(*) FROM {t} WHERE mode <> 'MAIL'"],
        ["SELECT * FROM {t} WHERE mode = 'MAIL' AND qty = 7", "SELECT id FROM {t} WHERE mode = 'm5'",
         "SELECT count(*) FROM {t} WHERE mode > 'M'", "SELECT * FROM {t} WHERE mode IS NULL OR qty > 48"],
        replace(SMALL, allow_regressions=True))  # skew, not the guard (tests/test_guard.py), is tested here
    layout = advice.layout
    assert "mode" in layout.attributes  # the skewed column is used ...
    assert advice.result.best.rows < advice.full_scan_rows  # ... and it pays off


def test_empty_table(spark, fresh_db):
    t = f"{fresh_db}.empty"
    spark.sql(f"CREATE TABLE {t} (id BIGINT, d DATE, s STRING) STORED AS PARQUET")
    advice, text = advise_apply_compare(
        spark, t, ["SELECT * FROM {t} WHERE d >= DATE '2020-01-01'", "SELECT * FROM {t} WHERE s = 'x'"],
        ["SELECT * FROM {t} WHERE d < DATE '2021-01-01'", "SELECT count(*) FROM {t}"])
    assert len(advice.layout.partitions) == 1 and "the table is empty" in text


def test_one_row_table(spark, fresh_db):
    t = f"{fresh_db}.single"
    spark.sql(f"CREATE TABLE {t} (id BIGINT, d DATE, s STRING) STORED AS PARQUET")
    spark.sql(f"INSERT INTO {t} VALUES (1, DATE '2020-06-01', 'only')")
    advise_apply_compare(
        spark, t, ["SELECT * FROM {t} WHERE d >= DATE '2020-01-01'", "SELECT * FROM {t} WHERE s = 'only'",
                   "SELECT * FROM {t} WHERE d < DATE '2020-01-01' AND s <> 'x'"],
        ["SELECT * FROM {t} WHERE d = DATE '2020-06-01'", "SELECT * FROM {t} WHERE s = 'other'",
         "SELECT * FROM {t} WHERE d IS NULL", "SELECT count(*) FROM {t} WHERE id > 0"])


def test_all_null_column(spark, fresh_db):
    t = f"{fresh_db}.nulls"
    spark.sql(f"CREATE TABLE {t} (id BIGINT, z INT, d DATE) STORED AS PARQUET")
    spark.sql(f"INSERT INTO {t} SELECT id, CAST(NULL AS INT), date_add(DATE '2020-01-01', CAST(id % 30 AS INT)) "
              f"FROM range(500)")
    advise_apply_compare(
        spark, t, ["SELECT * FROM {t} WHERE z = 5", "SELECT * FROM {t} WHERE z IS NULL AND d < DATE '2020-01-10'",
                   "SELECT * FROM {t} WHERE z > 1 OR d >= DATE '2020-01-20'"],
        ["SELECT * FROM {t} WHERE z IS NOT NULL", "SELECT * FROM {t} WHERE z IS NULL", "SELECT * FROM {t} WHERE z <> 5",
         "SELECT count(*) FROM {t} WHERE NOT (z = 1) OR d = DATE '2020-01-03'"])


def test_very_long_strings(spark, fresh_db):
    t = f"{fresh_db}.longs"
    spark.sql(f"CREATE TABLE {t} (id BIGINT, s STRING) STORED AS PARQUET")
    spark.sql(f"INSERT INTO {t} SELECT id, concat(repeat(CAST(id % 4 AS STRING), 60000), CAST(id AS STRING)) "
              f"FROM range(40)")
    long_value = "2" * 60000 + "6"
    advice, _ = advise_apply_compare(
        spark, t, [f"SELECT id FROM {{t}} WHERE s = '{long_value}'", f"SELECT id FROM {{t}} WHERE s < '{'1' * 70000}'",
                   "SELECT id FROM {t} WHERE s >= '3'"],
        [f"SELECT id FROM {{t}} WHERE s = '{long_value}'", f"SELECT id FROM {{t}} WHERE s > '{'2' * 59999}'",
         "SELECT count(*) FROM {t} WHERE s LIKE '0%'"])
    # the layout (with 60 KB values) is stored in TBLPROPERTIES chunks the metastore accepts
    props = {r[0]: r[1] for r in spark.sql(f"SHOW TBLPROPERTIES {t}").collect()}
    assert int(props.get("planner.layout.parts", "0")) >= 1


def test_doubles_with_nan_infinity_and_negative_zero(spark, fresh_db):
    t = f"{fresh_db}.doubles"
    spark.sql(f"CREATE TABLE {t} (id BIGINT, x DOUBLE) STORED AS PARQUET")
    spark.sql(f"""INSERT INTO {t} SELECT id, CASE id % 8 WHEN 0 THEN double('NaN') WHEN 1 THEN double('Infinity')
                  WHEN 2 THEN double('-Infinity') WHEN 3 THEN -0.0 WHEN 4 THEN 0.1 WHEN 5 THEN NULL
                  ELSE id / 10.0 END FROM range(400)""")
    advise_apply_compare(
        spark, t, ["SELECT * FROM {t} WHERE x = 0.1", "SELECT * FROM {t} WHERE x > 20", "SELECT * FROM {t} WHERE x < 0",
                   "SELECT * FROM {t} WHERE x BETWEEN 5 AND 10"],
        ["SELECT * FROM {t} WHERE x = 0.1", "SELECT * FROM {t} WHERE x > 30", "SELECT * FROM {t} WHERE x >= 1e308",
         "SELECT * FROM {t} WHERE x = 0", "SELECT * FROM {t} WHERE x < -1e308", "SELECT * FROM {t} WHERE x <> 0.1",
         "SELECT * FROM {t} WHERE x = double('NaN')", "SELECT * FROM {t} WHERE NOT (x < 5)"])


def test_map_array_struct_columns_are_not_partitioned(spark, fresh_db):
    t = f"{fresh_db}.nested"
    spark.sql(f"CREATE TABLE {t} (id BIGINT, m MAP<STRING, INT>, a ARRAY<INT>, st STRUCT<f: INT, g: STRING>, "
              f"d DATE) STORED AS PARQUET")
    spark.sql(f"""INSERT INTO {t} SELECT id, map('k', CAST(id % 3 AS INT)), array(CAST(id AS INT), 1),
                  named_struct('f', CAST(id % 5 AS INT), 'g', 'x'), date_add(DATE '2020-01-01', CAST(id % 9 AS INT))
                  FROM range(200)""")
    advice, text = advise_apply_compare(
        spark, t, ["SELECT * FROM {t} WHERE m['k'] = 1 AND d < DATE '2020-01-04'", "SELECT * FROM {t} WHERE size(a) > 1",
                   "SELECT * FROM {t} WHERE st.f = 2 AND d >= DATE '2020-01-06'", "SELECT id FROM {t} WHERE m IS NULL"],
        ["SELECT * FROM {t} WHERE m['k'] = 2", "SELECT id, st FROM {t} WHERE st.f = 1 OR d = DATE '2020-01-02'",
         "SELECT count(*) FROM {t} WHERE a[0] < 10 AND d < DATE '2020-01-05'"])
    assert set(advice.layout.attributes) <= {"d", "id"}
    for col in ("m", "a", "st"):
        assert f"note: column {col} (" in text and "cannot be ordered; it is not used for partitioning" in text


@pytest.mark.parametrize("limit", [6, 1])
def test_more_partitions_than_the_limit(spark, fresh_db, limit):
    t = f"{fresh_db}.many"
    spark.sql(f"CREATE TABLE {t} (id BIGINT, k INT, s STRING) STORED AS PARQUET")
    spark.sql(f"INSERT INTO {t} SELECT id, CAST(id % 60 AS INT), concat('v', CAST(id % 45 AS STRING)) FROM range(1200)")
    workload = [f"SELECT * FROM {{t}} WHERE k = {i} AND s = 'v{i % 45}'" for i in range(60)]
    advice, _ = advise_apply_compare(
        spark, t, workload, ["SELECT * FROM {t} WHERE k = 7", "SELECT * FROM {t} WHERE s IN ('v1', 'v44')",
                             "SELECT count(*) FROM {t} WHERE k > 50 OR s = 'v3'"],
        CostParams(**{**SMALL.__dict__, "max_partitions": limit}))
    assert 1 <= len(advice.layout.partitions) <= limit
    assert all(len(c.layout.partitions) <= limit for c in advice.result.ranked)


def test_a_column_named_like_the_partition_column_is_refused_clearly(spark, fresh_db):
    t = f"{fresh_db}.clash"
    spark.sql(f"CREATE TABLE {t} (id BIGINT, planner_pid INT) STORED AS PARQUET")
    spark.sql(f"INSERT INTO {t} SELECT id, CAST(id % 3 AS INT) FROM range(30)")
    columns = table_schema(spark, t)
    wl = parse_workload(f"SELECT * FROM {t} WHERE id < 10", "w.sql", schema=Schema({t: columns}), tables=[t])
    advice = advise(wl, analyze_table(wl, t, columns), gather_stats(spark, t), SMALL)
    with pytest.raises(ApplyError, match="already has a column named 'planner_pid'; choose another partition column"):
        apply_layout(SparkRunner(spark), advice.layout)
    assert spark.sql(f"SELECT count(*) FROM {t}").collect()[0][0] == 30
    assert isinstance(ApplyError("x"), PlannerError)

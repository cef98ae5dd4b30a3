"""The session catalog read straight (``hive_integration.spark.catalog``) agrees with Spark's own answers:
the columns with ``DESCRIBE``, the files with ``inputFiles()``, and a snapshot notices every change
to the files Spark reads."""
from __future__ import annotations

import shutil
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from hive_integration.spark.join_ranges import table_snapshot
from hive_integration.spark.catalog import (
    catalog_entries,
    catalog_entry,
    input_files,
    spark_skips,
    table_files,
)
from hive_integration.spark.columns import spark_columns

TYPES = ("a TINYINT, b SMALLINT, c INT, d BIGINT, e FLOAT, f DOUBLE, g DECIMAL(15,2), h STRING, i CHAR(10), "
         "j VARCHAR(7), k DATE, l TIMESTAMP, m TIMESTAMP_NTZ, n BOOLEAN, o BINARY, p ARRAY<INT>, "
         "q MAP<STRING,DECIMAL(3,1)>, r STRUCT<x: INT, y: STRING, w: CHAR(3)>, s INTERVAL DAY TO SECOND, "
         "`Odd Name` INT, u DECIMAL(38,0), v INTERVAL YEAR TO MONTH")
HIVE_TYPES = TYPES.replace(", s INTERVAL DAY TO SECOND", "").replace(", m TIMESTAMP_NTZ", "").replace(", v INTERVAL YEAR TO MONTH", "")  # not in Hive tables


@pytest.mark.parametrize("create", [
    "CREATE TABLE {t} ({types}, pc INT) USING parquet PARTITIONED BY (pc)",
    "CREATE TABLE {t} ({hive_types}) STORED AS PARQUET",
    "CREATE TABLE {t} (a INT, c CHAR(4), v VARCHAR(3), d DECIMAL(7,3)) PARTITIONED BY (ds STRING) STORED AS ORC",
])
def test_catalog_columns_are_what_describe_shows(spark, fresh_db, create):
    t = f"{fresh_db}.t"
    spark.sql(create.format(t=t, types=TYPES, hive_types=HIVE_TYPES))
    entry = catalog_entry(spark, t)
    assert dict(entry.columns) == spark_columns(spark, t)
    assert entry.table == t and not entry.view and entry.location


def test_catalog_entry_properties_partitions_views_and_missing_tables(spark, fresh_db):
    t = f"{fresh_db}.t"
    spark.sql(f"CREATE TABLE {t} (a INT) PARTITIONED BY (ds STRING) STORED AS PARQUET "
              "TBLPROPERTIES ('planner.x'='{\"k\": [1, \"é\"]}')")
    entry = catalog_entry(spark, t.upper())
    shown = {r[0]: r[1] for r in spark.sql(f"SHOW TBLPROPERTIES {t}").collect()}
    assert entry.properties["planner.x"] == shown["planner.x"] == '{"k": [1, "é"]}'
    assert entry.partition_columns == ("ds",)
    spark.sql(f"CREATE VIEW {fresh_db}.v AS SELECT a FROM {t}")
    assert catalog_entry(spark, f"{fresh_db}.v").view
    spark.sql("CREATE OR REPLACE TEMP VIEW planner_tv AS SELECT 1 AS x")
    assert catalog_entry(spark, "planner_tv") is None  # a temporary view is not in the catalog
    assert catalog_entry(spark, f"{fresh_db}.nope") is None
    assert catalog_entry(spark, "no_such_db.t") is None


def test_catalog_entries_read_together_are_each_tables_own(spark, fresh_db):
    spark.sql(f"CREATE TABLE {fresh_db}.a (x INT, c CHAR(3)) PARTITIONED BY (ds STRING) STORED AS PARQUET "
              "TBLPROPERTIES ('planner.k'='1')")
    spark.sql(f"CREATE TABLE {fresh_db}.b (y DECIMAL(9,2)) USING parquet")
    spark.sql(f"CREATE VIEW {fresh_db}.v AS SELECT x FROM {fresh_db}.a")
    spark.sql("CREATE OR REPLACE TEMP VIEW planner_tv2 AS SELECT 1 AS x")
    names = [f"{fresh_db}.a", f"{fresh_db}.B", f"{fresh_db}.v", f"{fresh_db}.nope", "no_such_db.t", "no_such_db.u",
             "planner_tv2", f"{fresh_db}.a"]
    got = catalog_entries(spark, names)
    current = spark.catalog.currentDatabase().lower()
    assert set(got) == {n.lower() if "." in n else f"{current}.{n}" for n in names}
    for name in names:
        key = name.lower() if "." in name else f"{current}.{name}"
        assert got[key] == catalog_entry(spark, name), name
        if got[key] is not None:
            assert (dict(got[key].properties), dict(got[key].columns)) == \
                (dict(catalog_entry(spark, name).properties), dict(catalog_entry(spark, name).columns))
    assert got[f"{fresh_db}.a"].partition_columns == ("ds",) and got[f"{fresh_db}.v"].view
    assert got[f"{fresh_db}.nope"] is None and got["no_such_db.t"] is None and got[f"{current}.planner_tv2"] is None


def _local(uri: str) -> Path:
    return Path(urlsplit(uri).path)


def test_listed_files_are_the_files_spark_reads_and_snapshots_see_every_change(spark, fresh_db, tmp_path):
    plain, parted = f"{fresh_db}.plain", f"{fresh_db}.parted"
    spark.sql(f"CREATE TABLE {plain} STORED AS PARQUET AS SELECT id AS a FROM range(100)")
    spark.sql(f"CREATE TABLE {parted} (a BIGINT) PARTITIONED BY (p INT) STORED AS PARQUET")
    spark.sql(f"INSERT INTO {parted} SELECT id, CAST(id % 3 AS INT) FROM range(100)")
    spaced = f"{fresh_db}.spaced"  # partition directories whose names a URI escapes ("s=a b%", "s=é")
    spark.sql(f"CREATE TABLE {spaced} (a BIGINT) PARTITIONED BY (s STRING) STORED AS PARQUET")
    spark.sql(f"INSERT INTO {spaced} SELECT id, CASE WHEN id % 2 = 0 THEN 'a b%' ELSE 'é' END FROM range(10)")
    for t in (plain, parted, spaced):
        entry = catalog_entry(spark, t)
        assert table_files(spark, entry) == input_files(spark, t), t  # names, sizes and order as inputFiles'

    entry = catalog_entry(spark, plain)
    root = _local(entry.location)
    before = table_snapshot(spark, plain)
    (root / "_SUCCESS").write_text("")  # Spark skips it
    (root / ".hidden").write_text("x")
    assert table_snapshot(spark, plain) == before
    assert spark_skips("_SUCCESS") and spark_skips(".x.crc") and not spark_skips("_metadata") \
        and not spark_skips("p=_1")

    part = next(f for f, _, _ in table_files(spark, entry))
    sub = root / "sub"
    sub.mkdir()
    shutil.copy(_local(part), sub / "more.parquet")
    # this session does not read subdirectories of a non-partitioned table, others may (Hive's
    # input.dir.recursive, recursiveFileLookup): the snapshot counts their files, to be safe
    assert table_snapshot(spark, plain) != before

    before = table_snapshot(spark, parted)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    shutil.copy(_local(next(f for f, _, _ in table_files(spark, catalog_entry(spark, parted)))), outside / "x.parquet")
    spark.sql(f"ALTER TABLE {parted} ADD PARTITION (p=7) LOCATION '{outside.as_uri()}'")
    assert spark.table(parted).where("p = 7").count() > 0
    after = table_snapshot(spark, parted)
    assert after is not None and after != before  # a partition outside the table's location counts
    assert table_files(spark, catalog_entry(spark, parted)) == input_files(spark, parted)

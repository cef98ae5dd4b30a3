"""pyarrow's listing of a table's files (``hive_integration.metastore.file_catalog``, what
``planner rewrite`` over thrift and ``planner apply --hiveserver2`` use) gives the snapshot Spark's
own listing gives (``join_ranges.table_snapshot``, what ``planner.sql`` uses): an index or join
ranges recorded by either are recognised by the other. Partition values that Hive escapes in
directory names (space, ``%``, ``/``, non-ASCII, NULL) included."""
from __future__ import annotations

from types import SimpleNamespace

from hive_integration.metastore.file_catalog import MetastoreCatalogIO
from hive_integration.spark.catalog import catalog_entry, partition_locations
from hive_integration.spark.catalog_cache import CatalogCache
from hive_integration.spark.join_ranges import table_snapshot


class SparkAsMetastore:
    """A thrift client's two questions answered from Spark's catalog (the embedded metastore has no
    thrift server; what is compared here is the listing)."""

    def __init__(self, spark):
        self.spark = spark

    def table_or_none(self, db, name):
        e = catalog_entry(self.spark, f"{db}.{name}")
        col = lambda n: SimpleNamespace(name=n, type=e.columns[n])  # noqa: E731
        return SimpleNamespace(parameters=dict(e.properties), tableType="MANAGED_TABLE",
                               partitionKeys=[col(c) for c in e.partition_columns],
                               sd=SimpleNamespace(cols=[col(c) for c in e.columns if c not in e.partition_columns],
                                                  location=e.location))

    def partition_locations(self, db, name):
        return partition_locations(self.spark, f"{db}.{name}")


def test_pyarrow_lists_the_snapshot_spark_lists(spark, fresh_db):
    part, plain = f"{fresh_db}.odd", f"{fresh_db}.plain"
    spark.sql(f"CREATE TABLE {part} (k INT) PARTITIONED BY (p STRING) STORED AS PARQUET")
    spark.sql(f"INSERT INTO {part} PARTITION (p) VALUES (1, 'a b'), (2, '50%'), (3, 'x/y'), (4, 'é'), (5, NULL), "
              "(6, 'q=r:s')")
    spark.sql(f"CREATE TABLE {plain} STORED AS PARQUET AS SELECT k FROM {part}")
    spark.sql(f"INSERT INTO {plain} SELECT k + 10 FROM {part}")  # two writes: two sets of files
    def listed(table):
        return CatalogCache(MetastoreCatalogIO(SparkAsMetastore(spark)), recheck=False).snapshot(table)

    for table in (part, plain):
        want = table_snapshot(spark, table)
        assert want is not None and listed(table) == want, table
    before = listed(part)
    spark.sql(f"INSERT INTO {part} PARTITION (p = 'a b') VALUES (7)")  # a write: both see it alike
    assert listed(part) == table_snapshot(spark, part) != before

"""End-to-end tests of hive_integration against real Spark, HMS and HiveServer2."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from devtools.servers import ServerStartError, StandaloneMetastore, port_open
from devtools.tpch_data import generate_lineitem, load_table
from hive_integration.metastore.hiveserver2 import HiveServer2Client
from hive_integration.metastore.thrift_client import MetastoreClient, parse_uri
from hive_integration.spark.metrics import ScanMetrics, collect_scan_metrics, run_measured, shuffle_bytes_of_plan
from hive_integration.spark.spark_errors import SparkError
from planner.errors import ApplyError, InputError, MetastoreError, PlannerError


def _by_table(metrics: list[ScanMetrics]) -> dict[str, ScanMetrics]:
    return {m.table: m for m in metrics}


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


# -- session ---------------------------------------------------------------


@pytest.mark.spark
def test_session_keeps_state_in_its_dir(spark, fresh_db):
    warehouse = Path(spark.conf.get("spark.sql.warehouse.dir").removeprefix("file:"))
    spark.sql(f"CREATE TABLE {fresh_db}.t (a INT) STORED AS PARQUET")
    spark.sql(f"INSERT INTO {fresh_db}.t VALUES (1), (2)")

    assert spark.sql(f"SELECT sum(a) FROM {fresh_db}.t").first()[0] == 3
    files = spark.table(f"{fresh_db}.t").inputFiles()
    assert files and all(Path(f.removeprefix("file:")).is_relative_to(warehouse) for f in files)
    state = warehouse.parent
    assert (state / "metastore_db").is_dir() and (state / "derby.log").is_file()
    for stray in ("metastore_db", "derby.log", "spark-warehouse"):
        assert not (Path.cwd() / stray).exists(), stray
    assert spark.conf.get("spark.sql.sources.partitionOverwriteMode") == "dynamic"
    assert spark.sparkContext.master == "local[2]"


# -- metrics ---------------------------------------------------------------


@pytest.fixture
def partitioned(spark, fresh_db):
    """10 partitions p=0..9, one file each, 100 rows each."""
    table = f"{fresh_db}.pt"
    spark.sql(f"CREATE TABLE {table} (id BIGINT) PARTITIONED BY (p INT) STORED AS PARQUET")
    spark.sql(
        f"INSERT OVERWRITE TABLE {table} PARTITION (p) "
        "SELECT id, CAST(id % 10 AS INT) AS p FROM range(1000) DISTRIBUTE BY p"
    )
    return table


@pytest.fixture
def sorted_small_row_groups(spark, fresh_db):
    """200k ids written sorted with 16 KiB row groups (~100 groups per file)."""
    table = f"{fresh_db}.srt"
    spark.conf.set("parquet.block.size", "16384")
    try:
        spark.sql(
            f"CREATE TABLE {table} STORED AS PARQUET AS "
            "SELECT id, id % 7 AS m FROM range(200000) ORDER BY id"
        )
    finally:
        spark.conf.unset("parquet.block.size")
    return table


@pytest.mark.spark
def test_partition_filter_reads_fewer_partitions_and_files(spark, partitioned):
    rows, full = run_measured(spark, f"SELECT count(*) FROM {partitioned}")
    assert rows[0][0] == 1000
    assert full == [ScanMetrics(partitioned, files=10, bytes=full[0].bytes, rows=1000, partitions=10)]

    rows, pruned = run_measured(spark, f"SELECT count(*) FROM {partitioned} WHERE p IN (1, 2)")
    assert rows[0][0] == 200
    (scan,) = pruned
    assert (scan.partitions, scan.files, scan.rows) == (2, 2, 200)
    assert 0 < scan.bytes < full[0].bytes


@pytest.mark.spark
def test_hive_serde_scan_reports_pruned_partitions(spark, partitioned):
    spark.conf.set("spark.sql.hive.convertMetastoreParquet", "false")
    try:
        rows, metrics = run_measured(spark, f"SELECT count(*) FROM {partitioned} WHERE p = 3")
    finally:
        spark.conf.unset("spark.sql.hive.convertMetastoreParquet")
    assert rows[0][0] == 100
    assert metrics == [ScanMetrics(partitioned, files=0, bytes=0, rows=100, partitions=1)]


@pytest.mark.spark
def test_row_group_skipping_counts_rows_of_row_groups_read(spark, sorted_small_row_groups):
    table = sorted_small_row_groups
    assert spark.conf.get("spark.sql.parquet.recordLevelFilter.enabled") == "false"
    files = [f.removeprefix("file:") for f in spark.table(table).inputFiles()]
    groups = [
        pq.ParquetFile(f).metadata.row_group(i) for f in files
        for i in range(pq.ParquetFile(f).metadata.num_row_groups)
    ]
    assert len(groups) > 20, "parquet.block.size did not make small row groups"

    lo, hi = 1000, 1010
    rows, metrics = run_measured(spark, f"SELECT * FROM {table} WHERE id BETWEEN {lo} AND {hi}")
    assert len(rows) == hi - lo + 1
    (scan,) = metrics
    # Exactly the rows of the row groups whose [min, max] of id meets [lo, hi]:
    # skipped groups are not counted, and no record-level filtering happens.
    def overlaps(g):
        stats = g.column(0).statistics
        return stats.min <= hi and stats.max >= lo
    expected = sum(g.num_rows for g in groups if overlaps(g))
    assert scan.rows == expected
    assert hi - lo + 1 <= scan.rows < 200000 // 20
    assert scan.files == len(files) and scan.partitions is None


@pytest.mark.spark
def test_metrics_find_scans_inside_subqueries(spark, partitioned, sorted_small_row_groups):
    srt = sorted_small_row_groups
    # A scalar subquery stays a subquery expression (not a join).
    _, metrics = run_measured(
        spark, f"SELECT count(*) FROM {partitioned} WHERE id > (SELECT max(id) - 10 FROM {srt})"
    )
    assert set(_by_table(metrics)) == {partitioned, srt}
    # Its value is pushed into the scan: ids of pt are < 1000, every row group is skipped.
    assert _by_table(metrics)[partitioned].rows == 0

    _, metrics = run_measured(spark, f"SELECT (SELECT count(*) FROM {srt}) AS n")
    assert _by_table(metrics)[srt].rows == 200000

    _, metrics = run_measured(
        spark,
        f"SELECT count(*) FROM {partitioned} a WHERE EXISTS "
        f"(SELECT 1 FROM {srt} s WHERE s.id = a.id AND s.m = 3)",
    )
    assert set(_by_table(metrics)) == {partitioned, srt}


@pytest.mark.spark
def test_dynamic_partition_pruning_and_reused_scans_counted_once(spark, partitioned, fresh_db):
    dim = f"{fresh_db}.dim"
    spark.sql(f"CREATE TABLE {dim} STORED AS PARQUET AS "
              "SELECT CAST(id AS INT) AS k, concat('n', id) AS name FROM range(10)")
    rows, metrics = run_measured(
        spark, f"SELECT count(*) FROM {partitioned} f JOIN {dim} d ON f.p = d.k WHERE d.name = 'n3'"
    )
    assert rows[0][0] == 100
    assert [m.table for m in metrics].count(dim) == 1  # DPP subquery reuses the broadcast
    assert _by_table(metrics)[partitioned].partitions == 1

    _, metrics = run_measured(spark, f"SELECT count(*) FROM {partitioned} a JOIN {partitioned} b USING (id)")
    assert [m.table for m in metrics] == [partitioned]  # reused exchange: one physical scan


@pytest.mark.spark
def test_collect_scan_metrics_needs_the_action_on_the_same_dataframe(spark, partitioned):
    df = spark.sql(f"SELECT * FROM {partitioned} WHERE p = 0")
    df.collect()
    assert collect_scan_metrics(df)[0].rows == 100


@pytest.mark.spark
def test_shuffle_bytes_are_those_the_exchanges_wrote(spark, partitioned):
    """A scan alone shuffles nothing; a GROUP BY's exchange wrote some bytes, found under AQE's
    query stages."""
    def shuffled(sql: str) -> int:
        df = spark.sql(sql)
        df.collect()
        return shuffle_bytes_of_plan(df._jdf.queryExecution().executedPlan())

    assert shuffled(f"SELECT * FROM {partitioned} WHERE p = 0") == 0
    assert shuffled(f"SELECT p, count(*) FROM {partitioned} GROUP BY p") > 0


@pytest.mark.spark
def test_metrics_without_adaptive_execution(spark, partitioned, sorted_small_row_groups):
    spark.conf.set("spark.sql.adaptive.enabled", "false")
    try:
        _, metrics = run_measured(
            spark,
            f"SELECT count(*) FROM {partitioned} WHERE p = 1 "
            f"AND id > (SELECT max(id) - 10 FROM {sorted_small_row_groups})",
        )
    finally:
        spark.conf.unset("spark.sql.adaptive.enabled")
    by_table = _by_table(metrics)
    assert set(by_table) == {partitioned, sorted_small_row_groups}
    assert by_table[partitioned].partitions == 1


# -- TPC-H -----------------------------------------------------------------


@pytest.mark.spark
def test_tpch_lineitem_generated_once_and_loaded_as_hive_table(spark, tpch_small, lineitem_table):
    assert tpch_small.name == "lineitem.parquet" and tpch_small.is_file()
    started = time.monotonic()
    assert generate_lineitem(0.01, tpch_small.parent.parent) == tpch_small  # cached
    assert time.monotonic() - started < 0.5

    provider = {r[0]: r[1] for r in spark.sql(f"DESCRIBE FORMATTED {lineitem_table}").collect()}
    assert provider["Provider"] == "hive"
    assert "ParquetHiveSerDe" in provider["Serde Library"]

    rows, (scan,) = run_measured(spark, f"SELECT count(*) FROM {lineitem_table}")
    assert rows[0][0] == scan.rows == 60175
    # lineitem is generated in l_orderkey order, so 64 KiB row groups let a range skip most.
    _, (scan,) = run_measured(spark, f"SELECT * FROM {lineitem_table} WHERE l_orderkey < 1000")
    assert scan.rows < 60175 // 10
    assert spark.conf.get("parquet.block.size", None) is None  # load_table restored it


# -- servers ---------------------------------------------------------------


@pytest.mark.servers
def test_hiveserver2_and_metastore_share_a_catalog(thrift_server, metastore):
    with HiveServer2Client(thrift_server.host, thrift_server.port) as hs2:
        hs2.execute_many([
            "CREATE DATABASE IF NOT EXISTS infra",
            "DROP TABLE IF EXISTS infra.events",
            "CREATE TABLE infra.events (id BIGINT, kind STRING) "
            "PARTITIONED BY (day STRING) STORED AS PARQUET",
            "SET hive.exec.dynamic.partition.mode=nonstrict",
            "INSERT INTO infra.events PARTITION (day) VALUES "
            "(1, 'a', '2024-01-01'), (2, 'b', '2024-01-02'), (3, 'a', '2024-01-02')",
        ])
        rows = hs2.execute("SELECT day, count(*) FROM infra.events GROUP BY day ORDER BY day")
        assert rows == [("2024-01-01", 1), ("2024-01-02", 2)]

    with MetastoreClient(metastore.uri) as ms:
        assert "infra" in ms.list_databases()
        assert "events" in ms.list_tables("infra")
        assert ms.table_exists("infra", "events") and not ms.table_exists("infra", "nope")
        assert ms.columns("infra", "events") == [("id", "bigint"), ("kind", "string")]
        assert ms.partition_columns("infra", "events") == [("day", "string")]
        assert ms.partition_names("infra", "events") == ["day=2024-01-01", "day=2024-01-02"]
        parts = ms.partitions("infra", "events")
        assert [p.values for p in parts] == [("2024-01-01",), ("2024-01-02",)]
        assert all(p.location.startswith("file:") for p in parts)
        assert "transient_lastDdlTime" in ms.table_parameters("infra", "events")
        with pytest.raises(MetastoreError, match="infra.nope"):
            ms.columns("infra", "nope")
        assert ms.list_tables("infra")  # the connection recovers after an error


@pytest.mark.servers
def test_hiveserver2_errors_quote_the_statement(thrift_server):
    with HiveServer2Client(thrift_server.host, thrift_server.port) as hs2:
        with pytest.raises(ApplyError, match="SELECT \\* FROM no_such_table") as info:
            hs2.execute("SELECT * FROM no_such_table")
        assert isinstance(info.value, PlannerError)
        with pytest.raises(ApplyError, match="statement 2"):
            hs2.execute_many(["SELECT 1", "SELEKT 2"])
        assert hs2.execute("SELECT 1") == [(1,)]  # session still usable


@pytest.mark.servers
def test_metastore_context_manager_stops_its_process(tmp_path):
    with StandaloneMetastore(tmp_path) as server:
        pid = server.pid
        assert server.uri == f"thrift://127.0.0.1:{server.port}"
        assert port_open(server.host, server.port) and _pid_alive(pid)
        with MetastoreClient(server.host, server.port) as ms:
            assert ms.list_databases() == ["default"]
    assert not _pid_alive(pid)
    assert not port_open("127.0.0.1", server.port)


@pytest.mark.servers
def test_server_start_failure_carries_the_log_tail(tmp_path):
    with pytest.raises(ServerStartError, match="(?s)exited with code.*heap"):
        StandaloneMetastore(tmp_path, heap="1k").start()


@pytest.mark.servers
def test_busy_port_and_bad_uris_are_clear_errors(tmp_path, metastore):
    with pytest.raises(ServerStartError, match="already in use"):
        StandaloneMetastore(tmp_path, port=metastore.port).start()
    with pytest.raises(MetastoreError, match="thrift://"):
        parse_uri("http://localhost:9083")
    with pytest.raises(MetastoreError, match="cannot connect"):
        MetastoreClient("127.0.0.1", 1).open()


def test_servers_module_has_a_foreground_entry_point():
    out = subprocess.run(
        [sys.executable, "-m", "devtools.servers", "--help"],
        capture_output=True, text=True, check=True,
    ).stdout
    assert "metastore" in out and "thriftserver" in out and "--dir" in out


@pytest.mark.spark
def test_spark_failures_become_planner_errors(spark, tmp_path):
    with pytest.raises(SparkError, match="running `SELECT \\* FROM no_such_table`.*TABLE_OR_VIEW_NOT_FOUND"):
        run_measured(spark, "SELECT * FROM no_such_table")
    with pytest.raises(SparkError, match="reading"):
        load_table(spark, tmp_path / "missing.parquet", "never_created")
    with pytest.raises(InputError, match="positive"):
        generate_lineitem(0, tmp_path)

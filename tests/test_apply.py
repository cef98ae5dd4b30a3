"""``apply_layout`` end to end on real Spark: swap, verify, leases, and recovery after faults."""
from __future__ import annotations

import itertools
from dataclasses import replace

import pytest

from hive_integration.apply.apply_layout import (
    FAULT_POINTS,
    OWNER,
    STATE,
    HiveServer2Runner,
    SimulatedCrash,
    SparkRunner,
    apply_layout,
)
from hive_integration.metastore.hiveserver2 import HiveServer2Client
from planner.cnf.valueset import ValueSet
from planner.errors import ApplyError, LayoutError, LeaseError
from planner.model.layout import Layout, Partition
from planner.semantics.kinds import Kind

ROWS = 300
_hs2_db = itertools.count(1)

CREATE = """CREATE TABLE {t} (k INT, id BIGINT, name STRING, price DECIMAL(10,2), d DATE, x DOUBLE,
                              flag BOOLEAN, ts TIMESTAMP) STORED AS PARQUET"""
FILL = f"""INSERT INTO {{t}} SELECT
  CASE WHEN id % 17 = 0 THEN NULL ELSE CAST(id AS INT) END,
  id,
  CASE WHEN id % 5 = 0 THEN NULL ELSE concat('n', CAST(id % 23 AS STRING)) END,
  CASE WHEN id % 7 = 0 THEN NULL ELSE CAST(id * 1.25 AS DECIMAL(10,2)) END,
  CASE WHEN id % 11 = 0 THEN NULL ELSE date_add(DATE '2024-01-01', CAST(id AS INT)) END,
  CASE WHEN id % 13 = 0 THEN NULL ELSE id / 3.0 END,
  CASE WHEN id % 3 = 0 THEN NULL ELSE id % 2 = 0 END,
  CASE WHEN id % 19 = 0 THEN NULL ELSE CAST(DATE '2024-01-01' AS TIMESTAMP) END
FROM range({ROWS})"""


def int_layout(table: str) -> Layout:
    r = lambda lo, hi: ValueSet.range(Kind.INTEGER, lo, hi, True, False)  # noqa: E731
    parts = (Partition(1, (("k", r(None, 100)),)), Partition(2, (("k", r(100, 200)),)),
             Partition(3, (("k", r(200, None)),)), Partition(4, (("k", ValueSet.only_null(Kind.INTEGER)),)))
    return Layout(table, "hand-built", parts, kinds=(("k", Kind.INTEGER),))


@pytest.fixture
def source(spark, fresh_db):
    t = f"{fresh_db}.items"
    spark.sql(CREATE.format(t=t))
    spark.sql(FILL.format(t=t))
    return t


def rows(spark, table):
    cols = "k, id, name, price, d, x, flag, ts"
    return sorted(spark.sql(f"SELECT {cols} FROM {table}").collect(), key=lambda r: r.id)


def tables(spark, db):
    return {r.tableName for r in spark.sql(f"SHOW TABLES IN {db}").collect()}


def props(spark, table):
    return {r.key: r.value for r in spark.sql(f"SHOW TBLPROPERTIES {table}").collect()}


def assert_applied(spark, table, before):
    db = table.split(".")[0]
    assert rows(spark, table) == before
    parts = sorted(r[0] for r in spark.sql(f"SHOW PARTITIONS {table}").collect())
    assert parts == ["planner_pid=1", "planner_pid=2", "planner_pid=3", "planner_pid=4"]
    p = props(spark, table)
    assert p[STATE] == "verified" and p["planner.previous"].startswith(table + "__before_")
    assert OWNER not in p
    backups = [t for t in tables(spark, db) if t.startswith("items__before_")]
    assert backups and "items__planner_new" not in tables(spark, db)
    return backups


def test_apply_swaps_in_a_verified_partitioned_copy(spark, source):
    before = rows(spark, source)
    seen = []
    report = apply_layout(SparkRunner(spark), int_layout(source), progress=seen.append)
    backups = assert_applied(spark, source, before)
    assert report.rows == ROWS and report.backup == f"{source.split('.')[0]}.{backups[0]}"
    assert rows(spark, report.backup) == before
    assert OWNER not in props(spark, report.backup)
    assert any("statement" in m and "/" in m for m in seen)
    assert report.resumed is None and not report.dropped_old


def test_drop_old_removes_the_backup(spark, source):
    before = rows(spark, source)
    report = apply_layout(SparkRunner(spark), int_layout(source), drop_old=True)
    assert report.dropped_old
    assert rows(spark, source) == before
    assert not [t for t in tables(spark, source.split(".")[0]) if "__before_" in t]


@pytest.mark.parametrize("point", FAULT_POINTS)
def test_injected_failure_leaves_the_source_intact_and_a_rerun_completes(spark, source, point, monkeypatch):
    before = rows(spark, source)
    monkeypatch.setenv("PLANNER_FAIL_AT", point)
    with pytest.raises(ApplyError, match=point):
        apply_layout(SparkRunner(spark), int_layout(source))
    monkeypatch.delenv("PLANNER_FAIL_AT")
    assert rows(spark, source) == before
    p = props(spark, source)
    assert OWNER not in p and "planner.layout.parts" not in p  # still the old, unleased table
    assert not [t for t in tables(spark, source.split(".")[0]) if "__before_" in t]
    report = apply_layout(SparkRunner(spark), int_layout(source))
    assert_applied(spark, source, before)
    if point in ("after_insert", "after_verify", "between_renames"):
        assert report.resumed and "reused" in report.resumed


def test_crash_between_renames_is_finished_by_a_rerun(spark, source):
    before = rows(spark, source)
    db = source.split(".")[0]
    with pytest.raises(SimulatedCrash):
        apply_layout(SparkRunner(spark), int_layout(source), crash_at="between_renames")
    assert "items" not in tables(spark, db)  # the process died with the source renamed away
    with pytest.raises(LeaseError, match="break-lease"):
        apply_layout(SparkRunner(spark), int_layout(source))
    report = apply_layout(SparkRunner(spark), int_layout(source), break_lease=True)
    assert "finished the swap" in report.resumed
    assert_applied(spark, source, before)


def test_crash_mid_load_is_redone(spark, source):
    before = rows(spark, source)
    with pytest.raises(SimulatedCrash):
        apply_layout(SparkRunner(spark), int_layout(source), crash_at="after_create")
    assert rows(spark, source) == before
    assert props(spark, f"{source}__planner_new")[STATE] == "created"
    apply_layout(SparkRunner(spark), int_layout(source), break_lease=True)
    assert_applied(spark, source, before)


def test_a_concurrent_second_apply_is_refused(spark, source):
    before = rows(spark, source)
    refused = []

    def meanwhile(msg):
        if "created" in msg and not refused:
            with pytest.raises(LeaseError) as e:
                apply_layout(SparkRunner(spark), int_layout(source))
            refused.append(str(e.value))

    apply_layout(SparkRunner(spark), int_layout(source), progress=meanwhile)
    assert refused and "another run" in refused[0]
    assert_applied(spark, source, before)


def test_leftover_table_not_made_by_the_planner_is_not_dropped(spark, source):
    spark.sql(f"CREATE TABLE {source}__planner_new (a INT) STORED AS PARQUET")
    with pytest.raises(ApplyError, match="not made by the planner"):
        apply_layout(SparkRunner(spark), int_layout(source))
    assert OWNER not in props(spark, source)


def test_schema_mismatch_is_refused(spark, source):
    with pytest.raises(ApplyError, match="no longer has the schema"):
        apply_layout(SparkRunner(spark), int_layout(source), expected_columns={"k": "int"})
    bad = Layout(source, "x", (Partition(1, (("nope", ValueSet.only_null(Kind.INTEGER)),)),),
                 kinds=(("nope", Kind.INTEGER),))
    with pytest.raises(ApplyError, match="nope"):
        apply_layout(SparkRunner(spark), bad)


def test_apply_through_hiveserver2(thrift_server):
    db = f"hs2apply{next(_hs2_db)}"
    t = f"{db}.items"
    with HiveServer2Client(thrift_server.host, thrift_server.port) as hs2:
        hs2.execute(f"CREATE DATABASE {db}")
        try:
            hs2.execute("CREATE TABLE {t} (k INT, name STRING) STORED AS PARQUET".format(t=t))
            hs2.execute(f"INSERT INTO {t} VALUES (1, 'a'), (150, NULL), (250, 'c'), (NULL, 'd'), (99, 'e')")
            before = sorted(hs2.execute(f"SELECT k, name FROM {t}"), key=repr)
            runner = HiveServer2Runner(thrift_server.host, thrift_server.port)
            try:
                report = apply_layout(runner, int_layout(t))
            finally:
                runner.close()
            assert report.rows == 5
            assert sorted(hs2.execute(f"SELECT k, name FROM {t}"), key=repr) == before
            assert len(hs2.execute(f"SHOW PARTITIONS {t}")) == 4
            assert any(str(r[1]).startswith("items__before_") for r in hs2.execute(f"SHOW TABLES IN {db}"))
        finally:
            # DROP DATABASE fails on this server with the standalone metastore (NoSuchObjectException
            # from Hive 2.3's client, cascade or not), so drop the tables and leave the empty database
            for row in hs2.execute(f"SHOW TABLES IN {db}"):
                hs2.execute(f"DROP TABLE IF EXISTS {db}.{row[1]}")


def test_cli_applies_an_advice_folder(spark, source, tmp_path):
    import json
    from pathlib import Path

    from click.testing import CliRunner

    import planner.cli.apply  # noqa: F401  (registers the command)
    from planner.cli.main import cli
    from planner.emit.advice_folder import write_advice_folder

    before = rows(spark, source)
    columns = {r.col_name: r.data_type for r in spark.sql(f"DESCRIBE {source}").collect()}
    state = Path(spark.conf.get("spark.sql.warehouse.dir").removeprefix("file:")).parent
    advice = write_advice_folder(tmp_path / "advice", int_layout(source), columns)
    stale = tmp_path / "stale"
    write_advice_folder(stale, int_layout(source), {**columns, "extra": "int"})

    result = CliRunner().invoke(cli, ["apply", str(stale), "--state-dir", str(state)])
    assert result.exit_code != 0 and "no longer has the schema" in result.output
    result = CliRunner().invoke(cli, ["apply", str(advice), "--state-dir", str(state), "--format", "json",
                                      "--drop-old"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["rows"] == ROWS and report["dropped_old"]
    assert rows(spark, source) == before


def test_a_layout_naming_redacted_words_reads_back(spark, fresh_db):
    """Spark's SHOW TBLPROPERTIES redacts values matching ``(?i)…|url|secret|…``: a table named
    ``url_log`` with a column ``page_url`` holding 'secret' is laid out, found and pruned by."""
    import planner
    from hive_integration.metastore.layouts import SparkCatalogLayouts

    t = f"{fresh_db}.url_log"
    spark.sql(f"CREATE TABLE {t} (page_url STRING, n INT) STORED AS PARQUET")
    spark.sql(f"INSERT INTO {t} SELECT CASE WHEN id < 50 THEN 'secret/token' ELSE 'public' END, CAST(id AS INT) "
              "FROM range(100)")
    parts = (Partition(1, (("page_url", ValueSet.points(Kind.STRING, ["secret/token"])),)),
             Partition(2, (("page_url", ValueSet.points(Kind.STRING, ["secret/token"]).complement()),)))
    layout = Layout(t, "cps:page_url", parts, kinds=(("page_url", Kind.STRING),))
    apply_layout(SparkRunner(spark), layout)
    assert "*********(redacted)" in props(spark, t).values()  # Spark does redact (planner.source, .strategy)
    found = SparkCatalogLayouts(spark).lookup(*t.split("."))
    assert found is not None and found.layout.partitions == layout.partitions
    query = f"SELECT n FROM {t} WHERE page_url = 'secret/token'"
    assert sorted(r.n for r in planner.sql(spark, query).collect()) == list(range(50))
    assert len(planner.sql(spark, query).inputFiles()) < len(spark.sql(f"SELECT * FROM {t}").inputFiles())


def test_the_order_inside_partitions_survives_the_write(spark, source):
    """Small partition ids make the CASE an INT; Spark cast it to the BIGINT column above our SORT BY,
    sorted by the cast column for its writer and dropped our sort: every file kept the source's
    order. Each file must hold its rows in the layout's order."""
    from urllib.parse import urlparse

    import pyarrow.parquet as pq

    from planner.model.layout import Ordering

    layout = replace(int_layout(source), order=Ordering("sort", ("name",)))  # not the source's order
    apply_layout(SparkRunner(spark), layout)
    files = spark.table(source).inputFiles()
    assert files
    for f in files:
        xs = pq.read_table(urlparse(f).path, columns=["name"]).column("name").to_pylist()
        key = [(v is not None, v) for v in xs]  # NULLs first, as SORT BY writes them
        assert key == sorted(key), f


def test_the_file_format_is_read_from_describe_formatted():
    from hive_integration.spark.columns import file_format_of

    spark_hive_serde = [("Provider", "hive", ""), ("InputFormat", "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat", "")]
    spark_datasource = [("# Detailed Table Information", "", ""), ("Provider", "parquet", "")]
    hive = [("InputFormat:       ", "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat", None)]
    text = [("Provider", "hive", ""), ("InputFormat", "org.apache.hadoop.mapred.TextInputFormat", ""),
            ("a", None, None)]
    assert [file_format_of(rows) for rows in (spark_hive_serde, spark_datasource, hive, text)] == \
        ["ORC", "PARQUET", "PARQUET", None]


def test_the_swapped_in_table_keeps_its_comments_and_properties(spark, fresh_db):
    t = f"{fresh_db}.described"
    spark.sql(f"CREATE TABLE {t} (k INT COMMENT 'the key', name STRING COMMENT 'it''s a name') "
              "COMMENT 'items of team x' STORED AS PARQUET TBLPROPERTIES ('owner_team'='x', 'retention.days'='30')")
    spark.sql(f"INSERT INTO {t} VALUES (1, 'a'), (150, NULL), (250, 'c')")
    apply_layout(SparkRunner(spark), int_layout(t), drop_old=True)
    described = {r[0]: r[2] for r in spark.sql(f"DESCRIBE {t}").collect()}
    assert described["k"] == "the key" and described["name"] == "it's a name"
    formatted = {r[0]: r[1] for r in spark.sql(f"DESCRIBE FORMATTED {t}").collect()}
    assert formatted["Comment"] == "items of team x"
    props = {r[0]: r[1] for r in spark.sql(f"SHOW TBLPROPERTIES {t}").collect()}
    assert props["owner_team"] == "x" and props["retention.days"] == "30"


def test_an_external_tables_storage_and_the_folder_beside_it():
    import pytest as _pytest

    from hive_integration.apply.apply_layout import sibling_location
    from hive_integration.spark.columns import storage_from_describe_formatted
    from planner.errors import ApplyError

    spark_rows = [("Type", "EXTERNAL", ""), ("Location", "s3a://lake/sales/events", "")]
    hive_rows = [("Location:           ", "hdfs://nn:8020/w/events", None), ("Table Type:         ", "MANAGED_TABLE", None)]
    assert storage_from_describe_formatted(spark_rows) == (True, "s3a://lake/sales/events")
    assert storage_from_describe_formatted(hive_rows) == (False, "hdfs://nn:8020/w/events")
    first = sibling_location("s3a://lake/sales/events/")
    assert first.startswith("s3a://lake/sales/events__layout_")
    again = sibling_location(first)  # a re-apply replaces the suffix instead of adding one
    assert again.startswith("s3a://lake/sales/events__layout_") and again.count("__layout_") == 1 and again != first
    with _pytest.raises(ApplyError, match="no parent folder"):
        sibling_location("s3a://lake")



def test_partition_columns_are_read_from_describe_formatted():
    from hive_integration.spark.columns import (
        partition_columns_from_describe_formatted as parse,
    )

    spark_rows = [("k", "int", None), ("ds", "string", None), ("hr", "int", None),
                  ("# Partition Information", "", ""), ("# col_name", "data_type", "comment"),
                  ("ds", "string", None), ("hr", "int", None), ("", "", ""),
                  ("# Detailed Table Information", "", "")]
    hive_rows = [("# col_name            ", "data_type           ", "comment             "), ("k", "int", ""),
                 ("", None, None), ("# Partition Information", None, None),
                 ("# col_name            ", "data_type           ", "comment             "),
                 ("DS                  ", "string              ", ""), ("", None, None),
                 ("# Detailed Table Information", None, None), ("Database:           ", "db", None)]
    assert parse(spark_rows) == ("ds", "hr")
    assert parse(hive_rows) == ("ds",)
    assert parse([("k", "int", None), ("# Detailed Table Information", "", "")]) == ()


def test_a_table_partitioned_by_its_own_columns_is_applied_only_when_asked(spark, fresh_db):
    t = f"{fresh_db}.daily"
    spark.sql(f"CREATE TABLE {t} (k INT, name STRING) PARTITIONED BY (ds STRING) STORED AS PARQUET")
    spark.sql(f"INSERT INTO {t} PARTITION (ds) VALUES (1, 'a', '2026-11-25'), (150, 'b', '2026-11-25'), "
              "(250, NULL, '2026-11-26'), (NULL, 'd', '2026-11-26')")
    before = sorted(spark.sql(f"SELECT k, name, ds FROM {t}").collect(), key=str)
    with pytest.raises(ApplyError, match=r"partitioned by \(ds\).*--replace-partitioning") as refused:
        apply_layout(SparkRunner(spark), int_layout(t))
    assert "PARTITION (ds=" in str(refused.value) and "planner_pid" in str(refused.value)
    # nothing changed: same partitions, no new table, no lease
    assert sorted(r[0] for r in spark.sql(f"SHOW PARTITIONS {t}").collect()) == ["ds=2026-11-25", "ds=2026-11-26"]
    assert tables(spark, fresh_db) == {"daily"} and OWNER not in props(spark, t)
    seen = []
    apply_layout(SparkRunner(spark), int_layout(t), replace_partitioning=True, drop_old=True, progress=seen.append)
    assert any("was partitioned by (ds)" in m for m in seen)
    assert sorted(spark.sql(f"SELECT k, name, ds FROM {t}").collect(), key=str) == before
    assert spark.sql(f"SELECT count(*) FROM {t} WHERE ds = '2026-11-26'").collect()[0][0] == 2
    # laid out by the planner now: a re-apply replaces nothing of the user's
    apply_layout(SparkRunner(spark), int_layout(t), drop_old=True)
    assert sorted(spark.sql(f"SELECT k, name, ds FROM {t}").collect(), key=str) == before


def test_a_folder_of_advice_is_applied_the_joined_tables_first(tmp_path):
    """``advise`` without ``--table`` writes a folder per table; the fact table's join ranges hold
    only for the dimension's snapshot, so the dimension is laid out first."""
    from planner.cli.apply import advice_folders
    from planner.costmodel import baselines
    from planner.model.join_paths import Hop, JoinColumn, JoinPath
    from planner.pruning.join_pruning import with_join_columns

    orders = baselines.full_scan("tpch.orders")
    lineitem = with_join_columns(baselines.full_scan("tpch.lineitem"),
                                 [JoinColumn(JoinPath((Hop("l_orderkey", "tpch.orders", "o_orderkey"),)), "o_orderdate")])
    for name, layout in (("tpch.a_lineitem", lineitem), ("tpch.b_orders", orders), ("tpch.c_part",
                                                                                    baselines.full_scan("tpch.part"))):
        (tmp_path / name).mkdir()
        (tmp_path / name / "layout.json").write_text(layout.dumps())
    assert [f.name for f in advice_folders(tmp_path)] == ["tpch.b_orders", "tpch.a_lineitem", "tpch.c_part"]
    assert advice_folders(tmp_path / "tpch.c_part") == [tmp_path / "tpch.c_part"]
    (tmp_path / "empty").mkdir()
    with pytest.raises(LayoutError, match="no layout.json"):
        advice_folders(tmp_path / "empty")


def test_the_checksum_sums_a_64_bit_hash_in_slices_that_fix_its_exact_sum():
    """Three BIGINT sums in place of one DECIMAL sum: they must fix the exact sum of the hashes
    (any multiset of 64-bit values, negative ones included), or a changed row could pass."""
    import random

    from sqlglot import exp

    from hive_integration.apply.apply_layout import HASH_SLICE_BITS, Catalog, TableNames, _slices

    class _Runner:
        dialect, hash_function = "spark", "xxhash64"

    aggs = Catalog(_Runner(), TableNames.of("db.t")).checksum_aggregates({"a": "int", "m": "map<int,int>"})
    assert [a.sql(dialect="spark") for a in aggs] == [
        "COUNT(*)", "SUM(SHIFTRIGHT(XXHASH64(`a`), 42))", "SUM(SHIFTRIGHT(XXHASH64(`a`), 21) & 2097151)",
        "SUM(XXHASH64(`a`) & 2097151)", "COUNT(`a`)", "COUNT(`m`)"]
    assert len(_slices(exp.column("h"), HASH_SLICE_BITS)) == 3
    rng = random.Random(7)
    b, mask = HASH_SLICE_BITS, (1 << HASH_SLICE_BITS) - 1
    for _ in range(200):
        hashes = [rng.choice([rng.randint(-2**63, 2**63 - 1), -1, 0, -2**63, 2**63 - 1]) for _ in range(rng.randint(0, 50))]
        top, middle, low = (sum(h >> 2 * b for h in hashes), sum((h >> b) & mask for h in hashes),
                            sum(h & mask for h in hashes))
        assert (top << 2 * b) + (middle << b) + low == sum(hashes)
    assert Catalog(type("R", (), {"dialect": "hive", "hash_function": "hash"})(), TableNames.of("db.t")) \
        .checksum_aggregates({"a": "int"})[1].sql(dialect="hive") == "SUM(CAST(HASH(`a`) AS DECIMAL(38, 0)))"

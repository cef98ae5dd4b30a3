"""What a DBA receives: ddl.sql (Hive DDL), apply.sql, report.md and layout.json, with comments.

The pure tests build real advice (the cost model on a small in-memory table) and read the files
back with sqlglot's hive dialect. ``test_a_dba_runs_the_files_with_beeline`` runs them the way a DBA
would, ``beeline -f`` (shipped with pyspark) against the Spark Thrift Server.
"""
from __future__ import annotations

import datetime as dt
import subprocess
from dataclasses import replace
from pathlib import Path

import pyarrow as pa
import pytest
import sqlglot
from sqlglot import exp

from planner.advice.ranking import advise
from planner.analysis.table_analysis import analyze_table
from planner.cli.advise import _portable
from planner.cnf.valueset import ValueSet
from planner.costmodel.cost import CostParams
from planner.costmodel.statistics import ColumnStats, TableStats
from planner.emit.advice_folder import RANKING_LEGEND, write_advice_folder
from planner.emit.apply_sql import backup_name
from planner.model.layout import Layout, Partition
from planner.semantics.kinds import Kind
from planner.workload import parse_workload

COLUMNS = {"k": "int", "mode": "string", "day": "date", "amount": "decimal(10,2)"}
MODES = ["AIR", "FOB", "MAIL", "RAIL", "REG AIR", "SHIP", "TRUCK"]
ROWS = 7_000
TABLE = pa.table({
    "k": pa.array(range(ROWS), pa.int64()),
    "mode": pa.array([MODES[i % 7] for i in range(ROWS)], pa.string()),
    "day": pa.array([dt.date(2020, 1, 1) + dt.timedelta(days=i % 700) for i in range(ROWS)], pa.date32()),
    "amount": pa.array([float(i % 100) for i in range(ROWS)], pa.float64()),
})
WORKLOAD = "\n".join(
    [f"-- by mode\nSELECT sum(amount) FROM shop.sales WHERE mode IN ('{a}', '{b}');"
     for a, b in (("MAIL", "RAIL"), ("FOB", "SHIP"), ("AIR", "TRUCK"), ("MAIL", "SHIP"))] +
    [f"-- by day\nSELECT count(*) FROM shop.sales WHERE day >= DATE '2020-0{m}-01' AND day < DATE '2020-0{m + 1}-01';"
     for m in range(1, 9)])


@pytest.fixture(scope="module")
def advice():
    wl = parse_workload(WORKLOAD, "/home/dba/work/workload.sql")
    analysis = analyze_table(wl, "shop.sales", COLUMNS)
    stats = TableStats("shop.sales", ROWS, ROWS * 20, tuple(ColumnStats(c, t, 5.0) for c, t in COLUMNS.items()), TABLE)
    params = CostParams(partition_overhead_rows=50, file_overhead_rows=10, min_partition_bytes=1000,
                        row_group_rows=100)
    return advise(wl, analysis, stats, params)


@pytest.fixture(scope="module")
def folder(advice, tmp_path_factory):
    layout = _portable(replace(advice.layout, table="shop.sales"))
    return write_advice_folder(tmp_path_factory.mktemp("advice"), layout, COLUMNS, advice), layout


def statements(path: Path) -> list[exp.Expression]:
    trees = [t for t in sqlglot.parse(path.read_text(), read="hive") if t is not None]
    assert not any(isinstance(t, exp.Command) for t in trees), [t.sql() for t in trees]
    return trees


def test_ddl_is_hive_ddl(folder):
    out, layout = folder
    (create,) = statements(out / "ddl.sql")
    assert isinstance(create, exp.Create)
    columns = [c.name for c in create.this.expressions]
    assert columns == list(COLUMNS) and layout.partition_column not in columns
    text = (out / "ddl.sql").read_text()
    assert "PARTITIONED BY (`planner_pid` BIGINT) STORED AS PARQUET TBLPROPERTIES" in text


def test_ddl_comments_say_what_each_partition_holds_serves_and_costs(folder, advice):
    out, layout = folder
    comments = [line for line in (out / "ddl.sql").read_text().splitlines() if line.startswith("--")]
    for p in layout.partitions:
        assert any(line.startswith(f"--   partition {p.id}: ") for line in comments), p
    assert any("read by" in line and "of 12 queries" in line and "rows" in line for line in comments)
    assert any(line.startswith("--   partition 0: anything no other partition claims") for line in comments)
    assert all(";" not in line for line in comments)
    string_regions = [vs for p in layout.partitions for a, vs in p.region
                      if a == "mode" and vs.point_values() is None]
    if string_regions:  # a range of strings is shown as the values it holds
        assert any("mode one of 'AIR'" in line or "mode one of 'FOB'" in line for line in comments), comments


def test_apply_sql_names_the_backup_apply_keeps(folder):
    out, layout = folder
    trees = statements(out / "apply.sql")
    kinds = [type(t).__name__ for t in trees]
    assert kinds[-3:] == ["Insert", "Alter", "Alter"] and set(kinds[:-3]) == {"Set"}
    backup = backup_name("shop.sales", layout=layout, dialect="hive").sql("hive")
    assert backup == "`shop`.`sales__before_" + dict(layout.meta)["advised_at"].replace("-", "").replace(
        ":", "").replace("T", "").rstrip("Z") + "`"
    assert f"RENAME TO {backup}" in (out / "apply.sql").read_text()
    report = (out / "report.md").read_text()
    assert f"keeps the old table as `` {backup} ``" in report and f"ALTER TABLE {backup} RENAME TO shop.sales" in report


def test_report_explains_the_ranking_s_columns(folder):
    out, _ = folder
    report = (out / "report.md").read_text()
    heads = report.split("### Ranking")[1].splitlines()[4].strip("| ").split(" | ")[1:]
    for h in heads:
        assert f"- `{h}`: " in report
    assert "counted as rows read (per partition 50 rows, per file 10 rows" in report
    assert set(heads) <= set(RANKING_LEGEND) | {"#"}


def test_the_stored_layout_holds_no_path_of_this_machine(folder):
    out, layout = folder
    assert dict(layout.meta)["workload"] == "workload.sql"
    assert "/home/dba" not in (out / "layout.json").read_text() + (out / "ddl.sql").read_text()


def test_string_ranges_list_the_values_the_sample_holds(advice, tmp_path):
    r = ValueSet.range(Kind.STRING, "FOB", "RAIL", False, True)
    layout = Layout("shop.sales", "hand", (Partition(1, (("mode", r),)), Partition(2, (("mode", r.complement()),))),
                    kinds=(("mode", Kind.STRING),), meta=(("partition_rows", {"1": 2000, "2": 5000}),))
    write_advice_folder(tmp_path, layout, COLUMNS, advice)
    text = (tmp_path / "ddl.sql").read_text()
    assert "partition 1: mode one of 'MAIL', 'RAIL' (the values the sample holds in the range ('FOB', 'RAIL'])" in text
    assert "partition 2: mode one of 'AIR', 'FOB', 'REG AIR', 'SHIP', 'TRUCK', or NULL" in text


# ---- the DBA's path: beeline -f against the Thrift Server -------------------------------------------
def beeline(server, path: Path) -> subprocess.CompletedProcess:
    from devtools.servers import pyspark_home

    url = f"jdbc:hive2://{server.host}:{server.port}/default;auth=noSasl"
    return subprocess.run([str(pyspark_home() / "bin" / "beeline"), "-u", url, "-n", "dba", "--silent=true",
                           "-f", str(path)], capture_output=True, text=True, timeout=600)


def test_a_dba_runs_the_files_with_beeline(thrift_server, tmp_path):
    from hive_integration.metastore.hiveserver2 import HiveServer2Client

    with HiveServer2Client(thrift_server.host, thrift_server.port) as hs2:
        hs2.execute("CREATE DATABASE IF NOT EXISTS dba")
        hs2.execute("DROP TABLE IF EXISTS dba.orders")
        hs2.execute("CREATE TABLE dba.orders (k INT, mode STRING, day DATE, amount DECIMAL(10,2)) STORED AS PARQUET")
        hs2.execute("INSERT INTO dba.orders VALUES (1, 'AIR', DATE '2020-01-05', 1.5), (2, 'RAIL', DATE '2021-02-01', 2),"
                    " (3, NULL, NULL, NULL), (4, 'it''s', DATE '2020-06-30', 4.25)")
        r = ValueSet.range(Kind.STRING, None, "MAIL", True, True)
        layout = Layout("dba.orders", "hand", (Partition(1, (("mode", r),)), Partition(2, (("mode", r.complement()),))),
                        kinds=(("mode", Kind.STRING),), meta=(("advised_at", "2024-03-04T05:06:07Z"),))
        write_advice_folder(tmp_path, layout, {"k": "int", "mode": "string", "day": "date", "amount": "decimal(10,2)"})
        for name in ("ddl.sql", "apply.sql"):
            done = beeline(thrift_server, tmp_path / name)
            assert done.returncode == 0, f"beeline -f {name}:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        tables = {r[1] for r in hs2.execute("SHOW TABLES IN dba")}
        assert {"orders", "orders__before_20240304050607"} <= tables
        got = sorted(hs2.execute("SELECT k, planner_pid FROM dba.orders"), key=lambda r: r[0])
        assert got == [(1, 1), (2, 2), (3, 2), (4, 2)]
        parts = {r[0] for r in hs2.execute("SHOW PARTITIONS dba.orders")}
        assert parts == {"planner_pid=1", "planner_pid=2"}
        hs2.execute("DROP TABLE dba.orders")
        hs2.execute("DROP TABLE dba.orders__before_20240304050607")


def test_a_dba_keeps_an_external_orc_tables_place_format_and_comments(thrift_server, tmp_path):
    from hive_integration.apply.apply_layout import HiveServer2Runner, describe_source
    from hive_integration.metastore.hiveserver2 import HiveServer2Client

    lake = tmp_path / "lake"
    with HiveServer2Client(thrift_server.host, thrift_server.port) as hs2:
        hs2.execute("CREATE DATABASE IF NOT EXISTS dba")
        hs2.execute("DROP TABLE IF EXISTS dba.trips")
        hs2.execute(f"CREATE EXTERNAL TABLE dba.trips (k INT COMMENT 'trip id', mode STRING) COMMENT 'trips of team x' "
                    f"STORED AS ORC LOCATION '{lake}/trips' TBLPROPERTIES ('owner_team'='x')")
        hs2.execute("INSERT INTO dba.trips VALUES (1, 'AIR'), (2, 'RAIL'), (3, NULL)")
        runner = HiveServer2Runner(thrift_server.host, thrift_server.port)
        try:
            source = describe_source(runner, "dba.trips")  # what `planner advise` reads, here through the Thrift Server
            assert source.external and source.location.endswith("/lake/trips") and source.file_format == "ORC"
            r = ValueSet.range(Kind.STRING, None, "MAIL", True, True)
            layout = Layout("dba.trips", "hand", (Partition(1, (("mode", r),)), Partition(2, (("mode", r.complement()),))),
                            kinds=(("mode", Kind.STRING),), meta=(("advised_at", "2024-03-04T05:06:07Z"),))
            write_advice_folder(tmp_path / "advice", layout, {"k": "int", "mode": "string"}, file_format="ORC",
                                metadata=source.metadata, external_location=source.copy_location())
            for name in ("ddl.sql", "apply.sql"):
                done = beeline(thrift_server, tmp_path / "advice" / name)
                assert done.returncode == 0, f"beeline -f {name}:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
            after = describe_source(runner, "dba.trips")
            assert after.external and f"{lake}/trips__layout_" in after.location and after.file_format == "ORC"
            meta = after.metadata
            assert meta.comment == "trips of team x" and dict(meta.column_comments) == {"k": "trip id"}
            assert dict(meta.properties)["owner_team"] == "x"
            assert sorted(hs2.execute("SELECT k, planner_pid FROM dba.trips"), key=lambda r: r[0]) == \
                [(1, 1), (2, 2), (3, 2)]
            assert (lake / "trips").is_dir()  # the old files, where they were
        finally:
            runner.close()
            hs2.execute("DROP TABLE IF EXISTS dba.trips")
            hs2.execute("DROP TABLE IF EXISTS dba.trips__before_20240304050607")

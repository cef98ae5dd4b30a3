"""Workloads read from Spark event logs: what Spark 4.3 writes, and a real session writing them.

The pure tests build event files by hand, in the shapes a real log has (checked against the log
the Spark-backed test makes): Thrift Server statements, executions whose description is the SQL,
executions of ``spark.sql``/DataFrame calls that only have a physical plan, nested executions,
rolling zstd files, a log still being written.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from datetime import datetime, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner

from planner.cli.main import cli
from planner.errors import WorkloadError
from planner.workload import parse_workload
from planner.workload.eventlog import (
    SQL_START,
    THRIFT_START,
    EventLogSummary,
    EventWindow,
    plan_query,
    pushed_filter,
    read_executions,
    read_schema,
    workload_text,
)

ROOT = Path(__file__).resolve().parent.parent
T0 = 1_700_000_000_000  # ms


def thrift(statement: str, at: int, session: str = "s1", group: str | None = None) -> dict:
    return {"Event": THRIFT_START, "id": group or f"op{at}", "sessionId": session, "statement": statement,
            "groupId": group or f"op{at}", "startTime": str(T0 + at), "userName": "dba"}


def scan(table: str, schema: str, pushed: str) -> dict:
    return {"nodeName": f"Scan parquet spark_catalog.{table}", "simpleString": "FileScan", "children": [],
            "metadata": {"Format": "Parquet", "PushedFilters": pushed, "ReadSchema": schema, "PartitionFilters": "[]"}}


def execution(eid: int, at: int, description: str, plan: dict | None = None, root: int | None = None,
              group: str | None = None) -> dict:
    return {"Event": SQL_START, "executionId": eid, "rootExecutionId": eid if root is None else root,
            "description": description, "details": "", "physicalPlanDescription": "",
            "sparkPlanInfo": plan or {"nodeName": "LocalTableScan", "children": [], "metadata": {}},
            "time": T0 + at, "modifiedConfigs": {}, "jobTags": [], "jobGroupId": group}


def write_log(path: Path, events: list[dict], codec: str = "") -> Path:
    data = "".join(json.dumps(e) + "\n" for e in events).encode()
    if codec == "zstd":
        import pyarrow as pa

        with pa.CompressedOutputStream(str(path), "zstd") as out:
            out.write(data)
    else:
        path.write_bytes(data)
    return path


def test_thrift_statements_executions_and_plans(tmp_path):
    app = tmp_path / "eventlog_v2_local-1"
    app.mkdir()
    plan = {"nodeName": "WholeStageCodegen (1)", "metadata": {}, "children": [
        {"nodeName": "Filter", "metadata": {}, "children": [
            scan("tpch.lineitem", "struct<l_shipdate:date,l_quantity:decimal(15,2),l_shipmode:string>",
                 "[IsNotNull(l_shipdate), GreaterThanOrEqual(l_shipdate,1994-01-01), "
                 "In(l_shipmode, [MAIL,SHIP]), LessThan(l_quantity,24.00)]")]}]}
    events = [
        thrift("USE tpch", 0),
        execution(0, 1, "USE tpch", group="op0"),
        thrift("SELECT count(*) FROM lineitem WHERE l_shipdate < '1995-01-01'", 10),
        execution(1, 11, "SELECT count(*) FROM lineitem WHERE l_shipdate < '1995-01-01'", group="op10"),
        execution(2, 12, "SELECT count(*) FROM lineitem WHERE l_shipdate < '1995-01-01'", group="op10"),
        execution(3, 20, "collect at /app/job.py:12", plan),
        execution(4, 21, "collect at /app/job.py:12", plan, root=3),  # nested: belongs to execution 3
        execution(5, 30, "SELECT * FROM tpch.orders WHERE o_orderkey = 7"),  # spark-sql / setJobDescription
        execution(6, 40, "sql at NativeMethodAccessorImpl.java:0"),  # a command: no scan
    ]
    write_log(app / "events_1_local-1.zstd", events[:5], codec="zstd")
    write_log(app / "events_2_local-1.zstd", events[5:], codec="zstd")
    (app / "appstatus_local-1").write_text("")
    summary = EventLogSummary()
    got = read_executions(tmp_path, summary)
    assert [x.source for x in got] == ["thrift", "thrift", "plan", "description"]
    assert summary.without_scans == 1
    wl = parse_workload(workload_text(got), "eventlog")
    assert [[(s.table, str(s.predicate)) for s in q.scans] for q in wl.queries] == [
        [("tpch.lineitem", "l_shipdate < '1995-01-01'")],
        [("tpch.lineitem", "NOT (l_shipdate IS NULL) AND l_quantity < 24.00 AND l_shipdate >= CAST('1994-01-01' AS DATE) "
                           "AND l_shipmode IN ('MAIL', 'SHIP')")],
        [("tpch.orders", "o_orderkey = 7")]]
    assert dict(wl.skipped) == {"USE": 1}


def test_sessions_keep_their_own_database(tmp_path):
    events = [thrift("USE a", 0, "s1"), thrift("USE `b`", 1, "s2"), thrift("SELECT * FROM t WHERE x = 1", 2, "s1"),
              thrift("SELECT * FROM t WHERE x = 2", 3, "s2"), thrift("SELECT * FROM t WHERE x = 3", 4, "s1")]
    write_log(tmp_path / "local-2", events)
    wl = parse_workload(workload_text(read_executions(tmp_path)), "eventlog")
    assert [q.scans[0].table for q in wl.queries] == ["a.t", "b.t", "a.t"]


def test_time_window_and_minimum_count(tmp_path):
    events = [thrift(f"SELECT * FROM t WHERE x = {i}", i * 1000) for i in range(5)] + [
        thrift("SELECT * FROM u WHERE y = 1", 6000)]
    write_log(tmp_path / "local-3.inprogress", events)
    got = read_executions(tmp_path)
    at = lambda ms: datetime.fromtimestamp((T0 + ms) / 1000, tz=timezone.utc)  # noqa: E731
    summary = EventLogSummary()
    text = workload_text(got, EventWindow(since=at(1000), until=at(6000)), summary=summary)
    assert text.count(";") == 4 and summary.outside_window == 2
    summary = EventLogSummary()
    text = workload_text(got, EventWindow(min_count=2), summary=summary)
    assert "FROM u" not in text and text.count("FROM t") == 5 and summary.below_min_count == 1


def test_the_last_n_queries_are_a_sliding_window(tmp_path):
    # USE statements are not queries: they still name the databases of the queries kept
    events = [thrift("USE a", 0)] + [thrift(f"SELECT * FROM t WHERE x = {i}", (i + 1) * 1000) for i in range(5)]
    write_log(tmp_path / "local-5.inprogress", events)
    got = read_executions(tmp_path)
    summary = EventLogSummary()
    text = workload_text(got, EventWindow(last=2), summary=summary)
    assert "x = 3" in text and "x = 4" in text and "x = 2" not in text and summary.outside_window == 3
    assert [q.scans[0].table for q in parse_workload(text, "eventlog").queries] == ["a.t", "a.t"]
    at = lambda ms: datetime.fromtimestamp((T0 + ms) / 1000, tz=timezone.utc)  # noqa: E731
    text = workload_text(got, EventWindow(until=at(3000), last=1))  # the most recent inside --until
    assert "x = 1" in text and text.count("SELECT") == 1


def test_a_log_still_being_written_and_unreadable_codecs(tmp_path):
    good = json.dumps(thrift("SELECT * FROM t WHERE x = 1", 0))
    (tmp_path / "local-4.inprogress").write_text(good + "\n" + good[:40])  # the last line is half written
    assert len(read_executions(tmp_path)) == 1
    (tmp_path / "local-5.lz4").write_bytes(b"\x00\x01")
    with pytest.raises(WorkloadError, match="compressed with lz4.*spark.eventLog.compression.codec=zstd"):
        read_executions(tmp_path)
    with pytest.raises(WorkloadError, match="no Spark event logs found"):
        read_executions(tmp_path / "empty" if (tmp_path / "empty").mkdir() is None else tmp_path)


@pytest.mark.parametrize("text,expected", [
    ("EqualTo(a,1)", "s1.`a` = 1"),
    ("EqualTo(s,a,b)", "s1.`s` = 'a,b'"),
    ("In(s, [x,y])", "s1.`s` IN ('x', 'y')"),
    ("And(GreaterThan(a,1),Or(IsNull(s),StringStartsWith(s,ab)))",
     "s1.`a` > 1 AND (s1.`s` IS NULL OR s1.`s` LIKE 'ab%')"),
    ("Not(EqualNullSafe(d,2024-01-02))", "NOT (s1.`d` IS NOT DISTINCT FROM CAST('2024-01-02' AS DATE))"),
    ("GreaterThan(nested.field,1)", None),   # not a column of the read schema
    ("StringContains(s,50%)", None),         # a LIKE wildcard in the value
    ("EqualTo(a,abc)", None),                # not a number
    ("Mystery(a)", None),
])
def test_pushed_filters_read_back(text, expected):
    types = read_schema("struct<a:int,s:string,d:date,m:map<string,int>>")
    assert types == {"a": "int", "s": "string", "d": "date", "m": "map<string,int>"}
    got = pushed_filter(text, types, "s1")
    assert (None if got is None else got.sql("spark")) == expected


def test_plan_query_joins_every_scan():
    plan = {"nodeName": "BroadcastHashJoin", "metadata": {}, "children": [
        scan("default.t", "struct<a:int>", "[EqualTo(a,1)]"), scan("db.u", "struct<b:string>", "[]")]}
    assert plan_query(plan).sql("spark") == ("SELECT s1.`a`, s2.`b` FROM default.t AS s1 CROSS JOIN db.u AS s2 "
                                             "WHERE s1.`a` = 1")


def test_cli_reads_event_logs_without_spark(tmp_path):
    write_log(tmp_path / "local-6", [thrift("SELECT * FROM t WHERE x = 1", 0), thrift("SELECT * FROM t WHERE x = 2", 1)])
    result = CliRunner().invoke(cli, ["analyze", "--from-eventlog", str(tmp_path), "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["queries"] == 2 and doc["tables"][0]["table"] == "t"
    both = CliRunner().invoke(cli, ["analyze", str(tmp_path / "local-6"), "--from-eventlog", str(tmp_path)])
    assert both.exit_code == 2 and "one of them" in both.stderr


# ---- a real Spark session writes the logs ---------------------------------------------------------
APP = """
import sys
from pathlib import Path
from hive_integration.spark.session import build_spark_session
from devtools.servers import free_port

state, logs = Path(sys.argv[1]), sys.argv[2]
port = free_port()
spark = build_spark_session(state, conf={
    "spark.eventLog.enabled": "true", "spark.eventLog.dir": logs,
    "spark.hadoop.hive.server2.thrift.port": str(port), "spark.hadoop.hive.server2.thrift.bind.host": "127.0.0.1",
    "spark.hadoop.hive.server2.authentication": "NOSASL", "spark.hadoop.hive.server2.transport.mode": "binary"})
spark.sql("CREATE DATABASE IF NOT EXISTS shop")
spark.sql("CREATE TABLE shop.sales (id BIGINT, day DATE, region STRING, amount DECIMAL(10,2)) STORED AS PARQUET")
spark.sql("INSERT INTO shop.sales VALUES (1, DATE '2024-01-05', 'EU', 10.5), (2, DATE '2024-02-07', 'US', 3)")
# an application's spark.sql and DataFrame calls: Spark records only their plans
spark.sql("SELECT region, sum(amount) FROM shop.sales WHERE day >= DATE '2024-02-01' GROUP BY region").collect()
spark.table("shop.sales").filter("region = 'EU' AND amount > 5").collect()
# the Thrift Server, inside this application: Spark records the statements' text
server = spark._jvm.org.apache.spark.sql.hive.thriftserver.HiveThriftServer2.startWithContext(
    spark._jsparkSession.sqlContext())
from hive_integration.metastore.hiveserver2 import HiveServer2Client
with HiveServer2Client("127.0.0.1", port) as hs2:
    hs2.execute("USE shop")
    for d in ("2024-01-01", "2024-01-02"):
        hs2.execute(f"SELECT count(*) FROM sales WHERE day = DATE '{d}'")
server.stop()
spark.stop()
"""


@pytest.mark.spark
def test_event_logs_a_real_spark_application_writes(tmp_path):
    """A separate Spark process (its own JVM, so the shared test session is not slowed by event
    logging) runs spark.sql, DataFrame and Thrift Server queries with ``spark.eventLog.enabled``."""
    logs = tmp_path / "logs"
    logs.mkdir()
    script = tmp_path / "app.py"
    script.write_text(textwrap.dedent(APP))
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, str(script), str(tmp_path / "state"), str(logs)], env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert list(logs.glob("eventlog_v2_*/events_1_*.zstd")), list(logs.rglob("*"))  # Spark 4.3's default shape
    result = CliRunner().invoke(cli, ["analyze", "--from-eventlog", str(logs), "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    (table,) = doc["tables"]
    assert table["table"] == "shop.sales"
    assert table["scans"] == 4  # two plans of the application, two Thrift Server statements
    filtered = {c["column"]: c["filtered_by"] for c in table["columns"]}
    assert filtered["day"] == 3 and filtered["region"] == 1 and filtered["amount"] == 1
    # the minimum count keeps the shape the Thrift Server ran twice
    result = CliRunner().invoke(cli, ["analyze", "--from-eventlog", str(logs), "--min-count", "2", "--format", "json"])
    assert json.loads(result.stdout)["queries"] == 2
    # the most recent query only: a sliding window of one
    result = CliRunner().invoke(cli, ["analyze", "--from-eventlog", str(logs), "--last", "1", "--format", "json"])
    assert json.loads(result.stdout)["queries"] == 1

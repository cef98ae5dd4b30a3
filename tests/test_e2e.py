"""advise -> apply -> rewritten queries, on TPC-H lineitem (SF 0.01), through the three paths.

1. Embedded (the default): the ``planner`` commands in this process, on the test run's Spark
   session and its embedded Derby metastore. Every rewritten query returns exactly what the
   original returns on the table before the layout, and every prunable one reads fewer
   partitions, by Spark's own scan metrics.
2. A standalone Hive Metastore: ``planner advise/apply`` as separate processes with
   ``--metastore thrift://…``; ``planner rewrite`` reads the layout over thrift with no Spark.
3. HiveServer2: the table loaded and queried through the Spark Thrift Server (pyhive), and
   ``planner apply --hiveserver2`` runs the DBA's path.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import sqlglot
from click.testing import CliRunner
from sqlglot import exp

import planner
from devtools.tpch_data import load_table
from hive_integration.metastore.hiveserver2 import HiveServer2Client
from hive_integration.spark.metrics import run_measured
from planner.cli.main import cli
from time_params import SLOW_SCANS_FILE

ROOT = Path(__file__).resolve().parent.parent
# Scaled to a 2 MB table of 60k rows (the defaults are for tables of millions of rows): scans priced
# 1000x slower than on the defaults' machine (tests/data/slow_scans.json), so a layout can pay.
SLOW_SCANS = str(SLOW_SCANS_FILE)
SMALL = ["--min-partition-mb", "0.03", "--row-group-rows", "1000", "--sample-rows", "20000",
         "--partition-overhead-rows", "300", "--file-overhead-rows", "100", "--calibration", SLOW_SCANS]
WORKLOAD = """
-- ship window
SELECT sum(l_extendedprice) FROM lineitem WHERE l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01';
-- ship window
SELECT sum(l_extendedprice) FROM lineitem WHERE l_shipdate >= DATE '1996-01-01' AND l_shipdate < DATE '1996-07-01';
-- q6
SELECT sum(l_extendedprice * l_discount) FROM lineitem WHERE l_shipdate >= DATE '1993-01-01'
  AND l_shipdate < DATE '1994-01-01' AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24;
-- q6
SELECT sum(l_extendedprice * l_discount) FROM lineitem WHERE l_shipdate >= DATE '1997-01-01'
  AND l_shipdate < DATE '1998-01-01' AND l_discount BETWEEN 0.02 AND 0.04 AND l_quantity < 25;
-- mode
SELECT l_shipmode, count(*) FROM lineitem WHERE l_shipmode IN ('MAIL', 'SHIP') AND l_receiptdate >= DATE '1994-01-01'
  AND l_receiptdate < DATE '1995-01-01' GROUP BY l_shipmode;
-- late
SELECT count(*) FROM lineitem WHERE l_commitdate < l_receiptdate AND l_shipdate >= DATE '1995-01-01'
  AND l_shipdate < DATE '1995-04-01';
"""
# Queries that were not in the workload: joins, CTEs, subqueries, NULL tests, and one that
# cannot be pruned at all.
HELD_OUT = [
    "SELECT count(*), sum(l_quantity) FROM lineitem WHERE l_shipdate BETWEEN DATE '1995-03-01' AND DATE '1995-09-30'",
    "SELECT l_returnflag, count(*) FROM lineitem WHERE l_shipdate < DATE '1993-06-01' OR l_shipdate IS NULL "
    "GROUP BY l_returnflag",
    "WITH w AS (SELECT * FROM lineitem WHERE l_shipdate >= DATE '1998-01-01') "
    "SELECT count(*), min(l_orderkey) FROM w WHERE l_quantity > 40",
    "SELECT a.l_orderkey, count(*) FROM lineitem a JOIN lineitem b ON a.l_orderkey = b.l_orderkey "
    "WHERE a.l_shipdate < DATE '1992-06-01' AND b.l_shipdate >= DATE '1998-06-01' GROUP BY a.l_orderkey",
    "SELECT count(*) FROM lineitem WHERE l_orderkey IN (SELECT l_orderkey FROM lineitem "
    "WHERE l_receiptdate >= DATE '1996-02-01' AND l_receiptdate < DATE '1996-03-01')",
    "SELECT count(*) FROM lineitem WHERE l_comment LIKE '%fluffily%'",
]


def queries() -> list[str]:
    """The workload's queries (comments dropped) and the held-out ones."""
    workload = ["\n".join(line for line in q.strip().splitlines() if not line.startswith("--"))
                for q in WORKLOAD.split(";")]
    return [q for q in workload if q] + HELD_OUT


def rows(result) -> list:
    return sorted((tuple(str(v) for v in r) for r in result), key=repr)


def with_table(sql: str, table: str) -> str:
    """``sql`` reading ``table`` wherever it reads ``lineitem`` (keeping column qualifiers valid)."""
    db, _, name = table.rpartition(".")

    def swap(node):
        if isinstance(node, exp.Table) and node.name.lower() == "lineitem":
            node = node.copy()
            if not node.alias:
                node.set("alias", exp.TableAlias(this=exp.to_identifier("lineitem")))
            node.set("this", exp.to_identifier(name))
            node.set("db", exp.to_identifier(db))
        return node

    return sqlglot.parse_one(sql, read="hive").transform(swap).sql(dialect="spark")


def invoke(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def backup_of(tables: set[str]) -> str:
    (name,) = [t for t in tables if t.startswith("lineitem__before_")]
    return name


# ---- 1. embedded ----------------------------------------------------------------------------------
def test_embedded_advise_apply_rewrite(spark, tpch_small, tmp_path, fresh_db):
    table = f"{fresh_db}.lineitem"
    load_table(spark, tpch_small, table, row_group_bytes=64 * 1024)
    # The commands run in this process, on this session's catalog (its state directory).
    state = ["--state-dir", str(Path(spark.conf.get("spark.sql.warehouse.dir").removeprefix("file:")).parent)]
    wl = tmp_path / "workload.sql"
    wl.write_text(WORKLOAD.replace("FROM lineitem", f"FROM {table}"))
    advice = tmp_path / "advice"
    # At SF 0.01 the guard keeps the table as loaded (its l_orderkey order serves ranges of keys
    # better than any layout this workload wants): allow regressions to exercise the whole path.
    invoke("advise", str(wl), "--table", table, "--out", str(advice), *SMALL, "--allow-regressions", *state)
    assert {p.name for p in advice.iterdir()} >= {"ddl.sql", "apply.sql", "layout.json", "report.md"}
    layout = json.loads((advice / "layout.json").read_text())
    assert len(layout["partitions"]) > 1
    invoke("apply", str(advice), *state)
    backup = f"{fresh_db}." + backup_of({r.tableName for r in spark.sql(f"SHOW TABLES IN {fresh_db}").collect()})
    # the backup apply kept is the one the advice folder names (for the DBA's rollback)
    assert f"`{backup.replace('.', '`.`')}`" in (advice / "report.md").read_text()
    assert f"RENAME TO `{backup.replace('.', '`.`')}`" in (advice / "apply.sql").read_text()

    qfile = tmp_path / "queries.sql"
    qfile.write_text(";\n".join(queries()) + ";\n")
    out = invoke("rewrite", str(qfile), "--database", fresh_db, "--format", "json", *state)
    rewritten = [s["sql"] for s in json.loads(out[out.index("["):])]
    explained = invoke("explain", str(qfile), "--database", fresh_db, *state)
    assert "pruned by" in explained and "partitions" in explained

    spark.catalog.setCurrentDatabase(fresh_db)
    try:
        pruned = 0
        for original, new in zip(queries(), rewritten):
            want, before = run_measured(spark, with_table(original, backup))
            got, after = run_measured(spark, new)
            assert rows(got) == rows(want), (original, new)
            assert rows(planner.sql(spark, original).collect()) == rows(want)
            parts_after = sum(m.partitions or 0 for m in after if m.table == table)
            total = len(layout["partitions"]) + 1  # the catch-all is always there
            if new != original:
                pruned += 1
                reads = sum(1 for m in after if m.table == table)
                assert parts_after < total * reads, (new, parts_after, after)
                assert sum(m.rows for m in after) < sum(m.rows for m in before), new
        assert pruned >= len(queries()) - 2  # all but the LIKE query (and maybe the IN subquery)
    finally:
        spark.catalog.setCurrentDatabase("default")


# ---- 2 and 3: standalone metastore and HiveServer2 ------------------------------------------------
# What a command may print on stderr besides its own lines: nothing from the JVM's start-up, nothing
# that looks like a failure (the SETs of the emitted SQL are fine on Spark).
NOISE = ("WARNING: Using incubator modules", "WARN SetCommand", "ERROR", "Exception", "\tat ")


def planner_cli(*args: str, cwd: Path) -> str:
    env = dict(os.environ, PYTHONPATH=str(ROOT), PLANNER_PLAIN="1")
    proc = subprocess.run([sys.executable, "-m", "planner.cli", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, f"planner {' '.join(args)} failed:\n{proc.stderr[-3000:]}"
    noise = [line for line in proc.stderr.splitlines() if any(n in line for n in NOISE)]
    assert not noise, f"planner {args[0]} printed:\n" + "\n".join(noise[:10])
    return proc.stdout


@pytest.fixture(scope="module")
def shared_lineitem(thrift_server, tpch_small):
    """``e2e.lineitem`` created through HiveServer2, in the standalone metastore."""
    with HiveServer2Client(thrift_server.host, thrift_server.port) as hs2:
        hs2.execute("CREATE DATABASE IF NOT EXISTS e2e")
        path = exp.Literal.string(str(tpch_small)).sql("spark")
        for t in ("lineitem", "lineitem_src"):
            hs2.execute(f"DROP TABLE IF EXISTS e2e.{t}")
        hs2.execute(f"CREATE TABLE e2e.lineitem_src USING parquet LOCATION {path}")
        hs2.execute("CREATE TABLE e2e.lineitem STORED AS PARQUET AS SELECT * FROM e2e.lineitem_src")
    return "e2e.lineitem"


def hs2_rows(thrift_server, sql: str) -> list:
    with HiveServer2Client(thrift_server.host, thrift_server.port, database="e2e") as hs2:
        return rows(hs2.execute(sql))


@pytest.mark.parametrize("path", ["metastore", "hiveserver2"])
def test_standalone_metastore_and_hiveserver2(path, metastore, thrift_server, shared_lineitem, tmp_path):
    table = shared_lineitem
    wl = tmp_path / "workload.sql"
    wl.write_text(WORKLOAD.replace("FROM lineitem", f"FROM {table}"))
    advice = tmp_path / "advice"
    state = ["--metastore", metastore.uri, "--state-dir", str(tmp_path / "state")]
    planner_cli("advise", str(wl), "--table", table, "--out", str(advice), *SMALL, *state, cwd=tmp_path)
    if path == "metastore":
        planner_cli("apply", str(advice), *state, cwd=tmp_path)
    else:
        planner_cli("apply", str(advice), "--hiveserver2", f"{thrift_server.host}:{thrift_server.port}", cwd=tmp_path)
    with HiveServer2Client(thrift_server.host, thrift_server.port) as hs2:
        names = {r[1] for r in hs2.execute("SHOW TABLES IN e2e")}
    backup = "e2e." + backup_of(names)

    # The rewrite reads the layout from the metastore over thrift: no Spark in this process.
    qfile = tmp_path / "queries.sql"
    qfile.write_text(";\n".join(queries()) + ";\n")
    out = planner_cli("rewrite", str(qfile), "--database", "e2e", "--metastore", metastore.uri, "--format", "json",
                      cwd=tmp_path)
    rewritten = [s["sql"] for s in json.loads(out)]
    assert sum(new != old for new, old in zip(rewritten, queries())) >= len(queries()) - 2
    for original, new in zip(queries(), rewritten):
        assert hs2_rows(thrift_server, new) == hs2_rows(thrift_server, with_table(original, backup)), new
    with HiveServer2Client(thrift_server.host, thrift_server.port) as hs2:  # next parametrization starts clean
        hs2.execute(f"DROP TABLE {backup}")
        hs2.execute("DROP TABLE e2e.lineitem")
        hs2.execute("CREATE TABLE e2e.lineitem STORED AS PARQUET AS SELECT * FROM e2e.lineitem_src")


# ---- appends ---------------------------------------------------------------------------------------
def test_append_lands_rows_in_their_partitions(spark, fresh_db, tmp_path):
    from hive_integration.apply.apply_layout import (
        OWNER,
        Catalog,
        SparkRunner,
        TableNames,
        acquire_lease,
        apply_layout,
    )
    from planner.cnf.valueset import ValueSet
    from planner.model.layout import Layout, Partition
    from planner.semantics.kinds import Kind

    t, batch = f"{fresh_db}.t", f"{fresh_db}.batch"
    spark.sql(f"CREATE TABLE {t} (k INT, s STRING) STORED AS PARQUET")
    spark.sql(f"INSERT INTO {t} VALUES (1, 'a'), (50, 'b'), (NULL, 'c')")
    r = lambda lo, hi: ValueSet.range(Kind.INTEGER, lo, hi, True, False)  # noqa: E731
    layout = Layout(t, "hand-built", (Partition(1, (("k", r(None, 10)),)), Partition(2, (("k", r(10, None)),)),
                                      Partition(3, (("k", ValueSet.only_null(Kind.INTEGER)),))),
                    kinds=(("k", Kind.INTEGER),))
    apply_layout(SparkRunner(spark), layout, drop_old=True)
    spark.sql(f"CREATE TABLE {batch} (k INT, s STRING) STORED AS PARQUET")
    spark.sql(f"INSERT INTO {batch} VALUES (2, 'it''s'), (99, 'x'), (NULL, 'n')")
    state = ["--state-dir", str(Path(spark.conf.get("spark.sql.warehouse.dir").removeprefix("file:")).parent)]
    printed = invoke("append", batch, "--into", t, "--print-sql", *state)
    assert "INSERT INTO" in printed and "CASE WHEN" in printed
    assert "appended 3 rows" in invoke("append", batch, "--into", t, *state)
    got = {(r.k, r.s, r.planner_pid) for r in spark.sql(f"SELECT k, s, planner_pid FROM {t}").collect()}
    assert got == {(1, "a", 1), (50, "b", 2), (None, "c", 3), (2, "it's", 1), (99, "x", 2), (None, "n", 3)}
    spark.sql(f"CREATE TABLE {fresh_db}.wrong (k STRING) STORED AS PARQUET")
    bad = CliRunner().invoke(cli, ["append", f"{fresh_db}.wrong", "--into", t, *state])
    assert bad.exit_code != 0 and "lacks or mistypes" in bad.output and "Traceback" not in bad.output
    # the lease is released after the append ...
    assert OWNER not in {r[0] for r in spark.sql(f"SHOW TBLPROPERTIES {t}").collect()}
    # ... and an apply running now (it holds the lease) makes the append wait, not lose its rows in the swap
    owner = acquire_lease(Catalog(SparkRunner(spark), TableNames.of(t)), t.split(".")[1])
    refused = CliRunner().invoke(cli, ["append", batch, "--into", t, *state])
    assert refused.exit_code != 0 and "is being applied by another run" in refused.output
    assert "Traceback" not in refused.output and spark.table(t).count() == 6
    other = CliRunner().invoke(cli, ["append", batch, "--into", t, "--break-lease", *state])
    assert "appended 3 rows" in other.output and spark.table(t).count() == 9
    assert owner and OWNER not in {r[0] for r in spark.sql(f"SHOW TBLPROPERTIES {t}").collect()}


# ---- advise without --table: every table the workload reads, ranked ----------------------------------
def test_advise_every_table_the_workload_reads(spark, tpch_small, tmp_path, fresh_db):
    table = f"{fresh_db}.lineitem"
    load_table(spark, tpch_small, table, row_group_bytes=64 * 1024)
    spark.sql(f"CREATE TABLE {fresh_db}.nation (n_nationkey INT, n_name STRING) STORED AS PARQUET")
    spark.sql(f"INSERT INTO {fresh_db}.nation VALUES (1, 'FRANCE'), (2, 'GERMANY')")
    state = ["--state-dir", str(Path(spark.conf.get("spark.sql.warehouse.dir").removeprefix("file:")).parent)]
    wl = tmp_path / "workload.sql"
    wl.write_text(f"use {fresh_db};\n" + WORKLOAD +
                  "SELECT n_name, count(*) FROM nation JOIN lineitem ON n_nationkey = l_suppkey GROUP BY n_name;\n"
                  "SELECT * FROM scratch_tmp WHERE x = 1;\n")
    # at SF 0.01 the guard keeps lineitem as loaded (tests/test_guard.py); ranking tables is tested here
    # (a 2 MB table saves the workload well under a second: --min-saving 0 keeps it in the ranking)
    out = invoke("advise", str(wl), "--out-dir", str(tmp_path / "advice"), "--format", "json", *SMALL,
                 "--min-saving", "0", "--allow-regressions", *state)
    doc = json.loads(out[out.index("{"):])
    by_table = {t["table"]: t for t in doc["tables"]}
    assert [t["table"] for t in doc["tables"]][0] == table  # the most to gain first
    assert by_table[table]["advised"] and by_table[table]["gain"] >= 1.25  # estimated time, as it is / laid out
    assert (tmp_path / "advice" / table / "layout.json").exists()
    assert not by_table[f"{fresh_db}.nation"]["advised"]
    assert "no query filters any of its columns" in by_table[f"{fresh_db}.nation"]["reason"]
    assert "not a table in the metastore" in by_table[f"{fresh_db}.scratch_tmp"]["reason"]
    text = invoke("advise", str(wl), "--out-dir", str(tmp_path / "again"), *SMALL, "--min-saving", "0",
                  "--allow-regressions", *state)
    assert "left alone: no query filters any of its columns" in text and f"advised: {tmp_path / 'again' / table}/" in text

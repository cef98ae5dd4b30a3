"""The aggregate index and join ranges on the DBA's path, with no Spark in the planner's process:
``planner apply --hiveserver2 … --metastore thrift://…`` builds them through the Spark Thrift
Server (``hive_integration.metastore.hiveserver2_builds``), ``planner rewrite``/``explain`` over
thrift use them (the tables' files listed with pyarrow, ``hive_integration.metastore.file_catalog``),
the rewritten text run through HiveServer2 gives the plain tables' answers, and a write that
bypasses the planner stops their use by the next rewrite.
"""
from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal

import pytest
from click.testing import CliRunner
from sqlglot import exp

from hive_integration.metastore.hiveserver2 import HiveServer2Client
from planner.cli.main import cli
from planner.cnf.valueset import ValueSet
from planner.emit.advice_folder import write_advice_folder
from planner.model.aggregate_index import AggregateIndex, GridDim, IndexedExpr
from planner.model.join_paths import Hop, JoinColumn, JoinPath
from planner.model.layout import Layout, Ordering, Partition, with_generation
from planner.pruning.join_pruning import with_join_columns
from planner.semantics.kinds import Kind

DB = "dbaidx"
COLUMNS = {"k": "bigint", "i": "int", "d": "decimal(12,2)", "dt": "date", "s": "string"}
QUERIES = [
    f"SELECT sum(d), count(*), min(dt) FROM {DB}.t WHERE dt >= DATE '2020-03-01' AND dt < DATE '2020-09-01'",
    f"SELECT s, sum(d), avg(d), count(d) FROM {DB}.t WHERE d >= 10 AND d < 60 GROUP BY s ORDER BY s",
    f"SELECT sum(i), max(d) FROM {DB}.t WHERE dt >= DATE '2020-02-01' AND d < 40",
]


def _layout(table: str) -> Layout:
    K = Kind.INTEGER
    below, above = ValueSet.range(K, None, 50, True, False), ValueSet.range(K, 50, None, True, False)
    index = AggregateIndex(
        dims=(GridDim("dt", "date", tuple(dt.date(2020, m, 1) for m in range(2, 13))),
              GridDim("d", "decimal(12,2)", tuple(Decimal(v) for v in range(0, 100, 10)), by_value=True)),
        groups=(("s", "string"),),
        exprs=(IndexedExpr("`d`", "decimal(12,2)"), IndexedExpr("`dt`", "date"), IndexedExpr("`i`", "int")))
    return with_generation(Layout(table, "ranges of i", (Partition(1, (("i", below),)),
                                                         Partition(2, (("i", above.union(ValueSet.only_null(K))),))),
                                  Ordering("sort", ("dt",)), kinds=(("i", K),), types=(("i", "int"),),
                                  aggregate_index=index))


def _hs2(server):
    return HiveServer2Client(server.host, server.port)


def _rows(server, sql: str) -> list:
    with _hs2(server) as hs2:
        return [tuple(str(v) for v in r) for r in hs2.execute(sql)]


@pytest.fixture(scope="module")
def table(thrift_server):
    with _hs2(thrift_server) as hs2:
        hs2.execute(f"CREATE DATABASE IF NOT EXISTS {DB}")
    _drop_tables(thrift_server)
    with _hs2(thrift_server) as hs2:
        cols = ", ".join(f"{c} {t}" for c, t in COLUMNS.items())
        hs2.execute(f"CREATE TABLE {DB}.t ({cols}) STORED AS PARQUET")
        # 3,000 rows; NULLs in every column but k
        hs2.execute(f"""INSERT INTO {DB}.t SELECT id,
            IF(id % 17 = 0, NULL, CAST(id % 100 AS INT)),
            IF(id % 19 = 0, NULL, CAST((id * 7) % 10000 / 100 AS DECIMAL(12,2))),
            IF(id % 23 = 0, NULL, date_add(DATE '2020-01-01', CAST(id % 366 AS INT))),
            IF(id % 29 = 0, NULL, concat('s', CAST(id % 3 AS STRING)))
            FROM range(3000)""")
        hs2.execute(f"CREATE TABLE {DB}.plain STORED AS PARQUET AS SELECT * FROM {DB}.t")
    yield f"{DB}.t"
    _drop_tables(thrift_server)  # the database stays (dropping it through this server fails: NoSuchObject)


def _drop_tables(server) -> None:
    with _hs2(server) as hs2:
        for row in hs2.execute(f"SHOW TABLES IN {DB}"):
            hs2.execute(f"DROP TABLE {DB}.{row[1]}")


def _cli(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    return result.output


def _explained(queries, metastore) -> list[dict]:
    out = _cli("explain", str(queries), "--metastore", metastore.uri, "--format", "json")
    return [s.get("aggregate_index") or {} for s in json.loads(out[out.index("["):])]


def test_the_dba_path_builds_the_index_and_answers_from_it_without_spark(thrift_server, metastore, table, tmp_path):
    advice = write_advice_folder(tmp_path / "advice", _layout(table), COLUMNS)
    applied = _cli("apply", str(advice), "--hiveserver2", f"{thrift_server.host}:{thrift_server.port}",
                   "--metastore", metastore.uri)
    assert f"aggregate index of {table} built" in applied, applied
    queries = tmp_path / "q.sql"
    queries.write_text(";\n".join(QUERIES) + ";\n")

    # rewritten over thrift, with no JVM in this process: the interior cells come from the index
    assert [e.get("used") for e in _explained(queries, metastore)] == [True, True, True]
    out = _cli("rewrite", str(queries), "--metastore", metastore.uri, "--format", "json")
    rewritten = [s["sql"] for s in json.loads(out[out.index("["):])]
    assert all("t__cells" in sql for sql in rewritten)
    for sql, new in zip(QUERIES, rewritten):
        assert _rows(thrift_server, new) == _rows(thrift_server, sql.replace(f"{DB}.t ", f"{DB}.plain ")), new

    # a write that bypasses the planner: the next rewrite sees the files changed, and scans
    rows = {1: "(90001, 5, 25.00, DATE '2020-04-04', 's1')", 2: "(90002, 70, 55.50, DATE '2020-07-07', NULL)"}
    with _hs2(thrift_server) as hs2:
        for pid, row in rows.items():
            hs2.execute(f"INSERT INTO {DB}.t PARTITION (planner_pid = {pid}) VALUES {row}")
            hs2.execute(f"INSERT INTO {DB}.plain VALUES {row}")
    after = _explained(queries, metastore)
    assert not any(e.get("used") for e in after)
    assert all("changed since the index was built" in e.get("reason", "") for e in after), after
    out = _cli("rewrite", str(queries), "--metastore", metastore.uri, "--format", "json")
    for sql, new in zip(QUERIES, [s["sql"] for s in json.loads(out[out.index("["):])]):
        assert _rows(thrift_server, new) == _rows(thrift_server, sql.replace(f"{DB}.t ", f"{DB}.plain ")), new

    # texts saved before a write that bypasses the planner still read the build's cells (SQL saved
    # earlier cannot see such a write): they miss rows written into cells the index answers. The
    # invalidation `append` and `relayout` run before they write, through the server, points the
    # build's view at the table: the same saved texts then agree with the table as it is
    from hive_integration.spark.cells import invalidate

    assert all("t__cells_" in sql for sql in rewritten)
    with _hs2(thrift_server) as hs2:  # rows in the layout's own partitions, in cells the index answers
        hs2.execute("SET hive.exec.dynamic.partition.mode=nonstrict")
        hs2.execute(f"INSERT INTO {DB}.t PARTITION (planner_pid) SELECT k + 100000, i, d, dt, s, planner_pid "
                    f"FROM {DB}.t WHERE d >= 20 AND d < 30 AND k < 90000")
        hs2.execute(f"INSERT INTO {DB}.plain SELECT k + 100000, i, d, dt, s FROM {DB}.plain "
                    "WHERE d >= 20 AND d < 30 AND k < 90000")
    plain = [_rows(thrift_server, sql.replace(f"{DB}.t ", f"{DB}.plain ")) for sql in QUERIES]
    assert any(_rows(thrift_server, new) != want for new, want in zip(rewritten, plain))  # stale until then
    with _hs2(thrift_server) as hs2:
        invalidate(hs2.execute, table)
    for new, want in zip(rewritten, plain):
        assert _rows(thrift_server, new) == want, new


def test_without_the_metastore_the_apply_says_why_the_index_is_not_built(thrift_server, table, tmp_path):
    with _hs2(thrift_server) as hs2:
        hs2.execute(f"CREATE TABLE {DB}.u STORED AS PARQUET AS SELECT * FROM {DB}.plain")
    advice = write_advice_folder(tmp_path / "advice", _layout(f"{DB}.u"), COLUMNS)
    applied = _cli("apply", str(advice), "--hiveserver2", f"{thrift_server.host}:{thrift_server.port}")
    assert "aggregate index not built: through HiveServer2 it needs the metastore" in applied, applied


# ---- join ranges ------------------------------------------------------------------------------------
DAY0 = dt.date(2020, 1, 1)
FLAGS = ("a'b", 'q"x', None)  # quotes: Spark's rendering of an array would not escape them


def _dim_rows() -> list[tuple]:
    """``dim``: a unique key ``ok``; its date, a flag (a set of few values, NULL among them), a category."""
    return [(ok, DAY0 + dt.timedelta(days=ok), FLAGS[ok % 3], ok % 4) for ok in range(1, 41)]


def _fact_rows() -> list[tuple]:
    """``fact``: each row's ``ok`` joins ``dim`` (but every 50th, which joins nothing); its date
    follows its partner's by two days, so the partitions of ``dt`` see disjoint ranges of ``odate``."""
    out = []
    for k in range(1, 201):
        ok = k % 40 + 1
        out.append((k, 999 if k % 50 == 0 else ok, Decimal(k) / 10, DAY0 + dt.timedelta(days=ok + 2)))
    return out


def _sql_value(v) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, dt.date):
        return f"DATE '{v.isoformat()}'"
    if isinstance(v, str):
        return exp.Literal.string(v).sql("spark")
    return str(v)


def _values(rows) -> str:
    return ", ".join("(" + ", ".join(_sql_value(v) for v in r) + ")" for r in rows)


JOIN_COLUMNS = tuple(JoinColumn(JoinPath((Hop("ok", f"{DB}.dim", "ok"),)), c) for c in ("odate", "flag", "cat"))
CUT = DAY0 + dt.timedelta(days=20)


def _fact_layout() -> Layout:
    D = Kind.DATE
    below = ValueSet.range(D, None, CUT, True, False)
    rest = ValueSet.range(D, CUT, None, True, False).union(ValueSet.only_null(D))
    layout = Layout(f"{DB}.fact", "dates", (Partition(1, (("dt", below),)), Partition(2, (("dt", rest),))),
                    kinds=(("dt", D),), types=(("dt", "date"),))
    return with_join_columns(with_generation(layout), JOIN_COLUMNS)


def _expected(pid: int) -> dict[str, ValueSet]:
    """What the ranges of partition ``pid`` must hold, from the rows themselves."""
    dim = {r[0]: r for r in _dim_rows()}
    partners = [dim[ok] for _, ok, _, d in _fact_rows() if (d < CUT) == (pid == 1) and ok in dim]
    dates = [p[1] for p in partners]
    flags = {p[2] for p in partners}
    return {"odate": ValueSet.range(Kind.DATE, min(dates), max(dates)),
            "flag": ValueSet.points(Kind.STRING, sorted(f for f in flags if f is not None)).union(
                ValueSet.only_null(Kind.STRING) if None in flags else ValueSet.nothing(Kind.STRING)),
            "cat": ValueSet.points(Kind.INTEGER, sorted({p[3] for p in partners}))}


JOIN_QUERIES = [
    f"SELECT count(*), sum(f.v) FROM {DB}.fact f JOIN {DB}.dim d ON f.ok = d.ok "
    "WHERE d.odate < DATE '2020-01-10'",
    f"SELECT d.flag, count(*) FROM {DB}.fact f JOIN {DB}.dim d ON f.ok = d.ok "
    "WHERE d.odate >= DATE '2020-01-25' AND d.flag = 'a\\'b' GROUP BY d.flag",
    f"SELECT count(*) FROM {DB}.fact f JOIN {DB}.dim d ON f.ok = d.ok WHERE d.flag = 'a\\'b\\''",  # in no set
]


def test_the_dba_path_records_join_ranges_and_prunes_by_them_without_spark(thrift_server, metastore, table,
                                                                          tmp_path):
    from hive_integration.metastore.thrift_client import MetastoreClient
    from planner.pruning.join_pruning import JoinRanges

    with _hs2(thrift_server) as hs2:
        hs2.execute(f"CREATE TABLE {DB}.dim (ok BIGINT, odate DATE, flag STRING, cat INT) STORED AS PARQUET")
        hs2.execute(f"INSERT INTO {DB}.dim VALUES {_values(_dim_rows())}")
        for t in ("fact", "fact_plain"):
            hs2.execute(f"CREATE TABLE {DB}.{t} (k BIGINT, ok BIGINT, v DECIMAL(12,2), dt DATE) STORED AS PARQUET")
            hs2.execute(f"INSERT INTO {DB}.{t} VALUES {_values(_fact_rows())}")
    advice = write_advice_folder(tmp_path / "advice", _fact_layout(),
                                 {"k": "bigint", "ok": "bigint", "v": "decimal(12,2)", "dt": "date"})
    applied = _cli("apply", str(advice), "--hiveserver2", f"{thrift_server.host}:{thrift_server.port}",
                   "--metastore", metastore.uri)
    assert f"join ranges recorded for 3 joined column(s) of {DB}.fact" in applied, applied
    with MetastoreClient(metastore.uri) as client:
        ranges = JoinRanges.from_properties(client.table_parameters(DB, "fact"))
    got = {(r.column.column, pid): vs for r in ranges.columns for pid, vs in r.partitions}
    ids = sorted({pid for _, pid in got})  # the layout's generation numbers its partitions
    for n, pid in enumerate(ids, 1):
        for column, want in _expected(n).items():
            assert got[(column, pid)] == want, (column, n)

    queries = tmp_path / "joins.sql"
    queries.write_text(";\n".join(JOIN_QUERIES) + ";\n")
    out = _cli("explain", str(queries), "--metastore", metastore.uri, "--format", "json")
    reads = [s["scans"][0] for s in json.loads(out[out.index("["):])]
    # of the layout's two partitions (the catch-all partition 0, always read, is empty)
    assert [len([p for p in r["partitions_read"] if p]) for r in reads] == [1, 1, 0], reads
    out = _cli("rewrite", str(queries), "--metastore", metastore.uri, "--format", "json")
    for sql, new in zip(JOIN_QUERIES, [s["sql"] for s in json.loads(out[out.index("["):])]):
        assert new != sql
        assert _rows(thrift_server, new) == _rows(thrift_server, sql.replace(f"{DB}.fact ", f"{DB}.fact_plain ")), new

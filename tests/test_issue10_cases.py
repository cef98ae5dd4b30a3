"""The eight wrong answers of issue 10, each through real Spark: advise -> apply -> planner.sql and
the rewritten SQL, compared with the table as it was (the ``__before_`` backup apply keeps).

Every case asserts equal rows, and that the query either pruned (Spark read fewer files than the
table has) or was reported opaque with the reason. Each case lays out its own copy of one small
table whose columns have the issue's types, with the partition overheads set to zero so that the
advised layout cuts at exactly the values the case is about.

    1  CAST('1.005' AS DECIMAL(15,2)) is 1.01 (HALF_UP), not 1.005
    2  1.0/3 is DECIMAL(7,6) 0.333333; 1/3 is a DOUBLE
    3  a DECIMAL column against a string is compared as DOUBLE
    4  CHAR(10) 'abc' equals 'abc' (Spark pads the literal)
    5  FLOAT is binary32: f = CAST(0.1 AS FLOAT) holds for 0.1f, f = 0.1 does not
    6  TIMESTAMP bounds mean the same instants in every session time zone
    7  a CHAR column is read with the same type by advise and apply
    8  saved rewritten SQL after a re-layout and a rollback: right rows, never a wrong subset
"""
from __future__ import annotations

import datetime as dt
import itertools
from dataclasses import replace

import pytest
from rewrite_entry import explain_query, rewrite_query

import planner
from hive_integration.apply.apply_layout import SparkRunner, apply_layout
from hive_integration.metastore.layouts import session_settings
from hive_integration.spark.statistics_pass import gather_stats, table_schema
from planner.advice.ranking import advise
from planner.analysis.table_analysis import analyze_table
from planner.cli.apply import ddl_columns
from planner.costmodel.cost import CostParams
from planner.emit.advice_folder import write_advice_folder
from planner.model.layout import Layout
from planner.workload import Schema, parse_workload
from time_params import ROWS_AS_SECONDS

DB = "issue10"
COLUMNS = "k INT, d DECIMAL(15,2), x DECIMAL(15,6), y DECIMAL(15,3), c CHAR(10), f FLOAT, ts TIMESTAMP"
PARAMS = dict(partition_overhead_rows=0.0, file_overhead_rows=0.0, min_partition_bytes=1, target_file_bytes=1 << 30,
              row_group_rows=1000, max_partitions=12, allow_regressions=True,
              time=ROWS_AS_SECONDS)  # tiny table: the guard would keep it
UTC = dt.timezone.utc
STAMPS = [dt.datetime(2019, 12, 31, 14), dt.datetime(2019, 12, 31, 15), dt.datetime(2019, 12, 31, 16),
          dt.datetime(2020, 1, 1, 7), dt.datetime(2020, 1, 1, 8), dt.datetime(2020, 1, 1, 9)]  # UTC instants
_names = itertools.count(1)


def _rows(n: int = 600):
    ds = ["0.99", "1.00", "1.01", "1.02", "2.50", None]
    xs = ["0.333332", "0.333333", "0.333334", "0.500000", None]
    ys = ["1.004", "1.005", "1.006", "2.000", None]
    cs = ["abc", "abd", "xyz", "ab", None]
    fs = ["CAST(0.1 AS FLOAT)", "CAST(0.2 AS FLOAT)", "CAST(0.3 AS FLOAT)", "CAST(1.5 AS FLOAT)", "NULL"]
    out = []
    for k in range(n):
        d, x, y, c = ds[k % 6], xs[k % 5], ys[k % 4], cs[k % 5]
        ts = STAMPS[k % 6] if k % 7 else None
        out.append(f"({k}, {d or 'NULL'}, {x or 'NULL'}, {y or 'NULL'}, {repr(c) if c else 'NULL'}, {fs[k % 5]}, "
                   + (f"TIMESTAMP '{ts.isoformat(sep=' ')}+00:00'" if ts else "NULL") + ")")
    return out


@pytest.fixture(scope="module")
def base(spark):
    spark.sql(f"CREATE DATABASE IF NOT EXISTS {DB}")
    spark.sql(f"DROP TABLE IF EXISTS {DB}.base")
    spark.sql(f"CREATE TABLE {DB}.base ({COLUMNS}) STORED AS PARQUET")
    spark.sql(f"INSERT INTO {DB}.base VALUES {', '.join(_rows())}")
    saved = {k: spark.conf.get(k) for k in ("spark.sql.session.timeZone", "spark.sql.ansi.enabled")}
    yield f"{DB}.base"
    for k, v in saved.items():
        spark.conf.set(k, v)
    spark.sql(f"DROP DATABASE IF EXISTS {DB} CASCADE")


def lay_out(spark, base: str, workload: list[str], *, via_advice_folder=None) -> tuple[str, Layout, str]:
    """A copy of ``base`` advised on ``workload`` and applied; (table, layout, backup)."""
    src = f"{DB}.t{next(_names)}"
    spark.sql(f"CREATE TABLE {src} LIKE {base}")
    spark.sql(f"INSERT INTO {src} SELECT * FROM {base}")
    return (src, *relayout(spark, src, workload, via_advice_folder=via_advice_folder))


def relayout(spark, src: str, workload: list[str], *, via_advice_folder=None) -> tuple[Layout, str]:
    """Advise ``src`` on ``workload`` and apply it (``src`` may already be laid out)."""
    columns = table_schema(spark, src)
    current = columns.pop("planner_pid", None)
    text = ";\n".join(q.format(t=src) for q in workload)
    wl = parse_workload(text, "w.sql", dialect="spark", schema=Schema({src: columns}), tables=[src])
    analysis = analyze_table(wl, src, columns, settings=session_settings(spark))
    advice = advise(wl, analysis, gather_stats(spark, src), CostParams(**PARAMS))
    layout = replace(advice.layout, table=src)
    expected = None
    if via_advice_folder is not None:  # what `planner apply ADVICE_DIR` checks the table against
        write_advice_folder(via_advice_folder, layout, columns, advice)
        expected = ddl_columns(via_advice_folder, layout)
    assert current is None or expected is None
    report = apply_layout(SparkRunner(spark), layout, expected_columns=expected)
    return layout, report.backup


def rows(spark, sql: str, *, through_planner: bool = False):
    df = planner.sql(spark, sql) if through_planner else spark.sql(sql)
    return sorted(map(tuple, df.collect()), key=repr)


def files(spark, sql: str) -> int:
    return len(spark.sql(sql).inputFiles())


def check(spark, src: str, backup: str, layout: Layout, where: str) -> str:
    """The query on the laid-out table gives the backup's rows, through planner.sql and through the
    saved rewrite; returns 'pruned' or the reason it was not."""
    query = f"SELECT * FROM {src} WHERE {where}"
    want = rows(spark, f"SELECT * FROM {backup} WHERE {where}")
    assert want, f"the case's rows exist: {where}"
    assert rows(spark, query, through_planner=True) == want, where
    saved, notes = rewrite_query(query, {src: layout}, dialect="spark", schema={src: table_schema(spark, src)})
    assert rows(spark, saved) == want, saved
    (note,) = notes
    if note.rewritten and len(note.partitions_read) < note.partitions_total:
        whole = files(spark, f"SELECT * FROM {src}")
        zone = spark.conf.get("spark.sql.session.timeZone")
        if note.guard and note.guard != f"time zone {zone}":
            assert files(spark, saved) == whole, "in another zone the guard reads every partition"
        else:
            assert files(spark, saved) < whole, "Spark pruned"
        assert len(planner.sql(spark, query).inputFiles()) < whole, "planner.sql pruned"
        return "pruned"
    (scan,) = explain_query(query, {src: layout}, dialect="spark", schema={src: table_schema(spark, src)})
    assert scan.predicates_not_used, (where, note)
    return scan.predicates_not_used[0][1]


def test_case_1_decimal_cast_rounds_half_up(spark, base):
    src, layout, backup = lay_out(spark, base, ["SELECT * FROM {t} WHERE d = 1.01", "SELECT * FROM {t} WHERE d < 1.01",
                                                 "SELECT * FROM {t} WHERE d > 1.01"])
    assert "d" in layout.attributes
    assert check(spark, src, backup, layout, "d = CAST('1.005' AS DECIMAL(15,2))") == "pruned"


def test_case_2_division_has_spark_result_types(spark, base):
    src, layout, backup = lay_out(spark, base, ["SELECT * FROM {t} WHERE x >= 0.333333",
                                                 "SELECT * FROM {t} WHERE x < 0.333333"])
    assert "x" in layout.attributes
    assert check(spark, src, backup, layout, "x >= 1.0/3") == "pruned"  # DECIMAL(7,6) 0.333333
    assert check(spark, src, backup, layout, "x < 1/3") == "pruned"      # DOUBLE 0.333...


def test_case_3_decimal_against_string_compares_as_double(spark, base):
    src, layout, backup = lay_out(spark, base, ["SELECT * FROM {t} WHERE y <= 1.005",
                                                 "SELECT * FROM {t} WHERE y > 1.005"])
    assert "y" in layout.attributes
    assert check(spark, src, backup, layout, "y <= '1.00499999999999999999'") == "pruned"


def test_case_4_char_padding(spark, base):
    src, layout, backup = lay_out(spark, base, ["SELECT * FROM {t} WHERE c = 'abc'", "SELECT * FROM {t} WHERE c = 'xyz'"])
    assert "c" in layout.attributes and dict(layout.types)["c"] == "char(10)"
    assert check(spark, src, backup, layout, "c = 'abc'") == "pruned"
    assert check(spark, src, backup, layout, "c IN ('abc ', 'xyz')") == "pruned"
    assert "LIKE with wildcards" in check(spark, src, backup, layout, "c LIKE 'ab%'")


def test_case_5_float_is_binary32(spark, base):
    src, layout, backup = lay_out(spark, base, ["SELECT * FROM {t} WHERE f = CAST(0.1 AS FLOAT)",
                                                 "SELECT * FROM {t} WHERE f > CAST(0.25 AS FLOAT)"])
    assert "f" in layout.attributes
    assert check(spark, src, backup, layout, "f = CAST(0.1 AS FLOAT)") == "pruned"
    assert check(spark, src, backup, layout, "f = 0.1F") == "pruned"
    # 0.1 is a DECIMAL literal: compared as DOUBLE, no binary32 value equals it; the planner says so
    assert rows(spark, f"SELECT * FROM {src} WHERE f = 0.1", through_planner=True) == []


def test_case_6_timestamps_mean_the_same_instants_in_every_zone(spark, base):
    spark.conf.set("spark.sql.session.timeZone", "Asia/Tokyo")
    try:
        src, layout, backup = lay_out(spark, base, ["SELECT * FROM {t} WHERE ts >= TIMESTAMP '2020-01-01 00:00:00'",
                                                     "SELECT * FROM {t} WHERE ts < TIMESTAMP '2020-01-01 00:00:00'"])
        assert "ts" in layout.attributes and layout.settings.time_zone == "Asia/Tokyo"
        where = "ts >= TIMESTAMP '2020-01-01 00:00:00'"
        query = f"SELECT * FROM {src} WHERE {where}"
        saved, (note,) = rewrite_query(query, {src: layout}, dialect="spark", schema={src: table_schema(spark, src)})
        assert note.guard == "time zone Asia/Tokyo" and "current_timezone()" in saved.lower()
        for zone in ("Asia/Tokyo", "America/Los_Angeles", "UTC"):
            spark.conf.set("spark.sql.session.timeZone", zone)
            assert check(spark, src, backup, layout, where) == "pruned"  # planner.sql knows the zone
            assert rows(spark, saved) == rows(spark, f"SELECT * FROM {backup} WHERE {where}"), zone
            whole = files(spark, f"SELECT * FROM {src}")
            assert (files(spark, saved) < whole) == (zone == "Asia/Tokyo"), zone  # the guard reads all elsewhere
    finally:
        spark.conf.set("spark.sql.session.timeZone", "UTC")


def test_case_7_char_column_can_be_laid_out(spark, base, tmp_path):
    # advise read the column as 'string' (DataFrame schema), apply as 'char(10)' (DESCRIBE) and refused
    src, layout, backup = lay_out(spark, base, ["SELECT * FROM {t} WHERE c = 'abc'"], via_advice_folder=tmp_path)
    assert "c char(10)" in (tmp_path / "ddl.sql").read_text().lower().replace("`", "")
    assert check(spark, src, backup, layout, "c = 'abc'") == "pruned"


def test_case_8_stale_sql_after_relayout_and_rollback(spark, base):
    first = ["SELECT * FROM {t} WHERE d = 1.01", "SELECT * FROM {t} WHERE d < 1.01"]
    second = ["SELECT * FROM {t} WHERE y <= 1.005", "SELECT * FROM {t} WHERE y > 1.005"]
    src, l1, before1 = lay_out(spark, base, first)
    queries = [f"SELECT * FROM {src} WHERE {w}" for w in ("d = 1.01", "d < 1.00", "y > 1.005", "c = 'abc'")]
    schema = {src: table_schema(spark, src)}
    saved1 = [rewrite_query(q, {src: l1}, dialect="spark", schema=schema)[0] for q in queries]
    want = [rows(spark, q.replace(src, before1)) for q in queries]
    raced = saved1[0]  # planner.sql read layout 1 and is about to run when layout 2 is swapped in
    l2, before2 = relayout(spark, src, second)
    assert not set(l1.known_ids) & set(l2.known_ids), "ids never shared between two layouts"
    saved2 = [rewrite_query(q, {src: l2}, dialect="spark", schema=schema)[0] for q in queries]
    for sql, w in zip(saved1 + [raced], want + [want[0]]):
        assert rows(spark, sql) == w, sql   # layout-1 SQL on layout 2: reads what it cannot vouch for
    assert files(spark, saved1[0]) == files(spark, f"SELECT * FROM {src}")
    for sql, w in zip(saved2, want):
        assert rows(spark, sql) == w, sql
    # rollback: layout 2 out, layout 1 (kept as the backup of the second apply) back in
    spark.sql(f"ALTER TABLE {src} RENAME TO {src}_rolled_out")
    spark.sql(f"ALTER TABLE {before2} RENAME TO {src}")
    for sql, w in zip(saved1 + saved2, want + want):
        assert rows(spark, sql) == w, sql
    assert files(spark, saved1[0]) < files(spark, f"SELECT * FROM {src}")  # layout 1's SQL prunes again
    # back to the table before any layout: it has no planner_pid, so saved SQL fails loudly
    spark.sql(f"ALTER TABLE {src} RENAME TO {src}_rolled_out_1")
    spark.sql(f"ALTER TABLE {before1} RENAME TO {src}")
    from pyspark.errors import AnalysisException

    with pytest.raises(AnalysisException, match="planner_pid"):
        spark.sql(saved1[0]).collect()

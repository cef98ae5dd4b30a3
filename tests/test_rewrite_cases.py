"""The rewrite's refusals and bookkeeping, case by case (``planner.rewrite.query_rewrite``).

``tests/test_rewrite.py`` and the fixtures pin what is read; these pin when a scan is left as
written and why, which layout a table name finds, and what ``explain`` reports.
"""
from __future__ import annotations

from types import SimpleNamespace

import pytest
from rewrite_entry import explain_query, rewrite_query
from test_rewrite import COLS, SCHEMA, layout, read_sets

from planner.cnf.valueset import ValueSet
from planner.errors import InputError
from planner.rewrite.query_rewrite import tables_read

LAYOUTS = {"db.t": layout()}


def rw(sql, **kw):
    return rewrite_query(sql, kw.pop("layouts", LAYOUTS), dialect=kw.pop("dialect", "spark"),
                         schema=kw.pop("schema", SCHEMA), **kw)


@pytest.mark.parametrize("sql,reason", [
    ("SELECT id FROM db.t WHERE amt > 5", "every partition may hold matching rows"),
    ("SELECT id FROM db.t TABLESAMPLE (10 PERCENT) WHERE d < DATE '1994-01-01'",
     "the table reference has clauses a subquery cannot carry (sample, hints, time travel)"),
    ("SELECT db.t.id FROM db.t WHERE d < DATE '1994-01-01'",
     "a column is qualified with its database; the subquery alias could not stand in"),
    ("SELECT planner_pid FROM db.t WHERE d < DATE '1994-01-01'",
     "the query names the partition column planner_pid itself"),
])
def test_a_scan_left_as_written_says_why(sql, reason):
    new, (note,) = rw(sql)
    assert new == sql and not note.rewritten and note.reason == reason


def test_without_columns_nothing_is_rewritten():
    sql = "SELECT id FROM db.t WHERE d < DATE '1994-01-01'"
    new, (note,) = rw(sql, schema=None)
    assert new == sql and note.reason == "the table's columns are unknown (give a schema)"
    assert note.partitions_read == (0, 1)


def test_a_variable_in_the_text_turns_pruning_off_unless_asked():
    sql = "SELECT * FROM db.t WHERE d < DATE '1994-01-01' AND s <> '${x}'"
    new, (note,) = rw(sql)
    assert note.partitions_read == tuple(range(6)) and read_sets(new) == []  # still hides planner_pid
    new, (note,) = rw(sql, prune=True)
    assert note.partitions_read == (0, 1) and read_sets(new) == [(0, 1)]
    new, (note,) = rw("SELECT id FROM db.t WHERE d < DATE '1994-01-01'", prune=False)
    assert note.partitions_read == tuple(range(6)) and not note.rewritten


def test_layouts_are_found_by_full_or_unambiguous_short_name():
    sql = "SELECT id FROM t WHERE d < DATE '1994-01-01'"
    _, (note,) = rw(sql, schema={"t": COLS})
    assert note.table == "t" and note.partitions_read == (0, 1)
    two = {"db.t": layout(), "other.t": layout()}
    _, notes = rw(sql, layouts=two, schema={"t": COLS})
    assert notes == []  # "t" could be either: no layout is used
    _, notes = rw("SELECT id FROM x.t WHERE d < DATE '1994-01-01'", schema={"x.t": COLS})
    assert notes == []  # another database's t
    _, (note,) = rw("SELECT id FROM DB.T WHERE d < DATE '1994-01-01'", layouts={"DB.T": layout()})
    assert note.partitions_read == (0, 1)


def test_the_partition_column_is_part_of_the_schema():
    # a query that groups by the partition column is read as the laid-out table has it
    sql = "SELECT planner_pid, count(*) FROM db.t WHERE d IS NULL GROUP BY planner_pid"
    new, (note,) = rw(sql)
    assert new == sql and note.partitions_read == (0, 4, 5)


def test_an_unreadable_query_is_one_clear_error():
    with pytest.raises(InputError, match="^cannot parse the query: "):
        rw("SELECT * FROM db.t WHERE (")
    with pytest.raises(InputError, match="^cannot parse the query: "):
        explain_query("SELECT 'open", LAYOUTS, dialect="spark")


def test_explain_reports_partitions_every_row_of_which_matches():
    (e,) = explain_query("SELECT * FROM db.t WHERE d < DATE '1995-01-01'", LAYOUTS, dialect="spark", schema=SCHEMA)
    assert e.partitions_read == (0, 1) and e.partitions_matching == (1,)
    (e,) = explain_query("SELECT * FROM db.t WHERE d < DATE '1994-01-01'", LAYOUTS, dialect="spark", schema=SCHEMA)
    assert e.partitions_matching == ()  # partition 1 also holds 1994
    (e,) = explain_query("SELECT * FROM db.t WHERE d >= DATE '1995-01-01' AND a < b", LAYOUTS, dialect="spark",
                         schema=SCHEMA)
    assert e.partitions_read == (0, 2) and e.partitions_matching == (2,)
    (e,) = explain_query("SELECT * FROM db.t WHERE d IS NULL OR a < b", LAYOUTS, dialect="spark", schema=SCHEMA)
    assert e.partitions_matching == ()  # a residual clause: no strict claim
    (e,) = explain_query("SELECT * FROM db.t WHERE d < DATE '1990-01-01' AND d > DATE '1999-01-01'", LAYOUTS,
                         dialect="spark", schema=SCHEMA)
    assert e.partitions_read == (0,) and e.partitions_matching == ()
    assert e.predicates_used == ("(the predicate is never TRUE)",)


def test_explain_takes_column_types_from_statistics_when_no_schema_is_given():
    stats = {"db.t": SimpleNamespace(schema={"ID": "bigint", "D": "date", "S": "string"})}
    (e,) = explain_query("SELECT * FROM db.t WHERE d < '1994-06-01'", LAYOUTS, stats, dialect="spark")
    assert e.partitions_read == (0, 1) and e.predicates_used == ("d IN (-inf, DATE '1994-05-31']",)
    # the layout recorded no types, only its values' kinds: a column that is no longer a date refuses it
    stats = {"db.t": SimpleNamespace(schema={"ID": "bigint", "D": "timestamp", "S": "string"})}
    (e,) = explain_query("SELECT * FROM db.t WHERE d < '1994-06-01'", LAYOUTS, stats, dialect="spark")
    assert e.partitions_read == tuple(range(6))
    assert e.predicates_not_used == (("(every predicate)", "column d is now timestamp, the layout was made for a "
                                                           "date column"),)


def test_explain_prints_what_it_cannot_use_in_the_callers_dialect():
    sql = "SELECT * FROM db.t WHERE s RLIKE 'a.*' AND CAST(s AS STRING) || 'x' = 'ax' AND d < DATE '1994-01-01'"
    (e,) = explain_query(sql, LAYOUTS, dialect="spark", schema=SCHEMA)
    assert e.partitions_read == (0, 1)
    assert e.predicates_not_used == (("CAST(s AS STRING) || 'x' = 'ax'", "expression over columns"),
                                     ("s RLIKE 'a.*'", "expression over columns"))


def test_the_query_is_read_in_the_callers_dialect():
    # Spark's dateadd(unit, n, date); in Hive's dialect `day` is a column, which db.t does not have
    sql = "SELECT * FROM db.t WHERE d < dateadd(day, 1, '1994-01-01')"
    _, (note,) = rw(sql)
    (e,) = explain_query(sql, LAYOUTS, dialect="spark", schema=SCHEMA)
    assert note.partitions_read == e.partitions_read
    with pytest.raises(InputError, match="has no column day"):
        rw(sql, dialect="hive")
    with pytest.raises(InputError, match="has no column day"):
        explain_query(sql, LAYOUTS, dialect="hive", schema=SCHEMA)


def test_tables_read_in_order_once_each():
    sql = ("SELECT * FROM a.x JOIN y ON a.x.k = y.k WHERE y.k IN (SELECT k FROM a.x) "
           "UNION ALL SELECT * FROM `we.ird`.z")
    assert tables_read(sql, dialect="spark", current_db="cur") == [
        ("a.x", "a", "x"), ("cur.y", "cur", "y"), ("we.ird.z", "we.ird", "z")]
    assert tables_read("SELECT 1 FROM y", dialect="spark") == [("y", "default", "y")]


def test_tables_read_names_every_table_a_scan_of_the_bundled_sql_reads():
    # tables_read only walks the scopes (it decides which layouts planner.sql looks up); a table it
    # missed would be read whole
    from pathlib import Path

    import sqlglot

    from planner.workload.scans import Schema, iter_scans

    root = Path(__file__).resolve().parent.parent
    files = sorted(root.glob("sql/**/*.sql")) + sorted(root.glob("tests/fixtures/**/*.sql"))
    checked = 0
    for path in files:
        try:
            statements = sqlglot.parse(path.read_text(errors="replace"), read="hive")
        except sqlglot.errors.SqlglotError:
            continue  # a file of deliberately bad SQL
        for tree in filter(None, statements):
            sql = tree.sql("hive")
            scanned = {site.table for site in iter_scans(sqlglot.parse_one(sql, read="hive"), Schema())}
            assert scanned <= {t for t, _, _ in tables_read(sql)}, (path.name, sql[:200])
            checked += 1
    assert checked >= 400


def test_two_scans_are_both_rewritten_in_place():
    sql = ("SELECT a.id FROM db.t a JOIN db.t b ON a.id = b.id "
           "WHERE a.d < DATE '1994-01-01' AND b.d IS NULL -- end")
    new, notes = rw(sql)
    assert [n.partitions_read for n in notes] == [(0, 1), (0, 4, 5)]
    assert new.endswith(" WHERE a.d < DATE '1994-01-01' AND b.d IS NULL -- end")
    assert new.startswith("SELECT a.id FROM (SELECT ") and ") AS a JOIN (SELECT " in new and ") AS b ON" in new
    assert sorted(read_sets(new)) == [(0, 1), (0, 4, 5)]


def test_a_catalog_qualified_table_is_replaced_whole():
    new, (note,) = rw("SELECT * FROM spark_catalog.db.t WHERE d < DATE '1994-01-01'")
    assert note.rewritten and note.alias == "t"
    assert new.startswith("SELECT * FROM (SELECT `id`, `d`, `amt`, `s`, `a`, `b` FROM spark_catalog.db.t WHERE ")
    assert new.endswith(") AS t WHERE d < DATE '1994-01-01'")


def test_short_names_with_dotted_databases_and_unqualified_keys():
    sql = "SELECT id FROM t WHERE d < DATE '1994-01-01'"
    _, (note,) = rw(sql, layouts={"we.ird.t": layout()}, schema={"t": COLS})
    assert note.partitions_read == (0, 1)
    _, (note,) = rw(sql, layouts={"u": layout(), "db.t": layout()}, schema={"t": COLS})
    assert note.partitions_read == (0, 1)
    # the current database decides between two tables called t
    _, (note,) = rw(sql, layouts={"db.t": layout(), "other.t": layout()}, current_db="db")
    assert note.table == "db.t" and note.partitions_read == (0, 1)


def test_hive_is_the_default_dialect():
    sql = "SELECT id FROM db.t WHERE d < DATE '1994-01-01'"
    new, (note,) = rewrite_query(sql, LAYOUTS, schema=SCHEMA)
    assert note.partitions_read == (0, 1) and "FROM db.t WHERE `planner_pid` IN (0, 1)" in new
    (e,) = explain_query(sql, LAYOUTS, schema=SCHEMA)
    assert e.partitions_read == (0, 1) and e.alias == "t"
    assert tables_read("SELECT * FROM a.x JOIN y") == [("a.x", "a", "x"), ("y", "default", "y")]


def test_a_refused_layout_names_every_predicate():
    from planner.model.layout import Layout

    lay = Layout("db.t", "test", layout().partitions, kinds=layout().kinds, types=(("d", "date"),))
    (e,) = explain_query("SELECT * FROM db.t WHERE d < '1994-06-01'", {"db.t": lay}, dialect="spark",
                         schema={"db.t": COLS | {"d": "timestamp"}})
    assert e.predicates_not_used == (("(every predicate)", "column d is now timestamp, the layout was made for date"),)
    # without a schema the layout's own types are used, and prune
    (e,) = explain_query("SELECT * FROM db.t WHERE d < '1994-06-01'", {"db.t": lay}, dialect="spark")
    assert e.partitions_read == (0, 1)


def test_an_approximated_predicate_claims_no_partition_matches_strictly():
    from planner.model.layout import Layout, Partition
    from planner.semantics.kinds import Kind

    axx = ValueSet.points(Kind.STRING, ["AXX"])
    lay = Layout("db.g", "test", (Partition(1, (("s", axx),)), Partition(2, (("s", axx.complement()),))),
                 kinds=(("s", Kind.STRING),))
    schema = {"db.g": {"s": "string"}}
    (e,) = explain_query("SELECT * FROM db.g WHERE s LIKE 'A%R'", {"db.g": lay}, dialect="spark", schema=schema)
    assert e.partitions_read == (0, 1, 2) and e.partitions_matching == ()  # 'AXX' is in ['A', 'B'), not A%R
    (e,) = explain_query("SELECT * FROM db.g WHERE s = 'AXX'", {"db.g": lay}, dialect="spark", schema=schema)
    assert e.partitions_read == (0, 1) and e.partitions_matching == (1,)


def test_only_a_star_of_the_laid_out_table_shows_its_columns():
    # o.* shows only db.o's columns: nothing to prune in t, so the query stays as written
    sql = "SELECT o.* FROM db.t x JOIN db.o o ON x.id = o.oid WHERE x.amt > 5"
    new, (note,) = rw(sql)
    assert new == sql and not note.rewritten
    # a * after a count(*) still shows every column of t: the scan hides planner_pid
    sql = "SELECT count(*) OVER (), * FROM db.t WHERE amt > 5"
    new, (note,) = rw(sql)
    assert note.rewritten and new.startswith("SELECT count(*) OVER (), * FROM (SELECT `id`, ")


def test_explain_resolves_unqualified_names_in_the_current_database():
    two = {"db.t": layout(), "other.t": layout()}
    (e,) = explain_query("SELECT * FROM t WHERE d < DATE '1994-01-01'", two, dialect="spark", current_db="db",
                         schema=SCHEMA)
    assert e.table == "db.t" and e.partitions_read == (0, 1)


def test_a_saved_rewrite_holds_in_both_ansi_modes():
    # id > '9.5': without ANSI Spark reads '9.5' as 9 (id >= 10: partitions 3 and 4); with ANSI the
    # query fails. A saved rewrite keeps the legacy reading; a live ANSI session prunes nothing.
    from test_rewrite import GRID_COLS, grid_layout

    from planner.semantics.settings import Settings

    layouts, schema = {"db.g": grid_layout()}, {"db.g": GRID_COLS}
    sql = "SELECT * FROM db.g WHERE id > '9.5'"
    (saved,) = explain_query(sql, layouts, dialect="spark", schema=schema)
    (legacy,) = explain_query(sql, layouts, dialect="spark", schema=schema, settings=Settings(False))
    (ansi,) = explain_query(sql, layouts, dialect="spark", schema=schema, settings=Settings(True))
    assert saved.partitions_read == legacy.partitions_read == (0, 3, 4)
    assert ansi.partitions_read == (0, 1, 2, 3, 4, 5)


def test_a_saved_rewrite_reads_timestamps_in_the_layouts_zone():
    # 2020-01-01 00:00 in Tokyo is 2019-12-31 15:00 UTC: partition 1 (from 20:00 UTC on) cannot match
    import datetime as dt

    from planner.cnf.valueset import Interval
    from planner.model.layout import Layout, Partition
    from planner.semantics.kinds import Kind
    from planner.semantics.settings import Settings

    late = ValueSet.of(Kind.TIMESTAMP, [Interval(dt.datetime(2019, 12, 31, 20), None, True, False)])
    lay = Layout("db.z", "test", (Partition(1, (("ts", late),)), Partition(2, (("ts", late.complement()),))),
                 kinds=(("ts", Kind.TIMESTAMP),), types=(("ts", "timestamp"),), settings=Settings(True, "Asia/Tokyo"))
    sql = "SELECT * FROM db.z WHERE ts < TIMESTAMP '2020-01-01 00:00:00'"
    _, (note,) = rewrite_query(sql, {"db.z": lay}, dialect="spark", schema={"db.z": {"ts": "timestamp"}})
    assert note.partitions_read == (0, 2) and note.guard == "time zone Asia/Tokyo"
    # a query that reads every partition relies on no zone
    sql = "SELECT * FROM db.z WHERE ts < TIMESTAMP '2030-01-01 00:00:00'"
    _, (note,) = rewrite_query(sql, {"db.z": lay}, dialect="spark", schema={"db.z": {"ts": "timestamp"}})
    assert note.partitions_read == (0, 1, 2) and note.guard == ""


def test_a_layout_without_partitions_reads_the_table_whole():
    from planner.model.layout import Layout, Ordering

    lay = Layout("db.t", "test", (), Ordering("sort", ("d",)))
    sql = "SELECT * FROM db.t WHERE d < DATE '1994-01-01'"
    _, (note,) = rw(sql, layouts={"db.t": lay})
    assert note.partitions_read == (0,) and note.partitions_total == 1


def test_a_table_without_a_layout_does_not_stop_the_next_scan():
    sql = "SELECT a.id FROM x.t a JOIN db.t b ON a.id = b.id WHERE b.d < DATE '1994-01-01'"
    _, notes = rw(sql, schema=SCHEMA | {"x.t": COLS})
    assert [(n.table, n.partitions_read) for n in notes] == [("db.t", (0, 1))]


def test_refusals_say_exactly_why():
    from planner.model.layout import Layout

    old = Layout.from_json({**layout().to_json(), "version": 1})
    (e,) = explain_query("SELECT * FROM db.t WHERE d < '1994-06-01'", {"db.t": old}, dialect="spark", schema=SCHEMA)
    assert e.predicates_not_used == (("(every predicate)", "the layout was written by an older planner (version 1: "
                                      "partition ids shared by every layout, timestamps as wall clock); apply it "
                                      "again to prune"),)
    with pytest.raises(InputError, match=r"^cannot parse the query: Expecting \)"):
        rw("SELECT * FROM db.t WHERE (d < DATE '1994-01-01'")


def test_a_float_compared_with_an_integer_differs_between_ansi_modes():
    # 16777217 is not a FLOAT: with ANSI off Spark compares the column with 16777216.0, with ANSI
    # on with 16777217.0. A saved rewrite must read both partitions.
    from decimal import Decimal

    from planner.cnf.valueset import Interval
    from planner.model.layout import Layout, Partition
    from planner.semantics.kinds import Kind
    from planner.semantics.settings import Settings

    low = ValueSet.of(Kind.FLOAT, [Interval(None, Decimal("16777216.5"), False, False)])
    lay = Layout("db.f", "test", (Partition(1, (("f", low),)), Partition(2, (("f", low.complement()),))),
                 kinds=(("f", Kind.FLOAT),), types=(("f", "float"),))
    sql, schema = "SELECT * FROM db.f WHERE 16777217 = f", {"db.f": {"f": "float"}}
    read = {s: explain_query(sql, {"db.f": lay}, dialect="spark", schema=schema, settings=s)[0].partitions_read
            for s in (None, Settings(False), Settings(True))}
    assert read == {None: (0, 1, 2), Settings(False): (0, 1), Settings(True): (0, 2)}


def test_a_star_inside_a_function_after_count_star_still_shows_the_columns():
    sql = "SELECT count(*), to_json(struct(*)) FROM db.t WHERE amt > 5"
    new, (note,) = rw(sql)
    assert note.rewritten and new.startswith("SELECT count(*), to_json(struct(*)) FROM (SELECT `id`, ")


def test_backquoted_names_are_read_in_the_callers_dialect():
    sql = "SELECT `id` FROM `db`.`t` WHERE `d` < DATE '1994-01-01'"
    new, (note,) = rw(sql)
    assert note.partitions_read == (0, 1) and "`planner_pid` IN (0, 1)" in new
    (e,) = explain_query(sql, LAYOUTS, dialect="spark", schema=SCHEMA)
    assert e.partitions_read == (0, 1)
    assert tables_read(sql, dialect="spark") == [("db.t", "db", "t")]

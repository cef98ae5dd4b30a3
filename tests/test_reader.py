"""The workload reader: statement splitting, skipped statements, errors that name their place."""
from __future__ import annotations

from pathlib import Path

import pytest

from planner.errors import InputError, PlannerError, SchemaError, WorkloadError
from planner.workload import parse_workload, read_workload
from planner.workload.reader import split_statements
from planner.workload.scans import schema_from_ddl

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = schema_from_ddl((ROOT / "sql" / "tpch_schema.sql").read_text(), "sql/tpch_schema.sql")


def write(tmp_path: Path, text: str, name: str = "w.sql") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


# ---- splitting -------------------------------------------------------------------------------

def test_semicolons_inside_strings_and_comments_do_not_split():
    text = (
        "-- first; still a comment\n"
        "select * from t where s = 'a;b';\n"
        "\n\n"
        "/* block; comment */ select * from t where s = \"x;y\"\n"
        "  and a = 1;\n"
        "-- trailing comment only; nothing follows\n"
    )
    stmts = list(split_statements(text, "w.sql"))
    assert [s.number for s in stmts] == [1, 2]
    assert [s.line for s in stmts] == [2, 5]
    assert "'a;b'" in stmts[0].sql and "\"x;y\"" in stmts[1].sql
    wl = parse_workload(text, "w.sql")
    assert len(wl.queries) == 2
    assert str(wl.queries[0].scans[0].predicate) == "s = 'a;b'"


def test_blank_statements_and_missing_final_semicolon():
    wl = parse_workload(";;\n\nselect * from t where a = 1;;\n\n select * from t where a = 2\n", "w.sql")
    assert [q.number for q in wl.queries] == [1, 2]
    assert [q.line for q in wl.queries] == [3, 5]


def test_template_comes_from_the_leading_comment():
    wl = parse_workload("-- tpch q06\nselect * from lineitem where l_quantity < 24;\n"
                        "select * from lineitem where l_quantity < 25", "w.sql")
    assert wl.queries[0].template == "tpch q06"
    assert wl.queries[1].template.startswith("T")


# ---- skipped statements and USE --------------------------------------------------------------

def test_set_use_and_ddl_are_skipped_and_counted():
    text = ("set hive.exec.dynamic.partition=true;\n"
            "use tpch;\n"
            "create table x (a int);\n"
            "drop table if exists y;\n"
            "select * from lineitem where l_quantity < 3;\n")
    wl = parse_workload(text, "w.sql")
    assert dict(wl.skipped) == {"SET": 1, "USE": 1, "DDL": 2}
    assert len(wl.queries) == 1 and wl.queries[0].number == 5


def test_use_changes_the_database_of_unqualified_tables():
    text = ("select * from lineitem where l_quantity < 1;\n"
            "use tpch;\n"
            "select * from lineitem where l_quantity < 2;\n"
            "select * from other.lineitem where l_quantity < 3;\n"
            "use sf100;\n"
            "select * from lineitem l join tpch.orders o on l.l_orderkey = o.o_orderkey;\n")
    wl = parse_workload(text, "w.sql")
    assert [[s.table for s in q.scans] for q in wl.queries] == [
        ["lineitem"], ["tpch.lineitem"], ["other.lineitem"], ["sf100.lineitem", "tpch.orders"]]


def test_repeated_statements_are_read_in_their_own_context():
    """A statement repeated word for word is read once, but only where nothing that changes its
    meaning happened in between: USE, a view (re)defined or dropped. Each copy keeps its own number,
    line, template and notes."""
    q = "select * from v where l_quantity < 3"
    text = (f"-- first\n{q};\n"
            "create view v as select * from lineitem where l_shipmode = 'AIR';\n"
            f"{q};\n{q};\n"
            "create or replace view v as select * from orders where o_totalprice > 5;\n"
            f"{q};\n"
            "drop view v;\n"
            f"{q};\n"
            "use tpch;\n"
            f"{q};\n"
            "select 1;\nselect 1;\n")
    wl = parse_workload(text, "w.sql")
    assert [q.number for q in wl.queries] == [1, 3, 4, 6, 8, 10, 11, 12]
    assert [[s.table for s in x.scans] for x in wl.queries] == [
        ["v"], ["lineitem"], ["lineitem"], ["orders"], ["v"], ["tpch.v"], [], []]
    assert wl.queries[1].scans == wl.queries[2].scans
    assert "l_shipmode" in str(wl.queries[2].scans[0].predicate)
    assert wl.queries[0].template == "first" and wl.queries[1].template.startswith("T")
    assert [n for n in wl.queries[7].notes if "reads no table" in n] == [
        "statement 12 reads no table (constants, VALUES or a table function): nothing to lay out"]
    again = parse_workload(text, "w.sql")
    assert again == wl


def test_insert_select_and_union_are_queries():
    wl = parse_workload("insert into t2 select * from lineitem where l_quantity < 3;\n"
                        "select a from t where a = 1 union all select a from t where a = 2;", "w.sql")
    assert [len(q.scans) for q in wl.queries] == [1, 2]


# ---- errors name file, statement and line ----------------------------------------------------

def test_syntax_error_names_file_statement_and_line(tmp_path):
    p = write(tmp_path, "select * from t where a = 1;\n\n-- the bad one\nselect * from t where (a = 1;\n")
    with pytest.raises(WorkloadError) as info:
        read_workload(p)
    msg = str(info.value)
    assert msg.startswith(f"{p}:4, statement 2: syntax error")
    assert info.value.location.statement == 2 and info.value.location.line == 4


def test_missing_file(tmp_path):
    with pytest.raises(WorkloadError, match="no such file") as info:
        read_workload(tmp_path / "nope.sql")
    assert str(tmp_path / "nope.sql") in str(info.value)


def test_directory_and_undecodable_file(tmp_path):
    with pytest.raises(WorkloadError, match="cannot read"):
        read_workload(tmp_path)
    p = tmp_path / "latin1.sql"
    p.write_bytes(b"select * from t where s = '\xe9';")
    with pytest.raises(WorkloadError, match="cannot read"):
        read_workload(p)


@pytest.mark.parametrize("text,what", [
    ("", "is empty"),
    ("\n\n   \n", "is empty"),
    ("-- only a comment; with a semicolon\n", "is empty"),
    ("set a=1;\nuse db;", "has no queries (only SET, USE statements)"),
])
def test_empty_workloads(tmp_path, text, what):
    p = write(tmp_path, text)
    with pytest.raises(WorkloadError) as info:
        read_workload(p)
    assert str(info.value) == f"{p}: the workload {what}"


def test_unknown_column_with_a_schema_names_the_statement():
    text = "select * from lineitem where l_quantity < 3;\n\nselect * from lineitem where l_nope = 3;\n"
    with pytest.raises(SchemaError) as info:
        parse_workload(text, "w.sql", schema=SCHEMA)
    assert str(info.value) == "w.sql:3, statement 2: table lineitem has no column l_nope"


def test_unknown_qualified_column_in_a_join():
    with pytest.raises(SchemaError, match="table lineitem has no column l_nope"):
        parse_workload("select * from lineitem l join orders o on l.l_orderkey = o.o_orderkey "
                       "where l.l_nope = 1", "w.sql", schema=SCHEMA)


def test_on_error_skip_counts_skipped_statements():
    text = ("select * from lineitem where l_quantity < 3;\n"
            "select * from lineitem where (;\n"
            "select * from lineitem where l_nope = 1;\n"
            "select * from lineitem where l_quantity > 4;\n")
    wl = parse_workload(text, "w.sql", schema=SCHEMA, on_error="skip")
    assert [q.number for q in wl.queries] == [1, 4]
    assert dict(wl.skipped) == {"error": 2}
    assert wl.errors[0].startswith("w.sql:2, statement 2: syntax error")
    assert wl.errors[1] == "w.sql:3, statement 3: table lineitem has no column l_nope"


def test_on_error_skip_with_nothing_left_is_not_an_empty_workload_error():
    wl = parse_workload("select * from t where (;", "w.sql", on_error="skip")
    assert wl.queries == () and dict(wl.skipped) == {"error": 1}


def test_unknown_dialect():
    with pytest.raises(InputError, match="unknown dialect"):
        read_workload("x.sql", dialect="postgres")


# ---- truncated and enormous input: a clear error, never a crash -------------------------------

@pytest.mark.parametrize("text", [
    "select * from t where a = 'abc",              # unterminated string
    "select * from t where a = 1 and",             # truncated expression
    "select * from t where a in (1, 2",            # truncated list
    "select * from t /* unterminated comment",
    "select * from",
    "\x00\x01 select",
])
def test_truncated_input_is_a_workload_error(text):
    with pytest.raises(WorkloadError) as info:
        parse_workload(text, "w.sql")
    assert str(info.value).startswith("w.sql")


def test_ten_thousand_term_or_is_a_clear_error_or_analysed():
    text = "select * from t where " + " or ".join(f"a = {i}" for i in range(10_000))
    try:
        wl = parse_workload(text, "w.sql")
    except WorkloadError as e:
        assert str(e).startswith("w.sql:1, statement 1:"), str(e)
        assert "nested too deeply" in str(e)
    else:
        assert len(wl.queries) == 1


def test_deeply_nested_parentheses_are_a_clear_error():
    text = "select * from t where " + "(" * 5000 + "a = 1" + ")" * 5000
    with pytest.raises(WorkloadError, match=r"^w\.sql:1, statement 1: statement is nested too deeply"):
        parse_workload(text, "w.sql")


def test_deep_nesting_is_skippable():
    text = "select * from t where " + "(" * 5000 + "a = 1" + ")" * 5000 + ";\nselect * from t where a = 2;"
    wl = parse_workload(text, "w.sql", on_error="skip")
    assert [q.number for q in wl.queries] == [2] and dict(wl.skipped) == {"error": 1}


def test_long_in_list_is_fine():
    text = "select * from t where a in (" + ", ".join(str(i) for i in range(10_000)) + ")"
    wl = parse_workload(text, "w.sql")
    assert len(wl.queries[0].scans[0].predicate.values) == 10_000


@pytest.mark.parametrize("text", [
    "select * from", "select * from t where a = = 1", "with x as (select 1) select * from x where",
    "select * from t where a between 1", "select case when from t", "))))", "select * from t where (a = 1",
    "select * from t where s = 'open",
])
def test_every_error_is_a_planner_error(text):
    # Nothing a user can type should escape as anything but a PlannerError, in one line naming
    # the file and the statement. (A bare "select" is not here: sqlglot reads it as a query.)
    with pytest.raises(PlannerError, match=r"^w\.sql:1, statement 1: ") as caught:
        parse_workload(text, "w.sql")
    assert "\n" not in str(caught.value)

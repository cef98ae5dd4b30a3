"""Real HiveQL: wrapped queries, FROM-first inserts, Hive CLI commands, views, readable errors.

Every test names the form a DBA's file really has; the reader must find the query inside with its
scans and filters, skip (and count) what is not a query, and never lose a query without a note.
"""
from __future__ import annotations

import logging

import pytest

from planner.errors import WorkloadError
from planner.workload import Schema, parse_workload
from planner.workload.statements import split_statements


def scans(text: str, **kw) -> list[list[tuple[str, str]]]:
    """Per query: (table, predicate) of every scan."""
    wl = parse_workload(text, "w.sql", **kw)
    return [[(s.table, str(s.predicate)) for s in q.scans] for q in wl.queries]


# ---- queries wrapped in other statements ---------------------------------------------------------
@pytest.mark.parametrize("prefix", [
    "EXPLAIN", "explain extended", "EXPLAIN FORMATTED", "EXPLAIN CBO", "explain cbo cost", "EXPLAIN CBO JOINCOST",
    "EXPLAIN VECTORIZATION", "EXPLAIN VECTORIZATION ONLY SUMMARY", "EXPLAIN VECTORIZATION DETAIL",
    "EXPLAIN DEPENDENCY", "EXPLAIN AUTHORIZATION", "EXPLAIN LOCKS", "EXPLAIN AST", "EXPLAIN ANALYZE",
    "EXPLAIN LOGICAL", "EXPLAIN CODEGEN", "EXPLAIN COST", "explain\n  -- the plan\n  extended",
])
def test_every_explain_form_is_read(prefix):
    assert scans(f"{prefix} SELECT * FROM t WHERE a = 1") == [[("t", "a = 1")]]


def test_explain_with_insert_ctas_and_from_first():
    text = ("explain with w as (select * from t where a < 5) select * from w where b = 2;\n"
            "explain insert overwrite table d select * from t where a = 3;\n"
            "explain create table c as select * from t where a = 4;\n"
            "explain from t insert overwrite table d select a where a = 5;\n")
    got = scans(text)
    assert got[0] == [("t", "a < 5 AND b = 2")]  # the CTE's filter and the query's, pushed through
    assert got[1:] == [[("t", "a = 3")], [("t", "a = 4")], [("t", "a = 5")]]


def test_explain_of_a_statement_that_is_not_a_query_is_skipped():
    wl = parse_workload("explain analyze table t compute statistics;\nexplain create table x (a int);\n"
                        "select * from t where a = 1;", "w.sql")
    assert len(wl.queries) == 1 and dict(wl.skipped) == {"ANALYZE": 1, "DDL": 1}


def test_ctas_insert_and_insert_if_not_exists():
    text = ("create table c stored as orc as select * from t where a = 1;\n"
            "insert overwrite table d partition (ds='1') if not exists select * from t where a = 2;\n"
            "insert into table d partition (ds) select a, ds from t where a = 3;\n"
            "insert overwrite local directory '/tmp/x' select * from t where a = 4;\n"
            "insert into d values (1, 2);\n")
    wl = parse_workload(text, "w.sql")
    assert [[(s.table, str(s.predicate)) for s in q.scans] for q in wl.queries] == [
        [("t", "a = 1")], [("t", "a = 2")], [("t", "a = 3")], [("t", "a = 4")]]
    assert dict(wl.skipped) == {"INSERT VALUES": 1}


def test_from_first_multi_insert_is_one_scan_with_every_branch_filter():
    text = ("FROM src\n"
            "INSERT OVERWRITE TABLE dest1 SELECT src.key, src.value WHERE src.key < 100\n"
            "INSERT OVERWRITE TABLE dest2 SELECT src.key, src.value WHERE src.key >= 100 and src.key < 200\n"
            "INSERT OVERWRITE TABLE dest3 PARTITION(ds='2008-04-08', hr='12') SELECT src.key WHERE src.key >= 300")
    (query,) = parse_workload(text, "w.sql").queries
    (scan,) = query.scans
    assert scan.table == "src"
    assert str(scan.predicate) == "(key < 200 AND key >= 100) OR key < 100 OR key >= 300"
    assert scan.columns == frozenset({"key", "value"})


def test_from_first_branch_without_a_filter_reads_everything():
    text = "from t insert overwrite table a select x where x > 1 insert overwrite table b select x"
    assert scans(text) == [[("t", "TRUE")]]


def test_from_first_select_join_and_subquery_source():
    text = ("from t select a where a = 1;\n"
            "from (select * from t where b = 2) s join u on s.a = u.a insert overwrite table d select s.a where u.c = 3")
    assert scans(text) == [[("t", "a = 1")], [("t", "b = 2"), ("u", "<foreign> AND c = 3")]]


def test_map_reduce_and_transform_scripts():
    text = ("FROM src INSERT OVERWRITE TABLE dest1 MAP src.key, src.value USING 'cat' AS (tkey, tvalue) "
            "WHERE src.key < 10;\n"
            "FROM (FROM src MAP src.key, src.value USING 'cat' AS (k, v) CLUSTER BY k) m "
            "INSERT OVERWRITE TABLE dest2 REDUCE m.k, m.v USING 'cat' AS (k, v);\n"
            "SELECT TRANSFORM(key) USING 'cat' AS (k) FROM src WHERE key = 3")
    got = scans(text)
    assert got == [[("src", "key < 10")], [("src", "TRUE")], [("src", "key = 3")]]


def test_update_and_delete_read_their_table_with_their_filter():
    assert scans("update t set a = 1 where b = 2;\ndelete from db.t where c = 3") == [
        [("t", "b = 2")], [("db.t", "c = 3")]]


# ---- Hive CLI commands are skipped and counted ---------------------------------------------------
HIVE_CLI = """set hive.exec.dynamic.partition=;
set hive.mapred.mode=nonstrict;
SET;
reset;
dfs -cat ${system:test.warehouse.dir}/dest4.out/*;
dfs ${system:test.dfs.mkdir} /tmp/x;
add jar ${system:maven.local.repository}/org/x.jar;
ADD FILE ../data/scripts/input20_script.py;
delete jar x.jar;
list jars;
!sleep 1;
source /tmp/other.sql;
compile `import x \\; class A {}` AS GROOVY NAMED a.groovy;
desc formatted t col;
describe function upper;
DESCRIBE FUNCTION EXTENDED +;
show tables;
export table t to '/tmp/export';
import table t2 from '/tmp/export';
lock table t shared;
unlock table t;
msck repair table t;
analyze table t compute statistics for columns;
load data local inpath '../x.txt' into table t;
grant select on table t to user hive;
revoke select on table t from user hive;
create table x (a map<string,int>) row format delimited fields terminated by '\\t' stored as textfile;
alter table t add partition (ds='1');
SELECT * FROM t WHERE a = 1;
"""


def test_hive_cli_commands_are_skipped_and_counted():
    wl = parse_workload(HIVE_CLI, "w.sql")
    assert [[(s.table, str(s.predicate)) for s in q.scans] for q in wl.queries] == [[("t", "a = 1")]]
    assert dict(wl.skipped) == {"SET": 3, "RESET": 1, "DFS": 2, "ADD": 2, "DELETE": 1, "LIST": 1, "!shell": 1,
                                "SOURCE": 1, "COMPILE": 1, "DESCRIBE": 3, "SHOW": 1, "EXPORT": 1, "IMPORT": 1,
                                "LOCK": 1, "UNLOCK": 1, "MSCK": 1, "ANALYZE": 1, "LOAD": 1, "GRANT": 1, "REVOKE": 1,
                                "DDL": 2}


def test_cli_command_text_never_reaches_the_sql_tokenizer():
    # ``dfs -cat dir/*`` would open a /* comment swallowing the query after it
    stmts = list(split_statements("dfs -cat /a/*;\nselect 1 from t where a = 1; -- */\n", "w.sql"))
    assert [(s.command, s.line) for s in stmts] == [("DFS", 1), (None, 2)]
    assert scans("dfs -cat /a/*;\nselect * from t where a = 1;") == [[("t", "a = 1")]]


def test_beeline_bang_commands_end_at_the_line():
    wl = parse_workload("!connect jdbc:hive2://h:1/default\nselect * from t where a = 1;", "w.sql")
    assert len(wl.queries) == 1 and dict(wl.skipped) == {"!shell": 1}


def test_a_file_of_only_commands_says_so():
    with pytest.raises(WorkloadError, match=r"has no queries \(only DESCRIBE, DFS, SET statements\)"):
        parse_workload("set a=1;\ndfs -ls /;\ndesc t;", "w.sql")


# ---- nothing lost silently -----------------------------------------------------------------------
def test_a_query_reading_no_table_gets_a_note():
    wl = parse_workload("select 1 + 1;\nselect * from (select 1 a) x where a = 1;", "w.sql")
    assert [len(q.scans) for q in wl.queries] == [0, 0]
    assert all("reads no table" in q.notes[0] for q in wl.queries)


def test_hive_only_syntax_reads_its_tables_whole_with_a_note():
    text = ("select p_mfgr, p_name from noop(on part partition by p_mfgr order by p_name) where p_size > 3;\n"
            "select a.key from uniquejoin preserve t1 a (a.key), preserve t2 b (b.key) where a.key = 1;\n"
            "select count(1) from t where t.name = _UTF-8 0xE982B5;\n")
    wl = parse_workload(text, "w.sql")
    assert [[(s.table, str(s.predicate)) for s in q.scans] for q in wl.queries] == [
        [("part", "TRUE")], [("t1", "TRUE"), ("t2", "TRUE")], [("t", "TRUE")]]
    assert all("Hive syntax the reader cannot parse" in q.notes[0] for q in wl.queries)


def test_words_hive_allows_as_names():
    assert scans("select * from outputtbl order by key, values;\nselect key from t where values = 1") == [
        [("outputtbl", "TRUE")], [("t", "values = 1")]]


def test_hive_window_cluster_by_and_partitioned_view():
    text = ("create view v partitioned on (ds) as select key, ds from srcpart where key < 5;\n"
            "select count(key) over (cluster by key) from v where ds = '1'")
    assert scans(text) == [[("srcpart", "ds = '1' AND key < 5")]]


# ---- errors: one line, the token, never sqlglot internals ----------------------------------------
@pytest.mark.parametrize("text,message", [
    ("select * from t where a = ;", "syntax error: incomplete '=': an operand is missing at '=' (line 1, column 25)"),
    ("select * from t where (a = 1;", "syntax error: Expecting ) at '1' (line 1, column 28)"),
    ("select * from t where a +", "syntax error: incomplete '+': an operand is missing at '+'"),
    ("select a b c from t;", "at 'c' (line 1, column 12)"),
    ("select * from", "syntax error: Expected table name but got"),
])
def test_parse_errors_are_readable(text, message):
    with pytest.raises(WorkloadError) as info:
        parse_workload("select 1 from t;\n" * 0 + text, "w.sql")
    msg = str(info.value)
    assert message.split(" at ")[0] in msg or message in msg, msg
    assert "near ''" not in msg and "<class" not in msg and "<Token" not in msg and "sqlglot" not in msg
    assert "\n" not in msg


def test_errors_name_the_token_on_the_file_s_line():
    with pytest.raises(WorkloadError) as info:
        parse_workload("select 1 from t;\n\nexplain\n  select * from t where a in (1, 2", "w.sql")
    assert str(info.value) == "w.sql:3, statement 2: syntax error: Expecting ) at '2' (line 4, column 34)"


def test_no_sqlglot_warning_reaches_stderr(caplog, capfd):
    caplog.set_level(logging.WARNING)
    parse_workload("show tables;\nmsck repair table t;\nselect * from t where a = 1;\nexplain select 1 from t;",
                   "w.sql")
    out, err = capfd.readouterr()
    assert "Falling back" not in err + out
    assert not [r for r in caplog.records if "Falling back" in r.getMessage()]


# ---- views ---------------------------------------------------------------------------------------
def test_a_view_is_followed_with_its_filter_and_the_query_s():
    text = ("create view v as select l_orderkey k, l_shipdate d, l_quantity q from lineitem "
            "where l_quantity < 5;\n"
            "select * from v where d >= '1995-01-01';\n")
    wl = parse_workload(text, "w.sql")
    assert wl.views == ("v",) and dict(wl.skipped) == {"CREATE VIEW": 1}
    (query,) = wl.queries
    assert [(s.table, str(s.predicate)) for s in query.scans] == [
        ("lineitem", "l_quantity < 5 AND l_shipdate >= '1995-01-01'")]


def test_tpch_q15_as_hive_testbench_writes_it():
    text = ("drop view revenue_cached;\n"
            "create view revenue_cached as select l_suppkey as supplier_no, "
            "sum(l_extendedprice * (1 - l_discount)) as total_revenue from lineitem "
            "where l_shipdate >= '1996-01-01' and l_shipdate < '1996-04-01' group by l_suppkey;\n"
            "create view max_revenue_cached as select max(total_revenue) as max_revenue from revenue_cached;\n"
            "select s_suppkey, s_name, total_revenue from supplier, revenue_cached, max_revenue_cached "
            "where s_suppkey = supplier_no and total_revenue = max_revenue order by s_suppkey;\n")
    (query,) = parse_workload(text, "w.sql").queries
    assert sorted((s.table, str(s.predicate)) for s in query.scans) == [
        ("lineitem", "l_shipdate < '1996-04-01' AND l_shipdate >= '1996-01-01'"),
        ("lineitem", "l_shipdate < '1996-04-01' AND l_shipdate >= '1996-01-01'"),
        ("supplier", "<foreign> AND <foreign>")]  # join conditions: nothing to prune supplier by


def test_views_follow_use_drop_and_replace():
    text = ("use db1;\n"
            "create view v as select * from t where a = 1;\n"
            "use db2;\n"
            "select * from db1.v where b = 2;\n"      # db1.v reads db1.t (the database of its definition)
            "select * from v;\n"                      # db2.v is no view: a table
            "create or replace view db1.v as select * from t where a = 3;\n"
            "select * from db1.v;\n"
            "drop view if exists db1.v;\n"
            "select * from db1.v;\n")
    assert scans(text) == [[("db1.t", "a = 1 AND b = 2")], [("db2.v", "TRUE")], [("db2.t", "a = 3")],
                           [("db1.v", "TRUE")]]


def test_a_cte_hides_a_view_of_the_same_name():
    text = ("create view v as select * from t where a = 1;\n"
            "with v as (select * from u where b = 2) select * from v;\n")
    assert scans(text) == [[("t", "a = 1")], [("u", "b = 2")]]  # v itself, read by no query, counts alone


def test_a_view_no_query_reads_counts_as_a_query_with_a_note():
    wl = parse_workload("create view v as select * from t where a = 1;\nselect * from u;", "w.sql")
    assert [[(s.table, str(s.predicate)) for s in q.scans] for q in wl.queries] == [[("t", "a = 1")], [("u", "TRUE")]]
    assert "view v is not read by any query" in wl.queries[0].notes[0]


def test_views_from_a_metastore_are_followed_and_cycles_stop():
    defs = {("default", "mv"): "SELECT `t`.`a`, `t`.`b` FROM `default`.`t` WHERE `t`.`a` > 10",
            ("default", "c1"): "SELECT * FROM c2", ("default", "c2"): "SELECT * FROM c1"}
    asked = []

    def lookup(db, name):
        asked.append((db, name))
        return defs.get((db, name))

    got = scans("select * from mv where b = 'x';\nselect * from c1;\nselect * from t;", views=lookup)
    assert got[0] == [("default.t", "a > 10 AND b = 'x'")]
    assert got[2] == [("t", "TRUE")]
    assert asked.count(("default", "mv")) == 1  # looked up once per name


# ---- pushdown is sound -----------------------------------------------------------------------------
@pytest.mark.parametrize("query,expected", [
    # a LEFT JOIN's right side keeps its null-extended rows: WHERE on it is not pushed
    ("select * from t left join v on t.k = v.k where v.x = 1", [("u", "y = 0"), ("t", "<foreign>")]),
    # ... but the ON of a LEFT JOIN filters the right side
    ("select * from t left join v on t.k = v.k and v.x = 1", [("u", "x = 1 AND y = 0"), ("t", "TRUE")]),
    # FULL joins filter nothing
    ("select * from t full join v on t.k = v.k where v.x = 1 and t.a = 2", [("u", "y = 0"), ("t", "TRUE")]),
    # an inner join's WHERE filters both sides
    ("select * from t join v on t.k = v.k where v.x = 1 and t.a = 2",
     [("u", "x = 1 AND y = 0"), ("t", "<foreign> AND <foreign> AND a = 2")]),
    # non-deterministic filters stay where they are
    ("select * from v where rand() < v.x", [("u", "y = 0")]),
])
def test_pushdown_keeps_outer_joins_and_randomness(query, expected):
    text = "create view v as select k, x from u where y = 0;\n" + query
    assert scans(text, schema=Schema({"t": {"k": "int", "a": "int"}, "u": {"k": "int", "x": "int", "y": "int"}}))[0] \
        == expected


@pytest.mark.parametrize("view,query,expected", [
    ("select k, sum(x) s from u group by k", "select * from v where k = 1 and s > 5", "k = 1"),
    ("select k, sum(x) s from u group by rollup(k)", "select * from v where k = 1", "TRUE"),
    ("select k, x, row_number() over (partition by k order by x) r from u", "select * from v where x = 1", "TRUE"),
    ("select k, x from u limit 10", "select * from v where x = 1", "TRUE"),
    ("select k, x + 1 x1 from u", "select * from v where x1 = 2", "(x + 1) = 2"),
    ("select k, rand() r from u", "select * from v where r < 0.5", "TRUE"),
    ("select k, x from u union all select k, y from u", "select * from v where x = 1", None),
    ("select distinct k from u", "select * from v where k = 3", "k = 3"),
])
def test_what_is_pushed_through_a_view(view, query, expected):
    got = scans(f"create view v as {view};\n{query}")[0]
    if expected is None:  # a union: each branch gets the filter on its own column
        assert got == [("u", "x = 1"), ("u", "y = 1")]
    else:
        assert got == [("u", expected)]


def test_a_cte_read_twice_gets_no_filter_of_either_reader():
    text = ("with w as (select * from t where a = 1) "
            "select * from w w1 join w w2 on w1.k = w2.k where w1.b = 2 and w2.b = 3")
    assert scans(text) == [[("t", "a = 1")]]


def test_ambiguous_columns_are_not_pushed():
    text = "create view v as select k, x from u;\nselect * from v, t where x = 1"  # t may have x
    assert scans(text)[0] == [("u", "TRUE"), ("t", "<foreign>")]
    schema = Schema({"t": {"k": "int"}, "u": {"k": "int", "x": "int"}})
    assert scans(text, schema=schema)[0] == [("u", "x = 1"), ("t", "<foreign>")]

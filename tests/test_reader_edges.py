"""Reader edges without a JVM: the DDL that keeps parquet-java's dictionary filter away from FLOAT
and DOUBLE columns (issue 30), and the probe set ``apply`` checks a laid-out table with."""
from __future__ import annotations

from planner.costmodel import baselines
from planner.emit.ddl import TableMetadata, create_table_sql, floating_point_properties


def test_every_floating_column_is_written_without_a_dictionary():
    got = floating_point_properties({"id": "bigint", "x": "double", "f": "float", "d": "decimal(10,2)",
                                     "s": "struct<a:double,b:int,c:struct<z:float>>", "arr": "array<double>",
                                     "m": "map<string,double>"})
    assert got == {"parquet.enable.dictionary#x": "false", "parquet.enable.dictionary#f": "false",
                   "parquet.enable.dictionary#s.a": "false", "parquet.enable.dictionary#s.c.z": "false"}


def test_a_mixed_case_column_is_named_both_ways():
    assert floating_point_properties({"Price": "double"}) == {"parquet.enable.dictionary#Price": "false",
                                                              "parquet.enable.dictionary#price": "false"}


def test_orc_and_tables_without_floating_columns_get_nothing():
    assert floating_point_properties({"x": "double"}, "ORC") == {}
    assert floating_point_properties({"k": "int", "s": "string"}) == {}


def test_a_carried_bloom_filter_is_turned_off_for_floating_columns():
    got = floating_point_properties({"x": "double", "k": "int"}, carried={"parquet.bloom.filter.enabled": "true"})
    assert got == {"parquet.enable.dictionary#x": "false", "parquet.bloom.filter.enabled#x": "false"}


def test_the_ddl_carries_them_and_overrides_the_sources_own():
    meta = TableMetadata.of(None, {}, {"parquet.enable.dictionary#x": "true", "owner": "ops"})
    ddl = create_table_sql(baselines.full_scan("t"), {"k": "int", "x": "double"}, "t__planner_new", metadata=meta)
    assert "'parquet.enable.dictionary#x'='false'" in ddl and "'owner'='ops'" in ddl
    assert "'parquet.enable.dictionary#x'='true'" not in ddl


# ---- the probe ------------------------------------------------------------------------------------
def _probe_texts(columns, row):
    """The probes of ``facts_query``'s ``row`` (every column's facts side by side)."""
    from planner.emit.probe_sql import facts_by_column, probes

    return [p.text for p in probes(columns, facts_by_column(columns, row))]


def test_floating_columns_are_probed_at_both_zeros_and_nan_where_present():
    cols = {"x": "double", "m": "map<string,int>"}
    assert _probe_texts(cols, ["-0.0", "NaN", 3, 0, 2]) == ["x = 0.0", "x = -0.0", "x = NaN"]
    assert _probe_texts(cols, ["-1.5", "2.5", 0, 1, 0]) == ["x = 0.0", "x = -0.0", "x = -1.5", "x = 2.5"]
    assert _probe_texts(cols, ["1.5", "2.5", 0, 0, 0]) == ["x = 1.5", "x = 2.5"]


def test_other_columns_are_probed_at_their_extremes_and_long_values_are_left_out():
    cols = {"k": "bigint", "s": "string", "c": "char(3)", "big": "string"}
    texts = _probe_texts(cols, ["1", "9", "a", "b'c", "a  ", "zz ", "x" * 5000, "y"])
    assert texts == ["k = 1", "k = 9", "s = 'a'", 's = "b\'c"', "c = 'a  '", "c = 'zz '", "big = 'y'"]
    assert _probe_texts({"k": "bigint"}, [None, None]) == []  # an empty table: no extremes


def test_the_probe_covers_the_columns_the_layout_cuts_or_orders_and_every_floating_column():
    """A layout isolates values only on the columns it cuts and orders by; FLOAT/DOUBLE is where
    Parquet's filters and Spark disagree. A long comment no layout touches is not probed."""
    import datetime as dt

    from planner.cnf.ir import ColumnPair
    from planner.cnf.valueset import ValueSet
    from planner.emit.probe_sql import probe_scope
    from planner.model.layout import Layout, Ordering, Partition
    from planner.semantics.kinds import Kind

    cols = {"Ship": "date", "k": "bigint", "a": "int", "b": "int", "price": "double", "disc": "float",
            "note": "string", "flag": "boolean"}
    region = (("ship", ValueSet.range(Kind.DATE, dt.date(1995, 1, 1), dt.date(1996, 1, 1), True, False)),
              ("a_lt_b", ValueSet.points(Kind.BOOLEAN, [True])))
    layout = Layout("t", "hand-built", (Partition(1, region),), order=Ordering("sort", ("K",)),
                    derived=(("a_lt_b", ColumnPair("a", "<", "b")),))
    assert list(probe_scope(cols, layout)) == ["Ship", "k", "a", "b", "price", "disc"]
    assert list(probe_scope(cols, Layout("t", "hand-built", ()))) == ["price", "disc"]


def test_the_probe_statements_reparse_and_quote_their_literals():
    import sqlglot
    from sqlglot import exp

    from planner.emit.probe_sql import facts_by_column, facts_query, probe_query, probes, truth_query

    table = exp.to_table("db.t")
    cols = {"x": "float", "s": "string", "ts": "timestamp", "d": "decimal(38,0)"}
    facts = facts_query(table, cols).sql(dialect="spark")
    assert facts.startswith("SELECT CAST(MIN(`x`) AS STRING)") and "COUNT_IF(ISNAN(`x`))" in facts
    assert facts_query(table, {"m": "map<string,int>"}) is None
    row = ["-1.5", "2.5", 1, 0, 0, "it's ${x}", "z", "0001-01-01 00:00:00",
           "9999-12-31 23:59:59.999999", "-99999999999999999999999999999999999999", "0"]
    items = probes(cols, facts_by_column(cols, row))
    sql = probe_query(table, items).sql(dialect="spark")
    assert "CAST('-0.0' AS FLOAT)" in sql and "${" not in sql
    assert sql.count("UNION ALL") == len(items) - 1 == 9 and sql.endswith("GROUP BY q")
    assert sqlglot.parse_one(sql, read="spark") is not None
    truth = truth_query(table, items).sql(dialect="spark")
    assert truth.count("COUNT_IF(") == len(items) and " WHERE " not in truth  # no filter to push
    assert sqlglot.parse_one(truth, read="spark") is not None


def test_footer_statistics_become_the_text_cast_reads_back():
    """The footers stand in for the facts scan only where their value prints as CAST reads it."""
    import datetime as dt
    from decimal import Decimal

    from planner.emit.probe_sql import fact_text, footer_facts

    assert fact_text(Decimal("1000.00"), "decimal(15,2)") == "1000.00"
    assert fact_text(Decimal("1E+3"), "decimal(15,0)") == "1000"  # never exponent notation
    assert fact_text(-105, "decimal(15,2)") == "-1.05"  # an unscaled integer: the type's scale
    assert fact_text(dt.date(1, 1, 1), "date") == "0001-01-01"
    assert fact_text(7, "bigint") == "7" and fact_text(True, "boolean") == "true"
    assert fact_text(True, "int") is None  # a bool is no integer statistic
    assert fact_text("it's", "varchar(10)") == "it's"
    for value, type_name in ((0.5, "double"), (dt.datetime(2000, 1, 1), "timestamp"), ("a", "char(3)"),
                             (dt.datetime(2000, 1, 1), "date"), (b"x", "string"), (None, "int")):
        assert fact_text(value, type_name) is None, (value, type_name)
    cols = {"k": "bigint", "v": "double", "s": "string", "n": "int"}
    extremes = {"k": (1, 9), "v": (0.0, 1.0), "s": ("a", b"\xff"), "n": (None, None)}
    # k from its footers; v (a DOUBLE), s (a max that is no string) and anything missing are scanned
    assert footer_facts(cols, extremes) == {"k": ["1", "9"], "n": [None, None]}
    # a DOUBLE column of NULLs alone in the footers is still scanned (its zeros and NaN are facts
    # too), and a column's short facts ask nothing rather than fail
    assert footer_facts({"v": "double"}, {"v": (None, None)}) == {}
    from planner.emit.probe_sql import probes

    assert probes({"v": "double"}, {"v": [None, None]}) == []

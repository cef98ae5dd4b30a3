"""Pure checks of ``planner.semantics`` and ``planner.cnf.preimage`` at the spots where a type model
goes wrong; tests/test_spark_semantics.py holds the same against Spark, at scale."""
from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal

import pytest
import sqlglot

from planner.cnf.preimage import Sides, comparison, membership
from planner.cnf.valueset import ValueSet
from planner.semantics.coercion import comparison_type, decimal_result, wider_decimal
from planner.semantics.constants import from_sqlglot
from planner.semantics.evaluate import evaluate
from planner.semantics.floats import exact_to_float32, to_float32
from planner.semantics.kinds import Kind
from planner.semantics.settings import Raises, Settings, Typed, Unmodelled
from planner.semantics.types import kind_of_type, parse_type
from planner.semantics.zones import start_of_day, to_instant, zone

ON, OFF = Settings(True), Settings(False)
T = dt.datetime


def ev(text: str, settings: Settings = ON):
    return evaluate(from_sqlglot(sqlglot.parse_one("SELECT " + text, read="spark").expressions[0]), settings)


def const(text: str):
    return from_sqlglot(sqlglot.parse_one("SELECT " + text, read="spark").expressions[0])


def test_types_parse_as_catalogs_print_them():
    assert str(parse_type("DECIMAL(15, 2)")) == "decimal(15,2)"
    assert str(parse_type("integer")) == "int" and str(parse_type("char(10)")) == "char(10)"
    assert parse_type("array<int>").name == "other" and parse_type("timestamp_ltz").name == "timestamp"


def test_literal_types():
    for text, want in [("1.005", "decimal(4,3)"), ("1e0", "double"), ("1Y", "tinyint"), ("1S", "smallint"),
                       ("1L", "bigint"), ("1.0D", "double"), ("1.0F", "float"), ("1.0BD", "decimal(2,1)"),
                       ("2147483648", "bigint"), ("-2147483648", "int"), ("9223372036854775808", "decimal(19,0)"),
                       ("0.001", "decimal(3,3)")]:
        out = ev(text)
        assert isinstance(out, Typed) and str(out.type) == want, text


def test_decimal_precision_rules_and_the_38_digit_cap():
    d = parse_type
    assert str(decimal_result("/", d("decimal(2,1)"), d("decimal(1,0)"))) == "decimal(7,6)"
    assert str(decimal_result("*", d("decimal(38,18)"), d("decimal(38,18)"))) == "decimal(38,6)"
    assert str(wider_decimal(d("decimal(38,0)"), d("decimal(20,19)"))) == "decimal(38,0)"  # SPARK-45905


def test_ansi_changes_the_comparison_type():
    assert str(comparison_type(parse_type("int"), parse_type("string"), True)) == "bigint"
    assert str(comparison_type(parse_type("int"), parse_type("string"), False)) == "int"
    assert str(comparison_type(parse_type("decimal(15,3)"), parse_type("string"), True)) == "double"
    assert str(comparison_type(parse_type("float"), parse_type("int"), True)) == "double"
    assert str(comparison_type(parse_type("float"), parse_type("int"), False)) == "float"
    assert isinstance(ev("5 = '5.5'", ON), Raises) and ev("5 = '5.5'", OFF).value is True


def test_casts_round_and_overflow_as_spark():
    assert ev("CAST('1.005' AS DECIMAL(15,2))").value == Decimal("1.01")
    assert ev("CAST(-2.5 AS INT)").value == -2
    assert ev("CAST(300 AS TINYINT)", ON) == ev("300Y") and ev("300Y").reason == "None"  # 300Y: a parse error
    assert isinstance(ev("CAST(300 + 0 AS TINYINT)", ON), Raises) and ev("CAST(300 + 0 AS TINYINT)", OFF).value == 44
    assert ev("CAST(1e20 AS INT)", OFF).value == 2147483647  # the JVM saturates
    assert ev("TRY_CAST('5.5' AS INT)", OFF).value is None  # TRY_CAST is the ANSI cast, NULL on error
    assert isinstance(ev("CAST(2.9999999999999999999 AS INT)", ON), Unmodelled)  # Spark's storage decides
    assert ev("CAST(CAST('Infinity' AS DOUBLE) AS DECIMAL(10,0))", ON).value is None


def test_a_double_is_cast_to_decimal_only_when_every_java_reading_rounds_alike():
    # Java 17's Double.toString may print 17 digits where 16 read back (JDK-4511638): the shortest
    # 0.7030407620656315 rounds to ...632 at 15 places, its 17-digit reading 0.70304076206563149 to ...631
    assert isinstance(ev("CAST(0.7030407620656315D AS DECIMAL(16,15))"), Unmodelled)
    assert ev("CAST(0.7030407620656315D AS DECIMAL(16,10))").value == Decimal("0.7030407621")


def test_a_decimal_literal_that_may_be_a_cast_is_claimed_only_where_both_readings_agree():
    # sqlglot reads 1.5BD and CAST('1.5' AS DECIMAL(2,1)) alike; Spark folds a comparison of an
    # integral value with a decimal *literal* past BIGINT to a constant (TRUE even on NULL), and
    # compares it through its floor or ceiling, but compares a CAST widened
    folded = ev("CAST(NULL AS INT) <= 12345678901234567890.5BD")
    assert folded == Unmodelled("12345678901234567890.5: a DECIMAL literal or a cast? (Spark folds <= to TRUE "
                                "only for a literal)")
    assert isinstance(ev("CAST('' AS INT) <= 12345678901234567890.5BD", OFF), Unmodelled)  # NULL, not static
    assert ev("1 <= 12345678901234567890.5BD").value is True  # TRUE either way
    # (0 + 1) is an INT, widened with DECIMAL(38,37) to DECIMAL(38,28), where the CAST rounds to 1:
    # TRUE as a literal, FALSE as a CAST (a bare 1 is a DECIMAL(1,0) literal, and nothing rounds)
    rounded = ev("(0 + 1) < 1.0000000000000000000000000000000000001BD")
    assert rounded == Unmodelled("1.0000000000000000000000000000000000001: a DECIMAL literal or a cast? "
                                 "(they compare differently)")
    assert ev("1 < 1.5BD").value is True
    # -1.0…01BD is one literal too, and may as well be -CAST(…)
    assert isinstance(ev("(0 - 1) > -1.0000000000000000000000000000000000001BD"), Unmodelled)


def test_casts_in_a_fixed_offset_zone_are_claimed_outside_the_trusted_years():
    # a fixed offset has no transitions: java.time answers every year alike (the cases run only
    # under region zones, trusted in 1900-2100)
    utc, plus8 = Settings(True, "UTC"), Settings(False, "+08:00")
    assert ev("CAST(DATE '1800-01-01' AS TIMESTAMP)", utc) == Typed(T(1800, 1, 1), parse_type("timestamp"))
    assert ev("CAST(DATE '2500-06-30' AS TIMESTAMP)", plus8).value == T(2500, 6, 29, 16)
    assert ev("CAST(TIMESTAMP '1800-01-01 00:00:00' AS DATE)", plus8) == Typed(dt.date(1800, 1, 1), parse_type("date"))
    assert ev("CAST(TIMESTAMP_NTZ '1800-01-01 00:00:00' AS TIMESTAMP)", plus8).value == T(1799, 12, 31, 16)


def test_float_is_binary32_correctly_rounded():
    assert ev("CAST(0.1 AS FLOAT)").value == 0.10000000149011612
    assert exact_to_float32(16777217) == 16777216.0 and to_float32(1e39) == float("inf")
    # a decimal just above a float32 tie rounds up (rounding through a double would round to even)
    assert exact_to_float32(Decimal("16777217.000000000000001")) == 16777218.0


def test_integer_against_a_decimal_literal_past_bigint_is_a_constant():
    # Spark's analyzer: CAST(NULL AS INT) <= 12345678901234567890.5 is TRUE, NULL or not
    assert ev("CAST(NULL AS INT) <= 12345678901234567890.5").value is True
    sides = comparison(parse_type("int"), "<=", const("12345678901234567890.5"), ON)
    assert sides == Sides(ValueSet.everything(sides.true.kind), ValueSet.nothing(sides.true.kind))


def test_time_zone_gaps_and_overlaps_resolve_as_java_time():
    ny = zone("America/New_York")
    assert to_instant(T(2020, 3, 8, 2, 30), ny) == T(2020, 3, 8, 7, 30)   # gap: moved later
    assert to_instant(T(2020, 11, 1, 1, 30), ny) == T(2020, 11, 1, 5, 30)  # overlap: earlier offset
    assert start_of_day(dt.date(2020, 1, 1), zone("Asia/Tokyo")) == T(2019, 12, 31, 15)
    assert ev("TIMESTAMP '2020-01-01 00:00:00'", Settings(True, "Asia/Tokyo")).value == T(2019, 12, 31, 15)


def test_preimages_of_column_casts():
    d153, d156 = parse_type("decimal(15,3)"), parse_type("decimal(15,6)")
    # case 3: compared as DOUBLE, '1.00499999999999999999' is the double 1.005 rounds to
    s = comparison(d153, "<=", const("'1.00499999999999999999'"), ON)
    assert s.true.contains(Decimal("1.005")) and not s.true.contains(Decimal("1.006"))
    # case 2: 1.0/3 is DECIMAL(7,6) 0.333333; 1/3 a DOUBLE, so x >= 1/3 starts at 0.333334
    assert str(comparison(d156, ">=", const("1.0/3"), ON).true) == "[0.333333, +inf)"
    assert str(comparison(d156, ">=", const("1/3"), ON).true) == "[0.333334, +inf)"
    # case 4: CHAR(10) 'abc' is padded, so is the literal
    assert str(comparison(parse_type("char(10)"), "=", const("'abc'"), ON).true) == "{'abc       '}"
    true, _ = membership(parse_type("char(5)"), (const("'ab'"), const("'abcdef'")), ON)
    assert str(true) == "{'ab   ', 'abcdef'}"
    # case 5: FLOAT compared with a DECIMAL literal is compared as DOUBLE; with a FLOAT one, as FLOAT
    f = parse_type("float")
    assert not comparison(f, "=", const("0.1"), ON).true.contains(Decimal("0.10000000149011612"))
    assert str(comparison(f, "=", const("0.1F"), ON).true) == "{0.10000000149011612}"
    # a BIGINT column against a DOUBLE: the integers that round to it
    assert str(comparison(parse_type("bigint"), "=", const("9007199254740992e0"), ON).true) == \
        "[9007199254740992, 9007199254740993]"


def test_found_by_the_long_differential_run():
    """SEMANTICS_EXPRESSIONS=10000 found two: '-0' as FLOAT is -0.0 (Float.parseFloat), and Spark
    negates a decimal through Scala's 34-digit MathContext (-(-99…9) with 38 digits overflows)."""
    from decimal import Decimal

    from planner.semantics.arithmetic import negate
    from planner.semantics.casts import cast
    from planner.semantics.settings import Settings, Typed, Unmodelled
    from planner.semantics.types import SparkType

    on = Settings(True, "UTC")
    got = cast(Typed("-0", SparkType("string")), SparkType("float"), on)
    assert got.value == 0.0 and math.copysign(1.0, got.value) == -1.0
    wide = Typed(Decimal("9" * 38), SparkType("decimal", 38, 0))
    assert isinstance(negate(wide, on), Unmodelled)
    assert negate(Typed(Decimal("9" * 34), SparkType("decimal", 38, 0)), on).value == Decimal("-" + "9" * 34)


def test_a_char_in_list_is_padded_only_when_every_item_is_a_string():
    """SEMANTICS_PREDICATES=2500 found it (ANSI off): Spark pads an IN list for a CHAR column only
    when all its items are STRINGs as written. Spark's answers for a CHAR(5) row 'ab':
    ``c IN ('ab', 1)`` FALSE, ``c IN ('ab', NULL)`` NULL, ``c IN ('ab', CAST('x' AS CHAR(3)))`` and
    ``c IN ('ab', CAST(1 AS STRING))`` TRUE."""
    c5 = parse_type("char(5)")

    def members(*items, settings=OFF):
        return membership(c5, tuple(const(i) for i in items), settings)

    padded = "ab   "
    for items in (("'ab'", "1"), ("'ab'", "CAST(1 AS TINYINT)"), ("'ab'", "DATE '2020-01-01'"), ("'ab'", "1.5")):
        true, null = members(*items)
        assert not true.contains(padded) and not null, items
    true, null = members("'ab'", "NULL")
    assert not true.contains(padded) and null
    for items in (("'ab'", "CAST('x' AS CHAR(3))"), ("'ab'", "CAST(1 AS STRING)"), ("'ab'", "CAST(NULL AS STRING)")):
        true, _ = members(*items)
        assert true.contains(padded), items
    # the two predicates the run found, row '' (stored '     ') and row 'zz' ('zz   ')
    true, _ = members("CAST(10 AS TINYINT)", "CAST(DATE '1999-12-31' AS CHAR(5))", "''")
    assert not true.contains("     ")
    true, null = members("'zz'", "CAST(CAST(NULL AS BOOLEAN) AS STRING)", "((-2147483648) * 2.9999999999999999999)")
    assert not true.contains("zz   ") and null


def test_a_decimal_far_too_wide_is_an_overflow_not_a_crash():
    from decimal import Decimal

    from planner.analysis.table_analysis import analyze_table
    from planner.semantics.casts import round_decimal
    from planner.workload import parse_workload
    from planner.workload.scans import Schema

    assert round_decimal(Decimal("1.5e400"), 38, 6) is None
    assert round_decimal(Decimal("-1.5e400"), 400, 6) is None
    assert round_decimal(Decimal("99.995"), 4, 2) is None  # rounds up to 100.00: one digit too many
    assert round_decimal(Decimal("99.994"), 4, 2) == Decimal("99.99")
    assert round_decimal(Decimal("0.0004"), 1, 3) == Decimal("0.000")
    # found by comparing ANSI and legacy readings of generated predicates: this analysis raised
    # decimal.InvalidOperation
    q = "select * from t where n IN (3, '1.5e400', CAST('7' AS DECIMAL(15,6)))"
    wl = parse_workload(q, "w.sql", schema=Schema({"t": {"n": "bigint"}}))
    analyze_table(wl, wl.tables()[0], {"n": "bigint"})


def test_the_type_of_an_in_list_without_a_common_type_is_unmodelled_with_its_reason():
    # bind.infer_kinds asks type_of, which must answer (not raise) for a list Spark would reject
    from planner.semantics.evaluate import type_of

    c = from_sqlglot(sqlglot.parse_one("SELECT 1 IN (DATE '2020-01-01')", read="spark").expressions[0])
    assert type_of(c, Settings(True)) == Unmodelled("IN over int, date")


@pytest.fixture
def host_zone():
    """Run with the process's own time zone set to a given one (restored after)."""
    import os
    import time

    old = os.environ.get("TZ")

    def set_zone(name: str) -> None:
        os.environ["TZ"] = name
        time.tzset()

    yield set_zone
    if old is None:
        os.environ.pop("TZ", None)
    else:
        os.environ["TZ"] = old
    time.tzset()


def test_a_day_whose_midnight_lies_in_a_gap_begun_before_it_starts_at_the_gap():
    # America/Toronto, 1919-03-31: the clocks went from 23:30 to 00:30, so the day began at 04:30 UTC
    assert start_of_day(dt.date(1919, 3, 31), zone("America/Toronto")) == dt.datetime(1919, 3, 31, 4, 30)
    assert start_of_day(dt.date(2018, 11, 4), zone("America/Sao_Paulo")) == dt.datetime(2018, 11, 4, 3, 0)


@pytest.mark.parametrize("host", ["UTC", "America/Bogota", "Asia/Kolkata"])
def test_walls_and_starts_of_days_do_not_depend_on_the_host_zone(host_zone, host):
    from planner.semantics.zones import to_wall

    host_zone(host)
    assert to_wall(dt.datetime(2020, 1, 1, 12), zone("UTC")) == dt.datetime(2020, 1, 1, 12)
    assert to_wall(dt.datetime(2020, 1, 1, 12), zone("Asia/Kolkata")) == dt.datetime(2020, 1, 1, 17, 30)
    assert start_of_day(dt.date(1919, 3, 31), zone("America/Toronto")) == dt.datetime(1919, 3, 31, 4, 30)
    assert start_of_day(dt.date(2018, 11, 4), zone("America/Sao_Paulo")) == dt.datetime(2018, 11, 4, 3, 0)


def test_types_print_as_spark_spells_them():
    # a layout and the cells table's DDL keep column types as str(parse_type(...))
    for text in ("varchar(5)", "char(1)", "varchar(1)", "decimal(15,2)", "array<int>", "map<string,int>", "binary",
                 "interval day"):
        assert str(parse_type(text)) == text, text
    assert parse_type("char(1)").kind == parse_type("varchar(1)").kind == Kind.STRING
    assert parse_type("binary").kind == parse_type("array<int>").kind == Kind.OTHER
    assert kind_of_type("decimal(15,2)") == Kind.DECIMAL and kind_of_type("char(10)") == Kind.STRING


def test_a_layouts_session_settings_read_back():
    from planner.semantics.settings import DEFAULT_TIME_ZONE

    for settings in (Settings(False, "Asia/Tokyo"), Settings(True, "+08:00")):
        assert Settings.from_json(settings.to_json()) == settings
    assert Settings.from_json({}) == Settings(True, DEFAULT_TIME_ZONE)  # a layout written before they were kept
    assert Settings.from_json({"ansi": False}) == Settings(False, DEFAULT_TIME_ZONE)

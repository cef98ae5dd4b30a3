"""Edges of binding a comparison to a value set (``planner.cnf.bind``, ``planner.cnf.preimage``), each
one a case where a wrong set would skip a matching row or read more than it must. They were found
by mutation testing (``./dev mutate cnf``, ``tests/mutation/report.md``): each test names the
rule it pins, not the mutant."""
from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
import sqlglot

from planner.cnf.bind import bind
from planner.cnf.convert import to_ir
from planner.cnf.ir import Opaque, Pred, atoms
from planner.cnf.normalize import cnf, nnf
from planner.cnf.valueset import Interval, ValueSet
from planner.semantics.kinds import Kind
from planner.semantics.settings import Settings
from planner.semantics.types import parse_type

ON, OFF = Settings(True), Settings(False)


def _ir(where: str):
    return to_ir(sqlglot.parse_one(f"SELECT * FROM t WHERE {where}", read="spark").args["where"].this,
                 lambda c: c.name.lower(), "spark")


def _bind(where: str, column_type: str, settings=ON):
    column = where.split()[0]
    return bind(_ir(where), {column: parse_type(column_type)}, settings)


@pytest.mark.parametrize("where", ["n = 1.500", "n >= 1.500", "n <= 1.500"])
def test_a_literal_of_a_wider_scale_on_the_columns_grid_keeps_its_value(where):
    p = _bind(where, "decimal(10,2)")
    assert isinstance(p, Pred) and p.true.contains(Decimal("1.50")), p


def test_an_equality_at_a_wider_scale_is_the_one_value():
    assert _bind("n = 1.500", "decimal(10,2)").true == ValueSet.points(Kind.DECIMAL, [Decimal("1.5")])


@pytest.mark.parametrize("where,inside,outside", [
    ("i = CAST(1 AS FLOAT)", [1], [0, 2]),
    ("i >= CAST(1 AS FLOAT)", [1, 2], [0]),
])
def test_an_int_against_a_small_float_with_ansi_off(where, inside, outside):
    p = _bind(where, "int", OFF)
    assert isinstance(p, Pred)
    assert all(p.true.contains(v) for v in inside) and not any(p.true.contains(v) for v in outside), p.true


@pytest.mark.parametrize("where", ["i < 99999999999999999999.5", "i > -99999999999999999999.5"])
def test_an_integer_against_a_decimal_past_bigint_is_true_on_every_row(where):
    """Spark's analyzer folds it to TRUE, NULL rows included (tests/test_semantics_units.py)."""
    p = _bind(where, "int")
    assert isinstance(p, Pred) and p.true == ValueSet.everything(Kind.INTEGER), p
    assert p.false.is_empty()


def test_the_negation_of_an_always_true_comparison_prunes_everything():
    assert cnf(nnf(bind(_ir("NOT (i < 99999999999999999999.5)"), {"i": parse_type("int")}, ON))).unsatisfiable


def test_a_constant_that_fails_only_under_ansi_is_named_so():
    one = _bind("i = CAST('x' AS INT)", "int", ON)
    assert isinstance(one, Opaque) and one.reason.startswith("Spark fails the query"), one


def test_a_between_bound_that_fails_under_ansi_is_named_so():
    one = _bind("i BETWEEN 1 AND CAST('x' AS INT)", "int", ON)
    assert isinstance(one, Opaque) and one.reason.startswith("Spark fails the query"), one


def _short_bounds(where: str) -> list[Opaque]:
    e = _bind(where, "char(5)")
    return [a for a in atoms(e) if isinstance(a, Opaque) and "Spark does not pad it" in a.reason]


@pytest.mark.parametrize("where", ["c BETWEEN 'ab' AND 'az'", "c NOT BETWEEN 'aa' AND 'ab'"])
def test_char_between_bounds_shorter_than_the_column_stay_opaque(where):
    assert len(_short_bounds(where)) == 2, atoms(_bind(where, "char(5)"))


@pytest.mark.parametrize("where,column,typ", [
    ("c BETWEEN 'abcde' AND 'abcdz'", "c", "char(5)"),
    ("v BETWEEN 'a' AND 'b'", "v", "varchar(10)"),
])
def test_between_bounds_that_need_no_padding_are_exact(where, column, typ):
    e = _bind(where, typ)
    assert not any(isinstance(a, Opaque) for a in atoms(e)), e


def test_an_integer_literal_against_a_wide_decimal_is_compared_exactly():
    p = _bind("x < 5", "decimal(38,30)")
    assert isinstance(p, Pred) and p.exact and p.true.contains(Decimal("4.999999999999999999999999999999")), p
    assert _bind("x = 5", "decimal(38,30)").true == ValueSet.points(Kind.DECIMAL, [Decimal(5)])


@pytest.mark.parametrize("where,typ", [
    ("n > 999.99", "decimal(5,2)"), ("n >= 1000", "decimal(5,2)"),
    ("n > 2147483647", "int"), ("n < -2147483648", "int"),
])
def test_a_comparison_past_the_columns_range_matches_nothing(where, typ):
    assert _bind(where, typ).true.is_empty()


def test_the_largest_value_of_a_column_is_kept():
    assert _bind("i = 2147483647", "int").true.contains(2147483647)
    assert _bind("n >= 999.99", "decimal(5,2)").true.contains(Decimal("999.99"))


@pytest.mark.parametrize("settings", [ON, OFF])
def test_a_string_against_a_number_is_opaque(settings):
    o = _bind("s = 1.5", "string", settings)
    assert isinstance(o, Opaque), o


def test_a_string_against_a_timestamp_is_opaque():
    assert isinstance(_bind("s < TIMESTAMP '2020-01-01 00:00:00'", "string"), Opaque)


def test_a_date_against_a_wall_clock_timestamp_keeps_its_day_in_any_zone():
    p = _bind("d < CAST('2020-01-01 02:00:00' AS TIMESTAMP_NTZ)", "date", Settings(True, "America/New_York"))
    assert isinstance(p, Opaque) or p.true.contains(dt.date(2020, 1, 1)), p


def test_an_unknown_column_is_opaque_and_named():
    o = bind(_ir("u = 1"), {})
    assert isinstance(o, Opaque) and o.reason == "unknown column u", o


def test_two_intervals_ending_at_one_value_keep_it_when_either_does():
    vs = ValueSet.of(Kind.STRING, [Interval(None, "b", False, True), Interval("a", "b", False, False)])
    assert vs.contains("b") and vs == ValueSet.compare(Kind.STRING, "<=", "b")

"""Regions as SQL (``planner.emit.conditions``), case by case, each read back with SQL's NULL logic.

The emitted condition of a region must be TRUE exactly for the rows inside it and FALSE or NULL
for every other row (it only ever stands where SQL keeps TRUE). These pin the shapes the random
layouts of ``tests/test_emit.py`` reach rarely: a derived pair that may be TRUE or FALSE, gaps
written as NOT IN, numbers too wide for a DECIMAL, ``${`` in a value, the partition filter's runs.
"""
from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
import sqlglot
from sqlglot import exp
from test_emit import evaluate

from planner.cnf.ir import ColumnPair
from planner.cnf.valueset import Interval, ValueSet
from planner.emit.conditions import (
    attribute_expr,
    attribute_value,
    literal,
    partition_filter,
    region_contains,
    region_predicate,
    string_literal,
    valueset_predicate,
)
from planner.errors import LayoutError
from planner.semantics.kinds import Kind

PAIR = {"a < b": ColumnPair("a", "<", "b")}
B = Kind.BOOLEAN
ROWS = [{"a": a, "b": b} for a in (None, 1, 2) for b in (None, 1, 2)]


def sql(e) -> str:
    return e.sql(dialect="spark")


@pytest.mark.parametrize("truths,null,want", [
    ([True], False, "`a` < `b`"),
    ([False], False, "NOT (`a` < `b`)"),
    ([True, False], False, "NOT (`a` < `b`) IS NULL"),
    ([True], True, "`a` < `b` OR (`a` < `b`) IS NULL"),
    ([False], True, "NOT (`a` < `b`) OR (`a` < `b`) IS NULL"),
    ([], True, "(`a` < `b`) IS NULL"),
])
def test_a_derived_pair_is_true_exactly_in_its_set(truths, null, want):
    vs = ValueSet.of(B, [Interval(t, t, True, True) for t in truths], null)
    pred = valueset_predicate(attribute_expr("a < b", PAIR), vs)
    assert sql(pred) == want
    back = sqlglot.parse_one(sql(pred), read="spark")
    for row in ROWS:
        inside = region_contains({"a < b": vs}, row, PAIR)
        assert (evaluate(back, row) is True) == inside, (row, want)
        assert inside == vs.contains(attribute_value(row, "a < b", PAIR))


@pytest.mark.parametrize("vs,want", [
    (ValueSet.points(Kind.INTEGER, [3, 7]).complement().intersect(ValueSet.not_null(Kind.INTEGER)),
     "NOT `x` IN (3, 7)"),
    (ValueSet.points(Kind.INTEGER, [3]).complement().intersect(ValueSet.not_null(Kind.INTEGER)), "`x` <> 3"),
    (ValueSet.points(Kind.INTEGER, [3]).complement(), "`x` <> 3 OR `x` IS NULL"),
    (ValueSet.of(Kind.INTEGER, [Interval(1, 5, True, False), Interval(9, 9, True, True), Interval(12, 12, True, True)]),
     "(`x` >= 1 AND `x` <= 4) OR `x` IN (9, 12)"),  # integers: closed bounds
    (ValueSet.of(Kind.INTEGER, [Interval(1, 5, True, False), Interval(9, 9, True, True)]),
     "(`x` >= 1 AND `x` <= 4) OR `x` = 9"),
    (ValueSet.not_null(Kind.INTEGER), "NOT `x` IS NULL"),
    (ValueSet.only_null(Kind.INTEGER), "`x` IS NULL"),
    (ValueSet.everything(Kind.INTEGER), "TRUE"),
    (ValueSet.nothing(Kind.INTEGER), "FALSE"),
])
def test_value_sets_as_sql(vs, want):
    pred = valueset_predicate(attribute_expr("x", {}), vs)
    assert sql(pred) == want
    back = sqlglot.parse_one(sql(pred), read="spark")
    for x in (None, 0, 1, 3, 4, 5, 7, 9, 12, 13):
        assert (evaluate(back, {"x": x}) is True) == vs.contains(x), (x, want)


def test_a_region_is_the_conjunction_of_its_attributes():
    low = ValueSet.of(Kind.INTEGER, [Interval(None, 5, False, False)], True)
    assert sql(region_predicate((("x", low), ("y", ValueSet.points(Kind.INTEGER, [1]))))) == \
        "(`x` <= 4 OR `x` IS NULL) AND `y` = 1"
    assert sql(region_predicate({"x": ValueSet.everything(Kind.INTEGER)})) == "TRUE"
    assert sql(region_predicate({"x": low, "y": ValueSet.nothing(Kind.INTEGER)})) == "FALSE"
    assert sql(region_predicate((), table_alias="t")) == "TRUE"
    assert sql(region_predicate({"x": low}, table_alias="t")) == "`t`.`x` <= 4 OR `t`.`x` IS NULL"


@pytest.mark.parametrize("op", ["<", "<=", "=", "<>", ">", ">="])
def test_a_pair_attribute_of_a_row(op):
    import operator

    py = {"<": operator.lt, "<=": operator.le, "=": operator.eq, "<>": operator.ne, ">": operator.gt,
          ">=": operator.ge}[op]
    derived = {"p": ColumnPair("a", op, "b")}
    for row in ROWS:
        want = None if row["a"] is None or row["b"] is None else py(row["a"], row["b"])
        assert attribute_value(row, "p", derived) is want
        back = sqlglot.parse_one(sql(attribute_expr("p", derived)), read="spark")
        assert evaluate(back, row) is want


def test_an_unknown_pair_operator_is_refused():
    with pytest.raises(LayoutError, match="derived attribute 'a ~ b' has an unknown operator '~'"):
        attribute_expr("a ~ b", {"a ~ b": ColumnPair("a", "~", "b")})


@pytest.mark.parametrize("value,want", [
    (None, "NULL"), (True, "TRUE"), (False, "FALSE"), (12, "12"), (-3, "-3"),
    (Decimal("1E+3"), "1000"), (Decimal("0.001"), "0.001"), (Decimal("-12.50"), "-12.50"),
    (0.1, "0.1"), (Decimal("1E+300"), "1E+300"), (Decimal("1E-300"), "1E-300"),
    (Decimal("1" * 38), "1" * 38), (Decimal("0." + "1" * 38), "0." + "1" * 38),
    (Decimal("1" * 39), "1." + "1" * 38 + "E+38"),  # 39 digits: no DECIMAL holds it, a DOUBLE literal does
    (dt.date(1995, 1, 1), "CAST('1995-01-01' AS DATE)"),
    (dt.datetime(2019, 12, 31, 15, 0), "CAST('2019-12-31 15:00:00+00:00' AS TIMESTAMP)"),
    ("it's", "'it\\'s'"),
])
def test_literals(value, want):
    assert sql(literal(value)) == want


def test_unwritable_literals_are_refused():
    for bad, why in [(Decimal("NaN"), "non-finite"), (Decimal("Infinity"), "non-finite"), (object(), "object")]:
        with pytest.raises(LayoutError, match=why):
            literal(bad)


@pytest.mark.parametrize("value,want", [
    ("plain", "'plain'"),
    ("a${b}", "CONCAT('a$', '{b}')"),
    ("${x}${y}", "CONCAT('$', '{x}$', '{y}')"),
    ("p${q}r${s}t", "CONCAT('p$', '{q}r$', '{s}t')"),
    ("a$b{c}", "'a$b{c}'"),
])
def test_string_literals_never_hold_a_substitution(value, want):
    e = string_literal(value)
    assert sql(e) == want and "${" not in sql(e)
    assert "".join(lit.this for lit in e.find_all(exp.Literal)) == value


@pytest.mark.parametrize("read,known,want", [
    ([0, 3], [1, 2, 3], "`planner_pid` IN (0, 3) OR NOT `planner_pid` BETWEEN 1 AND 3"),
    ([0], [1, 2, 3, 7, 8, 10], "`planner_pid` IN (0) OR NOT (`planner_pid` BETWEEN 1 AND 3 OR `planner_pid` "
                               "BETWEEN 7 AND 8 OR `planner_pid` BETWEEN 10 AND 10)"),
    ([0, 5], [5, 3, 4], "`planner_pid` IN (0, 5) OR NOT `planner_pid` BETWEEN 3 AND 5"),
    ([0, 2], [1, 2, 5], "`planner_pid` IN (0, 2) OR NOT (`planner_pid` BETWEEN 1 AND 2 OR `planner_pid` "
                        "BETWEEN 5 AND 5)"),
])
def test_the_partition_filter_reads_what_it_needs_and_every_unknown_id(read, known, want):
    f = partition_filter("planner_pid", read, known)
    assert sql(f) == want
    back = sqlglot.parse_one(sql(f), read="spark")
    for pid in range(0, 13):
        wanted = pid in read or pid not in known
        assert (evaluate(back, {"planner_pid": pid}) is True) == wanted, pid


def test_the_partition_filter_guard_reads_everything_when_it_holds():
    guard = exp.NEQ(this=exp.Anonymous(this="current_timezone", expressions=[]), expression=exp.Literal.string("UTC"))
    assert sql(partition_filter("p", [0, 2], [1, 2], guard)) == \
        "`p` IN (0, 2) OR NOT `p` BETWEEN 1 AND 2 OR CURRENT_TIMEZONE() <> 'UTC'"

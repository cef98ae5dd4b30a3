"""Literal values against column kinds (``planner.cnf.values``), case by case.

``coerce`` decides what a literal means when Spark compares it with a column of another kind, and
the cost model uses it on Parquet footers' min and max too (a row group is skipped on them): a
wrong coercion prunes wrongly. ``None`` means "no exact meaning": the caller then claims nothing.
"""
from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from planner.cnf.values import (
    coerce,
    float_value,
    from_json,
    kind_of_value,
    parse_date,
    parse_timestamp,
    predecessor,
    successor,
    to_json,
)
from planner.semantics.kinds import Kind

K = Kind
D, T = dt.date, dt.datetime


@pytest.mark.parametrize("value,kind", [
    (True, K.BOOLEAN), (False, K.BOOLEAN), (3, K.INTEGER), (0.5, K.FLOAT), (Decimal("1.5"), K.DECIMAL),
    (T(2020, 1, 1), K.TIMESTAMP), (D(2020, 1, 1), K.DATE), ("x", K.STRING), (b"x", K.OTHER), (None, K.OTHER),
])
def test_kind_of_value(value, kind):
    assert kind_of_value(value) is kind


@pytest.mark.parametrize("text,want", [
    ("2020-01-05", D(2020, 1, 5)), (" 2020-1-5 ", D(2020, 1, 5)), ("2020-02-30", None), ("2020-01", None),
    ("20200105", None), ("2020-01-05 12:00:00", None), ("", None),
])
def test_parse_date(text, want):
    assert parse_date(text) == want


@pytest.mark.parametrize("text,want", [
    ("2020-01-05 12:34:56", T(2020, 1, 5, 12, 34, 56)), ("2020-01-05T12:34", T(2020, 1, 5, 12, 34)),
    ("2020-01-05 12:34:56.5", T(2020, 1, 5, 12, 34, 56, 500000)),
    ("2020-01-05 12:34:56.000123", T(2020, 1, 5, 12, 34, 56, 123)),
    ("2020-01-05", T(2020, 1, 5)), (" 2020-1-5 1:02:03 ", T(2020, 1, 5, 1, 2, 3)),
    ("2020-01-05 25:00:00", None), ("2020-13-05 01:00:00", None), ("nope", None), ("2020-01-05 12", None),
])
def test_parse_timestamp(text, want):
    assert parse_timestamp(text) == want


@pytest.mark.parametrize("value,kind,want", [
    # same kind: unchanged
    (5, K.INTEGER, 5), ("a", K.STRING, "a"), (D(2020, 1, 1), K.DATE, D(2020, 1, 1)),
    # numbers
    (5, K.DECIMAL, Decimal(5)), (Decimal("2.0"), K.INTEGER, Decimal("2.0")), (Decimal("2.5"), K.INTEGER, Decimal("2.5")),
    (0.1, K.DECIMAL, Decimal("0.1")), (3.0, K.INTEGER, Decimal(3)), (2.0 ** 53, K.INTEGER, None),
    (-(2.0 ** 53), K.INTEGER, None), (2.0 ** 53 - 1, K.INTEGER, Decimal(2 ** 53 - 1)),
    (float("nan"), K.DECIMAL, None), (float("inf"), K.INTEGER, None), (0.5, K.STRING, None), (0.5, K.DATE, None),
    # FLOAT and DOUBLE columns: the double nearest the literal
    (0.1, K.FLOAT, Decimal("0.1")), (Decimal("0.1"), K.FLOAT, Decimal("0.1")), ("0.1", K.FLOAT, Decimal("0.1")),
    (Decimal("0.30000000000000004441"), K.FLOAT, Decimal("0.30000000000000004")), (1, K.FLOAT, Decimal("1.0")),
    # strings compared with other kinds
    ("2020-01-05", K.DATE, D(2020, 1, 5)), ("2020-1-5 x", K.DATE, None),
    ("2020-01-05 10:00:00", K.TIMESTAMP, T(2020, 1, 5, 10)), ("2020-01-05", K.TIMESTAMP, T(2020, 1, 5)),
    (" 12 ", K.INTEGER, 12), ("12.0", K.INTEGER, 12), ("5.5", K.INTEGER, None), ("1e2", K.INTEGER, 100),
    ("5.5", K.DECIMAL, Decimal("5.5")), (" -1.25", K.DECIMAL, Decimal("-1.25")), ("x", K.DECIMAL, None),
    ("NaN", K.DECIMAL, None), ("Infinity", K.INTEGER, None), ("true", K.BOOLEAN, None),
    # dates and timestamps
    (D(2020, 1, 5), K.TIMESTAMP, T(2020, 1, 5)), (T(2020, 1, 5, 1), K.DATE, None),
    # a string column against a date or number: no string range says which rows match
    (D(2020, 1, 5), K.STRING, None), (5, K.STRING, None), (Decimal(5), K.STRING, None), (True, K.INTEGER, None),
])
def test_coerce(value, kind, want):
    got = coerce(value, kind)
    assert got == want and type(got) is type(want), (got, want)


@pytest.mark.parametrize("value,want", [
    (True, None), ("nope", None), ("nan", None), (D(2020, 1, 1), None), (10 ** 400, None), (Decimal("1E+400"), None),
    (float("inf"), None), (2, Decimal("2.0")), (" 0.25 ", Decimal("0.25")), (Decimal("0.1"), Decimal("0.1")),
])
def test_float_value(value, want):
    assert float_value(value) == want


@pytest.mark.parametrize("value,kind,succ,pred", [
    (5, K.INTEGER, 6, 4), (D(2020, 3, 1), K.DATE, D(2020, 3, 2), D(2020, 2, 29)),
    (D.max, K.DATE, None, D.max - dt.timedelta(days=1)), (D.min, K.DATE, D.min + dt.timedelta(days=1), None),
    (Decimal(5), K.INTEGER, None, None), (True, K.INTEGER, None, None), (5, K.DECIMAL, None, None),
    (T(2020, 1, 1), K.DATE, None, None), ("a", K.STRING, None, None),
])
def test_successor_and_predecessor(value, kind, succ, pred):
    assert successor(value, kind) == succ and predecessor(value, kind) == pred


@pytest.mark.parametrize("value,obj", [
    (None, None), (5, 5), ("s", "s"), (True, True), (Decimal("1.50"), {"decimal": "1.50"}),
    (D(2020, 1, 5), {"date": "2020-01-05"}), (T(2020, 1, 5, 1, 2, 3, 4), {"timestamp": "2020-01-05 01:02:03.000004"}),
])
def test_json_round_trip(value, obj):
    assert to_json(value) == obj
    back = from_json(obj)
    assert back == value and type(back) is type(value)


def test_an_unknown_json_tag_is_refused():
    with pytest.raises(ValueError, match="unknown value tag 'money'"):
        from_json({"money": "5"})

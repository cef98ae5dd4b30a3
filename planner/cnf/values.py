"""The values a column's value sets hold, and the kinds (value families) of columns.

A value is a plain Python object: ``int``, ``Decimal``, ``str``, ``datetime.date``,
``datetime.datetime`` or ``bool``. A *kind* names the family a column belongs to, which fixes how
values compare and whether the domain is discrete (integers and dates are: ``x > 5`` is
``x >= 6``; decimals and strings are not). The column's full Spark type (``decimal(15,2)``,
``char(10)``, ``float``) lives in ``planner.semantics.types``; how a query's constant becomes
such a value is ``planner.cnf.preimage``'s business.

Per kind: FLOAT (FLOAT and DOUBLE columns) holds the shortest decimal that reads back as the
double (``float_value``), NaN above every value; STRING holds CHAR(n) values padded to n, as Spark
reads them; TIMESTAMP holds the *instant*, as a naive ``datetime`` in UTC, so that a layout means
the same rows in every session time zone.

``coerce`` reads statistics text (a column's min and max) into a value, for estimates only.
"""
from __future__ import annotations

import datetime as dt
import math
import re
from decimal import Decimal, InvalidOperation
from typing import Any

from planner.semantics.kinds import Kind

Value = Any  # int | Decimal | str | date | datetime | bool


def kind_of_value(value: Value) -> Kind:
    if isinstance(value, bool):
        return Kind.BOOLEAN
    if isinstance(value, int):
        return Kind.INTEGER
    if isinstance(value, float):
        return Kind.FLOAT
    if isinstance(value, Decimal):
        return Kind.DECIMAL
    if isinstance(value, dt.datetime):
        return Kind.TIMESTAMP
    if isinstance(value, dt.date):
        return Kind.DATE
    if isinstance(value, str):
        return Kind.STRING
    return Kind.OTHER


_DATE_RE = re.compile(r"^\s*(\d{4})-(\d{1,2})-(\d{1,2})\s*$")
_TS_RE = re.compile(r"^\s*(\d{4})-(\d{1,2})-(\d{1,2})[ T](\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?\s*$")


def parse_date(text: str) -> dt.date | None:
    m = _DATE_RE.match(text)
    if not m:
        return None
    try:
        return dt.date(int(m[1]), int(m[2]), int(m[3]))
    except ValueError:
        return None


def parse_timestamp(text: str) -> dt.datetime | None:
    m = _TS_RE.match(text)
    if not m:
        d = parse_date(text)
        return dt.datetime(d.year, d.month, d.day) if d else None
    try:
        micro = int((m[7] or "0").ljust(6, "0"))
        return dt.datetime(int(m[1]), int(m[2]), int(m[3]), int(m[4]), int(m[5]), int(m[6] or 0), micro)
    except ValueError:
        return None


def coerce(value: Value, kind: Kind) -> Value | None:
    """Coerce a literal to the kind of the column it is compared with, or ``None`` if unsafe."""
    if kind is Kind.FLOAT:
        return float_value(value)
    have = kind_of_value(value)
    if have is kind:
        return value
    if kind is Kind.DECIMAL and have is Kind.INTEGER:
        return Decimal(value)
    if have is Kind.FLOAT:
        # A DOUBLE literal (1e-1, CAST(.. AS DOUBLE)): Spark compares the column as a double. A
        # decimal of up to 15 digits rounds to a double exactly when it is the shortest decimal
        # reading back as that double; an integer below 2**53 is itself a double.
        if not math.isfinite(value):
            return None
        if kind is Kind.DECIMAL:
            return Decimal(repr(value))
        if kind is Kind.INTEGER and abs(value) < 2 ** 53:
            return Decimal(value)
        return None
    if kind is Kind.INTEGER and have is Kind.DECIMAL:
        # ``int_col = 2.0`` matches 2; ``int_col = 2.5`` matches nothing. Keep the decimal: intervals
        # compare int and Decimal correctly, and discreteness is applied by the caller.
        return Decimal(value)
    if have is Kind.STRING:
        if kind is Kind.DATE:
            return parse_date(value)
        if kind is Kind.TIMESTAMP:
            return parse_timestamp(value)
        if kind in (Kind.INTEGER, Kind.DECIMAL):
            try:
                d = Decimal(value.strip())
            except InvalidOperation:
                return None
            if not d.is_finite():
                return None  # 'NaN', 'Infinity': Spark orders NaN above every number
            if kind is Kind.INTEGER:
                # int_col = '5.5': Spark with ANSI off (and Hive) casts the string to the column's
                # type, truncating it to 5; only an integral string means the same everywhere.
                return int(d) if d == d.to_integral_value() else None
            return d
        return None
    if kind is Kind.TIMESTAMP and have is Kind.DATE:
        return dt.datetime(value.year, value.month, value.day)
    # A string column compared with a date (or a number) is cast to the literal's type by Spark:
    # s = DATE '2020-01-05' holds for '2020-1-5', ' 2020-01-05' and '2020-01-05 12:00:00'. No
    # string range describes those rows, so the caller makes the predicate opaque.
    return None


def float_value(value: Value) -> Decimal | None:
    """A literal compared with a FLOAT/DOUBLE column, as Spark compares it: rounded to a double.

    Spark reads ``x = 0.1`` on a double ``x`` as ``x = 0.1000000000000000055…`` (the double
    nearest to 0.1). Python compares a float and a Decimal exactly (``0.1 == Decimal('0.1')`` is
    False), so both the sample's doubles (``SampleFrame``) and literals are mapped to the shortest
    decimal that reads back as the same double (``Decimal(repr(f))``). That mapping keeps order
    and equality of doubles, survives layout.json, and prints as a literal Spark reads back as
    the same double. NaN and infinities (and strings that are not numbers) give ``None``: Spark
    orders NaN above every number, which no interval says.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value = Decimal(value.strip())
        except InvalidOperation:
            return None
    if not isinstance(value, (int, float, Decimal)):
        return None
    try:
        f = float(value)
    except (OverflowError, ValueError):
        return None
    return Decimal(repr(f)) if math.isfinite(f) else None


def successor(value: Value, kind: Kind) -> Value | None:
    """The next value of a discrete domain (``x > 5`` is ``x >= 6``), or ``None`` if not discrete."""
    if kind is Kind.INTEGER and isinstance(value, int) and not isinstance(value, bool):
        return value + 1
    if kind is Kind.DATE and isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        return value + dt.timedelta(days=1) if value < dt.date.max else None
    return None


def predecessor(value: Value, kind: Kind) -> Value | None:
    if kind is Kind.INTEGER and isinstance(value, int) and not isinstance(value, bool):
        return value - 1
    if kind is Kind.DATE and isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        return value - dt.timedelta(days=1) if value > dt.date.min else None
    return None


def to_json(value: Value) -> Any:
    """Tagged JSON form that round-trips exactly (decimals as strings, dates as ISO)."""
    if value is None:
        return None
    kind = kind_of_value(value)
    if kind is Kind.DECIMAL:
        return {"decimal": str(value)}
    if kind is Kind.DATE:
        return {"date": value.isoformat()}
    if kind is Kind.TIMESTAMP:
        return {"timestamp": value.isoformat(sep=" ")}
    return value


def from_json(obj: Any) -> Value:
    if isinstance(obj, dict):
        ((tag, text),) = obj.items()
        if tag == "decimal":
            return Decimal(text)
        if tag == "date":
            return dt.date.fromisoformat(text)
        if tag == "timestamp":
            return dt.datetime.fromisoformat(text)
        raise ValueError(f"unknown value tag {tag!r}")
    return obj

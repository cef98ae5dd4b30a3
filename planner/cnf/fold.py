"""Fold the constant expressions Hive users write into literal values.

    date '1998-12-01' - interval '90' day      -> DATE 1998-09-02
    date_sub('1998-12-01', 90)                 -> DATE 1998-09-02
    add_months('1994-01-01', 3)                -> DATE 1994-04-01
    cast('1994-01-01' as date)                 -> DATE 1994-01-01
    0.06 - 0.01                                -> 0.05

``fold`` returns ``NOT_CONSTANT`` for anything else (columns, UDFs, ``current_date()``), and the
caller keeps such a predicate opaque. Folding never guesses: an invalid date is not constant.
"""
from __future__ import annotations

import calendar
import math
import datetime as dt
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

from sqlglot import exp

from planner.cnf.values import Kind, coerce, float_value, kind_of_type, parse_date, parse_timestamp


class _NotConstant:
    def __repr__(self) -> str:
        return "NOT_CONSTANT"


NOT_CONSTANT = _NotConstant()


@dataclass(frozen=True)
class IntervalValue:
    amount: int
    unit: str  # day | month | year | week


def _number(text: str):
    if "e" in text.lower():
        # 1e-1 is a DOUBLE literal in Spark and Hive, not a decimal: the column it is compared
        # with is compared as a double (planner.cnf.values.coerce).
        try:
            f = float(text)
        except ValueError:
            return NOT_CONSTANT
        return f if math.isfinite(f) else NOT_CONSTANT
    try:
        d = Decimal(text)
    except InvalidOperation:
        return NOT_CONSTANT
    if "." not in text and "e" not in text.lower() and d == d.to_integral_value():
        return int(d)
    return d


def add_months(d: dt.date, months: int) -> dt.date:
    """Spark's add_months: the day is clamped to the last day of the target month."""
    y, m = divmod(d.month - 1 + months, 12)
    year, month = d.year + y, m + 1
    day = min(d.day, calendar.monthrange(year, month)[1])
    return d.replace(year=year, month=month, day=day)


def _shift(d, iv: IntervalValue, sign: int):
    if iv.unit == "day":
        return d + dt.timedelta(days=sign * iv.amount)
    if iv.unit == "week":
        return d + dt.timedelta(weeks=sign * iv.amount)
    if iv.unit == "month":
        return add_months(d, sign * iv.amount)
    if iv.unit == "year":
        return add_months(d, sign * 12 * iv.amount)
    return NOT_CONSTANT


def _as_date(v):
    if isinstance(v, dt.datetime):
        return v
    if isinstance(v, dt.date):
        return v
    if isinstance(v, str):
        return parse_date(v) or NOT_CONSTANT
    return NOT_CONSTANT


def fold(node: exp.Expression):
    """The literal value of a constant expression, ``None`` for NULL, or ``NOT_CONSTANT``."""
    try:
        return _fold(node)
    except (ArithmeticError, OverflowError, ValueError, TypeError):
        return NOT_CONSTANT


def _fold(node: exp.Expression):
    if isinstance(node, exp.Paren):
        return _fold(node.this)
    if isinstance(node, exp.Literal):
        return node.this if node.is_string else _number(str(node.this))
    if isinstance(node, exp.Boolean):
        return bool(node.this)
    if isinstance(node, exp.Null):
        return None
    if isinstance(node, exp.Neg):
        v = _fold(node.this)
        return -v if isinstance(v, (int, float, Decimal)) and not isinstance(v, bool) else NOT_CONSTANT
    if isinstance(node, (exp.Cast, exp.TryCast)):
        return _cast(_fold(node.this), node.to)
    if isinstance(node, exp.Interval):
        amount = _fold(node.this)
        unit = (node.unit.name if node.unit else "").lower().rstrip("s")
        if isinstance(amount, str):
            amount = _number(amount.strip())
        if isinstance(amount, int) and unit in ("day", "week", "month", "year"):
            return IntervalValue(amount, unit)
        return NOT_CONSTANT
    if isinstance(node, (exp.Add, exp.Sub, exp.Mul, exp.Div)):
        return _arith(node, _fold(node.this), _fold(node.expression))
    if isinstance(node, (exp.TsOrDsAdd, exp.DateAdd, exp.DateSub)):
        base, amount = _as_date(_fold(node.this)), _fold(node.expression)
        unit = (node.unit.name if node.unit else "day").lower().rstrip("s")
        if base is NOT_CONSTANT or not isinstance(amount, int) or isinstance(amount, bool):
            return NOT_CONSTANT
        sign = -1 if isinstance(node, exp.DateSub) else 1
        return _shift(base, IntervalValue(amount, unit), sign)
    if isinstance(node, exp.AddMonths):
        base, amount = _as_date(_fold(node.this)), _fold(node.expression)
        if base is NOT_CONSTANT or not isinstance(amount, int):
            return NOT_CONSTANT
        return add_months(base, amount)
    if isinstance(node, (exp.TsOrDsToDate, exp.StrToDate)) and not node.args.get("format"):
        return _as_date(_fold(node.this))
    return NOT_CONSTANT


def _cast(v, to: exp.DataType):
    if v is NOT_CONSTANT or v is None:
        return v
    kind = kind_of_type(to.sql(dialect="hive"))
    if kind is Kind.STRING:
        return v if isinstance(v, str) else NOT_CONSTANT
    if kind is Kind.DATE and isinstance(v, dt.datetime):
        return v.date()
    if kind is Kind.FLOAT:  # a double, compared as a double (not the decimal it was written as)
        out = float_value(v)
        return NOT_CONSTANT if out is None else float(out)
    if kind in (Kind.INTEGER, Kind.DECIMAL) and not isinstance(v, bool) and isinstance(v, (int, float, Decimal)):
        return _cast_number(Decimal(v), kind, to)
    out = coerce(v, kind)
    return NOT_CONSTANT if out is None else out


def _cast_number(d: Decimal, kind: Kind, to: exp.DataType):
    """CAST of a number: to an integer type truncates (CAST(1.5 AS INT) is 1); to DECIMAL(p, s)
    rounds half up to s places (DECIMAL alone is DECIMAL(10, 0)). Overflow is not folded."""
    if not d.is_finite():
        return NOT_CONSTANT
    if kind is Kind.INTEGER:
        return int(d)  # int() truncates toward zero, as Spark's cast does
    params = [p.this for p in to.expressions if isinstance(p, exp.DataTypeParam)]
    try:
        precision, scale = (int(params[0].name), int(params[1].name)) if len(params) == 2 else (
            (int(params[0].name), 0) if params else (10, 0))
    except (ValueError, AttributeError):
        return NOT_CONSTANT
    q = d.quantize(Decimal(1).scaleb(-scale), rounding=ROUND_HALF_UP)
    return q if len(q.as_tuple().digits) <= precision else NOT_CONSTANT


def _arith(node, a, b):
    if a is NOT_CONSTANT or b is NOT_CONSTANT or a is None or b is None:
        return NOT_CONSTANT if (a is NOT_CONSTANT or b is NOT_CONSTANT) else None
    if isinstance(b, IntervalValue) and isinstance(node, (exp.Add, exp.Sub)):
        base = _as_date(a)
        return NOT_CONSTANT if base is NOT_CONSTANT else _shift(base, b, 1 if isinstance(node, exp.Add) else -1)
    if isinstance(a, IntervalValue) and isinstance(node, exp.Add):
        base = _as_date(b)
        return NOT_CONSTANT if base is NOT_CONSTANT else _shift(base, a, 1)
    nums = (int, Decimal)
    if not (isinstance(a, nums) and isinstance(b, nums)) or isinstance(a, bool) or isinstance(b, bool):
        return NOT_CONSTANT
    if isinstance(node, exp.Add):
        return a + b
    if isinstance(node, exp.Sub):
        return a - b
    if isinstance(node, exp.Mul):
        return a * b
    if b == 0:
        return None  # Hive: x / 0 is NULL
    return Decimal(a) / Decimal(b)

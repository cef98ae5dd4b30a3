"""Constant expressions as written in a query, kept unevaluated until the session is known.

A workload is read once, but what ``TIMESTAMP '2020-01-01 00:00:00'`` or ``CAST('5.5' AS INT)``
*is* depends on the session that runs it (time zone, ANSI mode). So the reader converts a constant
sqlglot subtree into these small frozen nodes, and ``evaluate`` computes them later under given
``Settings``:

    1.005                          Lit(Decimal('1.005'), decimal(4,3))
    1e0                            Lit(1.0, double)
    DATE '1998-12-01' - INTERVAL '90' DAY
                                   Arith('-', TypedText('1998-12-01', date), Interval(90, 'day'))
    CAST('1.005' AS DECIMAL(15,2)) Cast(Lit('1.005', string), decimal(15,2))

Literal types follow Spark's parser: an integer is INT, else BIGINT, else DECIMAL(n,0); a number
with a point is DECIMAL(p,s) of its digits; one with an exponent is DOUBLE. sqlglot reads the
suffixed literals ``1Y 1S 1L 1.5D 1.5F 1.5BD`` as casts; ``3Y`` and ``CAST(3 AS TINYINT)`` cannot be
told apart, which matters only next to a DECIMAL (``Lit.from_cast``).
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any, Union

from sqlglot import exp

from planner.semantics.floats import FLOAT_MAX
from planner.semantics.kinds import render
from planner.semantics.types import (
    BOOLEAN,
    DOUBLE,
    INT,
    LONG,
    MAX_PRECISION,
    STRING,
    VOID,
    SparkType,
    decimal,
    parse_type,
)


@dataclass(frozen=True)
class Lit:
    """A literal: its value and its Spark type (value None: NULL)."""

    value: Any
    type: SparkType
    from_cast: bool = False  # a literal or the same cast (3Y or CAST(3 AS TINYINT), 1.5BD or CAST('1.5' AS …))

    def __str__(self) -> str:
        if self.value is None:
            return "NULL"
        if self.type.name == "double":
            return repr(self.value) + "D"
        if self.type.name == "float":
            return repr(self.value) + "F"
        return render(self.value)


@dataclass(frozen=True)
class TypedText:
    """``DATE '…'``, ``TIMESTAMP '…'``: parsed when evaluated (a timestamp needs the time zone)."""

    text: str
    type: SparkType

    def __str__(self) -> str:
        return f"{str(self.type).upper()} {render(self.text)}"


@dataclass(frozen=True)
class Cast:
    arg: "Const"
    to: SparkType
    safe: bool = False  # TRY_CAST

    def __str__(self) -> str:
        return f"{'TRY_CAST' if self.safe else 'CAST'}({self.arg} AS {str(self.to).upper()})"


@dataclass(frozen=True)
class Arith:
    op: str  # + - * / % div
    left: "Const"
    right: "Const"

    def __str__(self) -> str:
        op = " DIV " if self.op == "div" else f" {self.op} "
        return f"({self.left}{op}{self.right})"


@dataclass(frozen=True)
class Neg:
    arg: "Const"

    def __str__(self) -> str:
        return f"-({self.arg})"


@dataclass(frozen=True)
class Interval:
    amount: int
    unit: str  # day | month | year

    def __str__(self) -> str:
        return f"INTERVAL '{self.amount}' {self.unit.upper()}"


@dataclass(frozen=True)
class Call:
    """``date_add``, ``date_sub``, ``add_months``, ``to_date`` (no format)."""

    name: str
    args: tuple["Const", ...]

    def __str__(self) -> str:
        return f"{self.name}({', '.join(map(str, self.args))})"


@dataclass(frozen=True)
class Compare:
    """A comparison of two constants (constant predicates; the differential test)."""

    op: str
    left: "Const"
    right: "Const"

    def __str__(self) -> str:
        return f"({self.left} {self.op} {self.right})"


@dataclass(frozen=True)
class InList:
    arg: "Const"
    items: tuple["Const", ...]

    def __str__(self) -> str:
        return f"({self.arg} IN ({', '.join(map(str, self.items))}))"


Const = Union[Lit, TypedText, Cast, Arith, Neg, Interval, Call, Compare, InList]
CONSTANTS = (Lit, TypedText, Cast, Arith, Neg, Interval, Call, Compare, InList)
NULL = Lit(None, VOID)


# ---- literal typing (Spark's AstBuilder) --------------------------------------------------------
def number_literal(text: str) -> Lit | None:
    """A numeric literal as Spark types it; None if Spark would reject it (too many digits)."""
    t = text.strip()
    if "e" in t.lower():
        try:
            f = float(t)
        except ValueError:
            return None
        return Lit(f, DOUBLE) if f not in (float("inf"), float("-inf")) else None
    try:
        d = Decimal(t)
    except InvalidOperation:
        return None
    if "." not in t:
        i = int(d)
        if -(1 << 31) <= i < (1 << 31):
            return Lit(i, INT)
        if -(1 << 63) <= i < (1 << 63):
            return Lit(i, LONG)
        digits = len(str(abs(i)))
        return Lit(d, decimal(digits, 0)) if digits <= MAX_PRECISION else None
    return decimal_literal(d)


def decimal_literal(d: Decimal) -> Lit | None:
    """``Literal(BigDecimal)``: precision is the digit count, never less than the scale."""
    sign, digits, exponent = d.as_tuple()
    scale = max(-exponent, 0)
    if exponent > 0:
        d = Decimal(int(d))  # exact (a context-bound quantize would round past 28 digits)
    precision = max(len(d.as_tuple().digits), scale, 1)
    if precision > MAX_PRECISION:
        return None
    if d.is_zero():
        d = abs(d)
    return Lit(d, decimal(precision, scale))


def python_literal(v: Any) -> "Const":
    """A plain Python value as the literal a query would write for it (tests, old callers)."""
    if v is None:
        return NULL
    if isinstance(v, CONSTANTS):
        return v
    if isinstance(v, bool):
        return Lit(v, BOOLEAN)
    if isinstance(v, int):
        return number_literal(str(v)) or Lit(v, LONG)
    if isinstance(v, float):
        return Lit(v, DOUBLE)
    if isinstance(v, Decimal):
        return decimal_literal(v) or Lit(float(v), DOUBLE)
    if isinstance(v, str):
        return Lit(v, STRING)
    if isinstance(v, dt.datetime):
        return TypedText(v.isoformat(sep=" "), parse_type("timestamp"))
    if isinstance(v, dt.date):
        return TypedText(v.isoformat(), parse_type("date"))
    raise TypeError(f"no literal for {type(v).__name__}")


# ---- from sqlglot ----------------------------------------------------------------------------------
_DTYPES = {
    "TINYINT": "tinyint", "SMALLINT": "smallint", "INT": "int", "BIGINT": "bigint", "FLOAT": "float",
    "DOUBLE": "double", "TEXT": "string", "VARCHAR": "string", "CHAR": "string", "NCHAR": "string",
    "NVARCHAR": "string", "DATE": "date", "TIMESTAMP": "timestamp", "TIMESTAMPTZ": "timestamp",
    "TIMESTAMPLTZ": "timestamp", "TIMESTAMPNTZ": "timestamp_ntz", "BOOLEAN": "boolean",
}
_ARITH = {exp.Add: "+", exp.Sub: "-", exp.Mul: "*", exp.Div: "/", exp.Mod: "%", exp.IntDiv: "div"}
_CMP = {exp.EQ: "=", exp.NEQ: "<>", exp.LT: "<", exp.LTE: "<=", exp.GT: ">", exp.GTE: ">="}


def spark_type(dtype: exp.DataType) -> SparkType:
    name = dtype.this.name if hasattr(dtype.this, "name") else str(dtype.this)
    if name == "DECIMAL":
        params = [p.this.name for p in dtype.expressions if isinstance(p, exp.DataTypeParam)]
        return parse_type(f"decimal({','.join(params)})" if params else "decimal")
    mapped = _DTYPES.get(name)
    return SparkType(mapped) if mapped else SparkType("other", detail=name.lower())


def from_sqlglot(node: exp.Expression) -> Const | None:
    """The constant expression ``node`` is, or None if it is not one we model (columns, UDFs…)."""
    try:
        return _convert(node)
    except (ValueError, TypeError, AttributeError, InvalidOperation):
        return None


def _convert(node: exp.Expression) -> Const | None:
    if isinstance(node, exp.Paren):
        return _convert(node.this)
    if isinstance(node, exp.Literal):
        return Lit(node.this, STRING) if node.is_string else number_literal(str(node.this))
    if isinstance(node, exp.Boolean):
        return Lit(bool(node.this), BOOLEAN)
    if isinstance(node, exp.Null):
        return NULL
    if isinstance(node, exp.Neg):
        inner = node.this
        if isinstance(inner, exp.Literal) and not inner.is_string:
            return number_literal("-" + str(inner.this))  # -5 is one literal in Spark's grammar
        if (isinstance(inner, exp.TryCast) and not inner.args.get("safe") and isinstance(inner.this, exp.Literal)
                and not inner.this.is_string and spark_type(inner.to).is_integral):
            return _suffix_literal(-int(Decimal(str(inner.this.this))), spark_type(inner.to))  # -128Y
        lit = _decimal_suffix_literal(inner) if isinstance(inner, exp.TryCast) else None
        if lit is not None:  # -1.5BD is one literal too; -CAST('1.5' AS DECIMAL(2,1)) has its value and type
            return Lit(lit.value.copy_negate(), lit.type, from_cast=True)  # exact: - rounds to 28 digits
        arg = _convert(inner)
        return Neg(arg) if arg is not None else None
    if isinstance(node, (exp.Cast, exp.TryCast)):
        return _cast(node)
    if type(node) in _ARITH:
        left, right = _convert(node.this), _convert(node.expression)
        return Arith(_ARITH[type(node)], left, right) if left is not None and right is not None else None
    if type(node) in _CMP:
        left, right = _convert(node.this), _convert(node.expression)
        return Compare(_CMP[type(node)], left, right) if left is not None and right is not None else None
    if isinstance(node, exp.In) and not node.args.get("query") and node.expressions:
        arg, items = _convert(node.this), [_convert(x) for x in node.expressions]
        return InList(arg, tuple(items)) if arg is not None and all(i is not None for i in items) else None
    if isinstance(node, exp.Interval):
        return _interval(node)
    return _call(node)


def _cast(node: exp.Cast) -> Const | None:
    to = spark_type(node.to)
    arg = node.this
    # sqlglot reads Spark's CAST as TryCast; a bare Cast of a string is a typed literal (DATE '…').
    if type(node) is exp.Cast and isinstance(arg, exp.Literal) and arg.is_string and to.name in (
            "date", "timestamp", "timestamp_ntz"):
        return TypedText(arg.this, to)
    inner = _convert(arg)
    if inner is None:
        return None
    safe = bool(node.args.get("safe"))
    lit = _decimal_suffix_literal(node)
    if lit is not None:
        return lit
    if to.is_integral and not safe and isinstance(inner, Lit) and inner.type.is_integral:
        return _suffix_literal(inner.value, to)
    if (to.name == "float" and not safe and isinstance(inner, Lit) and inner.type.is_numeric
            and abs(float(inner.value)) > FLOAT_MAX):
        return None  # 3.5e38F is a parse error, CAST(3.5e38 AS FLOAT) is not: sqlglot cannot tell
    return Cast(inner, to, safe)


def _decimal_suffix_literal(node: exp.Cast) -> Lit | None:
    """1.5BD: sqlglot spells it CAST('1.5' AS DECIMAL(2,1)), the literal's own precision and scale;
    the very same CAST written out cannot be told apart, so the literal is ``from_cast`` (Spark's
    analyzer treats a literal next to an integral column in its own way: ``evaluate``)."""
    arg, to = node.this, spark_type(node.to)
    if not (to.is_decimal and isinstance(arg, exp.Literal) and arg.is_string and not node.args.get("safe")):
        return None
    lit = decimal_literal(Decimal(arg.this)) if _plain_number(arg.this) else None
    return Lit(lit.value, lit.type, from_cast=True) if lit is not None and lit.type == to else None


def _suffix_literal(value: int, to: SparkType) -> Lit | None:
    """3Y, 3S, 3L (or the very same CAST): out of range, 300Y is a parse error and
    CAST(300 AS TINYINT) wraps without ANSI; sqlglot cannot tell them apart, so neither is read."""
    return Lit(value, to, from_cast=True) if to.min_value <= value <= to.max_value else None


def _plain_number(text: str) -> bool:
    return bool(text) and all(c.isdigit() or c in ".-+" for c in text)


def _interval(node: exp.Interval) -> Const | None:
    amount = node.this
    unit = (node.unit.name if node.unit else "").lower().rstrip("s")
    text = amount.this if isinstance(amount, exp.Literal) else None
    if text is None or unit not in ("day", "month", "year"):
        return None
    try:
        n = int(str(text).strip())
    except ValueError:
        return None
    return Interval(n, unit)


def _call(node: exp.Expression) -> Const | None:
    if isinstance(node, (exp.TsOrDsAdd, exp.DateAdd, exp.DateSub)):
        unit = (node.unit.name if node.unit else "day").lower().rstrip("s")
        if unit != "day":
            return None
        start, days = _convert(node.this), _convert(node.expression)
        if start is None or days is None:
            return None
        return Call("date_sub" if isinstance(node, exp.DateSub) else "date_add", (start, days))
    if isinstance(node, exp.AddMonths):
        start, n = _convert(node.this), _convert(node.expression)
        return Call("add_months", (start, n)) if start is not None and n is not None else None
    if isinstance(node, (exp.TsOrDsToDate, exp.StrToDate)) and not node.args.get("format"):
        arg = _convert(node.this)
        return Call("to_date", (arg,)) if arg is not None else None
    return None


def zone_dependent(c: Const) -> bool:
    """Whether the value may depend on the session time zone (a TIMESTAMP is involved)."""
    if isinstance(c, TypedText):
        return c.type.name != "date"
    if isinstance(c, Cast):
        return c.to.name.startswith("timestamp") or zone_dependent(c.arg)
    if isinstance(c, (Arith, Compare)):
        return zone_dependent(c.left) or zone_dependent(c.right)
    if isinstance(c, Neg):
        return zone_dependent(c.arg)
    if isinstance(c, (Call,)):
        return any(zone_dependent(a) for a in c.args)
    if isinstance(c, InList):
        return zone_dependent(c.arg) or any(zone_dependent(a) for a in c.items)
    return False


__all__ = ["Lit", "TypedText", "Cast", "Arith", "Neg", "Interval", "Call", "Compare", "InList", "Const", "CONSTANTS", "NULL",
           "from_sqlglot", "number_literal", "decimal_literal", "python_literal", "spark_type", "zone_dependent"]

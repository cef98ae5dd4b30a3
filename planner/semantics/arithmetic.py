"""``+ - * / % div`` and unary minus on constants, with Spark's result types and rounding.

The operand types come from ``coercion.arithmetic_types``; here the values are computed:

* integral: exact, then an overflow raises (ANSI) or wraps (``2147483647 + 1`` is -2147483648);
* DECIMAL: ``*`` is exact and ``/`` rounds to 38 decimal places (HALF_UP, as
  ``java.math.BigDecimal``), then the result is rounded HALF_UP to the result scale (Spark 4 no
  longer rounds a product to 38 significant digits first); too many digits raise (ANSI) or give NULL;
* DOUBLE: IEEE; FLOAT: binary32 (``floats``);
* ``/`` and ``%`` by zero raise (ANSI) or give NULL, for doubles too (``1.0D / 0``).
"""
from __future__ import annotations

import math
from decimal import ROUND_DOWN, ROUND_HALF_UP, Decimal, localcontext

from planner.semantics.casts import round_decimal
from planner.semantics.floats import float32_div, float32_op, to_float32
from planner.semantics.settings import (
    Outcome,
    Raises,
    Settings,
    Typed,
    Unmodelled,
    failure,
    null,
)
from planner.semantics.types import SparkType


def _integral(v: int, t: SparkType, ansi: bool) -> Outcome:
    if t.min_value <= v <= t.max_value:
        return Typed(v, t)
    return Raises(f"{t} overflow") if ansi else Typed(t.wrap(v), t)


def _java_div(a: int, b: int) -> int:
    """Integer division truncating toward zero (Java ``/``)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _java_rem(a: int, b: int) -> int:
    return a - b * _java_div(a, b)


def arithmetic(op: str, a: Typed, b: Typed, result: SparkType, settings: Settings) -> Outcome:
    """``a <op> b`` for operands already cast to their operation types (not NULL)."""
    ansi = settings.ansi
    x, y = a.value, b.value
    if op in ("/", "%", "div") and y == 0:
        what = "remainder" if op == "%" else "division"
        return Raises(f"{what} by zero") if ansi else null(result)
    if result.is_integral:
        if op == "+":
            v = x + y
        elif op == "-":
            v = x - y
        elif op == "*":
            v = x * y
        elif op == "%":
            v = _java_rem(x, y)
        else:  # div
            v = _java_div(x, y)
        return _integral(v, result, ansi)
    if result.is_decimal:
        return _decimal(op, x, y, result, ansi)
    if result.name == "double":
        if op == "%":
            return Typed(math.fmod(x, y), result)
        return Typed({"+": lambda: x + y, "-": lambda: x - y, "*": lambda: x * y, "/": lambda: x / y}[op](), result)
    if result.name == "float":
        if op == "%":
            return Typed(to_float32(math.fmod(x, y)), result)
        return Typed(float32_div(x, y) if op == "/" else float32_op(op, x, y), result)
    return Raises(f"{op} on {result}")  # pragma: no cover - arithmetic_types admits nothing else


def _decimal(op: str, x: Decimal, y: Decimal, result: SparkType, ansi: bool) -> Outcome:
    with localcontext() as ctx:
        ctx.prec = 200
        ctx.rounding = ROUND_HALF_UP
        if op == "+":
            v = x + y
        elif op == "-":
            v = x - y
        elif op == "*":
            v = x * y  # exact (at most 76 digits), rounded once below: Spark 4 (SPARK-45786), not MathContext(38)
        elif op == "/":
            v = (x / y).quantize(Decimal(1).scaleb(-38), rounding=ROUND_HALF_UP)  # divide(that, 38, HALF_UP)
        else:  # %: BigDecimal.remainder keeps the dividend's sign
            q = (x / y).to_integral_value(rounding=ROUND_DOWN)
            v = x - y * q
    out = round_decimal(v, result.precision, result.scale)
    return Typed(out, result) if out is not None else failure(ansi, f"{v} does not fit {result}", result)


def negate(a: Typed, settings: Settings) -> Outcome:
    t = a.type
    if a.is_null:
        return a
    if t.is_integral:
        return _integral(-a.value, t, settings.ansi)
    if t.is_decimal:
        if len(a.value.as_tuple().digits) > 34:
            # Spark negates through Scala's BigDecimal, whose MathContext (DECIMAL128) keeps 34
            # digits: -(-99…9 (38 nines)) rounds to 1E+38 and overflows. Not modelled: opaque.
            return Unmodelled(f"negating a decimal of more than 34 digits ({t})")
        return Typed(round_decimal(a.value.copy_negate(), t.precision, t.scale), t)  # exact, no context
    return Typed(-a.value, t)


__all__ = ["arithmetic", "negate"]

"""Which type Spark 4 casts both sides of an operation to (``TypeCoercion``, ``AnsiTypeCoercion``).

Comparisons (``comparison_type``), IN lists (``common_type``) and arithmetic (``arithmetic_types``)
each have their own rule, and ANSI mode changes several of them:

    column type     literal            ANSI on                 ANSI off
    int             '5.5'              BIGINT ('5.5' fails)    INT ('5.5' reads as 5)
    decimal(15,3)   '1.0049999…'       DOUBLE                  DOUBLE
    date            '2020-1-5'         DATE                    DATE
    float           1                  DOUBLE                  FLOAT
    decimal(15,2)   1.005              decimal(16,3)           decimal(16,3)
    decimal(15,2)   0.1e0 (a DOUBLE)   DOUBLE                  DOUBLE

An integral *literal* next to a decimal counts as the smallest decimal holding its value
(``DecimalType.fromLiteral``: ``1.0 / 3`` is decimal(2,1) / decimal(1,0) = decimal(7,6)); an
integral expression counts as its type's full width (``int`` -> decimal(10,0)).
``None`` means Spark has no rule (the analyzer rejects the query): the caller claims nothing.
"""
from __future__ import annotations

from planner.semantics.types import (
    DOUBLE,
    LONG,
    MAX_PRECISION,
    NUMERIC_PRECEDENCE,
    STRING,
    TIMESTAMP,
    SparkType,
    decimal,
    decimal_for,
)

MINIMUM_ADJUSTED_SCALE = 6


def _plain(t: SparkType) -> SparkType:
    return STRING if t.is_string else t


def literal_decimal(value: int) -> SparkType:
    """``DecimalType.fromLiteral`` of an integral literal: as many digits as its value has."""
    return decimal(max(len(str(abs(value))), 1), 0)


def wider_decimal(a: SparkType, b: SparkType) -> SparkType:
    """``DecimalPrecision.widerDecimalType`` with ``boundedPreferIntegralDigits`` (SPARK-45905):
    past 38 digits the *scale* gives way, so decimal(38,0) vs decimal(20,19) is decimal(38,0)."""
    scale = max(a.scale, b.scale)
    precision = max(a.precision - a.scale, b.precision - b.scale) + scale
    if precision <= MAX_PRECISION:
        return decimal(precision, scale)
    return decimal(MAX_PRECISION, max(0, scale - (precision - MAX_PRECISION)))


def _numeric_wider(a: SparkType, b: SparkType) -> SparkType:
    return SparkType(max(a.name, b.name, key=NUMERIC_PRECEDENCE.index))


def tightest_common(a: SparkType, b: SparkType, ansi: bool) -> SparkType | None:
    """``findTightestCommonType``."""
    a, b = _plain(a), _plain(b)
    if a == b:
        return a
    if a.is_null:
        return b
    if b.is_null:
        return a
    if a.is_integral and b.is_decimal and _decimal_holds(b, a):
        return b
    if b.is_integral and a.is_decimal and _decimal_holds(a, b):
        return a
    if (a.is_integral or a.is_fractional) and (b.is_integral or b.is_fractional):
        wider = _numeric_wider(a, b)
        return DOUBLE if ansi and wider.name == "float" and a != b else wider
    if {a.name, b.name} == {"date", "timestamp"}:
        return TIMESTAMP
    if ansi and {a.name, b.name} <= {"date", "timestamp", "timestamp_ntz"}:
        return TIMESTAMP if "timestamp" in (a.name, b.name) else SparkType("timestamp_ntz")
    return None


def _decimal_holds(d: SparkType, i: SparkType) -> bool:
    """``DecimalType.isWiderThan`` an integral type."""
    f = decimal_for(i)
    return d.precision - d.scale >= f.precision - f.scale and d.scale >= 0


def _wider_for_decimal(a: SparkType, b: SparkType) -> SparkType | None:
    """``findWiderTypeForDecimal``."""
    if a.is_decimal and b.is_decimal:
        return wider_decimal(a, b)
    if a.is_integral and b.is_decimal:
        return wider_decimal(decimal_for(a), b)
    if a.is_decimal and b.is_integral:
        return wider_decimal(decimal_for(b), a)
    if (a.is_fractional and b.is_decimal) or (a.is_decimal and b.is_fractional):
        return DOUBLE
    return None


def _ansi_string_promotion(a: SparkType, b: SparkType) -> SparkType | None:
    """``AnsiStringPromotionTypeCoercion.findWiderTypeForString``."""
    if not a.is_string and b.is_string:
        a, b = b, a
    if not a.is_string or b.is_string:
        return None
    if b.is_integral:
        return LONG
    if b.is_fractional or b.is_decimal:
        return DOUBLE
    if b.is_null:
        return STRING
    if b.name in ("date", "timestamp", "timestamp_ntz", "boolean"):
        return b
    return None


def _legacy_string_promotion(a: SparkType, b: SparkType) -> SparkType | None:
    """``TypeCoercion.stringPromotion`` (ANSI off): everything atomic but BOOLEAN becomes STRING."""
    if a.is_string and b.name not in ("boolean", "other"):
        return STRING
    if b.is_string and a.name not in ("boolean", "other"):
        return STRING
    return None


def wider_type(a: SparkType, b: SparkType, ansi: bool) -> SparkType | None:
    """``findWiderTypeForTwo``: the type of an IN list, CASE, array, GREATEST."""
    a, b = _plain(a), _plain(b)
    return (tightest_common(a, b, ansi) or _wider_for_decimal(a, b)
            or (_ansi_string_promotion(a, b) if ansi else _legacy_string_promotion(a, b)))


def common_type(types: list[SparkType], ansi: bool) -> SparkType | None:
    """``findWiderCommonType`` over several types (ANSI off folds the strings in first)."""
    types = [_plain(t) for t in types]
    if not ansi:
        strings = [t for t in types if t.is_string]
        types = list(dict.fromkeys(strings)) + [t for t in types if not t.is_string]
    out = SparkType("void")
    for t in types:
        out = wider_type(out, t, ansi)
        if out is None:
            return None
    return out


def comparison_type(a: SparkType, b: SparkType, ansi: bool, a_literal: int | None = None,
                    b_literal: int | None = None) -> SparkType | None:
    """The type both sides of ``a <op> b`` are cast to, or None if Spark rejects the comparison.

    ``a_literal``/``b_literal`` hold the value of a side that is an integral *literal* (for
    ``DecimalType.fromLiteral``), else None.
    """
    a, b = _plain(a), _plain(b)
    if a == b:
        return a
    if a.is_null or b.is_null:
        return b if a.is_null else a
    if a.is_string or b.is_string:
        return _string_comparison(a, b, ansi)
    if a.is_decimal or b.is_decimal:
        return _decimal_operand_types(a, b, a_literal, b_literal, comparison=True)
    if a.name == "boolean" or b.name == "boolean":
        return None  # ANSI rejects; without ANSI, BooleanEquality rewrites: not modelled
    return tightest_common(a, b, ansi)


def _string_comparison(a: SparkType, b: SparkType, ansi: bool) -> SparkType | None:
    if ansi:
        return _ansi_string_promotion(a, b)
    other = b if a.is_string else a  # ``findCommonTypeForBinaryComparison``
    if other.is_decimal:
        # Spark 4.3 without ANSI: a whole-number decimal reads the string as itself
        # (``d38_0 <= '1.5e400'`` casts '1.5e400' to decimal(38,0): NULL); other decimals as DOUBLE.
        return other if other.scale == 0 else DOUBLE
    if other.name in ("other",):
        return None
    return other


def _decimal_operand_types(a: SparkType, b: SparkType, a_literal, b_literal, comparison: bool) -> SparkType | None:
    """``DecimalPrecision`` for one decimal side: the common type both sides are cast to."""
    if a.is_fractional or b.is_fractional:
        return DOUBLE
    da = literal_decimal(a_literal) if a.is_integral and a_literal is not None else (
        decimal_for(a) if a.is_integral else a)
    db = literal_decimal(b_literal) if b.is_integral and b_literal is not None else (
        decimal_for(b) if b.is_integral else b)
    if not (da.is_decimal and db.is_decimal):
        return None
    return wider_decimal(da, db) if comparison else None


# ---- arithmetic --------------------------------------------------------------------------------
def adjust_precision_scale(precision: int, scale: int) -> SparkType:
    """``DecimalType.adjustPrecisionScale`` (spark.sql.decimalOperations.allowPrecisionLoss)."""
    if precision <= MAX_PRECISION:
        return decimal(precision, scale)
    int_digits = precision - scale
    min_scale = min(scale, MINIMUM_ADJUSTED_SCALE)
    return decimal(MAX_PRECISION, max(MAX_PRECISION - int_digits, min_scale))


def decimal_result(op: str, a: SparkType, b: SparkType) -> SparkType:
    """Result type of a decimal ``+ - * / %`` (``DecimalPrecision``)."""
    p1, s1, p2, s2 = a.precision, a.scale, b.precision, b.scale
    if op in ("+", "-"):
        scale = max(s1, s2)
        return adjust_precision_scale(max(p1 - s1, p2 - s2) + scale + 1, scale)
    if op == "*":
        return adjust_precision_scale(p1 + p2 + 1, s1 + s2)
    if op == "/":
        scale = max(MINIMUM_ADJUSTED_SCALE, s1 + p2 + 1)
        return adjust_precision_scale(p1 - s1 + s2 + scale, scale)
    if op == "%":
        scale = max(s1, s2)
        return adjust_precision_scale(min(p1 - s1, p2 - s2) + scale, scale)
    raise ValueError(op)


Chain = tuple  # the types an operand is cast to, in order


def arithmetic_types(op: str, a: SparkType, b: SparkType, ansi: bool, a_literal: int | None = None,
                     b_literal: int | None = None) -> tuple[Chain, Chain, SparkType] | None:
    """``(left casts, right casts, result type)`` of ``a <op> b`` for ``+ - * / % div``.

    A string operand is first promoted (ANSI: to BIGINT next to an integer, to DOUBLE next to
    a fraction; without ANSI: to DOUBLE), then both sides go to the operation's type:
    ``bigint_expr / '0.5'`` casts '0.5' to BIGINT (which fails with ANSI) and then to DOUBLE.
    """
    a, b = _plain(a), _plain(b)
    first_a, first_b = (), ()
    if a.is_string or b.is_string:
        if ansi:
            t = _ansi_string_promotion(a, b)
            if t is None or not (t.is_integral or t.is_fractional):
                return None
        else:
            t = DOUBLE  # PromoteStrings: a string operand of arithmetic is read as a DOUBLE
        if a.is_string:
            a, first_a = t, (t,)
        if b.is_string:
            b, first_b = t, (t,)
    plan = _numeric_arithmetic(op, a, b, ansi, a_literal, b_literal)
    if plan is None:
        return None
    ta, tb, result = plan
    return first_a + (ta,), first_b + (tb,), result


def _numeric_arithmetic(op: str, a: SparkType, b: SparkType, ansi: bool, a_literal, b_literal):
    if a.is_null and b.is_null:
        return None
    if a.is_null:
        a = b
    if b.is_null:
        b = a
    if not (a.is_numeric and b.is_numeric):
        return None
    if op == "div":
        if not (a.is_integral and b.is_integral):
            return None  # decimal / floating IntegralDivide: not modelled
        return LONG, LONG, LONG
    if a.is_decimal or b.is_decimal:
        if a.is_fractional or b.is_fractional:
            return DOUBLE, DOUBLE, DOUBLE
        da = literal_decimal(a_literal) if a.is_integral and a_literal is not None else decimal_for(a)
        db = literal_decimal(b_literal) if b.is_integral and b_literal is not None else decimal_for(b)
        return da, db, decimal_result(op, da, db)
    if op == "/":
        return DOUBLE, DOUBLE, DOUBLE  # ``Division``: neither side decimal, both become DOUBLE
    t = tightest_common(a, b, ansi)
    return (t, t, t) if t is not None else None


__all__ = ["comparison_type", "common_type", "wider_type", "tightest_common", "arithmetic_types",
           "decimal_result", "adjust_precision_scale", "wider_decimal", "literal_decimal"]

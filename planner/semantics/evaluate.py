"""Evaluate a constant expression (``constants``) under session ``Settings``, as Spark folds it.

``evaluate(c, settings)`` returns ``Typed`` (a value, None for NULL, with its Spark type),
``Raises`` or ``Unmodelled``. The order of evaluation follows Spark's optimizer:

* ``NullPropagation`` first: an operation with a NULL *literal* operand is NULL, whatever the
  other operand would do (``NULL + 1/0`` is NULL, not an error);
* then ``ConstantFolding`` evaluates the whole expression: left operand first, and a NULL left
  operand makes the result NULL without evaluating the right one.

Types come first (``type_of``), so NULL results are typed too (``typeof(NULL + 1)`` is int).
"""
from __future__ import annotations

import datetime as dt
from decimal import Decimal

from planner.semantics.arithmetic import arithmetic, negate
from planner.semantics.casts import cast
from planner.semantics.coercion import arithmetic_types, common_type, comparison_type
from planner.semantics.constants import (
    Arith,
    Call,
    Cast,
    Compare,
    Const,
    InList,
    Interval,
    Lit,
    Neg,
    TypedText,
)
from planner.semantics.settings import (
    Outcome,
    Raises,
    Settings,
    Typed,
    Unmodelled,
    null,
)
from planner.semantics.types import BOOLEAN, DATE, INT, STRING, SparkType
from planner.semantics.value_order import compare_values, holds


class _Unknown(Exception):
    def __init__(self, outcome):
        self.outcome = outcome


def _integral_literal(c: Const, other: SparkType) -> int | None:
    """The value an operand contributes to ``DecimalType.fromLiteral``, if it is an integral literal."""
    if isinstance(c, Lit) and c.type.is_integral and c.value is not None:
        if c.from_cast and other.is_decimal:
            raise _Unknown(Unmodelled(f"{c}: a literal or a cast? (its decimal precision differs)"))
        return None if c.from_cast else c.value
    return None


# ---- types -------------------------------------------------------------------------------------
def type_of(c: Const, settings: Settings) -> SparkType | Unmodelled:
    try:
        return _type(c, settings)
    except _Unknown as u:
        return u.outcome


def _type(c: Const, settings: Settings) -> SparkType:
    if isinstance(c, Lit):
        return c.type
    if isinstance(c, TypedText):
        return c.type
    if isinstance(c, Cast):
        to = STRING if c.to.name in ("char", "varchar") else c.to
        src = _type(c.arg, settings)
        if not can_cast(src, to):
            raise _Unknown(Unmodelled(f"cast from {src} to {to}"))
        return to
    if isinstance(c, Neg):
        t = _type(c.arg, settings)
        if t.is_string:
            return SparkType("double")
        if not t.is_numeric:
            raise _Unknown(Unmodelled(f"-({t})"))
        return t
    if isinstance(c, Arith):
        return _arith_plan(c, settings)[2]
    if isinstance(c, Compare):
        _comparison_type(c.left, c.right, settings)
        return BOOLEAN
    if isinstance(c, InList):
        _in_type(c, settings)
        return BOOLEAN
    if isinstance(c, Call):
        _call_types(c, settings)
        return DATE
    if isinstance(c, Interval):
        raise _Unknown(Unmodelled(f"{c} on its own"))
    raise _Unknown(Unmodelled(f"{c}"))


def can_cast(src: SparkType, to: SparkType) -> bool:
    """Casts Spark accepts in both ANSI modes that ``casts`` models; others are not claimed."""
    if src.is_null or src == to or (src.is_string and to.is_string):
        return True
    if src.is_string:
        return to.is_numeric or to.name in ("date", "timestamp", "timestamp_ntz", "boolean")
    if to.is_string:
        return src.is_numeric or src.name in ("date", "timestamp", "timestamp_ntz", "boolean")
    if src.is_numeric or src.name == "boolean":
        return to.is_numeric or to.name == "boolean" or (src.is_integral and to.name == "timestamp")
    pair = {src.name, to.name}
    return pair in ({"date", "timestamp"}, {"date", "timestamp_ntz"}, {"timestamp", "timestamp_ntz"})


def _call_types(c: Call, settings: Settings) -> None:
    types = [_type(a, settings) for a in c.args]
    ok_start = types[0].name == "date" or types[0].is_string or types[0].is_null
    if c.name == "to_date":
        if not (ok_start or types[0].name in ("timestamp", "timestamp_ntz")):
            raise _Unknown(Unmodelled(f"{c}"))
        return
    n = types[1]
    if not ok_start or not (n.is_null or n.is_string or (n.is_integral and n.name != "bigint")):
        raise _Unknown(Unmodelled(f"{c}"))


def _in_type(c: InList, settings: Settings) -> SparkType:
    types = [_type(x, settings) for x in (c.arg, *c.items)]
    t = common_type(types, settings.ansi)
    if t is None:
        raise _Unknown(Unmodelled(f"IN over {', '.join(map(str, types))}"))
    return t


def _date_arith(c: Arith, settings: Settings) -> str | None:
    """``date ± integer`` (date_add), ``date ± INTERVAL`` (DateAddInterval): a DATE result."""
    lt = _type(c.left, settings) if not isinstance(c.left, Interval) else None
    rt = _type(c.right, settings) if not isinstance(c.right, Interval) else None
    if c.op in ("+", "-") and lt is not None and lt.name == "date":
        if isinstance(c.right, Interval) or (rt is not None and rt.is_integral):
            return "left"
    if c.op == "+" and rt is not None and rt.name == "date":
        if isinstance(c.left, Interval) or (lt is not None and lt.is_integral):
            return "right"
    if isinstance(c.left, Interval) or isinstance(c.right, Interval):
        raise _Unknown(Unmodelled(f"{c}: interval arithmetic on {lt or rt}"))
    return None


def _arith_plan(c: Arith, settings: Settings) -> tuple[SparkType, SparkType, SparkType]:
    if _date_arith(c, settings) is not None:
        return (DATE,), (DATE,), DATE
    lt, rt = _type(c.left, settings), _type(c.right, settings)
    plan = arithmetic_types(c.op, lt, rt, settings.ansi, _integral_literal(c.left, rt), _integral_literal(c.right, lt))
    if plan is None:
        raise _Unknown(Unmodelled(f"{lt} {c.op} {rt}"))
    return plan


def _type_or_other(c: Const) -> SparkType:
    t = type_of(c, Settings())
    return t if isinstance(t, SparkType) else SparkType("other")


# ---- values --------------------------------------------------------------------------------------
def static_null(c: Const) -> bool:
    """NULL by ``NullPropagation`` alone: a NULL literal, or a null-intolerant operation on one."""
    if isinstance(c, Lit):
        return c.value is None
    if isinstance(c, (Cast, Neg)):
        return static_null(c.arg)
    if isinstance(c, Compare):
        if any(isinstance(integral_vs_decimal_literal(op, _type_or_other(x), y), bool)
               for op, x, y in ((c.op, c.left, c.right), (_FLIP[c.op], c.right, c.left))):
            return False
        return static_null(c.left) or static_null(c.right)
    if isinstance(c, Arith):
        return static_null(c.left) or static_null(c.right)
    if isinstance(c, Call):
        if c.name in ("date_add", "date_sub") and _type_or_other(c.args[1]).is_string:
            return False  # without ANSI the analyzer reads a string day count first (``_eval_call``)
        return any(static_null(a) for a in c.args)
    return False


def evaluate(c: Const, settings: Settings) -> Outcome:
    try:
        t = _type(c, settings)
        if t.name == "other":  # DECIMAL(39,0) fails in Spark, ARRAY<INT> does not: neither is claimed
            return Unmodelled(f"{c}: a value of type {t}, which the planner does not read")
        if static_null(c) and not isinstance(c, Compare):
            return null(t)
        return _eval(c, settings)
    except _Unknown as u:
        return u.outcome
    except (OverflowError, ValueError, ArithmeticError, TypeError) as e:  # outside Python's ranges
        return Unmodelled(f"{c}: {type(e).__name__}")


def _value(c: Const, settings: Settings) -> Typed:
    """``c``'s value, raising ``_Unknown`` for Raises/Unmodelled (so callers stop at once)."""
    out = _eval(c, settings)
    if not isinstance(out, Typed):
        raise _Unknown(out)
    return out


def _as(v: Typed, to: SparkType, settings: Settings) -> Typed:
    out = cast(v, to, settings)
    if not isinstance(out, Typed):
        raise _Unknown(out)
    return out


def _eval(c: Const, settings: Settings) -> Outcome:
    if isinstance(c, Lit):
        return Typed(c.value, c.type)
    if isinstance(c, TypedText):
        out = cast(Typed(c.text, STRING), c.type, Settings(True, settings.time_zone))
        return Raises(f"{c} is not a valid literal") if isinstance(out, Typed) and out.is_null else out
    if isinstance(c, Cast):
        v = _value(c.arg, settings)
        return cast(v, c.to, settings, safe=c.safe)
    if isinstance(c, Neg):
        _type(c, settings)
        v = _value(c.arg, settings)
        if v.type.is_string:
            v = _as(v, SparkType("double"), settings)
        return negate(v, settings)
    if isinstance(c, Arith):
        return _eval_arith(c, settings)
    if isinstance(c, Compare):
        return _eval_compare(c, settings)
    if isinstance(c, InList):
        return _eval_in(c, settings)
    if isinstance(c, Call):
        return _eval_call(c, settings)
    return Unmodelled(f"{c}")


def _eval_arith(c: Arith, settings: Settings) -> Outcome:
    side = _date_arith(c, settings)
    if side is not None:
        base, amount = (c.left, c.right) if side == "left" else (c.right, c.left)
        d = _value(base, settings)
        if d.is_null:
            return null(DATE)
        if isinstance(amount, Interval):
            n = amount.amount if c.op == "+" else -amount.amount
            return _shift(d.value, n, amount.unit)
        k = _value(amount, settings)
        if k.is_null:
            return null(DATE)
        return _shift(d.value, k.value if c.op == "+" else -k.value, "day")
    lt, rt, result = _arith_plan(c, settings)
    # ``DivModLike`` evaluates the divisor first; the other operators the left operand first.
    order = ((c.right, rt), (c.left, lt)) if c.op in ("/", "%", "div") else ((c.left, lt), (c.right, rt))
    values = {}
    for operand, chain in order:
        v = _value(operand, settings)
        for t in chain:
            if v.is_null:
                return null(result)
            v = _as(v, t, settings)
        if v.is_null:
            return null(result)
        values[id(operand)] = v
    return arithmetic(c.op, values[id(c.left)], values[id(c.right)], result, settings)


def _comparison_type(left: Const, right: Const, settings: Settings) -> SparkType:
    lt, rt = _type(left, settings), _type(right, settings)
    t = comparison_type(lt, rt, settings.ansi, _integral_literal(left, rt), _integral_literal(right, lt))
    if t is None:
        raise _Unknown(Unmodelled(f"comparison of {lt} with {rt}"))
    return t


_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "=", "<>": "<>"}
LONG_MIN, LONG_MAX = -(1 << 63), (1 << 63) - 1


def integral_vs_decimal_literal(op: str, left_type: SparkType, right: Const) -> bool | None | str:
    """Spark's analyzer rewrites ``integral_expr <op> decimal_literal`` (``integralAndDecimalLiteral``):
    past the BIGINT range the comparison becomes the constant TRUE or FALSE, *even for a NULL
    operand* (``CAST(NULL AS INT) <= 12345678901234567890.5`` is TRUE in Spark 4.3). Not for a cast
    (``CAST('12345678901234567890.5' AS DECIMAL(21,1))``): a ``from_cast`` literal may be either,
    and its callers keep both readings.

    Returns that constant, or "compare" when the comparison stays as it is (a floor or ceiling of
    the literal compares the same), or None when the rule does not apply.
    """
    if op in ("=", "<>") or not left_type.is_integral or not (
            isinstance(right, Lit) and right.type.is_decimal and right.value is not None):
        return None
    v = right.value
    if v < LONG_MIN:
        return op in (">", ">=")
    if v > LONG_MAX:
        return op in ("<", "<=")
    return "compare"


def _eval_compare(c: Compare, settings: Settings) -> Outcome:
    lt, rt = _type(c.left, settings), _type(c.right, settings)
    for op, other_type, lit, other in ((c.op, lt, c.right, c.left), (_FLIP[c.op], rt, c.left, c.right)):
        rule = integral_vs_decimal_literal(op, other_type, lit)
        if isinstance(rule, bool):
            if lit.from_cast:  # 1.5BD or CAST('1.5' AS …): the cast's reading is NULL, or fails, with the other side
                if static_null(other) or not isinstance(v := _eval(other, settings), Typed) or v.is_null:
                    raise _Unknown(Unmodelled(f"{lit}: a DECIMAL literal or a cast? (Spark folds "
                                              f"{c.op} to {str(rule).upper()} only for a literal)"))
            return Typed(rule, BOOLEAN)
        if rule == "compare" and lit.type.is_decimal and not static_null(other):
            # through the literal's floor or ceiling: exact, where widening to a decimal of at most
            # 38 digits may round the literal (1.0000000000000000000000000000000000001 > (0 + 1))
            a = _value(other, settings)
            if a.is_null:
                return null(BOOLEAN)
            exact = Typed(holds(op, compare_values(Decimal(a.value), lit.value)), BOOLEAN)
            if lit.from_cast and exact != _widened_compare(c, settings):  # a CAST is compared widened
                raise _Unknown(Unmodelled(f"{lit}: a DECIMAL literal or a cast? (they compare differently)"))
            return exact
    return _widened_compare(c, settings)


def _widened_compare(c: Compare, settings: Settings) -> Outcome:
    if static_null(c.left) or static_null(c.right):
        return null(BOOLEAN)
    t = _comparison_type(c.left, c.right, settings)
    a = _value(c.left, settings)
    if a.is_null:
        return null(BOOLEAN)
    a = _as(a, t, settings)
    b = _value(c.right, settings)
    if b.is_null:
        return null(BOOLEAN)
    b = _as(b, t, settings)
    if a.is_null or b.is_null:
        return null(BOOLEAN)
    return Typed(holds(c.op, compare_values(a.value, b.value)), BOOLEAN)


def _eval_in(c: InList, settings: Settings) -> Outcome:
    t = _in_type(c, settings)
    a = _value(c.arg, settings)
    if a.is_null:
        return null(BOOLEAN)
    a = _as(a, t, settings)
    saw_null = a.is_null
    for item in c.items:
        v = _as(_value(item, settings), t, settings)
        if v.is_null or a.is_null:
            saw_null = True
        elif compare_values(a.value, v.value) == 0:
            return Typed(True, BOOLEAN)
    return null(BOOLEAN) if saw_null else Typed(False, BOOLEAN)


def add_months(d: dt.date, months: int) -> dt.date:
    """``LocalDate.plusMonths``: the day is clamped to the last day of the target month."""
    import calendar

    y, m = divmod(d.month - 1 + months, 12)
    year, month = d.year + y, m + 1
    return d.replace(year=year, month=month, day=min(d.day, calendar.monthrange(year, month)[1]))


def _shift(d: dt.date, n: int, unit: str) -> Outcome:
    if unit == "day":
        return Typed(d + dt.timedelta(days=n), DATE)
    return Typed(add_months(d, n if unit == "month" else 12 * n), DATE)


def _eval_call(c: Call, settings: Settings) -> Outcome:
    if c.name == "to_date":
        return cast(_value(c.args[0], settings), DATE, settings)
    days = None
    if not settings.ansi and c.name != "add_months" and _type(c.args[1], settings).is_string:
        # Without ANSI, Spark's analyzer (TypeCoercion's DateAdd rule) turns a string day count into
        # an INT itself, before anything is folded: cast as with ANSI on (else
        # SECOND_FUNCTION_ARGUMENT_NOT_INTEGER), and a NULL string is 0 days
        days = _value(c.args[1], settings)
        days = Typed(0, INT) if days.is_null else _as(days, INT, Settings(True, settings.time_zone))
    start = _value(c.args[0], settings)
    if start.is_null:
        return null(DATE)
    if start.type.is_string:
        start = _as(start, DATE, settings)
    if start.type.name != "date":
        return Unmodelled(f"{c.name} of a {start.type}")
    n = days if days is not None else _value(c.args[1], settings)
    if n.is_null or start.is_null:
        return null(DATE)
    if n.type.is_string:
        n = _as(n, INT, settings)
    if not n.type.is_integral or n.type.name == "bigint":
        return Unmodelled(f"{c.name} by a {n.type}")
    if n.is_null:
        return null(DATE)
    if c.name == "add_months":
        return Typed(add_months(start.value, n.value), DATE)
    return _shift(start.value, n.value if c.name == "date_add" else -n.value, "day")


__all__ = ["evaluate", "type_of", "static_null", "add_months"]

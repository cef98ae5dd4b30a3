"""Which values of a column make ``column <op> constant`` TRUE, and which make it FALSE.

Spark first casts both sides to one type (``planner.semantics.coercion``). If that is the
column's own type, the constant is cast and compared in the column's domain. Otherwise the
*column* is cast, and the TRUE set is the preimage of a range under that cast. Every cast handled
here is monotone (non-decreasing), so the preimage of a range is a range, bounded by

    lowest(w)   the least column value whose cast is >= w   (``f(x) >= w  <=>  x >= lowest(w)``)
    highest(w)  the greatest column value whose cast is <= w (``f(x) <= w  <=>  x <= highest(w)``)

Worked example, a DECIMAL(15,3) column against the string '1.00499999999999999999' (both are
compared as DOUBLE): the string is the double 1.00499999999999989..., which is also what 1.005
rounds to, so ``d <= '1.004999…'`` holds for d <= 1.005 and the partition holding 1.005 is read.

Casts that are not monotone (a string column read as a number or a date) make the comparison
``Unbound`` with the reason, and the predicate stays opaque. The sets are exact wherever this
module returns them; ``planner.cnf.bind`` turns them into ``Pred`` atoms.
"""
from __future__ import annotations

import datetime as dt
import math
import struct
from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal, localcontext
from fractions import Fraction

from planner.cnf.values import float_value
from planner.cnf.valueset import Interval, ValueSet
from planner.semantics.casts import cast
from planner.semantics.coercion import common_type, comparison_type
from planner.semantics.constants import Const, Lit
from planner.semantics.evaluate import evaluate, integral_vs_decimal_literal
from planner.semantics.kinds import Kind, render
from planner.semantics.settings import Raises, Settings, Typed
from planner.semantics.types import SparkType
from planner.semantics.zones import start_of_day, to_wall, trusted, zone

NEGATED = {"=": "<>", "<>": "=", "<": ">=", ">=": "<", ">": "<=", "<=": ">"}


@dataclass(frozen=True)
class Sides:
    """The TRUE and FALSE sets of a comparison (a value in neither makes it UNKNOWN); exact, or
    (``exact`` False) bounds of both, each holding every value the comparison may be TRUE (FALSE) on."""

    true: ValueSet
    false: ValueSet
    exact: bool = True


@dataclass(frozen=True)
class Unbound:
    """The comparison cannot be turned into value sets (``reason`` says why); or, with
    ``fails``, Spark fails the query (an ANSI cast error), so no row is returned at all."""

    reason: str
    fails: bool = False


# ---- domain values ------------------------------------------------------------------------------
def domain_value(v: Typed, column: SparkType):
    """A value of the column's own type as the column's value sets hold it."""
    if column.kind is Kind.FLOAT:
        return float_value(v.value)
    return v.value


def _pad(t: SparkType, v: Typed) -> Typed:
    """``ApplyCharTypePadding``: a string constant compared with a CHAR(n) column is padded to n."""
    if t.name == "char" and v.type.is_string and isinstance(v.value, str) and len(v.value) < t.precision:
        return Typed(v.value.ljust(t.precision), v.type)
    return v


# ---- one comparison -------------------------------------------------------------------------------
def comparison(column: SparkType, op: str, const: Const, settings: Settings, *, pad: bool = True) -> Sides | Unbound:
    """The sets of ``column <op> const``. ``pad=False``: the bounds of a BETWEEN, which Spark 4.3
    does *not* pad for a CHAR column (``c BETWEEN 'ab ' AND 'ab'`` compares with 'ab' as is)."""
    kind = column.kind
    rule = integral_vs_decimal_literal(op, column, const)
    if isinstance(rule, bool):
        # Spark's analyzer replaced the comparison by a constant: TRUE for *every* row, NULLs too.
        # Written as 1.5BD or as a CAST (``from_cast``: sqlglot reads both alike), a NULL row may be
        # NULL instead: the literal's sets hold the cast's, so they bound both readings.
        every, none = ValueSet.everything(kind), ValueSet.nothing(kind)
        exact = not const.from_cast
        return Sides(every, none, exact) if rule else Sides(none, every, exact)
    v = evaluate(const, settings)
    if not isinstance(v, Typed):
        return Unbound(f"{const}: {v.reason}" if isinstance(v, Raises) else f"{const} is not modelled: {v.reason}",
                       isinstance(v, Raises))
    if pad:
        v = _pad(column, v)
    elif column.name == "char" and isinstance(v.value, str) and len(v.value) < column.precision:
        # The sets would be exact, but their bound is shorter than n: written into a region, Spark
        # would pad it and mean another range (for values holding characters below ' ').
        return Unbound(f"BETWEEN on a {column} column with a bound shorter than {column.precision} "
                       f"({render(v.value)}): Spark does not pad it; not modelled")
    int_lit = const.value if isinstance(const, Lit) and const.type.is_integral and not const.from_cast else None
    common = comparison_type(column, v.type, settings.ansi, None, int_lit)
    if common is None:
        return Unbound(f"Spark cannot compare a {column} column with {v.type} {const}")
    if v.is_null:
        return Sides(ValueSet.nothing(kind), ValueSet.nothing(kind))  # x = NULL is never TRUE nor FALSE
    w = cast(v, common, settings)
    if not isinstance(w, Typed):
        return Unbound(f"{const} as {common}: {w.reason}", isinstance(w, Raises))
    if w.is_null:
        return Sides(ValueSet.nothing(kind), ValueSet.nothing(kind))
    widened = _compare(column, common, op, w, settings)
    if rule == "compare" and column.is_integral and isinstance(const, Lit) and const.type.is_decimal:
        # Spark compares an integral column with a decimal *literal* through the literal's floor or
        # ceiling (integralAndDecimalLiteral), exactly; the widened decimal may have rounded it
        # (i < 1.0000000000000000000000000000000000001 is TRUE for i = 1). A from_cast literal may
        # be a CAST, compared widened: both readings are kept.
        exact = _compare_integral(column, op, const.value)
        if const.from_cast and exact != widened:
            if not isinstance(widened, Sides):
                return widened
            return Sides(exact.true.union(widened.true), exact.false.union(widened.false), False)
        return exact
    return widened


def _compare_integral(column: SparkType, op: str, d: Decimal) -> Sides:
    """``x <op> d`` for an integral column, d exact: x >= d iff x >= ceil(d), x <= d iff x <= floor(d)."""
    lo = snap(column, (int(d.to_integral_value(rounding=ROUND_CEILING)), True), False)
    hi = snap(column, (int(d.to_integral_value(rounding=ROUND_FLOOR)), True), True)
    return Sides(_set(column.kind, op, lo, hi), _set(column.kind, NEGATED[op], lo, hi))


def _compare(column: SparkType, common: SparkType, op: str, w: Typed, settings: Settings) -> Sides | Unbound:
    bounds = thresholds(column, common, w, settings)
    if isinstance(bounds, Unbound):
        return bounds
    lo, hi = (snap(column, b, upper) for b, upper in zip(bounds, (False, True)))
    return Sides(_set(column.kind, op, lo, hi), _set(column.kind, NEGATED[op], lo, hi))


def snap(column: SparkType, bound, upper: bool):
    """A threshold moved onto the column's own grid and range: 1 for an integer, 10^-s for a
    DECIMAL(p, s). ``x > 0.3333335`` on DECIMAL(15,6) is ``x >= 0.333334``. Bounds then print as
    short literals of the column's type, never as a 50-digit binary midpoint (which Spark would read
    as a DOUBLE) or a number past the column's range (which could not be written at all)."""
    if bound in (ALL, EMPTY) or not (column.is_integral or column.is_decimal):
        return bound
    value, closed = bound
    with localcontext() as ctx:
        ctx.prec = 2100  # exact: a 38-digit bound must not be rounded to the default 28 digits
        step = Decimal(1).scaleb(-column.scale) if column.is_decimal else Decimal(1)
        top = (Decimal(10) ** (column.precision - column.scale) - step) if column.is_decimal \
            else Decimal(column.max_value)
        bottom = -top if column.is_decimal else Decimal(column.min_value)
        v = Decimal(value)
        k = v / step
        on_grid = k == k.to_integral_value()
        if upper:  # x <= v (closed) or x < v: the largest grid value that qualifies
            g = (k.to_integral_value(rounding=ROUND_FLOOR) - (0 if closed or not on_grid else 1)) * step
            if g < bottom:
                return EMPTY
            if g >= top:
                return ALL
        else:
            g = (k.to_integral_value(rounding=ROUND_CEILING) + (0 if closed or not on_grid else 1)) * step
            if g > top:
                return EMPTY
            if g <= bottom:
                return ALL
    if column.is_integral or g == g.to_integral_value():
        return (int(g) if column.is_integral else Decimal(int(g))), True
    with localcontext() as ctx:
        ctx.prec = 100
        return g.normalize(), True  # 0.050 -> 0.05: the shortest spelling of the grid value


def _set(kind: Kind, op: str, lo, hi) -> ValueSet:
    """The values x with ``f(x) <op> w``, given ``lowest(w)`` and ``highest(w)``.

    ``lo`` is ``(value, closed)`` for ``f(x) >= w  <=>  x >= value`` (``x > value`` if open), or
    ``(None, _)`` when no value qualifies (``EMPTY``) / every value does (``ALL``); ``hi`` likewise.
    """
    at_least = _half(kind, lo, upper=False)   # f(x) >= w
    at_most = _half(kind, hi, upper=True)     # f(x) <= w
    if op == ">=":
        return at_least
    if op == "<=":
        return at_most
    if op == "=":
        return at_least.intersect(at_most)
    if op == ">":
        return at_most.complement().intersect(ValueSet.not_null(kind))
    if op == "<":
        return at_least.complement().intersect(ValueSet.not_null(kind))
    return at_least.intersect(at_most).complement().intersect(ValueSet.not_null(kind))  # <>


ALL, EMPTY = "all", "empty"


def _half(kind: Kind, bound, upper: bool) -> ValueSet:
    if bound == ALL:
        return ValueSet.not_null(kind)
    if bound == EMPTY:
        return ValueSet.nothing(kind)
    value, closed = bound
    if upper:
        return ValueSet.of(kind, [Interval(None, value, False, closed)])
    return ValueSet.of(kind, [Interval(value, None, closed, False)])


# ---- thresholds of monotone casts ------------------------------------------------------------------
def thresholds(column: SparkType, common: SparkType, w: Typed, settings: Settings):
    """``(lowest(w), highest(w))`` for the cast of ``column`` values to ``common``."""
    t, c = column, common
    same = t == c or (t.is_string and c.is_string)
    if same:
        dv = domain_value(w, t)
        if t.kind is Kind.FLOAT and dv is None:
            return Unbound(f"compares a {t} column with {w.value!r} (NaN and infinities are not modelled)")
        return (dv, True), (dv, True)
    if t.is_integral and (c.is_integral or c.is_decimal):
        return (w.value, True), (w.value, True)  # exact: the integers compare as numbers
    if t.is_decimal and c.is_decimal:
        return _decimal_to_decimal(t, c, w.value)
    if (t.is_integral or t.is_decimal) and c.is_fractional:
        return _exact_to_binary(w.value, c.name == "float")
    if t.name == "float" and c.name == "double":
        dv = float_value(w.value)
        if dv is None:
            return Unbound(f"compares a {t} column with {w.value!r} (NaN and infinities are not modelled)")
        return (dv, True), (dv, True)  # FLOAT -> DOUBLE is exact; the domain holds doubles
    if t.name == "date" and c.name == "timestamp":
        return _date_thresholds(w.value, settings)
    return Unbound(f"Spark casts the column to {c} to compare it with {render(w.value)}; that cast does not "
                   f"keep the order of {t} values")


def _decimal_to_decimal(t: SparkType, c: SparkType, w: Decimal):
    if c.scale >= t.scale:
        return (w, True), (w, True)
    # A wider type past 38 digits keeps integer digits and drops scale: the column is rounded
    # HALF_UP (half away from zero) to c.scale digits. f(x) >= w  <=>  x >= w - h, where the
    # midpoint w - h itself rounds to w only if it is positive.
    h = Decimal(5).scaleb(-(c.scale + 1))
    with localcontext() as ctx:
        ctx.prec = 100
        lo, hi = w - h, w + h
    return (lo, lo > 0), (hi, hi < 0)


def _bits(w: float, single: bool) -> int:
    return struct.unpack("<I", struct.pack("<f", w))[0] if single else struct.unpack("<Q", struct.pack("<d", w))[0]


def _float32(b: int) -> float:
    """The binary32 value whose bits are ``b`` (binary64 neighbours come from ``math.nextafter``)."""
    return struct.unpack("<f", struct.pack("<I", b))[0]


def _next(w: float, up: bool, single: bool) -> float:
    """The neighbouring binary64 (or binary32) value of a finite ``w``; infinity past the largest."""
    if not single:
        return math.nextafter(w, math.inf if up else -math.inf)
    if w == 0:
        tiny = _float32(1)
        return tiny if up else -tiny
    b = _bits(w, True)
    return _float32(b + 1 if (w > 0) == up else b - 1)


def _even(w: float, single: bool) -> bool:
    """Whether ``w``'s last significand bit is 0 (a tie rounds to it)."""
    return w == 0 or _bits(w, single) % 2 == 0


def _exact_to_binary(w: float, single: bool):
    """Thresholds for an exact number cast to DOUBLE (or FLOAT): round half to even, monotone."""
    if math.isnan(w):
        return Unbound("compares with NaN")
    if math.isinf(w):
        return (EMPTY, ALL) if w > 0 else (ALL, EMPTY)
    w = abs(w) if w == 0 else w  # -0.0 = 0.0
    below, above = _next(w, False, single), _next(w, True, single)
    tie = _even(w, single)  # a value halfway between two binaries rounds to the even one
    fw = Fraction(w)
    # Past the largest finite binary lies infinity; no integer or DECIMAL(38) value gets there.
    low = ALL if math.isinf(below) else (_decimal((Fraction(below) + fw) / 2), tie)
    high = ALL if math.isinf(above) else (_decimal((fw + Fraction(above)) / 2), tie)
    return low, high


def _decimal(q: Fraction) -> Decimal:
    """A binary midpoint as an exact Decimal (its denominator is a power of two)."""
    with localcontext() as ctx:
        ctx.prec = 2000
        return Decimal(q.numerator) / Decimal(q.denominator)


def _date_thresholds(instant: dt.datetime, settings: Settings):
    """Thresholds of DATE -> TIMESTAMP (the day's first instant in the session zone)."""
    tz = zone(settings.time_zone)
    if tz is None or not trusted(tz, instant):
        return Unbound(f"time zone {settings.time_zone} at {instant}")
    day = to_wall(instant, tz).date()
    start = start_of_day(day, tz)
    lowest = day if start >= instant else day + dt.timedelta(days=1)
    highest = day if start <= instant else day - dt.timedelta(days=1)
    return (lowest, True), (highest, True)


# ---- IN lists ------------------------------------------------------------------------------------------
def membership(column: SparkType, consts: tuple[Const, ...], settings: Settings) -> tuple[ValueSet, bool] | Unbound:
    """``column IN (consts)``: the TRUE set, and whether the list holds a NULL (then there is no
    FALSE outcome). All items are cast to one common type (``findWiderCommonType``)."""
    kind = column.kind
    values = []
    for c in consts:
        v = evaluate(c, settings)
        if not isinstance(v, Typed):
            return Unbound(f"{c}: {v.reason}", isinstance(v, Raises))
        values.append(v)
    if all(v.type.is_string for v in values):
        # ``ApplyCharTypePadding`` pads an IN list for a CHAR column only when every item is a STRING
        # as written: one number, date or untyped NULL among them and none is padded (Spark 4:
        # ``c IN ('ab', 1)`` and ``c IN ('ab', NULL)`` do not match a CHAR(5) 'ab')
        values = [_pad(column, v) for v in values]
    common = common_type([column] + [v.type for v in values], settings.ansi)
    if common is None:
        return Unbound(f"Spark cannot compare a {column} column with {', '.join(str(v.type) for v in values)}")
    parts, saw_null = [], False
    for v in values:
        w = cast(v, common, settings)
        if not isinstance(w, Typed):
            return Unbound(f"{v.value!r} as {common}: {w.reason}", isinstance(w, Raises))
        if w.is_null:
            saw_null = True
            continue
        sides = _compare(column, common, "=", w, settings)
        if isinstance(sides, Unbound):
            return sides
        parts.append(sides.true)
    return ValueSet.union_all(kind, parts), saw_null


__all__ = ["comparison", "membership", "Sides", "Unbound", "domain_value", "thresholds"]

"""``CAST(value AS type)`` on constants, as Spark 4 computes it, under ANSI on and off.

One function, ``cast(value, to, settings, safe=False)``; ``safe`` is ``TRY_CAST`` (NULL instead of
an error). The same casts run where Spark's analyzer inserts them implicitly (a comparison of a
DECIMAL with a string compares both as DOUBLE: ``coercion``).

Worked examples (Spark 4.3 agrees, see tests/test_spark_semantics.py):

    CAST('1.005' AS DECIMAL(15,2))   1.01        decimal rounding is HALF_UP
    CAST(2.5 AS INT)                 2           to an integer truncates
    CAST(0.1 AS FLOAT)               0.100000001 binary32, correctly rounded from the decimal
    CAST('300' AS TINYINT)           error with ANSI, NULL without
    CAST(300 AS TINYINT)             error with ANSI, 44 without (two's complement wrap)
    CAST(1e20 AS INT)                error with ANSI, 2147483647 without (the JVM saturates)
    CAST('2020-01-05 xyz' AS DATE)   2020-01-05

Where Spark's result depends on something a constant does not show (a decimal kept as a long
or as a BigDecimal inside Spark, Java 17's ``Double.toString``), the cast is ``Unmodelled``
unless both possibilities agree.
"""
from __future__ import annotations

import datetime as dt
import math
from decimal import ROUND_DOWN, ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal, localcontext

from planner.semantics import parsing as P
from planner.semantics.floats import exact_to_float32, to_float32
from planner.semantics.settings import (
    Outcome,
    Raises,
    Settings,
    Typed,
    Unmodelled,
    failure,
    null,
)
from planner.semantics.types import STRING, TIMESTAMP, SparkType
from planner.semantics.zones import start_of_day, to_instant, to_wall, trusted, zone

EPOCH = dt.datetime(1970, 1, 1)


# ---- decimals ---------------------------------------------------------------------------------
def round_decimal(d: Decimal, precision: int, scale: int) -> Decimal | None:
    """``d`` rounded HALF_UP to ``scale`` digits, or None when it needs more than ``precision``."""
    if not d.is_zero() and d.adjusted() + 1 > precision - scale:
        # Too many integer digits whatever the rounding (rounding only ever adds one). Checked
        # first: quantizing '1.5e400' to 6 places needs 407 digits, past the context's 200, and
        # raised decimal.InvalidOperation out of the planner (n IN (3, '1.5e400', 7.0BD)).
        return None
    with localcontext() as ctx:
        ctx.prec = 200
        q = d.quantize(Decimal(1).scaleb(-scale), rounding=ROUND_HALF_UP)
        if q.is_zero():
            q = abs(q)  # no negative zero: Spark's BigDecimal has none
        if q.adjusted() + 1 > precision - scale and not q.is_zero():
            return None
    return q


def decimal_text(d: Decimal, scale: int) -> str:
    """``Decimal.toPlainString`` at the type's scale."""
    with localcontext() as ctx:
        ctx.prec = 200
        return format(d.quantize(Decimal(1).scaleb(-scale)), "f")


def _truncate(d: Decimal) -> int:
    with localcontext() as ctx:
        ctx.prec = 200
        return int(d.to_integral_value(rounding=ROUND_DOWN))


# ---- the cast ---------------------------------------------------------------------------------
def cast(v: Typed, to: SparkType, settings: Settings, *, safe: bool = False) -> Outcome:
    """``CAST(v AS to)`` (``TRY_CAST`` when ``safe``)."""
    if safe:
        # TRY_CAST is the ANSI cast with every error turned into NULL
        out = cast(v, to, Settings(True, settings.time_zone))
        return null(STRING if to.name in ("char", "varchar") else to) if isinstance(out, Raises) else out
    if to.name in ("char", "varchar"):
        to = STRING  # in an expression CHAR(n)/VARCHAR(n) are plain strings (no padding, no cut)
    ansi = settings.ansi
    src = v.type
    if v.is_null:
        return null(to)
    if to == src or (to.is_string and src.is_string):
        return Typed(v.value, to)
    if to.name == "other" or src.name == "other":
        return Unmodelled(f"cast from {src} to {to}")
    if src.is_string:
        return _from_string(v.value, to, settings, ansi)
    if src.name == "boolean":
        return _from_boolean(v.value, to, ansi)
    if src.is_integral:
        return _from_integral(v.value, to, settings, ansi)
    if src.is_decimal:
        return _from_decimal(v.value, src, to, settings, ansi)
    if src.is_fractional:
        return _from_fractional(v.value, to, settings, ansi)
    if src.name == "date":
        return _from_date(v.value, to, settings)
    if src.name in ("timestamp", "timestamp_ntz"):
        return _from_timestamp(v.value, src, to, settings)
    return Unmodelled(f"cast from {src} to {to}")


def _integral(i: int, to: SparkType, ansi: bool, what: str) -> Outcome:
    if to.min_value <= i <= to.max_value:
        return Typed(i, to)
    return Raises(f"{what} overflows {to}") if ansi else Typed(to.wrap(i), to)


def _to_decimal(d: Decimal, to: SparkType, ansi: bool) -> Outcome:
    q = round_decimal(d, to.precision, to.scale)
    return Typed(q, to) if q is not None else failure(ansi, f"{d} does not fit {to}", to)


def _from_boolean(b: bool, to: SparkType, ansi: bool) -> Outcome:
    if to.is_integral:
        return Typed(int(b), to)
    if to.is_decimal:
        return _to_decimal(Decimal(int(b)), to, ansi)
    if to.is_fractional:
        return Typed(float(b), to)
    if to.is_string:
        return Typed("true" if b else "false", to)
    return Unmodelled(f"cast from boolean to {to}")


def _from_integral(i: int, to: SparkType, settings: Settings, ansi: bool) -> Outcome:
    if to.is_integral:
        return _integral(i, to, ansi, str(i))
    if to.is_decimal:
        return _to_decimal(Decimal(i), to, ansi)
    if to.name == "double":
        return Typed(float(i), to)  # Python's int -> float rounds half to even, like (double) long
    if to.name == "float":
        return Typed(exact_to_float32(i), to)
    if to.is_string:
        return Typed(str(i), to)
    if to.name == "boolean":
        return Typed(i != 0, to)
    if to.name == "timestamp" and -62_135_596_800 <= i <= 253_402_300_799:  # seconds since the epoch
        return Typed(EPOCH + dt.timedelta(seconds=i), to)
    return Unmodelled(f"cast from integer to {to}")


def _from_decimal(d: Decimal, src: SparkType, to: SparkType, settings: Settings, ansi: bool) -> Outcome:
    if to.is_decimal:
        return _to_decimal(d, to, ansi)
    if to.is_integral:
        t = _truncate(d)
        if not ansi:
            return Typed(to.wrap(t), to)  # BigDecimal.longValue keeps the low 64 bits, then narrows
        if to.name == "bigint":
            return _integral(t, to, True, str(d))
        # Spark checks byte/short/int through a double when the decimal is held as a BigDecimal
        # (literals, results of arithmetic) and exactly when held as a long: claim the value only
        # when both agree (CAST(2.9999999999999999999 AS INT) is 3 in Spark 4.3, not 2).
        f = float(d)
        via_double = Typed(int(f), to) if math.floor(f) <= to.max_value and math.ceil(f) >= to.min_value \
            else Raises(f"{d} overflows {to}")
        exact = _integral(t, to, True, str(d))
        return exact if exact == via_double else Unmodelled(f"CAST({d} AS {to}) depends on Spark's storage")
    if to.name == "double":
        return Typed(float(d), to)  # BigDecimal.doubleValue is correctly rounded (JDK 17)
    if to.name == "float":
        return Typed(exact_to_float32(d), to)
    if to.is_string:
        # ANSI on: BigDecimal.toPlainString; off: BigDecimal.toString, which switches to E
        # notation below 1E-6 ('1E-7', '1.000E-7'), as Python's str(Decimal) does.
        text = decimal_text(d, src.scale)
        return Typed(text if ansi else str(Decimal(text)), to)
    if to.name == "boolean":
        return Typed(d != 0, to)
    return Unmodelled(f"cast from {src} to {to}")


def _d2i(x: float, bits: int) -> int:
    """The JVM's ``(int) d`` / ``(long) d``: NaN is 0, out of range saturates."""
    if math.isnan(x):
        return 0
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    if math.isinf(x):
        return hi if x > 0 else lo
    return max(lo, min(hi, int(x)))


def _double_readings(x: float) -> list[Decimal]:
    """Decimals of 1..17 significant digits (the shortest and longer) that read back as ``x``."""
    shortest = Decimal(repr(x))
    out = [shortest]
    exact = Decimal(x)
    for n in range(len(shortest.as_tuple().digits) + 1, 18):
        with localcontext() as ctx:
            ctx.prec, ctx.rounding = n, ROUND_HALF_EVEN
            d = +exact
        if float(d) == x:
            out.append(d)
    return out


def _from_fractional(x: float, to: SparkType, settings: Settings, ansi: bool) -> Outcome:
    if to.name == "double":
        return Typed(x, to)
    if to.name == "float":
        return Typed(to_float32(x), to)
    if to.is_integral:
        if ansi:
            if math.isnan(x) or math.isinf(x):
                return Raises(f"{x} cannot be cast to {to}")
            if math.floor(x) <= float(to.max_value) and math.ceil(x) >= float(to.min_value):
                return Typed(max(to.min_value, min(to.max_value, int(x))), to)
            return Raises(f"{x} overflows {to}")
        if to.name == "bigint":
            return Typed(_d2i(x, 64), to)
        return Typed(to.wrap(_d2i(x, 32)), to)  # Scala's Double.toByte: (byte) (int) d
    if to.is_decimal:
        if math.isnan(x) or math.isinf(x):
            return null(to)  # NULL even with ANSI on (Spark 4.3)
        # Spark reads the double through Double.toString, which on Java 17 is not always the
        # shortest decimal (JDK-4511638): it may print any digit count up to 17. Claim a result
        # only if every such reading of x rounds alike.
        candidates = {round_decimal(d, 400, to.scale) for d in _double_readings(x)}
        if len(candidates) != 1:
            return Unmodelled(f"CAST({x!r} AS {to}) depends on Java's Double.toString")
        return _to_decimal(Decimal(repr(x)), to, ansi)
    if to.name == "boolean":
        return Typed(x != 0, to)
    return Unmodelled(f"cast from {'double'} to {to}")


def _from_string(s: str, to: SparkType, settings: Settings, ansi: bool) -> Outcome:
    bad = lambda: failure(ansi, f"'{s}' cannot be cast to {to}", to)  # noqa: E731
    if to.is_integral:
        i = P.read_integer(s, ansi)
        if i is P.UNSURE:
            return Unmodelled(f"'{s}' as {to}")
        if i is P.INVALID or not (to.min_value <= i <= to.max_value):
            return bad()  # out of range is 'malformed' too (Spark: CAST_INVALID_INPUT)
        return Typed(i, to)
    if to.is_decimal:
        d = P.read_decimal(s)
        if d is P.UNSURE:
            return Unmodelled(f"'{s}' as {to}")
        return bad() if d is P.INVALID else _to_decimal(d, to, ansi)
    if to.is_fractional:
        d = P.read_double_text(s)
        if d is P.UNSURE:
            return Unmodelled(f"'{s}' as {to}")
        if d is P.INVALID:
            return bad()
        if isinstance(d, str):
            return Typed(float(d), to)
        if d == 0:  # Float.parseFloat / Double.parseDouble keep the sign of a zero: '-0' is -0.0
            return Typed(math.copysign(0.0, -1.0 if d.is_signed() else 1.0), to)
        return Typed(float(d) if to.name == "double" else exact_to_float32(d), to)
    if to.name == "boolean":
        b = P.read_boolean(s)
        return Unmodelled(f"'{s}' as boolean") if b is P.UNSURE else (bad() if b is P.INVALID else Typed(b, to))
    if to.name == "date":
        d = P.read_date(s)
        return Unmodelled(f"'{s}' as date") if d is P.UNSURE else (bad() if d is P.INVALID else Typed(d, to))
    if to.name in ("timestamp", "timestamp_ntz"):
        r = P.read_timestamp(s)
        if r is P.UNSURE:
            return Unmodelled(f"'{s}' as {to}")
        if r is P.INVALID:
            return bad()
        wall, offset = r
        if to.name == "timestamp_ntz":
            return Typed(wall, to)  # an offset in the text is ignored ('… 10:00:00+01:00' is 10:00:00)
        if offset is not None:
            return Typed(wall - offset, to)
        return _wall_to_instant(wall, settings)
    return Unmodelled(f"cast from string to {to}")


def _wall_to_instant(wall: dt.datetime, settings: Settings) -> Outcome:
    tz = zone(settings.time_zone)
    if tz is None or not trusted(tz, wall):
        return Unmodelled(f"time zone {settings.time_zone} at {wall}")
    return Typed(to_instant(wall, tz), TIMESTAMP)


def _from_date(d: dt.date, to: SparkType, settings: Settings) -> Outcome:
    if to.name == "timestamp":
        tz = zone(settings.time_zone)
        if tz is None or not trusted(tz, dt.datetime(d.year, d.month, d.day)):
            return Unmodelled(f"time zone {settings.time_zone} at {d}")
        return Typed(start_of_day(d, tz), to)
    if to.name == "timestamp_ntz":
        return Typed(dt.datetime(d.year, d.month, d.day), to)
    if to.is_string:
        return Typed(d.isoformat(), to)  # four digits of year, as Spark prints 0999-01-01
    return Unmodelled(f"cast from date to {to}")


def timestamp_text(wall: dt.datetime) -> str:
    """Spark's TIMESTAMP -> STRING: seconds always, the fraction without trailing zeros."""
    text = wall.strftime("%Y-%m-%d %H:%M:%S")
    if wall.microsecond:
        text += "." + f"{wall.microsecond:06d}".rstrip("0")
    return text


def _from_timestamp(t: dt.datetime, src: SparkType, to: SparkType, settings: Settings) -> Outcome:
    if src.name == "timestamp_ntz":
        if to.name == "timestamp":
            return _wall_to_instant(t, settings)
        wall = t
    else:
        tz = zone(settings.time_zone)
        if tz is None or not trusted(tz, t):
            return Unmodelled(f"time zone {settings.time_zone} at {t}")
        wall = to_wall(t, tz)
    if to.name == "date":
        return Typed(wall.date(), to)
    if to.name == "timestamp_ntz":
        return Typed(wall, to)
    if to.is_string and wall.year >= 1000:
        return Typed(timestamp_text(wall), to)
    return Unmodelled(f"cast from {src} to {to}")


__all__ = ["cast", "round_decimal", "decimal_text", "timestamp_text", "EPOCH"]

"""Strings read as numbers, dates, timestamps and booleans, as Spark's casts read them.

Each reader returns the value, ``INVALID`` (Spark rejects the text: NULL, or an error under ANSI)
or ``UNSURE`` (text the planner does not model, e.g. hexadecimal floats or region time-zone ids
inside the string; nothing is claimed). The grammars follow ``UTF8String.toLong``,
``java.math.BigDecimal``, ``Double.parseDouble`` and ``DateTimeUtils.stringToDate`` /
``stringToTimestamp``:

    ' 42 '            -> 42 (both ends trimmed of ASCII whitespace and control characters)
    '5.5' as INT      -> 5 without ANSI (the fraction is checked, then dropped); INVALID with ANSI
    '2020-1-5 xyz'    -> DATE 2020-01-05 (anything after a space or 'T' is ignored)
    '2020-01-05 1:2'  -> TIMESTAMP 2020-01-05 01:02:00 in the session time zone
"""
from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal, InvalidOperation

INVALID = object()
UNSURE = object()


def _trim_all(text: str) -> str:
    """``UTF8String.trimAll``: strip ASCII whitespace and ISO control characters (<= 0x20, 0x7F)."""
    return text.strip("".join(chr(c) for c in range(33)) + "\x7f")


def _java_trim(text: str) -> str:
    """``String.trim``: strip characters <= U+0020."""
    return text.strip("".join(chr(c) for c in range(33)))


def _odd(text: str) -> bool:
    """Characters whose trimming or parsing might differ between Spark's readers and ours."""
    return any(ord(c) > 126 or (ord(c) < 32 and c not in "\t\n\r") or c == "\x7f" for c in text)


# ---- integers -------------------------------------------------------------------------------
_INT_RE = re.compile(r"^[+-]?\d+$")
_INT_DEC_RE = re.compile(r"^([+-]?)(\d*)(?:\.(\d*))?$")


def read_integer(text: str, ansi: bool):
    """``UTF8String.toLong`` (ANSI: no fraction allowed; otherwise '5.9' reads as 5)."""
    if _odd(text):
        return UNSURE
    s = _trim_all(text)
    if ansi:
        return int(s) if _INT_RE.match(s) else INVALID
    m = _INT_DEC_RE.match(s)
    if m is None or (m[2] == "" and m[3] is None):
        return INVALID  # '' or '-': no digit before an absent separator
    return -int(m[2] or "0") if m[1] == "-" else int(m[2] or "0")


# ---- decimals -------------------------------------------------------------------------------
_BIGDEC_RE = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


def read_decimal(text: str):
    """``new java.math.BigDecimal(str.trim)`` as ``Decimal.fromString`` uses it (exact value)."""
    if _odd(text):
        return UNSURE
    s = _java_trim(text)
    if not _BIGDEC_RE.match(s):
        return INVALID
    try:
        d = Decimal(s)
    except InvalidOperation:
        return INVALID
    if abs(d.adjusted()) > 400:  # exponents far past 38 digits: not worth modelling
        return UNSURE
    return d


# ---- doubles and floats -----------------------------------------------------------------------
_DOUBLE_RE = re.compile(r"^([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)([fFdD]?)$")
_SPECIAL = {"inf": "inf", "+inf": "inf", "infinity": "inf", "+infinity": "inf", "-inf": "-inf",
            "-infinity": "-inf", "nan": "nan"}


def read_double_text(text: str):
    """The exact decimal text ``Double.parseDouble`` (and Spark's special literals) would read:
    a ``Decimal``, or one of the strings 'inf', '-inf', 'nan'."""
    if _odd(text):
        return UNSURE
    s = _java_trim(text)
    m = _DOUBLE_RE.match(s)
    if m:
        d = Decimal(m[1])
        if abs(d.adjusted()) > 400:
            return UNSURE
        return d
    if s in ("NaN", "+NaN", "-NaN"):
        return "nan"
    if s in ("Infinity", "+Infinity"):
        return "inf"
    if s == "-Infinity":
        return "-inf"
    special = _SPECIAL.get(s.lower())
    if special is not None:
        return special
    if re.match(r"^[+-]?0[xX].*[pP]", s):
        return UNSURE  # hexadecimal floating point (needs a 'p' exponent): parseDouble reads it, we do not
    return INVALID


# ---- booleans --------------------------------------------------------------------------------
_TRUE = {"t", "true", "y", "yes", "1"}
_FALSE = {"f", "false", "n", "no", "0"}


def read_boolean(text: str):
    if _odd(text):
        return UNSURE
    s = _trim_all(text).lower()
    if s in _TRUE:
        return True
    if s in _FALSE:
        return False
    return INVALID


# ---- dates and timestamps ---------------------------------------------------------------------
_DATE_RE = re.compile(r"^([+-]?)(\d{4,7})(?:-(\d{1,2})(?:-(\d{1,2})(?:[ T].*)?)?)?$", re.S)
_TS_RE = re.compile(
    r"^(?P<sign>[+-]?)(?P<y>\d{4,7})(?:-(?P<m>\d{1,2})(?:-(?P<d>\d{1,2})"
    r"(?:(?P<sep>[ T])(?:(?P<H>\d{1,2}):(?P<M>\d{1,2})(?::(?P<S>\d{1,2})(?:\.(?P<f>\d*))?)?)?"
    r"(?P<zone>.*))?)?)?$", re.S)
_OFFSET_RE = re.compile(r"^\s?(?:Z|UTC|GMT|UT)$|^\s?(?:UTC|GMT|UT)?([+-])(\d{1,2})(?::?(\d{2}))?$")


def _make_date(sign: str, y: str, m: str | None, d: str | None):
    if sign == "-" or len(y) > 4:
        return UNSURE  # years outside 0..9999: Python has no date for them
    try:
        # year 0 is a valid (leap) year in Spark's calendar but has no Python date: 2000 checks its day
        day = dt.date(int(y) or 2000, int(m or 1), int(d or 1))
    except ValueError:
        return INVALID
    return day if int(y) else UNSURE


def read_date(text: str):
    """``DateTimeUtils.stringToDate``."""
    if _odd(text):
        return UNSURE
    s = _trim_all(text)
    m = _DATE_RE.match(s)
    if m is None:
        return INVALID
    return _make_date(m[1], m[2], m[3], m[4])


def read_timestamp(text: str):
    """``DateTimeUtils.stringToTimestamp``: ``(wall-clock datetime, offset or None)``.

    The offset is a ``datetime.timedelta`` when the text names one (``Z``, ``+01:00``, ``UTC``);
    None means the session time zone applies. Region zone ids in the text are UNSURE, and so is
    a time without a date (Spark takes today's date).
    """
    if _odd(text):
        return UNSURE
    s = _trim_all(text)
    m = _TS_RE.match(s)
    if m is None:
        if re.match(r"^T?\d{1,2}:|^T\d{1,2}$", s):
            return UNSURE  # a time without a date: Spark takes today's
        return INVALID
    day = _make_date(m["sign"], m["y"], m["m"], m["d"])
    if day is INVALID or day is UNSURE:
        return day
    zone_text = m["zone"] or ""
    if m["H"] is None:
        # '2020-01-05' (or just '2020'): midnight; '2020-01-05T…' without a time: not modelled.
        return (dt.datetime(day.year, day.month, day.day), None) if m["sep"] is None else UNSURE
    frac = m["f"] or ""  # '10:00:00.' and '10:00:00.Z': no digits after the dot are 0 (recorded)
    try:
        wall = dt.datetime(day.year, day.month, day.day, int(m["H"]), int(m["M"]), int(m["S"] or 0),
                           int(frac[:6].ljust(6, "0")))
    except ValueError:
        return INVALID
    if zone_text == "":
        return wall, None
    if m["S"] is None:
        return UNSURE  # a zone right after the minutes ('10:00Z'): Spark takes one only after the seconds
    z = _OFFSET_RE.match(zone_text)
    if z is None:
        return UNSURE
    if z.group(1) is None:
        return wall, dt.timedelta(0)
    hours, minutes = int(z.group(2)), int(z.group(3) or 0)
    if hours > 18 or minutes > 59 or (hours == 18 and minutes > 0):
        return UNSURE  # java.time.ZoneOffset stops at ±18:00
    off = dt.timedelta(hours=hours, minutes=minutes)
    return wall, (-off if z.group(1) == "-" else off)


__all__ = ["INVALID", "UNSURE", "read_integer", "read_decimal", "read_double_text", "read_boolean", "read_date",
           "read_timestamp"]

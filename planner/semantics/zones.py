"""Wall clock and instants in a session time zone, resolved as java.time resolves them.

Spark turns a local date-time into an instant with ``LocalDateTime.atZone(zone)``:

* in a gap (clocks jump forward, ``2020-03-08 02:30`` in New York) the time moves later by the
  length of the gap (03:30 EDT, 07:30 UTC);
* in an overlap (clocks go back, ``2020-11-01 01:30`` happens twice) the earlier offset wins.

Python's ``zoneinfo`` with ``fold=0`` gives the same answers (PEP 495: the offset before the
transition). The two tz databases may differ for local mean time before standard zones and for
rule changes one has and the other not yet, so region zones are only trusted from 1900 to 2100;
fixed offsets (``UTC``, ``+08:00``) always.
"""
from __future__ import annotations

import datetime as dt
import re
from functools import lru_cache

_FIXED = re.compile(r"^(?:UTC|GMT|UT)?([+-])(\d{1,2})(?::?(\d{2}))?$")
_UTC_NAMES = {"utc", "z", "gmt", "ut", "etc/utc", "etc/gmt", "etc/universal", "etc/zulu", "universal", "zulu",
              "etc/uct", "uct", "gmt0", "etc/gmt0", "etc/gmt+0", "etc/gmt-0", "greenwich", "etc/greenwich"}
TRUSTED_YEARS = (1900, 2100)


@lru_cache(maxsize=256)
def zone(name: str) -> dt.tzinfo | None:
    """The tzinfo of a Spark zone id (``Europe/Berlin``, ``UTC``, ``+08:00``), or None if unknown."""
    text = name.strip()
    if text.lower() in _UTC_NAMES:
        return dt.timezone.utc
    m = _FIXED.match(text)
    if m:
        hours, minutes = int(m[2]), int(m[3] or 0)
        if hours > 18 or minutes > 59:
            return None
        delta = dt.timedelta(hours=hours, minutes=minutes)
        return dt.timezone(-delta if m[1] == "-" else delta)
    try:
        from zoneinfo import ZoneInfo

        return ZoneInfo(text)
    except Exception:  # noqa: BLE001 - unknown key, bad name, missing tz database
        return None


def is_fixed(tz: dt.tzinfo) -> bool:
    return isinstance(tz, dt.timezone)


def trusted(tz: dt.tzinfo, *moments: dt.datetime) -> bool:
    """Whether conversions at these moments agree between Python's and Java's tz databases."""
    return is_fixed(tz) or all(TRUSTED_YEARS[0] <= m.year <= TRUSTED_YEARS[1] for m in moments)


def to_instant(wall: dt.datetime, tz: dt.tzinfo) -> dt.datetime:
    """The instant (naive UTC) of a wall-clock time in ``tz``, gaps and overlaps as java.time."""
    aware = wall.replace(tzinfo=tz, fold=0)
    return (aware - aware.utcoffset()).replace(tzinfo=None)


def to_wall(instant: dt.datetime, tz: dt.tzinfo) -> dt.datetime:
    """The wall-clock time in ``tz`` of an instant (naive UTC)."""
    return instant.replace(tzinfo=dt.timezone.utc).astimezone(tz).replace(tzinfo=None)


def start_of_day(day: dt.date, tz: dt.tzinfo) -> dt.datetime:
    """``LocalDate.atStartOfDay(zone)``: midnight, or the first moment after a gap at midnight.

    A gap that covers midnight but starts before it (23:30 -> 00:30) makes the day start at the
    transition itself, which ``to_instant`` would place later; search for it (to the second).
    """
    midnight = dt.datetime(day.year, day.month, day.day)
    i = to_instant(midnight, tz)
    if to_wall(i, tz) == midnight:
        return i
    lo, hi = i - dt.timedelta(days=1), i  # to_wall(lo) < midnight <= to_wall(hi)
    while hi - lo > dt.timedelta(seconds=1):
        mid = lo + (hi - lo) // 2
        mid = mid.replace(microsecond=0)
        if to_wall(mid, tz) >= midnight:
            hi = mid
        else:
            lo = mid
    return hi


__all__ = ["zone", "trusted", "to_instant", "to_wall", "start_of_day", "is_fixed"]

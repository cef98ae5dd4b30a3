"""The Spark session settings that change what a query means, and what a computation yields.

Two settings change the meaning of the same SQL text:

* ``spark.sql.ansi.enabled`` (Spark 4's default is on): which type two sides of a comparison are
  cast to (``int_col = '5.5'`` casts '5.5' to BIGINT and fails under ANSI, truncates it to 5
  without), and whether a failed cast or an overflow raises or yields NULL;
* ``spark.sql.session.timeZone``: what ``TIMESTAMP '2020-01-01 00:00:00'`` is as an instant, and
  what a DATE is as a TIMESTAMP.

A ``Settings`` value travels with every evaluation. An ``Outcome`` is what a computation yields:
a ``Typed`` value (``value`` None is NULL), ``Raises`` (Spark would fail the query) or
``Unmodelled`` (the planner does not know exactly, so it claims nothing).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Union

from planner.semantics.types import SparkType

DEFAULT_TIME_ZONE = "UTC"


@dataclass(frozen=True)
class Settings:
    ansi: bool = True
    time_zone: str = DEFAULT_TIME_ZONE

    def describe(self) -> str:
        return f"ANSI {'on' if self.ansi else 'off'}, time zone {self.time_zone}"

    def to_json(self) -> dict:
        return {"ansi": self.ansi, "time_zone": self.time_zone}

    @classmethod
    def from_json(cls, obj) -> "Settings":
        return cls(bool(obj.get("ansi", True)), str(obj.get("time_zone", DEFAULT_TIME_ZONE)))


@dataclass(frozen=True)
class Typed:
    """A value with its Spark type; ``value`` None is SQL NULL.

    Python representations: integral ``int``; DECIMAL ``Decimal`` (at the type's scale); FLOAT and
    DOUBLE ``float`` (a FLOAT holds a float32 value); strings ``str``; DATE ``datetime.date``;
    TIMESTAMP the instant as a naive ``datetime`` in UTC; TIMESTAMP_NTZ the naive wall clock;
    BOOLEAN ``bool``.
    """

    value: Any
    type: SparkType

    @property
    def is_null(self) -> bool:
        return self.value is None


@dataclass(frozen=True)
class Raises:
    """Spark fails the query (an ANSI overflow, a malformed cast, a division by zero)."""

    reason: str


@dataclass(frozen=True)
class Unmodelled:
    """The planner does not model this exactly; it claims nothing about it."""

    reason: str


Outcome = Union[Typed, Raises, Unmodelled]


def null(t: SparkType) -> Typed:
    return Typed(None, t)


def failure(ansi: bool, reason: str, t: SparkType) -> Outcome:
    """What an invalid cast or an overflow yields: an error under ANSI, else NULL."""
    return Raises(reason) if ansi else null(t)


__all__ = ["Settings", "Typed", "Raises", "Unmodelled", "Outcome", "null", "failure", "DEFAULT_TIME_ZONE"]

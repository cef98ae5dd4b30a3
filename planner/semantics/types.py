"""Spark SQL data types, as full types (``decimal(15,2)``, ``char(10)``), not just families.

A ``SparkType`` is what Spark's analyzer knows about an expression: the integer widths, DECIMAL
precision and scale, FLOAT (4 bytes) apart from DOUBLE, CHAR/VARCHAR lengths, DATE, TIMESTAMP
(Spark's default, the instant type also called TIMESTAMP_LTZ) apart from TIMESTAMP_NTZ, BOOLEAN,
and ``void`` for an untyped NULL. Everything else (maps, arrays, structs, binary, intervals) is
``other``: the planner never reasons about its values.

``parse_type`` reads the type text a catalog hands out (``DESCRIBE``, ``simpleString``, Hive DDL):

    parse_type("DECIMAL(15, 2)")   -> decimal(15,2)
    parse_type("integer")          -> int
    parse_type("char(10)")         -> char(10)
    parse_type("array<int>")       -> other (array<int>)
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from planner.semantics.kinds import Kind

MAX_PRECISION = 38  # Spark's DecimalType.MAX_PRECISION

INTEGRAL = ("tinyint", "smallint", "int", "bigint")
_INTEGRAL_BITS = {"tinyint": 8, "smallint": 16, "int": 32, "bigint": 64}
# DecimalType.forType: the decimal an integral type widens to without loss.
_INTEGRAL_DIGITS = {"tinyint": 3, "smallint": 5, "int": 10, "bigint": 20}

_ALIASES = {
    "byte": "tinyint", "short": "smallint", "integer": "int", "long": "bigint", "real": "float",
    "numeric": "decimal", "dec": "decimal", "text": "string", "timestamp_ltz": "timestamp", "bool": "boolean",
    "null": "void",
}
_SIMPLE = set(INTEGRAL) | {"float", "double", "string", "date", "timestamp", "timestamp_ntz", "boolean", "void"}


@dataclass(frozen=True)
class SparkType:
    """A Spark data type. ``precision``: DECIMAL precision or CHAR/VARCHAR length; ``detail``:
    the original text of an ``other`` type."""

    name: str
    precision: int = 0
    scale: int = 0
    detail: str = ""

    def __str__(self) -> str:
        if self.name == "decimal":
            return f"decimal({self.precision},{self.scale})"
        if self.name in ("char", "varchar"):
            return f"{self.name}({self.precision})"
        if self.name == "other":
            return self.detail or "other"
        return self.name

    # ---- families ---------------------------------------------------------------------------
    @property
    def is_integral(self) -> bool:
        return self.name in _INTEGRAL_BITS

    @property
    def is_decimal(self) -> bool:
        return self.name == "decimal"

    @property
    def is_fractional(self) -> bool:
        """FLOAT or DOUBLE (Spark's FractionalType minus DECIMAL)."""
        return self.name in ("float", "double")

    @property
    def is_numeric(self) -> bool:
        return self.is_integral or self.is_decimal or self.is_fractional

    @property
    def is_string(self) -> bool:
        """STRING, VARCHAR(n) or CHAR(n): all are Spark's StringType in expressions."""
        return self.name in ("string", "char", "varchar")

    @property
    def is_null(self) -> bool:
        return self.name == "void"

    @property
    def kind(self) -> Kind:
        """The value family of a *column* of this type (what its value sets hold)."""
        if self.is_integral:
            return Kind.INTEGER
        if self.is_decimal:
            return Kind.DECIMAL
        if self.is_fractional:
            return Kind.FLOAT
        if self.is_string:
            return Kind.STRING
        if self.name == "date":
            return Kind.DATE
        if self.name == "timestamp":
            return Kind.TIMESTAMP
        if self.name == "boolean":
            return Kind.BOOLEAN
        # timestamp_ntz: a Hive table cannot hold it (Spark refuses the CREATE), so no layout
        # is ever cut on it; other: maps, arrays, structs, binary, intervals.
        return Kind.OTHER

    # ---- integral range -------------------------------------------------------------------
    @property
    def bits(self) -> int:
        return _INTEGRAL_BITS[self.name]

    @property
    def min_value(self) -> int:
        return -(1 << (self.bits - 1))

    @property
    def max_value(self) -> int:
        return (1 << (self.bits - 1)) - 1

    def wrap(self, v: int) -> int:
        """Two's-complement wrap of an integer into this integral type (Java's narrowing)."""
        m = 1 << self.bits
        v %= m
        return v - m if v > self.max_value else v


def decimal(precision: int, scale: int) -> SparkType:
    return SparkType("decimal", precision, scale)


BYTE, SHORT, INT, LONG = (SparkType(n) for n in INTEGRAL)
FLOAT, DOUBLE = SparkType("float"), SparkType("double")
STRING, DATE, TIMESTAMP = SparkType("string"), SparkType("date"), SparkType("timestamp")
TIMESTAMP_NTZ, BOOLEAN, VOID = SparkType("timestamp_ntz"), SparkType("boolean"), SparkType("void")
NUMERIC_PRECEDENCE = ("tinyint", "smallint", "int", "bigint", "float", "double")  # UpCastRule.numericPrecedence


def decimal_for(t: SparkType) -> SparkType:
    """``DecimalType.forType``: the decimal an integral type (or a decimal) widens to."""
    if t.is_decimal:
        return t
    return decimal(_INTEGRAL_DIGITS[t.name], 0)


def bounded_decimal(precision: int, scale: int) -> SparkType:
    """``DecimalType.bounded``: both capped at 38."""
    return decimal(min(precision, MAX_PRECISION), min(scale, MAX_PRECISION))


_TYPE_RE = re.compile(r"^\s*([a-z_]+)\s*(?:\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\))?\s*$")


def parse_type(text: str) -> SparkType:
    """The ``SparkType`` of a catalog type string; anything not modelled is ``other``."""
    raw = str(text).strip()
    m = _TYPE_RE.match(raw.lower())
    if m is None:
        return SparkType("other", detail=raw.lower())
    name = _ALIASES.get(m[1], m[1])
    if name == "decimal":
        p = int(m[2]) if m[2] else 10
        s = int(m[3]) if m[3] else 0
        if not (1 <= p <= MAX_PRECISION and 0 <= s <= p):
            return SparkType("other", detail=raw.lower())
        return decimal(p, s)
    if name in ("char", "varchar"):
        if not m[2] or m[3] or int(m[2]) < 1:
            return SparkType("other", detail=raw.lower())
        return SparkType(name, int(m[2]))
    if name in _SIMPLE and not m[2]:
        return SparkType(name)
    return SparkType("other", detail=raw.lower())


def kind_of_type(type_name: str) -> Kind:
    """The kind of a Hive/Spark type name (``decimal(15,2)``, ``char(10)``, ``array<int>``)."""
    return parse_type(type_name).kind


__all__ = ["SparkType", "parse_type", "kind_of_type", "decimal", "decimal_for", "bounded_decimal", "BYTE", "SHORT", "INT", "LONG",
           "FLOAT", "DOUBLE", "STRING", "DATE", "TIMESTAMP", "TIMESTAMP_NTZ", "BOOLEAN", "VOID", "INTEGRAL",
           "MAX_PRECISION", "NUMERIC_PRECEDENCE"]


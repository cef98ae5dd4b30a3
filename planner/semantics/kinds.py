"""Kinds: the value families of columns, which fix how values compare.

The floor of the planner: imports nothing of ours. A kind names the family a column belongs to
(``planner.semantics.types`` gives each Spark type its kind; ``planner.cnf.values`` holds the
values of each kind), and decides whether the domain is discrete (integers and dates are:
``x > 5`` is ``x >= 6``; decimals and strings are not).
"""
from __future__ import annotations

import datetime as dt
from enum import Enum
from typing import Any


class Kind(str, Enum):
    INTEGER = "integer"
    DECIMAL = "decimal"
    FLOAT = "float"  # float and double: values are kept as the shortest decimal that reads back as them
    STRING = "string"
    DATE = "date"
    TIMESTAMP = "timestamp"
    BOOLEAN = "boolean"
    OTHER = "other"  # maps, arrays, structs, binary: cannot be ordered, never partitioned on

    @property
    def discrete(self) -> bool:
        return self in (Kind.INTEGER, Kind.DATE, Kind.BOOLEAN)

    @property
    def orderable(self) -> bool:
        return self is not Kind.OTHER


def render(value: Any) -> str:
    """A short human form used in reports and golden files."""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    if isinstance(value, dt.datetime):
        return f"TIMESTAMP '{value.isoformat(sep=' ')}'"
    if isinstance(value, dt.date):
        return f"DATE '{value.isoformat()}'"
    return str(value)

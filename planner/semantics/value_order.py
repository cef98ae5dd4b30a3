"""How Spark orders and compares two values of one type.

* DOUBLE/FLOAT: NaN equals NaN and is greater than every other value (``SQLOrderingUtil``);
  ``-0.0 = 0.0``;
* strings: by UTF-8 bytes, which is code point order (Python's ``str`` order);
* everything else: the natural order of the Python values.
"""
from __future__ import annotations

import math
from typing import Any

OPS = ("=", "<>", "<", "<=", ">", ">=")


def compare_values(x: Any, y: Any) -> int:
    """-1, 0 or 1 for two non-NULL values of one Spark type."""
    if isinstance(x, float) and isinstance(y, float):
        nx, ny = math.isnan(x), math.isnan(y)
        if nx or ny:
            return 0 if nx and ny else (1 if nx else -1)
    return (x > y) - (x < y)


def holds(op: str, c: int) -> bool:
    return {"=": c == 0, "<>": c != 0, "<": c < 0, "<=": c <= 0, ">": c > 0, ">=": c >= 0}[op]


__all__ = ["compare_values", "holds", "OPS"]

"""Counts in words, one spelling for every report: "1 scan", "2 scans", "1 partition"."""
from __future__ import annotations


def plural(n: float, noun: str, many: str | None = None) -> str:
    """``n`` and ``noun``, the noun in the plural unless ``n`` is 1 (``many``: an irregular plural)."""
    text = f"{n:,}" if isinstance(n, int) else f"{n:g}"
    return f"{text} {noun if n == 1 else (many or noun + 's')}"


__all__ = ["plural"]

"""Counts that the robustness tests report at the end of the run (the closing note's figures).

``figures.add("random tables checked through Spark")`` from a test; ``conftest.py`` prints every
non-zero count in a "figures" section of pytest's terminal summary.
"""
from __future__ import annotations

COUNTS: dict[str, int] = {}


def add(name: str, n: int = 1) -> None:
    COUNTS[name] = COUNTS.get(name, 0) + n

"""How big the randomized and enormous tests are.

CI (the default) runs a deterministic batch sized to keep ``-m "not spark"`` quick; with
``PLANNER_TESTS=long`` the same tests run at full size (10,000-term predicates, 20,000-statement
files) and with ten times the Hypothesis examples. What a test checks never changes with the size:
a 3,000-term OR already lies far past Python's recursion limit (1,000 frames), where the reader
once refused long chains; only how much random input is thrown at it does.

    PLANNER_TESTS=long ./dev test -m "not spark" tests/test_hostile.py
"""
from __future__ import annotations

import os

LONG = os.environ.get("PLANNER_TESTS", "").lower() == "long"
# ./dev mutate runs the selected tests once per mutant: a fifth of the examples (the same ones on
# every run), so that a surviving mutant costs seconds; the fixtures carry most of the killing.
MUTATION = os.environ.get("PLANNER_TESTS", "").lower() == "mutation"


def size(full: int, ci: int) -> int:
    """``full`` with PLANNER_TESTS=long, else ``ci``."""
    return full if LONG else ci


def examples(ci: int) -> int:
    """Hypothesis examples of a property: ``ci`` by default, ten times as many with PLANNER_TESTS=long
    (a fifth, at least 20, under ./dev mutate)."""
    if MUTATION:
        return max(ci // 5, 20)
    return ci * 10 if LONG else ci

"""Hand-written cases of Spark's semantics, recorded once on Spark and checked in every pure run.

The differential batch (``tests/test_spark_semantics.py``) draws expressions at random; the cases
in ``tests/fixtures/semantics_cases/*.txt`` are the ones written on purpose: the corners of a
cast, a coercion or a parse that the random batch rarely reaches and that a mutation of
``planner/semantics`` showed no test looking at (``tests/mutation/``). One case per line:

    CAST(1e20D AS INT)            a constant expression: its value and type, or that Spark fails
    WHERE x < CAST(0.1 AS FLOAT)  a predicate on the test table's columns (``COLUMN_TYPES``): its
                                  TRUE/FALSE/NULL on every row of ``column_rows()``
    # a comment

``tests/record_spark_semantics.py`` asks Spark for every case under each of the four settings
(ANSI on and off, two time zones) and keeps its answers, and whether the planner claimed one, in
``tests/fixtures/spark_semantics.json``. ``tests/test_semantics_recorded.py`` then asks that the
planner still agree with Spark on every case it claims, and still claim every case it claimed when
they were recorded.
"""
from __future__ import annotations

from pathlib import Path

CASES = Path(__file__).resolve().parent / "fixtures" / "semantics_cases"


def read_cases(directory: Path = CASES) -> tuple[list[str], list[str]]:
    """(constant expressions, predicates) of every case file, in file and line order, each once."""
    constants: dict[str, None] = {}
    predicates: dict[str, None] = {}
    for path in sorted(directory.glob("*.txt")):
        for line in path.read_text(encoding="utf-8").splitlines():
            text = line.strip()
            if not text or text.startswith("#"):
                continue
            if text[:6].upper() == "WHERE ":
                predicates[text[6:].strip()] = None
            else:
                constants[text] = None
    return list(constants), list(predicates)


def constant_outcome(text: str, settings):
    """The planner's answer for a constant expression: Typed, Raises, or None (it claims nothing)."""
    import sqlglot

    from planner.semantics.constants import from_sqlglot
    from planner.semantics.evaluate import evaluate
    from planner.semantics.settings import Raises, Typed

    c = from_sqlglot(sqlglot.parse_one("SELECT " + text, read="spark").expressions[0])
    out = evaluate(c, settings) if c is not None else None
    return out if isinstance(out, Typed | Raises) else None


def predicate_verdicts(text: str, settings, rows: list[dict]) -> str | None:
    """The planner's TRUE/FALSE/UNKNOWN per row ('T', 'F', 'N'), or None where it claims none."""
    from test_spark_semantics import bound, truth

    e, opaque = bound(text, settings)
    if opaque:
        return None
    return "".join({True: "T", False: "F", None: "N"}[truth(e, row)] for row in rows)


def agrees(outcome, answer) -> bool:
    """Whether a claimed constant outcome is Spark's recorded answer."""
    from test_spark_semantics import same

    from planner.semantics.settings import Raises

    if isinstance(outcome, Raises):
        return answer == "fails"
    from record_spark_semantics import decode

    return isinstance(answer, dict) and answer["type"] == str(outcome.type) and \
        same(outcome.value, decode(answer["value"]))

"""Turn Spark/Py4J failures into ``PlannerError``s at the edge.

Why: the CLI prints ``PlannerError`` messages and treats anything else as a bug,
so a bad query or a failed write must not escape as a Py4J traceback.  Spark's
messages are kept (first line only: the rest is a plan dump) and prefixed with
what we were doing.
"""

from __future__ import annotations

from contextlib import contextmanager

from py4j.protocol import Py4JError
from pyspark.errors import PySparkException

from planner.errors import PlannerError


class SparkError(PlannerError):
    """Spark refused or failed a statement we sent it."""


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


@contextmanager
def spark_errors(what: str):
    """``with spark_errors("running Q6"): ...`` re-raises Spark failures as SparkError."""
    try:
        yield
    except (PySparkException, Py4JError) as e:
        raise SparkError(f"{what}: {_first_line(e)}") from e

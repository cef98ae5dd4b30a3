"""Before a swap: the laid-out table answers the probe's filtered queries with pushdown on as a
scan without filters does.

``planner.emit.probe_sql`` builds the questions; this runs them on the laid-out table, twice: the
truth, every probe counted in one scan with no filter to push (pushdown off besides), and the
reader's answer, each probe its own scan with its filter pushed. The verification has just shown
that the laid-out table holds its source's rows, so its unfiltered scan is the source's truth too;
the source itself is not read again. A laid-out table whose reader drops a matching row stops the
apply (``ProbeMismatch``, before the swap, the source untouched).

The facts (which values to ask about) come from the laid-out table's Parquet footers where the
runner can read them (``SparkRunner.column_extremes``), so most layouts need no scan for them.

Spark only (the runner's dialect ``spark``): the probe checks Spark's Parquet reader, whose
settings it can turn on and off for the session. Other engines skip it, with a line saying so.
"""
from __future__ import annotations

import time
from typing import Callable, Mapping, Sequence

from sqlglot import exp

from planner.emit.probe_sql import (
    Probe,
    answers_by_probe,
    facts_by_column,
    facts_query,
    footer_facts,
    probe_query,
    probe_scope,
    probes,
    truth_query,
)
from planner.errors import ApplyError
from planner.model.layout import Layout

PUSHDOWN = "spark.sql.parquet.filterPushdown"


class ProbeMismatch(ApplyError):
    """The laid-out table answers a filtered query differently from its source."""


def _with_pushdown(cat, on: bool, query: exp.Expression) -> list[tuple]:
    """``query``'s rows with Parquet filter pushdown ``on`` (or off), the session's value put back."""
    runner = cat.runner
    restore = getattr(runner, "settings_restored", None)
    text = query.sql(dialect=runner.dialect)
    if restore is None:  # a Thrift Server session: read the value back, set it again afterwards
        rows = runner.execute(f"SET {PUSHDOWN}")
        before = str(rows[0][1]) if rows and len(rows[0]) > 1 and rows[0][1] is not None else "true"
        runner.execute(f"SET {PUSHDOWN}={'true' if on else 'false'}")
        try:
            return runner.execute(text)
        finally:
            runner.execute(f"SET {PUSHDOWN}={before}")
    with restore([PUSHDOWN]):
        runner.execute(f"SET {PUSHDOWN}={'true' if on else 'false'}")
        return runner.execute(text)


def _facts(cat, table: exp.Table, name: str, columns: Mapping[str, str]) -> dict[str, list]:
    """Each probed column's facts: from the footers where they serve, the rest in one scan."""
    extremes = getattr(cat.runner, "column_extremes", None)
    facts = footer_facts(columns, extremes(cat.names.qualified(name), list(columns)) if extremes else {})
    rest = {c: t for c, t in columns.items() if c not in facts}
    query = facts_query(table, rest)
    if query is not None:
        facts.update(facts_by_column(rest, cat.run(query)[0]))
    return facts


def probe_items(cat, columns: Mapping[str, str], layout: Layout, new: str) -> list[Probe]:
    """The probe's questions for ``new`` under ``layout`` (``probe_scope``); none on an engine
    other than Spark."""
    if cat.runner.dialect != "spark":
        return []
    scope = probe_scope(columns, layout)
    return probes(scope, _facts(cat, cat.names.expr(new, cat.runner.dialect), new, scope))


def probe_check(cat, columns: Mapping[str, str], layout: Layout, new: str, say: Callable[[str], None], *,
                items: Sequence[Probe] | None = None, truth: Sequence | None = None) -> int:
    """Run the probe of ``layout``'s columns (``probe_scope``) on ``new`` (``cat``'s name of the
    laid-out table, verified to hold its source's rows); where its reader's answer differs from the
    truth, drop ``new`` (it was never swapped in) and raise ``ProbeMismatch``. ``items``/``truth``:
    the questions and their counts when the caller has them already (``probe_items``, and the
    verification's scan carrying ``truth_counts``). Returns the number of probes run."""
    if cat.runner.dialect != "spark":
        say("filtered-query probe skipped: it checks Spark's Parquet reader, and this engine is not Spark")
        return 0
    started = time.monotonic()
    table = cat.names.expr(new, cat.runner.dialect)
    given = items is not None and truth is not None
    items = probe_items(cat, columns, layout, new) if items is None else list(items)
    if not items:
        return 0
    facts = time.monotonic()
    if truth is None:
        truth = _with_pushdown(cat, False, truth_query(table, items))[0]
    truth = [int(v or 0) for v in truth]
    counted = time.monotonic()
    have = answers_by_probe(_with_pushdown(cat, True, probe_query(table, items)), len(items))
    asked = time.monotonic()
    wrong = [i for i in range(len(items)) if have[i] != truth[i]]
    if wrong:
        i = wrong[0]
        cat.drop(new)
        raise ProbeMismatch(
            f"the laid-out table answers `{items[i].text}` differently from its source with Parquet filter "
            f"pushdown on ({have[i]:,} rows against {truth[i]:,}; {len(wrong)} of {len(items)} probes differ): "
            f"a reader filter drops rows the layout isolated; {cat.names.qualified(new)} was dropped")
    how = ("the questions and their truth came with the verification" if given else
           f"facts {facts - started:.1f} s, truth {counted - facts:.1f} s")
    say(f"probed {len(items)} filtered queries with pushdown on in {time.monotonic() - started:.1f} s "
        f"({how}, laid-out table {asked - counted:.1f} s): the same answers as a scan without filters")
    return len(items)

"""Before a swap: the laid-out table answers the probe's filtered queries as its source does.

``planner.emit.probe_sql`` builds the questions; this runs them, pushdown on, on both tables and
compares counts and checksums. Where they differ the source is asked again with pushdown off (the
truth): a laid-out table that differs from the truth stops the apply (``ProbeMismatch``, before the
swap, the source untouched); a source that Parquet's filters answer wrongly on its own (a table
written with -0.0 alone in a row group, say) is said, and the laid-out table, right, goes ahead.

Spark only (the runner's dialect ``spark``): the probe checks Spark's Parquet reader, whose
settings it can turn on and off for the session. Other engines skip it, with a line saying so.
"""
from __future__ import annotations

import time
from decimal import Decimal
from typing import Callable, Mapping, Sequence

from sqlglot import exp

from planner.emit.probe_sql import answers_by_probe, facts_query, probe_query, probe_scope, probes
from planner.errors import ApplyError
from planner.model.layout import Layout

PUSHDOWN = "spark.sql.parquet.filterPushdown"


def checksum_values(row: Sequence) -> tuple:
    """Counts and sums as numbers of one type, whichever engine returned them."""
    return tuple(None if v is None else Decimal(str(v)) for v in row)


class ProbeMismatch(ApplyError):
    """The laid-out table answers a filtered query differently from its source."""


def _answers(cat, table: exp.Expression, items, pushdown: bool) -> dict[int, tuple]:
    runner = cat.runner
    restore = getattr(runner, "settings_restored", None)
    query = probe_query(table, items, runner.hash_function).sql(dialect=runner.dialect)
    if restore is None:  # a Thrift Server session: read the value back, set it again afterwards
        rows = runner.execute(f"SET {PUSHDOWN}")
        before = str(rows[0][1]) if rows and len(rows[0]) > 1 and rows[0][1] is not None else "true"
        runner.execute(f"SET {PUSHDOWN}={'true' if pushdown else 'false'}")
        try:
            return answers_by_probe(runner.execute(query), len(items))
        finally:
            runner.execute(f"SET {PUSHDOWN}={before}")
    with restore([PUSHDOWN]):
        runner.execute(f"SET {PUSHDOWN}={'true' if pushdown else 'false'}")
        return answers_by_probe(runner.execute(query), len(items))


def probe_check(cat, columns: Mapping[str, str], layout: Layout, new: str, source: str,
                say: Callable[[str], None], where: exp.Expression | None = None) -> int:
    """Run the probe of ``layout``'s columns (``probe_scope``) on ``new`` and ``source`` (``cat``'s
    table names; ``where`` restricts the source, for a re-layout's re-cut partitions); on a
    difference the source's truth confirms, drop ``new`` (it was never swapped in) and raise
    ``ProbeMismatch``. Returns the number of probes run."""
    if cat.runner.dialect != "spark":
        say("filtered-query probe skipped: it checks Spark's Parquet reader, and this engine is not Spark")
        return 0
    started = time.monotonic()
    d = cat.runner.dialect
    new_t, src_t = cat.names.expr(new, d), cat.names.expr(source, d)
    columns = probe_scope(columns, layout)
    query = facts_query(new_t, columns)
    if query is None:
        return 0
    items = probes(columns, cat.run(query)[0])
    if not items:
        return 0
    src_q: exp.Expression = src_t
    if where is not None:
        src_q = exp.select("*").from_(src_t).where(where).subquery("planner_source")
    facts = time.monotonic()
    have = _answers(cat, new_t, items, True)
    laid_out = time.monotonic()
    want = _answers(cat, src_q, items, True)
    asked = time.monotonic()
    differ = [i for i in range(len(items)) if checksum_values(have[i]) != checksum_values(want[i])]
    if differ:
        truth = _answers(cat, src_q, [items[i] for i in differ], False)
        wrong = [i for k, i in enumerate(differ) if checksum_values(have[i]) != checksum_values(truth[k])]
        if wrong:
            i = wrong[0]
            cat.drop(new)
            raise ProbeMismatch(
                f"the laid-out table answers `{items[i].text}` differently from its source with Parquet filter "
                f"pushdown on ({int(have[i][0] or 0):,} rows against {int(want[i][0] or 0):,}; "
                f"{len(wrong)} of {len(items)} probes differ): a reader filter drops rows the layout isolated; "
                f"{cat.names.qualified(new)} was dropped")
        say(f"the source itself answers {len(differ)} probe(s) wrongly with pushdown on "
            f"(`{items[differ[0]].text}`); the laid-out table answers them right")
    say(f"probed {len(items)} filtered queries with pushdown on in {time.monotonic() - started:.1f} s "
        f"(facts {facts - started:.1f} s, laid-out table {laid_out - facts:.1f} s, source {asked - laid_out:.1f} s): "
        "the same answers as the source")
    return len(items)

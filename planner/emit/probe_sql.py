"""The probe ``apply`` runs on the laid-out table and its source before the swap.

The verification (count, checksum, per-column counts) reads both tables without a filter, so it
cannot see a Parquet filter that drops a row group the layout isolated (issue 30: a row group of
-0.0 alone, dropped for ``x = 0.0`` by the dictionary filter). The probe asks both tables, with
pushdown on, a few filtered questions where readers have been wrong: for every column that can be
pushed to Parquet, its smallest and largest value (``= min``, ``<= min``, ``= max``, ``>= max``),
and for FLOAT/DOUBLE columns both zeros and NaN. Each is answered by a count and the sum of a row
hash; all of them in one ``UNION ALL`` per table, each branch its own scan with its own pushed
filter. The row groups such a filter keeps are few (an extreme sits in few groups, a zero in the
groups whose range spans it), so the probe costs a fraction of the write.

The extremes are read first, with ``facts_query``: ``CAST(min(c) AS STRING)`` and back with
``CAST('<text>' AS <type>)``, which Spark folds into the literal it pushes. The text round-trips
the value in the same session (doubles and floats print their shortest exact form, timestamps in
the session's zone); where it would not, both tables are still asked the same question.

    SELECT 0 AS q, count(*), sum(CAST(xxhash64(a, x) AS DECIMAL(38,0))) FROM t WHERE x = CAST('0.0' AS DOUBLE)
    UNION ALL SELECT 1 AS q, … WHERE x = CAST('-0.0' AS DOUBLE) UNION ALL …
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from sqlglot import exp

from planner.emit.conditions import column_ref, string_literal
from planner.emit.ddl import data_type

# Hive type names whose values Parquet's filters see (a pushed comparison); complex types and
# binaries are never compared to a literal by these filters in a way a layout changes
_PROBED = ("tinyint", "smallint", "int", "integer", "bigint", "float", "double", "real", "decimal", "string",
           "char", "varchar", "date", "timestamp", "timestamp_ntz", "boolean")
_FLOATING = ("float", "double", "real")
MAX_LITERAL_CHARS = 4096  # a longer extreme (a huge string) is not probed: the statement would be huge


@dataclass(frozen=True)
class Probe:
    """One filtered question: ``predicate`` over the table, described for the error message."""

    column: str
    text: str                   # ``x = -0.0`` as a person reads it
    predicate: exp.Expression


def _base(type_name: str) -> str:
    return type_name.strip().lower().split("(", 1)[0].strip()


def probed_columns(columns: Mapping[str, str]) -> list[str]:
    return [c for c, t in columns.items() if _base(t) in _PROBED]


def facts_query(table: exp.Table, columns: Mapping[str, str]) -> exp.Select | None:
    """``SELECT CAST(min(c) AS STRING), CAST(max(c) AS STRING), …`` over the probed columns."""
    cols = probed_columns(columns)
    if not cols:
        return None
    text = exp.DataType.build("STRING")
    aggs = []
    for c in cols:
        for fn in (exp.Min, exp.Max):
            aggs.append(exp.Cast(this=fn(this=column_ref(c)), to=text.copy()))
    return exp.select(*aggs).from_(table.copy())


def _typed(text: str, type_name: str) -> exp.Expression:
    """``CAST('<text>' AS <type>)``; a CHAR/VARCHAR column is compared with a STRING literal (as
    its users write it: Spark pads the literal to the column's length)."""
    target = "string" if _base(type_name) in ("char", "varchar") else type_name
    return exp.Cast(this=string_literal(text), to=data_type(target))


def probes(columns: Mapping[str, str], facts: Sequence | None) -> list[Probe]:
    """The probe set: ``facts`` is the row of ``facts_query`` (min and max text per probed column)."""
    out: list[Probe] = []
    cols = probed_columns(columns)
    values = list(facts or [None] * (2 * len(cols)))
    for i, c in enumerate(cols):
        t = columns[c]
        ref = column_ref(c)
        if _base(t) in _FLOATING:
            for text in ("0.0", "-0.0", "NaN"):
                out.append(Probe(c, f"{c} = {text}", exp.EQ(this=ref.copy(), expression=_typed(text, t))))
        lo, hi = values[2 * i], values[2 * i + 1]
        for value, ops in ((lo, (exp.EQ, exp.LTE)), (hi, (exp.EQ, exp.GTE))):
            if value is None or len(str(value)) > MAX_LITERAL_CHARS:
                continue
            for op in ops:
                sign = {exp.EQ: "=", exp.LTE: "<=", exp.GTE: ">="}[op]
                shown = str(value) if len(str(value)) <= 40 else str(value)[:37] + "..."
                out.append(Probe(c, f"{c} {sign} {shown!r}" if _base(t) in ("string", "char", "varchar")
                                 else f"{c} {sign} {shown}",
                                 op(this=ref.copy(), expression=_typed(str(value), t))))
    unique = {p.predicate.sql(dialect="spark"): p for p in out}  # a NaN max repeats the NaN probe
    return list(unique.values())


def probe_query(table: exp.Table, items: Sequence[Probe], aggregates: Sequence[exp.Expression]) -> exp.Expression:
    """One ``UNION ALL``: per probe its number ``q`` and ``aggregates`` of the rows it selects."""
    selects = [exp.select(exp.alias_(exp.Literal.number(i), "q"), *[a.copy() for a in aggregates])
               .from_(table.copy()).where(p.predicate.copy()) for i, p in enumerate(items)]
    query: exp.Expression = selects[0]
    for s in selects[1:]:
        query = exp.union(query, s, distinct=False)
    return query


def answers_by_probe(rows: Sequence[Sequence]) -> dict[int, tuple]:
    """``probe_query``'s rows (in any order) as probe number -> its aggregates."""
    return {int(r[0]): tuple(r[1:]) for r in rows}

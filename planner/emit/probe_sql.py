"""The probe ``apply`` runs on the laid-out table before the swap.

The verification (count, checksum, per-column counts) reads both tables without a filter, so it
cannot see a Parquet filter that drops a row group the layout isolated (issue 30: a row group of
-0.0 alone, dropped for ``x = 0.0`` by the dictionary filter). The probe asks the laid-out table,
with pushdown on, a few filtered questions where readers have been wrong, about values the table
holds: ``= min`` and ``= max`` of the columns the layout cuts or orders by, and of every
FLOAT/DOUBLE column, and for FLOAT/DOUBLE columns both zeros (where it holds a zero) and NaN (where
it holds one). Only those columns (``probe_scope``): a layout isolates values in row groups of
their own only on the columns it cuts and orders by (on the others a row group mixes values much as
the source's did), and FLOAT/DOUBLE is where Parquet's filters and Spark's comparisons disagree
(``docs/correctness.md``).

Each question is answered by a count, twice, on the laid-out table (which the verification has
just shown holds the source's rows):

* the truth: ``count_if(<predicate>)`` for every probe in one scan without a filter, so no reader
  filter is involved (``truth_query``; run with pushdown off besides);
* the reader's answer: per probe a scan of its one column with its pushed filter (the branches of
  one ``UNION ALL``, ``probe_query``). The row groups such a filter keeps are few (an extreme sits
  in few groups, a zero in the groups whose range spans it).

A count is enough: Spark evaluates the predicate again on every row the reader returns, so a
reader can only drop matching rows, never add one; the same count is the same rows.

The facts (the values asked about) come from the laid-out table's Parquet footers where they can
(the min and max of every row group's statistics; no Spark job), and otherwise from one scan
(``facts_query``): ``CAST(min(c) AS STRING)`` and back with ``CAST('<text>' AS <type>)``, which
Spark folds into the literal it pushes. The text round-trips the value in the same session
(doubles and floats print their shortest exact form, timestamps in the session's zone); where it
would not, the truth and the reader are still asked the same question.

    SELECT q, count(*) FROM (SELECT 0 AS q FROM t WHERE x = CAST('0.0' AS DOUBLE)
                             UNION ALL SELECT 1 AS q FROM t WHERE x = CAST('-0.0' AS DOUBLE) …) GROUP BY q
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Mapping, Sequence

from sqlglot import exp

from planner.emit.conditions import column_ref, string_literal
from planner.emit.ddl import data_type
from planner.model.layout import Layout

# Hive type names whose values Parquet's filters see (a pushed comparison); complex types and
# binaries are never compared to a literal by these filters in a way a layout changes
_PROBED = ("tinyint", "smallint", "int", "integer", "bigint", "float", "double", "real", "decimal", "string",
           "char", "varchar", "date", "timestamp", "timestamp_ntz", "boolean")
_FLOATING = ("float", "double", "real")
_INTEGERS = ("tinyint", "smallint", "int", "integer", "bigint")
# types whose footer min/max read back as exactly the text CAST takes (``fact_text``); the others
# (FLOAT/DOUBLE need their zeros and NaN counted, TIMESTAMP its session zone, CHAR its padding) are scanned
_FROM_FOOTERS = _INTEGERS + ("decimal", "string", "varchar", "date", "boolean")
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


def probe_scope(columns: Mapping[str, str], layout: Layout) -> dict[str, str]:
    """The columns worth probing under ``layout``: those it cuts (a derived pair's two columns
    included) or orders by, and every FLOAT/DOUBLE column; names matched without case."""
    pairs = dict(layout.derived)
    named = {a for attr in layout.attributes
             for a in ((pairs[attr].left, pairs[attr].right) if attr in pairs else (attr,))}
    named |= set(layout.order.columns)
    wanted = {n.lower() for n in named}
    return {c: t for c, t in columns.items() if c.lower() in wanted or _base(t) in _FLOATING}


def _facts_of(c: str, type_name: str) -> list[exp.Expression]:
    """min and max as text; for FLOAT/DOUBLE also the rows holding -0.0, +0.0 and NaN."""
    text = exp.DataType.build("STRING")
    ref = column_ref(c)
    out: list[exp.Expression] = [exp.Cast(this=exp.Min(this=ref.copy()), to=text.copy()),
                                 exp.Cast(this=exp.Max(this=ref.copy()), to=text.copy())]
    if _base(type_name) in _FLOATING:
        zero = exp.EQ(this=ref.copy(), expression=exp.Literal.number(0))
        signed = exp.Like(this=exp.Cast(this=ref.copy(), to=text.copy()), expression=exp.Literal.string("-%"))
        out += [exp.CountIf(this=exp.and_(zero.copy(), signed.copy())),
                exp.CountIf(this=exp.and_(zero.copy(), exp.Not(this=signed.copy()))),
                exp.CountIf(this=exp.Anonymous(this="isnan", expressions=[ref.copy()]))]
    return out


def facts_query(table: exp.Table, columns: Mapping[str, str]) -> exp.Select | None:
    """One scan: per probed column ``_facts_of`` (``facts_by_column`` reads the row back)."""
    cols = probed_columns(columns)
    if not cols:
        return None
    return exp.select(*[e for c in cols for e in _facts_of(c, columns[c])]).from_(table.copy())


def facts_by_column(columns: Mapping[str, str], row: Sequence | None) -> dict[str, list]:
    """``facts_query``'s row cut into each probed column's facts (``[min, max]``, and for
    FLOAT/DOUBLE the counts of -0.0, +0.0 and NaN); a missing row gives ``None`` facts."""
    out: dict[str, list] = {}
    values = list(row or [])
    at = 0
    for c in probed_columns(columns):
        n = len(_facts_of(c, columns[c]))
        out[c] = values[at:at + n] if len(values) >= at + n else [None] * n
        at += n
    return out


def _decimal_scale(type_name: str) -> int:
    inside = type_name.partition("(")[2].rstrip(") ")
    return int(inside.split(",")[1]) if "," in inside else 0


def fact_text(value: Any, type_name: str) -> str | None:
    """A footer statistic of a ``type_name`` column as the text ``CAST('<text>' AS <type>)`` reads
    back to the same value; ``None`` where the footer cannot stand in for the scan (``_FROM_FOOTERS``)."""
    base = _base(type_name)
    if value is None or base not in _FROM_FOOTERS:
        return None
    if base == "boolean":
        return ("true" if value else "false") if isinstance(value, bool) else None
    if base == "decimal":
        if isinstance(value, int) and not isinstance(value, bool):  # the unscaled integer
            value = Decimal(value).scaleb(-_decimal_scale(type_name))
        return format(value, "f") if isinstance(value, Decimal) else None
    if base == "date":
        return value.isoformat() if isinstance(value, dt.date) and not isinstance(value, dt.datetime) else None
    if base in _INTEGERS:
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else None
    return value if isinstance(value, str) else None


def footer_facts(columns: Mapping[str, str], extremes: Mapping[str, tuple[Any, Any]]) -> dict[str, list]:
    """The facts of the probed columns whose footer ``extremes`` (min, max over every row group)
    stand in for the scan; a column left out is scanned (``facts_query``)."""
    out: dict[str, list] = {}
    for c in probed_columns(columns):
        if c not in extremes or _base(columns[c]) not in _FROM_FOOTERS:
            continue  # FLOAT/DOUBLE want their zeros and NaN counted too, even where all is NULL
        texts = [fact_text(v, columns[c]) for v in extremes[c]]
        if all(t is not None or v is None for t, v in zip(texts, extremes[c])):
            out[c] = texts
    return out


def _typed(text: str, type_name: str) -> exp.Expression:
    """``CAST('<text>' AS <type>)``; a CHAR/VARCHAR column is compared with a STRING literal (as
    its users write it: Spark pads the literal to the column's length)."""
    target = "string" if _base(type_name) in ("char", "varchar") else type_name
    return exp.Cast(this=string_literal(text), to=data_type(target))


def probes(columns: Mapping[str, str], facts: Mapping[str, Sequence]) -> list[Probe]:
    """The probe set from each column's ``facts`` (``facts_by_column``, ``footer_facts``): per
    column ``= min`` and ``= max``; for FLOAT/DOUBLE, where a zero is present, ``= 0.0`` and
    ``= -0.0`` (a row group of one sign is what a filter comparing bits drops for the other), and
    ``= NaN`` where a NaN is."""
    out: list[Probe] = []
    for c in probed_columns(columns):
        t = columns[c]
        n = len(_facts_of(c, t))
        row = (list(facts.get(c) or []) + [None] * n)[:n]  # facts missing or short: nothing to ask about
        ref = column_ref(c)
        asked: list[str] = []
        if _base(t) in _FLOATING:
            neg, pos, nan = (int(v or 0) for v in row[2:5])
            asked += ["0.0", "-0.0"] if neg or pos else []
            asked += ["NaN"] if nan else []
        for value in row[:2]:
            if value is not None and len(str(value)) <= MAX_LITERAL_CHARS:
                asked.append(str(value))
        quote = _base(t) in ("string", "char", "varchar")
        for text in dict.fromkeys(asked):
            shown = text if len(text) <= 40 else text[:37] + "..."
            out.append(Probe(c, f"{c} = {shown!r}" if quote else f"{c} = {shown}",
                             exp.EQ(this=ref.copy(), expression=_typed(text, t))))
    return out


def probe_query(table: exp.Expression, items: Sequence[Probe]) -> exp.Expression:
    """Per probe its number ``q`` and the count of the rows its pushed filter lets through: the
    branches of one ``UNION ALL`` (each its own scan of one column, with its own pushed filter)
    feed one aggregation, so the whole probe is one shuffle, not one a branch."""
    branches = [exp.select(exp.alias_(exp.Literal.number(i), "q")).from_(table.copy()).where(p.predicate.copy())
                for i, p in enumerate(items)]
    rows: exp.Expression = branches[0]
    for b in branches[1:]:
        rows = exp.union(rows, b, distinct=False)
    q = exp.column("q")
    return exp.select(q.copy(), exp.Count(this=exp.Star())).from_(rows.subquery("planner_probe")).group_by(q.copy())


def truth_counts(items: Sequence[Probe]) -> list[exp.Expression]:
    """``count_if(<predicate>)`` per probe: aggregates for a scan without a filter, so no reader
    filter decides which rows are seen (any such scan can carry them: apply's verification does)."""
    return [exp.CountIf(this=p.predicate.copy()) for p in items]


def truth_query(table: exp.Expression, items: Sequence[Probe]) -> exp.Select:
    """Every probe's ``truth_counts`` in one scan of ``table`` without a filter."""
    return exp.select(*truth_counts(items)).from_(table.copy())


def answers_by_probe(rows: Sequence[Sequence], count: int) -> dict[int, int]:
    """``probe_query``'s rows (in any order) as probe number -> count; a probe that selects no row
    has no group: 0."""
    got = {int(r[0]): int(r[1]) for r in rows}
    return {i: got.get(i, 0) for i in range(count)}

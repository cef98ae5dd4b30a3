"""The probe ``apply`` runs on the laid-out table and its source before the swap.

The verification (count, checksum, per-column counts) reads both tables without a filter, so it
cannot see a Parquet filter that drops a row group the layout isolated (issue 30: a row group of
-0.0 alone, dropped for ``x = 0.0`` by the dictionary filter). The probe asks both tables, with
pushdown on, a few filtered questions where readers have been wrong, about values the table holds:
``= min`` and ``= max`` of the columns the layout cuts or orders by, and of every FLOAT/DOUBLE
column, and for FLOAT/DOUBLE columns both zeros (where it holds a zero) and NaN (where it holds
one). Only those columns (``probe_scope``): a layout isolates values in row groups of their own
only on the columns it cuts and orders by (on the others a row group mixes values much as the
source's did), and FLOAT/DOUBLE is where Parquet's filters and Spark's comparisons disagree
(``docs/correctness.md``). Probing every column cost more than the INSERT, most of it the min/max
of long strings no layout isolates (``benchmarks/results/probe_cost.md``). Each is answered by a
count and the sum of a hash of that column; all of them in one ``UNION ALL`` per table, each branch
its own scan of one column with its own pushed filter. The row groups such a filter keeps are few
(an extreme sits in few groups, a zero in the groups whose range spans it).

The facts are read first, in one scan (``facts_query``): ``CAST(min(c) AS STRING)`` and back with
``CAST('<text>' AS <type>)``, which Spark folds into the literal it pushes. The text round-trips
the value in the same session (doubles and floats print their shortest exact form, timestamps in
the session's zone); where it would not, both tables are still asked the same question.

    SELECT 0 AS q, count(*), sum(CAST(xxhash64(x) AS DECIMAL(38,0))) FROM t WHERE x = CAST('0.0' AS DOUBLE)
    UNION ALL SELECT 1 AS q, … WHERE x = CAST('-0.0' AS DOUBLE) UNION ALL …
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from sqlglot import exp

from planner.emit.conditions import column_ref, string_literal
from planner.emit.ddl import data_type
from planner.model.layout import Layout

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
    """One scan: per probed column ``_facts_of`` (``probes`` reads the row back)."""
    cols = probed_columns(columns)
    if not cols:
        return None
    return exp.select(*[e for c in cols for e in _facts_of(c, columns[c])]).from_(table.copy())


def _typed(text: str, type_name: str) -> exp.Expression:
    """``CAST('<text>' AS <type>)``; a CHAR/VARCHAR column is compared with a STRING literal (as
    its users write it: Spark pads the literal to the column's length)."""
    target = "string" if _base(type_name) in ("char", "varchar") else type_name
    return exp.Cast(this=string_literal(text), to=data_type(target))


def probes(columns: Mapping[str, str], facts: Sequence | None) -> list[Probe]:
    """The probe set from ``facts`` (the row of ``facts_query``): per column ``= min`` and
    ``= max``; for FLOAT/DOUBLE, where a zero is present, ``= 0.0`` and ``= -0.0`` (a row group of
    one sign is what a filter comparing bits drops for the other), and ``= NaN`` where a NaN is."""
    out: list[Probe] = []
    values = list(facts or [])
    at = 0
    for c in probed_columns(columns):
        t = columns[c]
        n = len(_facts_of(c, t))
        row = values[at:at + n] if len(values) >= at + n else [None] * n
        at += n
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


def probe_query(table: exp.Expression, items: Sequence[Probe], hash_function: str) -> exp.Expression:
    """Per probe its number ``q``, the count and the sum of a hash of the probed column over the
    rows it selects: the branches of one ``UNION ALL`` (each its own scan of one column, with its
    own pushed filter) feed one aggregation, so the whole probe is one shuffle, not one a branch."""
    branches = []
    for i, p in enumerate(items):
        h = exp.Anonymous(this=hash_function, expressions=[column_ref(p.column)])
        branches.append(exp.select(exp.alias_(exp.Literal.number(i), "q"),
                                   exp.alias_(exp.Cast(this=h, to=exp.DataType.build("DECIMAL(38,0)")), "h"))
                        .from_(table.copy()).where(p.predicate.copy()))
    rows: exp.Expression = branches[0]
    for b in branches[1:]:
        rows = exp.union(rows, b, distinct=False)
    q, h = exp.column("q"), exp.column("h")
    return (exp.select(q.copy(), exp.Count(this=exp.Star()), exp.Sum(this=h))
            .from_(rows.subquery("planner_probe")).group_by(q.copy()))


def answers_by_probe(rows: Sequence[Sequence], count: int) -> dict[int, tuple]:
    """``probe_query``'s rows (in any order) as probe number -> (count, hash sum); a probe that
    selects no row has no group: (0, None)."""
    got = {int(r[0]): tuple(r[1:]) for r in rows}
    return {i: got.get(i, (0, None)) for i in range(count)}

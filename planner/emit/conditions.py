"""Regions as SQL: a ``ValueSet`` or a region becomes a sqlglot predicate, never a string.

The emitted predicate is TRUE exactly for the rows inside the region and FALSE *or NULL* for
every other row, because it is only ever used where SQL keeps TRUE (``CASE WHEN``, ``WHERE``).
NULLs need care, since a comparison with NULL is UNKNOWN:

    [10, 20) ∪ NULL on x     ->  (x >= 10 AND x < 20) OR x IS NULL
    {TRUE} on "a < b"        ->  a < b              (a or b NULL: UNKNOWN, row not taken)
    {FALSE} ∪ NULL on "a < b" ->  NOT a < b OR (a < b) IS NULL

so a row whose derived attribute is NULL lands only in a partition whose set has ``null=True``.

Literals are typed the way Spark and Hive compare them exactly: dates as ``CAST('…' AS DATE)``,
decimals as plain exact numerals (never exponent notation, which Spark would read as a DOUBLE),
strings through ``exp.Literal.string`` so the dialect escapes quotes and backslashes (and ``${``
split so that no variable substitution touches it: ``string_literal``). A TIMESTAMP is an instant
(the planner holds it in UTC) and is written with its offset, ``CAST('2019-12-31 15:00:00+00:00'
AS TIMESTAMP)``, so the same bound means the same instant in every session time zone: a table
applied from a Tokyo session and queried from a New York one agrees with itself. (Hive reads such a
string as NULL: every row would land in the catch-all, which is always read; nothing is lost.)
Identifiers are always quoted.

``partition_filter`` is the predicate a rewritten query reads partitions by: the partitions it
needs, or any partition its layout does not know (see ``planner.model.layout``).
"""
from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any, Mapping, Sequence

from sqlglot import exp

from planner.cnf.ir import ColumnPair
from planner.cnf.values import Value
from planner.cnf.valueset import Interval, ValueSet
from planner.errors import LayoutError
from planner.semantics.kinds import Kind

_PAIR_OPS = {"<": exp.LT, "<=": exp.LTE, "=": exp.EQ, "<>": exp.NEQ, ">": exp.GT, ">=": exp.GTE}


def column_ref(name: str, table_alias: str | None = None) -> exp.Column:
    return exp.Column(this=exp.to_identifier(name, quoted=True),
                      table=exp.to_identifier(table_alias, quoted=True) if table_alias else None)


def literal(value: Value) -> exp.Expression:
    """A typed SQL literal for a planner value (``None`` is NULL)."""
    if value is None:
        return exp.Null()
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, int):
        return exp.Literal.number(str(value))
    if isinstance(value, float):
        value = Decimal(repr(value))
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise LayoutError(f"cannot emit the non-finite number {value}")
        if _precision(value) > MAX_DECIMAL_PRECISION:
            # Only a double's value (planner.cnf.values.float_value) has that many digits, 1E+300
            # or 1E-300: as a plain numeral it is a DECIMAL(301) Spark refuses. In exponent
            # notation it is a DOUBLE literal, which compares with the double column exactly.
            return exp.Literal.number(format(value, "E"))
        # format 'f' never uses exponent notation: Decimal('1E+3') prints 1000, not 1E+3 (a DOUBLE).
        return exp.Literal.number(format(value, "f"))
    if isinstance(value, dt.datetime):
        return exp.cast(exp.Literal.string(value.isoformat(sep=" ") + "+00:00"), exp.DataType.build("TIMESTAMP"))
    if isinstance(value, dt.date):
        return exp.cast(exp.Literal.string(value.isoformat()), exp.DataType.build("DATE"))
    if isinstance(value, str):
        return string_literal(value)
    raise LayoutError(f"cannot emit a literal of type {type(value).__name__}")


MAX_DECIMAL_PRECISION = 38  # Spark's and Hive's DECIMAL


def _precision(value: Decimal) -> int:
    """Digits of ``value`` written as a plain numeral: 1E+300 has 301, 0.001 has 3."""
    _, digits, exponent = value.as_tuple()
    return len(digits) + exponent if exponent >= 0 else max(len(digits), -exponent)


def string_literal(value: str) -> exp.Expression:
    """A string literal that reaches the engine unchanged.

    Spark and Hive substitute ``${…}`` in statement text before parsing it, inside quotes too:
    ``'${nope}'`` arrives as ``''`` and ``'${spark.app.name}'`` as the application's name. A value
    holding ``${`` is therefore cut between ``$`` and ``{`` into ``CONCAT('a$', '{b}')``, which
    no substitution matches and which folds back to the very value.
    """
    if "${" not in value:
        return exp.Literal.string(value)
    chunks = value.split("${")
    pieces = [chunks[0] + "$"] + ["{" + c + "$" for c in chunks[1:-1]] + ["{" + chunks[-1]]
    return exp.Concat(expressions=[exp.Literal.string(p) for p in pieces])


def attribute_expr(attribute: str, derived: Mapping[str, ColumnPair],
                   table_alias: str | None = None) -> exp.Expression:
    """The column, or for a derived attribute the comparison ``left <op> right``."""
    pair = derived.get(attribute)
    if pair is None:
        return column_ref(attribute, table_alias)
    op = _PAIR_OPS.get(pair.op)
    if op is None:
        raise LayoutError(f"derived attribute {attribute!r} has an unknown operator {pair.op!r}")
    return op(this=column_ref(pair.left, table_alias), expression=column_ref(pair.right, table_alias))


def _paren(e: exp.Expression) -> exp.Expression:
    return e if isinstance(e, (exp.Column, exp.Paren, exp.Literal, exp.Boolean)) else exp.Paren(this=e)


def _or(parts: Sequence[exp.Expression]) -> exp.Expression:
    if len(parts) == 1:
        return parts[0]
    return exp.or_(*[_paren(p) if isinstance(p, (exp.And, exp.Or)) else p for p in parts])


def _interval(col: exp.Expression, iv: Interval) -> exp.Expression:
    if iv.is_point:
        return exp.EQ(this=col.copy(), expression=literal(iv.lo))
    conds: list[exp.Expression] = []
    if iv.lo is not None:
        conds.append((exp.GTE if iv.lo_closed else exp.GT)(this=col.copy(), expression=literal(iv.lo)))
    if iv.hi is not None:
        conds.append((exp.LTE if iv.hi_closed else exp.LT)(this=col.copy(), expression=literal(iv.hi)))
    if not conds:
        return exp.Not(this=exp.Is(this=col.copy(), expression=exp.Null()))  # every non-NULL value
    return conds[0] if len(conds) == 1 else exp.and_(*conds)


def _values(col: exp.Expression, vs: ValueSet) -> list[exp.Expression]:
    """Predicates for the non-NULL part of ``vs``: TRUE inside it, FALSE or NULL outside."""
    if not vs.intervals:
        return []
    points = vs.point_values()
    if points is not None:
        if len(points) == 1:
            return [exp.EQ(this=col.copy(), expression=literal(points[0]))]
        return [exp.In(this=col.copy(), expressions=[literal(p) for p in points])]
    gaps = vs.complement().intersect(ValueSet.not_null(vs.kind)).point_values()
    if gaps and len(vs.intervals) >= 2:
        # x NOT IN (3, 7) is NULL for a NULL x, so NULL rows are still excluded: the rule holds.
        if len(gaps) == 1:
            return [exp.NEQ(this=col.copy(), expression=literal(gaps[0]))]
        return [exp.Not(this=exp.In(this=col.copy(), expressions=[literal(p) for p in gaps]))]
    singles = [iv.lo for iv in vs.intervals if iv.is_point]
    out = [_interval(col, iv) for iv in vs.intervals if not iv.is_point]
    if len(singles) == 1:
        out.append(exp.EQ(this=col.copy(), expression=literal(singles[0])))
    elif singles:
        out.append(exp.In(this=col.copy(), expressions=[literal(p) for p in singles]))
    return out


def _boolean(e: exp.Expression, vs: ValueSet) -> exp.Expression:
    t, f, n = vs.contains(True), vs.contains(False), vs.null
    parts: list[exp.Expression] = []
    if t and f:
        parts.append(exp.Not(this=exp.Is(this=_paren(e.copy()), expression=exp.Null())))
    elif t:
        parts.append(e.copy())
    elif f:
        parts.append(exp.Not(this=_paren(e.copy())))
    if n:
        parts.append(exp.Is(this=_paren(e.copy()), expression=exp.Null()))
    return _or(parts)


def valueset_predicate(e: exp.Expression, vs: ValueSet) -> exp.Expression:
    """``e`` (a column or derived comparison) restricted to ``vs``, NULL included iff ``vs.null``."""
    if vs.is_everything():
        return exp.true()
    if vs.is_empty():
        return exp.false()
    if vs.kind is Kind.BOOLEAN:
        return _boolean(e, vs)
    parts = _values(e, vs)
    if vs.null:
        parts.append(exp.Is(this=e.copy(), expression=exp.Null()))
    return _or(parts)


def region_predicate(region, kinds: Mapping[str, Kind] | Sequence = (), derived: Mapping | Sequence = (),
                     table_alias: str | None = None) -> exp.Expression:
    """The conjunction of every attribute's condition; TRUE for the empty region.

    ``region`` is a ``Partition.region`` tuple or a dict; ``kinds`` and ``derived`` may be the
    Layout's tuples of pairs or dicts (``kinds`` is only checked: the value sets carry their kind).
    """
    items = region.items() if isinstance(region, Mapping) else region
    derived = dict(derived)
    conds: list[exp.Expression] = []
    for attribute, vs in items:
        p = valueset_predicate(attribute_expr(attribute, derived, table_alias), vs)
        if p == exp.false():
            return exp.false()
        if p == exp.true():
            continue
        conds.append(p)
    if not conds:
        return exp.true()
    if len(conds) == 1:
        return conds[0]
    return exp.and_(*[_paren(c) if isinstance(c, exp.Or) else c for c in conds])


# ---- the same semantics in Python (tests, sample assignment) -----------------------------------
def attribute_value(row: Mapping[str, Any], attribute: str, derived: Mapping[str, ColumnPair]) -> Any:
    pair = derived.get(attribute)
    if pair is None:
        return row.get(attribute)
    a, b = row.get(pair.left), row.get(pair.right)
    if a is None or b is None:
        return None
    return {"<": a < b, "<=": a <= b, "=": a == b, "<>": a != b, ">": a > b, ">=": a >= b}[pair.op]


def region_contains(region, row: Mapping[str, Any], derived: Mapping | Sequence = ()) -> bool:
    derived = dict(derived)
    items = region.items() if isinstance(region, Mapping) else region
    return all(vs.contains(attribute_value(row, a, derived)) for a, vs in items)


# ---- the partitions a rewritten query reads ----------------------------------------------------------
def _runs(ids: Sequence[int]) -> list[tuple[int, int]]:
    """Maximal runs of consecutive ids: [1, 2, 3, 7] -> [(1, 3), (7, 7)]."""
    out: list[tuple[int, int]] = []
    for i in sorted(ids):
        if out and i == out[-1][1] + 1:
            out[-1] = (out[-1][0], i)
        else:
            out.append((i, i))
    return out


def partition_filter(column: str, read: Sequence[int], known: Sequence[int],
                     guard: exp.Expression | None = None) -> exp.Expression:
    """``column IN (read…) OR NOT column BETWEEN lo AND hi`` (one BETWEEN per run of ``known``).

    A partition id the layout does not know (another generation's) satisfies the second half, so
    the query reads it: stale SQL reads more, never a wrong subset. ``guard`` (e.g.
    ``current_timezone() <> 'UTC'``) is OR-ed on: when it holds, every partition is read.

        planner_pid IN (0, 482130003) OR NOT planner_pid BETWEEN 482130001 AND 482130012
    """
    col = column_ref(column)
    parts: list[exp.Expression] = [exp.In(this=col.copy(), expressions=[exp.Literal.number(i) for i in read])]
    runs = _runs(known)
    if runs:
        inside = [exp.Between(this=col.copy(), low=exp.Literal.number(lo), high=exp.Literal.number(hi))
                  for lo, hi in runs]
        parts.append(exp.Not(this=_paren(_or(inside)) if len(inside) > 1 else inside[0]))
    if guard is not None:
        parts.append(guard)
    return _or(parts)

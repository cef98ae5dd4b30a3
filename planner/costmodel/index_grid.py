"""Which aggregate index the workload asks for: what it keeps, and which grids may cut it.

The workload's aggregate queries on the table (``planner.workload.aggregates``) say what to keep:

* the expressions they aggregate (``sum(l_extendedprice * l_discount)`` keeps
  ``l_extendedprice * l_discount``), each with sum, count, min and max;
* the GROUP BY columns with few values (at most ``GROUP_VALUES`` in the sample): a query grouping
  by a wide column would need a cell per value, which is a copy of the table, not an index;
* the grid's dimensions: some of the columns their predicates constrain (``grid_columns``, the
  most constrained first; ``planner.costmodel.aggregate_index.choose_index`` prices every set of 1
  to ``MAX_DIMS`` of the ``CANDIDATE_DIMS`` first). A column with at most ``EXACT_VALUES`` values
  in the sample gets a bucket per value, closed by the value's successor in the column's type
  (``l_discount``: 11, ``l_quantity``: 50 whole numbers in a DECIMAL(15,2)), so a predicate on it
  never cuts a bucket (``GridDim.by_value``); a wider one gets quantiles of the sample, plus the
  constants the workload compares it with.
"""
from __future__ import annotations

from dataclasses import replace
from decimal import Decimal
from typing import Sequence

import numpy as np
import sqlglot

from planner.cnf.values import successor
from planner.costmodel.cost import CostModel
from planner.model.aggregate_index import (
    DIMENSION_KINDS,
    GROUP_TYPES,
    AggregateIndex,
    GridDim,
    IndexedExpr,
)
from planner.semantics.types import parse_type
from planner.workload import Workload
from planner.workload.aggregates import AggregateQuery, aggregate_query, expression_type
from planner.workload.scans import Schema

EXACT_VALUES = 64  # a column with at most a quarter of this many sampled values always gets a bucket per value
GROUP_VALUES = 64  # a GROUP BY column kept in the cells has at most this many sampled values
# The build groups a range dimension by its values first when the groups stay under this share of the
# table's rows (``grouped_for_build``). benchmarks/agg_index_profile.py times the cells query both ways.
GROUPED_SHARE = 1 / 8
MAX_DIMS = 4
CANDIDATE_DIMS = 4  # columns whose sets of 1 to MAX_DIMS the search prices as grids
MAX_BOUNDS = 255  # planner.emit.cells_sql.MAX_BOUNDS


def aggregate_scans(model: CostModel, workload: Workload) -> dict[int, AggregateQuery]:
    """Scan index -> the aggregate query it belongs to, for the scans an index could serve."""
    types = dict(model.analysis.types) or dict(model.stats.schema)
    table = model.analysis.table
    schema = Schema({table: types})
    out: dict[int, AggregateQuery] = {}
    memo: dict[int, AggregateQuery | None] = {}
    for i, s in enumerate(model.scans):
        if s.query not in memo:
            memo[s.query] = None
            try:
                tree = sqlglot.parse_one(workload.queries[s.query].sql, read=workload.dialect)
            except Exception:  # noqa: BLE001 - a statement sqlglot reads differently: not an aggregate here
                continue
            db = table.rsplit(".", 1)[0] if "." in table else None
            q = aggregate_query(tree, schema, db, workload.dialect)
            if not isinstance(q, str) and (q.table == table or q.table.split(".")[-1] == table.split(".")[-1]):
                memo[s.query] = q
        q = memo[s.query]
        if q is not None and q.alias == s.alias:
            out[i] = q
    return out


def grid_columns(model: CostModel, queries: dict[int, AggregateQuery]) -> list[str]:
    """The columns a grid may cut, the most constrained first (by the aggregate queries that the
    index could keep; ties by name)."""
    types = _types(model)
    dims: dict[str, int] = {}
    for i, q in queries.items():
        if _kept(model, q, types) is None:
            continue
        for a in model.scans[i].sets:
            if a in types and parse_type(types[a]).kind in DIMENSION_KINDS and model.sample.has(a) \
                    and a not in model.sample.derived:
                dims[a] = dims.get(a, 0) + 1
    return [a for a, _ in sorted(dims.items(), key=lambda kv: (-kv[1], kv[0]))]


def derive_index(model: CostModel, queries: dict[int, AggregateQuery], buckets: int,
                 dims_wanted: int = MAX_DIMS, constants: bool = True, columns: Sequence[str] | None = None,
                 memo: dict | None = None) -> AggregateIndex | None:
    """The index the served candidates ask for: a grid over ``columns`` (default: the
    ``dims_wanted`` columns their predicates constrain most often), a wide column cut into about
    ``buckets`` buckets (at the workload's own constants too, unless ``constants`` is False).
    ``memo``: kept across the grids ``choose_index`` derives."""
    memo = {} if memo is None else memo
    types = _types(model)
    if "kept" not in memo:
        exprs: dict[str, str] = {}
        groups: dict[str, str] = {}
        for i, q in queries.items():
            kept = _kept(model, q, types)
            if kept is None:
                continue
            qe, qg = kept
            exprs.update(qe)
            groups.update(qg)
        memo["kept"] = (exprs, groups)
    exprs, groups = memo["kept"]
    if not exprs and not any(c.key is None for q in queries.values() for c in q.calls):
        return None
    chosen = list(columns) if columns is not None else grid_columns(model, queries)[:min(dims_wanted, MAX_DIMS)]
    dims = []
    for a in chosen:
        key = ("bounds", a, buckets, constants)
        if key not in memo:
            memo[key] = _bounds(model, a, types[a], buckets, constants)
        bounds, by_value = memo[key]
        dims.append(GridDim(a, str(parse_type(types[a])), bounds, by_value))
    return AggregateIndex(tuple(dims), tuple(sorted(groups.items())),
                          tuple(IndexedExpr(k, t) for k, t in sorted(exprs.items())))


def grouped_for_build(model: CostModel, index: AggregateIndex) -> AggregateIndex:
    """``index``, its range dimensions whose values are few marked ``grouped``: the build groups the
    rows by their values before it buckets them (``planner.emit.cells_sql``); the cells are the
    same. A dimension is grouped, the narrowest first, while the groups (the product of the staged
    columns' and the group columns' sampled values) stay under ``GROUPED_SHARE`` of the table's
    rows: the first aggregation then shrinks the rows at least that many times, and the bucket
    search runs on the groups. (The grids are priced without it: it changes the build only.)"""
    limit = GROUPED_SHARE * float(model.stats.rows)

    def width(column: str) -> float:
        return float(max(1, len(model.sample.uniques(column)))) if model.sample.has(column) else float("inf")

    count = 1.0
    for c in [d.column for d in index.dims if d.staged] + [g for g, _ in index.groups]:
        count *= width(c)
    chosen: set[str] = set()
    for d in sorted((d for d in index.dims if not d.staged), key=lambda d: width(d.column)):
        if count * width(d.column) > limit:
            break
        count *= width(d.column)
        chosen.add(d.column)
    return replace(index, dims=tuple(replace(d, grouped=True) if d.column in chosen else d for d in index.dims))


def _types(model: CostModel) -> dict[str, str]:
    return {k.lower(): v for k, v in (dict(model.analysis.types) or dict(model.stats.schema)).items()}


def _kept(model: CostModel, q: AggregateQuery, types) -> tuple[dict, dict] | None:
    """The expressions and groups ``q`` needs, or None when the index could not keep them."""
    exprs, groups = {}, {}
    for call in q.calls:
        if call.key is None:
            continue
        t = expression_type(sqlglot.parse_one(call.key, read="spark"), types)
        if t is None or (call.function in ("sum", "avg") and not t.is_numeric):
            return None
        exprs[call.key] = str(t)
    for g in q.groups:
        t = types.get(g)
        if t is None or parse_type(t).name not in GROUP_TYPES or not model.sample.has(g) or \
                len(model.sample.uniques(g)) > GROUP_VALUES:
            return None
        groups[g] = str(parse_type(t))
    return exprs, groups


def _bounds(model: CostModel, column: str, type_: str, buckets: int, constants: bool = True) -> tuple[tuple, bool]:
    """``(boundaries, a bucket per value)``: every sampled value of a narrow column; quantiles of a
    wide one plus (``constants``) the constants the workload compares it with (each the first value
    of a bucket)."""
    uniq = list(model.sample.uniques(column))
    if len(uniq) <= max(buckets, EXACT_VALUES // 4):
        return _value_bounds(uniq, parse_type(type_)), True
    codes = model.sample.codes(column)
    values = np.sort(codes[codes >= 0])
    cuts = {uniq[int(values[min(len(values) - 1, (len(values) * k) // buckets)])] for k in range(1, buckets)}
    t = parse_type(type_)
    for s in model.scans if constants else ():
        vs = s.sets.get(column)
        if vs is None:
            continue
        for iv in vs.intervals:
            for v in _starts(iv, t):
                cuts.add(v)
    out = sorted(v for v in cuts if v is not None and v > uniq[0])
    if len(out) > MAX_BOUNDS:  # thin evenly, keeping order
        step = len(out) / MAX_BOUNDS
        out = [out[int(i * step)] for i in range(MAX_BOUNDS)]
    return tuple(out), False


def _value_bounds(uniq: list, t) -> tuple:
    """A bucket per sampled value, each closed by the value's successor in the column's type where
    it has one: ``[12, 12.01)`` holds only 12 in a DECIMAL(15,2), so ``l_quantity BETWEEN 1 AND 12``
    is a union of whole buckets, where ``[12, 13)`` would hold 12.5 and be cut (a boundary, scanned).
    The gaps between values get buckets too, empty in the sample (no cells). Values outside the
    sample's fall in the first or the last bucket. Without room for both, the values alone."""
    out: list = []
    for v in uniq:
        out.append(v)
        nxt = _next(v, t)
        if _representable(nxt, t):
            out.append(nxt)
    out = sorted(set(out))
    if len(out) > MAX_BOUNDS:
        top = _next(uniq[-1], t)
        return tuple(uniq) + ((top,) if _representable(top, t) else ())
    return tuple(out)


def _starts(iv, t) -> list:
    """Values at which a bucket must start for ``iv`` to be a union of buckets."""
    out = []
    if iv.lo is not None:
        out.append(iv.lo if iv.lo_closed else _next(iv.lo, t))
    if iv.hi is not None:
        out.append(_next(iv.hi, t) if iv.hi_closed else iv.hi)
    return out


def _representable(v, t) -> bool:
    """``v`` is a value of type ``t`` (a boundary is compared as a literal of the column's own type)."""
    if v is None:
        return False
    if t.is_decimal and isinstance(v, Decimal):
        return abs(v) < Decimal(10) ** (t.precision - t.scale)
    if t.name in ("tinyint", "smallint", "int", "bigint") and isinstance(v, int):
        return t.min_value <= v <= t.max_value
    return True


def _next(v, t):
    if t.is_decimal and isinstance(v, Decimal):
        return v + Decimal(1).scaleb(-t.scale)
    try:
        return successor(v, t.kind)
    except Exception:  # noqa: BLE001 - no successor of that kind (a string): no boundary
        return None


__all__ = ["aggregate_scans", "grid_columns", "derive_index", "grouped_for_build", "EXACT_VALUES", "MAX_DIMS",
           "CANDIDATE_DIMS"]

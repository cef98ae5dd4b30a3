"""Which aggregate index a layout should carry, and what it costs and saves (in seconds).

What the index keeps and which grids may cut it: ``planner.costmodel.index_grid``.

A query is *served* when the index keeps its expressions and groups, its predicate can be read
exactly (``planner.pruning.strict``) and some cell lies inside its box: the rewrite then answers
it through the index whatever its boundary costs, so it is priced so, faster or slower than its
plain scan (a grid over a column whose boundary cells are spread over every row group makes the
queries it cuts slower, and loses to the grid without it). Served, it reads:

* the rows of its *boundary* cells, in the blocks (row groups, pages) that may hold them: its own
  blocks (``planner.costmodel.blocks``: the read matrix the layout is priced with) that may hold
  a value of a partial bucket, and every block of a partition with no interior cell;
* the index's cells inside its box (estimated from the sample: the distinct cells its interior
  rows fall in, scaled to the table by Chao's estimate of the cells the sample did not see).

The boundary is priced on the grid *without* the workload's constants among its boundaries: the
advised queries lie on the grid's lines, so they have no partial bucket, but the next query of
their template has other constants and does. Priced on the grid they were cut for, the served
queries would read nothing from the table; Spark reads their boundary cells, which on a layout
not ordered by the grid's columns are spread over most of the row groups.

Both are priced with the time model (``planner.costmodel.timing``) as the table's scans are, and
the query takes the index's answer instead of its plain scan. The index itself costs its build:
one read of the columns it needs, the aggregation, and writing the cells.

The grid (its columns, and a few bucket counts for the wide ones) is the one that saves the most
seconds, within ``SIZE_SHARE`` of the table's bytes. The index is
declined when it serves no query, when no grid fits the size, or when it saves less than
``MIN_GAIN`` of the layout's seconds. Its build (one read of the
columns it needs, the aggregation, the cells written) is estimated and reported beside a plain
copy's, not charged against one pass of the workload, as no layout's write is.
"""
from __future__ import annotations

import bisect
import itertools
import math
from dataclasses import dataclass, field, replace
from typing import Sequence

import numpy as np
import sqlglot

from planner.analysis.table_analysis import ScanAnalysis
from planner.cnf.valueset import ValueSet
from planner.costmodel.blocks import BlockReader
from planner.costmodel.cost import CostModel, LayoutCost
from planner.costmodel.index_grid import CANDIDATE_DIMS, MAX_DIMS, derive_index, grid_columns, grouped_for_build
from planner.costmodel.timing import ScanWork, scan_seconds
from planner.model.aggregate_index import PAGE_ROWS, AggregateIndex, GridDim, sorts_cells
from planner.model.layout import CATCH_ALL, Layout
from planner.pruning.strict import GridCovers, exact
from planner.semantics.types import parse_type
from planner.workload.aggregates import AggregateQuery

BUCKET_CHOICES = (8, 16, 32, 64, 128, 255)
SIZE_SHARE = 0.02  # the index may take this share of the table's bytes
COMPRESSION = 0.5  # Parquet's size of a cell against its plain width (sorted keys, small numbers)
# The index must save this share of the layout's seconds: more than a bloom filter must
# (planner.costmodel.search.BLOOM_MIN_GAIN), since every served query pays for the index's extra
# relations, while a filter is read only by the lookups it serves. Its build is reported, not charged against one pass of
# the workload: a layout's write is not either, and the workload stands for queries that recur.
MIN_GAIN = 0.01
# What a served query costs beyond its plain one's fixed time, in queries' fixed time: Spark plans
# the rewrite's extra relations (the table again, the cells) as it plans a query of its own. The
# profile (benchmarks/results/agg_index_profile_sf1.md) times the planning of both texts: the
# difference is under one ``TimeParams.query``. (SQL saved by ``planner rewrite`` also checks the
# index's head, twice: it costs more than priced here.)
REWRITE_EXTRA_QUERIES = 1


@dataclass(frozen=True)
class ServedScan:
    scan: int  # index into the model's scans
    seconds: float  # with the index
    rows: float  # table rows read (boundary cells)
    index_rows: float  # cells read


@dataclass(frozen=True)
class IndexPrice:
    """An index for one layout: what it is, what it costs, what it saves."""

    index: AggregateIndex | None
    declined: str = ""  # why the layout carries no index ('' when it does)
    cells: float = 0.0
    bytes: float = 0.0
    build_seconds: float = 0.0
    copy_seconds: float = 0.0  # a plain copy of the table, for scale
    seconds_before: float = 0.0  # the workload's seconds without the index (weighted)
    seconds_after: float = 0.0
    rows_before: float = 0.0  # table rows the served scans read without the index
    rows_after: float = 0.0  # table rows they read with it
    index_rows: float = 0.0  # cells they read
    served: tuple[ServedScan, ...] = field(default=(), repr=False)
    templates: tuple[str, ...] = ()  # templates of the served queries, most served first

    @property
    def saved(self) -> float:
        return self.seconds_before - self.seconds_after

    def to_json(self) -> dict:
        """What the layout's meta records (``aggregate_index_price``): the report reads it back."""
        return {"declined": self.declined, "cells": round(self.cells), "bytes": round(self.bytes),
                "build_seconds": round(self.build_seconds, 3), "copy_seconds": round(self.copy_seconds, 3),
                "seconds_before": round(self.seconds_before, 3), "seconds_after": round(self.seconds_after, 3),
                "rows_before": round(self.rows_before), "rows_after": round(self.rows_after),
                "index_rows": round(self.index_rows), "served": len(self.served), "templates": list(self.templates)}


# ---- pricing -------------------------------------------------------------------------------------
def price_index(model: CostModel, cost: LayoutCost, queries: dict[int, AggregateQuery],
                index: AggregateIndex, templates: Sequence[str] = (), seen_as: AggregateIndex | None = None,
                memo: dict | None = None) -> IndexPrice:
    """``index`` beside ``cost.layout``: the seconds the served scans take with it, its size, its build.

    ``seen_as`` is the grid the served queries are priced on (default ``index``): the same grid
    without the workload's constants among its boundaries (``choose_index``), so that a query is
    priced as the next one of its template sees the index, not as the one it was built from.
    ``memo``: kept across the grids ``choose_index`` prices (buckets of values, covers)."""
    memo = {} if memo is None else memo
    layout = cost.layout
    sizes, files, blocks, hits = model.blocks_of(layout)
    labels = model.labels(layout)
    keys = _cell_keys(model, layout, index, labels, memo)
    cells, seen = _distinct(keys)
    cells = min(cells, float(model.stats.rows))
    scale = cells / max(seen, 1)
    cell_bytes = _cell_width(index) * COMPRESSION
    reader = BlockReader(blocks, model.analysis.derived, None if blocks.exact else model.cache.ranges,
                         model.population())
    served: list[ServedScan] = []
    regions = [p.conditions for p in layout.partitions]
    grid = seen_as or index
    every_page = None if sorts_cells(index, len(layout.partitions)) else cells  # unsorted: a query reads them all
    for i, q in queries.items():
        scan = model.scans[i]
        if not _serves(index, q, scan):
            continue
        got = _served(model, layout, grid, scan, i, hits[i], reader, blocks, files, sizes, keys, labels,
                      scale, cell_bytes, regions, memo, every_page)
        if got is not None:  # the rewrite answers it through the index, faster or not
            served.append(got)
    w = model.weights
    before = sum(w[s.scan] * cost.per_scan[s.scan].seconds for s in served)
    after = sum(w[s.scan] * s.seconds for s in served)
    bytes_ = cells * cell_bytes
    build, copy = _build_seconds(model, index, cells, cell_bytes)
    names = {}
    for s in served:
        names[templates[s.scan] if s.scan < len(templates) else ""] = names.get(
            templates[s.scan] if s.scan < len(templates) else "", 0) + 1
    price = IndexPrice(index, "", cells, bytes_, build, copy, before, after,
                       sum(w[s.scan] * cost.per_scan[s.scan].rows for s in served),
                       sum(w[s.scan] * s.rows for s in served), sum(w[s.scan] * s.index_rows for s in served),
                       tuple(served), tuple(n for n, _ in sorted(names.items(), key=lambda kv: -kv[1]) if n))
    if not served:
        return replace(price, index=None, declined="no query of the workload has a cell inside its box")
    if bytes_ > SIZE_SHARE * model.stats.bytes:
        return replace(price, index=None, declined=f"its cells (~{bytes_ / 2**20:.1f} MiB) exceed "
                                                   f"{SIZE_SHARE:.0%} of the table")
    if price.saved < MIN_GAIN * cost.seconds:
        return replace(price, index=None, declined=f"it saves {price.saved:.2f} s of the workload's {cost.seconds:.2f} s, "
                                                   f"less than {MIN_GAIN:.0%}")
    return price


def _serves(index: AggregateIndex, q: AggregateQuery, scan: ScanAnalysis) -> bool:
    kept = dict(index.groups)
    if any(g not in kept for g in q.groups):
        return False
    if any(c.key is not None and index.expr(c.key) is None for c in q.calls):
        return False
    return not exact(scan) and not scan.groups.unsatisfiable


def _served(model: CostModel, layout: Layout, index: AggregateIndex, scan: ScanAnalysis, i: int, hit, reader,
            blocks, files, sizes, keys, labels, scale, cell_bytes, regions, memo=None,
            every_page: float | None = None) -> ServedScan | None:
    """``every_page``: the index's cells, when they are not sorted by their key and a query reads
    every page of them."""
    memo = {} if memo is None else memo  # per layout: the reader's blocks are the layout's
    covers = GridCovers(scan, index.dims, memo)
    dims = {d.column: d for d in index.dims}

    def cached(key, make):
        if key not in memo:
            memo[key] = make()
        return memo[key]

    n = len(layout.partitions)
    keep = np.ones(len(blocks), dtype=bool)  # blocks the boundary scan may read
    interior_rows = np.zeros(model.sample.n, dtype=bool)
    any_interior = False
    parts_read = np.zeros(n, dtype=bool)
    for j, (p, region) in enumerate(zip(layout.partitions, regions)):
        if not hit[j]:
            continue
        in_part = blocks.part == j
        if p.id == CATCH_ALL:
            parts_read[j] = True
            continue
        cover = covers.cover(region)
        if cover.none:
            parts_read[j] = True
            continue
        any_interior = True
        rows = labels == j
        for d in cover.dims:
            dim = dims[d.column]
            rows &= cached(("mask", dim, d.inside), lambda: model.sample.mask(dim.column, _union(dim, d.inside)))
        interior_rows |= rows & cached(("matching", i), lambda: _matching(model, scan))
        if cover.boundary_free:
            keep[in_part] = False
            continue
        boundary = np.zeros(len(blocks), dtype=bool)
        for d in cover.dims:
            if d.partial:
                dim = dims[d.column]
                got = cached(("holds", dim, d.partial), lambda: reader.may_hold(dim.column, _union(dim, d.partial)))
                boundary |= np.ones(len(blocks), dtype=bool) if got is None else got
        keep[in_part] &= boundary[in_part]
        parts_read[j] = bool((keep & in_part).any())
    if not any_interior:
        return None
    read = reader.reads([scan], hit[None, :])[0] * keep
    rows = float(read @ blocks.rows)
    groups = _groups(read, blocks)
    cells_read = max(1.0, len(np.unique(keys[interior_rows])) * scale) if interior_rows.any() else 0.0
    if every_page is not None:
        index_rows = max(every_page, 1.0)
    else:
        index_rows = math.ceil(cells_read / PAGE_ROWS) * PAGE_ROWS if cells_read else PAGE_ROWS
    hit_f = parts_read.astype(float)
    work = ScanWork(partitions=hit_f.sum() + 2, files=float(hit_f @ np.asarray(files, dtype=float)) + 2,
                    row_groups=groups + math.ceil(index_rows / PAGE_ROWS) + 1, rows=rows + index_rows + 1,
                    bytes=rows * model.scan_width[i] + index_rows * cell_bytes,
                    file_bytes=float(hit_f @ (np.asarray(sizes, dtype=float) * model.row_bytes)))
    seconds = float(scan_seconds(work, model.params.time)) + REWRITE_EXTRA_QUERIES * model.params.time.query
    return ServedScan(i, seconds, rows, index_rows)


def _matching(model: CostModel, scan: ScanAnalysis) -> np.ndarray:
    out = np.ones(model.sample.n, dtype=bool)
    for a, vs in scan.sets.items():
        if model.sample.has(a):
            out &= model.sample.mask(a, vs)
    return out


def _union(dim: GridDim, buckets) -> ValueSet:
    return ValueSet.union_all(dim.kind, [dim.bucket_set(k) for k in buckets])


def _groups(read: np.ndarray, blocks) -> float:
    if blocks.group is None:
        return float((read > 0).sum())
    _, firsts = blocks.groups()
    return float(np.maximum.reduceat(read, firsts).sum()) if len(read) else 0.0


def _cell_keys(model: CostModel, layout: Layout, index: AggregateIndex, labels: np.ndarray,
               memo: dict | None = None) -> np.ndarray:
    """One int64 per sample row naming its cell (partition, buckets, group values)."""
    parts = [labels + 1]
    radix = [len(layout.partitions) + 1]
    for d in index.dims:
        parts.append(_bucket_codes(model, d, memo)[model.sample.codes(d.column)])  # NULL (-1): the last slot
        radix.append(d.buckets + 1)
    for g, _ in index.groups:
        parts.append(model.sample.codes(g) + 1)
        radix.append(len(model.sample.uniques(g)) + 1)
    key = np.zeros(model.sample.n, dtype=np.int64)
    for p, r in zip(parts, radix):
        key = key * r + p
    return key


def _bucket_codes(model: CostModel, dim: GridDim, memo: dict | None) -> np.ndarray:
    """The bucket of each of the sample's distinct values of ``dim`` (sorted), then one slot for
    NULL: the boundaries <= the value, found by where each boundary falls among the values."""
    key = ("codes", dim)
    if memo is not None and key in memo:
        return memo[key]
    uniq = model.sample.uniques(dim.column)
    starts = np.array([bisect.bisect_left(uniq, b) for b in dim.bounds], dtype=np.int64)
    out = np.append(np.searchsorted(starts, np.arange(len(uniq)), side="right"), dim.buckets).astype(np.int64)
    if memo is not None:
        memo[key] = out
    return out


def _distinct(keys: np.ndarray) -> tuple[float, int]:
    """(estimated cells in the table, distinct cells the sample holds): Chao1 adds the unseen."""
    if not len(keys):
        return 0.0, 0
    _, counts = np.unique(keys, return_counts=True)
    seen = len(counts)
    f1, f2 = int((counts == 1).sum()), int((counts == 2).sum())
    extra = f1 * f1 / (2 * f2) if f2 else f1 * (f1 - 1) / 2
    return float(seen + extra), seen


def _cell_width(index: AggregateIndex) -> float:
    """Plain bytes of one cell: the key, the count, four partials per expression."""
    width = 8 + 4 * len(index.dims) + 8
    width += sum(16 if parse_type(t).is_string else 8 for _, t in index.groups)
    width += sum(8 + 3 * (16 if parse_type(e.type).is_decimal else 8) for e in index.exprs)
    return float(width)


def _build_seconds(model: CostModel, index: AggregateIndex, cells: float, cell_bytes: float) -> tuple[float, float]:
    """(the build: one read of the columns it needs, aggregating every row, writing the cells;
    a copy: reading every column and writing every byte)."""
    t = model.params.time
    cur = model.current()
    groups = float(len(np.unique(cur.blocks.group))) if cur.blocks.group is not None else float(len(cur.blocks))
    needed = {d.column for d in index.dims} | {g for g, _ in index.groups}
    for e in index.exprs:
        needed |= {c.name.lower() for c in sqlglot.parse_one(e.sql, read="spark").find_all(sqlglot.exp.Column)}
    widths = model.stats.widths
    width = sum(widths.get(c, 8.0) for c in needed) + 8
    n = float(model.stats.rows)
    parts = float(len(cur.layout.partitions))
    read = ScanWork(partitions=parts, files=float(cur.files.sum()), row_groups=groups, rows=n, bytes=n * width,
                    file_bytes=float(model.stats.bytes))
    build = float(scan_seconds(read, t)) + n * t.row * (1 + len(index.exprs)) / max(t.cores, 1) + \
        cells * cell_bytes * t.byte * 4
    full = ScanWork(partitions=parts, files=float(cur.files.sum()), row_groups=groups, rows=n, bytes=n * model.row_bytes,
                    file_bytes=float(model.stats.bytes))
    copy = float(scan_seconds(full, t)) + float(model.stats.bytes) * t.byte * 4
    return build, copy


def choose_index(model: CostModel, cost: LayoutCost, queries: dict[int, AggregateQuery],
                 templates: Sequence[str] = ()) -> IndexPrice:
    """The best index for ``cost.layout`` (declined: ``index`` None, with the reason): the grid over
    1 to ``MAX_DIMS`` of the ``CANDIDATE_DIMS`` most constrained columns, each set cut into each of
    ``BUCKET_CHOICES`` (one cut when every column of it gets a bucket per value), that saves the
    most seconds within the size allowed. Every set, not only the most constrained few: a column
    whose boundary cells are spread over the layout's row groups makes every query cut by it
    slower (the rewrite answers through the index whatever a query's boundary costs), and the
    grid without it may save the most. A grid too big is not priced (a finer one with the same
    columns is bigger still)."""
    if not queries:
        return IndexPrice(None, "the workload has no aggregate query the index could answer")
    memo: dict = {}
    if derive_index(model, queries, BUCKET_CHOICES[0], 1, memo=memo) is None:
        return IndexPrice(None, "the workload's aggregate queries aggregate nothing the index can keep")
    best: IndexPrice | None = None
    tried: set = set()
    labels = model.labels(cost.layout)
    cap = SIZE_SHARE * model.stats.bytes
    too_big = ""
    candidates = grid_columns(model, queries)[:CANDIDATE_DIMS]
    for k in range(1, min(MAX_DIMS, len(candidates)) + 1):
        for columns in itertools.combinations(candidates, k):
            for b in BUCKET_CHOICES:
                index = derive_index(model, queries, b, columns=columns, memo=memo)
                if index in tried:
                    continue
                tried.add(index)
                cells, _ = _distinct(_cell_keys(model, cost.layout, index, labels, memo))
                size = min(cells, float(model.stats.rows)) * _cell_width(index) * COMPRESSION
                if size > cap:
                    too_big = too_big or f"its cells (~{size / 2**20:.1f} MiB) exceed {SIZE_SHARE:.0%} of the table"
                    break
                seen_as = derive_index(model, queries, b, constants=False, columns=columns, memo=memo)
                price = price_index(model, cost, queries, index, templates, seen_as, memo)
                if best is None or (price.index is not None and (best.index is None or price.saved > best.saved)) or \
                        (price.index is None and best.index is None and price.saved > best.saved):
                    best = price
    if best is None:
        return IndexPrice(None, too_big or "no grid could be priced")
    return best if best.index is None else replace(best, index=grouped_for_build(model, best.index))


def with_index(cost: LayoutCost, price: IndexPrice) -> LayoutCost:
    """``cost`` with its served scans answered through the index (its layout carries the index)."""
    from planner.costmodel.cost import ScanCost

    per = list(cost.per_scan)
    for s in price.served:
        old = per[s.scan]
        per[s.scan] = ScanCost(old.query, s.rows + s.index_rows, (s.rows + s.index_rows) * (old.bytes / max(old.rows, 1.0)),
                               old.partitions, old.overhead, s.seconds, old.files, old.row_groups)
    layout = cost.layout
    meta = dict(layout.meta) | {"aggregate_index_price": price.to_json()}
    layout = replace(layout, strategy=f"{layout.strategy} + aggregate index", aggregate_index=price.index,
                     meta=tuple(meta.items()))
    return replace(cost, layout=layout, per_scan=tuple(per),
                   rows=cost.rows - price.rows_before + price.rows_after + price.index_rows,
                   seconds=cost.seconds - price.seconds_before + price.seconds_after)


__all__ = ["IndexPrice", "ServedScan", "choose_index", "price_index", "with_index", "SIZE_SHARE"]

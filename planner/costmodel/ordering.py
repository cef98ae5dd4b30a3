"""Order inside partitions, so Parquet row groups can be skipped (Hive index study, sections 4, 5.2, 8).

Two families of orderings are considered:

* ``sort``: a lexicographic sort of the filtered columns by ascending cardinality (the study's
  advice: the low-cardinality column first keeps the later columns clustered within each value),
  or by the single most-filtered column, which is what a DBA does by hand;
* ``zorder``: the bits of 2–4 columns interleaved, each column first bucketed into at most 64
  quantile buckets of the sample (6 bits), so a range on any of the columns touches few row groups;
* ``hilbert``: the same cells in Hilbert order (``planner.costmodel.curves``), which never jumps
  between distant cells, offered when the columns are filtered about equally often.

The z-value and the Hilbert value here are bit for bit the ones the emitted SQL computes
(``planner.emit.curve_sql``): buckets are ``bisect_right(bounds, v)`` with NULL in bucket 0, and
NaN or +infinity in the top bucket (Spark and Hive order NaN above every number).

The cost model simulates the writer: it orders each partition's sample rows the same way, cuts
them into row groups of the target size, and takes each group's min/max per attribute as the box
Parquet statistics would give. A scan then reads the row groups whose box may hold matches.
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import pyarrow as pa

from planner.costmodel.curves import CURVE_COLUMNS, MAX_BUCKETS, Z_BUCKET_BITS, hilbert_from_z
from planner.costmodel.sample import SampleFrame
from planner.layout import Ordering

CURVES = ("zorder", "hilbert")
#: Hilbert is offered when the least filtered of the curve's columns is filtered at least this
#: share as often as the most filtered one ("several columns matter equally").
HILBERT_BALANCE = 0.5


def zorder_bounds(sample: SampleFrame, column: str, buckets: int = MAX_BUCKETS) -> tuple:
    """Quantile boundaries of a column in the sample: value v falls in bucket #{b <= v}."""
    codes = sample.codes(column)
    codes = np.sort(codes[codes >= 0])
    if codes.size == 0:
        return ()
    uniq = sample.uniques(column)
    qs = codes[(np.arange(1, buckets) * codes.size) // buckets]
    return tuple(uniq[c] for c in np.unique(qs) if c > codes[0])


def buckets(sample: SampleFrame, column: str, bounds: Sequence) -> np.ndarray:
    """``bisect_right(bounds, v)`` of every sample row: NULL -> 0, NaN and +inf -> the top bucket.

    The SQL tests ``v IS NULL`` first, then ``v < bound`` down a balanced tree: a NULL never
    reaches a comparison, and NaN (above every number in Spark and Hive) and +inf are never
    below a finite bound. The sample codes NULL, NaN and infinities alike (-1), so the
    non-finite doubles are told apart on the raw column.
    """
    uniq = sample.uniques(column)
    per_unique = np.array([bisect.bisect_right(bounds, u) for u in uniq] + [0], dtype=np.uint64)
    out = per_unique[sample.codes(column)]
    if column not in sample.derived and sample.n:
        col = sample.table.column(column)
        if pa.types.is_floating(col.type):
            v = col.to_numpy(zero_copy_only=False).astype(float)  # NULL -> NaN: masked below
            top = (np.isnan(v) | (v == np.inf)) & ~col.is_null().to_numpy(zero_copy_only=False)
            out[top] = len(bounds)
    return out


def zorder_keys(sample: SampleFrame, order: Ordering) -> np.ndarray:
    """The z-value of every sample row: bit ``b`` of column ``j``'s bucket at ``b*k + j``."""
    key = np.zeros(sample.n, dtype=np.uint64)
    cols = [buckets(sample, c, b) for c, b in zip(order.columns, order.bounds)]
    k = len(cols)
    for bit in range(Z_BUCKET_BITS):
        for j, b in enumerate(cols):
            key |= ((b >> np.uint64(bit)) & np.uint64(1)) << np.uint64(bit * k + j)
    return key


def hilbert_keys(sample: SampleFrame, order: Ordering) -> np.ndarray:
    """The Hilbert value of every sample row's cell (the same cells as ``zorder_keys``)."""
    return hilbert_from_z(zorder_keys(sample, order), len(order.columns))


def global_rank(sample: SampleFrame, order: Ordering) -> np.ndarray:
    """Position of every sample row in the writer's order (ties keep sample order)."""
    if order.method == "sort" and order.columns:
        perm = np.lexsort([sample.sort_keys(c) for c in reversed(order.columns)])
    elif order.method == "zorder":
        perm = np.argsort(zorder_keys(sample, order), kind="stable")
    elif order.method == "hilbert":
        perm = np.argsort(hilbert_keys(sample, order), kind="stable")
    else:
        perm = np.arange(sample.n)
    rank = np.empty(sample.n, dtype=np.int64)
    rank[perm] = np.arange(sample.n)
    return rank


@dataclass(frozen=True)
class RowGroups:
    """Simulated row groups: per attribute the min/max sample code and a NULL flag per group."""

    part: np.ndarray  # partition index of each group
    rows: np.ndarray  # sample rows in each group
    cmin: dict  # attribute -> int64[groups] (INT64_MAX when the group is all NULL)
    cmax: dict  # attribute -> int64[groups] (-1 when the group is all NULL)
    nulls: dict  # attribute -> bool[groups]


def row_groups(sample: SampleFrame, labels: np.ndarray, order: Ordering, attributes: Sequence[str],
               rows_per_group: float, rank: np.ndarray | None = None) -> RowGroups:
    """Order each partition's sample rows as the writer will, and cut them into row groups."""
    step = max(1, int(round(rows_per_group)))
    rank = global_rank(sample, order) if rank is None else rank
    # One sort: by partition, then by the writer's order inside the partition.
    # One stable sort on a combined key (faster than lexsort on two).
    rows = np.argsort(labels.astype(np.int64) * (int(rank.max(initial=0)) + 1) + rank, kind="stable")
    rows = rows[labels[rows] >= 0]
    part_sorted = labels[rows]
    ordered = [rows] if len(rows) else []
    if ordered:
        starts = np.flatnonzero(np.r_[True, part_sorted[1:] != part_sorted[:-1]])
        ends = np.r_[starts[1:], len(rows)]
        cuts = [np.arange(s, e, step) for s, e in zip(starts, ends)]
        part_of = [np.full(len(c), part_sorted[s], dtype=np.int64) for c, s in zip(cuts, starts)]
    if not ordered:
        empty = np.zeros(0, dtype=np.int64)
        return RowGroups(empty, empty, {}, {}, {})
    cut = np.concatenate(cuts)
    sizes = np.diff(np.append(cut, len(rows)))
    big = np.iinfo(np.int64).max
    cmin, cmax, nulls = {}, {}, {}
    for a in attributes:
        c = sample.codes(a)[rows]
        cmin[a] = np.minimum.reduceat(np.where(c < 0, big, c), cut)
        cmax[a] = np.maximum.reduceat(c, cut)
        nulls[a] = np.maximum.reduceat((c < 0).astype(np.int8), cut).astype(bool)
    return RowGroups(np.concatenate(part_of), sizes, cmin, cmax, nulls)


def candidate_orderings(sample: SampleFrame, filter_counts: Mapping[str, int], max_columns: int = 4,
                        exclude: Sequence[str] = ()) -> list[Ordering]:
    """Sort by the top column, ascending-cardinality sorts, and z-orders of the top 2–4 columns
    (and Hilbert orders of them where they are filtered about equally often)."""
    ranked = [a for a, _ in sorted(filter_counts.items(), key=lambda kv: (-kv[1], kv[0]))
              if sample.has(a) and a not in exclude]
    out: list[Ordering] = []
    if not ranked:
        return out
    out.append(Ordering("sort", (ranked[0],)))
    for k in range(2, min(max_columns, len(ranked)) + 1):
        top = ranked[:k]
        by_card = tuple(sorted(top, key=lambda a: (len(sample.uniques(a)), a)))
        out.append(Ordering("sort", by_card))
        bounds = tuple(zorder_bounds(sample, a) for a in top)
        out.append(Ordering("zorder", tuple(top), bounds))
        if k in CURVE_COLUMNS and filter_counts[top[-1]] >= HILBERT_BALANCE * filter_counts[top[0]]:
            out.append(Ordering("hilbert", tuple(top), bounds))
    return list(dict.fromkeys(out))

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

The cost model simulates the writer (``planner.costmodel.writer``): it orders each partition's
sample rows by ``global_rank``, cuts them into blocks (row groups or pages) of the target size, and
takes each block's min/max per attribute as the box Parquet statistics would give. A scan then
reads the blocks whose box may hold matches.
"""
from __future__ import annotations

import bisect
from typing import Mapping, Sequence

import numpy as np

from planner.costmodel.curves import (
    CURVE_COLUMNS,
    MAX_BUCKETS,
    Z_BUCKET_BITS,
    hilbert_from_z,
)
from planner.costmodel.sample import SampleFrame
from planner.model.layout import Ordering

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
    extremes = sample.non_finite(column)
    if extremes is not None:
        out[extremes[1]] = len(bounds)  # NaN and +inf: the top bucket (-inf is coded 0 already)
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


def order_key(sample: SampleFrame, order: Ordering) -> np.ndarray | None:
    """One sortable key per sample row, for the orderings that sort by a computed value.

    The emitter computes the same key in SQL (``planner.emit``).
    """
    if order.method == "zorder":
        return zorder_keys(sample, order)
    if order.method == "hilbert":
        return hilbert_keys(sample, order)
    if order.method == "tree":
        from planner.costmodel.tree_order import leaf_ids
        return leaf_ids(sample, order)
    return None


def global_rank(sample: SampleFrame, order: Ordering) -> np.ndarray:
    """Position of every sample row in the writer's order. Rows the order leaves tied are in no
    order the writer keeps (``SampleFrame.salt``), unless the order says how to break ties."""
    from planner.costmodel.tree_order import tie_columns

    key = order_key(sample, order)
    if key is not None:
        keys = [key] + [sample.sort_keys(c) for c in tie_columns(order)]
    elif order.method == "sort" and order.columns:
        keys = [sample.sort_keys(c) for c in order.columns]
    else:
        keys = []
    perm = np.lexsort([sample.salt] + keys[::-1])
    rank = np.empty(sample.n, dtype=np.int64)
    rank[perm] = np.arange(sample.n)
    return rank


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

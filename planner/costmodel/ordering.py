"""Order inside partitions, so Parquet row groups can be skipped (Hive index study, sections 4, 5.2, 8).

Two families of orderings are considered:

* ``sort``: a lexicographic sort of the filtered columns by ascending cardinality (the study's
  advice: the low-cardinality column first keeps the later columns clustered within each value),
  or by the single most-filtered column, which is what a DBA does by hand;
* ``zorder``: the bits of 2–4 columns interleaved, each column first bucketed into at most 64
  quantile buckets of the sample (6 bits), so a range on any of the columns touches few row groups.

The cost model simulates the writer (``planner.costmodel.writer``): it orders each partition's
sample rows by ``global_rank``, cuts them into blocks (row groups or pages) of the target size, and
takes each block's min/max per attribute as the box Parquet statistics would give. A scan then
reads the blocks whose box may hold matches.
"""
from __future__ import annotations

import bisect
from typing import Mapping, Sequence

import numpy as np

from planner.costmodel.sample import SampleFrame
from planner.layout import Ordering

Z_BUCKET_BITS = 6


def zorder_bounds(sample: SampleFrame, column: str, buckets: int = 1 << Z_BUCKET_BITS) -> tuple:
    """Quantile boundaries of a column in the sample: value v falls in bucket #{b <= v}."""
    codes = sample.codes(column)
    codes = np.sort(codes[codes >= 0])
    if codes.size == 0:
        return ()
    uniq = sample.uniques(column)
    qs = codes[(np.arange(1, buckets) * codes.size) // buckets]
    return tuple(uniq[c] for c in np.unique(qs) if c > codes[0])


def _bucket(sample: SampleFrame, column: str, bounds: Sequence) -> np.ndarray:
    uniq = sample.uniques(column)
    per_unique = np.array([bisect.bisect_right(bounds, u) for u in uniq] + [0], dtype=np.uint64)
    return per_unique[sample.codes(column)]  # NULL (-1) -> bucket 0, as the SQL's COALESCE does


def zorder_keys(sample: SampleFrame, order: Ordering) -> np.ndarray:
    key = np.zeros(sample.n, dtype=np.uint64)
    cols = [_bucket(sample, c, b) for c, b in zip(order.columns, order.bounds)]
    k = len(cols)
    for bit in range(Z_BUCKET_BITS):
        for j, b in enumerate(cols):
            key |= ((b >> np.uint64(bit)) & np.uint64(1)) << np.uint64(bit * k + j)
    return key


def order_key(sample: SampleFrame, order: Ordering) -> np.ndarray | None:
    """One sortable key per sample row, for the orderings that sort by a computed value.

    The place for further such orderings (a Hilbert curve): the emitter computes the same key in
    SQL (``planner.emit``).
    """
    if order.method == "zorder":
        return zorder_keys(sample, order)
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
    """Sort by the top column, ascending-cardinality sorts, and z-orders of the top 2–4 columns."""
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
        out.append(Ordering("zorder", tuple(top), tuple(zorder_bounds(sample, a) for a in top)))
    return list(dict.fromkeys(out))

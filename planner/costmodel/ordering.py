"""Order inside partitions, so Parquet row groups can be skipped (Hive index study, sections 4, 5.2, 8).

Two families of orderings are considered:

* ``sort``: a lexicographic sort of the filtered columns by ascending cardinality (the study's
  advice: the low-cardinality column first keeps the later columns clustered within each value),
  or by the single most-filtered column, which is what a DBA does by hand;
* ``zorder``: the bits of 2–4 columns interleaved, each column first bucketed into at most 64
  quantile buckets of the sample (6 bits), so a range on any of the columns touches few row groups.

The cost model simulates the writer: it orders each partition's sample rows the same way, cuts
them into row groups of the target size, and takes each group's min/max per attribute as the box
Parquet statistics would give. A scan then reads the row groups whose box may hold matches.
"""
from __future__ import annotations

import bisect
from typing import Mapping, Sequence

import numpy as np

from planner.cnf.values import Kind
from planner.cnf.valueset import Interval, ValueSet
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


def row_order(sample: SampleFrame, rows: np.ndarray, order: Ordering, zkeys: np.ndarray | None = None) -> np.ndarray:
    """The sample rows ``rows`` in the order the writer will lay them out."""
    if order.method == "sort":
        keys = [sample.sort_keys(c)[rows] for c in reversed(order.columns)]
        return rows[np.lexsort(keys)] if keys else rows
    if order.method == "zorder":
        return rows[np.argsort(zkeys[rows], kind="stable")]
    return rows


def row_group_boxes(sample: SampleFrame, labels: np.ndarray, order: Ordering, attributes: Sequence[str],
                    rows_per_group: float, kinds: Mapping[str, Kind]):
    """Per row group: its min/max box over ``attributes``, its partition index and its sample rows."""
    step = max(1, int(round(rows_per_group)))
    zkeys = zorder_keys(sample, order) if order.method == "zorder" else None
    boxes: list[dict[str, ValueSet]] = []
    box_part: list[int] = []
    box_rows: list[int] = []
    by_part = np.argsort(labels, kind="stable")
    sorted_labels = labels[by_part]
    parts, starts = np.unique(sorted_labels, return_index=True)
    ends = list(starts[1:]) + [len(labels)]
    for p, s, e in zip(parts, starts, ends):
        if p < 0:
            continue
        rows = row_order(sample, by_part[s:e], order, zkeys)
        cuts = np.arange(0, len(rows), step)
        sizes = np.diff(np.append(cuts, len(rows)))
        per_attr = {}
        for a in attributes:
            c = sample.codes(a)[rows]
            big = np.iinfo(np.int64).max
            cmin = np.minimum.reduceat(np.where(c < 0, big, c), cuts)
            cmax = np.maximum.reduceat(c, cuts)
            nulls = np.maximum.reduceat((c < 0).astype(np.int8), cuts)
            per_attr[a] = (cmin, cmax, nulls, sample.uniques(a))
        for g in range(len(cuts)):
            box = {}
            for a, (cmin, cmax, nulls, uniq) in per_attr.items():
                if cmax[g] < 0:
                    box[a] = ValueSet.only_null(kinds[a])
                else:
                    box[a] = ValueSet.of(kinds[a], [Interval(uniq[cmin[g]], uniq[cmax[g]], True, True)],
                                         bool(nulls[g]))
            boxes.append(box)
            box_part.append(int(p))
            box_rows.append(int(sizes[g]))
    return boxes, np.asarray(box_part, dtype=np.int64), box_rows


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

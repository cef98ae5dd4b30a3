"""Partitions whose in-partition order appends broke, read from Parquet footers.

A layout sorted by ``c`` is written one sorted run per partition, so the row groups' ``[min, max]``
of ``c`` follow each other: each starts at or after the previous one's end (equal values may
straddle a boundary). An append writes new files whose ranges land anywhere in that run; a
partition whose ranges, put in order, overlap strictly has lost its order and reads more row
groups than the model assumed. Example: [1,5] [5,9] [9,12] is in order; adding [3,7] is not.

Z-ordered layouts keep no z-value in the files; a z-ordered partition counts as broken when it
holds more files than the layout wrote into it (``files_per_partition``, default 1), i.e. when
something was appended. Unordered layouts have no order to break.
"""
from __future__ import annotations

from collections import Counter

from hive_integration.footers import read_footers
from planner.clustering import row_group_ranges
from planner.costmodel.statistics import DataFile
from planner.emit.apply_sql import files_per_partition
from planner.layout import CATCH_ALL, Layout


def out_of_order(ranges: list[tuple]) -> bool:
    """Whether sorted ``(min, max)`` ranges overlap strictly anywhere."""
    ranges = sorted(r for r in ranges if r[0] is not None and r[1] is not None)
    return any(nxt[0] < cur[1] for cur, nxt in zip(ranges, ranges[1:]))


def _pid(f: DataFile, column: str) -> int | None:
    value = dict(f.partition).get(column.lower())
    return int(value) if value is not None and value.lstrip("-").isdigit() else None


def unordered_partitions(spark, table: str, layout: Layout) -> list[int]:
    """Ids of ``table``'s partitions whose order (``layout.order``) appended rows broke: more files
    than the layout wrote, and (sorted layouts) row-group ranges of the first sort column that
    overlap. An append whose values all follow the partition's (new dates) keeps the order."""
    order = layout.order
    if order.method == "none" or not order.columns:
        return []
    pcol = layout.partition_column
    files = read_footers(spark.table(table).inputFiles(), [pcol])
    want = files_per_partition(layout)
    count = Counter(_pid(f, pcol) for f in files)
    grown = {p for p, n in count.items() if p is not None and p != CATCH_ALL and n > want.get(p, 1)}
    if order.method == "zorder":
        return sorted(grown)
    first = order.columns[0]
    ranges: dict[int, list] = {}
    for f in files:
        if _pid(f, pcol) in grown:
            for _, stats in row_group_ranges([f], [first]):
                if first in stats:
                    ranges.setdefault(_pid(f, pcol), []).append(stats[first])
    return sorted(p for p, r in ranges.items() if out_of_order(r))

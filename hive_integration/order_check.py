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

import re

from hive_integration.row_groups import row_group_ranges
from planner.emit.apply_sql import files_per_partition
from planner.layout import CATCH_ALL, Layout


def out_of_order(ranges: list[tuple]) -> bool:
    """Whether sorted ``(min, max)`` ranges overlap strictly anywhere."""
    ranges = sorted(r for r in ranges if r[0] is not None and r[1] is not None)
    return any(nxt[0] < cur[1] for cur, nxt in zip(ranges, ranges[1:]))


def _files_per_partition(files: list[str], column: str) -> dict[int, int]:
    part_re = re.compile(rf"/{re.escape(column)}=(-?\d+)/", re.I)
    out: dict[int, int] = {}
    for f in files:
        m = part_re.search(f)
        if m:
            out[int(m.group(1))] = out.get(int(m.group(1)), 0) + 1
    return out


def unordered_partitions(spark, table: str, layout: Layout) -> list[int]:
    """Ids of ``table``'s partitions whose order (``layout.order``) appended rows broke: more files
    than the layout wrote, and (sorted layouts) row-group ranges of the first sort column that
    overlap. An append whose values all follow the partition's (new dates) keeps the order."""
    order = layout.order
    if order.method == "none" or not order.columns:
        return []
    files = spark.table(table).inputFiles()
    want = files_per_partition(layout)
    grown = {p for p, n in _files_per_partition(files, layout.partition_column).items()
             if p != CATCH_ALL and n > want.get(p, 1)}
    if order.method == "zorder":
        return sorted(grown)
    first = order.columns[0]
    ranges: dict[int, list] = {}
    for part, stats in row_group_ranges(files, [first], layout.partition_column):
        if part in grown and first in stats:
            ranges.setdefault(part, []).append(stats[first])
    return sorted(p for p, r in ranges.items() if out_of_order(r))

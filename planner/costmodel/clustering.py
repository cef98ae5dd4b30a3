"""Clustering depth per column, from row-group [min, max] ranges (Snowflake's figure, per partition).

For one column, a row group's *depth* is the number of row groups of the same partition whose
[min, max] range overlaps its own (itself included). A column the partition is sorted by has depth
1.0: a point query reads one row group. Depth equal to the row groups per partition means every
range overlaps every other: min/max statistics skip nothing. Example: ranges [1,5], [4,9], [10,12]
give depths 2, 2, 1: mean 1.67 of 3 row groups, overlap (1.67 − 1) / (3 − 1) = 33 %.

Row groups without statistics for the column (or only NULLs) are left out.
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Mapping, Sequence

from planner.costmodel.statistics import DataFile


@dataclass(frozen=True)
class ColumnDepth:
    column: str
    depth: float  # mean depth over row groups
    row_groups_per_partition: float
    row_groups: int

    @property
    def overlap(self) -> float:
        """0 = no two ranges overlap, 1 = all do (depth normalised by the row groups per partition)."""
        span = self.row_groups_per_partition - 1
        return 0.0 if span <= 0 else max(0.0, min(1.0, (self.depth - 1) / span))

    def to_json(self) -> dict:
        return {"column": self.column, "depth": round(self.depth, 3),
                "row_groups_per_partition": round(self.row_groups_per_partition, 2),
                "row_groups": self.row_groups, "overlap": round(self.overlap, 4)}


def depths(ranges: Sequence[tuple[Any, Any]]) -> list[int]:
    """Per range, how many ranges (itself included) overlap it: those starting at or before its
    end minus those ending before its start. O(n log n)."""
    lows = sorted(lo for lo, _ in ranges)
    highs = sorted(hi for _, hi in ranges)
    return [bisect_right(lows, hi) - bisect_left(highs, lo) for lo, hi in ranges]


def column_depth(column: str, by_partition: Mapping[Any, Sequence[tuple[Any, Any]]]) -> ColumnDepth | None:
    """``by_partition``: partition -> the (min, max) of ``column`` in each of its row groups."""
    total = count = 0
    parts = 0
    for ranges in by_partition.values():
        ranges = [r for r in ranges if r[0] is not None and r[1] is not None]
        if not ranges:
            continue
        parts += 1
        d = depths(ranges)
        total += sum(d)
        count += len(d)
    if not count:
        return None
    return ColumnDepth(column, total / count, count / parts, count)


def row_group_ranges(files: Iterable[DataFile], columns: Iterable[str]
                     ) -> Iterator[tuple[Any, dict[str, tuple[Any, Any]]]]:
    """Per row group of the footers read (``hive_integration.spark.footers``): its partition (the
    directory values) and column -> (min, max) for ``columns`` with both statistics."""
    wanted = set(columns)
    for f in files:
        for g in f.row_groups or ():
            yield f.partition, {c: (s.min, s.max) for c, s in g.columns.items()
                                if c in wanted and s.min is not None and s.max is not None}


def clustering(columns: Iterable[str], files: Iterable[DataFile]) -> list[ColumnDepth]:
    """Clustering depth of each of ``columns`` over the row groups of ``files``, per partition."""
    columns = list(columns)
    by_col: dict[str, dict[Any, list]] = {c: {} for c in columns}
    for part, stats in row_group_ranges(files, columns):
        for c, rng in stats.items():
            by_col[c].setdefault(part, []).append(rng)
    out = [column_depth(c, parts) for c, parts in by_col.items()]
    return [d for d in out if d is not None]

"""Partitions whose in-partition order appends broke, read from Parquet footers.

A layout sorted by ``c`` is written one sorted run per partition, so the row groups' ``[min, max]``
of ``c`` follow each other: each starts at or after the previous one's end (equal values may
straddle a boundary). An append writes new files whose ranges land anywhere in that run; a
partition whose ranges, put in order, overlap strictly has lost its order and reads more row
groups than the model assumed. Example: [1,5] [5,9] [9,12] is in order; adding [3,7] is not.

One write may leave several sorted files in a partition (one per task when the INSERT does not
shuffle, ``planner.model.write_plan``); their ranges overlap by design and the cost model knows it.
So the runs are told apart by the write that made them: Spark names every file of one write job
``part-NNNNN-<job uuid>…``. A partition is broken when files of a later write overlap the ranges
of an earlier one. Files not named by Spark (Hive's ``000000_0``) fall back to the file count the
layout wrote (``files_per_partition``, default 1).

Z-ordered layouts keep no z-value in the files; a z-ordered partition counts as broken when it
holds files of more than one write (or, unnamed, more files than the layout wrote), i.e. when
something was appended. Unordered layouts have no order to break.
"""
from __future__ import annotations

import re
from collections import defaultdict

from hive_integration.spark.footers import read_footers
from planner.costmodel.clustering import row_group_ranges
from planner.costmodel.statistics import DataFile
from planner.model.layout import CATCH_ALL, Layout
from planner.model.write_plan import files_per_partition


def out_of_order(ranges: list[tuple]) -> bool:
    """Whether sorted ``(min, max)`` ranges overlap strictly anywhere."""
    ranges = sorted(r for r in ranges if r[0] is not None and r[1] is not None)
    return any(nxt[0] < cur[1] for cur, nxt in zip(ranges, ranges[1:]))


_SPARK_FILE = re.compile(r"part-\d+-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})")


def write_of(path: str) -> str | None:
    """The write job that made a file, from Spark's file name (None for other writers)."""
    m = _SPARK_FILE.search(path.rsplit("/", 1)[-1])
    return m.group(1) if m else None


def runs_out_of_order(runs: list[list[tuple]]) -> bool:
    """Whether the ranges of any two runs (each a list of ``(min, max)``) overlap strictly."""
    known = [[r for r in run if r[0] is not None and r[1] is not None] for run in runs]
    hulls = [(min(r[0] for r in k), max(r[1] for r in k)) for k in known if k]
    return out_of_order(hulls) if len(hulls) > 1 else False


def _pid(f: DataFile, column: str) -> int | None:
    value = dict(f.partition).get(column.lower())
    return int(value) if value is not None and value.lstrip("-").isdigit() else None


def unordered_partitions(spark, table: str, layout: Layout) -> list[int]:
    """Ids of ``table``'s partitions whose order (``layout.order``) appended rows broke: files of
    more than one write, and (sorted layouts) a later write's range of the first sort column
    overlapping an earlier one's. An append whose values all follow the partition's (new dates)
    keeps the order."""
    order = layout.order
    if order.method == "none" or not order.columns:
        return []
    pcol = layout.partition_column
    files = read_footers(spark.table(table).inputFiles(), [pcol])
    want = files_per_partition(layout)
    by_pid: dict[int, list[DataFile]] = defaultdict(list)
    for f in files:
        p = _pid(f, pcol)
        if p is not None and p != CATCH_ALL:
            by_pid[p].append(f)

    def appended(p: int) -> bool:  # files of more than one write (unnamed files: more than were written)
        writes = {write_of(f.path) for f in by_pid[p]}
        return len(by_pid[p]) > want.get(p, 1) if None in writes else len(writes) > 1

    grown = {p for p in by_pid if appended(p)}
    if order.method != "sort":
        return sorted(grown)
    first = order.columns[0]
    broken = []
    for p in sorted(grown):
        runs: dict[str | None, list] = defaultdict(list)
        for f in by_pid[p]:
            key = write_of(f.path) or f.path  # unnamed files: each its own run
            runs[key] += [stats[first] for _, stats in row_group_ranges([f], [first]) if first in stats]
        if runs_out_of_order(list(runs.values())):
            broken.append(p)
    return broken

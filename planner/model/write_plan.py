"""How the INSERT moves rows: where they are read, or shuffled to one writer per partition.

A layout is written in one pass over the source. What that pass must do depends on the layout:

* **every row in one partition** (no partitioning, maybe an order): a *static* partition,
  ``PARTITION (planner_pid = 1)``. The engine's dynamic-partition writer is not involved, so it
  asks for no sort of its own, and an order is one single-key sort (Spark: a radix sort);
* **few partitions**: no shuffle. Each task writes the partitions of the rows it read, one file
  per partition it holds, sorted there when the layout has an order. Files: up to
  ``splits × partitions``;
* **many partitions**: a shuffle by partition (Spark: ``/*+ REBALANCE(planner_pid) */``, which
  splits a skewed partition into target-size pieces and merges tiny ones; Hive: ``DISTRIBUTE BY
  planner_pid`` plus a salt for the partitions the write hints give several files), so each
  partition gets about ``ceil(bytes / target file size)`` files.

"Few" is a file budget: writing where the rows are read may multiply the files the shuffle would
write by at most ``LOCAL_FILE_FACTOR`` (or stay under ``LOCAL_MIN_FILES``). An *ordered* layout also
needs its sorted runs: the cost model prices each partition as ``files`` runs of its order, and a
write without a shuffle leaves one run per split in every partition, which overlap unless the order
leads with the column the source is clustered on (hint ``source_clustered``: the runs are then
disjoint ranges of it, as good as one). So an ordered layout is written without a shuffle only when
the splits are no more than the runs the model priced (the files, or the ``write_runs`` hint that
advice records when it priced one run per split and found it cheap enough:
``planner.advice.ranking.written_where_read``), or the order is aligned with the source. SF 1 lineitem, 220 MB
in 2 splits, 12 partitions: 24 files against 12, so no shuffle; SF 10, 18 splits: 216 files
against about 24, so a shuffle. A shuffle costs about half a copy of the table (the rows are
serialized, compressed, written and read back), which is why it is worth avoiding.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping

from planner.model.layout import CATCH_ALL, Layout

DEFAULT_SPLIT_BYTES = 128 * 1024 * 1024  # spark.sql.files.maxPartitionBytes, a typical HDFS block
LOCAL_FILE_FACTOR = 4
LOCAL_MIN_FILES = 64
UNKNOWN_SIZE_LOCAL_PARTITIONS = 8  # without the table's size: no shuffle up to this many partitions


@dataclass(frozen=True)
class WritePlan:
    shuffle: bool
    static_partition: int | None = None  # every row lands in this partition
    files: Mapping[int, int] = field(default_factory=dict)  # files per partition id (Hive's salt)
    reason: str = ""

    def describe(self) -> str:
        how = ("static partition" if self.static_partition is not None
               else "shuffled to one writer per partition" if self.shuffle else "written where read, no shuffle")
        return f"{how} ({self.reason})" if self.reason else how


def files_per_partition(layout: Layout) -> dict[int, int]:
    """Files to write per partition id, from the layout's write hints (1 when not given)."""
    hinted = dict(layout.meta).get("files_per_partition") or {}
    return {int(k): int(v) for k, v in hinted.items() if int(v) > 1}


def static_partition(layout: Layout) -> int | None:
    """The partition every row lands in, if the first region is the whole table."""
    parts = [p for p in layout.partitions if p.id != CATCH_ALL]
    if not parts:
        return CATCH_ALL
    whole = all(vs.is_everything() for _, vs in parts[0].region)
    return parts[0].id if whole else None


def _aligned(layout: Layout) -> bool:
    """A sort whose first key the source is clustered on: each split's run is a range of its own."""
    clustered = dict(layout.meta).get("source_clustered") or []
    return layout.order.method == "sort" and bool(layout.order.columns) and layout.order.columns[0] in clustered


def _partitions_written(layout: Layout) -> list[int]:
    """Partition ids expected to hold rows: those with estimated rows, else all but the catch-all."""
    rows = dict(layout.meta).get("partition_rows") or {}
    ids = [p.id for p in layout.partitions if p.id != CATCH_ALL]
    if rows:
        ids = [i for i in ids if float(rows.get(str(i), 1)) > 0] or ids[:1]
    return ids


def write_plan(layout: Layout, *, table_bytes: int | None = None, split_bytes: int = DEFAULT_SPLIT_BYTES,
               shuffle: bool | None = None, files: Mapping[int, int] | None = None) -> WritePlan:
    """The write plan for ``layout``; ``table_bytes`` (default: the ``table_bytes`` write hint) sizes
    the splits, ``shuffle`` forces the choice, ``files`` overrides the files-per-partition hints."""
    files = dict(files_per_partition(layout) if files is None else {k: v for k, v in files.items() if v > 1})
    static = static_partition(layout)
    if static is not None:
        return WritePlan(False, static, files, "every row lands in one partition")
    if shuffle is not None:
        return WritePlan(shuffle, None, files, "as asked")
    ids = _partitions_written(layout)
    size = table_bytes if table_bytes is not None else dict(layout.meta).get("table_bytes")
    if size is None:
        local = len(ids) <= UNKNOWN_SIZE_LOCAL_PARTITIONS
        return WritePlan(not local, None, files, f"{len(ids)} partitions, table size unknown")
    splits = max(1, math.ceil(int(size) / split_bytes))
    priced = int(dict(layout.meta).get("write_runs") or 1)  # runs per partition the model priced
    runs = [i for i in ids if max(files.get(i, 1), priced) < splits]
    if layout.order.method != "none" and runs and not _aligned(layout):
        return WritePlan(True, None, files, f"ordered: without a shuffle {len(runs)} of {len(ids)} partitions would hold "
                                            f"{splits} overlapping sorted runs, the cost model prices fewer")
    local_files = splits * len(ids)
    shuffled_files = sum(max(1, files.get(i, 1)) for i in ids)
    local = local_files <= max(LOCAL_FILE_FACTOR * shuffled_files, LOCAL_MIN_FILES)
    return WritePlan(not local, None, files,
                     f"{len(ids)} partitions × {splits} splits: up to {local_files} files without a shuffle, "
                     f"{shuffled_files} with one")

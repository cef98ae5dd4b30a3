"""How the writer lays a layout's rows into files and blocks, simulated on the sample.

The emitted ``INSERT OVERWRITE … DISTRIBUTE BY planner_pid[, salt] SORT BY planner_pid, <order>``
(``planner.emit.apply_sql``) writes each partition into ``k`` files (``k`` from the target file
size; the salt is a hash of the row, so each file gets a random ``1/k`` of the partition), each
file sorted by the layout's order, ties in the order the rows arrive (the source's order), and
cut into row groups and pages. So on the sample:

1. every row gets its partition (``labels``) and, where a partition has several files, a file
   from a fixed pseudo-random salt (``SampleFrame.salt``); a layout written without a shuffle
   (``planner.model.write_plan``) has a file per input split instead, holding that split's rows
   (``CostModel.splits``: a table loaded in ``l_orderkey`` order leaves each file one range of it);
2. the rows of each (partition, file) are ordered by the layout's order (``rank``, ties at
   random: ``planner.costmodel.ordering.global_rank``);
3. each (partition, file) is cut into blocks of ``rows_per_block`` table rows, and each block's
   box is the min and max of its sample codes per attribute (``planner.costmodel.blocks``),
   widened by one sample spacing on each side: a block of ``R`` rows shows ``m`` of them in the
   sample, and its real extremes lie about ``(max - min) / m`` codes beyond the sampled ones (for
   a column the block is not sorted on, the box of 167 sampled rows is the 0.6 % to 99.4 %
   quantile range of the block's values, the real box nearly 0 % to 100 %: a range at the edge
   of a partition's values is read, not skipped). A block sorted on the column spans a few codes,
   and is not widened.

Without an order (``rank`` is ``None``) a partition is one block without a box: its rows come in
whatever order Spark's merge leaves them, and a sample box of a small partition would be far
narrower than the real one, so only partition pruning is counted.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from planner.costmodel.blocks import NO_VALUE, Blocks, lazy_boxes
from planner.costmodel.sample import SampleFrame


def simulated_blocks(sample: SampleFrame, labels: np.ndarray, files: np.ndarray, rank: np.ndarray | None,
                     attributes: Sequence[str], rows_per_page: float, scale: float,
                     rows_per_group: float | None = None, split: np.ndarray | None = None) -> Blocks:
    """Blocks of a layout on the sample.

    ``labels``: partition of each sample row (-1: none). ``files[p]``: files partition ``p`` is
    written into. ``rank``: each row's position in the layout's order (ties already broken by
    the source order), or ``None`` when the rows of a file are in no known order. Each file is
    cut into row groups of ``rows_per_group`` table rows and those into pages (blocks) of
    ``rows_per_page``. Boxes are computed for ``attributes`` on first use. ``split``: each
    sample row's input split, for a write without a shuffle (a file per split and partition,
    holding that split's rows); ``None``: files get rows at random (the salt).
    """
    keep = np.flatnonzero(labels >= 0)
    lab = labels[keep]
    k = np.asarray(files, dtype=np.int64)[lab] if len(keep) else np.zeros(0, dtype=np.int64)
    s = sample.salt[keep]
    if rank is None:
        file_no = np.zeros(len(keep), dtype=np.int64)
    elif split is not None:
        file_no = split[keep]
    else:
        file_no = np.where(k > 1, s % np.maximum(k, 1), 0)
    n = sample.n + 1
    within = np.zeros(len(keep), dtype=np.int64) if rank is None else rank[keep]
    width = max(int(np.max(files, initial=1)), int(np.max(file_no, initial=0)) + 1) + 1
    key = (lab * width + file_no) * n + within
    order = np.argsort(key, kind="stable")
    rows = keep[order]
    group = (lab * width + file_no)[order]
    if len(rows) == 0:
        empty = np.zeros(0, dtype=np.int64)
        return Blocks(empty, empty.astype(float), {}, {}, {}, {})
    starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
    run = np.cumsum(np.r_[True, group[1:] != group[:-1]]) - 1
    at = np.arange(len(rows)) - starts[run]  # position inside its (partition, file)
    if rank is None:
        cut, row_group = starts, np.arange(len(starts))
    else:
        page = max(1, int(round(rows_per_page / scale))) if scale > 0 else len(rows)
        rg = max(page, int(round((rows_per_group or rows_per_page) / scale))) if scale > 0 else len(rows)
        cut = np.flatnonzero((at % rg) % page == 0)  # pages restart at every row group
        row_group = run[cut] * (len(rows) // rg + 1) + at[cut] // rg
    sizes = np.diff(np.append(cut, len(rows)))
    part = lab[order][cut]

    def box(a: str) -> tuple:
        c = sample.codes(a)[rows]
        lo = np.minimum.reduceat(np.where(c < 0, NO_VALUE, c), cut)
        hi = np.maximum.reduceat(c, cut)
        has = hi >= 0
        spread = np.where(has, (hi - np.where(has, lo, 0)) // np.maximum(sizes, 1), 0)
        top = len(sample.uniques(a)) - 1
        lo = np.where(has, np.maximum(lo - spread, 0), lo)
        hi = np.where(has, np.minimum(hi + spread, top), hi)
        return sample.uniques(a), lo, hi, np.maximum.reduceat((c < 0).astype(np.int8), cut).astype(bool)

    values, cmin, cmax, nulls = lazy_boxes(attributes if rank is not None else (), box)
    _, group_no = np.unique(row_group, return_inverse=True)
    row_group_of = np.repeat(group_no, sizes)

    known: dict[str, tuple] = {}

    def members(a: str) -> tuple[np.ndarray, np.ndarray]:
        if a not in known:
            c = sample.codes(a)[rows]
            keep = c >= 0
            order = np.argsort(c[keep], kind="stable")
            known[a] = c[keep][order], row_group_of[keep][order]
        return known[a]

    group_of = np.full(sample.n, -1, dtype=np.int64)
    group_of[rows] = row_group_of
    return Blocks(part.astype(np.int64), sizes.astype(float) * scale, values, cmin, cmax, nulls,
                  group=row_group.astype(np.int64), sampled=sizes.astype(float), members=members, group_of=group_of)


__all__ = ["simulated_blocks"]

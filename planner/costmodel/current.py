"""The table as it is now: always a contender, priced from its real physical order.

Its partitions are the table's Hive partitions (one region of points per partition directory,
``year=1994`` -> ``{year: {1994}}``; NULL for Hive's default partition), and its blocks are its
real row groups, with the min, max and NULL count the Parquet footers give for every column
(``TableStats.data_files``): no sample is needed to price it, and Spark skips exactly what these
boxes exclude. Partition columns are constant inside a file, so their box is the partition value.

Where the footers cannot be read (files not on a local file system), the sample's positions
(data file and row number of each sample row, ``SampleFrame.source_ordered``) stand in: a sample
row belongs to row group ``row // rows_per_group`` of its file, and that group's box is the
range of the sample values it holds (a sampled box, see ``planner.costmodel.blocks``). Without
positions either, nothing is known about the order, and each file is one block.
"""
from __future__ import annotations

import bisect
import math
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from planner.cnf.values import coerce
from planner.cnf.valueset import ValueSet
from planner.costmodel.blocks import NO_VALUE, Blocks
from planner.costmodel.sample import SampleFrame
from planner.costmodel.statistics import DataFile, TableStats
from planner.model.layout import Layout, Partition
from planner.semantics.kinds import Kind

CURRENT = "current table"
PARQUET_BLOCK_BYTES = 128 * 1024 * 1024  # parquet.block.size when nothing says otherwise


@dataclass(frozen=True, eq=False)
class CurrentTable:
    layout: Layout
    blocks: Blocks
    partition_rows: np.ndarray  # table rows per partition
    files: np.ndarray  # data files per partition
    source: str  # "footers" | "sample positions" | "unknown order"

    @property
    def exact(self) -> bool:
        return self.source == "footers"


def is_current(layout: Layout) -> bool:
    return layout.strategy == CURRENT


def _partition_value(raw: str | None, kind: Kind):
    if raw is None:
        return None
    if kind is Kind.BOOLEAN:
        return {"true": True, "false": False}.get(raw.strip().lower())
    return coerce(raw, kind)


def _regions(specs: Sequence[tuple], kinds: Mapping[str, Kind]) -> list[tuple]:
    """A region per Hive partition: each partition column at its value (NULL: default partition)."""
    out = []
    for spec in specs:
        region = []
        for col, raw in spec:
            kind = kinds.get(col)
            if kind is None or not kind.orderable:
                continue
            v = _partition_value(raw, kind)
            if raw is None:
                region.append((col, ValueSet.only_null(kind)))
            elif v is not None:
                region.append((col, ValueSet.points(kind, [v])))
            # a value we cannot read: no region on that column (never pruned by it)
        out.append(tuple(region))
    return out


def _layout(table: str, regions: list[tuple], kinds: Mapping[str, Kind]) -> Layout:
    used = dict.fromkeys(a for r in regions for a, _ in r)
    parts = tuple(Partition(i + 1, r) for i, r in enumerate(regions)) or (Partition(1, ()),)
    return Layout(table, CURRENT, parts, kinds=tuple((a, kinds[a]) for a in used))


def _specs(files: Sequence[DataFile]) -> tuple[list[tuple], np.ndarray]:
    index: dict[tuple, int] = {}
    of_file = np.array([index.setdefault(f.partition, len(index)) for f in files], dtype=np.int64)
    return list(index) or [()], of_file


def _box(st, kind: Kind, rows: int):
    """(min, max, nulls) of one column in one row group, or ``None`` when unknown: no statistics,
    or values that do not coerce to the column's kind (never guessed)."""
    if st is None:
        return None
    if st.min is None or st.max is None:
        return (None, None, st.nulls) if st.nulls == rows else None  # only NULLs
    lo, hi = coerce(st.min, kind), coerce(st.max, kind)
    return None if lo is None or hi is None else (lo, hi, st.nulls)


def from_footers(stats: TableStats, kinds: Mapping[str, Kind]) -> CurrentTable:
    files = stats.data_files
    specs, of_file = _specs(files)
    part, rows, per_attr, encoded, bloom = [], [], {}, {}, {}
    attrs = [a for a, k in kinds.items() if k.orderable and stats.column(a) is not None]
    for f, p in zip(files, of_file):
        constant = dict(f.partition)
        for g in f.row_groups:
            part.append(p)
            rows.append(g.rows)
            for a in attrs:
                if a in constant:  # a partition column: one value in the whole file
                    raw = constant[a]
                    v = _partition_value(raw, kinds[a])
                    box = (None, None, g.rows) if raw is None else None if v is None else (v, v, 0)
                    chunk = None
                else:
                    chunk = g.columns.get(a)
                    box = _box(chunk, kinds[a], g.rows)
                per_attr.setdefault(a, []).append(box)
                encoded.setdefault(a, []).append(chunk is None or chunk.dictionary)
                bloom.setdefault(a, []).append(chunk is not None and chunk.bloom)
    values, cmin, cmax, nulls, unknown = {}, {}, {}, {}, {}
    for a, boxes in per_attr.items():
        seen = sorted({v for b in boxes if b is not None for v in b[:2] if v is not None})
        code = {v: i for i, v in enumerate(seen)}
        values[a] = seen
        cmin[a] = np.array([NO_VALUE if b is None or b[0] is None else code[b[0]] for b in boxes], dtype=np.int64)
        cmax[a] = np.array([-1 if b is None or b[1] is None else code[b[1]] for b in boxes], dtype=np.int64)
        nulls[a] = np.array([b is None or b[2] is None or b[2] > 0 for b in boxes], dtype=bool)
        unknown[a] = np.array([b is None for b in boxes], dtype=bool)
    blocks = Blocks(np.array(part, dtype=np.int64), np.array(rows, dtype=float), values, cmin, cmax, nulls,
                    exact=True, unknown=unknown, dictionary={a: np.array(e, dtype=bool) for a, e in encoded.items()},
                    bloom={a: np.array(f, dtype=bool) for a, f in bloom.items() if any(f)})
    prows = np.bincount(of_file, weights=[f.rows for f in files], minlength=len(specs)).astype(float)
    nfiles = np.bincount(of_file, minlength=len(specs)).astype(float)
    return CurrentTable(_layout(stats.table, _regions(specs, kinds), kinds), blocks, prows, nfiles, "footers")


def from_sample(stats: TableStats, sample: SampleFrame, kinds: Mapping[str, Kind],
                attributes: Sequence[str]) -> CurrentTable:
    """The fallback: row groups reconstructed from the sample rows' positions (or one block per
    file when the sample has none)."""
    scale = stats.rows / max(sample.n, 1)
    listed = stats.data_files or ()
    by_path = {f.path: f.partition for f in listed}
    if sample.source_ordered:
        specs_of = [by_path.get(name, ()) for name in sample.files]
        index: dict[tuple, int] = {}
        spec_no = np.array([index.setdefault(s, len(index)) for s in specs_of], dtype=np.int64)
        specs = list(index) or [()]
        per_group = stats.row_group_rows or max(1, int(stats.rows * PARQUET_BLOCK_BYTES / max(stats.bytes, 1)))
        group = sample.row_in_file // per_group
        key = sample.file_of * (int(group.max(initial=0)) + 1) + group
        labels = spec_no[sample.file_of]
        source = "sample positions"
    else:
        specs, key, labels, source = [()], np.zeros(sample.n, dtype=np.int64), np.zeros(sample.n, dtype=np.int64), \
            "unknown order"
    cut = np.flatnonzero(np.r_[True, key[1:] != key[:-1]]) if sample.n else np.zeros(0, dtype=np.int64)
    sizes = np.diff(np.append(cut, sample.n))
    values, cmin, cmax, nulls = {}, {}, {}, {}
    for a in attributes:
        c = sample.codes(a)
        values[a] = sample.uniques(a)
        cmin[a] = np.minimum.reduceat(np.where(c < 0, NO_VALUE, c), cut) if sample.n else np.zeros(0, np.int64)
        cmax[a] = np.maximum.reduceat(c, cut) if sample.n else np.zeros(0, np.int64)
        nulls[a] = np.maximum.reduceat((c < 0).astype(np.int8), cut).astype(bool) if sample.n else np.zeros(0, bool)
    part = labels[cut] if sample.n else np.zeros(0, dtype=np.int64)
    block_of = np.repeat(np.arange(len(sizes)), sizes)

    known: dict[str, tuple] = {}

    def members(a: str) -> tuple[np.ndarray, np.ndarray]:
        if a not in known:
            c = sample.codes(a)
            keep = c >= 0
            order = np.argsort(c[keep], kind="stable")
            known[a] = c[keep][order], block_of[keep][order]
        return known[a]

    blocks = Blocks(part.astype(np.int64), sizes.astype(float) * scale, values, cmin, cmax, nulls,
                    sampled=sizes.astype(float), members=members)
    prows = np.bincount(labels, minlength=len(specs)).astype(float) * scale
    counts: dict[tuple, int] = {}
    for f in listed:
        counts[f.partition] = counts.get(f.partition, 0) + 1
    nfiles = np.array([counts.get(s, max(1, math.ceil(stats.files / len(specs)))) for s in specs], dtype=float)
    return CurrentTable(_layout(stats.table, _regions(specs, kinds), kinds), blocks, prows, nfiles, source)


def clustering(current: CurrentTable, sample: SampleFrame) -> dict[str, float]:
    """How tightly the table is clustered on each column now: the mean share of the column's rows
    a block's box spans (the sample's distribution between the box's min and max).

    A table loaded in ``l_orderkey`` order has boxes of about ``1 / blocks`` of the key's range
    (0.0025 for lineitem's 411 row groups); an unclustered column spans nearly all of it (~1).
    """
    b = current.blocks
    out = {}
    for a in b.cmin:
        if not sample.has(a) or a in sample.derived:
            continue
        codes = np.sort(sample.codes(a)[sample.codes(a) >= 0])
        has = b.cmax[a] >= 0
        if codes.size < 2 or not has.any():
            continue
        lo_code, hi_code = _sample_codes(b, a, sample.uniques(a), has)
        below = np.searchsorted(codes, lo_code, side="left")
        upto = np.searchsorted(codes, hi_code, side="right")
        share = (upto - below) / codes.size
        out[a] = float(np.average(share, weights=b.rows[has]))
    return out


def _sample_codes(b, a: str, uniq, which: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The boxes of blocks ``which`` on ``a`` as codes of the sample's values ``uniq``: the
    sample values inside each box are ``lo..hi`` (exact boxes: their values placed among the
    sample's)."""
    if b.values[a] is uniq:
        return b.cmin[a][which], b.cmax[a][which]
    values = b.values[a]
    return (np.array([bisect.bisect_left(uniq, values[c]) for c in b.cmin[a][which]], dtype=np.int64),
            np.array([bisect.bisect_right(uniq, values[c]) - 1 for c in b.cmax[a][which]], dtype=np.int64))


def clustered(current: CurrentTable, sample: SampleFrame, limit: float = 0.2) -> list[str]:
    """Columns the table is clustered on now (``clustering`` at most ``limit``), tightest first."""
    widths = clustering(current, sample)
    return [a for a, w in sorted(widths.items(), key=lambda kv: kv[1]) if w <= limit]


def positions(current: CurrentTable, sample: SampleFrame, column: str) -> np.ndarray:
    """Each sample row's position in the table (rows before it, blocks in file order), placed by
    the block whose box on ``column`` holds its value (the first, by box start); a row no box
    holds (NULL, or a value between boxes) gets a random position (``SampleFrame.salt``)."""
    b = current.blocks
    start = np.r_[0.0, np.cumsum(b.rows)[:-1]]
    has = np.flatnonzero(b.cmax[column] >= 0)
    lo, hi = _sample_codes(b, column, sample.uniques(column), has)
    order = np.argsort(lo, kind="stable")
    codes = sample.codes(column)
    k = np.searchsorted(lo[order], codes, side="right") - 1
    held = (codes >= 0) & (k >= 0) & (hi[order][np.maximum(k, 0)] >= codes)
    block = has[order][np.maximum(k, 0)]
    random = (sample.salt % max(int(b.rows.sum()), 1)).astype(float)
    return np.where(held, start[block] + b.rows[block] / 2, random)


def current_table(stats: TableStats, sample: SampleFrame, kinds: Mapping[str, Kind],
                  attributes: Sequence[str]) -> CurrentTable:
    """The current table, from its footers when every file's footer was read."""
    if stats.data_files and all(f.row_groups is not None for f in stats.data_files):
        return from_footers(stats, kinds)
    return from_sample(stats, sample, kinds, attributes)


__all__ = ["CURRENT", "CurrentTable", "clustered", "clustering", "current_table", "from_footers", "from_sample",
           "is_current", "positions"]

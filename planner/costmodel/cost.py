"""The cost model: rows and bytes each scan must read under a layout (CPS section 4.3, extended).

    Cost(L) = Σ_scans weight(q) · [ Σ_blocks read(b, q) · rows(b) + overhead(q) ]

* A *block* is the unit Parquet skips: a row group, or a page where the writer cuts pages
  smaller (``planner.costmodel.blocks``). ``read(b, q)`` is 0 when ``b``'s partition cannot hold
  matches (``planner.pruning.hits``: the partitions a rewritten query reads) or when ``b``'s min/max box
  excludes ``q``'s predicate (Parquet statistics, as Spark pushes them).
* A scan filtered through inner joins (``ScanAnalysis.induced``) also skips a new layout's
  partitions none of whose rows joins a row its joined filter allows, as the rewrite does by the
  join ranges apply records (``planner.costmodel.joined``, on the sample joined at statistics time).
* A new layout's blocks are simulated on the sample (``planner.costmodel.writer``): partitions,
  files, the order inside them (ties at random: Spark's sort does not keep the source's order),
  cut into blocks of ``min(row_group_rows, page_rows)`` rows. The table as it is now
  (``planner.costmodel.current``) is priced from its real row groups instead: exact.
* Bytes are rows times the summed on-disk width of the columns the query reads (Parquet reads only
  referenced columns).
* ``weight(q)`` is 1 per query instance (repeats count); ``aggregation_factor`` doubles queries
  with aggregation as in the CPS paper.
* Every partition and every file opened costs a fixed number of row-equivalents (``overhead``), so
  thousands of tiny partitions are not free. ``LayoutCost.total`` = rows + overhead is what the
  search ranks by.

Sizes come from the sample (``SampleFrame``), scaled to the table.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from planner.analysis.table_analysis import ScanAnalysis, TableAnalysis
from planner.costmodel.blocks import BlockReader
from planner.costmodel.bloom import rates as bloom_rates
from planner.costmodel.current import CurrentTable, current_table, is_current
from planner.costmodel.sample import SampleFrame
from planner.costmodel.selectivity import Selectivity
from planner.costmodel.statistics import TableStats
from planner.costmodel.timing import ScanWork, TimeParams, scan_seconds
from planner.costmodel.writer import simulated_blocks
from planner.model.layout import Layout
from planner.pruning.hits import hit_matrix
from planner.semantics.kinds import Kind


@dataclass(frozen=True)
class CostParams:
    # Opening a partition (listing, planning) and a file (its footer), in row-equivalents: what the
    # partitioning algorithms trade against rows read. None: derived from ``time`` (the seconds a
    # partition and a file take, over the seconds a row of the workload's columns takes).
    partition_overhead_rows: float | None = None
    file_overhead_rows: float | None = None
    target_file_bytes: int = 128 * 1024 * 1024
    row_group_rows: int = 15_000  # rows per Parquet row group the layout is written with
    # Rows per Parquet page the layout is written with (parquet.page.row.count.limit). Spark skips
    # pages by their column index, so a page is the finest unit it skips: three times finer than
    # 15,000-row groups. Finer pages cost more to decode than they save (benchmarks/results/page_size_sf1.md).
    page_rows: int = 5_000
    min_partition_bytes: int = 4 * 1024 * 1024
    max_partitions: int = 1_000  # hive.exec.max.dynamic.partitions
    aggregation_factor: bool = False
    # The guard (planner.advice.guard): no query may take more than this times its time on the
    # table as it is *and* more than the slack longer, unless regressions are allowed. The slack
    # is ``guard_slack_seconds``, or ``guard_slack_share`` of a full scan of the table where that
    # is less: what a user notices.
    guard_threshold: float = 1.2
    guard_slack_seconds: float = 0.2
    guard_slack_share: float = 0.1
    allow_regressions: bool = False
    # Seconds per partition, file, row group, row and byte (planner calibrate; else the defaults)
    time: TimeParams = TimeParams()
    # The robustness set's share of the score (planner.costmodel.search): 0.1 weighs it like a
    # tenth of the workload's volume.
    robustness_weight: float = 0.1
    # Columns the robustness set probes besides those the workload filters (``--robustness-column``):
    # columns the user expects ad-hoc queries on. A column nobody filters (a free-text note) does
    # not decide a layout.
    robustness_columns: tuple[str, ...] = ()
    # An ordered pick is written where its rows are read, skipping the shuffle that gives each
    # partition one sorted run, when the runs the splits leave (``write_runs``) cost the workload at
    # most this share more (``planner.advice.ranking``): a shuffle of every row costs a build more
    # than a few per cent more rows read cost the workload.
    local_write_tolerance: float = 0.02

    @property
    def block_rows(self) -> int:
        """Rows of the finest unit Parquet skips in a layout the planner writes."""
        return max(1, min(self.row_group_rows, self.page_rows or self.row_group_rows))


@dataclass(frozen=True)
class ScanCost:
    query: int
    rows: float
    bytes: float
    partitions: int
    overhead: float
    seconds: float = 0.0  # the estimated wall time (planner.costmodel.timing)
    files: float = 0.0
    row_groups: float = 0.0


@dataclass(frozen=True)
class LayoutCost:
    layout: Layout = field(repr=False)
    rows: float
    bytes: float
    overhead: float
    per_scan: tuple[ScanCost, ...] = field(repr=False)
    partition_rows: tuple[float, ...] = field(repr=False, default=())
    robustness: float = 0.0  # seconds the robustness set takes, weighted into the score (search)
    verdict: Any = field(repr=False, default=None)  # planner.advice.guard.Verdict, when guarded
    seconds: float = 0.0  # the workload's estimated wall time, weights applied

    @property
    def total(self) -> float:
        """Rows read plus the overhead charged for partitions and files opened, in rows: the
        row-denominated proxy of time the partitioning algorithms optimise."""
        return self.rows + self.overhead

    @property
    def score(self) -> float:
        """What the search ranks by: the workload's seconds plus the robustness term."""
        return self.seconds + self.robustness

    @property
    def allowed(self) -> bool:
        """No query regresses against the table as it is (or the layout was not guarded)."""
        return self.verdict is None or self.verdict.ok


class LayoutCache:
    """What evaluating a layout computes without looking at the scans (partition labels, the
    writer's order, the blocks, code ranges on the sample's values): shared by the models of one
    table, so the workload's and the robustness set's model compute it once per layout."""

    def __init__(self):
        self.labels: dict[int, tuple] = {}  # id(partitions) -> (partitions, labels)
        self.ranks: dict = {}
        self.blocks: dict[tuple, tuple] = {}  # (id(partitions), order) -> (partitions, blocks)
        self.ranges: dict = {}
        self.current = None
        self.population = None

    def keyed(self, table: dict, key, owner, make):
        got = table.get(key)
        if got is None or got[0] is not owner:
            if len(table) > 64:
                table.clear()  # layouts come and go during a search: keep memory bounded
            got = table[key] = (owner, make())
        return got[1]


class CostModel:
    """Evaluates layouts for one table's analysed workload against its statistics.

    ``sample`` and ``cache``: share an encoded ``SampleFrame`` and a ``LayoutCache`` with another
    model of the same table (the robustness set's: ``CostModel.sibling``).
    """

    def __init__(self, analysis: TableAnalysis, stats: TableStats, params: CostParams = CostParams(),
                 weights: Sequence[float] | None = None, query_has_aggregation: Sequence[bool] | None = None,
                 sample: SampleFrame | None = None, cache: LayoutCache | None = None):
        self.analysis = analysis
        self.stats = stats
        self.params = params
        self.scans: tuple[ScanAnalysis, ...] = analysis.scans
        self.sample = sample if sample is not None else SampleFrame(stats.sample, analysis.derived)
        self.scale = stats.rows / max(self.sample.n, 1)
        w = np.ones(len(self.scans)) if weights is None else np.asarray(weights, dtype=float)
        if params.aggregation_factor and query_has_aggregation is not None:
            w = w * np.where(np.asarray(query_has_aggregation, dtype=bool), 2.0, 1.0)
        self.weights = w
        widths = stats.widths
        all_width = sum(widths.values()) or 1.0
        self.row_bytes = all_width
        self.scan_width = np.array([
            sum(widths.get(c, 0.0) for c in s.columns) if s.columns else all_width for s in self.scans])
        self.cache = cache if cache is not None else LayoutCache()
        self._splits: np.ndarray | None = None
        from planner.costmodel.joined import JoinPricing
        self.joins = JoinPricing(self.scans, self.sample, dict(stats.joined), analysis.settings)
        # the table's attributes, and the joined ones the sample carries (a sideways cut may cut on them)
        self.kinds: Mapping[str, Kind] = dict(analysis.kinds) | {
            a: k for a, k in self.joins.kinds.items() if self.sample.has(a) and a not in analysis.kinds}
        self.selectivity = Selectivity(self.sample, stats, self.kinds)
        self.partition_overhead_rows, self.file_overhead_rows = self._overhead_rows()

    def _overhead_rows(self) -> tuple[float, float]:
        """The partition and file overheads in row-equivalents (``CostParams``), derived from the
        time model where not given: a row of the workload's average width takes
        ``(row + byte · width) / cores`` seconds, a partition ``partition`` (on the driver), a file
        ``file / cores``."""
        t, p = self.params.time, self.params
        width = float(np.average(self.scan_width, weights=self.weights)) if len(self.scans) and self.weights.sum() > 0 \
            else self.row_bytes
        per_row = (t.row + t.byte * width) / max(t.cores, 1)
        derived = (t.partition + t.task / max(t.cores, 1)) / per_row if per_row > 0 else 0.0
        file_rows = (t.file / max(t.cores, 1)) / per_row if per_row > 0 else 0.0
        return (derived if p.partition_overhead_rows is None else p.partition_overhead_rows,
                file_rows if p.file_overhead_rows is None else p.file_overhead_rows)

    def sibling(self, analysis: TableAnalysis, weights: Sequence[float] | None = None) -> "CostModel":
        """A model of other scans of the same table, sharing the sample and every layout's blocks."""
        return CostModel(analysis, self.stats, self.params, weights, sample=self.sample, cache=self.cache)

    # ---- sizes ------------------------------------------------------------------------------
    def labels(self, layout: Layout) -> np.ndarray:
        """Partition index (position in ``layout.partitions``) of every sample row; -1 if none."""
        def make():
            labels = np.full(self.sample.n, -1, dtype=np.int64)
            for i, p in enumerate(layout.partitions):
                free = labels < 0
                if not free.any():
                    break
                labels[free & self.sample.region_mask(p.region)] = i
            return labels
        return self.cache.keyed(self.cache.labels, id(layout.partitions), layout.partitions, make)

    def partition_rows(self, layout: Layout, labels: np.ndarray | None = None) -> np.ndarray:
        if is_current(layout):
            return self.current().partition_rows
        labels = self.labels(layout) if labels is None else labels
        counts = np.bincount(labels[labels >= 0], minlength=len(layout.partitions)).astype(float)
        return counts * self.scale

    def files(self, sizes: np.ndarray, runs: int = 1) -> np.ndarray:
        """Files (sorted runs) the writer makes per partition: ``ceil(bytes / target file size)``,
        at least one, and at least ``runs`` in a partition that holds rows (a write without a
        shuffle leaves one per input split: the layout's ``write_runs`` hint)."""
        files = np.maximum(1, np.ceil(sizes * self.row_bytes / self.params.target_file_bytes))
        return np.where(sizes > 0, np.maximum(files, runs), files) if runs > 1 else files

    def population(self):
        from planner.costmodel.blocks import Population
        if self.cache.population is None:
            self.cache.population = Population(self.sample, self.stats.rows)
        return self.cache.population

    # ---- the table as it is -----------------------------------------------------------------
    def current(self) -> CurrentTable:
        if self.cache.current is None:
            attrs = [a for a, k in self.kinds.items() if k.orderable and self.sample.has(a)
                     and a not in self.sample.derived and a not in self.joins.kinds]
            self.cache.current = current_table(self.stats, self.sample, self.kinds, attrs)
        return self.cache.current

    # ---- cost -------------------------------------------------------------------------------
    def evaluate(self, layout: Layout) -> LayoutCost:
        regions = [p.conditions for p in layout.partitions]
        hits = hit_matrix(self.scans, regions, self.kinds)
        if is_current(layout):
            cur = self.current()
            sizes, files, blocks = cur.partition_rows, cur.files, cur.blocks
        else:
            labels = self.labels(layout)
            hits = self.joins.prune(hits, layout, labels)  # induced predicates, by joined ranges
            sizes = self.partition_rows(layout, labels)
            files = self.files(sizes, int(dict(layout.meta).get("write_runs") or 1))
            blocks = self._blocks(layout, labels, files)
        if self.sample.n == 0 or self.scale == 0:
            rows = groups = filters = np.zeros(len(self.scans))  # an empty table: nothing to read
        else:
            ranges = None if blocks.exact else self.cache.ranges  # sampled boxes index the sample's values
            reader = BlockReader(blocks, self.analysis.derived, ranges, self.population(),
                                 None if is_current(layout) else bloom_rates(layout))
            read = reader.reads(self.scans, hits)
            rows = read @ blocks.rows
            groups = _groups_read(read, blocks, self.params.row_group_rows)
            filters = reader.bloom_reads if reader.bloom_reads is not None else np.zeros(len(self.scans))
        per_part_overhead = self.partition_overhead_rows + files * self.file_overhead_rows
        overhead = hits.astype(float) @ per_part_overhead
        hit = hits.astype(float)
        opened = hit @ np.asarray(files, dtype=float)
        work = ScanWork(partitions=hit.sum(axis=1), files=opened, row_groups=groups + filters, rows=rows,
                        bytes=rows * self.scan_width,
                        file_bytes=hit @ (np.asarray(sizes, dtype=float) * self.row_bytes))
        seconds = np.atleast_1d(scan_seconds(work, self.params.time)) if len(self.scans) else np.zeros(0)
        w = self.weights
        per_scan = tuple(
            ScanCost(s.query, float(rows[i]), float(rows[i] * self.scan_width[i]), int(hits[i].sum()),
                     float(overhead[i]), float(seconds[i]), float(opened[i]), float(groups[i]))
            for i, s in enumerate(self.scans))
        return LayoutCost(layout, float(w @ rows), float(w @ (rows * self.scan_width)), float(w @ overhead),
                          per_scan, tuple(np.asarray(sizes, dtype=float).tolist()), seconds=float(w @ seconds))

    def blocks_of(self, layout: Layout):
        """``(partition sizes, files per partition, blocks, hits)`` as ``evaluate`` prices ``layout``:
        what a reader of its blocks needs (``planner.costmodel.aggregate_index``)."""
        regions = [p.conditions for p in layout.partitions]
        hits = hit_matrix(self.scans, regions, self.kinds)
        if is_current(layout):
            cur = self.current()
            return cur.partition_rows, cur.files, cur.blocks, hits
        labels = self.labels(layout)
        hits = self.joins.prune(hits, layout, labels)
        sizes = self.partition_rows(layout, labels)
        files = self.files(sizes, int(dict(layout.meta).get("write_runs") or 1))
        return sizes, files, self._blocks(layout, labels, files), hits

    def _blocks(self, layout: Layout, labels: np.ndarray, files: np.ndarray):
        """The layout's blocks, simulated on the sample (``planner.costmodel.writer``), boxed on
        every column Parquet can skip on (computed on first use)."""
        from planner.costmodel.ordering import global_rank

        order = layout.order
        if order.method == "none":
            rank = None  # no order the writer keeps: a partition is one block
        else:
            rank = self.cache.ranks.get(order)
            if rank is None:
                if len(self.cache.ranks) > 64:
                    self.cache.ranks.clear()
                rank = self.cache.ranks[order] = global_rank(self.sample, order)
        columns = [c for c in self.sample.table.column_names if c not in self.sample.derived]
        split = self.splits() if rank is not None and self._written_locally(layout, files) else None

        def make():
            return simulated_blocks(self.sample, labels, files, rank, columns, self.params.block_rows, self.scale,
                                    self.params.row_group_rows, split=split)
        key = (id(layout.partitions), order, tuple(np.asarray(files).tolist()), split is not None)
        return self.cache.keyed(self.cache.blocks, key, layout.partitions, make)

    def _written_locally(self, layout: Layout, files: np.ndarray) -> bool:
        """Whether ``planner.model.write_plan`` writes ``layout`` without a shuffle: each task then
        sorts the rows of its own input split, and a file holds one split's rows."""
        from planner.model.write_plan import write_plan

        per_partition = {p.id: int(k) for p, k in zip(layout.partitions, np.asarray(files).tolist())}
        return not write_plan(layout, table_bytes=self.stats.bytes, files=per_partition).shuffle

    def splits(self) -> np.ndarray | None:
        """Each sample row's input split when the table is read for a write (``DEFAULT_SPLIT_BYTES``
        each, in the files' order), or ``None`` when the sample has no positions. Rows that keep
        the source's order inside a split: a file written without a shuffle spans only its
        split's range of a column the source is clustered on (tpchgen's ``l_orderkey``)."""
        if self._splits is None:
            from planner.model.write_plan import DEFAULT_SPLIT_BYTES

            position = self._positions()
            n = max(1, math.ceil(self.stats.bytes / DEFAULT_SPLIT_BYTES))
            self._splits = np.zeros(0, dtype=np.int64) if position is None else \
                np.minimum((position * n / max(self.stats.rows, 1)).astype(np.int64), n - 1)
        return self._splits if len(self._splits) else None

    def _positions(self) -> np.ndarray | None:
        """Each sample row's position in the table (rows before it, files in their listed order):
        the sample's own positions, else placed by the footers on the column the table is
        clustered on most tightly (``current.positions``)."""
        s = self.sample
        if s.source_ordered:
            rows_of = {f.path: f.rows for f in self.stats.data_files or ()}
            per_file = np.array([rows_of.get(name, 0) for name in s.files or ()], dtype=float)
            if len(per_file) and per_file.sum() > 0:
                return np.r_[0.0, np.cumsum(per_file)[:-1]][s.file_of] + s.row_in_file
            return None
        from planner.costmodel.current import clustered, positions

        cur = self.current()
        keys = clustered(cur, s) if cur.blocks.exact else []
        return positions(cur, s, keys[0]) if keys else None

    def attributes(self) -> list[str]:
        """Columns the workload constrains (alone or in a multi-column clause) that Parquet can
        skip on: in the sample, and not derived (``a < b`` is never pushed to Parquet)."""
        from planner.cnf.ir import Pred

        seen: dict[str, None] = {}
        for s in self.scans:
            names = list(s.sets) + [a.column for c in s.groups.residual for a in c if isinstance(a, Pred)]
            for a in names:
                if self.sample.has(a) and a not in self.sample.derived:
                    seen.setdefault(a)
        return list(seen)

    def full_scan_rows(self) -> float:
        return float(self.weights.sum() * self.stats.rows)

    def full_scan_seconds(self) -> float:
        """The workload's time if every scan read the whole table as it is."""
        return float(self.weights @ self.scan_full_seconds())

    def scan_full_seconds(self) -> np.ndarray:
        """Each scan's time reading every row of the table as it is (files and row groups included)."""
        cur = self.current()
        groups = float(len(np.unique(cur.blocks.group))) if cur.blocks.group is not None else \
            float(np.maximum(1.0, np.ceil(cur.blocks.rows / max(self.params.row_group_rows, 1))).sum())
        n = len(self.scans)
        work = ScanWork(partitions=np.full(n, float(len(cur.layout.partitions))), files=np.full(n, float(cur.files.sum())),
                        row_groups=np.full(n, groups), rows=np.full(n, float(self.stats.rows)),
                        bytes=self.stats.rows * self.scan_width, file_bytes=np.full(n, float(self.stats.bytes)))
        return np.atleast_1d(scan_seconds(work, self.params.time)) if n else np.zeros(0)

    def matching_rows(self) -> np.ndarray:
        """Estimated rows each scan's pushable predicate matches (its own lower bound).

        From the sample, or for conditions too rare for it, from column statistics
        (``planner.costmodel.selectivity``).
        """
        out = np.zeros(len(self.scans))
        for i, s in enumerate(self.scans):
            if not s.groups.unsatisfiable:
                out[i] = self.selectivity.rows(s.sets).rows
        return out


def _groups_read(read: np.ndarray, blocks, row_group_rows: int) -> np.ndarray:
    """Expected row groups each scan reads: a group is read when any of its blocks (pages) is. A
    block of more rows than a row group (a partition written in no order is one block for
    skipping, and still cut into row groups) counts the row groups it holds."""
    if not read.shape[1]:
        return np.zeros(read.shape[0])
    if blocks.group is None:
        return read @ np.maximum(1.0, np.ceil(blocks.rows / max(row_group_rows, 1)))
    _, firsts = blocks.groups()
    return np.maximum.reduceat(read, firsts, axis=1).sum(axis=1)

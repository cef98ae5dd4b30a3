"""The cost model: rows and bytes each scan must read under a layout (CPS section 4.3, extended).

    Cost(L) = Σ_scans weight(q) · [ Σ_partitions hit(p, q) · rows_read(p, q) + overhead(p, q) ]

* ``hit(p, q)`` comes from ``planner.pruning``: 0 only when p's region and q's predicate cannot
  both hold.
* ``rows_read(p, q)`` is the partition's size, or, when rows are ordered inside partitions, the
  size of the row groups whose min/max box may hold matches (Parquet row-group skipping).
* Bytes are rows times the summed on-disk width of the columns the query reads (Parquet reads only
  referenced columns).
* ``weight(q)`` is 1 per query instance (repeats count); ``aggregation_factor`` doubles queries
  with aggregation as in the CPS paper.
* Every partition and every file opened costs a fixed number of row-equivalents, so thousands of
  tiny partitions are not free.

Sizes come from the sample (``SampleFrame``), scaled to the table.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np

from planner.analysis import ScanAnalysis, TableAnalysis
from planner.cnf.values import Kind
from planner.cnf.valueset import ValueSet
from planner.costmodel.sample import SampleFrame
from planner.costmodel.selectivity import Selectivity
from planner.costmodel.statistics import TableStats
from planner.layout import Layout
from planner.pruning import hit_matrix


@dataclass(frozen=True)
class CostParams:
    partition_overhead_rows: float = 5_000.0  # opening a partition (listing, planning) in row-equivalents
    file_overhead_rows: float = 2_000.0  # opening a file and reading its footer
    target_file_bytes: int = 128 * 1024 * 1024
    row_group_rows: int = 15_000  # rows per Parquet row group the layout is written with
    min_partition_bytes: int = 4 * 1024 * 1024
    max_partitions: int = 1_000  # hive.exec.max.dynamic.partitions
    aggregation_factor: bool = False


@dataclass(frozen=True)
class ScanCost:
    query: int
    rows: float
    bytes: float
    partitions: int
    overhead: float


@dataclass(frozen=True)
class LayoutCost:
    layout: Layout = field(repr=False)
    rows: float
    bytes: float
    overhead: float
    per_scan: tuple[ScanCost, ...] = field(repr=False)
    partition_rows: tuple[float, ...] = field(repr=False, default=())

    @property
    def total(self) -> float:
        return self.rows + self.overhead


class CostModel:
    """Evaluates layouts for one table's analysed workload against its statistics."""

    def __init__(self, analysis: TableAnalysis, stats: TableStats, params: CostParams = CostParams(),
                 weights: Sequence[float] | None = None, query_has_aggregation: Sequence[bool] | None = None):
        self.analysis = analysis
        self.stats = stats
        self.params = params
        self.scans: tuple[ScanAnalysis, ...] = analysis.scans
        self.sample = SampleFrame(stats.sample, analysis.derived)
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
        self.kinds: Mapping[str, Kind] = analysis.kinds
        self._ranges: dict = {}
        self._ranks: dict = {}
        self.selectivity = Selectivity(self.sample, stats, self.kinds)

    # ---- sizes ------------------------------------------------------------------------------
    def labels(self, layout: Layout) -> np.ndarray:
        """Partition index (position in ``layout.partitions``) of every sample row; -1 if none."""
        labels = np.full(self.sample.n, -1, dtype=np.int64)
        for i, p in enumerate(layout.partitions):
            free = labels < 0
            if not free.any():
                break
            labels[free & self.sample.region_mask(p.region)] = i
        return labels

    def partition_rows(self, layout: Layout, labels: np.ndarray | None = None) -> np.ndarray:
        labels = self.labels(layout) if labels is None else labels
        counts = np.bincount(labels[labels >= 0], minlength=len(layout.partitions)).astype(float)
        return counts * self.scale

    # ---- cost -------------------------------------------------------------------------------
    def evaluate(self, layout: Layout) -> LayoutCost:
        regions = [p.conditions for p in layout.partitions]
        labels = self.labels(layout)
        sizes = self.partition_rows(layout, labels)
        hits = hit_matrix(self.scans, regions, self.kinds)
        if layout.order.method == "none":
            rows = hits.astype(float) @ sizes
        else:
            rows = self._ordered_rows(layout, labels, hits)
        files = np.maximum(1, np.ceil(sizes * self.row_bytes / self.params.target_file_bytes))
        per_part_overhead = self.params.partition_overhead_rows + files * self.params.file_overhead_rows
        overhead = hits.astype(float) @ per_part_overhead
        w = self.weights
        per_scan = tuple(
            ScanCost(s.query, float(rows[i]), float(rows[i] * self.scan_width[i]), int(hits[i].sum()),
                     float(overhead[i])) for i, s in enumerate(self.scans))
        return LayoutCost(layout, float(w @ rows), float(w @ (rows * self.scan_width)), float(w @ overhead),
                          per_scan, tuple(sizes.tolist()))

    def _ordered_rows(self, layout: Layout, labels: np.ndarray, part_hits: np.ndarray) -> np.ndarray:
        """Rows of the row groups each scan may need (Parquet min/max skipping, simulated).

        Row-group boxes live in the sample's code space (index into the sorted distinct values),
        so a scan's value set is turned once into code ranges and each box test is two compares.
        Residual multi-column clauses are not used at this level (conservative).
        """
        from planner.costmodel.ordering import global_rank, row_groups

        if self.sample.n == 0 or self.scale == 0:
            return np.zeros(len(self.scans))  # an empty table: nothing to read
        attrs = self.attributes()
        rank = self._ranks.get(layout.order)
        if rank is None:
            rank = self._ranks[layout.order] = global_rank(self.sample, layout.order)
        rg = row_groups(self.sample, labels, layout.order, attrs, self.params.row_group_rows / self.scale, rank)
        if len(rg.part) == 0:
            return np.zeros(len(self.scans))
        hits = part_hits[:, rg.part]
        for i, scan in enumerate(self.scans):
            if not hits[i].any():
                continue
            for a, vs in scan.sets.items():
                if a not in rg.cmin or a in self.sample.derived:
                    continue  # Parquet keeps min/max of columns, not of derived attributes
                ok = rg.nulls[a] & vs.null
                for lo, hi in self._code_ranges(a, vs):
                    ok |= (rg.cmin[a] < hi) & (rg.cmax[a] >= lo)
                hits[i] &= ok
        return hits.astype(float) @ (rg.rows.astype(float) * self.scale)

    def _code_ranges(self, attribute: str, vs) -> list[tuple[int, int]]:
        key = (attribute, vs)
        got = self._ranges.get(key)
        if got is None:
            got = self.sample.code_ranges(attribute, vs)
            self._ranges[key] = got
        return got

    def attributes(self) -> list[str]:
        """Attributes the workload constrains and the sample can evaluate."""
        seen: dict[str, None] = {}
        for s in self.scans:
            for a in s.sets:
                if self.sample.has(a):
                    seen.setdefault(a)
        return list(seen)

    def full_scan_rows(self) -> float:
        return float(self.weights.sum() * self.stats.rows)

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

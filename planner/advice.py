"""Turn a plan search into advice: the ranking, the winner explained per query, and layout.json.

Pure: it takes an analysed workload and statistics, and returns values and text.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Callable

import numpy as np
import sqlglot
from sqlglot import exp

from planner.analysis import TableAnalysis
from planner.costmodel.cost import CostModel, CostParams, LayoutCost
from planner.costmodel.search import SearchResult, search
from planner.costmodel.statistics import TableStats
from planner.layout import Layout
from planner.pruning import hit_matrix
from planner.workload import Workload


@dataclass(frozen=True)
class Advice:
    workload: Workload
    analysis: TableAnalysis
    stats: TableStats
    result: SearchResult
    full_scan_rows: float
    full_scan_bytes: float
    matching_rows: float
    params: CostParams = CostParams()

    @property
    def layout(self) -> Layout:
        best = self.result.best.layout
        meta = dict(best.meta) | {
            "workload": self.workload.path,
            "workload_fingerprint": self.workload.fingerprint(),
            "statistics_snapshot": self.stats.snapshot,
            "table_rows": self.stats.rows,
            "estimated_rows_read": round(self.result.best.rows),
            "estimated_full_scan_rows": round(self.full_scan_rows),
        } | write_hints(self.result.best, self.stats, self.params)
        return replace(best, meta=tuple(meta.items()))


def advise(workload: Workload, analysis: TableAnalysis, stats: TableStats, params: CostParams = CostParams(),
           log: Callable[[str], None] | None = None) -> Advice:
    aggregates = _aggregating_scans(workload, analysis) if params.aggregation_factor else None
    model = CostModel(analysis, stats, params, query_has_aggregation=aggregates)
    result = search(model, log)
    full_rows = model.full_scan_rows()
    full_bytes = float(model.weights @ (np.full(len(model.scans), stats.rows) * model.scan_width))
    return Advice(workload, analysis, stats, result, full_rows, full_bytes, float(model.matching_rows().sum()),
                  params)


def _aggregating_scans(workload: Workload, analysis: TableAnalysis) -> list[bool]:
    """Per scan: does its query aggregate (an aggregate function or GROUP BY)? CPS's g(q)."""
    memo: dict[int, bool] = {}
    for s in analysis.scans:
        if s.query not in memo:
            tree = sqlglot.parse_one(workload.queries[s.query].sql, read=workload.dialect)
            memo[s.query] = tree.find(exp.AggFunc, exp.Group) is not None
    return [memo[s.query] for s in analysis.scans]


def write_hints(cost: LayoutCost, stats: TableStats, params: CostParams) -> dict:
    """How the layout must be written for the cost model's assumptions to hold: row groups of
    ``row_group_rows`` rows and ``ceil(partition bytes / target file size)`` files per partition."""
    row_bytes = stats.bytes / max(stats.rows, 1)
    files = {str(p.id): math.ceil(rows * row_bytes / params.target_file_bytes)
             for p, rows in zip(cost.layout.partitions, cost.partition_rows)}
    return {"row_group_rows": params.row_group_rows,
            "files_per_partition": {k: v for k, v in files.items() if v > 1}}

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
from planner.costmodel import baselines
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
    if stats.rows == 0:
        # An empty table has no rows to place: every layout reads nothing, and the sample gives
        # no boundaries to cut at. Keep it unpartitioned rather than guess from no data.
        only = model.evaluate(baselines.full_scan(analysis.table))
        result = SearchResult((only,), (only,), ())
        analysis = replace(analysis, notes=analysis.notes + (
            "the table is empty: it is left unpartitioned; advise again once it holds data",))
    else:
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
    ``row_group_rows`` rows and ``ceil(partition bytes / target file size)`` files per partition.
    The estimated rows per partition go along, for ``planner explain``."""
    row_bytes = stats.bytes / max(stats.rows, 1)
    files = {str(p.id): math.ceil(rows * row_bytes / params.target_file_bytes)
             for p, rows in zip(cost.layout.partitions, cost.partition_rows)}
    return {"row_group_rows": params.row_group_rows,
            "table_bytes": stats.bytes,  # sizes the write plan (planner.emit.write_plan)
            "files_per_partition": {k: v for k, v in files.items() if v > 1},
            "partition_rows": {str(p.id): round(rows) for p, rows in zip(cost.layout.partitions, cost.partition_rows)}}


def _fmt(n: float) -> str:
    for unit, div in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(n) >= div:
            return f"{n / div:.2f}{unit}"
    return f"{n:.0f}"


def ranking_rows(advice: Advice) -> list[dict]:
    out = []
    for c in advice.result.ranked:
        out.append({
            "strategy": c.layout.strategy,
            "partitions": len(c.layout.partitions),
            "order": c.layout.order.describe(),
            "rows_read": round(c.rows),
            "bytes_read": round(c.bytes),
            "overhead_rows": round(c.overhead),
            "gain_vs_full_scan": round(advice.full_scan_rows / max(c.rows, 1.0), 2),
            "read_over_matching": round(c.rows / max(advice.matching_rows, 1.0), 2),
        })
    return out


def per_template(advice: Advice, cost: LayoutCost) -> list[dict]:
    rows: dict[str, dict] = {}
    for sc in cost.per_scan:
        q = advice.workload.queries[sc.query]
        r = rows.setdefault(q.template, {"template": q.template, "scans": 0, "rows_read": 0.0, "bytes_read": 0.0})
        r["scans"] += 1
        r["rows_read"] += sc.rows
        r["bytes_read"] += sc.bytes
    return sorted(rows.values(), key=lambda r: -r["rows_read"])


def explain_winner(advice: Advice, limit: int = 40) -> list[str]:
    cost = advice.result.best
    layout = cost.layout
    regions = [p.conditions for p in layout.partitions]
    hits = hit_matrix(advice.analysis.scans, regions, advice.analysis.kinds)
    lines = []
    for i, scan in enumerate(advice.analysis.scans[:limit]):
        q = advice.workload.queries[scan.query]
        used = [a for a in scan.sets if a in layout.attributes]
        why = ("pruned by " + ", ".join(f"{a} IN {scan.sets[a]}" for a in used)) if used and hits[i].sum() < len(
            regions) else "no predicate on the partition attributes: reads every partition"
        lines.append(f"  statement {q.number} ({q.template}, {scan.alias}): {int(hits[i].sum())}/{len(regions)} "
                     f"partitions, ~{_fmt(cost.per_scan[i].rows)} rows; {why}")
    if len(advice.analysis.scans) > limit:
        lines.append(f"  … {len(advice.analysis.scans) - limit} more scans (see --format json)")
    return lines


def advice_text(advice: Advice) -> str:
    s = advice.stats
    lines = [f"table {s.table}: {s.rows:,} rows, {_fmt(s.bytes)}B in {s.files} files; sample {s.sample.num_rows:,} rows",
             f"workload {advice.workload.path}: {len(advice.workload.queries)} queries, "
             f"{len(advice.analysis.scans)} scans of {s.table}",
             f"full scan reads {_fmt(advice.full_scan_rows)} rows; the predicates match ~{_fmt(advice.matching_rows)}",
             "",
             f"{'#':>2}  {'strategy':<42} {'parts':>5}  {'order':<40} {'rows read':>10} {'bytes read':>10} "
             f"{'gain':>6} {'read/match':>10}"]
    for i, r in enumerate(ranking_rows(advice), 1):
        lines.append(f"{i:>2}  {r['strategy'][:42]:<42} {r['partitions']:>5}  {r['order'][:40]:<40} "
                     f"{_fmt(r['rows_read']):>10} {_fmt(r['bytes_read']):>10} {r['gain_vs_full_scan']:>5}x "
                     f"{r['read_over_matching']:>9}x")
    best = advice.result.best
    lines += ["", f"winner: {best.layout.describe()}", "per query template (winner):"]
    for r in per_template(advice, best)[:25]:
        lines.append(f"  {r['template'][:40]:<40} {r['scans']:>5} scans  {_fmt(r['rows_read']):>10} rows  "
                     f"{_fmt(r['bytes_read']):>10}B")
    lines += ["", "why each query reads what it reads (winner):"] + explain_winner(advice)
    for note in advice.analysis.notes:
        lines.append(f"note: {note}")
    return "\n".join(lines)


def advice_json(advice: Advice) -> dict:
    best = advice.result.best
    return {
        "table": advice.stats.table,
        "rows": advice.stats.rows,
        "bytes": advice.stats.bytes,
        "workload": advice.workload.path,
        "queries": len(advice.workload.queries),
        "full_scan_rows": round(advice.full_scan_rows),
        "matching_rows": round(advice.matching_rows),
        "ranking": ranking_rows(advice),
        "winner": {
            "strategy": best.layout.strategy,
            "per_template": per_template(advice, best),
            "per_scan": [
                {"statement": advice.workload.queries[sc.query].number, "rows_read": round(sc.rows),
                 "bytes_read": round(sc.bytes), "partitions_read": sc.partitions}
                for sc in best.per_scan
            ],
        },
        "timings": dict(advice.result.timings),
    }

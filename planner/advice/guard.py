"""The per-query guard: no query may get noticeably slower than it is on the table as it is now.

For every scan of the workload and every query of the robustness set
(``planner.costmodel.robustness``) the guard compares the time a layout makes it take
(``planner.costmodel.timing``) with its time on the current table (``planner.costmodel.current``,
priced exactly from the footers). A query *regresses* when it is slower by a margin a user
notices, relatively and absolutely:

    seconds(layout, q) > threshold · seconds(current, q)                 (threshold 1.2 by default)
    and seconds(layout, q) - seconds(current, q) > slack(q)

with ``slack(q) = min(slack_seconds, slack_share · seconds of a full scan of the table)``
(0.2 s and a tenth by default). A layout with a regression is not advised unless the user
allows it (``--allow-regressions``); the report lists the regressions of the layouts it shows,
worst first, with the rows each query reads as a figure beside the time.

Example: the table as loaded is in ``l_orderkey`` order, so a lookup of one ``l_orderkey`` reads
one row group (15k rows) of it. A layout by ship date reads three row groups for it with bloom
filters, or every row group without: three row groups cost milliseconds more, which no one
notices; the whole table costs seconds more, a regression.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from planner.costmodel.cost import CostModel, LayoutCost
from planner.costmodel.current import CurrentTable
from planner.costmodel.robustness import RangeQuery
from planner.model.layout import Layout

THRESHOLD = 1.2
SLACK_SECONDS = 0.2
SLACK_SHARE = 0.1


@dataclass(frozen=True)
class Regression:
    query: str  # "statement 12 (tpch q06)" or a robustness range
    current: float  # seconds it takes on the table as it is
    seconds: float  # seconds it would take under the layout
    current_rows: float = 0.0  # rows it reads on the table as it is
    rows: float = 0.0  # rows it would read under the layout

    @property
    def ratio(self) -> float:
        return self.seconds / max(self.current, 1e-9)


@dataclass(frozen=True)
class Verdict:
    regressions: tuple[Regression, ...]  # worst first
    worst: float  # the largest seconds(layout) / seconds(current) over every guarded query
    robust_seconds: float  # seconds the robustness set takes under the layout
    robust_per_query: tuple[float, ...] = ()
    robust_rows: float = 0.0  # rows the robustness set reads under the layout

    @property
    def ok(self) -> bool:
        return not self.regressions


class Guard:
    def __init__(self, model: CostModel, robust: CostModel, queries: Sequence[RangeQuery], labels: Sequence[str],
                 threshold: float = THRESHOLD, slack_seconds: float = SLACK_SECONDS, slack_share: float = SLACK_SHARE):
        """``model``: the workload's cost model; ``robust``: the robustness set's (same table);
        ``labels``: a name per workload scan for the report."""
        self.model, self.robust, self.queries, self.labels = model, robust, list(queries), list(labels)
        self.threshold = threshold
        self.current: CurrentTable = model.current()
        now = model.evaluate(self.current.layout).per_scan
        self.current_workload = np.array([s.seconds for s in now])
        self.current_workload_rows = np.array([s.rows for s in now])
        now = robust.evaluate(self.current.layout).per_scan
        self.current_robust = np.array([s.seconds for s in now])
        self.current_robust_rows = np.array([s.rows for s in now])
        full = model.scan_full_seconds()
        full_scan = float(full.max()) if len(full) else float(np.max(robust.scan_full_seconds(), initial=0.0))
        self.slack = min(slack_seconds, slack_share * full_scan)

    def robust_full_seconds(self) -> float:
        return float(self.robust.full_scan_seconds())

    def check(self, layout: Layout, cost: LayoutCost) -> Verdict:
        rob = self.robust.evaluate(layout).per_scan
        rob_seconds = np.array([s.seconds for s in rob])
        rob_rows = np.array([s.rows for s in rob])
        work_seconds = np.array([s.seconds for s in cost.per_scan])
        work_rows = np.array([s.rows for s in cost.per_scan])
        found: list[Regression] = []
        worst = 1.0
        for seconds, rows, cur, cur_rows, names in (
                (work_seconds, work_rows, self.current_workload, self.current_workload_rows, self.labels),
                (rob_seconds, rob_rows, self.current_robust, self.current_robust_rows,
                 [q.describe() for q in self.queries])):
            if not len(seconds):
                continue
            worst = max(worst, float((seconds / np.maximum(cur, 1e-9)).max()))
            for i in np.flatnonzero((seconds > self.threshold * cur) & (seconds - cur > self.slack)):
                found.append(Regression(names[i], float(cur[i]), float(seconds[i]), float(cur_rows[i]),
                                        float(rows[i])))
        found.sort(key=lambda r: -r.ratio)
        return Verdict(tuple(found), worst, float(rob_seconds.sum()), tuple(rob_seconds.tolist()),
                       float(rob_rows.sum()))


__all__ = ["Guard", "Regression", "SLACK_SECONDS", "SLACK_SHARE", "THRESHOLD", "Verdict"]

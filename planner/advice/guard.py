"""The per-query guard: no query may read much more than it reads on the table as it is now.

For every scan of the workload and every query of the robustness set
(``planner.costmodel.robustness``) the guard compares the rows a layout makes it read with the
rows it reads on the current table (``planner.costmodel.current``, priced exactly from the
footers). A query *regresses* when

    rows(layout, q) > threshold · rows(current, q) + 1        (threshold 1.2 by default)

(the one row keeps a query that reads nothing either way from regressing by rounding). A layout
with a regression is not advised unless the user allows it (``--allow-regressions``); the report
lists the regressions of the layouts it shows, worst first.

Example: the table as loaded is in ``l_orderkey`` order, so ``l_orderkey BETWEEN a AND b`` reads
one row group (15k rows) of it. A layout partitioned by ship date and sorted by ship date reads
the whole table for that query: 400×, a regression. Sorting by ``(l_shipdate, l_orderkey)`` does
not help (a row group spans several days); keeping ``l_orderkey`` as a dimension of the order, or
fewer partitions each sorted by it, may.
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


@dataclass(frozen=True)
class Regression:
    query: str  # "statement 12 (tpch q06)" or a robustness range
    current: float  # rows it reads on the table as it is
    rows: float  # rows it would read under the layout

    @property
    def ratio(self) -> float:
        return self.rows / max(self.current, 1.0)


@dataclass(frozen=True)
class Verdict:
    regressions: tuple[Regression, ...]  # worst first
    worst: float  # the largest rows(layout) / rows(current) over every guarded query
    robust_rows: float  # rows the robustness set reads under the layout
    robust_per_query: tuple[float, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.regressions


class Guard:
    def __init__(self, model: CostModel, robust: CostModel, queries: Sequence[RangeQuery], labels: Sequence[str],
                 threshold: float = THRESHOLD):
        """``model``: the workload's cost model; ``robust``: the robustness set's (same table);
        ``labels``: a name per workload scan for the report."""
        self.model, self.robust, self.queries, self.labels = model, robust, list(queries), list(labels)
        self.threshold = threshold
        self.current: CurrentTable = model.current()
        self.current_workload = np.array([s.rows for s in model.evaluate(self.current.layout).per_scan])
        self.current_robust = np.array([s.rows for s in robust.evaluate(self.current.layout).per_scan])

    def robust_full_rows(self) -> float:
        return float(len(self.queries) * self.model.stats.rows)

    def check(self, layout: Layout, cost: LayoutCost) -> Verdict:
        rob = np.array([s.rows for s in self.robust.evaluate(layout).per_scan])
        work = np.array([s.rows for s in cost.per_scan])
        found: list[Regression] = []
        worst = 1.0
        for rows, cur, names in ((work, self.current_workload, self.labels),
                                 (rob, self.current_robust, [q.describe() for q in self.queries])):
            if not len(rows):
                continue
            ratio = rows / np.maximum(cur, 1.0)
            worst = max(worst, float(ratio.max()))
            for i in np.flatnonzero(rows > self.threshold * cur + 1.0):
                found.append(Regression(names[i], float(cur[i]), float(rows[i])))
        found.sort(key=lambda r: -r.ratio)
        return Verdict(tuple(found), worst, float(rob.sum()), tuple(rob.tolist()))


__all__ = ["Guard", "Regression", "THRESHOLD", "Verdict"]

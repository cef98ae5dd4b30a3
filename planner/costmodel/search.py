"""Plan search: build every contender, give each its best order inside partitions, rank by cost.

Contenders (issue #3): no partitioning and a DBA's month ranges (baselines); CPS single-column
plans; multi-column CPS; Amoeba's upfront tree and its workload-weighted variant; a greedy
workload-driven tree. Each is costed without an order inside partitions and with each candidate
ordering (ascending-cardinality sorts, z-orders); the cheapest variant represents the contender.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Callable

import numpy as np

from planner.cnf.values import Kind
from planner.costmodel import baselines
from planner.costmodel.cost import CostModel, LayoutCost
from planner.costmodel.ordering import candidate_orderings
from planner.layout import Layout, Ordering


@dataclass(frozen=True)
class SearchResult:
    ranked: tuple[LayoutCost, ...]  # best first; each contender once, with its best ordering
    variants: tuple[LayoutCost, ...]  # every (contender, ordering) evaluated
    timings: tuple[tuple[str, float], ...]

    @property
    def best(self) -> LayoutCost:
        return self.ranked[0]


def _partitionable(model: CostModel) -> list[str]:
    """Filtered attributes the sample can evaluate, most-filtered first."""
    counts = model.analysis.filter_counts()
    return [a for a, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
            if model.sample.has(a) and model.kinds.get(a, Kind.OTHER).orderable]


def build_contenders(model: CostModel, log: Callable[[str], None] | None = None) -> tuple[list[Layout], list]:
    from planner.costmodel.dpmerge import cps_single_column
    from planner.costmodel.multicolumn import best_multi_column
    from planner.costmodel import trees

    table = model.analysis.table
    p = model.params
    attrs = _partitionable(model)
    timings = []
    out: list[Layout] = [baselines.full_scan(table)]

    def timed(name, fn):
        t = time.perf_counter()
        try:
            return fn()
        finally:
            timings.append((name, time.perf_counter() - t))
            if log:
                log(f"built {name} in {timings[-1][1]:.2f}s")

    dates = [a for a in attrs if model.kinds[a] in (Kind.DATE, Kind.TIMESTAMP) and a not in model.analysis.derived]
    if dates:
        dba = baselines.date_ranges(model.sample, table, dates[0], model.kinds[dates[0]], "month", p.max_partitions)
        if dba is not None:
            out.append(dba)
    singles = timed("cps single-column", lambda: [cps_single_column(model, a) for a in attrs])
    out.extend(singles)
    out.extend(timed("cps multi-column", lambda: best_multi_column(model, singles)))
    common = dict(rows=model.stats.rows, row_bytes=model.row_bytes,
                  max_partition_bytes=max(p.min_partition_bytes, p.target_file_bytes),
                  max_partitions=p.max_partitions, table=table)
    kinds = model.kinds
    out.append(timed("amoeba upfront", lambda: trees.amoeba_upfront(model.sample, kinds, attrs, **common)))
    out.append(timed("amoeba weighted", lambda: trees.amoeba_weighted(model, attrs, **common)))
    min_leaf = max(1.0, p.min_partition_bytes / max(model.row_bytes, 1.0))
    out.append(timed("greedy tree", lambda: trees.greedy_tree(model, attrs, max_partitions=p.max_partitions,
                                                               min_leaf_rows=min_leaf, table=table)))
    return [l for l in out if l is not None], timings


def search(model: CostModel, log: Callable[[str], None] | None = None, orderings: bool = True,
           orderings_per_contender: int = 3) -> SearchResult:
    """Rank contenders. Orderings are first ranked on the unpartitioned table; each contender
    then tries no order and the ``orderings_per_contender`` best of them (the full product is
    what costs time, and an order that helps the whole table is what helps inside partitions)."""
    layouts, timings = build_contenders(model, log)
    t = time.perf_counter()
    candidates = candidate_orderings(model.sample, model.analysis.filter_counts()) if orderings else []
    variants: list[LayoutCost] = []
    base = layouts[0]
    scored = []
    for order in candidates:
        cost = model.evaluate(with_order(base, order, model.analysis.derived))
        variants.append(cost)
        scored.append((cost.total, order))
    top = [o for _, o in sorted(scored, key=lambda x: x[0])[:orderings_per_contender]]
    best: dict[str, LayoutCost] = {}
    for cost in variants:
        _keep(best, cost)
    for layout in layouts:
        for order in [Ordering()] + top:
            if layout is base and order.method != "none":
                continue  # already costed above
            cost = model.evaluate(with_order(layout, order, model.analysis.derived))
            variants.append(cost)
            _keep(best, cost)
    timings.append(("costing", time.perf_counter() - t))
    ranked = tuple(sorted(best.values(), key=lambda c: c.total))
    return SearchResult(ranked, tuple(variants), tuple(timings))


def with_order(layout: Layout, order: Ordering, derived) -> Layout:
    """``layout`` ordered by ``order``, knowing every derived attribute the order names.

    An order may use a derived attribute the partitions do not (``no partitioning`` sorted by
    ``l_commitdate < l_receiptdate``); without its definition in ``layout.derived`` the emitted
    ``SORT BY`` names a column ``l_commitdate < l_receiptdate`` that does not exist.
    """
    known = dict(layout.derived)
    extra = tuple((c, derived[c]) for c in order.columns if c in derived and c not in known)
    return replace(layout, order=order, derived=layout.derived + extra)


def _keep(best: dict[str, LayoutCost], cost: LayoutCost) -> None:
    key = cost.layout.strategy
    if key not in best or cost.total < best[key].total:
        best[key] = cost

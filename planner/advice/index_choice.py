"""Layouts with and without an aggregate index, ranked together.

The search ranks layouts (``planner.costmodel.search``). For the best few of them this step prices
the aggregate index the workload asks for (``planner.costmodel.aggregate_index.choose_index``) and,
where it pays for its build, adds the layout *with* the index as a contender of its own
(``<strategy> + aggregate index``): the same partitions and order, the served queries answered
from the index. Both are judged by the guard and ranked by the same score, so the index wins only
when it makes the workload faster; the report shows each layout with and without it, what the
index costs to build and store, and the queries it serves (the layout's meta,
``aggregate_index_price``). Where it is declined the reason is recorded the same way.
"""
from __future__ import annotations

import time
from dataclasses import replace
from typing import Callable

from planner.costmodel.aggregate_index import choose_index, with_index
from planner.costmodel.cost import CostModel, LayoutCost
from planner.costmodel.current import is_current
from planner.costmodel.index_grid import aggregate_scans
from planner.costmodel.search import SearchResult, rank
from planner.workload import Workload

TOP = 4  # contenders (best first) an index is priced for


def with_aggregate_index(result: SearchResult, model: CostModel, workload: Workload, guard=None,
                         allow_regressions: bool = False, log: Callable[[str], None] | None = None,
                         top: int = TOP) -> SearchResult:
    """``result`` with the index variants of its best ``top`` contenders ranked in."""
    started = time.monotonic()
    queries = aggregate_scans(model, workload)
    if not queries:
        return result
    templates = [workload.queries[s.query].template for s in model.scans]
    priced: dict[int, LayoutCost] = {}
    extra: list[LayoutCost] = []
    done = 0
    for cost in result.ranked:
        if done >= top:
            break
        if is_current(cost.layout) or cost.layout.aggregate_index is not None:
            continue
        done += 1
        price = choose_index(model, cost, queries, templates)
        meta = dict(cost.layout.meta) | {"aggregate_index_price": price.to_json()}
        priced[id(cost)] = replace(cost, layout=replace(cost.layout, meta=tuple(meta.items())))
        if price.index is None:
            if log:
                log(f"aggregate index for {cost.layout.strategy}: declined ({price.declined})")
            continue
        variant = with_index(cost, price)
        if guard is not None:
            variant = replace(variant, verdict=guard.check(variant.layout, variant))
        extra.append(variant)
        if log:
            log(f"aggregate index for {cost.layout.strategy}: {price.index.describe()}, ~{price.cells:,.0f} cells, "
                f"saves {price.saved:.1f} s of {price.seconds_before:.1f} s (build ~{price.build_seconds:.1f} s)")
    if not priced:
        return result
    pool = [priced.get(id(c), c) for c in result.ranked] + extra
    variants = tuple(priced.get(id(c), c) for c in result.variants) + tuple(extra)
    timings = tuple(result.timings) + (("aggregate index", round(time.monotonic() - started, 3)),)
    return rank(pool, variants, timings, allow_regressions=allow_regressions)


def index_line(layout) -> str | None:
    """One line for the text report: the pick's aggregate index, or why it has none."""
    price = dict(layout.meta).get("aggregate_index_price")
    if layout.aggregate_index is not None and price:
        served = price.get("served", 0)
        return (f"aggregate index: {layout.aggregate_index.describe()}; ~{price['cells']:,} cells "
                f"(~{price['bytes'] / 2**20:.1f} MiB), built in ~{price['build_seconds']:.1f} s; answers {served} "
                f"scan(s) in ~{price['seconds_after']:.2f} s instead of ~{price['seconds_before']:.2f} s")
    if price and price.get("declined"):
        return f"aggregate index: declined, {price['declined']}"
    return None


__all__ = ["with_aggregate_index", "index_line", "TOP"]

"""Plan search: build every contender, give each its best order inside partitions, rank them.

Contenders: the table as it is now (``planner.costmodel.current``, always first in the ranking),
no partitioning and a DBA's month ranges (baselines), CPS single-column plans, multi-column CPS,
sideways cuts on joined tables' columns (``planner.costmodel.sideways``, when scans are filtered
through joins),
Amoeba's tree (upfront and workload-weighted: its top levels Hive partitions, the rest the order
inside them, ``planner.costmodel.tree_order``), and a greedy workload-driven tree. Each is costed
without an order inside partitions (rows then keep the source's order) and with the best
candidate orderings; the cheapest variant that passes the guard represents the contender.

Orderings (``ordering_families``): sorts and z-orders of the filtered columns
(``planner.costmodel.ordering``), the same with the column the table is clustered on now kept as
the last key or dimension (``keep_order``), and a k-d tree over the filtered columns with a
floor for every other column. A new family (a Hilbert curve) is one more entry there.

Score: the workload's estimated seconds (``planner.costmodel.timing``) plus the robustness term,
i.e. the time the robustness set takes, weighted as ``robustness_weight`` of the workload's
volume:

    score = seconds + w · full_scan_seconds(workload) · seconds(robustness set) / full_scan_seconds(robustness set)

With a guard, a variant with a query regressing against the current table is *not allowed*: the
pick is the best allowed contender (the current table always is), unless regressions are allowed.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Callable, Sequence

from planner.costmodel import baselines
from planner.costmodel.bloom import filter_bytes, lookup_columns, with_bloom_filters
from planner.costmodel.cost import CostModel, LayoutCost
from planner.costmodel.ordering import candidate_orderings, zorder_bounds
from planner.model.layout import Layout, Ordering
from planner.semantics.kinds import Kind

ROBUSTNESS_WEIGHT = 0.1
ROBUSTNESS_FLOOR = 0.1  # tree orderings: every column gets this share of the mean filter weight


@dataclass(frozen=True)
class SearchResult:
    ranked: tuple[LayoutCost, ...]  # the current table first, then each contender once: allowed by score, then the rest
    variants: tuple[LayoutCost, ...]  # every (contender, ordering) evaluated
    timings: tuple[tuple[str, float], ...]
    chosen: LayoutCost | None = None  # the pick (None: ranked[0])

    @property
    def best(self) -> LayoutCost:
        return self.chosen if self.chosen is not None else self.ranked[0]

    @property
    def current(self) -> LayoutCost | None:
        from planner.costmodel.current import is_current
        return next((c for c in self.ranked if is_current(c.layout)), None)

    def judged(self, allow_regressions: bool) -> "SearchResult":
        """The same search with regressions allowed or not (every variant was costed and judged)."""
        best: dict[str, LayoutCost] = {}
        for cost in self.variants:
            _keep(best, cost, allow_regressions)
        return rank(best.values(), self.variants, self.timings, allow_regressions=allow_regressions)

    def unguarded(self) -> "SearchResult":
        return self.judged(True)


class Scorer:
    """Costs a layout on the workload and, with a guard, on the robustness set."""

    def __init__(self, model: CostModel, guard=None, robustness_weight: float = ROBUSTNESS_WEIGHT):
        self.model, self.guard = model, guard
        self.factor = 0.0
        if guard is not None and guard.robust_full_seconds() > 0:
            self.factor = robustness_weight * model.full_scan_seconds() / guard.robust_full_seconds()

    def __call__(self, layout: Layout) -> LayoutCost:
        cost = self.model.evaluate(layout)
        if self.guard is None:
            return cost
        verdict = self.guard.check(layout, cost)
        return replace(cost, robustness=self.factor * verdict.robust_seconds, verdict=verdict)


def _partitionable(model: CostModel) -> list[str]:
    """Filtered attributes the sample can evaluate, most-filtered first."""
    counts = model.analysis.filter_counts()
    return [a for a, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
            if model.sample.has(a) and model.kinds.get(a, Kind.OTHER).orderable]


def table_columns(model: CostModel) -> list[str]:
    """Every orderable column of the table in the sample (what a workload-free tree cuts on)."""
    from planner.costmodel.robustness import table_columns as columns
    return columns(model.analysis, model.sample)


def tree_weights(model: CostModel, exclude: Sequence[str] = (), floor: float = ROBUSTNESS_FLOOR) -> dict[str, float]:
    """How often the workload filters each column, plus ``floor`` × the mean for every column."""
    from planner.costmodel.amoeba import filter_weights

    cols = table_columns(model)
    w = filter_weights(model, cols)
    mean = sum(w.values()) / max(1, sum(1 for v in w.values() if v > 0))
    out = {a: v + floor * (mean or 1.0) for a, v in w.items()}
    for a in exclude:
        out.pop(a, None)
    return out


def build_contenders(model: CostModel, log: Callable[[str], None] | None = None) -> tuple[list[Layout], list]:
    from planner.costmodel import trees
    from planner.costmodel.dpmerge import cps_single_column
    from planner.costmodel.multicolumn import best_multi_column

    table = model.analysis.table
    p = model.params
    attrs = _partitionable(model)
    timings = []
    out: list[Layout] = [model.current().layout, baselines.full_scan(table)]

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
    if model.joins:
        from planner.costmodel.sideways import sideways_contenders
        out.extend(timed("sideways cuts", lambda: sideways_contenders(model, singles)))
    common = dict(rows=model.stats.rows, row_bytes=model.row_bytes,
                  max_partition_bytes=max(p.min_partition_bytes, p.target_file_bytes),
                  max_partitions=p.max_partitions, table=table, block_rows=p.block_rows)
    kinds = model.kinds
    everything = table_columns(model)
    out.append(timed("amoeba upfront", lambda: trees.amoeba_hybrid(
        model.sample, kinds, {a: 1.0 for a in everything}, strategy="amoeba", **common)))
    out.append(timed("amoeba weighted", lambda: trees.amoeba_hybrid(
        model.sample, kinds, tree_weights(model), strategy="amoeba-weighted", **common)))
    min_leaf = max(1.0, p.min_partition_bytes / max(model.row_bytes, 1.0))
    out.append(timed("greedy tree", lambda: trees.greedy_tree(model, attrs, max_partitions=p.max_partitions,
                                                               min_leaf_rows=min_leaf, table=table)))
    return [l for l in out if l is not None], timings


# ---- orderings ---------------------------------------------------------------------------------
def clustered_columns(model: CostModel, limit: float = 0.2) -> list[str]:
    """Columns the table is clustered on now, tightest first (``current.clustering``)."""
    from planner.costmodel.current import clustered

    return clustered(model.current(), model.sample, limit)


def keep_order(model: CostModel, orders: Sequence[Ordering], key: str) -> list[Ordering]:
    """``orders`` with the clustered column ``key`` kept: last sort key, or one more z-order
    dimension (a z-order takes at most 10 columns of 6 bits)."""
    out = []
    for o in orders:
        if key in o.columns:
            continue
        if o.method == "sort":
            out.append(Ordering("sort", o.columns + (key,)))
        elif o.method == "zorder" and len(o.columns) < 10:
            out.append(Ordering("zorder", o.columns + (key,), o.bounds + (zorder_bounds(model.sample, key),)))
    return out


def tree_orderings(model: CostModel, exclude: Sequence[str] = (), keep: str | None = None,
                   boosts: Sequence[float] = (0, 2, 8)) -> list[Ordering]:
    """Trees weighted by the workload (every column floored), without the columns in ``exclude``
    (already cut by the partitions). With a clustered column ``keep``: its rows ordered by it
    inside each leaf, and it weighted ``boost`` × the most filtered column as well, so the guard
    can find how much of the tree it needs."""
    from planner.costmodel.tree_order import tree_ordering

    p = model.params
    weights = tree_weights(model, exclude)
    top = max(weights.values(), default=1.0)
    variants = [(weights, ())] if keep is None else \
        [(weights | ({keep: b * top} if b else {}), (keep,)) for b in boosts]
    out = []
    for w, then in variants:
        o = tree_ordering(model.sample, model.kinds, w, rows=model.stats.rows, block_rows=p.block_rows, then=then)
        if o is not None:
            out.append(o)
    return list(dict.fromkeys(out))


def ordering_families(model: CostModel, clustered: Sequence[str]) -> list[Ordering]:
    """Every candidate ordering of the unpartitioned table: sorts and z-orders of the filtered
    columns, the same keeping the clustered column, the clustered column alone (the load order,
    made explicit), and trees."""
    basic = candidate_orderings(model.sample, model.analysis.filter_counts())
    key = clustered[0] if clustered else None
    kept = keep_order(model, basic, key) + [Ordering("sort", (key,))] if key else []
    trees = tree_orderings(model) + (tree_orderings(model, keep=key, boosts=(0, 4)) if key else [])
    return list(dict.fromkeys(basic + kept + trees))


# ---- the search --------------------------------------------------------------------------------
def search(model: CostModel, log: Callable[[str], None] | None = None, orderings: bool = True,
           orderings_per_contender: int = 3, guard=None, allow_regressions: bool = False,
           robustness_weight: float = ROBUSTNESS_WEIGHT, refine: int = 2, finalists: int = 8) -> SearchResult:
    """Rank contenders.

    Orderings are first ranked on the unpartitioned table. Each contender tries its own order, no
    order and the clustered column alone (the load order kept); the ``finalists`` best of them
    then try the ``orderings_per_contender`` best orderings and the two best allowed ones. Then
    the ``refine`` best partitioned contenders also try a tree conditioned on their partitions
    (their partition columns are already cut), plain and keeping the clustered column.
    """
    from planner.costmodel.current import is_current

    score = Scorer(model, guard, robustness_weight)
    layouts, timings = build_contenders(model, log)
    t = time.perf_counter()
    clustered = clustered_columns(model) if orderings else []
    candidates = ordering_families(model, clustered) if orderings else []
    timings.append(("orderings", time.perf_counter() - t))
    t = time.perf_counter()
    variants: list[LayoutCost] = []
    best: dict[str, LayoutCost] = {}

    def run(layout: Layout) -> LayoutCost:
        cost = score(layout)
        variants.append(cost)
        _keep(best, cost, allow_regressions)
        return cost

    base = baselines.full_scan(model.analysis.table)
    by_score = sorted((run(with_order(base, o, model.analysis.derived)) for o in candidates), key=lambda c: c.score)
    top = [c.layout.order for c in by_score[:orderings_per_contender]]
    top += [c.layout.order for c in by_score if c.allowed and c.layout.order not in top][:2]
    load_order = [Ordering("sort", (clustered[0],))] if clustered else []
    first: dict[str, LayoutCost] = {}
    for layout in layouts:
        if is_current(layout):
            run(layout)  # the table as it is: its own order, nothing to try
            continue
        orders = [layout.order] + ([Ordering()] if layout.order.method != "none" else [])
        if layout.order.method == "none" and orderings:
            orders += load_order
        for order in dict.fromkeys(orders):
            if layout == base and order.method != "none":
                continue  # already costed above
            _keep(first, run(with_order(layout, order, model.analysis.derived)), allow_regressions)
    ranked_first = sorted(first.values(), key=lambda c: c.score)[:finalists]
    for cost in ranked_first if orderings else ():
        layout = replace(cost.layout, order=Ordering()) if cost.layout.order.method != "tree" else None
        if layout is None or layout == base:
            continue
        for order in top:
            run(with_order(layout, order, model.analysis.derived))
    if orderings and refine:
        partitioned = sorted((c for c in best.values() if len(c.layout.partitions) > 1 and c.layout.order.method != "tree"
                              and not is_current(c.layout)), key=lambda c: (not c.allowed, c.score))[:refine]
        key = clustered[0] if clustered else None
        for cost in partitioned:
            layout = replace(cost.layout, order=Ordering())
            for order in tree_orderings(model, exclude=layout.attributes, keep=key, boosts=(0, 4)):
                run(with_order(layout, order, model.analysis.derived))
    if orderings and guard is not None and clustered:
        # The guard rules out most cuts of a table clustered on a key; a few partitions, each in
        # the load order, may still pass it and beat the table as it is.
        load = Ordering("sort", (clustered[0],))
        for layout in coarse_cuts(model, _partitionable(model)):
            run(with_order(layout, load, model.analysis.derived))
    lookups = lookup_columns(model.scans, model.kinds, model.analysis.derived)
    if lookups:
        t_bloom = time.perf_counter()
        # the table in its load order, which keeps the lookups on the clustered key as they are
        # today: with filters on the other lookup columns it may be the best default of all
        load = [run(with_order(base, Ordering("sort", (clustered[0],)), model.analysis.derived))] if clustered else []
        pool = sorted(best.values(), key=lambda c: (not (c.allowed or allow_regressions), c.score))[:finalists]
        # and the best whatever the guard says: ``--allow-regressions``' pick gets its filters too
        unguarded: dict[str, LayoutCost] = {}
        for cost in variants:
            _keep(unguarded, cost, True)
        pool += sorted(unguarded.values(), key=lambda c: c.score)[:UNGUARDED_FINALISTS]
        seen: set[int] = set()
        for cost in load + [c for c in pool if not is_current(c.layout)]:
            if id(cost) not in seen:
                seen.add(id(cost))
                with_filters(model, cost, lookups, run)
        timings.append(("bloom filters", time.perf_counter() - t_bloom))
    timings.append(("costing", time.perf_counter() - t))
    return rank(best.values(), variants, timings, allow_regressions)


UNGUARDED_FINALISTS = 2  # layouts the guard rules out that are given filters all the same
# Filters may add at most this share of the table's bytes: parquet-java rounds a filter up to a
# power of two (one sized for a row group of ~15,000 distinct values at 1 % takes 32 KiB, about two
# bytes a row), and two columns looked up (a key and a price) must both fit.
BLOOM_STORAGE_SHARE = 0.15
# A filter must save this share of the layout's score. Small: a filter is read only by the
# lookups it serves (no other query pays for it), so a filter that saves time is worth its bytes
# within the budget above.
BLOOM_MIN_GAIN = 0.001


def with_filters(model: CostModel, cost: LayoutCost, columns: Sequence[str], run: Callable[[Layout], LayoutCost],
                 limit: int = 4) -> LayoutCost:
    """``cost``'s layout with bloom filters on the lookup columns that pay: each column is priced
    alone first (a column whose lookups its dictionaries already serve gains nothing and takes no
    place), then the ones that gain are added greedily, the best first, each saving
    ``BLOOM_MIN_GAIN`` of the score, at most ``limit`` of them and together at most
    ``BLOOM_STORAGE_SHARE`` of the table's bytes. A filter is sized for a row group of distinct
    values (the columns that need one are nearly unique)."""
    rows_per_group = model.params.row_group_rows
    groups = max(1.0, model.stats.rows / max(rows_per_group, 1))
    per_filter = filter_bytes(rows_per_group) * groups
    budget = BLOOM_STORAGE_SHARE * max(model.stats.bytes, 1)

    def pays(trial: LayoutCost, than: LayoutCost) -> bool:
        return trial.score < than.score * (1 - BLOOM_MIN_GAIN) and (trial.allowed or not than.allowed)

    layout, chosen, current = cost.layout, {}, cost
    alone = {column: run(with_bloom_filters(layout, {column: float(rows_per_group)})) for column in columns}
    gaining = sorted((trial.score, column) for column, trial in alone.items() if pays(trial, cost))
    for _, column in gaining[:limit]:
        if per_filter * (len(chosen) + 1) > budget:
            break
        trial = alone[column] if not chosen else run(with_bloom_filters(layout, chosen | {column: float(rows_per_group)}))
        if pays(trial, current):
            chosen[column] = float(rows_per_group)
            current = trial
    return current


COARSE_PARTITIONS = (2, 3, 4, 6, 8)
COARSE_COLUMNS = 4


def coarse_cuts(model: CostModel, attrs: Sequence[str], columns: int = COARSE_COLUMNS,
                partitions: Sequence[int] = COARSE_PARTITIONS) -> list[Layout]:
    """CPS plans of a few partitions on one of the ``columns`` most filtered attributes.

    Kept in the load order inside (``l_orderkey``), a lookup on the key the table is clustered
    on reads one run per partition: one or two pages more each. A few partitions can stay
    within the guard's 1.2x where the full CPS plan does not (the guarded Q6 pick of
    ``benchmarks/results/issue11/tpch_sf1.md`` is one)."""
    from planner.costmodel.dpmerge import cps_single_column

    out: list[Layout] = []
    for a in attrs[:columns]:
        for k in partitions:
            layout = cps_single_column(model, a, max_partitions=k)
            if len(layout.partitions) > 1 and layout not in out:
                out.append(layout)
    return out


MIN_GAIN = 0.01  # a new layout must beat the table as it is by this share of its score


def rank(best, variants, timings, allow_regressions: bool = False, min_gain: float = MIN_GAIN) -> SearchResult:
    """The current table first, then allowed contenders by score, then the rest. The pick is the
    best allowed contender, and the table as it is unless a contender beats its score by
    ``min_gain`` (rewriting a table for less is not worth a copy)."""
    from planner.costmodel.current import is_current

    pool = list(best)
    current = [c for c in pool if is_current(c.layout)]
    others = sorted((c for c in pool if not is_current(c.layout)),
                    key=lambda c: (not (c.allowed or allow_regressions), c.score))
    eligible = [c for c in others if c.allowed or allow_regressions]
    chosen = eligible[0] if eligible else (current or others)[0]
    if current and (not eligible or chosen.score > current[0].score * (1 - min_gain)):
        chosen = current[0]
    return SearchResult(tuple(current + others), tuple(variants), tuple(timings), chosen)


def with_order(layout: Layout, order: Ordering, derived) -> Layout:
    """``layout`` ordered by ``order``, knowing every derived attribute the order names.

    An order may use a derived attribute the partitions do not (``no partitioning`` sorted by
    ``l_commitdate < l_receiptdate``); without its definition in ``layout.derived`` the emitted
    ``SORT BY`` names a column ``l_commitdate < l_receiptdate`` that does not exist.
    """
    from planner.costmodel.current import is_current

    if is_current(layout):
        return layout
    known = dict(layout.derived)
    extra = tuple((c, derived[c]) for c in order.columns if c in derived and c not in known)
    return replace(layout, order=order, derived=layout.derived + extra)


def _keep(best: dict[str, LayoutCost], cost: LayoutCost, allow_regressions: bool) -> None:
    """Keep each strategy's best variant: allowed before not allowed, then by score."""
    key = cost.layout.strategy
    rank_of = lambda c: (not (c.allowed or allow_regressions), c.score)  # noqa: E731
    if key not in best or rank_of(cost) < rank_of(best[key]):
        best[key] = cost


__all__ = ["SearchResult", "Scorer", "build_contenders", "clustered_columns", "coarse_cuts", "keep_order",
           "ordering_families", "rank", "search", "tree_orderings", "tree_weights", "with_order"]

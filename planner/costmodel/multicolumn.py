"""Multi-column CPS plans (the CPS paper's future work): cross products of merged single-column plans.

A plan on columns ``(a, b)`` cuts ``a``'s elementary pieces into ``k_a`` runs and ``b``'s into
``k_b`` runs (``planner.costmodel.dpmerge``); its cells are the ``k_a · k_b`` boxes
``a IN A_i AND b IN B_j``. The product must stay within ``max_partitions``, so the partition
budget is split across the columns: a few splits are tried (``K^f`` groups for exponent shares
``f`` summing to 1, the free optimum when it fits, shares proportional to each column's own
log group count) and the cheapest by ``CostModel.evaluate`` wins.

Each column's runs are chosen by the single-column DP with two adjustments for the product:

* the minimum size of a run is the cell minimum times the number of cells it will be split into
  (``min_rows · Π_{other} k``), so cells reach the minimum when the columns are independent;
* the per-partition overhead is charged once per cell of the run.

Correlated columns leave some cells small or empty. The *last* column of the tuple is therefore
cut once more, row by row: for each combination of the other columns' runs, the DP re-merges
that row's cells along the last column using the cells' real sample sizes and the scans that
reach the row. Cells stay boxes, so regions remain disjoint and covering; a row whose cells
together are below the minimum becomes one cell. Empty cells are not special-cased: the row DP
joins them to a neighbour when the model says that is cheaper (an empty cell still costs every
scan that reads it one partition and one file), and otherwise keeps them.

``best_multi_column`` puts the best-ranked column last, since it profits most from the row cut.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import replace
from typing import Sequence

import numpy as np

from planner.costmodel.dpmerge import (
    ColumnPieces,
    column_pieces,
    cps_single_column,
    group_sets,
    min_rows,
    model_overhead,
    piece_labels,
    solve_merge,
)
from planner.errors import PlannerError
from planner.model.layout import Layout, Partition


def _scan_group_hits(model, info: ColumnPieces, groups) -> np.ndarray:
    """``hits[s, g]``: scan ``s`` may read run ``g`` of the column (same rule as ``hit_matrix``)."""
    index = {vs: i for i, vs in enumerate(info.pieces.sets)}
    prefix = np.concatenate([np.zeros((len(index), 1), dtype=np.int64),
                             np.cumsum(info.pieces.member, axis=1)], axis=1)
    starts = np.array([i for i, _ in groups])
    ends = np.array([j for _, j in groups]) + 1
    by_set = (prefix[:, ends] - prefix[:, starts]) > 0
    out = np.ones((len(model.scans), len(groups)), dtype=bool)
    for s_idx, scan in enumerate(model.scans):
        if scan.groups.unsatisfiable:
            out[s_idx] = False
        elif info.column in scan.sets:
            out[s_idx] = by_set[index[scan.sets[info.column]]]
    return out


def _scaled_overhead(model, cells: int):
    base = model_overhead(model)
    return lambda rows: cells * base(rows / cells)


def _cross_layout(model, infos: Sequence[ColumnPieces], targets: Sequence[int], max_partitions: int) -> Layout:
    columns = [i.column for i in infos]
    cell_min = min_rows(model)
    groups, sets, hits, labels = [], [], [], []
    for d, info in enumerate(infos):
        others = math.prod(t for e, t in enumerate(targets) if e != d)
        merge = solve_merge(info.rows, info.hits, info.weights, min_size=cell_min * others,
                            max_groups=targets[d], overhead=_scaled_overhead(model, others))
        g = list(merge.groups)
        groups.append(g)
        sets.append(group_sets(info, g))
        hits.append(_scan_group_hits(model, info, g))
        of_piece = np.repeat(np.arange(len(g)), [j - i + 1 for i, j in g])
        labels.append(of_piece[piece_labels(model.sample, info.column, info.pieces.pieces)])
    counts = [len(g) for g in groups]
    # Joint sample counts per cell; rows of the table are counted in the model's scale.
    cell = np.ravel_multi_index(tuple(labels), counts) if counts else np.zeros(0, dtype=np.int64)
    sizes = np.bincount(cell, minlength=math.prod(counts)).reshape(counts) * model.scale
    # Scans with equal hit patterns over all runs read the same cells: merge them once.
    pattern = np.hstack(hits)
    uniq, inverse = np.unique(pattern, axis=0, return_inverse=True)
    weights = np.bincount(inverse.ravel(), weights=model.weights, minlength=len(uniq))
    splits = np.cumsum(counts)[:-1]
    parts = np.split(uniq, splits, axis=1)
    last, ovh = parts[-1], model_overhead(model)
    partitions: list[Partition] = []
    for row in itertools.product(*(range(k) for k in counts[:-1])):
        reach = weights.copy()
        for d, g in enumerate(row):
            reach = reach * parts[d][:, g]
        runs = solve_merge(sizes[row], last, reach, min_size=cell_min, max_groups=counts[-1], overhead=ovh).groups
        head = tuple((columns[d], sets[d][g]) for d, g in enumerate(row))
        for i, j in runs:
            vs = sets[-1][i]
            for k in range(i + 1, j + 1):
                vs = vs.union(sets[-1][k])
            partitions.append(Partition(len(partitions) + 1, head + ((columns[-1], vs),)))
    if len(partitions) > max_partitions:  # cannot happen: rows never gain cells
        raise AssertionError("multi-column plan exceeds its partition budget")
    derived = model.analysis.derived
    return Layout(
        table=model.analysis.table,
        strategy="cps:" + ",".join(columns),
        partitions=tuple(partitions),
        kinds=tuple((c, model.kinds[c]) for c in columns),
        derived=tuple((c, derived[c]) for c in columns if c in derived),
        meta=(("split", list(counts)),),
    )


def budget_splits(free: Sequence[int], budget: int) -> list[tuple[int, ...]]:
    """Target group counts per column whose product is at most ``budget``.

    ``free[i]`` is column i's own optimal group count (never exceeded: more runs than that do
    not pay even alone). Worked example, free (40, 6), budget 100: the free optimum 240 does not
    fit. Share 1/2 each gives 100^(1/2) = 10 runs each, b is capped at its free 6 and a takes the
    budget left, 100 // 6 = 16: (16, 6). Shares (2/3, 1/3) give (21, 4), then a grows to 25:
    (25, 4); shares (3/4, 1/4) give (33, 3). Result: [(16, 6), (25, 4), (33, 3)].
    """
    d = len(free)
    if math.prod(free) <= budget:
        return [tuple(free)]
    shares = {tuple(c / sum(parts) for c in parts)
              for parts in itertools.product(range(1, 4), repeat=d) if sum(parts) <= d + 2}
    logs = [math.log(max(f, 2)) for f in free]
    shares.add(tuple(x / sum(logs) for x in logs))
    out: dict[tuple[int, ...], None] = {}
    for share in sorted(shares):
        targets = [min(f, max(1, math.floor(budget ** s + 1e-9))) for f, s in zip(free, share)]
        # Budget left by columns capped at their free count goes to the others, largest share first.
        for i in sorted(range(d), key=lambda i: -share[i]):
            rest = math.prod(t for e, t in enumerate(targets) if e != i)
            targets[i] = max(1, min(free[i], budget // rest))
        out[tuple(targets)] = None
    return list(out)


def cps_multi_column(model, columns: tuple[str, ...], *, max_partitions: int | None = None) -> Layout:
    """The cheapest cross-product plan on ``columns`` within ``max_partitions`` partitions."""
    if len(columns) < 1 or len(set(columns)) != len(columns):
        raise PlannerError(f"multi-column plans need distinct columns, not {columns!r}")
    budget = model.params.max_partitions if max_partitions is None else max_partitions
    if budget < 1:
        raise PlannerError(f"max_partitions must be at least 1, not {budget}")
    infos = [column_pieces(model, c) for c in columns]
    free = [len(solve_merge(i.rows, i.hits, i.weights, min_size=min_rows(model), max_groups=budget,
                            overhead=model_overhead(model)).groups) for i in infos]
    best, best_cost = None, math.inf
    for targets in budget_splits(free, budget):
        layout = _cross_layout(model, infos, targets, budget)
        cost = model.evaluate(layout).total
        if cost < best_cost:
            best, best_cost = layout, cost
    meta = dict(best.meta) | {"estimated_cost": best_cost, "free_groups": free}
    return replace(best, meta=tuple(meta.items()))


def best_multi_column(model, singles: Sequence[Layout | str], max_columns: int = 3, *,
                      max_partitions: int | None = None) -> list[Layout]:
    """Cross products of the best 2..``max_columns`` single-column plans, cheapest first.

    ``singles`` are single-column layouts or column names (planned with ``cps_single_column``).
    Plans with one partition prune nothing and are left out of the combinations.
    """
    ranked: dict[str, float] = {}
    for s in singles:
        layout = cps_single_column(model, s, max_partitions=max_partitions) if isinstance(s, str) else s
        if len(layout.attributes) != 1:
            raise PlannerError(f"{layout.strategy} is not a single-column plan")
        if len(layout.partitions) > 1:
            cost = model.evaluate(layout).total
            column = layout.attributes[0]
            ranked[column] = min(cost, ranked.get(column, math.inf))
    top = sorted(ranked, key=ranked.get)[:max_columns]
    out: list[tuple[float, Layout]] = []
    for r in range(2, len(top) + 1):
        for combo in itertools.combinations(top, r):
            layout = cps_multi_column(model, tuple(reversed(combo)), max_partitions=max_partitions)
            out.append((dict(layout.meta)["estimated_cost"], layout))
    out.sort(key=lambda x: x[0])
    return [layout for _, layout in out]


__all__ = ["cps_multi_column", "best_multi_column", "budget_splits"]

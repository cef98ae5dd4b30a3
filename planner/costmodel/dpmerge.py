"""CPS single-column plans with the cheapest merging of adjacent elementary pieces.

The CPS candidate plan (``planner.analysis.cps``) keeps every condition the workload distinguishes; with
a few hundred predicates that is thousands of tiny partitions. Here the column's ordered
elementary pieces are cut into runs of consecutive pieces, and the runs become the partitions.
A run ``[i..j]`` costs, in the row-equivalents of ``planner.costmodel.cost``,

    cost(i..j) = W(i..j) · ( rows(i..j) + partition_overhead + files(rows(i..j)) · file_overhead )

where ``W(i..j)`` is the summed weight of the scans that hit *any* piece of the run (a scan that
does not constrain the column hits every piece). That is exactly what ``CostModel.evaluate``
charges for a single-column layout, so the plan found here is the model's optimum among all
"consecutive runs" plans, subject to

* every run holds at least ``min_partition_bytes`` (unless the whole table is smaller: then one
  partition), and
* at most ``max_partitions`` runs.

Worked example (sizes 10, 10, 80; scan A weight 1 hits piece 0, scan B weight 1 hits piece 2,
no overhead): {0,1,2} costs 2·100 = 200; {0},{1},{2} costs 10 + 0 + 80 = 90; {0,1},{2} costs
20 + 80 = 100. The middle piece is read by nobody, so it is best kept alone.

NULL is the last piece, so the search treats it like any other piece: it either stays a
partition of its own or joins the last run (``[x, +inf) ∪ NULL``). Either way it lands in
exactly one partition.

Algorithm. For a right end ``j``, ``W(i..j)`` as ``i`` runs leftwards only grows; a scan class
``c`` (scans with equal hit rows, weights summed) starts counting at ``i <= last_c`` where
``last_c`` is its last hit at or before ``j``. Moving ``j`` one piece right adds ``w_c`` to the
range ``(last_c, j]`` for each class hitting piece ``j`` only: a difference array and one
cumulative sum, O(j + new hits) per ``j``. The dynamic programme over ``j`` is then one
vectorised minimum per column, O(m²) in total.

Exactness. Without a binding count bound the DP is exact. When the unconstrained optimum has
more than ``max_groups`` runs:

* if ``max_groups · m²`` is small (``EXACT_BUDGET``), a DP layered by run count is exact;
* otherwise a per-run penalty λ is added and binary-searched (Lagrangian relaxation). The result
  respects the bound and is the cheapest of all plans with at most *its own* run count; when
  that count equals the bound it is exact, otherwise a plan with more runs (still within the
  bound) might be slightly cheaper (the duality gap). ``Merge.exact`` says which happened.
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

import numpy as np

from planner.analysis.cps import Pieces, elementary_pieces
from planner.cnf.valueset import ValueSet
from planner.errors import PlannerError
from planner.model.layout import Layout, Partition

Overhead = float | Callable[[np.ndarray], np.ndarray]
EXACT_BUDGET = 5e7  # max_groups · m² cells of the layered exact DP before falling back to λ search
_CACHE_COLUMNS = 6_000  # keep the cost columns in memory (m²/2 floats) up to this many pieces


@dataclass(frozen=True)
class Merge:
    groups: tuple[tuple[int, int], ...]  # inclusive piece ranges, in order, covering 0..m-1
    cost: float
    exact: bool
    method: str  # single | unconstrained | layered | lagrangian


# ---- the pure merge ------------------------------------------------------------------------
def merge_pieces(sizes: Sequence[float], hits, weights: Sequence[float], *, min_size: float = 0.0,
                 max_groups: int | None = None, overhead: Overhead = 0.0, method: str = "auto"
                 ) -> list[tuple[int, int]]:
    """Cheapest cut of pieces ``0..m-1`` into runs; see ``solve_merge``."""
    return list(solve_merge(sizes, hits, weights, min_size=min_size, max_groups=max_groups,
                            overhead=overhead, method=method).groups)


def solve_merge(sizes: Sequence[float], hits, weights: Sequence[float], *, min_size: float = 0.0,
                max_groups: int | None = None, overhead: Overhead = 0.0, method: str = "auto") -> Merge:
    """Cheapest cut of pieces into runs of consecutive pieces.

    ``sizes[i]``: rows of piece ``i``. ``hits``: bool matrix ``[scans, pieces]`` or one list of
    piece indices per scan. ``weights[s]``: weight of scan ``s``. ``overhead``: cost per scan
    reading a run, constant or a function of the run's rows (vectorised). Runs hold at least
    ``min_size`` rows unless all pieces together hold less (then one run), and there are at most
    ``max_groups`` runs. ``method``: ``auto``, ``layered`` (exact) or ``lagrangian``.
    """
    sizes = np.asarray(sizes, dtype=float)
    m = len(sizes)
    if m == 0:
        return Merge((), 0.0, True, "single")
    if max_groups is not None and max_groups < 1:
        raise PlannerError(f"max_groups must be at least 1, not {max_groups}")
    if method not in ("auto", "layered", "lagrangian"):
        raise ValueError(f"unknown method {method!r}")
    classes, class_w, const_w = _scan_classes(_hit_matrix(hits, m), np.asarray(weights, dtype=float))
    ovh = overhead if callable(overhead) else (lambda r, c=float(overhead): np.full(len(r), c))
    prefix = np.concatenate(([0.0], np.cumsum(sizes)))
    if prefix[-1] < min_size * (1 - 1e-12) or m == 1:
        whole = ((0, m - 1),)
        return Merge(whole, _total(prefix, classes, class_w, const_w, ovh, whole), True, "single")
    cols = _CostColumns(prefix, classes, class_w, const_w, ovh, min_size)
    limit = m if max_groups is None else min(max_groups, m)
    groups, count = _penalised(cols, 0.0)
    if count <= limit:
        return Merge(groups, _total(prefix, classes, class_w, const_w, ovh, groups), True, "unconstrained")
    if method == "layered" or (method == "auto" and limit * m * m <= EXACT_BUDGET):
        groups = _layered(cols, limit)
        return Merge(groups, _total(prefix, classes, class_w, const_w, ovh, groups), True, "layered")
    groups = _lagrangian(cols, limit)
    # The λ-optimal cut is the cheapest of all cuts with at most as many runs as it has, so it is
    # exact when it uses the whole budget.
    return Merge(groups, _total(prefix, classes, class_w, const_w, ovh, groups), len(groups) == limit,
                 "lagrangian")


def grouping_cost(sizes: Sequence[float], hits, weights: Sequence[float],
                  groups: Iterable[tuple[int, int]], overhead: Overhead = 0.0) -> float:
    """Cost of a given cut, straight from the definition (for tests and reports)."""
    sizes = np.asarray(sizes, dtype=float)
    h = _hit_matrix(hits, len(sizes))
    w = np.asarray(weights, dtype=float)
    total = 0.0
    for i, j in groups:
        rows = float(sizes[i:j + 1].sum())
        extra = overhead(np.array([rows]))[0] if callable(overhead) else float(overhead)
        total += float(w[h[:, i:j + 1].any(axis=1)].sum()) * (rows + extra)
    return float(total)


def _hit_matrix(hits, m: int) -> np.ndarray:
    if isinstance(hits, np.ndarray) and hits.ndim == 2:
        if hits.shape[1] != m:
            raise ValueError(f"hits has {hits.shape[1]} pieces, sizes has {m}")
        return hits.astype(bool, copy=False)
    rows = [list(r) for r in hits]
    out = np.zeros((len(rows), m), dtype=bool)
    for s, r in enumerate(rows):
        out[s, r] = True
    return out


def _scan_classes(hits: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Scans with equal hit rows merged (weights summed); scans hitting every piece set apart."""
    if len(weights) != hits.shape[0]:
        raise ValueError(f"{hits.shape[0]} hit rows but {len(weights)} weights")
    every = hits.all(axis=1)
    const_w = float(weights[every].sum())
    keep = ~every & hits.any(axis=1) & (weights != 0)
    if not keep.any():
        return np.zeros((0, hits.shape[1]), dtype=bool), np.zeros(0), const_w
    uniq, inverse = np.unique(hits[keep], axis=0, return_inverse=True)
    return uniq, np.bincount(inverse.ravel(), weights=weights[keep], minlength=len(uniq)), const_w


def _total(prefix, classes, class_w, const_w, ovh, groups) -> float:
    total = 0.0
    for i, j in groups:
        rows = prefix[j + 1] - prefix[i]
        w = const_w + float(class_w[classes[:, i:j + 1].any(axis=1)].sum()) if len(class_w) else const_w
        total += w * (rows + float(ovh(np.array([rows]))[0]))
    return float(total)


class _CostColumns:
    """``col(j)[i]`` = cost of run ``[i..j]`` (``inf`` if it breaks the minimum size)."""

    def __init__(self, prefix, classes, class_w, const_w, ovh, min_size):
        self.m = len(prefix) - 1
        self.prefix, self.class_w, self.const_w, self.ovh = prefix, class_w, const_w, ovh
        self.min_size = min_size * (1 - 1e-12)
        self.by_piece = [np.flatnonzero(col) for col in np.ascontiguousarray(classes.T)]
        self.cache: list[np.ndarray] | None = [] if self.m <= _CACHE_COLUMNS else None

    def __iter__(self):
        if self.cache is not None and len(self.cache) == self.m:
            yield from self.cache
            return
        last = np.full(len(self.class_w), -1, dtype=np.int64)
        w_run = np.zeros(self.m)  # W(i..j) for the current j, classes only
        out = []
        for j in range(self.m):
            new = self.by_piece[j]
            if new.size:
                diff = np.zeros(j + 2)
                np.add.at(diff, last[new] + 1, self.class_w[new])
                diff[j + 1] -= self.class_w[new].sum()
                w_run[:j + 1] += np.cumsum(diff[:j + 1])
                last[new] = j
            rows = self.prefix[j + 1] - self.prefix[:j + 1]
            col = (w_run[:j + 1] + self.const_w) * (rows + self.ovh(rows))
            col[rows < self.min_size] = np.inf
            if self.cache is not None:
                out.append(col)
            yield col
        if self.cache is not None:
            self.cache = out


def _penalised(cols: _CostColumns, lam: float) -> tuple[tuple[tuple[int, int], ...], int]:
    """Cheapest cut with ``lam`` added per run; ties go to fewer runs."""
    m = cols.m
    best = np.full(m + 1, np.inf)
    best[0] = 0.0
    count = np.zeros(m + 1, dtype=np.int64)
    arg = np.zeros(m, dtype=np.int64)
    for j, col in enumerate(cols):
        vals = best[:j + 1] + col
        lo = vals.min()
        if not np.isfinite(lo):
            continue
        ties = np.flatnonzero(vals <= lo + 1e-12 * abs(lo))
        i = int(ties[np.argmin(count[ties])])
        best[j + 1] = vals[i] + lam
        count[j + 1] = count[i] + 1
        arg[j] = i
    return _backtrack(arg, m), int(count[m])


def _backtrack(arg: np.ndarray, m: int) -> tuple[tuple[int, int], ...]:
    out, j = [], m - 1
    while j >= 0:
        i = int(arg[j])
        out.append((i, j))
        j = i - 1
    return tuple(reversed(out))


def _layered(cols: _CostColumns, limit: int) -> tuple[tuple[int, int], ...]:
    """Exact: ``best_k[j]`` = cheapest cut of the first ``j`` pieces into exactly ``k`` runs."""
    m = cols.m
    cost = np.full((m, m), np.inf)  # cost[i, j] of run [i..j]
    for j, col in enumerate(cols):
        cost[:j + 1, j] = col
    prev = np.full(m + 1, np.inf)
    prev[0] = 0.0
    args = np.zeros((limit, m), dtype=np.int64)
    best_k, best_total = 0, np.inf
    for k in range(limit):
        table = prev[:m, None] + cost
        args[k] = table.argmin(axis=0)
        cur = np.full(m + 1, np.inf)
        cur[1:] = table[args[k], np.arange(m)]
        if cur[m] < best_total * (1 - 1e-12):
            best_k, best_total = k, cur[m]
        prev = cur
    out, j = [], m - 1
    for k in range(best_k, -1, -1):
        i = int(args[k, j])
        out.append((i, j))
        j = i - 1
    return tuple(reversed(out))


def _lagrangian(cols: _CostColumns, limit: int) -> tuple[tuple[int, int], ...]:
    lo = 0.0
    whole = next(c for j, c in enumerate(cols) if j == cols.m - 1)[0]
    hi = 2.0 * whole + 1.0  # above the one-run cost, more runs never pay
    groups, count = _penalised(cols, hi)
    for _ in range(100):
        if count == limit or hi - lo <= 1e-12 * hi:
            break
        mid = (lo + hi) / 2
        g, c = _penalised(cols, mid)
        if c <= limit:
            hi, groups, count = mid, g, c
        else:
            lo = mid
    return groups


# ---- from a cost model -----------------------------------------------------------------------
@dataclass(frozen=True)
class ColumnPieces:
    """What the merge needs to know about one column, estimated from the model's sample."""

    column: str
    pieces: Pieces
    rows: np.ndarray  # estimated table rows per piece
    hits: np.ndarray  # bool [classes, pieces]: class i is ``pieces.sets[i]``, the last class is
    weights: np.ndarray  # "every piece" (scans not constraining the column)


def column_pieces(model, column: str) -> ColumnPieces:
    """Elementary pieces of ``column`` under the model's workload, their sizes and who reads them."""
    if column not in model.kinds:
        raise PlannerError(f"no column or derived attribute {column!r} in table {model.analysis.table}")
    if not model.sample.has(column):
        raise PlannerError(f"the sample of {model.analysis.table} has no column {column!r}")
    kind = model.kinds[column]
    sets = list(dict.fromkeys(s.sets[column] for s in model.scans if column in s.sets))
    if model.joins and kind.orderable and column not in model.analysis.derived:
        sets += [c for c in join_cuts(model.sample, column, kind) if c not in sets]
    pieces = elementary_pieces(kind, sets)
    index = {s: i for i, s in enumerate(pieces.sets)}
    weights = np.zeros(len(pieces.sets) + 1)
    for s, w in zip(model.scans, model.weights):
        if s.groups.unsatisfiable:
            continue  # reads nothing under any layout
        weights[index[s.sets[column]] if column in s.sets else -1] += w
    hits = np.vstack([pieces.member, np.ones((1, len(pieces.pieces)), dtype=bool)])
    labels = piece_labels(model.sample, column, pieces.pieces)
    rows = np.bincount(labels[labels >= 0], minlength=len(pieces.pieces)) * model.scale
    if model.joins:  # scans filtered through joins: a class of their own each, pieces their joins exclude left out
        hits, weights = _join_classes(model, column, labels, hits, weights, index)
    return ColumnPieces(column, pieces, rows, hits, weights)


JOIN_CUTS = 64  # quantiles of a column offered as extra cuts when scans are filtered through joins


def join_cuts(sample, column: str, kind, n: int = JOIN_CUTS) -> list[ValueSet]:
    """``column < q`` at ``n`` quantiles of the sample: cuts no predicate on the column asks for, but
    that may serve a filter on a joined column correlated with it (``l_shipdate`` and orders'
    ``o_orderdate``). Unread by every scan (weight 0); the merge keeps those the join classes pay for."""
    codes = np.sort(sample.codes(column)[sample.codes(column) >= 0])
    if not len(codes):
        return []
    uniq = sample.uniques(column)
    picks = sorted({int(codes[min(len(codes) - 1, k * len(codes) // n)]) for k in range(1, n)})
    return [ValueSet.range(kind, None, uniq[c], True, False) for c in picks]


def _join_classes(model, column: str, labels: np.ndarray, hits: np.ndarray, weights: np.ndarray, index):
    """Move each scan with induced predicates out of its class into one of its own, whose hits are
    its class's minus the pieces none of whose rows joins a row its joined filter allows
    (``planner.costmodel.joined``; a run of pieces is then hit when any of its pieces is)."""
    keep = model.joins.keep(labels, hits.shape[1])
    rows, extra = [], []
    for i, (s, w) in enumerate(zip(model.scans, model.weights)):
        if s.groups.unsatisfiable or keep[i].all():
            continue
        c = index[s.sets[column]] if column in s.sets else -1
        weights[c] -= w
        rows.append(hits[c] & keep[i])
        extra.append(w)
    if not rows:
        return hits, weights
    return np.vstack([hits[:-1], rows, hits[-1:]]), np.concatenate([weights[:-1], extra, weights[-1:]])


def piece_labels(sample, column: str, pieces: Sequence[ValueSet]) -> np.ndarray:
    """Piece index of every sample row (-1 if none), with the bisection rules of ``SampleFrame.mask``.

    One pass over the sorted distinct values instead of one row mask per piece (which the sample
    would also cache: thousands of pieces times the sample size).
    """
    uniq = sample.uniques(column)
    of_unique = np.full(len(uniq) + 1, -1, dtype=np.int64)  # the extra slot is NULL (code -1)
    for p_idx, vs in enumerate(pieces):
        if vs.null:
            of_unique[-1] = p_idx
        for iv in vs.intervals:
            start = 0 if iv.lo is None else (bisect.bisect_left(uniq, iv.lo) if iv.lo_closed
                                             else bisect.bisect_right(uniq, iv.lo))
            end = len(uniq) if iv.hi is None else (bisect.bisect_right(uniq, iv.hi) if iv.hi_closed
                                                   else bisect.bisect_left(uniq, iv.hi))
            of_unique[start:end] = p_idx
    return of_unique[sample.codes(column)]


def piece_counts(sample, column: str, pieces: Sequence[ValueSet]) -> np.ndarray:
    """Sample rows per piece."""
    labels = piece_labels(sample, column, pieces)
    return np.bincount(labels[labels >= 0], minlength=len(pieces))


def model_overhead(model) -> Callable[[np.ndarray], np.ndarray]:
    """Per-scan cost of opening a partition of ``rows`` rows, as ``CostModel.evaluate`` charges it."""
    p = model.params
    row_bytes = model.row_bytes

    def overhead(rows: np.ndarray) -> np.ndarray:
        files = np.maximum(1, np.ceil(rows * row_bytes / p.target_file_bytes))
        return model.partition_overhead_rows + files * model.file_overhead_rows
    return overhead


def min_rows(model) -> float:
    return model.params.min_partition_bytes / model.row_bytes if model.row_bytes else 0.0


def merge_column(model, column: str, *, max_groups: int | None = None, min_size: float | None = None,
                 info: ColumnPieces | None = None) -> tuple[ColumnPieces, Merge]:
    info = info or column_pieces(model, column)
    limit = model.params.max_partitions if max_groups is None else max_groups
    merge = solve_merge(info.rows, info.hits, info.weights, min_size=min_rows(model) if min_size is None else min_size,
                        max_groups=limit, overhead=model_overhead(model))
    return info, merge


def group_sets(info: ColumnPieces, groups: Sequence[tuple[int, int]]) -> list[ValueSet]:
    out = []
    for i, j in groups:
        vs = info.pieces.pieces[i]
        for k in range(i + 1, j + 1):
            vs = vs.union(info.pieces.pieces[k])
        out.append(vs)
    return out


def cps_single_column(model, column: str, *, max_partitions: int | None = None) -> Layout:
    """The cheapest CPS plan on ``column`` whose partitions are runs of adjacent conditions."""
    info, merge = merge_column(model, column, max_groups=max_partitions)
    sets = group_sets(info, merge.groups)
    derived = model.analysis.derived
    return Layout(
        table=model.analysis.table,
        strategy=f"cps:{column}",
        partitions=tuple(Partition(k + 1, ((column, vs),)) for k, vs in enumerate(sets)),
        kinds=((column, model.kinds[column]),),
        derived=((column, derived[column]),) if column in derived else (),
        meta=(("pieces", len(info.pieces.pieces)), ("estimated_cost", merge.cost),
              ("exact", merge.exact), ("method", merge.method)),
    )


__all__ = ["Merge", "merge_pieces", "solve_merge", "grouping_cost", "ColumnPieces", "column_pieces",
           "piece_labels", "piece_counts", "model_overhead", "merge_column", "group_sets", "cps_single_column"]

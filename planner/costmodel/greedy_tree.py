"""A workload-driven partitioning tree: cut where the workload's own predicates cut.

Candidate cuts come from the bounds of the value sets scans put on each attribute: a scan
interval ``[10, 20)`` offers ``A < 10`` (its lower bound, closed) and ``A < 20`` (its upper bound,
open); ``(10, 20]`` offers ``A <= 10`` and ``A <= 20``. A derived boolean attribute asking for
TRUE offers ``A < TRUE``, i.e. FALSE left and TRUE (with NULL) right.

Starting from one leaf holding everything, the leaf whose best cut most lowers the workload cost
is split, best first, until ``max_partitions`` leaves or no cut gains more than it costs:

    gain(cut) = Σ w · rows(left)  over scans that can skip the left child
              + Σ w · rows(right) over scans that can skip the right child
              - Σ w · partition_overhead_rows over scans that must read both children

A scan skips a child iff its value set on the cut attribute does not overlap the child's range
(within the leaf's), exactly ``planner.pruning``'s rule, but evaluated for all cuts at once.
Candidate cuts of an attribute are ranked 1..K in order (``A < v`` before ``A <= v``); rank 0 and
K+1 stand for -inf and +inf. Each scan interval gets two ranks: ``tau``, the cut at its lower
bound, and ``sigma``, the cut at its upper bound. For a leaf spanning cuts ``(lo, hi)``:

    the left child (lo, k) overlaps the interval  iff  tau < k  and sigma > lo
    the right child (k, hi) overlaps it           iff  sigma > k and tau < hi

So over the intervals a scan has inside the leaf, it skips the left child for every cut
``k <= min tau`` and the right child for every cut ``k >= max sigma`` (never, if the scan wants
NULL and the leaf still holds NULLs): per scan one threshold each way, and the weights skipping
each child at every cut are a prefix sum. Child sizes come from the leaf's sample codes, sorted,
with ``searchsorted``. ``hit_matrix`` is not called while building; residual multi-column clauses
are ignored here (they can only make the real cost lower).
"""
from __future__ import annotations

import bisect
import heapq
import itertools
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from planner.cnf.values import Kind
from planner.costmodel.cost import CostModel
from planner.costmodel.trees import Cut, Node, SortedCodes, tree_layout
from planner.layout import Layout


@dataclass(frozen=True)
class _Axis:
    """One attribute: its candidate cuts, and every scan interval on it as ranks."""

    attribute: str
    kind: Kind
    cuts: tuple[tuple[object, bool], ...]  # rank r is cuts[r - 1]: (value, closed)
    left_codes: np.ndarray  # sample codes < left_codes[r] lie left of cut r (rank 0..K+1)
    codes: SortedCodes
    scan: np.ndarray  # per interval: index of its scan
    tau: np.ndarray  # per interval: rank of its lower-bound cut (0 = unbounded)
    sigma: np.ndarray  # per interval: rank of its upper-bound cut (K+1 = unbounded)
    constrained: np.ndarray  # per scan: has a value set on this attribute
    wants_null: np.ndarray  # per scan: its set holds NULL

    @property
    def top(self) -> int:
        return len(self.cuts) + 1


def _axis(model: CostModel, attribute: str) -> _Axis | None:
    kind = model.kinds.get(attribute)
    if kind is None or not kind.orderable or not model.sample.has(attribute):
        return None
    sets = [s.sets.get(attribute) for s in model.scans]
    keys: set[tuple[object, bool]] = set()
    for vs in filter(None, sets):
        for iv in vs.intervals:
            if iv.lo is not None:
                keys.add((iv.lo, not iv.lo_closed))  # A < lo when lo is in the interval
            if iv.hi is not None:
                keys.add((iv.hi, iv.hi_closed))
    if not keys:
        return None
    uniques = model.sample.uniques(attribute)
    try:
        cuts = tuple(sorted(keys, key=lambda k: (k[0], k[1])))
        inner = [bisect.bisect_right(uniques, v) if closed else bisect.bisect_left(uniques, v) for v, closed in cuts]
    except TypeError:  # the sample's values do not compare with the workload's: cannot place cuts
        return None
    rank = {k: r for r, k in enumerate(cuts, start=1)}
    top = len(cuts) + 1
    scan, tau, sigma = [], [], []
    for i, vs in enumerate(sets):
        for iv in vs.intervals if vs is not None else ():
            scan.append(i)
            tau.append(0 if iv.lo is None else rank[(iv.lo, not iv.lo_closed)])
            sigma.append(top if iv.hi is None else rank[(iv.hi, iv.hi_closed)])
    return _Axis(attribute, kind, cuts, np.array([0] + inner + [len(uniques)], dtype=np.int64),
                 SortedCodes.of(model.sample, attribute), np.array(scan, dtype=np.int64),
                 np.array(tau, dtype=np.int64), np.array(sigma, dtype=np.int64),
                 np.array([vs is not None for vs in sets], dtype=bool),
                 np.array([vs is not None and vs.null for vs in sets], dtype=bool))


@dataclass(eq=False)
class _Leaf:
    node: Node
    reads: np.ndarray  # bool per scan: the scan may need rows of this leaf
    span: dict[str, tuple[int, int, bool]]  # attribute -> (lo rank, hi rank, still holds NULL)
    gain: float = 0.0
    best: tuple[int, int] | None = None  # (axis index, cut rank)


class _Builder:
    def __init__(self, model: CostModel, axes: Sequence[_Axis], min_leaf_rows: float):
        self.model, self.axes = model, list(axes)
        self.w = model.weights.astype(float)
        self.scale = model.scale
        self.min_sample_rows = max(min_leaf_rows / self.scale, 1e-9)
        self.overhead = model.params.partition_overhead_rows

    def thresholds(self, leaf: _Leaf, axis: _Axis) -> tuple[np.ndarray, np.ndarray]:
        """Per scan: it skips the left child for cuts ``k <= fl`` and the right one for ``k >= fr``."""
        lo, hi, has_null = leaf.span.get(axis.attribute, (0, axis.top, True))
        q = len(self.w)
        sel = leaf.reads[axis.scan] & (axis.tau < hi) & (axis.sigma > lo)
        fl = np.full(q, -1, dtype=np.int64)
        fr = np.full(q, axis.top + 1, dtype=np.int64)
        on = leaf.reads & axis.constrained
        fl[on] = axis.top + 1  # no interval inside the leaf: skips both children
        fr[on] = -1
        np.minimum.at(fl, axis.scan[sel], axis.tau[sel])
        np.maximum.at(fr, axis.scan[sel], axis.sigma[sel])
        if has_null:
            fr[on & axis.wants_null] = axis.top + 1
        return fl, fr

    def evaluate(self, leaf: _Leaf) -> None:
        """Find the leaf's best cut over all axes (first axis, then lowest rank, on ties)."""
        leaf.gain, leaf.best = -np.inf, None
        n = leaf.node.rows.size
        if n < 2 * self.min_sample_rows or n < 2:
            return
        w_reads = self.w[leaf.reads].sum()
        for a, axis in enumerate(self.axes):
            lo, hi, _ = leaf.span.get(axis.attribute, (0, axis.top, True))
            if hi - lo < 2:
                continue
            ks = np.arange(lo + 1, hi)
            left = np.searchsorted(axis.codes.sorted_at(leaf.node.rows), axis.left_codes[ks], side="left")
            right = n - left
            ok = (left >= self.min_sample_rows) & (right >= self.min_sample_rows) & (left > 0) & (right > 0)
            if not ok.any():
                continue
            fl, fr = self.thresholds(leaf, axis)
            on = leaf.reads & axis.constrained
            top = axis.top + 2
            by_fl = np.bincount(np.clip(fl[on], 0, top - 1), weights=self.w[on], minlength=top)
            by_fr = np.bincount(np.clip(fr[on], 0, top - 1), weights=self.w[on], minlength=top)
            skip_left = np.cumsum(by_fl[::-1])[::-1][ks]  # weight of scans with fl >= k
            skip_right = np.cumsum(by_fr)[ks]  # weight of scans with fr <= k
            gains = self.scale * (left * skip_left + right * skip_right) \
                - self.overhead * np.maximum(w_reads - skip_left - skip_right, 0.0)
            gains = np.where(ok, gains, -np.inf)
            i = int(np.argmax(gains))
            if gains[i] > leaf.gain:
                leaf.gain, leaf.best = float(gains[i]), (a, int(ks[i]))

    def split(self, leaf: _Leaf) -> tuple[_Leaf, _Leaf]:
        a, k = leaf.best
        axis = self.axes[a]
        value, closed = axis.cuts[k - 1]
        rows = leaf.node.rows
        lnode, rnode = leaf.node.split(Cut(axis.attribute, value, closed), axis.kind,
                                       axis.codes.codes[rows] < axis.left_codes[k])
        fl, fr = self.thresholds(leaf, axis)
        lo, hi, has_null = leaf.span.get(axis.attribute, (0, axis.top, True))
        children = []
        for node, skips, span in ((lnode, fl >= k, (lo, k, False)), (rnode, fr <= k, (k, hi, has_null))):
            reads = leaf.reads & ~(skips & axis.constrained)
            children.append(_Leaf(node, reads, leaf.span | {axis.attribute: span}))
        return children[0], children[1]


def greedy_tree(model: CostModel, attributes: Sequence[str], *, max_partitions: int | None = None,
                min_leaf_rows: float | None = None, table: str | None = None) -> Layout:
    """Split best-first on the workload's own predicate bounds while a cut pays for itself.

    ``max_partitions`` defaults to ``model.params.max_partitions``; ``min_leaf_rows`` (estimated
    table rows each child must keep) to one row group, ``model.params.row_group_rows``.
    """
    max_partitions = model.params.max_partitions if max_partitions is None else max_partitions
    min_leaf_rows = model.params.row_group_rows if min_leaf_rows is None else min_leaf_rows
    axes = [ax for ax in (_axis(model, a) for a in dict.fromkeys(attributes)) if ax is not None]
    builder = _Builder(model, axes, min_leaf_rows)
    reads = np.array([not s.groups.unsatisfiable for s in model.scans], dtype=bool)
    root = _Leaf(Node({}, np.arange(model.sample.n)), reads, {})
    builder.evaluate(root)
    order = itertools.count()
    heap = [(-root.gain, next(order), root)]
    while len(heap) < max_partitions:
        gain, _, leaf = heap[0]
        if leaf.best is None or -gain <= 0:
            break
        heapq.heappop(heap)
        for child in builder.split(leaf):
            builder.evaluate(child)
            heapq.heappush(heap, (-child.gain, next(order), child))
    estimated = sum(float(builder.w[leaf.reads].sum()) * leaf.node.rows.size * model.scale for _, _, leaf in heap)
    meta = {"estimated_rows": estimated, "candidate_cuts": {ax.attribute: len(ax.cuts) for ax in axes}}
    return tree_layout(root.node, table=table or model.analysis.table, strategy="greedy-tree",
                       kinds=model.kinds, derived=model.analysis.derived, meta=meta)


__all__ = ["greedy_tree"]

"""A workload-driven partitioning tree: cut where the workload's own predicates cut.

Candidate cuts come from the bounds of the value sets scans put on each attribute: a scan
interval ``[10, 20)`` offers ``A < 10`` (its lower bound, closed) and ``A < 20`` (its upper bound,
open); ``(10, 20]`` offers ``A <= 10`` and ``A <= 20``. A derived boolean attribute asking for
TRUE offers ``A < TRUE``, i.e. FALSE left and TRUE (with NULL) right.

Starting from one leaf holding everything, the leaf whose best cut most lowers the workload cost
is split, best first, until ``max_partitions`` leaves or no cut gains more than it costs:

    gain(cut) = Σ w · rows(left)  over scans that can skip the left child
              + Σ w · rows(right) over scans that can skip the right child
              - Σ w · (partition + file overhead) over scans that must read both children

(the cost model charges every partition a scan opens, and a new partition has at least one file).

A scan skips a child iff its value set on the cut attribute does not overlap the child's range
(within the leaf's), exactly ``planner.pruning.hits``'s rule, but evaluated for all cuts at once.
Candidate cuts of an attribute are ranked 1..K in order (``A < v`` before ``A <= v``); rank 0 and
K+1 stand for -inf and +inf. Each scan interval gets two ranks: ``tau``, the cut at its lower
bound, and ``sigma``, the cut at its upper bound. For a leaf spanning cuts ``(lo, hi)``:

    the left child (lo, k) overlaps the interval  iff  tau < k  and sigma > lo
    the right child (k, hi) overlaps it           iff  sigma > k and tau < hi

Example, integer ``a`` with cuts 1: ``a < 10``, 2: ``a < 21``, 3: ``a < 100``. The scan
``a BETWEEN 10 AND 20`` has tau 1 and sigma 2: it skips the left child at cut 1 (a < 10), and
the right child at cuts 2 and 3 (a >= 21, a >= 100). (On discrete domains cuts are spelled one way,
``a <= 20`` as ``a < 21``, so equal cuts share a rank.)

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
import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from planner.cnf.values import successor
from planner.costmodel.cost import CostModel
from planner.costmodel.trees import Cut, Node, SortedCodes, tree_layout
from planner.model.layout import Layout
from planner.semantics.kinds import Kind


@dataclass(frozen=True)
class _Axis:
    """One attribute: its candidate cuts, and every scan interval on it as ranks."""

    attribute: str
    kind: Kind
    cuts: tuple[tuple[object, bool], ...]  # rank r is cuts[r - 1]: (value, closed)
    left_codes: np.ndarray  # sample codes < left_codes[r] lie left of cut r (rank 0..K+1)
    codes: SortedCodes
    scans: np.ndarray  # the scans with a value set on this attribute (indices into model.scans)
    scan: np.ndarray  # per interval: its scan, as a position in ``scans``
    tau: np.ndarray  # per interval: rank of its lower-bound cut (0 = unbounded)
    sigma: np.ndarray  # per interval: rank of its upper-bound cut (K+1 = unbounded)
    wants_null: np.ndarray  # per position in ``scans``: the scan's set holds NULL

    @property
    def top(self) -> int:
        return len(self.cuts) + 1


def _cut_key(value, closed: bool, kind: Kind) -> tuple[object, bool]:
    """One spelling per cut: on a discrete domain ``A <= 99`` is ``A < 100``, ``A <= FALSE`` is ``A < TRUE``."""
    if closed and kind is Kind.BOOLEAN and value is False:
        return True, False
    if closed and kind is not Kind.BOOLEAN:
        nxt = successor(value, kind)
        if nxt is not None:
            return nxt, False
    return value, closed


def _axis(model: CostModel, attribute: str) -> _Axis | None:
    kind = model.kinds.get(attribute)
    if kind is None or not kind.orderable or not model.sample.has(attribute):
        return None
    sets = [s.sets.get(attribute) for s in model.scans]
    keys: set[tuple[object, bool]] = set()
    for vs in filter(None, sets):
        for iv in vs.intervals:
            if iv.lo is not None:
                keys.add(_cut_key(iv.lo, not iv.lo_closed, kind))  # A < lo when lo is in the interval
            if iv.hi is not None:
                keys.add(_cut_key(iv.hi, iv.hi_closed, kind))
    if not keys:
        return None
    uniques = model.sample.uniques(attribute)
    try:
        cuts = tuple(sorted(keys))  # by value, and A < v before A <= v
        inner = [(bisect.bisect_right if closed else bisect.bisect_left)(uniques, v) for v, closed in cuts]
    except TypeError:  # the sample's values do not compare with the workload's: cannot place cuts
        return None
    rank = {k: r for r, k in enumerate(cuts, start=1)}
    top = len(cuts) + 1
    scans = [i for i, vs in enumerate(sets) if vs is not None]
    scan, tau, sigma = [], [], []
    for j, i in enumerate(scans):
        for iv in sets[i].intervals:
            scan.append(j)
            tau.append(0 if iv.lo is None else rank[_cut_key(iv.lo, not iv.lo_closed, kind)])
            sigma.append(top if iv.hi is None else rank[_cut_key(iv.hi, iv.hi_closed, kind)])
    return _Axis(attribute, kind, cuts, np.array([0] + inner + [len(uniques)], dtype=np.int64),
                 SortedCodes.of(model.sample, attribute), np.array(scans, dtype=np.int64),
                 np.array(scan, dtype=np.int64), np.array(tau, dtype=np.int64), np.array(sigma, dtype=np.int64),
                 np.array([sets[i].null for i in scans], dtype=bool))


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
        # An empty table (scale 0: a sample row stands for no rows) has nothing to split.
        self.min_sample_rows = max(min_leaf_rows / self.scale, 1e-9) if self.scale else math.inf
        self.overhead = model.partition_overhead_rows + model.file_overhead_rows

    def thresholds(self, leaf: _Leaf, axis: _Axis) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For the axis' scans: whether each reads the leaf, and its two skip thresholds.

        A scan skips the left child for cuts ``k <= fl`` and the right child for ``k >= fr``.
        """
        lo, hi, has_null = leaf.span.get(axis.attribute, (0, axis.top, True))
        on = leaf.reads[axis.scans]
        sel = on[axis.scan] & (axis.tau < hi) & (axis.sigma > lo)
        fl = np.full(axis.scans.size, axis.top + 1, dtype=np.int64)  # no interval in the leaf: skips both
        fr = np.full(axis.scans.size, -1, dtype=np.int64)
        np.minimum.at(fl, axis.scan[sel], axis.tau[sel])
        np.maximum.at(fr, axis.scan[sel], axis.sigma[sel])
        if has_null:
            fr[axis.wants_null] = axis.top + 1
        return on, fl, fr

    def evaluate(self, leaf: _Leaf) -> None:
        """Find the leaf's best cut over all axes (first axis, then lowest rank, on ties)."""
        leaf.gain, leaf.best = -np.inf, None
        n = leaf.node.rows.size
        if n < 2 * self.min_sample_rows or n < 2:
            return
        w_reads = self.w[leaf.reads].sum()
        for a, axis in enumerate(self.axes):
            lo, hi, _ = leaf.span.get(axis.attribute, (0, axis.top, True))
            if hi - lo < 2 or not leaf.reads[axis.scans].any():
                continue  # no cut left, or no scan reading the leaf could skip a child
            ks = np.arange(lo + 1, hi)
            left = np.searchsorted(axis.codes.sorted_at(leaf.node.rows), axis.left_codes[ks], side="left")
            right = n - left
            ok = (left >= self.min_sample_rows) & (right >= self.min_sample_rows) & (left > 0) & (right > 0)
            if not ok.any():
                continue
            on, fl, fr = self.thresholds(leaf, axis)
            w = self.w[axis.scans[on]]
            size = axis.top + 3
            by_fl = np.bincount(fl[on], weights=w, minlength=size)
            by_fr = np.bincount(fr[on] + 1, weights=w, minlength=size)  # shifted: fr may be -1
            skip_left = np.cumsum(by_fl[::-1])[::-1][ks]  # weight of scans with fl >= k
            skip_right = np.cumsum(by_fr)[ks + 1]  # weight of scans with fr <= k
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
        on, fl, fr = self.thresholds(leaf, axis)
        lo, hi, has_null = leaf.span.get(axis.attribute, (0, axis.top, True))
        children = []
        for node, skips, span in ((lnode, fl >= k, (lo, k, False)), (rnode, fr <= k, (k, hi, has_null))):
            reads = leaf.reads.copy()
            reads[axis.scans[on & skips]] = False
            children.append(_Leaf(node, reads, leaf.span | {axis.attribute: span}))
        return children[0], children[1]


def greedy_tree(model: CostModel, attributes: Sequence[str], *, max_partitions: int | None = None,
                min_leaf_rows: float | None = None, table: str | None = None) -> Layout:
    """Split best-first on the workload's own predicate bounds while a cut pays for itself.

    ``max_partitions`` defaults to ``model.params.max_partitions``; ``min_leaf_rows`` (estimated
    table rows each child must keep) to one row group, ``model.params.row_group_rows``. The
    layout's meta records ``estimated_rows``, the weighted rows the builder expects the workload
    to read (``CostModel.evaluate(layout).rows`` when no multi-column clause prunes more).
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

"""Growing Amoeba's tree (Amoeba, section 3, Algorithm 1): median cuts on the attribute with the
most allocation left. Only the building; what a tree costs a workload is ``planner.costmodel.amoeba``
(the contenders) and ``planner.costmodel.tree_order`` (a tree as the order inside partitions).

Allocation. A node at depth ``d`` covers ``1/2^d`` of the data with fanout 2, so it uses up
``2/2^d`` of its attribute's allocation (Algorithm 1, line 13); every full level of the tree uses
2, the whole tree ``2·depth``. We hand out exactly that budget, in proportion to the weights:

    allocation(a) = 2 · depth · w(a) / Σ w

An attribute that consumes its allocation gets about ``depth · w(a)/Σw`` full levels, i.e. a
fanout of ``b^(w(a)/Σw)`` -- with equal weights the paper's ``b^(1/|A|)`` per attribute. (With
equal weights only the order of the remaining allocations matters, so using the paper's number
instead of ours picks the same attributes.) Example, 16 buckets over (a, b, c, d):

    depth 4, budget 8, allocation 2 each
    root: a (uses 2);  depth 1: b, c (1 each);  depth 2: d, d, b, d (0.5 each) ...
    -> every attribute ends with about 2 used, as in the paper's Figure 4(a).

Ties in the remaining allocation go to the attribute cut least often on the node's path, then to
the first in the given order (the paper picks at random; we stay deterministic).
"""
from __future__ import annotations

import math
from collections import deque
from typing import Mapping

import numpy as np

from planner.costmodel.sample import SampleFrame
from planner.costmodel.trees import Cut, Node, SortedCodes
from planner.semantics.kinds import Kind

_TIE = 9  # decimals: remaining allocations equal to this precision tie


def tree_depth(rows: int, row_bytes: float, max_partition_bytes: int, max_partitions: int) -> int:
    """``ceil(log2(table bytes / max partition bytes))``, so that ``2^depth <= max_partitions``."""
    buckets = rows * row_bytes / max(max_partition_bytes, 1)
    depth = math.ceil(math.log2(buckets)) if buckets > 1 else 0
    cap = int(math.floor(math.log2(max_partitions))) if max_partitions >= 1 else 0
    return max(0, min(depth, cap))


def attribute_allocation(weights: Mapping[str, float], depth: int) -> dict[str, float]:
    """Each attribute's share of the tree's total allocation ``2·depth``, proportional to weight."""
    total = sum(weights.values())
    if total <= 0:
        return {a: 0.0 for a in weights}
    return {a: 2.0 * depth * w / total for a, w in weights.items()}


def median_code(codes: SortedCodes, rows: np.ndarray) -> int | None:
    """The code ``c`` whose cut ``value <= uniques[c]`` splits ``rows`` most evenly, both sides non-empty.

    NULLs sort above every value (they go right). ``None`` when no cut leaves both sides
    non-empty (one distinct value, or only NULLs). Example: codes [0 0 0 1 1 1 2 3] (the paper's
    skewed 1 1 1 2 2 2 3 4): cutting at 0 gives 3|5, at 1 gives 6|2; 0 is nearer half.
    """
    keys = codes.codes[rows]
    n = keys.size
    if n < 2:
        return None
    # The number of rows left of a cut grows with its value, so the best cut is the median key
    # itself or the largest key below it: two counts, no sort.
    median = keys[np.argpartition(keys, n // 2)[n // 2]]
    below = keys < median
    best, best_gap = None, None
    if below.any():
        v, left = int(keys[below].max()), int(below.sum())
        best, best_gap = v, abs(2 * left - n)
    if median < codes.m:  # a NULL median cannot be a cut value
        left = int((keys <= median).sum())
        if left < n and (best is None or abs(2 * left - n) < best_gap):
            best = int(median)
    return best


def grow(sample: SampleFrame, kinds: Mapping[str, Kind], weights: Mapping[str, float], depth: int,
         min_leaf_sample_rows: float = 0.0, region_depth: int | None = None
         ) -> tuple[Node, dict[str, float], dict[str, float]]:
    """Algorithm 1: a tree of ``depth`` levels, cut at medians on the attribute with the most
    allocation left; ``(root, allocation, remaining allocation)``. Nodes deeper than
    ``region_depth`` get no region (an ordering needs only the cuts; a region costs a set per node).

    Attributes of weight 0, of a kind that cannot be ordered, or missing from the sample are not
    used. A branch stops early when its node holds fewer than ``2 · min_leaf_sample_rows`` sample
    rows (a median cut would leave a child under that).
    """
    order = [a for a, w in weights.items() if w > 0 and a in kinds and kinds[a].orderable and sample.has(a)]
    allocation = attribute_allocation({a: weights[a] for a in order}, depth)
    left = np.array([allocation[a] for a in order], dtype=float)  # allocation left, by attribute index
    index = {a: i for i, a in enumerate(order)}
    position = np.arange(len(order))
    codes = {a: SortedCodes.of(sample, a) for a in order}
    root = Node({}, np.arange(sample.n))
    queue = deque([root])
    while queue:
        node = queue.popleft()
        if node.depth >= depth or node.rows.size < 2 or node.rows.size < 2 * min_leaf_sample_rows:
            continue
        on_path = np.bincount([index[a] for a in node.path if a in index], minlength=len(order))
        # most allocation left, then cut least often on the way here, then the given order
        ranked = np.lexsort((position, on_path, -np.round(left, _TIE)))
        for i in ranked:
            a = order[i]
            code = median_code(codes[a], node.rows)
            if code is not None:
                break
        else:
            continue  # no attribute separates these rows: the node stays a bucket
        left[index[a]] -= 2.0 / 2 ** node.depth
        value = sample.uniques(a)[code]
        # A double column's sample values are already decimals (SampleFrame, float_value), which
        # layout.json keeps exactly.
        cut = Cut(a, value, closed=True)
        goes_left = codes[a].codes[node.rows] <= code
        if region_depth is None or node.depth < region_depth:
            queue.extend(node.split(cut, kinds[a], goes_left))
        else:
            path = node.path + (a,)
            node.cut = cut
            node.left = Node({}, node.rows[goes_left], node.depth + 1, path=path)
            node.right = Node({}, node.rows[~goes_left], node.depth + 1, path=path)
            queue.extend((node.left, node.right))
    return root, allocation, {a: float(left[i]) for i, a in enumerate(order)}


__all__ = ["attribute_allocation", "grow", "median_code", "tree_depth"]

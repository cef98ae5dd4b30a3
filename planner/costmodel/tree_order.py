"""A k-d tree as the order inside partitions: Amoeba's tree below the Hive partitions.

Amoeba (section 3) cuts the data into buckets with a binary tree whose nodes cut at the median on
the attribute with the most allocation left. Its buckets need not be Hive partitions: written in
the order of the tree's leaves, each leaf becomes a run of row groups or pages, and Parquet's
min/max statistics skip the leaves a query cannot need, exactly as Hive skips partitions. So
the tree can grow as deep as the data has blocks (``rows / block rows`` leaves) while the number
of Hive partitions stays bounded: at SF 1 it is as deep as it would be at SF 100 with 128 MB
partitions.

``Ordering("tree", columns, bounds)`` holds the tree in preorder: an inner node is
``(column index, value)`` (rows with ``column <= value`` go left; larger values and NULL go right,
as ``planner.costmodel.trees.Cut`` with ``closed=True``), a leaf is ``()``. Leaves are numbered
from 0, left to right; a row's sort key is its leaf's number. Example, cuts ``a <= 5`` then
``b <= 2`` on the left::

    bounds = ((0, 5), (1, 2), (), (), ())     leaves: 0 = a<=5 & b<=2, 1 = a<=5 & b>2, 2 = a>5

Rows of one leaf are in no order Spark keeps (``planner.costmodel.sample``). A tree may name
columns to order them by, e.g. the column the table is clustered on now: a first element
``("then", i, …)`` of ``bounds`` lists them by column index (``tie_columns``), and the writer
sorts by ``leaf, then those columns``.

``planner.emit.tree_order_sql`` writes the same number as a nested ``CASE``.
"""
from __future__ import annotations

import bisect
import math
from typing import Mapping

import numpy as np

from planner.costmodel.sample import SampleFrame
from planner.costmodel.tree_growth import grow
from planner.costmodel.trees import Node
from planner.model.layout import Ordering
from planner.semantics.kinds import Kind

#: 256 leaves. The writer numbers a row's leaf with a nested CASE of one branch per leaf
#: (``planner.emit.tree_order_sql``), and its size is what the write pays for: past a few hundred
#: leaves Spark's generated code outgrows the JVM's 64 KB method limit and runs interpreted, while
#: the leaves a deeper tree adds save the reads little (its top levels do the skipping).
MAX_TREE_DEPTH = 8


def encode(root: Node, then: tuple[str, ...] = ()) -> Ordering:
    """The tree under ``root`` as an ordering (its cuts must be ``closed``); rows of a leaf are
    ordered by ``then``."""
    columns: dict[str, int] = {}
    bounds: list[tuple] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_leaf:
            bounds.append(())
            continue
        if not node.cut.closed:
            raise ValueError("tree orderings cut with <=")
        bounds.append((columns.setdefault(node.cut.attribute, len(columns)), node.cut.value))
        stack.extend((node.right, node.left))
    if then:
        bounds.insert(0, ("then",) + tuple(columns.setdefault(c, len(columns)) for c in then))
    return Ordering("tree", tuple(columns), tuple(bounds))


def _nodes(order: Ordering) -> tuple:
    b = order.bounds
    return b[1:] if b and b[0] and b[0][0] == "then" else b


def tie_columns(order: Ordering) -> tuple[str, ...]:
    """The columns a tree ordering sorts the rows of a leaf by (none for other orderings)."""
    b = order.bounds
    if order.method != "tree" or not b or not b[0] or b[0][0] != "then":
        return ()
    return tuple(order.columns[i] for i in b[0][1:])


def describe(order: Ordering, top: int = 3) -> str:
    """``tree(1,024 leaves: l_shipdate 40%, l_quantity 20%, … then l_orderkey)``: the columns
    cut most often, with their share of the cuts."""
    counts: dict[str, int] = {}
    for b in _nodes(order):
        if b:
            counts[order.columns[b[0]]] = counts.get(order.columns[b[0]], 0) + 1
    total = sum(counts.values()) or 1
    ranked = sorted(counts.items(), key=lambda kv: -kv[1])
    cols = ", ".join(f"{c} {n / total:.0%}" for c, n in ranked[:top]) + (", …" if len(ranked) > top else "")
    then = tie_columns(order)
    return f"tree({leaves(order):,} leaves: {cols}" + (f"; then {', '.join(then)}" if then else "") + ")"


def leaves(order: Ordering) -> int:
    return sum(1 for b in _nodes(order) if not b)


def decode(order: Ordering):
    """The preorder tree as nested tuples: a leaf is its number, an inner node
    ``(column, value, left, right)``; ``None`` for no tree."""
    if not _nodes(order):
        return None
    it = iter(_nodes(order))
    counter = [0]

    def node():
        b = next(it)
        if not b:
            counter[0] += 1
            return counter[0] - 1
        column, value = b
        left = node()
        return (order.columns[column], value, left, node())

    return node()


def leaf_ids(sample: SampleFrame, order: Ordering) -> np.ndarray:
    """The leaf number of every sample row, as Spark numbers it (NULLs go right, like ``Cut``)."""
    out = np.zeros(sample.n, dtype=np.int64)
    if not _nodes(order):
        return out
    stack = [(decode(order), np.arange(sample.n))]
    while stack:
        node, rows = stack.pop()
        if isinstance(node, int):
            out[rows] = node
            continue
        column, value, left, right = node
        codes = sample.codes(column)[rows]
        limit = bisect.bisect_right(sample.uniques(column), value)  # codes below it are <= value
        goes_left = (codes >= 0) & (codes < limit)
        extremes = sample.non_finite(column)
        if extremes is not None:  # -inf is at most any cut (cuts are finite); NaN and +inf go right
            goes_left |= extremes[0][rows]
        stack.append((left, rows[goes_left]))
        stack.append((right, rows[~goes_left]))
    return out


def tree_depth_for(rows: int, block_rows: int) -> int:
    """Leaves of about one block each: ``ceil(log2(rows / block rows))``, at most ``MAX_TREE_DEPTH``."""
    blocks = rows / max(block_rows, 1)
    return max(0, min(MAX_TREE_DEPTH, math.ceil(math.log2(blocks)) if blocks > 1 else 0))


def tree_ordering(sample: SampleFrame, kinds: Mapping[str, Kind], weights: Mapping[str, float], *, rows: int,
                  block_rows: int, then: tuple[str, ...] = ()) -> Ordering | None:
    """Amoeba's tree with allocation in proportion to ``weights``, one block per leaf; rows of a
    leaf ordered by ``then``."""
    weights = {a: w for a, w in weights.items() if a not in sample.derived}
    depth = tree_depth_for(rows, block_rows)
    scale = rows / max(sample.n, 1)
    root, _, _ = grow(sample, kinds, weights, depth, block_rows / scale if scale else 0.0, region_depth=0)
    return None if root.is_leaf else encode(root, then)


__all__ = ["MAX_TREE_DEPTH", "decode", "describe", "encode", "leaf_ids", "leaves", "tie_columns", "tree_depth_for",
           "tree_ordering"]

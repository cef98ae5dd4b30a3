"""Binary partitioning trees, and the layout their leaves make.

A tree splits rows on one attribute at a time. Every cut sends a row left when its value lies
below a boundary, and right otherwise, NULL included, so each row lands in exactly one child:

    Cut("l_quantity", 25, closed=True)    left   l_quantity <= 25        (-inf, 25]
                                          right  l_quantity > 25 OR NULL  (25, +inf) ∪ NULL
    Cut("l_shipdate", 1994-01-01, False)  left   l_shipdate < 1994-01-01
                                          right  l_shipdate >= 1994-01-01 OR NULL

A leaf's region is the conjunction of the cuts on its root-to-leaf path, one value set per
attribute (the intersection of the sides taken on that attribute). Two leaves part ways at
their deepest common ancestor, whose two sides are disjoint, so leaves are pairwise disjoint;
and the two sides of every cut cover the parent, so the leaves cover every row.

The builders live in ``planner.costmodel.amoeba`` (Amoeba's upfront tree, workload-free or
weighted by the workload) and ``planner.costmodel.greedy_tree`` (cuts chosen by the cost
model); this module holds what they share and re-exports them (``trees.amoeba_upfront``,
``trees.amoeba_weighted``, ``trees.greedy_tree``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator, Mapping

import numpy as np

from planner.cnf.ir import ColumnPair
from planner.cnf.values import Value
from planner.cnf.valueset import ValueSet
from planner.model.layout import CATCH_ALL, Layout, Partition
from planner.semantics.kinds import Kind, render


@dataclass(frozen=True)
class Cut:
    """``attribute < value`` (or ``<=`` when ``closed``) goes left; the rest and NULL go right."""

    attribute: str
    value: Value
    closed: bool

    def sides(self, kind: Kind) -> tuple[ValueSet, ValueSet]:
        left = ValueSet.range(kind, None, self.value, hi_closed=self.closed)
        right = ValueSet.range(kind, self.value, None, lo_closed=not self.closed)
        return left, right.union(ValueSet.only_null(kind))

    def __str__(self) -> str:
        name = f"({self.attribute})" if " " in self.attribute else self.attribute  # a derived attribute
        return f"{name} {'<=' if self.closed else '<'} {render(self.value)}"


@dataclass(eq=False)
class Node:
    """A node of a tree under construction: its region and the sample rows that reach it."""

    region: dict[str, ValueSet]
    rows: np.ndarray  # indices into the sample
    depth: int = 0
    cut: Cut | None = None
    left: "Node | None" = None
    right: "Node | None" = None
    path: tuple[str, ...] = ()  # attributes cut on the way from the root

    @property
    def is_leaf(self) -> bool:
        return self.cut is None

    def split(self, cut: Cut, kind: Kind, goes_left: np.ndarray) -> tuple["Node", "Node"]:
        """Cut this node; ``goes_left`` flags which of ``self.rows`` satisfy the left side."""
        lo, hi = cut.sides(kind)
        prior = self.region.get(cut.attribute)
        regions = [dict(self.region), dict(self.region)]
        for region, side in zip(regions, (lo, hi)):
            region[cut.attribute] = side if prior is None else prior.intersect(side)
        path = self.path + (cut.attribute,)
        self.cut = cut
        self.left = Node(regions[0], self.rows[goes_left], self.depth + 1, path=path)
        self.right = Node(regions[1], self.rows[~goes_left], self.depth + 1, path=path)
        return self.left, self.right


def leaves(root: Node, depth: int | None = None) -> Iterator[Node]:
    """Leaves from left to right, so neighbouring partitions hold neighbouring ranges; with
    ``depth``, the nodes at that depth count as leaves (the tree cut off below them)."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_leaf or (depth is not None and node.depth >= depth):
            yield node
        else:
            stack.extend((node.right, node.left))


def cuts(root: Node, depth: int | None = None) -> Iterator[Cut]:
    """Cuts in breadth-first order (root first), down to ``depth`` levels."""
    level = [root]
    while level:
        inner = [n for n in level if not n.is_leaf and (depth is None or n.depth < depth)]
        yield from (n.cut for n in inner)
        level = [c for n in inner for c in (n.left, n.right)]


def tree_layout(root: Node, *, table: str, strategy: str, kinds: Mapping[str, Kind],
                derived: Mapping[str, ColumnPair], meta: Mapping[str, Any] | None = None,
                depth: int | None = None) -> Layout:
    """The layout whose partitions are the tree's leaves (or its nodes at ``depth``), numbered
    from 1 left to right."""
    parts = tuple(Partition(CATCH_ALL + 1 + i, tuple(leaf.region.items()))
                  for i, leaf in enumerate(leaves(root, depth)))
    used: dict[str, None] = {}
    for p in parts:
        for a, _ in p.region:
            used.setdefault(a)
    return Layout(
        table=table,
        strategy=strategy,
        partitions=parts,
        kinds=tuple((a, kinds[a]) for a in used),
        derived=tuple((a, derived[a]) for a in used if a in derived),
        meta=tuple((meta or {}).items()) + (("cuts", [str(c) for c in cuts(root, depth)]),),
    )


@dataclass
class SortedCodes:
    """One attribute's sample codes with NULL mapped above every value (NULL goes right)."""

    codes: np.ndarray  # int64 per sample row: 0..m-1, m for NULL
    m: int  # number of distinct non-NULL values

    @classmethod
    def of(cls, sample, attribute: str) -> "SortedCodes":
        raw = sample.codes(attribute)
        m = len(sample.uniques(attribute))
        return cls(np.where(raw < 0, m, raw), m)

    def sorted_at(self, rows: np.ndarray) -> np.ndarray:
        return np.sort(self.codes[rows])


_BUILDERS = {"amoeba_tree": "amoeba", "amoeba_upfront": "amoeba", "amoeba_weighted": "amoeba",
             "amoeba_hybrid": "amoeba", "greedy_tree": "greedy_tree"}


def __getattr__(name: str):
    # The builders import this module, so they are re-exported lazily (PEP 562), not at import.
    if name in _BUILDERS:
        import importlib
        return getattr(importlib.import_module(f"planner.costmodel.{_BUILDERS[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["Cut", "Node", "SortedCodes", "cuts", "leaves", "tree_layout", *_BUILDERS]

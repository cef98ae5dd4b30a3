"""Amoeba's upfront partitioning tree (Amoeba, section 3, Algorithm 1), and its weighted variant.

The tree needs no workload. It has ``b = 2^depth`` buckets, ``depth = ceil(log2(table bytes /
max partition bytes))``, capped so ``b <= max_partitions``. Nodes are filled breadth first; each
cuts at the median of the sample rows that reach it (so skew and correlation still give equal
halves), on the attribute with the most *allocation* left (heterogeneous branching: sibling
subtrees may cut different attributes). How the tree grows, and how the allocation is shared out,
is ``planner.costmodel.tree_growth``; this module makes the contenders from it.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Mapping, Sequence

from planner.costmodel.cost import CostModel, CostParams
from planner.costmodel.sample import SampleFrame
from planner.costmodel.tree_growth import grow, tree_depth
from planner.costmodel.trees import tree_layout
from planner.model.layout import Layout
from planner.semantics.kinds import Kind


def amoeba_tree(sample: SampleFrame, kinds: Mapping[str, Kind], weights: Mapping[str, float], *, rows: int,
                row_bytes: float, max_partition_bytes: int, max_partitions: int, table: str,
                min_leaf_rows: int = CostParams.row_group_rows, strategy: str = "amoeba") -> Layout:
    """Algorithm 1 with the allocation split in proportion to ``weights`` (attribute -> weight);
    its leaves are the Hive partitions. A branch stops early when its node holds fewer than
    ``2 · min_leaf_rows`` estimated rows (a median cut would leave a child under one row group)."""
    depth = tree_depth(rows, row_bytes, max_partition_bytes, max_partitions)
    scale = rows / max(sample.n, 1)
    root, allocation, remaining = grow(sample, kinds, weights, depth, min_leaf_rows / scale if scale else 0.0)
    meta = {
        "depth": depth,
        "allocation": {a: round(v, 6) for a, v in allocation.items()},
        "used": {a: round(allocation[a] - remaining[a], 6) for a in allocation},
    }
    return tree_layout(root, table=table, strategy=strategy, kinds=kinds, derived=sample.derived, meta=meta)


def amoeba_hybrid(sample: SampleFrame, kinds: Mapping[str, Kind], weights: Mapping[str, float], *, rows: int,
                  row_bytes: float, max_partition_bytes: int, max_partitions: int, table: str, block_rows: int,
                  strategy: str = "amoeba") -> Layout:
    """Amoeba's tree grown to one block per leaf (``rows / block_rows`` leaves, as the paper's
    buckets are HDFS blocks): its top levels, as many as ``amoeba_tree`` would cut for
    ``max_partition_bytes``, are the Hive partitions, and the whole tree is the order inside them
    (``planner.costmodel.tree_order``: each leaf a run of row groups or pages)."""
    from planner.costmodel.tree_order import encode, tree_depth_for

    depth = tree_depth_for(rows, block_rows)
    top = min(depth, tree_depth(rows, row_bytes, max_partition_bytes, max_partitions))
    scale = rows / max(sample.n, 1)
    weights = {a: w for a, w in weights.items() if a not in sample.derived}
    root, allocation, remaining = grow(sample, kinds, weights, depth, block_rows / scale if scale else 0.0,
                                       region_depth=top)
    meta = {
        "depth": depth, "partition_depth": top,
        "allocation": {a: round(v, 6) for a, v in allocation.items()},
        "used": {a: round(allocation[a] - remaining[a], 6) for a in allocation},
    }
    layout = tree_layout(root, table=table, strategy=strategy, kinds=kinds, derived=sample.derived, meta=meta,
                         depth=top)
    return layout if root.is_leaf else replace(layout, order=encode(root))


def amoeba_upfront(sample: SampleFrame, kinds: Mapping[str, Kind], attributes: Sequence[str], *, rows: int,
                   row_bytes: float, max_partition_bytes: int, max_partitions: int, table: str,
                   min_leaf_rows: int = CostParams.row_group_rows) -> Layout:
    """Amoeba's workload-free tree: every attribute gets an equal share of the allocation."""
    return amoeba_tree(sample, kinds, {a: 1.0 for a in attributes}, rows=rows, row_bytes=row_bytes,
                       max_partition_bytes=max_partition_bytes, max_partitions=max_partitions, table=table,
                       min_leaf_rows=min_leaf_rows, strategy="amoeba")


def filter_weights(model: CostModel, attributes: Sequence[str], floor: float = 0.0) -> dict[str, float]:
    """How often the workload filters each attribute (scan weights summed), plus ``floor``."""
    weights = dict.fromkeys(attributes, floor)
    for w, scan in zip(model.weights, model.scans):
        for a in scan.sets:
            if a in weights:
                weights[a] += float(w)
    return weights


def amoeba_weighted(model: CostModel, attributes: Sequence[str], *, rows: int, row_bytes: float,
                    max_partition_bytes: int, max_partitions: int, table: str,
                    min_leaf_rows: int = CostParams.row_group_rows, floor: float = 0.0) -> Layout:
    """Amoeba with workload-informed allocation (section 6.4): weight = times filtered + ``floor``.

    "Times filtered" sums the weights of the model's scans that constrain the attribute. With the
    default ``floor`` of 0, attributes no scan filters are dropped, as in the paper's custom
    allocation (four attributes of sixteen): a cut on them skips nothing for the known workload
    and spends buckets the filtered attributes could use. A positive ``floor`` keeps them with a
    small share, for robustness to ad-hoc queries. If nothing is filtered at all, the allocation
    falls back to Amoeba's uniform one.
    """
    weights = filter_weights(model, attributes, floor)
    if not any(w > 0 for w in weights.values()):
        weights = dict.fromkeys(attributes, 1.0)
    return amoeba_tree(model.sample, model.kinds, weights, rows=rows, row_bytes=row_bytes,
                       max_partition_bytes=max_partition_bytes, max_partitions=max_partitions, table=table,
                       min_leaf_rows=min_leaf_rows, strategy="amoeba-weighted")


__all__ = ["amoeba_hybrid", "amoeba_tree", "amoeba_upfront", "amoeba_weighted", "filter_weights"]

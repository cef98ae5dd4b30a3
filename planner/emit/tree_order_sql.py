"""The sort keys of a tree ordering in SQL: the number of the row's leaf, as a nested ``CASE``,
then the columns that order the rows of a leaf (``tie_columns``).

``planner.costmodel.tree_order`` holds the tree in preorder; the cost model numbers a row's leaf
with ``leaf_ids``, and the writer must sort by the very same number. Each inner node becomes

    CASE WHEN <column> <= <value> THEN <left subtree> ELSE <right subtree> END

A NULL makes ``<column> <= <value>`` UNKNOWN, so it takes the ELSE branch: NULLs go right, as in
the model. A tree of ``d`` levels costs ``d`` comparisons per row.
"""
from __future__ import annotations

from sqlglot import exp

from planner.costmodel.tree_order import decode, tie_columns
from planner.emit.conditions import attribute_expr, literal
from planner.errors import LayoutError
from planner.layout import Layout


def tree_sort_keys(layout: Layout, table_alias: str | None = None) -> list[exp.Expression]:
    """``SORT BY`` keys after the partition column: the leaf number, then the tie columns."""
    derived = dict(layout.derived)
    return [tree_order_expr(layout, table_alias)] + [attribute_expr(c, derived, table_alias)
                                                      for c in tie_columns(layout.order)]


def tree_order_expr(layout: Layout, table_alias: str | None = None) -> exp.Expression:
    order = layout.order
    derived = dict(layout.derived)
    try:
        root = decode(order)
    except (StopIteration, ValueError, IndexError, TypeError):
        raise LayoutError("malformed tree ordering in the layout") from None
    if root is None:
        return exp.Literal.number(0)

    def build(node) -> exp.Expression:
        if isinstance(node, int):
            return exp.Literal.number(node)
        column, value, left, right = node
        cond = exp.LTE(this=attribute_expr(column, derived, table_alias), expression=literal(value))
        return exp.Case().when(cond, build(left), copy=False).else_(build(right), copy=False)

    return build(root)


__all__ = ["tree_order_expr", "tree_sort_keys"]

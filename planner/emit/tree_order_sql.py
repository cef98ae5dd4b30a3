"""The sort keys of a tree ordering in SQL: the number of the row's leaf, as a nested ``CASE``,
then the columns that order the rows of a leaf (``tie_columns``).

``planner.costmodel.tree_order`` holds the tree in preorder; the cost model numbers a row's leaf
with ``leaf_ids``, and the writer must sort by the very same number. Each inner node becomes

    CASE WHEN <column> <= <value> THEN <left subtree> ELSE <right subtree> END

A NULL makes ``<column> <= <value>`` UNKNOWN, so it takes the ELSE branch: NULLs go right, as in
the model. A tree of ``d`` levels costs ``d`` comparisons per row.

For Spark, ``packed_tree_key`` folds the leaf number and the first tie column into one BIGINT,

    shiftleft(CAST(<leaf> AS BIGINT), T) + CASE WHEN v IS NULL OR v <= lo THEN 0
                                                WHEN v >= hi THEN (hi - lo) >> s
                                                ELSE shiftright(v - lo, s) END

with ``[lo, hi]`` the tie column's range when advised (the write hint ``tie_ranges``), ``T`` the
bits left after the leaf's, and ``s`` the shift that makes ``hi - lo`` fit in them. The key is
non-decreasing in (leaf, tie), so sorting by it orders the rows as sorting by both would (ties
beyond the range, or closer than ``2**s``, compare equal: order is only ever a matter of speed,
since pruning reads the files' own statistics). One key of 64 bits is what Spark sorts fastest:
a radix sort on the sort prefix, no comparison of whole rows. The subtraction runs only inside
``(lo, hi)``, so it cannot overflow under ANSI mode.
"""
from __future__ import annotations

from sqlglot import exp

from planner.costmodel.tree_order import decode, leaves, tie_columns
from planner.emit.conditions import attribute_expr, column_ref, literal
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


KEY_BITS = 62  # of a BIGINT's 63 value bits: the sum below stays clear of the sign


def packed_tree_key(layout: Layout, table_alias: str | None = None) -> list[exp.Expression]:
    """Sort keys for Spark: the leaf and the first tie column folded into one BIGINT when the
    layout records that column's range (``tie_ranges``: ``{column: [lo, hi, "integer"|"date"]}``,
    dates as days since 1970-01-01), then any tie columns left."""
    leaf = tree_order_expr(layout, table_alias)
    ties = list(tie_columns(layout.order))
    derived = dict(layout.derived)
    ranges = dict(layout.meta).get("tie_ranges") or {}
    first = ties[0] if ties else None
    spec = ranges.get(first) if first is not None and first not in derived else None
    if not spec or len(spec) != 3 or spec[2] not in ("integer", "date") or not int(spec[1]) > int(spec[0]) \
            or int(spec[1]) - int(spec[0]) >= 2 ** 62:
        return [leaf] + [attribute_expr(c, derived, table_alias) for c in ties]
    lo, hi, kind = int(spec[0]), int(spec[1]), spec[2]
    tie_bits = KEY_BITS - max(1, (leaves(layout.order) - 1).bit_length())
    shift = max(0, (hi - lo).bit_length() - tie_bits)
    col = column_ref(first, table_alias)
    v = exp.Anonymous(this="unix_date", expressions=[col]) if kind == "date" else exp.cast(col, "BIGINT")

    def num(n: int) -> exp.Expression:
        return exp.Literal.number(n)

    low = exp.or_(exp.Is(this=v.copy(), expression=exp.Null()), exp.LTE(this=v.copy(), expression=num(lo)))
    inside = exp.Sub(this=v.copy(), expression=num(lo))
    tie = (exp.Case().when(low, num(0), copy=False)
           .when(exp.GTE(this=v.copy(), expression=num(hi)), num((hi - lo) >> shift), copy=False)
           .else_(exp.Anonymous(this="shiftright", expressions=[inside, num(shift)]) if shift else inside,
                  copy=False))
    key = exp.Add(this=exp.Anonymous(this="shiftleft", expressions=[exp.cast(leaf, "BIGINT"), num(tie_bits)]),
                  expression=tie)
    return [key] + [attribute_expr(c, derived, table_alias) for c in ties[1:]]


__all__ = ["packed_tree_key", "tree_order_expr", "tree_sort_keys"]

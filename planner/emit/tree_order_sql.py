"""The sort keys of a tree ordering in SQL: the number of the row's leaf, as a nested ``CASE``,
then the columns that order the rows of a leaf (``tie_columns``).

``planner.costmodel.tree_order`` holds the tree in preorder; the cost model numbers a row's leaf
with ``leaf_ids``, and the writer must sort by the very same number. Each inner node becomes

    CASE WHEN <column> <= <value> THEN <left subtree> ELSE <right subtree> END

A NULL makes ``<column> <= <value>`` UNKNOWN, so it takes the ELSE branch: NULLs go right, as in
the model. A tree of ``d`` levels costs ``d`` comparisons per row.

For Spark, ``packed_tree_key`` folds the partition's rank, the leaf number and the first tie
column into one BIGINT,

    shiftleft(CAST(pmod(<partition id>, M) AS BIGINT), 62 - P)
      + shiftleft(CAST(<leaf> AS BIGINT), T)
      + CASE WHEN v IS NULL OR v <= lo THEN 0 WHEN v >= hi THEN (hi - lo) >> s
             ELSE shiftright(v - lo, s) END

with ``M`` the smallest modulus that keeps the layout's partition ids apart (``P`` its bits),
``[lo, hi]`` the tie column's range when advised (the write hint ``tie_ranges``), ``T`` the bits
left after the rank's and the leaf's, and ``s`` the shift that makes ``hi - lo`` fit in them. The
key is non-decreasing in (leaf, tie) within a partition, so sorting by it orders each
partition's rows as sorting by both would (ties beyond the range, or closer than ``2**s``, compare
equal: order is only ever a matter of speed, since pruning reads the files' own statistics). One
key of 64 bits is what Spark sorts fastest: a radix sort on the sort prefix, no comparison of
whole rows. The rank on top keeps a partition's rows together, so the writer appends to one file
at a time instead of switching between open files row by row (the key with and without the rank,
built against a copy: ``benchmarks/results/tree_key_sf1.md``). The subtraction runs only inside ``(lo, hi)``, so it cannot overflow under
ANSI mode.
"""
from __future__ import annotations

from typing import Iterable

from sqlglot import exp

from planner.costmodel.tree_order import decode, leaves, tie_columns
from planner.emit.conditions import attribute_expr, column_ref, literal
from planner.errors import LayoutError
from planner.model.layout import CATCH_ALL, Layout


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
RANK_BITS = 30  # at most this many for the partition's rank and the leaf together


def partition_modulus(ids: Iterable[int]) -> int | None:
    """The smallest ``M >= len(ids)`` for which the partition ids differ modulo ``M`` (None when
    none up to four times as many): ``pmod(<partition>, M)`` is then the partition's rank in the
    sort key, one operation per row whatever the ids' size (a generation's ids are 12 digits)."""
    ids = sorted(set(ids))
    for m in range(max(1, len(ids)), 4 * len(ids) + 64):
        if len({i % m for i in ids}) == len(ids):
            return m
    return None


def packed_tree_key(layout: Layout, table_alias: str | None = None,
                    partition: exp.Expression | None = None) -> list[exp.Expression]:
    """Sort keys for Spark: the partition's rank (when ``partition``, a reference to the row's
    partition id, is given), the leaf and the first tie column folded into one BIGINT when the
    layout records that column's range (``tie_ranges``: ``{column: [lo, hi, "integer"|"date"]}``,
    dates as days since 1970-01-01), then any tie columns left."""
    leaf = tree_order_expr(layout, table_alias)
    ties = list(tie_columns(layout.order))
    derived = dict(layout.derived)
    tie_keys = [attribute_expr(c, derived, table_alias) for c in ties]

    def num(n: int) -> exp.Expression:
        return exp.Literal.number(n)

    def shifted(e: exp.Expression, bits: int) -> exp.Expression:
        return exp.Anonymous(this="shiftleft", expressions=[exp.cast(e, "BIGINT"), num(bits)])

    leaf_bits = max(1, (leaves(layout.order) - 1).bit_length())
    rank, rank_bits = None, 0
    m = partition_modulus({p.id for p in layout.partitions} | {CATCH_ALL}) if partition is not None else None
    if m is not None and m > 1 and (m - 1).bit_length() + leaf_bits <= RANK_BITS:
        rank = exp.Anonymous(this="pmod", expressions=[partition, num(m)])
        rank_bits = (m - 1).bit_length()
    first = ties[0] if ties else None
    ranges = dict(layout.meta).get("tie_ranges") or {}
    spec = ranges.get(first) if first is not None and first not in derived else None
    if not spec or len(spec) != 3 or spec[2] not in ("integer", "date") or not int(spec[1]) > int(spec[0]) \
            or int(spec[1]) - int(spec[0]) >= 2 ** 62:
        head = leaf if rank is None else exp.Add(this=shifted(rank, leaf_bits), expression=leaf)
        return [head] + tie_keys
    lo, hi, kind = int(spec[0]), int(spec[1]), spec[2]
    tie_bits = KEY_BITS - rank_bits - leaf_bits
    shift = max(0, (hi - lo).bit_length() - tie_bits)
    col = column_ref(first, table_alias)
    v = exp.Anonymous(this="unix_date", expressions=[col]) if kind == "date" else exp.cast(col, "BIGINT")
    low = exp.or_(exp.Is(this=v.copy(), expression=exp.Null()), exp.LTE(this=v.copy(), expression=num(lo)))
    inside = exp.Sub(this=v.copy(), expression=num(lo))
    tie = (exp.Case().when(low, num(0), copy=False)
           .when(exp.GTE(this=v.copy(), expression=num(hi)), num((hi - lo) >> shift), copy=False)
           .else_(exp.Anonymous(this="shiftright", expressions=[inside, num(shift)]) if shift else inside,
                  copy=False))
    head = shifted(leaf, tie_bits)
    if rank is not None:
        head = exp.Add(this=shifted(rank, KEY_BITS - rank_bits), expression=head)
    return [exp.Add(this=head, expression=tie)] + tie_keys[1:]


__all__ = ["packed_tree_key", "partition_modulus", "tree_order_expr", "tree_sort_keys"]

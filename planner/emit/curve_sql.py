"""The z-value and the Hilbert value as SQL: a few operations per row, valid in Hive and Spark.

Bucketing is a balanced search over a column's bounds, a nested CASE of depth log2(buckets).
For bounds ``[b0 … b6]`` (8 buckets, ``bisect_right``):

    CASE WHEN v IS NULL THEN <0>
         WHEN v < b3 THEN CASE WHEN v < b1 THEN CASE WHEN v < b0 THEN <0> ELSE <1> END
                               ELSE CASE WHEN v < b2 THEN <2> ELSE <3> END END
         ELSE CASE WHEN v < b5 THEN … END END

so a row costs one NULL test and 3 comparisons instead of up to 7 (up to 64 for the 63 bounds
of 64 buckets: 7 against 64). Neither engine has a built-in that buckets by arbitrary bounds
(``width_bucket`` wants equal widths, Hive has none before 3.0), and NaN compares above every
number in both, so the CASE puts it in the top bucket, as ``planner.costmodel.ordering.buckets``.

The leaves are not bucket numbers but the bucket's bits already at their z-order positions
(``curves.spread``), so the z-value is a plain sum of one CASE per column. The Hilbert value runs
``curves.hilbert_table``'s automaton on the z-value, one array lookup, an AND and an OR per level
(``ARRAY(…)[i]``, ``&``, ``|``, ``SHIFTRIGHT`` exist in Hive ≥ 1.2 and Spark); the table is a
column of the row (``planner_curve``) so its literal is written once, and the z-value a column
of the subquery below, so it is computed once per row.
"""
from __future__ import annotations

from typing import Callable, Mapping, Sequence

from sqlglot import exp

from planner.cnf.ir import ColumnPair
from planner.costmodel.curves import (
    CURVE_COLUMNS,
    MAX_BUCKETS,
    Z_BUCKET_BITS,
    hilbert_table,
    spread,
    state_mask,
)
from planner.emit.conditions import attribute_expr, literal
from planner.errors import LayoutError
from planner.model.layout import Ordering


def _operand(e: exp.Expression) -> exp.Expression:
    return e if isinstance(e, (exp.Column, exp.Paren, exp.Literal)) else exp.Paren(this=e)


def _number(n: int) -> exp.Literal:
    return exp.Literal.number(n)


def bucket_case(ref: exp.Expression, bounds: Sequence, leaf: Callable[[int], int] = int) -> exp.Expression:
    """``leaf(bisect_right(bounds, ref))`` by a balanced search; NULL -> ``leaf(0)``."""
    ref = _operand(ref)

    def search(lo: int, hi: int) -> exp.Expression:  # the bucket is in [lo, hi]
        if lo == hi:
            return _number(leaf(lo))
        mid = (lo + hi + 1) // 2  # bucket >= mid  <=>  bounds[mid - 1] <= v
        below = exp.LT(this=ref.copy(), expression=literal(bounds[mid - 1]))
        return exp.Case(ifs=[exp.If(this=below, true=search(lo, mid - 1))], default=search(mid, hi))

    if not bounds:
        return _number(leaf(0))
    tree = search(0, len(bounds))
    null = exp.If(this=exp.Is(this=ref.copy(), expression=exp.Null()), true=_number(leaf(0)))
    tree.set("ifs", [null, *tree.args["ifs"]])
    return tree


def check_curve(order: Ordering) -> None:
    if len(order.bounds) != len(order.columns):
        raise LayoutError(f"{order.method} needs one list of bucket bounds per column")
    if order.method == "hilbert" and len(order.columns) not in CURVE_COLUMNS:
        raise LayoutError(f"a Hilbert order interleaves {min(CURVE_COLUMNS)}–{max(CURVE_COLUMNS)} columns, "
                          f"not {len(order.columns)}")
    for col, bounds in zip(order.columns, order.bounds):
        if len(bounds) >= MAX_BUCKETS:
            raise LayoutError(f"{order.method} column {col} has {len(bounds)} bounds; at most {MAX_BUCKETS - 1}")
        if list(bounds) != sorted(bounds) or len(set(bounds)) != len(bounds):
            raise LayoutError(f"{order.method} bounds of column {col} must be strictly ascending")


def zorder_value(order: Ordering, derived: Mapping[str, ColumnPair], table_alias: str | None = None
                 ) -> exp.Expression:
    """The sum over columns of each value's spread bucket: the z-value, bit for bit the model's."""
    check_curve(order)
    k = len(order.columns)
    terms = [bucket_case(attribute_expr(c, derived, table_alias), b, lambda i, j=j: spread(i, j, k))
             for j, (c, b) in enumerate(zip(order.columns, order.bounds))]
    out = terms[0]
    for t in terms[1:]:
        out = exp.Add(this=out, expression=t)
    return out


def curve_table(k: int) -> exp.Array:
    """``ARRAY(…)``: the Hilbert automaton for ``k`` columns (``curves.hilbert_table``)."""
    return exp.Array(expressions=[_number(v) for v in hilbert_table(k)])


def hilbert_value(z: exp.Expression, table: exp.Expression, k: int) -> exp.Expression:
    """The Hilbert value of the cell whose z-value is ``z`` (a column), ``table`` the automaton."""
    digit_mask, smask = (1 << k) - 1, state_mask(k)

    def band(a: exp.Expression, b: int) -> exp.Expression:
        return exp.Paren(this=exp.BitwiseAnd(this=a, expression=_number(b)))

    terms: list[exp.Expression] = []
    q: exp.Expression | None = None
    for level in range(Z_BUCKET_BITS):
        shift = k * (Z_BUCKET_BITS - 1 - level)
        # SHIFTRIGHT(…), not >>: Hive has the function only (sqlglot prints >> for Hive).
        shifted = exp.Anonymous(this="SHIFTRIGHT", expressions=[z.copy(), _number(shift)]) if shift else z.copy()
        digit = band(shifted, digit_mask)
        index = digit if q is None else exp.Paren(this=exp.BitwiseOr(this=band(q.copy(), smask), expression=digit))
        q = exp.Bracket(this=table.copy(), expressions=[index])
        hdigit = band(q.copy(), digit_mask)
        terms.append(exp.Mul(this=hdigit, expression=_number(1 << shift)) if shift else hdigit)
    out = terms[0]
    for t in terms[1:]:
        out = exp.Add(this=out, expression=t)
    return out

"""Bind raw comparisons to column kinds: ``Cmp`` atoms become ``Pred`` value-set atoms.

A column's kind comes from the table schema when one is known. Without a schema it is inferred
from the literals the workload compares the column with (``infer_kinds``): a column ever compared
with a date is a date column, and numbers are treated as decimals, so no discreteness is assumed
that the real column might not have (``l_quantity < 24`` must not become ``<= 23`` on a decimal).
"""
from __future__ import annotations

from typing import Iterable, Mapping

from planner.cnf.ir import FALSE, TRUE, UNKNOWN, Cmp, ColumnPair, Expr, Opaque, Pred, and_, atoms, map_atoms, not_
from planner.cnf.values import Kind, Value, coerce, kind_of_value, render
from planner.cnf.valueset import Interval, ValueSet

_PREFERENCE = (Kind.TIMESTAMP, Kind.DATE, Kind.DECIMAL, Kind.FLOAT, Kind.INTEGER, Kind.BOOLEAN, Kind.STRING)


def infer_kinds(exprs: Iterable[Expr]) -> dict[str, Kind]:
    """Guess column kinds from the literals they are compared with (no schema available)."""
    seen: dict[str, set[Kind]] = {}
    for e in exprs:
        for a in atoms(e):
            if isinstance(a, Cmp) and a.op != "like":
                for v in a.values:
                    if v is not None:
                        seen.setdefault(a.column, set()).add(kind_of_value(v))
            elif isinstance(a, Cmp):
                seen.setdefault(a.column, set()).add(Kind.STRING)
    out: dict[str, Kind] = {}
    for col, kinds in seen.items():
        if Kind.STRING in kinds and len(kinds) > 1:
            kinds = kinds - {Kind.STRING}  # '1994-01-01' next to DATE '1995-01-01': a date column
        best = next(k for k in _PREFERENCE if k in kinds)
        out[col] = Kind.DECIMAL if best is Kind.INTEGER else best
    return out


def bind(e: Expr, kinds: Mapping[str, Kind]) -> Expr:
    """Replace every ``Cmp`` by a ``Pred`` (or an ``Opaque`` when its literal does not fit)."""
    return map_atoms(e, lambda a: bind_atom(a, kinds))


def bind_atom(a, kinds: Mapping[str, Kind]) -> Expr:
    if not isinstance(a, Cmp):
        return a
    kind = kinds.get(a.column)
    if kind is None:
        return Opaque(str(a), f"unknown column {a.column}", frozenset({a.column}))
    if not kind.orderable:
        return Opaque(str(a), f"column {a.column} has a type that cannot be ordered", frozenset({a.column}))
    pred = _bind(a, kind)
    if isinstance(pred, Pred):
        return Pred(pred.column, pred.true, pred.false, pred.exact, str(a))
    return pred


def _opaque(a: Cmp, reason: str) -> Opaque:
    return Opaque(str(a), reason, frozenset({a.column}))


def _bind(a: Cmp, kind: Kind) -> Expr:
    col = a.column
    if a.op == "isnull":
        p = Pred(col, ValueSet.only_null(kind), ValueSet.not_null(kind))
        return p.negate() if a.negated else p
    if a.op == "like":
        return _bind_like(a, kind)
    if a.op == "between":
        # Desugar so NULL bounds follow 3-valued logic: 'a' NOT BETWEEN NULL AND '' is TRUE
        # (UNKNOWN AND FALSE is FALSE), which a single UNKNOWN atom would get wrong.
        lo, hi = a.values
        e = and_(_bind(Cmp(col, ">=", (lo,)), kind), _bind(Cmp(col, "<=", (hi,)), kind))
        return not_(e) if a.negated else e
    if any(v is None for v in a.values) and a.op != "in":
        return UNKNOWN  # x = NULL: never TRUE, and NOT (x = NULL) is UNKNOWN too
    values = []
    for v in a.values:
        c = coerce(v, kind) if v is not None else None
        if v is not None and c is None:
            if kind is Kind.STRING:
                # s = DATE '2020-01-05' casts every s to a date: '2020-1-5' matches, no string range says so
                return _opaque(a, f"string column {col} compared with {render(v)}: Spark casts the column")
            return _opaque(a, f"literal {render(v)} does not fit {kind.value} column {col}")
        values.append(c)
    if a.op == "in":
        present = [v for v in values if v is not None]
        true = ValueSet.points(kind, present)
        # x NOT IN (1, NULL) is never TRUE: a NULL in the list leaves no FALSE outcome.
        false = ValueSet.nothing(kind) if len(present) < len(values) else true.complement().intersect(
            ValueSet.not_null(kind))
        p = Pred(col, true, false)
        return p.negate() if a.negated else p
    if a.op == "between":
        lo, hi = values
        true = ValueSet.range(kind, lo, hi)
        false = true.complement().intersect(ValueSet.not_null(kind))
        p = Pred(col, true, false)
        return p.negate() if a.negated else p
    (v,) = values
    neg = {"=": "<>", "<>": "=", "<": ">=", ">=": "<", ">": "<=", "<=": ">"}[a.op]
    return Pred(col, ValueSet.compare(kind, a.op, v), ValueSet.compare(kind, neg, v))


def _bind_like(a: Cmp, kind: Kind) -> Expr:
    """``LIKE 'PROMO%'`` is the range ['PROMO', 'PROMP'); other patterns are approximated.

    Spark's LIKE escapes with a backslash. The literal prefix before the first unescaped ``%`` or
    ``_`` bounds every match from both sides; only when the pattern is exactly that prefix, or that
    prefix and one trailing ``%``, is the range exact (and only then may NOT LIKE be used).
    """
    if kind is not Kind.STRING or not isinstance(a.values[0], str):
        return _opaque(a, "LIKE on a non-string column")
    prefix, rest = _like_prefix(a.values[0])
    if rest == "":
        true = ValueSet.points(kind, [prefix])
        exact = True
    else:
        exact = rest == "%"
        true = _prefix_range(prefix, kind)
    false = true.complement().intersect(ValueSet.not_null(kind)) if exact else ValueSet.not_null(kind)
    p = Pred(a.column, true, false, exact)
    if a.negated:
        return p.negate() if exact else Pred(a.column, ValueSet.not_null(kind), true, False)
    return p


def _like_prefix(pattern: str) -> tuple[str, str]:
    out, i = [], 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            out.append(pattern[i + 1])
            i += 2
            continue
        if ch in "%_":
            return "".join(out), pattern[i:]
        out.append(ch)
        i += 1
    return "".join(out), ""


def _prefix_range(prefix: str, kind: Kind) -> ValueSet:
    if not prefix:
        return ValueSet.not_null(kind)
    chars = list(prefix)
    while chars and ord(chars[-1]) >= 0x10FFFF:
        chars.pop()
    if not chars:
        return ValueSet.of(kind, [Interval(prefix, None, True, False)])
    upper = "".join(chars[:-1]) + chr(ord(chars[-1]) + 1)
    return ValueSet.of(kind, [Interval(prefix, upper, True, False)])


def column_pair_kinds_ok(p: ColumnPair, kinds: Mapping[str, Kind]) -> bool:
    a, b = kinds.get(p.left), kinds.get(p.right)
    return a is not None and a == b and a.orderable


__all__ = ["bind", "bind_atom", "infer_kinds", "column_pair_kinds_ok", "TRUE", "FALSE"]

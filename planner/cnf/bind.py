"""Bind raw comparisons to column types: ``Cmp`` atoms become ``Pred`` value-set atoms.

A column's type comes from the table schema (full Spark types: ``decimal(15,2)``, ``char(10)``,
``float``). Each comparison is read the way Spark reads it under the session's ``Settings``
(``planner.cnf.preimage``): which type both sides are cast to, what the constant is then, and
which column values that makes TRUE or FALSE. What Spark would do that the planner cannot follow
exactly becomes ``Opaque`` with the reason, so ``planner explain`` can say why.

Without a schema a column's kind is inferred from the literals it is compared with
(``infer_kinds``): a column ever compared with a date is a date column, and numbers are treated
as decimals, so no discreteness is assumed that the real column might not have.

Several ``Settings`` at once (the ANSI mode of the session that will run a saved query is not
known) bind each atom under every one and keep the union of the TRUE sets and of the FALSE sets:
an upper bound of both under each mode. A mode under which Spark fails the query contributes
nothing (no row is returned at all).
"""
from __future__ import annotations

from functools import lru_cache
from typing import Iterable, Mapping, Sequence

from planner.cnf.ir import (
    FALSE,
    TRUE,
    UNKNOWN,
    Cmp,
    ColumnPair,
    Expr,
    Opaque,
    Pred,
    and_,
    atoms,
    map_atoms,
    not_,
)
from planner.cnf.preimage import Sides, Unbound, comparison, membership
from planner.cnf.valueset import Interval, ValueSet
from planner.semantics.constants import Lit, python_literal, zone_dependent
from planner.semantics.evaluate import type_of
from planner.semantics.kinds import Kind
from planner.semantics.settings import Settings
from planner.semantics.types import SparkType, parse_type

_PREFERENCE = (Kind.TIMESTAMP, Kind.DATE, Kind.DECIMAL, Kind.FLOAT, Kind.INTEGER, Kind.BOOLEAN, Kind.STRING)
# The type a column of only a known kind is treated as (no schema; tests that speak in kinds).
KIND_TYPES = {Kind.INTEGER: "bigint", Kind.DECIMAL: "decimal(38,10)", Kind.FLOAT: "double", Kind.STRING: "string",
              Kind.DATE: "date", Kind.TIMESTAMP: "timestamp", Kind.BOOLEAN: "boolean", Kind.OTHER: "array<int>"}
class _Fails(str):
    """Internal: Spark fails the query under these settings (the text says why)."""


def column_type(t: SparkType | Kind | str) -> SparkType:
    if isinstance(t, SparkType):
        return t
    if isinstance(t, Kind):
        return parse_type(KIND_TYPES[t])
    return parse_type(t)


def infer_kinds(exprs: Iterable[Expr]) -> dict[str, Kind]:
    """Guess column kinds from the literals they are compared with (no schema available)."""
    seen: dict[str, set[Kind]] = {}
    for e in exprs:
        for a in atoms(e):
            if isinstance(a, Cmp) and a.op != "like":
                for v in a.values:
                    t = type_of(python_literal(v), Settings()) if v is not None else None
                    if isinstance(t, SparkType) and not t.is_null:
                        seen.setdefault(a.column, set()).add(t.kind if t.kind is not Kind.OTHER else Kind.STRING)
            elif isinstance(a, Cmp):
                seen.setdefault(a.column, set()).add(Kind.STRING)
    out: dict[str, Kind] = {}
    for col, kinds in seen.items():
        if Kind.STRING in kinds and len(kinds) > 1:
            kinds = kinds - {Kind.STRING}  # '1994-01-01' next to DATE '1995-01-01': a date column
        best = next((k for k in _PREFERENCE if k in kinds), Kind.STRING)
        out[col] = Kind.DECIMAL if best is Kind.INTEGER else best
    return out


def bind(e: Expr, columns: Mapping[str, SparkType | Kind | str],
         settings: Settings | Sequence[Settings] = Settings()) -> Expr:
    """Replace every ``Cmp`` by a ``Pred`` (or an ``Opaque`` saying why it cannot be one)."""
    types = {c: column_type(t) for c, t in columns.items()}
    modes = (settings,) if isinstance(settings, Settings) else tuple(settings)
    return map_atoms(e, lambda a: bind_atom(a, types, modes))


def bind_atom(a, types: Mapping[str, SparkType], modes: Sequence[Settings] = (Settings(),)) -> Expr:
    if not isinstance(a, Cmp):
        return a
    t = types.get(a.column)
    if t is None:
        return _opaque(a, f"unknown column {a.column}")
    return _bound(a, t, tuple(modes))


@lru_cache(maxsize=1 << 14)
def _bound(a: Cmp, t: SparkType, modes: tuple[Settings, ...]) -> Expr:
    """``a`` read on a column of type ``t`` under every one of ``modes``. A pure function of frozen
    values: a workload compares the same columns with the same constants again and again."""
    if t.kind is Kind.OTHER:
        return _opaque(a, f"column {a.column} has type {t}, which the planner does not order")
    bound = [_bind(a, t, s) for s in modes]
    live = [b for b in bound if not isinstance(b, _Fails)]
    if not live:
        return _opaque(a, f"Spark fails the query ({bound[0]}; {modes[0].describe()})")
    opaque = next((b for b in live if isinstance(b, Opaque)), None)
    if opaque is not None:
        return opaque
    if len(live) == 1 or all(b == live[0] for b in live):
        out = live[0]
    else:  # the sets differ between modes: keep a bound of both
        out = _union(live)
    return _label(out, str(a))


def _label(e: Expr, text: str) -> Expr:
    if isinstance(e, Pred):
        return Pred(e.column, e.true, e.false, e.exact, text)
    return e


def _union(parts: list[Expr]) -> Expr:
    """One atom that is TRUE (FALSE) wherever any of ``parts`` is: an upper bound of each."""
    preds = [p for p in parts if isinstance(p, Pred)]
    if len(preds) != len(parts) or len({p.column for p in preds}) != 1:
        return Opaque(" OR ".join(map(str, parts)), "its meaning depends on the session's ANSI mode")
    kind = preds[0].true.kind
    return Pred(preds[0].column, ValueSet.union_all(kind, [p.true for p in preds]),
                ValueSet.union_all(kind, [p.false for p in preds]), False)


def _opaque(a: Cmp, reason: str) -> Opaque:
    return Opaque(str(a), reason, frozenset({a.column}))


def _from(a: Cmp, out: Sides | Unbound) -> Expr | str:
    if isinstance(out, Unbound):
        return _Fails(out.reason) if out.fails else _opaque(a, out.reason)
    return Pred(a.column, out.true, out.false, out.exact)


def _bind(a: Cmp, t: SparkType, settings: Settings, pad: bool = True) -> Expr | str:
    col, kind = a.column, t.kind
    if a.op == "isnull":
        p = Pred(col, ValueSet.only_null(kind), ValueSet.not_null(kind))
        return p.negate() if a.negated else p
    if a.op == "like":
        return _bind_like(a, t)
    if a.op == "between":
        # Spark reads x BETWEEN lo AND hi as x >= lo AND x <= hi (each side coerced on its own);
        # desugared, NULL bounds follow 3-valued logic ('a' NOT BETWEEN NULL AND '' is TRUE).
        # Unlike a comparison, a BETWEEN does not pad its bounds for a CHAR(n) column.
        lo, hi = a.values
        parts = [_bind(Cmp(col, ">=", (lo,)), t, settings, False), _bind(Cmp(col, "<=", (hi,)), t, settings, False)]
        failed = [p for p in parts if isinstance(p, _Fails)]
        if failed:
            return failed[0]
        e = and_(parts)
        return not_(e) if a.negated else e
    consts = tuple(python_literal(v) for v in a.values)
    if a.op == "in":
        got = membership(t, consts, settings)
        if isinstance(got, Unbound):
            return _from(a, got)
        true, saw_null = got
        # x NOT IN (1, NULL) is never TRUE: a NULL in the list leaves no FALSE outcome.
        false = ValueSet.nothing(kind) if saw_null else true.complement().intersect(ValueSet.not_null(kind))
        p = Pred(col, true, false)
        return p.negate() if a.negated else p
    (c,) = consts
    return _from(a, comparison(t, a.op, c, settings, pad=pad))


def _bind_like(a: Cmp, t: SparkType) -> Expr:
    """``LIKE 'PROMO%'`` is the range ['PROMO', 'PROMP'); other patterns are approximated.

    Spark's LIKE escapes with a backslash. The literal prefix before the first unescaped ``%`` or
    ``_`` bounds every match from both sides; only when the pattern is exactly that prefix, or that
    prefix and one trailing ``%``, is the range exact (and only then may NOT LIKE be used).
    A CHAR(n) column holds values padded to n: a pattern without wildcards matches only values of
    exactly its text, but a prefix range's bounds would be padded by Spark when emitted, so a
    wildcard pattern on a CHAR column is not read.
    """
    kind = t.kind
    pattern = python_literal(a.values[0])
    if not t.is_string or not (isinstance(pattern, Lit) and pattern.type.is_string and pattern.value is not None):
        return _opaque(a, "LIKE on a non-string column or with a non-string pattern")
    prefix, rest = _like_prefix(pattern.value)
    if t.name == "char" and rest != "":
        return _opaque(a, f"LIKE with wildcards on {t} column {a.column} (values are padded to {t.precision})")
    if rest == "":
        # no wildcard: equality with the text as is (LIKE does not pad); every CHAR(n) value has
        # exactly n characters, so a pattern of another length matches none (and leaves no short
        # bound that Spark would pad if it were written into a region)
        fits = t.name != "char" or len(prefix) == t.precision
        true = ValueSet.points(kind, [prefix]) if fits else ValueSet.nothing(kind)
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


def needs_time_zone(predicate, types: Mapping[str, SparkType]) -> bool:
    """Whether reading ``predicate``'s constants needs the session time zone: a TIMESTAMP column,
    a constant holding a TIMESTAMP, or a DATE column compared with one."""
    for a in atoms(predicate):
        if not isinstance(a, Cmp):
            continue
        t = types.get(a.column)
        if t is not None and t.name == "timestamp":
            return True
        for v in a.values:
            c = python_literal(v)
            if zone_dependent(c):
                return True
    return False


__all__ = ["bind", "bind_atom", "needs_time_zone", "infer_kinds", "column_pair_kinds_ok", "column_type", "TRUE", "FALSE", "UNKNOWN"]

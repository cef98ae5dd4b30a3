"""The predicate IR: small frozen dataclasses, converted once from sqlglot trees.

Two stages of atoms exist:

* ``Cmp`` is a *raw* single-column comparison as written (``l_shipdate >= '1994-01-01'``): its
  constants are kept unevaluated (``planner.semantics.constants``), because what they are depends
  on the session's time zone and ANSI mode. The workload reader produces these.
* ``Pred`` is a *bound* single-column atom: the column's kind is known and the atom is described by
  two value sets, where it may be TRUE and where it may be FALSE. Anything else (NULL) makes it
  UNKNOWN. ``NOT`` swaps the two sets, which is exactly SQL's three-valued NOT:

      x < 5        true = (-inf, 5)   false = [5, +inf)   (NULL -> UNKNOWN)
      x IS NULL    true = {NULL}      false = NOT NULL
      NOT (x < 5)  true = [5, +inf)   false = (-inf, 5)

  Both sets are *upper bounds*: an atom we only approximate (``LIKE 'a_c%'``) may claim more than it
  matches, never less. That is the whole safety argument for pruning.

``ColumnPair`` (``l_commitdate < l_receiptdate``) and ``Opaque`` (UDFs, subqueries, ``rand()``)
never prune by column value. Connectives are n-ary ``And``/``Or`` over frozensets, so equal
predicates are equal values; ``and_``/``or_``/``not_`` are smart constructors that flatten and fold
constants (``and_(x, TRUE)`` is ``x``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Union

from planner.cnf.values import Value
from planner.cnf.valueset import ValueSet
from planner.semantics.constants import CONSTANTS
from planner.semantics.kinds import render

_NEGATED_OP = {"=": "<>", "<>": "=", "<": ">=", ">=": "<", ">": "<=", "<=": ">"}
_FLIPPED_OP = {"=": "=", "<>": "<>", "<": ">", ">": "<", "<=": ">=", ">=": "<="}


@dataclass(frozen=True)
class Const:
    """TRUE, FALSE or UNKNOWN (``value`` None), SQL's three truth values."""

    value: bool | None

    def __str__(self) -> str:
        return {True: "TRUE", False: "FALSE", None: "UNKNOWN"}[self.value]


TRUE, FALSE, UNKNOWN = Const(True), Const(False), Const(None)


@dataclass(frozen=True)
class Cmp:
    """A raw comparison of one column with literal values, before types are bound.

    ``op`` is one of ``= <> < <= > >= in between like isnull``; ``negated`` marks NOT IN,
    NOT BETWEEN, NOT LIKE and IS NOT NULL so they are kept as written.
    """

    column: str
    op: str
    values: tuple[Value, ...] = ()
    negated: bool = False

    def negate(self) -> "Cmp":
        """Exact under three-valued logic: NOT (x < 5) is x >= 5 (both UNKNOWN on NULL)."""
        if self.op in _NEGATED_OP:
            return Cmp(self.column, _NEGATED_OP[self.op], self.values)
        return Cmp(self.column, self.op, self.values, not self.negated)

    def __str__(self) -> str:
        c, n = self.column, "NOT " if self.negated else ""
        if self.op == "isnull":
            return f"{c} IS {n}NULL"
        if self.op == "in":
            return f"{c} {n}IN ({', '.join(_show(v) for v in self.values)})"
        if self.op == "between":
            return f"{c} {n}BETWEEN {_show(self.values[0])} AND {_show(self.values[1])}"
        if self.op == "like":
            return f"{c} {n}LIKE {_show(self.values[0])}"
        return f"{n}{c} {self.op} {_show(self.values[0])}"


def _show(v) -> str:
    """A constant as written (``planner.semantics.constants``), or a plain value rendered."""
    return str(v) if isinstance(v, CONSTANTS) else render(v)


@dataclass(frozen=True)
class Pred:
    """A bound single-column atom: TRUE only on ``true``, FALSE only on ``false``."""

    column: str
    true: ValueSet
    false: ValueSet
    exact: bool = True
    text: str = field(default="", compare=False)

    def negate(self) -> "Pred":
        text = f"NOT ({self.text})" if self.text else ""
        return Pred(self.column, self.false, self.true, self.exact, text)

    def __str__(self) -> str:
        return f"{self.column} IN {self.true}"


@dataclass(frozen=True)
class ColumnPair:
    """``left <op> right`` over two columns of the same table: a derived boolean attribute."""

    left: str
    op: str
    right: str

    def negate(self) -> "ColumnPair":
        return ColumnPair(self.left, _NEGATED_OP[self.op], self.right)

    def canonical(self) -> "ColumnPair":
        """One spelling per comparison: ``b > a`` and ``a < b`` are the same atom."""
        if self.left <= self.right:
            return self
        return ColumnPair(self.right, _FLIPPED_OP[self.op], self.left)

    def __str__(self) -> str:
        return f"{self.left} {self.op} {self.right}"


@dataclass(frozen=True)
class Opaque:
    """A predicate we do not understand. It might be TRUE for any row, so it never prunes."""

    sql: str
    reason: str
    columns: frozenset[str] = frozenset()
    negated: bool = False

    def negate(self) -> "Opaque":
        return Opaque(self.sql, self.reason, self.columns, not self.negated)

    def __str__(self) -> str:
        return f"NOT ({self.sql})" if self.negated else self.sql


Atom = Union[Cmp, Pred, ColumnPair, Opaque]


@dataclass(frozen=True)
class Not:
    arg: "Expr"

    def __str__(self) -> str:
        return f"NOT ({self.arg})"


@dataclass(frozen=True)
class And:
    args: frozenset["Expr"]

    def __str__(self) -> str:
        return " AND ".join(sorted(_paren(a) for a in self.args))


@dataclass(frozen=True)
class Or:
    args: frozenset["Expr"]

    def __str__(self) -> str:
        return " OR ".join(sorted(_paren(a) for a in self.args))


Expr = Union[Const, Cmp, Pred, ColumnPair, Opaque, Not, And, Or]


def _paren(e: Expr) -> str:
    return f"({e})" if isinstance(e, (And, Or)) else str(e)


def and_(*args: Expr | Iterable[Expr]) -> Expr:
    return _nary(And, _flat(args), unit=TRUE, zero=FALSE)


def or_(*args: Expr | Iterable[Expr]) -> Expr:
    return _nary(Or, _flat(args), unit=FALSE, zero=TRUE)


def _flat(args) -> list[Expr]:
    out: list[Expr] = []
    for a in args:
        if isinstance(a, (list, tuple, set, frozenset)) or (hasattr(a, "__iter__") and not isinstance(a, str)):
            out.extend(a)
        else:
            out.append(a)
    return out


def _nary(cls, args: list[Expr], unit: Const, zero: Const) -> Expr:
    # UNKNOWN is kept: UNKNOWN AND FALSE is FALSE, UNKNOWN OR TRUE is TRUE, otherwise it stays.
    items: set[Expr] = set()
    for a in args:
        if isinstance(a, cls):
            items.update(a.args)
        elif a == zero:
            return zero
        elif a != unit:
            items.add(a)
    if not items:
        return unit
    if len(items) == 1:
        return next(iter(items))
    return cls(frozenset(items))


def not_(e: Expr) -> Expr:
    if isinstance(e, Const):
        return Const(None if e.value is None else not e.value)
    if isinstance(e, Not):
        return e.arg
    return Not(e)


def atoms(e: Expr) -> Iterable[Expr]:
    """All atoms of an expression, in no particular order."""
    if isinstance(e, (And, Or)):
        for a in e.args:
            yield from atoms(a)
    elif isinstance(e, Not):
        yield from atoms(e.arg)
    elif not isinstance(e, Const):
        yield e


def map_atoms(e: Expr, fn) -> Expr:
    """Rebuild ``e`` with every atom replaced by ``fn(atom)`` (an Expr), folding as it goes."""
    if isinstance(e, And):
        return and_(map_atoms(a, fn) for a in e.args)
    if isinstance(e, Or):
        return or_(map_atoms(a, fn) for a in e.args)
    if isinstance(e, Not):
        return not_(map_atoms(e.arg, fn))
    if isinstance(e, Const):
        return e
    return fn(e)

"""Convert a sqlglot predicate into the IR, from the point of view of one table scan.

``to_ir(node, owner)`` walks AND/OR/NOT and turns each comparison into an atom. ``owner(col)`` says
whose column a ``exp.Column`` is: the scan's own column name, or ``None`` for a column of another
table, an outer query or a derived table. Atoms that mention foreign columns become ``Opaque``
with reason ``FOREIGN`` (join conditions, correlation): they say nothing about this scan's rows.
They are not replaced by TRUE here, because that is only sound where the atom occurs positively;
``project`` does it after NNF.
"""
from __future__ import annotations

from typing import Callable

from sqlglot import exp

from planner.cnf.ir import (
    FALSE,
    TRUE,
    UNKNOWN,
    Cmp,
    ColumnPair,
    Expr,
    Opaque,
    and_,
    map_atoms,
    not_,
    or_,
)
from planner.semantics.constants import Interval, Lit, from_sqlglot, zone_dependent
from planner.semantics.evaluate import evaluate
from planner.semantics.settings import Settings, Typed

FOREIGN = "references another table or an outer query"
SUBQUERY = "subquery predicate"
COLUMN_PAIR = "compares two columns"

_CMP = {exp.EQ: "=", exp.NEQ: "<>", exp.LT: "<", exp.LTE: "<=", exp.GT: ">", exp.GTE: ">="}
_FLIP = {"=": "=", "<>": "<>", "<": ">", ">": "<", "<=": ">=", ">=": "<="}
_NONDETERMINISTIC = ("rand", "random", "uuid", "current_date", "current_timestamp", "now",
                     "unix_timestamp", "monotonically_increasing_id", "shuffle")

Owner = Callable[[exp.Column], "str | None"]


def to_ir(node: exp.Expression, owner: Owner, dialect: str = "hive", memo: dict | None = None) -> Expr:
    """``memo``: shared by the conversions of one tree for several owners (every scan of a query
    converts the same WHERE), so each atom's columns are found once, not once per scan."""
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, (exp.And, exp.Or)):
        # sqlglot parses ``a OR b OR c …`` as a left-deep binary tree, 10,000 terms deep for a
        # generated 10,000-term OR. Collect the operands of one connective with an explicit stack,
        # so recursion depth follows the nesting of *different* connectives, not the chain length.
        kind = type(node)
        operands = [to_ir(x, owner, dialect, memo) for x in _chain(node, kind)]
        return and_(operands) if kind is exp.And else or_(operands)
    if isinstance(node, exp.Not):
        return not_(to_ir(node.this, owner, dialect, memo))
    refs = _references(node, memo)
    if _foreign(refs, owner):
        return _FOREIGN_ATOM
    atom = _atom(node, owner)
    if atom is not None:
        # sqlglot folds NOT LIKE / NOT IN into the node (``negate=True``); ignoring it would prune
        # exactly the rows the query wants.
        return not_(atom) if node.args.get("negate") else atom
    return _opaque(node, owner, dialect, refs)


_FOREIGN_ATOM = Opaque("<foreign>", FOREIGN, frozenset())


def _references(node: exp.Expression, memo: dict | None) -> tuple[bool, list[exp.Column]]:
    """Whether ``node`` holds a subquery, and its columns (in ``find_all`` order), from ``memo``
    (keyed by node identity: only for the lifetime of one tree) or found now."""
    refs = memo.get(id(node)) if memo is not None else None
    if refs is None:
        refs = (node.find(exp.Subquery, exp.Exists, exp.Select) is not None, list(node.find_all(exp.Column)))
        if memo is not None:
            memo[id(node)] = refs
    return refs


def _foreign(refs: tuple[bool, list[exp.Column]], owner: Owner) -> bool:
    """An atom without subquery whose columns all belong to other tables says nothing about this
    scan: it is the ``<foreign>`` opaque atom (what ``_atom`` and ``_opaque`` make of it, found
    without them). The owners are asked in the order those two would ask them."""
    subquery, columns = refs
    return not subquery and bool(columns) and all(owner(c) is None for c in columns)


def _chain(node: exp.Expression, kind: type) -> list[exp.Expression]:
    """Operands of a chain of ``kind`` (AND or OR), through parentheses, left to right."""
    out: list[exp.Expression] = []
    stack = [node]
    while stack:
        n = stack.pop()
        while isinstance(n, exp.Paren):
            n = n.this
        if type(n) is kind:
            stack.append(n.expression)
            stack.append(n.this)
        else:
            out.append(n)
    return out


def _opaque(node: exp.Expression, owner: Owner, dialect: str, refs: tuple[bool, list[exp.Column]]) -> Expr:
    # Printing SQL is the expensive part; foreign atoms (join conditions) never need it.
    subquery, columns = refs
    if subquery:
        head = node.this if isinstance(node, exp.In) else None
        col = _column(head, owner) if head is not None else None
        mine_sq = frozenset({col[0]}) if col and col[1] else frozenset()
        return Opaque(node.sql(dialect=dialect) if mine_sq else "<subquery>", SUBQUERY, mine_sq)
    mine, foreign = set(), False
    for c in columns:
        name = owner(c)
        if name is None:
            foreign = True
        else:
            mine.add(name)
    if foreign:
        return Opaque("<foreign>", FOREIGN, frozenset(mine))
    sql = node.sql(dialect=dialect)
    if not mine and not columns:
        constant = _constant_predicate(node)  # 1 = 1, FALSE, CAST(NULL AS BOOLEAN)
        if constant is not None:
            return constant
    # a typed function (sqlglot's Uuid, Shuffle) has no .name; its SQL name is the function's
    names = {(f.name if isinstance(f, exp.Anonymous) else f.sql_name()).lower() for f in node.find_all(exp.Func)}
    if names & set(_NONDETERMINISTIC) or any(isinstance(f, (exp.Rand, exp.CurrentDate, exp.CurrentTimestamp))
                                            for f in node.find_all(exp.Func)):
        reason = "non-deterministic function"
    elif any(isinstance(f, exp.Anonymous) for f in node.find_all(exp.Func)):
        reason = "user-defined function"
    else:
        reason = "expression over columns"
    return Opaque(sql, reason, frozenset(mine))


def _column(node: exp.Expression, owner: Owner):
    """``(name, True)`` for this scan's bare column, ``(None, False)`` for a foreign one."""
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.Column) and not isinstance(node.this, exp.Star):
        name = owner(node)
        return (name, True) if name is not None else (None, False)
    return None


NOT_CONSTANT = None


def _constant(node: exp.Expression):
    """The constant expression ``node`` is (evaluated later, under the session's settings)."""
    c = from_sqlglot(node)
    return NOT_CONSTANT if isinstance(c, Interval) else c


def _constant_predicate(node: exp.Expression):
    """TRUE/FALSE/UNKNOWN for a predicate without columns, if it means the same in every session
    (both ANSI modes, any time zone); else None and it stays opaque."""
    c = from_sqlglot(node)
    if c is None or zone_dependent(c):
        return None
    outs = [evaluate(c, Settings(ansi)) for ansi in (True, False)]
    if not all(isinstance(o, Typed) and o.type.name in ("boolean", "void") for o in outs) or outs[0] != outs[1]:
        return None
    v = outs[0].value
    return UNKNOWN if v is None else (TRUE if v else FALSE)


def _atom(node: exp.Expression, owner: Owner) -> Expr | None:
    for cls, op in _CMP.items():
        if type(node) is cls:
            left, right = _column(node.this, owner), _column(node.expression, owner)
            if left and right:
                if left[1] and right[1]:
                    return ColumnPair(left[0], op, right[0]).canonical()
                return None  # join condition; _opaque marks it FOREIGN
            if left and left[1]:
                v = _constant(node.expression)
                return None if v is NOT_CONSTANT else Cmp(left[0], op, (v,))
            if right and right[1]:
                v = _constant(node.this)
                return None if v is NOT_CONSTANT else Cmp(right[0], _FLIP[op], (v,))
            return None
    if isinstance(node, exp.Between):
        col = _column(node.this, owner)
        lo, hi = _constant(node.args["low"]), _constant(node.args["high"])
        if col and col[1] and lo is not NOT_CONSTANT and hi is not NOT_CONSTANT:
            return Cmp(col[0], "between", (lo, hi))
        return None
    if isinstance(node, exp.In):
        col = _column(node.this, owner)
        if not (col and col[1]) or node.args.get("query") or node.args.get("unnest"):
            return None
        values = tuple(_constant(v) for v in node.expressions)
        if not values or any(v is NOT_CONSTANT for v in values):
            return None
        return Cmp(col[0], "in", values)
    if isinstance(node, exp.Is) and isinstance(node.expression, exp.Null):
        col = _column(node.this, owner)
        return Cmp(col[0], "isnull") if col and col[1] else None
    if isinstance(node, exp.Like) and not node.args.get("escape"):
        col = _column(node.this, owner)
        pattern = _constant(node.expression)
        if col and col[1] and isinstance(pattern, Lit) and pattern.type.is_string and pattern.value is not None:
            return Cmp(col[0], "like", (pattern,))
        return None
    if isinstance(node, exp.Column):
        col = _column(node, owner)  # WHERE flag  (a boolean column)
        return Cmp(col[0], "=", (True,)) if col and col[1] else None
    return None


def project(e: Expr) -> Expr:
    """Drop what says nothing about this scan: foreign atoms become TRUE (``e`` must be in NNF)."""
    return map_atoms(e, lambda a: TRUE if isinstance(a, Opaque) and (
        a.reason == FOREIGN or (a.reason == SUBQUERY and not a.columns)) else a)

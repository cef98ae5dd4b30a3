"""Negation normal form, simplification and CNF with a size budget.

The pipeline is ``cnf(e)``:

1. ``nnf`` pushes NOT down to the atoms. De Morgan's laws hold in SQL's three-valued (Kleene)
   logic, and every atom knows its own exact negation, so NNF is exactly equivalent.
2. ``simplify`` merges atoms on one column inside a node: in an AND the TRUE sets intersect, in an
   OR they unite (``x >= 1 AND x < 5 AND x <> 3`` becomes one atom ``[1, 3) ∪ (3, 5)``). After
   NNF nothing negates again, so a node that can never be TRUE is folded to FALSE.
3. Distribution of OR over AND. It can blow up (Q19 has 3 branches × 7 atoms: 343 clauses), so it
   has a budget. Past the budget the OR is replaced by the strongest per-column consequence of its
   branches, ``OR_i AND_j a_ij  =>  AND_c (OR_i hull_c(branch_i))``: weaker but correct, and flagged.

Clauses are frozensets of atoms with at most one ``Pred`` per column (atoms on one column inside a
clause are merged). ``group_by_column`` then splits a CNF into one value set per column plus the
multi-column and opaque clauses.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from itertools import product
from typing import Iterable

from planner.cnf.ir import (
    FALSE,
    TRUE,
    And,
    Cmp,
    ColumnPair,
    Const,
    Expr,
    Not,
    Opaque,
    Or,
    Pred,
    and_,
    not_,
    or_,
)
from planner.cnf.valueset import ValueSet

DEFAULT_BUDGET = 256

Clause = frozenset  # frozenset of atoms (Pred | ColumnPair | Opaque)


def nnf(e: Expr) -> Expr:
    if isinstance(e, Not):
        return _negate(e.arg)
    if isinstance(e, And):
        return and_(nnf(a) for a in e.args)
    if isinstance(e, Or):
        return or_(nnf(a) for a in e.args)
    return e


def _negate(e: Expr) -> Expr:
    if isinstance(e, Not):
        return nnf(e.arg)
    if isinstance(e, And):
        return or_(_negate(a) for a in e.args)
    if isinstance(e, Or):
        return and_(_negate(a) for a in e.args)
    if isinstance(e, Const):
        return not_(e)
    return e.negate()


def _merge_preds(preds: list[Pred], conjunctive: bool) -> Pred:
    """Combine atoms on one column: AND is TRUE where all are, FALSE where any is; OR dually."""
    p = preds[0]
    if len(preds) == 1:
        return p
    kind = p.true.kind
    trues, falses = [q.true for q in preds], [q.false for q in preds]
    # n-ary, not pairwise: folding 10,000 ``x = i`` of one OR pairwise re-sorts a growing set
    # 10,000 times (minutes); at once it is one sort.
    if conjunctive:
        true, false = ValueSet.intersect_all(kind, trues), ValueSet.union_all(kind, falses)
    else:
        true, false = ValueSet.union_all(kind, trues), ValueSet.intersect_all(kind, falses)
    exact = all(q.exact for q in preds)
    text = (" AND " if conjunctive else " OR ").join(sorted(x.text or str(x) for x in preds))
    return Pred(p.column, true, false, exact, text if len(preds) > 1 else p.text)


def simplify(e: Expr) -> Expr:
    """Merge same-column atoms inside each AND/OR and fold what can never (or always) be TRUE."""
    if isinstance(e, (And, Or)):
        conj = isinstance(e, And)
        kids = [simplify(a) for a in e.args]
        rebuilt = and_(kids) if conj else or_(kids)
        if not isinstance(rebuilt, type(e)):
            return rebuilt
        by_col: dict[str, list[Pred]] = {}
        rest: list[Expr] = []
        for a in rebuilt.args:
            (by_col.setdefault(a.column, []).append(a) if isinstance(a, Pred) else rest.append(a))
        merged = [_fold(_merge_preds(ps, conj)) for ps in by_col.values()]
        return and_(rest + merged) if conj else or_(rest + merged)
    return _fold(e) if isinstance(e, Pred) else e


def _fold(p: Pred) -> Expr:
    if p.true.is_empty():
        return FALSE  # never TRUE; after NNF nothing will negate it again
    if p.true.is_everything():
        return TRUE
    return p


@dataclass(frozen=True)
class CNF:
    """A conjunction of clauses, and whether it had to be weakened to fit the budget."""

    clauses: frozenset[Clause]
    weakened: bool = False

    @property
    def unsatisfiable(self) -> bool:
        return frozenset() in self.clauses


def cnf(e: Expr, budget: int = DEFAULT_BUDGET) -> CNF:
    """The CNF of ``e`` (atoms already bound), weakened if distribution exceeds ``budget``."""
    state = {"weakened": False}
    clauses = _clauses(simplify(nnf(e)), budget, state)
    return CNF(_tidy(clauses), state["weakened"])


def _clauses(e: Expr, budget: int, state: dict) -> list[Clause]:
    if isinstance(e, Const):
        return [] if e.value is True else [frozenset()]
    if isinstance(e, And):
        out: list[Clause] = []
        for a in e.args:
            out.extend(_clauses(a, budget, state))
        return out
    if isinstance(e, Or):
        parts = [_clauses(a, budget, state) for a in e.args]
        size = 1
        for p in parts:
            size *= max(len(p), 1)
            if size > budget:
                break
        if size > budget:
            state["weakened"] = True
            return _clauses(simplify(hull(e)), budget, state)
        out = []
        for combo in product(*parts):
            out.append(frozenset().union(*combo))
        return out
    return [frozenset({e})]


def hull(e: Expr) -> Expr:
    """The strongest conjunction of single-column atoms implied by ``e`` (for the budget)."""
    return and_(Pred(c, vs, ValueSet.nothing(vs.kind), False, f"hull of {c}") for c, vs in _hull(e).items())


def _hull(e: Expr) -> dict[str, ValueSet]:
    if isinstance(e, Pred):
        return {e.column: e.true}
    if isinstance(e, And):
        parts: dict[str, list[ValueSet]] = {}
        for a in e.args:
            for c, vs in _hull(a).items():
                parts.setdefault(c, []).append(vs)
        return {c: ValueSet.intersect_all(v[0].kind, v) if len(v) > 1 else v[0] for c, v in parts.items()}
    if isinstance(e, Or):
        hulls = [_hull(a) for a in e.args]
        common = set(hulls[0]).intersection(*hulls[1:]) if hulls else set()
        return {c: ValueSet.union_all(hulls[0][c].kind, [h[c] for h in hulls]) for c in common}
    return {}


def _merge_clause(clause: Clause) -> Clause | None:
    """Merge same-column atoms of a clause; ``None`` if the clause is always TRUE."""
    by_col: dict[str, list[Pred]] = {}
    rest = []
    for a in clause:
        (by_col.setdefault(a.column, []).append(a) if isinstance(a, Pred) else rest.append(a))
    out = set(rest)
    for ps in by_col.values():
        p = _fold(_merge_preds(ps, conjunctive=False)) if len(ps) > 1 else ps[0]
        if p == TRUE:
            return None
        if p != FALSE:
            out.add(p)
    return frozenset(out)


def _tidy(clauses: Iterable[Clause]) -> frozenset[Clause]:
    merged = {m for c in clauses if (m := _merge_clause(c)) is not None}
    if frozenset() in merged:
        return frozenset({frozenset()})
    # Drop clauses subsumed by a smaller one (syntactically); keeps output small and stable.
    ordered = sorted(merged, key=len)
    kept: list[Clause] = []
    for c in ordered:
        if not any(k <= c for k in kept):
            kept.append(c)
    return frozenset(kept)


@dataclass(frozen=True)
class ColumnGroups:
    """A CNF split by what each clause constrains.

    ``columns`` maps a column to the value set its single-column clauses allow (their
    intersection). ``residual`` holds multi-column clauses (Q19's cross terms, column pairs);
    ``opaque`` holds clauses with an atom we do not understand: those never prune.
    """

    columns: tuple[tuple[str, ValueSet], ...]
    residual: tuple[Clause, ...]
    opaque: tuple[Clause, ...]
    weakened: bool = False
    unsatisfiable: bool = False

    @cached_property
    def column_sets(self) -> dict[str, ValueSet]:
        return dict(self.columns)


def group_by_column(form: CNF) -> ColumnGroups:
    sets: dict[str, ValueSet] = {}
    residual, opaque = [], []
    for clause in form.clauses:
        if not clause:
            continue  # the empty clause (FALSE) is reported as ``unsatisfiable``
        if any(isinstance(a, Opaque) for a in clause):
            opaque.append(clause)
        elif len(clause) == 1 and isinstance(next(iter(clause)), Pred):
            (p,) = clause
            sets[p.column] = sets[p.column].intersect(p.true) if p.column in sets else p.true
        else:
            residual.append(clause)
    key = lambda c: sorted(str(a) for a in c)
    return ColumnGroups(
        tuple(sorted(sets.items())),
        tuple(sorted(residual, key=key)),
        tuple(sorted(opaque, key=key)),
        form.weakened,
        form.unsatisfiable or any(vs.is_empty() for vs in sets.values()),
    )


def clause_str(clause: Clause) -> str:
    return " OR ".join(sorted(str(a) for a in clause)) or "FALSE"


__all__ = ["nnf", "simplify", "cnf", "CNF", "ColumnGroups", "group_by_column", "hull", "clause_str",
           "Cmp", "ColumnPair"]

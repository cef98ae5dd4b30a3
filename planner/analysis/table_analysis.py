"""Per-table analysis of a workload: per-scan CNF grouped by column, and CPS candidate plans.

This is the pure heart of ``planner analyze``: it binds each scan's raw predicate to the table's
column kinds, converts it to CNF and groups the clauses by column. Column-to-column comparisons
(``l_commitdate < l_receiptdate``) become *derived boolean attributes*: a layout may split rows
on them, and a query that asks for them can then skip the other side.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Iterable, Mapping

from planner.analysis.cps import CandidatePlan, candidate_plan
from planner.cnf.bind import bind, column_type, infer_kinds
from planner.cnf.convert import project
from planner.cnf.ir import ColumnPair, Opaque, Pred, and_
from planner.cnf.normalize import (
    DEFAULT_BUDGET,
    ColumnGroups,
    clause_str,
    cnf,
    group_by_column,
    nnf,
)
from planner.cnf.valueset import ValueSet
from planner.semantics.kinds import Kind
from planner.semantics.settings import Settings
from planner.semantics.types import parse_type
from planner.workload import Workload

_FAMILY = {"<": ("<", True), ">=": ("<", False), "<=": ("<=", True), ">": ("<=", False),
           "=": ("=", True), "<>": ("=", False)}


def pair_feature(p: ColumnPair) -> tuple[str, bool]:
    """Name of the derived attribute for a column pair, and the truth value the atom asks for.

    ``a < b`` and ``a >= b`` are the TRUE and FALSE sides of one attribute ``a < b``.
    """
    key, _, truth = pair_attribute(p)
    return key, truth


def pair_attribute(p: ColumnPair) -> tuple[str, ColumnPair, bool]:
    """The derived attribute's name, its comparison, and the truth value ``p`` asks for.

    Column names that are not plain identifiers are backquoted in the name, so that columns
    called ``a b`` and ``c`` (``` `a b` < c ```) never share a name with ``a`` and ``b < c``.
    """
    c = p.canonical()
    op, truth = _FAMILY[c.op]
    return f"{_name(c.left)} {op} {_name(c.right)}", ColumnPair(c.left, op, c.right), truth


def _name(column: str) -> str:
    return column if _PLAIN.fullmatch(column) else "`" + column.replace("`", "``") + "`"


_PLAIN = re.compile(r"[a-z_][a-z0-9_]*")
_FEATURE = re.compile(r"(`(?:[^`]|``)*`|[^ `]+) (\S+) (`(?:[^`]|``)*`|[^ `]+)")


def parse_feature(key: str) -> ColumnPair | None:
    """The comparison a derived attribute's name stands for (the inverse of ``pair_attribute``)."""
    m = _FEATURE.fullmatch(key)
    if m is None:
        return None
    left, op, right = (x[1:-1].replace("``", "`") if x.startswith("`") else x for x in m.groups())
    return ColumnPair(left, op, right)


@dataclass(frozen=True)
class ScanAnalysis:
    query: int  # index into workload.queries
    alias: str
    groups: ColumnGroups
    unused: tuple[tuple[str, str], ...]  # (predicate, reason) that cannot prune
    columns: frozenset[str] | None = None  # columns read; None = all
    induced: tuple = ()  # planner.workload.joins.InducedPredicate of the scan's inner equi-joins

    @cached_property
    def sets(self) -> dict[str, ValueSet]:
        return self.groups.column_sets


@dataclass(frozen=True)
class TableAnalysis:
    table: str
    kinds: Mapping[str, Kind]  # real columns and derived attributes
    derived: Mapping[str, ColumnPair]
    scans: tuple[ScanAnalysis, ...]
    candidates: tuple[CandidatePlan, ...]
    notes: tuple[str, ...] = ()
    types: Mapping[str, str] = field(default_factory=dict)  # column -> Spark type the scans were read with
    settings: Settings = Settings()  # the session the scans were read under

    def join_columns(self) -> tuple:
        """The joined tables' columns the scans filter through inner equi-joins (``planner.workload.joins.JoinColumn``),
        most often filtered first: what apply records per partition for join pruning."""
        from planner.workload.joins import join_columns

        return join_columns(p for s in self.scans for p in s.induced)

    def filter_counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for s in self.scans:
            for c in s.sets:
                out[c] = out.get(c, 0) + 1
        return out


def analyze_table(workload: Workload, table: str, columns: Mapping[str, str] | None = None,
                  budget: int = DEFAULT_BUDGET, settings: Settings = Settings()) -> TableAnalysis:
    """Analyse every scan of ``table``; ``columns`` maps column name to its Spark/Hive type when
    known. ``settings``: the session the workload runs in (ANSI mode, time zone)."""
    raw = [(i, s) for i, q in enumerate(workload.queries) for s in q.scans if s.table == table]
    notes: list[str] = []
    if columns:
        types = {c.lower(): parse_type(t) for c, t in columns.items()}
        for c, t in types.items():
            if t.kind is Kind.OTHER:
                notes.append(f"column {c} ({columns[c]}) cannot be ordered; it is not used for partitioning")
    else:
        types = {c: column_type(k) for c, k in infer_kinds(s.predicate for _, s in raw).items()}
    kinds = {c: t.kind for c, t in types.items()}
    derived: dict[str, ColumnPair] = {}
    scans = []
    # Equal raw predicates (frozen values) analyse alike: a workload repeats them many times.
    seen: dict = {}
    for i, s in raw:
        if s.predicate not in seen:
            found: dict[str, ColumnPair] = {}
            seen[s.predicate] = (*_analyse_predicate(s.predicate, types, budget, found, settings), found)
        groups, unused, found = seen[s.predicate]
        derived.update(found)
        scans.append(ScanAnalysis(i, s.alias, groups, unused, s.columns, getattr(s, "induced", ())))
    all_kinds = dict(kinds) | {k: Kind.BOOLEAN for k in derived}
    by_col: dict[str, list[ValueSet]] = {}
    for s in scans:
        for c, vs in s.sets.items():
            by_col.setdefault(c, []).append(vs)
    cands = tuple(candidate_plan(table, c, all_kinds[c], sets, len(sets)) for c, sets in sorted(by_col.items()))
    return TableAnalysis(table, all_kinds, derived, tuple(scans), cands, tuple(notes),
                         {c: str(t) for c, t in types.items()}, settings)


def _analyse_predicate(predicate, types, budget, derived: dict[str, ColumnPair], settings=Settings()):
    """Bind, project, CNF and group one scan's predicate (``settings``: one or several sessions)."""
    types = {c: column_type(t) for c, t in types.items()}
    kinds = {c: t.kind for c, t in types.items()}
    bound = project(nnf(bind(predicate, types, settings)))
    groups = group_by_column(cnf(bound, budget))
    sets = dict(groups.columns)
    residual = []
    for clause in groups.residual:
        if len(clause) == 1 and isinstance(next(iter(clause)), ColumnPair):
            (pair,) = clause
            if kinds.get(pair.left) is not None and kinds.get(pair.left) == kinds.get(pair.right):
                key, derived[key], truth = pair_attribute(pair)
                vs = ValueSet.points(Kind.BOOLEAN, [truth])
                sets[key] = sets[key].intersect(vs) if key in sets else vs
                continue
        residual.append(clause)
    unused = []
    for clause in groups.opaque:
        for a in clause:
            if isinstance(a, Opaque):
                unused.append((str(a), a.reason))
    for clause in residual:
        unused.append((clause_str(clause), "spans several columns (kept as a residual clause)"))
    if groups.weakened:
        unused.append(("(whole predicate)", f"CNF exceeded the budget of {budget} clauses; a weaker form is used"))
    for a in _inexact(bound):
        text = a.text or str(a)
        unused.append((text, "only approximated (LIKE pattern with inner wildcards)" if " LIKE " in text
                       else "only approximated (Spark may read it two ways, under ANSI on and off or as a literal and a "
                       "CAST: a bound of both is used)"))
    groups = ColumnGroups(tuple(sorted(sets.items())), tuple(residual), groups.opaque, groups.weakened,
                          groups.unsatisfiable)
    return groups, tuple(sorted(set(unused)))


def _inexact(e) -> Iterable[Pred]:
    from planner.cnf.ir import atoms
    return [a for a in atoms(e) if isinstance(a, Pred) and not a.exact]


def analyze(workload: Workload, tables: Iterable[str] | None = None,
            schemas: Mapping[str, Mapping[str, str]] | None = None, budget: int = DEFAULT_BUDGET,
            settings: Settings = Settings()) -> list[TableAnalysis]:
    schemas = schemas or {}
    names = list(tables) if tables else workload.tables()
    return [analyze_table(workload, t, schemas.get(t), budget, settings) for t in names]


__all__ = ["analyze", "analyze_table", "TableAnalysis", "ScanAnalysis", "pair_attribute", "pair_feature", "parse_feature", "and_"]

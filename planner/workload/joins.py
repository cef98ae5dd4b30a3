"""Predicates induced through inner equi-joins: a filter on orders restricts the lineitem scan.

    SELECT … FROM lineitem l JOIN orders o ON l.l_orderkey = o.o_orderkey
             JOIN customer c ON o.o_custkey = c.c_custkey
    WHERE o.o_orderdate >= DATE '1995-01-01' AND c.c_mktsegment = 'BUILDING'

 -> the scan of lineitem gets two induced predicates, each on the far end of a *join path*:

    orders(o_orderkey = l_orderkey).o_orderdate >= DATE '1995-01-01'
    orders(o_orderkey = l_orderkey)/customer(c_custkey = o_custkey).c_mktsegment = 'BUILDING'

A lineitem row can reach the answer only if some orders row with an equal key passes the orders
filter (and that orders row in turn finds a customer row that passes its filter). So a partition of
lineitem none of whose rows joins a passing row may be skipped; ``planner.pruning.join_pruning`` decides that
from per-partition ranges of the path's end column recorded at apply time.

When may a hop ``A.x = B.y`` be followed from ``A``? Only when the equality filters ``A`` before the
join without changing the answer, i.e. it is one of ``scans.pushable_conditions`` of ``A``'s position
(WHERE or an inner join's ON, with ``A`` not null-extended by an outer join). Then a row of ``A`` with
no equal partner in ``B``'s *filtered* input never reaches the answer. The filter on ``B`` is what
``iter_scans`` pushes to ``B`` (again, only what may filter it before the join). Both are equivalences
on the query, so chains compose: ``B`` is first reduced by ``C``, then ``A`` by the reduced ``B``.

* An outer join induces nothing on its preserved side: ``lineitem LEFT JOIN orders ON …`` keeps every
  lineitem row, and the ON is not pushable to lineitem.
* NULL join keys never join under ``=`` (a NULL-safe ``<=>`` does, so it is not followed).
* Only base tables of one SELECT are followed (a derived table or a subquery is not looked into).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Iterator

from sqlglot import exp

from planner.cnf.convert import FOREIGN
from planner.cnf.ir import TRUE, Cmp, Expr, Opaque, atoms
from planner.model.join_paths import Hop, JoinColumn, JoinPath
from planner.workload.scans import (
    ScanSite,
    Schema,
    _owner,
    iter_scans,
    pushable_conditions,
)

MAX_HOPS = 4  # lineitem -> orders -> customer -> nation -> region


@dataclass(frozen=True)
class InducedPredicate:
    """``predicate`` (raw IR on the end table's columns) must hold for a joined row at ``path``'s end."""

    path: JoinPath
    alias: str  # the end table's alias in the query
    predicate: Expr

    def describe(self) -> str:
        return f"{self.path.describe()}: {self.predicate}"


@dataclass(frozen=True)
class InducedScan:
    site: ScanSite
    induced: tuple[InducedPredicate, ...]


def _equalities(conditions: list[exp.Expression]) -> Iterator[exp.EQ]:
    stack = list(conditions)
    while stack:
        node = stack.pop()
        while isinstance(node, exp.Paren):
            node = node.this
        if isinstance(node, exp.And):
            stack += [node.this, node.expression]
        elif isinstance(node, exp.EQ):
            yield node


def _bare_column(node: exp.Expression) -> exp.Column | None:
    while isinstance(node, exp.Paren):
        node = node.this
    return node if isinstance(node, exp.Column) and not isinstance(node.this, exp.Star) else None


def induced_scans(tree: exp.Expression, schema: Schema, current_db: str | None = None, dialect: str = "hive",
                  only: frozenset[str] | None = None, max_hops: int = MAX_HOPS) -> list[InducedScan]:
    """Every scan of a table named in ``only`` (all tables when None), with its induced predicates."""
    return induced_for(list(iter_scans(tree, schema, current_db, dialect, [])), schema, only, max_hops)


def induced_for(sites: list[ScanSite], schema: Schema, only: frozenset[str] | None = None,
                max_hops: int = MAX_HOPS) -> list[InducedScan]:
    """``induced_scans`` for the scans a caller already has: ``sites`` must be every scan of the
    query, of all tables, as ``iter_scans`` yields them (the workload reader has them at hand)."""
    notes: list[str] = []
    by_scope: dict[int, list[ScanSite]] = {}
    for s in sites:
        by_scope.setdefault(id(s.scope), []).append(s)
    owners = {id(s): _site_owner(s, schema, notes) for s in sites}
    edges: dict[int, list[tuple[str, ScanSite, str]]] = {}
    for group in by_scope.values():
        _edges(group, owners, edges)
        outer = _outer_group(group[0].scope, by_scope)
        if outer:
            _correlated_edges(group, outer, owners, edges)
    restricts = {id(s): _restricts(s.predicate) for s in sites}
    texts: dict[int, str] = {}

    def order(p: InducedPredicate) -> str:  # ``p.describe()``, each site's predicate printed once
        key = id(p.predicate)
        if key not in texts:
            texts[key] = str(p.predicate)
        return f"{p.path.describe()}: {texts[key]}"

    out = []
    for s in sites:
        if only is not None and s.table not in only and s.table.rsplit(".", 1)[-1] not in only:
            continue
        out.append(InducedScan(s, tuple(sorted(_walk(s, edges, max_hops, restricts), key=order))))
    return out


def _sources(select: exp.Select) -> tuple[list, list[exp.Join]]:
    joins = select.args.get("joins") or []
    from_ = select.args.get("from_")
    return [from_.this] + [j.this for j in joins], joins


def _site_owner(site: ScanSite, schema: Schema, notes: list[str]):
    sources, _ = _sources(site.scope.expression)
    return _owner(site.scope, sources, site.node, site.table, schema, notes)


def _pushable_equalities(site: ScanSite) -> Iterator[tuple[exp.Column, exp.Column]]:
    """Column pairs ``a = b`` (either way round) among the conditions that filter ``site`` before its joins."""
    select = site.scope.expression
    sources, joins = _sources(select)
    pos = next((i for i, src in enumerate(sources) if src is site.node), None)
    if pos is None:
        return
    for eq in _equalities(pushable_conditions(select, joins, pos)):
        left, right = _bare_column(eq.this), _bare_column(eq.expression)
        if left is not None and right is not None:
            yield left, right
            yield right, left


def _edges(group: list[ScanSite], owners, edges) -> None:
    """Add ``(my column, other site, its column)`` for each equality pushable to a site of one SELECT."""
    for me in group:
        for a, b in _pushable_equalities(me):
            col = owners[id(me)](a)
            if col is None:
                continue
            for other in group:
                key = owners[id(other)](b) if other is not me else None
                if key is not None:
                    edges.setdefault(id(me), []).append((col, other, key))


def _outer_group(scope, by_scope: dict[int, list[ScanSite]]) -> list[ScanSite]:
    """The outer SELECT's sites, when ``scope`` is a subquery inside that SELECT's WHERE.

    ``WHERE o_orderdate >= … AND EXISTS (SELECT * FROM lineitem WHERE l_orderkey = o_orderkey)``: a
    lineitem row matters only for the orders rows the outer WHERE keeps, whatever the subquery does
    with it (EXISTS, NOT EXISTS, IN, a scalar): every other outer row is filtered out anyway.
    """
    parent = scope.parent
    if parent is None or id(parent) not in by_scope or not isinstance(parent.expression, exp.Select):
        return []
    where = parent.expression.args.get("where")
    node = scope.expression
    while node is not None and node is not where and node is not parent.expression:
        node = node.parent
    return by_scope[id(parent)] if node is where and where is not None else []


def _correlated_edges(group: list[ScanSite], outer: list[ScanSite], owners, edges) -> None:
    """Edges from a subquery's sites to the outer sites their correlation equalities name."""
    for me in group:
        for a, b in _pushable_equalities(me):
            col = owners[id(me)](a)
            if col is None or any(owners[id(s)](b) is not None for s in group):
                continue  # not a correlation: the other column is one of the subquery's own
            for other in outer:
                key = owners[id(other)](b)
                if key is not None:
                    edges.setdefault(id(me), []).append((col, other, key))


def _restricts(predicate: Expr) -> bool:
    """Whether the predicate names some column of its own table (join conditions alone do not)."""
    return predicate != TRUE and any(not (isinstance(a, Opaque) and a.reason == FOREIGN) for a in atoms(predicate))


def _walk(start: ScanSite, edges, max_hops: int, restricts: dict[int, bool] | None = None) -> Iterator[InducedPredicate]:
    """Induced predicates of every table reachable from ``start`` by simple paths of at most ``max_hops``
    (``restricts``: ``_restricts`` of each site's predicate, by site identity, when known)."""
    stack: list[tuple[ScanSite, tuple[Hop, ...], frozenset[int]]] = [(start, (), frozenset({id(start)}))]
    while stack:
        site, hops, seen = stack.pop()
        if len(hops) >= max_hops:
            continue
        for col, other, key in edges.get(id(site), ()):
            if id(other) in seen:
                continue
            if hops and hops[-1].key == col:
                # entered and left through the same column: l2.l_orderkey = l1.l_orderkey = o_orderkey,
                # so l2.l_orderkey = o_orderkey (a weaker, still necessary condition without l1's row)
                path = hops[:-1] + (Hop(hops[-1].column, other.table, key),)
            else:
                path = hops + (Hop(col, other.table, key),)
            if restricts[id(other)] if restricts is not None else _restricts(other.predicate):
                yield InducedPredicate(JoinPath(path), other.alias, other.predicate)
            stack.append((other, path, seen | {id(other)}))


def join_columns(induced: Iterable[InducedPredicate]) -> tuple[JoinColumn, ...]:
    """The end-table columns the induced predicates compare with constants, most used first."""
    counts: dict[JoinColumn, int] = {}
    for p in induced:
        if p.path.table == p.path.hops[0].table and len(p.path.hops) == 1 and p.path.hops[0].column == p.path.hops[0].key:
            continue  # the table joined with itself on one column: its own predicate, nothing to record
        for c in {a.column for a in atoms(p.predicate) if isinstance(a, Cmp)}:
            key = JoinColumn(p.path, c)
            counts[key] = counts.get(key, 0) + 1
    return tuple(sorted(counts, key=lambda c: (-counts[c], c.describe())))


__all__ = ["join_columns", "InducedPredicate", "InducedScan", "induced_scans", "induced_for",
           "MAX_HOPS"]

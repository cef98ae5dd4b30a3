"""Filters on a derived table (a subquery, a CTE used once, an inlined view) pushed into it.

    SELECT … FROM (SELECT l_orderkey k, l_shipdate d FROM lineitem WHERE l_quantity < 5) v
    WHERE v.d >= DATE '1995-01-01'
 -> the scan of lineitem is filtered by ``l_quantity < 5 AND l_shipdate >= DATE '1995-01-01'``.

Modelled on sqlglot's ``pushdown_predicates`` (``nodes_for_predicate``: the same refusals), but on
a copy used only for reading scans, and without ``simplify``: predicates must reach the CNF code
exactly as written, which follows Spark's typing rather than sqlglot's constant folding.

A conjunct of the outer WHERE (or of an inner join's ON) that filters the derived table before the
join (``scans.pushable_conditions``, so outer joins keep their null-extended rows) and names only that
table's columns is rewritten through its projections and added to its WHERE. Nothing is pushed

* into a SELECT with LIMIT/OFFSET, a window function, a LATERAL VIEW or a table-generating
  function (they make one row depend on others, or rows appear that no base row holds);
* through a projection that aggregates, calls a non-deterministic function or holds a subquery;
* into a grouped SELECT unless the filter only names plain GROUP BY keys (never under ROLLUP, CUBE
  or GROUPING SETS: their subtotal rows hold NULL keys that no base row has);
* into a CTE read more than once (each reference has its own filter);
* when a column could belong to another source of the outer query.

Set operations are entered branch by branch, by position: (A ∪ B) ∩ P = (A ∩ P) ∪ (B ∩ P), and the
same holds for INTERSECT and EXCEPT.
"""
from __future__ import annotations

from sqlglot import exp
from sqlglot.optimizer.scope import Scope, traverse_scope

from planner.workload.scans import Schema, pushable_conditions, table_name

_NONDETERMINISTIC = frozenset({"rand", "random", "randn", "uuid", "shuffle", "monotonically_increasing_id",
                               "spark_partition_id", "input_file_name", "current_timestamp", "unix_timestamp"})


def has_derived_sources(tree: exp.Expression) -> bool:
    """Whether some FROM/JOIN reads a subquery or a CTE (only then is there anything to push)."""
    return any(isinstance(n, exp.CTE) or isinstance(n.parent, (exp.From, exp.Join))
               for n in tree.find_all(exp.CTE, exp.Subquery))


def push_into_derived(tree: exp.Expression, schema: Schema, current_db: str | None = None, *,
                      copy: bool = True) -> exp.Expression:
    """``tree`` (a copy unless ``copy=False``) with each pushable outer filter also written into the
    derived table it filters."""
    if copy:
        tree = tree.copy()
    scopes = traverse_scope(tree)
    uses = _cte_uses(tree)
    for scope in reversed(scopes):  # outer scopes first: what is pushed in is pushed further down later
        select = scope.expression
        if not isinstance(select, exp.Select):
            continue
        from_ = select.args.get("from_")
        if from_ is None:
            continue
        joins = select.args.get("joins") or []
        sources = [from_.this] + [j.this for j in joins]
        for pos, src in enumerate(sources):
            target = _derived(scope, src, uses)
            if target is None:
                continue
            for conjunct in _conjuncts(pushable_conditions(select, joins, pos)):
                if _own(conjunct, scope, sources, src, schema, current_db):
                    _push(conjunct, src.alias_or_name.lower(), target.expression)
    return tree


def _conjuncts(conditions: list[exp.Expression]) -> list[exp.Expression]:
    out = []
    for cond in conditions:
        cond = cond.unnest()
        out += [c.unnest() for c in cond.flatten()] if isinstance(cond, exp.And) else [cond]
    return out


def _cte_uses(tree: exp.Expression) -> dict[str, int]:
    names = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
    uses: dict[str, int] = {}
    for t in tree.find_all(exp.Table):
        if not t.args.get("db") and t.name.lower() in names:
            uses[t.name.lower()] = uses.get(t.name.lower(), 0) + 1
    return uses


def _derived(scope: Scope, src: exp.Expression, uses: dict[str, int]) -> Scope | None:
    inner = scope.sources.get(src.alias_or_name)
    if not isinstance(inner, Scope) or not isinstance(inner.expression, (exp.Select, exp.SetOperation)):
        return None
    if isinstance(src, exp.Table) and uses.get(src.name.lower(), 0) != 1:
        return None  # a CTE read in several places
    if not isinstance(src, (exp.Table, exp.Subquery)):
        return None
    return inner


def _own(conjunct: exp.Expression, scope: Scope, sources: list, src: exp.Expression, schema: Schema,
         current_db: str | None) -> bool:
    """Whether every column of ``conjunct`` belongs to ``src`` (and nothing else makes it unsafe)."""
    if conjunct.find(exp.Select, exp.Subquery, exp.AggFunc, exp.Window) is not None or _random(conjunct):
        return False
    columns = list(conjunct.find_all(exp.Column))
    if not columns:
        return False
    alias = src.alias_or_name.lower()
    others = [s for s in sources if s is not src]
    mine = set(_output_names(scope.sources.get(src.alias_or_name)))
    for c in columns:
        if isinstance(c.this, exp.Star) or c.args.get("db") is not None:
            return False
        if c.table:
            if c.table.lower() != alias:
                return False
            continue
        if "*" not in mine and c.name.lower() not in mine:
            return False
        if any(_may_have(scope, o, c.name.lower(), schema, current_db) for o in others):
            return False
    return True


def _may_have(scope: Scope, src: exp.Expression, column: str, schema: Schema, current_db: str | None) -> bool:
    inner = scope.sources.get(src.alias_or_name)
    if isinstance(inner, Scope):
        names = set(_output_names(inner))
        return "*" in names or column in names
    if isinstance(src, exp.Table):
        cols = schema.columns(table_name(src, current_db)) if schema else None
        return cols is None or column in cols
    return True  # a table function, VALUES, …: unknown columns


def _output_names(inner) -> list[str]:
    if not isinstance(inner, Scope):
        return ["*"]
    query = inner.expression
    while isinstance(query, exp.SetOperation):
        query = query.this
    if not isinstance(query, exp.Select):
        return ["*"]
    out = []
    for p in query.expressions:
        if isinstance(p, exp.Star) or (isinstance(p, exp.Column) and isinstance(p.this, exp.Star)):
            out.append("*")
        else:
            out.append(p.alias_or_name.lower())
    return out


def _push(conjunct: exp.Expression, alias: str, query: exp.Expression, position: int | None = None) -> None:
    """Write ``conjunct`` (naming the derived table's output columns) into ``query``'s WHERE."""
    if isinstance(query, exp.Subquery):
        query = query.this
    if isinstance(query, exp.SetOperation):
        first = _first_select(query)
        if first is None:
            return
        names = [p.alias_or_name.lower() for p in first.expressions]
        positions = {}
        for c in conjunct.find_all(exp.Column):
            if c.name.lower() not in names or names.count(c.name.lower()) > 1:
                return
            positions[c.name.lower()] = names.index(c.name.lower())
        for branch in (query.this, query.expression):
            _push_by_position(conjunct, positions, branch)
        return
    if isinstance(query, exp.Select):
        mapping = _projections_by_name(query, [c.name.lower() for c in conjunct.find_all(exp.Column)])
        if mapping is not None:
            query.where(_substituted(conjunct, mapping), copy=False)


def _push_by_position(conjunct: exp.Expression, positions: dict[str, int], query: exp.Expression) -> None:
    if isinstance(query, exp.Subquery):
        query = query.this
    if isinstance(query, exp.SetOperation):
        for branch in (query.this, query.expression):
            _push_by_position(conjunct, positions, branch)
        return
    if not isinstance(query, exp.Select) or not _open(query):
        return
    projections = query.expressions
    mapping = {}
    for name, i in positions.items():
        if i >= len(projections) or isinstance(projections[i], exp.Star):
            return
        p = projections[i].unalias() if isinstance(projections[i], exp.Alias) else projections[i]
        if not _plain_projection(query, p):
            return
        mapping[name] = p
    query.where(_substituted(conjunct, mapping), copy=False)


def _first_select(query: exp.Expression) -> exp.Select | None:
    while isinstance(query, (exp.SetOperation, exp.Subquery)):
        query = query.this
    return query if isinstance(query, exp.Select) else None


def _open(select: exp.Select) -> bool:
    """Whether filtering ``select``'s input rows can only remove output rows (never change others)."""
    if any(select.args.get(k) for k in ("limit", "offset", "qualify", "laterals")):
        return False
    if any(p.find(exp.Window) is not None or _generates_rows(p) for p in select.expressions):
        return False
    group = select.args.get("group")
    if group is not None and any(group.args.get(k) for k in ("rollup", "cube", "grouping_sets", "totals")):
        return False
    return True


def _generates_rows(e: exp.Expression) -> bool:
    return e.find(exp.Explode, exp.Posexplode, exp.Inline, exp.Unnest) is not None or any(
        isinstance(f, exp.Anonymous) and str(f.this).lower() in ("explode", "posexplode", "inline", "stack",
                                                                  "json_tuple", "parse_url_tuple")
        for f in e.find_all(exp.Anonymous))


def _random(e: exp.Expression) -> bool:
    for f in e.find_all(exp.Func):
        name = (str(f.this) if isinstance(f, exp.Anonymous) else f.sql_name()).lower()
        if name in _NONDETERMINISTIC or isinstance(f, (exp.Rand, exp.Randn)):
            return True
    return False


def _plain_projection(select: exp.Select, p: exp.Expression) -> bool:
    if p.find(exp.AggFunc, exp.Window, exp.Select, exp.Subquery) is not None or _random(p):
        return False
    group = select.args.get("group")
    if group is not None:
        return any(p == g for g in group.expressions) and isinstance(p, exp.Column)
    return True


def _projections_by_name(select: exp.Select, names: list[str]) -> dict[str, exp.Expression] | None:
    if not _open(select):
        return None
    by_name: dict[str, exp.Expression] = {}
    star = False
    for p in select.expressions:
        if isinstance(p, exp.Star) or (isinstance(p, exp.Column) and isinstance(p.this, exp.Star)):
            star = star or isinstance(p, exp.Star)
            continue
        by_name.setdefault(p.alias_or_name.lower(), p.unalias() if isinstance(p, exp.Alias) else p)
    mapping = {}
    for name in names:
        if name in by_name:
            if not _plain_projection(select, by_name[name]):
                return None
            mapping[name] = by_name[name]
        elif star and select.args.get("group") is None:
            mapping[name] = exp.column(name)  # resolved by the inner scope's own sources
        else:
            return None
    return mapping


def _substituted(conjunct: exp.Expression, mapping: dict[str, exp.Expression]) -> exp.Expression:
    def replace(node):
        if isinstance(node, exp.Column) and node.name.lower() in mapping:
            new = mapping[node.name.lower()].copy()
            if isinstance(new, (exp.Binary, exp.Unary, exp.Predicate)):
                new = exp.paren(new, copy=False)
            return new
        return node

    return conjunct.copy().transform(replace, copy=False)

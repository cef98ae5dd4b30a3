"""Find every base-table scan in a query and the predicate that can be pushed down to it.

A query may read one table several times (TPC-H Q21 reads lineitem as l1, l2 and l3), inside
CTEs, derived tables, IN/EXISTS subqueries and UNION ALL branches. sqlglot's scope traversal
visits every SELECT; in each we take the FROM/JOIN sources that are base tables and collect the
conditions that may filter that scan *before* the join without changing the result:

    position:        0            1                 2
    FROM a  LEFT JOIN b ON <on1>  JOIN c ON <on2>  WHERE <w>

* WHERE and inner-join ON filter every source that no outer join can null-extend: ``a`` and ``c``
  here get ``<w>`` and ``<on2>``, ``b`` gets neither (``b.x IS NULL`` in WHERE keeps the rows that
  found *no* match in b, so pre-filtering b would change the answer).
* A LEFT/SEMI/ANTI join's ON filters its own right side (``b`` gets ``<on1>``); a RIGHT join's ON
  filters the sources before it; FULL joins filter nothing.

Predicates on derived tables are not pushed into them here; their own WHERE is a scope of its own
and is collected there. The workload reader first pushes such filters into the derived table
(``pushdown.py``); the rewriter does not, so it never prunes by a filter it cannot place.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Iterator, Mapping

from sqlglot import exp
from sqlglot.optimizer.scope import Scope, traverse_scope

from planner.cnf.convert import to_ir
from planner.cnf.ir import TRUE, Expr, and_
from planner.errors import SchemaError


@dataclass(frozen=True)
class ScanSite:
    """One read of a base table inside a query."""

    table: str  # lower-case, qualified with the current database when one is known
    alias: str
    predicate: Expr  # raw IR (Cmp atoms, not yet bound to column kinds)
    columns: frozenset[str] | None  # columns the query reads from this scan; None = all (SELECT *)
    node: exp.Table = field(compare=False, hash=False, repr=False)
    scope: Scope = field(compare=False, hash=False, repr=False)


def table_name(node: exp.Table, current_db: str | None) -> str:
    db = node.args.get("db")
    db_name = db.name if db is not None else current_db
    return f"{db_name}.{node.name}".lower() if db_name else node.name.lower()


class Schema:
    """Known columns per table (``{"db.t": {"col": "type"}}``); unknown tables resolve loosely."""

    def __init__(self, tables: Mapping[str, Mapping[str, str]] | None = None):
        self.tables = {k.lower(): {c.lower(): t for c, t in v.items()} for k, v in (tables or {}).items()}
        self._names: dict[tuple[str, str], frozenset[str] | None] = {}

    def column_names(self, name: str, short: str) -> frozenset[str] | None:
        """The columns of the table called ``name`` (else ``short``), as a set; None if unknown."""
        key = (name, short)
        if key not in self._names:
            cols = self.columns(name) or self.columns(short)
            self._names[key] = None if cols is None else frozenset(cols)
        return self._names[key]

    def columns(self, table: str) -> Mapping[str, str] | None:
        if table in self.tables:
            return self.tables[table]
        short = table.rsplit(".", 1)[-1]
        if "." in table:  # db.t: a schema naming t without a database describes it too
            return self.tables.get(short)
        matches = [v for k, v in self.tables.items() if k.rsplit(".", 1)[-1] == short]
        return matches[0] if len(matches) == 1 else None

    def __bool__(self) -> bool:
        return bool(self.tables)


def _wanted(name: str, only: frozenset[str] | None) -> bool:
    return only is None or name in only or name.rsplit(".", 1)[-1] in only


def iter_scans(tree: exp.Expression, schema: Schema, current_db: str | None = None,
               dialect: str = "hive", notes: list[str] | None = None,
               only: frozenset[str] | None = None) -> Iterator[ScanSite]:
    """Scans of every base table, or only of the tables named in ``only`` (short or qualified)."""
    notes = notes if notes is not None else []
    memo: dict = {}  # the atoms' columns, found once for all the scans that convert them
    for scope in traverse_scope(tree):
        select = scope.expression
        if not isinstance(select, exp.Select):
            continue
        from_ = select.args.get("from_")
        if from_ is None:
            continue
        joins = select.args.get("joins") or []
        sources = [from_.this] + [j.this for j in joins]
        named: list = []  # (column, qualifier) named in this SELECT, found once and only if needed
        for pos, src in enumerate(sources):
            if not isinstance(src, exp.Table) or not isinstance(scope.sources.get(src.alias_or_name), exp.Table):
                continue
            name = table_name(src, current_db)
            if not _wanted(name, only):
                continue
            owner = _owner(scope, sources, src, name, schema, notes)
            conds = [to_ir(c, owner, dialect, memo) for c in pushable_conditions(select, joins, pos)]

            def columns_named(select=select, scope=scope, named=named) -> set[tuple[str, str]]:
                if not named:
                    named.append(_named_columns(select, scope))
                return named[0]

            yield ScanSite(name, src.alias_or_name.lower(), and_(conds) if conds else TRUE,
                           _columns_read(select, src, owner, columns_named, single=len(sources) == 1), src, scope)


def base_tables(tree: exp.Expression, current_db: str | None = None) -> list[tuple[str, str, str]]:
    """``(qualified name, database, table)`` of every base table ``tree`` reads, in order, once each
    (what ``iter_scans`` would visit, without working out any predicate: cheap)."""
    out: dict[str, tuple[str, str, str]] = {}
    for scope in traverse_scope(tree):
        for src in scope.sources.values():
            if isinstance(src, exp.Table) and src.name:
                name = table_name(src, current_db)
                db = src.args.get("db")
                out.setdefault(name, (name, db.name if db is not None else (current_db or "default"), src.name))
    return list(out.values())


def _named_columns(select: exp.Select, scope: Scope) -> set[tuple[str, str]]:
    """(column, qualifier) of the columns this SELECT names itself: nested SELECTs are their own
    scopes, and ``ORDER BY total`` names a projection, not a column. One walk down the tree
    (``scope.columns`` walks up from every column: quadratic on a 10,000-term OR)."""
    aliases = {p.alias.lower() for p in select.expressions if isinstance(p, exp.Alias)}
    out = set()
    queue = deque([select])  # breadth first, as ``walk`` visits them
    while queue:
        node = queue.popleft()
        if isinstance(node, exp.Column):  # a column holds no columns
            if not isinstance(node.this, exp.Star):
                name, qualifier = node.name.lower(), node.table.lower() if node.table else ""
                if qualifier or name not in aliases:
                    out.add((name, qualifier))
            continue
        queue.extend(c for c in node.iter_expressions() if not isinstance(c, (exp.Query, exp.Subquery)))
    return out


def _columns_read(select: exp.Select, me: exp.Table, owner, named, single: bool) -> frozenset[str] | None:
    """The columns of ``me`` the SELECT reads (None: all of them); ``named()`` lists the SELECT's
    columns (worked out only when no ``*`` makes the answer "all")."""
    alias = me.alias_or_name.lower()
    for star in select.expressions:
        if isinstance(star, exp.Star) and single:
            return None
        if isinstance(star, exp.Star) or (isinstance(star, exp.Column) and isinstance(star.this, exp.Star)
                                          and (not star.table or star.table.lower() == alias)):
            return None
    return frozenset(n for n in (owner.of(col, qual) for col, qual in named()) if n is not None)


def _side(j: exp.Join) -> str:
    return (j.side or "").upper()


def pushable_conditions(select: exp.Select, joins: list[exp.Join], pos: int) -> list[exp.Expression]:
    out: list[exp.Expression] = []

    def nullable(p: int, upto: int) -> bool:
        if p >= 1 and _side(joins[p - 1]) in ("LEFT", "FULL") and (joins[p - 1].kind or "").upper() not in (
                "SEMI", "ANTI"):
            return True
        return any(_side(joins[m - 1]) in ("RIGHT", "FULL") for m in range(p + 1, upto + 1))

    where = select.args.get("where")
    if where is not None and not nullable(pos, len(joins)):
        out.append(where.this)
    for k, j in enumerate(joins, start=1):
        on = j.args.get("on")
        if on is None:
            continue
        side, kind = _side(j), (j.kind or "").upper()
        if side == "FULL":
            continue
        if side == "LEFT" or kind in ("SEMI", "ANTI"):
            if pos == k:
                out.append(on)
        elif side == "RIGHT":
            if pos < k and not nullable(pos, k - 1):
                out.append(on)
        elif pos <= k and not nullable(pos, k):
            out.append(on)
    return out


def _source_columns(scope: Scope, src, schema: Schema) -> frozenset[str] | None:
    """The columns a FROM/JOIN source is known to have (None: unknown)."""
    if isinstance(src, exp.Table) and isinstance(scope.sources.get(src.alias_or_name), exp.Table):
        return schema.column_names(table_name(src, None), src.name.lower())
    inner = scope.sources.get(src.alias_or_name)
    if isinstance(inner, Scope) and isinstance(inner.expression, (exp.Select, exp.SetOperation)):
        return frozenset(n.lower() for n in inner.expression.named_selects)
    return None


def _owner(scope: Scope, sources, me: exp.Table, my_table: str, schema: Schema, notes: list[str]):
    """``owner(column)``: the column's name if it belongs to ``me``, else None (memoised by name)."""
    alias = me.alias_or_name.lower()
    my_cols = schema.columns(my_table)
    others = [_source_columns(scope, s, schema) for s in sources if s is not me] if schema or len(sources) > 1 else []
    memo: dict[tuple[str, str], str | None] = {}

    def decide(col: str, qualifier: str) -> str | None:
        if qualifier:
            if qualifier != alias:
                return None
            if my_cols is not None and col not in my_cols:
                raise SchemaError(f"table {my_table} has no column {col}")
            return col
        if my_cols is not None:
            if col in my_cols:
                return col
            if not others and scope.parent is None:
                raise SchemaError(f"table {my_table} has no column {col}")
            return None
        if not others:
            return col  # the only table in scope, no schema: assume it is ours
        if any(cols is not None and col in cols for cols in others):
            return None
        if all(cols is not None for cols in others):
            return col
        notes.append(f"column {col} could belong to several tables; give a schema to resolve it")
        return None

    def of(col: str, qualifier: str) -> str | None:
        key = (col, qualifier)
        name = memo.get(key, memo)
        if name is memo:
            name = memo[key] = decide(col, qualifier)
        return name

    def owner(c: exp.Column) -> str | None:
        return of(c.name.lower(), c.table.lower() if c.table else "")

    owner.of = of
    return owner


def schema_from_ddl(text: str, path: str = "<schema>", dialect: str = "hive") -> Schema:
    """Read ``CREATE TABLE`` statements into a ``Schema`` (other statements are ignored)."""
    import sqlglot
    from sqlglot.errors import ParseError, TokenError

    from planner.errors import Location, WorkloadError

    tables: dict[str, dict[str, str]] = {}
    try:
        trees = sqlglot.parse(text, read=dialect)
    except (ParseError, TokenError) as e:
        raise WorkloadError(f"cannot parse schema: {str(e).splitlines()[0]}", Location(path)) from None
    for tree in trees:
        if not isinstance(tree, exp.Create) or not isinstance(tree.this, exp.Schema):
            continue
        target = tree.this.this
        cols = {d.name.lower(): d.args["kind"].sql(dialect=dialect).lower()
                for d in tree.this.expressions if isinstance(d, exp.ColumnDef) and d.args.get("kind")}
        tables[table_name(target, None)] = cols
    if not tables:
        raise WorkloadError("no CREATE TABLE statements found", Location(path))
    return Schema(tables)

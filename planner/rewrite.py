"""Rewrite a query so that each scan of a laid-out table reads only the partitions it may need.

    SELECT … FROM tpch.lineitem l JOIN orders o ON … WHERE l.l_shipdate >= DATE '1995-01-01'
 -> SELECT … FROM (SELECT <columns> FROM tpch.lineitem WHERE planner_pid IN (0, 3, 4)) AS l JOIN …

The scan's predicate is found by ``planner.workload.scans`` (only what may filter the scan before
the join, so outer joins stay correct) and analysed exactly as ``planner.analysis`` does; the
partitions come from ``planner.pruning`` (the one pruning rule the cost model also uses). The
catch-all partition 0 is always read. Replacing the table by a subquery with the same alias and
the table's columns (the partition column left out, so ``SELECT *`` is unchanged) keeps the
query's meaning under every join type. A query with nothing to prune comes back as the very same
text, unless it shows all the table's columns (``SELECT *``, ``t.*``, ``struct(*)``): then the scan
still becomes the subquery, without a filter, so the answer does not gain the partition column.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from planner.analysis import ScanAnalysis, _analyse_predicate
from planner.cnf.normalize import DEFAULT_BUDGET
from planner.cnf.values import Kind, kind_of_type
from planner.emit.conditions import column_ref
from planner.errors import InputError
from planner.layout import CATCH_ALL, Layout
from planner.pruning import hit_matrix
from planner.workload.scans import ScanSite, Schema, iter_scans

# Table arguments a plain subquery could not carry over (TABLESAMPLE, time travel, hints, …).
_PLAIN_TABLE_ARGS = {"this", "db", "catalog", "alias"}


@dataclass(frozen=True)
class RewriteNote:
    table: str
    alias: str
    partitions_read: tuple[int, ...]
    partitions_total: int
    rewritten: bool
    reason: str = ""


@dataclass(frozen=True)
class ScanExplanation:
    table: str
    alias: str
    partitions_read: tuple[int, ...]
    partitions_total: int
    predicates_used: tuple[str, ...]


@dataclass(frozen=True)
class _Pruned:
    site: ScanSite
    layout: Layout
    partitions: tuple[int, ...]
    total: int
    used: tuple[str, ...]


def _schema(schema, layouts: Mapping[str, Layout] = {}) -> Schema:
    """The caller's schema, with each laid-out table's partition column added (queries may name it)."""
    if schema is None:
        return Schema()
    tables = {k: dict(v) for k, v in (schema.tables if isinstance(schema, Schema) else Schema(schema).tables).items()}
    lowered = {k.lower(): v for k, v in layouts.items()}
    for name, cols in tables.items():
        layout = _lookup(lowered, name)
        if layout is not None:
            cols.setdefault(layout.partition_column.lower(), "int")
    return Schema(tables)


def _lookup(layouts: Mapping[str, Layout], table: str) -> Layout | None:
    if table in layouts:
        return layouts[table]
    short = table.rsplit(".", 1)[-1]
    if "." not in table:
        hits = [v for k, v in layouts.items() if k.rsplit(".", 1)[-1] == short]
        return hits[0] if len(hits) == 1 else None
    return None


def _parse(sql: str, dialect: str) -> exp.Expression:
    try:
        return sqlglot.parse_one(sql, read=dialect)
    except (ParseError, TokenError) as e:
        raise InputError(f"cannot parse the query: {str(e).splitlines()[0]}") from None


def partitions_for_scan(site: ScanSite, layout: Layout, columns: Mapping[str, str] | None,
                        budget: int = DEFAULT_BUDGET, prune: bool = True) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """The partition ids ``site`` may need (catch-all included) and the conditions that pruned."""
    if not prune:
        return tuple(sorted({p.id for p in layout.partitions} | {CATCH_ALL})), ()
    kinds: dict[str, Kind] = dict(layout.kinds)
    if columns:
        kinds.update({c.lower(): kind_of_type(t) for c, t in columns.items()})
    kinds = {k: v for k, v in kinds.items() if k not in dict(layout.derived)}
    groups, unused = _analyse_predicate(site.predicate, kinds, budget, {})
    scan = ScanAnalysis(0, site.alias, groups, unused, site.columns)
    all_kinds = kinds | {k: Kind.BOOLEAN for k, _ in layout.derived} | dict(layout.kinds)
    for a in scan.sets:
        all_kinds.setdefault(a, scan.sets[a].kind)
    regions = [p.conditions for p in layout.partitions]
    hits = hit_matrix([scan], regions, all_kinds)[0] if regions else []
    read = {p.id for p, h in zip(layout.partitions, hits) if h} | {CATCH_ALL}
    attrs = set(layout.attributes)
    used = tuple(f"{a} IN {vs}" for a, vs in scan.sets.items() if a in attrs)
    if groups.unsatisfiable:
        used += ("(the predicate is never TRUE)",)
    return tuple(sorted(read)), used


def _prune(tree: exp.Expression, layouts: Mapping[str, Layout], schema: Schema, dialect: str,
           current_db: str | None, prune: bool = True) -> list[_Pruned]:
    layouts = {k.lower(): v for k, v in layouts.items()}
    only = frozenset(n for k in layouts for n in (k, k.rsplit(".", 1)[-1]))  # other tables' predicates are not needed
    out = []
    for site in list(iter_scans(tree, schema, current_db, dialect, only=only)):
        layout = _lookup(layouts, site.table)
        if layout is None:
            continue
        read, used = partitions_for_scan(site, layout, schema.columns(site.table), prune=prune)
        total = len({p.id for p in layout.partitions} | {CATCH_ALL})
        out.append(_Pruned(site, layout, read, total, used))
    return out


def _exposes_all_columns(site: ScanSite) -> bool:
    """Whether the scan's SELECT shows every column of the table (``*``, ``t.*``, ``struct(*)``).

    Such a query must not see the partition column a laid-out table has gained, so its scan is
    replaced by the subquery (which leaves it out) even when no partition can be skipped.
    ``count(*)`` shows no column.
    """
    select = site.scope.expression
    alias = site.alias
    for star in select.find_all(exp.Star):
        if star.find_ancestor(exp.Select) is not select or isinstance(star.parent, exp.Count):
            continue
        qualifier = star.parent.args.get("table") if isinstance(star.parent, exp.Column) else None
        if qualifier is None or qualifier.name.lower() == alias:
            return True
    return False


def _why_not(p: _Pruned, named: set[str], columns: Mapping[str, str] | None) -> str:
    if len(p.partitions) >= p.total and not _exposes_all_columns(p.site):
        return "every partition may hold matching rows"
    if not columns:
        return "the table's columns are unknown (give a schema)"
    extra = set(p.site.node.args) - _PLAIN_TABLE_ARGS
    if any(p.site.node.args.get(a) for a in extra):
        return "the table reference has clauses a subquery cannot carry (sample, hints, time travel)"
    pcol = p.layout.partition_column.lower()
    if pcol in named:
        return f"the query names the partition column {pcol} itself"
    if any(c.args.get("db") is not None for c in p.site.scope.columns):
        return "a column is qualified with its database; the subquery alias could not stand in"
    return ""


def _span(node: exp.Table) -> tuple[int, int] | None:
    """Character span of the table reference (name and alias) in the query text, if the parser kept it."""
    parts = [node.args.get(k) for k in ("catalog", "db", "this")]
    alias = node.args.get("alias")
    if alias is not None:
        parts.append(alias.this)
    metas = [p.meta for p in parts if isinstance(p, exp.Identifier)]
    if not metas or any("start" not in m or "end" not in m for m in metas):
        return None
    return min(m["start"] for m in metas), max(m["end"] for m in metas)


def _subquery_sql(p: _Pruned, columns: Mapping[str, str], dialect: str) -> str:
    node = p.site.node
    pcol = p.layout.partition_column
    table = node.copy()
    table.set("alias", None)
    for n in table.walk():
        n.comments = None  # a trailing comment stays where it is in the text, not copied in here
    inner = exp.select(*[column_ref(c) for c in columns if c.lower() != pcol.lower()], copy=False)
    inner = inner.from_(table, copy=False)
    if len(p.partitions) < p.total:
        inner = inner.where(exp.In(this=column_ref(pcol), expressions=[exp.Literal.number(i) for i in p.partitions]),
                            copy=False)
    alias = node.args.get("alias")
    ident = alias.this.copy() if alias is not None else node.this.copy()
    return exp.Subquery(this=inner, alias=exp.TableAlias(this=ident)).sql(dialect=dialect)


def rewrite_query(sql: str, layouts: Mapping[str, Layout], *, dialect: str = "hive", schema=None,
                  current_db: str | None = None, prune: bool | None = None) -> tuple[str, list[RewriteNote]]:
    """``sql`` with every prunable scan of a laid-out table narrowed to its partitions.

    Only the text of each rewritten table reference changes; the rest of the query is kept byte
    for byte. Re-printing the whole tree would be riskier: sqlglot and Spark disagree on some
    spellings (Spark 4 reads ``'it''s'`` as ``it's``, sqlglot's spark dialect as ``CONCAT('it', 's')``).
    With ``prune=False`` every scan reads every partition (``*`` still never shows the partition
    column). By default a query holding ``${`` is not pruned: Spark and Hive substitute variables
    in the text, quoted literals included, before they parse it (``'${x}'`` may run as ``''``), so
    the text the planner reads is not the query that runs.
    """
    if prune is None:
        prune = "${" not in sql
    tree = _parse(sql, dialect)
    schema = _schema(schema, layouts)
    pruned = _prune(tree, layouts, schema, dialect, current_db, prune)
    named = {c.name.lower() for c in tree.find_all(exp.Column)}
    notes: list[RewriteNote] = []
    edits: list[tuple[int, int, str]] = []
    for p in pruned:
        columns = schema.columns(p.site.table)
        reason = _why_not(p, named, columns)
        span = _span(p.site.node) if not reason else None
        if not reason and span is None:
            reason = "the parser did not keep the position of the table reference"
        if not reason:
            edits.append((span[0], span[1], _subquery_sql(p, columns, dialect)))
        notes.append(RewriteNote(p.site.table, p.site.alias, p.partitions, p.total, not reason, reason))
    for start, end, text in sorted(edits, reverse=True):
        sql = sql[:start] + text + sql[end + 1:]
    return sql, notes


def explain_query(sql: str, layouts: Mapping[str, Layout], stats=None, *, dialect: str = "hive", schema=None,
                  current_db: str | None = None) -> list[ScanExplanation]:
    """Per scan of a laid-out table: the partitions it reads and the conditions that decided it.

    ``stats`` (table name -> ``TableStats``) only supplies column types when no schema is given.
    """
    tables = dict(_schema(schema).tables)
    for name, st in (stats or {}).items():
        tables.setdefault(name.lower(), {c.lower(): t for c, t in st.schema.items()})
    tree = _parse(sql, dialect)
    return [ScanExplanation(p.site.table, p.site.alias, p.partitions, p.total, p.used)
            for p in _prune(tree, layouts, _schema(tables, layouts), dialect, current_db)]


# ---- layouts looked up by the tables a query reads ------------------------------------------------
def tables_read(sql: str, *, dialect: str = "hive", current_db: str | None = None) -> list[tuple[str, str, str]]:
    """``(qualified name, database, table)`` of every base table ``sql`` reads, in order, once each.

    The database is ``current_db`` (or ``default``) for unqualified names. Callers look the layouts
    up by these (the metastore keeps database and table apart, so names holding dots stay exact).
    """
    tree = _parse(sql, dialect)
    out: dict[str, tuple[str, str, str]] = {}
    for site in iter_scans(tree, Schema(), current_db, dialect):
        db = site.node.args.get("db")
        out.setdefault(site.table, (site.table, db.name if db is not None else (current_db or "default"),
                                    site.node.name))
    return list(out.values())


__all__ = ["rewrite_query", "explain_query", "tables_read", "RewriteNote", "ScanExplanation", "partitions_for_scan"]

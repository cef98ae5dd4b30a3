"""Rewrite a query so that each scan of a laid-out table reads only the partitions it may need.

    SELECT … FROM tpch.lineitem l JOIN orders o ON … WHERE l.l_shipdate >= DATE '1995-01-01'
 -> SELECT … FROM (SELECT <columns> FROM tpch.lineitem WHERE planner_pid IN (0, 3, 4)) AS l JOIN …

The scan's predicate is found by ``planner.workload.scans`` (only what may filter the scan before
the join, so outer joins stay correct) and analysed exactly as ``planner.analysis.table_analysis`` does; the
partitions come from ``planner.pruning.hits`` (the one pruning rule the cost model also uses). The
catch-all partition 0 is always read.

Stale SQL never returns wrong rows. The filter names the layout's own ids only for what it skips:
``planner_pid IN (0, 482130003) OR NOT planner_pid BETWEEN 482130001 AND 482130012`` reads every
partition of any other layout (a re-apply, a rollback, a partial re-layout), and a race between
reading the layout and running the query (``planner.sql``) is harmless the same way.

The session matters (``planner.semantics.Settings``). ``planner.sql`` knows it. A saved rewrite
does not: it is pruned under both ANSI modes at once (an upper bound of both), in the time zone
the layout was advised under, and when the pruning depended on that zone (a TIMESTAMP literal,
a DATE compared with a TIMESTAMP) the filter carries ``OR current_timezone() <> '<zone>'``, so in
any other zone the query reads every partition. Spark folds that guard away in the matching zone
and still prunes. Replacing the table by a subquery with the same alias and
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

from planner.analysis.table_analysis import ScanAnalysis, _analyse_predicate
from planner.cnf.bind import column_type, needs_time_zone
from planner.cnf.normalize import DEFAULT_BUDGET
from planner.emit.conditions import column_ref, partition_filter
from planner.errors import InputError
from planner.model.layout import CATCH_ALL, PARTITION_COLUMN_TYPE, Layout
from planner.pruning import strict
from planner.pruning.hits import hit_matrix
from planner.pruning.join_pruning import JoinRanges, join_pruning
from planner.semantics.kinds import Kind
from planner.semantics.settings import Settings
from planner.semantics.types import parse_type
from planner.workload.joins import induced_scans
from planner.workload.scans import ScanSite, Schema, base_tables, iter_scans

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
    guard: str = ""  # e.g. "time zone UTC": in another session zone the query reads every partition


@dataclass(frozen=True)
class ScanExplanation:
    table: str
    alias: str
    partitions_read: tuple[int, ...]
    partitions_total: int
    predicates_used: tuple[str, ...]
    predicates_not_used: tuple[tuple[str, str], ...] = ()  # (predicate, why it cannot prune)
    partitions_matching: tuple[int, ...] = ()  # partitions every row of which matches (strict)


@dataclass(frozen=True)
class ScanPruning:
    """What one scan of a laid-out table reads, and why."""

    read: tuple[int, ...]
    used: tuple[str, ...] = ()
    unused: tuple[tuple[str, str], ...] = ()
    zone_guard: str | None = None  # the session time zone the pruning holds in, when it depends on one
    matching: tuple[int, ...] = ()


@dataclass(frozen=True)
class _Pruned:
    site: ScanSite
    layout: Layout
    partitions: tuple[int, ...]
    total: int
    used: tuple[str, ...]
    unused: tuple[tuple[str, str], ...] = ()
    zone_guard: str | None = None
    matching: tuple[int, ...] = ()


def _schema(schema, layouts: Mapping[str, Layout] = {}) -> Schema:
    """The caller's schema, with each laid-out table's partition column added (queries may name it)."""
    if schema is None:
        return Schema()
    tables = {k: dict(v) for k, v in (schema.tables if isinstance(schema, Schema) else Schema(schema).tables).items()}
    lowered = {k.lower(): v for k, v in layouts.items()}
    for name, cols in tables.items():
        layout = _lookup(lowered, name)
        if layout is not None:
            cols.setdefault(layout.partition_column.lower(), PARTITION_COLUMN_TYPE.lower())
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


def scan_analysis(site: ScanSite, layout: Layout, columns: Mapping[str, str] | None,
                  budget: int = DEFAULT_BUDGET, settings: Settings | None = None
                  ) -> tuple[ScanAnalysis, dict[str, Kind], dict]:
    """``site``'s predicate analysed against ``layout`` as the pruning reads it: the scan, the kind
    of every attribute (columns, derived, the layout's own), and the column types used.

    ``settings``: the session that runs the query; None when unknown (a saved rewrite): both
    ANSI modes, the layout's time zone."""
    types = {k: parse_type(t) for k, t in layout.types}
    if columns:
        types.update({c.lower(): parse_type(t) for c, t in columns.items()})
    for a, k in layout.kinds:
        types.setdefault(a, column_type(k))
    types = {k: v for k, v in types.items() if k not in dict(layout.derived)}
    modes = (settings,) if settings is not None else (Settings(True, layout.settings.time_zone),
                                                       Settings(False, layout.settings.time_zone))
    groups, unused = _analyse_predicate(site.predicate, types, budget, {}, modes)
    scan = ScanAnalysis(0, site.alias, groups, unused, site.columns)
    kinds = {k: t.kind for k, t in types.items()}
    all_kinds = kinds | {k: Kind.BOOLEAN for k, _ in layout.derived} | dict(layout.kinds)
    for a in scan.sets:
        all_kinds.setdefault(a, scan.sets[a].kind)
    return scan, all_kinds, types


def pruning_regions(layout: Layout) -> list[dict]:
    """Each partition's region as the rewrite prunes by it: a sideways cut's joined attribute says
    what the joined table held at apply, so it is never pruned by here (only through its recorded
    ranges, ``join_pruning``)."""
    joined = dict(layout.joined)
    return [{a: v for a, v in p.region if a not in joined} for p in layout.partitions]


def partitions_for_scan(site: ScanSite, layout: Layout, columns: Mapping[str, str] | None,
                        budget: int = DEFAULT_BUDGET, *, prune: bool,
                        settings: Settings | None = None) -> ScanPruning:
    """The partition ids ``site`` may need (catch-all included) and the conditions that decided it.

    ``settings``: the session that runs the query; None when unknown (a saved rewrite): both
    ANSI modes, the layout's time zone, and ``zone_guard`` set when the pruning relies on it.
    """
    everything = tuple(sorted({p.id for p in layout.partitions} | {CATCH_ALL}))
    if not prune:
        return ScanPruning(everything)
    refusal = _refusal(layout, columns)
    if refusal:
        return ScanPruning(everything, unused=(("(every predicate)", refusal),))
    scan, all_kinds, types = scan_analysis(site, layout, columns, budget, settings)
    groups, unused = scan.groups, scan.unused
    regions = pruning_regions(layout)
    hits = hit_matrix([scan], regions, all_kinds)[0]  # one row per scan, however few regions
    read = {p.id for p, h in zip(layout.partitions, hits) if h} | {CATCH_ALL}
    attrs = set(layout.attributes)
    used = tuple(f"{a} IN {vs}" for a, vs in scan.sets.items() if a in attrs)
    if groups.unsatisfiable:
        used += ("(the predicate is never TRUE)",)
    guard = None
    if settings is None and len(read) < len(everything) and needs_time_zone(site.predicate, types):
        guard = layout.settings.time_zone
    matching = strictly_matching(scan, layout)  # () for a predicate never TRUE
    return ScanPruning(tuple(sorted(read)), used, unused, guard, matching)


def pruning_wanted(sql: str, prune: bool | None) -> bool:
    """``prune`` when the caller says, else whether ``sql`` holds no ``${`` variable (see ``rewrite_query``)."""
    return "${" not in sql if prune is None else prune


def _refusal(layout: Layout, columns: Mapping[str, str] | None) -> str:
    """Why this layout must not be pruned by at all, or ''."""
    if layout.version < 2:
        return ("the layout was written by an older planner (version 1: partition ids shared by every layout, "
                "timestamps as wall clock); apply it again to prune")
    typed = dict(layout.types)
    for a, t in layout.types:
        now = (columns or {}).get(a)
        if now is not None and parse_type(now) != parse_type(t):
            return f"column {a} is now {now}, the layout was made for {t}"
    for a, k in layout.kinds:  # a layout that recorded no types: its values' kinds must still be the columns'
        now = (columns or {}).get(a)
        if a not in typed and now is not None and parse_type(now).kind != k:
            return f"column {a} is now {now}, the layout was made for a {k.value} column"
    return ""


def strictly_matching(scan: ScanAnalysis, layout: Layout) -> tuple[int, ...]:
    """Partitions every row of which satisfies the scan's predicate (``planner.pruning.strict``)."""
    return strict.strictly_matching(scan, [(p.id, p.conditions) for p in layout.partitions])


def _prune(tree: exp.Expression, layouts: Mapping[str, Layout], schema: Schema, dialect: str,
           current_db: str | None, prune: bool = True, settings: Settings | None = None,
           joins: "JoinContext | None" = None) -> list[_Pruned]:
    layouts = {k.lower(): v for k, v in layouts.items()}
    only = frozenset(n for k in layouts for n in (k, k.rsplit(".", 1)[-1]))  # other tables' predicates are not needed
    induced = {}
    if prune and joins is not None and joins.ranges:
        induced = {id(s.site.node): s.induced for s in induced_scans(tree, schema, current_db, dialect, only)}
    out = []
    for site in list(iter_scans(tree, schema, current_db, dialect, only=only)):
        layout = _lookup(layouts, site.table)
        if layout is None:
            continue
        got = partitions_for_scan(site, layout, schema.columns(site.table), prune=prune, settings=settings)
        read, used, unused = got.read, got.used, got.unused
        if induced.get(id(site.node)):
            jp = join_pruning(induced[id(site.node)], _lookup(joins.ranges, site.table), layout, joins.snapshots,
                              settings)
            if jp.keep is not None:
                read = tuple(p for p in read if p in jp.keep)
            used, unused = used + jp.used, unused + jp.unused
        total = len({p.id for p in layout.partitions} | {CATCH_ALL})
        out.append(_Pruned(site, layout, read, total, used, unused, got.zone_guard, got.matching))
    return out


@dataclass(frozen=True)
class JoinContext:
    """What join pruning needs: the recorded ranges per laid-out table, and every table's snapshot now."""

    ranges: Mapping[str, "JoinRanges"]
    snapshots: Mapping[str, str | None]


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
        guard = None
        if p.zone_guard is not None:
            guard = exp.NEQ(this=exp.Anonymous(this="current_timezone", expressions=[]),
                            expression=exp.Literal.string(p.zone_guard))
        inner = inner.where(partition_filter(pcol, p.partitions, p.layout.known_ids, guard), copy=False)
    alias = node.args.get("alias")
    ident = alias.this.copy() if alias is not None else node.this.copy()
    return exp.Subquery(this=inner, alias=exp.TableAlias(this=ident)).sql(dialect=dialect)


def rewrite_query(sql: str, layouts: Mapping[str, Layout], *, dialect: str, schema=None,
                  current_db: str | None = None, prune: bool,
                  settings: Settings | None = None, joins: JoinContext | None = None
                  ) -> tuple[str, list[RewriteNote]]:
    """``sql`` with every prunable scan of a laid-out table narrowed to its partitions.

    Only the text of each rewritten table reference changes; the rest of the query is kept byte
    for byte. Re-printing the whole tree would be riskier: sqlglot and Spark disagree on some
    spellings (Spark 4 reads ``'it''s'`` as ``it's``, sqlglot's spark dialect as ``CONCAT('it', 's')``).
    With ``prune=False`` every scan reads every partition (``*`` still never shows the partition
    column). The entry point (``aggregate_rewrite.rewrite_statement``) turns pruning off by default
    for a query holding ``${`` (``pruning_wanted``): Spark and Hive substitute variables in the
    text, quoted literals included, before they parse it (``'${x}'`` may run as ``''``), so the
    text the planner reads is not the query that runs. ``settings``: the session that runs
    the query, when known (``planner.sql``); otherwise see the module's notes. ``joins``: ranges of
    joined columns and current snapshots, to prune through inner joins (``planner.pruning.join_pruning``).
    """
    tree = _parse(sql, dialect)
    schema = _schema(schema, layouts)
    pruned = _prune(tree, layouts, schema, dialect, current_db, prune, settings, joins)
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
        guard = f"time zone {p.zone_guard}" if p.zone_guard and not reason else ""
        notes.append(RewriteNote(p.site.table, p.site.alias, p.partitions, p.total, not reason, reason, guard))
    for start, end, text in sorted(edits, reverse=True):
        sql = sql[:start] + text + sql[end + 1:]
    return sql, notes


def explain_query(sql: str, layouts: Mapping[str, Layout], stats=None, *, dialect: str, schema=None,
                  current_db: str | None = None, settings: Settings | None = None,
                  joins: JoinContext | None = None) -> list[ScanExplanation]:
    """Per scan of a laid-out table: the partitions it reads and the conditions that decided it.

    ``stats`` (table name -> ``TableStats``) only supplies column types when no schema is given.
    """
    tables = dict(_schema(schema).tables)
    for name, st in (stats or {}).items():
        tables.setdefault(name.lower(), {c.lower(): t for c, t in st.schema.items()})
    tree = _parse(sql, dialect)
    return [ScanExplanation(p.site.table, p.site.alias, p.partitions, p.total, p.used, p.unused, p.matching)
            for p in _prune(tree, layouts, _schema(tables, layouts), dialect, current_db, settings=settings,
                            joins=joins)]


# ---- layouts looked up by the tables a query reads ------------------------------------------------
def tables_read(sql: str, *, dialect: str = "hive", current_db: str | None = None) -> list[tuple[str, str, str]]:
    """``(qualified name, database, table)`` of every base table ``sql`` reads, in order, once each.

    The database is ``current_db`` (or ``default``) for unqualified names. Callers look the layouts
    up by these (the metastore keeps database and table apart, so names holding dots stay exact).
    """
    return base_tables(_parse(sql, dialect), current_db)


__all__ = ["rewrite_query", "JoinContext", "explain_query", "tables_read", "RewriteNote", "ScanExplanation", "ScanPruning",
           "partitions_for_scan", "strictly_matching", "scan_analysis", "pruning_regions"]

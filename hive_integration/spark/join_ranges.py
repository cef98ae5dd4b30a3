"""Per-partition ranges of joined columns: computed with one Spark join, kept in table properties.

    SELECT t.planner_pid,
           min(j1.o_orderdate), max(j1.o_orderdate),
           max(CASE WHEN j1.o_orderkey IS NOT NULL AND j1.o_orderdate IS NULL THEN 1 ELSE 0 END), …
    FROM tpch.lineitem t
    LEFT JOIN tpch.orders j1 ON t.l_orderkey = j1.o_orderkey
    LEFT JOIN tpch.customer j2 ON j1.o_custkey = j2.c_custkey …
    GROUP BY t.planner_pid

Every join path of the recorded join columns (``planner.workload.joins.JoinColumn``) becomes a chain of LEFT
JOINs, prefixes shared. A path is recorded only if every hop joins a *unique* key (orders by
``o_orderkey``), so the join keeps one row per laid-out row and costs about a scan of each table;
a fanning-out path (lineitem to the customers of the supplier's nation) is left out and said so.
The NULL flag counts only rows that found a partner (the key column of the joined side is then not
NULL): a row that joins nothing never reaches an inner join's answer. Columns with few distinct
values (at most ``SMALL_SET`` in the whole joined table) keep their exact value set per partition.

The ranges hold only while the data they came from does: the snapshot of every table involved (its
files, sizes and modification times, and its planner layout checksum) is recorded with them, and
``join_context`` compares it with the snapshot at query time (``planner.pruning.join_pruning``).
"""
from __future__ import annotations

import hashlib
from typing import Callable, Iterable, Mapping, Sequence

from sqlglot import exp

from hive_integration.spark.catalog import (
    CatalogEntry,
    catalog_entry,
    input_files,
    table_files,
)
from planner.cnf.valueset import ValueSet
from planner.emit.join_sql import (
    chained,
    join_chain,
    key_counts,
    qualified_column,
    table_ref,
)
from planner.model.join_paths import JoinColumn
from planner.model.layout import Layout
from planner.pruning.join_pruning import (
    SMALL_SET,
    JoinRange,
    JoinRanges,
    join_columns_of,
    stale_property_keys,
    tables_of,
)
from planner.semantics.kinds import Kind
from planner.semantics.types import parse_type

_KINDS = (Kind.INTEGER, Kind.DECIMAL, Kind.STRING, Kind.DATE, Kind.BOOLEAN)  # FLOAT/TIMESTAMP: not recorded


def _run(spark, q: exp.Expression) -> list:
    return spark.sql(q.sql(dialect="spark")).collect()


# ---- snapshots -------------------------------------------------------------------------------------
def table_snapshot(spark, table: str, entry: CatalogEntry | None = None) -> str | None:
    """A digest of ``table``'s data files (path, size, modification time) and its planner layout
    checksum; None when the table cannot be read. ``entry``: its catalog entry when the caller has
    just read it (the query's layout look-up), else read here.

    The files are listed under the table's location, or its partitions' (``catalog.table_files``);
    a view's are the files Spark reads for it (``inputFiles()``). Both name and order the files as
    ``inputFiles()`` does, so a snapshot recorded before the listing was direct is still recognised
    (unless the table has subdirectories: the listing counts their files, to be safe)."""
    from py4j.protocol import Py4JError
    from pyspark.errors import PySparkException

    entry = entry or catalog_entry(spark, table)
    if entry is None:
        return None
    systems: dict[tuple[str, str], object] = {}  # one FileSystem per scheme and authority: a round trip less per file
    try:
        files = table_files(spark, entry, systems)
        if files is None:
            files = input_files(spark, table_ref(table).sql(dialect="spark"), systems)
    except (Py4JError, PySparkException):
        return None
    h = hashlib.sha256()
    for f, length, modified in files:
        h.update(f"{f}\0{length}\0{modified}\n".encode())
    h.update(str(entry.properties.get("planner.layout.sha256", "")).encode())
    return h.hexdigest()[:32]


def snapshots(spark, tables: Iterable[str],
              entries: Callable[[str], CatalogEntry | None] | None = None) -> dict[str, str | None]:
    """Each table's ``table_snapshot``; ``entries`` (table -> catalog entry, or None when the query
    cannot be said to read the table, e.g. a temporary view shadows it) supplies entries already read."""
    if entries is None:
        return {t: table_snapshot(spark, t) for t in dict.fromkeys(tables)}
    out = {}
    for t in dict.fromkeys(tables):
        entry = entries(t)
        out[t] = None if entry is None else table_snapshot(spark, t, entry)
    return out


# ---- computing the ranges ---------------------------------------------------------------------------
def _unique(spark, table: str, key: str, memo: dict) -> bool:
    """Whether ``key`` is unique in ``table``; ``memo`` keeps (rows, distinct keys) per (table, key)."""
    if (table, key) not in memo:
        memo[(table, key)] = tuple(_run(spark, key_counts(table, key))[0])
    total, distinct = memo[(table, key)]
    return total == distinct


def _types(spark, table: str, memo: dict) -> dict[str, str]:
    if table not in memo:
        from hive_integration.spark.columns import table_columns

        memo[table] = table_columns(lambda s: [tuple(r) for r in spark.sql(s).collect()], table_ref(table))
    return memo[table]


def _exists(spark, table: str, memo: dict) -> bool:
    if table not in memo:
        try:
            memo[table] = bool(spark.catalog.tableExists(table))
        except Exception:  # noqa: BLE001 - the catalog cannot say: let the query below answer
            memo[table] = True
    return memo[table]


def usable_columns(spark, table: str, columns: Sequence[JoinColumn], say: Callable[[str], None] = lambda m: None,
                   unique: dict | None = None) -> list[tuple[JoinColumn, str]]:
    """The join columns that can be recorded, with their types (unique keys on every hop, an ordered kind).
    ``unique``: filled with (rows, distinct keys) per (table, key) of every hop looked at."""
    unique = {} if unique is None else unique
    types: dict = {}
    exists: dict[str, bool] = {}
    out = []
    for c in columns:
        # a table the workload joins but the catalog lacks (``tpch.part`` where only lineitem was
        # loaded): one calm line, not the analyzer's TABLE_OR_VIEW_NOT_FOUND from a query on it
        gone = next((h.table for h in c.path.hops if not _exists(spark, h.table, exists)), None)
        if gone is not None:
            say(f"join column {c.describe()} not recorded: {gone} is not a table in the catalog")
            continue
        try:
            hops_ok = all(_unique(spark, h.table, h.key, unique) for h in c.path.hops)
            t = _types(spark, c.path.table, types).get(c.column)
        except Exception as e:  # a table that is gone or unreadable: nothing to record for it
            say(f"join column {c.describe()} not recorded: {str(e).splitlines()[0][:200]}")
            continue
        if not hops_ok:
            say(f"join column {c.describe()} not recorded: a hop does not join a unique key (the join would fan out)")
        elif t is None:
            say(f"join column {c.describe()} not recorded: {c.path.table} has no column {c.column}")
        elif parse_type(t).kind not in _KINDS:
            say(f"join column {c.describe()} not recorded: type {t} is not recorded (float and timestamp ranges are not)")
        else:
            out.append((c, t))
    return out


def ranges_query(table: str, partition_column: str, columns: Sequence[tuple[JoinColumn, str]],
                 small: Mapping[JoinColumn, bool]) -> exp.Select:
    """The one join that computes every column's per-partition aggregates (see the module's notes)."""
    aliases, joins = join_chain([c for c, _ in columns])
    q = exp.select(qualified_column("t", partition_column).as_("pid"))
    for i, (c, _) in enumerate(columns):
        end = aliases[c.path.hops]
        value, key = qualified_column(end, c.column), qualified_column(end, c.path.hops[-1].key)
        null_seen = exp.Case(ifs=[exp.If(this=exp.and_(exp.Not(this=exp.Is(this=key, expression=exp.Null())),
                                                             exp.Is(this=value.copy(), expression=exp.Null())),
                                         true=exp.Literal.number(1))], default=exp.Literal.number(0))
        aggs = [exp.Min(this=value.copy()).as_(f"c{i}_min"), exp.Max(this=value.copy()).as_(f"c{i}_max"),
                exp.Max(this=null_seen).as_(f"c{i}_null")]
        if small.get(c):
            aggs.append(exp.Anonymous(this="collect_set", expressions=[value.copy()]).as_(f"c{i}_set"))
        q = q.select(*aggs, copy=False)
    return chained(q, table_ref(table), joins).group_by(qualified_column("t", partition_column), copy=False)


def _small(spark, c: JoinColumn) -> bool:
    v = exp.column(exp.to_identifier(c.column, quoted=True))
    q = exp.select(exp.Count(this=exp.Distinct(expressions=[v]))).from_(table_ref(c.path.table))
    return int(_run(spark, q)[0][0]) <= SMALL_SET


def _value_set(kind: Kind, lo, hi, null_seen, values) -> ValueSet:
    if lo is None:
        vs = ValueSet.nothing(kind)
    elif values is not None and len(values) <= SMALL_SET:
        vs = ValueSet.points(kind, [v for v in values if v is not None])
    else:
        vs = ValueSet.range(kind, lo, hi)
    return vs.union(ValueSet.only_null(kind)) if null_seen else vs


def compute_join_ranges(spark, layout: Layout, columns: Sequence[JoinColumn],
                        say: Callable[[str], None] = lambda m: None) -> JoinRanges | None:
    """The ranges of ``columns`` over ``layout.table``'s partitions as they are now (None: nothing to record)."""
    usable = usable_columns(spark, layout.table, columns, say)
    if not usable:
        return None
    tables = [layout.table] + [h.table for c, _ in usable for h in c.path.hops]
    before = snapshots(spark, tables)
    small = {c: parse_type(t).kind in (Kind.STRING, Kind.BOOLEAN, Kind.INTEGER) and _small(spark, c) for c, t in usable}
    rows = _run(spark, ranges_query(layout.table, layout.partition_column, usable, small))
    out = []
    for i, (c, t) in enumerate(usable):
        kind = parse_type(t).kind
        per = []
        for r in rows:
            d = r.asDict()
            per.append((int(d["pid"]), _value_set(kind, d[f"c{i}_min"], d[f"c{i}_max"], d[f"c{i}_null"],
                                                 d.get(f"c{i}_set"))))
        out.append(JoinRange(c, t, tuple(sorted(per, key=lambda x: x[0]))))
    after = snapshots(spark, tables)
    if before != after:
        say("join ranges not recorded: a table changed while they were computed")
        return None
    return JoinRanges(layout.table, layout.generation, tuple(sorted(after.items())), tuple(out))


# ---- storing, refreshing, reading --------------------------------------------------------------------
def _properties(spark, table: str) -> dict[str, str]:
    return {r[0]: r[1] for r in spark.sql("SHOW TBLPROPERTIES " + table_ref(table).sql(dialect="spark")).collect()}


def store(spark, table: str, ranges: JoinRanges | None) -> None:
    """Replace the table's stored ranges by ``ranges`` (None: just drop the old ones)."""
    t = table_ref(table).sql(dialect="spark")
    old = stale_property_keys(_properties(spark, table))
    if old:
        keys = ", ".join(exp.Literal.string(k).sql("spark") for k in old)
        spark.sql(f"ALTER TABLE {t} UNSET TBLPROPERTIES IF EXISTS ({keys})")
    if ranges is not None:
        pairs = [exp.Property(this=exp.Literal.string(k), value=exp.Literal.string(v))
                 for k, v in ranges.properties().items()]
        spark.sql(exp.Alter(this=table_ref(table), kind="TABLE",
                            actions=[exp.AlterSet(expressions=[exp.Properties(expressions=pairs)])]).sql("spark"))


def load(spark, table: str) -> JoinRanges | None:
    return JoinRanges.from_properties(_properties(spark, table))


def refresh(spark, layout: Layout, say: Callable[[str], None] = lambda m: None) -> JoinRanges | None:
    """Compute and store the ranges of the join columns advise recorded in ``layout`` (or that the table
    already has ranges for): after apply, re-apply and append."""
    from planner.emit.ddl import layout_from_properties

    props = _properties(spark, layout.table)
    if "planner.layout.parts" in props:
        layout = layout_from_properties(props)  # the generation the table holds now
    columns = join_columns_of(layout)
    old = JoinRanges.from_properties(props)
    if old is not None:
        columns += [r.column for r in old.columns if r.column not in columns]
    if not columns:
        return None
    ranges = compute_join_ranges(spark, layout, columns, say)
    store(spark, layout.table, ranges)
    if ranges is not None:
        say(f"join ranges recorded for {len(ranges.columns)} joined column(s) of {layout.table}")
    return ranges


def after_apply(runner, layout: Layout, say: Callable[[str], None]) -> None:
    """Record the ranges once ``layout`` is in place (apply, re-apply, append). A failure here leaves
    the table without ranges (it then prunes by its own predicates only); it never fails the apply."""
    spark = getattr(runner, "spark", None)
    if spark is None:
        if join_columns_of(layout):
            say("join ranges not recorded: they are computed with Spark (run `planner apply` without --hiveserver2)")
        return
    try:
        refresh(spark, layout, say)
    except Exception as e:  # the data is already in place; pruning through joins is an extra
        say(f"join ranges not recorded: {str(e).splitlines()[0][:300]}")
        try:
            store(spark, layout.table, None)
        except Exception:
            pass


def join_context(spark, tables: Mapping[str, JoinRanges | None], read: Iterable[str],
                 entries: Callable[[str], CatalogEntry | None] | None = None):
    """``planner.rewrite.query_rewrite.JoinContext`` for a query reading ``read``: the ranges of its laid-out tables
    and the snapshots (now) of the tables those ranges depend on and the query reads. Without a Spark
    session (a thrift metastore, layout files) the snapshots are unknown and nothing prunes through
    joins; ``explain`` says so."""
    from planner.rewrite.query_rewrite import JoinContext

    ranges = {k: v for k, v in tables.items() if v is not None}
    if not ranges:
        return None
    read = set(read)
    need = {t for r in ranges.values() for c in r.columns for t in tables_of(c.column, r.table) if t in read}
    return JoinContext(ranges, snapshots(spark, sorted(need), entries) if spark is not None
                       else {t: None for t in need})


def context_for(spark, source, read: Sequence[tuple[str, str, str]], layouts: Mapping, columns: dict):
    """The join context of a query reading ``read`` (``(qualified, db, table)``) whose laid-out tables
    ``layouts`` came from ``source``; adds the joined tables' columns to ``columns`` (with Spark), so
    their unqualified names resolve."""
    entries = getattr(source, "entry", None)
    joins = join_context(spark, {q: getattr(source.lookup(db, name), "join_ranges", None)
                                 for q, db, name in read if q in layouts}, [q for q, _, _ in read], entries)
    if joins is not None and spark is not None:
        from hive_integration.spark.columns import spark_columns

        for q, db, name in read:
            if q in joins.snapshots and q not in columns:
                if entries is None:
                    columns[q] = spark_columns(spark, table_ref(f"{db}.{name}"))
                elif (entry := entries(f"{db}.{name}")) is not None:  # None: not readable, or a view shadows it
                    columns[q] = dict(entry.columns)
    return joins


__all__ = ["compute_join_ranges", "join_chain", "chained", "qualified_column", "usable_columns", "refresh", "store",
           "load", "join_context", "snapshots", "table_snapshot", "after_apply", "ranges_query", "context_for"]

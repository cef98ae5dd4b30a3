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

import math
import time
from typing import Callable, Iterable, Mapping, Protocol, Sequence

from sqlglot import exp

from hive_integration.spark.catalog import (
    CatalogEntry,
    catalog_entry,
    input_files,
    table_files,
)
from hive_integration.spark.catalog_cache import CatalogCache, SparkCatalogIO, forget, snapshot_digest
from planner.cnf.valueset import ValueSet
from planner.emit.join_sql import (
    SOURCE_ALIAS,
    chained,
    join_chain,
    qualified_column,
    table_counts,
    table_ref,
)
from planner.model.join_paths import JoinColumn, JoinPath
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
_SETS = (Kind.STRING, Kind.BOOLEAN, Kind.INTEGER)  # kinds whose few values are kept as a set per partition
_FACT = "f"  # the laid-out table in the ranges query
#: A first hop's table of at most this many rows is broadcast to the laid-out table's rows in the
#: ranges query (its join columns only: a key and a few values a row); a larger one is joined by
#: a shuffle of both sides.
BROADCAST_ROWS = 2_000_000
REFUTE_ROWS = 100_000  # rows a key's uniqueness is first checked on (``_counted``)


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
    return snapshot_digest(files, entry.properties)


def snapshots(spark, tables: Iterable[str]) -> dict[str, str | None]:
    """Each table's ``table_snapshot``, read now."""
    return {t: table_snapshot(spark, t) for t in dict.fromkeys(tables)}


class _Snapshots:
    """``snapshots`` of the same tables taken twice: the second time, their directories are
    listed again in one call (``catalog_cache``), not the tables read whole again."""

    def __init__(self, spark):
        self.spark = spark
        self.cache = CatalogCache(SparkCatalogIO(spark), ttl=math.inf)

    def now(self, tables: Iterable[str]) -> dict[str, str | None]:
        current = self.spark.catalog.currentDatabase().lower()
        keys = {t: t.lower() if "." in t else f"{current}.{t.lower()}" for t in tables}
        self.cache.begin()
        found = self.cache.snapshots(keys.values())
        return {t: found[k] for t, k in keys.items()}


# ---- where the ranges are computed ------------------------------------------------------------------
class RangesEngine(Protocol):
    """What computing and storing the ranges asks of an engine: a Spark session in this process
    (``SparkRanges``) or a HiveServer2 with its metastore (``hive_integration.metastore.hiveserver2_builds``)."""

    def rows(self, query: exp.Select) -> list[tuple]: ...  # the query's rows, values as Spark's collect() gives them

    def run(self, sql: str) -> list: ...  # one statement (SHOW, ALTER)

    def exists(self, table: str) -> bool: ...

    def entries(self, tables: Sequence[str]) -> Mapping[str, CatalogEntry | None]: ...

    def snapshots(self, tables: Iterable[str]) -> dict[str, str | None]: ...  # read now, each time asked


class SparkRanges:
    """``RangesEngine`` on a Spark session in this process."""

    def __init__(self, spark):
        self.spark = spark
        self._files: _Snapshots | None = None

    def rows(self, query: exp.Select) -> list[tuple]:
        return _run(self.spark, query)

    def run(self, sql: str) -> list:
        return self.spark.sql(sql).collect()

    def exists(self, table: str) -> bool:
        return bool(self.spark.catalog.tableExists(table))

    def entries(self, tables: Sequence[str]) -> Mapping[str, CatalogEntry | None]:
        from hive_integration.spark.catalog import catalog_entries

        return catalog_entries(self.spark, tables)

    def snapshots(self, tables: Iterable[str]) -> dict[str, str | None]:
        self._files = self._files or _Snapshots(self.spark)  # the second time: one listing call
        return self._files.now(tables)


def _engine(spark_or_engine) -> RangesEngine:
    """A ``RangesEngine`` as given, or a Spark session's."""
    return spark_or_engine if hasattr(spark_or_engine, "rows") else SparkRanges(spark_or_engine)


# ---- computing the ranges ---------------------------------------------------------------------------
def _counted(engine: RangesEngine, tables: Mapping[str, tuple[list[str], list[str]]], unique: dict, distinct: dict,
             say: Callable[[str], None]) -> dict[str, str]:
    """Counts every joined table once (``table_counts``): its rows and distinct values of each key
    into ``unique`` ((table, key) -> (rows, distinct keys)), an estimate of each candidate column's
    distinct values into ``distinct`` ((table, column) -> count). Returns why a table could not be read.

    A key is first checked on ``REFUTE_ROWS`` rows of its table (the first ones read, a ``LIMIT``):
    a key repeated there repeats in the table, and is not counted in full (``lineitem.l_orderkey``
    on a join path from lineitem to itself would otherwise cost a count of the fact table's keys).
    Such a key's figures are the sample's (rows > distinct)."""
    failed = {}
    for table, (keys, values) in tables.items():
        keys = [k for k in dict.fromkeys(keys) if (table, k) not in unique]
        values = [v for v in dict.fromkeys(values) if (table, v) not in distinct]
        if not keys and not values:
            continue
        try:
            if keys:
                head = engine.rows(table_counts(table, keys, (), limit=REFUTE_ROWS))[0]
                repeated = [k for i, k in enumerate(keys) if int(head[1 + i]) < int(head[0])]
                unique.update({(table, k): (int(head[0]), int(head[1 + keys.index(k)])) for k in repeated})
                keys = [k for k in keys if k not in repeated]
            if keys or values:
                row = engine.rows(table_counts(table, keys, values))[0]
                for i, k in enumerate(keys):
                    unique[(table, k)] = (int(row[0]), int(row[1 + i]))
                for i, v in enumerate(values):
                    distinct[(table, v)] = int(row[1 + len(keys) + i])
        except Exception as e:  # a table that is gone or unreadable: nothing to record through it
            failed[table] = str(e).splitlines()[0][:200]
    return failed


def _exists(engine: RangesEngine, table: str, memo: dict) -> bool:
    if table not in memo:
        try:
            memo[table] = engine.exists(table)
        except Exception:  # noqa: BLE001 - the catalog cannot say: let the query below answer
            memo[table] = True
    return memo[table]


def usable_columns(spark, table: str, columns: Sequence[JoinColumn], say: Callable[[str], None] = lambda m: None,
                   unique: dict | None = None, distinct: dict | None = None) -> list[tuple[JoinColumn, str]]:
    """The join columns that can be recorded, with their types (unique keys on every hop, an ordered kind).
    ``unique``: filled with (rows, distinct keys) per (table, key) of every hop looked at; ``distinct``:
    with an estimate of the distinct values of each string, boolean or integer column (``_small``).
    Each joined table is read once, for all its keys and columns together. ``spark``: a session, or
    a ``RangesEngine``."""
    engine = _engine(spark)
    unique = {} if unique is None else unique
    distinct = {} if distinct is None else distinct
    # a table the workload joins but the catalog lacks (``tpch.part`` where only lineitem was
    # loaded): one calm line, not the analyzer's TABLE_OR_VIEW_NOT_FOUND from a query on it
    exists: dict[str, bool] = {}
    hopped = sorted({h.table for c in columns for h in c.path.hops})
    present = [t for t in hopped if _exists(engine, t, exists)]
    entries = engine.entries(present) if present else {}
    types = {t: dict(e.columns) for t, e in entries.items() if e is not None}
    wanted: dict[str, tuple[list[str], list[str]]] = {}
    for c in columns:
        for h in c.path.hops:
            wanted.setdefault(h.table, ([], []))[0].append(h.key)
        t = types.get(c.path.table, {}).get(c.column)
        if t is not None and parse_type(t).kind in _SETS:
            wanted.setdefault(c.path.table, ([], []))[1].append(c.column)
    failed = _counted(engine, {t: w for t, w in wanted.items() if t in types}, unique, distinct, say)
    failed.update({t: f"{t} is not a table in the catalog" if not exists.get(t, True) else f"table {t} cannot be read"
                   for t in wanted if t not in types})
    out = []
    for c in columns:
        gone = next((failed[h.table] for h in c.path.hops if h.table in failed), None)
        if gone is not None:
            say(f"join column {c.describe()} not recorded: {gone}")
            continue
        t = types[c.path.table].get(c.column)
        if not all(unique[(h.table, h.key)][0] == unique[(h.table, h.key)][1] for h in c.path.hops):
            say(f"join column {c.describe()} not recorded: a hop does not join a unique key (the join would fan out)")
        elif t is None:
            say(f"join column {c.describe()} not recorded: {c.path.table} has no column {c.column}")
        elif parse_type(t).kind not in _KINDS:
            say(f"join column {c.describe()} not recorded: type {t} is not recorded (float and timestamp ranges are not)")
        else:
            out.append((c, t))
    return out


def ranges_query(table: str, partition_column: str, columns: Sequence[tuple[JoinColumn, str]],
                 small: Mapping[JoinColumn, bool], broadcast: Iterable[str] = ()) -> exp.Select:
    """The one query that computes every column's per-partition aggregates (see the module's notes).

    The joined tables are joined to each other first, one subquery per first hop (orders with its
    customers, nations and regions), and each subquery to the laid-out table once, on the key
    (``LEFT JOIN`` is associative here: every ON is false on a missing partner). So the laid-out
    table's rows meet each first hop once, narrow (its partition and join columns), and a
    subquery whose first table is in ``broadcast`` is broadcast: the big table is not shuffled for it.
    ``l JOIN (o JOIN c)`` rather than ``(l JOIN o) JOIN c`` also keeps the laid-out table's rows out
    of the joins further down the path."""
    groups: dict = {}
    for i, (c, _) in enumerate(columns):
        groups.setdefault(c.path.hops[0], []).append(i)
    broadcast = set(broadcast)
    order = sorted(groups, key=lambda h: h.table in broadcast)  # the shuffled joins first, while rows are narrow
    q = exp.select(qualified_column(_FACT, partition_column).as_("pid"))
    hinted = []
    for g, hop in enumerate(order):
        alias = f"d{g}"
        rest = [JoinColumn(JoinPath(columns[i][0].path.hops[1:]), columns[i][0].column) for i in groups[hop]]
        aliases, joins = join_chain(rest)
        dim = exp.select(qualified_column(SOURCE_ALIAS, hop.key).as_("k"))
        for i, c in zip(groups[hop], rest):
            end = aliases[c.path.hops]
            last = columns[i][0].path.hops[-1].key
            dim = dim.select(qualified_column(end, c.column).as_(f"v{i}"), qualified_column(end, last).as_(f"n{i}"),
                             copy=False)
        dim = chained(dim, table_ref(hop.table), joins)
        q = q.join(exp.Subquery(this=dim, alias=exp.TableAlias(this=exp.to_identifier(alias))),
                   on=exp.EQ(this=qualified_column(_FACT, hop.column), expression=qualified_column(alias, "k")),
                   join_type="left", copy=False)
        if hop.table in broadcast:
            hinted.append(exp.column(alias))
        for i in groups[hop]:
            value, key = qualified_column(alias, f"v{i}"), qualified_column(alias, f"n{i}")
            null_seen = exp.Case(ifs=[exp.If(this=exp.and_(exp.Not(this=exp.Is(this=key, expression=exp.Null())),
                                                                 exp.Is(this=value.copy(), expression=exp.Null())),
                                             true=exp.Literal.number(1))], default=exp.Literal.number(0))
            aggs = [exp.Min(this=value.copy()).as_(f"c{i}_min"), exp.Max(this=value.copy()).as_(f"c{i}_max"),
                    exp.Max(this=null_seen).as_(f"c{i}_null")]
            if small.get(columns[i][0]):
                aggs.append(exp.Anonymous(this="collect_set", expressions=[value.copy()]).as_(f"c{i}_set"))
            q = q.select(*aggs, copy=False)
    q = q.from_(exp.alias_(table_ref(table), _FACT, table=True), copy=False)
    if hinted:
        q.set("hint", exp.Hint(expressions=[exp.Anonymous(this="BROADCAST", expressions=hinted)]))
    return q.group_by(qualified_column(_FACT, partition_column), copy=False)


def _small(c: JoinColumn, t: str, distinct: Mapping[tuple[str, str], int]) -> bool:
    """Whether ``c``'s values are few enough to keep as a set per partition: at most ``SMALL_SET``
    distinct values in its table, by Spark's estimate (HyperLogLog++, exact in practice at this
    size). Only the cost of the per-partition sets depends on it, not what is recorded: a
    partition whose values are more than ``SMALL_SET`` is recorded as its [min, max]."""
    return parse_type(t).kind in _SETS and distinct.get((c.path.table, c.column), SMALL_SET + 1) <= SMALL_SET


def _value_set(kind: Kind, lo, hi, null_seen, values) -> ValueSet:
    if lo is None:
        vs = ValueSet.nothing(kind)
    elif values is not None and len(values) <= SMALL_SET:
        vs = ValueSet.points(kind, [v for v in values if v is not None])
    else:
        vs = ValueSet.range(kind, lo, hi)
    return vs.union(ValueSet.only_null(kind)) if null_seen else vs


def compute_join_ranges(spark, layout: Layout, columns: Sequence[JoinColumn],
                        say: Callable[[str], None] = lambda m: None,
                        seconds: dict[str, float] | None = None) -> JoinRanges | None:
    """The ranges of ``columns`` over ``layout.table``'s partitions as they are now (None: nothing to
    record). ``seconds``: filled with the time of each part (the tables' counts, the ranges query).
    ``spark``: a session, or a ``RangesEngine``."""
    engine = _engine(spark)
    seconds = {} if seconds is None else seconds
    t0 = time.monotonic()
    tables = [layout.table] + [h.table for c in columns for h in c.path.hops]
    before = engine.snapshots(tables)
    unique: dict = {}
    distinct: dict = {}
    usable = usable_columns(engine, layout.table, columns, say, unique, distinct)
    seconds["counts"] = round(time.monotonic() - t0, 3)
    if not usable:
        return None
    t0 = time.monotonic()
    small = {c: _small(c, t, distinct) for c, t in usable}
    broadcast = {h.table for c, _ in usable for h in c.path.hops[:1]
                 if unique.get((h.table, h.key), (BROADCAST_ROWS + 1,))[0] <= BROADCAST_ROWS}
    query = ranges_query(layout.table, layout.partition_column, usable, small, broadcast)
    names = [e.alias_or_name for e in query.selects]
    rows = engine.rows(query)
    seconds["ranges query"] = round(time.monotonic() - t0, 3)
    out = []
    for i, (c, t) in enumerate(usable):
        kind = parse_type(t).kind
        per = []
        for r in rows:
            d = dict(zip(names, r))
            per.append((int(d["pid"]), _value_set(kind, d[f"c{i}_min"], d[f"c{i}_max"], d[f"c{i}_null"],
                                                 d.get(f"c{i}_set"))))
        out.append(JoinRange(c, t, tuple(sorted(per, key=lambda x: x[0]))))
    after = engine.snapshots(tables)
    if before != after:
        say("join ranges not recorded: a table changed while they were computed")
        return None
    used = [layout.table] + [h.table for c, _ in usable for h in c.path.hops]
    return JoinRanges(layout.table, layout.generation, tuple(sorted((t, after[t]) for t in dict.fromkeys(used))),
                      tuple(out))


# ---- storing, refreshing, reading --------------------------------------------------------------------
def _properties(engine: RangesEngine, table: str) -> dict[str, str]:
    return {r[0]: r[1] for r in engine.run("SHOW TBLPROPERTIES " + table_ref(table).sql(dialect="spark"))}


def store(spark, table: str, ranges: JoinRanges | None) -> None:
    """Replace the table's stored ranges by ``ranges`` (None: just drop the old ones). ``spark``: a
    session, or a ``RangesEngine``."""
    engine = _engine(spark)
    t = table_ref(table).sql(dialect="spark")
    try:
        old = stale_property_keys(_properties(engine, table))
        if old:
            keys = ", ".join(exp.Literal.string(k).sql("spark") for k in old)
            engine.run(f"ALTER TABLE {t} UNSET TBLPROPERTIES IF EXISTS ({keys})")
        if ranges is not None:
            pairs = [exp.Property(this=exp.Literal.string(k), value=exp.Literal.string(v))
                     for k, v in ranges.properties().items()]
            engine.run(exp.Alter(this=table_ref(table), kind="TABLE",
                                actions=[exp.AlterSet(expressions=[exp.Properties(expressions=pairs)])]).sql("spark"))
    finally:
        forget(table)  # planner.sql's caches read the table's ranges again with the next query


def load(spark, table: str) -> JoinRanges | None:
    return JoinRanges.from_properties(_properties(_engine(spark), table))


def refresh(spark, layout: Layout, say: Callable[[str], None] = lambda m: None,
            seconds: dict[str, float] | None = None) -> JoinRanges | None:
    """Compute and store the ranges of the join columns advise recorded in ``layout`` (or that the table
    already has ranges for): after apply, re-apply and append. ``seconds``: filled with each part's time.
    ``spark``: a session, or a ``RangesEngine``."""
    from planner.emit.ddl import layout_from_properties

    engine = _engine(spark)
    props = _properties(engine, layout.table)
    if "planner.layout.parts" in props:
        layout = layout_from_properties(props)  # the generation the table holds now
    columns = join_columns_of(layout)
    old = JoinRanges.from_properties(props)
    if old is not None:
        columns += [r.column for r in old.columns if r.column not in columns]
    if not columns:
        return None
    ranges = compute_join_ranges(engine, layout, columns, say, seconds)
    t0 = time.monotonic()
    store(engine, layout.table, ranges)
    if seconds is not None:
        seconds["store"] = round(time.monotonic() - t0, 3)
    if ranges is not None:
        say(f"join ranges recorded for {len(ranges.columns)} joined column(s) of {layout.table}")
    return ranges


def after_apply(runner, layout: Layout, say: Callable[[str], None], seconds: dict[str, float] | None = None) -> None:
    """Record the ranges once ``layout`` is in place (apply, re-apply, append). A failure here leaves
    the table without ranges (it then prunes by its own predicates only); it never fails the apply."""
    forget(layout.table)  # planner.sql's caches in this process read the table again
    spark = getattr(runner, "spark", None)
    engine = SparkRanges(spark) if spark is not None else getattr(runner, "ranges_engine", lambda: None)()
    if engine is None:
        if join_columns_of(layout):
            say("join ranges not recorded: through HiveServer2 they need the metastore to list the tables' files "
                "(name it with --metastore or hive.metastore.uris)")
        return
    try:
        refresh(engine, layout, say, seconds)
    except Exception as e:  # the data is already in place; pruning through joins is an extra
        say(f"join ranges not recorded: {str(e).splitlines()[0][:300]}")
        try:
            store(engine, layout.table, None)
        except Exception:
            pass


def join_context(spark, tables: Mapping[str, JoinRanges | None], read: Iterable[str],
                 snapshots_of: Callable[[list[str]], Mapping[str, str | None]] | None = None):
    """``planner.rewrite.query_rewrite.JoinContext`` for a query reading ``read``: the ranges of its laid-out tables
    and the snapshots (now) of the tables those ranges depend on and the query reads.
    ``snapshots_of``: the tables' snapshots as the caller keeps them (``SparkCatalogLayouts`` and
    ``MetastoreLayouts.snapshots``: None for a table a temporary view shadows, or whose files cannot
    be listed), else read through ``spark``. With neither (layout files) the snapshots are unknown
    and nothing prunes through joins; ``explain`` says so."""
    from planner.rewrite.query_rewrite import JoinContext

    ranges = {k: v for k, v in tables.items() if v is not None}
    if not ranges:
        return None
    read = set(read)
    need = {t for r in ranges.values() for c in r.columns for t in tables_of(c.column, r.table) if t in read}
    if snapshots_of is None and spark is None:
        return JoinContext(ranges, {t: None for t in need})
    return JoinContext(ranges, dict((snapshots_of or (lambda ts: snapshots(spark, ts)))(sorted(need))))


def context_for(spark, source, read: Sequence[tuple[str, str, str]], layouts: Mapping, columns: dict):
    """The join context of a query reading ``read`` (``(qualified, db, table)``) whose laid-out tables
    ``layouts`` came from ``source``; adds the joined tables' columns to ``columns`` (from the
    source's catalog entries, or Spark's), so their unqualified names resolve."""
    entries = getattr(source, "entry", None)
    joins = join_context(spark, {q: getattr(source.lookup(db, name), "join_ranges", None)
                                 for q, db, name in read if q in layouts}, [q for q, _, _ in read],
                         getattr(source, "snapshots", None))
    if joins is not None and (spark is not None or entries is not None):
        for q, db, name in read:
            if q in joins.snapshots and q not in columns:
                if entries is None:
                    from hive_integration.spark.columns import spark_columns

                    columns[q] = spark_columns(spark, table_ref(f"{db}.{name}"))
                elif (entry := entries(f"{db}.{name}")) is not None:  # None: not readable, or a view shadows it
                    columns[q] = dict(entry.columns)
    return joins


__all__ = ["compute_join_ranges", "join_chain", "chained", "qualified_column", "usable_columns", "refresh", "store",
           "load", "join_context", "snapshots", "table_snapshot", "after_apply", "ranges_query", "context_for",
           "RangesEngine", "SparkRanges"]

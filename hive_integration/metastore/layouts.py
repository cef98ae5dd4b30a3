"""Where a laid-out table's layout is found: its table properties, or an advice folder.

``planner apply`` records the layout as versioned JSON in the table's TBLPROPERTIES
(``planner.emit.ddl.layout_properties``). Three ways to read it back, one interface:

* ``SparkCatalogLayouts``: through a Spark session (the embedded Derby metastore can only be
  reached that way);
* ``MetastoreLayouts``: straight from a Hive Metastore over thrift, with no Spark at all;
* ``FileLayouts``: from ``layout.json`` files (offline, e.g. to review a rewrite before applying).

Each answers ``lookup(db, table)`` with the table's layout and columns, or ``None`` for a table
that is not laid out (or does not exist: the engine will report that when the query runs).
``sql(spark, text)`` (re-exported as ``planner.sql``) runs a query through the rewrite, under the
session's own settings (``session_settings``).
"""
from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping, Protocol

from hive_integration.spark.catalog import CatalogEntry, temp_view_exists, temp_views
from hive_integration.spark.catalog_cache import (
    CatalogCache,
    SparkCatalogIO,
    session_cache,
)
from planner.emit.ddl import columns_of_create, layout_from_properties
from planner.errors import LayoutError, SchemaError
from planner.model.layout import Layout
from planner.pruning.join_pruning import JoinRanges
from planner.rewrite.aggregate_rewrite import rewrite_statement
from planner.rewrite.query_rewrite import tables_read
from planner.semantics.settings import DEFAULT_TIME_ZONE, Settings

LAYOUT_KEY = "planner.layout.parts"


@dataclass(frozen=True)
class TableLayout:
    table: str  # db.t, lower case
    layout: Layout
    columns: dict[str, str] = field(default_factory=dict)  # column -> type, partition column excluded
    join_ranges: JoinRanges | None = None  # per-partition ranges of joined columns (planner.pruning.join_pruning)
    properties: Mapping[str, str] | None = field(default=None, hash=False, compare=False)  # the table's (aggregate index state)


class LayoutSource(Protocol):
    def lookup(self, db: str, name: str) -> TableLayout | None: ...


_PARSED: dict[str, Layout] = {}  # layout JSON checksum -> parsed layout (a re-applied layout has a new one)


def _layout_of(props: dict[str, str]) -> Layout | None:
    if LAYOUT_KEY not in props:
        return None
    key = props.get("planner.layout.sha256") or hashlib.sha256(
        "".join(v for k, v in sorted(props.items()) if k.startswith("planner.layout.")).encode()).hexdigest()
    if key not in _PARSED:
        _PARSED[key] = layout_from_properties(props)
    return _PARSED[key]


class _Cached:
    def __init__(self):
        self._seen: dict[tuple[str, str], TableLayout | None] = {}

    def lookup(self, db: str, name: str) -> TableLayout | None:
        key = (db.lower(), name.lower())
        if key not in self._seen:
            self._seen[key] = self._find(*key)
        return self._seen[key]

    def _find(self, db: str, name: str) -> TableLayout | None:  # pragma: no cover - abstract
        raise NotImplementedError


_UNREAD = object()


class SparkCatalogLayouts(_Cached):
    def __init__(self, spark, cache: CatalogCache | None = None, current_db: str | None = None):
        """``cache``: the session's (``planner.sql``: checked again for each query); by default one
        of its own that reads each table's entry and files once, for as long as this source lives
        (one ``planner rewrite`` run). ``current_db``: the session's current database, if known."""
        super().__init__()
        self.spark = spark
        self.cache = cache if cache is not None else CatalogCache(SparkCatalogIO(spark), ttl=math.inf, recheck=False)
        self._current = current_db.lower() if current_db else None
        self._shadows: dict[str, bool] = {}
        self._views: frozenset[str] | None | object = _UNREAD

    def entry(self, table: str) -> CatalogEntry | None:
        """``table``'s (``db.name``) catalog entry (properties, columns, location), or None when the
        table cannot be read. The joined tables' snapshots and columns reuse it.

        Also None for a table of the current database that a temporary view of the same name
        shadows: the query's unqualified name reads the view, whose rows neither the table's layout
        nor ranges recorded from it describe (a qualified name to the table then goes unpruned too:
        the rewrite sees names already qualified)."""
        key = self._key(table)
        return None if self._shadowed(key) else self.cache.entry(key)

    def read_entries(self, tables: Iterable[str]) -> None:
        """Reads the entries of ``tables`` (``db.name``) together: one metastore call per database
        (none when the cache holds them)."""
        keys = list(dict.fromkeys(map(self._key, tables)))
        self.cache.entries([k for k in keys if not self._shadowed(k)])

    def snapshots(self, tables: Iterable[str]) -> dict[str, str | None]:
        """Each table's snapshot now (``join_ranges.table_snapshot``), None for one a temporary view
        shadows (the query reads the view's rows)."""
        keys = {t: self._key(t) for t in tables}
        found = self.cache.snapshots([k for k in keys.values() if not self._shadowed(k)])
        return {t: found.get(k) for t, k in keys.items()}

    def token(self, table: str) -> tuple:
        """What the rewrite of a query reading ``table`` depends on in its entry (for ``CatalogCache.rewrite``)."""
        key = self._key(table)
        return (key, None) if self._shadowed(key) else (key, self.cache.version(key))

    def _key(self, table: str) -> str:
        db, _, name = table.lower().rpartition(".")
        if self._current is None:
            self._current = self.spark.catalog.currentDatabase().lower()
        return f"{db or self._current}.{name}"

    def _shadowed(self, key: str) -> bool:
        db, _, name = key.rpartition(".")
        if db != self._current:
            return False
        if self._views is _UNREAD:
            self._views = temp_views(self.spark)  # all of them in one call, once for this source
        if self._views is not None:
            return name in self._views
        if name not in self._shadows:
            self._shadows[name] = temp_view_exists(self.spark, name)
        return self._shadows[name]

    def _find(self, db: str, name: str) -> TableLayout | None:
        key = f"{db}.{name}"
        if self._shadowed(key):
            return None
        return self.cache.derived(key, "layout", lambda entry: _table_layout(key, entry))


def _table_layout(table: str, entry: CatalogEntry | None) -> TableLayout | None:
    if entry is None:
        return None  # no such table: the engine reports it when the query runs
    layout = _layout_of(entry.properties)
    if layout is None:
        return None
    pcol = layout.partition_column.lower()
    columns = {c: t for c, t in entry.columns.items() if c != pcol}
    return TableLayout(table, layout, columns, JoinRanges.from_properties(entry.properties), entry.properties)


class MetastoreLayouts(_Cached):
    def __init__(self, client, hadoop: Mapping[str, str] | None = None):
        """``client``: an open ``hive_integration.metastore.thrift_client.MetastoreClient``. Each
        table's entry and files are read once, for as long as this source lives (one ``planner
        rewrite`` run): the files through pyarrow (``file_catalog``; ``hadoop``: S3A settings), so
        join ranges and the aggregate index are checked against the table as it is, with no Spark."""
        # imported here: it loads pyarrow, which layout files (``FileLayouts``) never need
        from hive_integration.metastore.file_catalog import MetastoreCatalogIO

        super().__init__()
        self.client = client
        self.cache = CatalogCache(MetastoreCatalogIO(client, hadoop), ttl=math.inf, recheck=False)

    def entry(self, table: str) -> CatalogEntry | None:
        """``table``'s (``db.name``) catalog entry, or None when there is no such table."""
        return self.cache.entry(_qualified(table))

    def snapshots(self, tables: Iterable[str]) -> dict[str, str | None]:
        """Each table's snapshot now (``join_ranges.table_snapshot``, from the files pyarrow lists)."""
        keys = {t: _qualified(t) for t in tables}
        found = self.cache.snapshots(keys.values())
        return {t: found.get(k) for t, k in keys.items()}

    def _find(self, db: str, name: str) -> TableLayout | None:
        entry = self.cache.entry(f"{db}.{name}")  # one metastore call a table, once a run
        if entry is None or entry.view:
            return None
        params = dict(entry.properties)
        layout = _layout_of(params)
        if layout is None:
            return None
        skip = set(entry.partition_columns) | {layout.partition_column.lower()}
        columns = {c: t for c, t in entry.columns.items() if c not in skip}
        return TableLayout(f"{db}.{name}", layout, columns, JoinRanges.from_properties(params), params)


def _qualified(table: str) -> str:
    table = table.lower()
    return table if "." in table else f"default.{table}"


class FileLayouts(_Cached):
    def __init__(self, paths: Iterable[str | Path]):
        super().__init__()
        self.by_table: dict[str, TableLayout] = {}
        for p in paths:
            path = Path(p)
            folder = path if path.is_dir() else path.parent
            file = path / "layout.json" if path.is_dir() else path
            try:
                layout = Layout.loads(file.read_text(encoding="utf-8"))
            except OSError as e:
                raise LayoutError(f"{file}: cannot read the layout: {e.strerror or e}") from None
            except LayoutError as e:
                raise LayoutError(f"{file}: {e}") from None
            ddl = folder / "ddl.sql"  # the advice folder's CREATE TABLE, when present
            columns = columns_of_create(ddl.read_text(encoding="utf-8"), layout.partition_column, str(ddl)) \
                if ddl.exists() else {}
            name = layout.table.lower()
            self.by_table[name if "." in name else f"default.{name}"] = TableLayout(name, layout, columns)

    def _find(self, db: str, name: str) -> TableLayout | None:
        return self.by_table.get(f"{db}.{name}")


def layouts_for(sql: str, source: LayoutSource, *, dialect: str, current_db: str | None
                ) -> tuple[dict[str, Layout], dict[str, dict[str, str]]]:
    """The layouts (and columns) of the laid-out tables ``sql`` reads, keyed as the rewriter names them."""
    return layouts_of(tables_read(sql, dialect=dialect, current_db=current_db), source)


def layouts_of(tables: Iterable[tuple[str, str, str]], source: LayoutSource
               ) -> tuple[dict[str, Layout], dict[str, dict[str, str]]]:
    """The layouts (and columns) of ``(qualified name, database, table)`` triples that are laid out."""
    layouts: dict[str, Layout] = {}
    columns: dict[str, dict[str, str]] = {}
    for qualified, db, name in tables:
        found = source.lookup(db, name)
        if found is not None:
            layouts[qualified] = found.layout
            if found.columns:
                columns[qualified] = found.columns
    return layouts, columns


def index_contexts(spark, source, read, layouts) -> dict:
    """The aggregate index of each laid-out table of ``read`` (``(qualified, db, table)``), as
    ``planner.rewrite.aggregate_rewrite.IndexContext``: usable only when its build matches the table now
    (``hive_integration.spark.cells.index_context``; the snapshot is the source's, a Spark session's
    or a thrift metastore's listing; from layout files it cannot be checked, and says so)."""
    from hive_integration.spark.cells import index_context

    out = {}
    entries = getattr(source, "entry", None)
    snapshots = getattr(source, "snapshots", None)  # the session's cache keeps them (SparkCatalogLayouts)
    for q, db, name in read:
        if q not in layouts or layouts[q].aggregate_index is None:
            continue
        found = source.lookup(db, name)
        entry = entries(f"{db}.{name}") if entries is not None else None
        now = snapshots([f"{db}.{name}"]).get(f"{db}.{name}", None) if snapshots is not None else ...
        ctx = index_context(spark, f"{db}.{name}", layouts[q], getattr(found, "properties", None), entry, now)
        if ctx is not None:
            out[q] = ctx
    return out


def decimal_precision_loss(spark) -> bool:
    """``spark.sql.decimalOperations.allowPrecisionLoss`` (true by default)."""
    return str(spark.conf.get("spark.sql.decimalOperations.allowPrecisionLoss", "true")).strip().lower() != "false"


def session_settings(spark) -> Settings:
    """The settings of a Spark session that change what a query means (ANSI mode, time zone)."""
    ansi = str(spark.conf.get("spark.sql.ansi.enabled", "true")).strip().lower() == "true"
    return Settings(ansi, str(spark.conf.get("spark.sql.session.timeZone", DEFAULT_TIME_ZONE)))


def sql(spark, text: str, *, dialect: str = "spark", fresh: bool = False):
    """``spark.sql(text)``, reading only the partitions each laid-out table scan may need, and
    answering an aggregate query from its table's aggregate index where one answers it exactly.

    Layouts come from the tables' TBLPROPERTIES; tables without one are left alone. The rewrite
    follows this session's ANSI mode and time zone. What it reads of the catalog is kept for the
    session and checked for each query (``hive_integration.spark.catalog_cache``): the tables'
    files are listed again, so new files (an INSERT, an append, an apply) are seen at once, and an
    entry changed in the metastore alone is seen within the cache's TTL; ``fresh`` reads
    everything again now. Should an apply swap the table between reading its layout and running
    the query, the query's filter does not know the new layout's partition ids and reads them all.

    A layout read before such a change is therefore never a wrong subset, but it may name what the
    table no longer has (a rollback by hand to a table without the partition column): when Spark
    cannot analyse the rewritten text, the catalog is read again and the query rewritten once more
    (and, rewritten the same, Spark's error is the query's own).
    """
    rewritten = rewrite(spark, text, dialect=dialect, fresh=fresh)
    if fresh or rewritten == text:
        return spark.sql(rewritten)
    from pyspark.errors import AnalysisException

    try:
        return spark.sql(rewritten)
    except AnalysisException:
        again = rewrite(spark, text, dialect=dialect, fresh=True)
        if again == rewritten:
            raise
    return spark.sql(again)


def rewrite(spark, text: str, *, dialect: str = "spark", fresh: bool = False) -> str:
    """The text ``sql`` runs for ``text`` now (``text`` itself when nothing is laid out or prunable)."""
    return rewritten(spark, text, dialect=dialect, fresh=fresh)[0]


def rewritten(spark, text: str, *, dialect: str = "spark", saved: bool = False, fresh: bool = False):
    """``(text as planner.sql runs it, what the aggregate index did or None)``: each laid-out table
    scan narrowed to its partitions, an aggregate query answered from its table's aggregate index
    where that is exact. ``saved``: rewrite as ``planner rewrite`` does (for any session: both ANSI
    modes, the layout's time zone) instead of for this session."""
    cache = session_cache(spark)
    with cache.lock:  # one query's look-ups at a time: they share the session's cache
        if fresh:
            cache.forget()
        cache.begin()
        return _rewrite(spark, cache, text, dialect, saved)


def _rewrite(spark, cache: CatalogCache, text: str, dialect: str, saved: bool = False):
    current_db = spark.catalog.currentDatabase()
    read = cache.rewrite(("tables", text, dialect, current_db),
                         lambda: tuple(tables_read(text, dialect=dialect, current_db=current_db)))
    source = SparkCatalogLayouts(spark, cache, current_db)
    # every table the query reads: its files checked first (one listing call), so an entry whose
    # table changed (an apply, a re-layout, an INSERT, by anyone) is read again before it is used
    source.snapshots(f"{db}.{name}" for _, db, name in read)
    layouts, columns = layouts_of(read, source)
    if not layouts:
        return text, None
    # Spark replaces ${…} in the text, quoted literals included, before parsing it ('${x}' may run
    # as ''); the planner reads the text as written, so such a query is not pruned (unless the
    # session turned substitution off).
    substituted = "${" in text and str(spark.conf.get("spark.sql.variable.substitute", "true")).lower() != "false"
    from hive_integration.spark.join_ranges import context_for

    joins = context_for(spark, source, read, layouts, columns)
    indexes = index_contexts(spark, source, read, layouts)
    if indexes and not decimal_precision_loss(spark):
        indexes = {}  # the rewrite's decimal average assumes Spark's default (see aggregate_rewrite)
    if indexes and not saved:  # the text runs now: its index's head is checked here, not in the text
        from hive_integration.spark.cells import checked_now

        cells = source.snapshots([c.state.cells_table for c in indexes.values() if c.state is not None])
        indexes = {q: checked_now(spark, c, cells.get(c.state.cells_table) if c.state else None, cache.rewrite)
                   for q, c in indexes.items()}
    settings = None if saved else session_settings(spark)
    # an index's use depends on its table's files now (a plain INSERT changes them, not the entry)
    # and on its build (the entry's properties): both are in the key
    key = ("rewrite", text, dialect, current_db, substituted, settings,
           tuple(source.token(f"{db}.{name}") for _, db, name in read),
           tuple(sorted(joins.snapshots.items())) if joins is not None else None,
           tuple(sorted((q, c.why_not, c.state.stamp if c.state else None, c.checked) for q, c in indexes.items())))
    return cache.rewrite(key, lambda: _rewritten(spark, text, layouts, dialect, current_db, columns,
                                                 not substituted, settings, joins, indexes))


def _rewritten(spark, text: str, layouts, dialect: str, current_db: str, columns, prune: bool,
               settings: Settings | None, joins, indexes):
    try:
        out, _, explanation = rewrite_statement(
            text, layouts, dialect=dialect, current_db=current_db, schema=columns, prune=prune, settings=settings,
            joins=joins, indexes=indexes, names=lambda q: spark.sql(q).columns if q == text else None)
        return out, explanation
    except SchemaError:
        return text, None  # our column resolution is stricter than Spark's; the query still runs, unpruned

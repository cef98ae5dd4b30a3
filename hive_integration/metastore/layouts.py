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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Protocol

from hive_integration.spark.catalog import (
    CatalogEntry,
    catalog_entries,
    catalog_entry,
    temp_view_exists,
)
from planner.emit.ddl import columns_of_create, layout_from_properties
from planner.errors import LayoutError, SchemaError
from planner.model.layout import Layout
from planner.pruning.join_pruning import JoinRanges
from planner.rewrite.query_rewrite import rewrite_query, tables_read
from planner.semantics.settings import DEFAULT_TIME_ZONE, Settings

LAYOUT_KEY = "planner.layout.parts"


@dataclass(frozen=True)
class TableLayout:
    table: str  # db.t, lower case
    layout: Layout
    columns: dict[str, str] = field(default_factory=dict)  # column -> type, partition column excluded
    join_ranges: JoinRanges | None = None  # per-partition ranges of joined columns (planner.pruning.join_pruning)


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


class SparkCatalogLayouts(_Cached):
    def __init__(self, spark):
        super().__init__()
        self.spark = spark
        self._entries: dict[str, CatalogEntry | None] = {}
        self._current: str | None = None

    def entry(self, table: str) -> CatalogEntry | None:
        """``table``'s (``db.name``) catalog entry (properties, columns, location), read once by this
        source (a source lives for one query), or None when the table cannot be read. The joined
        tables' snapshots and columns reuse it.

        Also None for a table of the current database that a temporary view of the same name
        shadows: the query's unqualified name reads the view, whose rows neither the table's layout
        nor ranges recorded from it describe (a qualified name to the table then goes unpruned too:
        the rewrite sees names already qualified)."""
        key = self._key(table)
        if key not in self._entries:
            self._entries[key] = None if self._shadowed(key) else catalog_entry(self.spark, key)
        return self._entries[key]

    def read_entries(self, tables: Iterable[str]) -> None:
        """Reads the entries of ``tables`` (``db.name``) together: one metastore call per database."""
        keys = [k for k in dict.fromkeys(map(self._key, tables)) if k not in self._entries]
        shadowed = {k for k in keys if self._shadowed(k)}
        self._entries.update({k: None for k in shadowed})
        self._entries.update(catalog_entries(self.spark, [k for k in keys if k not in shadowed]))

    def _key(self, table: str) -> str:
        db, _, name = table.lower().rpartition(".")
        if self._current is None:
            self._current = self.spark.catalog.currentDatabase().lower()
        return f"{db or self._current}.{name}"

    def _shadowed(self, key: str) -> bool:
        db, _, name = key.rpartition(".")
        return db == self._current and temp_view_exists(self.spark, name)

    def _find(self, db: str, name: str) -> TableLayout | None:
        entry = self.entry(f"{db}.{name}")
        if entry is None:
            return None  # no such table: the engine reports it when the query runs
        layout = _layout_of(entry.properties)
        if layout is None:
            return None
        pcol = layout.partition_column.lower()
        columns = {c: t for c, t in entry.columns.items() if c != pcol}
        return TableLayout(f"{db}.{name}", layout, columns, JoinRanges.from_properties(entry.properties))


class MetastoreLayouts(_Cached):
    def __init__(self, client):
        """``client``: an open ``hive_integration.metastore.thrift_client.MetastoreClient``."""
        super().__init__()
        self.client = client

    def _find(self, db: str, name: str) -> TableLayout | None:
        if not self.client.table_exists(db, name):
            return None
        params = self.client.table_parameters(db, name)
        layout = _layout_of(params)
        if layout is None:
            return None
        pcol = layout.partition_column.lower()
        columns = {c.lower(): t for c, t in self.client.columns(db, name) if c.lower() != pcol}
        return TableLayout(f"{db}.{name}", layout, columns, JoinRanges.from_properties(params))


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


def session_settings(spark) -> Settings:
    """The settings of a Spark session that change what a query means (ANSI mode, time zone)."""
    ansi = str(spark.conf.get("spark.sql.ansi.enabled", "true")).strip().lower() == "true"
    return Settings(ansi, str(spark.conf.get("spark.sql.session.timeZone", DEFAULT_TIME_ZONE)))


def sql(spark, text: str, *, dialect: str = "spark"):
    """``spark.sql(text)``, reading only the partitions each laid-out table scan may need.

    Layouts come from the tables' TBLPROPERTIES (parsed once per layout checksum, so a re-applied
    layout is picked up); tables without one are left alone. The rewrite follows this session's
    ANSI mode and time zone. Should an apply swap the table between reading its layout and running
    the query, the query's filter does not know the new layout's partition ids and reads them all.
    """
    current_db = spark.catalog.currentDatabase()
    source = SparkCatalogLayouts(spark)
    read = tables_read(text, dialect=dialect, current_db=current_db)
    source.read_entries(f"{db}.{name}" for _, db, name in read)
    layouts, columns = layouts_of(read, source)
    if layouts:
        # Spark replaces ${…} in the text, quoted literals included, before parsing it ('${x}' may run
        # as ''); the planner reads the text as written, so such a query is not pruned (unless the
        # session turned substitution off).
        substituted = "${" in text and str(spark.conf.get("spark.sql.variable.substitute", "true")).lower() != "false"
        try:
            from hive_integration.spark.join_ranges import context_for

            joins = context_for(spark, source, read, layouts, columns)
            text, _ = rewrite_query(text, layouts, dialect=dialect, current_db=current_db, schema=columns,
                                    prune=not substituted, settings=session_settings(spark), joins=joins)
        except SchemaError:
            pass  # our column resolution is stricter than Spark's; the query still runs, unpruned
    return spark.sql(text)

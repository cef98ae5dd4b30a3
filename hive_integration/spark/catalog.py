"""A table's catalog entry and data files, read straight from Spark's session catalog.

The rewrite reads, for every table a query names, its TBLPROPERTIES (is it laid out?), its
columns (the types the rewrite compares by, and the joined tables' names) and, for the joined
tables, a snapshot of their data files (``join_ranges.table_snapshot``). Through Spark SQL that
was ``SHOW TBLPROPERTIES`` + ``DESCRIBE`` + ``spark.table(t).inputFiles()`` per table: three
statements parsed, analysed and collected for every table of every query.
Here one call to the session catalog gives all three (``getTableRawMetadata``, or
``getTablesByName`` for all of a query's tables of one database; either still asks the metastore
every time: nothing is cached across queries), and a table's files are listed with Hadoop's
``FileSystem`` directly. Each round trip to the JVM counts (py4j: a socket exchange each), so a
directory's file statuses and a table's partitions come back as JSON in one call each, and no
py4j iterator is walked (its end is a Java exception, slow to convert). The round trips of a
rewrite: ``benchmarks/results/rewrite_profile_sf1.md``.

Two things must match Spark exactly, and tests check both against Spark itself:

* the columns' types, as ``DESCRIBE`` shows them (``columns.columns_from_schema_json``);
* the files Spark reads: every file under the table's location (or its partitions' locations, as
  the metastore records them), except the names Spark's file index leaves out (``spark_skips``).
  Subdirectories are listed too, though a session reads them only in some configurations: a file
  Spark reads is never missed, so a change to it always changes the snapshot (a change Spark does
  not see may too, which only turns pruning through joins off until the ranges are refreshed).
"""
from __future__ import annotations

import functools
import json
import weakref
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping, Sequence
from urllib.parse import unquote, urlsplit

from hive_integration.spark.columns import columns_from_schema_json


@dataclass(frozen=True)
class CatalogEntry:
    table: str  # db.t, lower case
    properties: Mapping[str, str] = field(hash=False)
    columns: Mapping[str, str] = field(hash=False)  # name (lower case) -> type as DESCRIBE shows it, partition columns included
    partition_columns: tuple[str, ...] = ()
    location: str | None = None
    view: bool = False


def _split(table: str, spark) -> tuple[str, str]:
    db, _, name = table.rpartition(".")
    return (db or spark.catalog.currentDatabase()).lower(), name.lower()


class _Jvm:
    """The JVM classes and objects this module calls, looked up once per gateway (each look-up of
    ``jvm.a.b.C`` is a round trip per name part)."""

    _by_gateway: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def __init__(self, spark):
        jvm = spark._jvm
        self.ident = jvm.org.apache.spark.sql.catalyst.TableIdentifier
        self.some = jvm.scala.Some
        self.none = jvm.scala.Option.empty()
        self.convert = jvm.scala.jdk.javaapi.CollectionConverters
        self.mapper = jvm.com.fasterxml.jackson.databind.ObjectMapper()
        self.path = jvm.org.apache.hadoop.fs.Path
        self.uri = jvm.java.net.URI
        self.list = jvm.java.util.ArrayList
        # Scala objects (a table's partitions) as JSON in one call
        self.scala = jvm.com.fasterxml.jackson.databind.ObjectMapper()
        self.scala.registerModule(jvm.com.fasterxml.jackson.module.scala.DefaultScalaModule())
        # Hadoop's FileStatus by its fields (path URI, length, modification time), not its getters:
        # a local file's getOwner() would run a process per file
        ann = jvm.com.fasterxml.jackson.annotation
        visibility = getattr(ann, "JsonAutoDetect$Visibility")
        self.fields = jvm.com.fasterxml.jackson.databind.ObjectMapper()
        self.fields.setVisibility(ann.PropertyAccessor.ALL, visibility.NONE)
        self.fields.setVisibility(ann.PropertyAccessor.FIELD, visibility.ANY)
        self.fields.configure(jvm.com.fasterxml.jackson.databind.SerializationFeature.FAIL_ON_EMPTY_BEANS, False)

    @classmethod
    def of(cls, spark) -> "_Jvm":
        gateway = spark.sparkContext._gateway
        if gateway not in cls._by_gateway:
            cls._by_gateway[gateway] = cls(spark)
        return cls._by_gateway[gateway]

    def table(self, db: str, name: str):
        return self.ident.apply(name, self.some(db))


def catalog_entry(spark, table: str) -> CatalogEntry | None:
    """``table``'s (``db.t`` or ``t``) entry in the session catalog, or None when it cannot be read
    (no such table or database, a temporary view)."""
    from py4j.protocol import Py4JError
    from pyspark.errors import PySparkException

    db, name = _split(table, spark)
    try:
        jvm = _Jvm.of(spark)
        raw = spark._jsparkSession.sessionState().catalog().getTableRawMetadata(jvm.table(db, name))
        return _entry(jvm, f"{db}.{name}", raw)
    except (Py4JError, PySparkException):
        return None


def catalog_entries(spark, tables: Iterable[str]) -> dict[str, CatalogEntry | None]:
    """``catalog_entry`` of each of ``tables``, keyed ``db.t``: one metastore call per database
    (the session catalog's ``getTablesByName``) instead of one per table."""
    from py4j.protocol import Py4JError
    from pyspark.errors import PySparkException

    by_db: dict[str, list[str]] = {}
    for t in tables:
        db, name = _split(t, spark)
        by_db.setdefault(db, []).append(name)
    out: dict[str, CatalogEntry | None] = {}
    jvm = _Jvm.of(spark)
    for db, names in by_db.items():
        names = list(dict.fromkeys(names))
        out.update({f"{db}.{n}": None for n in names})  # a table the catalog does not return does not exist
        if len(names) == 1:
            out[f"{db}.{names[0]}"] = catalog_entry(spark, f"{db}.{names[0]}")
            continue
        try:
            idents = jvm.list()
            for n in names:
                idents.add(jvm.table(db, n))
            found = spark._jsparkSession.sessionState().catalog().getTablesByName(jvm.convert.asScala(idents).toSeq())
            found = jvm.convert.asJava(found)
            for raw in (found.get(i) for i in range(found.size())):  # a py4j iterator ends in a Java exception
                ident = raw.identifier()
                key = f"{ident.database().get().lower()}.{ident.table().lower()}"
                out[key] = _entry(jvm, key, raw)
        except (Py4JError, PySparkException):  # e.g. no such database: each on its own
            out.update({f"{db}.{n}": catalog_entry(spark, f"{db}.{n}") for n in names})
    return out


def _entry(jvm: "_Jvm", table: str, raw) -> CatalogEntry:
    """A ``CatalogEntry`` from Spark's ``CatalogTable`` ``raw`` (about a dozen calls), its schema in
    Spark's own JSON (field metadata holds the declared CHAR/VARCHAR types)."""
    convert, mapper = jvm.convert, jvm.mapper
    props = json.loads(mapper.writeValueAsString(convert.asJava(raw.properties())))
    parts = json.loads(mapper.writeValueAsString(convert.asJava(raw.partitionColumnNames())))
    location = raw.storage().locationUri()
    location = location.get().toString() if location.isDefined() else None
    view = raw.tableType().name() == "VIEW"
    return CatalogEntry(table, {str(k): str(v) for k, v in props.items()}, columns_from_schema_json(raw.schema().json()),
                        tuple(p.lower() for p in parts), location, view)


def temp_view_exists(spark, name: str) -> bool:
    """Whether the session has a temporary view ``name``: Spark reads an unqualified ``name`` as it
    rather than as the current database's table."""
    from py4j.protocol import Py4JError

    try:
        return bool(spark._jsparkSession.sessionState().catalog().getTempView(name).isDefined())
    except Py4JError:
        return True  # cannot tell: assume it does, so nothing prunes by the table's layout


def temp_views(spark) -> frozenset[str] | None:
    """The names (lower case) of the session's temporary views, in one call; None when they cannot
    be read (then ask ``temp_view_exists`` name by name)."""
    from py4j.protocol import Py4JError

    try:
        views = spark._jsparkSession.sessionState().catalog().listLocalTempViews("*")
        found = json.loads(_Jvm.of(spark).scala.writeValueAsString(views))
        return frozenset(str(v["table"]).lower() for v in found)
    except (Py4JError, KeyError, TypeError, ValueError):
        return None


def partition_locations(spark, table: str) -> list[str]:
    """The locations of ``table``'s partitions, as the metastore records them (they may lie outside
    the table's location)."""
    db, name = _split(table, spark)
    jvm = _Jvm.of(spark)
    parts = spark._jsparkSession.sessionState().catalog().listPartitions(jvm.table(db, name), jvm.none)
    return [p["storage"]["locationUri"] for p in json.loads(jvm.scala.writeValueAsString(parts))]


@functools.lru_cache(maxsize=1 << 16)  # asked for every file of every table a query reads, each time
def spark_skips(name: str) -> bool:
    """Whether Spark's file index leaves out a file or directory named ``name``
    (``InMemoryFileIndex.shouldFilterOutPathName``): names starting with ``_`` (unless they hold
    ``=``, a partition directory) or ``.``, and files still being copied; Parquet's summary files
    ``_metadata`` and ``_common_metadata`` are kept."""
    exclude = (name.startswith("_") and "=" not in name) or name.startswith(".") or name.endswith("._COPYING_")
    include = name.startswith("_common_metadata") or name.startswith("_metadata")
    return exclude and not include


def _file_system(spark, jvm: "_Jvm", uri: str, systems: dict):
    """The Hadoop FileSystem of ``uri``, one per (scheme, authority) in ``systems``."""
    key = urlsplit(uri)[:2]
    fs = systems.get(key)
    if fs is None:
        fs = systems[key] = jvm.path(jvm.uri(uri)).getFileSystem(spark._jsc.hadoopConfiguration())
    return fs


@dataclass(frozen=True)
class FileTree:
    """A table's files and the directories they were found in, to check them again in one call.

    ``children``: each directory listed, with the subdirectories it held (both as the listing
    named them); ``watched``: a partitioned table's own location, with the directories it held (a
    new one is a new partition, whose location only the metastore knows)."""

    files: tuple[tuple[str, int, int], ...]
    children: tuple[tuple[str, tuple[str, ...]], ...] = ()
    watched: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @property
    def dirs(self) -> tuple[str, ...]:
        return tuple(d for d, _ in self.children) + tuple(d for d, _ in self.watched)


def uri_name(uri: str) -> str:
    """The last part of a path URI, unescaped (``Path.getName()``)."""
    return unquote(urlsplit(uri).path.rstrip("/").rpartition("/")[2])


def walk(roots: Iterable[str], listing: Callable[[str], Sequence[tuple[str, bool, int, int]] | None]) -> FileTree | None:
    """Every file under ``roots`` that Spark's file index lists (hidden names left out, with what
    lies beneath them), and each directory listed with its subdirectories. ``listing(dir)``: the
    directory's entries (URI, directory?, length, modification time); None from it gives None."""
    files, children = [], []
    for root in roots:
        todo = [root]
        while todo:
            here, subdirs = todo.pop(), []
            found = listing(here)
            if found is None:
                return None
            for uri, is_dir, length, modified in found:
                if spark_skips(uri_name(uri)):
                    continue
                if is_dir:
                    subdirs.append(uri)
                else:
                    files.append((uri, length, modified))
            todo += subdirs
            children.append((here, tuple(sorted(subdirs))))
    return FileTree(tuple(sorted(files)), tuple(children))


def listed_tree(spark, roots: Iterable[str], systems: dict | None = None) -> FileTree:
    """``listed_files`` of every root, with the directories listed (``FileTree``), through Hadoop."""
    jvm = _Jvm.of(spark)
    systems = {} if systems is None else systems

    def listing(d: str) -> list[tuple[str, bool, int, int]]:
        return _statuses(jvm, _file_system(spark, jvm, d, systems).listStatus(jvm.path(jvm.uri(d))))

    return walk(roots, listing)


def listed_files(spark, location: str, systems: dict | None = None) -> list[tuple[str, int, int]]:
    """(path, length, modification time) of every file under ``location`` that Spark's file index
    lists, subdirectories included, sorted by path. ``systems``: FileSystems by (scheme, authority),
    shared between calls. Each directory is one listing, its entries read as JSON in one call."""
    return list(listed_tree(spark, [location], systems).files)


def listed_statuses(spark, dirs: Sequence[str], systems: dict, arrays: dict | None = None
                    ) -> list[tuple[str, bool, int, int]] | None:
    """The entries of every directory of ``dirs`` (URI, directory?, length, modification time), in
    one listing call per file system (Hadoop's ``listStatus(Path[])``) and one to read them; None
    when one of them is gone (or cannot be listed). ``arrays``: the Java ``Path[]`` of each
    ``dirs``, kept between calls (building one is a round trip per directory)."""
    from py4j.protocol import Py4JError

    jvm = _Jvm.of(spark)
    arrays = {} if arrays is None else arrays
    by_system: dict[tuple[str, str], list[str]] = {}
    for d in dirs:
        by_system.setdefault(urlsplit(d)[:2], []).append(d)
    out = []
    try:
        for group in by_system.values():
            key = tuple(group)
            if key not in arrays:
                array = spark.sparkContext._gateway.new_array(jvm.path, len(group))
                for i, d in enumerate(group):
                    array[i] = jvm.path(jvm.uri(d))
                arrays[key] = array
            fs = _file_system(spark, jvm, group[0], systems)
            out += _statuses(jvm, fs.listStatus(arrays[key]))
    except Py4JError:  # FileNotFoundException: a directory is gone
        return None
    return out


def input_files(spark, table: str, systems: dict | None = None) -> list[tuple[str, int, int]]:
    """(path, length, modification time) of the files ``spark.table(table).inputFiles()`` names
    (a view's too), sorted by path. Each path is a URI, so a Hadoop ``Path`` is built from its
    ``java.net.URI``: ``Path(String)`` would escape its escapes again (a partition directory
    ``s=a b%`` is ``s=a%20b%25`` in the URI, and ``s=a%2520b%2525`` through the string)."""
    jvm = _Jvm.of(spark)
    systems = {} if systems is None else systems
    out = []
    for f in sorted(spark.table(table).inputFiles()):
        path = jvm.path(jvm.uri(f))
        st = _file_system(spark, jvm, f, systems).getFileStatus(path)
        out.append((f, int(st.getLen()), int(st.getModificationTime())))
    return out


def _statuses(jvm: _Jvm, statuses) -> list[tuple[str, bool, int, int]]:
    """(path URI as ``Path.toUri()`` names it, directory?, length, modification time) of Hadoop
    ``FileStatus`` objects: their fields as JSON in one call, or, should a file system's own status
    class not serialize, read one by one."""
    from py4j.protocol import Py4JError

    try:
        return [(st["path"]["uri"], bool(st["isdir"]), int(st["length"]), int(st["modification_time"]))
                for st in json.loads(jvm.fields.writeValueAsString(statuses))]
    except (Py4JError, KeyError, TypeError):
        return [(st.getPath().toUri().toString(), bool(st.isDirectory()), int(st.getLen()),
                 int(st.getModificationTime())) for st in statuses]


def table_files(spark, entry: CatalogEntry, systems: dict | None = None) -> list[tuple[str, int, int]] | None:
    """(path, length, modification time) of the files Spark reads for ``entry``'s table: those under
    its location, or under each partition's; None for a view (it has no files of its own)."""
    tree = table_tree(spark, entry, systems)
    return None if tree is None else list(tree.files)


def table_tree(spark, entry: CatalogEntry, systems: dict | None = None) -> FileTree | None:
    """``table_files`` with the directories they were found in (``FileTree``); None for a view."""
    if entry.view or not entry.location:
        return None
    if not entry.partition_columns:
        return listed_tree(spark, [entry.location], systems)
    from py4j.protocol import Py4JError

    jvm = _Jvm.of(spark)
    systems = {} if systems is None else systems
    fs = _file_system(spark, jvm, entry.location, systems)
    try:  # the location's own directories: a new one is a new partition
        subdirs = tuple(sorted(uri for uri, is_dir, _, _ in _statuses(jvm, fs.listStatus(jvm.path(jvm.uri(entry.location))))
                               if is_dir and not spark_skips(uri_name(uri))))
    except Py4JError:  # no such directory (yet): nothing to watch there
        subdirs = None
    tree = listed_tree(spark, partition_locations(spark, entry.table), systems)
    watched = ((entry.location, subdirs),) if subdirs is not None else ()
    return FileTree(tree.files, tree.children, watched)


__all__ = ["CatalogEntry", "FileTree", "catalog_entries", "catalog_entry", "input_files", "listed_files",
           "listed_statuses", "listed_tree", "partition_locations", "spark_skips", "table_files", "table_tree",
           "temp_view_exists", "temp_views", "uri_name", "walk"]

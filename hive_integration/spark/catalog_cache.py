"""What ``planner.sql`` keeps of the catalog between queries, and how each query checks it.

A rewrite needs, for every table the query reads, its catalog entry (is it laid out? its columns,
its join ranges) and, for the tables join ranges depend on, a snapshot of their files
(``join_ranges.table_snapshot``). Asked of the metastore and the file system for every query, that
was most of the rewrite's time. ``CatalogCache`` reads each once and checks them cheaply:

* **Files, every query.** The directories a table's files were found in (every one, subdirectories
  included, and a partitioned table's own location) are listed again, all tables' together (local
  ones by Python, others in one Hadoop call per file system), and compared with what was found:
  paths, sizes, modification times, the very snapshot join ranges record. An INSERT, an append, an
  apply or a re-layout writes files, so the next query sees it; the table is then read whole again
  (its entry, its partitions, every listing).
* **The entry, when its files change or its age passes ``ttl``.** Files that changed also re-read
  the entry (an apply swaps in a table with a new layout and new files). The planner's own writes
  in this process (apply, append, re-layout, stored join ranges) call ``forget``. What remains is a
  change made in the metastore alone by someone else: ``ALTER TABLE … ADD COLUMNS`` or ``SET
  LOCATION``, a partition added at a location outside the table's folder, join ranges stored by
  another process. Those are seen once the entry is older than ``ttl``; ``forget`` (or
  ``planner.sql(…, fresh=True)``) reads everything at once.

What proves an entry fresh, cheaply: its table's files. Every write the planner makes (apply,
re-apply, re-layout, append, join ranges refreshed) changes the files under a directory the cache
lists or calls ``forget``; so does a rollback by hand of a managed table (the rename moves its
folder). The key of what is derived from an entry (the parsed layout, a rewritten text) is the
entry's ``version``, which changes whenever a re-read entry says something else (its layout
checksum and generation included), and the snapshots the rewrite compared join ranges with.

Why a TTL and not a metastore question per query: the question is the cost being removed (one
metastore round trip costs more than the rewrite's whole budget), and Hive offers no cheaper
"has anything changed" (``transient_lastDdlTime`` comes with the same ``get_table``, and the
notification log needs listeners a metastore may not run). What the TTL leaves, for at most
``ttl`` seconds after a change made in the metastore alone by another process:

* a stale layout is never a wrong subset: its partition ids are its generation's, and the
  rewrite reads every id it does not know (``planner.emit.conditions.partition_filter``); a
  layout naming a column the table lost (an external table rolled back by hand) makes Spark
  refuse the text, and ``planner.sql`` then reads the catalog again (``layouts.sql``);
* join ranges are trusted against the files listed in this query, at the locations the cached
  entry names: a joined table pointed at other files by ``SET LOCATION`` (or an external table
  swapped by hand) is not seen until the entry is read again. ``forget`` or ``fresh=True`` after
  such a change; a smaller ``ttl`` narrows the window.

The checks are plain functions of what the listing returned (``files_now``), so they are tested
without Spark; ``SparkCatalogIO`` does the listing.
"""
from __future__ import annotations

import functools
import hashlib
import os
import threading
import time
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Callable, Hashable, Iterable, Mapping, Protocol, Sequence
from urllib.parse import unquote, urlsplit

from hive_integration.spark.catalog import CatalogEntry, FileTree, spark_skips

DEFAULT_TTL = 30.0  # seconds an entry is trusted while its files do not change
REWRITES_KEPT = 256

Key = tuple[str, str, str]  # a path by scheme, authority and unescaped path (``path_key``)
Status = tuple[Key, bool, int, int]  # an entry of a listing: path, directory?, length, modification time
Files = tuple[tuple[str, int, int], ...]


class CatalogIO(Protocol):
    def entries(self, tables: Sequence[str]) -> Mapping[str, CatalogEntry | None]: ...

    def tree(self, entry: CatalogEntry) -> FileTree | None: ...  # None: a view, or the files cannot be listed

    def statuses(self, dirs: Sequence[str]) -> list[Status] | None: ...  # the dirs' entries; None: one is gone

    def view_files(self, table: str) -> Files | None: ...  # the files Spark reads for a view


# ---- the checks (pure) --------------------------------------------------------------------------
def snapshot_digest(files: Iterable[tuple[str, int, int]], properties: Mapping[str, str]) -> str:
    """A table's snapshot: its files (path, size, modification time) and its layout's checksum.
    Paths count as ``path_key`` reads them, so Hadoop's listing (``file:/w/s=a%20b/x``, through
    Spark) and pyarrow's (``file:///w/s=a b/x``, ``hive_integration.metastore.file_catalog``) of the
    same files give the same snapshot."""
    h = hashlib.sha256()
    for (scheme, netloc, path), length, modified in sorted((path_key(f), n, m) for f, n, m in files):
        h.update(f"{scheme}\0{netloc}\0{path}\0{length}\0{modified}\n".encode())
    h.update(str(properties.get("planner.layout.sha256", "")).encode())
    return h.hexdigest()[:32]


@functools.lru_cache(maxsize=1 << 16)  # every query checks the same files again: parse each URI once
def path_key(uri: str) -> Key:
    """A path's URI compared by scheme, authority and unescaped path (``file:/a`` and ``file:///a/``
    are one directory; a listing's ``s=a%20b`` is the file system's ``s=a b``)."""
    s = urlsplit(uri)
    return s.scheme.lower(), s.netloc.lower(), unquote(s.path).rstrip("/")


def by_parent(statuses: Iterable[Status]) -> dict[Key, list[Status]]:
    """The entries of a multi-directory listing, grouped by the directory holding them."""
    out: dict[Key, list[Status]] = {}
    for st in statuses:
        scheme, netloc, path = st[0]
        out.setdefault((scheme, netloc, path.rpartition("/")[0]), []).append(st)
    return out


def files_now(tree: FileTree, listed: Mapping[Key, list[Status]]) -> tuple[tuple[Key, int, int], ...] | None:
    """The files of ``tree``'s directories as ``listed`` (``by_parent``) shows them now, sorted, in
    ``listed_form``; None when the directories changed (a subdirectory or partition directory added
    or gone): then only a whole listing tells the files."""
    files = []
    for d, subdirs in tree.children + tree.watched:
        here = [st for st in listed.get(path_key(d), ()) if not spark_skips(st[0][2].rpartition("/")[2])]
        if sorted(k for k, is_dir, _, _ in here if is_dir) != sorted(map(path_key, subdirs)):
            return None
    for d, _ in tree.children:
        files += [(k, n, m) for k, is_dir, n, m in listed.get(path_key(d), ())
                  if not is_dir and not spark_skips(k[2].rpartition("/")[2])]
    return tuple(sorted(files))


def listed_form(files: Files) -> tuple[tuple[Key, int, int], ...]:
    """``files`` (URIs as Hadoop names them) as ``files_now`` gives them."""
    return tuple(sorted((path_key(u), n, m) for u, n, m in files))


def same_entry(a: CatalogEntry | None, b: CatalogEntry | None) -> bool:
    """Whether two readings of a table's entry say the same (properties, columns, location,
    partition columns, kind)."""
    if a is None or b is None:
        return a is b
    return (a.table, dict(a.properties), dict(a.columns), a.partition_columns, a.location, a.view) == \
        (b.table, dict(b.properties), dict(b.columns), b.partition_columns, b.location, b.view)


# ---- the cache ----------------------------------------------------------------------------------
@dataclass
class _Table:
    entry: CatalogEntry | None
    read_at: float
    version: int  # changes whenever the entry read says something else
    tree: FileTree | None = None
    listed: tuple | None = None  # ``listed_form`` of the tree's files
    snapshot: str | None = None
    checked: int = -1  # the check (``begin``) the snapshot was last confirmed in
    derived: dict = field(default_factory=dict)  # what callers compute from the entry (a parsed layout)


class CatalogCache:
    """Catalog entries and file snapshots of the tables queries read, kept between queries.

    ``ttl``: seconds an entry is trusted while its files do not change (``math.inf``: for as long
    as the cache lives, e.g. one ``planner rewrite`` run); ``recheck``: list the files again at
    each ``begin`` (a session's queries) or never (one run)."""

    def __init__(self, io: CatalogIO, *, ttl: float = DEFAULT_TTL, recheck: bool = True,
                 clock: Callable[[], float] = time.monotonic):
        self.io, self.ttl, self.recheck, self.clock = io, ttl, recheck, clock
        self.lock = threading.RLock()  # for callers sharing the cache between threads (``planner.sql``)
        self._tables: dict[str, _Table] = {}
        self._round = 0
        self._versions = 0
        self._rewrites: OrderedDict = OrderedDict()

    # -- a query's look-ups --------------------------------------------------------------------
    def begin(self) -> None:
        """A new query: its snapshots are checked again (once, however many times they are asked)."""
        self._round += 1

    def forget(self, table: str | None = None) -> None:
        """Read ``table`` (``db.t``; None: every table) from the metastore and the files again."""
        with self.lock:
            if table is None:
                self._tables.clear()
            else:
                self._tables.pop(table.lower(), None)

    def entries(self, tables: Iterable[str]) -> dict[str, CatalogEntry | None]:
        """Each table's (``db.t``, lower case) entry: read together when missing or older than ``ttl``."""
        tables = list(dict.fromkeys(tables))
        now = self.clock()
        stale = [t for t in tables if t not in self._tables or now - self._tables[t].read_at > self.ttl]
        if stale:
            self._reread(stale, now)
        return {t: self._tables[t].entry for t in tables}

    def entry(self, table: str) -> CatalogEntry | None:
        return self.entries([table])[table]

    def version(self, table: str) -> int:
        """A number that changes whenever ``table``'s entry does (for keys of what was derived from it)."""
        self.entries([table])
        return self._tables[table].version

    def derived(self, table: str, key: Hashable, make: Callable[[CatalogEntry | None], object]):
        """``make(entry)``, kept until the entry changes."""
        self.entries([table])
        record = self._tables[table]
        if key not in record.derived:
            record.derived[key] = make(record.entry)
        return record.derived[key]

    def snapshots(self, tables: Iterable[str]) -> dict[str, str | None]:
        """Each table's snapshot now (``snapshot_digest``; None when its files cannot be listed).
        Tables whose files were listed before are checked in one listing call per file system."""
        tables = list(dict.fromkeys(tables))
        self.entries(tables)
        todo = [t for t in tables if self._tables[t].checked != self._round]
        if todo:
            self._check(todo)
        return {t: self._tables[t].snapshot for t in tables}

    def snapshot(self, table: str) -> str | None:
        return self.snapshots([table])[table]

    # -- rewrites ----------------------------------------------------------------------------------
    def rewrite(self, key: Hashable, make: Callable[[], object]):
        """``make()``, kept under ``key`` (which must name everything the result depends on)."""
        if key in self._rewrites:
            self._rewrites.move_to_end(key)
            return self._rewrites[key]
        value = make()
        self._rewrites[key] = value
        if len(self._rewrites) > REWRITES_KEPT:
            self._rewrites.popitem(last=False)
        return value

    # -- inside ------------------------------------------------------------------------------------
    def _reread(self, tables: Sequence[str], now: float, *, aged: bool = True) -> None:
        """Read ``tables``' entries again. ``aged``: because of their age, not of their files; a
        partitioned table then lists its partitions again too (one may have been added elsewhere)."""
        got = self.io.entries(tables)
        for t in tables:
            entry = got.get(t)
            old = self._tables.get(t)
            if old is not None and same_entry(old.entry, entry):
                old.read_at = now
                if aged and entry is not None and entry.partition_columns:
                    old.tree, old.listed, old.checked = None, None, -1
                continue
            self._versions += 1
            self._tables[t] = _Table(entry, now, self._versions)

    def _check(self, tables: Sequence[str]) -> None:
        listed = [t for t in tables if self._tables[t].tree is not None and self._tables[t].checked >= 0]
        if listed and self.recheck:
            statuses = self.io.statuses([d for t in listed for d in self._tables[t].tree.dirs])
            grouped = by_parent(statuses) if statuses is not None else None
            changed = []
            for t in listed:
                record = self._tables[t]
                if record.listed is None:
                    record.listed = listed_form(record.tree.files)
                if grouped is not None and files_now(record.tree, grouped) == record.listed:
                    record.checked = self._round
                else:  # new files, or new or missing directories: list the table whole
                    record.tree, record.listed = None, None
                    changed.append(t)
            if changed:  # the entry may have changed with the files (an apply's swap)
                self._reread(changed, self.clock(), aged=False)
        for t in tables:
            record = self._tables[t]
            if record.checked != self._round and (self.recheck or record.checked < 0):
                self._read_files(record, t)
            record.checked = self._round

    def _read_files(self, record: _Table, table: str) -> None:
        entry = record.entry
        if entry is None:
            record.tree, record.snapshot = None, None
            return
        if entry.view or not entry.location:  # a view's files: what Spark reads for it, every time
            files = self.io.view_files(table)
            record.snapshot = None if files is None else snapshot_digest(files, entry.properties)
            return
        if record.tree is None:
            record.tree, record.listed = self.io.tree(entry), None
        record.snapshot = None if record.tree is None else snapshot_digest(record.tree.files, entry.properties)


# ---- a Spark session's ------------------------------------------------------------------------
class SparkCatalogIO:
    """``CatalogIO`` through a Spark session: the session catalog, Hadoop's file systems."""

    ARRAYS_KEPT = 64

    def __init__(self, spark):
        self.spark = spark
        self._systems: dict = {}  # FileSystem by (scheme, authority)
        self._arrays: dict = {}  # Java Path[] by the directories it holds

    def entries(self, tables: Sequence[str]) -> Mapping[str, CatalogEntry | None]:
        from hive_integration.spark.catalog import catalog_entries

        return catalog_entries(self.spark, tables)

    def tree(self, entry: CatalogEntry) -> FileTree | None:
        from py4j.protocol import Py4JError
        from pyspark.errors import PySparkException

        from hive_integration.spark.catalog import table_tree

        try:
            return table_tree(self.spark, entry, self._systems)
        except (Py4JError, PySparkException):
            return None

    def statuses(self, dirs: Sequence[str]) -> list[Status] | None:
        """Local directories are listed by Python (``local_statuses``: no round trip to the JVM);
        others by Hadoop, in one call per file system."""
        from hive_integration.spark.catalog import listed_statuses

        local = [d for d in dirs if urlsplit(d).scheme.lower() == "file"]
        out = local_statuses(local)
        others = [d for d in dirs if urlsplit(d).scheme.lower() != "file"]
        if others and out is not None:
            if len(self._arrays) > self.ARRAYS_KEPT:
                self._arrays.clear()
            found = listed_statuses(self.spark, others, self._systems, self._arrays)
            out = None if found is None else out + [(path_key(u), d, n, m) for u, d, n, m in found]
        return out

    def view_files(self, table: str) -> Files | None:
        from py4j.protocol import Py4JError
        from pyspark.errors import PySparkException

        from hive_integration.spark.catalog import input_files
        from planner.emit.join_sql import table_ref

        try:
            return tuple(input_files(self.spark, table_ref(table).sql(dialect="spark"), self._systems))
        except (Py4JError, PySparkException):
            return None


def local_statuses(dirs: Sequence[str]) -> list[Status] | None:
    """The entries of local directories (``file:`` URIs), as Hadoop's local file system lists them:
    the length and the modification time in milliseconds of what a link points to; None when one
    of the directories is gone."""
    out = []
    try:
        for d in dirs:
            scheme, netloc, path = path_key(d)
            with os.scandir(path or "/") as entries:
                for e in entries:
                    st = e.stat()
                    out.append(((scheme, netloc, f"{path}/{e.name}"), e.is_dir(), st.st_size, st.st_mtime_ns // 1_000_000))
    except OSError:  # gone, or unreadable: nothing proves the files unchanged
        return None
    return out


_CACHES: "weakref.WeakSet[CatalogCache]" = weakref.WeakSet()
_ATTRIBUTE = "_planner_catalog_cache"


def session_cache(spark) -> CatalogCache:
    """The cache ``planner.sql`` keeps for ``spark`` (made on first use; it lives as long as the session)."""
    cache = getattr(spark, _ATTRIBUTE, None)
    if cache is None:
        cache = CatalogCache(SparkCatalogIO(spark))
        setattr(spark, _ATTRIBUTE, cache)
        _CACHES.add(cache)
    return cache


def forget(table: str | None = None) -> None:
    """Every session's cache in this process reads ``table`` (``db.t``; None, or a name without its
    database: every table) again: the planner's own writes call it once they changed a table."""
    for cache in list(_CACHES):
        cache.forget(table if table and "." in table else None)


__all__ = ["CatalogCache", "CatalogIO", "DEFAULT_TTL", "SparkCatalogIO", "by_parent", "files_now", "forget",
           "listed_form", "local_statuses", "path_key", "same_entry", "session_cache", "snapshot_digest"]

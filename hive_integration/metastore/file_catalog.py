"""A table's catalog entry and files without Spark: the entry over thrift (``MetastoreClient``), the
files through pyarrow's file systems (``hive_integration.spark.object_stores``: local, S3, GCS,
HDFS).

``CatalogCache`` over ``MetastoreCatalogIO`` gives the same snapshots (``snapshot_digest``) as a
Spark session's listing of the same files, so join ranges and the aggregate index, recorded with
Spark, are checked against the table as it is now by ``planner rewrite`` and ``planner explain``
against a thrift metastore, with no JVM. What it lists follows Spark's file index
(``hive_integration.spark.catalog.table_tree``): every file under the table's location, or under
each partition's location, Spark's hidden names left out.

What it cannot see gives no snapshot (None), and a check against None fails safe: the query scans.
That is the case for a view (its files are what Spark reads for it) and for a file system pyarrow
cannot open here (HDFS without libhdfs, an object store without credentials).
"""
from __future__ import annotations

from typing import Mapping, Sequence

from hive_integration.spark.catalog import (
    CatalogEntry,
    FileTree,
    spark_skips,
    uri_name,
    walk,
)
from hive_integration.spark.catalog_cache import Files, Status, path_key
from hive_integration.spark.object_stores import list_dir

VIEW = "VIRTUAL_VIEW"


class MetastoreCatalogIO:
    """``hive_integration.spark.catalog_cache.CatalogIO`` over a thrift metastore and pyarrow.
    ``hadoop``: Hadoop settings for the object stores (S3A keys), as a Spark session would have."""

    def __init__(self, client, hadoop: Mapping[str, str] | None = None):
        self.client = client
        self.hadoop = dict(hadoop or {})

    def entries(self, tables: Sequence[str]) -> dict[str, CatalogEntry | None]:
        out: dict[str, CatalogEntry | None] = {}
        for table in tables:
            db, _, name = table.rpartition(".")
            t = self.client.table_or_none(db or "default", name)
            out[table] = None if t is None else _entry(table, t)
        return out

    def tree(self, entry: CatalogEntry) -> FileTree | None:
        if entry.view or not entry.location:
            return None
        if not entry.partition_columns:
            return self._walk([entry.location])
        db, _, name = entry.table.rpartition(".")
        found = list_dir(entry.location, self.hadoop)
        subdirs = None if found is None else tuple(sorted(u for u, is_dir, _, _ in found if is_dir and not spark_skips(uri_name(u))))
        tree = self._walk(self.client.partition_locations(db, name))
        if tree is None:
            return None
        watched = ((entry.location, subdirs),) if subdirs is not None else ()
        return FileTree(tree.files, tree.children, watched)

    def statuses(self, dirs: Sequence[str]) -> list[Status] | None:
        out: list[Status] = []
        for d in dirs:
            found = list_dir(d, self.hadoop)
            if found is None:
                return None
            out += [(path_key(u), is_dir, n, m) for u, is_dir, n, m in found]
        return out

    def view_files(self, table: str) -> Files | None:
        return None  # the files Spark reads for a view: only Spark knows them

    def _walk(self, roots: Sequence[str]) -> FileTree | None:
        return walk(roots, lambda d: list_dir(d, self.hadoop))


def _entry(table: str, t) -> CatalogEntry:
    """A thrift ``Table`` as ``CatalogEntry``: its columns with Hive's types, partition columns last."""
    cols = [(c.name.lower(), c.type) for c in (t.sd.cols if t.sd else None) or []]
    keys = [(c.name.lower(), c.type) for c in t.partitionKeys or []]
    return CatalogEntry(table.lower(), dict(t.parameters or {}), dict(cols + keys), tuple(k for k, _ in keys),
                        (t.sd.location if t.sd else None) or None, (t.tableType or "").upper() == VIEW)


__all__ = ["MetastoreCatalogIO"]

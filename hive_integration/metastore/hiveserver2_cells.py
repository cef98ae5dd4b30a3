"""The aggregate index built through HiveServer2 (the Spark Thrift Server), for ``planner apply
--hiveserver2``: the same statements as in a Spark session (``hive_integration.spark.cells``),
run on the server, and the table's snapshot read from the metastore and the files themselves
(``file_catalog``), since a HiveServer2 session cannot list a table's files.

The snapshot is the one a Spark session later compares with (``catalog_cache.snapshot_digest``
counts paths alike whoever listed them), so ``planner.sql``, ``planner rewrite`` over thrift
and SQL saved through HiveServer2 all use the index, and all stop using it once the table's
files change.

The cells' types are checked with ``DESCRIBE QUERY`` (Spark SQL): a server that is not Spark
refuses it, and the index is not built (its cells must add up as Spark adds, types included).
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

from sqlglot import exp

from hive_integration.metastore.file_catalog import MetastoreCatalogIO
from hive_integration.metastore.thrift_client import MetastoreClient
from hive_integration.spark.catalog_cache import CatalogCache
from hive_integration.spark.columns import columns_from_describe
from planner.emit.apply_sql import var_set
from planner.emit.ddl import table_expr

UNDEFINED = "<undefined>"  # what Spark's ``SET key`` answers for a key never set


class HiveServer2Build:
    """``hive_integration.spark.cells.BuildEngine`` on a HiveServer2 session (``runner``, whose SETs
    last for the session) with the thrift metastore at ``metastore`` beside it."""

    def __init__(self, runner, metastore: str):
        self.runner, self.metastore = runner, metastore

    def run(self, sql: str) -> list:
        return self.runner.execute(sql)

    def table_types(self, table: str) -> dict[str, str]:
        return columns_from_describe(self.run(exp.Describe(this=table_expr(table, "spark")).sql("spark")))

    def query_types(self, sql: str) -> dict[str, str]:
        import sqlglot

        described = exp.Describe(this=sqlglot.parse_one(sql, read="spark")).sql("spark")  # DESCRIBE [QUERY] q
        return {str(r[0]).strip().lower(): str(r[1]).strip().lower() for r in self.run(described)}

    def snapshot(self, table: str) -> str | None:
        with MetastoreClient(self.metastore) as client:  # read afresh: the build compares before and after
            return CatalogCache(MetastoreCatalogIO(client), recheck=False).snapshot(self._qualified(table))

    def size(self, table: str) -> int | None:
        with MetastoreClient(self.metastore) as client:
            io = MetastoreCatalogIO(client)
            entry = io.entries([self._qualified(table)])[self._qualified(table)]
            tree = None if entry is None else io.tree(entry)
        return None if tree is None else sum(n for _, n, _ in tree.files)

    @contextmanager
    def settings(self, values: dict[str, str]) -> Iterator[None]:
        saved = {}
        for k in values:
            rows = self.run(exp.Set(expressions=[exp.SetItem(this=exp.Var(this=k))]).sql("spark"))
            saved[k] = str(rows[0][1]) if rows and len(rows[0]) > 1 and rows[0][1] is not None else UNDEFINED
        try:
            for k, v in values.items():
                self.run(var_set(k, v).sql("spark"))
            yield
        finally:
            for k, v in saved.items():
                self.run(exp.Command(this="RESET", expression=exp.Var(this=f" {k}")).sql("spark") if v == UNDEFINED
                         else var_set(k, v).sql("spark"))

    def _qualified(self, table: str) -> str:
        table = table.lower()
        return table if "." in table else f"{getattr(self.runner.client, 'database', 'default').lower()}.{table}"


__all__ = ["HiveServer2Build"]

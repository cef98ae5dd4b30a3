"""What ``planner apply --hiveserver2`` builds beside a layout, through HiveServer2 (the Spark Thrift
Server): the aggregate index (``HiveServer2Build``, for ``hive_integration.spark.cells``) and the
join ranges (``HiveServer2Ranges``, for ``hive_integration.spark.join_ranges``). Their statements
run on the server, as they do in a Spark session; what a HiveServer2 session cannot do, list a
table's files, the planner does itself, through the metastore and pyarrow (``file_catalog``).

The snapshots are those a Spark session compares with (``catalog_cache.snapshot_digest`` counts
paths alike whoever listed them), so ``planner.sql`` and ``planner rewrite`` over thrift use what
was built here, and stop using it once a table's files change.

Types: the index's cells are checked with ``DESCRIBE QUERY`` (Spark SQL; a server that is not Spark
refuses it, and nothing is built: the cells must add up as Spark adds). HiveServer2 hands values
back as text where Spark's ``collect()`` gives Python values (a DATE as ``'2020-01-31'``, an array
as Spark's own rendering, which does not escape quotes); ``HiveServer2Ranges.rows`` reads each
column by the type ``DESCRIBE QUERY`` gives it, and has arrays sent as JSON (``to_json``).
"""
from __future__ import annotations

import datetime as dt
import json
from contextlib import contextmanager
from decimal import Decimal
from typing import Iterable, Iterator, Mapping, Sequence

import sqlglot
from sqlglot import exp

from hive_integration.metastore.file_catalog import MetastoreCatalogIO
from hive_integration.metastore.thrift_client import MetastoreClient
from hive_integration.spark.catalog import CatalogEntry
from hive_integration.spark.catalog_cache import CatalogCache
from hive_integration.spark.columns import columns_from_describe
from planner.emit.apply_sql import var_set
from planner.emit.ddl import table_expr

UNDEFINED = "<undefined>"  # what Spark's ``SET key`` answers for a key never set
INTEGERS = ("tinyint", "smallint", "int", "bigint")


class _OnServer:
    """A HiveServer2 session (``runner``, whose SETs last for the session) with the thrift metastore
    at ``metastore`` beside it."""

    def __init__(self, runner, metastore: str):
        self.runner, self.metastore = runner, metastore
        self._entries: dict[str, CatalogEntry | None] = {}  # read once for this build (snapshots are not kept)

    def run(self, sql: str) -> list:
        return self.runner.execute(sql)

    def described(self, sql: str) -> list[tuple[str, str]]:
        """(name, type) of each output column of the query ``sql``, without running it."""
        text = exp.Describe(this=sqlglot.parse_one(sql, read="spark")).sql("spark")  # DESCRIBE [QUERY] q
        return [(str(r[0]).strip().lower(), str(r[1]).strip().lower()) for r in self.run(text)]

    def snapshots(self, tables: Iterable[str]) -> dict[str, str | None]:
        keys = {t: self._qualified(t) for t in tables}
        with MetastoreClient(self.metastore) as client:  # read afresh: a build compares before and after
            found = CatalogCache(MetastoreCatalogIO(client), recheck=False).snapshots(keys.values())
        return {t: found[k] for t, k in keys.items()}

    def snapshot(self, table: str) -> str | None:
        return self.snapshots([table])[table]

    def entries(self, tables: Sequence[str]) -> Mapping[str, CatalogEntry | None]:
        keys = {t: self._qualified(t) for t in tables}
        missing = [k for k in dict.fromkeys(keys.values()) if k not in self._entries]
        if missing:  # ``exists`` then ``entries`` of the same tables: one metastore call each
            with MetastoreClient(self.metastore) as client:
                self._entries.update(MetastoreCatalogIO(client).entries(missing))
        return {t: self._entries[k] for t, k in keys.items()}

    def exists(self, table: str) -> bool:
        return self.entries([table])[table] is not None

    def _qualified(self, table: str) -> str:
        table = table.lower()
        return table if "." in table else f"{getattr(self.runner.client, 'database', 'default').lower()}.{table}"


class HiveServer2Build(_OnServer):
    """``hive_integration.spark.cells.BuildEngine`` through HiveServer2."""

    def table_types(self, table: str) -> dict[str, str]:
        return columns_from_describe(self.run(exp.Describe(this=table_expr(table, "spark")).sql("spark")))

    def query_types(self, sql: str) -> dict[str, str]:
        return dict(self.described(sql))

    def size(self, table: str) -> int | None:
        key = self._qualified(table)
        with MetastoreClient(self.metastore) as client:
            io = MetastoreCatalogIO(client)
            entry = io.entries([key])[key]
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


class HiveServer2Ranges(_OnServer):
    """``hive_integration.spark.join_ranges.RangesEngine`` through HiveServer2: rows read by their types."""

    def rows(self, query: exp.Select) -> list[tuple]:
        types = [t for _, t in self.described(query.sql("spark"))]
        sent = query
        if any(t.startswith("array<") for t in types):  # as JSON: Spark's rendering of an array does not escape
            sent = query.copy()
            for e, t in zip(sent.selects, types):
                if t.startswith("array<"):
                    inner = e.this if isinstance(e, exp.Alias) else e
                    inner.replace(exp.Anonymous(this="to_json", expressions=[inner.copy()]))
        return [tuple(value(v, t) for v, t in zip(r, types)) for r in self.run(sent.sql("spark"))]


def value(v, t: str):
    """A value HiveServer2 handed back for a column of Spark type ``t``, as Spark's ``collect()``
    gives it (for the types join ranges record, their counts and their sets)."""
    if v is None:
        return None
    if t.startswith("array<"):
        element = t[len("array<"):-1]
        return [value(x, element) for x in json.loads(v, parse_float=Decimal)]
    if t.startswith("decimal"):
        return Decimal(str(v))
    if t in INTEGERS:
        return int(v)
    if t == "date":
        return v if isinstance(v, dt.date) else dt.date.fromisoformat(str(v))
    if t == "boolean":
        return v if isinstance(v, bool) else str(v).strip().lower() == "true"
    if t == "string":
        return str(v)
    return v



"""View definitions as the metastore keeps them, for the workload reader to follow.

``planner.workload.views.Views`` asks ``lookup(database, name)`` for any name a query reads that
the workload file does not define as a view; these answer it from the catalog at hand:

* ``spark_view_lookup(spark)``: ``DESCRIBE TABLE EXTENDED`` of the name (Spark and the embedded or
  standalone metastore), its "View Text" (Hive's expanded text, names qualified) or, failing that,
  "View Original Text";
* ``metastore_view_lookup(client)``: the same over thrift, with no Spark (``viewExpandedText`` of a
  ``VIRTUAL_VIEW``).

A name that is no view (a table, or nothing at all) answers None: the reader then treats it as a
table, and the engine reports a missing one when the query runs.
"""
from __future__ import annotations

from typing import Callable

from sqlglot import exp

ViewLookup = Callable[[str, str], "str | None"]


def spark_view_lookup(spark) -> ViewLookup:
    from pyspark.errors import PySparkException

    def lookup(db: str, name: str) -> str | None:
        table = exp.table_(exp.to_identifier(name, quoted=True), db=exp.to_identifier(db, quoted=True))
        try:
            rows = spark.sql("DESCRIBE TABLE EXTENDED " + table.sql(dialect="spark")).collect()
        except PySparkException:
            return None
        info = {str(r[0]).strip(): str(r[1] or "").strip() for r in rows if r[0]}
        if info.get("Type", "").upper() != "VIEW":
            return None
        return info.get("View Text") or info.get("View Original Text") or None

    return lookup


def metastore_view_lookup(client) -> ViewLookup:
    """``client``: an open ``hive_integration.metastore.thrift_client.MetastoreClient``."""
    return client.view_text

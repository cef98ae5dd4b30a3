"""Views the metastore defines are followed to their tables, through Spark and over thrift."""
from __future__ import annotations

import json

from click.testing import CliRunner

from hive_integration.spark.view_lookup import spark_view_lookup
from planner.cli.main import cli
from planner.workload import parse_workload


def test_views_in_spark_s_catalog_are_followed(spark, fresh_db):
    spark.sql(f"CREATE TABLE {fresh_db}.sales (id INT, region STRING, amount INT) STORED AS PARQUET")
    spark.sql(f"CREATE VIEW {fresh_db}.eu AS SELECT id, amount FROM {fresh_db}.sales WHERE region = 'EU'")
    lookup = spark_view_lookup(spark)
    assert lookup(fresh_db, "sales") is None and lookup(fresh_db, "nope") is None
    assert "region" in lookup(fresh_db, "eu")
    wl = parse_workload(f"select sum(amount) from {fresh_db}.eu where amount > 10", "w.sql", views=lookup)
    assert [(s.table, str(s.predicate)) for s in wl.queries[0].scans] == [
        (f"{fresh_db}.sales", "amount > 10 AND region = 'EU'")]


def test_analyze_follows_a_standalone_metastore_s_views_without_spark(thrift_server, metastore, tmp_path):
    from hive_integration.metastore.hiveserver2 import HiveServer2Client

    with HiveServer2Client(thrift_server.host, thrift_server.port) as hs2:
        hs2.execute("CREATE DATABASE IF NOT EXISTS vw")
        hs2.execute("DROP VIEW IF EXISTS vw.recent")
        hs2.execute("DROP TABLE IF EXISTS vw.events")
        hs2.execute("CREATE TABLE vw.events (id INT, day DATE, kind STRING) STORED AS PARQUET")
        hs2.execute("CREATE VIEW vw.recent AS SELECT id, kind FROM vw.events WHERE day >= DATE '2024-01-01'")
    q = tmp_path / "q.sql"
    q.write_text("select count(*) from vw.recent where kind = 'click';\n")
    result = CliRunner().invoke(cli, ["analyze", str(q), "--metastore", metastore.uri, "--format", "json"])
    assert result.exit_code == 0, result.output
    (table,) = json.loads(result.stdout)["tables"]
    assert table["table"] == "vw.events"
    assert {c["column"] for c in table["columns"]} == {"day", "kind"}

"""``planner status``, ``planner relayout`` and append order detection through the CLI, on real Spark."""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from click.testing import CliRunner

from hive_integration.apply.apply_layout import SparkRunner, apply_layout
from planner.cli.main import cli
from planner.model.layout import Ordering
from time_params import SLOW_SCANS_FILE
from tests.test_relayout_spark import QUERIES, N, _rows, quarters


def _state(spark) -> str:
    return str(Path(spark.conf.get("spark.sql.warehouse.dir").removeprefix("file:")).parent)


def test_status_relayout_and_append_order(spark, fresh_db, tmp_path):
    t = f"{fresh_db}.events"
    spark.sql(f"CREATE TABLE {t} (x BIGINT, y BIGINT, s STRING) STORED AS PARQUET")
    spark.sql(f"INSERT INTO {t} SELECT id, id % 100, CAST(id AS STRING) FROM range({N})")
    layout = replace(quarters(t), order=Ordering("sort", ("y",)))
    apply_layout(SparkRunner(spark), layout, drop_old=True)
    workload = tmp_path / "window.sql"
    workload.write_text(f"SELECT * FROM {t} WHERE x < 800 AND y = 7;\n" * 20)
    state = _state(spark)

    bad = CliRunner().invoke(cli, ["status", f"{fresh_db}.nope", str(workload), "--state-dir", state])
    errors = [line for line in bad.output.splitlines() if line.startswith("error:")]
    assert bad.exit_code == 2 and len(errors) == 1 and "nope" in errors[0] and "Traceback" not in bad.output

    # a 4,000-row table: let the best layout cut it, and price its scans as a big table's
    small = ["--min-partition-mb", "0.001", "--calibration", str(SLOW_SCANS_FILE)]
    got = CliRunner().invoke(cli, ["status", t, str(workload), "--state-dir", state, "--format", "json", "--measure",
                                   *small])
    assert got.exit_code == 0, got.output
    st = json.loads(got.output)
    assert st["current"]["rows_read"] > st["best"]["rows_read"]
    assert st["partitions"]["cold"] and st["partial_relayout"]["partitions"] >= 1
    assert st["partial_relayout"]["rows_rewritten"] < N * 0.35
    # the window is one query 20 times: the re-cut pays as much where its target was not fitted
    assert st["partial_relayout"]["held_out_net"] > 0 and st["partial_relayout"]["declined"] is None
    assert {c["column"] for c in st["clustering_depth"]} >= {"x", "y"}
    assert st["measured"] and all(m["rows"] <= N for m in st["measured"])
    text = CliRunner().invoke(cli, ["status", t, str(workload), "--state-dir", state, *small])
    assert text.exit_code == 0 and "break-even" in text.output and "clustering depth" in text.output
    assert "not fitted to" in text.output
    alone = CliRunner().invoke(cli, ["status", t, str(workload), "--state-dir", state, "--format", "json",
                                     "--no-validate", "--no-clustering", *small])
    assert alone.exit_code == 0, alone.output
    assert json.loads(alone.output)["partial_relayout"]["held_out_net"] is None

    sql = CliRunner().invoke(cli, ["relayout", t, str(workload), "--state-dir", state, "--print-sql", *small])
    assert sql.exit_code == 0 and "INSERT OVERWRITE TABLE" in sql.output and "WHERE" in sql.output

    source = {q: _rows(spark, q.format(t=t)) for q in QUERIES}
    done = CliRunner().invoke(cli, ["relayout", t, str(workload), "--state-dir", state, "--format", "json", *small])
    assert done.exit_code == 0, done.output
    out = json.loads(done.output)
    assert out["report"]["rows"] == out["plan"]["rows_rewritten"] or out["report"]["rows"] > 0
    for q in QUERIES:
        assert _rows(spark, q.format(t=t)) == source[q]

    # an append of rows in the middle of an untouched partition's y order breaks it
    spark.sql(f"CREATE TABLE {fresh_db}.batch (x BIGINT, y BIGINT, s STRING) STORED AS PARQUET")
    spark.sql(f"INSERT INTO {fresh_db}.batch SELECT 3500 + id, 50 + id % 3, 'new' FROM range(30)")
    app = CliRunner().invoke(cli, ["append", f"{fresh_db}.batch", "--into", t, "--state-dir", state,
                                   "--format", "json"])
    assert app.exit_code == 0, app.output
    broken = json.loads(app.output)["order_broken"]
    assert broken == [quarters(t).partitions[3].id]
    fix = CliRunner().invoke(cli, ["relayout", t, str(workload), "--state-dir", state, "--fix-order",
                                   "--format", "json", "--drop-old"])
    assert fix.exit_code == 0, fix.output
    assert json.loads(fix.output)["plan"]["chosen"] == broken
    from hive_integration.metastore.layouts import SparkCatalogLayouts
    from hive_integration.spark.order_check import unordered_partitions

    now = SparkCatalogLayouts(spark).lookup(*t.split(".")).layout
    assert unordered_partitions(spark, t, now) == []
    assert spark.sql(f"SELECT count(*) FROM {t}").collect()[0][0] == N + 30

"""One Spark application, on any master: load lineitem, gather statistics, apply a layout, report.

Run by ``tests/test_scale_out.py`` in a process of its own (the test's shared session is
``local[2]`` and a running JVM cannot change its master), both with ``--master spark://…`` on a
standalone cluster and, for the comparison, ``local[2]``. Prints one JSON object on stdout: the
statistics pass (rows, bytes), the laid-out table's count, checksum and per-column counts, its
partitions, and which executors ran tasks.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from devtools.tpch_data import load_table
from hive_integration.apply.apply_layout import (
    Catalog,
    SparkRunner,
    TableNames,
    apply_layout,
)
from hive_integration.spark.session import build_spark_session
from hive_integration.spark.statistics_pass import gather_stats, table_schema
from planner.model.layout import Layout


def executors_with_tasks(spark) -> dict[str, int]:
    """Executor id -> tasks it ran (the driver is left out)."""
    store = spark.sparkContext._jsc.sc().statusStore()
    listed = store.executorList(False)
    out = {}
    for i in range(listed.size()):
        e = listed.apply(i)
        if e.id() != "driver":
            out[e.id()] = int(e.totalTasks())
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--master", required=True)
    ap.add_argument("--state-dir", required=True, type=Path)
    ap.add_argument("--data", required=True, type=Path)
    ap.add_argument("--layout", required=True, type=Path)
    args = ap.parse_args(argv)
    layout = Layout.loads(args.layout.read_text())
    conf = {"spark.master": args.master, "spark.driver.memory": "768m", "spark.executor.memory": "640m",
            "spark.executor.cores": "1", "spark.cores.max": "2",
            "spark.executor.extraJavaOptions": f"-XX:-UsePerfData -Djava.io.tmpdir={args.state_dir / 'tmp'}"}
    spark = build_spark_session(args.state_dir, app_name="planner-scale-out", conf=conf)
    try:
        db = layout.table.split(".")[0]
        spark.sql(f"CREATE DATABASE IF NOT EXISTS {db}")  # our own name
        load_table(spark, args.data, layout.table, row_group_bytes=64 * 1024)
        timings: dict = {}
        stats = gather_stats(spark, layout.table, sample_rows=5_000, timings=timings)
        report = apply_layout(SparkRunner(spark), layout)
        cat = Catalog(SparkRunner(spark), TableNames.of(layout.table))
        columns = {c: t for c, t in table_schema(spark, layout.table).items() if c != layout.partition_column}
        checksum = cat.checksum(TableNames.of(layout.table).source, columns)
        parts = sorted(r[0] for r in spark.sql(f"SHOW PARTITIONS {layout.table}").collect())
        print(json.dumps({
            "master": spark.sparkContext.master,
            "statistics": {"rows": stats.rows, "bytes": stats.bytes, "sample": stats.sample.num_rows,
                           "seconds": round(timings["total"], 2)},
            "apply": {"rows": report.rows, "seconds": round(report.seconds, 2)},
            "checksum": [None if v is None else str(v) for v in checksum],
            "partitions": parts,
            "executors": executors_with_tasks(spark),
        }))
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())

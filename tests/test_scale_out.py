"""Scale-out is real: on a Spark standalone cluster (a master and two workers on loopback, from
pyspark's own jars) the statistics pass and a layout's INSERT run as ordinary Spark jobs, on the
executors, and give the very rows the local run gives (count, checksum, per-column counts).

The cluster's application is a process of its own (``tests/scaleout_job.py``): the test run's
shared session is ``local[2]``, and a running JVM cannot change its master. Memory: two workers
of 1 GB (one 640 MB executor each) and a 768 MB driver.
"""
from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest

from devtools.servers import StandaloneCluster
from devtools.tpch_data import load_table
from hive_integration.apply.apply_layout import (
    Catalog,
    SparkRunner,
    TableNames,
    apply_layout,
)
from hive_integration.spark.statistics_pass import gather_stats, table_schema
from planner.cnf.valueset import ValueSet
from planner.model.layout import Layout, Ordering, Partition
from planner.semantics.kinds import Kind

ROOT = Path(__file__).resolve().parent.parent
pytestmark = [pytest.mark.spark, pytest.mark.servers]


def hilbert_layout(table: str) -> Layout:
    """Three l_shipdate ranges (NULLs with the first), each in Hilbert order of three columns."""
    d = dt.date
    r = lambda lo, hi: ValueSet.range(Kind.DATE, lo, hi, lo is not None, False)  # noqa: E731
    parts = (Partition(1, (("l_shipdate", r(None, d(1994, 1, 1)).union(ValueSet.only_null(Kind.DATE))),)),
             Partition(2, (("l_shipdate", r(d(1994, 1, 1), d(1996, 1, 1))),)),
             Partition(3, (("l_shipdate", r(d(1996, 1, 1), None)),)))
    order = Ordering("hilbert", ("l_shipdate", "l_quantity", "l_discount"),
                     ((d(1993, 1, 1), d(1995, 6, 1), d(1997, 1, 1)),
                      tuple(Decimal(v) for v in range(5, 50, 5)), (Decimal("0.02"), Decimal("0.05"), Decimal("0.08"))))
    return Layout(table, "hand-built", parts, order, kinds=(("l_shipdate", Kind.DATE),))


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with StandaloneCluster(tmp_path_factory.mktemp("cluster"), workers=2, cores=1, memory="1g") as c:
        yield c


def local_run(spark, data: Path, layout: Layout) -> dict:
    spark.sql("CREATE DATABASE IF NOT EXISTS scaleout")
    load_table(spark, data, layout.table, row_group_bytes=64 * 1024)
    stats = gather_stats(spark, layout.table, sample_rows=5_000)
    report = apply_layout(SparkRunner(spark), layout)
    columns = {c: t for c, t in table_schema(spark, layout.table).items() if c != layout.partition_column}
    checksum = Catalog(SparkRunner(spark), TableNames.of(layout.table)).checksum("lineitem", columns)
    parts = sorted(r[0] for r in spark.sql(f"SHOW PARTITIONS {layout.table}").collect())
    for t in spark.sql("SHOW TABLES IN scaleout").collect():
        spark.sql(f"DROP TABLE IF EXISTS scaleout.{t.tableName}")
    return {"statistics": {"rows": stats.rows}, "apply": {"rows": report.rows},
            "checksum": [None if v is None else str(v) for v in checksum], "partitions": parts}


def test_statistics_and_insert_on_a_standalone_cluster_match_the_local_run(spark, tpch_small, cluster, tmp_path):
    layout = hilbert_layout("scaleout.lineitem")
    layout_file = tmp_path / "layout.json"
    layout_file.write_text(layout.dumps())
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "tests")]))
    run = subprocess.run([sys.executable, str(ROOT / "tests" / "scaleout_job.py"), "--master", cluster.uri,
                          "--state-dir", str(tmp_path / "app"), "--data", str(tpch_small),
                          "--layout", str(layout_file)],
                         capture_output=True, text=True, env=env, timeout=900)
    assert run.returncode == 0, run.stderr[-4000:]
    remote = json.loads(run.stdout.strip().splitlines()[-1])
    assert remote["master"] == cluster.uri
    # the work ran on both workers' executors, not in the driver
    assert len(remote["executors"]) == 2 and all(n > 0 for n in remote["executors"].values())
    local = local_run(spark, tpch_small, layout)
    assert remote["statistics"]["rows"] == local["statistics"]["rows"] == 60_175
    assert remote["apply"]["rows"] == local["apply"]["rows"] == 60_175
    assert remote["checksum"] == local["checksum"]
    assert remote["partitions"] == local["partitions"] == ["planner_pid=1", "planner_pid=2", "planner_pid=3"]

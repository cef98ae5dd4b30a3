"""A DBA's commands, run the way a user runs them, in a process of their own.

Run by ``tests/test_production.py`` with the environment of a fresh clone whose only
configuration is a ``hive-site.xml`` (in ``HADOOP_CONF_DIR``) naming the suite's standalone
metastore: no ``--metastore``, no ``--state-dir``.

    production_job.py load DATA TABLE        load a Parquet file as a Hive table (local[1], set-up only)
    production_job.py cli ARGS… [-- ARGS…]   run ``planner ARGS`` (then the next command after ``--``)
                                             in this process, and print after each which executors
                                             of its Spark ran tasks (Spark's status store)

The ``cli`` mode prints one JSON line per command: ``{"command": …, "exit": …, "master": …,
"executor_memory": …, "executors": {id: tasks}}``; the driver is left out of ``executors``.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from scaleout_job import executors_with_tasks  # this folder is on the path of a script run


def load(data: str, table: str) -> int:
    from devtools.tpch_data import load_table
    from planner.cli.engine import start_spark
    from planner.cli.console import Console
    from planner.cli.options import EngineOptions

    spark, engine = start_spark(EngineOptions(master="local[1]"), Console("text"))
    assert engine.remote, engine  # the hive-site.xml named the metastore
    spark.sql(f"CREATE DATABASE IF NOT EXISTS {table.split('.')[0]}")  # our own name
    load_table(spark, Path(data), table, row_group_bytes=64 * 1024)
    spark.stop()
    return 0


def cli(args: list[str]) -> int:
    from pyspark.sql import SparkSession

    from planner.cli.main import cli as planner

    commands, current = [], []
    for a in args:
        if a == "--":
            commands.append(current)
            current = []
        else:
            current.append(a)
    commands.append(current)
    code = 0
    for command in commands:
        try:
            planner.main(args=command, prog_name="planner", standalone_mode=True)
        except SystemExit as e:
            code = e.code or 0
        spark = SparkSession.getActiveSession() or SparkSession._instantiatedSession
        print(json.dumps({"command": command[0], "exit": code,
                          "master": spark.sparkContext.master if spark else None,
                          "executor_memory": spark.conf.get("spark.executor.memory", None) if spark else None,
                          "executors": executors_with_tasks(spark) if spark else {}}), flush=True)
        if code:
            break
    spark = SparkSession.getActiveSession() or SparkSession._instantiatedSession
    if spark is not None:
        spark.stop()
    return code


if __name__ == "__main__":
    mode, rest = sys.argv[1], sys.argv[2:]
    sys.exit(load(*rest) if mode == "load" else cli(rest))

"""Build a layout as a table of its own, timed against a plain ``CREATE TABLE AS SELECT`` copy.

A layout is written exactly as ``planner apply`` writes it (``planner.emit``: ``CREATE TABLE …
PARTITIONED BY (planner_pid)`` with the layout in TBLPROPERTIES, then the SETs and the
``INSERT OVERWRITE`` with the write plan ``planner apply`` picks for the source's size), only into
``<db>.li_<name>`` instead of a swap-in of the source, so every layout can be read side by side
from one source table. The copy is ``CREATE TABLE <db>.li_copy STORED AS PARQUET AS SELECT *``:
what a user pays to rewrite the table without the planner. Both run under the same
``parquet.block.size`` as the source, so row groups hold about as many rows everywhere.

A build's time covers its CREATE TABLE and INSERT only (``Built.seconds``), with Spark's stages
from the status store (``stages_of``); the benchmarks put builds in rounds (``benchmarks.harness``).
"""
from __future__ import annotations

import hashlib
import itertools
import os
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Iterator, Mapping
from urllib.parse import urlparse

import pyarrow.parquet as pq
from pyspark.sql import SparkSession
from sqlglot import exp

from hive_integration.apply.apply_layout import SparkRunner
from planner.emit.apply_sql import apply_statements
from planner.emit.ddl import create_table_sql, table_expr
from planner.model.layout import Layout
from planner.model.write_plan import write_plan


@dataclass(frozen=True)
class Stage:
    """One Spark stage of a build, from the status store (no UI needed)."""

    id: int
    tasks: int
    seconds: float  # submission to completion
    cpu: float  # executor CPU seconds, all tasks
    run: float  # executor run seconds, all tasks (CPU plus waiting: I/O, other processes)
    shuffle_write: int  # bytes
    shuffle_read: int
    spill_memory: int
    spill_disk: int


@dataclass(frozen=True)
class Built:
    table: str
    seconds: float | None  # None: reused from an earlier run (--reuse), not timed
    files: int
    row_groups: int
    bytes: int
    partitions: int  # non-empty Hive partitions (0: unpartitioned)
    plan: str = ""  # the write plan (planner.model.write_plan)
    stages: tuple[Stage, ...] = field(default=())

    @property
    def cpu(self) -> float:
        return sum(s.cpu for s in self.stages)


_groups = itertools.count(1)


@contextmanager
def stages_of(spark: SparkSession, into: list) -> Iterator[None]:
    """Collect the stages of the jobs run inside the block (a job group of its own)."""
    group = f"planner-build-{os.getpid()}-{next(_groups)}"
    sc = spark.sparkContext
    sc.setJobGroup(group, group)
    try:
        yield
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)
        tracker, store = sc.statusTracker(), sc._jsc.sc().statusStore()
        ids = sorted({sid for j in tracker.getJobIdsForGroup(group) for sid in tracker.getJobInfo(j).stageIds})
        for sid in ids:
            try:
                st = store.lastStageAttempt(sid)
            except Exception:  # noqa: BLE001 - a stage skipped by AQE was never attempted
                continue
            sub, done = st.submissionTime(), st.completionTime()
            secs = (done.get().getTime() - sub.get().getTime()) / 1000 if sub.isDefined() and done.isDefined() else 0.0
            into.append(Stage(sid, st.numTasks(), secs, st.executorCpuTime() / 1e9, st.executorRunTime() / 1e3,
                              st.shuffleWriteBytes(), st.shuffleReadBytes(), st.memoryBytesSpilled(),
                              st.diskBytesSpilled()))


def drop_table(runner: SparkRunner, table: str) -> None:
    runner.execute(exp.Drop(tables=[table_expr(table, "spark")], kind="TABLE", exists=True).sql(dialect="spark"))


def _exists(spark: SparkSession, table: str) -> bool:
    return spark.catalog.tableExists(table)


def footprint(spark: SparkSession, table: str) -> tuple[int, int, int]:
    """(files, row groups, bytes) of a table's Parquet files, read from the footers."""
    paths = [urlparse(f).path for f in spark.table(table).inputFiles()]
    groups = sum(pq.ParquetFile(p).metadata.num_row_groups for p in paths)
    return len(paths), groups, sum(os.path.getsize(p) for p in paths)


def _partitions(spark: SparkSession, table: str) -> int:
    try:
        return len(spark.sql("SHOW PARTITIONS " + table_expr(table, "spark").sql(dialect="spark")).collect())
    except Exception:  # noqa: BLE001 - SHOW PARTITIONS fails on an unpartitioned table
        return 0


def _with_block_size(spark: SparkSession, block_bytes: int, fn):
    previous = spark.conf.get("parquet.block.size", None)
    spark.conf.set("parquet.block.size", str(int(block_bytes)))
    try:
        return fn()
    finally:
        if previous is None:
            spark.conf.unset("parquet.block.size")
        else:
            spark.conf.set("parquet.block.size", previous)


def copy_sql(source: str, target: str) -> str:
    """``CREATE TABLE target STORED AS PARQUET AS SELECT * FROM source``: a plain copy."""
    ctas = exp.Create(
        this=table_expr(target, "spark"), kind="TABLE",
        properties=exp.Properties(expressions=[exp.FileFormatProperty(this=exp.Var(this="PARQUET"),
                                                                      hive_format=True)]),
        expression=exp.select(exp.Star()).from_(table_expr(source, "spark")))
    return ctas.sql(dialect="hive")  # STORED AS PARQUET is Hive syntax; Spark accepts it


def build_copy(spark: SparkSession, source: str, target: str, block_bytes: int, *, reuse: bool = False) -> Built:
    """``CREATE TABLE target STORED AS PARQUET AS SELECT * FROM source``, timed."""
    runner = SparkRunner(spark)
    seconds = None
    sql = copy_sql(source, target)
    digest = _digest([sql])
    stages: list[Stage] = []
    if not (reuse and _fill_digest(spark, target) == digest and _complete(spark, target, source)):
        drop_table(runner, target)
        t = time.perf_counter()
        with stages_of(spark, stages):
            _with_block_size(spark, block_bytes, lambda: runner.execute(sql))
        seconds = time.perf_counter() - t
        _mark_filled(runner, target, digest)
    files, groups, size = footprint(spark, target)
    return Built(target, seconds, files, groups, size, 0, "CTAS", tuple(stages))


def _complete(spark: SparkSession, table: str, source: str) -> bool:
    """Whether ``table`` holds as many rows as ``source`` (a run killed between the CREATE and the
    INSERT leaves an empty table behind, which must not be reused)."""
    return spark.table(table).count() == spark.table(source).count()


FILL_KEY = "planner.bench.fill_sha256"  # the statements that filled a benchmark table


def _digest(statements: list[str]) -> str:
    return hashlib.sha256("\n".join(statements).encode()).hexdigest()


def _mark_filled(runner: SparkRunner, table: str, digest: str) -> None:
    """Record in ``table``'s properties the digest of the statements that filled it."""
    runner.execute(exp.Alter(this=table_expr(table, "spark"), kind="TABLE", actions=[exp.AlterSet(
        expressions=[exp.Properties(expressions=[exp.Property(this=exp.Literal.string(FILL_KEY),
                                                              value=exp.Literal.string(digest))])])]).sql(dialect="spark"))


def _fill_digest(spark: SparkSession, table: str) -> str | None:
    """The digest of the SQL ``table`` was filled with, if it exists and carries one."""
    if not _exists(spark, table):
        return None
    rows = spark.sql("SHOW TBLPROPERTIES " + table_expr(table, "spark").sql(dialect="spark")).collect()
    return {r[0]: r[1] for r in rows}.get(FILL_KEY)


def timed_fill(spark: SparkSession, runner: SparkRunner, create: str, fill: list[str],
               block_bytes: int) -> tuple[float, list[Stage]]:
    """Run ``create`` then the ``fill`` statements (their SETs restored afterwards) with row groups
    of ``block_bytes``: the seconds it took and Spark's stages."""
    stages: list[Stage] = []

    def run() -> None:
        runner.execute(create)
        with runner.settings_restored([s.split("=")[0].split()[1] for s in fill if s.startswith("SET ")]):
            for s in fill:
                runner.execute(s)

    t = time.perf_counter()
    with stages_of(spark, stages):
        _with_block_size(spark, block_bytes, run)
    return time.perf_counter() - t, stages


def build_layout(spark: SparkSession, layout: Layout, columns: Mapping[str, str], source: str, target: str,
                 block_bytes: int, *, reuse: bool = False) -> Built:
    """Create ``target`` with ``layout`` and fill it from ``source`` with the planner's own SQL, timed.

    The time covers the CREATE TABLE and the INSERT OVERWRITE (the SETs are free); the checks the
    apply command adds afterwards (checksums, renames) are not part of it, and neither is the
    copy's: both sides of the comparison only move data.
    """
    runner = SparkRunner(spark)
    seconds = None
    plan = write_plan(layout, table_bytes=runner.table_bytes(source))  # as `planner apply` sizes it
    stages: list[Stage] = []
    create = create_table_sql(layout, columns, target, dialect="spark")
    fill = apply_statements(layout, columns, source, target, dialect="spark", rename=False, plan=plan)
    digest = _digest([create, *fill])
    # reused only when built by the same SQL: the layout, its write hints and the planner's emission
    if not (reuse and _fill_digest(spark, target) == digest and _complete(spark, target, source)):
        drop_table(runner, target)
        seconds, stages = timed_fill(spark, runner, create, fill, block_bytes)
        _mark_filled(runner, target, digest)
    files, groups, size = footprint(spark, target)
    return Built(target, seconds, files, groups, size, _partitions(spark, target), plan.describe(), tuple(stages))


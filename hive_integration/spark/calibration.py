"""``planner calibrate``: measure what a partition, a file, a row group, a row and a byte cost on
this Spark, and keep the coefficients of the time model (``planner.costmodel.timing``).

A synthetic table (``rows`` rows: a sorted key, a date, a decimal and a string) is written three
ways in a scratch database: unpartitioned in two files, in 128 partitions of one file each, and
unpartitioned in 96 files. Probe queries then read 0.001 % to 100 % of each by ranges of the
sorted key, some counting only, some hashing every column, some narrowed to a few partitions.
Each probe runs once to warm up and then ``rounds`` times; its fastest wall time is fitted
against the work Spark's own scan metrics report for it (partitions, files and bytes selected,
rows read), with non-negative least squares. The work is Spark's, not the model's estimate: the
fit prices work, and the row model (checked against Spark on its own) says how much work a
layout leaves.

The scratch database is dropped at the end. On a 2-core local driver the whole run takes two to
three minutes.
"""
from __future__ import annotations

import datetime as dt
import math
import time
from dataclasses import dataclass
from typing import Callable

from sqlglot import exp

from hive_integration.spark.metrics import run_measured
from hive_integration.spark.spark_errors import spark_errors
from planner.costmodel.timing import Fit, ScanWork, TimeParams, fit

DATABASE = "planner_calibration"
ROW_GROUP_ROWS = 15_000
FRACTIONS = (0.00001, 0.001, 0.01, 0.05, 0.2, 0.5, 1.0)


@dataclass(frozen=True)
class Probe:
    table: str
    sql: str
    columns: tuple[str, ...]


@dataclass(frozen=True)
class Measured:
    probe: Probe
    work: ScanWork
    seconds: float


def _sql(e: exp.Expression) -> str:
    return e.sql(dialect="spark")


def _drop_schema() -> exp.Drop:
    """``DROP SCHEMA IF EXISTS planner_calibration CASCADE`` (sqlglot names a schema as a table's db:
    with ``this=`` it renders no name, and Spark reads the bare ``CASCADE`` as the schema's name)."""
    return exp.Drop(tables=[exp.Table(db=exp.to_identifier(DATABASE))], kind="SCHEMA", exists=True, cascade=True)


def _table(name: str) -> exp.Table:
    return exp.table_(exp.to_identifier(name), db=exp.to_identifier(DATABASE))


def _write_tables(spark, rows: int, say: Callable[[str], None]) -> None:
    """The three tables, each written with ``ROW_GROUP_ROWS`` rows per row group."""
    spark.sql(_sql(exp.Create(this=exp.to_identifier(DATABASE), kind="SCHEMA", exists=True)))
    source = spark.range(rows).selectExpr(
        "id AS k",
        "date_add(DATE '1992-01-01', CAST(id * 2500 / {} AS INT)) AS d".format(max(rows, 1)),
        "CAST((id * 7919) % 1000000 / 100.0 AS DECIMAL(15,2)) AS v",
        "concat('customer#', lpad(CAST((id * 104729) % 9999991 AS STRING), 12, '0')) AS s",
        "CAST(id % 128 AS BIGINT) AS p",
    )
    previous = {k: spark.conf.get(k, None) for k in ("parquet.block.row.count.limit", "parquet.block.size")}
    spark.conf.set("parquet.block.row.count.limit", str(ROW_GROUP_ROWS))
    spark.conf.set("parquet.block.size", str(512 * 1024 * 1024))
    try:
        say("writing the calibration tables …")
        (source.drop("p").repartitionByRange(2, "k").sortWithinPartitions("k")
         .write.format("hive").option("fileFormat", "parquet").mode("overwrite").saveAsTable(f"{DATABASE}.two_files"))
        (source.drop("p").repartition(96).sortWithinPartitions("k")
         .write.format("hive").option("fileFormat", "parquet").mode("overwrite").saveAsTable(f"{DATABASE}.many_files"))
        (source.repartition(128, "p").sortWithinPartitions("k")
         .write.format("hive").option("fileFormat", "parquet").mode("overwrite").partitionBy("p")
         .saveAsTable(f"{DATABASE}.partitioned"))
    finally:
        for k, v in previous.items():
            if v is None:
                spark.conf.unset(k)
            else:
                spark.conf.set(k, v)


def probes(rows: int) -> list[Probe]:
    """Ranges of the sorted key over every table, counting or hashing every column; on the
    partitioned table also narrowed to 1, 8 and 64 of its 128 partitions."""
    everything = ("k", "d", "v", "s")
    out: list[Probe] = []

    def probe(table: str, where: exp.Expression, columns: tuple[str, ...]) -> None:
        if columns == ("k",):
            select = [exp.Count(this=exp.Star())]
        else:
            hashed = exp.Anonymous(this="xxhash64", expressions=[exp.column(c) for c in columns])
            select = [exp.Count(this=exp.Star()), exp.Anonymous(this="bit_xor", expressions=[hashed])]
        q = exp.select(*select).from_(_table(table)).where(where)
        out.append(Probe(table, _sql(q), columns))

    for table in ("two_files", "many_files", "partitioned"):
        for f in FRACTIONS:
            below = exp.LT(this=exp.column("k"), expression=exp.Literal.number(max(1, int(rows * f))))
            probe(table, below, ("k",))
            probe(table, below, everything)
    for parts in (1, 8, 64):
        narrowed = exp.LT(this=exp.column("p"), expression=exp.Literal.number(parts))
        probe("partitioned", narrowed, everything)
        probe("partitioned", exp.and_(narrowed, exp.LT(this=exp.column("k"), expression=exp.Literal.number(rows // 100))),
              ("k",))
    return out


def _widths(spark) -> dict[str, float]:
    """Compressed bytes per value of each column, from one table's footers."""
    from hive_integration.spark.catalog import input_files
    from hive_integration.spark.footers import read_footers

    files = [path for path, _, _ in input_files(spark, f"{DATABASE}.two_files")]
    totals: dict[str, float] = {}
    rows = 0
    for data_file in read_footers(files, partition_columns=()):
        for group in data_file.row_groups or ():
            rows += group.rows
            for column, size in group.sizes.items():
                totals[column] = totals.get(column, 0.0) + size
    return {c: v / max(rows, 1) for c, v in totals.items()}


def measure(spark, probe: Probe, widths: dict[str, float], rounds: int) -> Measured:
    run_measured(spark, probe.sql)  # warm: the plan cache, the file listing, the OS page cache
    best, scans = math.inf, []
    for _ in range(rounds):
        t0 = time.perf_counter()
        _, scans = run_measured(spark, probe.sql)
        best = min(best, time.perf_counter() - t0)
    scan = scans[0]
    partitions = scan.partitions if scan.partitions is not None else 1
    width = sum(widths.get(c, 0.0) for c in probe.columns)
    groups = 0.0 if scan.rows == 0 else max(scan.files and 1.0, math.ceil(scan.rows / ROW_GROUP_ROWS))
    work = ScanWork(partitions=float(partitions), files=float(scan.files), row_groups=float(groups),
                    rows=float(scan.rows), bytes=float(scan.rows * width), file_bytes=float(scan.bytes))
    return Measured(probe, work, best)


def calibrate(spark, *, rows: int = 2_000_000, rounds: int = 3, say: Callable[[str], None] = lambda m: None
              ) -> tuple[Fit, list[Measured]]:
    """Measure the probes and fit the time model's coefficients; the scratch database is dropped."""
    cores = int(spark.sparkContext.defaultParallelism)
    base = TimeParams(cores=cores,
                      split_bytes=_bytes(spark.conf.get("spark.sql.files.maxPartitionBytes", "128MB")),
                      open_cost_bytes=_bytes(spark.conf.get("spark.sql.files.openCostInBytes", "4MB")))
    try:
        with spark_errors("writing the calibration tables"):
            _write_tables(spark, rows, say)
        widths = _widths(spark)
        measured = []
        all_probes = probes(rows)
        for i, probe in enumerate(all_probes, 1):
            say(f"probe {i}/{len(all_probes)} …")
            with spark_errors("running a calibration probe"):
                measured.append(measure(spark, probe, widths, rounds))
    finally:
        with spark_errors(f"dropping the scratch database {DATABASE}"):
            spark.sql(_sql(_drop_schema()))
    master = spark.sparkContext.master
    source = f"calibrated {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC on {master}, {len(measured)} probes"
    return fit([(m.work, m.seconds) for m in measured], base, source), measured


def _bytes(text: str) -> int:
    """Spark's byte sizes: ``134217728``, ``128MB``, ``4m``."""
    t = str(text).strip().lower().removesuffix("b")
    scale = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}.get(t[-1:], 1)
    return int(float(t[:-1] if scale > 1 else t) * scale)


__all__ = ["DATABASE", "Measured", "Probe", "calibrate", "measure", "probes"]

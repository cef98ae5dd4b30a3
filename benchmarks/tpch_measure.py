"""Run the probes of a held-out workload on the laid-out tables and keep what Spark says it read.

Two phases, so that load from other processes on the machine falls on every layout alike:

1. ``measure_table``, per table: one read of every column of every file (OS cache and JIT warm),
   then every distinct probe once. Rows, bytes, files and partitions come from
   ``hive_integration.spark.metrics.run_measured`` (Spark's own scan metrics), with the probe's
   ``(count, checksum)`` answer. This pass also warms the table for the timed runs.
2. ``time_round``, ``runs`` times: query by query through the timed subset, each probe runs on
   every table back to back (the table order rotated per probe and round), so that a burst of
   load elsewhere on the machine hits all layouts of a query alike rather than whichever table
   happened to be timed then. A probe's wall time is the median of its ``runs`` timed runs; the
   scan metrics of every run are checked against the first pass.

Probes whose SQL is identical on a table (a template with no lineitem predicate, e.g. every Q18)
run once per pass and share their figures.
"""
from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

from pyspark.sql import SparkSession
from sqlglot import exp

from benchmarks.tpch_probe import Probe, probe_select
from hive_integration.spark.metrics import run_measured
from planner.model.layout import Layout
from planner.rewrite.query_rewrite import rewrite_query


@dataclass
class ProbeResult:
    n: int  # rows the probe returned as matching (its answer, not a metric)
    h: int | None  # checksum of the columns read
    rows: int  # Spark scan metric numOutputRows
    bytes: int  # filesSize
    files: int  # numFiles
    partitions: int | None  # numPartitions (None: unpartitioned table)
    first: float  # seconds of the metrics pass (the first run on a warm table)
    seconds: list[float] = field(default_factory=list)  # the timed runs (probes of the timed subset only)
    partitions_listed: int = 0  # partitions the rewrite kept (catch-all included); 0: not rewritten

    @property
    def wall(self) -> float:
        return statistics.median(self.seconds) if self.seconds else self.first


@dataclass
class TableRun:
    table: str
    results: list[ProbeResult]  # one per probe, in probe order (probes with the same SQL share one)
    by_sql: dict[str, ProbeResult]
    sql: list[str]  # per probe, the SQL run on this table
    timed: list[int]  # indexes of the probes to time
    unstable: list[str]  # probes whose scan metrics or answer changed between runs (should stay empty)
    seconds: float

    @property
    def distinct(self) -> int:
        return len(self.by_sql)


def probe_sql(probe: Probe, table: str, layout: Layout | None, columns: Mapping[str, str]) -> tuple[str, int]:
    """The probe over ``table``, rewritten for pruning when the table has a layout."""
    sql = probe.sql(table)
    if layout is None:
        return sql, 0
    sql, notes = rewrite_query(sql, {table: layout}, dialect="spark", schema={table: dict(columns)})
    return sql, (len(notes[0].partitions_read) if notes and notes[0].rewritten else 0)


def _run(spark: SparkSession, sql: str, table: str) -> tuple[float, tuple, tuple]:
    t = time.perf_counter()
    rows, scans = run_measured(spark, sql)
    seconds = time.perf_counter() - t
    mine = [s for s in scans if s.table == table.lower()]
    if len(mine) != 1:
        raise RuntimeError(f"expected one scan of {table} in the probe, Spark reports {scans}")
    s = mine[0]
    answer = (int(rows[0]["n"]), None if len(rows[0]) < 2 or rows[0][1] is None else int(rows[0][1]))
    return seconds, answer, (s.rows, s.bytes, s.files, s.partitions)


def measure_table(spark: SparkSession, table: str, layout: Layout | None, columns: Mapping[str, str],
                  probes: Sequence[Probe], timed: set[int], log: Callable[[str], None] | None = None,
                  warm_up: bool = True) -> TableRun:
    """The metrics pass over ``probes`` on ``table``; ``timed``: indexes of the probes to time later.

    ``warm_up``: first read every column of every file once (skip it for a table already read).
    """
    started = time.perf_counter()
    members: dict[str, list[int]] = {}
    listed: dict[str, int] = {}
    for i, p in enumerate(probes):
        sql, kept = probe_sql(p, table, layout, columns)
        members.setdefault(sql, []).append(i)
        listed[sql] = kept
    if warm_up:
        run_measured(spark, probe_select(table, exp.true(), tuple(columns)).sql(dialect="spark"))
    results: list[ProbeResult | None] = [None] * len(probes)
    by_sql: dict[str, ProbeResult] = {}
    for k, (sql, idx) in enumerate(members.items()):
        seconds, (n, h), (rows, size, files, parts) = _run(spark, sql, table)
        by_sql[sql] = res = ProbeResult(n, h, rows, size, files, parts, seconds, [], listed[sql])
        for i in idx:
            results[i] = res
        if log and (k + 1) % 20 == 0:
            log(f"    {table}: {k + 1}/{len(members)} distinct probes")
    sql_of = [""] * len(probes)
    for sql, idx in members.items():
        for i in idx:
            sql_of[i] = sql
    return TableRun(table, results, by_sql, sql_of, sorted(timed), [], time.perf_counter() - started)


def time_round(spark: SparkSession, runs: Sequence[TableRun], round_no: int = 0) -> float:
    """One more timed run of every timed probe on every table, query-major; returns its seconds.

    A SQL text shared by several probes of a table (no lineitem predicate) runs once per round.
    """
    started = time.perf_counter()
    done: set[tuple[str, str]] = set()
    timed = sorted({i for r in runs for i in r.timed})
    for k, i in enumerate(timed):
        shift = (round_no + k) % len(runs)
        for run in list(runs[shift:]) + list(runs[:shift]):
            sql = run.sql[i]
            if i not in run.timed or (run.table, sql) in done:
                continue
            done.add((run.table, sql))
            res = run.by_sql[sql]
            seconds, answer, metrics = _run(spark, sql, run.table)
            res.seconds.append(seconds)
            if metrics != (res.rows, res.bytes, res.files, res.partitions) or answer != (res.n, res.h):
                run.unstable.append(sql)
    return time.perf_counter() - started

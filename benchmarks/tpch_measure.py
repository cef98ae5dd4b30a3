"""Run the probes of a held-out workload on the laid-out tables and keep what Spark says it read.

Two phases, so that load from other processes on the machine falls on every layout alike:

1. ``measure_table``, per table: one read of every column of every file (OS cache and JIT warm),
   then every distinct probe once. Rows, bytes, files and partitions are Spark's own scan metrics
   (``benchmarks.harness.measure``), with the probe's ``(count, checksum)`` answer. This pass also
   warms the table for the timed runs.
2. ``time_round``, ``runs`` times: query by query through the timed subset, each probe runs on
   every table back to back (``benchmarks.harness.schedule``: the table order rotated per probe
   and round), so that a burst of load elsewhere on the machine hits all layouts of a query alike
   rather than whichever table happened to be timed then. A probe's wall time is the fastest of
   its timed runs, each recorded with the load average; the scan metrics and answer of every run
   are checked against the first pass.

Probes whose SQL is identical on a table (a template with no lineitem predicate, e.g. every Q18)
run once per pass and share their figures.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

from pyspark.sql import SparkSession
from sqlglot import exp

from benchmarks.harness import Answer, measure, schedule
from benchmarks.tpch_probe import Probe, probe_select
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
    loads: list[float] = field(default_factory=list)  # the load average of each timed run

    @property
    def answer(self) -> tuple[int, int | None]:
        return self.n, self.h

    @property
    def wall(self) -> float:
        """The fastest timed run (the metrics pass when the probe was not timed)."""
        return min(self.seconds) if self.seconds else self.first


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
    sql, notes = rewrite_query(sql, {table: layout}, dialect="spark", schema={table: dict(columns)}, prune=True)
    return sql, (len(notes[0].partitions_read) if notes and notes[0].rewritten else 0)


@dataclass(frozen=True)
class ProbeRun:
    """One run of a probe on a table: its wall time, its ``(count, checksum)`` answer, and what the
    table's one scan read ``(rows, bytes, files, partitions)``."""

    seconds: float
    answer: tuple[int, int | None]
    read: tuple[int, int, int, int | None]
    load: float


def run_probe(spark: SparkSession, sql: str, table: str) -> ProbeRun:
    m = measure(spark, sql)
    mine = m.scans_of(table)
    if len(mine) != 1:
        raise RuntimeError(f"expected one scan of {table} in the probe, Spark reports {m.scans}")
    s, row = mine[0], m.rows[0]
    answer = (int(row["n"]), None if len(row) < 2 or row[1] is None else int(row[1]))
    return ProbeRun(m.seconds, answer, (s.rows, s.bytes, s.files, s.partitions), m.load)


def full_scan_answer(spark: SparkSession, table: str, columns: Sequence[str]) -> Answer:
    """Reads every column of every file of ``table`` once (warms the OS cache and the JIT)."""
    return measure(spark, probe_select(table, exp.true(), tuple(columns)).sql(dialect="spark")).answer


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
        full_scan_answer(spark, table, list(columns))
    results: list[ProbeResult | None] = [None] * len(probes)
    by_sql: dict[str, ProbeResult] = {}
    for k, (sql, idx) in enumerate(members.items()):
        run = run_probe(spark, sql, table)
        by_sql[sql] = res = ProbeResult(*run.answer, *run.read, run.seconds, [], listed[sql])
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
    for _, i, run in schedule(list(runs), 1, timed, start=round_no):
        sql = run.sql[i]
        if i not in run.timed or (run.table, sql) in done:
            continue
        done.add((run.table, sql))
        res = run.by_sql[sql]
        again = run_probe(spark, sql, run.table)
        res.seconds.append(again.seconds)
        res.loads.append(again.load)
        if again.read != (res.rows, res.bytes, res.files, res.partitions) or again.answer != res.answer:
            run.unstable.append(sql)
    return time.perf_counter() - started

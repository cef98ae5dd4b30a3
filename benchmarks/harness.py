"""What every benchmark does the same way: rounds, the answer check, Spark's scan metrics, results.

A benchmark is a short script on top of this module: it sets up what it compares (layouts, sort
keys, page sizes, workload sizes), lets the harness run and time it, and hands it the table to
report.

* **Rounds** (``schedule``, ``Timings``). Wall time on a shared machine carries the load of other
  processes. Every round runs every set-up once, in an order rotated from round to round (and from
  query to query), so a burst of load elsewhere falls on every set-up alike and no set-up is always
  the first to meet a cold cache. A figure is the fastest of the rounds, and every run records the
  1-minute load average next to its time, so a report can say how busy the machine was.
* **Answers** (``Answer``). A layout must never change what a query returns. A result is compared
  by its row count and an order-independent checksum of its rows, against the same query on the
  plain table.
* **Scan metrics** (``measure``). Rows, files, bytes and partitions each scan read, from Spark's
  executed plan (``hive_integration.spark.metrics``): what Spark did, not what the model expects.
* **Results** (``markdown_table``, ``write_result``). A Markdown file and the raw figures as JSON in
  ``benchmarks/results/``. Where a table compares the planner's choices, the default advice (what
  ``planner advise`` gives without options) comes first (``default_first``).
"""
from __future__ import annotations

import hashlib
import json
import os
import resource
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Hashable, Iterable, Iterator, Sequence, TypeVar

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"

K = TypeVar("K")
T = TypeVar("T")


# ---- the machine ---------------------------------------------------------------------------------
def load_average() -> float:
    """The 1-minute load average (NaN where the system keeps none). Above the core count, other
    processes shared the machine and wall times are inflated."""
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")


def stamped(log: Callable[[str], None] | None = None) -> Callable[[str], None]:
    """A logger that prefixes every message with the seconds since it was made."""
    started = time.perf_counter()
    out = log or (lambda m: print(m, flush=True))

    def stamp(message: str) -> None:
        out(f"[{time.perf_counter() - started:7.1f}s] {message}")

    return stamp


def reproduce(module: str, argv: Sequence[str] | None) -> str:
    """The command line that ran the benchmark ``module`` (``argv``: its arguments; None: this
    process's own)."""
    args = list(sys.argv[1:] if argv is None else argv)
    return " ".join([".venv/bin/python -m", module, *args])


# ---- rounds --------------------------------------------------------------------------------------
def rotated(items: Sequence[K], shift: int) -> list[K]:
    """``items`` starting at position ``shift`` (modulo their number), wrapped around."""
    items = list(items)
    if not items:
        return items
    k = shift % len(items)
    return items[k:] + items[:k]


def schedule(setups: Sequence[K], rounds: int, items: Sequence[T] = (None,), start: int = 0
             ) -> Iterator[tuple[int, T, K]]:
    """``(round, item, set-up)`` in the order to run them: round by round, item (query) by item,
    and for each item every set-up once, their order rotated by one from item to item and from
    round to round (``start`` shifts the first rotation: a caller running one round at a time
    passes the round's number)."""
    for r in range(rounds):
        for i, item in enumerate(items):
            for setup in rotated(setups, start + r + i):
                yield r, item, setup


@dataclass(frozen=True)
class Run:
    """One timed run of a set-up (on an item: a query, a probe; None when the set-up is the whole
    thing measured, e.g. a build)."""

    setup: Hashable
    item: Hashable
    round: int
    seconds: float
    load: float  # the 1-minute load average when the run ended
    value: Any = None  # what the run returned (a build's figures, a query's measurement)


@dataclass
class Timings:
    """Every run of a benchmark's rounds; a figure is the fastest run of its set-up."""

    runs: list[Run] = field(default_factory=list)

    def add(self, setup: Hashable, seconds: float, *, item: Hashable = None, round: int = 0,
            value: Any = None) -> Run:
        """Record a run timed by the caller (e.g. a build that times its INSERT alone)."""
        run = Run(setup, item, round, seconds, load_average(), value)
        self.runs.append(run)
        return run

    def time(self, setup: Hashable, fn: Callable[[], T], *, item: Hashable = None, round: int = 0) -> T:
        """Run ``fn``, record its wall time, and return what it returned."""
        started = time.perf_counter()
        value = fn()
        self.add(setup, time.perf_counter() - started, item=item, round=round, value=value)
        return value

    def of(self, setup: Hashable, item: Hashable = None) -> list[Run]:
        return [r for r in self.runs if r.setup == setup and r.item == item]

    def fastest(self, setup: Hashable, item: Hashable = None) -> Run:
        runs = self.of(setup, item)
        if not runs:
            raise KeyError(f"no run of {setup!r}" + ("" if item is None else f" on {item!r}"))
        return min(runs, key=lambda r: r.seconds)

    def seconds(self, setup: Hashable, item: Hashable = None) -> list[float]:
        return [r.seconds for r in self.of(setup, item)]

    def loads(self) -> tuple[float, float]:
        """(lowest, highest) load average over the runs (NaN, NaN before any)."""
        values = [r.load for r in self.runs]
        return (min(values), max(values)) if values else (float("nan"), float("nan"))


# ---- answers -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Answer:
    """What a query returned, compared without keeping the rows: how many rows, and the sum of a
    64-bit hash of each row modulo 2^64 (independent of the rows' order; a repeated row counts
    twice, where an XOR would cancel it). Values are hashed by their text, so a DECIMAL and the
    same DECIMAL read back from another layout agree."""

    count: int
    checksum: int

    @classmethod
    def of(cls, rows: Iterable[Sequence]) -> Answer:
        count = checksum = 0
        for row in rows:
            digest = hashlib.blake2b(repr(tuple(map(str, row))).encode(), digest_size=8).digest()
            checksum = (checksum + int.from_bytes(digest, "big")) % 2**64
            count += 1
        return cls(count, checksum)


# ---- Spark's scan metrics ------------------------------------------------------------------------
@dataclass(frozen=True)
class Measured:
    """One run of a query on Spark: its answer, what each scan read, and how long it took."""

    answer: Answer
    rows: tuple  # the result rows, as Spark returned them
    scans: tuple  # hive_integration.spark.metrics.ScanMetrics, one per scan node
    seconds: float  # from the call to the last row collected
    planned: float  # of which: making the DataFrame (Spark's parse and analysis; planner.sql's rewrite)
    load: float

    def scans_of(self, *tables: str) -> list:
        """The scans of ``tables`` (``db.t``, or ``t`` in any database)."""
        names = {t.lower() for t in tables}
        return [s for s in self.scans if s.table in names or s.table.split(".")[-1] in names]

    def read(self, *tables: str) -> int:
        """Rows the scans of ``tables`` (all scans without any) read: Spark's ``numOutputRows``."""
        return sum(s.rows for s in (self.scans_of(*tables) if tables else self.scans))


def measure(spark, query: str | Callable[[], Any]) -> Measured:
    """Run ``query`` (SQL text, or a function returning a DataFrame, e.g. ``planner.sql``), collect
    its rows, and read its scans' metrics from the executed plan. AQE keeps the scans of stages that
    came back empty (``scans_kept``), so every scan is counted."""
    from hive_integration.spark.metrics import collect_scan_metrics, scans_kept

    with scans_kept(spark):
        started = time.perf_counter()
        df = spark.sql(query) if isinstance(query, str) else query()
        planned = time.perf_counter() - started
        rows = df.collect()
        seconds = time.perf_counter() - started
        scans = collect_scan_metrics(df)
    return Measured(Answer.of(rows), tuple(rows), tuple(scans), seconds, planned, load_average())


# ---- processes -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class ProcessRun:
    seconds: float  # wall time, start-up included
    cpu: float  # user + system seconds of the child (less sensitive to other processes than wall time)
    stdout: str
    stderr: str


def time_process(cmd: Sequence[str], *, cwd: Path | None = None, env: dict | None = None) -> ProcessRun:
    """Run ``cmd`` as a fresh process, the way a user does; fails with its stderr if it fails."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(list(cmd), cwd=cwd, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return ProcessRun(seconds, cpu, done.stdout, done.stderr)


# ---- figures -------------------------------------------------------------------------------------
def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's rank correlation, ties given their average rank (no SciPy needed); NaN for fewer
    than three points or a constant side."""
    import numpy as np

    def ranks(v):
        v = np.asarray(v, dtype=float)
        order = v.argsort(kind="mergesort")
        r = np.empty(len(v))
        r[order] = np.arange(len(v), dtype=float)
        for val in np.unique(v):
            same = v == val
            r[same] = r[same].mean()
        return r

    if len(x) < 3:
        return float("nan")
    rx, ry = ranks(x), ranks(y)
    if rx.std() == 0 or ry.std() == 0:
        return float("nan")
    return float(np.corrcoef(rx, ry)[0, 1])


# ---- results -------------------------------------------------------------------------------------
def default_first(rows: Sequence[T], is_default: Callable[[T], bool]) -> list[T]:
    """``rows`` with the default advice's first (what a user of ``planner advise`` gets), the
    others in their order."""
    return [r for r in rows if is_default(r)] + [r for r in rows if not is_default(r)]


def markdown_table(header: Sequence[str], rows: Iterable[Sequence], align: str = "") -> list[str]:
    """A Markdown table, as lines. ``align``: a letter per column, ``l`` (left) or ``r`` (right);
    by default the first column is left-aligned and the figures after it right-aligned."""
    align = align or "l" + "r" * (len(header) - 1)
    if len(align) != len(header):
        raise ValueError(f"{len(align)} alignments for {len(header)} columns")
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---:" if a == "r" else "---" for a in align) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return lines


def write_result(name: str, text: str, data: Any = None, out_dir: Path = RESULTS, *,
                 indent: int | None = 1) -> list[Path]:
    """``<out_dir>/<name>.md`` and, with ``data``, ``<name>.json`` (``indent=None``: compact);
    returns the files written."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    md = out_dir / f"{name}.md"
    md.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
    paths = [md]
    if data is not None:
        js = out_dir / f"{name}.json"
        dumped = json.dumps(data, indent=indent, default=str) if indent is not None else \
            json.dumps(data, separators=(",", ":"), default=str)
        js.write_text(dumped + "\n", encoding="utf-8")
        paths.append(js)
    return paths

"""Gather ``TableStats`` from a real table with Spark, cached by data snapshot, in one pass.

* bytes: from the table's files (sizes, modification times);
* row count and per-column width: from the Parquet footers (row counts, compressed column-chunk
  sizes) when pyarrow can read the files here (local, HDFS, S3, GCS: ``object_stores``). No scan
  counts the rows;
* each file's row groups with their min/max (``hive_integration.spark.footers``): the table as it is,
  priced by the cost model as a contender;
* a uniform random sample in one pass over the data (Spark samples while Python turns the footers
  into row groups), each row with its file and row index (the
  table's own order): with the row count known, ``DataFrame.sample`` (Bernoulli, seeded) then a
  uniform subset of ``sample_rows`` (a ``LIMIT`` would keep the first splits' rows); without it (files not readable here),
  the ``sample_rows`` rows of smallest seeded ``rand()`` (Spark keeps a top-n heap per task), with
  the row count observed (``DataFrame.observe``) in that same pass. Shipped to Python as Arrow;
  the table is never collected;
* the metastore's column statistics (``DESCRIBE EXTENDED t col`` after
  ``ANALYZE TABLE … COMPUTE STATISTICS FOR COLUMNS``), used where they exist.

The cache key is the table name, the file listing (path, size, mtime), the sample size and the
seed: an unchanged table is never rescanned, a changed one always is. ``timings`` (a dict) gets
the seconds of each step, so the statistics pass is reported apart from the search.
"""
from __future__ import annotations

import hashlib
import json
import math
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Mapping

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.errors import PySparkException
from pyspark.sql import SparkSession

from hive_integration.spark.catalog import input_files
from hive_integration.spark.object_stores import hadoop_settings
from hive_integration.spark.footers import (
    normalize_positions,
    partition_columns,
    read_footers,
    read_metadata,
    with_positions,
)
from planner.costmodel.statistics import ColumnStats, TableStats
from planner.errors import InputError, PlannerError

DEFAULT_SAMPLE_ROWS = 200_000


def table_files(spark: SparkSession, table: str) -> list[tuple[str, int, int]]:
    """The table's data files as Spark lists them: (URI, bytes, modification time in ms), sorted."""
    return input_files(spark, table)


def table_schema(spark: SparkSession, table: str) -> dict[str, str]:
    """Column name -> declared type of an existing table (a clear error if it does not exist).

    Read by ``hive_integration.spark.columns``, as apply reads it: CHAR(n) stays char(n)."""
    from hive_integration.spark.columns import spark_columns

    try:
        return spark_columns(spark, table)
    except PySparkException as e:
        raise InputError(f"table {table} not found in the metastore ({str(e).splitlines()[0]})") from None


def _footers(data_files) -> tuple[int, dict[str, int]] | None:
    """(rows, compressed bytes per top-level column) from the footers ``read_footers`` read, or
    None when a file is not readable here or not Parquet."""
    if any(f.row_groups is None for f in data_files):
        return None
    sizes: dict[str, int] = {}
    for f in data_files:
        for g in f.row_groups:
            for name, size in g.sizes.items():
                sizes[name] = sizes.get(name, 0) + size
    return sum(f.rows for f in data_files), sizes


def _widths(footers: tuple[int, dict[str, int]] | None, schema: dict[str, str], spark: SparkSession,
            table: str) -> dict:
    rows, sizes = footers or (0, {})
    if rows and sizes:
        return {c: sizes.get(c, 0) / rows for c in schema}
    # No data files (an empty table) or not readable here: Spark's own estimate per type. PySpark's
    # DataType has no defaultSize(); the JVM's StructType does.
    fields = {f.name().lower(): f.dataType().defaultSize() for f in spark.table(table)._jdf.schema().fields()}
    return {c: float(fields.get(c, 8)) for c in schema}


def _catalog_column_stats(spark: SparkSession, table: str) -> dict[str, dict] | None:
    """Every column's metastore statistics in one catalog lookup (what ``DESCRIBE EXTENDED t col``
    shows: the same ``CatalogColumnStat`` strings), or None when the JVM catalog cannot be asked."""
    try:
        state = spark._jsparkSession.sessionState()
        meta = state.catalog().getTableMetadata(state.sqlParser().parseTableIdentifier(table))
        if not meta.stats().isDefined():
            return {}
        col_stats = meta.stats().get().colStats()
        out: dict[str, dict] = {}
        keys = col_stats.keys().iterator()
        while keys.hasNext():
            name = keys.next()
            st = col_stats.get(name).get()
            info = {"distinct_count": st.distinctCount(), "num_nulls": st.nullCount(), "min": st.min(),
                    "max": st.max()}
            out[name.lower()] = {k: (str(v.get()) if v.isDefined() else None) for k, v in info.items()}
        return out
    except Exception:  # noqa: BLE001 - py4j/catalog internals differ across versions: ask per column
        return None


def _column_stats(spark: SparkSession, table: str, column: str, known: dict[str, dict] | None = None) -> dict:
    """The metastore's statistics of ``column`` (from ``known``, the one-lookup answer, when given)."""
    if known is not None:
        return _parsed(known.get(column, {}))
    try:
        rows = spark.sql(f"DESCRIBE EXTENDED {table} `{column.replace('`', '``')}`").collect()
    except PySparkException:
        return {}
    return _parsed({r[0]: r[1] for r in rows})


def _parsed(info: Mapping[str, str | None]) -> dict:
    out = {}
    for key, name in (("distinct_count", "ndv"), ("num_nulls", "nulls")):
        v = info.get(key)
        if v not in (None, "NULL"):
            try:
                out[name] = int(v)
            except ValueError:
                pass
    for key in ("min", "max"):  # text; the core coerces it to the column's kind
        v = info.get(key)
        if v not in (None, "NULL", ""):
            out[key] = v
    return out


def _fraction(sample_rows: int, rows: int) -> float:
    """The Bernoulli fraction for a sample of about ``sample_rows`` of ``rows`` rows. It draws
    three standard deviations fewer than ``sample_rows`` (about 198,660 of 200,000), so the sample is
    almost never over and no row is sent to the driver only to be dropped (the caller takes a
    uniform subset when it is). Below 400 rows, 10 % more: a small sample then rarely falls short."""
    margin = 3 / math.sqrt(max(sample_rows, 1))
    return min(1.0, sample_rows * (1 - margin if margin < 0.15 else 1.1) / rows)


def _sample(spark: SparkSession, table: str, rows: int | None, sample_rows: int, seed: int,
            files_by_size: Mapping[int, str] | None = None, positions: bool = True) -> tuple[pa.Table, int]:
    """(a uniform sample of about ``sample_rows`` rows, the table's row count), in one pass.

    With ``positions`` each sampled row carries its file and row number: the table's own order,
    which prices the table as it is only where its footers cannot be read. They are not free (the
    statistics pass with and without them: ``benchmarks/results/tpch_build_sf10.md``), so the caller
    asks for them only then."""
    from pyspark.sql import Observation
    from pyspark.sql import functions as F

    df = spark.table(table)
    if positions:
        df = with_positions(df, files_by_size)
    if rows is not None:
        if not rows:
            return df.limit(0).toArrow(), 0
        return df.sample(False, _fraction(sample_rows, rows), seed).toArrow(), rows
    observed = Observation(f"planner_rows_{uuid.uuid4().hex}")
    key = f"planner_sample_key_{uuid.uuid4().hex[:8]}"
    picked = (df.observe(observed, F.count(F.lit(1)).alias("rows"))
              .withColumn(key, F.rand(seed)).orderBy(key).limit(sample_rows).drop(key))
    sample = picked.toArrow()
    return sample, int(observed.get["rows"])


def gather_stats(spark: SparkSession, table: str, *, sample_rows: int = DEFAULT_SAMPLE_ROWS, seed: int = 7,
                 cache_dir: Path | None = None, progress=None, timings: dict | None = None) -> TableStats:
    timings = {} if timings is None else timings
    started = time.perf_counter()

    def step(name: str, since: float) -> float:
        now = time.perf_counter()
        timings[name] = timings.get(name, 0.0) + now - since
        return now

    schema = table_schema(spark, table)
    files = table_files(spark, table)
    t = step("listing", started)
    key = hashlib.sha256(json.dumps([table, files, sample_rows, seed, "positions-without-footers", "partition-columns"]).encode()).hexdigest()[:20]
    uris = [f for f, _, _ in files]
    if cache_dir is not None:
        cached = _load(cache_dir, key)
        if cached is not None:  # the partition columns are kept with it: no Spark call at all
            data_files = read_footers(uris, _load_partition_columns(cache_dir, key), hadoop=hadoop_settings(spark))
            step("cache", t)
            timings["total"], timings["cached"] = time.perf_counter() - started, True
            if progress:
                progress(f"statistics of {table}: unchanged since the cached snapshot {key} "
                         f"({timings['total']:.1f} s)")
            return replace(cached, data_files=data_files)
    if progress:
        progress(f"scanning {table}: {len(files)} files")
    with ThreadPoolExecutor(1) as pool:
        # Spark samples while this thread reads the footers and the metastore's column statistics.
        def sample_timed(rows: int | None, files_by_size: dict[int, str] | None, positions: bool = True):
            """The sample (column names lower case, positions' files as paths) and the row count."""
            since = time.perf_counter()
            try:
                sample, rows = _sample(spark, table, rows, sample_rows, seed, files_by_size, positions)
            finally:
                step("sample", since)
            sample = sample.rename_columns([c.lower() for c in sample.column_names])
            try:
                return normalize_positions(sample, files_by_size), rows
            except LookupError:  # a sampled row's file size is not listed: the table changed meanwhile
                return sample_timed(rows, None, positions)  # files named by path

        by_size = {size: uri for uri, size, _ in files}
        by_size = by_size if len(by_size) == len(files) else None  # sizes name the files only when distinct
        metadata = read_metadata(uris, hadoop_settings(spark))  # parsed once: the row count now, the row groups below
        footer_rows = None if any(m is None for m in metadata) else sum(m.num_rows for m in metadata)
        # every footer parsed: the table as it is is priced from them, and the sample needs no positions
        positions = footer_rows is None
        pending = pool.submit(sample_timed, footer_rows, by_size, positions)
        parts = partition_columns(spark, table)
        data_files = read_footers(uris, parts, metadata)  # row groups of each file: the table as it is
        footers = _footers(data_files)
        widths = _widths(footers, schema, spark, table)
        known = _catalog_column_stats(spark, table)
        columns = tuple(ColumnStats(c, ty, widths.get(c, 8.0), **_column_stats(spark, table, c, known))
                        for c, ty in schema.items())
        step("footers and column statistics (while sampling)", t)
        try:
            sample, rows = pending.result()
            if not positions and any(f.row_groups is None for f in data_files):
                # a footer parsed but its row groups did not: the sample's positions must stand in
                sample, rows = sample_timed(rows, None)
        except PySparkException as e:
            raise PlannerError(f"reading {table} failed: {str(e).splitlines()[0]}") from None
    t = time.perf_counter()
    if sample.num_rows > sample_rows:  # a uniform subset (a LIMIT would keep the first splits' rows)
        sample = sample.take(np.sort(np.random.default_rng(seed).choice(sample.num_rows, sample_rows, replace=False)))
    step("sample subset", t)
    stats = TableStats(table, rows, sum(s for _, s, _ in files), columns, sample, snapshot=key, files=len(files),
                       data_files=data_files)
    if cache_dir is not None:
        _save(cache_dir, key, stats, parts)
    timings["total"], timings["cached"] = time.perf_counter() - started, False
    if progress:
        how = "row count from the Parquet footers" if footers else "row count observed in the sample's pass"
        progress(f"statistics of {table}: {rows:,} rows ({how}), a sample of {sample.num_rows:,} rows in one "
                 f"pass, {timings['total']:.1f} s")
    return stats


def _load_partition_columns(cache_dir: Path, key: str) -> list[str]:
    return json.loads((cache_dir / f"{key}.json").read_text()).get("partition_columns", [])


def _save(cache_dir: Path, key: str, stats: TableStats, partition_columns: list[str]) -> None:
    cache_dir.mkdir(parents=True, exist_ok=True)
    pq.write_table(stats.sample, cache_dir / f"{key}.parquet")
    meta = {"table": stats.table, "rows": stats.rows, "bytes": stats.bytes, "files": stats.files,
            "partition_columns": partition_columns,
            "columns": [[c.name, c.type, c.width, c.ndv, c.nulls, c.min, c.max] for c in stats.columns]}
    tmp = cache_dir / f"{key}.json.tmp"
    tmp.write_text(json.dumps(meta))
    tmp.replace(cache_dir / f"{key}.json")  # the JSON appears last: its presence means complete


def _load(cache_dir: Path, key: str) -> TableStats | None:
    meta_path = cache_dir / f"{key}.json"
    if not meta_path.exists():
        return None
    try:
        meta = json.loads(meta_path.read_text())
        sample = pq.read_table(cache_dir / f"{key}.parquet")
    except (OSError, ValueError, pa.ArrowException):
        return None
    cols = tuple(ColumnStats(*c) for c in meta["columns"])
    return TableStats(meta["table"], meta["rows"], meta["bytes"], cols, sample, snapshot=key, files=meta["files"])

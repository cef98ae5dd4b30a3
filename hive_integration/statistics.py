"""Gather ``TableStats`` from a real table with Spark, cached by data snapshot.

* row count and bytes: from the table's files (sizes, modification times) and ``count()``;
* per-column width: from the Parquet footers' compressed column-chunk sizes when the files are
  local, else Spark's default type sizes;
* a uniform random sample: ``DataFrame.sample`` (Bernoulli, seeded) then ``limit``, shipped to
  Python as Arrow; the table is never collected;
* the metastore's column statistics (``DESCRIBE EXTENDED t col`` after
  ``ANALYZE TABLE … COMPUTE STATISTICS FOR COLUMNS``), used where they exist.

The cache key is the table name, the file listing (path, size, mtime), the sample size and the
seed: an unchanged table is never rescanned, a changed one always is.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from pathlib import Path
from urllib.parse import urlparse

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.errors import PySparkException
from pyspark.sql import SparkSession

from hive_integration.footers import normalize_positions, table_footers, with_positions
from planner.costmodel.statistics import ColumnStats, TableStats
from planner.errors import InputError, PlannerError

DEFAULT_SAMPLE_ROWS = 200_000


def _files(spark: SparkSession, table: str) -> list[tuple[str, int, int]]:
    jvm = spark._jvm
    conf = spark._jsc.hadoopConfiguration()
    out = []
    for f in sorted(spark.table(table).inputFiles()):
        p = jvm.org.apache.hadoop.fs.Path(f)
        st = p.getFileSystem(conf).getFileStatus(p)
        out.append((f, int(st.getLen()), int(st.getModificationTime())))
    return out


def table_schema(spark: SparkSession, table: str) -> dict[str, str]:
    """Column name -> declared type of an existing table (a clear error if it does not exist).

    Read by ``hive_integration.columns``, as apply reads it: CHAR(n) stays char(n)."""
    from hive_integration.columns import spark_columns

    try:
        return spark_columns(spark, table)
    except PySparkException as e:
        raise InputError(f"table {table} not found in the metastore ({str(e).splitlines()[0]})") from None


def _widths(files: list[tuple[str, int, int]], schema: dict[str, str], spark: SparkSession, table: str) -> dict:
    sizes: dict[str, int] = {}
    rows = 0
    try:
        for f, _, _ in files:
            u = urlparse(f)
            if u.scheme not in ("", "file"):
                raise OSError("not local")
            md = pq.ParquetFile(u.path).metadata
            rows += md.num_rows
            for g in range(md.num_row_groups):
                rg = md.row_group(g)
                for c in range(rg.num_columns):
                    col = rg.column(c)
                    name = col.path_in_schema.split(".")[0].lower()
                    sizes[name] = sizes.get(name, 0) + col.total_compressed_size
    except (OSError, pa.ArrowException):
        sizes, rows = {}, 0
    if rows and sizes:
        return {c: sizes.get(c, 0) / rows for c in schema}
    # No data files (an empty table) or not readable here: Spark's own estimate per type. PySpark's
    # DataType has no defaultSize(); the JVM's StructType does.
    fields = {f.name().lower(): f.dataType().defaultSize() for f in spark.table(table)._jdf.schema().fields()}
    return {c: float(fields.get(c, 8)) for c in schema}


def _column_stats(spark: SparkSession, table: str, column: str) -> dict:
    try:
        rows = spark.sql(f"DESCRIBE EXTENDED {table} `{column.replace('`', '``')}`").collect()
    except PySparkException:
        return {}
    info = {r[0]: r[1] for r in rows}
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


def gather_stats(spark: SparkSession, table: str, *, sample_rows: int = DEFAULT_SAMPLE_ROWS, seed: int = 7,
                 cache_dir: Path | None = None, progress=None) -> TableStats:
    schema = table_schema(spark, table)
    files = _files(spark, table)
    key = hashlib.sha256(json.dumps([table, files, sample_rows, seed, "positions"]).encode()).hexdigest()[:20]
    footers = table_footers(spark, table, [f for f, _, _ in files])  # cheap: no Spark job
    if cache_dir is not None:
        cached = _load(cache_dir, key)
        if cached is not None:
            return replace(cached, data_files=footers)
    if progress:
        progress(f"scanning {table}: {len(files)} files")
    df = spark.table(table)
    try:
        rows = df.count()
        fraction = min(1.0, sample_rows * 1.1 / max(rows, 1))
        sample = with_positions(df).sample(False, fraction, seed).toArrow() if rows else df.limit(0).toArrow()
    except PySparkException as e:
        raise PlannerError(f"reading {table} failed: {str(e).splitlines()[0]}") from None
    if sample.num_rows > sample_rows:  # a uniform subset (a LIMIT would keep the first splits' rows)
        sample = sample.take(np.sort(np.random.default_rng(seed).choice(sample.num_rows, sample_rows, replace=False)))
    sample = normalize_positions(sample.rename_columns([c.lower() for c in sample.column_names]))
    widths = _widths(files, schema, spark, table)
    columns = tuple(ColumnStats(c, t, widths.get(c, 8.0), **_column_stats(spark, table, c))
                    for c, t in schema.items())
    stats = TableStats(table, rows, sum(s for _, s, _ in files), columns, sample, snapshot=key, files=len(files),
                       data_files=footers)
    if cache_dir is not None:
        _save(cache_dir, key, stats)
    return stats


def _save(cache_dir: Path, key: str, stats: TableStats) -> None:
    cache_dir.mkdir(parents=True, exist_ok=True)
    pq.write_table(stats.sample, cache_dir / f"{key}.parquet")
    meta = {"table": stats.table, "rows": stats.rows, "bytes": stats.bytes, "files": stats.files,
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

"""The table's physical order as its Parquet footers describe it, and the sample's position in it.

The cost model prices "the table as it is now" from these, exactly: per data file its Hive
partition, and per row group its row count and each column's min, max and NULL count
(``planner.costmodel.statistics.DataFile``). Footers are read with pyarrow from the files
themselves, wherever they live (a local folder, HDFS, S3, Google Cloud Storage:
``hive_integration.spark.object_stores``, with the session's own S3A credentials); no Spark job
runs. Where a file cannot be read here (a file system pyarrow cannot open on this machine), its
``row_groups`` is ``None`` and the model falls back to the sample's positions.

``with_positions`` adds Spark's hidden ``_metadata.file_path`` and ``_metadata.row_index`` to the
rows the statistics sample, so the core knows in which order the sampled rows are stored (an
unordered partition of a new layout keeps that order; see ``planner.costmodel.sample``).

Partition directories are ``col=value`` segments, with Hive's escaping of special characters
(``%2F`` for ``/``) and ``__HIVE_DEFAULT_PARTITION__`` for NULL; a URI escapes once more (a
space is ``%20``, Hive's ``%2F`` is ``%252F``).
"""
from __future__ import annotations

import datetime as dt
from typing import Mapping, Sequence
from urllib.parse import unquote, urlparse

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyspark.errors import PySparkException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from planner.costmodel.statistics import (
    POSITION_FILE,
    POSITION_ROW,
    ChunkStats,
    DataFile,
    RowGroupStats,
)

HIVE_DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"


def local_path(uri: str) -> str | None:
    """The local file system path of a ``file:`` URI (or a plain path); ``None`` elsewhere."""
    u = urlparse(uri)
    if u.scheme not in ("", "file"):
        return None
    return unquote(u.path)


def partition_values(path: str, partition_columns: Sequence[str]) -> tuple[tuple[str, str | None], ...]:
    """The ``col=value`` directories of ``path`` for the table's partition columns, in their order."""
    wanted = {c.lower() for c in partition_columns}
    found: dict[str, str | None] = {}
    for segment in path.split("/")[:-1]:
        key, eq, value = segment.partition("=")
        if eq and key.lower() in wanted:
            value = unquote(value)  # Hive's own escaping of special characters
            found[key.lower()] = None if value == HIVE_DEFAULT_PARTITION else value
    return tuple((c.lower(), found.get(c.lower())) for c in partition_columns)


def _value(v):
    """A footer statistic in the sample's value model: aware timestamps become local wall time."""
    if isinstance(v, dt.datetime) and v.tzinfo is not None:
        return v.astimezone().replace(tzinfo=None)
    if isinstance(v, bytes):
        return None  # binary without a string annotation: nothing the planner compares
    return v


LEVEL_ENCODINGS = {"RLE", "BIT_PACKED"}  # repetition and definition levels


def dictionary_only(chunk: pq.ColumnChunkMetaData) -> bool:
    """Whether every data page of ``chunk`` may be dictionary-encoded, so that parquet-mr's
    ``DictionaryFilter`` can drop its row group. parquet-mr (Spark's writer) writes
    ``PLAIN_DICTIONARY`` pages, and where the dictionary does not pay on the first page (a column of
    nearly unique values) plain pages and no dictionary page: both tell for certain. A writer of
    ``RLE_DICTIONARY`` pages (parquet-cpp) lists ``PLAIN`` for its dictionary page whether or not
    it fell back, so its chunks count as dictionary-encoded, as before: the table as it is then
    looks no worse than it is, the safe side for the guard."""
    encodings = set(chunk.encodings)
    if chunk.dictionary_page_offset is None:
        return False
    if "PLAIN_DICTIONARY" in encodings:
        return encodings <= {"PLAIN_DICTIONARY"} | LEVEL_ENCODINGS
    return "RLE_DICTIONARY" in encodings


def has_bloom_filter(chunk: pq.ColumnChunkMetaData) -> bool:
    """Whether the chunk's metadata points at a bloom filter (``bloom_filter_offset``)."""
    return getattr(chunk, "bloom_filter_offset", None) is not None


def groups_holding(paths: Sequence[str], column: str, value) -> tuple[list[int], list[int]]:
    """Row counts of the row groups of the local Parquet files ``paths`` that hold ``value`` in
    ``column``, and of the others whose min and max span it (the only other groups a reader can
    read for ``column = value``: the statistics drop the rest). The floor of any lookup: no
    filter can skip a group that holds the value."""
    holding, other = [], []
    for path in paths:
        f = pq.ParquetFile(path)
        for g in range(f.metadata.num_row_groups):
            rg = f.metadata.row_group(g)
            chunk = next(rg.column(j) for j in range(rg.num_columns) if rg.column(j).path_in_schema.lower() == column)
            st = chunk.statistics
            if st is not None and st.has_min_max and not st.min <= value <= st.max:
                continue  # the statistics drop it: it cannot hold the value, and is never read
            got = f.read_row_group(g, columns=[column]).column(0).to_pylist()
            (holding if value in got else other).append(rg.num_rows)
    return holding, other


def _row_group(md: pq.RowGroupMetaData) -> RowGroupStats:
    columns: dict[str, ChunkStats] = {}
    sizes: dict[str, int] = {}
    for j in range(md.num_columns):
        chunk = md.column(j)
        path = chunk.path_in_schema
        top = path.split(".")[0].lower()
        sizes[top] = sizes.get(top, 0) + chunk.total_compressed_size
        if "." in path:
            continue  # a nested field: never a partition or sort attribute
        st = chunk.statistics
        if st is None:
            continue  # no statistics written: unknown
        nulls = st.null_count if st.has_null_count else None
        if st.has_min_max:
            lo, hi = _value(st.min), _value(st.max)
            if lo is None or hi is None:
                continue  # values the planner cannot compare: unknown
            columns[path.lower()] = ChunkStats(lo, hi, nulls, dictionary_only(chunk), has_bloom_filter(chunk))
        elif nulls is not None and nulls == md.num_rows:
            columns[path.lower()] = ChunkStats(None, None, nulls)  # only NULLs
        # else: no min/max although there are values: unknown
    return RowGroupStats(md.num_rows, columns, sizes)


def read_metadata(uris: Sequence[str], hadoop: Mapping[str, str] | None = None) -> list[pq.FileMetaData | None]:
    """Each file's parsed Parquet footer (None: not readable here, or not a Parquet file). Local
    files directly; others through pyarrow's file system for their scheme, with the S3A settings
    in ``hadoop`` (``object_stores.hadoop_settings`` of the session)."""
    from hive_integration.spark.object_stores import footers

    out: list = [None] * len(uris)
    remote = []
    for i, uri in enumerate(uris):
        path = local_path(uri)
        if path is None:
            remote.append(i)
            continue
        try:
            out[i] = pq.read_metadata(path)
        except (OSError, pa.ArrowException):
            out[i] = None
    for i, md in zip(remote, footers([uris[i] for i in remote], hadoop)):
        out[i] = md
    return out


def read_footers(uris: Sequence[str], partition_columns: Sequence[str] = (),
                 metadata: Sequence[pq.FileMetaData | None] | None = None,
                 hadoop: Mapping[str, str] | None = None) -> tuple[DataFile, ...]:
    """Every file's Hive partition, row groups and statistics, in the order given, from
    ``metadata`` (``read_metadata``'s) when the footers were read already. A file that is not
    readable here or not a Parquet file has ``row_groups=None`` (then the core falls back to the
    sample's positions)."""
    out = []
    for uri, md in zip(uris, read_metadata(uris, hadoop) if metadata is None else metadata):
        path = local_path(uri)
        groups = None
        if md is not None:
            try:
                groups = tuple(_row_group(md.row_group(i)) for i in range(md.num_row_groups))
            except (OSError, pa.ArrowException):
                groups = None
        name = path if path is not None else uri
        out.append(DataFile(name, partition_values(unquote(urlparse(uri).path), partition_columns), groups))
    return tuple(out)


def partition_columns(spark: SparkSession, table: str) -> list[str]:
    """The table's Hive partition columns, lower case. From the session catalog's table metadata
    (one metastore lookup) where the JVM can be asked; ``listColumns`` is much slower,
    more so beside the statistics pass's sample job."""
    try:
        state = spark._jsparkSession.sessionState()
        names = state.catalog().getTableMetadata(state.sqlParser().parseTableIdentifier(table)).partitionColumnNames()
        return [names.apply(i).lower() for i in range(names.size())]
    except Exception:  # noqa: BLE001 - py4j/catalog internals differ across versions and Spark Connect
        pass
    try:
        return [c.name.lower() for c in spark.catalog.listColumns(table) if c.isPartition]
    except PySparkException:
        return []


def table_footers(spark: SparkSession, table: str, uris: Sequence[str]) -> tuple[DataFile, ...]:
    from hive_integration.spark.object_stores import hadoop_settings

    return read_footers(uris, partition_columns(spark, table), hadoop=hadoop_settings(spark))


def with_positions(df: DataFrame, files_by_size: Mapping[int, str] | None = None) -> DataFrame:
    """``df`` with each row's data file and row number inside it (Spark's hidden file metadata),
    or ``df`` itself where Spark has no such metadata (a Hive SerDe table it does not convert).

    With ``files_by_size`` (the table's files by their size, every size distinct) a row names its
    file by the file's size, a number, instead of its path: a path string on every sampled row
    slows the statistics pass down noticeably. ``normalize_positions``
    turns the sizes back into paths."""
    file = F.col("_metadata.file_size") if files_by_size else F.col("_metadata.file_path")
    try:
        return df.select("*", file.alias(POSITION_FILE), F.col("_metadata.row_index").alias(POSITION_ROW))
    except PySparkException:
        return df


def normalize_positions(sample: pa.Table, files_by_size: Mapping[int, str] | None = None) -> pa.Table:
    """The sample's file column as local paths (as ``read_footers`` names files), when present.
    Raises ``LookupError`` when a row's file size is not among ``files_by_size`` (the table
    changed after it was listed)."""
    if POSITION_FILE not in sample.column_names:
        return sample
    col = sample.column(POSITION_FILE).combine_chunks()
    if pa.types.is_integer(col.type):
        sizes = sorted(files_by_size or {})
        at = pc.index_in(col, value_set=pa.array(sizes, pa.int64()))
        if at.null_count:
            raise LookupError("a sampled row's file is not among the files listed")
        names = pa.array([local_path(files_by_size[k]) or files_by_size[k] for k in sizes], pa.string())
        paths = pc.take(names, at)
    else:
        col = col.dictionary_encode()
        names = pa.array([local_path(u) or u for u in col.dictionary.to_pylist()], pa.string())
        paths = pc.take(names, col.indices)
    return sample.set_column(sample.column_names.index(POSITION_FILE), POSITION_FILE, paths)


__all__ = ["groups_holding", "local_path", "normalize_positions", "partition_columns", "partition_values", "read_footers", "read_metadata",
           "table_footers", "with_positions"]

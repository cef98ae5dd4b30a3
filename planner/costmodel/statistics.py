"""Table statistics as plain values: the core never talks to Spark.

``hive_integration.spark.statistics_pass`` gathers these from a real table (row count, bytes on disk, column
widths, metastore column statistics, and a uniform random sample taken by Spark); tests build them
by hand. ``hive_integration.spark.footers`` adds what the table's Parquet footers say about its physical
order: per data file and per row group, the row count and each column's min, max and NULL count
(``data_files``), and the sample's position in the table (``POSITION_FILE``/``POSITION_ROW``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

import pyarrow as pa

from planner.semantics.kinds import Kind
from planner.semantics.types import kind_of_type

# Sample columns that say where a sample row lies in the table: its data file and its row number
# inside that file. ``SampleFrame`` orders the sample by them and removes them from its columns.
POSITION_FILE = "_planner_file"
POSITION_ROW = "_planner_row"
POSITION_COLUMNS = (POSITION_FILE, POSITION_ROW)


@dataclass(frozen=True)
class ColumnStats:
    name: str
    type: str
    width: float  # average bytes per value on disk (compressed), for bytes-read estimates
    ndv: int | None = None  # from ANALYZE ... FOR COLUMNS when available
    nulls: int | None = None
    min: Any = None
    max: Any = None

    @property
    def kind(self) -> Kind:
        return kind_of_type(self.type)


@dataclass(frozen=True, slots=True)
class ChunkStats:
    """One column's Parquet statistics in one row group. ``min``/``max`` are ``None`` when the
    footer has none (no values, or statistics not written); ``nulls`` is ``None`` when unknown."""

    min: Any
    max: Any
    nulls: int | None
    # Every data page is dictionary-encoded, so Parquet's dictionary filter can drop the row group
    # for a lookup (a writer falls back to plain pages where a dictionary does not pay).
    dictionary: bool = True
    # The chunk has a bloom filter (its footer names one), so a lookup can drop the row group.
    bloom: bool = False


@dataclass(frozen=True)
class RowGroupStats:
    rows: int
    columns: Mapping[str, ChunkStats] = field(default_factory=dict)  # a column not named: unknown
    # compressed bytes per top-level column (nested fields summed into theirs): the column widths
    sizes: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class DataFile:
    """One data file of the table: its Hive partition (raw text from the path, ``None`` for the
    default partition) and its row groups in file order (``None``: its footer could not be read)."""

    path: str
    partition: tuple[tuple[str, str | None], ...]
    row_groups: tuple[RowGroupStats, ...] | None

    @property
    def rows(self) -> int:
        return sum(g.rows for g in self.row_groups or ())


@dataclass(frozen=True, eq=False)
class TableStats:
    table: str
    rows: int
    bytes: int
    columns: tuple[ColumnStats, ...]
    sample: pa.Table = field(repr=False)
    snapshot: str = ""
    files: int = 1
    row_group_rows: int = 0  # rows per Parquet row group of the current table (0: unknown)
    data_files: tuple[DataFile, ...] | None = field(default=None, repr=False)  # None: files not listed
    # joined attributes the sample carries (``planner.costmodel.joined``): sample column -> Spark type
    joined: tuple[tuple[str, str], ...] = ()
    joined_rows: tuple[tuple[str, int], ...] = ()  # rows of each table the joined attributes' paths join

    @property
    def schema(self) -> dict[str, str]:
        return {c.name: c.type for c in self.columns}

    @property
    def widths(self) -> Mapping[str, float]:
        return {c.name: c.width for c in self.columns}

    def column(self, name: str) -> ColumnStats | None:
        return next((c for c in self.columns if c.name == name), None)

    @property
    def scale(self) -> float:
        """Table rows represented by one sample row."""
        return self.rows / max(self.sample.num_rows, 1)

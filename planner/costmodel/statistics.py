"""Table statistics as plain values: the core never talks to Spark.

``hive_integration.statistics`` gathers these from a real table (row count, bytes on disk, column
widths, metastore column statistics, and a uniform random sample taken by Spark); tests build them
by hand.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

import pyarrow as pa

from planner.cnf.values import Kind, kind_of_type


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

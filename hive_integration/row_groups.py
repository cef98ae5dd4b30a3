"""Row-group [min, max] ranges of a table's Parquet files, per partition, read from the footers.

Only footers are read (a few KB per file), never data pages. Files Spark lists for the table
(``DataFrame.inputFiles``) that are not local are skipped and counted; the partition a file
belongs to is the ``<partition column>=<id>`` folder of its path (Hive's layout), or None.
"""
from __future__ import annotations

import re
from typing import Any, Iterable, Iterator
from urllib.parse import unquote, urlparse

import pyarrow as pa
import pyarrow.parquet as pq


def local_path(uri: str) -> str | None:
    u = urlparse(uri)
    return unquote(u.path) if u.scheme in ("", "file") else None


def row_group_ranges(files: Iterable[str], columns: Iterable[str], partition_column: str | None = None
                     ) -> Iterator[tuple[Any, dict[str, tuple[Any, Any]]]]:
    """Per row group: (partition, column -> (min, max)) for ``columns`` with statistics."""
    wanted = {c.lower() for c in columns}
    part_re = re.compile(rf"/{re.escape(partition_column)}=(-?\d+)/", re.I) if partition_column else None
    for uri in files:
        path = local_path(uri)
        if path is None:
            continue
        m = part_re.search(path) if part_re else None
        part = int(m.group(1)) if m else None
        try:
            md = pq.ParquetFile(path).metadata
        except (OSError, pa.ArrowException):
            continue
        names = [md.schema.column(i).path.split(".")[0].lower() for i in range(md.num_columns)]
        for g in range(md.num_row_groups):
            rg = md.row_group(g)
            stats = {}
            for i, name in enumerate(names):
                if name not in wanted:
                    continue
                s = rg.column(i).statistics
                if s is not None and s.has_min_max:
                    stats[name] = (s.min, s.max)
            yield part, stats

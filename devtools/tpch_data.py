"""TPC-H ``lineitem`` data: generate it with tpchgen-cli and load it as a Hive table.

Why: the planner's demos, tests and benchmarks all run over lineitem.  tpchgen-cli
(a Rust binary installed as a Python wheel) writes a scale-factor-1 file in ~6 s
and accepts fractional scale factors (``-s 0.01`` -> 60,175 rows, ~2 MB).

tpchgen-cli 4.0 writes ONE file ``<out>/lineitem.parquet`` unless ``--parts N``
is given, in which case it writes ``<out>/lineitem/lineitem.<n>.parquet``; we
accept both shapes.  Its Parquet uses Arrow's ``string_view`` in the embedded
Arrow schema, field ids, and REQUIRED columns; Spark reads all of that fine
(types: bigint, int, decimal(15,2), date, string).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from pyspark.sql import SparkSession

from hive_integration.spark.spark_errors import spark_errors
from planner.errors import InputError, PlannerError

TABLE = "lineitem"


def tpchgen_executable() -> str:
    """tpchgen-cli next to this interpreter (the venv), else from PATH."""
    local = Path(sys.executable).parent / "tpchgen-cli"
    if local.exists():
        return str(local)
    found = shutil.which("tpchgen-cli")
    if not found:
        raise PlannerError("tpchgen-cli not found: it comes with the demo, test and bench extras "
                           "(./dev installs them; by hand: pip install -c constraints.txt -e '.[demo]')")
    return found


def _existing_output(directory: Path, table: str = TABLE) -> Path | None:
    single = directory / f"{table}.parquet"
    if single.is_file():
        return single
    parts = directory / table
    if parts.is_dir() and any(parts.glob("*.parquet")):
        return parts
    return None


def generate_lineitem(scale: float, out_dir: Path) -> Path:
    """Parquet lineitem at ``scale`` under ``out_dir/sf<scale>/``; reused if present."""
    return generate_table(scale, out_dir, TABLE)


def generate_table(scale: float, out_dir: Path, table: str) -> Path:
    """Parquet TPC-H ``table`` at ``scale`` under ``out_dir/sf<scale>[-<table>]/``; reused if present.

    Returns the file (or the directory of part files).  Generation goes to a
    temporary sibling directory that is renamed at the end, so an interrupted run
    is never mistaken for a cached result.
    """
    if scale <= 0:
        raise InputError(f"TPC-H scale factor must be positive, got {scale}")
    target = Path(out_dir).resolve() / (f"sf{scale:g}" if table == TABLE else f"sf{scale:g}-{table}")
    cached = _existing_output(target, table)
    if cached is not None:
        return cached
    staging = target.with_name(target.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    cmd = [
        tpchgen_executable(), "parquet", "-s", f"{scale:g}", f"--tables={table}",
        f"--output-dir={staging}", "--no-progress",
    ]
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        raise PlannerError(f"{' '.join(cmd)} failed ({result.returncode}): {result.stderr.strip()}")
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)
    found = _existing_output(target, table)
    if found is None:
        raise PlannerError(f"tpchgen-cli wrote no {table} parquet into {target}")
    return found


def load_table(
    spark: SparkSession,
    parquet_path: Path,
    table: str,
    *,
    row_group_bytes: int | None = None,
    replace: bool = True,
) -> None:
    """Create Hive table ``table`` (``STORED AS PARQUET``) holding the rows of ``parquet_path``.

    A Hive-format table (not ``USING parquet``) so that the metastore, HiveServer2
    and Hive itself see an ordinary Hive table; Spark still reads and writes it
    with its native Parquet code (``spark.sql.hive.convert*`` defaults).
    ``row_group_bytes`` sets ``parquet.block.size`` for this write only.  It is
    applied as a session conf and then restored rather than passed as a write
    option, because options of a ``hive`` format write are persisted as SerDe
    properties and would silently govern every later insert.
    """
    with spark_errors(f"reading {parquet_path}"):
        df = spark.read.parquet(str(parquet_path))
    previous = spark.conf.get("parquet.block.size", None)
    if row_group_bytes is not None:
        spark.conf.set("parquet.block.size", str(int(row_group_bytes)))
    try:
        with spark_errors(f"loading {parquet_path} into table {table}"):
            (
                df.write.format("hive")
                .option("fileFormat", "parquet")
                .mode("overwrite" if replace else "errorifexists")
                .saveAsTable(table)
            )
    finally:
        if row_group_bytes is not None:
            if previous is None:
                spark.conf.unset("parquet.block.size")
            else:
                spark.conf.set("parquet.block.size", previous)

"""``planner apply ADVICE_DIR``: rewrite the table into the advised layout, verified and swapped in.

The layout comes from ``ADVICE_DIR/layout.json``; the DDL is emitted again for the engine in use,
and ``ddl.sql`` (when present) is only read to check the source still has the schema the advice
was made for. See ``hive_integration.apply`` for the steps and how a re-run resumes.
"""
from __future__ import annotations

import json
from pathlib import Path

import click

from planner.cli.advise import metastore_option, spark_for
from planner.cli.main import cli
from planner.emit.ddl import columns_of_create
from planner.errors import InputError, LayoutError
from planner.layout import Layout


def read_layout(advice_dir: Path) -> Layout:
    path = advice_dir / "layout.json"
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise LayoutError(f"{path}: cannot read the layout: {e.strerror or e}") from None
    try:
        return Layout.loads(text)
    except LayoutError as e:
        raise LayoutError(f"{path}: {e}") from None


def ddl_columns(advice_dir: Path, layout: Layout) -> dict[str, str] | None:
    """Column -> type of the table ``ddl.sql`` creates, without the partition column (None: no file)."""
    path = advice_dir / "ddl.sql"
    if not path.exists():
        return None
    return columns_of_create(path.read_text(encoding="utf-8"), layout.partition_column, str(path))


def hiveserver2_address(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise InputError(f"--hiveserver2 must look like host:port, not {value!r}")
    return host, int(port)


@cli.command("apply")
@click.argument("advice_dir", type=click.Path(file_okay=False, exists=True))
@click.option("--hiveserver2", metavar="HOST:PORT", help="Run the statements on HiveServer2 (NOSASL) instead "
              "of an in-process Spark.")
@click.option("--drop-old", is_flag=True, help="Drop the previous table (<t>__before_<stamp>) after success.")
@click.option("--break-lease", is_flag=True, help="Take over the lease left on the table by a crashed run.")
@click.option("--file-format", type=click.Choice(["PARQUET", "ORC"], case_sensitive=False), default="PARQUET",
              show_default=True)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@metastore_option
def apply_cmd(advice_dir, hiveserver2, drop_old, break_lease, file_format, fmt, metastore, state_dir):
    """Create <t>__planner_new from ADVICE_DIR, fill and verify it, and swap it in for <t>."""
    from hive_integration.apply import HiveServer2Runner, SparkRunner, apply_layout

    advice = Path(advice_dir)
    layout = read_layout(advice)
    expected = ddl_columns(advice, layout)
    if hiveserver2 and (metastore or state_dir):
        raise InputError("--hiveserver2 runs everything on the server; drop --metastore/--state-dir")
    log = (lambda m: click.echo(m, err=True)) if fmt == "text" else None
    if hiveserver2:
        runner = HiveServer2Runner(*hiveserver2_address(hiveserver2))
    else:
        spark, _ = spark_for(state_dir, metastore)
        runner = SparkRunner(spark)
    try:
        report = apply_layout(runner, layout, drop_old=drop_old, progress=log, break_lease=break_lease,
                              expected_columns=expected, file_format=file_format.upper())
    finally:
        if hiveserver2:
            runner.close()
    click.echo(json.dumps(report.to_json(), indent=2) if fmt == "json" else report.text())

"""``planner apply ADVICE_DIR``: rewrite the table into the advised layout, verified and swapped in.

The layout comes from ``ADVICE_DIR/layout.json``; the DDL is emitted again for the engine in use,
and ``ddl.sql`` (when present) is only read to check the source still has the schema the advice
was made for. See ``hive_integration.apply.apply_layout`` for the steps and how a re-run resumes. The old table
is kept under the name ``report.md`` and ``apply.sql`` give (``<t>__before_<advised at>``).
"""
from __future__ import annotations

import json
from pathlib import Path

import click

from planner.cli.console import Console
from planner.cli.engine import (
    check_metastore,
    hiveserver2_login,
    resolve_engine,
    start_spark,
    verbose,
)
from planner.cli.options import (
    EngineOptions,
    HiveServer2Options,
    break_lease_option,
    format_option,
    hiveserver2_options,
    metastore_options,
)
from planner.emit.ddl import columns_of_create
from planner.errors import LayoutError
from planner.model.layout import Layout


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


def advice_folders(folder: Path) -> list[Path]:
    """The advice folders ``folder`` names: itself, or (as ``advise`` without ``--table`` writes
    them) one per table beneath it, in the order to apply them: a table whose layout records ranges
    of joined tables' columns after those tables, since the ranges hold only for the snapshots they
    were computed on (a dimension laid out after the fact table would make its ranges stale)."""
    if (folder / "layout.json").exists():
        return [folder]
    found = sorted(p for p in folder.iterdir() if (p / "layout.json").exists())
    if not found:
        raise LayoutError(f"{folder}: no layout.json in it or in a folder beneath it (is it an advice folder?)")
    layouts = {f: read_layout(f) for f in found}
    table_of = {layouts[f].table.lower(): f for f in found}

    def needs(f: Path) -> set[Path]:
        from planner.pruning.join_pruning import join_columns_of

        layout = layouts[f]
        tables = {h.table.lower() for c in join_columns_of(layout) for h in c.path.hops}
        tables |= {h.table.lower() for _, c in layout.joined for h in c.path.hops}
        return {table_of[t] for t in tables if t in table_of and table_of[t] != f}

    order: list[Path] = []
    visiting: set[Path] = set()

    def visit(f: Path) -> None:
        if f in order or f in visiting:
            return  # a cycle of joins: applied in name order, the later table's ranges are fresh
        visiting.add(f)
        for g in sorted(needs(f)):
            visit(g)
        visiting.discard(f)
        order.append(f)

    for f in found:
        visit(f)
    return order


def runner_for(hs2: HiveServer2Options, engine: EngineOptions, console: Console):
    """The statement runner the options name (HiveServer2, or this process's Spark) and its Spark."""
    from hive_integration.apply.apply_layout import HiveServer2Runner, SparkRunner

    login = hiveserver2_login(hs2, engine)
    if login is not None:
        resolved = resolve_engine(engine)  # the metastore beside the server, if named: the index lists files through it
        metastore = check_metastore(resolved.metastore, resolved.metastore_from) if resolved.remote else None
        runner = HiveServer2Runner(login.host, login.port, metastore=metastore, **login.client_options())
        runner.client.open()  # a wrong password or address: one line now, before anything is read
        return runner, None
    spark, _ = start_spark(engine, console, verbose=verbose())
    return SparkRunner(spark), spark


@click.command("apply")
@click.argument("advice_dir", type=click.Path(file_okay=False, exists=True))
@hiveserver2_options
@click.option("--drop-old", is_flag=True, help="Drop the previous table (<t>__before_<stamp>) after success.")
@break_lease_option
@click.option("--file-format", type=click.Choice(["PARQUET", "ORC"], case_sensitive=False), default=None,
              help="How the laid-out table stores its files. Default: the table's own format when it is "
                   "Parquet or ORC, else Parquet.")
@click.option("--replace-partitioning", is_flag=True, help="Lay out a table partitioned by columns of its own "
              "(e.g. a ds date): the new table is partitioned by the layout's column and keeps them as ordinary "
              "columns, so jobs that write or drop those partitions by name must change. Refused without it.")
@format_option
@metastore_options
def apply_cmd(advice_dir, hs2, drop_old, break_lease, file_format, replace_partitioning, fmt, engine):
    """Create <t>__planner_new from ADVICE_DIR, fill and verify it, and swap it in for <t>.

    ADVICE_DIR may also be the folder ``advise`` wrote for several tables: each is applied in turn,
    the tables others join to first."""
    from hive_integration.apply.apply_layout import apply_layout

    folders = advice_folders(Path(advice_dir))
    plans = [(f, read_layout(f)) for f in folders]
    expected = {f: ddl_columns(f, layout) for f, layout in plans}
    console = Console(fmt)
    if len(plans) > 1:
        console.say("applying " + ", then ".join(layout.table for _, layout in plans))
    runner, spark = runner_for(hs2, engine, console)
    reports = []
    try:
        for folder, layout in plans:
            with console.spark_work(spark, f"applying {layout.describe()} to {layout.table}"):
                reports.append(apply_layout(runner, layout, drop_old=drop_old, progress=console.say,
                                            break_lease=break_lease, expected_columns=expected[folder],
                                            file_format=file_format.upper() if file_format else None,
                                            replace_partitioning=replace_partitioning))
    finally:
        if spark is None:
            runner.close()
    if fmt == "json":
        docs = [r.to_json() for r in reports]
        click.echo(json.dumps(docs[0] if len(docs) == 1 else docs, indent=2))
    else:
        click.echo("\n".join(r.text() for r in reports))

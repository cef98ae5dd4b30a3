"""``planner advise workload.sql [--table db.t]``: rank layouts on real statistics, write advice folders.

Without ``--table`` every table the workload reads is considered, best gain first: a table is
advised (its own folder, ``OUT_DIR/<db.table>/``) when the best layout makes the workload's scans
of it at least ``--min-gain`` times faster than today; the others are listed with the reason they were
left alone (not in the metastore, no filter on any of its columns, too little to gain). With
``--table`` the named tables are advised whatever the gain (one table: straight into OUT_DIR).

The workload is read and parsed before Spark starts, so a bad statement costs no JVM start.
"""
from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, replace
from pathlib import Path

import click

from planner.cli.console import Console
from planner.cli.engine import start_spark, verbose, workload_text
from planner.cli.options import (
    calibration_option,
    eventlog_options,
    metastore_options,
    out_dir_option,
    workload_options,
)
from planner.costmodel.cost import CostParams
from planner.errors import InputError
from planner.pruning.join_pruning import MAX_COLUMNS, with_join_columns
from planner.workload import Schema, parse_workload

DEFAULT_MIN_GAIN = 1.25
#: Without --table, a table is laid out only if the workload's estimated time on it drops by at
#: least this many seconds: a 200 kB table read 4x faster saves milliseconds, not worth a rewrite.
DEFAULT_MIN_SAVING = 1.0


@dataclass
class TableOutcome:
    table: str
    scans: int
    gain: float | None = None
    folder: Path | None = None
    reason: str = ""  # why it was left alone ("" when advised)
    advice: object = None

    @property
    def keeps_current(self) -> bool:
        return self.advice is not None and self.advice.keeps_current

    def to_json(self) -> dict:
        from planner.advice.ranking import advice_json

        return {"table": self.table, "scans": self.scans, "gain": None if self.gain is None else round(self.gain, 2),
                "advised": self.folder is not None, "folder": None if self.folder is None else str(self.folder),
                "reason": self.reason or None, "advice": advice_json(self.advice) if self.advice else None}


@click.command("advise")
@click.argument("workload", required=False, type=click.Path(exists=True, dir_okay=False))
@eventlog_options
@click.option("--table", "tables", multiple=True,
              help="A table to lay out, e.g. db.lineitem (repeatable; default: every table the workload reads).")
@out_dir_option("advice")
@click.option("--min-gain", type=float, default=DEFAULT_MIN_GAIN, show_default=True,
              help="Without --table: advise a table only if its best layout makes the workload's scans of it "
                   "this many times faster than today (estimated time).")
@click.option("--min-saving", type=click.FloatRange(min=0), default=DEFAULT_MIN_SAVING, show_default=True,
              metavar="SECONDS",
              help="Without --table: advise a table only if its best layout saves the workload at least this many "
                   "seconds on it (estimated time): a small table is left alone, however much faster it gets.")
@click.option("--sample-rows", type=click.IntRange(min=1), default=200_000, show_default=True)
@click.option("--max-partitions", type=click.IntRange(min=1), default=1000, show_default=True,
              help="Upper bound on partitions (Hive's hive.exec.max.dynamic.partitions).")
@click.option("--min-partition-mb", type=float, default=4.0, show_default=True)
@click.option("--target-file-mb", type=float, default=128.0, show_default=True)
@click.option("--row-group-rows", type=int, default=15_000, show_default=True,
              help="Rows per Parquet row group the layout will be written with.")
@click.option("--partition-overhead-rows", type=float, default=None,
              help="Cost of opening one partition, in rows read (default: from the time model, see `planner "
                   "calibrate`).")
@click.option("--file-overhead-rows", type=float, default=None,
              help="Cost of opening one file (footer read), in rows read (default: from the time model).")
@click.option("--page-rows", type=int, default=CostParams.page_rows, show_default=True,
              help="Rows per Parquet page the layout will be written with (Spark skips pages by their index).")
@click.option("--robustness-weight", type=click.FloatRange(min=0), default=CostParams.robustness_weight,
              show_default=True,
              help="Weight of the robustness set (ranges on the columns the workload filters, those of "
                   "--robustness-column and those the table is clustered on) in the score, as a share of the workload's volume: higher keeps queries the "
                   "workload does not name cheaper, at the workload's cost.")
@click.option("--robustness-column", "robustness_columns", multiple=True, metavar="COLUMN",
              help="Also keep ad-hoc ranges on this column cheap, though the workload does not filter it "
                   "(repeatable).")
@click.option("--aggregation-factor", is_flag=True, help="Weigh aggregating queries twice (CPS paper's g(q)).")
@click.option("--allow-regressions", is_flag=True,
              help="Advise the fastest layout even if some queries would get noticeably slower than today "
                   "(more than 1.2x and 0.2 s; the report lists them).")
@calibration_option
@metastore_options
@workload_options
def advise_cmd(workload, eventlog, window, tables, out_dir, min_gain, min_saving, sample_rows, max_partitions,
               min_partition_mb, target_file_mb, row_group_rows, partition_overhead_rows, file_overhead_rows,
               page_rows, robustness_weight, robustness_columns, aggregation_factor, allow_regressions, calibration,
               engine, dialect, on_error, fmt):
    """Rank candidate layouts for the tables WORKLOAD reads and write the advice (ddl.sql, apply.sql,
    layout.json, report.md) for each table worth laying out.

    WORKLOAD is a file of HiveQL statements (or give --from-eventlog DIR)."""
    console = Console(fmt)
    text, name = workload_text(workload, eventlog, window, dialect, console)
    # syntax errors before any JVM (the tables and scans read, not yet what joins induce)
    first = parse_workload(text, name, dialect=dialect, on_error=on_error, joins=False)
    explicit = [t.lower() for t in tables]
    if not (explicit or first.tables()):
        raise InputError(f"{name}: no query reads a table")
    params = CostParams(max_partitions=max_partitions, min_partition_bytes=int(min_partition_mb * 2**20),
                        target_file_bytes=int(target_file_mb * 2**20), row_group_rows=row_group_rows,
                        partition_overhead_rows=partition_overhead_rows, file_overhead_rows=file_overhead_rows,
                        page_rows=page_rows, robustness_weight=robustness_weight,
                        robustness_columns=tuple(c.lower() for c in robustness_columns),
                        aggregation_factor=aggregation_factor,
                        allow_regressions=allow_regressions)
    spark, engine = start_spark(engine, console, verbose=verbose())
    state = engine.state_dir
    from planner.cli.calibrate import load_time_params

    params = replace(params, time=load_time_params(state, calibration or engine.calibration))
    from hive_integration.spark.view_lookup import spark_view_lookup

    views = spark_view_lookup(spark)  # views the metastore defines are followed to their tables
    first = parse_workload(text, name, dialect=dialect, on_error=on_error, views=views, joins=False)
    targets = explicit or first.tables()
    single = len(explicit) == 1
    outcomes = []
    for table in targets:
        folder = Path(out_dir) if single else Path(out_dir) / table
        outcomes.append(_advise_table(spark, state, table, text, name, first, folder, params, sample_rows,
                                      dialect, on_error, console, views, min_gain=None if explicit else min_gain,
                                      min_saving=min_saving))
    outcomes.sort(key=lambda o: (o.folder is None, -(o.gain or 0.0), o.table))
    if explicit and not any(o.folder or o.keeps_current for o in outcomes):
        raise InputError("; ".join(f"{o.table}: {o.reason}" for o in outcomes))
    _print(outcomes, single, fmt, min_gain if not explicit else None)


def _advise_table(spark, state: Path, table: str, text: str, name: str, first, folder: Path, params: CostParams,
                  sample_rows: int, dialect: str, on_error: str, console: Console, views,
                  min_gain: float | None, min_saving: float = 0.0) -> TableOutcome:
    from hive_integration.metastore.layouts import SparkCatalogLayouts
    from hive_integration.spark.join_sample import with_joined_columns
    from hive_integration.spark.statistics_pass import gather_stats, table_schema
    from planner.advice.ranking import advise
    from planner.analysis.table_analysis import analyze_table
    from planner.emit.advice_folder import write_advice_folder

    scans = sum(1 for q in first.queries for s in q.scans if s.table == table or s.table.split(".")[-1] == table)
    db, _, short = table.rpartition(".")
    if not spark.catalog.tableExists(table):
        return TableOutcome(table, scans, reason="not a table in the metastore (a temporary or a misspelled "
                                                 "name?)")
    if views(db or "default", short) is not None:
        return TableOutcome(table, scans, reason="a view: the tables it reads are advised instead")
    columns = table_schema(spark, table)
    current = SparkCatalogLayouts(spark).lookup(db or "default", short)
    if current is not None:  # re-advising a table this planner laid out: its partition column is ours
        columns.pop(current.layout.partition_column.lower(), None)
    wl = parse_workload(text, name, dialect=dialect, schema=Schema({table: columns}), on_error=on_error,
                        database=db or None, tables=[table], views=views)
    names = {s.table for q in wl.queries for s in q.scans}
    target = table if table in names else next((n for n in names if n.split(".")[-1] == short), None)
    if target is None:
        return TableOutcome(table, 0, reason=f"no query reads it (tables read: {', '.join(sorted(first.tables()))})")
    from hive_integration.metastore.layouts import (
        session_settings,  # the layout records them
    )

    analysis = analyze_table(wl, target, columns, settings=session_settings(spark))
    scans = len(analysis.scans)
    if not analysis.candidates:
        return TableOutcome(table, scans, gain=1.0, reason="no query filters any of its columns: every layout "
                                                            "reads it whole")
    with console.spark_work(spark, f"statistics of {table}"):
        stats = gather_stats(spark, table, sample_rows=sample_rows, cache_dir=state / "stats", progress=console.say)
        # the joined columns the workload filters, per sampled row: the cost model prices join pruning
        stats = with_joined_columns(spark, stats, analysis.join_columns()[:MAX_COLUMNS], console.say)
    advice = advise(wl, analysis, stats, params, console.say)
    if advice.keeps_current:  # the table as it is wins: an earlier advice in this folder must not be applied now
        for stale in ("layout.json", "ddl.sql", "apply.sql"):
            (folder / stale).unlink(missing_ok=True)
        return TableOutcome(table, scans, gain=1.0, advice=advice,
                            reason="the table as it is is the best layout: nothing to apply")
    gain = advice.current_seconds / max(advice.result.best.seconds, 1e-9)
    small = None if min_gain is None else too_small_a_gain(advice.current_seconds, advice.result.best.seconds,
                                                            min_gain, min_saving)
    if small is not None:
        return TableOutcome(table, scans, gain=gain, advice=advice, reason=small)
    layout = _portable(with_join_columns(replace(advice.layout, table=table), advice.analysis.join_columns()))
    from hive_integration.apply.apply_layout import SparkRunner, describe_source

    # the laid-out table keeps the table's format (ORC stays ORC), comments, properties, and an
    # external table's place: a new folder beside its own
    source = describe_source(SparkRunner(spark), table)
    replaced = source.metadata.replaced_partitioning(layout)
    if replaced:
        from planner.emit.ddl import replaced_text

        console.say(f"note: {table} is partitioned by ({', '.join(replaced)}): {replaced_text(layout, replaced)}; "
                    "apply needs --replace-partitioning")
    write_advice_folder(folder, layout, columns, advice, file_format=source.file_format or "PARQUET",
                        metadata=source.metadata, external_location=source.copy_location())
    return TableOutcome(table, scans, gain=gain, folder=folder, advice=advice)


def too_small_a_gain(current_seconds: float, best_seconds: float, min_gain: float, min_saving: float) -> str | None:
    """Why a table the user did not name is left alone (None: it is worth laying out). Both must
    hold: the workload's scans of it ``min_gain`` times faster, and ``min_saving`` seconds saved."""
    gain = current_seconds / max(best_seconds, 1e-9)
    if gain < min_gain:
        return f"the best layout makes its scans only {gain:.2f}x faster than today (below --min-gain {min_gain:g})"
    saved = current_seconds - best_seconds
    if saved < min_saving:
        return (f"the best layout saves the workload only {saved:.2g} s on it ({gain:.2f}x faster; below "
                f"--min-saving {min_saving:g}): too small a table to be worth a rewrite")
    return None


def _portable(layout):
    """The layout as stored in the table's properties: no absolute path of this machine, and the
    time it was advised (which names the backup table ``apply`` keeps)."""
    meta = dict(layout.meta)
    if "workload" in meta:
        name = str(meta["workload"])
        prefix = "eventlog:" if name.startswith("eventlog:") else ""
        meta["workload"] = prefix + Path(name.removeprefix(prefix)).name
    meta["advised_at"] = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return replace(layout, meta=tuple(meta.items()))


def _print(outcomes: list[TableOutcome], single: bool, fmt: str, min_gain: float | None) -> None:
    from planner.advice.ranking import advice_json, advice_text

    if fmt == "json":
        if single:
            click.echo(json.dumps(advice_json(outcomes[0].advice), indent=2, default=str))
        else:
            click.echo(json.dumps({"tables": [o.to_json() for o in outcomes], "min_gain": min_gain}, indent=2,
                                  default=str))
        return
    for o in outcomes:
        if o.folder is not None:
            click.echo(advice_text(o.advice))
            click.echo(f"\nwrote {o.folder}/ (ddl.sql, apply.sql, layout.json, report.md)\n")
        elif o.keeps_current:
            click.echo(advice_text(o.advice))
            click.echo(f"\n{o.table}: {o.reason}\n")
    if single:
        return
    click.echo("tables the workload reads, by the gain a layout brings (rows a full scan reads / rows the best "
               "layout reads):")
    width = max(len(o.table) for o in outcomes)
    for i, o in enumerate(outcomes, 1):
        gain = "-" if o.gain is None else f"{o.gain:.2f}x"
        what = f"advised: {o.folder}/" if o.folder is not None else f"left alone: {o.reason}"
        click.echo(f"{i:>3}  {o.table:<{width}}  {o.scans:>6} scans  {gain:>8}  {what}")

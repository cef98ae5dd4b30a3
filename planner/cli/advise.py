"""``planner advise workload.sql --table db.t``: rank layouts on real statistics, write layout.json."""
from __future__ import annotations

import json
from pathlib import Path

import click

from planner.analysis import analyze_table
from planner.cli.main import cli, common_workload_options
from planner.costmodel.cost import CostParams
from planner.errors import InputError
from planner.workload import Schema, read_workload


def metastore_option(fn):
    fn = click.option("--metastore", metavar="thrift://HOST:PORT",
                      help="A standalone Hive Metastore (default: the embedded one in --state-dir).")(fn)
    fn = click.option("--state-dir", type=click.Path(file_okay=False), default=None,
                      help="Where the embedded metastore, warehouse and caches live (default ./.planner).")(fn)
    return fn


def spark_for(state_dir, metastore):
    from hive_integration.session import build_spark_session, default_state_dir

    if metastore and not metastore.startswith("thrift://"):
        raise InputError(f"--metastore must look like thrift://host:port, not {metastore!r}")
    state = Path(state_dir) if state_dir else default_state_dir()
    return build_spark_session(state, metastore_uri=metastore), state


@cli.command("advise")
@click.argument("workload", type=click.Path(dir_okay=False))
@click.option("--table", required=True, help="The table to lay out, e.g. db.lineitem.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default="advice", show_default=True,
              help="Folder for layout.json (and, with the SQL emitter, ddl.sql, apply.sql, report.md).")
@click.option("--sample-rows", type=int, default=200_000, show_default=True)
@click.option("--max-partitions", type=int, default=1000, show_default=True,
              help="Upper bound on partitions (Hive's hive.exec.max.dynamic.partitions).")
@click.option("--min-partition-mb", type=float, default=4.0, show_default=True)
@click.option("--target-file-mb", type=float, default=128.0, show_default=True)
@click.option("--row-group-rows", type=int, default=15_000, show_default=True,
              help="Rows per Parquet row group the layout will be written with.")
@click.option("--partition-overhead-rows", type=float, default=CostParams.partition_overhead_rows, show_default=True,
              help="Cost of opening one partition, in rows read (listing, planning, task start).")
@click.option("--file-overhead-rows", type=float, default=CostParams.file_overhead_rows, show_default=True,
              help="Cost of opening one file (footer read), in rows read.")
@click.option("--page-rows", type=int, default=CostParams.page_rows, show_default=True,
              help="Rows per Parquet page the layout will be written with (Spark skips pages by their index).")
@click.option("--aggregation-factor", is_flag=True, help="Weigh aggregating queries twice (CPS paper's g(q)).")
@click.option("--allow-regressions", is_flag=True,
              help="Advise the cheapest layout even if some queries would read more than 1.2x their rows today "
                   "(the report lists them).")
@metastore_option
@common_workload_options
def advise_cmd(workload, table, out_dir, sample_rows, max_partitions, min_partition_mb, target_file_mb,
               row_group_rows, partition_overhead_rows, file_overhead_rows, page_rows, aggregation_factor,
               allow_regressions, metastore, state_dir, dialect, on_error, fmt):
    """Rank candidate layouts for TABLE under WORKLOAD and write the winner to OUT/layout.json."""
    from hive_integration.layouts import SparkCatalogLayouts
    from hive_integration.statistics import gather_stats, table_schema
    from planner.advice import advice_json, advice_text, advise

    if max_partitions < 1 or sample_rows < 1:
        raise InputError("--max-partitions and --sample-rows must be positive")
    spark, state = spark_for(state_dir, metastore)
    table = table.lower()
    columns = table_schema(spark, table)
    db, _, name = table.rpartition(".")
    current = SparkCatalogLayouts(spark).lookup(db or "default", name)
    if current is not None:  # re-advising a table this planner laid out: its partition column is ours
        columns.pop(current.layout.partition_column.lower(), None)
    wl = read_workload(workload, dialect=dialect, schema=Schema({table: columns}), on_error=on_error,
                       database=table.split(".")[0] if "." in table else None, tables=[table])
    names = {s.table for q in wl.queries for s in q.scans}
    target = table if table in names else next((n for n in names if n.split(".")[-1] == table.split(".")[-1]), None)
    if target is None:
        raise InputError(f"{workload}: no query reads {table} (tables read: {', '.join(sorted(names))})")
    analysis = analyze_table(wl, target, columns)
    log = (lambda m: click.echo(m, err=True)) if fmt == "text" else None
    stats = gather_stats(spark, table, sample_rows=sample_rows, cache_dir=state / "stats", progress=log)
    params = CostParams(max_partitions=max_partitions, min_partition_bytes=int(min_partition_mb * 2**20),
                        target_file_bytes=int(target_file_mb * 2**20), row_group_rows=row_group_rows,
                        partition_overhead_rows=partition_overhead_rows, file_overhead_rows=file_overhead_rows,
                        page_rows=page_rows, aggregation_factor=aggregation_factor,
                        allow_regressions=allow_regressions)
    advice = advise(wl, analysis, stats, params, log)
    if advice.keeps_current:  # the table as it is wins: there is nothing to apply
        for stale in ("layout.json", "ddl.sql", "apply.sql"):  # an earlier advice must not be applied now
            (Path(out_dir) / stale).unlink(missing_ok=True)
        click.echo(json.dumps(advice_json(advice), indent=2, default=str) if fmt == "json" else advice_text(advice))
        if fmt == "text":
            click.echo(f"\nthe table as it is is the best layout: nothing to apply in {out_dir}")
        return
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    layout = advice.layout
    layout = layout.__class__(**{**layout.__dict__, "table": table})
    (out / "layout.json").write_text(layout.dumps() + "\n", encoding="utf-8")
    try:
        from planner.emit.advice_folder import write_advice_folder
        write_advice_folder(out, layout, columns, advice)
    except ImportError:
        pass
    if fmt == "json":
        click.echo(json.dumps(advice_json(advice), indent=2, default=str))
    else:
        click.echo(advice_text(advice))
        click.echo(f"\nwrote {out / 'layout.json'}")

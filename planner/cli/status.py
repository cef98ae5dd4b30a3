"""``planner status TABLE WORKLOAD``: how well TABLE's layout serves a recent workload, and what a
switch would cost; ``planner relayout TABLE WORKLOAD``: re-cut only the partitions that pay.

Both read the layout from TABLE's properties, gather its statistics, cost the window's queries on
the current layout and on the best one ``advise`` finds, and choose the partitions whose re-cut
gain exceeds ``--write-cost`` × their rows (Amoeba's c, 4 by default: a rewritten row costs as
much as reading it four times). ``status`` reports (``planner.advice.layout_status``); ``--measure`` also runs
each scan's count form (``SELECT count(*) FROM TABLE WHERE <its prunable predicate>``, through the
rewrite) and prints Spark's scan metrics. ``relayout`` applies the partial re-layout
(``hive_integration.apply.relayout``), or prints its statements with ``--print-sql``.

Run on a schedule over a sliding window (``--from-eventlog DIR --last 40``: the 40 most recent
queries), ``relayout`` follows a drift a few queries after it starts: a check that pays nothing
rewrites nothing (``benchmarks/results/drift.md`` compares checking every 10 queries with every 40).
"""
from __future__ import annotations

import json
from dataclasses import dataclass

import click

from planner.cli.console import Console
from planner.cli.engine import start_spark, verbose, workload_text
from planner.cli.options import (
    break_lease_option,
    calibration_option,
    eventlog_options,
    format_option,
    metastore_options,
    workload_options,
)
from planner.errors import InputError
from planner.workload import Schema, parse_workload


def window_options(fn):
    fn = click.option("--sample-rows", type=click.IntRange(min=1), default=200_000, show_default=True)(fn)
    fn = click.option("--max-partitions", type=click.IntRange(min=1), default=1000, show_default=True,
                      help="Upper bound on partitions, also after a partial re-layout.")(fn)
    fn = click.option("--min-partition-mb", type=float, default=4.0, show_default=True,
                      help="Smallest partition the best layout may have (as for advise).")(fn)
    fn = click.option("--validate/--no-validate", default=True, show_default=True,
                      help="Re-cut only when the re-cut also pays on queries its target was not fitted to: "
                           "a layout advised on every other query of the window, judged on the rest, both ways "
                           "(two more advise runs). Without it the window decides alone, and a noisy window "
                           "(ad-hoc queries) can trigger rewrites that do not pay.")(fn)
    fn = click.option("--write-cost", type=click.FloatRange(min=0, min_open=True), default=4.0, show_default=True,
                      help="c: how many rows read one rewritten row costs (Amoeba measured 4). A partition is "
                           "re-cut when the window gains more than c x its rows.")(fn)
    return calibration_option(eventlog_options(fn))


@dataclass
class Window:
    spark: object
    table: str
    current: object  # Layout
    advice: object  # planner.advice.ranking.Advice
    model: object  # CostModel
    plan: object  # RelayoutPlan
    columns: dict
    properties: dict  # the table's, as the layout was read from them (the aggregate index's state)


def read_window(table, workload, eventlog, window, dialect, on_error, sample_rows, write_cost,
                engine, console: Console, fix_order: bool = False, params=None,
                validate: bool = True, calibration: str | None = None) -> Window:
    from planner.advice.ranking import advise
    from planner.advice.relayout_plan import plan_relayout
    from planner.analysis.table_analysis import analyze_table
    from planner.costmodel.cost import CostModel, CostParams

    text, name = workload_text(workload, eventlog, window, dialect, console)
    parse_workload(text, name, dialect=dialect, on_error=on_error)  # syntax errors before any JVM
    table = table.lower()
    if "." not in table:
        table = "default." + table
    spark, engine = start_spark(engine, console, verbose=verbose())
    state = engine.state_dir
    from dataclasses import replace

    from planner.cli.calibrate import load_time_params

    params = replace(params or CostParams(), time=load_time_params(state, calibration or engine.calibration))
    from hive_integration.metastore.layouts import SparkCatalogLayouts, session_settings
    from hive_integration.spark.statistics_pass import gather_stats, table_schema

    db, short = table.split(".", 1)
    columns = table_schema(spark, table)
    found = SparkCatalogLayouts(spark).lookup(db, short)
    if found is None:
        raise InputError(f"{table} has no planner layout in its properties; run `planner apply` first")
    current = found.layout
    columns.pop(current.partition_column.lower(), None)
    wl = parse_workload(text, name, dialect=dialect, schema=Schema({table: columns}), on_error=on_error,
                        database=db, tables=[table])
    if not any(s.table == table for q in wl.queries for s in q.scans):
        raise InputError(f"{name}: no query reads {table}")
    analysis = analyze_table(wl, table, columns, settings=session_settings(spark))
    with console.spark_work(spark, f"statistics of {table}"):
        stats = gather_stats(spark, table, sample_rows=sample_rows, cache_dir=state / "stats", progress=console.say)
    advice = advise(wl, analysis, stats, params, log=None)
    model = CostModel(analysis, stats, advice.params)
    # the best new layout: the table-as-it-is contender is what a partial re-layout starts from,
    # and each re-cut must pay c x its rows on this window on its own
    target = advice.best_new or current
    if model.evaluate(target).total >= model.evaluate(current).total:
        target = current  # the table as it is stays the best contender: nothing to re-cut toward
    force = None
    if fix_order:
        from hive_integration.spark.order_check import unordered_partitions

        force = unordered_partitions(spark, table, current)
        target = current  # re-cut by its own region: rewritten in order, nothing else moves
    plan = plan_relayout(model, current, target, write_cost, force=force, only=() if fix_order else None,
                         max_partitions=advice.params.max_partitions)
    if validate and plan.chosen and not fix_order:
        plan = _validated(plan, wl, table, columns, analysis.settings, stats, advice.params, console)
    return Window(spark, table, current, advice, model, plan, columns, dict(found.properties or {}))


def _validated(plan, wl, table, columns, settings, stats, params, console: Console):
    """``plan`` if its action also pays on queries its target was not fitted to (``planner.advice.held_out``)."""
    from planner.advice.held_out import MIN_QUERIES, judged_halves, validated
    from planner.advice.ranking import advise
    from planner.analysis.table_analysis import analyze_table
    from planner.costmodel.cost import CostModel

    if len(wl.queries) < MIN_QUERIES:
        console.say(f"{len(wl.queries)} queries: too few to check the re-cut on queries its target was not "
                    "fitted to; deciding on the window alone")
        return plan
    console.say("checking the re-cut on queries its target was not fitted to (advise on each half of the window)")

    def model_of(half):
        return CostModel(analyze_table(half, table, columns, settings=settings), stats, params)

    def fitted_on(half, model):
        return advise(half, model.analysis, stats, params).best_new or plan.current

    return validated(plan, judged_halves(wl, model_of, fitted_on))


def _params(max_partitions: int, min_partition_mb: float):
    from planner.costmodel.cost import CostParams

    return CostParams(max_partitions=max_partitions, min_partition_bytes=int(min_partition_mb * 2**20))


def _clustering(spark, table, layout, columns):
    from hive_integration.spark.footers import table_footers
    from planner.costmodel.clustering import clustering

    wanted = list(dict.fromkeys([a for a in layout.attributes if a in columns] + list(layout.order.columns)
                                + [c for c in columns if c not in layout.attributes]))
    wanted = [c for c in wanted if c in columns]
    return clustering(wanted, table_footers(spark, table, spark.table(table).inputFiles()))


def _entropy(w: Window):
    """The file size entropy of the table's data files, each in the partition its path names."""
    from hive_integration.spark.catalog import input_files
    from planner.advice.layout_status import file_size_entropy

    column = w.current.partition_column.lower()

    def partition(path: str) -> str:
        parts = [seg for seg in path.split("/") if seg.lower().startswith(column + "=")]
        return parts[-1] if parts else "-"

    files = [(partition(path), size) for path, size, _ in input_files(w.spark, w.table)]
    return file_size_entropy(files, w.advice.params.target_file_bytes)


def _index(w: Window):
    """The layout's aggregate index, its last build, and whether a query would use it now (the
    checks ``planner.sql`` makes: the build's specification, generation and snapshot; its head row)."""
    if w.current.aggregate_index is None:
        return None
    from hive_integration.spark.cells import head_present, index_context
    from planner.advice.layout_status import IndexStatus

    ctx = index_context(w.spark, w.table, w.current, w.properties)
    why = ctx.why_not
    if not why and not head_present(w.spark, ctx.state):
        why = "the build's head row is gone (a write through the planner invalidated it); queries scan"
    return IndexStatus(w.current.aggregate_index, ctx.state, why)


def _measure(spark, window: Window, console: Console) -> list[tuple]:
    """Each scan's count form through the rewrite: (statement, rows, files, bytes, partitions)."""
    from sqlglot import exp

    from hive_integration.metastore.layouts import sql as planner_sql
    from hive_integration.spark.metrics import collect_scan_metrics, scans_kept
    from planner.emit.conditions import region_predicate

    analysis = window.model.analysis
    out = []
    for scan in analysis.scans:
        query = exp.select(exp.Count(this=exp.Star())).from_(exp.to_table(window.table))
        if scan.sets:
            query = query.where(region_predicate(tuple(scan.sets.items()), analysis.kinds, analysis.derived))
        with scans_kept(spark):
            df = planner_sql(spark, query.sql("spark"), dialect="spark")
            df.collect()
            metrics = collect_scan_metrics(df)
        m = metrics[0] if metrics else None
        number = window.advice.workload.queries[scan.query].number
        out.append((number, m.rows if m else 0, m.files if m else 0, m.bytes if m else 0,
                    m.partitions if m else None))
    console.say(f"measured {len(out)} count forms")
    return out


@click.command("status")
@click.argument("table")
@click.argument("workload", required=False, type=click.Path(exists=True, dir_okay=False))
@window_options
@click.option("--measure", is_flag=True, help="Also run each scan's count form on Spark and report its scan metrics.")
@click.option("--no-clustering", is_flag=True, help="Skip reading the Parquet footers for clustering depth.")
@metastore_options
@workload_options
def status_cmd(table, workload, eventlog, window, calibration, sample_rows, max_partitions, min_partition_mb,
               validate, write_cost, measure, no_clustering, engine, dialect, on_error, fmt):
    """Cost of TABLE's layout for WORKLOAD (a file, or --from-eventlog DIR) against the best layout;
    rows a switch rewrites and its break-even; hot, cold and mis-cut partitions; clustering depth."""
    from planner.advice.layout_status import status_of

    console = Console(fmt)
    w = read_window(table, workload, eventlog, window, dialect, on_error, sample_rows, write_cost,
                    engine, console, params=_params(max_partitions, min_partition_mb),
                    validate=validate, calibration=calibration)
    depth = () if no_clustering else _clustering(w.spark, w.table, w.current, w.columns)
    measured = _measure(w.spark, w, console) if measure else ()
    st = status_of(w.model, w.current, w.plan.target, w.plan, depth, measured, _entropy(w), _index(w))
    click.echo(json.dumps(st.to_json(), indent=2, default=str) if fmt == "json" else st.text())


@click.command("relayout")
@click.argument("table")
@click.argument("workload", required=False, type=click.Path(exists=True, dir_okay=False))
@window_options
@click.option("--fix-order", is_flag=True, help="Only rewrite the partitions whose in-partition order appends "
              "broke (see `planner append`), each in place of itself, in order.")
@click.option("--print-sql", is_flag=True, help="Print the statements instead of running them.")
@click.option("--drop-old", is_flag=True, help="Delete the re-cut partitions' old files after success.")
@break_lease_option
@format_option
@metastore_options
@click.option("--dialect", type=click.Choice(["hive", "spark"]), default="hive", show_default=True)
@click.option("--on-error", type=click.Choice(["fail", "skip"]), default="fail", show_default=True)
def relayout_cmd(table, workload, eventlog, window, calibration, sample_rows, max_partitions, min_partition_mb,
                 validate, write_cost, fix_order, print_sql, drop_old, break_lease, fmt, engine, dialect,
                 on_error):
    """Re-cut only TABLE's partitions whose gain for WORKLOAD exceeds --write-cost x their rows:
    write the new pieces, verify them, swap them in atomically, keep the old partitions."""
    console = Console(fmt)
    if fix_order and workload is None and eventlog is None:
        raise click.UsageError("--fix-order still needs the workload (its statistics decide nothing, but name "
                               "the table's columns); give WORKLOAD")
    w = read_window(table, workload, eventlog, window, dialect, on_error, sample_rows, write_cost,
                    engine, console, fix_order=fix_order,
                    params=_params(max_partitions, min_partition_mb), validate=validate, calibration=calibration)
    plan = w.plan
    if not plan.chosen:  # the same answer with --print-sql: no statement is printed for nothing to do
        msg = (f"{w.table}: no partition gains more than {write_cost:g} x its rows for this workload; "
               "nothing to re-cut")
        if plan.declined is not None:
            from planner.advice.layout_status import declined_text

            msg = f"{w.table}: {declined_text(plan)}; nothing re-cut (--no-validate decides on the window alone)"
        payload = {"table": w.table, "plan": plan.to_json(), "report": None}
        click.echo(json.dumps(payload | ({"statements": []} if print_sql else {})) if fmt == "json" else msg)
        return
    if print_sql:
        from hive_integration.apply.apply_layout import SparkRunner, describe_source
        from planner.emit.apply_sql import statements_text
        from planner.emit.relayout_sql import STAGING_SUFFIX, relayout_script

        own = describe_source(SparkRunner(w.spark), w.table).file_format
        stmts = relayout_script(plan, w.columns, w.table, w.table + STAGING_SUFFIX, {}, dialect="hive",
                                file_format=own or "PARQUET")
        if fmt == "json":
            click.echo(json.dumps({"table": w.table, "plan": plan.to_json(), "statements": stmts}, indent=2))
        else:
            click.echo(f"-- re-cut {len(plan.chosen)} partitions of {w.table} into {len(plan.new_ids)}, as SQL to run "
                       "while nothing reads the table (`planner relayout` itself swaps the partitions in one "
                       "metastore call instead of the INSERT OVERWRITE and DROP)")
            click.echo(statements_text(stmts), nl=False)
        return
    from hive_integration.apply.relayout import relayout

    with console.spark_work(w.spark, f"re-cutting {len(plan.chosen)} partitions of {w.table}"):
        report = relayout(w.spark, plan, drop_old=drop_old, progress=console.say, break_lease=break_lease)
    if fmt == "json":
        click.echo(json.dumps({"table": w.table, "plan": plan.to_json(), "report": report.to_json()}, indent=2))
    else:
        click.echo(report.text())

"""``planner append BATCH --into T``: new rows land in T's layout.

The layout is read from T's properties; the batch (a table with T's columns) is inserted with
``INSERT INTO T PARTITION (planner_pid) SELECT …, CASE … END FROM batch``: the same CASE the layout
was built with, so every new row goes to the partition its region names (NULLs included, anything
unclaimed to the catch-all). ``--print-sql`` only prints the statements, for a DBA to run.

Afterwards the partitions whose in-partition order the new rows broke are reported
(``hive_integration.spark.order_check``); ``planner relayout … --fix-order`` rewrites only those.
"""
from __future__ import annotations

import json

import click
from sqlglot import exp

from planner.cli.apply import runner_for
from planner.cli.console import Console
from planner.cli.options import break_lease_option, format_option, hiveserver2_options, metastore_options
from planner.emit.apply_sql import append_statements, statements_text
from planner.emit.ddl import floating_point_properties, layout_from_properties
from planner.errors import ApplyError, InputError


def _norm(t: str) -> str:
    return t.lower().replace(" ", "")


@click.command("append")
@click.argument("batch")
@click.option("--into", "target", required=True, help="The laid-out table to append to, e.g. tpch.lineitem.")
@hiveserver2_options
@click.option("--print-sql", is_flag=True, help="Print the statements instead of running them.")
@break_lease_option
@format_option
@metastore_options
def append_cmd(batch, target, hs2, print_sql, break_lease, fmt, engine):
    """Insert the rows of table BATCH into laid-out table TARGET, each into its partition."""
    from hive_integration.apply.apply_layout import (
        Catalog,
        TableNames,
        acquire_lease,
        check_sideways_keys,
        release_lease,
    )

    console = Console(fmt)
    runner, spark = runner_for(hs2, engine, console)
    try:
        into, src = Catalog(runner, TableNames.of(target)), Catalog(runner, TableNames.of(batch))
        if not into.exists(into.names.source):
            raise InputError(f"table {target} does not exist")
        if not src.exists(src.names.source):
            raise InputError(f"batch table {batch} does not exist")
        props = into.properties(into.names.source)
        if "planner.layout.parts" not in props:
            raise InputError(f"{target} has no planner layout in its properties; run `planner apply` first")
        layout = layout_from_properties(props)
        pcol = layout.partition_column.lower()
        columns = {c: t for c, t in into.columns(into.names.source).items() if c != pcol}
        have = src.columns(src.names.source)
        wrong = sorted(f"{c} ({t})" for c, t in columns.items() if c not in have or _norm(have[c]) != _norm(t))
        if wrong:
            raise ApplyError(f"batch {batch} lacks or mistypes column(s) of {target}: {', '.join(wrong)}")
        fmt_of = into.source_table(into.names.source).file_format or "PARQUET"
        lacking = {k: v for k, v in floating_point_properties(columns, fmt_of).items() if props.get(k) != v}
        stmts = append_statements(layout, columns, src.sql(src.names.source), into.sql(into.names.source),
                                  dialect=runner.dialect, properties=lacking)
        if print_sql:
            if fmt == "json":
                click.echo(json.dumps({"table": target, "batch": batch, "statements": stmts}, indent=2))
            else:
                click.echo(statements_text(stmts), nl=False)
            return
        count = exp.select(exp.Count(this=exp.Star())).from_(into.names.expr(into.names.source, runner.dialect))
        # held while the rows go in: an apply or relayout running now would swap in a copy without them
        owner = acquire_lease(into, into.names.source, break_lease=break_lease, purpose="append")
        try:
            check_sideways_keys(into, layout)
            from hive_integration.spark.cells import after_write, invalidate

            invalidate(runner.execute, into.names.qualified(into.names.source), console.say)  # new rows: new cells
            before = into.run(count)[0][0]
            with console.spark_work(spark, f"appending {batch} to {target}"):
                for s in stmts:
                    runner.execute(s)
            after = into.run(count)[0][0]
            from hive_integration.spark.join_ranges import (
                after_apply,  # issue 13: the new rows change the join ranges
            )

            after_apply(runner, layout, console.say)
            after_write(runner, layout, console.say)
        finally:
            release_lease(into, into.names.source, owner)
        broken = None
        if spark is not None:  # footers are read through Spark's file listing
            from hive_integration.spark.order_check import unordered_partitions

            broken = unordered_partitions(spark, target, layout)
        if fmt == "json":
            click.echo(json.dumps({"table": target, "batch": batch, "rows": after - before,
                                   "layout": layout.describe(), "order_broken": broken}, indent=2))
        else:
            click.echo(f"appended {after - before:,} rows from {batch} to {target} ({layout.describe()})")
            if broken:
                click.echo(f"the appended rows broke the order ({layout.order.describe()}) of {len(broken)} "
                           f"partition(s): {', '.join(map(str, broken[:20]))}; `planner relayout {target} "
                           "WORKLOAD --fix-order` rewrites only those")
    finally:
        if spark is None:
            runner.close()

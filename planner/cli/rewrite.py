"""``planner rewrite`` and ``planner explain``: queries against laid-out tables.

Both read a .sql file statement by statement, as the workload reader does (``USE db`` changes the
database of unqualified names; SET, DDL and Hive CLI commands pass through untouched; the query
inside ``EXPLAIN`` is rewritten) and find each table's layout where ``planner apply`` recorded it:
the table's properties in the metastore (embedded by default, through Spark), a standalone
metastore over thrift (``--metastore thrift://…``), or ``--layout`` files. The last two start no
JVM: a 100-query file is rewritten in about a second.

* ``rewrite`` prints the statements with every prunable scan narrowed to its partitions
  (``planner_pid IN (…)``); a statement that cannot be pruned comes back unchanged.
* ``explain`` shows, per scan, the partitions read out of the total, the estimated rows (from the
  advice's partition sizes), and the predicates that pruned, or why nothing could be pruned.
"""
from __future__ import annotations

import json
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

import click

from planner.cli.console import Console
from planner.cli.engine import check_metastore, start_spark, verbose
from planner.cli.options import metastore_options, output_file_option, workload_options
from planner.errors import InputError, Location, WorkloadError
from planner.rewrite.query_rewrite import (
    RewriteNote,
    ScanExplanation,
    explain_query,
    rewrite_query,
)
from planner.workload.parse import classify, session_name
from planner.workload.reader import read_text
from planner.workload.scans import base_tables
from planner.workload.statements import split_statements


@dataclass
class StatementResult:
    number: int
    line: int
    sql: str
    rewritten: str
    notes: list[RewriteNote] = field(default_factory=list)
    scans: list[ScanExplanation] = field(default_factory=list)
    estimated_rows: list[int | None] = field(default_factory=list)
    table_rows: list[int | None] = field(default_factory=list)
    skipped: str = ""  # why the statement was left as it is (under --on-error skip)


def _source(layout_paths, metastore, state_dir, console: Console):
    """The layout source the options name, and a function that closes it."""
    from hive_integration.metastore.layouts import (
        FileLayouts,
        MetastoreLayouts,
        SparkCatalogLayouts,
    )

    if layout_paths:
        if metastore:
            raise InputError("give either --layout files or --metastore, not both")
        return FileLayouts(layout_paths), lambda: None
    if metastore:
        from hive_integration.metastore.thrift_client import MetastoreClient

        check_metastore(metastore)
        client = MetastoreClient(metastore).open()
        return MetastoreLayouts(client), client.close
    spark, _ = start_spark(state_dir, None, console, verbose=verbose())
    return SparkCatalogLayouts(spark), lambda: None


def _estimate(layout, read) -> tuple[int | None, int | None]:
    sizes = dict(layout.meta).get("partition_rows") or {}
    if not sizes:
        return None, None
    return sum(int(sizes.get(str(pid), 0)) for pid in read), sum(int(v) for v in sizes.values())


def process(path: str, source, *, dialect: str, database: str | None, on_error: str = "fail",
            explain: bool = True) -> list[StatementResult]:
    text = read_text(path)
    current_db = database.lower() if database else None
    out: list[StatementResult] = []
    shadowed: set[str] = set()  # temporary views and tables the file makes: later unqualified names read them
    for stmt in split_statements(text, path, dialect):
        result = StatementResult(stmt.number, stmt.line, stmt.sql, stmt.sql)
        out.append(result)
        current_db = _rewrite_statement(stmt, result, path, source, dialect, current_db, on_error, explain, shadowed)
        made = session_name(stmt, dialect)
        if made:
            shadowed.add(made)
    return out


def _rewrite_statement(stmt, result: StatementResult, path: str, source, dialect: str, current_db: str | None,
                       on_error: str, explain: bool, shadowed: set[str]) -> str | None:
    """Fill ``result`` with ``stmt`` rewritten; returns the current database after it. A table whose
    unqualified name an earlier statement gave to a temporary view or table (``shadowed``) is left
    alone: Spark reads the view there, and the table's layout says nothing about its rows."""
    from hive_integration.spark.join_ranges import context_for
    from hive_integration.metastore.layouts import layouts_of

    where = Location(path, stmt.number, stmt.line)
    try:
        parsed = classify(stmt, dialect, path)
    except WorkloadError as e:
        if on_error != "skip":
            raise
        result.skipped = e.reason
        return current_db
    if parsed.kind == "use":
        return parsed.label
    if parsed.kind != "query" or not parsed.tokens:
        return current_db
    start = parsed.tokens[0].start - stmt.start  # after EXPLAIN and its options: only the query is rewritten
    head, query = stmt.sql[:start], stmt.sql[start:]
    try:
        # the tables are listed from the tree already parsed: no second parse just for them
        read = [r for r in base_tables(parsed.tree, current_db) if r[2].lower() not in shadowed]
        layouts, columns = layouts_of(read, source)
        if not layouts:
            return current_db
        joins = context_for(getattr(source, "spark", None), source, read, layouts, columns)
        rewritten, result.notes = rewrite_query(query, layouts, dialect=dialect, schema=columns,
                                                current_db=current_db, joins=joins)
        result.rewritten = head + rewritten
        if explain:
            result.scans = explain_query(query, layouts, dialect=dialect, schema=columns, current_db=current_db,
                                         joins=joins)
    except InputError as e:
        if on_error != "skip":
            raise type(e)(e.reason, where) from None
        result.skipped, result.rewritten, result.notes, result.scans = e.reason, stmt.sql, [], []
        return current_db
    for scan in result.scans:
        est, total = _estimate(layouts[scan.table], scan.partitions_read)
        result.estimated_rows.append(est)
        result.table_rows.append(total)
    return current_db


def _common(fn):
    fn = click.option("--layout", "layout_paths", multiple=True, type=click.Path(exists=True),
                      help="Read the layout from this layout.json or advice folder instead of the "
                           "metastore (repeatable; no Spark is started).")(fn)
    fn = click.option("--database", default=None, help="Database of unqualified table names (default: default).")(fn)
    return workload_options(metastore_options(fn))


def _run(queries, layout_paths, metastore, state_dir, dialect, database, on_error, fmt,
         explain: bool) -> list[StatementResult]:
    source, close = _source(layout_paths, metastore, state_dir, Console(fmt))
    try:
        return process(queries, source, dialect=dialect, database=database, on_error=on_error, explain=explain)
    finally:
        close()


@click.command("rewrite")
@click.argument("queries", type=click.Path(exists=True, dir_okay=False))
@output_file_option
@_common
def rewrite_cmd(queries, output, layout_paths, database, metastore, state_dir, dialect, on_error, fmt):
    """Add the partition predicate of each laid-out table to every query in QUERIES."""
    results = _run(queries, layout_paths, metastore, state_dir, dialect, database, on_error, fmt, explain=False)
    if fmt == "json":
        payload = [{"statement": r.number, "line": r.line, "sql": r.rewritten,
                    "scans": [asdict(n) for n in r.notes], **({"skipped": r.skipped} if r.skipped else {})}
                   for r in results]
        text = json.dumps(payload, indent=2)
    else:
        text = "".join(r.rewritten.rstrip() + ";\n\n" for r in results)
        pruned = sum(1 for r in results if r.rewritten != r.sql)
        skipped = sum(1 for r in results if r.skipped)
        click.echo(f"{pruned} of {len(results)} statements rewritten to prune partitions"
                   + (f"; {skipped} could not be read and were left as they are" if skipped else ""), err=True)
    if output:
        Path(output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)


def _rows(n: int | None) -> str:
    return "?" if n is None else f"{n:,}"


@click.command("explain")
@click.argument("queries", type=click.Path(exists=True, dir_okay=False))
@_common
def explain_cmd(queries, layout_paths, database, metastore, state_dir, dialect, on_error, fmt):
    """For each scan of a laid-out table in QUERIES: partitions read, estimated rows, and why."""
    results = _run(queries, layout_paths, metastore, state_dir, dialect, database, on_error, fmt, explain=True)
    if fmt == "json":
        payload = [{"statement": r.number, "line": r.line,
                    "scans": [asdict(s) | {"estimated_rows": e, "table_rows": t,
                                           "rewritten": n.rewritten, "reason": n.reason}
                              for s, n, e, t in zip(r.scans, r.notes, r.estimated_rows, r.table_rows)],
                    **({"skipped": r.skipped} if r.skipped else {})}
                   for r in results]
        click.echo(json.dumps(payload, indent=2))
        return
    for r in results:
        head = " ".join(r.sql.split())
        click.echo(f"statement {r.number} (line {r.line}): {head[:100]}{'…' if len(head) > 100 else ''}")
        if r.skipped:
            click.echo(f"  not read: {r.skipped}")
            continue
        if not r.scans:
            click.echo("  no laid-out table read")
        for s, n, est, total in zip(r.scans, r.notes, r.estimated_rows, r.table_rows):
            name = s.table if s.alias in ("", s.table, s.table.split(".")[-1]) else f"{s.table} AS {s.alias}"
            click.echo(f"  {name}: reads {len(s.partitions_read)} of {s.partitions_total} partitions, "
                       f"~{_rows(est)} of {_rows(total)} rows")
            if not n.rewritten:
                click.echo(f"    not pruned: {n.reason}")
            elif s.predicates_used:
                for p in s.predicates_used:
                    click.echo(f"    pruned by {p}")
            else:
                click.echo("    nothing in the query constrains the layout's columns: reads every partition")
            for p, why in s.predicates_not_used:
                click.echo(f"    cannot prune by {p}: {why}")
            if n.guard:
                click.echo(f"    pruning holds in session {n.guard}; in any other the query reads every partition")
            if s.partitions_matching:
                click.echo(f"    every row of {len(s.partitions_matching)} partition(s) matches")

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
from planner.cli.engine import check_metastore, resolve_engine, start_spark, verbose
from planner.cli.options import EngineOptions, metastore_options, output_file_option, workload_options
from planner.errors import InputError, Location, WorkloadError
from planner.model.layout import CATCH_ALL
from planner.model.wording import plural
from planner.rewrite.aggregate_rewrite import AggregateExplanation, explain_statement, rewrite_statement
from planner.rewrite.query_rewrite import RewriteNote, ScanExplanation
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
    lead: str = ""  # the comments between the statement before and this one, kept in the output
    tables: list[tuple[str, str, str]] = field(default_factory=list)  # (qualified, db, table) it reads
    end: int = 0  # offset in the file just after the statement
    aggregate: AggregateExplanation | None = None  # what the aggregate index did (None: no index applies)


def _source(layout_paths, engine: EngineOptions, console: Console):
    """The layout source the options name, and a function that closes it. A remote metastore
    (``--metastore``, planner.toml or a hive-site.xml) is read over thrift: no JVM starts."""
    from hive_integration.metastore.layouts import (
        FileLayouts,
        MetastoreLayouts,
        SparkCatalogLayouts,
    )

    if layout_paths:
        if engine.given():
            raise InputError(f"give either --layout files or {'/'.join(engine.given())}, not both")
        return FileLayouts(layout_paths), lambda: None
    resolved = resolve_engine(engine)
    if resolved.remote:
        from hive_integration.metastore.thrift_client import MetastoreClient

        uri = check_metastore(resolved.metastore, resolved.metastore_from)
        client = MetastoreClient(uri).open()
        return MetastoreLayouts(client), client.close
    spark, _ = start_spark(engine, console, verbose=verbose())
    return SparkCatalogLayouts(spark), lambda: None


def _comments(between: str) -> str:
    """The comments in the text between two statements (its ``;``, blank lines and spaces around
    them dropped): ``-- Q6: revenue change`` above a query stays above its rewrite."""
    between = between.lstrip()
    if between.startswith(";"):
        between = between[1:]
    lines = [ln.rstrip() for ln in between.strip("\n").splitlines()]
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    return "\n".join(lines)


def unmatched_layouts(results: list[StatementResult], source) -> list[str]:
    """For each ``--layout`` whose table no statement reads: why (a table of the same name read in
    another database: the unqualified name meant the current database, not the layout's)."""
    known = getattr(source, "by_table", None)
    if not known:
        return []
    read = {q for r in results for q, _, _ in r.tables}
    out = []
    for table in sorted(known):
        if table in read:
            continue
        short = table.rsplit(".", 1)[-1]
        near = sorted(q for q in read if q.rsplit(".", 1)[-1] == short)
        db = table.rsplit(".", 1)[0]
        if near:
            out.append(f"the layout of {table} matched no scan: the queries read {', '.join(near)} (an unqualified "
                       f"`{short}` is read in the current database; give --database {db}, or qualify the name)")
        else:
            out.append(f"the layout of {table} matched no scan: no statement reads {table}")
    return out


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
    end = 0  # where the statement before ends in ``text``
    for stmt in split_statements(text, path, dialect):
        result = StatementResult(stmt.number, stmt.line, stmt.sql, stmt.sql, lead=_comments(text[end:stmt.start]))
        end = result.end = stmt.start + len(stmt.sql)
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
    from hive_integration.metastore.layouts import index_contexts, layouts_of
    from hive_integration.spark.join_ranges import context_for

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
        result.tables = read
        layouts, columns = layouts_of(read, source)
        if not layouts:
            return current_db
        spark = getattr(source, "spark", None)
        joins = context_for(spark, source, read, layouts, columns)
        indexes = index_contexts(spark, source, read, layouts)
        names = (lambda q: spark.sql(q).columns if q == query else None) if spark is not None else None
        rewritten, result.notes, result.aggregate = rewrite_statement(
            query, layouts, dialect=dialect, schema=columns, current_db=current_db, joins=joins, indexes=indexes,
            names=names)
        result.rewritten = head + rewritten
        if explain:
            result.scans, _ = explain_statement(query, layouts, dialect=dialect, schema=columns, current_db=current_db,
                                                joins=joins)
    except InputError as e:
        if on_error != "skip":
            raise type(e)(e.reason, where) from None
        result.skipped, result.rewritten, result.notes, result.scans = e.reason, stmt.sql, [], []
        result.aggregate = None
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


def _run(queries, layout_paths, engine, dialect, database, on_error, fmt,
         explain: bool) -> list[StatementResult]:
    console = Console(fmt)
    source, close = _source(layout_paths, engine, console)
    try:
        results = process(queries, source, dialect=dialect, database=database, on_error=on_error, explain=explain)
    finally:
        close()
    for note in unmatched_layouts(results, source):
        console.say(f"note: {note}")
    return results


@click.command("rewrite")
@click.argument("queries", type=click.Path(exists=True, dir_okay=False))
@output_file_option
@_common
def rewrite_cmd(queries, output, layout_paths, database, engine, dialect, on_error, fmt):
    """Add the partition predicate of each laid-out table to every query in QUERIES."""
    results = _run(queries, layout_paths, engine, dialect, database, on_error, fmt, explain=False)
    if fmt == "json":
        payload = [{"statement": r.number, "line": r.line, "sql": r.rewritten,
                    "scans": [asdict(n) for n in r.notes], **({"skipped": r.skipped} if r.skipped else {})}
                   for r in results]
        text = json.dumps(payload, indent=2)
    else:
        text = "".join((r.lead + "\n" if r.lead else "") + r.rewritten.rstrip() + ";\n\n" for r in results)
        tail = _comments(_tail(queries, results))
        text += tail + "\n" if tail else ""
        pruned = sum(1 for r in results if r.rewritten != r.sql)
        skipped = sum(1 for r in results if r.skipped)
        click.echo(f"{pruned} of {len(results)} statements rewritten to prune partitions"
                   + (f"; {skipped} could not be read and were left as they are" if skipped else ""), err=True)
    if output:
        Path(output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)


def _tail(path: str, results: list[StatementResult]) -> str:
    """The text after the file's last statement (comments at its end)."""
    return read_text(path)[results[-1].end if results else 0:]


def _rows(n: int | None) -> str:
    return "?" if n is None else f"{n:,}"


@click.command("explain")
@click.argument("queries", type=click.Path(exists=True, dir_okay=False))
@_common
def explain_cmd(queries, layout_paths, database, engine, dialect, on_error, fmt):
    """For each scan of a laid-out table in QUERIES: partitions read, estimated rows, and why."""
    results = _run(queries, layout_paths, engine, dialect, database, on_error, fmt, explain=True)
    if fmt == "json":
        payload = [{"statement": r.number, "line": r.line,
                    "scans": [asdict(s) | {"estimated_rows": e, "table_rows": t,
                                           "rewritten": n.rewritten, "reason": n.reason}
                              for s, n, e, t in zip(r.scans, r.notes, r.estimated_rows, r.table_rows)],
                    **({"aggregate_index": asdict(r.aggregate)} if r.aggregate is not None else {}),
                    **({"skipped": r.skipped} if r.skipped else {})}
                   for r in results]
        click.echo(json.dumps(payload, indent=2))
        return
    shown = False
    for r in results:
        head = " ".join(r.sql.split())
        click.echo(f"statement {r.number} (line {r.line}): {head[:100]}{'…' if len(head) > 100 else ''}")
        if r.skipped:
            click.echo(f"  not read: {r.skipped}")
            continue
        if r.aggregate is not None:
            for line in r.aggregate.lines():
                click.echo(f"  {line}")
            if r.aggregate.used:
                continue
        if not r.scans:
            click.echo("  no laid-out table read")
        for s, n, est, total in zip(r.scans, r.notes, r.estimated_rows, r.table_rows):
            name = s.table if s.alias in ("", s.table, s.table.split(".")[-1]) else f"{s.table} AS {s.alias}"
            # counted as every report counts them (``Layout.partition_count``): the catch-all left out
            regions = [p for p in s.partitions_read if p != CATCH_ALL]
            click.echo(f"  {name}: reads {len(regions)} of {plural(s.partitions_total - 1, 'partition')}, "
                       f"~{_rows(est)} of {_rows(total)} rows")
            shown = True
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
                click.echo(f"    every row of {plural(len(s.partitions_matching), 'partition')} matches")
    if shown:
        click.echo(f"(partition counts leave out partition {CATCH_ALL}, the catch-all: expected empty, every query "
                   "reads it)")

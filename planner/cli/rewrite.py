"""``planner rewrite`` and ``planner explain``: queries against laid-out tables.

Both read a .sql file statement by statement (``USE db`` changes the database of unqualified
names; SET and DDL pass through untouched) and find each table's layout where ``planner apply``
recorded it: the table's properties in the metastore (embedded by default, ``--metastore
thrift://…`` reads a standalone one over thrift with no Spark at all), or ``--layout`` files.

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
from sqlglot import exp

from planner.cli.advise import metastore_option
from planner.cli.main import cli
from planner.errors import InputError, Location, WorkloadError
from planner.rewrite import RewriteNote, ScanExplanation, explain_query, rewrite_query
from planner.workload.reader import DIALECTS, Statement, _parse, split_statements


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


def _source(layout_paths, metastore, state_dir):
    """The layout source the options name, and a function that closes it."""
    from hive_integration.layouts import FileLayouts, MetastoreLayouts, SparkCatalogLayouts

    if layout_paths:
        if metastore:
            raise InputError("give either --layout files or --metastore, not both")
        return FileLayouts(layout_paths), lambda: None
    if metastore:
        from hive_integration.metastore import MetastoreClient

        if not metastore.startswith("thrift://"):
            raise InputError(f"--metastore must look like thrift://host:port, not {metastore!r}")
        client = MetastoreClient(metastore).open()
        return MetastoreLayouts(client), client.close
    from planner.cli.advise import spark_for

    spark, _ = spark_for(state_dir, None)
    return SparkCatalogLayouts(spark), lambda: None


def _estimate(layout, read) -> tuple[int | None, int | None]:
    sizes = dict(layout.meta).get("partition_rows") or {}
    if not sizes:
        return None, None
    return sum(int(sizes.get(str(pid), 0)) for pid in read), sum(int(v) for v in sizes.values())


def process(path: str, source, *, dialect: str, database: str | None) -> list[StatementResult]:
    from hive_integration.layouts import layouts_for

    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise WorkloadError("no such file", Location(path)) from None
    except (OSError, UnicodeDecodeError) as e:
        raise WorkloadError(f"cannot read the file: {e}", Location(path)) from None
    current_db = database.lower() if database else None
    out: list[StatementResult] = []
    for stmt in split_statements(text, path, dialect):
        where = Location(path, stmt.number, stmt.line)
        result = StatementResult(stmt.number, stmt.line, stmt.sql, stmt.sql)
        out.append(result)
        try:
            tree = _parse(stmt, dialect)
        except Exception as e:  # noqa: BLE001 - sqlglot raises several kinds; all mean "cannot parse"
            raise WorkloadError(f"syntax error: {str(e).splitlines()[0] if str(e) else type(e).__name__}",
                                where) from None
        if isinstance(tree, exp.Use):
            current_db = tree.this.name.lower() if tree.this is not None else current_db
            continue
        if not isinstance(tree, (exp.Query, exp.Insert)):
            continue
        try:
            layouts, columns = layouts_for(stmt.sql, source, dialect=dialect, current_db=current_db)
            if not layouts:
                continue
            result.rewritten, result.notes = rewrite_query(stmt.sql, layouts, dialect=dialect, schema=columns,
                                                           current_db=current_db)
            result.scans = explain_query(stmt.sql, layouts, dialect=dialect, schema=columns, current_db=current_db)
        except InputError as e:
            raise type(e)(e.reason, where) from None
        for scan in result.scans:
            est, total = _estimate(layouts[scan.table], scan.partitions_read)
            result.estimated_rows.append(est)
            result.table_rows.append(total)
    return out


def _common(fn):
    fn = click.option("--layout", "layout_paths", multiple=True, type=click.Path(exists=True),
                      help="Read the layout from this layout.json or advice folder instead of the "
                           "metastore (repeatable).")(fn)
    fn = click.option("--database", default=None, help="Database of unqualified table names (default: default).")(fn)
    fn = click.option("--dialect", type=click.Choice(DIALECTS), default="spark", show_default=True)(fn)
    fn = click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)(fn)
    return metastore_option(fn)


def _run(queries, layout_paths, metastore, state_dir, dialect, database) -> list[StatementResult]:
    source, close = _source(layout_paths, metastore, state_dir)
    try:
        return process(queries, source, dialect=dialect, database=database)
    finally:
        close()


@cli.command("rewrite")
@click.argument("queries", type=click.Path(dir_okay=False))
@click.option("--out", type=click.Path(dir_okay=False), help="Write the rewritten SQL here (default: stdout).")
@_common
def rewrite_cmd(queries, out, layout_paths, database, dialect, fmt, metastore, state_dir):
    """Add the partition predicate of each laid-out table to every query in QUERIES."""
    results = _run(queries, layout_paths, metastore, state_dir, dialect, database)
    if fmt == "json":
        payload = [{"statement": r.number, "line": r.line, "sql": r.rewritten,
                    "scans": [asdict(n) for n in r.notes]} for r in results]
        text = json.dumps(payload, indent=2)
    else:
        text = "".join(r.rewritten.rstrip() + ";\n\n" for r in results)
        pruned = sum(1 for r in results if r.rewritten != r.sql)
        click.echo(f"{pruned} of {len(results)} statements rewritten to prune partitions", err=True)
    if out:
        Path(out).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)


def _rows(n: int | None) -> str:
    return "?" if n is None else f"{n:,}"


@cli.command("explain")
@click.argument("queries", type=click.Path(dir_okay=False))
@_common
def explain_cmd(queries, layout_paths, database, dialect, fmt, metastore, state_dir):
    """For each scan of a laid-out table in QUERIES: partitions read, estimated rows, and why."""
    results = _run(queries, layout_paths, metastore, state_dir, dialect, database)
    if fmt == "json":
        payload = [{"statement": r.number, "line": r.line,
                    "scans": [asdict(s) | {"estimated_rows": e, "table_rows": t,
                                           "rewritten": n.rewritten, "reason": n.reason}
                              for s, n, e, t in zip(r.scans, r.notes, r.estimated_rows, r.table_rows)]}
                   for r in results]
        click.echo(json.dumps(payload, indent=2))
        return
    for r in results:
        head = " ".join(r.sql.split())
        click.echo(f"statement {r.number} (line {r.line}): {head[:100]}{'…' if len(head) > 100 else ''}")
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

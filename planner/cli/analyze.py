"""``planner analyze workload.sql``: per table and column, the filters and CPS candidate conditions.

Pure Python: no Spark, no metastore (the workload may come from Spark event logs all the same).
"""
from __future__ import annotations

import json
from pathlib import Path

import click

from planner.analysis.table_analysis import TableAnalysis, analyze
from planner.cli.console import Console
from planner.cli.engine import check_metastore, workload_text
from planner.cli.options import eventlog_options, metastore_uri, workload_options
from planner.cnf.normalize import DEFAULT_BUDGET
from planner.errors import InputError
from planner.model.wording import plural
from planner.workload import Schema, Workload, parse_workload
from planner.workload.scans import schema_from_ddl


def load_schema(path: str | None, dialect: str) -> Schema:
    if not path:
        return Schema()
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise InputError(f"{path}: cannot read schema file: {e.strerror or e}") from None
    return schema_from_ddl(text, path, dialect)


@click.command("analyze")
@click.argument("workload", required=False, type=click.Path(exists=True, dir_okay=False))
@eventlog_options
@click.option("--table", "tables", multiple=True, help="Only these tables (default: every table read).")
@click.option("--schema", "schema_path", type=click.Path(exists=True, dir_okay=False),
              help="A file of CREATE TABLE statements; resolves columns and checks names and types.")
@click.option("--budget", type=int, default=DEFAULT_BUDGET, show_default=True, help="CNF size budget (clauses).")
@click.option("--metastore", metavar="thrift://HOST:PORT", callback=metastore_uri,
              help="Follow the views this Hive Metastore defines (over thrift: no Spark).")
@workload_options
def analyze_cmd(workload, eventlog, window, tables, schema_path, budget, metastore, dialect,
                on_error, fmt):
    """Show each column's filters and CPS candidate conditions.

    WORKLOAD is a file of HiveQL statements (or give --from-eventlog DIR)."""
    schema = load_schema(schema_path, dialect)
    text, name = workload_text(workload, eventlog, window, dialect, Console(fmt))
    if metastore:
        from hive_integration.metastore.thrift_client import MetastoreClient

        check_metastore(metastore)
        with MetastoreClient(metastore) as client:
            wl = parse_workload(text, name, dialect=dialect, schema=schema, on_error=on_error, views=client.view_text,
                                joins=False)
    else:  # joins=False: the output shows no join-induced predicates, so none are worked out
        wl = parse_workload(text, name, dialect=dialect, schema=schema, on_error=on_error, joins=False)
    names = [t.lower() for t in tables] or wl.tables()
    unknown = [t for t in names if t not in wl.tables()]
    if unknown:
        raise InputError(f"{name}: no query reads {', '.join(unknown)} (tables read: {', '.join(wl.tables())})")
    if schema:
        missing = [t for t in names if schema.columns(t) is None]
        if missing:
            raise InputError(f"{schema_path}: no CREATE TABLE for {', '.join(missing)}")
    result = analyze(wl, names, {t: schema.columns(t) for t in names if schema.columns(t)}, budget)
    if fmt == "json":
        click.echo(json.dumps(analysis_json(wl, result), indent=2, ensure_ascii=False))
    else:
        click.echo(analysis_text(wl, result))


def _summary(wl: Workload) -> str:
    skipped = ", ".join(f"{n} {k}" for k, n in wl.skipped) or "none"
    views = f"; views followed: {', '.join(wl.views)}" if wl.views else ""
    return f"{wl.path}: {plural(len(wl.queries), 'query', 'queries')}; skipped statements: {skipped}{views}"


def analysis_text(wl: Workload, tables: list[TableAnalysis]) -> str:
    lines = [_summary(wl)]
    lines += [f"  skipped: {e}" for e in wl.errors]
    for t in tables:
        counts = t.filter_counts()
        lines.append("")
        lines.append(f"table {t.table}: {plural(len(t.scans), 'scan')}")
        for note in t.notes:
            lines.append(f"  note: {note}")
        for c in sorted(t.candidates, key=lambda c: (-c.queries, c.column)):
            derived = " (derived)" if c.column in t.derived else ""
            lines.append(f"  {c.column}{derived}: filtered by {plural(counts.get(c.column, 0), 'scan')}; "
                         f"{plural(len(c.conditions), 'candidate condition')}")
            for i, cond in enumerate(c.conditions, 1):
                lines.append(f"    c{i}: {cond}")
        unused: dict[tuple[str, str], int] = {}
        for s in t.scans:
            for u in s.unused:
                unused[u] = unused.get(u, 0) + 1
        if unused:
            lines.append("  not usable for pruning:")
            for (pred, why), n in sorted(unused.items(), key=lambda kv: -kv[1]):
                lines.append(f"    {pred}  [{why}; {plural(n, 'scan')}]")
    notes = {n for q in wl.queries for n in q.notes}
    for n in sorted(notes):
        lines.append(f"note: {n}")
    return "\n".join(lines)


def analysis_json(wl: Workload, tables: list[TableAnalysis]) -> dict:
    return {
        "workload": wl.path,
        "queries": len(wl.queries),
        "skipped": dict(wl.skipped),
        "errors": list(wl.errors),
        "views": list(wl.views),
        "notes": sorted({n for q in wl.queries for n in q.notes}),
        "tables": [
            {
                "table": t.table,
                "scans": len(t.scans),
                "notes": list(t.notes),
                "columns": [
                    {
                        "column": c.column,
                        "kind": c.kind.value,
                        "derived": c.column in t.derived,
                        "filtered_by": c.queries,
                        "ordered": c.ordered,
                        "conditions": [str(x) for x in c.conditions],
                    }
                    for c in t.candidates
                ],
                "unused": sorted({f"{p} [{why}]" for s in t.scans for p, why in s.unused}),
            }
            for t in tables
        ],
    }

"""The advice folder a DBA reviews and applies: ddl.sql, apply.sql, layout.json and report.md.

Both SQL files are printed for Spark (``spark-sql -f``); statements end with ``;`` and a newline.
The new table is ``<source>__planner_new``; ``apply.sql`` fills it, keeps the old table as
``<source>__before_<UTC timestamp>`` and renames the new table into place.
"""
from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Mapping

from sqlglot import exp

from planner.emit.apply_sql import apply_statements, backup_name, statements_text
from planner.emit.ddl import create_table_sql, table_expr
from planner.layout import CATCH_ALL, Layout

DIALECT = "spark"


def new_table_name(source: str, dialect: str = DIALECT) -> exp.Table:
    t = table_expr(source, dialect)
    t.set("this", exp.to_identifier(f"{t.name}__planner_new", quoted=True))
    return t


def _md_cell(v) -> str:
    return str(v).replace("|", "\\|").replace("\n", " ")


def report_text(layout: Layout, advice=None, *, new_table: str = "", backup: str = "") -> str:
    meta = dict(layout.meta)
    lines = [f"# Layout advice for `{layout.table}`", "", "## What", "", f"- {layout.describe()}",
             f"- partition column: `{layout.partition_column}` (partition {CATCH_ALL} is the catch-all; "
             "queries always read it)", "", "| partition | rows it holds |", "|---|---|"]
    for p in layout.partitions:
        lines.append(f"| {p.id} | {_md_cell(p.describe())} |")
    lines.append(f"| {CATCH_ALL} | anything no region claims (expected empty) |")
    lines += ["", "## Why", ""]
    rows, full = meta.get("estimated_rows_read"), meta.get("estimated_full_scan_rows")
    if rows is not None and full:
        lines.append(f"- the workload is estimated to read {rows:,} rows instead of {full:,} "
                     f"({full / max(rows, 1):.1f}x fewer)")
    for key in ("workload", "workload_fingerprint", "statistics_snapshot", "table_rows"):
        if key in meta:
            lines.append(f"- {key.replace('_', ' ')}: `{_md_cell(meta[key])}`")
    if advice is not None:
        from planner.advice import ranking_rows
        ranked = ranking_rows(advice)
        if ranked:
            heads = list(ranked[0])
            lines += ["", "### Ranking", "", "| # | " + " | ".join(heads) + " |",
                      "|---|" + "---|" * len(heads)]
            for i, r in enumerate(ranked, 1):
                lines.append(f"| {i} | " + " | ".join(_md_cell(r[h]) for h in heads) + " |")
    lines += ["", "## How to apply", "",
              "1. Review `ddl.sql` and `apply.sql` (Spark SQL; the SETs make the Hive write path work too).",
              f"2. Run `ddl.sql`: it creates `{new_table}` with the layout stored in its TBLPROPERTIES.",
              f"3. Run `apply.sql`: it fills the new table, keeps the old one as `{backup}` and renames "
              "the new table into place.",
              "4. Query through `planner.sql(spark, text)` (or `planner explain`) so scans read only "
              "the partitions they need.",
              f"5. To roll back: drop `{layout.table}` and rename `{backup}` back.", ""]
    return "\n".join(lines)


def write_advice_folder(out: Path, layout: Layout, columns: Mapping[str, str], advice=None, *,
                        file_format: str = "PARQUET", when: dt.datetime | None = None) -> Path:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    new = new_table_name(layout.table)
    bak = backup_name(layout.table, when, DIALECT)
    ddl = create_table_sql(layout, columns, new, file_format=file_format, dialect=DIALECT)
    apply = apply_statements(layout, columns, layout.table, new, dialect=DIALECT, backup=bak)
    (out / "ddl.sql").write_text(statements_text([ddl]), encoding="utf-8")
    (out / "apply.sql").write_text(statements_text(apply), encoding="utf-8")
    (out / "layout.json").write_text(layout.dumps() + "\n", encoding="utf-8")
    (out / "report.md").write_text(report_text(layout, advice, new_table=new.sql(dialect=DIALECT),
                                               backup=bak.sql(dialect=DIALECT)), encoding="utf-8")
    return out

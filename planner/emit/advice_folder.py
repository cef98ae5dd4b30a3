"""The advice folder a DBA reviews and applies: ddl.sql, apply.sql, layout.json and report.md.

* ``ddl.sql`` is Hive DDL (``PARTITIONED BY (planner_pid BIGINT)``, the partition column not repeated
  in the column list); it creates ``<source>__planner_new`` with the layout in its TBLPROPERTIES.
* ``apply.sql`` (HiveQL, runs on Hive and on the Spark Thrift Server with ``beeline -f``) fills
  it, keeps the old table as ``<source>__before_<advised at>`` — the very name ``planner apply``
  keeps, both derived from the time stamp in the layout — and renames the new table into place.
* Both carry comments saying why: which queries each partition serves and what it holds; string
  ranges list the values the sample saw in them (``('FOB', 'RAIL']`` holds MAIL and RAIL).
* ``report.md`` says the same in prose, with the ranking of every contender and what its
  columns mean.

Comment lines never hold ``;`` or a line break taken from the data (beeline splits on ``;``).
"""
from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from sqlglot import exp

from planner.emit.apply_sql import apply_statements, backup_name, statements_text
from planner.emit.ddl import TableMetadata, create_table_sql, left_out_text, replaced_text, table_expr
from planner.model.layout import CATCH_ALL, Layout
from planner.semantics.kinds import Kind, render

DIALECT = "hive"
MAX_VALUES_SHOWN = 12
MAX_TEMPLATES_SHOWN = 6


def new_table_name(source: str, dialect: str = DIALECT) -> exp.Table:
    t = table_expr(source, dialect)
    t.set("this", exp.to_identifier(f"{t.name}__planner_new", quoted=True))
    return t


@dataclass(frozen=True)
class PartitionNote:
    """What one partition holds and serves, for the comments and the report."""

    id: int
    holds: str  # the region, with the values a string range holds
    rows: int | None
    bytes: int | None
    share: float | None  # of the table's rows
    queries: int | None  # queries of the workload that read it (None: no workload at hand)
    templates: tuple[str, ...] = ()


def partition_notes(layout: Layout, advice=None) -> list[PartitionNote]:
    meta = dict(layout.meta)
    sizes = {int(k): int(v) for k, v in (meta.get("partition_rows") or {}).items()}
    total = sum(sizes.values()) or None
    row_bytes = None
    if advice is not None and advice.stats.rows:
        row_bytes = advice.stats.bytes / advice.stats.rows
    readers = _readers(layout, advice)
    notes = []
    for p in [*layout.partitions, None]:
        pid = CATCH_ALL if p is None else p.id
        if p is not None and pid == CATCH_ALL:
            continue
        holds = "anything no other partition claims (expected empty; always read)" if p is None else \
            _region_text(p.region, layout, advice)
        rows = sizes.get(pid, 0 if p is None and sizes else None)
        q = readers.get(pid)
        notes.append(PartitionNote(pid, holds, rows, None if rows is None or row_bytes is None else
                                   round(rows * row_bytes), None if rows is None or not total else rows / total,
                                   None if q is None else len(q[0]), tuple(q[1][:MAX_TEMPLATES_SHOWN]) if q else ()))
    return notes


def _readers(layout: Layout, advice) -> dict[int, tuple[set[int], list[str]]]:
    """Partition id -> (queries that read it, their templates by how many of them read it)."""
    if advice is None or not advice.analysis.scans:
        return {}
    from planner.pruning.hits import hit_matrix

    regions = [p.conditions for p in layout.partitions]
    hits = hit_matrix(advice.analysis.scans, regions, advice.analysis.kinds)
    queries = advice.workload.queries
    out: dict[int, tuple[set[int], list[str]]] = {}
    everyone = {s.query for s in advice.analysis.scans}
    for j, p in enumerate(layout.partitions):
        readers = {advice.analysis.scans[i].query for i in range(len(advice.analysis.scans)) if hits[i, j]}
        out[p.id] = (readers, _by_count(queries[i].template for i in readers))
    out[CATCH_ALL] = (everyone, _by_count(queries[i].template for i in everyone))
    return out


def _by_count(names) -> list[str]:
    counts: dict[str, int] = {}
    for n in names:
        counts[n] = counts.get(n, 0) + 1
    return [n for n, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]


def _region_text(region, layout: Layout, advice) -> str:
    if not region:
        return "all rows"
    parts = []
    for attr, vs in region:
        text = f"{attr} IN {vs}"
        values = _sample_values(attr, vs, advice) if vs.kind is Kind.STRING and vs.point_values() is None else None
        if values:
            shown = ", ".join(render(v) for v in values[:MAX_VALUES_SHOWN])
            more = f" and {len(values) - MAX_VALUES_SHOWN} more" if len(values) > MAX_VALUES_SHOWN else ""
            text = f"{attr} one of {shown}{more}" + (", or NULL" if vs.null else "") + \
                f" (the values the sample holds in the range {vs})"
        elif values is not None:
            text = f"{text} (the sample holds no value in it)"
        parts.append(text)
    return " AND ".join(parts)


def _sample_values(attr: str, vs, advice) -> list | None:
    sample = getattr(getattr(advice, "stats", None), "sample", None)
    if sample is None or attr not in sample.column_names:
        return None
    seen = {v for v in sample.column(attr).to_pylist() if isinstance(v, str) and vs.contains(v)}
    return sorted(seen)


def _safe(text: str) -> str:
    """Text for a ``--`` comment line: one line, no ``;``, no ``${`` (a variable to Hive and Spark)."""
    return " ".join(str(text).replace(";", ",").replace("${", "$ {").split())


def _size(n: int | None) -> str:
    if n is None:
        return "?"
    for unit, div in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= div:
            return f"{n / div:.1f} {unit}"
    return f"{n} B"


def _rows(n) -> str:
    return "?" if n is None else f"{n:,}"


def _serves(n: PartitionNote, queries: int | None) -> str:
    if n.queries is None:
        return ""
    names = ", ".join(n.templates)
    return f"read by {n.queries} of {queries} queries" + (f" ({names}{', …' if n.queries > len(n.templates) else ''})"
                                                          if names else "")


def _partition_lines(notes: Sequence[PartitionNote], queries: int | None) -> list[str]:
    lines = []
    for n in notes:
        cost = f"~{_rows(n.rows)} rows" + (f", ~{_size(n.bytes)}" if n.bytes is not None else "") + \
            (f" ({n.share:.1%} of the table)" if n.share is not None else "")
        serves = _serves(n, queries)
        lines.append(_safe(f"partition {n.id}: {n.holds}"))
        lines.append("    " + _safe(cost + (f", {serves}" if serves else "")))
    return lines


def _estimate_line(layout: Layout) -> str | None:
    meta = dict(layout.meta)
    rows, full = meta.get("estimated_rows_read"), meta.get("estimated_full_scan_rows")
    if rows is None or not full:
        return None
    return (f"the workload is estimated to read {rows:,} rows instead of {full:,} "
            f"({full / max(rows, 1):.1f}x fewer; partition and file openings counted as rows read)")


def _comment(lines: Sequence[str]) -> str:
    return "".join(f"-- {_safe(line)}\n" if line else "--\n" for line in lines)


def ddl_text(layout: Layout, columns: Mapping[str, str], notes: Sequence[PartitionNote], queries: int | None, *,
             file_format: str = "PARQUET", metadata: TableMetadata | None = None,
             external_location: str | None = None) -> str:
    new = new_table_name(layout.table)
    head = [f"Hive DDL for the layout advised for {layout.table}: {layout.describe()}",
            f"Creates {new.sql(dialect=DIALECT)} partitioned by {layout.partition_column}, the layout kept in its "
            "TBLPROPERTIES. apply.sql fills it and swaps it in.",
            "Run with: beeline -u jdbc:hive2://HOST:PORT/default -f ddl.sql (or hive -f, spark-sql -f)", ""]
    estimate = _estimate_line(layout)
    if estimate:
        head += [estimate, ""]
    head += [f"partitions ({len(notes)}, the catch-all {CATCH_ALL} included):"]
    body = _comment(head) + "".join(f"--   {line}\n" for line in _partition_lines(notes, queries))
    if metadata is not None:
        body += _comment([left_out_text(item) for item in metadata.left_out])
    replaced = metadata.replaced_partitioning(layout) if metadata is not None else ()
    if replaced:
        body += _comment([f"{layout.table} is partitioned by ({', '.join(replaced)}) today: "
                          f"{replaced_text(layout, replaced)}.", ""])
    if external_location:
        body += (f"-- {_safe(layout.table)} is an external table: the laid-out copy is external too, in a new "
                 f"folder beside its own ({_safe(external_location)}); the old folder's files are never deleted\n")
    ddl = create_table_sql(layout, columns, new, file_format=file_format, dialect=DIALECT, metadata=metadata,
                           external_location=external_location)
    return body + "\n" + statements_text([ddl])


def apply_text(layout: Layout, columns: Mapping[str, str], notes: Sequence[PartitionNote], backup: exp.Table) -> str:
    new = new_table_name(layout.table)
    stmts = apply_statements(layout, columns, layout.table, new, dialect=DIALECT, backup=backup)
    *fill, rename_old, rename_new = stmts
    rows = sum(n.rows or 0 for n in notes) or None
    size = sum(n.bytes or 0 for n in notes) or None
    head = _comment([
        f"Fills {new.sql(dialect=DIALECT)} (created by ddl.sql) from {layout.table} and swaps it in.",
        f"Writes ~{_rows(rows)} rows (~{_size(size)}) into {len(notes)} partitions, one full read of "
        f"{layout.table}. The SETs turn on dynamic partitioning for Hive (Spark ignores them).",
        f"The old table is kept as {backup.sql(dialect=DIALECT)} (the name planner apply keeps too).",
        "Check the new table before the two renames at the end, e.g. that both tables count the same rows.",
        f"To roll back: DROP TABLE {layout.table}, then ALTER TABLE {backup.sql(dialect=DIALECT)} RENAME TO "
        f"{layout.table}.", *([f"The layout's aggregate index ({layout.table}__cells) is built by `planner apply` (with "
                               "Spark), which records the snapshot it was built from; applied by hand, the table "
                               "has no index and aggregate queries scan it."] if layout.aggregate_index else []),
        ""])
    return (head + statements_text(fill) + "\n" + _comment(["swap: the old table keeps its data under the backup name"])
            + statements_text([rename_old, rename_new]) + _cells_text(layout))


def _cells_text(layout: Layout) -> str:
    """The statements ``planner apply`` runs after the swap to build the aggregate index, as comments:
    each build gets a fresh stamp and records the table's snapshot in its properties, which a
    hand-run copy of these statements would not, so the rewrite would not use it."""
    if layout.aggregate_index is None:
        return ""
    from planner.emit.cells_sql import build_statements
    from planner.model.aggregate_index import cells_table, cells_view, sorts_cells

    stmts = build_statements(layout.aggregate_index, layout.table, cells_table(layout.table), "<stamp>",
                             layout.partition_column, "spark",
                             sorts_cells(layout.aggregate_index, len(layout.partitions)))
    lines = ["", "aggregate index: what `planner apply` runs after the swap (for reading; run by hand, the index is "
             "not recorded and queries do not use it)"]
    view = cells_view(cells_table(layout.table), "<stamp>")
    last = [f"then CREATE OR REPLACE VIEW {view} AS the build's cells: what SQL saved by `planner rewrite` reads "
            "(its property holds the cells query above, which the planner puts in its place before it writes to the "
            "table)"]
    return "\n" + _comment(lines + [line for s in stmts for line in (s + ";").splitlines()] + last)


# ---- report.md -----------------------------------------------------------------------------------
# What the ranking's columns mean (issue 11 owns the numbers; unknown columns are listed as they are).
RANKING_LEGEND = {
    "strategy": "how the partitions are chosen",
    "partitions": "partitions the layout creates (the catch-all not counted)",
    "order": "how rows are ordered inside each partition, so Parquet row groups can be skipped",
    "rows_read": "estimated rows the whole workload reads from the table under this layout, summed over its "
                 "scans (the overhead below not included)",
    "bytes_read": "estimated bytes read (only the columns each query reads), summed over the scans",
    "overhead_rows": "the cost of opening partitions and files, counted as rows read (per partition "
                     "{partition_overhead_rows:,.0f} rows, per file {file_overhead_rows:,.0f} rows: listing, planning, "
                     "footer reads); what the partitioning algorithms trade against rows",
    "seconds": "the workload's estimated wall time under this layout, in seconds: planning, partitions listed, "
               "files opened, row groups, rows and bytes read ({time_source})",
    "robustness_seconds": "the time a robustness set of single-column ranges (on the columns the workload filters, "
                          "those named with --robustness-column and those the table is clustered on now) takes "
                          "under this layout, weighted into the score, so a layout that serves only the "
                          "workload's exact ranges does not win on them alone",
    "speedup_vs_current": "the workload's estimated time on the table as it is, divided by its time under this layout",
    "score": "what the ranking orders by: seconds + robustness; lower is better",
    "current": "true for the table as it is now (priced from its Parquet footers): always a contender",
    "pick": "true for the advised layout",
    "regressions": "queries (of the workload and the robustness set) that would get noticeably slower than on the "
                   "table as it is: more than {threshold:g}x their time and more than {slack:.2g} s longer",
    "worst_ratio": "the largest ratio of a query's time under this layout to its time today",
    "gain_vs_full_scan": "rows a full scan of the table reads (for every scan) divided by rows read: higher is "
                         "better",
    "read_over_matching": "rows read divided by the rows that match the queries' filters: 1.0 is the ideal, "
                          "a layout cannot do better",
}


def _md(v) -> str:
    return str(v).replace("|", "\\|").replace("\n", " ")


def _code(v) -> str:
    """``v`` as a Markdown code span. Hive quotes names with backticks (```tpch`.`t```), so the fence
    is one backtick longer than the longest run inside, and padded when ``v`` starts or ends with one
    (CommonMark's rule): `` `tpch`.`t` `` renders as `tpch`.`t`, not as broken nested spans."""
    text = str(v).replace("\n", " ")
    run = max((len(m) for m in re.findall("`+", text)), default=0)
    fence = "`" * (run + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def report_text(layout: Layout, advice=None, *, new_table: str = "", backup: str = "",
                notes: Sequence[PartitionNote] | None = None, replaced: Sequence[str] = ()) -> str:
    meta = dict(layout.meta)
    notes = list(notes) if notes is not None else partition_notes(layout, advice)
    queries = len(advice.workload.queries) if advice is not None else None
    lines = [f"# Layout advice for {_code(layout.table)}", "", "## What", "", f"- {layout.describe()}",
             f"- partition column: {_code(layout.partition_column)} (partition {CATCH_ALL} is the catch-all; queries "
             "always read it)", *_bloom_lines(layout), "",
             "| partition | rows it holds | estimated size | queries that read it |", "|---|---|---|---|"]
    for n in notes:
        size = f"~{_rows(n.rows)} rows" + (f", ~{_size(n.bytes)}" if n.bytes is not None else "") + \
            (f" ({n.share:.1%})" if n.share is not None else "")
        lines.append(f"| {n.id} | {_md(n.holds)} | {size} | {_md(_serves(n, queries)) or '-'} |")
    lines += ["", "## Why", ""]
    estimate = _estimate_line(layout)
    if estimate:
        lines.append(f"- {estimate}")
    for key in ("workload", "workload_fingerprint", "statistics_snapshot", "table_rows", "advised_at"):
        if key in meta:
            lines.append(f"- {key.replace('_', ' ')}: {_code(_md(meta[key]))}")
    if advice is not None:
        lines += _ranking(advice)
    lines += _aggregate_index(layout, advice)
    lines += ["", "## How to apply", ""]
    if replaced:
        lines += [f"**Before you apply:** {_code(layout.table)} is partitioned by ({', '.join(replaced)}) today: "
                  f"{_md(replaced_text(layout, replaced))}. `planner apply` refuses it without "
                  "`--replace-partitioning`.", ""]
    lines += ["With the planner: `planner apply <this folder>` (writes, verifies row count and checksum, then "
              "swaps; re-running resumes). By hand, as a DBA:", "",
              "1. Review `ddl.sql` and `apply.sql` (HiveQL; they run on Hive and on the Spark Thrift Server).",
              f"2. `beeline -u jdbc:hive2://HOST:PORT/default -f ddl.sql`: creates {_code(new_table)} with the layout in "
              "its TBLPROPERTIES.",
              f"3. `beeline … -f apply.sql`: fills it, keeps the old table as {_code(backup)} and renames the new table "
              "into place.",
              "4. Query through `planner.sql(spark, text)` or `planner rewrite` so scans read only the partitions "
              "they need.",
              f"5. To roll back: {_code(f'DROP TABLE {layout.table}')}, then {_code(f'ALTER TABLE {backup} RENAME TO {layout.table}')}.",
              ""]
    return "\n".join(lines)


def _bloom_lines(layout: Layout) -> list[str]:
    """The layout's bloom filters: on which columns, their size, and what they serve."""
    from planner.costmodel.bloom import filter_bytes, hinted

    filters = hinted(layout)
    if not filters:
        return []
    meta = dict(layout.meta)
    groups = max(1.0, float(meta.get("table_rows") or 0) / max(int(meta.get("row_group_rows") or 1), 1))
    out = []
    for column, spec in sorted(filters.items()):
        size = filter_bytes(float(spec["ndv"]), float(spec["fpp"]))
        out.append(f"- bloom filter on `{column}`: {size // 1024} KiB per row group (sized for {int(spec['ndv']):,} "
                   f"values at {float(spec['fpp']):.0%} false positives), ~{_size(size * groups)} in all; lookups "
                   f"(`=`, `IN`, `<=>`) on it skip the row groups without the value (the table properties "
                   f"`parquet.bloom.filter.*#{column.lower()}` in `ddl.sql` ask every writer for them)")
    return out


def _aggregate_index(layout: Layout, advice=None) -> list[str]:
    """The aggregate index (issue 32): what it keeps, its size and build, the queries it serves, the
    layouts ranked with and without it; or why advise declined it."""
    meta = dict(layout.meta)
    price = meta.get("aggregate_index_price")
    index = layout.aggregate_index
    if index is None and not price:
        return []
    lines = ["", "## Aggregate index", ""]
    if index is None:
        return lines + [f"Considered and declined: {_md(price.get('declined') or 'it did not pay')}."]
    table_bytes = meta.get("table_bytes") or (advice.stats.bytes if advice is not None else None)
    share = f" ({price['bytes'] / table_bytes:.2%} of the table)" if price and table_bytes else ""
    lines += [f"Pre-aggregated cells in `{_md(layout.table)}__cells`, built by `planner apply` after the swap "
              "(and again after `planner append` and `planner relayout`). An aggregate query over the table takes "
              "the cells that lie wholly inside its box from the index and scans only the boundary cells; "
              "a stale index (a write that bypassed the planner) is detected and the query scans.", "",
              f"- cells: each partition × {', '.join(f'`{d.column}` ({d.buckets} buckets)' for d in index.dims)}"
              + (f" × the values of {', '.join(f'`{c}`' for c, _ in index.groups)}" if index.groups else ""),
              f"- kept per cell: the row count, and sum, count, min and max of "
              f"{', '.join(f'`{_md(e.sql)}`' for e in index.exprs) or 'nothing else'}"]
    if price:
        lines += [f"- estimated size: ~{price['cells']:,} cells, ~{_size(price['bytes'])}{share}",
                  f"- estimated build: ~{price['build_seconds']:.1f} s (a plain copy of the table: "
                  f"~{price['copy_seconds']:.1f} s)",
                  f"- serves {price['served']} scan(s) of the workload: ~{price['seconds_before']:.2f} s → "
                  f"~{price['seconds_after']:.2f} s; rows read {price['rows_before']:,} → {price['rows_after']:,} from "
                  f"the table plus {price['index_rows']:,} cells"]
        if price.get("templates"):
            lines.append(f"- the queries it serves: {', '.join(f'`{_md(t)}`' for t in price['templates'][:12])}")
    if advice is not None:
        rows = [c for c in advice.result.ranked
                if c.layout.strategy.removesuffix(" + aggregate index") in
                {x.layout.strategy.removesuffix(" + aggregate index") for x in advice.result.ranked
                 if x.layout.aggregate_index is not None}]
        if rows:
            lines += ["", "Layouts with and without the index (estimated):", "",
                      "| layout | index | est. time | rows read (table + cells) |", "|---|---|---|---|"]
            for c in sorted(rows, key=lambda c: (c.layout.strategy.removesuffix(" + aggregate index"), c.seconds)):
                lines.append(f"| {_md(c.layout.strategy.removesuffix(' + aggregate index'))} | "
                             f"{'yes' if c.layout.aggregate_index is not None else 'no'} | {c.seconds:.2f} s | "
                             f"{c.rows:,.0f} |")
    return lines


def _ranking(advice) -> list[str]:
    from planner.advice.ranking import ranking_rows

    ranked = ranking_rows(advice)
    if not ranked:
        return []
    heads = list(ranked[0])
    params = advice.params
    scans = len(advice.analysis.scans)
    lines = ["", "### Ranking", "",
             f"Every contender, costed on the same {scans} scans of {_code(advice.stats.table)} "
             f"({advice.stats.rows:,} rows, a sample of {advice.stats.sample.num_rows:,}); best first.", "",
             "| # | " + " | ".join(heads) + " |", "|---|" + "---|" * len(heads)]
    for i, r in enumerate(ranked, 1):
        lines.append(f"| {i} | " + " | ".join(_md(r[h]) for h in heads) + " |")
    lines += ["", "Columns:", ""]
    for h in heads:
        text = RANKING_LEGEND.get(h, "as computed by the cost model")
        try:
            model = advice.guard.model if advice.guard is not None else None
            text = text.format(
                partition_overhead_rows=model.partition_overhead_rows if model else params.partition_overhead_rows or 0,
                file_overhead_rows=model.file_overhead_rows if model else params.file_overhead_rows or 0,
                time_source=params.time.source, threshold=params.guard_threshold,
                slack=advice.guard.slack if advice.guard is not None else params.guard_slack_seconds)
        except (AttributeError, KeyError, ValueError):
            pass
        lines.append(f"- `{h}`: {text}")
    return lines


def write_advice_folder(out: Path, layout: Layout, columns: Mapping[str, str], advice=None, *,
                        file_format: str = "PARQUET", metadata: TableMetadata | None = None,
                        external_location: str | None = None, when: dt.datetime | None = None) -> Path:
    """Write the four files; ``when`` defaults to the layout's ``advised_at`` (the backup's stamp)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    bak = backup_name(layout.table, when, DIALECT, layout=layout)
    notes = partition_notes(layout, advice)
    queries = len(advice.workload.queries) if advice is not None else None
    (out / "ddl.sql").write_text(ddl_text(layout, columns, notes, queries, file_format=file_format, metadata=metadata,
                                          external_location=external_location), encoding="utf-8")
    (out / "apply.sql").write_text(apply_text(layout, columns, notes, bak), encoding="utf-8")
    (out / "layout.json").write_text(layout.dumps() + "\n", encoding="utf-8")
    (out / "report.md").write_text(report_text(layout, advice, new_table=new_table_name(layout.table).sql(DIALECT),
                                               backup=bak.sql(dialect=DIALECT), notes=notes,
                                               replaced=metadata.replaced_partitioning(layout) if metadata else ()),
                                   encoding="utf-8")
    return out

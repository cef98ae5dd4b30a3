"""The statements of a partial re-layout (``planner.advice.relayout_plan``), as sqlglot expressions.

    CREATE TABLE t__planner_relayout (…) PARTITIONED BY (planner_pid) STORED AS PARQUET
      LOCATION '<t's folder>/_planner_relayout_<generation>'          -- external: drop keeps files
    INSERT OVERWRITE TABLE t__planner_relayout PARTITION (planner_pid)
      SELECT <columns>, CASE WHEN <piece 1> THEN <new id 1> … ELSE 0 END AS planner_pid
      FROM t WHERE planner_pid IN (<re-cut ids>)
      DISTRIBUTE BY planner_pid SORT BY planner_pid, <order>
    ALTER TABLE t ADD PARTITION (planner_pid = <new id>) LOCATION '<staged folder>' …
    ALTER TABLE t DROP PARTITION (planner_pid = <re-cut id>) …

Only the re-cut partitions' rows are read and written. ``hive_integration.apply.relayout`` runs the same
statements but makes the ADD and the DROP one atomic metastore call (a batch of partition
location changes), so no query ever sees a row twice or not at all; the script printed for a DBA
(``--print-sql``) has the plain ADD/DROP, to be run while nothing reads the table.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Mapping, Sequence

from sqlglot import exp

from planner.advice.relayout_plan import RelayoutPlan
from planner.emit.apply_sql import var_set, dynamic_partition_settings, insert_select
from planner.emit.conditions import column_ref
from planner.emit.ddl import create_table, table_expr
from planner.model.layout import Layout

STAGING_SUFFIX = "__planner_relayout"


def pieces_layout(plan: RelayoutPlan) -> Layout:
    """The new layout restricted to the pieces: what the staging table's CASE assigns rows to."""
    new = set(plan.new_ids)
    return replace(plan.layout, partitions=tuple(p for p in plan.layout.partitions if p.id in new))


def _spec(column: str, pid: int) -> exp.Expression:
    return exp.EQ(this=exp.column(exp.to_identifier(column, quoted=True)), expression=exp.Literal.number(pid))


def staging_create(plan: RelayoutPlan, columns: Mapping[str, str], staging: str | exp.Table, location: str | None,
                   *, file_format: str = "PARQUET", dialect: str = "hive") -> exp.Create:
    create = create_table(plan.layout, columns, staging, file_format=file_format, dialect=dialect)
    if location is not None:
        create.args["properties"].append("expressions", exp.LocationProperty(this=exp.Literal.string(location)))
    return create


def recut_insert(plan: RelayoutPlan, columns: Mapping[str, str], source: str | exp.Table,
                 staging: str | exp.Table, *, dialect: str = "hive") -> exp.Insert:
    """``INSERT OVERWRITE staging PARTITION (pid) SELECT … FROM source WHERE pid IN (re-cut ids)``."""
    layout = pieces_layout(plan)
    insert = insert_select(layout, columns, source, staging, overwrite=True, dialect=dialect, files=1)
    # The filter goes on the SELECT that reads the source (the emitted write may wrap it in a
    # subquery computing sort keys, whose outer ``planner_pid`` is already the *new* id).
    src = table_expr(source, dialect)
    reader, read = next((sel, t) for sel in insert.find_all(exp.Select) for t in _read_tables(sel)
                        if t.name == src.name and t.db == src.db)
    # qualified (by its alias where it has one: a sideways cut's joins): the same SELECT names its
    # new id ``planner_pid`` too
    pcol = exp.column(exp.to_identifier(layout.partition_column, quoted=True),
                      table=exp.to_identifier(read.alias or src.name, quoted=True))
    reader.where(exp.In(this=pcol, expressions=[exp.Literal.number(i) for i in plan.chosen]), copy=False)
    return insert


def _read_tables(select: exp.Select) -> list[exp.Table]:
    """The tables ``select``'s own FROM names (not those of nested subqueries)."""
    source = select.args.get("from_")
    return [source.this] if source is not None and isinstance(source.this, exp.Table) else []


def add_partitions(table: str | exp.Table, column: str, locations: Mapping[int, str], *,
                   dialect: str = "hive") -> list[exp.Alter]:
    """One ``ALTER TABLE … ADD IF NOT EXISTS PARTITION (…) LOCATION …`` per partition (sqlglot
    would join several with commas, which neither Hive nor Spark reads)."""
    return [exp.Alter(this=table_expr(table, dialect), kind="TABLE",
                      actions=[exp.AddPartition(this=exp.Partition(expressions=[_spec(column, pid)]), exists=True,
                                                location=exp.LocationProperty(this=exp.Literal.string(loc)))])
            for pid, loc in locations.items()]


def drop_partitions(table: str | exp.Table, column: str, ids: Sequence[int], *, dialect: str = "hive") -> exp.Alter:
    if not ids:  # ``ALTER TABLE t DROP IF EXISTS`` with no partition: neither Hive nor Spark reads it
        raise ValueError("no partition to drop")
    parts = [exp.Partition(expressions=[_spec(column, pid)]) for pid in ids]
    return exp.Alter(this=table_expr(table, dialect), kind="TABLE",
                     actions=[exp.DropPartition(expressions=parts, exists=True)])


def relayout_script(plan: RelayoutPlan, columns: Mapping[str, str], source: str | exp.Table,
                    staging: str | exp.Table, staged_locations: Mapping[int, str], *, dialect: str = "hive",
                    file_format: str = "PARQUET", staging_location: str | None = None) -> list[str]:
    """Every statement, for a DBA: SETs, staging table, the INSERT OVERWRITE, ADD, DROP, new layout.
    Nothing for a plan that re-cuts nothing (``relayout`` then runs nothing either: an empty re-cut
    would read ``WHERE planner_pid IN ()`` and drop no partition)."""
    from planner.emit.ddl import layout_properties

    if not plan.chosen:
        return []
    stmts: list[exp.Expression] = list(dynamic_partition_settings(plan.layout, dialect))
    stmts.append(staging_create(plan, columns, staging, staging_location, file_format=file_format, dialect=dialect))
    stmts.append(recut_insert(plan, columns, source, staging, dialect=dialect))
    if staged_locations:
        stmts.extend(add_partitions(source, plan.layout.partition_column, staged_locations, dialect=dialect))
    else:  # a DBA's script: copy the staged pieces in; dynamic overwrite touches only their partitions
        stmts.append(var_set("spark.sql.sources.partitionOverwriteMode", "dynamic"))
        cols = [column_ref(c) for c in columns] + [column_ref(plan.layout.partition_column)]
        stmts.append(exp.Insert(this=table_expr(source, dialect), overwrite=True,
                                partition=exp.Partition(expressions=[
                                    exp.to_identifier(plan.layout.partition_column, quoted=True)]),
                                expression=exp.select(*cols).from_(table_expr(staging, dialect))))
    stmts.append(drop_partitions(source, plan.layout.partition_column, plan.chosen, dialect=dialect))
    pairs = [exp.Property(this=exp.Literal.string(k), value=exp.Literal.string(v))
             for k, v in layout_properties(plan.layout).items()]
    stmts.append(exp.Alter(this=table_expr(source, dialect), kind="TABLE",
                           actions=[exp.AlterSet(expressions=[exp.Properties(expressions=pairs)])]))
    if not staged_locations:
        stmts.append(exp.Drop(tables=[table_expr(staging, dialect)], kind="TABLE", exists=True))
    return [s.sql(dialect=dialect) for s in stmts]

"""The statements that build an aggregate index (``planner.model.aggregate_index``) beside a table.

    CREATE TABLE IF NOT EXISTS db.t__cells (planner_pid BIGINT, planner_b0 INT, …, planner_g0 STRING,
        planner_n BIGINT, planner_e0_sum DECIMAL(38,4), planner_e0_count BIGINT, planner_e0_min …, …)
      PARTITIONED BY (planner_stamp STRING, planner_part STRING) STORED AS PARQUET
    INSERT OVERWRITE TABLE db.t__cells PARTITION (planner_stamp = 'S', planner_part = 'cells')
      SELECT planner_pid, <bucket of l_shipdate>, …, l_returnflag, COUNT(*), SUM(e), COUNT(e), MIN(e), MAX(e), …
      FROM db.t GROUP BY planner_pid, <buckets>, l_returnflag
      SORT BY planner_pid, <buckets>, l_returnflag      -- only when there may be many cells
    INSERT OVERWRITE TABLE db.t__cells PARTITION (planner_stamp = 'S', planner_part = 'head') SELECT -1, NULL, …
    CREATE OR REPLACE VIEW db.t__cells_S TBLPROPERTIES ('planner.cells.fallback' = '<hex of the cells query>')
      AS SELECT planner_pid, … FROM db.t__cells WHERE planner_stamp = 'S' AND planner_part = 'cells'

One pass over the columns the index needs; when the cells may fill many pages
(``planner.model.aggregate_index.sorts_cells``), files of cells each sorted by the cell key, so a
query's interior box reads few of their pages (``SORT BY``: an ``ORDER BY`` samples its input to
range-partition it, and that sample runs the whole aggregation once more). The bucket of a value
is a balanced search over the boundaries (``CASE WHEN v < b_mid THEN (…) ELSE (…) END``, log2 of the boundaries deep)
with literals of the column's own type, the same comparisons the rewrite's predicates make
(``planner.rewrite.aggregate_rewrite``), so a row is in bucket ``k`` on both sides or on neither.
The head row is written last: the cells are valid once it exists.

The view is what SQL saved for later (``planner rewrite``) reads the build's cells through. Before
the planner writes to the table, or drops the build, it replaces the view by the query that
computes the cells from the table (``redirected_view``, kept hex-encoded in the view's
properties, so no quote or backslash of a bound needs escaping): one metastore update, after
which saved SQL computes, from the rows as they are, the very cells it used to read (the same
bucket searches, the same types). A query that runs at once checks the head row instead and
reads the cells table itself.
"""
from __future__ import annotations

from typing import Sequence

from sqlglot import exp

from planner.emit.conditions import column_ref, literal
from planner.emit.ddl import table_expr
from planner.model.aggregate_index import (
    CELLS,
    HEAD,
    PART_COLUMN,
    ROWS_COLUMN,
    STAMP_COLUMN,
    AggregateIndex,
    GridDim,
    bucket_column,
    cells_view,
    expr_columns,
    group_column,
)
from planner.semantics.types import parse_type
from planner.workload.aggregates import result_type

FALLBACK_PROPERTY = "planner.cells.fallback"  # a build's view: hex of the query computing its cells
MAX_BOUNDS = 255  # boundaries per dimension: the bucket CASE stays small enough to be compiled


def _type(t: str) -> exp.DataType:
    return exp.DataType.build(str(parse_type(t)), dialect="spark")


def cells_columns(index: AggregateIndex) -> dict[str, str]:
    """Column -> Spark type of the cells table (its partition columns left out), in order."""
    cols = {"planner_pid": "bigint"}
    cols |= {bucket_column(i): "int" for i in range(len(index.dims))}
    cols |= {group_column(i): str(parse_type(t)) for i, (_, t) in enumerate(index.groups)}
    cols[ROWS_COLUMN] = "bigint"
    for i, e in enumerate(index.exprs):
        t = parse_type(e.type)
        for part, name in expr_columns(i, e.numeric).items():
            cols[name] = {"sum": str(result_type("sum", t)) if e.numeric else "", "count": "bigint",
                          "min": str(t), "max": str(t)}[part]
    return cols


def create_cells(index: AggregateIndex, cells: str, table: str, dialect: str = "spark") -> exp.Create:
    defs = [exp.ColumnDef(this=exp.to_identifier(c, quoted=True), kind=_type(t))
            for c, t in cells_columns(index).items()]
    parts = exp.Schema(expressions=[
        exp.ColumnDef(this=exp.to_identifier(STAMP_COLUMN, quoted=True), kind=exp.DataType.build("STRING")),
        exp.ColumnDef(this=exp.to_identifier(PART_COLUMN, quoted=True), kind=exp.DataType.build("STRING"))])
    props = [exp.PartitionedByProperty(this=parts), exp.FileFormatProperty(this=exp.Var(this="PARQUET"), hive_format=True),
             exp.Property(this=exp.Literal.string("planner.cells.of"), value=exp.Literal.string(table)),
             exp.Property(this=exp.Literal.string("planner.cells.digest"), value=exp.Literal.string(index.digest))]
    return exp.Create(this=exp.Schema(this=table_expr(cells, dialect), expressions=defs), kind="TABLE", exists=True,
                      properties=exp.Properties(expressions=props))


def bucket_expr(dim: GridDim, column: exp.Expression | None = None) -> exp.Expression:
    """The bucket number of the row's value (NULL for NULL): boundaries <= value, by a balanced search."""
    col = column if column is not None else column_ref(dim.column)
    bounds = list(dim.bounds)

    def search(lo: int, hi: int) -> exp.Expression:
        # values in [bounds[lo - 1], bounds[hi]) : buckets lo .. hi
        if lo == hi:
            return exp.Literal.number(lo)
        mid = (lo + hi + 1) // 2  # bucket mid starts at bounds[mid - 1]
        return exp.Case(ifs=[exp.If(this=exp.LT(this=col.copy(), expression=literal(bounds[mid - 1])),
                                    true=search(lo, mid - 1))], default=search(mid, hi))

    tree = search(0, len(bounds))
    return exp.Case(ifs=[exp.If(this=exp.Is(this=col.copy(), expression=exp.Null()),
                                true=exp.Cast(this=exp.Null(), to=exp.DataType.build("INT")))],
                    default=exp.Cast(this=tree, to=exp.DataType.build("INT")) if isinstance(tree, exp.Literal) else tree)


def _partition(stamp: str, part: str) -> exp.Partition:
    return exp.Partition(expressions=[
        exp.EQ(this=exp.column(exp.to_identifier(STAMP_COLUMN, quoted=True)), expression=exp.Literal.string(stamp)),
        exp.EQ(this=exp.column(exp.to_identifier(PART_COLUMN, quoted=True)), expression=exp.Literal.string(part))])


def cells_select(index: AggregateIndex, table: str, partition_column: str = "planner_pid",
                 dialect: str = "spark", sort: bool = True) -> exp.Select:
    """The aggregation that computes every cell (the INSERT's query; its schema is checked first),
    ``SORT BY`` the cell key when ``sort``.

    A dimension whose values are few (``GridDim.staged``: a bucket per value, or range buckets over
    a column with few values against the rows, such as a date) is grouped by the value itself, and
    the groups are bucketed and merged by an outer aggregation: the bucket search then runs once
    per group, not once per row (a search over a hundred boundaries, evaluated on every row, costs
    more than the rest of the aggregation). The outer sums are cast back to the cells' types; under
    ANSI a total that does not fit raises there as it would have in one aggregation."""
    names = list(cells_columns(index))
    key_names = names[:1 + len(index.dims) + len(index.groups)]
    staged = any(d.staged for d in index.dims)
    inner_keys: list[tuple[exp.Expression, str]] = [(column_ref(partition_column), names[0])]
    for i, d in enumerate(index.dims):
        inner_keys.append((column_ref(d.column), _value_column(i)) if d.staged else
                          (bucket_expr(d), bucket_column(i)))
    inner_keys += [(column_ref(c), group_column(i)) for i, (c, _) in enumerate(index.groups)]
    import sqlglot

    fns = {"sum": exp.Sum, "count": exp.Count, "min": exp.Min, "max": exp.Max}
    aggregates: list[tuple[exp.Expression, str]] = [(exp.Count(this=exp.Star()), ROWS_COLUMN)]
    for i, e in enumerate(index.exprs):
        arg = sqlglot.parse_one(e.sql, read="spark")
        aggregates += [(fns[part](this=arg.copy()), name) for part, name in expr_columns(i, e.numeric).items()]
    q = exp.select(*[exp.alias_(k.copy(), n, quoted=True) for k, n in inner_keys + aggregates])
    q = q.from_(table_expr(table, dialect)).group_by(*[k.copy() for k, _ in inner_keys])
    if staged:
        q = _merged(index, q, aggregates)
    return q.sort_by(*[column_ref(n) for n in key_names]) if sort else q


def _value_column(i: int) -> str:
    return f"planner_v{i}"


def _merged(index: AggregateIndex, inner: exp.Select, aggregates: list[tuple[exp.Expression, str]]) -> exp.Select:
    """The outer aggregation of a staged build: buckets of the grouped values, partials merged."""
    types = cells_columns(index)
    keys: list[tuple[exp.Expression, str]] = [(column_ref("planner_pid"), "planner_pid")]
    for i, d in enumerate(index.dims):
        keys.append((bucket_expr(d, column_ref(_value_column(i))), bucket_column(i)) if d.staged else
                    (column_ref(bucket_column(i)), bucket_column(i)))
    keys += [(column_ref(group_column(i)), group_column(i)) for i in range(len(index.groups))]
    merged: list[exp.Expression] = []
    for e, name in aggregates:
        part = column_ref(name)
        if isinstance(e, (exp.Min, exp.Max)):
            merged.append(exp.alias_(type(e)(this=part), name, quoted=True))
        else:  # counts and sums add up; a sum's type is the cells column's, as in one aggregation
            merged.append(exp.alias_(exp.Cast(this=exp.Sum(this=part), to=_type(types[name])), name, quoted=True))
    cells = exp.Subquery(this=inner, alias=exp.TableAlias(this=exp.to_identifier("planner_cells")))
    return exp.select(*[exp.alias_(k, n, quoted=True) for k, n in keys], *merged).from_(cells).group_by(
        *[k.copy() for k, _ in keys])


def build_statements(index: AggregateIndex, table: str, cells: str, stamp: str, partition_column: str = "planner_pid",
                     dialect: str = "spark", sort: bool = True) -> list[str]:
    """CREATE (if missing), the cells (sorted when ``sort``), then the head row: the statements of one build."""
    return [create_cells(index, cells, table, dialect).sql(dialect=dialect),
            insert_into(cells, stamp, CELLS, cells_select(index, table, partition_column, dialect, sort), dialect),
            insert_into(cells, stamp, HEAD, head_select(index), dialect)]


def cells_view_statement(index: AggregateIndex, table: str, cells: str, stamp: str,
                          partition_column: str = "planner_pid") -> str:
    """``CREATE OR REPLACE VIEW`` of build ``stamp``: its cells as stored, and (in a property) the
    query computing them from ``table`` (Spark SQL: the view is for the Spark SQL texts the
    rewrite saves)."""
    reading = exp.select(*[column_ref(c) for c in cells_columns(index)]).from_(table_expr(cells, "spark")).where(
        exp.and_(exp.EQ(this=column_ref(STAMP_COLUMN), expression=exp.Literal.string(stamp)),
                 exp.EQ(this=column_ref(PART_COLUMN), expression=exp.Literal.string(CELLS))))
    computing = cells_select(index, table, partition_column, "spark", sort=False)  # a view's rows have no order
    return _view(cells_view(cells, stamp), reading, computing.sql(dialect="spark").encode("utf-8").hex())


def redirected_view(view: str, fallback: str) -> str:
    """The view ``view`` replaced by the query its property ``fallback`` (hex) holds: from now on it
    computes the cells from the table."""
    import sqlglot

    query = sqlglot.parse_one(bytes.fromhex(fallback).decode("utf-8"), read="spark")
    return _view(view, query, fallback)


def _view(view: str, query: exp.Expression, fallback: str) -> str:
    props = exp.Properties(expressions=[exp.Property(this=exp.Literal.string(FALLBACK_PROPERTY),
                                                     value=exp.Literal.string(fallback))])
    return exp.Create(this=table_expr(view, "spark"), kind="VIEW", replace=True, expression=query,
                      properties=props).sql(dialect="spark")


def insert_into(cells: str, stamp: str, part: str, query: exp.Expression, dialect: str = "spark") -> str:
    """``INSERT OVERWRITE TABLE cells PARTITION (planner_stamp = stamp, planner_part = part) <query>``."""
    target = table_expr(cells, dialect)
    target.set("partition", _partition(stamp, part))
    return exp.Insert(this=target, expression=query, overwrite=True).sql(dialect=dialect)


def head_select(index: AggregateIndex) -> exp.Select:
    cols = cells_columns(index)
    items = []
    for name, t in cols.items():
        value: exp.Expression = exp.Literal.number(-1) if name == "planner_pid" else \
            exp.Literal.number(0) if name == ROWS_COLUMN else exp.Null()
        items.append(exp.alias_(exp.Cast(this=value, to=_type(t)), name, quoted=True))
    return exp.select(*items)


def head_count(cells: str, stamp: str, dialect: str = "spark") -> exp.Select:
    """``SELECT COUNT(*)`` of build ``stamp``'s head row in ``cells``: 1 while that build is valid."""
    return exp.select(exp.Count(this=exp.Star())).from_(table_expr(cells, dialect)).where(exp.and_(
        exp.EQ(this=column_ref(STAMP_COLUMN), expression=exp.Literal.string(stamp)),
        exp.EQ(this=column_ref(PART_COLUMN), expression=exp.Literal.string(HEAD))))


def drop_stamps(cells: str, stamps: Sequence[str], dialect: str = "spark") -> list[str]:
    """Statements dropping the builds ``stamps`` (head first: a query that still sees the cells then
    sees no head and scans instead of counting them)."""
    return [drop_partition(cells, {STAMP_COLUMN: s, PART_COLUMN: part}, dialect) for part in (HEAD, CELLS) for s in stamps]


def drop_partition(table: str, spec: dict[str, str], dialect: str = "spark") -> str:
    """``ALTER TABLE table DROP IF EXISTS PARTITION (k = 'v', …)``: every partition matching ``spec``."""
    part = exp.Partition(expressions=[exp.EQ(this=column_ref(k),
                                             expression=exp.Literal.string(v)) for k, v in spec.items()])
    return exp.Alter(this=table_expr(table, dialect), kind="TABLE",
                     actions=[exp.DropPartition(expressions=[part], exists=True)]).sql(dialect=dialect)


__all__ = ["build_statements", "insert_into", "cells_columns", "cells_select", "create_cells", "bucket_expr", "head_select",
           "head_count", "drop_stamps", "drop_partition", "cells_view_statement", "redirected_view", "FALLBACK_PROPERTY",
           "MAX_BOUNDS"]

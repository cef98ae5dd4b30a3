"""The statements that rewrite a table into its layout, and append batches to it later.

    SET hive.exec.dynamic.partition=true; SET …mode=nonstrict; SET …max.dynamic.partitions…
    INSERT OVERWRITE TABLE new PARTITION (planner_pid)
      SELECT <columns>, CASE WHEN <region 1> THEN 1 WHEN … ELSE 0 END AS planner_pid FROM source
      DISTRIBUTE BY planner_pid[, <salt>] SORT BY planner_pid, <order>
    ALTER TABLE source RENAME TO source__before_<ts>; ALTER TABLE new RENAME TO source

Every row lands in exactly one partition: CASE takes the first WHEN that is TRUE, the regions are
disjoint, and ``ELSE 0`` (the catch-all, always read by the rewriter) takes anything left.

``SORT BY`` starts with the partition column on purpose: Spark's dynamic-partition writer needs
its input sorted by the partition column and adds its own sort when the plan's order does not
start with it, which would throw away the z-order.

Z-order: ``planner.costmodel.ordering.zorder_keys`` buckets column j by ``bisect_right(bounds, v)``
(NULL: bucket 0) and moves bit ``b`` of the bucket to position ``b*k + j``. Instead of shifting
bits in SQL, each column's CASE maps a value straight to its *spread* bucket (the bucket's bits
already at their interleaved positions); the spreads of different columns share no bit, so their
sum is the z-value, bit for bit the same as the cost model's, on any engine.
"""
from __future__ import annotations

import datetime as dt
from typing import Mapping, Sequence

from sqlglot import exp

from planner.costmodel.ordering import Z_BUCKET_BITS
from planner.emit.conditions import attribute_expr, column_ref, literal, region_predicate
from planner.emit.ddl import table_expr
from planner.errors import LayoutError
from planner.layout import CATCH_ALL, Layout


def _var_set(key: str, value: str) -> exp.Set:
    return exp.Set(expressions=[exp.SetItem(this=exp.EQ(this=exp.Var(this=key), expression=exp.Var(this=value)))])


def dynamic_partition_settings(layout: Layout) -> list[exp.Set]:
    """Dynamic partitioning on, limits raised to the layout's count, and the rows per Parquet row
    group the cost model assumed (``planner.advice.write_hints``). ``parquet.block.row.count.limit``
    needs parquet-java >= 1.14 (Spark 4); older writers ignore it and cut by bytes."""
    n = len({p.id for p in layout.partitions} | {CATCH_ALL})
    out = [
        _var_set("hive.exec.dynamic.partition", "true"),
        _var_set("hive.exec.dynamic.partition.mode", "nonstrict"),
        _var_set("hive.exec.max.dynamic.partitions", str(max(n, 1000))),
        _var_set("hive.exec.max.dynamic.partitions.pernode", str(max(n, 100))),
    ]
    rows = dict(layout.meta).get("row_group_rows")
    if rows:
        out.append(_var_set("parquet.block.row.count.limit", str(int(rows))))
    page = dict(layout.meta).get("page_rows")
    if page:
        out.append(_var_set("parquet.page.row.count.limit", str(int(page))))
    return out


def files_per_partition(layout: Layout) -> dict[int, int]:
    """Files to write per partition id, from the layout's write hints (1 when not given)."""
    hinted = dict(layout.meta).get("files_per_partition") or {}
    return {int(k): int(v) for k, v in hinted.items() if int(v) > 1}


def partition_case(layout: Layout, table_alias: str | None = None) -> exp.Case:
    """``CASE WHEN <region> THEN <id> … ELSE 0 END``: the partition of a row."""
    derived = dict(layout.derived)
    case = exp.Case()
    for p in layout.partitions:
        if p.id == CATCH_ALL:
            continue
        cond = region_predicate(p.region, layout.kinds, derived, table_alias)
        if cond == exp.false():
            continue
        case = case.when(cond, exp.Literal.number(p.id), copy=False)
    return case.else_(exp.Literal.number(CATCH_ALL), copy=False)


def spread(bucket: int, j: int, k: int) -> int:
    """Bucket ``bucket`` of column ``j`` of ``k`` with its bits moved to z-order positions."""
    return sum(((bucket >> bit) & 1) << (bit * k + j) for bit in range(Z_BUCKET_BITS))


def zorder_expr(layout: Layout, table_alias: str | None = None) -> exp.Expression:
    order = layout.order
    if len(order.bounds) != len(order.columns):
        raise LayoutError("z-order needs one list of bucket bounds per column")
    k = len(order.columns)
    terms: list[exp.Expression] = []
    for j, (col, bounds) in enumerate(zip(order.columns, order.bounds)):
        if len(bounds) >= 1 << Z_BUCKET_BITS:
            raise LayoutError(f"z-order column {col} has {len(bounds)} bounds; at most {(1 << Z_BUCKET_BITS) - 1}")
        ref = attribute_expr(col, dict(layout.derived), table_alias)
        # bisect_right(bounds, v) = #{b <= v}: v < bounds[0] -> 0, bounds[i-1] <= v < bounds[i] -> i.
        case = exp.Case().when(exp.Is(this=ref.copy(), expression=exp.Null()), exp.Literal.number(0), copy=False)
        for i, b in enumerate(bounds):
            case = case.when(exp.LT(this=ref.copy(), expression=literal(b)), exp.Literal.number(spread(i, j, k)),
                             copy=False)
        terms.append(case.else_(exp.Literal.number(spread(len(bounds), j, k)), copy=False))
    out = terms[0]
    for t in terms[1:]:
        out = exp.Add(this=out, expression=t)
    return out


def _order_keys(layout: Layout) -> list[exp.Expression]:
    order = layout.order
    if order.method == "none" or not order.columns:
        return []
    if order.method == "sort":
        return [attribute_expr(c, dict(layout.derived)) for c in order.columns]
    if order.method == "zorder":
        return [zorder_expr(layout)]
    if order.method == "tree":
        from planner.emit.tree_order import tree_sort_keys
        return tree_sort_keys(layout)
    raise LayoutError(f"unknown ordering method {order.method!r}")


def _select(layout: Layout, columns: Mapping[str, str], source: str | exp.Table, dialect: str) -> exp.Select:
    pcol = layout.partition_column
    cols = [column_ref(c) for c in columns if c.lower() != pcol.lower()]
    part = exp.alias_(partition_case(layout), exp.to_identifier(pcol, quoted=True))
    return exp.select(*cols, part, copy=False).from_(table_expr(source, dialect), copy=False)


def _salt(layout: Layout, columns: Mapping[str, str], files: int | Mapping[int, int]) -> exp.Expression | None:
    """A deterministic file number inside a partition: ``pmod(hash(<all columns>), k)``."""
    def salt(k: int) -> exp.Expression:
        h = exp.Anonymous(this="hash", expressions=[column_ref(c) for c in columns if c != layout.partition_column])
        return exp.Anonymous(this="pmod", expressions=[h, exp.Literal.number(k)])

    if isinstance(files, int):
        return salt(files) if files > 1 else None
    many = {pid: k for pid, k in sorted(files.items()) if k > 1}
    if not many:
        return None
    case = exp.Case(this=exp.column(exp.to_identifier(layout.partition_column, quoted=True)))
    for pid, k in many.items():
        case = case.when(exp.Literal.number(pid), salt(k), copy=False)
    return case.else_(exp.Literal.number(0), copy=False)


def insert_select(layout: Layout, columns: Mapping[str, str], source: str | exp.Table, target: str | exp.Table,
                  *, overwrite: bool, dialect: str = "hive", files: int | Mapping[int, int] | None = None
                  ) -> exp.Insert:
    """``files``: files per partition (an int for all, or per id); default the layout's hints."""
    select = _select(layout, columns, source, dialect)
    pref = exp.column(exp.to_identifier(layout.partition_column, quoted=True))
    # nulls_first=True is Hive's default for ASC, so nothing is printed (Hive < 2.1 has no NULLS FIRST).
    dist = [pref.copy()]
    salt = _salt(layout, columns, files_per_partition(layout) if files is None else files)
    if salt is not None:
        dist.append(salt)
    select.set("distribute", exp.Distribute(expressions=dist))
    select.set("sort", exp.Sort(expressions=[exp.Ordered(this=e, nulls_first=True) for e in [pref.copy(), *_order_keys(layout)]]))
    target_expr = exp.Partition(expressions=[exp.to_identifier(layout.partition_column, quoted=True)])
    return exp.Insert(this=table_expr(target, dialect),
                      expression=select, overwrite=overwrite, partition=target_expr)


def _rename(old: exp.Table, new: exp.Table) -> exp.Alter:
    return exp.Alter(this=old, kind="TABLE", actions=[exp.AlterRename(this=new)])


def backup_name(source: str | exp.Table, when: dt.datetime | None = None, dialect: str = "hive",
                layout: Layout | None = None) -> exp.Table:
    """``<t>__before_<stamp>``: the stamp is ``when``, else the time the layout was advised (so the
    advice folder and ``planner apply`` name the same table), else now."""
    t = table_expr(source, dialect)
    advised = dict(layout.meta).get("advised_at") if layout is not None else None
    if when is None and advised:
        when = dt.datetime.strptime(str(advised), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.timezone.utc)
    stamp = (when or dt.datetime.now(dt.timezone.utc)).strftime("%Y%m%d%H%M%S")
    t.set("this", exp.to_identifier(f"{t.name}__before_{stamp}", quoted=True))
    return t


def apply_statements(layout: Layout, columns: Mapping[str, str], source: str | exp.Table, new_table: str | exp.Table,
                     *, dialect: str = "hive", files: int | Mapping[int, int] | None = None,
                     backup: str | exp.Table | None = None, rename: bool = True) -> list[str]:
    """SETs, the INSERT OVERWRITE into ``new_table`` (created by ``ddl.create_table_sql``), renames."""
    stmts: list[exp.Expression] = list(dynamic_partition_settings(layout))
    stmts.append(insert_select(layout, columns, source, new_table, overwrite=True, dialect=dialect, files=files))
    if rename:
        old = table_expr(source, dialect)
        bak = table_expr(backup, dialect) if backup is not None else backup_name(source, dialect=dialect)
        stmts.append(_rename(old.copy(), bak))
        stmts.append(_rename(table_expr(new_table, dialect), old))
    return [s.sql(dialect=dialect) for s in stmts]


def append_statements(layout: Layout, columns: Mapping[str, str], batch_source: str | exp.Table,
                      target: str | exp.Table, *, dialect: str = "hive",
                      files: int | Mapping[int, int] | None = None) -> list[str]:
    """``INSERT INTO target PARTITION (pid) SELECT …, CASE … END FROM batch`` (with the SETs)."""
    stmts: list[exp.Expression] = list(dynamic_partition_settings(layout))
    stmts.append(insert_select(layout, columns, batch_source, target, overwrite=False, dialect=dialect, files=files))
    return [s.sql(dialect=dialect) for s in stmts]


def statements_text(statements: Sequence[str]) -> str:
    return "".join(s + ";\n" for s in statements)

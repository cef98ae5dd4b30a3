"""The statements that rewrite a table into its layout, and append batches to it later.

    SET hive.exec.dynamic.partition=true; SET …mode=nonstrict; SET …max.dynamic.partitions…
    INSERT OVERWRITE TABLE new PARTITION (planner_pid)
      SELECT <columns>, CASE WHEN <region 1> THEN 1 WHEN … ELSE 0 END AS planner_pid FROM source
      [DISTRIBUTE BY planner_pid[, <salt>] | /*+ REBALANCE(planner_pid) */] [SORT BY planner_pid, <order>]
    ALTER TABLE source RENAME TO source__before_<ts>; ALTER TABLE new RENAME TO source

Every row lands in exactly one partition: CASE takes the first WHEN that is TRUE, the regions are
disjoint, and ``ELSE 0`` (the catch-all, always read by the rewriter) takes anything left. With
many partitions the CASE is a decision tree (``planner.emit.partition_sql``).

One pass over the source, and no work the layout does not need (``planner.model.write_plan``):
a layout with one partition is a static ``PARTITION (planner_pid = 1)`` insert; few partitions are
written where the rows are read (no shuffle); many are shuffled by partition (Spark's
``REBALANCE`` hint, Hive's ``DISTRIBUTE BY``; an ordered layout ``DISTRIBUTE BY`` on Spark too, so
each file is one sorted run). An unordered layout has no ``SORT BY``.

``SORT BY`` starts with the partition column on purpose: Spark's dynamic-partition writer needs
its input sorted by the partition column and adds its own sort when the plan's order does not
start with it, which would throw away the order.

Z-order, Hilbert order (``planner.emit.curve_sql``) and tree order (the leaf number,
``planner.emit.tree_order_sql``): the value is computed once per row in a subquery and the rows
are sorted by that column, so the sort compares integers; a sort key that is an expression is
evaluated again at every comparison (n log n times). The statement becomes

    INSERT OVERWRITE TABLE new PARTITION (planner_pid) SELECT <columns>, planner_pid FROM (
      SELECT <columns>, CASE … END AS planner_pid, <z-value> AS planner_z FROM source
      SORT BY planner_pid, planner_z) AS planner_rows

(Hilbert: one more subquery turns ``planner_z`` into ``planner_order``; a tree: ``planner_order``
is the leaf number, followed in the sort by the leaves' tie columns.) Hive wants the sort keys
among the select's outputs, hence the sort inside the subquery and the outer projection.

A tree order on Spark is sorted by one BIGINT, the partition's rank, the leaf and its tie column
folded together (``planner.emit.tree_order_sql.packed_tree_key``; the partition id by its lateral
alias, so its CASE runs once), and *not* by the partition column first: sorting by
``planner_pid, planner_order, <tie>`` compares whole rows (Spark's sort prefix is the first key
only, and one partition holds many leaves), while one 64-bit key is a radix sort. Spark's writer
does not know that the key orders the partitions, so ``TREE_SETTINGS`` turn off its planned write
(which would sort by the partition again and drop our sort as redundant) and let each task keep
one open file per partition (``spark.sql.maxConcurrentOutputFileWriters``, set to the layout's
partition count so it never falls back to a sort of its own). Each file receives its rows in the
key's order. The emitted key, the same without the partition's rank, and ``SORT BY planner_pid,
…`` built side by side against a copy: ``benchmarks/results/tree_key_sf1.md``.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import replace
from typing import Mapping, Sequence

from sqlglot import exp

from planner.emit.conditions import attribute_expr, column_ref
from planner.emit.curve_sql import check_curve, curve_table, hilbert_value, zorder_value
from planner.emit.ddl import table_expr
from planner.emit.join_sql import SOURCE_ALIAS, chained, join_chain, qualified_column
from planner.emit.partition_sql import partition_case
from planner.emit.tree_order_sql import packed_tree_key, tree_sort_keys
from planner.errors import LayoutError
from planner.model.layout import CATCH_ALL, PARTITION_COLUMN_TYPE, Layout, Partition
from planner.model.write_plan import WritePlan, write_plan

Z_COLUMN, CURVE_COLUMN, ORDER_COLUMN = "planner_z", "planner_curve", "planner_order"


def var_set(key: str, value: str) -> exp.Set:
    return exp.Set(expressions=[exp.SetItem(this=exp.EQ(this=exp.Var(this=key), expression=exp.Var(this=value)))])


#: Spark: a whole-stage-generated Java method above 8,000 bytes of bytecode is never JIT-compiled
#: by HotSpot (``-XX:HugeMethodLimit``) and runs interpreted. A layout's CASEs easily get there
#: (the partition CASE of a few dozen month ranges, the z-value of four columns), and interpreted
#: they cost many times the CPU of compiled code. At 8,000 Spark falls back to
#: per-operator code, which it splits into small methods; Spark's own docs advise the value on
#: HotSpot. The apply runner restores the session's value afterwards.
SPARK_SETTINGS = (("spark.sql.codegen.hugeMethodLimit", "8000"),)
#: Spark, a tree order: see the module's docstring (the writer count is the layout's partitions).
TREE_SETTINGS = (("spark.sql.optimizer.plannedWrite.enabled", "false"), ("spark.sql.maxConcurrentOutputFileWriters", None))


def _packed_tree(layout: Layout, dialect: str) -> bool:
    return dialect == "spark" and layout.order.method == "tree" and bool(layout.order.columns)


def dynamic_partition_settings(layout: Layout, dialect: str = "hive") -> list[exp.Set]:
    """Dynamic partitioning on, limits raised to the layout's count, and the rows per Parquet row
    group the cost model assumed (``planner.advice.ranking.write_hints``). ``parquet.block.row.count.limit``
    needs parquet-java >= 1.14 (Spark 4); older writers ignore it and cut by bytes. For Spark,
    ``SPARK_SETTINGS`` too."""
    n = len({p.id for p in layout.partitions} | {CATCH_ALL})
    out = [
        var_set("hive.exec.dynamic.partition", "true"),
        var_set("hive.exec.dynamic.partition.mode", "nonstrict"),
        var_set("hive.exec.max.dynamic.partitions", str(max(n, 1000))),
        var_set("hive.exec.max.dynamic.partitions.pernode", str(max(n, 100))),
    ]
    rows = dict(layout.meta).get("row_group_rows")
    if rows:
        out.append(var_set("parquet.block.row.count.limit", str(int(rows))))
    page = dict(layout.meta).get("page_rows")
    if page:
        out.append(var_set("parquet.page.row.count.limit", str(int(page))))
    if dialect == "spark":
        out += [var_set(k, v) for k, v in SPARK_SETTINGS]
    if _packed_tree(layout, dialect):
        out += [var_set(k, v if v is not None else str(n + 1)) for k, v in TREE_SETTINGS]
    return out


def zorder_expr(layout: Layout, table_alias: str | None = None) -> exp.Expression:
    """The layout's z-value over the source's columns (``planner.emit.curve_sql.zorder_value``)."""
    return zorder_value(layout.order, dict(layout.derived), table_alias)


def _ident(name: str) -> exp.Identifier:
    return exp.to_identifier(name, quoted=True)


def _ref(name: str) -> exp.Column:
    return exp.column(_ident(name))


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


def _ordered_rows(layout: Layout, cols: list[exp.Expression], part: list[exp.Expression], source: exp.Expression,
                  dialect: str) -> tuple[exp.Select, list[exp.Expression], bool]:
    """(the SELECT that is distributed and sorted, its sort keys after the partition column (all
    of them, for a packed tree key), whether it carries helper columns the INSERT must project
    away)."""
    order, derived = layout.order, dict(layout.derived)
    select = exp.select(*cols, *part, copy=False).from_(source, copy=False)
    if order.method == "none" or not order.columns:
        return select, [], False
    if order.method == "sort":
        return select, [attribute_expr(c, derived) for c in order.columns], False
    if order.method == "tree":
        # the leaf number once per row, like the z-value: a nested CASE of one branch per leaf
        # the partition id by its alias (a lateral alias on Spark: the partition CASE runs once)
        leaf, *ties = (packed_tree_key(layout, partition=_ref(layout.partition_column) if part else None)
                       if _packed_tree(layout, dialect) else tree_sort_keys(layout))
        select.select(exp.alias_(leaf, _ident(ORDER_COLUMN)), copy=False)
        return select, [_ref(ORDER_COLUMN), *ties], True
    if order.method not in ("zorder", "hilbert"):
        raise LayoutError(f"unknown ordering method {order.method!r}")
    check_curve(order)
    select.select(exp.alias_(zorder_value(order, derived), _ident(Z_COLUMN)), copy=False)
    if order.method == "zorder":
        return select, [_ref(Z_COLUMN)], True
    k = len(order.columns)
    select.select(exp.alias_(curve_table(k), _ident(CURVE_COLUMN)), copy=False)
    names = [c.name for c in cols] + ([layout.partition_column] if part else [])
    h = hilbert_value(_ref(Z_COLUMN), _ref(CURVE_COLUMN), k)
    outer = exp.select(*[_ref(n) for n in names], exp.alias_(h, _ident(ORDER_COLUMN)), copy=False)
    return outer.from_(select.subquery("planner_cells", copy=False), copy=False), [_ref(ORDER_COLUMN)], True


JOINED_PREFIX = "planner_join_"  # a sideways cut's joined attribute, as a column of the source's rows


def joined_source(layout: Layout, source: exp.Table, dialect: str = "hive") -> tuple[Layout, exp.Expression]:
    """A layout with sideways cuts (``Layout.joined``): the source with each joined attribute as a
    column of its own, by LEFT JOINs along its path, and the layout naming those columns::

        (SELECT t.*, j2.`n_name` AS `planner_join_1` FROM source t
           LEFT JOIN supplier j1 ON t.l_suppkey = j1.s_suppkey
           LEFT JOIN nation j2 ON j1.s_nationkey = j2.n_nationkey) AS planner_joined

    A row that joins nothing gets NULL, as the cost model's sample does. Every hop must join a
    unique key, or rows are repeated: apply checks that before it writes, and its checksum of the
    rows written against the source's catches it anyway. The joined tables are small
    (``planner.costmodel.sideways.BROADCAST_ROWS``): on Spark a ``MAPJOIN`` hint broadcasts them,
    so the fact table is not shuffled (Hive converts such joins to map joins by itself). Other
    layouts: unchanged."""
    if not layout.joined:
        return layout, source
    names = {a: f"{JOINED_PREFIX}{i}" for i, (a, _) in enumerate(layout.joined, 1)}
    aliases, joins = join_chain([c for _, c in layout.joined])
    q = exp.select(exp.Column(this=exp.Star(), table=exp.to_identifier(SOURCE_ALIAS)), copy=False)
    for a, c in layout.joined:
        q = q.select(exp.alias_(qualified_column(aliases[c.path.hops], c.column), _ident(names[a])), copy=False)
    q = chained(q, source, joins)
    if dialect == "spark":
        q.set("hint", exp.Hint(expressions=[exp.Anonymous(this="MAPJOIN", expressions=[
            exp.column(a) for hops, a in aliases.items() if hops])]))
    rows = q.subquery("planner_joined", copy=False)
    parts = tuple(Partition(p.id, tuple((names.get(k, k), v) for k, v in p.region), p.generation)
                  for p in layout.partitions)
    kinds = tuple((names.get(k, k), v) for k, v in layout.kinds)
    return replace(layout, partitions=parts, kinds=kinds, joined=()), rows


def insert_select(layout: Layout, columns: Mapping[str, str], source: str | exp.Table, target: str | exp.Table,
                  *, overwrite: bool, dialect: str = "hive", files: int | Mapping[int, int] | None = None,
                  plan: WritePlan | None = None) -> exp.Insert:
    """``files``: files per partition (an int for all, or per id; default the layout's hints);
    ``plan``: how rows move (default ``write_plan(layout)``)."""
    pcol = layout.partition_column
    if plan is None:
        plan = write_plan(layout, files=None if files is None or isinstance(files, int) else files)
    if isinstance(files, int):
        files = {p.id: files for p in layout.partitions} if files > 1 else {}
    elif files is None:
        files = plan.files
    cols = [column_ref(c) for c in columns if c.lower() != pcol.lower()]
    static = plan.static_partition
    # The CASE cast to the column's type: Spark casts an INT CASE (small ids) to the BIGINT column
    # above the SORT BY, then sorts by the cast column for its dynamic-partition writer and drops
    # our sort as redundant, so the layout's order inside the partitions was lost.
    cut, rows = joined_source(layout, table_expr(source, dialect), dialect)
    part = [] if static is not None else [
        exp.alias_(exp.cast(partition_case(cut), PARTITION_COLUMN_TYPE), _ident(pcol))]
    select, keys, helpers = _ordered_rows(layout, cols, part, rows, dialect)
    first = [] if static is not None or _packed_tree(layout, dialect) else [_ref(pcol)]
    if static is None and plan.shuffle and dialect == "spark" and not keys:
        # AQE splits a skewed partition into target-size pieces and merges small ones. Not for an
        # ordered layout: its pieces are the map tasks' outputs, one overlapping sorted run each,
        # exactly what the shuffle is there to avoid; the salt below sizes its files instead.
        select.set("hint", exp.Hint(expressions=[exp.Anonymous(this="REBALANCE", expressions=[_ref(pcol)])]))
    elif static is None and (plan.shuffle or (keys and dialect != "spark")):
        # Hive sorts in reducers only: an ordered layout is distributed by partition even when few.
        # Spark, ordered and shuffled: by partition (and salt), one sorted run per file.
        dist = [_ref(pcol)]
        salt = _salt(layout, columns, files)
        if salt is not None:
            dist.append(salt)
        select.set("distribute", exp.Distribute(expressions=dist))
    if keys:
        # nulls_first=True is Hive's default for ASC, so nothing is printed (Hive < 2.1 has no NULLS FIRST).
        select.set("sort", exp.Sort(expressions=[exp.Ordered(this=e, nulls_first=True) for e in first + keys]))
    if helpers:
        names = [c.name for c in cols] + ([pcol] if static is None else [])
        select = exp.select(*[_ref(n) for n in names], copy=False).from_(
            select.subquery("planner_rows", copy=False), copy=False)
    if static is not None:
        spec = exp.Partition(expressions=[exp.EQ(this=_ident(pcol), expression=exp.Literal.number(static))])
    else:
        spec = exp.Partition(expressions=[_ident(pcol)])
    return exp.Insert(this=table_expr(target, dialect), expression=select, overwrite=overwrite, partition=spec)


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
                     backup: str | exp.Table | None = None, rename: bool = True,
                     plan: WritePlan | None = None) -> list[str]:
    """SETs, the INSERT OVERWRITE into ``new_table`` (created by ``ddl.create_table_sql``), renames."""
    stmts: list[exp.Expression] = list(dynamic_partition_settings(layout, dialect))
    stmts.append(insert_select(layout, columns, source, new_table, overwrite=True, dialect=dialect, files=files,
                               plan=plan))
    if rename:
        old = table_expr(source, dialect)
        bak = table_expr(backup, dialect) if backup is not None else backup_name(source, dialect=dialect)
        stmts.append(_rename(old.copy(), bak))
        stmts.append(_rename(table_expr(new_table, dialect), old))
    return [s.sql(dialect=dialect) for s in stmts]


def append_statements(layout: Layout, columns: Mapping[str, str], batch_source: str | exp.Table,
                      target: str | exp.Table, *, dialect: str = "hive",
                      files: int | Mapping[int, int] | None = None, plan: WritePlan | None = None,
                      properties: Mapping[str, str] | None = None) -> list[str]:
    """``INSERT INTO target PARTITION (pid) SELECT …, CASE … END FROM batch`` (with the SETs).
    ``properties``: writer properties the target lacks (a table laid out by an older planner has
    no ``planner.emit.ddl.floating_point_properties``), set on it first."""
    stmts: list[exp.Expression] = []
    if properties:
        pairs = [exp.Property(this=exp.Literal.string(k), value=exp.Literal.string(v)) for k, v in properties.items()]
        stmts.append(exp.Alter(this=table_expr(target, dialect), kind="TABLE",
                               actions=[exp.AlterSet(expressions=[exp.Properties(expressions=pairs)])]))
    stmts += dynamic_partition_settings(layout, dialect)
    stmts.append(insert_select(layout, columns, batch_source, target, overwrite=False, dialect=dialect, files=files,
                               plan=plan))
    return [s.sql(dialect=dialect) for s in stmts]


def statements_text(statements: Sequence[str]) -> str:
    return "".join(s + ";\n" for s in statements)

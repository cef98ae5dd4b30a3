"""The aggregate index on Spark: build it, invalidate it before a write, tell a query whether it holds.

Build (after ``planner apply``, ``planner append`` and ``planner relayout``, when the layout asks
for an index, ``planner.model.aggregate_index``): one aggregation over the table writes the cells
of a new *stamp* into ``<table>__cells`` (``planner.emit.cells_sql``), with ANSI on, so an
expression that would raise on some row fails the build instead of hiding the error from a
query; then the build's figures (rows, cells, the bound on ``Σ |e|`` per expression), then its
head row, then the build's view (what SQL saved for later reads the cells through), then the state
in the table's properties (``CellsState``). The table's file snapshot is taken before and after: a
write that ran meanwhile leaves no index. Older stamps are dropped, their views first pointed at
the table (``redirect``).

Invalidate (``invalidate``, before every write the planner makes to the table): the views of the
builds still in the cells table are pointed at the table first, so SQL saved earlier computes
those cells from the rows from now on (``planner.emit.cells_sql.redirected_view``), then every
head row goes, so SQL saved before views (and ``planner.sql``) stops taking cells from the index,
then the state property. It runs on any engine (Spark or HiveServer2): plain DDL.

At query time (``index_context``) the index holds when its state names the layout's generation and
specification and the table's file snapshot is the one it was built from (as join ranges check
theirs, ``join_ranges.table_snapshot``): an ``INSERT`` that bypassed the planner changes the
snapshot, and the query scans. Without a Spark session the snapshot is read through the thrift
metastore and pyarrow (``hive_integration.metastore.file_catalog``); from layout files alone it
cannot be, and the index is not used.
"""
from __future__ import annotations

import datetime as dt
import uuid
from contextlib import contextmanager
from dataclasses import replace
from typing import Callable, ContextManager, Iterator, Protocol

from sqlglot import exp

from hive_integration.spark.catalog import CatalogEntry
from hive_integration.spark.catalog_cache import forget
from hive_integration.spark.join_ranges import table_snapshot
from hive_integration.spark.step_clock import StepClock
from planner.emit.cells_sql import (
    FALLBACK_PROPERTY,
    build_statements,
    cells_columns,
    cells_select,
    cells_view_statement,
    create_cells,
    drop_partition,
    drop_stamps,
    head_count,
    redirected_view,
)
from planner.emit.ddl import table_expr
from planner.model.aggregate_index import (
    HEAD,
    PAGE_ROWS,
    PART_COLUMN,
    PROPERTY,
    ROWS_COLUMN,
    STAMP_COLUMN,
    CellsState,
    cells_table,
    cells_view,
    expr_columns,
    sorts_cells,
)
from planner.model.layout import Layout
from planner.semantics.types import parse_type

BUILD_SETTINGS = {"spark.sql.ansi.enabled": "true", "parquet.page.row.count.limit": str(PAGE_ROWS),
                  "parquet.block.size": str(8 * 1024 * 1024)}


def _say_nothing(message: str) -> None:
    pass


def _exists(execute: Callable[[str], list], table: str) -> bool:
    t = exp.to_table(table, dialect="spark")
    db = t.db or None
    pattern = exp.Literal.string(t.name).sql("spark")
    rows = execute(f"SHOW TABLES{' IN ' + exp.to_identifier(db, quoted=True).sql('spark') if db else ''} LIKE {pattern}")
    return any(str(r[1] if len(r) >= 2 else r[0]).strip().lower() == t.name.lower() for r in rows)


def invalidate(execute: Callable[[str], list], table: str, say: Callable[[str], None] = _say_nothing) -> None:
    """Point the views of ``table``'s builds at the table, drop every head row, then the state
    property: from now on no query takes cells from the index. ``execute`` runs one statement (a
    runner's, Spark or HiveServer2)."""
    cells = cells_table(table)
    try:
        if _exists(execute, cells):
            redirect(execute, table, _stamps(execute, cells), say)
            execute(drop_partition(cells, {PART_COLUMN: HEAD}))
        key = exp.Literal.string(PROPERTY).sql("spark")
        execute(f"ALTER TABLE {table_expr(table, 'spark').sql('spark')} UNSET TBLPROPERTIES IF EXISTS ({key})")
    except Exception as e:  # noqa: BLE001 - the caller's write must not run with a head left valid
        raise RuntimeError(f"could not invalidate the aggregate index of {table}: {str(e).splitlines()[0][:300]}") from e
    forget(table)  # planner.sql's caches in this process read the entry (its state gone) again
    say(f"aggregate index of {table} invalidated (queries scan until it is built again)")


def redirect(execute: Callable[[str], list], table: str, stamps, say: Callable[[str], None] = _say_nothing) -> None:
    """Point the view of each build in ``stamps`` (those that have one) at ``table`` itself: SQL
    saved against the build then computes its cells from the rows, whatever is written next.

    Where ``table`` can no longer compute them (a table of that name made again without the
    layout, beside the cells of the old one), the view is dropped instead: SQL saved against it
    then fails, loudly, rather than read cells of rows that are gone."""
    if not stamps:
        return
    cells = cells_table(table)
    t = exp.to_table(cells, dialect="spark")
    prefix = f"{t.name}_".lower()
    db = f" IN {exp.to_identifier(t.db, quoted=True).sql('spark')}" if t.db else ""
    pattern = exp.Literal.string(f"{t.name}_*").sql("spark")
    views = {str(r[1] if len(r) >= 2 else r[0]).strip().lower() for r in execute(f"SHOW VIEWS{db} LIKE {pattern}")}
    key = exp.Literal.string(FALLBACK_PROPERTY).sql("spark")
    for stamp in sorted(stamps):
        view = cells_view(cells, stamp)
        if f"{prefix}{stamp}".lower() not in views:
            continue  # a build from before views, or one that made none
        rows = execute(f"SHOW TBLPROPERTIES {table_expr(view, 'spark').sql('spark')} ({key})")
        value = str(rows[0][1] if rows and len(rows[0]) >= 2 else rows[0][0] if rows else "").strip()
        try:
            statement = redirected_view(view, value)
        except ValueError:
            raise RuntimeError(f"the view {view} has no query to compute its cells from "
                               f"({FALLBACK_PROPERTY})") from None
        try:
            execute(statement)
        except Exception as e:  # noqa: BLE001 - the table cannot compute these cells: the view goes
            execute(exp.Drop(tables=[table_expr(view, "spark")], kind="VIEW", exists=True).sql("spark"))
            why = str(e.__cause__ or e).strip().splitlines()  # Spark's own message, not our statement
            say(f"the view {view} was dropped: {table} no longer computes its cells "
                f"({why[0][:200] if why else type(e).__name__}); SQL saved against it fails until it is rewritten")


def _run(spark, sql: str) -> list:
    return spark.sql(sql).collect()


class BuildEngine(Protocol):
    """What a build asks of the engine it runs on: Spark in this process (``SparkBuild``) or a
    HiveServer2 with the metastore beside it (``hive_integration.metastore.hiveserver2_builds``)."""

    def run(self, sql: str) -> list: ...  # one statement's rows

    def table_types(self, table: str) -> dict[str, str]: ...  # column (lower case) -> type, partition columns too

    def query_types(self, sql: str) -> dict[str, str]: ...  # a query's output column -> type, without running it

    def snapshot(self, table: str) -> str | None: ...  # ``join_ranges.table_snapshot`` of the table now

    def settings(self, values: dict[str, str]) -> ContextManager[None]: ...  # set for the build, then put back

    def size(self, table: str) -> int | None: ...  # bytes of the table's files (for the report)


class SparkBuild:
    """``BuildEngine`` on a Spark session in this process."""

    def __init__(self, spark):
        self.spark = spark

    def run(self, sql: str) -> list:
        return _run(self.spark, sql)

    def table_types(self, table: str) -> dict[str, str]:
        fields = self.spark.table(table_expr(table, "spark").sql("spark")).schema.fields
        return {f.name.lower(): f.dataType.simpleString() for f in fields}

    def query_types(self, sql: str) -> dict[str, str]:
        return {f.name.lower(): f.dataType.simpleString() for f in self.spark.sql(sql).schema.fields}

    def snapshot(self, table: str) -> str | None:
        return table_snapshot(self.spark, table)

    @contextmanager
    def settings(self, values: dict[str, str]) -> Iterator[None]:
        conf = self.spark.conf
        saved = {k: conf.get(k, None) for k in values}
        try:
            for k, v in values.items():
                conf.set(k, v)
            yield
        finally:
            for k, v in saved.items():
                if v is None:
                    conf.unset(k)
                else:
                    conf.set(k, v)

    def size(self, table: str) -> int | None:
        from hive_integration.spark.statistics_pass import table_files

        return sum(s for _, s, _ in table_files(self.spark, table))


def _stamps(execute: Callable[[str], list], cells: str) -> set[str]:
    rows = execute(f"SHOW PARTITIONS {table_expr(cells, 'spark').sql('spark')}")
    out = set()
    for r in rows:
        for part in str(r[0]).split("/"):
            k, _, v = part.partition("=")
            if k == STAMP_COLUMN:
                out.add(v)
    return out


def build(spark, layout: Layout, say: Callable[[str], None] = _say_nothing,
          steps: dict[str, float] | None = None, engine: BuildEngine | None = None) -> CellsState | None:
    """Build ``layout``'s aggregate index on the table as it is now (None: not built, said why).
    ``steps``: where the build's time goes, step by step (``StepClock``), for the benchmarks.
    ``engine``: where it runs (default: ``spark``, this process's session)."""
    clock = StepClock(steps)
    try:
        return _build(engine if engine is not None else SparkBuild(spark), layout, say, clock)
    finally:
        clock.stop()


def _build(engine: BuildEngine, layout: Layout, say: Callable[[str], None], clock: StepClock) -> CellsState | None:
    spec = layout.aggregate_index
    table = layout.table
    if spec is None:
        return None
    cells = cells_table(table)
    want = cells_columns(spec)
    sort = sorts_cells(spec, len(layout.partitions))
    clock.start("checks")
    fits = False
    if _exists(engine.run, cells):
        have = engine.table_types(cells)
        expected = {k: str(parse_type(v)) for k, v in want.items()} | {STAMP_COLUMN: "string", PART_COLUMN: "string"}
        fits = {k: str(parse_type(v)) for k, v in have.items()} == expected
        if not fits:
            say(f"{cells} holds cells of another shape: dropping it (SQL saved before names its old columns)")
            redirect(engine.run, table, _stamps(engine.run, cells), say)
            engine.run(exp.Drop(tables=[table_expr(cells, "spark")], kind="TABLE").sql("spark"))
    if not fits:
        engine.run(create_cells(spec, cells, table).sql("spark"))
    query = cells_select(spec, table, layout.partition_column, "spark", sort)
    got = engine.query_types(query.sql(dialect="spark"))
    wrong = [f"{k}: {got.get(k)} (expected {v})" for k, v in want.items() if parse_type(got.get(k, "void")) != parse_type(v)]
    if wrong:
        say(f"aggregate index of {table} not built: Spark types its cells otherwise than the planner ({'; '.join(wrong[:3])})")
        return None
    clock.start("snapshots")
    before = engine.snapshot(table)
    if before is None:
        say(f"aggregate index of {table} not built: its files cannot be listed here, so nothing could tell a query "
            "that the table is unchanged since the build")
        return None
    stamp = uuid.uuid4().hex[:16]
    stmts = build_statements(spec, table, cells, stamp, layout.partition_column, "spark", sort)
    with engine.settings(BUILD_SETTINGS):
        clock.start("cells")
        try:
            engine.run(stmts[1])
        except Exception as e:  # noqa: BLE001 - an expression that raises under ANSI: no index, said why
            say(f"aggregate index of {table} not built: {str(e).splitlines()[0][:300]}")
            _drop(engine, cells, [stamp])
            return None
        clock.start("figures")
        figures = _figures(engine, spec, cells, stamp)
        clock.start("snapshots")
        after = engine.snapshot(table)
        if before != after:
            say(f"aggregate index of {table} not built: the table changed while it was built")
            _drop(engine, cells, [stamp])
            return None
        clock.start("head")
        engine.run(stmts[2])
    rows, count, bounds = figures
    clock.start("view")
    try:
        engine.run(cells_view_statement(spec, table, cells, stamp, layout.partition_column))
        view = True
    except Exception as e:  # noqa: BLE001 - saved SQL then checks the head row in its own text
        say(f"the view of the aggregate index of {table} was not created: {str(e).splitlines()[0][:300]}")
        view = False
    clock.start("old builds dropped")
    old = _stamps(engine.run, cells) - {stamp}
    redirect(engine.run, table, old, say)
    _drop(engine, cells, sorted(old))
    clock.start("size and state")
    size = None
    try:
        size = engine.size(cells)
    except Exception:  # noqa: BLE001 - a size for the report only
        pass
    state = CellsState(stamp, after, layout.generation, spec.digest, cells, rows, count, bounds,
                       tuple(want.items()), dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), size,
                       view)
    pairs = [exp.Property(this=exp.Literal.string(k), value=exp.Literal.string(v)) for k, v in state.properties().items()]
    engine.run(exp.Alter(this=table_expr(table, "spark"), kind="TABLE",
                         actions=[exp.AlterSet(expressions=[exp.Properties(expressions=pairs)])]).sql("spark"))
    forget(table)  # planner.sql's caches in this process read the entry (its new state) again
    say(f"aggregate index of {table} built: {count:,} cells for {rows:,} rows in {cells}"
        + (f" ({size / 2**20:.1f} MiB)" if size else ""))
    return state


def _figures(engine: BuildEngine, spec, cells: str, stamp: str) -> tuple[int, int, tuple[float | None, ...]]:
    """(rows, cells, per expression a bound of Σ|e|: Σ count(e) · max(|min e|, |max e|) over the cells)."""
    def ref(name: str) -> exp.Expression:
        return exp.column(exp.to_identifier(name, quoted=True))

    def double(e: exp.Expression) -> exp.Expression:
        return exp.Cast(this=e, to=exp.DataType.build("DOUBLE"))

    items = [exp.Sum(this=ref(ROWS_COLUMN)), exp.Count(this=exp.Star())]
    for i, e in enumerate(spec.exprs):
        cols = expr_columns(i, e.numeric)
        if not e.numeric:
            continue
        biggest = exp.Greatest(this=exp.Abs(this=double(ref(cols["min"]))),
                               expressions=[exp.Abs(this=double(ref(cols["max"])))])
        items.append(exp.Sum(this=exp.Mul(this=double(ref(cols["count"])), expression=biggest)))
    q = exp.select(*items).from_(table_expr(cells, "spark")).where(exp.and_(
        exp.EQ(this=ref(STAMP_COLUMN), expression=exp.Literal.string(stamp)),
        exp.EQ(this=ref(PART_COLUMN), expression=exp.Literal.string("cells"))))
    row = engine.run(q.sql(dialect="spark"))[0]
    bounds, k = [], 2
    for e in spec.exprs:
        if e.numeric:
            v = row[k]
            bounds.append(0.0 if v is None else float(v) * (1 + 1e-9))
            k += 1
        else:
            bounds.append(None)
    return int(row[0] or 0), int(row[1] or 0), tuple(bounds)


def _drop(engine: BuildEngine, cells: str, stamps) -> None:
    for s in drop_stamps(cells, list(stamps), "spark"):
        engine.run(s)


def after_write(runner, layout: Layout, say: Callable[[str], None]) -> CellsState | None:
    """Build ``layout``'s index once a write is done (apply, append, relayout): with the runner's
    Spark session, or through its HiveServer2 when it knows the metastore (``build_engine``); else
    it stays invalid, said so. A failure never fails the write."""
    if layout.aggregate_index is None:
        return None
    spark = getattr(runner, "spark", None)
    engine = getattr(runner, "build_engine", lambda: None)() if spark is None else SparkBuild(spark)
    if engine is None:
        say("aggregate index not built: through HiveServer2 it needs the metastore to list the table's files (name it "
            "with --metastore or hive.metastore.uris); queries scan meanwhile")
        return None
    try:
        return build(spark, layout, say, engine=engine)
    except Exception as e:  # noqa: BLE001 - the data is in place; the index is an extra
        say(f"aggregate index not built: {str(e).splitlines()[0][:300]}")
        return None


def head_present(spark, state: CellsState) -> bool:
    """Whether the cells table holds the head row of ``state``'s build (the index is valid)."""
    try:
        return bool(_run(spark, head_count(state.cells_table, state.stamp).sql(dialect="spark"))[0][0])
    except Exception:  # noqa: BLE001 - no cells table, no head: the index is not used
        return False


def checked_now(spark, ctx, cells_snapshot: str | None, remember: Callable[[tuple, Callable[[], bool]], bool]):
    """``ctx`` (an ``IndexContext`` whose build matches the table now) for a query that runs at once:
    ``checked`` once the build's head row is in the cells table whose files are ``cells_snapshot``
    (listed for this query); the head is read again whenever they change (``remember``: a cache
    keyed by what it is given). A head that is gone makes the index unusable, said why."""
    if ctx.why_not or ctx.state is None:
        return ctx
    state = ctx.state
    if cells_snapshot is None:
        return replace(ctx, why_not=f"the index's cells table {state.cells_table} cannot be read; the query scans")
    if remember(("head", state.cells_table.lower(), state.stamp, cells_snapshot), lambda: head_present(spark, state)):
        return replace(ctx, checked=True)
    return replace(ctx, why_not="the index's head row is gone (a write through the planner invalidated it); "
                                "the query scans")


def index_context(spark, table: str, layout: Layout, properties, entry: CatalogEntry | None = None, now=...):
    """``IndexContext`` of ``table``'s index for one query (``planner.rewrite.aggregate_rewrite``):
    usable only when its build matches the layout and the table's files now. ``now``: the table's
    snapshot as the caller's catalog cache just checked it (``SparkCatalogLayouts.snapshots``), else
    read here."""
    from planner.rewrite.aggregate_rewrite import IndexContext

    spec = layout.aggregate_index
    if spec is None:
        return None
    state = CellsState.from_properties(properties or {})
    if spark is None and now is ...:
        return IndexContext(spec, state, "cannot check that the table is unchanged since the index was built "
                                         "(no Spark session, and no listing of its files was given)")
    if state is None:
        return IndexContext(spec, None, "the index is not built (or was invalidated by a write through the planner)")
    if state.digest != spec.digest:
        return IndexContext(spec, state, "the index was built for another specification; apply again")
    if state.generation != layout.generation:
        return IndexContext(spec, state, f"the index was built for another layout (generation {state.generation})")
    if now is ...:
        now = table_snapshot(spark, table, entry)
    if now is None:
        return IndexContext(spec, state, "the table's files cannot be listed here, so nothing proves it unchanged "
                                         "since the index was built; the query scans")
    if now != state.snapshot:
        return IndexContext(spec, state, "the table changed since the index was built (an append or a write that "
                                         "bypassed the planner); the query scans")
    return IndexContext(spec, state)


__all__ = ["build", "invalidate", "redirect", "after_write", "index_context", "checked_now", "head_present",
           "BUILD_SETTINGS"]

"""Answer an aggregate query from the aggregate index: interior cells from the index, the rest scanned.

    SELECT sum(l_extendedprice * l_discount) AS revenue FROM tpch.lineitem
    WHERE l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01' AND l_discount BETWEEN 0.05 AND 0.07

becomes, as ``planner.sql`` runs it at once (one partition group shown; ``S`` is the stamp of
the index build the edge checked just now: the table's files as the build left them, the build's
head row in the cells table)

    SELECT CAST(SUM(planner_e0_sum) AS DECIMAL(38,4)) AS revenue FROM (
      SELECT COUNT(*) AS planner_n, SUM(e) AS planner_e0_sum FROM tpch.lineitem AS lineitem
        WHERE (planner_pid IN (0, <partitions without interior cells>) OR NOT planner_pid BETWEEN …) AND P
      UNION ALL                                                            -- boundary cells, scanned
      SELECT … FROM tpch.lineitem AS lineitem WHERE planner_pid IN (<group>) AND P
        AND (l_shipdate >= DATE '1993-12-27' AND l_shipdate < DATE '1994-01-03' OR …)
      UNION ALL                                                            -- interior cells, from the index
      SELECT planner_n, planner_e0_sum FROM tpch.lineitem__cells
        WHERE planner_stamp = 'S' AND planner_part = 'cells'
          AND planner_pid IN (<group>) AND planner_b0 BETWEEN 4 AND 55 AND planner_b1 BETWEEN 5 AND 7
    ) AS lineitem

SQL saved to run later (``planner rewrite``, ``IndexContext.checked`` false) reads the interior
cells through the build's view instead, ``FROM tpch.lineitem__cells_S WHERE planner_pid IN
(<group>) AND …`` (``planner.model.aggregate_index.cells_view``). The planner points that view at
the table itself before it writes to the table (append, relayout, apply) or drops the build
(``hive_integration.spark.cells.redirect``): from then on the view computes the same cells from
the rows as they are, with the build's own bucket searches and types, so saved SQL stays exact
with no check of its own. Partition ids name regions forever (``planner.model.layout``): a table
laid out anew has none of the group's ids, so the first branch reads it all, and the others and
the view nothing.

A build from before views (``CellsState.view`` false) has none, and its saved SQL checks the
head row in the text: ``(SELECT COUNT(*) FROM <cells> WHERE planner_stamp = 'S' AND planner_part =
'head')`` > 0 on the cells branch, and a fallback branch per group scanning the interior box when
it is 0 (the planner drops the head before it writes). Spark computes the scalar subquery once
per query, as a job of its own (``benchmarks/results/agg_index_profile_sf1.md`` times the texts).

A row of a partition is read by exactly one branch or counted in exactly one cell: the interior
box of a group is a product of bucket ranges, the same ranges as values on the table side and as
bucket numbers on the index side (``planner.model.aggregate_index``: bucket ``k`` is ``[b_{k-1},
b_k)``, as the build computed it), and the boundary branch reads the matching rows outside it
(some dimension in a *partial* bucket, ``planner.pruning.strict``).

Results are Spark's own, types included:

* ``count``: ``COALESCE(SUM(n), 0)`` (BIGINT; 0 over no rows, as Spark's count);
* ``sum``: ``CAST(SUM(partial sums) AS <Spark's type>)``: NULL when every partial is NULL (no
  row, or only NULLs), as Spark's;
* ``min``/``max``: of the partial minima and maxima (any order gives the same value);
* ``avg`` of a DECIMAL(p, s): Spark divides its exact sum by the count once, rounding HALF_UP to
  scale s + 4 (``DecimalDivideWithOverflowCheck``). The rewrite divides the exact total by the
  count with a division whose result scale is that very scale, t = min(38, s + 4) (the sum cast to
  DECIMAL(38 + s - t, s)); below scale 6, which no division's result goes below, it divides by
  count · 10^(2 - s) at scale 6 and multiplies back, so the one rounding is Spark's
  (``tests/test_aggregate_finals_spark.py``); this needs
  ``spark.sql.decimalOperations.allowPrecisionLoss`` at its default (true);
* ``avg`` of an integer: Spark sums in DOUBLE; the partial sums are exact BIGINTs, and the total
  equals Spark's as long as every partial sum is below 2^53 (proved by the bound below);
* a DOUBLE or FLOAT ``sum``/``avg`` adds in another order than a scan does. Spark's own result
  already depends on its order of addition (partitions, tasks); the differential test compares
  these two types, and only these, within ``n · 2^-52 · Σ|x|``, the bound on the difference
  between two orders of adding n doubles.

Overflow: the index is used only when it proves that no sum can overflow, in Spark's plain query
or in this one: the build recorded an upper bound of ``Σ |e|`` over the table
(``CellsState.bounds``), and it must fit the result type (and 2^62 for BIGINT, 2^53 for an
integer average). The build runs with ANSI on, so an expression that raises on some row has no
index at all; both modes then give every row the same value.

Anything else is answered by the plain partition rewrite: a shape the recogniser refuses
(``planner.workload.aggregates``), a predicate the strict projection cannot read exactly, an
expression or group the index does not keep, a stale or missing index (the edge compares the
table's file snapshot and generation with the build's), no interior cell. ``explain`` says which.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Callable, Mapping, Sequence

import sqlglot
from sqlglot import exp

from planner.cnf.bind import needs_time_zone
from planner.emit.cells_sql import head_count
from planner.emit.conditions import column_ref, literal, partition_filter
from planner.emit.ddl import table_expr
from planner.errors import InputError
from planner.model.aggregate_index import (
    CELLS,
    PART_COLUMN,
    ROWS_COLUMN,
    STAMP_COLUMN,
    AggregateIndex,
    CellsState,
    GridDim,
    bucket_column,
    cells_view,
    expr_columns,
    group_column,
)
from planner.model.layout import CATCH_ALL, Layout
from planner.pruning.hits import hit_matrix
from planner.pruning.strict import Cover, GridCovers, runs
from planner.rewrite.query_rewrite import (
    JoinContext,
    RewriteNote,
    ScanExplanation,
    _lookup,
    _parse,
    _refusal,
    _schema,
    explain_query,
    pruning_regions,
    pruning_wanted,
    rewrite_query,
    scan_analysis,
)
from planner.semantics.settings import Settings
from planner.semantics.types import SparkType, parse_type
from planner.workload.aggregates import (
    AggregateQuery,
    aggregate_call,
    aggregate_calls,
    aggregate_query,
    expression_type,
    result_type,
)

MAX_GROUPS = 8  # partition groups with an interior box of their own; more are scanned whole
LONG_LIMIT = 2 ** 62  # a BIGINT sum must stay below this (half of 2^63: the bound is a float)
DOUBLE_EXACT = 2 ** 52  # an integer average's partial sums are exact doubles below 2^53


@dataclass(frozen=True)
class IndexContext:
    """What the edge knows about a table's aggregate index when a query is rewritten."""

    index: AggregateIndex
    state: CellsState | None
    why_not: str = ""  # '' when the build matches the table now (snapshot, generation, specification)
    # True: the edge saw the build's head row just now, for a query that runs at once (``planner.sql``),
    # so the text needs no head check of its own; False (SQL saved to run later): the text checks it
    checked: bool = False


@dataclass(frozen=True)
class AggregateExplanation:
    """What the aggregate index did for one query."""

    table: str
    used: bool
    reason: str = ""  # why it was not used
    cells_table: str = ""
    stamp: str = ""
    whole: tuple[int, ...] = ()  # partitions answered entirely from the index
    interior: tuple[str, ...] = ()  # per partition group: its interior cells, its boundary cells
    scanned: tuple[tuple[str, str], ...] = ()  # (partitions, why they are scanned whole)
    view: str = ""  # the build's view the text reads the cells through ('' when it reads the cells table)

    def lines(self) -> list[str]:
        if not self.used:
            return [f"aggregate index not used: {self.reason}"]
        out = [f"aggregate index {self.cells_table} (build {self.stamp}): interior cells come from the index, "
               "boundary cells are scanned"]
        if self.view:
            out.append(f"the text reads the cells through the view {self.view}, which computes them from the table "
                       "once a write through the planner changes it")
        if self.whole:
            out.append(f"{len(self.whole)} partition(s) answered whole from the index: "
                       f"{_ids(self.whole)}")
        out += self.interior
        out += [f"scanned whole: {what}: {why}" for what, why in self.scanned]
        return out


def _ids(ids: Sequence[int], limit: int = 8) -> str:
    ids = list(ids)
    return ", ".join(map(str, ids[:limit])) + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


@dataclass(frozen=True)
class _Group:
    ids: tuple[int, ...]
    cover: Cover


@dataclass
class _Plan:
    q: AggregateQuery
    layout: Layout
    ctx: IndexContext
    plain: list[int] = field(default_factory=list)  # partitions scanned whole (catch-all added later)
    groups: list[_Group] = field(default_factory=list)
    scanned: list[tuple[str, str]] = field(default_factory=list)
    whole: list[int] = field(default_factory=list)


# ---- entry points ------------------------------------------------------------------------------
def rewrite_statement(sql: str, layouts: Mapping[str, Layout], *, dialect: str = "hive", schema=None,
                      current_db: str | None = None, prune: bool | None = None, settings: Settings | None = None,
                      joins: JoinContext | None = None, indexes: Mapping[str, IndexContext] | None = None,
                      names: Callable[[str], Sequence[str] | None] | None = None,
                      ) -> tuple[str, list[RewriteNote], AggregateExplanation | None]:
    """``planner.rewrite.query_rewrite.rewrite_query``, answering an aggregate query from an aggregate
    index where one can answer it exactly. ``indexes``: table -> ``IndexContext``; ``names``: the
    output column names of a query as Spark gives them (when a Spark session is at hand), for
    select items without an alias whose name the planner does not derive itself."""
    prune = pruning_wanted(sql, prune)
    explanation = None
    if prune and indexes:
        got = _guarded(sql, layouts, dialect, schema, current_db, settings, indexes, names)
        if got is not None:
            text, explanation = got
            if text is not None:
                return text, [], explanation
    plain, notes = rewrite_query(sql, layouts, dialect=dialect, schema=schema, current_db=current_db, prune=prune,
                                 settings=settings, joins=joins)
    return plain, notes, explanation


def explain_statement(sql: str, layouts: Mapping[str, Layout], stats=None, *, dialect: str = "hive", schema=None,
                      current_db: str | None = None, settings: Settings | None = None,
                      joins: JoinContext | None = None, indexes: Mapping[str, IndexContext] | None = None,
                      names: Callable[[str], Sequence[str] | None] | None = None,
                      ) -> tuple[list[ScanExplanation], AggregateExplanation | None]:
    """``explain_query``, plus what the aggregate index does for the query (None: no index applies)."""
    scans = explain_query(sql, layouts, stats, dialect=dialect, schema=schema, current_db=current_db,
                          settings=settings, joins=joins)
    explanation = None
    if indexes and "${" not in sql:
        got = _guarded(sql, layouts, dialect, schema, current_db, settings, indexes, names)
        explanation = None if got is None else got[1]
    return scans, explanation


# ---- planning --------------------------------------------------------------------------------------
def _guarded(sql, layouts, dialect, schema, current_db, settings, indexes, names):
    """``_aggregate``, except that a query this rewrite cannot handle for an unforeseen reason is
    answered by the plain rewrite (said so) instead of failing: conservative, always."""
    try:
        return _aggregate(sql, layouts, dialect, schema, current_db, settings, indexes, names)
    except InputError:
        raise
    except Exception as e:  # noqa: BLE001 - never a wrong answer, and never a query broken by the index
        return None, AggregateExplanation(_failed_table(sql, dialect, current_db, indexes), False,
                                          f"the aggregate rewrite failed ({type(e).__name__}: {e}); the query scans")


def _failed_table(sql, dialect, current_db, indexes) -> str:
    """The table a failed rewrite is about: the query's own where its text names one, else the
    indexed tables (the callers pass at least one)."""
    try:
        table = _single_table(_parse(sql, dialect), current_db)
    except Exception:  # noqa: BLE001 - the text itself may be what failed
        table = None
    return table or ", ".join(sorted(indexes))


def _aggregate(sql, layouts, dialect, schema, current_db, settings, indexes, names):
    """``(text or None, explanation)``, or None when no aggregate index concerns the query."""
    tree = _parse(sql, dialect)
    sch = _schema(schema, layouts)
    q = aggregate_query(tree, sch, current_db, dialect)
    lowered = {k.lower(): v for k, v in layouts.items()}
    if isinstance(q, str):
        table = _single_table(tree, current_db)
        if table is None or _lookup(lowered, table) is None or _context(indexes, table) is None:
            return None
        return None, AggregateExplanation(table, False, f"the query's shape: {q}")
    layout = _lookup(lowered, q.table)
    ctx = _context(indexes, q.table)
    if layout is None or ctx is None:
        return None
    columns = sch.columns(q.table) or {}
    plan = _plan(q, layout, ctx, columns, settings)
    if isinstance(plan, str):
        return None, AggregateExplanation(q.table, False, plan)
    try:
        text = _sql(plan, dialect, names, sql)
    except _Refused as e:
        return None, AggregateExplanation(q.table, False, str(e))
    interior = []
    for g in plan.groups:
        interior.append(f"partitions {_ids(g.ids)}: {_cover_text(g.cover, ctx.index)}")
    view = cells_view(ctx.state.cells_table, ctx.state.stamp) if _through_view(ctx) else ""
    return text, AggregateExplanation(q.table, True, "", ctx.state.cells_table, ctx.state.stamp,
                                      tuple(plan.whole), tuple(interior), tuple(plan.scanned), view)


def _through_view(ctx: IndexContext) -> bool:
    """SQL saved for later reads the cells through the build's view, which the planner points at
    the table before it writes (a build from before views: the text checks the head row itself)."""
    return not ctx.checked and ctx.state is not None and ctx.state.view


def _context(indexes, table: str) -> IndexContext | None:
    lowered = {k.lower(): v for k, v in (indexes or {}).items()}
    return _lookup(lowered, table)


def _single_table(tree, current_db) -> str | None:
    from planner.workload.scans import table_name

    if not isinstance(tree, exp.Select):
        return None
    from_ = tree.args.get("from_")
    if from_ is None or not isinstance(from_.this, exp.Table) or not aggregate_calls(tree) and not tree.args.get("group"):
        return None
    return table_name(from_.this, current_db)


class _Refused(Exception):
    pass


def _plan(q: AggregateQuery, layout: Layout, ctx: IndexContext, columns: Mapping[str, str],
          settings: Settings | None) -> _Plan | str:
    spec, state = ctx.index, ctx.state
    if ctx.why_not:
        return ctx.why_not
    if state is None:
        return "the index has not been built (apply builds it)"
    refusal = _refusal(layout, columns)
    if refusal:
        return refusal
    pcol = layout.partition_column.lower()
    if any(c.name.lower() == pcol for c in q.select.find_all(exp.Column)):
        return f"the query names the partition column {pcol} itself"
    if _risky_literals(q.select):
        return "a string literal holds a quote or a backslash (its spelling differs between sqlglot and Spark)"
    kept = dict(spec.groups)
    for g in q.groups:
        if g not in kept:
            return f"the index does not keep the group column {g}"
        if columns.get(g) is not None and parse_type(columns[g]) != parse_type(kept[g]):
            return f"column {g} is now {columns[g]}, the index was built for {kept[g]}"
    for call in q.calls:
        if call.key is None:
            continue
        i = spec.expr(call.key)
        if i is None:
            return f"the index does not keep {call.describe()}"
        t = expression_type(sqlglot.parse_one(call.key, read="spark"), columns)
        if t is None or t != parse_type(spec.exprs[i].type):
            return f"{call.key} is of type {t} now, the index was built for {spec.exprs[i].type}"
        why = _overflow(call.function, t, state.bounds[i] if i < len(state.bounds) else None)
        if why:
            return why
    for d in spec.dims:
        if columns.get(d.column) is not None and parse_type(columns[d.column]) != parse_type(d.type):
            return f"column {d.column} is now {columns[d.column]}, the index was built for {d.type}"
    from planner.workload.scans import ScanSite

    site = ScanSite(q.table, q.alias, q.predicate, q.columns, q.node, None)
    scan, kinds, types = scan_analysis(site, layout, columns, settings=settings)
    if settings is None and needs_time_zone(q.predicate, types):
        return "the predicate depends on the session time zone, which a saved rewrite does not know"
    regions = pruning_regions(layout)
    hits = hit_matrix([scan], regions, kinds)[0]
    covers = GridCovers(scan, spec.dims)
    plan = _Plan(q, layout, ctx)
    by_signature: dict[tuple, list[int]] = {}
    signature_cover: dict[tuple, Cover] = {}
    reasons: dict[str, list[int]] = {}
    for p, region, hit in zip(layout.partitions, regions, hits):
        if p.id == CATCH_ALL or not hit:
            continue
        cover = covers.cover(region)
        if cover.none:
            plan.plain.append(p.id)
            reasons.setdefault(cover.reason, []).append(p.id)
            continue
        sig = cover.signature
        by_signature.setdefault(sig, []).append(p.id)
        signature_cover[sig] = cover
    ordered = sorted(by_signature.items(), key=lambda kv: -len(kv[1]))
    for i, (sig, ids) in enumerate(ordered):
        if i >= MAX_GROUPS:
            plan.plain += ids
            reasons.setdefault(f"more than {MAX_GROUPS} kinds of interior box", []).extend(ids)
            continue
        cover = signature_cover[sig]
        plan.groups.append(_Group(tuple(sorted(ids)), cover))
        if cover.whole:
            plan.whole += ids
    plan.scanned = [(f"partitions {_ids(sorted(ids))}", why) for why, ids in reasons.items()]
    if not plan.groups:
        return next(iter(reasons), "no partition but the catch-all (always scanned) may hold matching rows")
    return plan


def _overflow(function: str, t: SparkType, bound: float | None) -> str:
    """Why a ``function`` over an expression of type ``t`` might overflow (the plain query or the
    rewritten one), given ``bound`` >= Σ|e| over the table; '' when it provably cannot."""
    if function not in ("sum", "avg") or t.is_fractional:
        return ""
    if bound is None:
        return f"no bound of {function}'s values was recorded"
    if t.is_integral:
        limit = LONG_LIMIT if function == "sum" else DOUBLE_EXACT
        return "" if bound < limit else f"{function} might overflow (Σ|e| up to {bound:.3g})"
    # DECIMAL(p, s): the sum's type holds p + 10 digits, of which s after the point
    room = 10.0 ** (min(38, t.precision + 10) - t.scale)
    if function == "avg":
        s = t.scale
        tt = min(38, s + 4)
        # _final: a quotient typed DECIMAL(38, tt), or (tt < 6) one typed DECIMAL(38, 6) times 10^k
        room = min(room, 10.0 ** (38 - max(tt, 6)))
    return "" if bound * 2 < room else f"{function} might overflow its DECIMAL type (Σ|e| up to {bound:.3g})"


def _risky_literals(select: exp.Select) -> bool:
    return any(lit.is_string and ("'" in lit.this or "\\" in lit.this or '"' in lit.this)
               for lit in select.find_all(exp.Literal))


def _cover_text(cover: Cover, spec: AggregateIndex) -> str:
    if cover.whole:
        return "every cell lies inside the query's box: all from the index"
    parts = []
    for d in cover.dims:
        dim = spec.dim(d.column)
        inside = _bucket_text(dim, d.inside)
        partial = _bucket_text(dim, d.partial)
        parts.append(f"{d.column}: interior {inside}" + (f", boundary {partial} scanned" if partial else ""))
    return "; ".join(parts)


def _bucket_text(dim: GridDim, buckets) -> str:
    out = []
    rs, null = runs(buckets)
    for a, b in rs:
        lo, _ = dim.interval(a)
        _, hi = dim.interval(b)
        out.append(f"[{'-inf' if lo is None else lo}, {'+inf' if hi is None else hi})")
    if null:
        out.append("NULL")
    return " ∪ ".join(out)


# ---- SQL -----------------------------------------------------------------------------------------
def _ident(name: str) -> exp.Identifier:
    return exp.to_identifier(name, quoted=True)


def _col(name: str, table: str | None = None) -> exp.Column:
    return column_ref(name, table)


def _table(q: AggregateQuery) -> exp.Table:
    t = q.node.copy()
    t.set("alias", exp.TableAlias(this=_ident(q.alias)))
    for n in t.walk():
        n.comments = None
    return t


def _valid(state: CellsState) -> exp.Expression:
    """The scalar subquery counting the build's head row (1 while the index is valid, else 0)."""
    return exp.Subquery(this=head_count(state.cells_table, state.stamp))


def _values(dim: GridDim, buckets, alias: str) -> exp.Expression:
    """Rows whose ``dim`` value lies in ``buckets`` (NULL bucket: IS NULL), on the table's side."""
    col = _col(dim.column, alias)
    rs, null = runs(buckets)
    parts: list[exp.Expression] = []
    for a, b in rs:
        lo, _ = dim.interval(a)
        _, hi = dim.interval(b)
        conds: list[exp.Expression] = []
        if lo is not None:
            conds.append(exp.GTE(this=col.copy(), expression=literal(lo)))
        if hi is not None:
            conds.append(exp.LT(this=col.copy(), expression=literal(hi)))
        parts.append(exp.and_(*conds) if conds else exp.Not(this=exp.Is(this=col.copy(), expression=exp.Null())))
    if null:
        parts.append(exp.Is(this=col.copy(), expression=exp.Null()))
    return _or(parts)


def _buckets(i: int, buckets) -> exp.Expression:
    """Cells whose bucket of dimension ``i`` lies in ``buckets``, on the index's side."""
    col = _col(bucket_column(i))
    rs, null = runs(buckets)
    parts: list[exp.Expression] = [
        exp.EQ(this=col.copy(), expression=exp.Literal.number(a)) if a == b else
        exp.Between(this=col.copy(), low=exp.Literal.number(a), high=exp.Literal.number(b)) for a, b in rs]
    if null:
        parts.append(exp.Is(this=col.copy(), expression=exp.Null()))
    return _or(parts)


def _or(parts: list[exp.Expression]) -> exp.Expression:
    if not parts:
        return exp.false()
    if len(parts) == 1:
        return parts[0]
    return exp.Paren(this=exp.or_(*parts))  # or_ and and_ put a nested AND or OR in parentheses themselves


def _and(parts: list[exp.Expression]) -> exp.Expression:
    parts = [p for p in parts if p is not None]
    if not parts:
        return exp.true()
    return exp.and_(*parts)


def _pids(ids: Sequence[int]) -> exp.Expression:
    return exp.In(this=_col("planner_pid"), expressions=[exp.Literal.number(i) for i in ids])


@dataclass(frozen=True)
class _Partial:
    """One partial aggregate column: its name, how a scan computes it, its column in the cells."""

    name: str
    scan: exp.Expression
    cells: str


def _partials(plan: _Plan) -> tuple[list[_Partial], dict]:
    """The partial columns the query needs, and (function, key) -> the final expression."""
    spec = plan.ctx.index
    out: dict[str, _Partial] = {ROWS_COLUMN: _Partial(ROWS_COLUMN, exp.Count(this=exp.Star()), ROWS_COLUMN)}
    finals: dict = {}
    for call in plan.q.calls:
        if call.key is None:
            finals[(call.function, None)] = exp.Coalesce(this=exp.Sum(this=_col(ROWS_COLUMN)),
                                                         expressions=[exp.Literal.number(0)])
            continue
        i = spec.expr(call.key)
        e = spec.exprs[i]
        names = expr_columns(i, e.numeric)
        arg = sqlglot.parse_one(call.key, read="spark")
        need = {"sum": ("sum",), "avg": ("sum", "count"), "count": ("count",), "min": ("min",),
                "max": ("max",)}[call.function]
        scan_fn = {"sum": exp.Sum, "count": exp.Count, "min": exp.Min, "max": exp.Max}
        for part in need:
            name = names[part]
            out.setdefault(name, _Partial(name, scan_fn[part](this=_qualified(arg, plan.q.alias)), name))
        finals[(call.function, call.key)] = _final(call.function, names, parse_type(e.type))
    return list(out.values()), finals


def _qualified(e: exp.Expression, alias: str) -> exp.Expression:
    out = exp.Paren(this=e.copy())
    for c in list(out.find_all(exp.Column)):
        c.replace(_col(c.name, alias))
    return out.this


def _cast(e: exp.Expression, t: SparkType) -> exp.Expression:
    return exp.Cast(this=e, to=exp.DataType.build(str(t), dialect="spark"))


def _final(function: str, names: dict, t: SparkType) -> exp.Expression:
    if function == "count":
        return exp.Coalesce(this=exp.Sum(this=_col(names["count"])), expressions=[exp.Literal.number(0)])
    if function == "min":
        return exp.Min(this=_col(names["min"]))
    if function == "max":
        return exp.Max(this=_col(names["max"]))
    total = exp.Sum(this=_col(names["sum"]))
    out_type = result_type(function, t)
    if function == "sum":
        return _cast(total, out_type)
    count = exp.Nullif(this=exp.Sum(this=_col(names["count"])), expression=exp.Literal.number(0))
    if not t.is_decimal:
        return exp.Div(this=_cast(total, parse_type("double")), expression=_cast(count, parse_type("double")))
    s = t.scale
    tt = min(38, s + 4)
    k = max(0, 6 - tt)
    divisor = _cast(count, parse_type("decimal(20,0)"))
    if not k:  # DECIMAL(38 + s - tt, s) / DECIMAL(20,0) is typed DECIMAL(38, tt): one rounding, at tt
        return _cast(exp.Div(this=_cast(total, parse_type(f"decimal({38 + s - tt},{s})")), expression=divisor), out_type)
    # A division's scale is at least 6: divide by count · 10^k instead (DECIMAL(38, s) / DECIMAL(22, 0)
    # is typed DECIMAL(38, 6)), which rounds the average once, at tt = 6 - k, and multiply the
    # quotient back, exactly. (Dividing 10^k · sum by the count rounded at 6 + k, then at tt: twice.)
    divisor = _cast(exp.Mul(this=divisor, expression=exp.Literal.number(10 ** k)), parse_type("decimal(22,0)"))
    q = exp.Div(this=_cast(total, parse_type(f"decimal(38,{s})")), expression=divisor)
    return _cast(exp.Mul(this=exp.Paren(this=q), expression=exp.Literal.number(10 ** k)), out_type)


def _name(item: exp.Expression) -> str | None:
    """The column name Spark gives an unaliased select item of the shapes the planner derives."""
    if isinstance(item, exp.Column):
        return None  # kept as a column reference: Spark names it as it resolves it
    if isinstance(item, exp.AggFunc):
        fn = {exp.Count: "count", exp.Sum: "sum", exp.Avg: "avg", exp.Min: "min", exp.Max: "max"}.get(type(item))
        if fn is None:
            return None
        arg = item.this
        if fn == "count" and isinstance(arg, exp.Star):
            return "count(1)"
        inner = _pretty(arg)
        return None if inner is None else f"{fn}({inner})"
    return None


def _pretty(e: exp.Expression) -> str | None:
    """Spark's ``toPrettySQL`` of a column expression: columns by name, literals as written,
    ``(a * b)`` for every arithmetic, ``(- a)`` for a negation."""
    if isinstance(e, exp.Paren):
        return _pretty(e.this)
    if isinstance(e, exp.Column):
        return e.name.lower()
    if isinstance(e, exp.Literal) and not e.is_string:
        text = e.this
        try:
            Decimal(text)
        except Exception:
            return None
        return text if "e" not in text.lower() else None
    if isinstance(e, exp.Neg):
        inner = _pretty(e.this)
        return None if inner is None else f"(- {inner})"
    op = {exp.Add: "+", exp.Sub: "-", exp.Mul: "*"}.get(type(e))
    if op is None:
        return None
    a, b = _pretty(e.this), _pretty(e.expression)
    return None if a is None or b is None else f"({a} {op} {b})"


def _sql(plan: _Plan, dialect: str, names, original: str) -> str:
    q, layout, ctx = plan.q, plan.layout, plan.ctx
    spec, state = ctx.index, ctx.state
    alias = q.alias
    partials, finals = _partials(plan)
    where = q.select.args.get("where")
    predicate = where.this.copy() if where is not None else None
    groups = list(q.groups)
    group_refs = [_col(g, alias) for g in groups]

    def scan_branch(extra: list[exp.Expression]) -> exp.Select:
        sel = exp.select(*[exp.alias_(_col(g, alias), g, quoted=True) for g in groups],
                         *[exp.alias_(p.scan.copy(), p.name, quoted=True) for p in partials])
        sel = sel.from_(_table(q))
        conds = [e for e in extra if e is not None]
        if predicate is not None:
            conds.append(exp.Paren(this=predicate.copy()))
        if conds:
            sel = sel.where(_and(conds))
        if groups:
            sel = sel.group_by(*[r.copy() for r in group_refs])
        return sel

    branches: list[exp.Select] = []
    plain_read = sorted(set(plan.plain) | {CATCH_ALL})
    branches.append(scan_branch([partition_filter(layout.partition_column, plain_read, layout.known_ids)]))
    through_view = _through_view(ctx)
    valid = None if ctx.checked or through_view else _valid(state)
    dims = {d.column: (i, d) for i, d in enumerate(spec.dims)}
    index_boxes: list[exp.Expression] = []
    for g in plan.groups:
        pids = _pids(g.ids)
        if g.cover.whole:
            inside_values: list[exp.Expression] = []
            inside_buckets: list[exp.Expression] = []
        else:
            inside_values = [_values(dims[d.column][1], d.inside, alias) for d in g.cover.dims]
            inside_buckets = [_buckets(dims[d.column][0], d.inside) for d in g.cover.dims]
        if not g.cover.boundary_free:
            boundary = _or([_values(dims[d.column][1], d.partial, alias) for d in g.cover.dims if d.partial])
            branches.append(scan_branch([pids.copy(), boundary]))
        if valid is not None:
            fallback = [pids.copy(), exp.EQ(this=valid.copy(), expression=exp.Literal.number(0))] + inside_values
            branches.append(scan_branch(fallback))
        index_boxes.append(_and([pids.copy()] + inside_buckets))
    cells = exp.select(*[exp.alias_(_col(group_column(spec.groups.index(next(x for x in spec.groups if x[0] == g)))),
                                    g, quoted=True) for g in groups],
                       *[exp.alias_(_col(p.cells), p.name, quoted=True) for p in partials])
    if through_view:
        cells = cells.from_(table_expr(cells_view(state.cells_table, state.stamp), "spark")).where(_or(index_boxes))
    else:
        cells = cells.from_(table_expr(state.cells_table, "spark")).where(_and([
            exp.EQ(this=_col(STAMP_COLUMN), expression=exp.Literal.string(state.stamp)),
            exp.EQ(this=_col(PART_COLUMN), expression=exp.Literal.string(CELLS)),
            None if valid is None else exp.GT(this=valid.copy(), expression=exp.Literal.number(0)),
            _or(index_boxes)]))
    union: exp.Expression = branches[0]
    for b in branches[1:] + [cells]:
        union = exp.union(union, b, distinct=False)
    outer = q.select.copy()
    outer.set("where", None)
    outer.set("from_", exp.From(this=exp.Subquery(this=union, alias=exp.TableAlias(this=_ident(alias)))))
    if groups:
        outer.set("group", exp.Group(expressions=[_col(g, alias) for g in groups]))
    spark_names = None
    items = []
    for pos, item in enumerate(outer.expressions):
        if isinstance(item, exp.Alias) or isinstance(item, exp.Column):
            items.append(item)
            continue
        name = _name(item)
        if name is None:
            if spark_names is None and names is not None:
                spark_names = list(names(original) or [])
            if spark_names and pos < len(spark_names):
                name = spark_names[pos]
        if name is None:
            raise _Refused(f"the select item {item.sql(dialect='spark')[:60]} has no alias, and its column name "
                           "is not one the planner derives (give it an alias)")
        items.append(exp.alias_(item, name, quoted=True))
    outer.set("expressions", items)
    for agg in aggregate_calls(outer):  # the query's own calls (aggregate_query read them): each has a final
        call = aggregate_call(agg)
        agg.replace(finals[(call.function, call.key)].copy())
    for o in [outer, union]:
        for n in o.walk():
            n.comments = None
    return outer.sql(dialect=dialect)


__all__ = ["IndexContext", "AggregateExplanation", "rewrite_statement", "explain_statement"]

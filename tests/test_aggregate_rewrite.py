"""The aggregate index's rewrite case by case: every reason it declines, the contexts a caller
passes (current database, session, Spark's column names), the final combinations of each
function and type, and how partitions are grouped under one interior box
(``planner.rewrite.aggregate_rewrite``).

The whole explanation and the rewritten SQL are pinned in ``tests/golden/aggregate_explain.txt``
(``./dev golden`` regenerates it; read its diff). Spark's answers to these shapes are compared in
``tests/test_aggregate_index_spark.py``; ``tests/test_aggregate_index.py`` has the index itself.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

import sqlglot
from test_aggregate_index import COLS, DIMS, TABLE, _layout

from planner.cnf.valueset import ValueSet
from planner.model.aggregate_index import AggregateIndex, CellsState, IndexedExpr
from planner.model.layout import Layout, Ordering, Partition, with_generation
from planner.rewrite.aggregate_rewrite import IndexContext, explain_statement, rewrite_statement
from planner.semantics.kinds import Kind
from planner.semantics.settings import Settings
from planner.workload.aggregates import expression_type

GOLDEN = Path(__file__).resolve().parent / "golden" / "aggregate_explain.txt"
DAY = dt.date
WIDE_COLS = COLS | {"k0": "decimal(12,0)", "r36": "decimal(38,36)"}
KEPT = ("`l_extendedprice` * `l_discount`", "`l_quantity`", "`l_orderkey`", "`x`", "`k0`", "`r36`", "1",
        "-`l_quantity` + (`l_discount` - 1.5)", "`l_quantity` * 1E2", "-(`l_quantity` * 1E2)")


def _expr(key: str) -> IndexedExpr:
    return IndexedExpr(key, str(expression_type(sqlglot.parse_one(key, read="spark"), WIDE_COLS)))


WIDE = AggregateIndex(DIMS, (("l_returnflag", "string"),), tuple(_expr(k) for k in KEPT))
# per kept expression, a bound of Σ|e| that proves its sum and average cannot overflow
BOUNDS = (1e12, 1e9, 1e15, None, 1e9, 0.25, 1e7, 1e9, 1e11, 1e11)


def _state(layout: Layout, bounds=BOUNDS, cells="tpch.lineitem__cells", view=False) -> CellsState:
    return CellsState("stamp1", "snap", layout.generation, WIDE.digest, cells, 6_000_000, 1000, bounds, view=view)


@dataclass(frozen=True)
class Case:
    """One query and what the caller passes with it (the defaults: the test layout, a valid index)."""

    sql: str
    label: str = ""
    current_db: str | None = None
    settings: Settings | None = None
    prune: bool | None = None
    schema: dict | None = field(default_factory=lambda: {TABLE: WIDE_COLS})
    names: dict | None = None  # query -> Spark's output column names
    # valid (a build without a view) | view | checked | unbuilt | stale | short bounds | no bounds | catalog cells
    state: str = "valid"
    layout: str = "test"  # test | many | partitionless | retyped


def _many() -> Layout:
    """Partitions cut on ship date and discount, so that one query meets them in many ways: one
    interior box shared by 9 partitions, one by 8, the partitions answered whole, nine boxes of one
    partition each (listed first, so that only the sort puts the large boxes first), and one
    partition without an interior cell."""
    def dates(lo, hi, null=False):
        vs = ValueSet.range(Kind.DATE, lo, hi)
        return vs.union(ValueSet.only_null(Kind.DATE)) if null else vs

    inside = ValueSet.range(Kind.DECIMAL, Decimal("0.03"), Decimal("0.05"))  # every discount matches
    start = DAY(1993, 1, 15)  # bucket 1993 partial: the query starts on 1 March
    regions = [(dates(start, DAY(1994 + y, 6, 30)), None) for y in range(1, 5)]
    regions += [(dates(start, DAY(1994 + y, 6, 30)), inside) for y in range(5)]
    regions += [(dates(DAY(1993, 1, 1), DAY(1993, 9, 1)), None)]  # only the partial bucket: scanned
    regions += [(dates(start + dt.timedelta(i), DAY(1994, 6, 30)), None) for i in range(9)]
    regions += [(dates(DAY(1994, 2, 1 + i), DAY(1995, 6, 30)), None) for i in range(8)]
    regions += [(dates(DAY(1995, 1, 1 + i), DAY(1995, 12, 31)), inside) for i in range(2)]  # whole
    parts = []
    for i, (d, q) in enumerate(regions, 1):
        parts.append(Partition(i, (("l_shipdate", d),) + ((("l_discount", q),) if q is not None else ())))
    return with_generation(Layout(TABLE, "test", tuple(parts), Ordering("sort", ("l_orderkey",)),
                                  kinds=(("l_discount", Kind.DECIMAL), ("l_shipdate", Kind.DATE)),
                                  types=(("l_discount", "decimal(15,2)"), ("l_shipdate", "date")),
                                  aggregate_index=WIDE))


def _layouts(case: Case) -> dict[str, Layout]:
    if case.layout == "many":
        return {TABLE: _many()}
    if case.layout == "partitionless":
        return {TABLE: with_generation(Layout(TABLE, "test", (), Ordering("sort", ("l_shipdate",)),
                                              aggregate_index=WIDE))}
    return {TABLE: _layout(WIDE), "db.other": _layout(WIDE)}  # db.other: a layout without an index


def _indexes(case: Case, layout: Layout) -> dict[str, IndexContext]:
    state = {"valid": _state(layout), "view": _state(layout, view=True), "checked": _state(layout, view=True),
             "unbuilt": None, "stale": _state(layout),
             "short bounds": _state(layout, bounds=BOUNDS[:1]), "no bounds": _state(layout, bounds=None),
             "catalog cells": _state(layout, cells="spark_catalog.tpch.lineitem__cells")}[case.state]
    why = "the table's files changed since the index was built" if case.state == "stale" else ""
    return {TABLE: IndexContext(WIDE, state, why, checked=case.state == "checked")}


Q = "FROM tpch.lineitem WHERE l_discount >= 0.05"
CASES = (
    # the final combination of each function and type
    Case(f"SELECT avg(l_orderkey), avg(x), avg(k0), avg(r36), sum(r36) {Q}", "averages of every kind"),
    Case(f"SELECT count(1), count(5), sum(1), count(L_QUANTITY) {Q}", "counts of literals and a column"),
    Case(f"SELECT sum(-l_quantity + (l_discount - 1.5)), sum(l_extendedprice * l_discount) {Q}",
         "Spark's names of arithmetic"),
    Case(f"SELECT sum(l_quantity * 1E2) {Q}", "an exponent: a name the planner does not derive"),
    Case(f"SELECT sum(-(l_quantity * 1E2)) {Q}", "a negated exponent"),
    Case(f"SELECT CAST(sum(l_quantity) AS BIGINT) + CAST(count(*) AS BIGINT) + CAST(min(l_quantity) AS BIGINT) "
         f"{Q}", "a long select item without a name"),
    Case(f"SELECT sum(l_quantity * 1E2), sum(l_quantity) + 1, sum(l_quantity) {Q}", "names from Spark",
         names={f"SELECT sum(l_quantity * 1E2), sum(l_quantity) + 1, sum(l_quantity) {Q}":
                ["sum((l_quantity * 100.0))", "total", "sum(l_quantity)"]}),
    Case(f"SELECT sum(l_quantity), sum(l_quantity) + 1 {Q}", "Spark names fewer columns than the query has",
         names={f"SELECT sum(l_quantity), sum(l_quantity) + 1 {Q}": ["sum(l_quantity)"]}),
    Case("SELECT count(*) FROM tpch.lineitem WHERE l_discount IS NOT NULL", "every bucket but NULL"),
    Case("SELECT count(*) FROM tpch.lineitem WHERE l_discount BETWEEN 0.02 AND 0.03 OR l_discount BETWEEN 0.06 "
         "AND 0.07", "two runs of buckets"),
    Case("SELECT sum(l_quantity) AS s FROM tpch.lineitem WHERE (l_quantity > 20 OR l_quantity IS NULL) "
         "AND l_discount >= 0.05", "one partition scanned, the other from the index"),
    Case(f"SELECT count(*) {Q}", "a catalog-qualified cells table", state="catalog cells"),
    Case("SELECT sum(l_quantity) AS s FROM tpch.lineitem WHERE (l_quantity > 20 OR l_quantity IS NULL) "
         "AND l_discount >= 0.05", "as planner.sql runs it: the head checked at the edge", state="checked"),
    Case("SELECT sum(l_quantity) AS s FROM tpch.lineitem WHERE (l_quantity > 20 OR l_quantity IS NULL) "
         "AND l_discount >= 0.05", "saved for later: the cells through the build's view", state="view"),
    # the contexts a caller passes
    Case("SELECT count(*) FROM lineitem WHERE l_discount >= 0.05", "the current database", current_db="tpch"),
    Case("SELECT count(DISTINCT l_quantity) FROM lineitem", "a shape refused in the current database",
         current_db="tpch"),
    Case("SELECT count(*) FROM tpch.lineitem WHERE l_shipdate < TIMESTAMP '1994-01-01 00:00:00+00:00'",
         "a predicate that needs the session's time zone"),
    Case("SELECT count(*) FROM tpch.lineitem WHERE l_shipdate < TIMESTAMP '1994-01-01 00:00:00+00:00'",
         "the session's time zone given", settings=Settings(True, "Asia/Tokyo")),
    Case(f"SELECT count(*) {Q} AND l_returnflag <> '${{flag}}'", "a variable: no pruning unless asked"),
    Case(f"SELECT count(*) {Q} AND l_returnflag <> '${{flag}}'", "a variable, pruning asked", prune=True),
    Case(f"SELECT count(*) {Q}", "pruning turned off", prune=False),
    Case(f"SELECT count(*) {Q} AND l_returnflag = \"R\"", "a double-quoted string in Spark's dialect"),
    Case(f"SELECT count(*) {Q}", "no schema given", schema=None),
    # every reason to decline
    Case(f"SELECT count(*) {Q}", "the index has not been built", state="unbuilt"),
    Case(f"SELECT count(*) {Q}", "a stale index", state="stale"),
    Case(f"SELECT sum(l_quantity) {Q}", "no bound recorded for the expression", state="short bounds"),
    Case(f"SELECT sum(l_quantity) {Q}", "an unforeseen failure is a scan", state="no bounds"),
    Case(f"SELECT count(*) {Q}", "a column of the layout changed type",
         schema={TABLE: WIDE_COLS | {"l_quantity": "int"}}),
    Case(f"SELECT l_returnflag, count(*) {Q} GROUP BY l_returnflag", "a group column changed type",
         schema={TABLE: WIDE_COLS | {"l_returnflag": "bigint"}}),
    Case(f"SELECT sum(l_extendedprice * l_discount) {Q}", "an expression's type changed",
         schema={TABLE: WIDE_COLS | {"l_extendedprice": "decimal(12,2)"}}),
    Case(f"SELECT count(*) {Q}", "a dimension changed type", schema={TABLE: WIDE_COLS | {"l_shipdate": "timestamp"}}),
    Case(f"SELECT count(*), sum(l_quantity * 2) {Q}", "an expression the index does not keep, after count(*)"),
    Case("SELECT sum(l_quantity) FROM tpch.lineitem WHERE PLANNER_PID = 1", "the partition column named"),
    Case(f"SELECT count(*) {Q} AND l_returnflag <> \"it's\"", "a quote in a string"),
    Case(f"SELECT count(*) {Q} AND l_returnflag <> 'a\\\\b'", "a backslash in a string"),
    Case(f"SELECT count(*) {Q} AND l_returnflag <> 'say \"hi\"'", "a double quote in a string"),
    Case("SELECT count(*) FROM tpch.lineitem WHERE l_quantity < 1 AND l_quantity > 2", "no partition holds a row"),
    Case("SELECT count(*) FROM db.other", "a table with a layout but no index"),
    Case("SELECT count(DISTINCT x) FROM db.other", "a refused shape on a table without an index"),
    Case("SELECT count(*) FROM (SELECT * FROM tpch.lineitem) t", "a derived table"),
    Case("SELECT count(*) FROM (SELECT * FROM tpch.lineitem) lineitem", "a derived table named as the table",
         current_db="tpch"),
    Case("SELECT upper(l_returnflag) FROM tpch.lineitem GROUP BY upper(l_returnflag)", "a group without aggregates"),
    Case("SELECT l_quantity FROM tpch.lineitem WHERE l_discount >= 0.05", "no aggregate"),
    Case(f"SELECT count(*) {Q}", "a layout without partitions", layout="partitionless"),
    # many partitions: boxes grouped, the largest first, at most eight
    Case("SELECT count(*), sum(l_quantity) AS q FROM tpch.lineitem WHERE l_shipdate >= DATE '1993-03-01' "
         "AND l_discount >= 0.03", "many partitions", layout="many"),
    Case("SELECT count(*), sum(l_quantity) AS q FROM tpch.lineitem WHERE l_shipdate >= DATE '1993-03-01' "
         "AND l_discount >= 0.03", "many partitions, as planner.sql runs it", layout="many", state="checked"),
    Case("SELECT count(*), sum(l_quantity) AS q FROM tpch.lineitem WHERE l_shipdate >= DATE '1993-03-01' "
         "AND l_discount >= 0.03", "many partitions, saved for later through the view", layout="many", state="view"),
)


def _run(case: Case):
    layouts = _layouts(case)
    indexes = _indexes(case, layouts[TABLE])
    names = None if case.names is None else (lambda sql: case.names.get(sql))
    kw = dict(dialect="spark", schema=case.schema, current_db=case.current_db, settings=case.settings,
              indexes=indexes, names=names)
    text, notes, ex = rewrite_statement(case.sql, layouts, prune=case.prune, **kw)
    _, explained = explain_statement(case.sql, layouts, **kw)
    if case.prune is None:
        assert explained == ex, (case.label, explained, ex)  # explain says what the rewrite did
    return text, notes, ex


def explain_golden() -> str:
    """The text of ``tests/golden/aggregate_explain.txt``."""
    out = []
    for case in CASES:
        text, notes, ex = _run(case)
        out.append(f"-- {case.label}: {case.sql}")
        if ex is None:
            out.append("-- no aggregate index applies; partitions read: "
                       + "; ".join(f"{n.table} {n.partitions_read}" for n in notes))
        else:
            out.append(f"-- explain: table={ex.table} used={ex.used!r} reason={ex.reason!r}")
            out += ["-- explain: " + line for line in ex.lines()]
            if ex.used:
                out.append(sqlglot.parse_one(text, read="spark").sql("spark", pretty=True) + ";")
            else:
                out.append("-- partitions read: " + "; ".join(f"{n.table} {n.partitions_read}" for n in notes))
        out.append("")
    return "\n".join(out)


def test_the_aggregate_rewrite_matches_the_golden_file():
    assert GOLDEN.read_text(encoding="utf-8") == explain_golden(), \
        "the aggregate rewrite changed: ./dev golden, then read git diff tests/golden/"


def test_a_failed_rewrite_names_the_querys_table_among_several_indexes(monkeypatch):
    """The explanation of an unforeseen failure is about the query's table (as the query's dialect
    and current database name it), not the first index's; where the text names no single table,
    about the indexed tables."""
    import planner.rewrite.aggregate_rewrite as aggregate_rewrite

    layouts = {"db.first": _layout(WIDE), TABLE: _layout(WIDE)}
    failing = IndexContext(WIDE, _state(layouts[TABLE], bounds=None), "")
    indexes = {"db.first": IndexContext(WIDE, _state(layouts["db.first"]), ""), TABLE: failing}
    schema = {TABLE: WIDE_COLS, "db.first": WIDE_COLS}

    def explained(sql: str, **kw):
        return explain_statement(sql, layouts, dialect="spark", schema=schema, indexes=indexes, **kw)[1]

    got = explained(f"SELECT sum(l_quantity) {Q}")
    assert got.table == TABLE and not got.used and got.reason.startswith("the aggregate rewrite failed")

    def fail(*args):
        raise RuntimeError("unforeseen")

    monkeypatch.setattr(aggregate_rewrite, "_aggregate", fail)
    # backquotes: Spark's quoting, which the default dialect does not read; the current database
    assert explained("SELECT count(*) FROM `lineitem` WHERE l_discount >= 0.05", current_db="tpch").table == TABLE
    both = explained("SELECT count(*) FROM (SELECT * FROM tpch.lineitem) t")
    assert both.table == "db.first, tpch.lineitem" and "unforeseen" in both.reason

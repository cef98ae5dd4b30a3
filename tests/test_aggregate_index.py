"""The aggregate index without Spark: what it is, the strict projection it needs, the queries it
answers, the SQL that answers them, and how advise prices it (issue 32). Spark's own answers are
compared in ``tests/test_aggregate_index_spark.py``."""
from __future__ import annotations

import datetime as dt
from dataclasses import replace
from decimal import Decimal
from pathlib import Path

import pytest
import sqlglot
from sqlglot import exp
from time_params import SLOW_SCANS

from planner.analysis.table_analysis import ScanAnalysis, _analyse_predicate
from planner.cnf.convert import to_ir
from planner.cnf.valueset import ValueSet
from planner.costmodel.timing import TimeParams
from planner.emit.cells_sql import bucket_expr, build_statements, cells_columns, drop_stamps
from planner.model.aggregate_index import AggregateIndex, CellsState, GridDim, IndexedExpr
from planner.model.layout import Layout, Ordering, Partition, with_generation
from planner.pruning.strict import GridCovers, exact, runs, strict_project, strictly_matching
from planner.rewrite.aggregate_rewrite import IndexContext, _overflow, explain_statement, rewrite_statement
from planner.semantics.kinds import Kind
from planner.semantics.types import parse_type
from planner.workload.aggregates import aggregate_query, expression_key, expression_type, result_type
from planner.workload.scans import Schema

COLS = {"l_extendedprice": "decimal(15,2)", "l_discount": "decimal(15,2)", "l_shipdate": "date",
        "l_quantity": "decimal(15,2)", "l_returnflag": "string", "l_orderkey": "bigint", "x": "double"}
TABLE = "tpch.lineitem"
SCHEMA = Schema({TABLE: COLS})
D = Decimal


def _scan(where: str, types=None) -> ScanAnalysis:
    types = {c: parse_type(t) for c, t in (types or COLS).items()}
    pred = to_ir(sqlglot.parse_one(where, read="spark"), lambda c: c.name.lower(), "spark")
    groups, unused = _analyse_predicate(pred, types, 200, {})
    return ScanAnalysis(0, "t", groups, unused)


# ---- the recogniser -----------------------------------------------------------------------------
@pytest.mark.parametrize("sql, reason", [
    ("SELECT count(DISTINCT l_orderkey) FROM tpch.lineitem", "DISTINCT"),
    ("SELECT sum(l_quantity) FROM tpch.lineitem a JOIN tpch.orders o ON a.l_orderkey = o.o_orderkey", "joins"),
    ("SELECT sum(l_quantity) OVER () FROM tpch.lineitem", "window"),
    ("SELECT l_shipdate + 1, count(*) FROM tpch.lineitem GROUP BY l_shipdate + 1", "not by a column"),
    ("SELECT l_shipdate, count(*) FROM tpch.lineitem", "without being grouped"),
    ("SELECT sum(abs(l_quantity)) FROM tpch.lineitem", "other than columns"),
    ("SELECT count(*) FROM tpch.lineitem GROUP BY ROLLUP (l_returnflag)", "ROLLUP"),
    ("SELECT sum(l_quantity) FROM tpch.lineitem WHERE l_orderkey IN (SELECT 1)", "subquery"),
    ("SELECT * FROM tpch.lineitem", "does not aggregate"),
    ("SELECT percentile(l_quantity, 0.5) FROM tpch.lineitem", "not one the index keeps"),
])
def test_shapes_the_index_cannot_answer_say_why(sql, reason):
    got = aggregate_query(sqlglot.parse_one(sql, read="spark"), SCHEMA, "tpch", "spark")
    assert isinstance(got, str) and reason in got, got


def test_q6_and_a_grouped_query_are_recognised():
    q = aggregate_query(sqlglot.parse_one(
        "SELECT sum(l_extendedprice * l_discount) AS revenue FROM lineitem WHERE l_quantity < 24", read="hive"),
        SCHEMA, "tpch", "hive")
    assert not isinstance(q, str) and q.table == TABLE and q.exprs == ("`l_extendedprice` * `l_discount`",)
    q = aggregate_query(sqlglot.parse_one(
        "SELECT l_returnflag, count(1), avg(l.l_quantity) a FROM tpch.lineitem l GROUP BY 1 HAVING sum(l_quantity) > 3 "
        "ORDER BY a DESC", read="spark"), SCHEMA, "tpch", "spark")
    assert not isinstance(q, str) and q.groups == ("l_returnflag",) and q.alias == "l"
    assert {c.describe() for c in q.calls} == {"count(*)", "avg(`l_quantity`)", "sum(`l_quantity`)"}


def test_expression_types_are_sparks():
    t = lambda s: expression_type(sqlglot.parse_one(s, read="spark"), COLS)  # noqa: E731
    assert str(t("l_extendedprice * l_discount")) == "decimal(31,4)"
    assert str(t("l_extendedprice * (1 - l_discount)")) == "decimal(32,4)"
    assert str(t("l_orderkey + 1")) == "bigint"
    assert t("l_extendedprice * l_extendedprice * l_extendedprice") is None  # 48 digits: Spark would cut them
    assert str(result_type("sum", parse_type("decimal(31,4)"))) == "decimal(38,4)"
    assert str(result_type("avg", parse_type("decimal(15,2)"))) == "decimal(19,6)"
    assert str(result_type("sum", parse_type("int"))) == "bigint"
    assert str(result_type("avg", parse_type("int"))) == "double"
    assert expression_key(sqlglot.parse_one("L.L_Quantity")) == "`l_quantity`"


# ---- strict projection ---------------------------------------------------------------------------
def test_strict_projection_is_null_aware():
    scan = _scan("x < 5")
    assert strict_project(scan, {"x": ValueSet.range(Kind.FLOAT, D(1), D(4))})
    assert not strict_project(scan, {"x": ValueSet.range(Kind.FLOAT, D(1), D(4)).union(ValueSet.only_null(Kind.FLOAT))})
    assert not strict_project(scan, {})  # the region does not constrain x: it may hold anything, NULL too
    assert strict_project(_scan("x < 5 OR x IS NULL"), {"x": ValueSet.only_null(Kind.FLOAT)})
    assert exact(_scan("x < l_orderkey")) and not strict_project(_scan("x < l_orderkey"), {})


DIMS = (GridDim("l_discount", "decimal(15,2)", tuple(D(i) / 100 for i in range(0, 11))),
        GridDim("l_shipdate", "date", tuple(dt.date(y, 1, 1) for y in range(1993, 1999))))


def test_a_decimal_bucket_holds_only_multiples_of_its_scale():
    d = DIMS[0]
    assert d.bucket_set(6).point_values() == (D("0.05"),)  # [0.05, 0.06) of a DECIMAL(15,2)
    covers = GridCovers(_scan("l_discount BETWEEN 0.05 AND 0.07"), DIMS)
    c = covers.cover({})
    assert not c.none and c.boundary_free and c.dims[0].inside == (6, 7, 8)


def test_grid_cover_inside_partial_and_null():
    c = GridCovers(_scan("l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1996-07-01'"), DIMS).cover({})
    (d,) = c.dims
    assert d.inside == (2, 3) and d.partial == (4,)
    c = GridCovers(_scan("l_shipdate < DATE '1994-01-01' OR l_shipdate IS NULL"), DIMS).cover({})
    assert c.dims[0].inside == (0, 1, None) and not c.dims[0].partial
    region = {"l_quantity": ValueSet.range(Kind.DECIMAL, D(1), D(10))}
    assert GridCovers(_scan("l_quantity < 24"), DIMS).cover(region).whole  # the partition lies inside
    got = GridCovers(_scan("l_quantity < 5"), DIMS).cover(region)
    assert got.none and "not a dimension" in got.reason


@pytest.mark.parametrize("type_, values, where", [
    ("decimal(15,2)", [D(q) for q in range(1, 51)], "l_quantity BETWEEN 1 AND 12"),  # whole numbers, scale 2
    ("decimal(15,2)", [D(q) for q in range(1, 51)], "l_quantity > 12 AND l_quantity <= 30"),
    ("decimal(15,2)", [D(q) for q in range(1, 51)], "l_quantity = 33"),
    ("int", list(range(0, 100, 5)), "l_quantity BETWEEN 10 AND 20"),
    ("date", [dt.date(1995, 1, 1) + dt.timedelta(days=7 * i) for i in range(20)], "l_quantity <= DATE '1995-02-05'"),
])
def test_a_narrow_column_gets_a_bucket_per_value_so_a_closed_range_cuts_none(type_, values, where):
    """A bucket per sampled value, closed by the value's successor in the column's type: a closed
    range over the values is a union of whole buckets, with no boundary to scan (``[12, 13)`` of a
    DECIMAL(15,2) would hold 12.5 and be cut by ``<= 12``)."""
    from planner.costmodel.index_grid import _value_bounds

    bounds = _value_bounds(values, parse_type(type_))
    dim = GridDim("l_quantity", type_, bounds)
    c = GridCovers(_scan(where, {"l_quantity": type_}), (dim,)).cover({})
    assert not c.none and c.boundary_free, c
    for v in values:  # each sampled value alone in its bucket
        assert dim.bucket_set(dim.bucket_of(v)).point_values() == (v,)



@pytest.mark.parametrize("where, why", [
    ("x < l_orderkey", "the predicate has a clause over several columns"),
    ("upper(l_returnflag) = 'A'", "the predicate holds something the planner cannot read exactly"),
    ("l_returnflag LIKE 'a%b'", "l_returnflag LIKE 'a%b': only approximated (LIKE pattern with inner wildcards)"),
    ("l_quantity < 1 AND l_quantity > 2", ""),  # never TRUE: exact, and no cell is inside it either
])
def test_why_a_predicate_is_not_exact_is_shown_as_explain_shows_it(where, why):
    scan = _scan(where)
    assert exact(scan) == why
    cover = GridCovers(scan, DIMS).cover({})
    assert cover.none and cover.reason == (why or "the predicate is never TRUE")
    assert strictly_matching(scan, [(0, {})]) == ()


def test_a_weakened_cnf_is_not_exact():
    types = {c: parse_type(t) for c, t in COLS.items()}
    where = "(l_quantity < 1 AND x < 1) OR (l_quantity > 5 AND x > 2) OR (l_quantity = 3 AND x = 0.5)"
    groups, unused = _analyse_predicate(to_ir(sqlglot.parse_one(where, read="spark"), lambda c: c.name.lower(),
                                              "spark"), types, 2, {})
    assert groups.weakened and exact(ScanAnalysis(0, "t", groups, unused)) == "the predicate's CNF exceeded its budget"


DATES = "l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1996-07-01'"  # buckets 2, 3 inside, 4 partial


def _days(lo: str, hi: str, null: bool = False) -> ValueSet:
    vs = ValueSet.range(Kind.DATE, dt.date.fromisoformat(lo), dt.date.fromisoformat(hi))
    return vs.union(ValueSet.only_null(Kind.DATE)) if null else vs


@pytest.mark.parametrize("where, region, whole, inside, partial", [
    # the partition's own dates lie in bucket 2, inside: the partition is answered whole
    (DATES, _days("1994-03-01", "1994-06-01"), True, (), ()),
    # buckets 0 and 1 hold none of the partition's dates: skipped, not counted, and not the end
    (DATES, _days("1994-01-01", "1996-12-31"), False, (2, 3), (4,)),
    # only bucket 4 is present, and it is partial
    (DATES, _days("1996-01-01", "1996-12-31"), False, (), None),
    # NULLs: the NULL bucket is inside, and with bucket 2 it is all the partition holds
    (DATES.replace("AND", "OR l_shipdate IS NULL) AND (l_shipdate IS NULL OR").join("()"),
     _days("1994-03-01", "1994-06-01", null=True), True, (), ()),
])
def test_grid_cover_counts_only_the_buckets_a_partition_holds(where, region, whole, inside, partial):
    covers = GridCovers(_scan(where), DIMS)
    for _ in range(2):  # the second answer comes from the memo
        c = covers.cover({"l_shipdate": region})
        if partial is None:
            assert c.none and "inside single buckets" in c.reason
            continue
        assert not c.none and c.whole == whole
        assert [(d.inside, d.partial) for d in c.dims] == ([] if whole else [(inside, partial)])


def test_grid_cover_of_a_partition_without_a_matching_row():
    c = GridCovers(_scan("l_shipdate >= DATE '1995-01-01'"), DIMS).cover({"l_shipdate": _days("1993-01-01", "1993-06-01")})
    assert c.none and not c.whole and c.reason == "the partition holds no matching row"
    region = {"l_quantity": ValueSet.range(Kind.DECIMAL, D(1), D(10))}
    c = GridCovers(_scan("l_quantity > 50"), DIMS).cover(region)
    assert c.none and not c.whole and c.reason == "the partition holds no matching row"
    c = GridCovers(_scan("l_quantity < 5"), DIMS).cover(region)
    assert c.reason == "l_quantity is not a dimension of the grid, and the partition holds values of it the predicate rejects"
    c = GridCovers(_scan("l_shipdate = DATE '1994-03-01'"), DIMS).cover({})
    assert c.none and c.reason == ("the predicate on l_shipdate lies inside single buckets of the grid: no cell lies "
                                   "wholly inside it")


def test_one_grid_covers_many_partitions():
    covers = GridCovers(_scan(DATES), DIMS)
    assert covers.cover({"l_shipdate": _days("1994-03-01", "1994-06-01")}).whole
    assert not covers.cover({"l_shipdate": _days("1994-01-01", "1996-12-31")}).whole
    # buckets 2 and 3 inside, and bucket 1 (1993) holds rows that do not match: not the first one's count
    c = covers.cover({"l_shipdate": _days("1993-06-01", "1995-12-31")})
    assert not c.whole and [(d.inside, d.partial) for d in c.dims] == [((2, 3), ())]


def test_buckets_read_as_runs():
    assert runs([3, 1, 2, 5, None, 7, 8]) == ([(1, 3), (5, 5), (7, 8)], True)
    assert runs([0, 2, 4]) == ([(0, 0), (2, 2), (4, 4)], False)
    assert runs([]) == ([], False)

def _eval(e: exp.Expression, value):
    """The bucket CASE evaluated in Python (its comparisons are ``<`` with literals)."""
    if isinstance(e, exp.Case):
        for branch in e.args["ifs"]:
            cond = branch.this
            if isinstance(cond, exp.Is):
                hit = value is None
            else:
                lit = cond.expression
                bound = dt.date.fromisoformat(lit.this.this) if isinstance(lit, exp.Cast) else D(lit.this)
                hit = value is not None and value < bound
            if hit:
                return _eval(branch.args["true"], value)
        return _eval(e.args["default"], value)
    if isinstance(e, exp.Cast):
        return None if isinstance(e.this, exp.Null) else _eval(e.this, value)
    return int(e.this)


@pytest.mark.parametrize("dim", DIMS)
def test_the_build_puts_a_value_in_the_bucket_the_rewrite_reads_it_by(dim):
    case = bucket_expr(dim)
    lo, hi = dim.bounds[0], dim.bounds[-1]
    probes = [None, *dim.bounds]
    if isinstance(lo, D):
        probes += [lo - D("0.01"), hi + D("0.01"), D("0.05")]
    else:
        probes += [lo - dt.timedelta(days=1), hi + dt.timedelta(days=1), dt.date(1995, 6, 30)]
    for v in probes:
        k = _eval(case, v)
        assert k == dim.bucket_of(v), v
        if k is not None:
            assert dim.bucket_set(k).contains(v)


# ---- the rewrite ----------------------------------------------------------------------------------
INDEX = AggregateIndex(DIMS, (("l_returnflag", "string"),),
                       (IndexedExpr("`l_extendedprice` * `l_discount`", "decimal(31,4)"),
                        IndexedExpr("`l_quantity`", "decimal(15,2)")))


def _layout(index=INDEX) -> Layout:
    q = Kind.DECIMAL
    parts = (Partition(1, (("l_quantity", ValueSet.range(q, None, D(25), True, False)),)),
             Partition(2, (("l_quantity", ValueSet.range(q, D(25), None, True, True).union(ValueSet.only_null(q))),)))
    return with_generation(Layout(TABLE, "test", parts, Ordering("sort", ("l_shipdate",)), kinds=(("l_quantity", q),),
                                  types=(("l_quantity", "decimal(15,2)"),), aggregate_index=index))


def _ctx(layout, why="", bounds=(1e12, 1e9)):
    state = CellsState("stamp1", "snap", layout.generation, INDEX.digest, "tpch.lineitem__cells", 6_000_000, 1000,
                       bounds)
    return {TABLE: IndexContext(INDEX, state, why)}


Q6 = ("SELECT sum(l_extendedprice * l_discount) AS revenue FROM tpch.lineitem WHERE l_shipdate >= DATE '1994-01-01' "
      "AND l_shipdate < DATE '1995-03-01' AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 25")


def test_q6_reads_interior_cells_from_the_index_and_scans_the_boundary():
    layout = _layout()
    text, notes, ex = rewrite_statement(Q6, {TABLE: layout}, dialect="spark", schema={TABLE: COLS},
                                        indexes=_ctx(layout))
    assert ex.used, ex.reason
    tree = sqlglot.parse_one(text, read="spark")  # what it emits parses back
    cells = [t for t in tree.find_all(exp.Table) if t.name == "lineitem__cells"]
    assert len(cells) == 3  # the cells, and the head counted once for each side
    assert "`planner_stamp` = 'stamp1'" in text and "`planner_part` = 'head'" in text
    assert "CAST(SUM(`planner_e0_sum`) AS DECIMAL(38, 4)) AS revenue" in text
    assert "`planner_b1` = 2" in text  # l_shipdate's interior bucket: 1994
    assert "`l_shipdate` >= CAST('1995-01-01' AS DATE)" in text  # the boundary bucket 1995 is scanned
    assert ex.whole == () and any("interior" in line for line in ex.interior)


def test_the_index_declines_what_it_cannot_answer_exactly():
    layout = _layout()
    cases = {
        "SELECT sum(l_quantity * 2) FROM tpch.lineitem": "does not keep",
        "SELECT l_orderkey, count(*) FROM tpch.lineitem GROUP BY l_orderkey": "group column",
        "SELECT count(*) FROM tpch.lineitem WHERE l_extendedprice > l_discount": "not a dimension",
        "SELECT count(*) FROM tpch.lineitem WHERE l_returnflag = 'it''s'": "",  # read differently by sqlglot and Spark
        "SELECT count(DISTINCT l_quantity) FROM tpch.lineitem": "DISTINCT",
    }
    for sql, why in cases.items():
        text, _, ex = rewrite_statement(sql, {TABLE: layout}, dialect="spark", schema={TABLE: COLS},
                                        indexes=_ctx(layout))
        assert ex is not None and not ex.used and why in ex.reason, (sql, ex)
        assert "__cells" not in text
    _, _, ex = rewrite_statement(Q6, {TABLE: layout}, dialect="spark", schema={TABLE: COLS},
                                 indexes=_ctx(layout, why="the table changed since the index was built"))
    assert not ex.used and "changed" in ex.reason
    _, _, ex = rewrite_statement(Q6, {TABLE: layout}, dialect="spark", schema={TABLE: COLS},
                                 indexes=_ctx(layout, bounds=(1e40, 1e9)))
    assert not ex.used and "overflow" in ex.reason
    scans, ex = explain_statement(Q6, {TABLE: layout}, dialect="spark", schema={TABLE: COLS}, indexes=_ctx(layout))
    assert ex.used and ex.lines()[0].startswith("aggregate index tpch.lineitem__cells")


def test_unaliased_aggregates_keep_sparks_column_names():
    layout = _layout()
    sql = "SELECT l_returnflag, count(*), sum(l_quantity), avg(l.l_quantity) FROM tpch.lineitem l GROUP BY l_returnflag"
    text, _, ex = rewrite_statement(sql, {TABLE: layout}, dialect="spark", schema={TABLE: COLS}, indexes=_ctx(layout))
    assert ex.used
    assert "AS `count(1)`" in text and "AS `sum(l_quantity)`" in text and "AS `avg(l_quantity)`" in text


def test_overflow_proofs():
    assert _overflow("sum", parse_type("bigint"), 2.0 ** 61) == ""
    assert "overflow" in _overflow("sum", parse_type("bigint"), 2.0 ** 63)
    assert "overflow" in _overflow("avg", parse_type("int"), 2.0 ** 54)  # beyond exact doubles
    assert _overflow("sum", parse_type("decimal(38,18)"), 1e15) == ""
    assert "overflow" in _overflow("sum", parse_type("decimal(38,18)"), 1e20)
    assert _overflow("min", parse_type("decimal(38,18)"), None) == ""
    assert _overflow("sum", parse_type("double"), None) == ""
    # the limits themselves overflow: a sum must stay strictly below them
    assert "overflow" in _overflow("sum", parse_type("bigint"), 2.0 ** 62)
    assert "overflow" in _overflow("sum", parse_type("decimal(5,2)"), 5e12)  # 2 * 5e12 = 10^13: the type's room
    assert _overflow("sum", parse_type("decimal(5,2)"), 4e12) == ""
    # DECIMAL(15,2): the sum is a DECIMAL(25,2), 10^23 of room
    assert "overflow" in _overflow("sum", parse_type("decimal(15,2)"), 1e23)
    assert _overflow("sum", parse_type("decimal(15,2)"), 4e22) == ""
    # an average divides at scale s + 4 (here 14): less room than the sum's 10^28
    assert _overflow("sum", parse_type("decimal(38,10)"), 1e25) == ""
    assert "overflow" in _overflow("avg", parse_type("decimal(38,10)"), 1e25)
    assert _overflow("avg", parse_type("decimal(38,10)"), 4e23) == ""
    # scale s + 4 capped at 38; a scale below 2 shifted by 10^k (k = 6 - (s + 4))
    assert _overflow("avg", parse_type("decimal(38,35)"), 0.3) == ""
    # (the quotient is typed DECIMAL(38, 6) before it is multiplied back: 10^32 of room)
    assert _overflow("avg", parse_type("decimal(38,1)"), 4.9e31) == ""
    assert "overflow" in _overflow("avg", parse_type("decimal(38,1)"), 5e31)
    assert "overflow" in _overflow("avg", parse_type("decimal(38,0)"), 5e31)


# ---- the build's SQL, the stored forms ------------------------------------------------------------
def test_build_statements_parse_and_name_every_cell_column():
    stmts = build_statements(INDEX, TABLE, "tpch.lineitem__cells", "s1")
    for s in stmts + drop_stamps("tpch.lineitem__cells", ["s0"]):
        sqlglot.parse_one(s, read="spark")
    cols = cells_columns(INDEX)
    assert cols["planner_e0_sum"] == "decimal(38,4)" and cols["planner_e1_sum"] == "decimal(25,2)"
    assert list(cols)[:4] == ["planner_pid", "planner_b0", "planner_b1", "planner_g0"]
    assert "PARTITION(`planner_stamp` = 's1', `planner_part` = 'head')" in stmts[2]


def test_the_build_sorts_its_cells_only_when_they_may_fill_many_pages():
    """Up to ``SORTED_CELLS`` cells a query reads them all in no time: the build skips its SORT BY,
    and the cost model prices every cell as read. Beyond (or with group columns, whose values are
    unknown) it sorts them by the cell key."""
    from planner.emit.cells_sql import cells_select
    from planner.model.aggregate_index import SORTED_CELLS, sorts_cells

    small = replace(INDEX, groups=())
    bound = 3 * (DIMS[0].buckets + 1) * (DIMS[1].buckets + 1)  # 2 partitions and the catch-all
    assert bound <= SORTED_CELLS and not sorts_cells(small, 2)
    assert sorts_cells(INDEX, 2)  # a group column
    wide = replace(small, dims=(replace(DIMS[0], bounds=tuple(range(SORTED_CELLS))),))
    assert sorts_cells(wide, 0)
    assert " SORT BY " not in build_statements(small, TABLE, "tpch.lineitem__cells", "s1", sort=False)[1]
    assert " SORT BY " in build_statements(INDEX, TABLE, "tpch.lineitem__cells", "s1")[1]
    assert cells_select(small, TABLE, sort=False).args.get("sort") is None


def test_a_builds_view_reads_its_cells_and_is_redirected_to_the_query_computing_them():
    """The view saved SQL reads: the build's stored cells; its property, the cells query itself
    (without the build's SORT BY), which ``redirected_view`` puts in its place, keeping the property
    so that a second redirect gives the same statement."""
    from planner.emit.cells_sql import FALLBACK_PROPERTY, cells_select, cells_view_statement, redirected_view

    stmt = sqlglot.parse_one(cells_view_statement(INDEX, TABLE, "tpch.lineitem__cells", "s1"), read="spark")
    assert isinstance(stmt, exp.Create) and stmt.kind == "VIEW" and stmt.args.get("replace")
    assert stmt.this.sql("spark") == "`tpch`.`lineitem__cells_s1`"
    reading = stmt.expression
    assert reading.find(exp.Table).sql("spark") == "`tpch`.`lineitem__cells`"
    assert "`planner_stamp` = 's1' AND `planner_part` = 'cells'" in reading.sql("spark")
    assert [c.name for c in reading.expressions] == list(cells_columns(INDEX))
    prop = next(p for p in stmt.find(exp.Properties).expressions if p.name == FALLBACK_PROPERTY)
    fallback = prop.args["value"].this
    redirected = redirected_view("tpch.lineitem__cells_s1", fallback)
    computing = sqlglot.parse_one(redirected, read="spark").expression
    want = cells_select(INDEX, TABLE, sort=False)
    assert computing.sql("spark") == want.sql("spark") and computing.args.get("sort") is None
    assert redirected_view("tpch.lineitem__cells_s1", fallback) == redirected
    assert f"'{FALLBACK_PROPERTY}'='{fallback}'" in redirected
    with pytest.raises(ValueError):
        redirected_view("tpch.lineitem__cells_s1", "not hex")
    from planner.emit.advice_folder import _cells_text  # apply.sql's comments name the view too

    assert "-- then CREATE OR REPLACE VIEW tpch.lineitem__cells_<stamp> AS the build's cells" in _cells_text(_layout())


def test_a_view_the_table_can_no_longer_compute_is_dropped_and_no_build_means_no_statement():
    """A table made again under the same name without the layout, beside the old cells table: its
    builds' views cannot be pointed at it (no ``planner_pid``). Each such view is dropped, said so,
    and the others redirected; saved SQL then fails loudly instead of reading old cells."""
    from hive_integration.spark.cells import redirect
    from planner.emit.cells_sql import FALLBACK_PROPERTY, cells_select

    fallback = cells_select(INDEX, TABLE, sort=False).sql("spark").encode("utf-8").hex()
    ran, said = [], []

    def execute(sql: str) -> list:
        ran.append(sql)
        if sql.startswith("SHOW VIEWS"):
            return [("tpch", "lineitem__cells_s1", False), ("tpch", "lineitem__cells_s2", False)]
        if sql.startswith("SHOW TBLPROPERTIES"):
            return [(FALLBACK_PROPERTY, fallback)]
        if sql.startswith("CREATE OR REPLACE VIEW `tpch`.`lineitem__cells_s1`"):  # as SparkError wraps Spark's
            raise RuntimeError(f"running `{sql[:300]}`: …") from ValueError("[UNRESOLVED_COLUMN] `planner_pid`")
        return []

    redirect(execute, TABLE, {"s1", "s2"}, said.append)
    assert "DROP VIEW IF EXISTS `tpch`.`lineitem__cells_s1`" in ran
    assert any(q.startswith("CREATE OR REPLACE VIEW `tpch`.`lineitem__cells_s2`") for q in ran)
    assert not any("DROP VIEW" in q and "s2" in q for q in ran)
    assert len(said) == 1 and "lineitem__cells_s1 was dropped" in said[0]
    assert "([UNRESOLVED_COLUMN] `planner_pid`)" in said[0] and "CREATE" not in said[0]
    ran.clear()
    redirect(execute, TABLE, set())
    assert ran == []  # no build, no statement


def test_a_dimension_with_a_bucket_per_value_is_grouped_by_the_value_then_bucketed():
    """The staged build: the inner aggregation groups by the values of ``by_value`` dimensions (no
    bucket search on every row), the outer one buckets the groups and merges their partials, sums
    cast back to the cells' types. The columns and their order are the one-stage build's."""
    from planner.emit.cells_sql import cells_select

    staged = replace(INDEX, dims=(replace(INDEX.dims[0], by_value=True),) + INDEX.dims[1:])
    q = cells_select(staged, TABLE)
    inner = q.find(exp.Subquery).this
    assert "`l_discount` AS `planner_v0`" in inner.sql("spark") and "planner_b0" not in inner.sql("spark")
    outer = q.sql("spark").split(" FROM (")[0]
    assert "CAST(SUM(`planner_e0_sum`) AS DECIMAL(38, 4)) AS `planner_e0_sum`" in outer
    assert "MIN(`planner_e0_min`)" in outer and "CAST(SUM(`planner_n`) AS BIGINT)" in outer
    assert [e.alias for e in q.expressions] == [e.alias for e in cells_select(INDEX, TABLE).expressions]
    assert GridDim.from_json(staged.dims[0].to_json()) == staged.dims[0]
    assert "by_value" not in INDEX.dims[0].to_json()  # an older index keeps its digest


def test_a_range_dimension_marked_grouped_is_staged_too():
    """A range dimension over few values (``grouped``, a date) is grouped by the value first as well,
    its range buckets searched on the groups: the same cells as the one-stage build."""
    from planner.emit.cells_sql import cells_select

    grouped = replace(INDEX, dims=INDEX.dims[:1] + (replace(INDEX.dims[1], grouped=True),) + INDEX.dims[2:])
    assert grouped.dims[1].staged and not grouped.dims[1].by_value
    inner = cells_select(grouped, TABLE).find(exp.Subquery).this.sql("spark")
    assert f"`{INDEX.dims[1].column}` AS `planner_v1`" in inner and "planner_b1" not in inner
    assert "`planner_b0`" in inner  # the other range dimension is still searched on every row
    outer = cells_select(grouped, TABLE).sql("spark").split(" FROM (")[0]
    assert bucket_expr(INDEX.dims[1], exp.column("planner_v1", quoted=True)).sql("spark") in outer
    assert GridDim.from_json(grouped.dims[1].to_json()) == grouped.dims[1]
    assert "grouped" not in INDEX.dims[1].to_json()  # an older index keeps its digest


def test_a_range_dimension_is_grouped_for_the_build_only_where_its_values_are_few():
    """The days of a ship date (2,520) times the discounts' values (11) are far fewer than the rows:
    the build groups by the date first. Prices are nearly one per row: searched on every row. With
    fewer rows than eight times the groups, nothing more is grouped."""
    from planner.analysis.table_analysis import analyze_table
    from planner.costmodel.cost import CostModel, CostParams
    from planner.costmodel.index_grid import GROUPED_SHARE, grouped_for_build
    from planner.workload import parse_workload

    wl = parse_workload(_q6(4), schema=Schema({"lineitem": ADVISE_COLS}), tables=["lineitem"])
    dims = (GridDim("l_extendedprice", "decimal(15,2)", (D("1000.00"), D("50000.00"))),
            GridDim("l_shipdate", "date", (dt.date(1994, 1, 1), dt.date(1995, 1, 1))),
            GridDim("l_discount", "decimal(15,2)", tuple(D(i) / 100 for i in range(12)), by_value=True))
    index = AggregateIndex(dims, (), (IndexedExpr("`l_extendedprice` * `l_discount`", "decimal(31,4)"),))

    def grouped(rows: int) -> list[bool]:
        model = CostModel(analyze_table(wl, "lineitem", ADVISE_COLS), replace(_stats(), rows=rows),
                          CostParams(row_group_rows=100_000))
        got = grouped_for_build(model, index)
        assert [d.bounds for d in got.dims] == [d.bounds for d in dims] and got.dims[2].staged
        return [d.grouped for d in got.dims]

    assert grouped(N_ROWS) == [False, True, False]
    days = len(set(_stats().sample.column("l_shipdate").to_pylist()))
    assert grouped(int(days * 11 / GROUPED_SHARE) - 1) == [False, False, False]


def test_the_index_travels_with_the_layout_and_its_state_with_the_table():
    layout = _layout()
    back = Layout.loads(layout.dumps())
    assert back == layout and back.aggregate_index.digest == INDEX.digest
    state = _ctx(layout)[TABLE].state
    assert CellsState.from_properties(state.properties()) == state
    assert CellsState.from_properties({"planner.cells": "zz"}) is None


# ---- advise: the index is a contender, priced in seconds like the rest ----------------------------
N_ROWS, SAMPLE_ROWS = 120_000_000, 10_000
ADVISE_COLS = {"l_orderkey": "bigint", "l_quantity": "decimal(15,2)", "l_extendedprice": "decimal(15,2)",
               "l_discount": "decimal(15,2)", "l_shipdate": "date", "l_comment": "string"}


def _stats():
    import numpy as np
    import pyarrow as pa

    from planner.costmodel.statistics import ColumnStats, TableStats

    rng = np.random.default_rng(3)
    n = SAMPLE_ROWS
    cents = lambda a: pa.array([D(int(v)).scaleb(-2) for v in a], pa.decimal128(15, 2))  # noqa: E731
    sample = pa.table({
        "l_orderkey": pa.array(np.sort(rng.integers(0, N_ROWS // 4, n)), pa.int64()),
        "l_quantity": cents(rng.integers(1, 51, n) * 100),
        "l_extendedprice": cents(rng.integers(90_000, 10_500_000, n)),
        "l_discount": cents(rng.integers(0, 11, n)),
        "l_shipdate": pa.array([dt.date(1992, 1, 2) + dt.timedelta(days=int(d)) for d in rng.integers(0, 2_520, n)],
                               pa.date32()),
        "l_comment": pa.array([f"c{v}" for v in rng.integers(0, 10**9, n)], pa.string()),
    })
    widths = {"l_orderkey": 4.0, "l_quantity": 1.0, "l_extendedprice": 5.0, "l_discount": 0.5, "l_shipdate": 2.0,
              "l_comment": 20.0}
    columns = tuple(ColumnStats(c, t, widths[c]) for c, t in ADVISE_COLS.items())
    return TableStats("lineitem", N_ROWS, int(N_ROWS * sum(widths.values())), columns, sample,
                      row_group_rows=100_000)


def _q6(n: int) -> str:
    import random

    r = random.Random(n)
    out = []
    for _ in range(n):
        y, d, q = r.randint(1993, 1997), r.randint(2, 9), r.randint(24, 25)
        out.append(f"SELECT sum(l_extendedprice * l_discount) AS revenue FROM lineitem WHERE l_shipdate >= "
                   f"DATE '{y}-01-01' AND l_shipdate < DATE '{y + 1}-01-01' AND l_discount BETWEEN "
                   f"0.0{d - 1} AND 0.0{d + 1} AND l_quantity < {q};\n")
    return "".join(out)


def _advise(text: str, time: TimeParams = TimeParams()):
    from planner.advice.ranking import advise
    from planner.analysis.table_analysis import analyze_table
    from planner.costmodel.cost import CostParams
    from planner.workload import parse_workload

    wl = parse_workload(text, schema=Schema({"lineitem": ADVISE_COLS}), tables=["lineitem"])
    return advise(wl, analyze_table(wl, "lineitem", ADVISE_COLS), _stats(),
                  CostParams(row_group_rows=100_000, allow_regressions=True, time=time))


def test_advise_picks_an_aggregate_index_where_it_pays():
    """Q6 variants: no layout reads fewer rows than match; interior cells from the index do. It pays
    where reading the matching rows costs more than planning the rewrite's extra relations: priced
    with SLOW_SCANS, as on a table 1000x larger."""
    advice = _advise(_q6(12), SLOW_SCANS)
    best = advice.result.best
    assert best.layout.aggregate_index is not None, [c.layout.strategy for c in advice.result.ranked[:6]]
    assert best.layout.strategy.endswith(" + aggregate index")
    index = best.layout.aggregate_index
    assert [e.sql for e in index.exprs] == ["`l_extendedprice` * `l_discount`"]
    assert {d.column for d in index.dims} <= {"l_shipdate", "l_discount", "l_quantity"}
    price = dict(best.layout.meta)["aggregate_index_price"]
    assert price["served"] > 0 and price["seconds_after"] < price["seconds_before"]
    assert price["bytes"] <= 0.02 * advice.stats.bytes
    # ranked against the same layout without the index, by the same score
    plain = next(c for c in advice.result.ranked
                 if c.layout.strategy == best.layout.strategy.removesuffix(" + aggregate index"))
    assert best.seconds < plain.seconds and plain.layout.aggregate_index is None
    # the advice folder: report.md shows it, apply.sql carries the build as comments
    from planner.emit.advice_folder import apply_text, report_text
    from planner.emit.apply_sql import backup_name

    layout = advice.recorded(best) if hasattr(advice, "recorded") else best.layout
    report = report_text(layout, advice)
    assert "## Aggregate index" in report and "Layouts with and without the index" in report
    text = apply_text(layout, ADVISE_COLS, [], backup_name(layout.table, dt.datetime(2026, 1, 1), "hive", layout=layout))
    assert "-- INSERT OVERWRITE TABLE `lineitem__cells`" in text
    assert all(line.startswith("--") for line in text.split("aggregate index: what")[1].splitlines()[1:] if line)


def test_the_index_is_declined_where_the_rewrite_costs_more_than_it_saves():
    """On 120M rows the month-and-discount layouts leave each Q6 variant ~2M rows. With the shipped
    time model the index saves a little of that (the best pick carries it); where Spark takes longer
    to plan a query (the rewrite's extra relations cost more), the search keeps no index, even with
    regressions allowed."""
    advice = _advise(_q6(12))
    assert advice.result.best.layout.aggregate_index is not None
    slow_planning = _advise(_q6(12), replace(TimeParams(), query=4 * TimeParams().query))
    assert slow_planning.result.best.layout.aggregate_index is None
    assert slow_planning.result.best.layout.strategy.startswith("cps:")


def test_advise_adds_no_index_without_aggregates():
    advice = _advise("".join(f"SELECT * FROM lineitem WHERE l_shipdate >= DATE '199{y}-01-01' AND l_shipdate < "
                             f"DATE '199{y}-03-01';\n" for y in range(2, 9)))
    assert all(c.layout.aggregate_index is None for c in advice.result.ranked)
    assert "aggregate_index_price" not in dict(advice.result.best.layout.meta)


def test_the_index_is_priced_as_the_next_query_of_its_template_sees_it():
    """The grid is cut at the workload's own constants too, so the advised queries have no boundary
    cell at all; the next query of a template has other constants and does. The price must be the
    second (on the held-out Q6 variants at SF 1, a price on the first had every served query read
    nothing from the table, where Spark read as much as without the index:
    ``benchmarks/results/agg_index_sf1.md``)."""
    from planner.costmodel.aggregate_index import choose_index, price_index
    from planner.costmodel.cost import CostModel
    from planner.costmodel.index_grid import aggregate_scans, derive_index

    advice = _advise(_q6(12))
    model = CostModel(advice.analysis, advice.stats, replace(advice.params, time=SLOW_SCANS))  # where it pays
    queries = aggregate_scans(model, advice.workload)
    # one sorted partition: no partition line cuts the grid's cells, so boundary cells are read
    plain = next(c.layout for c in advice.result.ranked
                 if len(c.layout.partitions) == 1 and c.layout.order.method == "sort")
    cost = model.evaluate(replace(plain, aggregate_index=None))
    index = derive_index(model, queries, 32, 3)
    own = price_index(model, cost, queries, index)
    held = price_index(model, cost, queries, index, seen_as=derive_index(model, queries, 32, 3, constants=False))
    assert own.served and own.rows_after == 0  # every advised query lies on the grid's lines
    assert held.rows_after > 0  # its successors do not
    chosen = choose_index(model, cost, queries)
    assert chosen.index is None or chosen.rows_after > 0


def test_a_query_reads_every_cell_of_an_unsorted_index_and_the_pages_it_needs_of_a_sorted_one():
    """The price follows the build (``sorts_cells``): unsorted cells are read whole, sorted ones by
    the pages holding the query's interior cells."""
    from planner.costmodel.aggregate_index import price_index
    from planner.costmodel.cost import CostModel
    from planner.costmodel.index_grid import aggregate_scans, derive_index
    from planner.model.aggregate_index import PAGE_ROWS, sorts_cells

    advice = _advise(_q6(12))
    model = CostModel(advice.analysis, advice.stats, replace(advice.params, time=SLOW_SCANS))
    queries = aggregate_scans(model, advice.workload)
    plain = next(c.layout for c in advice.result.ranked
                 if len(c.layout.partitions) == 1 and c.layout.order.method == "sort")
    cost = model.evaluate(replace(plain, aggregate_index=None))
    small, large = derive_index(model, queries, 16, 3), derive_index(model, queries, 64, 3)
    assert not sorts_cells(small, 1) and sorts_cells(large, 1)
    unsorted, ordered = price_index(model, cost, queries, small), price_index(model, cost, queries, large)
    assert unsorted.served and all(s.index_rows == max(unsorted.cells, 1.0) for s in unsorted.served)
    assert ordered.served and all(s.index_rows % PAGE_ROWS == 0 for s in ordered.served)
    assert any(s.index_rows < ordered.cells for s in ordered.served)


def test_a_query_the_rewrite_answers_through_the_index_is_priced_even_when_slower():
    """The rewrite takes cells from the index for every query with a cell inside its box, whatever
    its boundary and its extra relations cost; so the price counts each such query, slower or not
    (where Spark plans a query slowly, every served one is slower), and such an index is declined."""
    from planner.costmodel.aggregate_index import price_index
    from planner.costmodel.cost import CostModel
    from planner.costmodel.index_grid import aggregate_scans, derive_index

    advice = _advise(_q6(12))
    slow = replace(advice.params.time, query=40 * advice.params.time.query)
    model = CostModel(advice.analysis, advice.stats, replace(advice.params, time=slow))
    queries = aggregate_scans(model, advice.workload)
    cost = model.evaluate(replace(advice.result.best.layout, aggregate_index=None))
    index = derive_index(model, queries, 64, 3)
    price = price_index(model, cost, queries, index, seen_as=derive_index(model, queries, 64, 3, constants=False))
    assert price.served and all(s.seconds > cost.per_scan[s.scan].seconds for s in price.served)
    assert price.seconds_after > price.seconds_before and price.index is None and "saves" in price.declined


def test_the_largest_value_of_a_narrow_column_is_a_bucket_of_its_own():
    """``l_discount = 0.10`` (the largest discount) is a whole bucket, not a part of [0.10, +inf):
    the held-out ``q-d`` lookups on it were refused (``lies inside single buckets``)."""
    from planner.cnf.valueset import ValueSet
    from planner.costmodel.cost import CostModel
    from planner.costmodel.index_grid import aggregate_scans, derive_index

    advice = _advise(_q6(12))
    model = CostModel(advice.analysis, advice.stats, advice.params)
    dim = next(d for d in derive_index(model, aggregate_scans(model, advice.workload), 32, 3).dims
               if d.column == "l_discount")
    assert dim.bounds[-1] == D("0.11")
    assert dim.bucket_set(dim.bucket_of(D("0.10"))) == ValueSet.range(dim.kind, D("0.10"), D("0.10"), True, True)
    assert dim.bucket_of(D("0.12")) == dim.buckets - 1  # a value the sample never saw: the last bucket


# ---- the rewritten SQL, golden ------------------------------------------------------------------
GOLDEN = Path(__file__).resolve().parent / "golden" / "aggregate_rewrite.txt"
GOLDEN_QUERIES = (
    Q6,
    "SELECT l_returnflag, count(*), count(l_quantity) AS n, sum(l_quantity), avg(l_quantity) AS a, "
    "min(l_quantity), max(l_quantity) FROM tpch.lineitem WHERE l_shipdate >= DATE '1994-01-01' "
    "AND l_shipdate < DATE '1996-01-01' GROUP BY l_returnflag",
    "SELECT count(*) FROM tpch.lineitem WHERE l_discount BETWEEN 0.02 AND 0.09",
    "SELECT sum(l_extendedprice * l_discount) FROM tpch.lineitem WHERE l_quantity >= 25",
    "SELECT avg(l_quantity) AS a, sum(l_quantity) FROM tpch.lineitem WHERE l_shipdate < DATE '1994-01-01' "
    "OR l_shipdate IS NULL",
    "SELECT l_returnflag, sum(l_quantity) AS s FROM tpch.lineitem WHERE l_discount >= 0.03 GROUP BY l_returnflag "
    "HAVING sum(l_quantity) > 10 ORDER BY s DESC LIMIT 3",
    "SELECT count(*) FROM tpch.lineitem WHERE l_discount = 0.05",
    "SELECT sum(l_orderkey) FROM tpch.lineitem WHERE l_discount >= 0.05",
    "SELECT max(l_quantity) FROM tpch.lineitem",
)


def aggregate_golden() -> str:
    """The text of ``tests/golden/aggregate_rewrite.txt``: each query's rewrite over the test layout
    with its aggregate index, and what explain says of the index."""
    layout = _layout()
    out = []
    for q in GOLDEN_QUERIES:
        text, _, ex = rewrite_statement(q, {TABLE: layout}, dialect="spark", schema={TABLE: COLS},
                                        indexes=_ctx(layout))
        out += ["-- " + q, sqlglot.parse_one(text, read="spark").sql("spark", pretty=True) + ";"]
        out += ["-- explain: " + line for line in (ex.lines() if ex is not None else ["(no index applies)"])]
        out.append("")
    return "\n".join(out)


def test_rewritten_aggregates_match_the_golden_file():
    assert GOLDEN.read_text(encoding="utf-8") == aggregate_golden(), \
        "the aggregate rewrite changed: ./dev golden, then read git diff tests/golden/"


def test_planner_status_tells_whether_queries_use_the_index_and_through_which_view():
    """``planner status``'s section on the index: its grid, its last build, the view saved SQL reads
    it through, and why queries do not use it when they do not."""
    from planner.advice.layout_status import IndexStatus

    state = CellsState("s1", "snap", 3, INDEX.digest, "tpch.lineitem__cells", 6_000_000, 1650, (1.0,),
                       built_at="2026-11-29T19:00:00Z", bytes=3 * 2**20, view=True)
    used = IndexStatus(INDEX, state)
    assert used.used and used.view == "tpch.lineitem__cells_s1"
    text = "\n".join(used.lines())
    assert INDEX.describe() in text and "1,650 cells (3.0 MiB) for 6,000,000 rows" in text
    assert "through the view tpch.lineitem__cells_s1" in text and "queries answer from it" in text
    assert used.to_json()["build"]["view"] == "tpch.lineitem__cells_s1" and used.to_json()["used"] is True
    stale = IndexStatus(INDEX, replace(state, view=False), "the table changed since the index was built")
    assert not stale.used and stale.view == "" and stale.to_json()["build"]["view"] is None
    assert "queries do not use it: the table changed" in "\n".join(stale.lines())
    unbuilt = IndexStatus(INDEX, None, "the index is not built")
    assert not unbuilt.used and unbuilt.to_json()["build"] is None and "last build" not in "\n".join(unbuilt.lines())

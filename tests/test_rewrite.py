"""Query rewriting: scans of laid-out tables narrowed to the partitions they may need.

The property test checks the safety rule: for random predicates, every row the predicate accepts
lives in a partition the rewrite still reads. The one Spark test applies a layout for real and
compares per-partition counts and query results.
"""
from __future__ import annotations

import datetime as dt
from decimal import Decimal

import sqlglot
from hypothesis import given, settings
from hypothesis import strategies as st
from rewrite_entry import explain_query, rewrite_query
from sizes import examples
from sqlglot import exp
from test_emit import (
    evaluate,  # tests/ is on sys.path (pytest's rootdir-relative import)
)

import planner
from planner.cnf.ir import ColumnPair
from planner.cnf.valueset import Interval, ValueSet
from planner.emit import apply_statements, create_table_sql, region_contains
from planner.model.layout import CATCH_ALL, Layout, Ordering, Partition
from planner.semantics.kinds import Kind

D = dt.date
PAIR = "a < b"
COLS = {"id": "bigint", "d": "date", "amt": "decimal(15,2)", "s": "string", "a": "date", "b": "date"}
SCHEMA = {"db.t": COLS, "db.o": {"oid": "bigint", "oname": "string"}}
WEIRD = ["it's", "back\\slash", "new\nline", "ü;--/=%"]


def _incompressible(n: int) -> str:
    """``n`` letters zlib cannot shrink much (the layout is stored compressed)."""
    import random
    import string
    return "".join(random.Random(n).choices(string.ascii_letters, k=n))


def vs_range(kind, lo, hi, null=False):
    return ValueSet.of(kind, [Interval(lo, hi, lo is not None, False)], null)


def layout() -> Layout:
    late = vs_range(Kind.DATE, D(1995, 1, 1), None)
    parts = (
        Partition(1, (("d", vs_range(Kind.DATE, None, D(1995, 1, 1))),)),
        Partition(2, (("d", late), (PAIR, ValueSet.points(Kind.BOOLEAN, [True])))),
        Partition(3, (("d", late), (PAIR, ValueSet.of(Kind.BOOLEAN, [Interval(False, False, True, True)], True)))),
        Partition(4, (("d", ValueSet.only_null(Kind.DATE)), ("s", ValueSet.points(Kind.STRING, WEIRD)))),
        Partition(5, (("d", ValueSet.only_null(Kind.DATE)),
                      ("s", ValueSet.points(Kind.STRING, WEIRD).complement()))),
    )
    return Layout("db.t", "test", parts,
                  Ordering("zorder", ("d", "amt"), ((D(1993, 1, 1), D(1996, 1, 1)), (Decimal("10"), Decimal("50.5")))),
                  (("d", Kind.DATE), (PAIR, Kind.BOOLEAN), ("s", Kind.STRING)),
                  ((PAIR, ColumnPair("a", "<", "b")),), meta=(("statistics_snapshot", _incompressible(5000)),))


LAYOUTS = {"db.t": layout()}


def rw(sql):
    return rewrite_query(sql, LAYOUTS, dialect="spark", schema=SCHEMA)


def read_sets(new_sql):
    """The ids each partition filter lists (``planner_pid IN (…) OR NOT planner_pid BETWEEN …``)."""
    out = []
    for w in sqlglot.parse_one(new_sql, read="spark").find_all(exp.Where):
        ins = [i for i in w.find_all(exp.In) if i.this.name == "planner_pid" and i.find_ancestor(exp.Where) is w]
        if ins:
            out.append(tuple(int(x.this) for x in ins[0].expressions))
    return out


# ---- shapes ---------------------------------------------------------------------------------------
def test_simple_filter_reads_one_partition_plus_catch_all():
    new, notes = rw("SELECT * FROM db.t WHERE d < '1994-06-01'")
    assert read_sets(new) == [(0, 1)]
    assert notes[0].rewritten and notes[0].partitions_total == 6
    sub = sqlglot.parse_one(new, read="spark").find(exp.Subquery)
    assert sub.alias == "t" and [c.name for c in sub.this.expressions] == list(COLS)


def test_unprunable_query_is_returned_unchanged():
    for q in ["SELECT count(*) FROM db.t WHERE amt > 5", "select * from db.o where oid = 1",
              "SELECT id, s FROM db.t WHERE d < '1994-01-01' OR amt = 3"]:
        new, notes = rw(q)
        assert new == q
        assert all(not n.rewritten for n in notes)


def test_star_never_shows_the_partition_column():
    # Found by tests/test_equivalence.py: an unprunable SELECT * ran as written and returned
    # planner_pid too. It now reads every partition through the subquery, which leaves it out.
    for q, star in [("SELECT  *  FROM db.t   -- all of it", "*"),
                    ("SELECT x.* FROM db.t x WHERE d < '1994-01-01' OR amt = 3", "x.*"),
                    ("SELECT to_json(struct(*)) FROM db.t", "TO_JSON(STRUCT(*))")]:
        new, notes = rw(q)
        select = sqlglot.parse_one(new, read="spark")
        assert select.expressions[0].sql(dialect="spark") == star and read_sets(new) == []
        sub = select.find(exp.Subquery)
        assert [c.name for c in sub.this.expressions] == list(COLS) and sub.this.args.get("where") is None
        assert notes[0].rewritten and notes[0].partitions_read == tuple(range(6))
    assert rw("SELECT  *  FROM db.t   -- all of it")[0].count("all of it") == 1


def test_derived_attribute_and_join():
    new, notes = rw("SELECT x.id, o.oname FROM db.t x JOIN db.o o ON x.id = o.oid "
                    "WHERE x.d >= DATE '1996-01-01' AND x.a < x.b")
    assert read_sets(new) == [(0, 2)]
    assert "AS x JOIN" in new


def test_outer_join_sides():
    # The preserved side of a LEFT JOIN cannot be filtered by ON; the null-extended side can.
    new, _ = rw("SELECT * FROM db.t x LEFT JOIN db.o o ON x.id = o.oid AND x.d IS NULL")
    assert new == ("SELECT * FROM (SELECT `id`, `d`, `amt`, `s`, `a`, `b` FROM db.t) AS x LEFT JOIN db.o o "
                   "ON x.id = o.oid AND x.d IS NULL")  # every partition, but not planner_pid
    new, _ = rw("SELECT * FROM db.o o LEFT JOIN db.t x ON x.id = o.oid AND x.d IS NULL")
    assert read_sets(new) == [(0, 4, 5)]
    new, _ = rw("SELECT * FROM db.o o FULL JOIN db.t x ON x.id = o.oid AND x.d IS NULL")
    assert read_sets(new) == []


def test_cte_subquery_union_and_self_join():
    q = ("WITH early AS (SELECT id FROM db.t WHERE d < '1990-01-01') "
         "SELECT id FROM early UNION ALL "
         "SELECT t1.id FROM db.t t1 JOIN db.t t2 ON t1.id = t2.id WHERE t1.d IS NULL AND t2.s = 'it\\'s' "
         "UNION ALL SELECT id FROM db.t WHERE id IN (SELECT id FROM db.t WHERE d >= '1997-01-01' AND a >= b)")
    new, notes = rw(q)
    assert sorted(read_sets(new)) == sorted([(0, 1), (0, 4, 5), (0, 1, 2, 3, 4), (0, 3)])
    assert [n.rewritten for n in notes].count(True) == 4  # the outer scan of the IN query reads all
    sqlglot.parse_one(new, read="hive")  # still valid for both dialects


def test_query_naming_the_partition_column_is_left_alone():
    q = "SELECT * FROM db.t WHERE planner_pid = 3 AND d < '1990-01-01'"
    new, notes = rw(q)
    assert new == q and "partition column" in notes[0].reason


def test_without_schema_nothing_is_rewritten_but_explain_works():
    q = "SELECT * FROM db.t WHERE d < '1990-01-01'"
    new, notes = rewrite_query(q, LAYOUTS, dialect="spark")
    assert new == q and "columns are unknown" in notes[0].reason
    (e,) = explain_query(q, LAYOUTS, dialect="spark")
    assert e.partitions_read == (0, 1) and e.partitions_total == 6
    assert e.predicates_used == ("d IN (-inf, DATE '1989-12-31']",)


def test_unqualified_table_with_current_db():
    new, _ = rewrite_query("SELECT id FROM t WHERE d IS NULL AND s = 'AIR'", LAYOUTS, dialect="hive",
                           schema=SCHEMA, current_db="db")
    assert read_sets(new) == [(0, 5)]


# ---- property: the rewrite never loses a matching row ---------------------------------------------
# Predicates and rows are drawn around the layouts' own cuts, so that a clause spanning several
# cut attributes (a column pair OR a column, two cut columns in one OR) meets rows on both sides of
# every cut: issue 33's lost row (a column-pair atom taken as FALSE in a partition that does not
# split on the pair) hid from a property whose random dates rarely made such a clause matter.
def grid_layout() -> Layout:
    """Two cut columns in each half (``tests/fixtures/pruning.sql``'s "grid"), on ``db.g``."""
    modes = ValueSet.points(Kind.STRING, ["AIR", "MAIL"])
    low_id = vs_range(Kind.INTEGER, None, 10)
    high_id = ValueSet.of(Kind.INTEGER, [Interval(10, None, True, False)])
    parts = (
        Partition(1, (("id", low_id), ("amt", vs_range(Kind.DECIMAL, None, Decimal(20))))),
        Partition(2, (("id", low_id), ("amt", ValueSet.of(Kind.DECIMAL, [Interval(Decimal(20), None, True, False)],
                                                          True)))),
        Partition(3, (("id", high_id), ("s", modes))),
        Partition(4, (("id", high_id), ("s", modes.complement()))),
        Partition(5, (("id", ValueSet.only_null(Kind.INTEGER)),)),
    )
    return Layout("db.g", "test", parts, kinds=(("id", Kind.INTEGER), ("amt", Kind.DECIMAL), ("s", Kind.STRING)))


GRID_COLS = {"id": "bigint", "amt": "decimal(15,2)", "s": "string"}
PROPERTY_LAYOUTS = {"db.t": layout(), "db.g": grid_layout()}
PROPERTY_SCHEMA = {"db.t": COLS, "db.g": GRID_COLS}
NEAR_CUT = [D(1994, 12, 30), D(1994, 12, 31), D(1995, 1, 1), D(1995, 1, 2)]  # the cut on d; a, b compare often
dates = st.one_of(st.none(), st.sampled_from(NEAR_CUT), st.dates(D(1990, 1, 1), D(1999, 12, 31)))
amounts = st.one_of(st.none(), st.sampled_from([Decimal("19.99"), Decimal(20), Decimal("20.01")]),
                    st.decimals(0, 100, places=2))
strings = st.one_of(st.none(), st.sampled_from(WEIRD + ["AIR", "MAIL", "SHIP", ""]))
ids = st.one_of(st.none(), st.integers(0, 20))
rows = st.fixed_dictionaries({"id": ids, "d": dates, "a": dates, "b": dates, "amt": amounts, "s": strings})


def _lit(draw, col):
    if col in ("d", "a", "b"):
        return "DATE '" + draw(st.one_of(st.sampled_from(NEAR_CUT), st.dates(D(1990, 1, 1), D(1999, 12, 31)))
                               ).isoformat() + "'"
    if col == "amt":
        return str(draw(st.one_of(st.sampled_from([Decimal(20), Decimal("19.9")]), st.decimals(0, 100, places=1))))
    if col == "id":
        return str(draw(st.integers(0, 20)))
    return exp.Literal.string(draw(st.sampled_from(WEIRD + ["AIR", "MAIL", "b"]))).sql(dialect="spark")


@st.composite
def predicates(draw, columns=("d", "amt", "s", "id", "a"), pairs=True, depth=0):
    col = draw(st.sampled_from(columns))
    kind = draw(st.integers(0, 10 if depth < 3 else 5))
    if kind == 0:
        return f"{col} {draw(st.sampled_from(['=', '<>', '<', '<=', '>', '>=']))} {_lit(draw, col)}"
    if kind == 1:
        return f"{col} IS {draw(st.sampled_from(['', 'NOT ']))}NULL"
    if kind == 2:
        vals = ", ".join(_lit(draw, col) for _ in range(draw(st.integers(1, 3))))
        return f"{col} {draw(st.sampled_from(['', 'NOT ']))}IN ({vals})"
    if kind == 3:
        return f"{col} BETWEEN {_lit(draw, col)} AND {_lit(draw, col)}"
    if kind == 4 and pairs:
        left, right = draw(st.sampled_from([("a", "b"), ("b", "a")]))
        return f"{left} {draw(st.sampled_from(['<', '>=', '>', '<=', '=', '<>']))} {right}"
    if kind in (4, 5):
        return f"{col} = {_lit(draw, col)}"
    left = draw(predicates(columns, pairs, depth + 1))
    right = draw(predicates(columns, pairs, depth + 1))
    if kind == 6:
        return f"NOT ({left})"
    return f"({left}) {'AND' if kind in (7, 8) else 'OR'} ({right})"  # OR as often as AND: residual clauses


@st.composite
def clauses(draw, columns, pairs):
    """A conjunction of disjunctions of atoms (``(a < b OR d >= …) AND (s IS NULL OR …)``): the
    residual multi-attribute clauses the pruning rule checks one by one, drawn on purpose."""
    def atom():
        if pairs and draw(st.booleans()):
            left, right = draw(st.sampled_from([("a", "b"), ("b", "a")]))
            return f"{left} {draw(st.sampled_from(['<', '>=', '>', '<=', '=', '<>']))} {right}"
        return draw(predicates(columns, pairs, depth=3))
    out = []
    for _ in range(draw(st.integers(1, 3))):
        ors = [atom() for _ in range(draw(st.integers(1, 3)))]
        out.append("(" + " OR ".join(f"({o})" for o in ors) + ")")
    return " AND ".join(out)


@st.composite
def pruning_cases(draw):
    """A table (and so a layout), a predicate over the columns it cuts on, and rows."""
    table = draw(st.sampled_from(["db.t", "db.g"]))
    columns, pairs = (("d", "amt", "s", "id", "a"), True) if table == "db.t" else (("id", "amt", "s"), False)
    shape = draw(st.sampled_from([predicates, clauses]))
    pred = draw(shape(columns, pairs))
    return table, pred, draw(st.lists(rows, min_size=1, max_size=10))


def _eval(node, row):
    # The evaluator of the emit tests (SQL NULL semantics); BETWEEN is expanded first.
    node = node.transform(lambda n: exp.and_(exp.GTE(this=n.this.copy(), expression=n.args["low"].copy()),
                                             exp.LTE(this=n.this.copy(), expression=n.args["high"].copy()))
                          if isinstance(n, exp.Between) else n)
    node = node.transform(lambda n: exp.cast(exp.Literal.string(n.name), exp.DataType.build("DATE"))
                          if isinstance(n, exp.Cast) and n.this.is_string is False else n)
    return evaluate(node, row)


@settings(max_examples=examples(250), deadline=None)
@given(pruning_cases())
def test_rewrite_keeps_every_matching_row(case):
    table, pred, sample = case
    q = f"SELECT * FROM {table} WHERE {pred}"
    new, notes = rewrite_query(q, PROPERTY_LAYOUTS, dialect="spark", schema=PROPERTY_SCHEMA)
    read = set(notes[0].partitions_read)
    assert CATCH_ALL in read
    where = sqlglot.parse_one(q, read="spark").args["where"].this
    lay = PROPERTY_LAYOUTS[table]
    for row in sample:
        if _eval(where, row) is True:
            part = next((p.id for p in lay.partitions if region_contains(p.region, row, lay.derived)), CATCH_ALL)
            assert part in read, (pred, row, part, read)


# ---- real Spark -----------------------------------------------------------------------------------
def _spark_rows():
    rows = []
    for i in range(240):
        d = None if i % 7 == 0 else D(1992, 1, 1) + dt.timedelta(days=(i * 37) % 2500)
        a = None if i % 11 == 0 else D(1995, 1, 1) + dt.timedelta(days=i % 13)
        b = D(1995, 1, 1) + dt.timedelta(days=(i * 5) % 17)
        s = None if i % 9 == 0 else (WEIRD + ["AIR", "MAIL"])[i % 6]
        amt = None if i % 13 == 0 else Decimal(i % 97) + Decimal("0.25")
        rows.append({"id": i, "d": d, "amt": amt, "s": s, "a": a, "b": b})
    return rows


def test_apply_and_rewrite_on_spark(spark, fresh_db):
    from pyspark.sql.types import (
        DateType,
        DecimalType,
        LongType,
        StringType,
        StructField,
        StructType,
    )

    db = fresh_db
    lay = layout()
    lay = Layout(f"{db}.t", lay.strategy, lay.partitions, lay.order, lay.kinds, lay.derived, meta=lay.meta)
    data = _spark_rows()
    schema = StructType([StructField("id", LongType()), StructField("d", DateType()),
                         StructField("amt", DecimalType(15, 2)), StructField("s", StringType()),
                         StructField("a", DateType()), StructField("b", DateType())])
    src = exp.to_table(f"{db}.t").sql(dialect="spark")
    (spark.createDataFrame([tuple(r[c] for c in COLS) for r in data], schema)
     .write.format("hive").option("fileFormat", "parquet").saveAsTable(src))

    spark.sql(create_table_sql(lay, COLS, f"{db}.t_new", dialect="spark"))
    from hive_integration.apply.apply_layout import SparkRunner, write_settings_restored

    fill = apply_statements(lay, COLS, f"{db}.t", f"{db}.t_new", dialect="spark", backup=f"{db}.t_before",
                            files={1: 2})
    with write_settings_restored(SparkRunner(spark), fill):  # the SETs last as long as the write
        for stmt in fill:
            spark.sql(stmt)

    want: dict[int, int] = {}
    for r in data:
        pid = next((p.id for p in lay.partitions if region_contains(p.region, r, lay.derived)), CATCH_ALL)
        want[pid] = want.get(pid, 0) + 1
    got = {r[0]: r[1] for r in spark.sql(f"SELECT planner_pid, count(*) FROM {db}.t GROUP BY planner_pid").collect()}
    assert got == want and CATCH_ALL not in got and len(got) == 5

    queries = [
        f"SELECT * FROM {db}.t WHERE d < '1994-06-01'",
        f"SELECT id, s FROM {db}.t WHERE d IS NULL AND s IN ('it''s', 'back\\\\slash')",
        f"SELECT x.id FROM {db}.t x JOIN {db}.t y ON x.id = y.id WHERE x.d >= '1996-01-01' AND x.a < x.b",
        f"SELECT count(*) FROM {db}.t WHERE d >= '1995-01-01' AND NOT (a < b)",
        f"SELECT id, amt FROM {db}.t WHERE amt > 50",  # unprunable: runs as written
    ]
    for q in queries:
        new, notes = rewrite_query(q, {f"{db}.t": lay}, dialect="spark", schema={f"{db}.t": COLS})
        expected = sorted(map(tuple, spark.sql(q.replace(f"{db}.t ", f"{db}.t_before ")).collect()), key=repr)
        assert sorted(map(tuple, planner.sql(spark, q).collect()), key=repr) == expected, (q, new)
        assert sorted(map(tuple, spark.sql(new).collect()), key=repr) == expected, (q, new)
        if "amt > 50" not in q:
            assert any(n.rewritten for n in notes), q
    props = {r[0]: r[1] for r in spark.sql(f"SHOW TBLPROPERTIES {db}.t").collect()}
    assert int(props["planner.layout.parts"]) >= 2  # the 5000-char random meta forced several chunks


# ---- layout identity: stale SQL reads more, never a wrong subset --------------------------------
def _generation_layouts():
    from planner.model.layout import with_generation

    base = layout()
    other = Layout("db.t", "test", base.partitions[:3], kinds=base.kinds, derived=base.derived)
    return with_generation(base), with_generation(other)


def test_generations_never_share_ids_and_repeat_for_the_same_content():
    from planner.model.layout import with_generation

    a, b = _generation_layouts()
    assert not set(a.known_ids) & set(b.known_ids)
    assert with_generation(layout()).known_ids == a.known_ids  # same content, same ids
    assert all(p.generation == a.generation for p in a.partitions) and len(str(a.generation)) == 9
    assert Layout.loads(a.dumps()) == a  # ids and generations survive layout.json


def test_rewritten_filter_reads_every_partition_another_layout_has():
    a, b = _generation_layouts()
    new, notes = rewrite_query("SELECT * FROM db.t WHERE d < '1994-06-01'", {"db.t": a}, dialect="spark",
                               schema=SCHEMA)
    (where,) = [w.this for w in sqlglot.parse_one(new, read="spark").find_all(exp.Where)
                if any(c.name == "planner_pid" for c in w.find_all(exp.Column))]
    # evaluate the filter for a partition id of layout a, of layout b, and the catch-all
    for pid, want in [(a.partitions[0].id, True), (a.partitions[1].id, False), (CATCH_ALL, True),
                      *[(p.id, True) for p in b.partitions]]:
        assert evaluate(where, {"planner_pid": pid}) is want, pid


def test_layout_of_an_older_planner_is_not_pruned_by():
    old = Layout.from_json({**layout().to_json(), "version": 1})
    new, notes = rewrite_query("SELECT * FROM db.t WHERE d < '1994-06-01'", {"db.t": old}, dialect="spark",
                               schema=SCHEMA)
    assert read_sets(new) == [] and notes[0].partitions_read == tuple(range(6))
    (e,) = explain_query("SELECT * FROM db.t WHERE d < '1994-06-01'", {"db.t": old}, dialect="spark", schema=SCHEMA)
    assert "older planner" in e.predicates_not_used[0][1]


def test_changed_column_type_is_not_pruned_by():
    lay = Layout("db.t", "test", layout().partitions, kinds=layout().kinds, types=(("d", "date"),))
    schema = {"db.t": COLS | {"d": "timestamp"}}
    (e,) = explain_query("SELECT * FROM db.t WHERE d < '1994-06-01'", {"db.t": lay}, dialect="spark", schema=schema)
    assert e.partitions_read == tuple(range(6)) and "now timestamp" in e.predicates_not_used[0][1]


def test_zone_guard_only_when_the_pruning_needs_the_zone():
    from planner.semantics.settings import Settings

    ts = ValueSet.of(Kind.TIMESTAMP, [Interval(dt.datetime(2020, 1, 1), None, True, False)])
    lay = Layout("db.z", "test", (Partition(1, (("ts", ts),)), Partition(2, (("ts", ts.complement()),))),
                 kinds=(("ts", Kind.TIMESTAMP),), types=(("ts", "timestamp"),), settings=Settings(True, "Asia/Tokyo"))
    schema = {"db.z": {"ts": "timestamp", "k": "int"}}
    saved, (note,) = rewrite_query("SELECT * FROM db.z WHERE ts < TIMESTAMP '2020-01-01 00:00:00'", {"db.z": lay},
                                   dialect="spark", schema=schema)
    assert note.guard == "time zone Asia/Tokyo" and "CURRENT_TIMEZONE() <> 'Asia/Tokyo'" in saved
    # 2020-01-01 00:00 in Tokyo is 2019-12-31 15:00 UTC: only partition 2 (and the catch-all)
    assert note.partitions_read == (0, 2)
    live, (note,) = rewrite_query("SELECT * FROM db.z WHERE ts < TIMESTAMP '2020-01-01 00:00:00'", {"db.z": lay},
                                  dialect="spark", schema=schema, settings=Settings(True, "UTC"))
    assert not note.guard and "CURRENT_TIMEZONE" not in live
    # an explicit offset does not need the session zone, but the column is a TIMESTAMP: still guarded
    _, (note,) = rewrite_query("SELECT * FROM db.z WHERE k = 3 AND ts >= TIMESTAMP '2021-01-01 00:00:00+00:00'",
                               {"db.z": lay}, dialect="spark", schema=schema)
    assert note.partitions_read == (0, 1)


def test_explain_names_why_a_typed_predicate_cannot_prune():
    lay = Layout("db.t", "test", layout().partitions, kinds=layout().kinds)
    (e,) = explain_query("SELECT * FROM db.t WHERE s = DATE '2020-01-01' AND d = 7", {"db.t": lay}, dialect="spark",
                         schema=SCHEMA)
    reasons = dict(e.predicates_not_used)
    assert "that cast does not keep the order of string values" in reasons["s = DATE '2020-01-01'"]
    assert "Spark cannot compare a date column with int 7" in reasons["d = 7"]

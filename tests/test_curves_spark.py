"""On Spark: the emitted z-value and Hilbert value of every row equal the cost model's, bit for bit.

A deterministic batch of rows with NULLs, values equal to the bounds, NaN and ±infinity in a
DOUBLE column, dates, strings, DECIMALs and a derived boolean attribute. The model reads the rows
as ``gather_stats`` gives them to it (``toArrow``), the SQL runs on Spark as the INSERT runs it.
"""
from __future__ import annotations

import datetime as dt
import math
import random
from decimal import Decimal

import pyarrow as pa
import pytest
import sqlglot
from sqlglot import exp

from planner.cnf.ir import ColumnPair
from planner.cnf.valueset import ValueSet
from planner.costmodel.ordering import hilbert_keys, zorder_bounds, zorder_keys
from planner.costmodel.sample import SampleFrame
from planner.costmodel.tree_order import leaf_ids, leaves, tree_ordering
from planner.emit.apply_sql import apply_statements
from planner.emit.curve_sql import curve_table, hilbert_value, zorder_value
from planner.emit.ddl import create_table_sql
from planner.emit.tree_order_sql import tree_order_expr
from planner.model.layout import Layout, Ordering, Partition
from planner.model.write_plan import WritePlan
from planner.semantics.kinds import Kind

PAIR = "c_lo < c_hi"
DERIVED = {PAIR: ColumnPair("c_lo", "<", "c_hi")}
COLUMN_SETS = [("d", "x"), ("x", "s", PAIR), ("q", "d", "s", "x"), (PAIR, "q")]


def rows(n: int = 600, seed: int = 14) -> pa.Table:
    rng = random.Random(seed)
    maybe = lambda v: None if rng.random() < 0.1 else v  # noqa: E731
    xs = [maybe(rng.choice([math.nan, math.inf, -math.inf, 0.1, 0.3, -0.0, 1e-7]) if rng.random() < 0.15
                else round(rng.uniform(-100, 100), rng.choice([0, 1, 3]))) for _ in range(n)]
    return pa.table({
        "id": pa.array(range(n), pa.int64()),
        "d": pa.array([maybe(dt.date(1992, 1, 1) + dt.timedelta(days=rng.randrange(2500))) for _ in range(n)],
                      pa.date32()),
        "x": pa.array(xs, pa.float64()),
        "s": pa.array([maybe(rng.choice(["AIR", "MAIL", "SHIP", "é", "中", "it's", "", "a\\b"])) for _ in range(n)]),
        "q": pa.array([maybe(Decimal(rng.randrange(0, 5000)) / 100) for _ in range(n)], pa.decimal128(15, 2)),
        "c_lo": pa.array([maybe(rng.randrange(5)) for _ in range(n)], pa.int32()),
        "c_hi": pa.array([maybe(rng.randrange(5)) for _ in range(n)], pa.int32()),
    })


@pytest.fixture(scope="module")
def batch(spark):
    spark.createDataFrame(rows()).createOrReplaceTempView("curve_rows")
    data = spark.table("curve_rows").orderBy("id").toArrow()
    yield SampleFrame(data, DERIVED)
    spark.catalog.dropTempView("curve_rows")


@pytest.mark.parametrize("columns", COLUMN_SETS, ids=["-".join(c) for c in COLUMN_SETS])
@pytest.mark.parametrize("buckets", [3, 64])
def test_spark_curve_values_equal_the_model(spark, batch, columns, buckets):
    bounds = tuple(zorder_bounds(batch, c, buckets) for c in columns)
    # a bound on every value the column holds, too: ties between values and bounds everywhere
    order = Ordering("hilbert", columns, bounds)
    z = zorder_value(order, DERIVED).sql(dialect="spark")
    k = len(columns)
    h = hilbert_value(exp.column("planner_z"), exp.column("planner_curve"), k).sql(dialect="spark")
    got = spark.sql(f"SELECT id, planner_z, {h} AS h FROM (SELECT id, {z} AS planner_z, "
                    f"{curve_table(k).sql(dialect='spark')} AS planner_curve FROM curve_rows) ORDER BY id").collect()
    assert [r.planner_z for r in got] == [int(v) for v in zorder_keys(batch, order)]
    assert [r.h for r in got] == [int(v) for v in hilbert_keys(batch, order)]
    assert len({r.planner_z for r in got}) > 1


TREE_KINDS = {"d": Kind.DATE, "x": Kind.FLOAT, "s": Kind.STRING, "q": Kind.DECIMAL}
TREE_TYPES = {"id": "bigint", "d": "date", "x": "double", "s": "string", "q": "decimal(15,2)", "c_lo": "int",
              "c_hi": "int"}


D0 = (dt.date(1993, 1, 1) - dt.date(1970, 1, 1)).days
TIES = [  # (tie column, its recorded range): none, clamped, shifted (a range wider than the key's bits), a date
    ("id", None), ("id", [100, 400, "integer"]), ("id", [-2 ** 60, 2 ** 60, "integer"]), ("d", [D0, D0 + 1461, "date"])]


def _tie_rank(v, spec):
    """What the packed key keeps of a tie value: NULL and values at or below ``lo`` first, values at
    or above ``hi`` last, the rest ``(v - lo) >> shift`` (``planner.emit.tree_order_sql``)."""
    if spec is None:
        return (v is not None, v)
    lo, hi, kind = spec
    if isinstance(v, dt.date):
        v = (v - dt.date(1970, 1, 1)).days
    shift = max(0, (hi - lo).bit_length() - (62 - 8))  # these trees have at most 256 leaves
    return 0 if v is None or v <= lo else (hi - lo) >> shift if v >= hi else (v - lo) >> shift


@pytest.mark.parametrize("then,spec", TIES, ids=["plain", "clamped", "shifted", "date"])
@pytest.mark.parametrize("shuffle", [False, True], ids=["where-read", "shuffled"])
def test_spark_tree_leaves_equal_the_model_and_the_insert_writes_them_in_order(spark, batch, then, spec, shuffle):
    """A tree order: the leaf number Spark computes for every row is the model's (NULLs, NaN and
    ties with the cut values included), and ``planner apply``'s INSERT, which computes it once per
    row in a helper column (folded with the tie column into one key when its range is recorded),
    writes each file in leaf order, then tie order, and loses no row."""
    order = tree_ordering(batch, TREE_KINDS, {"d": 2.0, "x": 1.0, "s": 1.0, "q": 1.0}, rows=600, block_rows=20,
                          then=(then,))
    assert order is not None and leaves(order) > 8
    leaf = tree_order_expr(Layout("t", "x", (Partition(1, ()),), order)).sql(dialect="spark")
    got = spark.sql(f"SELECT {leaf} AS leaf FROM curve_rows ORDER BY id").collect()
    assert [r.leaf for r in got] == leaf_ids(batch, order).tolist()

    cut = dt.date(1995, 6, 1)  # two partitions (NULL dates go to the catch-all): the dynamic-partition write
    layout = Layout("default.tree_rows", "x", (Partition(1, (("d", ValueSet.range(Kind.DATE, None, cut, False, False)),)),
                                               Partition(2, (("d", ValueSet.range(Kind.DATE, cut, None)),))),
                    order, kinds=(("d", Kind.DATE),), meta=(("tie_ranges", {then: spec}),) if spec else ())
    spark.sql("DROP TABLE IF EXISTS default.tree_rows")
    spark.sql("DROP TABLE IF EXISTS default.tree_src")
    spark.sql("CREATE TABLE default.tree_src USING PARQUET AS SELECT * FROM curve_rows")
    try:
        spark.sql(create_table_sql(layout, TREE_TYPES, "default.tree_rows", dialect="spark"))
        fill = apply_statements(layout, TREE_TYPES, "default.tree_src", "default.tree_rows", dialect="spark",
                                rename=False, plan=WritePlan(shuffle=shuffle))
        assert sum(s.startswith("SET spark.sql.optimizer.plannedWrite.enabled") for s in fill) == 1
        insert = sqlglot.parse_one(fill[-1], read="spark")
        (sort,) = [e.args["sort"] for e in insert.find_all(exp.Select) if e.args.get("sort")]
        assert len(sort.expressions) == (1 if spec else 2)  # no partition column: the key alone, or leaf and tie
        keys = ("spark.sql.optimizer.plannedWrite.enabled", "spark.sql.maxConcurrentOutputFileWriters")
        before = [spark.conf.get(k, None) for k in keys]
        try:
            for s in fill:
                spark.sql(s)
        finally:  # as the apply runner restores them
            for k, v in zip(keys, before):
                spark.conf.unset(k) if v is None else spark.conf.set(k, v)
        back = spark.table("default.tree_rows").selectExpr(
            "id", then + " AS tie", f"{leaf} AS leaf", "_metadata.file_path AS f", "_metadata.row_index AS r").collect()
        assert sorted(r.id for r in back) == list(range(batch.n))
        by_file: dict = {}
        for r in sorted(back, key=lambda r: (r.f, r.r)):
            by_file.setdefault(r.f, []).append((r.leaf, _tie_rank(r.tie, spec)))
        assert len(by_file) >= 3
        assert all(keys == sorted(keys) for keys in by_file.values())  # leaf, then the tie column
    finally:
        spark.sql("DROP TABLE IF EXISTS default.tree_rows")
        spark.sql("DROP TABLE IF EXISTS default.tree_src")


def _grid(dims) -> tuple[Partition, ...]:
    """Every combination of one set per attribute; NULL joins the first set of each."""
    regions = [()]
    for attribute, sets in dims:
        sets = [s.union(ValueSet.only_null(s.kind)) if i == 0 else s for i, s in enumerate(sets)]
        regions = [r + ((attribute, s),) for r in regions for s in sets]
    return tuple(Partition(i + 1, r) for i, r in enumerate(regions))


def _pieces(kind: Kind, cuts) -> list[ValueSet]:
    edges = [None, *cuts, None]
    return [ValueSet.range(kind, lo, hi, True, False) for lo, hi in zip(edges, edges[1:])]


def test_spark_puts_every_row_in_the_same_partition_through_the_decision_tree(spark, batch):
    """With many partitions the partition CASE is a decision tree; on Spark it gives every row
    the partition the flat CASE (each region's predicate in turn) gives it: NULLs, NaN, ±infinity,
    -0.0 and values equal to the cuts included."""
    from planner.emit.conditions import region_predicate
    from planner.emit.partition_sql import FLAT_MAX, partition_case

    dims = [("x", _pieces(Kind.FLOAT, [Decimal("-0.0"), Decimal("0.1"), Decimal("0.3"), Decimal(50)])),
            ("d", _pieces(Kind.DATE, [dt.date(1994, 1, 1), dt.date(1996, 7, 1)])),
            ("s", [ValueSet.points(Kind.STRING, ["AIR", "é"]),
                   ValueSet.points(Kind.STRING, ["AIR", "é"]).complement().intersect(ValueSet.not_null(Kind.STRING))]),
            (PAIR, [ValueSet.points(Kind.BOOLEAN, [True]), ValueSet.points(Kind.BOOLEAN, [False])]),
            ("q", _pieces(Kind.DECIMAL, [Decimal("12.50")]))]
    layout = Layout("default.grid", "grid", _grid(dims), Ordering(), tuple((a, s[0].kind) for a, s in dims),
                    tuple(DERIVED.items()))
    assert len(layout.partitions) == 5 * 3 * 2 * 2 * 2 > FLAT_MAX
    tree = partition_case(layout)
    assert isinstance(tree.args["ifs"][0].args["true"], exp.Case)  # nested: a cut, then the branches
    flat = exp.Case()
    for p in layout.partitions:
        flat = flat.when(region_predicate(p.region, layout.kinds, DERIVED), exp.Literal.number(p.id), copy=False)
    flat = flat.else_(exp.Literal.number(0), copy=False)
    got = spark.sql(f"SELECT id, {tree.sql('spark')} AS tree, {flat.sql('spark')} AS flat FROM curve_rows").collect()
    assert [(r.id, r.tree) for r in got] == [(r.id, r.flat) for r in got]
    assert len({r.flat for r in got}) > 40 and 0 not in {r.flat for r in got}  # the grid covers every row

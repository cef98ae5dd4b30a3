"""A k-d tree as the order inside partitions: encoding, leaf numbers, the emitted SQL, the hybrid tree."""
from __future__ import annotations

import datetime as dt

import numpy as np
import pyarrow as pa
import sqlglot
from sqlglot import exp

from planner.costmodel.amoeba import amoeba_hybrid
from planner.costmodel.sample import SampleFrame
from planner.costmodel.tree_order import (
    MAX_TREE_DEPTH,
    decode,
    describe,
    leaf_ids,
    leaves,
    tie_columns,
    tree_depth_for,
    tree_ordering,
)
from planner.emit.apply_sql import ORDER_COLUMN, insert_select
from planner.model.layout import Layout, Ordering, Partition
from planner.semantics.kinds import Kind

KINDS = {"a": Kind.INTEGER, "b": Kind.INTEGER, "d": Kind.DATE}


def frame(n: int = 4000, seed: int = 0) -> SampleFrame:
    rng = np.random.default_rng(seed)
    d0 = dt.date(2020, 1, 1)
    return SampleFrame(pa.table({
        "a": pa.array([None if v < 40 else int(v) for v in rng.integers(0, 1000, n)], pa.int64()),
        "b": pa.array(rng.integers(0, 50, n), pa.int64()),
        "d": pa.array([d0 + dt.timedelta(days=int(x)) for x in rng.integers(0, 365, n)], pa.date32()),
    }))


def test_encoding_by_hand():
    order = Ordering("tree", ("a", "b"), (("then", 1), (0, 5), (1, 2), (), (), ()))
    assert decode(order) == ("a", 5, ("b", 2, 0, 1), 2)
    assert leaves(order) == 3 and tie_columns(order) == ("b",)
    sample = SampleFrame(pa.table({"a": pa.array([1, 9, 5, None], pa.int64()), "b": pa.array([3, 0, 2, 1], pa.int64())}))
    # a <= 5 & b <= 2 -> 0; a <= 5 & b > 2 -> 1; a > 5 or NULL -> 2
    assert leaf_ids(sample, order).tolist() == [1, 2, 0, 2]


def test_a_tree_of_about_one_block_per_leaf():
    s = frame()
    order = tree_ordering(s, KINDS, {"a": 2.0, "b": 1.0, "d": 1.0}, rows=400_000, block_rows=5000)
    assert tree_depth_for(400_000, 5000) == 7
    assert tree_depth_for(4_000_000, 5000) == MAX_TREE_DEPTH == 8  # 800 blocks, but at most 256 leaves
    ids = leaf_ids(s, order)
    assert ids.min() == 0 and ids.max() == leaves(order) - 1 <= 1 << 7
    counts = np.bincount(ids)
    assert counts.max() <= 3 * max(1, np.median(counts))  # median cuts: leaves about even
    assert describe(order).startswith(f"tree({leaves(order):,} leaves: a")


def test_the_emitted_case_numbers_rows_as_the_model_does():
    """Evaluate the emitted nested CASE on sample rows in Python: same leaf as ``leaf_ids``."""
    s = frame(500)
    order = tree_ordering(s, KINDS, {"a": 1.0, "b": 1.0, "d": 1.0}, rows=64_000, block_rows=4000, then=("b",))
    layout = Layout("t", "x", (Partition(1, ()),), order)
    sql = insert_select(layout, {"a": "bigint", "b": "bigint", "d": "date"}, "db.src", "db.dst", overwrite=True,
                        dialect="spark").sql("spark")
    tree = sqlglot.parse_one(sql, read="spark")
    keys = [k.this.name for k in tree.find(exp.Sort).expressions]  # (the partition column,) the leaf, ties
    assert keys[-2:] == [ORDER_COLUMN, "b"]  # the leaf number, computed once per row, then the tie column
    (case,) = [a.this for a in tree.find_all(exp.Alias) if a.alias == ORDER_COLUMN]

    def evaluate(node, row):
        if isinstance(node, exp.Literal):
            return int(node.this)
        (when,) = node.args["ifs"]
        cond = when.this
        col, lit = cond.this.name, cond.expression
        v = row[col]
        bound = dt.date.fromisoformat(lit.this.this) if isinstance(lit, exp.Cast) else int(lit.this)
        return evaluate(when.args["true"] if v is not None and v <= bound else node.args["default"], row)

    rows = s.table.to_pylist()
    assert [evaluate(case, r) for r in rows] == leaf_ids(s, order).tolist()


def test_the_hybrid_tree_keeps_a_few_partitions_and_orders_below_them():
    s = frame()
    layout = amoeba_hybrid(s, KINDS, {"a": 1.0, "b": 1.0, "d": 1.0}, rows=4_000_000, row_bytes=100.0,
                           max_partition_bytes=128 << 20, max_partitions=1000, table="t", block_rows=5000)
    assert len(layout.partitions) == 4  # 400 MB in 128 MB partitions: two levels of Hive partitions
    assert layout.order.method == "tree" and leaves(layout.order) > 100  # ... and ten levels in all
    ids = leaf_ids(s, layout.order)
    for p in layout.partitions:  # each partition holds a run of the tree's leaves
        inside = s.region_mask(p.region)
        assert len(set(ids[inside]) & set(ids[~inside])) == 0


def test_advice_records_the_tie_columns_range_from_the_footers_else_the_sample():
    """The write hint the Spark writer folds into its sort key (``planner.advice.ranking.tie_ranges``):
    the footers' range when they are read, the sample's otherwise; dates as days since 1970."""
    import pyarrow as pa

    from planner.advice.ranking import tie_ranges
    from planner.costmodel.statistics import (
        ChunkStats,
        ColumnStats,
        DataFile,
        RowGroupStats,
        TableStats,
    )

    order = Ordering("tree", ("a", "k", "d"), (("then", 1, 2), (0, 5), (), ()))
    layout = Layout("t", "x", (Partition(1, ()),), order)
    sample = pa.table({"a": [1, 9], "k": [40, 60], "d": [dt.date(1970, 1, 11), dt.date(1970, 3, 1)]})
    cols = (ColumnStats("a", "int", 4.0), ColumnStats("k", "bigint", 8.0), ColumnStats("d", "date", 4.0))
    groups = (RowGroupStats(5, {"k": ChunkStats(7, 50, 0)}), RowGroupStats(5, {"k": ChunkStats(3, 90, 1)}))
    with_footers = TableStats("t", 10, 100, cols, sample, data_files=(DataFile("f", (), groups),))
    assert tie_ranges(layout, with_footers) == {"k": [3, 90, "integer"], "d": [10, 59, "date"]}
    assert tie_ranges(layout, TableStats("t", 10, 100, cols, sample))["k"] == [40, 60, "integer"]
    text = (ColumnStats("k", "string", 8.0),)  # not folded: the writer sorts by the column itself
    assert tie_ranges(layout, TableStats("t", 10, 100, text, sample)) == {}

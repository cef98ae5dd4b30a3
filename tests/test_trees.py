"""Partitioning trees: Amoeba's upfront tree (plain and weighted) and the workload-driven greedy tree."""
from __future__ import annotations

import datetime as dt

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.analysis.table_analysis import analyze_table
from planner.cnf.values import float_value
from planner.costmodel.amoeba import amoeba_tree, filter_weights
from planner.costmodel.cost import CostModel, CostParams
from planner.costmodel.sample import SampleFrame
from planner.costmodel.statistics import ColumnStats, TableStats
from planner.costmodel.tree_growth import attribute_allocation, median_code, tree_depth
from planner.costmodel.trees import (
    SortedCodes,
    amoeba_upfront,
    amoeba_weighted,
    greedy_tree,
)
from planner.model.layout import Layout, Partition
from planner.semantics.kinds import Kind
from planner.workload import parse_workload

COLUMNS = {"a": "int", "b": "int", "s": "string", "d": "date"}
WORKLOAD = """
select count(*) from t where a between 10 and 200;
select count(*) from t where a < 500 and s = 'x';
select count(*) from t where b >= 700;
select count(*) from t where d >= date '2020-03-01' and d < date '2020-06-01';
select count(*) from t where a < b;
select count(*) from t where s in ('p', 'q') or s is null;
select count(*) from t where b > 300 and b <= 400;
select count(*) from t where a < 100;
"""
DERIVED = "a < b"
D0 = dt.date(2020, 1, 1)


def analysis(text: str = WORKLOAD):
    return analyze_table(parse_workload(text), "t", COLUMNS)


def table_of(n: int, seed: int = 0, nulls: float = 0.0) -> pa.Table:
    rng = np.random.default_rng(seed)

    def with_nulls(values):
        return [None if rng.random() < nulls else v for v in values]

    return pa.table({
        "a": pa.array(with_nulls(rng.integers(0, 1000, n).tolist()), pa.int64()),
        "b": pa.array(with_nulls(rng.integers(0, 1000, n).tolist()), pa.int64()),
        "s": pa.array(with_nulls(rng.choice(list("pqrstx"), n).tolist()), pa.string()),
        "d": pa.array(with_nulls([D0 + dt.timedelta(days=int(x)) for x in rng.integers(0, 366, n)]), pa.date32()),
    })


# The overheads these cases were worked out with (rows of a partition and of a file), not the time model's.
ROW_OVERHEADS = CostParams(partition_overhead_rows=5_000.0, file_overhead_rows=2_000.0)


def model_of(sample: pa.Table, rows: int = 1_000_000, params: CostParams = ROW_OVERHEADS, text: str = WORKLOAD):
    stats = TableStats("t", rows, rows * 32, tuple(ColumnStats(c, t, 8.0) for c, t in COLUMNS.items()), sample)
    return CostModel(analysis(text), stats, params)


def uniform_frame(n: int, attributes: str = "abcd", seed: int = 0) -> SampleFrame:
    rng = np.random.default_rng(seed)
    return SampleFrame(pa.table({c: rng.integers(0, 1000, n) for c in attributes}))


def upfront(sample: SampleFrame, attributes: str, buckets: int, weights=None, **kw) -> Layout:
    kinds = {c: Kind.INTEGER for c in attributes}
    common = dict(rows=sample.n, row_bytes=1.0, max_partition_bytes=-(-sample.n // buckets),
                  max_partitions=1000, table="t", min_leaf_rows=0) | kw
    if weights is None:
        return amoeba_upfront(sample, kinds, list(attributes), **common)
    return amoeba_tree(sample, kinds, {a: weights.get(a, 0) for a in attributes}, **common)


def leaf_sizes(sample: SampleFrame, layout: Layout) -> np.ndarray:
    masks = np.array([sample.region_mask(p.region) for p in layout.partitions])
    assert (masks.sum(axis=0) == 1).all(), "every sample row must be in exactly one partition"
    return masks.sum(axis=1)


def row_value(row: dict, attribute: str):
    if attribute == DERIVED:
        return None if row["a"] is None or row["b"] is None else row["a"] < row["b"]
    return row[attribute]


def containing(layout: Layout, row: dict) -> list[int]:
    return [p.id for p in layout.partitions
            if all(vs.contains(row_value(row, a)) for a, vs in p.region)]


# ---- Amoeba: depth, allocation, medians ---------------------------------------------------------
def test_tree_depth_follows_size_and_caps_at_max_partitions():
    assert tree_depth(1000, 1.0, 100, 1000) == 4  # 10 buckets -> ceil(log2 10)
    assert tree_depth(1000, 1.0, 100, 8) == 3
    assert tree_depth(1000, 1.0, 2000, 1000) == 0


def test_allocation_is_the_tree_budget_split_by_weight():
    assert attribute_allocation({c: 1 for c in "abcd"}, 4) == {c: 2.0 for c in "abcd"}
    assert attribute_allocation({"a": 3, "b": 1}, 4) == {"a": 6.0, "b": 2.0}


def test_median_code_balances_and_sends_nulls_right():
    frame = SampleFrame(pa.table({"x": pa.array([1, 1, 1, 2, 2, 2, 3, 4, None, None], pa.int64())}))
    codes = SortedCodes.of(frame, "x")
    assert median_code(codes, np.arange(10)) == 1  # 6 | 4 is nearer half than 3 | 7
    assert median_code(codes, np.array([8, 9])) is None  # only NULLs
    assert median_code(codes, np.array([0, 1, 8])) == 0  # value 1 left, NULL right
    assert median_code(codes, np.array([0, 1, 2])) is None  # one value


def test_median_cuts_reproduce_the_papers_skew_example():
    # Amoeba section 3.3: D1 = {1,1,1,2,2,2,3,4,5,6,7,8} in four median partitions
    frame = SampleFrame(pa.table({"x": [1, 1, 1, 2, 2, 2, 3, 4, 5, 6, 7, 8]}))
    layout = upfront(frame, "x", 4)
    values = frame.table.column("x").to_numpy()
    groups = [sorted(values[frame.region_mask(p.region)].tolist()) for p in layout.partitions]
    assert groups == [[1, 1, 1], [2, 2, 2], [3, 4, 5], [6, 7, 8]]


def test_root_cut_is_at_the_median():
    frame = uniform_frame(5001, "a", seed=3)
    layout = upfront(frame, "a", 2)
    (cut,) = dict(layout.meta)["cuts"]
    assert cut == f"a <= {int(np.median(frame.table.column('a').to_numpy()))}"


def test_upfront_leaves_are_balanced_and_partition_the_sample():
    frame = uniform_frame(8192)
    layout = upfront(frame, "abcd", 16)
    sizes = leaf_sizes(frame, layout)
    assert len(sizes) == 16 and [p.id for p in layout.partitions] == list(range(1, 17))
    assert sizes.max() <= 2 * sizes.min()


def test_allocation_is_spread_evenly_as_in_figure_4():
    layout = upfront(uniform_frame(8192), "abcd", 16)
    meta = dict(layout.meta)
    assert meta["depth"] == 4
    assert meta["used"] == {c: 2.0 for c in "abcd"}  # one full level's worth each
    assert set(layout.attributes) == set("abcd")


def test_weighted_allocation_favours_the_most_filtered_attribute():
    layout = upfront(uniform_frame(8192), "abcd", 16, weights={"a": 8, "b": 4, "c": 2, "d": 1})
    used = dict(layout.meta)["used"]
    assert used["a"] > used["b"] > used["c"] > used["d"]
    assert used["a"] >= 4.0  # over half the budget of 8


def test_weighted_drops_unfiltered_attributes_unless_floored():
    text = "select count(*) from t where a < 100;\nselect count(*) from t where a > 900;\n" \
           "select count(*) from t where b between 3 and 50;"
    model = model_of(table_of(4000), text=text)
    assert filter_weights(model, ["a", "b", "s", "d"]) == {"a": 2.0, "b": 1.0, "s": 0.0, "d": 0.0}
    kw = dict(rows=1_000_000, row_bytes=32.0, max_partition_bytes=32 * 1_000_000 // 64, max_partitions=1000,
              table="t", min_leaf_rows=0)
    weighted = amoeba_weighted(model, ["a", "b", "s", "d"], **kw)
    assert weighted.strategy == "amoeba-weighted" and set(weighted.attributes) == {"a", "b"}
    assert dict(weighted.meta)["used"]["a"] > dict(weighted.meta)["used"]["b"]
    floored = amoeba_weighted(model, ["a", "b", "s", "d"], floor=1.0, **kw)
    assert set(floored.attributes) == {"a", "b", "s", "d"}
    unfiltered = amoeba_weighted(model_of(table_of(4000), text="select count(*) from t;"), ["a", "b"], **kw)
    assert set(unfiltered.attributes) == {"a", "b"}  # no workload information: uniform


def test_upfront_stops_before_leaves_fall_under_min_leaf_rows():
    frame = uniform_frame(4096)
    layout = upfront(frame, "abcd", 64, rows=4096 * 100, max_partition_bytes=4096 * 100 // 64,
                     min_leaf_rows=4096 * 100 // 10)
    assert (leaf_sizes(frame, layout) * 100 >= 4096 * 100 // 10 / 2 * 0.9).all()
    assert len(layout.partitions) <= 16


def test_cuts_on_doubles_survive_a_json_round_trip():
    frame = SampleFrame(pa.table({"x": [0.1, 0.1, 0.1, 0.2, 0.3, 0.7]}))
    layout = amoeba_upfront(frame, {"x": Kind.FLOAT}, ["x"], rows=6, row_bytes=1.0, max_partition_bytes=3,
                            max_partitions=8, table="t", min_leaf_rows=0)
    again = Layout.loads(layout.dumps())
    assert again == layout
    # a double is compared as the shortest decimal that reads back as it (planner.cnf.values.float_value)
    assert [p.conditions["x"].contains(float_value(0.1)) for p in again.partitions] == [True, False]


def test_upfront_is_deterministic_and_round_trips():
    a, b = upfront(uniform_frame(2000), "abcd", 16), upfront(uniform_frame(2000), "abcd", 16)
    assert a == b and dict(a.meta)["cuts"] == dict(b.meta)["cuts"]
    assert Layout.loads(a.dumps()) == a


# ---- the greedy tree ----------------------------------------------------------------------------
def one_partition(table: str = "t") -> Layout:
    return Layout(table, "none", (Partition(1),))


def test_greedy_lowers_cost_and_its_estimate_matches_the_cost_model():
    model = model_of(table_of(4000, nulls=0.05))
    layout = greedy_tree(model, ["a", "b", "s", "d", DERIVED], max_partitions=64, min_leaf_rows=10_000)
    cost, base = model.evaluate(layout), model.evaluate(one_partition())
    assert 1 < len(layout.partitions) <= 64
    assert cost.total < base.total and cost.rows < 0.6 * base.rows
    assert dict(layout.meta)["estimated_rows"] == pytest.approx(cost.rows)
    assert DERIVED in layout.attributes and dict(layout.derived)[DERIVED].op == "<"
    assert Layout.loads(layout.dumps()) == layout


def test_greedy_never_breaks_min_leaf_rows():
    model = model_of(table_of(4000))
    for min_rows in (20_000, 120_000):
        layout = greedy_tree(model, ["a", "b", "s", "d", DERIVED], max_partitions=500, min_leaf_rows=min_rows)
        assert (model.partition_rows(layout) >= min_rows).all()


def test_greedy_takes_the_workloads_own_cut():
    text = "select count(*) from t where a < 100;\nselect count(*) from t where a >= 100;"
    model = model_of(table_of(4000), text=text)
    layout = greedy_tree(model, ["a"], max_partitions=10, min_leaf_rows=1000)
    assert dict(layout.meta)["cuts"] == ["a < 100"]
    # a cut leaving a child with ~10% of the rows is refused when each child must keep 20%
    assert len(greedy_tree(model, ["a"], max_partitions=10, min_leaf_rows=200_000).partitions) == 1


def test_greedy_respects_max_partitions_and_overhead():
    model = model_of(table_of(4000))
    attrs = ["a", "b", "s", "d", DERIVED]
    assert len(greedy_tree(model, attrs, max_partitions=5, min_leaf_rows=1000).partitions) == 5
    costly = model_of(table_of(4000), params=CostParams(partition_overhead_rows=1e12))
    assert len(greedy_tree(costly, attrs, max_partitions=100, min_leaf_rows=1000).partitions) == 1


def test_greedy_is_deterministic():
    attrs = ["a", "b", "s", "d", DERIVED]
    a = greedy_tree(model_of(table_of(3000, seed=5)), attrs, max_partitions=40, min_leaf_rows=5000)
    b = greedy_tree(model_of(table_of(3000, seed=5)), attrs, max_partitions=40, min_leaf_rows=5000)
    assert a == b and dict(a.meta)["cuts"] == dict(b.meta)["cuts"]


# ---- every tree: regions disjoint and covering, NULLs included ---------------------------------
ints = st.one_of(st.none(), st.integers(-50, 1050))
rows_st = st.fixed_dictionaries({
    "a": ints, "b": ints,
    "s": st.one_of(st.none(), st.sampled_from(["", "o", "p", "pp", "q", "x", "z"])),
    "d": st.one_of(st.none(), st.dates(dt.date(2019, 6, 1), dt.date(2021, 6, 1))),
})


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), nulls=st.sampled_from([0.0, 0.1, 0.6]), n=st.integers(1, 400),
       probes=st.lists(rows_st, min_size=1, max_size=30))
def test_every_row_lands_in_exactly_one_region(seed, nulls, n, probes):
    sample = table_of(n, seed, nulls)
    model = model_of(sample, rows=n * 1000)
    frame = SampleFrame(sample, model.analysis.derived)
    kinds = model.kinds
    attrs = ["a", "b", "s", "d", DERIVED]
    kw = dict(rows=n * 1000, row_bytes=32.0, max_partition_bytes=32 * 1000 * 4, max_partitions=64, table="t",
              min_leaf_rows=0)
    layouts = [
        amoeba_upfront(frame, kinds, attrs, **kw),
        amoeba_weighted(model, attrs, **kw),
        greedy_tree(model, attrs, max_partitions=64, min_leaf_rows=0),
    ]
    sample_rows = sample.to_pylist()
    for layout in layouts:
        assert [p.id for p in layout.partitions] == list(range(1, len(layout.partitions) + 1))
        for row in probes + sample_rows[:50]:
            assert len(containing(layout, row)) == 1, (layout.strategy, row)
        assert (model.labels(layout) >= 0).all()
    # the builder's vectorised skipping agrees with planner.pruning.hits on every leaf
    assert dict(layouts[2].meta)["estimated_rows"] == pytest.approx(model.evaluate(layouts[2]).rows)

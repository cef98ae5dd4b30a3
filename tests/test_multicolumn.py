"""Multi-column CPS plans: cross products of merged single-column plans within the partition budget."""
from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_dpmerge import assert_disjoint_and_covering, make_model, unpartitioned

from planner.costmodel.cost import CostParams
from planner.costmodel.dpmerge import cps_single_column
from planner.costmodel.multicolumn import (
    best_multi_column,
    budget_splits,
    cps_multi_column,
)
from planner.model.layout import Layout

# Two filters on x and d that each keep ~1/10 of the table, and queries that combine them: a
# plan on (x, d) lets the combined queries read ~1/100.
GRID = ";\n".join(
    [f"SELECT v FROM t WHERE x BETWEEN {lo} AND {lo + 99} AND d >= '{y}-01-01' AND d < '{y}-04-01'"
     for lo, y in [(0, 1993), (300, 1994), (600, 1995), (900, 1993), (100, 1994)]]
    + [f"SELECT v FROM t WHERE x BETWEEN {lo} AND {lo + 49}" for lo in (200, 500)]
    + ["SELECT v FROM t WHERE d >= '1995-06-01' AND d < '1995-08-01'",
       "SELECT v FROM t WHERE s IN ('a', 'b') AND x < 100"])


def test_budget_splits_worked_example():
    assert budget_splits([40, 6], 100) == [(16, 6), (25, 4), (33, 3)]
    assert budget_splits([5, 6], 100) == [(5, 6)]
    for split in budget_splits([40, 30, 20], 1000):
        assert math.prod(split) <= 1000 and all(1 <= k <= f for k, f in zip(split, (40, 30, 20)))


@pytest.mark.parametrize("budget", [4, 12, 40, 1000])
def test_multi_column_stays_within_budget_and_is_disjoint_covering(budget):
    model = make_model(GRID)
    layout = cps_multi_column(model, ("x", "d"), max_partitions=budget)
    assert len(layout.partitions) <= budget
    assert layout.strategy == "cps:x,d" and layout.attributes == ["x", "d"]
    assert [p.id for p in layout.partitions] == list(range(1, len(layout.partitions) + 1))
    assert_disjoint_and_covering(model, layout)
    assert dict(layout.meta)["estimated_cost"] == pytest.approx(model.evaluate(layout).total)
    assert Layout.loads(layout.dumps()) == layout


def test_three_columns_stay_within_budget():
    model = make_model(GRID)
    layout = cps_multi_column(model, ("s", "x", "d"), max_partitions=30)
    assert len(layout.partitions) <= 30
    assert_disjoint_and_covering(model, layout)


def test_multi_column_beats_single_columns_and_no_partitioning_on_a_grid_workload():
    model = make_model(GRID, params=CostParams(min_partition_bytes=1 << 20, partition_overhead_rows=100,
                                               file_overhead_rows=100))
    none = model.evaluate(unpartitioned(model)).total
    x = model.evaluate(cps_single_column(model, "x")).total
    d = model.evaluate(cps_single_column(model, "d")).total
    both = model.evaluate(cps_multi_column(model, ("x", "d"), max_partitions=200)).total
    assert x < none and d < none
    assert both < min(x, d)


def test_cells_respect_the_minimum_size_where_the_row_allows():
    model = make_model(GRID, params=CostParams(min_partition_bytes=8 << 20))
    layout = cps_multi_column(model, ("x", "d"), max_partitions=1000)
    cost = model.evaluate(layout)
    floor = model.params.min_partition_bytes / model.row_bytes
    # A cell is under the minimum only when its whole row (same x run) is, and then it is alone.
    by_row: dict = {}
    for p, rows in zip(layout.partitions, cost.partition_rows):
        by_row.setdefault(dict(p.region)["x"], []).append(rows)
    for cells in by_row.values():
        assert all(r >= floor * (1 - 1e-9) for r in cells) or len(cells) == 1


def test_best_multi_column_ranks_combinations():
    model = make_model(GRID)
    ranked = best_multi_column(model, ["x", "d", "s", cps_single_column(model, "v")], max_columns=3,
                               max_partitions=60)
    assert ranked and all(len(layout.partitions) <= 60 for layout in ranked)
    costs = [model.evaluate(layout).total for layout in ranked]
    assert costs == sorted(costs)
    assert {len(layout.attributes) for layout in ranked} <= {2, 3}
    assert len(ranked) == 4  # 3 pairs and 1 triple of x, d, s (v is never filtered: 1 partition)
    for layout in ranked:
        assert_disjoint_and_covering(model, layout)


@settings(max_examples=15, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 999), st.integers(0, 400), st.integers(0, 1000)), min_size=1, max_size=6),
       st.integers(1, 50))
def test_random_workloads_give_valid_plans(filters, budget):
    text = ";\n".join(
        f"SELECT v FROM t WHERE x BETWEEN {lo} AND {lo + k} AND d >= DATE '1993-01-01' + INTERVAL '{day}' DAY"
        if day % 2 else f"SELECT v FROM t WHERE x BETWEEN {lo} AND {lo + k} OR d < '1994-06-01'"
        for lo, k, day in filters)
    model = make_model(text, n=800, params=CostParams(min_partition_bytes=1 << 20))
    layout = cps_multi_column(model, ("x", "d"), max_partitions=budget)
    assert len(layout.partitions) <= budget
    assert_disjoint_and_covering(model, layout)
    # Residual clauses spanning x and d never prune a single-column region: the DP's own
    # estimate is still exactly the model's.
    single = cps_single_column(model, "x", max_partitions=budget)
    assert dict(single.meta)["estimated_cost"] == pytest.approx(model.evaluate(single).total, rel=1e-9)

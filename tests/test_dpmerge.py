"""CPS single-column plans: the merge DP against brute force, and the layouts it builds."""
from __future__ import annotations

import datetime as dt
import itertools
import math

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.analysis.table_analysis import analyze_table
from planner.cnf.valueset import ValueSet
from planner.costmodel.cost import CostModel, CostParams
from planner.costmodel.dpmerge import (
    column_pieces,
    cps_single_column,
    grouping_cost,
    merge_pieces,
    piece_counts,
    solve_merge,
)
from planner.costmodel.statistics import ColumnStats, TableStats
from planner.model.layout import Layout, Partition
from planner.workload import Schema, parse_workload

COLUMNS = {"x": "int", "d": "date", "s": "string", "v": "double"}
WORKLOAD = """
SELECT v FROM t WHERE x BETWEEN 10 AND 20;
SELECT v FROM t WHERE x BETWEEN 10 AND 20;
SELECT v FROM t WHERE x BETWEEN 15 AND 30;
SELECT * FROM t WHERE s IN ('a', 'b') AND x > 900;
SELECT count(*) FROM t WHERE d >= '1994-01-01' AND d < '1994-04-01';
SELECT count(*) FROM t WHERE d >= '1994-03-01' AND d < '1994-05-01' AND x < 500;
SELECT sum(v) FROM t WHERE x IS NULL;
SELECT sum(v) FROM t WHERE s = 'c';
"""


def make_model(workload: str = WORKLOAD, *, rows: int = 10_000_000, n: int = 4_000, seed: int = 0,
               params: CostParams | None = None) -> CostModel:
    """A model over a hand-built sample: x uniform 0..999 (1% NULL), d over 1993-1995, s in a..e."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 1000, n)
    x_null = rng.random(n) < 0.01
    d0 = dt.date(1993, 1, 1)
    sample = pa.table({
        "x": pa.array([None if z else int(v) for v, z in zip(x, x_null)], type=pa.int64()),
        "d": pa.array([d0 + dt.timedelta(days=int(k)) for k in rng.integers(0, 3 * 365, n)], type=pa.date32()),
        "s": pa.array([str(c) for c in rng.choice(list("abcde"), n)], type=pa.string()),
        "v": pa.array(rng.random(n), type=pa.float64()),
    })
    widths = {"x": 4.0, "d": 4.0, "s": 2.0, "v": 8.0}
    stats = TableStats("t", rows, int(rows * 18), tuple(ColumnStats(c, t, widths[c]) for c, t in COLUMNS.items()),
                       sample)
    analysis = analyze_table(parse_workload(workload, schema=Schema({"t": COLUMNS})), "t", COLUMNS)
    return CostModel(analysis, stats, params or CostParams(min_partition_bytes=1 << 20))


def unpartitioned(model: CostModel) -> Layout:
    return Layout("t", "none", (Partition(1, ()),))


def assert_partitions_domain(sets) -> None:
    sets = list(sets)
    for a, b in itertools.combinations(sets, 2):
        assert not a.overlaps(b), (str(a), str(b))
    union = sets[0]
    for vs in sets[1:]:
        union = union.union(vs)
    assert union.is_everything(), str(union)


def assert_disjoint_and_covering(model: CostModel, layout: Layout) -> None:
    """Regions are boxes ``head × last``: the heads are the cross product of per-attribute sets
    that each partition their domain (NULL included), and under each head the last attribute's
    sets partition its domain. Together that makes the regions disjoint and covering."""
    attrs = layout.attributes
    assert all([a for a, _ in p.region] == attrs for p in layout.partitions)
    heads: dict[tuple, list] = {}
    for p in layout.partitions:
        heads.setdefault(p.region[:-1], []).append(p.region[-1][1])
    for lasts in heads.values():
        assert_partitions_domain(lasts)
    per_attr = [list(dict.fromkeys(h[d][1] for h in heads)) for d in range(len(attrs) - 1)]
    for sets in per_attr:
        assert_partitions_domain(sets)
    assert len(heads) == math.prod(len(s) for s in per_attr)
    # Row level: every sample row (NULLs included) falls in exactly one region.
    inside = sum(model.sample.region_mask(p.region).astype(int) for p in layout.partitions)
    assert (inside == 1).all()


# ---- the pure merge --------------------------------------------------------------------------
def all_cuts(m: int):
    for mask in range(1 << (m - 1)):
        groups, start = [], 0
        for k in range(m - 1):
            if mask >> k & 1:
                groups.append((start, k))
                start = k + 1
        groups.append((start, m - 1))
        yield groups


def brute_force(sizes, hits, weights, min_size, max_groups, overhead):
    if sum(sizes) < min_size:
        return grouping_cost(sizes, hits, weights, [(0, len(sizes) - 1)], overhead)
    best = np.inf
    for cut in all_cuts(len(sizes)):
        if max_groups is not None and len(cut) > max_groups:
            continue
        if any(sum(sizes[i:j + 1]) < min_size for i, j in cut):
            continue
        best = min(best, grouping_cost(sizes, hits, weights, cut, overhead))
    return best


def step_overhead(rows: np.ndarray) -> np.ndarray:
    """Like the model's: a fixed cost per partition plus one per 'file' of 60 rows."""
    return 7.0 + 3.0 * np.maximum(1, np.ceil(rows / 60.0))


@st.composite
def merge_cases(draw):
    m = draw(st.integers(1, 8))
    s = draw(st.integers(0, 5))
    sizes = draw(st.lists(st.integers(0, 100), min_size=m, max_size=m))
    hits = np.array(draw(st.lists(st.lists(st.booleans(), min_size=m, max_size=m), min_size=s, max_size=s)),
                    dtype=bool).reshape(s, m)
    weights = draw(st.lists(st.integers(0, 5), min_size=s, max_size=s))
    min_size = draw(st.one_of(st.just(0), st.integers(0, 150)))
    max_groups = draw(st.one_of(st.none(), st.integers(1, m)))
    overhead = draw(st.sampled_from([0.0, 5.0, step_overhead]))
    return sizes, hits, weights, min_size, max_groups, overhead


def check_feasible(groups, sizes, min_size, max_groups):
    m = len(sizes)
    assert [i for i, _ in groups] == [0] + [j + 1 for _, j in groups[:-1]]
    assert groups[-1][1] == m - 1 and all(i <= j for i, j in groups)
    if max_groups is not None:
        assert len(groups) <= max_groups
    if sum(sizes) >= min_size:
        assert all(sum(sizes[i:j + 1]) >= min_size for i, j in groups)
    else:
        assert groups == [(0, m - 1)]


@settings(max_examples=400, deadline=None)
@given(merge_cases())
def test_merge_is_optimal_against_brute_force(case):
    sizes, hits, weights, min_size, max_groups, overhead = case
    groups = merge_pieces(sizes, hits, weights, min_size=min_size, max_groups=max_groups, overhead=overhead)
    check_feasible(groups, sizes, min_size, max_groups)
    got = grouping_cost(sizes, hits, weights, groups, overhead)
    assert got == pytest.approx(brute_force(sizes, hits, weights, min_size, max_groups, overhead), rel=1e-9)
    merge = solve_merge(sizes, hits, weights, min_size=min_size, max_groups=max_groups, overhead=overhead)
    assert merge.exact and merge.cost == pytest.approx(got, rel=1e-9)


@settings(max_examples=300, deadline=None)
@given(merge_cases())
def test_lagrangian_is_optimal_for_its_own_group_count(case):
    sizes, hits, weights, min_size, max_groups, overhead = case
    merge = solve_merge(sizes, hits, weights, min_size=min_size, max_groups=max_groups, overhead=overhead,
                        method="lagrangian")
    groups = list(merge.groups)
    check_feasible(groups, sizes, min_size, max_groups)
    # Optimal among all cuts with at most as many runs as it uses; exact when it uses the budget.
    own = brute_force(sizes, hits, weights, min_size, len(groups), overhead)
    assert merge.cost == pytest.approx(own, rel=1e-9)
    if merge.exact:
        assert merge.cost == pytest.approx(brute_force(sizes, hits, weights, min_size, max_groups, overhead),
                                           rel=1e-9)


def test_hand_computed_case():
    # sizes 10 10 80; A (w=1) reads piece 0, B (w=2) piece 2, C (w=1) everything; 5 per partition.
    #   {0}{1}{2}: (1+1)·15 + 1·15 + (2+1)·85 = 300      {0,1}{2}: 2·25 + 255 = 305
    #   {0}{1,2}:  30 + 3·95 = 315                         {0,1,2}: 4·105 = 420
    sizes, hits, weights = [10, 10, 80], [[0], [2], [0, 1, 2]], [1, 2, 1]
    case = dict(overhead=5.0)
    assert merge_pieces(sizes, hits, weights, **case) == [(0, 0), (1, 1), (2, 2)]
    assert solve_merge(sizes, hits, weights, **case).cost == 300.0
    assert merge_pieces(sizes, hits, weights, max_groups=2, **case) == [(0, 1), (2, 2)]
    assert solve_merge(sizes, hits, weights, max_groups=2, **case).cost == 305.0
    assert merge_pieces(sizes, hits, weights, min_size=15, **case) == [(0, 1), (2, 2)]
    assert solve_merge(sizes, hits, weights, max_groups=1, **case).cost == 420.0
    whole = solve_merge(sizes, hits, weights, min_size=200, **case)  # table below the minimum: one run
    assert whole.groups == ((0, 2),) and whole.cost == 420.0
    assert merge_pieces(sizes, hits, weights, max_groups=2, method="lagrangian", **case) == [(0, 1), (2, 2)]
    # Hit lists and a boolean matrix are the same input.
    matrix = np.array([[1, 0, 0], [0, 0, 1], [1, 1, 1]], dtype=bool)
    assert merge_pieces(sizes, matrix, weights, **case) == [(0, 0), (1, 1), (2, 2)]


def test_large_merge_lagrangian_against_the_exact_layered_dp():
    rng = np.random.default_rng(3)
    m, s = 400, 300
    sizes = rng.integers(0, 1000, m)
    starts = rng.integers(0, m, s)
    hits = [list(range(a, min(m, a + int(k)))) for a, k in zip(starts, rng.integers(1, 30, s))]
    free = solve_merge(sizes, hits, np.ones(s), overhead=10.0)
    assert free.method == "unconstrained" and len(free.groups) > 50
    exact = solve_merge(sizes, hits, np.ones(s), max_groups=50, overhead=10.0, method="layered")
    lagr = solve_merge(sizes, hits, np.ones(s), max_groups=50, overhead=10.0, method="lagrangian")
    assert exact.exact and len(exact.groups) <= 50 and len(lagr.groups) <= 50
    assert free.cost <= exact.cost <= lagr.cost * (1 + 1e-12)
    assert lagr.cost == pytest.approx(grouping_cost(sizes, hits, np.ones(s), lagr.groups, 10.0))
    if lagr.exact:
        assert lagr.cost == pytest.approx(exact.cost, rel=1e-9)
    assert lagr.cost <= exact.cost * 1.01  # the duality gap is small in practice


# ---- layouts from the model -------------------------------------------------------------------
def test_piece_counts_match_sample_masks():
    model = make_model()
    info = column_pieces(model, "x")
    counts = piece_counts(model.sample, "x", info.pieces.pieces)
    assert counts.tolist() == [int(model.sample.mask("x", p).sum()) for p in info.pieces.pieces]
    assert counts.sum() == model.sample.n
    assert info.pieces.pieces[-1] == ValueSet.only_null(model.kinds["x"]) and counts[-1] > 0


@pytest.mark.parametrize("column", ["x", "d", "s"])
def test_single_column_layout_is_disjoint_covering_and_priced_as_the_model_does(column):
    model = make_model()
    layout = cps_single_column(model, column)
    assert layout.strategy == f"cps:{column}" and layout.attributes == [column]
    assert [p.id for p in layout.partitions] == list(range(1, len(layout.partitions) + 1))
    assert_disjoint_and_covering(model, layout)
    meta = dict(layout.meta)
    assert meta["exact"] and meta["estimated_cost"] == pytest.approx(model.evaluate(layout).total, rel=1e-9)
    assert Layout.loads(layout.dumps()) == layout
    sizes = model.evaluate(layout).partition_rows
    if sum(sizes) * model.row_bytes >= model.params.min_partition_bytes:
        assert min(sizes) * model.row_bytes >= model.params.min_partition_bytes * (1 - 1e-9)


def test_cps_beats_no_partitioning_and_the_raw_candidate_plan():
    model = make_model()
    base = model.evaluate(unpartitioned(model)).total
    layout = cps_single_column(model, "x")
    assert model.evaluate(layout).total < base
    # Every elementary piece its own partition is one of the cuts the DP considered.
    info = column_pieces(model, "x")
    raw = Layout("t", "raw", tuple(Partition(k + 1, (("x", p),)) for k, p in enumerate(info.pieces.pieces)))
    assert model.evaluate(layout).total <= model.evaluate(raw).total * (1 + 1e-9) or \
        min(model.evaluate(raw).partition_rows) * model.row_bytes < model.params.min_partition_bytes


def test_partition_bounds_are_respected():
    model = make_model(params=CostParams(min_partition_bytes=1 << 20, max_partitions=3,
                                         partition_overhead_rows=0, file_overhead_rows=0))
    layout = cps_single_column(model, "x")
    assert len(layout.partitions) <= 3
    assert_disjoint_and_covering(model, layout)
    assert len(cps_single_column(model, "x", max_partitions=2).partitions) <= 2
    # A huge minimum size leaves one partition holding everything.
    big = make_model(params=CostParams(min_partition_bytes=1 << 40))
    only = cps_single_column(big, "x")
    assert len(only.partitions) == 1 and dict(only.partitions[0].region)["x"].is_everything()


def test_null_lands_in_exactly_one_partition_even_when_queried_alone():
    model = make_model(params=CostParams(min_partition_bytes=0))
    layout = cps_single_column(model, "x")
    with_null = [p for p in layout.partitions if dict(p.region)["x"].null]
    assert len(with_null) == 1
    assert_disjoint_and_covering(model, layout)


def test_column_nobody_filters_on_gives_one_partition():
    model = make_model()
    layout = cps_single_column(model, "v")
    assert len(layout.partitions) == 1
    assert_disjoint_and_covering(model, layout)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(-50, 1050), st.integers(0, 300)), min_size=1, max_size=12),
       st.integers(0, 3 << 20))
def test_random_range_workloads_give_valid_model_optimal_layouts(ranges, min_bytes):
    text = ";\n".join(f"SELECT v FROM t WHERE x BETWEEN {lo} AND {lo + k}" for lo, k in ranges)
    model = make_model(text, n=600, params=CostParams(min_partition_bytes=min_bytes))
    layout = cps_single_column(model, "x")
    assert_disjoint_and_covering(model, layout)
    assert dict(layout.meta)["estimated_cost"] == pytest.approx(model.evaluate(layout).total, rel=1e-9)
    assert model.evaluate(layout).total <= model.evaluate(unpartitioned(model)).total * (1 + 1e-9)

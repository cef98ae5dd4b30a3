"""The per-query guard against the table as it is, by hand, and as a property of every advice.

The guard judges time (``planner.costmodel.timing``); the hand-made cases price a second per row
read and nothing else (``ROWS_AS_SECONDS``), so their figures are rows.

Table ``t``, 12 rows loaded in ``k`` order, ``x = k mod 4`` (the sample is the whole table):

    k  1 2 3 | 4 5 6 | 7 8 9 | 10 11 12      row groups of 3 rows, as the footers say
    x  1 2 3 | 0 1 2 | 3 0 1 |  2  3  0

Sorted by ``x`` (blocks of 3 rows, one file) the blocks are ``x = 0: k {4, 8, 12}``,
``x = 1: k {1, 5, 9}``, ``x = 2: k {2, 6, 10}``, ``x = 3: k {3, 7, 11}``:

* ``x BETWEEN 1 AND 2`` reads every row group today (each box holds 1 or 2): 12 rows; sorted by
  ``x``: two blocks, 6 rows;
* ``k BETWEEN 1 AND 6`` reads two row groups today: 6 rows; sorted by ``x`` every block spans k
  from about 1 to 12: 12 rows, 2.0x. A regression.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.advice.guard import Guard
from planner.advice.ranking import advice_json, advice_text, advise, make_guard
from planner.analysis.table_analysis import analyze_table
from planner.cnf.valueset import ValueSet
from planner.costmodel import baselines
from planner.costmodel.cost import CostModel, CostParams
from planner.costmodel.current import is_current
from planner.costmodel.robustness import RangeQuery, robustness_analysis
from planner.costmodel.search import rank, search
from planner.costmodel.statistics import (
    ChunkStats,
    ColumnStats,
    DataFile,
    RowGroupStats,
    TableStats,
)
from planner.model.layout import Ordering
from planner.semantics.kinds import Kind
from planner.workload import parse_workload
from time_params import ROWS_AS_SECONDS

COLUMNS = {"k": "int", "x": "int"}
K = list(range(1, 13))
X = [k % 4 for k in K]
PARAMS = CostParams(partition_overhead_rows=0, file_overhead_rows=0, row_group_rows=3, page_rows=3,
                    min_partition_bytes=1, target_file_bytes=1 << 30, time=ROWS_AS_SECONDS)


def footers(k, x, group: int) -> tuple[DataFile, ...]:
    groups = tuple(RowGroupStats(len(k[i:i + group]), {"k": ChunkStats(min(k[i:i + group]), max(k[i:i + group]), 0),
                                                        "x": ChunkStats(min(x[i:i + group]), max(x[i:i + group]), 0)})
                   for i in range(0, len(k), group))
    return (DataFile("/t/a.parquet", (), groups),)


def stats_of(k, x, group: int = 3) -> TableStats:
    sample = pa.table({"k": pa.array(k, pa.int64()), "x": pa.array(x, pa.int64())})
    return TableStats("t", len(k), 100 * len(k), tuple(ColumnStats(c, t, 4.0) for c, t in COLUMNS.items()), sample,
                      data_files=footers(k, x, group), row_group_rows=group)


def hand_guard(workload: str = "SELECT * FROM t WHERE x BETWEEN 1 AND 2;") -> tuple[CostModel, Guard]:
    wl = parse_workload(workload)
    model = CostModel(analyze_table(wl, "t", COLUMNS), stats_of(K, X), PARAMS)
    lookup = RangeQuery("k", ValueSet.range(Kind.INTEGER, 1, 6), 0.5)
    robust = model.sibling(robustness_analysis(model.analysis, [lookup]))
    return model, Guard(model, robust, [lookup], ["statement 1 (x in 1..2)"])


def sorted_by(column: str):
    return replace(baselines.full_scan("t"), order=Ordering("sort", (column,)))


def test_the_current_table_by_hand():
    model, guard = hand_guard()
    assert guard.current_workload.tolist() == [12]
    assert guard.current_robust.tolist() == [6]


def test_a_layout_that_loses_the_load_order_regresses_the_lookup():
    model, guard = hand_guard()
    layout = sorted_by("x")
    cost = model.evaluate(layout)
    assert [s.rows for s in cost.per_scan] == [6]  # the workload gains 2x
    verdict = guard.check(layout, cost)
    assert not verdict.ok
    (r,) = verdict.regressions
    assert (r.query, r.current, r.seconds, r.ratio) == ("k in [1, 6] (~50%)", 6, 12, 2.0)
    assert (r.current_rows, r.rows) == (6, 12)
    assert verdict.worst == 2.0 and verdict.robust_rows == 12


def test_keeping_the_load_order_passes():
    model, guard = hand_guard()
    layout = sorted_by("k")
    verdict = guard.check(layout, model.evaluate(layout))
    assert verdict.ok and verdict.robust_per_query == (6.0,)


def test_the_search_picks_only_allowed_layouts_unless_told():
    model, guard = hand_guard()
    guarded = search(model, guard=guard)
    assert guarded.best.allowed
    assert all(c.allowed for c in guarded.ranked[:1 + sum(c.allowed for c in guarded.ranked[1:])])
    loose = search(model, guard=guard, allow_regressions=True)
    assert loose.best.score <= guarded.best.score
    assert not loose.best.allowed  # the cheapest layout sorts by x and regresses the lookup
    assert loose.best.rows < guarded.best.rows
    assert guarded.unguarded().best.layout == loose.best.layout


def test_the_table_as_it_is_wins_unless_beaten_by_the_minimum_gain():
    model, guard = hand_guard()
    from planner.costmodel.search import Scorer
    score = Scorer(model, guard)
    current, same = score(model.current().layout), score(sorted_by("k"))
    assert is_current(rank([current, same], [], ()).best.layout)  # no gain: keep the table
    better = score(sorted_by("x"))
    assert is_current(rank([current, better], [], ()).best.layout)  # better but not allowed
    assert rank([current, better], [], (), allow_regressions=True).best is better


def test_the_report_lists_regressions_and_the_ranking_shows_its_terms():
    """The same table with 120 rows: the robustness set's 10 % ranges of k read 4 or 5 row groups
    today and every block sorted by x."""
    wl = parse_workload("SELECT * FROM t WHERE x = 1;")
    a = analyze_table(wl, "t", COLUMNS)
    k = list(range(1, 121))
    stats = stats_of(k, [v % 4 for v in k])
    params = replace(PARAMS, robustness_columns=("k",))  # ad-hoc ranges on k matter, though no query filters it
    advice = advise(wl, a, stats, params)
    text = advice_text(advice)
    assert "est. time" in text and "rows read" in text and "robust" in text and "guard" in text
    first = advice_json(advice)["ranking"][0]
    assert first["current"]
    assert abs(first["score"] - (first["seconds"] + first["robustness_seconds"])) <= 0.002
    loose = advise(wl, a, stats, replace(params, allow_regressions=True))
    listed = advice_json(loose)["winner"]["regressions"]
    assert listed and all(r["ratio"] > 1.2 for r in listed)
    assert "queries that get noticeably slower under the winner than today" in advice_text(loose)
    assert "--allow-regressions" in advice_text(advice) and "what decides between them" in advice_text(advice)


def test_the_best_new_layout_carries_the_write_hints_it_was_priced_with():
    """A re-layout (``planner status``) moves toward ``best_new`` even when the advice keeps the
    table as it is; written without the row group and page rows the model assumed, Parquet's
    defaults make it read more than it was priced at."""
    wl = parse_workload("SELECT * FROM t WHERE x = 1;")
    k = list(range(1, 121))
    advice = advise(wl, analyze_table(wl, "t", COLUMNS), stats_of(k, [v % 4 for v in k]), PARAMS)
    new = advice.best_new
    assert new is not None and not is_current(new)
    meta = dict(new.meta)
    assert (meta["row_group_rows"], meta["page_rows"]) == (PARAMS.row_group_rows, PARAMS.page_rows)
    assert new.generation is not None and "partition_rows" in meta
    if not advice.keeps_current:
        assert new == advice.layout


# ---- the guard holds for every advice (property) ------------------------------------------------------
columns = st.sampled_from(["k", "x", "y"])


@st.composite
def workloads(draw):
    queries = []
    for _ in range(draw(st.integers(1, 5))):
        col = draw(columns)
        lo = draw(st.integers(0, 300))
        queries.append(f"SELECT * FROM t WHERE {col} BETWEEN {lo} AND {lo + draw(st.integers(0, 120))};")
    return "\n".join(queries)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(40, 160), group=st.integers(4, 20), seed=st.integers(0, 1000), text=workloads())
def test_the_pick_never_regresses_a_guarded_query(n, group, seed, text):
    rng = np.random.default_rng(seed)
    k = sorted(rng.integers(0, 300, n).tolist())  # loaded in k order
    x = rng.integers(0, 300, n).tolist()
    y = [v + int(d) for v, d in zip(x, rng.integers(0, 40, n))]  # correlated with x
    cols = {"k": "int", "x": "int", "y": "int"}
    sample = pa.table({c: pa.array(v, pa.int64()) for c, v in zip(cols, (k, x, y))})
    files = (DataFile("/t/a.parquet", (), tuple(
        RowGroupStats(len(k[i:i + group]), {c: ChunkStats(min(v[i:i + group]), max(v[i:i + group]), 0)
                                             for c, v in zip(cols, (k, x, y))}) for i in range(0, n, group))),)
    stats = TableStats("t", n, 100 * n, tuple(ColumnStats(c, t, 4.0) for c, t in cols.items()), sample,
                       data_files=files, row_group_rows=group)
    params = CostParams(partition_overhead_rows=1, file_overhead_rows=1, row_group_rows=group, page_rows=group,
                        min_partition_bytes=100 * group, target_file_bytes=1 << 30, max_partitions=16)
    wl = parse_workload(text)
    advice = advise(wl, analyze_table(wl, "t", cols), stats, params)
    best = advice.result.best
    # judged again by a guard of its own: no workload query, no robustness range reads > 1.2x today
    model = CostModel(analyze_table(wl, "t", cols), stats, params)
    guard = make_guard(model, wl)
    verdict = guard.check(best.layout, model.evaluate(best.layout))
    assert verdict.ok, verdict.regressions


def test_the_robustness_weight_trades_the_workload_for_the_robustness_set():
    """``--robustness-weight``: the heavier the queries no workload names weigh, the less the pick
    reads on them and the more on the workload (here: sorted by x, then x partitions keeping k's
    order inside, then the table as it is)."""
    wl = parse_workload("SELECT * FROM t WHERE x BETWEEN 1 AND 2;")
    analysis = analyze_table(wl, "t", COLUMNS)
    picks = [advise(wl, analysis, stats_of(K, X), replace(PARAMS, allow_regressions=True, robustness_weight=w,
                                                          robustness_columns=("k",))
                    ).result.best for w in (0.0, 1.0, 100.0)]
    workload = [p.rows for p in picks]
    robust = [p.verdict.robust_rows for p in picks]
    assert workload == sorted(workload) and robust == sorted(robust, reverse=True)
    assert robust[-1] < robust[0] and workload[-1] > workload[0]


def test_a_table_clustered_on_a_key_is_also_offered_a_few_partitions_in_its_load_order():
    """The guard rules out the full cut of a clustered table; the search also costs coarse cuts
    (``coarse_cuts``: 2 to 8 ranges of one filtered column), each kept in the load order, which
    can pass it (SF 1 Q6 variants: the guarded pick is three ranges of l_quantity)."""
    from planner.costmodel.search import COARSE_PARTITIONS, coarse_cuts

    n = 60_000
    k = list(range(1, n + 1))
    x = [(v * 7919) % 16 for v in k]
    wl = parse_workload("SELECT * FROM t WHERE x <= 3;\n" * 4)
    analysis = analyze_table(wl, "t", COLUMNS)
    params = replace(PARAMS, row_group_rows=100, page_rows=100)
    adv = advise(wl, analysis, stats_of(k, x, group=100), params)
    cuts = coarse_cuts(adv.guard.model, ["x"])
    assert cuts and all(1 < len(c.partitions) <= max(COARSE_PARTITIONS) for c in cuts)
    load = Ordering("sort", ("k",))
    costed = {(len(v.layout.partitions), v.layout.order) for v in adv.result.variants}
    assert all((len(c.partitions), load) in costed for c in cuts)

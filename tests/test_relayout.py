"""Partial re-layout (planner.advice.relayout_plan), its SQL, ``planner status``'s figures and clustering depth.

Table ``t``: x = 0..9999, y = x mod 100 (uniform, independent of x's ranges), 10,000 rows.
Current layout: 4 partitions on x (quarters). The new window filters y = 7 on the first quarter
only: re-cutting that quarter by y pays (every query reads 2,500 rows instead of ~25), the other
three are read by nobody and stay.
"""
from __future__ import annotations

import math

import pyarrow as pa
import sqlglot

from planner.advice.layout_status import status_of
from planner.advice.relayout_plan import (
    intersect_regions,
    pieces,
    pieces_of,
    plan_relayout,
)
from planner.analysis.table_analysis import analyze_table
from planner.cnf.valueset import ValueSet
from planner.costmodel.clustering import clustering, column_depth, depths
from planner.costmodel.cost import CostModel, CostParams
from planner.costmodel.statistics import ColumnStats, TableStats
from planner.emit.relayout_sql import recut_insert, relayout_script
from planner.model.layout import Layout, Partition, with_generation
from planner.semantics.kinds import Kind
from planner.workload import parse_workload

COLUMNS = {"x": "bigint", "y": "bigint"}
N = 10_000
TABLE = pa.table({"x": pa.array(range(N), pa.int64()), "y": pa.array([i % 100 for i in range(N)], pa.int64())})
PARAMS = CostParams(partition_overhead_rows=10, file_overhead_rows=1, row_group_rows=1_000_000)


def _model(workload: str) -> CostModel:
    stats = TableStats("t", N, N * 16, tuple(ColumnStats(c, t, 8.0) for c, t in COLUMNS.items()), TABLE)
    return CostModel(analyze_table(parse_workload(workload), "t", COLUMNS), stats, PARAMS)


def _quarters() -> Layout:
    k = Kind.INTEGER
    parts = [Partition(i + 1, (("x", ValueSet.range(k, i * 2500, (i + 1) * 2500, True, False)),)) for i in range(3)]
    parts.append(Partition(4, (("x", ValueSet.range(k, 7500, None).union(ValueSet.only_null(k))),)))
    return with_generation(Layout("t", "quarters", tuple(parts), kinds=(("x", k),), types=(("x", "bigint"),)))


def _by_y() -> Layout:
    k = Kind.INTEGER
    parts = [Partition(1, (("y", ValueSet.points(k, [7])),)),
             Partition(2, (("y", ValueSet.points(k, [7]).complement()),))]
    return Layout("t", "y", tuple(parts), kinds=(("y", k),), types=(("y", "bigint"),))


WINDOW = "SELECT * FROM t WHERE x < 2000 AND y = 7;\n" * 20


def test_regions_intersect_per_attribute_and_empty_ones_vanish():
    k = Kind.INTEGER
    a = (("x", ValueSet.range(k, 0, 10)),)
    assert intersect_regions(a, (("x", ValueSet.range(k, 20, 30)),)) is None
    both = dict(intersect_regions(a, (("y", ValueSet.points(k, [1])),)))
    assert set(both) == {"x", "y"}
    assert len(pieces(_quarters().partitions[0], _by_y())) == 2


def test_only_the_partition_the_window_reads_is_recut():
    current, target = _quarters(), _by_y()
    plan = plan_relayout(_model(WINDOW), current, target)
    first = current.partitions[0].id
    assert plan.chosen == (first,)
    assert math.isclose(plan.rows_rewritten, 2500)
    new = plan.layout
    # untouched partitions keep their ids and generation; the pieces are a new generation
    assert [p.id for p in new.partitions[2:]] == [p.id for p in current.partitions[1:]]
    assert new.generation != current.generation
    assert all(p.generation == new.generation for p in new.partitions[:2])
    assert set(pieces_of(plan)[first]) == set(plan.new_ids)
    assert not set(plan.new_ids) & set(current.known_ids)
    # the stored description round-trips
    assert Layout.loads(new.dumps()) == new


def test_a_high_write_cost_leaves_the_table_alone():
    plan = plan_relayout(_model(WINDOW), _quarters(), _by_y(), write_cost=1e6)
    assert plan.chosen == () and plan.layout == _quarters()


def test_recut_sql_reads_only_the_chosen_partitions_and_round_trips():
    plan = plan_relayout(_model(WINDOW), _quarters(), _by_y())
    sql = recut_insert(plan, COLUMNS, "db.t", "db.t__planner_relayout", dialect="spark").sql("spark")
    tree = sqlglot.parse_one(sql, read="spark")
    assert tree.args["overwrite"]
    where = tree.expression.args["where"].sql("spark")
    assert str(plan.chosen[0]) in where and "IN" in where
    for pid in plan.new_ids:
        assert str(pid) in sql
    script = relayout_script(plan, COLUMNS, "db.t", "db.t__planner_relayout", {plan.new_ids[0]: "/tmp/x"},
                             dialect="hive")
    for s in script:
        sqlglot.parse_one(s, read="hive")
    assert any("DROP IF EXISTS PARTITION" in s for s in script)


def test_the_recut_filter_reads_old_ids_from_the_source_under_any_order():
    from dataclasses import replace

    from planner.model.layout import Ordering

    for order in (Ordering("sort", ("y",)), Ordering("zorder", ("x", "y"), ((1000, 2000), (50,)))):
        current = replace(_quarters(), order=order)
        plan = plan_relayout(_model(WINDOW), current, _by_y())
        tree = sqlglot.parse_one(recut_insert(plan, COLUMNS, "db.t", "db.s", dialect="spark").sql("spark"),
                                 read="spark")
        from planner.emit.relayout_sql import _read_tables

        readers = [s for s in tree.find_all(sqlglot.exp.Select) if s.args.get("where")]
        assert len(readers) == 1 and [t.name for t in _read_tables(readers[0])] == ["t"]  # filtered where t is read


def test_status_figures():
    model = _model(WINDOW)
    current, target = _quarters(), _by_y()
    plan = plan_relayout(model, current, target)
    st = status_of(model, current, target, plan)
    assert st.cold == [p.id for p in current.partitions[1:]]
    assert st.hot == [current.partitions[0].id]
    assert st.miscut == list(plan.chosen)
    j = st.to_json()
    assert j["partial_relayout"]["rows_rewritten"] == 2500
    assert j["partial_relayout"]["break_even_queries"] < j["full_relayout"]["break_even_queries"]
    assert "break-even" in st.text()


def test_clustering_depth():
    assert depths([(1, 5), (4, 9), (10, 12)]) == [2, 2, 1]
    d = column_depth("x", {1: [(1, 5), (4, 9), (10, 12)]})
    assert math.isclose(d.depth, 5 / 3) and math.isclose(d.overlap, (5 / 3 - 1) / 2)
    from planner.costmodel.statistics import ChunkStats, DataFile, RowGroupStats

    groups = tuple(RowGroupStats(10, {"a": ChunkStats(i, i + 1, 0), "b": ChunkStats(0, 100, 0)})
                   for i in range(0, 20, 2))
    sorted_, shuffled = clustering(["a", "b"], [DataFile("f", (("pid", "1"),), groups)])
    assert sorted_.depth == 1.0 and shuffled.depth == 10.0 and shuffled.overlap == 1.0


def test_the_partition_cap_keeps_the_best_gain_per_row():
    from planner.advice.relayout_plan import PartitionGain, choose

    gains = [PartitionGain(1, 100, 10_000, 0, 5, 3), PartitionGain(2, 100, 5_000, 0, 5, 3),
             PartitionGain(3, 100, 300, 0, 5, 3)]  # 3 gains 300 < 4 x 100: never
    assert choose(gains) == (1, 2)
    assert choose(gains, max_partitions=7) == (1,)  # 3 partitions + 4 more pieces
    assert choose(gains, only=[2]) == (2,)


def test_an_append_that_overlaps_a_sorted_run_breaks_its_order():
    from hive_integration.spark.order_check import out_of_order

    assert not out_of_order([(1, 5), (5, 9), (9, 12)])
    assert out_of_order([(1, 5), (5, 9), (9, 12), (3, 7)])
    assert not out_of_order([(1, 5), (5, 9), (13, 20)])  # new values after the run: still in order


def test_runs_are_told_apart_by_the_write_that_made_them():
    from hive_integration.spark.order_check import runs_out_of_order, write_of

    job = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"
    assert write_of(f"file:/w/t/planner_pid=3/part-00001-{job}.c000.snappy.parquet") == job
    assert write_of("file:/w/t/planner_pid=3/000000_0") is None
    # two tasks of one write, each sorted, overlap by design: one run
    assert not runs_out_of_order([[(1, 5), (5, 9), (2, 6), (6, 10)]])
    # a later write landing inside the first one's range breaks the order; one after it does not
    assert runs_out_of_order([[(1, 5), (5, 9)], [(3, 7)]])
    assert not runs_out_of_order([[(1, 5), (5, 9)], [(10, 12)]])


def test_file_size_entropy_counts_the_shortfall_from_full_files():
    from planner.advice.layout_status import file_size_entropy

    mb = 1 << 20
    full = file_size_entropy([("p=1", 128 * mb), ("p=1", 128 * mb), ("p=2", 50 * mb)], 128 * mb)
    assert full.table == 0.0 and full.small == 0  # a partition of 50 MB in one file is as good as it gets
    split = file_size_entropy([("p=1", 128 * mb)] + [("p=2", 5 * mb)] * 10, 128 * mb)
    assert split.worst[0][0] == "p=2" and split.worst[0][2] > 0.8 and split.small == 10
    assert 0 < split.table < 1 and "p=2 (10 files" in split.text()


def test_a_plan_that_recuts_nothing_prints_no_sql():
    """Issue 34: ``relayout --print-sql`` printed ``… IN ()`` and ``ALTER TABLE … DROP IF EXISTS;``
    (both rejected by Spark) where ``relayout`` itself said "nothing to re-cut"."""
    import pytest

    from planner.emit.relayout_sql import drop_partitions

    plan = plan_relayout(_model(WINDOW), _quarters(), _by_y(), write_cost=1e6)
    assert plan.chosen == ()
    assert relayout_script(plan, COLUMNS, "db.t", "db.t__planner_relayout", {}, dialect="hive") == []
    with pytest.raises(ValueError):
        drop_partitions("db.t", "planner_pid", [])

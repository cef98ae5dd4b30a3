"""The table as it is now, priced from its footers, by hand.

Table ``t`` (the sample is the whole table, scale 1), two data files as its Parquet footers
describe them (``k`` is the load order, ``x`` scattered):

    file a   row group 1:  3 rows   k 1..3   x 10..60
             row group 2:  3 rows   k 4..6   x  5..50
    file b   row group 3:  4 rows   k 7..9   x  1..99    (x has one NULL)

Overheads: one partition of 2 files, 100 + 2 x 10 = 120 row-equivalents per scan.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from planner.analysis.table_analysis import analyze_table
from planner.costmodel.cost import CostModel, CostParams
from planner.costmodel.current import CURRENT, clustering, is_current
from planner.costmodel.statistics import (
    ChunkStats,
    ColumnStats,
    DataFile,
    RowGroupStats,
    TableStats,
)
from planner.workload import parse_workload

COLUMNS = {"k": "int", "x": "int"}
ROWS = {"k": [1, 2, 3, 4, 5, 6, 7, 8, 9, 9], "x": [10, 60, 30, 5, 50, 20, 1, 99, None, 40]}
FILES = (
    DataFile("/t/a.parquet", (), (
        RowGroupStats(3, {"k": ChunkStats(1, 3, 0), "x": ChunkStats(10, 60, 0)}),
        RowGroupStats(3, {"k": ChunkStats(4, 6, 0), "x": ChunkStats(5, 50, 0)}),
    )),
    DataFile("/t/b.parquet", (), (RowGroupStats(4, {"k": ChunkStats(7, 9, 0), "x": ChunkStats(1, 99, 1)}),)),
)
PARAMS = CostParams(partition_overhead_rows=100, file_overhead_rows=10)


def model(workload: str, files=FILES, sample: pa.Table | None = None, columns=COLUMNS, group_rows: int = 0
          ) -> CostModel:
    sample = sample if sample is not None else pa.table({c: pa.array(v, pa.int64()) for c, v in ROWS.items()})
    stats = TableStats("t", 10, 1000, tuple(ColumnStats(c, t, 4.0) for c, t in columns.items()), sample,
                       data_files=files, files=len(files), row_group_rows=group_rows)
    return CostModel(analyze_table(parse_workload(workload), "t", columns), stats, PARAMS)


def rows_read(m: CostModel) -> list[float]:
    return [s.rows for s in m.evaluate(m.current().layout).per_scan]


def test_row_groups_are_read_where_their_boxes_may_hold_matches():
    m = model("""
        SELECT * FROM t WHERE k <= 2;               -- group 1
        SELECT * FROM t WHERE k = 4;                -- group 2 (its min: in its dictionary)
        SELECT * FROM t WHERE x >= 70;              -- group 3 only (x max 60, 50 elsewhere)
        SELECT * FROM t WHERE k BETWEEN 3 AND 7;    -- all three
        SELECT * FROM t WHERE k = 100;              -- none
        SELECT * FROM t WHERE x IS NULL;            -- group 3 (its footer counts one NULL)
        SELECT * FROM t WHERE k > 3 AND x < 8;      -- group 2 (x 5..50); group 3's x starts at 1 too
    """)
    assert m.current().source == "footers" and m.current().exact
    assert rows_read(m) == [3, 3, 4, 10, 0, 4, 7]


def test_a_lookup_inside_a_box_is_read_as_likely_as_its_dictionary_holds_it():
    """``k = 5`` lies inside group 2's box [4, 6] but is not its min or max: the footers do not say
    whether its dictionary holds 5. The sample puts 1 of the box's 3 rows at 5, so a group of 3
    rows holds it with probability 1 - (2/3)^3 = 19/27 (Parquet drops a row group whose
    dictionary lacks the value)."""
    m = model("SELECT * FROM t WHERE k = 5;")
    assert rows_read(m) == [pytest.approx(3 * 19 / 27)]


def test_overhead_and_layout_of_the_current_table():
    m = model("SELECT * FROM t WHERE k <= 2;")
    cost = m.evaluate(m.current().layout)
    assert is_current(cost.layout) and cost.layout.strategy == CURRENT
    assert cost.overhead == 100 + 2 * 10
    assert cost.partition_rows == (10.0,)


def test_hive_partitions_of_the_current_table_prune():
    """Two partition directories ``p=1`` and ``p=2`` (and the default partition for NULL): the
    partition column is constant in each file, a query on it reads its partition only."""
    files = (
        DataFile("/t/p=1/a.parquet", (("p", "1"),), (RowGroupStats(3, {"k": ChunkStats(1, 3, 0)}),)),
        DataFile("/t/p=2/b.parquet", (("p", "2"),), (RowGroupStats(5, {"k": ChunkStats(4, 8, 0)}),)),
        DataFile("/t/p=__HIVE_DEFAULT_PARTITION__/c.parquet", (("p", None),),
                 (RowGroupStats(2, {"k": ChunkStats(9, 9, 0)}),)),
    )
    sample = pa.table({"k": pa.array(range(1, 11), pa.int64()),
                       "p": pa.array([1, 1, 1, 2, 2, 2, 2, 2, None, None], pa.int64())})
    m = model("SELECT * FROM t WHERE p = 2; SELECT * FROM t WHERE p IS NULL; SELECT * FROM t WHERE k = 3;",
              files, sample, {"k": "int", "p": "int"})
    cur = m.current()
    assert len(cur.layout.partitions) == 3
    cost = m.evaluate(cur.layout)
    assert [s.rows for s in cost.per_scan] == [5, 2, 3]
    assert [s.partitions for s in cost.per_scan] == [1, 1, 3]


def test_missing_statistics_are_read_not_guessed():
    files = (DataFile("/t/a.parquet", (), (RowGroupStats(6, {"k": ChunkStats(1, 6, 0)}),
                                           RowGroupStats(4, {}))),)  # group 2: no statistics written
    m = model("SELECT * FROM t WHERE k = 100;", files)
    assert rows_read(m) == [4]


def test_without_footers_the_sample_positions_stand_in():
    """No footer readable: the sample's positions (file, row) rebuild the row groups, here of 5
    rows (``TableStats.row_group_rows``), with the sample's values as boxes."""
    sample = pa.table({"k": pa.array(range(1, 11), pa.int64()), "x": pa.array(ROWS["x"], pa.int64()),
                       "_planner_file": pa.array(["/t/a.parquet"] * 10),
                       "_planner_row": pa.array(list(range(10)), pa.int64())})
    files = (DataFile("/t/a.parquet", (), None),)
    m = model("SELECT * FROM t WHERE k <= 2; SELECT * FROM t WHERE k >= 9;", files, sample, group_rows=5)
    assert m.current().source == "sample positions" and not m.current().exact
    assert rows_read(m) == [5, 5]


def test_clustering_finds_the_load_order():
    m = model("SELECT * FROM t WHERE k <= 2;")
    widths = clustering(m.current(), m.sample)
    assert widths["k"] < 0.5 < widths["x"]
    # group 1 spans k 1..3 (3 of the 10 sample rows), group 2 4..6 (3), group 3 7..9 (4)
    assert widths["k"] == pytest.approx(np.average([0.3, 0.3, 0.4], weights=[3, 3, 4]))

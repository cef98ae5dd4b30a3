"""Blocks and their boxes: which a scan reads (planner.costmodel.blocks), by hand.

Reference values ``[10, 20, 30, 40]`` (codes 0..3). Three blocks:

    block 0  box [10, 20]  (codes 0..1)
    block 1  box [30, 30]  (code 2)
    block 2  only NULLs
"""
from __future__ import annotations

from decimal import Decimal

import numpy as np

from planner.cnf.valueset import Interval, ValueSet
from planner.costmodel.blocks import (
    IN_PUSHDOWN_LIMIT,
    NO_VALUE,
    BlockReader,
    Blocks,
    code_ranges,
    pushed_intervals,
)
from planner.semantics.kinds import Kind

VALUES = [10, 20, 30, 40]


def blocks(exact: bool) -> Blocks:
    return Blocks(np.zeros(3, dtype=np.int64), np.array([2.0, 1.0, 1.0]), {"a": VALUES},
                  {"a": np.array([0, 2, NO_VALUE])}, {"a": np.array([1, 2, -1])},
                  {"a": np.array([False, False, True])}, exact=exact)


def hits(b: Blocks, vs: ValueSet) -> list[bool]:
    return BlockReader(b).may_hold("a", vs).tolist()


def rng(lo, hi, lo_closed=True, hi_closed=True, null=False) -> ValueSet:
    return ValueSet.of(Kind.INTEGER, [Interval(lo, hi, lo_closed, hi_closed)], null)


def test_exact_boxes():
    b = blocks(exact=True)
    assert hits(b, rng(12, 18)) == [True, False, False]  # no reference value inside, within block 0's span
    assert hits(b, rng(21, 29)) == [False, False, False]  # between the boxes: nothing
    assert hits(b, rng(20, 30)) == [True, True, False]
    assert hits(b, ValueSet.only_null(Kind.INTEGER)) == [False, False, True]
    assert hits(b, rng(40, None)) == [False, False, False]


def test_sampled_boxes_reach_into_the_gaps_next_to_them():
    """Sampled: block 0's real range reaches into (20, 30) and block 1's into (20, 30) and
    (30, 40), since no sample row says where one ends and the next begins."""
    b = blocks(exact=False)
    assert hits(b, rng(21, 29)) == [True, True, False]
    assert hits(b, rng(31, 39)) == [False, True, False]
    assert hits(b, rng(0, 5)) == [True, False, False]  # below every sample value: the first box
    assert hits(b, rng(5, 10)) == [True, False, False]


def test_decimal_steps_leave_no_gap_between_neighbours():
    """``decimal(15,2)``: nothing lies between 0.05 and 0.06, so ``[0.05, 0.06)`` does not reach a
    block whose smallest sampled value is 0.06."""
    values = [Decimal("0.04"), Decimal("0.05"), Decimal("0.06")]
    b = Blocks(np.zeros(2, dtype=np.int64), np.ones(2), {"d": values}, {"d": np.array([0, 2])},
               {"d": np.array([1, 2])}, {"d": np.zeros(2, dtype=bool)})
    vs = ValueSet.of(Kind.DECIMAL, [Interval(Decimal("0.05"), Decimal("0.06"), True, False)])
    assert BlockReader(b).may_hold("d", vs).tolist() == [True, False]
    (r,) = code_ranges(values, vs, Decimal("0.01"))
    assert (r.start, r.end, r.up) == (1, 2, False)
    (r,) = code_ranges(values, vs)  # a dense domain would reach into (0.05, 0.06)
    assert r.up


def test_long_in_lists_are_pushed_as_their_hull():
    few = ValueSet.points(Kind.INTEGER, [1, 5, 9])
    assert pushed_intervals(few) == few.intervals
    many = ValueSet.points(Kind.INTEGER, list(range(0, 100, 5))[:IN_PUSHDOWN_LIMIT + 1])
    (hull,) = pushed_intervals(many)
    assert (hull.lo, hull.hi) == (0, 5 * IN_PUSHDOWN_LIMIT)


def test_a_column_of_unique_values_is_written_plain_and_its_lookups_are_not_dropped_by_a_dictionary():
    """parquet-mr keeps a dictionary only where it pays on the first page: a column of nearly
    unique values gets plain pages, so a lookup reads every row group its min/max spans; a
    column sorted with a few rows a value keeps its dictionary (issue 11: Q6 lookups on
    l_extendedprice and l_orderkey read 2-4M rows where the model said 0.3M)."""
    import pyarrow as pa

    from planner.analysis.table_analysis import analyze_table
    from planner.costmodel.cost import CostModel, CostParams
    from planner.costmodel.statistics import ColumnStats, TableStats
    from planner.model.layout import Layout, Ordering, Partition
    from planner.workload import parse_workload

    n = 60_000
    rng = np.random.default_rng(3)
    table = pa.table({"k": pa.array(np.arange(n) // 4, pa.int64()),  # 4 rows a value
                      "u": pa.array(rng.permutation(n), pa.int64())})  # unique, in no order
    wl = parse_workload("SELECT * FROM t WHERE u = 1234; SELECT * FROM t WHERE k = 1234;")
    cols = {"k": "bigint", "u": "bigint"}
    stats = TableStats("t", n, n * 16, tuple(ColumnStats(c, t, 8.0) for c, t in cols.items()), table)
    model = CostModel(analyze_table(wl, "t", cols), stats,
                      CostParams(partition_overhead_rows=0, file_overhead_rows=0, row_group_rows=5_000, page_rows=5_000))
    by_k = Layout("t", "hand", (Partition(1, ()),), Ordering("sort", ("k",)))
    u_rows, k_rows = (c.rows for c in model.evaluate(by_k).per_scan)
    assert u_rows >= 0.9 * n  # every row group spans u's range, and has no dictionary to test
    assert k_rows <= 5_000  # one row group holds k = 1234; the others' dictionaries drop them


def test_dictionary_only_reads_the_encodings_as_parquet_mr_does():
    from types import SimpleNamespace

    from hive_integration.spark.footers import dictionary_only

    def chunk(encodings, dictionary=True):
        return SimpleNamespace(encodings=encodings, dictionary_page_offset=4 if dictionary else None)

    assert dictionary_only(chunk(("PLAIN_DICTIONARY", "RLE", "BIT_PACKED")))  # parquet-mr, Spark's writer
    assert not dictionary_only(chunk(("PLAIN", "RLE", "BIT_PACKED"), dictionary=False))  # fell back to plain
    assert not dictionary_only(chunk(("PLAIN_DICTIONARY", "PLAIN", "RLE")))  # fell back after some pages
    assert dictionary_only(chunk(("PLAIN", "RLE", "RLE_DICTIONARY")))  # parquet-cpp: cannot tell, as before
    assert not dictionary_only(chunk(("PLAIN", "RLE"), dictionary=False))

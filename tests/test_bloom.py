"""Bloom filters as part of a layout: their size, what a lookup reads with them, the search's
choice, and the SQL that asks the writer for them.

A table of 6,000,000 rows in ``k`` order (a nearly unique key, 4 rows a key) with ``u``, a unique
column in random order, and ``d``, a date-like integer; a sample of every 100th row. Row groups
of 100,000 rows, pages as big. A lookup on ``u`` reads every row group without a filter (``u`` is
plain-encoded: no dictionary), and with one the group that holds the value plus about ``fpp`` of
the others.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pyarrow as pa
import pytest

from planner.advice.ranking import advise
from planner.analysis.table_analysis import analyze_table
from planner.cnf.valueset import ValueSet
from planner.costmodel import baselines
from planner.costmodel.blocks import is_lookup
from planner.costmodel.bloom import (
    FPP,
    false_positive_rate,
    filter_bytes,
    hinted,
    lookup_columns,
    with_bloom_filters,
)
from planner.costmodel.cost import CostModel, CostParams
from planner.costmodel.statistics import (
    ChunkStats,
    ColumnStats,
    DataFile,
    RowGroupStats,
    TableStats,
)
from planner.emit.ddl import bloom_filter_properties, create_table_sql
from planner.model.layout import Ordering
from planner.semantics.kinds import Kind
from planner.workload import parse_workload

N, STEP, GROUP = 6_000_000, 100, 100_000
COLUMNS = {"k": "bigint", "u": "bigint", "d": "int"}


def table() -> pa.Table:
    """The sample: every STEP-th row of the table."""
    rng = np.random.default_rng(7)
    n = N // STEP
    return pa.table({"k": pa.array(np.arange(0, N, STEP) // 4, pa.int64()),
                     "u": pa.array(rng.permutation(N)[:n] * 7 + 3, pa.int64()),
                     "d": pa.array(rng.integers(0, 2_500, n), pa.int64())})


def footers() -> tuple[DataFile, ...]:
    """The table as loaded: one file, row groups of GROUP rows in ``k`` order, plain ``u``."""
    groups = tuple(RowGroupStats(GROUP, {"k": ChunkStats(i // 4, (i + GROUP - 1) // 4, 0, True),
                                         "u": ChunkStats(3, 7 * (N - 1) + 3, 0, False),
                                         "d": ChunkStats(0, 2_499, 0, True)}) for i in range(0, N, GROUP))
    return (DataFile("/t/a.parquet", (), groups),)


def model(workload: str, sample: pa.Table | None = None) -> CostModel:
    sample = table() if sample is None else sample
    columns = {c: COLUMNS.get(c, "bigint") for c in sample.column_names}
    stats = TableStats("t", N, N * 20, tuple(ColumnStats(c, t, 8.0) for c, t in columns.items()), sample,
                       data_files=footers(), row_group_rows=GROUP)
    params = CostParams(row_group_rows=GROUP, page_rows=GROUP, min_partition_bytes=1, max_partitions=64)
    wl = parse_workload(workload)
    return CostModel(analyze_table(wl, "t", columns), stats, params)


def near_break_even() -> np.ndarray:
    """Every row of a column ``h`` whose row groups each hold 0.7 distinct values a row, drawn from
    the whole domain (so every group's min and max span any value): a dictionary and its 17-bit ids
    take 0.97 of the plain bytes, just below the writer's break-even."""
    rng = np.random.default_rng(3)
    out = []
    for _ in range(N // GROUP):
        distinct = rng.choice(4_000_000, int(0.7 * GROUP), replace=False)
        out.append(rng.permutation(np.concatenate([distinct, distinct[:GROUP - len(distinct)]])))
    return np.concatenate(out)


def test_a_filter_is_sized_as_parquet_java_sizes_it():
    # -8 n / ln(1 - p^(1/8)) bits, rounded up to a power of two bytes, between 32 B and 1 MiB
    assert filter_bytes(15_000, 0.01) == 32_768  # 145,243 bits = 18,156 B -> 32 KiB
    assert filter_bytes(10_000, 0.01) == 16_384
    assert filter_bytes(1, 0.01) == 32
    assert filter_bytes(10_000_000, 0.01) == 1 << 20
    assert 0.0 < false_positive_rate(15_000, 32_768) < FPP  # the rounding up leaves it below the target


def test_only_a_few_points_without_null_are_lookups():
    assert is_lookup(ValueSet.points(Kind.INTEGER, [1, 5, 9]))
    # adjacent integers merge into a range, which may have been a BETWEEN: not credited
    assert not is_lookup(ValueSet.points(Kind.INTEGER, [1, 2, 3]))
    assert not is_lookup(ValueSet.points(Kind.INTEGER, list(range(0, 22, 2))))  # Spark pushes it as a range
    assert not is_lookup(ValueSet.range(Kind.INTEGER, 1, 5))
    assert not is_lookup(ValueSet.points(Kind.INTEGER, [1]).union(ValueSet.only_null(Kind.INTEGER)))


def test_a_lookup_reads_the_group_that_holds_the_value_and_the_false_positives():
    m = model("SELECT * FROM t WHERE u = 21000003;")  # a value in the middle of u's range: 7 * 3000000 + 3
    unsorted = replace(baselines.full_scan("t"), order=Ordering("sort", ("k",)))
    without = m.evaluate(unsorted).per_scan[0]
    with_ = m.evaluate(with_bloom_filters(unsorted, {"u": GROUP})).per_scan[0]
    groups = N / GROUP
    assert without.row_groups == pytest.approx(groups, rel=0.05)  # every group's box spans the value
    # with a filter: the group that holds the value (the sample guesses a unique column's distinct
    # values as the table's rows, sample_ndv), and the false positives of the others
    rate = false_positive_rate(GROUP, filter_bytes(GROUP))
    assert with_.row_groups == pytest.approx(1 + rate * (groups - 1), rel=0.05)
    assert with_.rows < 0.2 * without.rows and with_.seconds < without.seconds


def test_a_range_is_not_served_by_a_filter():
    m = model("SELECT * FROM t WHERE u BETWEEN 100 AND 200000;")
    layout = replace(baselines.full_scan("t"), order=Ordering("sort", ("k",)))
    plain = m.evaluate(layout).per_scan[0]
    bloomed = m.evaluate(with_bloom_filters(layout, {"u": GROUP})).per_scan[0]
    assert bloomed.rows == pytest.approx(plain.rows)


def test_the_columns_a_filter_could_serve():
    m = model("SELECT * FROM t WHERE u = 21;\nSELECT * FROM t WHERE u IN (3, 10);\n"
              "SELECT * FROM t WHERE k = 5;\nSELECT * FROM t WHERE d < 9;")
    assert lookup_columns(m.scans, m.kinds) == ["u", "k"]


def test_the_search_gives_the_lookups_a_filter_and_records_it():
    """Ranges of d and lookups of u: no order serves both; filters on u do."""
    text = "".join(f"SELECT * FROM t WHERE d BETWEEN {lo} AND {lo + 100};\nSELECT * FROM t WHERE u = {7 * v + 3};\n"
                   for lo, v in zip(range(0, 2_400, 300), range(11, 5_000_000, 610_000)))
    wl = parse_workload(text)
    m = model(text)
    advice = advise(wl, analyze_table(wl, "t", COLUMNS), m.stats, m.params)
    best = advice.layout
    assert "u" in hinted(best), advice.result.best.layout.strategy
    assert best.strategy.endswith(" + bloom filters")
    strategies = [c.layout.strategy for c in advice.result.ranked]
    assert any(s.endswith(" + bloom filters") for s in strategies)
    assert any(not s.endswith(" + bloom filters") and s != "current table" for s in strategies)


def test_the_laid_out_table_asks_every_writer_for_the_filters():
    """As table properties, which Spark's and Hive's writers honour on every write of the table."""
    layout = with_bloom_filters(baselines.full_scan("t"), {"U": 15_000})
    assert bloom_filter_properties(layout) == {"parquet.bloom.filter.enabled#u": "true",
                                               "parquet.bloom.filter.expected.ndv#u": "15000",
                                               "parquet.bloom.filter.fpp#u": "0.01"}
    assert bloom_filter_properties(layout, "ORC") == {"orc.bloom.filter.columns": "u", "orc.bloom.filter.fpp": "0.01"}
    assert bloom_filter_properties(baselines.full_scan("t")) == {}
    ddl = create_table_sql(layout, COLUMNS, "t__planner_new")
    assert "'parquet.bloom.filter.enabled#u'='true'" in ddl


def test_no_filter_on_a_double_column():
    """parquet-java hashes a double's bits: a filter would drop -0.0 for ``x = 0.0``."""
    doubles = {"k": Kind.INTEGER, "x": Kind.FLOAT}
    scans = parse_workload("SELECT * FROM t WHERE x = 0.0;\nSELECT * FROM t WHERE k = 3;")
    analysis = analyze_table(scans, "t", {"k": "bigint", "x": "double"})
    assert lookup_columns(analysis.scans, doubles) == ["k"]


def test_a_dictionary_near_the_break_even_is_not_counted_on():
    """The writer keeps or drops such a dictionary chunk by chunk (``l_orderkey`` in a z-ordered
    layout: 40 % of its chunks plain), so the model counts none of them: a lookup reads every
    row group its statistics keep, and a filter is what serves it."""
    h = near_break_even()
    m = model(f"SELECT * FROM t WHERE h = {int(h[3 * GROUP + 5])};", table().append_column("h", pa.array(h[::STEP])))
    layout = replace(baselines.full_scan("t"), order=Ordering("sort", ("k",)))
    assert m.evaluate(layout).per_scan[0].row_groups == pytest.approx(N / GROUP)
    assert m.evaluate(with_bloom_filters(layout, {"h": GROUP})).per_scan[0].row_groups < 0.1 * N / GROUP


def test_a_filter_tested_is_priced_as_a_row_group_not_as_decoded_bytes(monkeypatch):
    """The reader seeks to a filter and probes one block of it: pricing its bytes as decoded
    column bytes made a lookup kept by statistics in many groups look slower with the filter."""
    import planner.costmodel.cost as cost

    seen = []
    monkeypatch.setattr(cost, "scan_seconds", lambda work, p: seen.append(work) or np.zeros(len(work.rows)))
    m = model("SELECT u FROM t WHERE u = 21000003;")
    layout = replace(baselines.full_scan("t"), order=Ordering("sort", ("k",)))
    read = m.evaluate(with_bloom_filters(layout, {"u": GROUP})).per_scan[0]
    work = seen[-1]
    assert work.bytes[0] == pytest.approx(read.rows * m.scan_width[0])  # the column's bytes only
    assert work.row_groups[0] == pytest.approx(read.row_groups + N / GROUP)  # and one filter per group kept


def test_a_column_its_dictionaries_serve_takes_no_filter_place():
    """``d`` (2,500 values: a dictionary in every group) is looked up most, ``u`` (plain) less;
    with room for one filter, ``u`` gets it."""
    from planner.costmodel.search import with_filters

    text = "".join(f"SELECT * FROM t WHERE d = {v};\n" for v in range(3, 300, 10)) + \
        "SELECT * FROM t WHERE u = 21000003;\n"
    m = model(text)
    layout = replace(baselines.full_scan("t"), order=Ordering("sort", ("k",)))
    columns = lookup_columns(m.scans, m.kinds)
    assert columns == ["d", "u"]
    got = with_filters(m, m.evaluate(layout), columns, m.evaluate, limit=1)
    assert list(hinted(got.layout)) == ["u"]

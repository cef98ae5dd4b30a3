"""The table as it is, priced from its footers, against what Spark reads; and the guard, applied.

On the SF 0.01 lineitem fixture (loaded in ``l_orderkey`` order, ~126 row groups):

* the current-table contender's estimate equals Spark's ``numOutputRows`` for ranges on the
  load order and elsewhere (its row groups and their min/max are the footers' own); a lookup
  (``l_orderkey = 4000``) is an expected value, the row group's rows times the chance that its
  dictionary holds the key (the footers cannot tell), within 2 % of what Spark reads;
* the layout fastest for a workload of ship-date ranges sorts the table by ship date, which makes
  a range of ``l_orderkey`` read the whole table; the guard refuses it (the table's load order is
  in the robustness set), and the default advice keeps that range to a row group or two more per
  partition, measured on the applied layout. Priced with ``SLOW_SCANS``, as if 1000x larger.
"""
from __future__ import annotations

import os
from dataclasses import replace

import pytest
from time_params import SLOW_SCANS

from devtools.tpch_data import load_table
from hive_integration.apply.apply_layout import SparkRunner, apply_layout
from hive_integration.spark.metrics import run_measured
from hive_integration.spark.statistics_pass import gather_stats, table_schema
from planner.advice.ranking import advise
from planner.analysis.table_analysis import analyze_table
from planner.costmodel.cost import CostModel, CostParams
from planner.costmodel.current import is_current
from planner.workload import Schema, parse_workload

# priced as if 1000x larger (``SLOW_SCANS``): at 60,000 rows the fixed costs would keep every layout
PARAMS = CostParams(min_partition_bytes=32 * 1024, target_file_bytes=1 << 20, row_group_rows=480, page_rows=160,
                    max_partitions=64, time=SLOW_SCANS)
LOOKUP = "SELECT count(*) AS n FROM {t} WHERE l_orderkey BETWEEN 30000 AND 33000"
QUERIES = [
    LOOKUP,
    "SELECT count(*) AS n FROM {t} WHERE l_orderkey = 4000",
    "SELECT count(*) AS n FROM {t} WHERE l_shipdate >= date '1994-01-01' AND l_shipdate < date '1994-02-01'",
    "SELECT count(*) AS n FROM {t} WHERE l_quantity < 3 AND l_orderkey > 50000",
]


def measured_rows(spark, sql: str, table: str) -> int:
    _, scans = run_measured(spark, sql)
    return sum(s.rows for s in scans if s.table == table)


@pytest.fixture(scope="module")
def current_stats(spark, lineitem_table):
    return gather_stats(spark, lineitem_table, sample_rows=20_000), table_schema(spark, lineitem_table)


def test_the_current_table_estimate_is_what_spark_reads(spark, lineitem_table, current_stats):
    stats, columns = current_stats
    assert stats.data_files and all(f.row_groups for f in stats.data_files)
    wl = parse_workload(";\n".join(q.format(t="lineitem") for q in QUERIES), schema=Schema({"lineitem": columns}),
                        tables=["lineitem"])
    model = CostModel(analyze_table(wl, "lineitem", columns), stats, PARAMS)
    estimated = [s.rows for s in model.evaluate(model.current().layout).per_scan]
    measured = [measured_rows(spark, q.format(t=lineitem_table), lineitem_table) for q in QUERIES]
    lookup = 1
    assert [e for i, e in enumerate(estimated) if i != lookup] == [m for i, m in enumerate(measured) if i != lookup]
    # The lookup's one row group holds the key (every order key exists) and Spark reads it; the
    # model prices the chance that a dictionary lacks the key as if the group's 480 rows drew their
    # keys independently, 1 - (1 - 1/120)^480 = 0.98 for 120 keys of 4 rows each, so it expects
    # 2 % of the group to be dropped. (GEE, scaled by the sample's rows, once undercounted the
    # column's distinct values into an exact-looking 1 %.)
    assert estimated[lookup] == pytest.approx(measured[lookup], rel=0.02)
    assert measured[0] < stats.rows / 10  # the load order skips most row groups for a key range


def test_the_sample_carries_positions_only_where_footers_cannot_be_read(spark, lineitem_table, current_stats,
                                                                     monkeypatch):
    """Footers read: the current table is priced from them, and the sample job spends nothing on
    its rows' positions. No footer readable: the positions come with the sample and rebuild the
    row groups."""
    from hive_integration.spark import statistics_pass
    from hive_integration.spark.footers import read_footers
    from planner.costmodel.statistics import POSITION_COLUMNS

    stats, columns = current_stats
    assert not set(POSITION_COLUMNS) & set(stats.sample.column_names)
    monkeypatch.setattr(statistics_pass, "read_metadata", lambda uris, hadoop=None: [None] * len(uris))
    blind = gather_stats(spark, lineitem_table, sample_rows=20_000)
    assert set(POSITION_COLUMNS) <= set(blind.sample.column_names)
    assert blind.rows == stats.rows and all(f.row_groups is None for f in blind.data_files)
    wl = parse_workload(QUERIES[2].format(t="lineitem"), schema=Schema({"lineitem": columns}), tables=["lineitem"])
    model = CostModel(analyze_table(wl, "lineitem", columns), blind, PARAMS)
    assert model.current().source == "sample positions"
    # footers parsed but their row groups not: the sample is drawn again, with positions
    monkeypatch.undo()
    monkeypatch.setattr(statistics_pass, "read_footers", lambda uris, parts, metadata=None, hadoop=None: tuple(
        replace(f, row_groups=None) for f in read_footers(uris, parts, metadata, hadoop)))
    late = gather_stats(spark, lineitem_table, sample_rows=20_000)
    assert set(POSITION_COLUMNS) <= set(late.sample.column_names) and late.rows == stats.rows
    # files listed with sizes no sampled row has (the table changed meanwhile): named by path instead
    monkeypatch.undo()
    monkeypatch.setattr(statistics_pass, "read_metadata", lambda uris, hadoop=None: [None] * len(uris))
    listed = statistics_pass.table_files
    monkeypatch.setattr(statistics_pass, "table_files", lambda s, t: [(u, size + 1, m) for u, size, m in listed(s, t)])
    moved = gather_stats(spark, lineitem_table, sample_rows=20_000)
    paths = set(moved.sample.column(POSITION_COLUMNS[0]).to_pylist())
    assert paths and all(isinstance(p, str) and os.path.exists(p) for p in paths) and moved.rows == stats.rows


def _applied(spark, tpch_small, table: str, layout) -> None:
    """Load a fresh copy as ``table`` and lay it out as ``layout`` says (nothing if it is the table
    as it is)."""
    load_table(spark, tpch_small, table, row_group_bytes=64 * 1024)
    if not is_current(layout):
        apply_layout(SparkRunner(spark), replace(layout, table=table), drop_old=True)


def test_the_default_advice_keeps_a_key_range_within_the_guard(spark, tpch_small, fresh_db):
    source = f"{fresh_db}.lineitem"
    load_table(spark, tpch_small, source, row_group_bytes=64 * 1024)
    stats, columns = gather_stats(spark, source, sample_rows=20_000), table_schema(spark, source)
    months = [f"SELECT sum(l_extendedprice) FROM lineitem WHERE l_shipdate >= date '199{y}-0{m}-01' "
              f"AND l_shipdate < date '199{y}-0{m + 1}-01'" for y in range(2, 8) for m in (1, 4, 7)]
    wl = parse_workload(";\n".join(months), schema=Schema({"lineitem": columns}), tables=["lineitem"])
    analysis = analyze_table(wl, "lineitem", columns)
    before = measured_rows(spark, LOOKUP.format(t=source), source)
    advice = advise(wl, analysis, stats, PARAMS)
    assert advice.result.best.allowed and not advice.keeps_current
    ranked = advise(wl, analysis, stats, replace(PARAMS, allow_regressions=True)).result.ranked  # all kept
    fastest = min(ranked, key=lambda c: c.seconds)
    assert not fastest.allowed  # the layout fastest for ship dates alone loses the key order
    for name, layout in (("guarded", advice.layout), ("fastest", fastest.layout)):
        _applied(spark, tpch_small, f"{fresh_db}.{name}", layout)
    guarded = measured_rows(spark, LOOKUP.format(t=f"{fresh_db}.guarded"), f"{fresh_db}.guarded")
    regressed = measured_rows(spark, LOOKUP.format(t=f"{fresh_db}.fastest"), f"{fresh_db}.fastest")
    # the guard is on time: a row group more per partition costs the range milliseconds (within the
    # slack), the whole table costs it seconds
    assert guarded <= 3 * before, (before, guarded, advice.layout.describe())
    assert regressed > 10 * before, (before, regressed, fastest.layout.describe())

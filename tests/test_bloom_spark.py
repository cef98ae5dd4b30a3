"""Bloom filters on Spark (issue 32, part 1): an advised layout asks for them, ``apply`` writes them,
the footers carry them, and a lookup reads at most 2 row groups.

On the SF 0.01 lineitem fixture (loaded in ``l_orderkey`` order) a workload of ship-date ranges and
lookups on ``l_extendedprice`` (nearly unique, PLAIN-encoded: no dictionary drops a row group) and
``l_orderkey``. The advice orders the table for the ranges and gives a filter to each looked-up
column where one pays (at this size the key; the order may already narrow another); after ``apply``:

* every column chunk of a filtered column has a filter in the footer (``bloom_filter_offset``), or is
  dictionary-only (parquet-java writes none there; the dictionary, exact, does the skipping);
* a lookup of a key, or of a value of any filtered column, reads the row groups that hold it plus
  at most the filters' false positives, at most 2 in all, counted from Spark's scan metrics (rows the scan emitted) against the row
  groups' sizes in the footers.

Counting row groups from rows: the scan emits every row of a row group it reads (record-level
filtering is off, ``hive_integration.spark.metrics``) once page-level skipping is off
(``parquet.filter.columnindex.enabled``, set only while measuring): so the rows read are the sum
of the sizes of the groups read. The groups holding the value must be among them (no false
negatives); the rest, ``extra`` rows, come from groups that do not hold it, and at most ``k``
of them, ``k`` the largest count whose ``k`` smallest such groups fit in ``extra``.
"""
from __future__ import annotations

from dataclasses import replace

import pyarrow.parquet as pq
import pytest

from devtools.tpch_data import load_table
from hive_integration.apply.apply_layout import SparkRunner, apply_layout
from hive_integration.spark.footers import groups_holding, local_path
from hive_integration.spark.metrics import run_measured
from hive_integration.spark.statistics_pass import gather_stats, table_files, table_schema
from planner.advice.ranking import advise
from planner.analysis.table_analysis import analyze_table
from planner.costmodel.bloom import hinted
from planner.costmodel.cost import CostParams
from planner.workload import Schema, parse_workload
from time_params import SLOW_SCANS

# priced as a table of the size bloom filters are for (tests/time_params.py): on this one's 60,000
# rows a lookup reading 27 row groups is no slower than one reading 1
PARAMS = CostParams(min_partition_bytes=32 * 1024, target_file_bytes=1 << 20, row_group_rows=2000, page_rows=500,
                    max_partitions=16, time=SLOW_SCANS)
LOOKUPS = 4  # values looked up per column, in the workload and measured


@pytest.fixture(scope="module")
def applied(spark, tpch_small):
    """(table, layout, values looked up per column) once the advised layout is applied."""
    db = "bloomed"
    spark.sql(f"DROP DATABASE IF EXISTS {db} CASCADE")
    spark.sql(f"CREATE DATABASE {db}")
    source = f"{db}.lineitem"
    load_table(spark, tpch_small, source, row_group_bytes=64 * 1024)
    values = {
        # values held by one row only, spread over the table
        "l_extendedprice": [r[0] for r in spark.sql(
            f"SELECT l_extendedprice FROM {source} GROUP BY l_extendedprice HAVING count(*) = 1 "
            f"ORDER BY hash(l_extendedprice) LIMIT {LOOKUPS}").collect()],
        "l_orderkey": [r[0] for r in spark.sql(
            f"SELECT l_orderkey FROM {source} GROUP BY l_orderkey HAVING count(*) = 1 "
            f"ORDER BY hash(l_orderkey) LIMIT {LOOKUPS}").collect()],
    }
    months = [f"SELECT sum(l_quantity) FROM lineitem WHERE l_shipdate >= date '199{y}-0{m}-01' "
              f"AND l_shipdate < date '199{y}-0{m + 1}-01'" for y in range(2, 8) for m in (1, 4, 7)]
    lookups = [f"SELECT * FROM lineitem WHERE {c} = {v}" for c, vs in values.items() for v in vs]
    columns = table_schema(spark, source)
    wl = parse_workload(";\n".join(months + lookups), schema=Schema({"lineitem": columns}), tables=["lineitem"])
    stats = gather_stats(spark, source, sample_rows=20_000)
    advice = advise(wl, analyze_table(wl, "lineitem", columns), stats, PARAMS)
    layout = replace(advice.layout, table=source)
    assert hinted(layout), advice.layout.describe()
    apply_layout(SparkRunner(spark), layout, drop_old=True)
    yield source, layout, values
    spark.sql(f"DROP DATABASE IF EXISTS {db} CASCADE")


def _files(spark, table: str) -> list[str]:
    paths = [local_path(uri) for uri, _, _ in table_files(spark, table)]
    assert paths and all(paths)
    return paths


def test_the_footers_carry_the_filters_the_layout_asks_for(spark, applied):
    table, layout, _ = applied
    filtered = {c.lower() for c in hinted(layout)}
    chunks = {c: [0, 0, 0] for c in filtered}  # with a filter, dictionary-only, neither
    for path in _files(spark, table):
        md = pq.ParquetFile(path).metadata
        for g in range(md.num_row_groups):
            rg = md.row_group(g)
            for j in range(rg.num_columns):
                chunk = rg.column(j)
                name = chunk.path_in_schema.lower()
                if name not in filtered:
                    continue
                if chunk.bloom_filter_offset is not None:
                    chunks[name][0] += 1
                elif _dictionary_only(chunk):
                    chunks[name][1] += 1
                else:
                    chunks[name][2] += 1
    assert all(n == 0 for _, _, n in chunks.values()), chunks  # no plain chunk lacks its filter
    assert sum(f for f, _, _ in chunks.values()) > 0, chunks  # and some filters were written
    if "l_extendedprice" in filtered:  # nearly unique: never a dictionary
        assert chunks["l_extendedprice"][1] == 0 and chunks["l_extendedprice"][0] > 0, chunks


def _dictionary_only(chunk) -> bool:
    from hive_integration.spark.footers import dictionary_only

    return dictionary_only(chunk)


def _at_most(extra: int, sizes: list[int]) -> int:
    """The most groups among ``sizes`` whose rows can add up to ``extra``."""
    k = total = 0
    for n in sorted(sizes):
        if total + n > extra:
            break
        total += n
        k += 1
    return k


def test_a_lookup_reads_at_most_two_row_groups(spark, applied):
    """A lookup of the key, and of every column the layout filters, reads at most 2 row groups.
    (A looked-up column the search left without a filter, because the order already narrows it,
    reads the groups its statistics keep: measured, not asserted.)"""
    table, layout, values = applied
    paths = _files(spark, table)
    spark.conf.set("parquet.filter.columnindex.enabled", "false")  # whole row groups: see the module's notes
    try:
        read = []
        for column, vs in values.items():
            for v in vs:
                rows, scans = run_measured(spark, f"SELECT * FROM {table} WHERE {column} = {v}")
                got = sum(s.rows for s in scans if s.table == table)
                holding, other = groups_holding(paths, column.lower(), v)
                assert holding and len(rows) >= 1
                extra = got - sum(holding)
                assert extra >= 0, (column, v, got, holding)  # every group holding the value was read
                groups = len(holding) + _at_most(extra, other)
                read.append((column, v, groups, len(holding), len(holding) + len(other)))
    finally:
        spark.conf.unset("parquet.filter.columnindex.enabled")
    # (column, value, groups read at most, groups holding it, groups its statistics cannot drop)
    filtered = {c.lower() for c in hinted(layout)}
    served = [r for r in read if r[0] in filtered or r[0] == "l_orderkey"]
    assert any(r[0] in filtered for r in served), (filtered, read)
    assert all(groups <= 2 for _, _, groups, _, _ in served), (layout.describe(), read)

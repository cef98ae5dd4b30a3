"""Parquet footers of the table as it is, read with pyarrow (hive_integration.spark.footers; no Spark)."""
from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hive_integration.spark.footers import (
    local_path,
    normalize_positions,
    partition_values,
    read_footers,
)
from planner.costmodel.statistics import POSITION_FILE


def test_row_groups_partitions_and_statistics(tmp_path):
    part = tmp_path / "p=2" / "q=z%2Fw"  # Hive escapes '/' in a partition value as %2F
    part.mkdir(parents=True)
    table = pa.table({
        "K": pa.array([1, 2, 3, 4, 5], pa.int64()),
        "d": pa.array([Decimal("0.05"), None, Decimal("0.07"), Decimal("0.01"), None], pa.decimal128(15, 2)),
        "day": pa.array([dt.date(2020, 1, i) for i in range(1, 6)], pa.date32()),
        "s": pa.array([None, None, None, None, None], pa.string()),
    })
    path = part / "a.parquet"
    pq.write_table(table, path, row_group_size=3)
    uri = "file://" + str(path).replace("%", "%25")  # a URI escapes once more
    (f,) = read_footers([uri], ["p", "q"])
    assert f.path == str(path)
    assert f.partition == (("p", "2"), ("q", "z/w"))
    assert [g.rows for g in f.row_groups] == [3, 2]
    g0, g1 = f.row_groups
    assert (g0.columns["k"].min, g0.columns["k"].max, g0.columns["k"].nulls) == (1, 3, 0)
    assert (g0.columns["d"].min, g0.columns["d"].max, g0.columns["d"].nulls) == (Decimal("0.05"), Decimal("0.07"), 1)
    assert g1.columns["day"].max == dt.date(2020, 1, 5)
    assert g0.columns["s"].min is None and g0.columns["s"].nulls == 3  # only NULLs
    assert f.rows == 5


def test_files_that_cannot_be_read_keep_their_partition(tmp_path):
    (f, g) = read_footers(["hdfs://nn/warehouse/t/year=1994/part-0.parquet", f"file://{tmp_path}/missing.parquet"],
                          ["year"])
    assert f.row_groups is None and f.partition == (("year", "1994"),)
    assert g.row_groups is None


def test_paths_and_the_default_partition():
    assert local_path("file:/a/b%20c/x.parquet") == "/a/b c/x.parquet"
    assert local_path("s3a://bucket/x.parquet") is None
    assert partition_values("/w/t/y=__HIVE_DEFAULT_PARTITION__/m=3/f.parquet", ["y", "m"]) == (("y", None), ("m", "3"))


def test_sample_positions_name_files_as_the_footers_do():
    sample = pa.table({"k": [1, 2], POSITION_FILE: ["file:/w/t/p=1/a%20b.parquet", "file:/w/t/p=1/a%20b.parquet"]})
    assert normalize_positions(sample).column(POSITION_FILE).to_pylist() == ["/w/t/p=1/a b.parquet"] * 2


def test_sample_positions_by_file_size_name_files_as_the_footers_do():
    """The statistics pass ships each sampled row's file size (a number) when the sizes are
    distinct, and maps it back to the file; a size not listed (the table changed) raises."""
    by_size = {10: "file:/w/t/p=1/a%20b.parquet", 7: "file:/w/t/p=2/c.parquet"}
    sample = pa.table({"k": [1, 2, 3], POSITION_FILE: pa.array([7, 10, 7], pa.int64())})
    got = normalize_positions(sample, by_size).column(POSITION_FILE).to_pylist()
    assert got == ["/w/t/p=2/c.parquet", "/w/t/p=1/a b.parquet", "/w/t/p=2/c.parquet"]
    with pytest.raises(LookupError):
        normalize_positions(pa.table({POSITION_FILE: pa.array([11], pa.int64())}), by_size)

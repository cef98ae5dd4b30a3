"""Reader edges without a JVM: the DDL that keeps parquet-java's dictionary filter away from FLOAT
and DOUBLE columns (issue 30), and the probe set ``apply`` checks a laid-out table with."""
from __future__ import annotations

from planner.costmodel import baselines
from planner.emit.ddl import TableMetadata, create_table_sql, floating_point_properties


def test_every_floating_column_is_written_without_a_dictionary():
    got = floating_point_properties({"id": "bigint", "x": "double", "f": "float", "d": "decimal(10,2)",
                                     "s": "struct<a:double,b:int,c:struct<z:float>>", "arr": "array<double>",
                                     "m": "map<string,double>"})
    assert got == {"parquet.enable.dictionary#x": "false", "parquet.enable.dictionary#f": "false",
                   "parquet.enable.dictionary#s.a": "false", "parquet.enable.dictionary#s.c.z": "false"}


def test_a_mixed_case_column_is_named_both_ways():
    assert floating_point_properties({"Price": "double"}) == {"parquet.enable.dictionary#Price": "false",
                                                              "parquet.enable.dictionary#price": "false"}


def test_orc_and_tables_without_floating_columns_get_nothing():
    assert floating_point_properties({"x": "double"}, "ORC") == {}
    assert floating_point_properties({"k": "int", "s": "string"}) == {}


def test_a_carried_bloom_filter_is_turned_off_for_floating_columns():
    got = floating_point_properties({"x": "double", "k": "int"}, carried={"parquet.bloom.filter.enabled": "true"})
    assert got == {"parquet.enable.dictionary#x": "false", "parquet.bloom.filter.enabled#x": "false"}


def test_the_ddl_carries_them_and_overrides_the_sources_own():
    meta = TableMetadata.of(None, {}, {"parquet.enable.dictionary#x": "true", "owner": "ops"})
    ddl = create_table_sql(baselines.full_scan("t"), {"k": "int", "x": "double"}, "t__planner_new", metadata=meta)
    assert "'parquet.enable.dictionary#x'='false'" in ddl and "'owner'='ops'" in ddl
    assert "'parquet.enable.dictionary#x'='true'" not in ddl

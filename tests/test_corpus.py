"""A sample of public HiveQL files (tests/corpus, see its NOTICE.md) read with default settings.

Every file that holds a query gives a workload; every statement holding a SELECT becomes a query
(with its scans, or a note saying why it has none) or a view that queries follow; nothing is
printed on stderr. ``benchmarks/corpus_bench.py`` measures the same on the full corpus.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.corpus_bench import corpus_files, read_corpus
from planner.errors import WorkloadError
from planner.workload import Schema, read_workload

CORPUS = Path(__file__).resolve().parent / "corpus"
FILES = corpus_files(CORPUS)


def test_the_sample_is_what_notice_md_lists():
    by_folder = {d.name: len([f for f in FILES if f.parent == d]) for d in CORPUS.iterdir() if d.is_dir()}
    assert by_folder == {"hive-clientpositive": 34, "hive-perf": 7, "spark-tpcds": 8}


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_each_file_reads_with_default_settings(path, capfd):
    try:
        wl = read_workload(path)
    except WorkloadError as e:
        assert "has no queries" in str(e) or "is empty" in str(e), str(e)
        return
    assert wl.queries
    for q in wl.queries:
        assert q.scans or q.notes, f"{path.name}:{q.line}: a query with no scan and no note"
    out, err = capfd.readouterr()
    assert out == "" and err == ""


def test_no_query_of_the_sample_is_lost_silently():
    result = read_corpus(FILES, CORPUS)
    assert result["failures"] == []
    assert result["lost"] == []
    f = result["figures"]
    assert f["files read"] == f["files with a query"] == 45
    assert result["skipped"]["DFS"] >= 10 and result["skipped"]["CREATE VIEW"] >= 10


def test_explained_tpcds_queries_of_hive_s_perf_suite_are_read():
    wl = read_workload(CORPUS / "hive-perf" / "cbo_ext_query1.q")
    assert len(wl.queries) == 2
    tables = sorted({s.table for q in wl.queries for s in q.scans})
    assert tables == ["customer", "date_dim", "store", "store_returns"]
    # without a schema, s_state could be customer's column as well: nothing is claimed
    store = [s for s in wl.queries[0].scans if s.table == "store"]
    assert "s_state" not in str(store[0].predicate)
    schema = Schema({"store": {"s_store_sk": "int", "s_state": "string"},
                     "customer": {"c_customer_sk": "int", "c_customer_id": "string"},
                     "store_returns": {"sr_customer_sk": "int", "sr_store_sk": "int", "sr_fee": "decimal(7,2)",
                                       "sr_returned_date_sk": "int"},
                     "date_dim": {"d_date_sk": "int", "d_year": "int"}})
    wl = read_workload(CORPUS / "hive-perf" / "cbo_ext_query1.q", schema=schema)
    by_table = {s.table: str(s.predicate) for s in wl.queries[0].scans}
    assert "s_state = 'NM'" in by_table["store"] and "d_year = 2000" in by_table["date_dim"]


def test_multi_insert_file_reads_each_from_first_statement_as_one_scan():
    wl = read_workload(CORPUS / "hive-clientpositive" / "multi_insert.q")
    first = wl.queries[0]
    assert [s.table for s in first.scans] == ["src"]
    assert str(first.scans[0].predicate) == "(key < 20 AND key > 10) OR key < 10"

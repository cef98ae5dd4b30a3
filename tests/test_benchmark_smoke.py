"""Every benchmark runs end to end on tiny data, so none breaks silently when the code under it moves.

Each test runs a benchmark's own steps (on TPC-H SF 0.01 or a few thousand rows, one round) and
its report, and checks the report's columns and that no answer differed from the plain table. The
Spark ones share the session's Spark; the figures they produce mean nothing at this size.
``SMOKE`` names the test of every benchmark ``./dev bench`` lists; a new benchmark without one fails
``test_every_benchmark_has_a_smoke_test``.
"""
from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from benchmarks.__main__ import SCRIPTS
from benchmarks.tpch_setup import quick_config

TESTS = Path(__file__).resolve().parent

#: benchmark (as ``./dev bench`` names it) -> the test that runs it on tiny data
SMOKE = {
    "analyze": "test_analyze_bench_on_a_small_workload",
    "advise": "test_advise_bench_on_a_small_sample",
    "corpus": "test_corpus_bench_on_the_sample_corpus",
    "tpch": "test_quick_benchmark_end_to_end",
    "build": "test_build_benchmark_end_to_end",
    "tree-key": "test_tree_key_bench_builds_three_keys",
    "page-size": "test_page_size_bench_writes_two_page_sizes",
    "joins": "test_join_benchmark_and_its_rewrite_profile",
    "rewrite-profile": "test_join_benchmark_and_its_rewrite_profile",
    "layout-alone": "test_join_benchmark_and_its_rewrite_profile",
    "drift": "test_drift_bench_replays_a_small_drift",
    "drift-check": "test_drift_check_on_a_small_table",
    "drift-replay": "test_the_layouts_partial_held_answer_every_probe_as_the_plain_table",
    "issue10": "test_issue10_end_to_end_on_a_few_thousand_rows",
}


def test_every_benchmark_has_a_smoke_test():
    assert set(SMOKE) == set(SCRIPTS)
    source = "".join(p.read_text() for p in TESTS.glob("test_*.py"))
    missing = [t for t in SMOKE.values() if not re.search(rf"^def {t}\(", source, re.M)]
    assert not missing, missing


def _header(text: str, first_column: str) -> str:
    return next(line for line in text.splitlines() if line.startswith(f"| {first_column} |"))


# ---- no Spark --------------------------------------------------------------------------------------
def test_advise_bench_on_a_small_sample(tmp_path):
    from benchmarks.advise_bench import main

    assert main(["--sizes", "20", "--samples", "2000", "--out", str(tmp_path / "advise.md")]) == 0
    text = (tmp_path / "advise.md").read_text()
    assert _header(text, "queries") == ("| queries | sample rows | parse+analyse s | search+cost s | total s | "
                                        "contenders | load avg |")
    assert "| 20 | 2,000 |" in text


def test_analyze_bench_on_a_small_workload(tmp_path):
    from benchmarks.analyze_bench import main

    assert main(["--sizes", "20", "--repeat", "1", "--out-dir", str(tmp_path)]) == 0
    text = (tmp_path / "analyze.md").read_text()
    assert _header(text, "queries") == "| queries | scans | wall s | CPU s | queries/s (CPU) |"
    assert "| 20 |" in text


def test_corpus_bench_on_the_sample_corpus(tmp_path):
    from benchmarks.corpus_bench import main

    assert main(["--corpus", str(TESTS / "corpus"), "--repeat", "1", "--out-dir", str(tmp_path)]) == 0
    text = (tmp_path / "corpus.md").read_text()
    assert "| queries lost silently | 0 | 0 |" in text
    assert "JVM started: no | ≤ 2 s, no JVM |" in text
    assert (tmp_path / "corpus.json").exists()


def test_drift_bench_replays_a_small_drift(tmp_path):
    from benchmarks.drift_bench import run, write

    result = run(0.01, 2, 8, 4, 5_000, 4.0, 11, log=lambda *_: None, data_dir=tmp_path / "data")
    text = write(result, "cmd", tmp_path, "drift_smoke")
    strategies = text[text.index("| strategy |"):].splitlines()
    assert strategies[0].startswith("| strategy | checks after every | rows read | rows rewritten | total |")
    assert strategies[2].startswith("| partial |")  # the default of `planner relayout` first
    assert "| partial / static, rows read + rewritten |" in text
    assert {p.suffix for p in tmp_path.glob("drift_smoke.*")} == {".md", ".json", ".png"}


# ---- on the session's Spark --------------------------------------------------------------------
@pytest.mark.spark
def test_tree_key_bench_builds_three_keys(spark, tmp_path):
    from benchmarks.tree_key_bench import VARIANTS, measure, report

    cfg = dataclasses.replace(quick_config(tmp_path / "state", tmp_path / "out"), db="tree_key_smoke",
                              workloads=("tpch",))
    result = measure(spark, cfg, 1, lambda m: None, key="amoeba")
    text = report(result, "cmd")
    assert _header(text, "build") == "| build | fastest s | ÷ copy | CPU s (fastest) | CPU ÷ copy | runs s |"
    assert all(f"| {v} |" in text for v in ("copy", *VARIANTS))  # each written, its rows checked


@pytest.mark.spark
def test_page_size_bench_writes_two_page_sizes(spark, tmp_path):
    from benchmarks.page_size_bench import report, run

    cfg = dataclasses.replace(quick_config(tmp_path / "state", tmp_path / "out"), db="page_smoke", workloads=("q6",))
    result = run(spark, cfg, 1, lambda m: None, pages=(5_000, 500))
    assert [t["wrong"] for t in result["tables"]] == [0, 0]
    text = report(result, 0.01, 1, 0.0, 1.0)
    assert _header(text, "page rows").startswith("| page rows | rows read (Q6 probes) | read ÷ matching |")
    assert "| 500 |" in text


@pytest.mark.spark
def test_join_benchmark_and_its_rewrite_profile(spark, tmp_path):
    from benchmarks import layout_alone, rewrite_profile, tpch_joins

    db = "joins_smoke"
    # the month ranges, not advise's pick: at SF 0.01 the copy as loaded (two row groups, in key
    # order) is what advise keeps, and the benchmark then has no layout to measure
    described = tpch_joins.setup(spark, 0.01, tmp_path / "data", db, lambda m: None, "month", tmp_path)
    assert "partitions" in described
    queries = [q for q in tpch_joins.held_out_queries(131, 1) if q[0] in ("q03", "q05")]
    spark.catalog.setCurrentDatabase(db)
    try:
        results = tpch_joins.run(spark, db, queries, lambda m: None, rounds=1)
        profile = rewrite_profile.run(spark, queries[:1])
        alone = layout_alone.run(spark, 1, 131, db)
    finally:
        spark.catalog.setCurrentDatabase("default")
    total = spark.table(f"{db}.lineitem_copy").count()
    text = tpch_joins.report(results, total, 0.01, (0.0, 0.0), 1.0, "as advised")
    assert "Wrong answers (every run's count and checksum of its rows compared with the plain copy's): 0" in text
    assert _header(text, "query").startswith("| query | rows copy | rows layout | rows layout+joins |")
    assert len(results) == 2 * len(tpch_joins.RUNS)
    assert spark.sql(f"SHOW TBLPROPERTIES {db}.lineitem_copy ('{tpch_joins.COPY_MARK}')").collect()[0][1] == "loader"
    text = layout_alone.report(alone, 0.01, ["--scale", "0.01"])
    assert text.startswith("# The laid-out table alone on queries it cannot prune (SF 0.01)")
    assert _header(text, "query").startswith("| query | as loaded s | laid out s |")
    assert "| lineitem ⋈ orders |" in text and "| q05 |" in text and "Read tasks of a plain scan" in text
    shown = rewrite_profile.report(profile, 0.01, "cmd")
    assert "| query | rewrite s (Spark's analysis included) | py4j round trips |" in shown and "| q0" in shown


@pytest.mark.spark
def test_drift_check_on_a_small_table(spark, tmp_path):
    from benchmarks.drift_check import report, run

    r = run(0.02, 6, stats_from="spark", log=lambda *_: None, spark=spark, data_dir=tmp_path)
    assert r["wrong"] == 0 and r["read_before"] > 0
    text = report(r, "cmd")
    assert _header(text, "figure") == "| figure | Spark | model |"
    assert "| drift window rows read, after the partial re-layout |" in text


@pytest.mark.spark
def test_issue10_end_to_end_on_a_few_thousand_rows(spark):
    from benchmarks.issue10_e2e import report, run

    zone = spark.conf.get("spark.sql.session.timeZone")
    results = run(spark, 3_000)
    assert spark.conf.get("spark.sql.session.timeZone") == zone
    assert len(results) == 3 * 2 * 11 and all(r["got"] == r["want"] for r in results)
    text = report(results, 3_000, 1.0, "0.0")
    assert _header(text, "step").startswith("| step | queries x zones | wrong counts |")

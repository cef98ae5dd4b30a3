"""Smoke tests of the TPC-H benchmarks (``tpch_bench``, ``tpch_build``, ``tpch_joins``) on the
session's Spark, and their pure parts.

SF 0.01, a few held-out queries and a few layouts (the table as loaded, month ranges, the planner's
picks): every step runs for real (load, advise, build, rewrite, measure, report), and every probe
must return the same answer on every layout as on the table as loaded.
"""
from __future__ import annotations

import dataclasses
import json

import pytest
import sqlglot

from benchmarks.tpch_bench import finish, run
from benchmarks.tpch_probe import probes_for
from benchmarks.tpch_setup import Config, quick_config, split_by_template
from devtools.workload_gen import generate
from planner.semantics.types import kind_of_type
from planner.workload import Schema, parse_workload

COLUMNS = {"l_orderkey": "bigint", "l_partkey": "bigint", "l_suppkey": "bigint", "l_linenumber": "int",
           "l_quantity": "decimal(15,2)", "l_extendedprice": "decimal(15,2)", "l_discount": "decimal(15,2)",
           "l_tax": "decimal(15,2)", "l_returnflag": "string", "l_linestatus": "string", "l_shipdate": "date",
           "l_commitdate": "date", "l_receiptdate": "date", "l_shipinstruct": "string", "l_shipmode": "string",
           "l_comment": "string"}


def _workload(n: int = 34):
    text = "".join(q + ";\n\n" for q in generate("tpch", n, 1))
    return parse_workload(text, "t.sql", schema=Schema({"lineitem": COLUMNS}), tables=["lineitem"])


def test_split_is_half_per_template_and_disjoint():
    wl = _workload()
    adv, held = split_by_template(wl.queries, seed=5)
    assert sorted(adv + held) == list(range(len(wl.queries)))
    per = {}
    for i in adv:
        per.setdefault(wl.queries[i].template, [0, 0])[0] += 1
    for i in held:
        per.setdefault(wl.queries[i].template, [0, 0])[1] += 1
    assert all(abs(a - h) <= 1 for a, h in per.values())
    # a prefix of the held-out half covers the templates before repeating one
    first = [wl.queries[i].template for i in held[:len(per)]]
    assert len(set(first)) == len(per)


def test_probes_parse_and_keep_only_lineitem_predicates():
    wl = _workload()
    kinds = {c: kind_of_type(t) for c, t in COLUMNS.items()}
    probes = probes_for(wl.queries, "lineitem", COLUMNS, kinds)
    assert len(probes) == sum(1 for q in wl.queries for s in q.scans if s.table == "lineitem")
    for p in probes:
        tree = sqlglot.parse_one(p.sql("bench.li_x"), read="spark")
        assert {c.name for c in tree.find_all(sqlglot.exp.Column)} <= set(COLUMNS)


@pytest.mark.spark
def test_quick_benchmark_end_to_end(spark, tmp_path):
    cfg = dataclasses.replace(quick_config(tmp_path / "state", tmp_path / "out"), db="bench_smoke",
                              workloads=("tpch",), max_queries=2, wall_queries=1, runs=2, layouts=("month",))
    results = run(spark, cfg, log=lambda m: None)
    paths = finish(results, cfg)
    assert all(p.exists() and p.stat().st_size > 0 for p in paths)
    raw = json.loads((cfg.out_dir / f"{cfg.name}.json").read_text())
    rows = {r["key"]: r for r in raw["workloads"]["tpch"]["summary"]}
    assert {"current", "month", raw["pick"]} <= set(rows)
    full = results["source"]["rows"] * len(raw["workloads"]["tpch"]["scans"])
    for r in rows.values():
        assert r["wrong"] == 0 and r["unstable"] == 0
        assert r["match"] <= r["read"] <= full
    # the table as loaded is priced from its footers: its estimate is what Spark reads
    assert rows["current"]["est"] == rows["current"]["read"]
    assert raw["figures"]["held-out tpch queries reading > 1.2× their rows as loaded"]["default"] == 0
    md = (cfg.out_dir / f"{cfg.name}.md").read_text()
    assert "## Figures (issue #11)" in md and "li_month" in md
    # the default advice comes first in the layout table
    table = md[md.index("## Held-out TPC-H"):].splitlines()
    first = next(line for line in table if line.startswith("| `"))
    assert "tpch pick" in first
    # the report re-renders from the run's pickle, without Spark
    from benchmarks.tpch_report import main as rerender

    again = tmp_path / "again"
    assert rerender([str(cfg.state_dir / f"{cfg.name}.results.pickle"), "--out", str(again)]) == 0
    assert (again / f"{cfg.name}.md").read_text() == md


@pytest.mark.spark
def test_build_benchmark_end_to_end(spark, tmp_path):
    """Issue 14's build benchmark on SF 0.01, one round: it follows tpch_bench's layouts (it broke
    twice, silently, when they changed), and an ordered pick's write plan is in its report."""
    from benchmarks.tpch_build import measure, report, write

    cfg = dataclasses.replace(quick_config(tmp_path / "state", tmp_path / "out"), db="build_smoke",
                              workloads=("tpch",), layouts=("tpch_allow", "zorder4", "zorder4_h"))
    results = measure(spark, cfg, 1, "smoke", tmp_path / "stats", stamp=lambda m: None)
    keys = {r["key"] for r in results["rows"]}
    assert {"copy", "tpch_pick", "zorder4", "zorder4_h"} <= keys
    assert all(r["best"].seconds and r["best"].seconds > 0 for r in results["rows"])
    assert results["statistics"]["ratio"] > 0 and results["micro"]["rows"]
    text = report(results)
    assert "## Targets" in text and "li_zorder4_h" in text and "## Z-value micro-benchmark" in text
    builds = text[text.index("## Builds"):].splitlines()
    pick = next(r["key"] for r in results["rows"] if r["family"] == "pick")
    assert builds[2].startswith("| layout | write plan | fastest s | ÷ copy |") and f"`li_{pick}`" in builds[4]
    assert [p.suffix for p in write(results, text, tmp_path / "out" / "build.md")] == [".md", ".json"]


def test_config_defaults_match_the_issue():
    cfg = Config()
    assert cfg.scale == 1 and cfg.runs == 3 and cfg.row_group_bytes == 2_000_000


def test_ordered_variants_define_the_derived_attributes_they_sort_by():
    """Found by this benchmark: ``no partitioning`` sorted by ``l_commitdate < l_receiptdate`` was
    emitted as ``SORT BY `l_commitdate < l_receiptdate``` (a column that does not exist), because
    the search gave layouts an order without the derived attribute's definition."""
    from benchmarks.advise_bench import stats_for, synthetic_lineitem
    from planner.analysis.table_analysis import analyze_table
    from planner.costmodel.cost import CostModel
    from planner.costmodel.search import search
    from planner.emit.apply_sql import (
        CURVE_COLUMN,
        ORDER_COLUMN,
        Z_COLUMN,
        insert_select,
    )

    wl = _workload(68)
    analysis = analyze_table(wl, "lineitem", COLUMNS)
    result = search(CostModel(analysis, stats_for(synthetic_lineitem(20_000))))
    derived_orders = [c.layout for c in result.variants
                      if any(col in analysis.derived for col in c.layout.order.columns)]
    assert derived_orders, "the workload should make some order use a derived attribute"
    for layout in derived_orders:
        assert {c for c in layout.order.columns if c in analysis.derived} <= set(dict(layout.derived))
        sql = insert_select(layout, COLUMNS, "db.src", "db.dst", overwrite=True, dialect="spark").sql("spark")
        names = {c.name for c in sqlglot.parse_one(sql, read="spark").find_all(sqlglot.exp.Column)}
        helpers = {Z_COLUMN, CURVE_COLUMN, ORDER_COLUMN}  # computed once per row in a subquery, projected away
        assert names <= set(COLUMNS) | {layout.partition_column} | helpers


def test_the_join_benchmark_rotates_its_set_ups_and_keeps_the_fastest_run(monkeypatch):
    from benchmarks import tpch_joins

    seen = []

    def fake_measure(spark, db, sql, mode, laid_out=("lineitem",)):
        seen.append(mode)
        wall = 10.0 - len(seen) / 10  # later runs are faster: the fastest is the last of its set-up
        return {"answer": (1, 7), "wall": wall, "li_rows": 1, "li_parts": 1, "li_files": 1, "li_scans": 1}

    class Conf:
        def set(self, *_): pass

        def unset(self, *_): pass

    monkeypatch.setattr(tpch_joins, "measure", fake_measure)
    spark = type("S", (), {"conf": Conf()})()
    out = tpch_joins.run(spark, "db", [("q03", "SELECT 1"), ("q04", "SELECT 1")], lambda m: None, rounds=2)
    n = len(tpch_joins.RUNS)
    assert len(out) == 2 * 2 * n
    firsts = [out[k * n]["mode"] + str(out[k * n]["spark_joins"]) for k in range(4)]
    # out: round 1 (q03, q04), round 2 (q03, q04); the next query, and the same query in the next
    # round, start with another set-up
    assert firsts[0] != firsts[1] and firsts[0] != firsts[2] and firsts[1] != firsts[3]
    best = tpch_joins.fastest(out)
    assert all(best[k]["round"] == 2 and len(best[k]["walls"]) == 2 for k in best)
    assert "fastest of 2 rounds" in tpch_joins.report(out, 6, 1.0, (0.0, 0.0), 1.0, "x")


def test_the_join_benchmarks_copy_reads_every_laid_out_table_as_loaded():
    from benchmarks.tpch_joins import copy_text

    sql = "SELECT o_orderstatus FROM orders, lineitem WHERE l_orderkey = o_orderkey"
    assert copy_text(sql, ("lineitem",)) == "SELECT o_orderstatus FROM orders, lineitem_copy WHERE l_orderkey = o_orderkey"
    assert copy_text(sql, ("lineitem", "orders")) == \
        "SELECT o_orderstatus FROM orders_copy, lineitem_copy WHERE l_orderkey = o_orderkey"

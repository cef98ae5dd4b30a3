"""Where the planner's rewrite of a join query spends its time (issue 13): JVM round trips, the
catalog and file listings, Spark's own parse and analysis.

Runs each held-out TPC-H join query of ``benchmarks.tpch_joins`` through ``planner.sql`` on the
join benchmark's state (build it first with ``python -m benchmarks.tpch_joins --setup-only``),
once to warm up, then once under cProfile, and reports per query the rewrite's wall time and py4j
round trips, and for all six the time in the functions that talk to the metastore and the file
system. The seconds carry cProfile's overhead; the round trips do not.

    .venv/bin/python -m benchmarks.rewrite_profile [--scale 1]
"""
from __future__ import annotations

import argparse
import cProfile
import pstats
import time
from pathlib import Path

from benchmarks.harness import RESULTS, markdown_table, reproduce, write_result
from benchmarks.tpch_joins import ROOT, held_out_queries
from benchmarks.tpch_setup import session_conf
from hive_integration.metastore.layouts import sql as planner_sql

PARTS = {"catalog entries (metastore)": "catalog_entries", "partition locations (metastore)": "partition_locations",
         "file listings": "listed_files", "Spark's parse and analysis of the query": "session.py:1777(sql)"}


def _calls(stats: pstats.Stats) -> int:
    return sum(v[0] for k, v in stats.stats.items() if k[2] == "send_command" and "clientserver" in k[0])


def _seconds(stats: pstats.Stats, name: str) -> float:
    return sum(v[3] for k, v in stats.stats.items() if name in f"{k[0]}:{k[1]}({k[2]})" or k[2] == name)


def run(spark, queries) -> dict:
    """Per query (name, rewrite seconds under cProfile, py4j round trips), and the seconds of
    ``PARTS`` over all of them."""
    total = pstats.Stats()
    rows = []
    for name, sql in queries:
        planner_sql(spark, sql)  # warm up
        prof = cProfile.Profile()
        t0 = time.perf_counter()
        prof.runcall(planner_sql, spark, sql)
        wall = time.perf_counter() - t0
        stats = pstats.Stats(prof)
        total.add(stats)
        rows.append((name, wall, _calls(stats)))
    return {"queries": rows, "parts": {label: _seconds(total, fn) for label, fn in PARTS.items()}}


def report(result: dict, scale: float, command: str) -> str:
    lines = [f"# Where the rewrite of a join query spends its time (issue 13), SF {scale:g}", "",
             f"Command: `{command}` (on the state of `benchmarks.tpch_joins`); each query profiled once after a "
             "warm-up, so the seconds carry cProfile's overhead. Round trips are py4j calls from Python to "
             "Spark's JVM.", "",
             *markdown_table(["query", "rewrite s (Spark's analysis included)", "py4j round trips"],
                             ((name, f"{wall:.2f}", calls) for name, wall, calls in result["queries"])), "",
             *markdown_table([f"part, all {len(result['queries'])} queries", "s"],
                             ((label, f"{s:.2f}") for label, s in result["parts"].items())), ""]
    return "\n".join(lines)


def main(argv=None) -> int:
    from hive_integration.spark.session import build_spark_session

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--state-dir", default=str(ROOT / ".planner" / "bench-joins"))
    ap.add_argument("--out", default=None, help="default benchmarks/results/rewrite_profile_sf<scale>.md")
    a = ap.parse_args(argv)
    state = Path(a.state_dir) / f"sf{a.scale:g}"
    spark = build_spark_session(state / "spark", app_name="rewrite-profile", conf=session_conf(a.scale))
    spark.catalog.setCurrentDatabase("bench_joins")
    try:
        result = run(spark, held_out_queries(131, 1))
    finally:
        spark.stop()
    text = report(result, a.scale, reproduce("benchmarks.rewrite_profile", argv))
    print(text)
    out = Path(a.out or RESULTS / f"rewrite_profile_sf{a.scale:g}.md")
    write_result(out.stem, text, result, out.parent)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

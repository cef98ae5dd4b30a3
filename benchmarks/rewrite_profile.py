"""Where the planner's rewrite of a join query spends its time (issue 13): JVM round trips, the
catalog and file listings, Spark's own parse and analysis.

Runs each held-out TPC-H join query of ``benchmarks.tpch_joins`` through ``planner.sql`` on the
join benchmark's state (build it first with ``python -m benchmarks.tpch_joins --setup-only``),
once to warm up, then once under cProfile, and prints per query the rewrite's wall time and py4j
round trips, and for all six the time in the functions that talk to the metastore and the file
system.

    .venv/bin/python -m benchmarks.rewrite_profile [--scale 1]
"""
from __future__ import annotations

import argparse
import cProfile
import pstats
import time
from pathlib import Path

from benchmarks.tpch_joins import ROOT, held_out_queries, session_conf
from hive_integration.metastore.layouts import sql as planner_sql
from hive_integration.spark.session import build_spark_session

PARTS = {"catalog entries (metastore)": "catalog_entries", "partition locations (metastore)": "partition_locations",
         "file listings": "listed_files", "Spark's parse and analysis of the query": "session.py:1777(sql)"}


def _calls(stats: pstats.Stats) -> int:
    return sum(v[0] for k, v in stats.stats.items() if k[2] == "send_command" and "clientserver" in k[0])


def _seconds(stats: pstats.Stats, name: str) -> float:
    return sum(v[3] for k, v in stats.stats.items() if name in f"{k[0]}:{k[1]}({k[2]})" or k[2] == name)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--state-dir", default=str(ROOT / ".planner" / "bench-joins"))
    a = ap.parse_args(argv)
    state = Path(a.state_dir) / f"sf{a.scale:g}"
    spark = build_spark_session(state / "spark", app_name="rewrite-profile", conf=session_conf(a.scale))
    spark.catalog.setCurrentDatabase("bench_joins")
    queries = held_out_queries(131, 1)
    total = pstats.Stats()
    print("| query | rewrite s (Spark's analysis included) | py4j round trips |\n|---|---:|---:|")
    for name, sql in queries:
        planner_sql(spark, sql)  # warm up
        prof = cProfile.Profile()
        t0 = time.perf_counter()
        prof.runcall(planner_sql, spark, sql)
        wall = time.perf_counter() - t0
        stats = pstats.Stats(prof)
        total.add(stats)
        print(f"| {name} | {wall:.2f} | {_calls(stats)} |")
    print("\n| part, all six queries | s |\n|---|---:|")
    for label, fn in PARTS.items():
        print(f"| {label} | {_seconds(total, fn):.2f} |")
    spark.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""How fast ``planner analyze`` reads and analyses TPC-H workloads of growing size.

    .venv/bin/python benchmarks/analyze_bench.py [--sizes 100 1000 10000] [--repeat 3] [--profile N]

For each size it writes ``tpch_workload(n, seed=1)`` to a temporary file, then times
``read_workload`` + ``analyze`` in-process (schema from sql/tpch_schema.sql, every table), and
prints the median of ``--repeat`` runs as a markdown table, also written to
benchmarks/results/analyze.md. ``--profile N`` prints the cProfile hot spots for size N instead.
Target (issue): at most 5 s for 1,000 queries on a 2-core machine.
"""
from __future__ import annotations

import argparse
import cProfile
import io
import platform
import pstats
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from planner.analysis import analyze  # noqa: E402
from planner.workload import read_workload  # noqa: E402
from planner.workload.scans import schema_from_ddl  # noqa: E402
from planner.workload_gen import workload_file_text  # noqa: E402

SEED = 1
RESULT = ROOT / "benchmarks" / "results" / "analyze.md"


def run_once(path: Path, schema) -> tuple[float, int, int]:
    start = time.perf_counter()
    wl = read_workload(path, schema=schema)
    tables = wl.tables()
    result = analyze(wl, tables, {t: schema.columns(t) for t in tables if schema.columns(t)})
    elapsed = time.perf_counter() - start
    return elapsed, len(wl.queries), sum(len(t.scans) for t in result)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[100, 1_000, 10_000])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--profile", type=int, metavar="N", help="profile one run of N queries and print hot spots")
    ap.add_argument("--no-write", action="store_true", help="do not write benchmarks/results/analyze.md")
    args = ap.parse_args(argv)
    schema = schema_from_ddl((ROOT / "sql" / "tpch_schema.sql").read_text(), "sql/tpch_schema.sql")
    with tempfile.TemporaryDirectory() as tmp:
        def workload(n: int) -> Path:
            p = Path(tmp) / f"tpch_{n}.sql"
            p.write_text(workload_file_text("tpch", n, SEED), encoding="utf-8")
            return p

        if args.profile:
            path = workload(args.profile)
            prof = cProfile.Profile()
            prof.runcall(run_once, path, schema)
            out = io.StringIO()
            pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(30)
            print(out.getvalue())
            return 0
        rows = []
        for n in args.sizes:
            path = workload(n)
            runs = [run_once(path, schema) for _ in range(args.repeat)]
            secs = statistics.median(r[0] for r in runs)
            _, queries, scans = runs[0]
            rows.append((n, queries, scans, secs))
            print(f"  {n} queries: {secs:.2f} s", file=sys.stderr)
    lines = [
        "# planner analyze: read_workload + analyze, TPC-H workloads",
        "",
        f"`tpch_workload(n, seed={SEED})`, schema sql/tpch_schema.sql, every table; in-process, median of "
        f"{args.repeat} runs; Python {platform.python_version()}, {platform.machine()}, "
        f"{_cpus()} CPUs, load average {_load()} at the end (other jobs on the machine inflate the "
        f"figures). Target: ≤ 5 s for 1,000 queries.",
        "",
        "| queries | scans | statements/s | seconds |",
        "|--------:|------:|-------------:|--------:|",
    ]
    for n, queries, scans, secs in rows:
        lines.append(f"| {n:,} | {scans:,} | {queries / secs:,.0f} | {secs:.2f} |")
    table = "\n".join(lines) + "\n"
    print(table)
    if not args.no_write:
        RESULT.parent.mkdir(parents=True, exist_ok=True)
        RESULT.write_text(table, encoding="utf-8")
    return 0


def _load() -> str:
    import os
    return f"{os.getloadavg()[0]:.1f}" if hasattr(os, "getloadavg") else "n/a"


def _cpus() -> int:
    import os
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


if __name__ == "__main__":
    sys.exit(main())

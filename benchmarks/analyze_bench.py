"""How fast ``planner analyze`` reads and analyses TPC-H workloads of growing size, end to end.

    .venv/bin/python -m benchmarks.analyze_bench [--sizes 100 1000 10000] [--repeat 3] [--profile N]

For each size it writes ``tpch_workload(n, seed=1)`` to a temporary file (``workload_file_text``,
as ``python -m devtools.workload_gen tpch -n N --seed 1`` writes it) and runs the real command,

    planner analyze FILE --schema sql/tpch_schema.sql

in a fresh process, the way a user does: interpreter and CLI start-up, imports, reading, analysis
and printing included. It reports the median wall time and the median CPU time (user + system of
the child process) of ``--repeat`` runs, with the load average before and after: on a shared
machine wall time grows with the load, CPU time much less. The query and scan counts are read
from the command's own output, so a run that lost queries shows. The table is printed and written
to benchmarks/results/analyze.md. ``--profile N`` prints the cProfile hot spots of one in-process
run of N queries instead.
Target (issue 12): at most 2 s for 1,000 queries, CLI start included, on a 2-core machine.
"""
from __future__ import annotations

import argparse
import cProfile
import io
import os
import platform
import pstats
import re
import statistics
import sys
import tempfile
from pathlib import Path

from benchmarks.harness import RESULTS, ROOT, load_average, markdown_table, time_process, write_result
from devtools.workload_gen import workload_file_text

SEED = 1
SCHEMA = ROOT / "sql" / "tpch_schema.sql"
TARGET_SECONDS = 2.0


def planner_command() -> list[str]:
    """The installed ``planner`` script next to this interpreter (what ``./dev planner`` runs)."""
    script = Path(sys.executable).parent / "planner"
    return [str(script)] if script.exists() else [sys.executable, "-m", "planner.cli"]


def run_cli(path: Path) -> tuple[float, float, str]:
    """One run of ``planner analyze``: wall seconds, CPU seconds of the child, its output."""
    done = time_process(planner_command() + ["analyze", str(path), "--schema", str(SCHEMA)])
    return done.seconds, done.cpu, done.stdout


def counts(output: str) -> tuple[int, int]:
    """Queries and scans as the command reports them (``…: 1000 queries; …``, ``table t: 367 scans``)."""
    queries = int(re.search(r": (\d+) queries;", output).group(1))
    scans = sum(int(n) for n in re.findall(r"^table \S+: (\d+) scans$", output, re.M))
    return queries, scans


def profile(path: Path) -> str:
    from planner.analysis.table_analysis import analyze
    from planner.workload import read_workload
    from planner.workload.scans import schema_from_ddl

    schema = schema_from_ddl(SCHEMA.read_text(), "sql/tpch_schema.sql")

    def once():
        wl = read_workload(path, schema=schema, joins=False)
        tables = wl.tables()
        analyze(wl, tables, {t: schema.columns(t) for t in tables if schema.columns(t)})

    prof = cProfile.Profile()
    prof.runcall(once)
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(30)
    return out.getvalue()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[100, 1_000, 10_000])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--profile", type=int, metavar="N", help="profile one in-process run of N queries")
    ap.add_argument("--no-write", action="store_true", help="do not write benchmarks/results/analyze.md")
    ap.add_argument("--out-dir", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        def workload(n: int) -> Path:
            p = Path(tmp) / f"tpch_{n}.sql"
            p.write_text(workload_file_text("tpch", n, SEED), encoding="utf-8")
            return p

        if args.profile:
            print(profile(workload(args.profile)))
            return 0
        load_before = _load()
        rows = []
        for n in args.sizes:
            path = workload(n)
            runs = [run_cli(path) for _ in range(args.repeat)]
            queries, scans = counts(runs[0][2])
            if queries != n:
                raise SystemExit(f"planner analyze read {queries} of {n} queries")
            wall = statistics.median(r[0] for r in runs)
            cpu = statistics.median(r[1] for r in runs)
            rows.append((n, scans, wall, cpu))
            print(f"  {n} queries: {wall:.2f} s wall, {cpu:.2f} s CPU (load {_load()})", file=sys.stderr)
        load_after = _load()
    lines = [
        "# planner analyze: the CLI end to end, TPC-H workloads",
        "",
        f"`planner analyze FILE --schema sql/tpch_schema.sql` in a fresh process (start-up, imports, "
        f"reading, analysis, output), FILE = `tpch_workload(n, seed={SEED})`; median of {args.repeat} runs; "
        f"Python {platform.python_version()}, {platform.machine()}, {_cpus()} CPUs, load average "
        f"{load_before} before and {load_after} after (other jobs on the machine inflate wall time; CPU "
        f"time is user + system of the command). Target: ≤ {TARGET_SECONDS:g} s for 1,000 queries, "
        f"CLI start included.",
        "",
        *markdown_table(["queries", "scans", "wall s", "CPU s", "queries/s (CPU)"],
                        ([f"{n:,}", f"{scans:,}", f"{wall:.2f}", f"{cpu:.2f}", f"{n / cpu:,.0f}"]
                         for n, scans, wall, cpu in rows), align="rrrrr"),
    ]
    table = "\n".join(lines) + "\n"
    print(table)
    if not args.no_write:
        write_result("analyze", table, out_dir=args.out_dir)
    return 0


def _load() -> str:
    return f"{load_average():.1f}"


def _cpus() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


if __name__ == "__main__":
    sys.exit(main())

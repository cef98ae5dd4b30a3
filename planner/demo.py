"""``./dev run``: the whole flow on the embedded metastore, from nothing.

1. generate TPC-H lineitem with tpchgen-cli (cached under .planner/data);
2. load it into a Hive Parquet table ``tpch.lineitem`` (small row groups, as a DBA's table would be);
3. ``planner advise`` the bundled TPC-H workload against it;
4. ``planner apply`` it (verified, swapped in, the old table kept), then explain and run a few
   queries before and after, with Spark's own scan metrics and wall times.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from planner.errors import PlannerError

ROOT = Path(__file__).resolve().parent.parent


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="./dev run", description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=1.0, help="TPC-H scale factor (default 1)")
    ap.add_argument("--workload", default=str(ROOT / "sql" / "tpch_workload.sql"))
    ap.add_argument("--state-dir", default=None)
    ap.add_argument("--out", default="advice")
    args = ap.parse_args(argv)
    try:
        return _run(args)
    except PlannerError as e:
        print(f"error: {e}", file=sys.stderr)
        return e.exit_code


def _run(args) -> int:
    from hive_integration.session import build_spark_session, default_state_dir
    from hive_integration.tpch import generate_lineitem, load_table

    state = Path(args.state_dir) if args.state_dir else default_state_dir()
    t0 = time.time()
    print(f"[1/4] generating TPC-H lineitem at scale {args.scale} …", flush=True)
    data = generate_lineitem(args.scale, state / "data" / f"sf{args.scale:g}")
    spark = build_spark_session(state)
    spark.sql("CREATE DATABASE IF NOT EXISTS tpch")
    table = "tpch.lineitem"
    if not spark.catalog.tableExists(table):
        print("[2/4] loading it into Hive table tpch.lineitem …", flush=True)
        load_table(spark, data, table, row_group_bytes=600_000)
    else:
        print("[2/4] tpch.lineitem already loaded", flush=True)
    print(f"[3/4] advising {args.workload} …", flush=True)
    from planner.cli.main import cli
    import planner.cli.advise  # noqa: F401

    cli.main(args=["advise", args.workload, "--table", table, "--out", args.out,
                   *(["--state-dir", str(state)] if args.state_dir else [])],
             prog_name="planner", standalone_mode=False)
    from planner.demo_apply import apply_and_compare

    if not (Path(args.out) / "layout.json").exists():
        print("[4/4] the table as it is is the best layout: nothing to apply", flush=True)
        return 0
    print("[4/4] applying the advice and running queries before/after …", flush=True)
    status = apply_and_compare(spark, Path(args.out), table, args.workload)
    print(f"done in {time.time() - t0:.0f}s")
    return status


if __name__ == "__main__":
    sys.exit(main())

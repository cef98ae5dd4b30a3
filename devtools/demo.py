"""``./dev run``: the whole flow on the embedded metastore, from nothing.

1. generate TPC-H lineitem with tpchgen-cli (cached per scale in the state folder's ``data/``: the
   user's, ``~/.local/state/planner`` or ``$PLANNER_HOME``, as for every planner command);
2. load it into a Hive Parquet table ``tpch.lineitem`` (small row groups, as a DBA's table would be);
   a table holding another scale is reloaded (``--scale`` always means what it says);
3. ``planner advise`` the bundled TPC-H workload against it;
4. ``planner apply`` it (verified, swapped in, the old table kept), then explain and run a few
   queries before and after, with Spark's own scan metrics (partitions, rows) and wall times.

Run again, it does not lay the table out a second time (nor pile up ``__before_*`` copies): it
says the table is laid out and compares again; ``--relayout`` advises and applies anew, keeping
only the original table as the "before".
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from planner.errors import PlannerError

ROOT = Path(__file__).resolve().parent.parent
TABLE = "tpch.lineitem"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="./dev run", description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=1.0, help="TPC-H scale factor (default 1)")
    ap.add_argument("--workload", default=str(ROOT / "sql" / "tpch_workload.sql"))
    ap.add_argument("--state-dir", default=None)
    ap.add_argument("--out-dir", "--out", dest="out_dir", default="advice",
                    help="advice folder (default ./advice, where you run ./dev from)")
    ap.add_argument("--relayout", action="store_true", help="advise and apply again though the table is laid out")
    args = ap.parse_args(argv)
    try:
        return _run(args)
    except PlannerError as e:
        print(f"error: {e}", file=sys.stderr)
        return e.exit_code


def _run(args) -> int:
    from devtools.demo_compare import apply_and_compare, current_layout
    from devtools.tpch_data import generate_lineitem
    from hive_integration.spark.session import LOCAL_MASTER, build_spark_session, default_state_dir

    state = Path(args.state_dir).resolve() if args.state_dir else default_state_dir()
    t0 = time.time()
    print(f"[1/4] generating TPC-H lineitem at scale {args.scale:g} …", flush=True)
    data = generate_lineitem(args.scale, state / "data")
    spark = build_spark_session(state, master=LOCAL_MASTER)  # the demo runs locally, whatever spark-defaults say
    if not spark.catalog.databaseExists("tpch"):
        spark.sql("CREATE DATABASE tpch")
    _load(spark, data, args.scale)
    layout = current_layout(spark, TABLE)
    if layout is not None and not args.relayout:
        print(f"[3/4] {TABLE} is already laid out ({layout.describe()}); not advising again "
              "(./dev run --relayout does)", flush=True)
        advice_dir = None
    else:
        print(f"[3/4] advising {args.workload} …", flush=True)
        from planner.cli.main import cli

        # the demo's own session: its state folder and its embedded metastore, whatever a planner.toml
        # or a hive-site.xml around would name
        cli.main(args=["advise", args.workload, "--table", TABLE, "--out-dir", args.out_dir,
                       "--state-dir", str(state), "--metastore", "embedded"],
                 prog_name="planner", standalone_mode=False)
        advice_dir = Path(args.out_dir)
        if not (advice_dir / "layout.json").exists():
            print("[4/4] the table as it is is the best layout: nothing to apply", flush=True)
            return 0
    print("[4/4] applying the advice and running queries before/after …", flush=True)
    status = apply_and_compare(spark, advice_dir, TABLE, args.workload)
    print(f"done in {time.time() - t0:.0f}s")
    return status


def _load(spark, data: Path, scale: float) -> None:
    """``tpch.lineitem`` at ``scale``: loaded once; a table holding another scale (told by its row
    count) is replaced, and so are the copies earlier runs kept of it."""
    from sqlglot import exp

    from devtools.tpch_data import load_table

    if spark.catalog.tableExists(TABLE):
        want, have = _rows_in(data), spark.table(TABLE).count()
        if want == have:
            print(f"[2/4] {TABLE} already holds scale {scale:g} ({have:,} rows)", flush=True)
            return
        print(f"[2/4] {TABLE} holds {have:,} rows, not the {want:,} of scale {scale:g}: loading it again …",
              flush=True)
        for row in spark.sql("SHOW TABLES IN tpch").collect():
            name = row.tableName
            if name in ("lineitem", "lineitem__planner_new") or name.startswith("lineitem__before_"):
                spark.sql(exp.Drop(tables=[exp.table_(exp.to_identifier(name, quoted=True), db="tpch")], kind="TABLE",
                                   exists=True).sql(dialect="spark"))
    else:
        print(f"[2/4] loading it into Hive table {TABLE} …", flush=True)
    load_table(spark, data, TABLE, row_group_bytes=600_000)


def _rows_in(data: Path) -> int:
    import pyarrow.parquet as pq

    files = sorted(data.glob("*.parquet")) if data.is_dir() else [data]
    return sum(pq.ParquetFile(f).metadata.num_rows for f in files)


if __name__ == "__main__":
    sys.exit(main())

"""Where a laid-out table loses time on the queries it cannot prune (issue 31: "a query that
prunes nothing, vs the table as loaded, ≥ 0.97×").

Runs on the tables ``benchmarks.tpch_joins`` leaves in its state directory: ``bench_joins.lineitem``
laid out as advised and ``bench_joins.lineitem_copy`` as loaded (``l_orderkey`` order). Spark
alone runs each query on both, as written: no planner rewrite, so the two differ only by the files.

* a scan of two columns (no join): Spark's read tasks, the rows each task read;
* ``lineitem ⋈ orders`` on the order key, as every join query of the benchmark has it;
* the held-out join queries of ``tpch_joins`` whose lineitem scans the layout cannot prune by
  their own predicates (Q5, Q8, Q21, Q4).

For each: the fastest of ``--rounds`` runs on each table (their order alternating from round to
round), and the bytes its shuffles wrote (Spark's ``shuffleBytesWritten``).

    .venv/bin/python -m benchmarks.layout_alone [--scale 1] [--rounds 5]
"""
from __future__ import annotations

import argparse
import re
import time
from pathlib import Path

from benchmarks.harness import RESULTS, Timings, markdown_table, reproduce, write_result

ROOT = Path(__file__).resolve().parent.parent
DB = "bench_joins"
SETUPS = ("as loaded", "laid out")
UNPRUNED = ("q05", "q08", "q21", "q04")


def tables(db: str) -> dict[str, str]:
    return {"as loaded": f"{db}.lineitem_copy", "laid out": f"{db}.lineitem"}


def queries(seed: int, db: str = DB) -> dict[str, str]:
    """Name -> SQL over ``{lineitem}`` (the table measured)."""
    from benchmarks.tpch_joins import held_out_queries

    out = {"scan of two columns": "SELECT sum(l_extendedprice * (1 - l_discount)), count(*) FROM {lineitem}",
           "lineitem ⋈ orders": f"SELECT count(*), sum(o_totalprice) FROM {{lineitem}} JOIN {db}.orders "
                                "ON l_orderkey = o_orderkey"}
    for name, sql in held_out_queries(seed, 1):
        if name in UNPRUNED:
            out[name] = re.sub(r"\blineitem\b", "{lineitem}", sql)
    return out


def tasks_of(spark, table: str) -> list[int]:
    """Rows each read task of a plain scan of ``table`` gets (Spark's split of its files)."""
    rdd = spark.sql(f"SELECT l_orderkey FROM {table}").rdd
    return rdd.mapPartitions(lambda rows: [sum(1 for _ in rows)]).collect()


def run(spark, rounds: int, seed: int, db: str = DB) -> dict:
    """Every query on both tables of ``db`` (the current database: the join queries name the other
    tables without it), ``rounds`` times."""
    from hive_integration.spark.metrics import shuffle_bytes_of_plan

    timings, shuffled = Timings(), {}
    qs, measured = queries(seed, db), tables(db)
    for r in range(rounds):
        for name, sql in qs.items():
            order = list(measured.items()) if (r + len(name)) % 2 == 0 else list(measured.items())[::-1]
            for setup, table in order:
                text = sql.format(lineitem=table)
                started = time.perf_counter()
                df = spark.sql(text)
                df.collect()
                timings.add(setup, time.perf_counter() - started, item=name, round=r)
                shuffled[(setup, name)] = shuffle_bytes_of_plan(df._jdf.queryExecution().executedPlan())
    rows = []
    for name in qs:
        fast = {s: timings.fastest(s, name).seconds for s in SETUPS}
        rows.append({"query": name, "seconds": fast, "shuffle_bytes": {s: shuffled[(s, name)] for s in SETUPS}})
    return {"rows": rows, "tasks": {s: tasks_of(spark, t) for s, t in measured.items()}, "loads": timings.loads()}


def report(data: dict, scale: float, argv) -> str:
    lo, hi = data["loads"]
    lines = [f"# The laid-out table alone on queries it cannot prune (SF {scale:g})", "",
             f"Reproduce: `{reproduce('benchmarks.layout_alone', argv)}` after `benchmarks.tpch_joins "
             f"--scale {scale:g}` (load average {lo:.1f}–{hi:.1f}). Spark alone, no planner rewrite: each query as "
             "written on lineitem as loaded (`l_orderkey` order) and on lineitem as `tpch_joins` laid it "
             "out. Seconds: the fastest of the rounds; shuffled: the bytes the query's shuffles wrote.", ""]
    table = []
    for row in data["rows"]:
        s, b = row["seconds"], row["shuffle_bytes"]
        table.append([row["query"], f"{s['as loaded']:.2f}", f"{s['laid out']:.2f}",
                      f"{s['as loaded'] / s['laid out']:.2f}×",
                      f"{b['as loaded'] / 2**20:.1f}", f"{b['laid out'] / 2**20:.1f}"])
    lines += markdown_table(["query", "as loaded s", "laid out s", "speed, laid out ÷ as loaded",
                             "shuffled MiB as loaded", "shuffled MiB laid out"], table)
    tasks = data["tasks"]
    lines += ["", "Read tasks of a plain scan, rows each: "
              + "; ".join(f"{s}: {len(t)} ({', '.join(f'{n:,}' for n in t)})" for s, t in tasks.items()) + "."]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    from benchmarks.tpch_setup import session_conf
    from hive_integration.spark.session import build_spark_session

    ap = argparse.ArgumentParser(prog="python -m benchmarks.layout_alone", description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=131, help="seed of the held-out query parameters (tpch_joins')")
    ap.add_argument("--state-dir", default=str(ROOT / ".planner" / "bench-joins"))
    ap.add_argument("--out", default=str(RESULTS))
    a = ap.parse_args(argv)
    state = Path(a.state_dir) / f"sf{a.scale:g}"
    spark = build_spark_session(state / "spark", app_name="layout-alone", conf=session_conf(a.scale))
    have = {r[1] for r in spark.sql(f"SHOW TABLES IN {DB}").collect()} if spark.catalog.databaseExists(DB) else set()
    if not {"lineitem", "lineitem_copy", "orders"} <= have:
        raise SystemExit(f"run `python -m benchmarks.tpch_joins --scale {a.scale:g}` first: it lays out {DB}.lineitem")
    spark.catalog.setCurrentDatabase(DB)  # the join queries name the other tables without it
    data = run(spark, a.rounds, a.seed)
    text = report(data, a.scale, argv)
    write_result(f"layout_alone_sf{a.scale:g}", text, data, Path(a.out))
    print(text)
    spark.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

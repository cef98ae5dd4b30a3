"""What the planner's rewrite adds to a query, first call and cached (issue 31).

On the join benchmark's tables (``benchmarks.tpch_joins``: lineitem laid out, its join ranges
recorded), for each held-out TPC-H join query:

* **first**: the rewrite (``hive_integration.metastore.layouts.rewrite``: the tables' catalog entries,
  layouts, columns, the joined tables' snapshots, sqlglot) with the session's cache emptied;
* **new text**: the same template with other parameters, the catalog cached: what a session pays
  for a query it has not run before (median over ``--new-texts`` texts, each rewritten once);
* **cached**: the same text again (median of ``--repeat``): each call still lists the tables' files
  again in one call to see new data (``hive_integration.spark.catalog_cache``);
* **planner.sql − spark.sql**: ``planner.sql(text)`` minus ``spark.sql(rewritten text)``, both
  parsed and analysed by Spark, not run (cached): the same overhead as the user sees it. The two
  run in turns after a warm-up and the median of the ``--repeat`` differences is reported, so that
  the JVM's own drift (JIT, garbage collection) falls on both sides;
* **Spark's parse and analysis** of the rewritten text, which any query pays, for scale.

    python -m benchmarks.rewrite_overhead [--scale 0.1] [--layout month] [--repeat 20] [--new-texts 10]

Prints the table and writes it to ``benchmarks/results/rewrite_overhead_sf<scale>.md``.
"""
from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from benchmarks.tpch_joins import ROOT, held_out_queries, session_conf, setup


def _ms(fn, repeat: int = 1) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return 1000 * statistics.median(times)


def _paired_ms(a, b, repeat: int, warm: int = 5) -> tuple[float, float]:
    """``(median of a − b, median of b)`` in ms over ``repeat`` turns of a then b, after ``warm`` of each."""
    for _ in range(warm):
        a(), b()
    diffs, bs = [], []
    for _ in range(repeat):
        t0 = time.perf_counter()
        a()
        t1 = time.perf_counter()
        b()
        t2 = time.perf_counter()
        diffs.append(t1 - t0 - (t2 - t1))
        bs.append(t2 - t1)
    return 1000 * statistics.median(diffs), 1000 * statistics.median(bs)


def main(argv=None) -> int:
    from hive_integration.metastore.layouts import rewrite, sql
    from hive_integration.spark.catalog_cache import session_cache
    from hive_integration.spark.session import build_spark_session

    ap = argparse.ArgumentParser(prog="python -m benchmarks.rewrite_overhead", description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=0.1)
    ap.add_argument("--layout", choices=("advised", "month", "held"), default="month",
                    help="lineitem's layout (as benchmarks.tpch_joins sets it up)")
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--new-texts", type=int, default=10, help="other texts per template for the 'new text' column")
    ap.add_argument("--state-dir", default=str(ROOT / ".planner" / "bench-joins"))
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results"))
    a = ap.parse_args(argv)
    state = Path(a.state_dir) / f"sf{a.scale:g}"
    spark = build_spark_session(state / "spark", app_name="rewrite-overhead", conf=session_conf(a.scale))
    described = setup(spark, a.scale, state / "data", "bench_joins", lambda m: print(m, flush=True), a.layout, state)
    spark.catalog.setCurrentDatabase("bench_joins")
    load0 = os.getloadavg()[0]
    first, other = held_out_queries(131, 1), held_out_queries(132, a.new_texts)
    cache = session_cache(spark)
    rows = []
    for name, q in first:
        cache.forget()
        cold = _ms(lambda: rewrite(spark, q))
        texts = {t for n, t in other if n == name and t != q}  # distinct: a repeated text is cached
        new_text = statistics.median(_ms(lambda: rewrite(spark, t)) for t in texts)
        cached = _ms(lambda: rewrite(spark, q), a.repeat)
        text = rewrite(spark, q)
        assert text != q, f"{name}: nothing was rewritten"
        extra, spark_only = _paired_ms(lambda: sql(spark, q), lambda: spark.sql(text), a.repeat)
        rows.append((name, cold, new_text, cached, extra, spark_only))
    load1 = os.getloadavg()[0]
    spark.stop()
    lines = [f"# The rewrite's own cost per query, TPC-H join queries, SF {a.scale:g}", "",
             f"Reproduce: `python -m benchmarks.rewrite_overhead --scale {a.scale:g} --layout {a.layout} "
             f"--repeat {a.repeat} --new-texts {a.new_texts}` (load average {load0:.1f} at the start, {load1:.1f} at the end). lineitem: "
             f"{described}.", "",
             "| query | first call ms | new text (median), catalog cached ms | cached ms | planner.sql − spark.sql(rewritten) "
             "ms | Spark's parse and analysis ms |",
             "|---|---:|---:|---:|---:|---:|"]
    lines += [f"| {n} | {c:.1f} | {w:.1f} | {h:.1f} | {d:.1f} | {s:.1f} |" for n, c, w, h, d, s in rows]
    text = "\n".join(lines) + "\n"
    print(text, end="")
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"rewrite_overhead_sf{a.scale:g}.md").write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

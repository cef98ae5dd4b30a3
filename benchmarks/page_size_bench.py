"""Issue #11: what smaller Parquet pages buy and cost on Spark, one layout written four ways.

    .venv/bin/python -m benchmarks.page_size_bench [--scale 1] [--rounds 3] [--state-dir DIR] [--out FILE]

The layout is ``tpch_bench``'s Q6 pick with regressions allowed (advised on the Q6 advise half), written from the same INSERT ``planner apply`` emits with only its
page size changed (``parquet.page.row.count.limit``: 20,000 rows as Parquet's default, 5,000, 1,000
and 500). Measured on every table, with Spark's scan metrics:

* the held-out Q6 probes (``tpch_bench``'s fresh draw): rows read, and their wall time summed;
* a full scan of every column (``count(*)`` and a checksum of all columns): the cost of pages
  where nothing is skipped;
* the bytes on disk and the build time.

Wall times are the fastest of ``--rounds`` rounds, tables in a rotated order each round. Every
table's answers are compared with the table as loaded.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

from sqlglot import exp

from benchmarks.tpch_bench import (
    TABLE,
    Config,
    heldout_model,
    load_source,
    prepare_workload,
    with_write_hints,
)
from benchmarks.tpch_build import build_layout
from benchmarks.tpch_measure import _run, measure_table
from benchmarks.tpch_probe import probe_select, probes_for
from planner.costmodel.cost import CostModel
from planner.semantics.types import kind_of_type

ROOT = Path(__file__).resolve().parent.parent
PAGES = (20_000, 5_000, 1_000, 500)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.page_size_bench", description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--state-dir", default=str(ROOT / ".planner" / "bench1"))
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "page_size_sf1.md"))
    args = ap.parse_args(argv)
    from hive_integration.spark.session import build_spark_session

    cfg = replace(Config(scale=args.scale, state_dir=Path(args.state_dir)), reuse=True, workloads=("q6",))
    spark = build_spark_session(cfg.state_dir, app_name="page-size-bench")
    started = time.perf_counter()
    load = os.getloadavg()
    log = lambda m: print(f"[{time.perf_counter() - started:7.1f}s] {m}", flush=True)  # noqa: E731
    try:
        src = load_source(spark, cfg, log)
        wr = prepare_workload("q6", cfg, src.columns, src.stats, src.params, log)
        layout = replace(wr.allow.result.best.layout, table=TABLE)
        hinted = with_write_hints(layout, CostModel(wr.analysis, src.stats, src.params), cfg.row_group_bytes)
        held, _ = heldout_model(wr, src.columns, src.stats, src.params, [wr.analysis])
        kinds = {c: kind_of_type(t) for c, t in src.columns.items()}
        probes = probes_for(held.queries, TABLE, src.columns, kinds)
        reference = measure_table(spark, src.table, None, src.columns, probes, set(), log)
        answers = [(r.n, r.h) for r in reference.results]
        tables = []
        for page in PAGES:
            lay = replace(hinted, meta=tuple((dict(hinted.meta) | {"page_rows": page}).items()))
            target = f"{cfg.db}.li_pages_{page}"
            built = build_layout(spark, lay, src.columns, src.table, target, cfg.row_group_bytes, reuse=False)
            log(f"built {target} in {built.seconds:.1f} s: {built.bytes / 2**20:.1f} MiB")
            run = measure_table(spark, target, lay, src.columns, probes, set(range(len(probes))), log)
            wrong = sum((r.n, r.h) != a for r, a in zip(run.results, answers))
            tables.append({"page": page, "table": target, "built": built, "run": run, "wrong": wrong,
                           "probe_s": [], "full_s": []})
        full_sql = {t["table"]: probe_select(t["table"], exp.true(), tuple(src.columns)).sql(dialect="spark")
                    for t in tables}
        for r in range(args.rounds):
            shift = r % len(tables)
            for t in tables[shift:] + tables[:shift]:
                t["probe_s"].append(sum(_run(spark, sql, t["table"])[0] for sql in t["run"].by_sql))
                t["full_s"].append(_run(spark, full_sql[t["table"]], t["table"])[0])
            log(f"round {r + 1}/{args.rounds} done")
    finally:
        spark.stop()
    write(Path(args.out), args, wr, layout, tables, reference, load, time.perf_counter() - started)
    return 0


def write(out: Path, args, wr, layout, tables, reference, load, seconds) -> None:
    lb = sum(r.n for r in reference.results)
    base = tables[0]
    lines = [
        f"# Parquet page size: what it buys and costs on Spark (SF {args.scale:g})", "",
        f"Reproduce: `.venv/bin/python -m benchmarks.page_size_bench --scale {args.scale:g} --rounds {args.rounds}` "
        f"({seconds / 60:.0f} min; load average {load[0]:.1f} at the start, {os.getloadavg()[0]:.1f} at the end).", "",
        f"Layout: the Q6 pick with regressions allowed, `{layout.describe()}`, written by the planner's INSERT "
        f"with only `parquet.page.row.count.limit` changed. Measured: the {len(reference.results)} held-out Q6 "
        f"probes (seed {wr.generator_seeds[1]}; they match {lb / 1e6:.2f}M rows), and a full scan of every column. "
        f"Wall times: fastest of {args.rounds} rounds.", "",
        "| page rows | rows read (Q6 probes) | read ÷ matching | MiB on disk | vs 20,000 | build s | probes s (fastest) "
        "| full scan s (fastest) | wrong answers |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for t in tables:
        rows = sum(r.rows for r in t["run"].results)
        size = t["built"].bytes
        lines.append(f"| {t['page']:,} | {rows / 1e6:.2f}M | {rows / max(lb, 1):.2f} | {size / 2**20:.1f} | "
                     f"{size / base['built'].bytes - 1:+.1%} | {t['built'].seconds:.1f} | {min(t['probe_s']):.1f} | "
                     f"{min(t['full_s']):.1f} | {t['wrong']} |")
    lines += ["", f"On the table as loaded (tpchgen order, Parquet's default pages) the probes read "
                  f"{sum(r.rows for r in reference.results) / 1e6:.2f}M rows.", ""]
    out.write_text("\n".join(lines))
    print("\n".join(lines))
    print(f"wrote {out}")


if __name__ == "__main__":
    sys.exit(main())

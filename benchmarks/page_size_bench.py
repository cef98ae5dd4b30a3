"""Issue #11: what smaller Parquet pages buy and cost on Spark, one layout written four ways.

    .venv/bin/python -m benchmarks.page_size_bench [--scale 1] [--rounds 3] [--state-dir DIR] [--out FILE]

The layout is ``tpch_bench``'s Q6 pick with regressions allowed (advised on the Q6 advise half), written from the same INSERT ``planner apply`` emits with only its
page size changed (``parquet.page.row.count.limit``: 20,000 rows as Parquet's default, 5,000, 1,000
and 500). Measured on every table, with Spark's scan metrics:

* the held-out Q6 probes (``tpch_bench``'s fresh draw): rows read, and their wall time summed;
* a full scan of every column (``count(*)`` and a checksum of all columns): the cost of pages
  where nothing is skipped;
* the bytes on disk and the build time.

Wall times are the fastest of ``--rounds`` rounds, tables in an order rotated from round to round
(``benchmarks.harness``). Every table's answers are compared with the table as loaded.
"""
from __future__ import annotations

import sys
import time
from dataclasses import replace
from pathlib import Path

from sqlglot import exp

from benchmarks.builds import build_layout
from benchmarks.harness import (
    Timings,
    load_average,
    markdown_table,
    measure,
    schedule,
    stamped,
    write_result,
)
from benchmarks.tpch_measure import measure_table
from benchmarks.tpch_probe import probe_select, probes_for
from benchmarks.tpch_setup import (
    TABLE,
    Config,
    heldout_model,
    load_source,
    prepare_workload,
    result_file,
    tpch_arguments,
    with_write_hints,
)
from planner.costmodel.cost import CostModel
from planner.semantics.types import kind_of_type

ROOT = Path(__file__).resolve().parent.parent
PAGES = (20_000, 5_000, 1_000, 500)


def run(spark, cfg: Config, rounds: int, log, pages=PAGES) -> dict:
    """The Q6 pick written with each of ``pages`` rows per page, measured in ``rounds`` rounds."""
    src = load_source(spark, cfg, log)
    wr = prepare_workload("q6", cfg, src.columns, src.stats, src.params, log)
    layout = replace(wr.allow.result.best.layout, table=TABLE)
    hinted = with_write_hints(layout, CostModel(wr.analysis, src.stats, src.params), cfg.row_group_bytes)
    held, _ = heldout_model(wr, src.columns, src.stats, src.params, [wr.analysis])
    kinds = {c: kind_of_type(t) for c, t in src.columns.items()}
    probes = probes_for(held.queries, TABLE, src.columns, kinds)
    reference = measure_table(spark, src.table, None, src.columns, probes, set(), log)
    tables = []
    for page in pages:
        lay = replace(hinted, meta=tuple((dict(hinted.meta) | {"page_rows": page}).items()))
        target = f"{cfg.db}.li_pages_{page}"
        built = build_layout(spark, lay, src.columns, src.table, target, cfg.row_group_bytes, reuse=False)
        log(f"built {target} in {built.seconds:.1f} s: {built.bytes / 2**20:.1f} MiB")
        measured = measure_table(spark, target, lay, src.columns, probes, set(range(len(probes))), log)
        wrong = sum(r.answer != a.answer for r, a in zip(measured.results, reference.results))
        tables.append({"page": page, "table": target, "built": built, "run": measured, "wrong": wrong})
    full_sql = {t["table"]: probe_select(t["table"], exp.true(), tuple(src.columns)).sql(dialect="spark")
                for t in tables}
    timings = Timings()
    by_table = {t["table"]: t for t in tables}
    for r, _, table in schedule(list(by_table), rounds):
        timings.add(("probes", table), sum(measure(spark, sql).seconds for sql in by_table[table]["run"].by_sql),
                    round=r)
        timings.time(("full", table), lambda: measure(spark, full_sql[table]), round=r)
        if table == list(by_table)[-1]:
            log(f"round {r + 1}/{rounds} done")
    for t in tables:
        t["probe_s"] = timings.seconds(("probes", t["table"]))
        t["full_s"] = timings.seconds(("full", t["table"]))
    return {"workload": wr, "layout": layout, "tables": tables, "reference": reference}


def main(argv=None) -> int:
    from hive_integration.spark.session import build_spark_session

    args = tpch_arguments("benchmarks.page_size_bench", __doc__, "page_size_sf{scale}.md",
                          state_dir=str(ROOT / ".planner" / "bench1")).parse_args(argv)
    cfg = replace(Config(scale=args.scale, state_dir=Path(args.state_dir)), reuse=True, workloads=("q6",))
    spark = build_spark_session(cfg.state_dir, app_name="page-size-bench")
    started = time.perf_counter()
    load = load_average()
    try:
        result = run(spark, cfg, args.rounds, stamped())
    finally:
        spark.stop()
    text = report(result, args.scale, args.rounds, load, time.perf_counter() - started)
    print(text)
    out = result_file(args)
    for path in write_result(out.stem, text, out_dir=out.parent):
        print(f"wrote {path}")
    return 0


def report(result: dict, scale: float, rounds: int, load: float, seconds: float) -> str:
    wr, layout, tables, reference = result["workload"], result["layout"], result["tables"], result["reference"]
    lb = sum(r.n for r in reference.results)
    base = tables[0]
    lines = [
        f"# Parquet page size: what it buys and costs on Spark (SF {scale:g})", "",
        f"Reproduce: `.venv/bin/python -m benchmarks.page_size_bench --scale {scale:g} --rounds {rounds}` "
        f"({seconds / 60:.0f} min; load average {load:.1f} at the start, {load_average():.1f} at the end).", "",
        f"Layout: the Q6 pick with regressions allowed, `{layout.describe()}`, written by the planner's INSERT "
        f"with only `parquet.page.row.count.limit` changed. Measured: the {len(reference.results)} held-out Q6 "
        f"probes (seed {wr.generator_seeds[1]}; they match {lb / 1e6:.2f}M rows), and a full scan of every column. "
        f"Wall times: fastest of {rounds} rounds.", "",
        *markdown_table(
            ["page rows", "rows read (Q6 probes)", "read ÷ matching", "MiB on disk", "vs 20,000", "build s",
             "probes s (fastest)", "full scan s (fastest)", "wrong answers"],
            ([f"{t['page']:,}", f"{sum(r.rows for r in t['run'].results) / 1e6:.2f}M",
              f"{sum(r.rows for r in t['run'].results) / max(lb, 1):.2f}", f"{t['built'].bytes / 2**20:.1f}",
              f"{t['built'].bytes / base['built'].bytes - 1:+.1%}", f"{t['built'].seconds:.1f}",
              f"{min(t['probe_s']):.1f}", f"{min(t['full_s']):.1f}", t["wrong"]] for t in tables),
            align="r" * 9),
        "", f"On the table as loaded (tpchgen order, Parquet's default pages) the probes read "
            f"{sum(r.rows for r in reference.results) / 1e6:.2f}M rows.", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())

"""Issues #5 and #11: measured rows read and wall time on TPC-H lineitem, against the table as loaded.

On the shared TPC-H set-up (``benchmarks.tpch_setup``: the table as loaded, the three workloads
each advised on one half, the layouts compared):

1. every layout measured built as its own table (``<db>.li_*``) with the planner's SQL, timed
   against a plain CTAS copy (``benchmarks.builds``; the copy and the picks in rounds);
2. the held-out queries measured on every layout through probes of their lineitem scans
   (``benchmarks.tpch_probe``), rewritten for pruning, with Spark's scan metrics and the fastest of
   the warm runs (``benchmarks.tpch_measure``), every probe's answer checked against the table
   as loaded;
3. the report (``benchmarks.tpch_report``): ``benchmarks/results/tpch_sf<scale>.md``, PNG plots and
   the raw figures as JSON.

    .venv/bin/python -m benchmarks.tpch_bench [--scale 1] [--quick] [--state-dir DIR] [--reuse]

Every measured figure comes from Spark's scan metrics (``benchmarks.harness.measure``); estimates
from the cost model are only ever shown next to them.
"""
from __future__ import annotations

import argparse
import dataclasses
import pickle
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Callable

from benchmarks.harness import Timings, load_average, schedule, stamped
from benchmarks.tpch_setup import (
    ROOT,
    TABLE,
    Config,
    Source,
    Spec,
    WorkloadRun,
    choose_layouts,
    heldout_model,
    load_source,
    prepare_workload,
    quick_config,
    with_write_hints,
)
from planner.analysis.table_analysis import TableAnalysis
from planner.costmodel.cost import CostModel
from planner.semantics.types import kind_of_type


def build_all(spark, cfg: Config, src: Source, everything: list[Spec], hint_model: CostModel, picks: list[Spec],
              stamp) -> tuple[dict, dict]:
    """Every layout as ``<db>.li_<key>``, timed; the CTAS copy as the build-time reference. The
    first builds ran on a cold JVM: the copy and each pick are built in two more rounds (their
    order rotated), and the fastest run of each counts."""
    from benchmarks.builds import Built, build_copy, build_layout, footprint

    for s in everything:
        cost = hint_model.evaluate(s.layout or hint_model.current().layout)
        s.advise_cost = (cost.rows, cost.overhead)
        if s.layout is not None:
            s.layout = with_write_hints(s.layout, hint_model, cfg.row_group_bytes)
    files, groups, size = footprint(spark, src.table)
    builds = {"current": Built(src.table, None, files, groups, size, 0)}
    timings = Timings()
    builds["copy"] = build_copy(spark, src.table, f"{cfg.db}.li_copy", cfg.row_group_bytes, reuse=cfg.reuse)
    timings.add("ctas", builds["copy"].seconds, value=builds["copy"])
    for s in everything:
        if s.layout is None:
            continue
        table = f"{cfg.db}.li_{s.key}"
        builds[s.key] = b = build_layout(spark, s.layout, src.columns, src.table, table, cfg.row_group_bytes,
                                         reuse=cfg.reuse)
        stamp(f"built {table} ({s.label}) in {b.seconds or 0:.1f} s: {b.partitions} partitions, "
              f"{b.files} files, {b.row_groups} row groups")
    built_picks = [p for i, p in enumerate(picks) if p.layout is not None and all(p is not o for o in picks[:i])]
    for p in built_picks:
        timings.add(p.key, builds[p.key].seconds, value=builds[p.key])
    if builds["copy"].seconds is not None and not cfg.quick and cfg.runs > 0:
        by_key = {p.key: p for p in built_picks}
        for r, _, key in schedule(["ctas", *by_key], 2):
            if key == "ctas":
                again = build_copy(spark, src.table, f"{cfg.db}.li_copy_again", cfg.row_group_bytes)
            else:
                again = build_layout(spark, by_key[key].layout, src.columns, src.table, f"{cfg.db}.li_pick_again",
                                     cfg.row_group_bytes)
            timings.add(key, again.seconds, round=r + 1, value=again)
        for t in ("li_copy_again", "li_pick_again"):
            spark.sql(f"DROP TABLE IF EXISTS {cfg.db}.{t}")  # our own names
        builds["copy"] = replace(builds["copy"], seconds=timings.fastest("ctas").seconds)
        for p in built_picks:
            builds[p.key] = replace(builds[p.key], seconds=timings.fastest(p.key).seconds)
    by_setup = {key: timings.seconds(key) for key in dict.fromkeys(r.setup for r in timings.runs)}
    if len(timings.runs) > 1 + len(built_picks):
        stamp(f"build times: {by_setup}")
    return builds, by_setup


def table_of(cfg: Config, src: Source, spec: Spec) -> str:
    return src.table if spec.layout is None else f"{cfg.db}.li_{spec.key}"


def measure_workload(spark, cfg: Config, src: Source, wr: WorkloadRun, specs: list[Spec],
                     analyses: list[TableAnalysis], warmed: set[str], stamp) -> dict:
    """The held-out probes of one workload on each of ``specs``, with the model's estimates.

    First the metrics pass on every table, then ``cfg.runs`` timed rounds, each query by query over
    all tables (``tpch_measure.time_round``), so that a burst of load elsewhere on the machine falls
    on every layout of a query alike.
    """
    from benchmarks.tpch_measure import measure_table, time_round
    from benchmarks.tpch_probe import probes_for

    held_wl, model = heldout_model(wr, src.columns, src.stats, src.params, analyses)
    kinds = {c: kind_of_type(t) for c, t in src.columns.items()}
    probes = probes_for(held_wl.queries, TABLE, src.columns, kinds)
    if [s.query for s in model.scans] != [p.query for p in probes]:
        raise RuntimeError("probes and cost-model scans are not aligned")
    wall_q = set(range(len(wr.wall_idx)))  # wall_idx is a prefix of held_idx
    timed = {i for i, p in enumerate(probes) if p.query in wall_q}
    measured = []
    for s in specs:
        table = table_of(cfg, src, s)
        tr = measure_table(spark, table, s.layout, src.columns, probes, timed, stamp, warm_up=table not in warmed)
        warmed.add(table)
        est = model.evaluate(replace(s.layout, table=TABLE) if s.layout is not None else model.current().layout)
        measured.append({"spec": s, "run": tr, "estimated": [c.rows for c in est.per_scan]})
        stamp(f"{wr.kind} on {table}: {tr.distinct} distinct probes measured in {tr.seconds:.0f} s")
    for r in range(cfg.runs):
        took = time_round(spark, [e["run"] for e in measured], r)
        stamp(f"{wr.kind}: timed round {r + 1}/{cfg.runs} over {len(measured)} tables in {took:.0f} s")
    return {"run": wr, "probes": probes, "held": held_wl, "layouts": measured,
            "model_matching": model.matching_rows().tolist()}


def run(spark, cfg: Config, log: Callable[[str], None] = print) -> dict:
    """The whole benchmark on ``spark``; returns the figures (written out by ``tpch_report``)."""
    started = time.perf_counter()
    load_start = load_average()
    stamp = stamped(log)
    src = load_source(spark, cfg, stamp)
    kinds = ("tpch",) + tuple(k for k in cfg.workloads if k != "tpch")
    runs = {k: prepare_workload(k, cfg, src.columns, src.stats, src.params, stamp) for k in kinds}
    everything, side = choose_layouts(cfg, runs, src.stats)
    picks = [s for k in side for s in side[k] if s.family == "planner"]
    builds, build_timings = build_all(spark, cfg, src, everything, CostModel(runs["tpch"].analysis, src.stats,
                                                                             src.params), picks, stamp)
    analyses = [r.analysis for r in runs.values()]
    warmed: set[str] = set()
    workloads = {kind: measure_workload(spark, cfg, src, wr, side[kind], analyses, warmed, stamp)
                 for kind, wr in runs.items()}
    return {
        "workloads": workloads, "config": cfg,
        "source": {"table": src.table, "rows": src.stats.rows, "files": src.files, "row_groups": src.row_groups,
                   "bytes": src.bytes, "rows_per_group": src.params.row_group_rows,
                   "page_rows": src.params.page_rows, "data": str(src.data)},
        "specs": everything, "builds": builds, "build_timings": build_timings,
        "pick": next(s for s in everything if s.key == "tpch_pick" or "tpch pick" in s.aliases),
        "seconds": time.perf_counter() - started, "spark_version": spark.version,
        "load": (load_start, load_average())}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.tpch_bench", description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=1.0, help="TPC-H scale factor (1; 10 for SF 10)")
    ap.add_argument("--quick", action="store_true", help="SF 0.01 and a handful of queries: a smoke run")
    ap.add_argument("--state-dir", default=None, help="Spark/metastore state and data (default /tmp/planner-tpch-bench)")
    ap.add_argument("--out", default=None, help="results folder (default benchmarks/results; --quick: <state>/results)")
    ap.add_argument("--seed", type=int, default=5, help="seed of the advise/held-out split")
    ap.add_argument("--max-queries", type=int, default=None, help="held-out queries measured per workload (100)")
    ap.add_argument("--wall-queries", type=int, default=None, help="TPC-H held-out queries timed 3 times (34)")
    ap.add_argument("--runs", type=int, default=None,
                    help="timed rounds of the wall-time queries (3); 0: scan metrics only, no wall times and "
                         "no repeated builds (rows, bytes, files and partitions are not affected by load)")
    ap.add_argument("--reuse", action="store_true", help="reuse tables of an earlier run (build times not re-timed)")
    ap.add_argument("--workloads", default=None, help="comma-separated subset of tpch,q6,adhoc (TPC-H always runs)")
    ap.add_argument("--layouts", default=None,
                    help="comma-separated subset of the baselines sort_shipdate,month,zorder4,amoeba")
    args = ap.parse_args(argv)
    from hive_integration.spark.session import build_spark_session

    state = Path(args.state_dir or ("/tmp/planner-tpch-bench-quick" if args.quick else "/tmp/planner-tpch-bench"))
    out = Path(args.out) if args.out else (state / "results" if args.quick else ROOT / "benchmarks" / "results")
    cfg = quick_config(state, out) if args.quick else Config(scale=args.scale, state_dir=state, out_dir=out)
    cfg = dataclasses.replace(cfg, seed=args.seed, reuse=args.reuse)
    if args.max_queries is not None:
        cfg.max_queries = args.max_queries
    if args.wall_queries is not None:
        cfg.wall_queries = args.wall_queries
    if args.runs is not None:
        cfg.runs = args.runs
        if args.runs == 0:
            cfg.wall_queries = cfg.side_wall_queries = 0
    if args.workloads:
        cfg.workloads = tuple(dict.fromkeys(["tpch"] + args.workloads.split(",")))
    if args.layouts:
        cfg.layouts = tuple(args.layouts.split(","))
    spark = build_spark_session(state, app_name="tpch-bench")
    try:
        results = run(spark, cfg, lambda m: print(m, flush=True))
    finally:
        spark.stop()
    for p in finish(results, cfg):
        print(f"wrote {p}")
    return 0


def finish(results: dict, cfg: Config) -> list[Path]:
    """The report, plots and raw JSON of a run; the run's figures are also pickled into its state
    folder, so ``python -m benchmarks.tpch_report <pickle>`` re-renders them without measuring."""
    from benchmarks.tpch_report import write_report

    cfg.state_dir.mkdir(parents=True, exist_ok=True)
    with open(cfg.state_dir / f"{cfg.name}.results.pickle", "wb") as f:
        pickle.dump(results, f)
    return write_report(results, cfg.out_dir, cfg.name)


if __name__ == "__main__":
    sys.exit(main())

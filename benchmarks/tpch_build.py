"""Issue #14: what a layout costs to build, against a plain copy; the statistics pass; the z-value.

    .venv/bin/python -m benchmarks.tpch_build [--scale 1] [--rounds 3] [--layouts tpch_pick,zorder4,zorder4_h]
                                              [--master spark://host:port] [--state-dir DIR] [--out FILE]

1. the shared TPC-H set-up (``benchmarks.tpch_setup``: same data, table, row-group size and state
   directory as ``benchmarks.tpch_bench``, so either benchmark reuses the other's data), and the
   TPC-H workload's advice on its advise half: every layout ``tpch_bench`` builds, plus a Hilbert
   twin of each z-ordered one;
2. the statistics pass (``gather_stats`` with no cache) against a full count scan plus the sample
   query it used to run, in rounds (``benchmarks.harness``: the order rotated, the fastest run
   counts); then the cached re-run;
3. the z-value and Hilbert value against the linear CASE they replace, and the partition CASE,
   each as ``SELECT sum(hash(<expr>))`` over the source, in rounds;
4. ``rounds`` rounds, each building the CTAS copy and every layout (in an order rotated from round
   to round), with the planner's SQL and write plan (``benchmarks.builds``); a layout's figure is
   its fastest run over the copy's fastest, next to Spark's stage times of that run (submission to
   completion, executor CPU).

Wall times on a shared machine are noisy: the load average is recorded with every run, and the
executor CPU seconds (less sensitive to other processes) are shown next to them.
"""
from __future__ import annotations

import dataclasses
import os
import sys
import time
from pathlib import Path

from sqlglot import exp

from benchmarks.builds import Built, Stage, build_copy, build_layout, stages_of
from benchmarks.harness import (
    RESULTS,
    Timings,
    default_first,
    load_average,
    markdown_table,
    reproduce,
    schedule,
    stamped,
    write_result,
)
from benchmarks.tpch_setup import Config, layouts_with_twins, result_file, session_conf, tpch_arguments
from planner.model.layout import Layout

TARGETS = {"pick": 1.5, "sort": 1.5, "curve": 2.0, "statistics": 1.0}


def family(layout: Layout) -> str:
    # a tree order is a sort: by the number of the row's leaf, then the tie columns
    return {"none": "unordered", "sort": "sort", "tree": "sort", "zorder": "curve",
            "hilbert": "curve"}[layout.order.method]


# ---- the statistics pass -----------------------------------------------------------------------
def statistics_figure(spark, table: str, sample_rows: int, rounds: int, cache_dir: Path) -> dict:
    """``gather_stats`` (no cache) against a count scan plus the old Bernoulli sample, in rounds."""
    import shutil

    from hive_integration.spark.statistics_pass import gather_stats

    rows = spark.table(table).count()
    fraction = min(1.0, sample_rows * 1.1 / max(rows, 1))

    def stats() -> dict:
        steps: dict = {}
        gather_stats(spark, table, sample_rows=sample_rows, timings=steps)
        return steps

    setups = {"stats": stats, "count": lambda: spark.table(table).count(),
              "sample": lambda: spark.table(table).sample(False, fraction, 7).limit(sample_rows).toArrow()}
    timings = Timings()
    for r, _, key in schedule(list(setups), rounds):
        timings.time(key, setups[key], round=r)
    shutil.rmtree(cache_dir, ignore_errors=True)
    gather_stats(spark, table, sample_rows=sample_rows, cache_dir=cache_dir)  # fills the cache
    cached: dict = {}
    gather_stats(spark, table, sample_rows=sample_rows, cache_dir=cache_dir, timings=cached)
    best = {k: timings.fastest(k).seconds for k in setups}
    fastest = timings.fastest("stats").value
    return {"runs": {k: timings.seconds(k) for k in setups}, "best": best,
            "ratio": best["stats"] / (best["count"] + best["sample"]),
            "steps": {k: v for k, v in fastest.items() if isinstance(v, float)}, "cached": cached["total"],
            "load": load_average()}


# ---- the z-value micro-benchmark ---------------------------------------------------------------
def linear_bucket_case(ref: exp.Expression, bounds, leaf) -> exp.Expression:
    """What the planner emitted before: ``CASE WHEN v IS NULL … WHEN v < b0 … WHEN v < b1 …``."""
    from planner.emit.conditions import literal

    case = exp.Case().when(exp.Is(this=ref.copy(), expression=exp.Null()), exp.Literal.number(leaf(0)), copy=False)
    for i, b in enumerate(bounds):
        case = case.when(exp.LT(this=ref.copy(), expression=literal(b)), exp.Literal.number(leaf(i)), copy=False)
    return case.else_(exp.Literal.number(leaf(len(bounds))), copy=False)


def curve_expressions(layout: Layout) -> dict[str, str]:
    """Spark SQL of ``SELECT sum(hash(v))`` over each expression (FROM placeholder ``{t}``)."""
    from planner.costmodel.curves import spread
    from planner.emit.conditions import attribute_expr
    from planner.emit.curve_sql import curve_table, hilbert_value, zorder_value
    from planner.emit.partition_sql import partition_case

    order, derived = layout.order, dict(layout.derived)
    k = len(order.columns)
    linear = [linear_bucket_case(attribute_expr(c, derived), b, lambda i, j=j: spread(i, j, k))
              for j, (c, b) in enumerate(zip(order.columns, order.bounds))]
    z_linear = linear[0]
    for t in linear[1:]:
        z_linear = exp.Add(this=z_linear, expression=t)
    z = zorder_value(order, derived).sql("spark")
    h = hilbert_value(exp.column("planner_z"), exp.column("planner_curve"), k).sql("spark")
    reads = ", ".join(sorted({c for pair in derived.values() for c in (pair.left, pair.right)}
                             | {c for c in order.columns if c not in derived}))

    def total(e: str) -> str:
        return f"SELECT sum(hash(v)) FROM (SELECT {e} AS v FROM {{t}})"

    return {
        "columns read (no expression)": f"SELECT sum(hash({reads})) FROM {{t}}",
        "z-value, linear CASE (before)": total(z_linear.sql("spark")),
        "z-value, balanced CASE": total(z),
        "Hilbert value (balanced CASE + automaton)":
            f"SELECT sum(hash(v)) FROM (SELECT {h} AS v FROM (SELECT {z} AS planner_z, "
            f"{curve_table(k).sql('spark')} AS planner_curve FROM {{t}}))",
        f"partition CASE ({len(layout.partitions)} partitions)": total(partition_case(layout).sql("spark")),
    }


def tree_expressions(layout: Layout) -> dict[str, str]:
    """``SELECT sum(hash(v))`` over a tree order's leaf number, the columns it reads, and the
    layout's partition CASE."""
    from planner.costmodel.tree_order import leaves
    from planner.emit.partition_sql import partition_case
    from planner.emit.tree_order_sql import tree_order_expr

    reads = ", ".join(sorted(c for c in layout.order.columns if c not in dict(layout.derived)))
    return {f"columns the tree reads ({len(layout.order.columns)})": f"SELECT sum(hash({reads})) FROM {{t}}",
            f"tree leaf number, nested CASE ({leaves(layout.order)} leaves)":
                f"SELECT sum(hash(v)) FROM (SELECT {tree_order_expr(layout).sql('spark')} AS v FROM {{t}})",
            f"partition CASE of the tree-ordered layout ({len(layout.partitions)} partitions)":
                f"SELECT sum(hash(v)) FROM (SELECT {partition_case(layout).sql('spark')} AS v FROM {{t}})"}


def curve_micro(spark, table: str, layout: Layout, rounds: int, tree: Layout | None = None) -> dict:
    from planner.emit.apply_sql import SPARK_SETTINGS

    out: dict = {"layout": layout.describe(), "bounds": [len(b) for b in layout.order.bounds], "rows": {}}
    for key, value in SPARK_SETTINGS:
        spark.conf.set(key, value)
    queries = curve_expressions(layout) | (tree_expressions(tree) if tree is not None else {})

    def cpu_of(q: str) -> float:
        stages: list[Stage] = []
        with stages_of(spark, stages):
            spark.sql(q.format(t=table)).collect()
        return sum(s.cpu for s in stages)

    timings = Timings()
    for r, _, name in schedule(list(queries), rounds):
        timings.time(name, lambda: cpu_of(queries[name]), round=r)
    for name in queries:
        best = timings.fastest(name)
        out["rows"][name] = {"seconds": best.seconds, "cpu": best.value}
    for key, _ in SPARK_SETTINGS:
        spark.conf.unset(key)
    out["load"] = load_average()
    return out


# ---- the builds --------------------------------------------------------------------------------
def build_rounds(spark, src, specs, cfg, rounds: int, stamp) -> dict:
    """``rounds`` rounds of the copy and every layout, their order rotated from round to round."""
    by_key = {s.key: s for s in specs}
    timings = Timings()
    for r, _, key in schedule(["copy", *by_key], rounds):
        if key == "copy":
            b = build_copy(spark, src.table, f"{cfg.db}.li_copy", cfg.row_group_bytes)
            stamp(f"round {r + 1}: copy {b.seconds:.1f} s (cpu {b.cpu:.1f} s)")
        else:
            b = build_layout(spark, by_key[key].layout, src.columns, src.table, f"{cfg.db}.li_{key}",
                             cfg.row_group_bytes)
            stamp(f"round {r + 1}: {key} {b.seconds:.1f} s (cpu {b.cpu:.1f} s, {b.files} files, {b.plan})")
        timings.add(key, b.seconds, round=r, value=b)
    runs = {key: [run.value for run in timings.of(key)] for key in ["copy", *by_key]}
    return {"runs": runs, "loads": [run.load for run in timings.runs]}


def summary(builds: dict, specs, pick: str) -> list[dict]:
    copy = min(builds["runs"]["copy"], key=lambda b: b.seconds)
    rows = [{"key": "copy", "label": "CTAS copy", "family": "copy", "best": copy, "ratio": 1.0, "cpu_ratio": 1.0,
             "runs": [b.seconds for b in builds["runs"]["copy"]]}]
    for s in specs:
        runs = builds["runs"].get(s.key, [])
        if not runs:
            continue
        best = min(runs, key=lambda b: b.seconds)
        rows.append({"key": s.key, "label": s.label, "family": "pick" if s.key == pick else family(s.layout),
                     "order": family(s.layout),
                     "best": best, "ratio": best.seconds / copy.seconds,
                     "cpu_ratio": best.cpu / copy.cpu if copy.cpu else float("nan"),
                     "runs": [b.seconds for b in runs]})
    return rows


def _stages(b: Built) -> str:
    def one(st: Stage) -> str:
        extra = []
        if st.shuffle_write:
            extra.append(f"shuffle write {st.shuffle_write / 2**20:.0f} MiB")
        if st.spill_disk:
            extra.append(f"spill {st.spill_disk / 2**20:.0f} MiB")
        return f"{st.tasks} tasks {st.seconds:.1f} s / cpu {st.cpu:.1f} s" + (f" ({', '.join(extra)})" if extra else "")
    return "; ".join(one(st) for st in b.stages if st.tasks) or "–"


def report(results: dict) -> str:
    cfg, rows, stats, micro = results["config"], results["rows"], results["statistics"], results["micro"]
    copy = rows[0]
    lines = [f"# Build cost: layouts against a plain copy (TPC-H lineitem, SF {cfg['scale']:g})", "",
             f"Reproduce: `{results['command']}` ({results['seconds'] / 60:.0f} min; {results['machine']}, "
             f"Spark {results['spark']} on `{results['master']}`, driver memory {results.get('driver_memory', '?')}; "
             f"load average {results['loads'][0]:.1f} at the "
             f"start, {results['loads'][-1]:.1f} at the end: other jobs shared the machine, so wall times are "
             "noisy; executor CPU seconds are shown next to them).", "",
             f"Source: `{results['source']['table']}`, {results['source']['rows']:,} rows, "
             f"{results['source']['files']} files, {results['source']['bytes'] / 2**20:.0f} MiB. Each build is the "
             f"fastest of {cfg['rounds']} rounds; every round builds the copy and every layout, in an order rotated from "
             "round to round.",
             "", "## Targets", "", "| target | measured | verdict |", "|---|---|---|"]

    def worst(fam: str) -> dict | None:
        cands = [r for r in rows if r.get("order") == fam]  # the pick counts with its own ordering, too
        return max(cands, key=lambda r: r["ratio"], default=None)

    pick = next((r for r in rows if r["family"] == "pick"), None)
    for name, r, target in (("the TPC-H pick ≤ 1.5× copy", pick, TARGETS["pick"]),
                            ("any sort layout ≤ 1.5× copy", worst("sort"), TARGETS["sort"]),
                            ("any z-ordered or Hilbert layout ≤ 2× copy", worst("curve"), TARGETS["curve"])):
        if r is None:
            continue
        lines.append(f"| {name} | {r['ratio']:.2f}× (`li_{r['key']}`: {r['best'].seconds:.1f} s vs "
                     f"{copy['best'].seconds:.1f} s; CPU {r['cpu_ratio']:.2f}×) | "
                     f"{'**met**' if r['ratio'] <= target else '**missed**'} |")
    lines.append(f"| statistics pass ≤ 1× count scan + sample | {stats['ratio']:.2f}× ({stats['best']['stats']:.1f} s vs "
                 f"{stats['best']['count']:.1f} s + {stats['best']['sample']:.1f} s) | "
                 f"{'**met**' if stats['ratio'] <= TARGETS['statistics'] else '**missed**'} |")
    lines += ["", "## Builds", "", *markdown_table(
        ["layout", "write plan", "fastest s", "÷ copy", "CPU s", "CPU ÷ copy", "runs s", "parts / files / row groups",
         "stages of the fastest run"],
        ([f"`li_{r['key']}` {r['label']}", r["best"].plan, f"{r['best'].seconds:.1f}", f"{r['ratio']:.2f}×",
          f"{r['best'].cpu:.1f}", f"{r['cpu_ratio']:.2f}×", ", ".join(f"{x:.1f}" for x in r["runs"]),
          f"{r['best'].partitions} / {r['best'].files} / {r['best'].row_groups}", _stages(r["best"])]
         for r in default_first(rows, lambda r: r["family"] == "pick")),
        align="llrrrrlll")]
    lines += ["", "`stages`: Spark's stages of the fastest run, from the status store: tasks, submission to "
              "completion, executor CPU seconds, shuffle written, bytes spilled to disk.", "",
              "## Statistics pass (advise)", "",
              f"`gather_stats` with no cache: {stats['best']['stats']:.2f} s (fastest of {cfg['rounds']}; runs "
              f"{', '.join(f'{x:.2f}' for x in stats['runs']['stats'])}) against a full count scan "
              f"{stats['best']['count']:.2f} s plus the Bernoulli sample query {stats['best']['sample']:.2f} s: "
              f"**{stats['ratio']:.2f}×**. Its steps: " + ", ".join(f"{k} {v:.2f} s" for k, v in stats["steps"].items()) +
              f". Re-run on an unchanged table (cached snapshot): {stats['cached']:.2f} s. Load average "
              f"{stats['load']:.1f}.", ""]
    if not micro["rows"]:
        return "\n".join(lines + ["(No z-ordered layout among those built: no z-value micro-benchmark.)", ""])
    lines += ["## Z-value micro-benchmark", "",
              f"`SELECT sum(hash(v)) FROM (SELECT <expression> AS v FROM source)` on the {micro['layout']} layout "
              f"(bounds per column: {micro['bounds']}), fastest of {cfg['rounds']}, load average {micro['load']:.1f}.",
              "", "| expression | wall s | executor CPU s |", "|---|---:|---:|"]
    for name, v in micro["rows"].items():
        lines.append(f"| {name} | {v['seconds']:.2f} | {v['cpu']:.2f} |")
    lines.append("")
    return "\n".join(lines)


def measure(spark, cfg, rounds: int, command: str, stats_cache: Path, stamp=None) -> dict:
    """Every figure of the report, on ``spark``: the layouts, the statistics pass, the z-value
    micro-benchmark and ``rounds`` rounds of builds."""
    started, loads = time.perf_counter(), [load_average()]
    stamp = stamp or stamped()
    src, specs, pick = layouts_with_twins(spark, cfg, stamp)
    stats = statistics_figure(spark, src.table, cfg.sample_rows, rounds, stats_cache)
    stamp(f"statistics pass {stats['best']['stats']:.1f} s = {stats['ratio']:.2f}× (count + sample)")
    curve = next((s.layout for s in specs if s.layout.order.method == "zorder"), None)
    tree = next((s.layout for s in specs if s.layout.order.method == "tree"), None)
    micro = curve_micro(spark, src.table, curve, rounds, tree) if curve is not None else {"rows": {}}
    builds = build_rounds(spark, src, specs, cfg, rounds, stamp)
    return {"config": {"scale": cfg.scale, "rounds": rounds}, "rows": summary(builds, specs, pick),
            "statistics": stats, "micro": micro, "loads": loads + builds["loads"] + [load_average()],
            "seconds": time.perf_counter() - started, "spark": spark.version, "master": spark.sparkContext.master,
            "driver_memory": spark.conf.get("spark.driver.memory", "?"),
            "machine": f"{os.uname().machine}, {os.cpu_count()} cores", "command": command,
            "source": {"table": src.table, "rows": src.stats.rows, "files": src.files, "bytes": src.bytes}}


def main(argv=None) -> int:
    from hive_integration.spark.session import build_spark_session

    ap = tpch_arguments("benchmarks.tpch_build", __doc__, "tpch_build_sf{scale}.md")
    ap.add_argument("--layouts", default=None, help="comma-separated layout keys (default: all)")
    ap.add_argument("--master", default=None, help="e.g. spark://127.0.0.1:7077 (default local[2])")
    ap.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                    help="a Spark setting for the session, e.g. spark.driver.memory=2g (repeatable; "
                         "default: benchmarks.tpch_setup.session_conf, 4g at SF 1)")
    args = ap.parse_args(argv)
    state = Path(args.state_dir)
    cfg = Config(scale=args.scale, state_dir=state, reuse=True,
                 layouts=tuple(args.layouts.split(",")) if args.layouts else None)
    conf = session_conf(args.scale) | dict(c.split("=", 1) for c in args.conf) | (
        {"spark.master": args.master} if args.master else {})
    spark = build_spark_session(state, app_name="tpch-build", conf=conf)
    try:
        results = measure(spark, cfg, args.rounds, reproduce("benchmarks.tpch_build", argv), state / "stats-bench")
    finally:
        spark.stop()
    text = report(results)
    print(text)
    for path in write(results, text, result_file(args)):
        print(f"wrote {path}")
    return 0


def write(results: dict, text: str, out: Path | None = None) -> list[Path]:
    """The report and the raw figures, as ``tpch_build_sf<scale>.md`` and ``.json`` (or ``out``)."""
    out = out or RESULTS / f"tpch_build_sf{results['config']['scale']:g}.md"
    raw = {**results, "rows": [{**{k: v for k, v in r.items() if k != "best"},
                                "best": dataclasses.asdict(r["best"])} for r in results["rows"]]}
    return write_result(out.stem, text, raw, out.parent)


if __name__ == "__main__":
    sys.exit(main())

"""Issue #14: the sort key of a tree-ordered layout on Spark, three ways, against a plain copy.

    .venv/bin/python -m benchmarks.tree_key_bench [--scale 1] [--rounds 3] [--state-dir DIR] [--out FILE]

The layout is ``tpch_bench``'s TPC-H pick with regressions allowed (partitions, then a tree order
and ``l_orderkey``), with its write hints, built from the INSERT ``planner apply`` emits and from
two variants of it (the same statement with only the sort key changed):

* ``emitted``: one BIGINT, the partition's rank, the leaf and the tie column folded together
  (``planner.emit.tree_order_sql.packed_tree_key`` with the partition id);
* ``no rank``: the same key without the partition's rank (rows of one leaf span the partitions,
  so each task switches between its open files);
* ``partition first``: ``SORT BY planner_pid, <leaf>, <tie>`` and Spark's own writer settings,
  as every ordered layout is sorted for Hive.

Each round builds the copy and the three, in an order rotated from round to round
(``benchmarks.harness``); a figure is the fastest run. Every table's row count is checked against
the source's.
"""
from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import sqlglot
from sqlglot import exp

from benchmarks.builds import build_copy, drop_table, timed_fill
from benchmarks.harness import Timings, load_average, markdown_table, reproduce, schedule, stamped, write_result
from benchmarks.tpch_setup import Config, layouts_with_twins, result_file, session_conf, tpch_arguments
from planner.costmodel.tree_order import tie_columns
from planner.emit import apply_statements, create_table_sql
from planner.emit.apply_sql import ORDER_COLUMN, TREE_SETTINGS
from planner.emit.tree_order_sql import packed_tree_key, tree_order_expr
from planner.model.layout import Layout
from planner.model.write_plan import write_plan

VARIANTS = ("emitted", "no rank", "partition first")


def variant_fill(layout: Layout, fill: list[str], variant: str) -> list[str]:
    """``fill`` (the emitted SETs and INSERT) with the INSERT's sort key changed to ``variant``."""
    if variant == "emitted":
        return fill
    *sets, insert = fill
    tree = sqlglot.parse_one(insert, read="spark")
    alias = next(a for a in tree.find_all(exp.Alias) if a.alias == ORDER_COLUMN)
    select = alias.find_ancestor(exp.Select)
    if variant == "no rank":
        alias.set("this", packed_tree_key(layout)[0])
    else:
        alias.set("this", tree_order_expr(layout))
        keys = [exp.column(exp.to_identifier(layout.partition_column, quoted=True)),
                exp.column(exp.to_identifier(ORDER_COLUMN, quoted=True))]
        keys += [exp.column(exp.to_identifier(c, quoted=True)) for c in tie_columns(layout.order)]
        select.set("sort", exp.Sort(expressions=[exp.Ordered(this=k) for k in keys]))
        tree_keys = {k for k, _ in TREE_SETTINGS}
        sets = [s for s in sets if not any(k in s for k in tree_keys)]
    return [*sets, tree.sql(dialect="spark")]


def build(spark, layout: Layout, columns, source: str, target: str, fill: list[str], block_bytes: int) -> dict:
    from hive_integration.apply.apply_layout import SparkRunner

    runner = SparkRunner(spark)
    drop_table(runner, target)
    seconds, stages = timed_fill(spark, runner, create_table_sql(layout, columns, target, dialect="spark"), fill,
                                 block_bytes)
    rows = spark.table(target).count()
    return {"seconds": seconds, "cpu": sum(s.cpu for s in stages), "rows": rows}


def measure(spark, cfg, rounds: int, stamp, key: str = "tpch_allow") -> dict:
    """``key``: the layout of ``benchmarks.tpch_setup.choose_layouts`` built three ways (the allowed
    TPC-H pick; ``amoeba`` is Amoeba's tree, tree-ordered at any scale)."""
    from hive_integration.apply.apply_layout import SparkRunner

    src, specs, _ = layouts_with_twins(spark, dataclasses.replace(cfg, layouts=(key,)), stamp)
    layout = next(s.layout for s in specs if s.key == key)
    if layout.order.method != "tree":
        raise SystemExit(f"{key} is not tree-ordered here ({layout.describe()})")
    plan = write_plan(layout, table_bytes=SparkRunner(spark).table_bytes(src.table))  # as `planner apply` sizes it
    targets = {v: f"{cfg.db}.tk_" + v.replace(" ", "_") for v in VARIANTS}
    fills = {v: variant_fill(layout, apply_statements(layout, dict(src.columns), src.table, t, dialect="spark",
                                                      rename=False, plan=plan), v) for v, t in targets.items()}
    source_rows = spark.table(src.table).count()
    timings = Timings()
    for r, _, v in schedule(["copy", *VARIANTS], rounds):
        if v == "copy":
            c = build_copy(spark, src.table, f"{cfg.db}.tk_copy", cfg.row_group_bytes)
            got = {"seconds": c.seconds, "cpu": sum(s.cpu for s in c.stages), "rows": source_rows}
        else:
            got = build(spark, layout, dict(src.columns), src.table, targets[v], fills[v], cfg.row_group_bytes)
            if got["rows"] != source_rows:
                raise SystemExit(f"{v}: {got['rows']:,} rows written of {source_rows:,}")
        timings.add(v, got["seconds"], round=r, value=got)
        stamp(f"round {r + 1}: {v} {got['seconds']:.1f} s (cpu {got['cpu']:.1f} s)")
    runs = {k: [run.value for run in timings.of(k)] for k in ("copy", *VARIANTS)}
    return {"layout": layout.describe(), "plan": plan.describe(), "runs": runs, "rows": source_rows,
            "load": load_average(), "loads": [run.load for run in timings.runs], "spark": spark.version}


def report(results: dict, command: str) -> str:
    runs = results["runs"]
    best = {k: min(runs[k], key=lambda x: x["seconds"]) for k in runs}
    cpu = {k: min(x["cpu"] for x in runs[k]) for k in runs}
    lines = [f"# A tree order's sort key on Spark (TPC-H lineitem, {results['rows']:,} rows)", "",
             f"Reproduce: `{command}` (Spark {results['spark']}; load average {results['load']:.1f} at the end).", "",
             f"Layout: {results['layout']}; write plan: {results['plan']}. Every table holds the source's rows.", "",
             *markdown_table(["build", "fastest s", "÷ copy", "CPU s (fastest)", "CPU ÷ copy", "runs s"],
                             ([k, f"{best[k]['seconds']:.1f}", f"{best[k]['seconds'] / best['copy']['seconds']:.2f}×",
                               f"{cpu[k]:.1f}", f"{cpu[k] / cpu['copy']:.2f}×",
                               ", ".join("%.1f" % x["seconds"] for x in runs[k])] for k in ("copy", *VARIANTS)),
                             align="lrrrrl")]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    from hive_integration.spark.session import build_spark_session

    args = tpch_arguments("benchmarks.tree_key_bench", __doc__, "tree_key_sf{scale}.md").parse_args(argv)
    cfg = Config(scale=args.scale, state_dir=Path(args.state_dir), reuse=True)
    spark = build_spark_session(cfg.state_dir, app_name="tree-key", conf=session_conf(args.scale))
    try:
        text = report(measure(spark, cfg, args.rounds, stamped()), reproduce("benchmarks.tree_key_bench", argv))
    finally:
        spark.stop()
    print(text)
    out = result_file(args)
    for path in write_result(out.stem, text, out_dir=out.parent):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

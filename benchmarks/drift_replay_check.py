"""Check the drift benchmark's replay on real Spark: the layouts partial re-layout chose, read by
the queries it held them for.

The drift benchmark (``benchmarks.drift_bench``) prices its strategies on the model. This check
takes the layouts the *partial* strategy held over the replay (the one advised on the first window,
and each one an action left behind: a whole-table switch or re-cut partitions), applies each to a
copy of lineitem on Spark, and runs every lineitem scan of the steps it held that layout for as a
probe (``benchmarks.tpch_probe``: the scan's own predicate, a count and a checksum of the columns
it reads), through the planner's rewrite. The static strategy's layout (the first, held
throughout) is measured on every step too, so partial against static is a ratio of Spark's
figures (rows rewritten are the replay's: the rows of the partitions each action re-cut). Per step
it reports Spark's rows read (scan metrics) next to the model's, and it compares every probe's
answer with the plain table's.

A layout is built fresh from the source rather than re-cut in place: the partitions and the order
inside them are the same as a partial re-layout leaves (``planner.advice.relayout_plan`` keeps one order),
and the in-place re-cut itself is checked by ``benchmarks.drift_check``.

    .venv/bin/python -m benchmarks.drift_replay_check [--scale 1] [--reuse-advice]
"""
from __future__ import annotations

import argparse
import time
from dataclasses import replace
from pathlib import Path

from benchmarks.drift_bench import ROOT, TABLE, _load_cache, _save_cache, drift
from benchmarks.drift_check import through_rewrite
from benchmarks.harness import RESULTS, Answer, load_average, markdown_table, write_result
from benchmarks.tpch_probe import probes_for
from devtools.tpch_data import generate_lineitem, load_table
from hive_integration.apply.apply_layout import SparkRunner, apply_layout
from hive_integration.spark.session import build_spark_session
from planner.advice.drift import Strategy, replay, same_layout
from planner.advice.ranking import write_hints
from planner.advice.relayout_plan import model_for
from planner.model.layout import with_generation
from planner.semantics.types import kind_of_type
from planner.workload import Schema, parse_workload

DB = "drift_replay"


def _tenures(layouts: list) -> list[tuple[object, list[int]]]:
    """(layout, the steps it was held for), in the order first held."""
    out: list[tuple[object, list[int]]] = []
    for i, layout in enumerate(layouts):
        if out and same_layout(out[-1][0], layout):
            out[-1][1].append(i)
        else:
            out.append((layout, [i]))
    return out


def run(scale: float, count: int, size: int, step: int, sample_rows: int, write_cost: float, seed: int,
        advice_cache: dict, log=print, spark=None, data_dir: Path | None = None) -> dict:
    """``spark``: a session to use (default: one of its own, stopped at the end)."""
    d = drift(scale, count, size, step, sample_rows, seed, log, advice_cache, data_dir)
    trace = replay(d.step_models, d.best, recent=d.recent, start=d.start, write_cost=write_cost,
                   max_partitions=d.params.max_partitions, judged=d.judged,
                   strategies={"partial": Strategy("partial", validated=True)})["partial"]
    own = spark is None
    if own:
        spark = build_spark_session(ROOT / ".planner" / "drift_replay_check", app_name="drift-replay-check")
    spark.sql(f"DROP DATABASE IF EXISTS {DB} CASCADE")
    spark.sql(f"CREATE DATABASE {DB}")
    data = generate_lineitem(scale, data_dir or ROOT / ".planner" / "data")
    plain = f"{DB}.{TABLE}"
    load_table(spark, data, plain)
    schema = Schema({TABLE: d.columns})
    kinds = {c: kind_of_type(t) for c, t in d.columns.items()}
    wrong, probes_run = 0, 0

    def step_read(i: int, table: str) -> int:
        """Spark's rows read by step ``i``'s probes on ``table``; each answer checked."""
        nonlocal wrong, probes_run
        wl = parse_workload(d.steps[i], f"step{i + 1}.sql", schema=schema, tables=[TABLE])
        read = 0
        for probe in probes_for(wl.queries, TABLE, d.columns, kinds):
            got = through_rewrite(spark, probe.sql(table))
            wrong += got.answer != Answer.of(spark.sql(probe.sql(plain)).collect())
            probes_run += 1
            read += got.read()
        return read

    steps: list[dict] = []
    tenures = _tenures(trace.layouts)
    for k, (layout, held) in enumerate(tenures):
        table = f"{DB}.{TABLE}_{k}"
        load_table(spark, data, table)
        t = time.perf_counter()
        # written as apply writes an advised layout: with the row group and page rows and the files
        # per partition the model priced (the advice cache may hold layouts recorded without them)
        hints = write_hints(layout, model_for(d.step_models[held[0]], layout).partition_rows(layout), d.stats,
                            d.params)
        laid = with_generation(replace(layout, table=table, meta=tuple((dict(layout.meta) | hints).items()),
                                       types=tuple((a, d.columns[a]) for a in layout.attributes if a in d.columns)))
        apply_layout(SparkRunner(spark), laid, drop_old=True)
        log(f"layout {k} ({layout.describe()}) applied in {time.perf_counter() - t:.0f} s; "
            f"held for steps {held[0] + 1}-{held[-1] + 1}")
        for i in held:
            read = step_read(i, table)
            steps.append({"step": i + 1, "layout": k, "spark": read, "model": round(trace.reads[i]),
                          "action": trace.actions[i], "rewritten": round(trace.rewritten[i])})
            log(f"step {i + 1}: Spark {read:,} rows, model {trace.reads[i]:,.0f}; wrong answers so far {wrong}")
        if k:  # the first layout (the static one) stays for the static strategy's steps
            spark.sql(f"DROP TABLE IF EXISTS {table}")
    # the static strategy holds the first layout throughout: its steps partial did not share
    static = {s["step"]: (s["spark"], s["model"]) for s in steps if s["layout"] == 0}
    for i in range(len(d.steps)):
        if i + 1 not in static:
            static[i + 1] = (step_read(i, f"{DB}.{TABLE}_0"),
                             round(model_for(d.step_models[i], d.start).evaluate(d.start).rows))
            log(f"step {i + 1}, static: Spark {static[i + 1][0]:,} rows, model {static[i + 1][1]:,}")
    for s_ in steps:
        s_["static_spark"], s_["static_model"] = static[s_["step"]]
    spark.sql(f"DROP DATABASE {DB} CASCADE")
    if own:
        spark.stop()
    return {"scale": scale, "rows": d.stats.rows, "step_queries": step, "window_queries": size,
            "layouts": [layout.describe() for layout, _ in tenures], "steps": steps,
            "probes": probes_run, "wrong": wrong, "load": round(load_average(), 2)}


def report(r: dict, command: str) -> str:
    def total(key: str) -> int:
        return sum(s[key] for s in r["steps"])

    spark, model, rewritten = total("spark"), total("model"), total("rewritten")
    static_spark, static_model = total("static_spark"), total("static_model")
    worst = max(r["steps"], key=lambda s: abs(s["model"] / max(s["spark"], 1) - 1))
    lines = ["# Drift replay on Spark (issue 15): partial re-layout's layouts, read by the queries it held them for",
             "", f"Command: `{command}`. TPC-H lineitem SF {r['scale']:g} ({r['rows']:,} rows); every lineitem scan "
             f"of the replay's {len(r['steps'])} steps of {r['step_queries']} queries ran as a probe ({r['probes']} "
             f"probes) through the planner's rewrite, on the layout partial held at that step and on the static "
             f"layout (the first one, held throughout), each built fresh from the source; rows read are Spark's "
             f"scan metrics, rows rewritten the replay's (the rows of the partitions each action re-cut). "
             f"Load average {r['load']}.", "",
             *markdown_table(["figure", "Spark", "model"], [
                 ["rows read over the replay, partial", f"{spark:,}", f"{model:,} ({model / max(spark, 1) - 1:+.1%})"],
                 ["rows read over the replay, static", f"{static_spark:,}",
                  f"{static_model:,} ({static_model / max(static_spark, 1) - 1:+.1%})"],
                 [f"partial / static, rows read + rewritten ({rewritten:,} rewritten)",
                  f"{(spark + rewritten) / max(static_spark, 1):.3f}",
                  f"{(model + rewritten) / max(static_model, 1):.3f}"],
                 ["largest step error, partial", f"step {worst['step']}: {worst['spark']:,}",
                  f"{worst['model']:,} ({worst['model'] / max(worst['spark'], 1) - 1:+.1%})"],
                 ["wrong answers (every probe's count and checksum against the plain table)", r["wrong"],
                  "target 0"]]),
             "", *markdown_table(["layout", "held by partial"], ([k, f"`{text}`"] for k, text in enumerate(r["layouts"])),
                                 align="rl"),
             "", *markdown_table(["step", "layout", "Spark rows", "model rows", "model ÷ Spark", "static: Spark rows",
                                  "static: model rows", "partial's action after it"],
                                 ([s["step"], s["layout"], f"{s['spark']:,}", f"{s['model']:,}",
                                   f"{s['model'] / max(s['spark'], 1):.3f}", f"{s['static_spark']:,}",
                                   f"{s['static_model']:,}", s["action"]] for s in r["steps"]), align="rrrrrrrl")]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--windows", type=int, default=9)
    ap.add_argument("--window", type=int, default=40)
    ap.add_argument("--step", type=int, default=10)
    ap.add_argument("--sample-rows", type=int, default=100_000)
    ap.add_argument("--write-cost", type=float, default=4.0)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--reuse-advice", action="store_true", help="reuse the drift benchmark's cached layouts")
    ap.add_argument("--out", default=None, help="default benchmarks/results/drift_replay_sf<scale>.md")
    a = ap.parse_args(argv)
    cache = _load_cache() if a.reuse_advice else {}
    r = run(a.scale, a.windows, a.window, a.step, a.sample_rows, a.write_cost, a.seed, cache)
    _save_cache(cache)
    command = (f".venv/bin/python -m benchmarks.drift_replay_check --scale {a.scale:g} --windows {a.windows} "
               f"--window {a.window} --step {a.step}")
    text = report(r, command)
    write_result(Path(a.out or f"drift_replay_sf{a.scale:g}.md").stem, text, r, RESULTS, indent=2)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

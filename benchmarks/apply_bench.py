"""A whole ``planner apply`` against a plain copy (CTAS) of TPC-H lineitem, step by step (issue 31).

Loads the TPC-H tables at ``--scale`` into the default database of a state directory of its own
(lineitem with the loader's small row groups, as the other benchmarks), runs ``planner advise
sql/tpch_workload.sql --table default.lineitem`` (its ``--allow-regressions`` pick when the default
keeps the table as it is, as the join benchmark does), then times, ``--rounds`` times with the
order rotated:

* the copy: ``CREATE TABLE … STORED AS PARQUET AS SELECT * FROM lineitem``;
* ``planner apply`` of the advice, the whole command in this process (Spark already started, as
  for the copy): lease, create, write, verify, swap, and the join ranges of orders, customer, …
  recorded for the rewrite. Its per-step seconds are the report's ``step_seconds``;
* the write step's pieces (``write_pieces``): the apply's SELECT run to the ``noop`` sink without
  its shuffle and sort, with the shuffle, and whole, beside a plain read of the table; and the
  copy again under the apply's SETs (its row groups and pages), which tells the writing of small
  row groups from the writing of partitions.

After each apply the old table is put back (the laid-out one dropped, ``lineitem__before_…``
renamed), so every round applies to the table as loaded.

    python -m benchmarks.apply_bench [--scale 1] [--rounds 2] [--state-dir .planner/bench-apply]
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TABLES = ("lineitem", "orders", "customer", "nation", "region", "supplier", "part", "partsupp")


def _cli(args: list[str]) -> str:
    """``planner ARGS`` in this process (its Spark session is this one); what it printed."""
    from planner.cli.main import cli

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        cli.main(args=args, prog_name="planner", standalone_mode=False)
    return out.getvalue()


def setup(spark, scale: float, state: Path, log) -> Path:
    """The tables loaded and lineitem advised; returns the advice folder."""
    from devtools.tpch_data import generate_table, load_table

    have = {r[1] for r in spark.sql("SHOW TABLES IN default").collect()}
    for t in TABLES:
        if t not in have:
            t0 = time.monotonic()
            load_table(spark, generate_table(scale, state / "data", t), f"default.{t}", row_group_bytes=2_000_000)
            log(f"loaded default.{t} in {time.monotonic() - t0:.1f} s")
    advice = state / "advice"
    if not (advice / "layout.json").exists():
        common = ["--table", "default.lineitem", "--state-dir", str(state / "spark"), "--out-dir", str(advice)]
        log(_cli(["advise", str(ROOT / "sql" / "tpch_workload.sql"), *common]))
        if not (advice / "layout.json").exists():
            log("the default advice keeps the table as it is; measuring the --allow-regressions pick")
            log(_cli(["advise", str(ROOT / "sql" / "tpch_workload.sql"), *common, "--allow-regressions"]))
    return advice


def copy_seconds(spark) -> float:
    spark.sql("DROP TABLE IF EXISTS default.lineitem_ctas")
    t0 = time.monotonic()
    spark.sql("CREATE TABLE default.lineitem_ctas STORED AS PARQUET AS SELECT * FROM default.lineitem")
    seconds = time.monotonic() - t0
    spark.sql("DROP TABLE default.lineitem_ctas")
    return seconds


def _noop_seconds(spark, query) -> float:
    """Seconds to run ``query`` (a sqlglot SELECT) to Spark's ``noop`` sink: every row computed,
    nothing written."""
    t0 = time.monotonic()
    spark.sql(query.sql(dialect="spark")).write.format("noop").mode("overwrite").save()
    return time.monotonic() - t0


READ = "read the table (`SELECT *`)"
WHOLE = "+ the sort: the whole SELECT"
SMALL_GROUPS = "the copy again, with the layout's row groups and pages (its SETs)"


def write_pieces(spark, advice: Path) -> dict[str, float]:
    """Where the write step's time goes: the apply's own SELECT (``planner.emit.apply_sql``, with its
    session settings) run to the ``noop`` sink whole and with its sorts, then its shuffle, taken out;
    and the plain read of the table. What the write step takes beyond the whole SELECT is the Parquet
    writing of the partitions; what the copy takes beyond the read is the copy's own writing."""
    from sqlglot import exp

    from benchmarks.builds import footprint
    from hive_integration.apply.apply_layout import SparkRunner, write_settings_restored
    from planner.emit.apply_sql import dynamic_partition_settings, insert_select
    from planner.model.layout import Layout
    from planner.model.write_plan import write_plan

    layout = Layout.loads((advice / "layout.json").read_text())
    columns = {f.name: f.dataType.simpleString() for f in spark.table("default.lineitem").schema}
    plan = write_plan(layout, table_bytes=footprint(spark, "default.lineitem")[2])  # as the apply plans it
    whole = insert_select(layout, columns, "default.lineitem", "default.lineitem__pieces", overwrite=True,
                          dialect="spark", plan=plan).expression
    # an ordered layout's rows come from a subquery that computes the order key beside them: its
    # own output, so that without the sort Spark still computes the key (the outer projection
    # drops it, and Spark would prune it away)
    inner = whole.find(exp.Subquery)
    unsorted = (inner.this if inner is not None else whole).copy()
    unsorted.set("sort", None)
    unshuffled = unsorted.copy()
    unshuffled.set("distribute", None)
    out = {READ: _noop_seconds(spark, exp.select("*").from_("default.lineitem"))}
    settings = [s.sql(dialect="spark") for s in dynamic_partition_settings(layout, "spark")]
    with write_settings_restored(SparkRunner(spark), settings):
        for stmt in settings:
            spark.sql(stmt)
        out["the SELECT without shuffle and sort (the cut, the join, the order key)"] = _noop_seconds(spark, unshuffled)
        out["+ the shuffle by partition"] = _noop_seconds(spark, unsorted)
        out[WHOLE] = _noop_seconds(spark, whole)
        out[SMALL_GROUPS] = copy_seconds(spark)
    return out


def apply_seconds(spark, advice: Path, state: Path) -> tuple[float, dict]:
    """The whole ``planner apply`` (wall seconds, its JSON report); the table put back afterwards."""
    t0 = time.monotonic()
    report = json.loads(_cli(["apply", str(advice), "--state-dir", str(state / "spark"), "--format", "json"]))
    seconds = time.monotonic() - t0
    spark.sql("DROP TABLE default.lineitem")
    spark.sql(f"ALTER TABLE {report['backup']} RENAME TO default.lineitem")
    return seconds, report


def main(argv=None) -> int:
    from hive_integration.spark.session import build_spark_session

    ap = argparse.ArgumentParser(prog="python -m benchmarks.apply_bench", description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--state-dir", default=str(ROOT / ".planner" / "bench-apply"))
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results"))
    a = ap.parse_args(argv)
    state = Path(a.state_dir) / f"sf{a.scale:g}"
    log = lambda m: print(m, flush=True)  # noqa: E731
    big = a.scale >= 5
    spark = build_spark_session(state / "spark", app_name="apply-bench",
                                conf={"spark.driver.memory": "8g" if big else "4g",
                                      "spark.sql.shuffle.partitions": "32" if big else "8"})
    advice = setup(spark, a.scale, state, log)
    load0, started = os.getloadavg()[0], time.monotonic()
    copies, applies, pieces = [], [], []
    for r in range(a.rounds):
        for which in (("copy", "apply") if r % 2 == 0 else ("apply", "copy")):
            if which == "copy":
                copies.append(copy_seconds(spark))
                log(f"round {r + 1} copy {copies[-1]:.1f} s")
            else:
                applies.append(apply_seconds(spark, advice, state))
                log(f"round {r + 1} apply {applies[-1][0]:.1f} s: {applies[-1][1]['step_seconds']}")
        pieces.append(write_pieces(spark, advice))
        log(f"round {r + 1} write pieces: {pieces[-1]}")
    load1 = os.getloadavg()[0]
    rows = spark.sql("SELECT count(*) FROM default.lineitem").collect()[0][0]
    spark.stop()
    text = report(a, rows, copies, applies, pieces, (load0, load1), (time.monotonic() - started) / 60)
    print(text)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"apply_sf{a.scale:g}.md").write_text(text, encoding="utf-8")
    return 0


def report(a, rows: int, copies: list[float], applies: list[tuple[float, dict]], pieces: list[dict],
           load: tuple, minutes: float) -> str:
    copy = min(copies)
    best_seconds, best = min(applies, key=lambda x: x[0])
    steps = best["step_seconds"]
    lines = [f"# A whole `planner apply` against a plain copy, TPC-H lineitem SF {a.scale:g}", "",
             f"Reproduce: `python -m benchmarks.apply_bench --scale {a.scale:g} --rounds {a.rounds}` "
             f"({minutes:.0f} min; load average {load[0]:.1f} at the start, {load[1]:.1f} at the end). "
             f"lineitem: {rows:,} rows; layout: {best['layout']}. Fastest of {a.rounds} rounds, the order rotated "
             "(copy first, then apply first).", "",
             "| | fastest s | runs s | ÷ copy |", "|---|---:|---|---:|",
             f"| copy (`CREATE TABLE … AS SELECT *`) | {copy:.1f} | {', '.join(f'{s:.1f}' for s in copies)} | 1.00× |",
             f"| `planner apply` (whole command) | {best_seconds:.1f} | "
             f"{', '.join(f'{s:.1f}' for s, _ in applies)} | {best_seconds / copy:.2f}× |", "",
             "Steps of the fastest apply (`step_seconds` of its report):", "",
             "| step | s | ÷ copy |", "|---|---:|---:|"]
    lines += [f"| {k} | {v:.1f} | {v / copy:.2f}× |" for k, v in steps.items()]
    other = best_seconds - sum(steps.values())
    lines += [f"| outside the steps (reading the advice, the command's set-up) | {other:.1f} | {other / copy:.2f}× |"]
    detail = best.get("join_range_seconds") or {}
    if detail:
        lines += ["", "Join ranges: " + ", ".join(f"{k} {v:.1f} s" for k, v in detail.items()) + "."]
    probe = next((m for m in best.get("steps", []) if m.startswith("probed ")), None)
    if probe:
        lines += ["", f"Verify: the checksum scan, then the filtered-query probe: {probe}."]
    if pieces:
        fastest = {k: min(p[k] for p in pieces) for k in pieces[0]}
        lines += ["", "Where the write's time goes: the apply's own SELECT (with its settings) run to Spark's `noop` "
                  "sink, fastest of the rounds; the last rows are what the writing of Parquet files adds:", "",
                  "| piece | s | ÷ copy |", "|---|---:|---:|"]
        lines += [f"| {k} | {v:.1f} | {v / copy:.2f}× |" for k, v in fastest.items() if k != SMALL_GROUPS]
        whole, read = fastest[WHOLE], fastest[READ]
        lines += [f"| the write step beyond the whole SELECT (writing the partitions' files) | "
                  f"{steps['write'] - whole:.1f} | {(steps['write'] - whole) / copy:.2f}× |",
                  f"| the copy beyond the read (writing the copy's files) | {copy - read:.1f} | "
                  f"{(copy - read) / copy:.2f}× |"]
        if SMALL_GROUPS in fastest:
            small = fastest[SMALL_GROUPS]
            lines += [f"| {SMALL_GROUPS} | {small:.1f} | {small / copy:.2f}× |"]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())

"""Where an aggregate index's time goes (issue 32): its build, and a query it serves, in pieces.

Runs on the tables ``benchmarks.agg_index_bench`` leaves in its state directory (``aggbench.li_pick``
with its index, ``aggbench.li_pick_noindex`` without), after that benchmark, alone:

* the build: the cells query as ``apply`` runs it, in one aggregation (every row's bucket searched,
  where the build groups by a narrow column's values first), without its SORT BY, without the
  aggregates of the expressions, with ANSI off; a read of every column and a ``CREATE TABLE AS
  SELECT`` copy for scale (each written to Spark's ``noop`` sink, the fastest of two runs); then a
  whole build, step by step (``cells.build``'s ``steps``);
* a query the index serves: the plain query on the same layout without the index, the rewritten
  query (as ``planner.sql`` runs it, as ``planner rewrite`` saves it, and as it saved it before
  builds had views), the planning of each
  (``EXPLAIN``), ``SELECT 1``, the index's head subquery alone, and a
  read of every cell (median of five warm runs).

    .venv/bin/python -m benchmarks.agg_index_profile [--scale 1] [--build-only] [--state-dir /tmp/planner-agg-bench]

``--build-only``: the copy, the cells query as built and with its range dimensions grouped by value
first (``GridDim.grouped``), and whole builds (both ways where they differ); nothing else (what
fits in time at SF 10). ``--scale`` names the report: run it after
``agg_index_bench`` at that scale. Prints the table and writes
``benchmarks/results/agg_index_profile_sf<scale>[_build].md``.
"""
from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TABLE = "aggbench.li_pick"
QUERY = "SELECT sum(l_extendedprice * l_discount) AS revenue FROM {t} WHERE l_discount BETWEEN 0.02 AND 0.03"


def _saved_before_views(spark) -> str:
    """The saved text of the profiled query as a build without a view gets it (``CellsState.view``
    false): the head row checked in the SQL, a fallback branch per partition group."""
    from dataclasses import replace

    import hive_integration.metastore.layouts as layouts

    real = layouts.index_contexts

    def without_views(*args, **kwargs):
        return {t: replace(c, state=replace(c.state, view=False)) if c.state is not None else c
                for t, c in real(*args, **kwargs).items()}

    layouts.index_contexts = without_views
    try:
        return layouts.rewritten(spark, QUERY.format(t=TABLE), saved=True, fresh=True)[0]
    finally:
        layouts.index_contexts = real


def main(argv=None) -> int:
    from dataclasses import replace

    from sqlglot import exp

    from hive_integration.metastore.layouts import rewritten
    from hive_integration.spark.cells import build as build_index
    from hive_integration.spark.session import build_spark_session
    from planner.emit.cells_sql import cells_select
    from planner.emit.ddl import layout_from_properties

    ap = argparse.ArgumentParser(prog="python -m benchmarks.agg_index_profile", description=__doc__.splitlines()[0])
    ap.add_argument("--state-dir", type=Path, default=Path("/tmp/planner-agg-bench"))
    ap.add_argument("--scale", type=float, default=1.0, help="the scale agg_index_bench ran at (names the report)")
    ap.add_argument("--build-only", action="store_true", help="the build's figures only")
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args(argv)
    out = a.out or ROOT / "benchmarks" / "results" / f"agg_index_profile_sf{a.scale:g}{'_build' if a.build_only else ''}.md"
    spark = build_spark_session(a.state_dir / "spark", app_name="agg-index-profile", conf={"spark.driver.memory": "4g"})
    rows: list[tuple[str, str, float]] = []
    load0 = os.getloadavg()[0]

    def noop(part: str, label: str, sql: str, n: int = 2) -> None:
        best = float("inf")
        for _ in range(n):
            t = time.perf_counter()
            spark.sql(sql).write.format("noop").mode("overwrite").save()
            best = min(best, time.perf_counter() - t)
        rows.append((part, label, best))

    def collect(part: str, label: str, sql: str, n: int = 5) -> None:
        spark.sql(sql).collect()
        walls = []
        for _ in range(n):
            t = time.perf_counter()
            spark.sql(sql).collect()
            walls.append(time.perf_counter() - t)
        rows.append((part, label, statistics.median(walls)))

    props = {r[0]: r[1] for r in spark.sql(f"SHOW TBLPROPERTIES {TABLE}").collect()}
    layout = layout_from_properties(props) if any(k.startswith("planner.layout.") for k in props) else None
    if layout is None or layout.aggregate_index is None:
        raise SystemExit(f"{TABLE} carries no aggregate index: run benchmarks.agg_index_bench first")
    build = cells_select(layout.aggregate_index, TABLE, layout.partition_column)
    one_stage = replace(layout.aggregate_index, dims=tuple(replace(d, by_value=False, grouped=False)
                                                           for d in layout.aggregate_index.dims))
    grouped = replace(layout.aggregate_index, dims=tuple(d if d.staged else replace(d, grouped=True)
                                                         for d in layout.aggregate_index.dims))
    unordered = build.copy()
    unordered.set("sort", None)
    keys = [e for e in unordered.expressions if e.alias == "planner_pid" or e.alias.startswith("planner_b")]
    counted = unordered.copy()
    counted.set("expressions", [k.copy() for k in keys] + [exp.alias_(exp.Count(this=exp.Star()), "n")])
    spark.conf.set("spark.sql.ansi.enabled", "true")  # as the build runs
    if not a.build_only:
        noop("build", "read every column (a copy's read)", f"SELECT * FROM {TABLE}")
    for label in ("CREATE TABLE AS SELECT copy", "CREATE TABLE AS SELECT copy, again"):
        t = time.perf_counter()
        spark.sql(f"CREATE TABLE aggbench.profile_copy STORED AS PARQUET AS SELECT * FROM {TABLE}")
        rows.append(("build", label, time.perf_counter() - t))
        spark.sql("DROP TABLE aggbench.profile_copy")
    noop("build", "the cells query as apply runs it", build.sql("spark"))
    if one_stage != layout.aggregate_index and not a.build_only:
        noop("build", "… in one aggregation (every row's bucket searched)",
             cells_select(one_stage, TABLE, layout.partition_column).sql("spark"))
    if grouped != layout.aggregate_index:
        noop("build", "… its range dimensions grouped by value first too (`GridDim.grouped`)",
             cells_select(grouped, TABLE, layout.partition_column).sql("spark"))
    if not a.build_only:
        noop("build", "… without its SORT BY", unordered.sql("spark"))
        noop("build", "… and without the expressions' aggregates (count only)", counted.sql("spark"))
        spark.conf.set("spark.sql.ansi.enabled", "false")
        noop("build", "… without its SORT BY, ANSI off", unordered.sql("spark"))
    spark.conf.unset("spark.sql.ansi.enabled")
    # the layout's own index last: the queries below (and later runs) read its cells
    for label, index in ([(", range dimensions grouped by value first", grouped)]
                         if grouped != layout.aggregate_index else []) + [("", layout.aggregate_index)]:
        steps: dict[str, float] = {}
        t = time.perf_counter()
        build_index(spark, replace(layout, aggregate_index=index), steps=steps)
        rows.append(("build", f"a whole build (`cells.build`){label}", time.perf_counter() - t))
        rows += [("build", f"… step: {name}", s) for name, s in steps.items()]
    if a.build_only:
        return _write(spark, rows, out, a, load0, layout, None)

    plain = QUERY.format(t="aggbench.li_pick_noindex")
    text, explanation = rewritten(spark, QUERY.format(t=TABLE))
    saved, _ = rewritten(spark, QUERY.format(t=TABLE), saved=True)
    if explanation is None or not explanation.used:
        raise SystemExit(f"the index did not serve the profiled query: {explanation}")
    collect("query", "plain query, same layout without the index", plain)
    collect("query", "rewritten query (index), as planner.sql runs it", text)
    collect("query", "… as `planner rewrite` saves it (the cells through the build's view)", saved)
    before_views = _saved_before_views(spark)
    collect("query", "… as it was saved before views (the head checked in the SQL)", before_views)
    collect("query", "planning only (EXPLAIN), plain", f"EXPLAIN {plain}")
    collect("query", "planning only (EXPLAIN), rewritten", f"EXPLAIN {text}")
    collect("query", "planning only (EXPLAIN), saved", f"EXPLAIN {saved}")
    collect("query", "planning only (EXPLAIN), saved before views", f"EXPLAIN {before_views}")
    collect("query", "SELECT 1", "SELECT 1")
    collect("query", "the index's head subquery alone", f"SELECT COUNT(*) FROM {TABLE}__cells WHERE planner_part = 'head'")
    collect("query", "every cell read and summed", f"SELECT sum(planner_n) FROM {TABLE}__cells WHERE planner_part = 'cells'")
    # the planner's own work per query (issue 31: at most 20 ms once the layout is known): nine texts
    # it has not seen (the text cache does not answer), the table's and the cells' files listed for each
    texts = [f"SELECT sum(l_extendedprice * l_discount) AS revenue FROM {TABLE} WHERE l_discount BETWEEN 0.0{a} "
             f"AND 0.0{a + 1} AND l_quantity BETWEEN {q} AND {q + 9}" for a, q in zip(range(9), range(1, 40, 4))]
    walls = []
    for sql in texts:
        t = time.perf_counter()
        _, explained = rewritten(spark, sql)
        walls.append(time.perf_counter() - t)
        if explained is None or not explained.used:
            raise SystemExit(f"the index did not serve {sql}: {explained}")
    rows.append(("query", f"the rewrite itself (planner.sql, before Spark runs the text), a new text, median of "
                          f"{len(texts)}; the slowest {max(walls) * 1000:.0f} ms", statistics.median(walls)))
    return _write(spark, rows, out, a, load0, layout, text)


def _write(spark, rows, out: Path, a, load0: float, layout, text: str | None) -> int:
    spark.stop()
    args = (f" --scale {a.scale:g}" if a.scale != 1 else "") + (" --build-only" if a.build_only else "")
    lines = [f"# Where the aggregate index's time goes (SF {a.scale:g})", "",
             f"Reproduce: `.venv/bin/python -m benchmarks.agg_index_profile{args}` after "
             f"`benchmarks.agg_index_bench --scale {a.scale:g}`, alone (load average {load0:.1f} at the start). "
             f"Index: {layout.aggregate_index.describe()}"
             + (f". Query: `{QUERY.format(t=TABLE)}`." if text is not None else "."), "",
             "| part | what runs | seconds |", "|---|---|---:|"]
    lines += [f"| {p} | {label} | {s:.3f} |" for p, label, s in rows]
    if text is not None:
        lines += ["", "The rewritten query, as planner.sql runs it:", "", "```sql", text, "```"]
    report = "\n".join(lines) + "\n"
    print(report, end="")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(report, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

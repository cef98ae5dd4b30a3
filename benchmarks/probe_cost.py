"""Issue 30: what ``apply``'s filtered-query probe costs, against the INSERT that writes the table.

    flock /work/spark.lock .venv/bin/python -m benchmarks.probe_cost [--scale 0.1] [--state-dir DIR] [--out FILE]

TPC-H lineitem at ``--scale`` as a Hive Parquet table (the money columns as DOUBLE as well, so the
FLOAT/DOUBLE probes run), laid out by ship year into eight partitions sorted by ``l_orderkey``
with ``apply_layout``. The figures come from apply's own progress lines: the INSERT statement's
seconds and the probe's. One run; nothing else should run on the machine meanwhile.
"""
from __future__ import annotations

import argparse
import datetime as dt
import re
import tempfile
from pathlib import Path

from devtools.tpch_data import generate_lineitem, load_table
from hive_integration.apply.apply_layout import SparkRunner, apply_layout
from hive_integration.spark.session import build_spark_session
from planner.cnf.valueset import ValueSet
from planner.model.layout import Layout, Ordering, Partition
from planner.semantics.kinds import Kind

ROOT = Path(__file__).resolve().parent.parent


def layout(table: str) -> Layout:
    years = list(range(1992, 1999))
    parts = [Partition(i + 1, (("l_shipdate", ValueSet.range(Kind.DATE, dt.date(y, 1, 1), dt.date(y + 1, 1, 1),
                                                              True, False)),)) for i, y in enumerate(years)]
    return Layout(table, "hand-built", tuple(parts), order=Ordering("sort", ("l_orderkey",)),
                  kinds=(("l_shipdate", Kind.DATE),))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=float, default=0.1)
    ap.add_argument("--state-dir", default=None)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "probe_cost.md"))
    args = ap.parse_args()
    state = Path(args.state_dir or tempfile.mkdtemp(prefix="probe_cost_"))
    spark = build_spark_session(state / "spark", app_name="probe-cost")
    try:
        raw = generate_lineitem(args.scale, state / "tpch")
        spark.sql("CREATE DATABASE IF NOT EXISTS bench")
        load_table(spark, raw, "bench.lineitem_raw")
        spark.sql("DROP TABLE IF EXISTS bench.lineitem")
        spark.sql("CREATE TABLE bench.lineitem STORED AS PARQUET AS SELECT *, "
                  "CAST(l_extendedprice AS DOUBLE) AS price_d, CAST(l_discount AS FLOAT) AS discount_f "
                  "FROM bench.lineitem_raw")
        rows = spark.sql("SELECT count(*) FROM bench.lineitem").collect()[0][0]
        seen: list[str] = []
        apply_layout(SparkRunner(spark), layout("bench.lineitem"), progress=seen.append, drop_old=True)
    finally:
        spark.stop()
    insert = next(float(m.group(1)) for s in seen
                  if (m := re.search(r"done in ([0-9.]+) s: INSERT", s)))
    probe_line = next(s for s in seen if "probed" in s)
    m = re.search(r"probed (\d+) .* in ([0-9.]+) s", probe_line)
    count, total = int(m.group(1)), float(m.group(2))
    facts = next((float(m.group(1)) for s in seen if (m := re.search(r"questions read in ([0-9.]+) s", s))), 0.0)
    row = (f"| {args.scale:g} | {rows:,} | {insert:.1f} s | {total:.1f} s | {facts:.1f} s | {count} | "
           f"{total / insert:.0%} |")
    out = Path(args.out)
    old = out.read_text() if out.exists() else ""
    head, _, notes = old.partition("\n\nProbed:")  # the notes below the table are kept as they are
    kept = [r for r in head.splitlines()
            if r.startswith("| ") and not r.startswith("| scale") and not r.startswith(f"| {args.scale:g} |")]
    rows_by_scale = sorted(kept + [row], key=lambda r: float(r.split("|")[1]))
    text = ("# apply's filtered-query probe against the INSERT (issue 30)\n\n"
            "`flock /work/spark.lock .venv/bin/python -m benchmarks.probe_cost --scale S`: TPC-H lineitem at "
            "scale S, 18 columns (two of them FLOAT/DOUBLE), laid out by ship year into 8 partitions sorted by "
            "l_orderkey, local[2], nothing else running. *probe*: the probe's filtered queries on the laid-out "
            "table (one UNION ALL, pushdown on); their truth is counted by the verification's scan, which "
            "reads the whole table anyway. *facts*: the values asked about, from the footers, and one scan for "
            "the zeros and NaN of the FLOAT/DOUBLE columns.\n\n"
            "| scale | rows | INSERT | probe | facts | probes | probe / INSERT |\n"
            "|---:|---:|---:|---:|---:|---:|---:|\n" + "\n".join(rows_by_scale) + "\n" + (f"\nProbed:{notes}" if notes else ""))
    out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()

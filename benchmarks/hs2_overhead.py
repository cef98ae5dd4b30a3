"""Issue 31: what the planner costs a query on the DBA's path, HiveServer2 over a thrift metastore.

    .venv/bin/python -m benchmarks.hs2_overhead [--scale 1] [--rounds 3] [--queries 20]

1. A standalone metastore (thrift) and a Spark Thrift Server on it (``devtools.servers``), on
   loopback and free ports, stopped by PID at the end (and on SIGTERM);
2. TPC-H lineitem (tpchgen-cli) created through HiveServer2 as ``hs2bench.lineitem``, with the row
   groups ``benchmarks.tpch_bench`` uses, and a plain copy ``hs2bench.lineitem_copy`` (``CREATE
   TABLE … AS SELECT``, timed): *the table as loaded*;
3. the advise half of the Q6 variants (``benchmarks.agg_index_bench``'s draw and split) advised by
   ``planner advise --metastore`` and applied by ``planner apply --hiveserver2 … --metastore …``
   (which builds the aggregate index through the server), as a DBA runs them (each a fresh
   process, timed whole);
4. the held-out queries rewritten as ``planner rewrite --metastore`` rewrites them (its own code,
   in this process, the layouts read over thrift: no Spark): the rewrite's own time per query, the
   first one (which reads the layout) and the others;
5. through HiveServer2 (pyhive), in rounds with the set-ups' order rotated from query to query:
   each held-out query as written on the copy, as written on the laid-out table, and as rewritten
   on the laid-out table: the fastest wall time of each, and every answer compared with the copy's;
   then ``EXPLAIN`` of the text as written and as rewritten, in turns: what Spark's parsing and
   planning of the longer text costs (the median of the paired differences).

The rewritten text runs no statement of the planner's at query time: the planner's cost on this
path is the rewrite (once per text, before it is run) and the longer text's planning.
The report goes to ``benchmarks/results/hs2_overhead_sf<scale>.md`` (and ``.json``).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time
from pathlib import Path

from benchmarks.agg_index_bench import (
    ADVISE_SEED,
    MEASURED_SEED,
    SPLIT_SEED,
    _rewrite_sql,
)
from benchmarks.harness import (
    Timings,
    load_average,
    reproduce,
    schedule,
    stamped,
    time_process,
)
from benchmarks.tpch_setup import Config, generated, split_by_template

ROOT = Path(__file__).resolve().parent.parent
DB = "hs2bench"
SETUPS = ("copy", "layout", "rewritten")
LABELS = {"copy": "as written, on the table as loaded (copy)", "layout": "as written, on the laid-out table",
          "rewritten": "rewritten by the planner, on the laid-out table"}


def _cli(*args: str, cwd: Path):
    """A planner command as a fresh process, the way a DBA runs it, timed whole."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), PLANNER_PLAIN="1")
    return time_process([sys.executable, "-m", "planner.cli", *args], cwd=cwd, env=env)


def _rows(result) -> list:
    return sorted((tuple(str(v) for v in r) for r in result), key=repr)


def run(scale: float, state: Path, rounds: int, n_queries: int, log) -> dict:
    from sqlglot import exp

    from benchmarks.builds import copy_sql
    from devtools.servers import (
        SparkThriftServer,
        StandaloneMetastore,
        stop_servers_on_signals,
    )
    from devtools.tpch_data import generate_lineitem
    from hive_integration.metastore.hiveserver2 import HiveServer2Client
    from hive_integration.metastore.layouts import MetastoreLayouts
    from hive_integration.metastore.thrift_client import MetastoreClient
    from planner.cli.apply import read_layout
    from planner.cli.rewrite import process
    from planner.emit.ddl import table_expr

    def drop(name: str) -> str:
        return exp.Drop(tables=[table_expr(name, "spark")], kind="TABLE", exists=True).sql("spark")

    stop_servers_on_signals()
    load = [load_average()]
    data = generate_lineitem(scale, state / "data")
    block = Config().row_group_bytes
    with StandaloneMetastore(state / "metastore") as ms, \
            SparkThriftServer(state / "thrift", metastore_uri=ms.uri, conf={"spark.driver.memory": "4g"}) as ts, \
            HiveServer2Client(ts.host, ts.port) as hs2:
        log(f"metastore {ms.uri}, HiveServer2 {ts.host}:{ts.port}")
        table, copy, src = f"{DB}.lineitem", f"{DB}.lineitem_copy", f"{DB}.lineitem_src"
        hs2.execute(exp.Create(this=exp.to_identifier(DB), kind="DATABASE", exists=True).sql("spark"))
        for t in (table, copy, src):
            hs2.execute(drop(t))
        hs2.execute(exp.Create(this=table_expr(src, "spark"), kind="TABLE", properties=exp.Properties(expressions=[
            exp.FileFormatProperty(this=exp.Var(this="PARQUET")),
            exp.LocationProperty(this=exp.Literal.string(str(data)))])).sql("spark"))
        hs2.execute(f"SET parquet.block.size={int(block)}")
        t = time.perf_counter()
        hs2.execute(copy_sql(src, copy))
        copy_seconds = time.perf_counter() - t
        hs2.execute(copy_sql(copy, table))
        described = hs2.execute(exp.Describe(this=table_expr(table, "spark")).sql("spark"))
        columns = {r[0]: r[1] for r in described if r[0] and not r[0].startswith("#")}
        log(f"{DB}.lineitem and its copy created through HiveServer2 (copy {copy_seconds:.1f} s)")

        wl = generated("q6", 100, ADVISE_SEED, scale, columns)
        adv_idx, _ = split_by_template(wl.queries, SPLIT_SEED)
        measured = generated("q6", 100, MEASURED_SEED, scale, columns)
        _, held = split_by_template(measured.queries, SPLIT_SEED)
        work = state / "work"
        work.mkdir(parents=True, exist_ok=True)
        (work / "workload.sql").write_text("".join(_rewrite_sql(wl.queries[i].sql, table) + ";\n" for i in adv_idx))
        meta = ["--metastore", ms.uri, "--state-dir", str(state / "planner")]
        advised = _cli("advise", str(work / "workload.sql"), "--table", table, "--out-dir", str(work / "advice"), *meta,
                       cwd=work)
        log(f"advised in {advised.seconds:.1f} s")
        # the DBA names the server's metastore beside it: the aggregate index is built through it
        applied = _cli("apply", str(work / "advice"), "--hiveserver2", f"{ts.host}:{ts.port}", "--metastore", ms.uri,
                       cwd=work)
        log(f"applied through HiveServer2 in {applied.seconds:.1f} s")
        pick = read_layout(work / "advice").describe()
        said = [re.sub(r"^(\[[ \d.]+s\] )+", "", line.strip()) for line in (applied.stdout + "\n" + applied.stderr).splitlines()]
        index_note = "; ".join(line for line in said if line.startswith("aggregate index"))

        texts = [_rewrite_sql(measured.queries[i].sql, table) for i in held[:n_queries]]
        on_copy = [_rewrite_sql(measured.queries[i].sql, copy) for i in held[:n_queries]]
        client = MetastoreClient(ms.uri).open()
        try:
            source = MetastoreLayouts(client)
            rewrite_ms, rewritten, from_index = [], [], []
            for k, text in enumerate(texts):
                path = work / f"held_{k:02d}.sql"
                path.write_text(text + ";\n")
                t = time.perf_counter()
                (result,) = process(str(path), source, dialect="hive", database=DB, explain=False)
                rewrite_ms.append((time.perf_counter() - t) * 1000)
                rewritten.append(result.rewritten)
                from_index.append(bool(result.aggregate is not None and result.aggregate.used))
        finally:
            client.close()
        log(f"{len(texts)} held-out queries rewritten: first {rewrite_ms[0]:.1f} ms, "
            f"the others {statistics.median(rewrite_ms[1:]):.1f} ms (median)")

        def text_for(setup: str, k: int) -> str:
            return {"copy": on_copy[k], "layout": texts[k], "rewritten": rewritten[k]}[setup]

        for k in range(len(texts)):  # warm-up: each text once on each set-up
            for s in SETUPS:
                hs2.execute(text_for(s, k))
        timings = Timings()
        for r, k, s in schedule(SETUPS, rounds, list(range(len(texts)))):
            timings.time(s, lambda: _rows(hs2.execute(text_for(s, k))), item=k, round=r)
        first = {x.item: x.value for x in reversed(timings.runs) if x.setup == "copy"}
        wrong = sum(x.value != first[x.item] for x in timings.runs)  # every run's answer against the copy's
        fastest = {(s, k): min(x.seconds for x in timings.runs if x.setup == s and x.item == k)
                   for s in SETUPS for k in range(len(texts))}
        plan_diff = []
        for k in range(len(texts)):
            pair = {}
            for r, _, s in schedule(("layout", "rewritten"), 2 * rounds + 1, start=k):
                t = time.perf_counter()
                hs2.execute(f"EXPLAIN {text_for(s, k)}")
                pair.setdefault(r, {})[s] = time.perf_counter() - t
            plan_diff.append(statistics.median(p["rewritten"] - p["layout"] for p in pair.values()) * 1000)
        load.append(load_average())
    return {"scale": scale, "rounds": rounds, "load_average": load, "copy_seconds": copy_seconds,
            "advise_seconds": advised.seconds, "apply_seconds": applied.seconds, "pick": pick, "index_note": index_note,
            "apply_output": applied.stdout[-3000:], "rewrite_ms": rewrite_ms, "plan_extra_ms": plan_diff,
            "wrong": wrong, "queries": [measured.queries[i].template for i in held[:n_queries]],
            "fastest": {f"{s}:{k}": v for (s, k), v in fastest.items()},
            "changed": sum(a != b for a, b in zip(rewritten, texts)), "from_index": from_index}


def report(fig: dict, command: str) -> str:
    n = len(fig["queries"])
    total = {s: sum(fig["fastest"][f"{s}:{k}"] for k in range(n)) for s in SETUPS}
    rw = fig["rewrite_ms"]
    lines = [f"# The planner on the DBA's path: HiveServer2 over a thrift metastore (SF {fig['scale']:g})", "",
             f"Reproduce: `{command}` (load average {fig['load_average'][0]:.1f} at the start, "
             f"{fig['load_average'][-1]:.1f} at the end; 2 cores, the Thrift Server local[2]).", "",
             "Held-out Q6 variants (the draw and split of `agg_index_bench`), advised with `planner advise "
             "--metastore` and applied with `planner apply --hiveserver2 … --metastore …`; the held-out texts rewritten as "
             "`planner rewrite --metastore` rewrites them (layouts over thrift, no Spark in that process), then "
             "run through HiveServer2 (pyhive). Wall time: the fastest of "
             f"{fig['rounds']} rounds, the set-ups' order rotated from query to query.", "",
             f"- advice: {fig['pick']}",
             *([f"- the apply said of the index: {fig['index_note']}"] if fig.get("index_note") else []),
             f"- `planner advise` {fig['advise_seconds']:.1f} s; `planner apply --hiveserver2` (the whole command) "
             f"{fig['apply_seconds']:.1f} s against a plain copy through HiveServer2 of {fig['copy_seconds']:.1f} s "
             f"({fig['apply_seconds'] / fig['copy_seconds']:.2f}×)",
             f"- {fig['changed']} of {n} texts changed by the rewrite"
             + (f", {sum(fig['from_index'])} of them answered from the aggregate index" if "from_index" in fig else "")
             + f"; {fig['wrong']} wrong answers", "",
             "| the planner's own cost per query | ms |", "|---|---:|",
             f"| the rewrite, first text (reads the layout over thrift) | {rw[0]:.1f} |",
             f"| the rewrite, each further text (median; slowest) | {statistics.median(rw[1:]):.1f} "
             f"({max(rw[1:]):.1f}) |",
             f"| Spark's planning of the rewritten text − of the text as written (`EXPLAIN`, median of paired "
             f"differences; its median over the queries, slowest) | {statistics.median(fig['plan_extra_ms']):.1f} "
             f"({max(fig['plan_extra_ms']):.1f}) |",
             "| statements of the planner's run at query time | 0 |", "",
             "| set-up | wall s (sum of the fastest per query) | vs the copy |", "|---|---:|---:|"]
    for s in SETUPS:
        lines.append(f"| {LABELS[s]} | {total[s]:.2f} | {total['copy'] / total[s]:.2f}× |")
    index = fig.get("from_index") or [False] * n
    lines += ["", "Per query (fastest, s; `index`: the rewrite answers from the aggregate index):", "",
              "| # | template | copy | laid out | rewritten | index |", "|---:|---|---:|---:|---:|---|"]
    for k, t in enumerate(fig["queries"]):
        lines.append(f"| {k} | {t} | " + " | ".join(f"{fig['fastest'][f'{s}:{k}']:.3f}" for s in SETUPS)
                     + f" | {'yes' if index[k] else ''} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--queries", type=int, default=20, help="held-out queries run (a stratified prefix)")
    ap.add_argument("--state-dir", type=Path, default=Path("/tmp/planner-hs2-bench"))
    ap.add_argument("--out-dir", type=Path, default=ROOT / "benchmarks" / "results")
    args = ap.parse_args(argv)
    fig = run(args.scale, args.state_dir, args.rounds, args.queries, stamped())
    name = f"hs2_overhead_sf{args.scale:g}"
    args.out_dir.mkdir(parents=True, exist_ok=True)
    (args.out_dir / f"{name}.json").write_text(json.dumps(fig, indent=2, default=str))
    text = report(fig, reproduce("benchmarks.hs2_overhead", argv))
    (args.out_dir / f"{name}.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

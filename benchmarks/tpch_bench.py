"""Issue #5: measured data read and wall time on TPC-H, against baselines and the lower bound.

One run, on one copy of the data:

1. TPC-H lineitem from tpchgen-cli (SF 1 by default, ``--scale 10`` for SF 10), loaded into the
   Hive Parquet table ``bench.lineitem`` with small row groups (about 400 at SF 1);
2. the three bundled workloads, generated with their seeds (TPC-H templates, Q6 variants,
   ad-hoc), each split per template by ``--seed`` into an advise half and a held-out half;
3. ``advise`` (the planner's own search) on each advise half;
4. every layout of the issue built as its own table (``bench.li_*``) with the planner's SQL, timed
   against a plain CTAS copy;
5. the held-out queries measured on every layout through probes of their lineitem scans
   (``benchmarks.tpch_probe``), rewritten for pruning, with Spark's scan metrics and the median
   wall time of warm runs (``benchmarks.tpch_measure``);
6. the report (``benchmarks.tpch_report``): ``benchmarks/results/tpch_sf<scale>.md``, PNG plots and
   the raw figures as JSON.

    .venv/bin/python -m benchmarks.tpch_bench [--scale 1] [--quick] [--state-dir DIR] [--reuse]

Every measured figure comes from ``hive_integration.metrics.run_measured``; estimates from the cost
model are only ever shown next to them.
"""
from __future__ import annotations

import argparse
import dataclasses
import math
import os
import pickle
import random
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

from planner.advice import advise
from planner.analysis import TableAnalysis, analyze_table
from planner.cnf.values import kind_of_type
from planner.costmodel import baselines
from planner.costmodel.cost import CostModel, CostParams
from planner.layout import Layout, Ordering
from planner.workload import Query, Schema, Workload, parse_workload
from planner.workload_gen import generate

ROOT = Path(__file__).resolve().parent.parent
TABLE = "lineitem"  # the name the workloads use
#: kind -> (queries, generator seed): the same as the checked-in files in sql/ (see sql/README.md)
WORKLOADS = {"tpch": (200, 1), "q6": (100, 2), "adhoc": (100, 3)}
SF1_ROW_GROUP_BYTES = 2_000_000  # parquet.block.size giving ~411 row groups at SF 1 (~14.6k rows each)


@dataclass
class Config:
    scale: float = 1.0
    state_dir: Path = Path("/tmp/planner-tpch-bench")
    out_dir: Path = ROOT / "benchmarks" / "results"
    db: str = "bench"
    seed: int = 5
    workloads: tuple[str, ...] = ("tpch", "q6", "adhoc")
    queries: dict = field(default_factory=lambda: dict(WORKLOADS))  # kind -> (n, generator seed)
    max_queries: int = 100  # held-out queries measured per workload (rows, bytes, files, partitions)
    wall_queries: int = 34  # of those, the ones timed ``runs`` times (TPC-H: 2 per template)
    side_wall_queries: int = 20  # the same for the Q6 and ad-hoc workloads
    runs: int = 3
    sample_rows: int = 200_000
    reuse: bool = False  # reuse tables left by an earlier run with the same layout (builds not timed)
    layouts: tuple[str, ...] | None = None  # only these layout keys (plus the copy and the picks); None: all
    quick: bool = False

    @property
    def name(self) -> str:
        return "tpch_quick" if self.quick else f"tpch_sf{self.scale:g}"

    @property
    def row_group_bytes(self) -> int:
        if self.quick:
            return 64 * 1024  # ~130 row groups at SF 0.01: enough to skip some, cheap to write
        return max(16_384, int(SF1_ROW_GROUP_BYTES * min(self.scale, 1.0)))


def quick_config(state_dir: Path, out_dir: Path) -> Config:
    """A few seconds of work per step: SF 0.01, 34 TPC-H queries, 4 held-out queries measured."""
    return Config(scale=0.01, state_dir=state_dir, out_dir=out_dir, db="bench_quick",
                  queries={"tpch": (34, 1), "q6": (20, 2), "adhoc": (20, 3)}, workloads=("tpch", "adhoc"),
                  max_queries=4, wall_queries=2, side_wall_queries=1, runs=2, sample_rows=20_000, quick=True)


# ---- workloads and the split -----------------------------------------------------------------
def split_by_template(queries: tuple[Query, ...], seed: int) -> tuple[list[int], list[int]]:
    """(advise half, held-out half) of query indices, halved inside every template.

    The held-out half is listed round-robin over the templates (in a seeded order), so any prefix
    of it is stratified too: the caps ``--max-queries`` and ``--wall-queries`` take prefixes.
    Odd-sized templates give their extra query alternately to one half and the other.
    """
    rng = random.Random(seed)
    by_template: dict[str, list[int]] = defaultdict(list)
    for i, q in enumerate(queries):
        by_template[q.template].append(i)
    advise_half: list[int] = []
    held: dict[str, list[int]] = {}
    extra = 0
    for t in sorted(by_template):
        idx = by_template[t][:]
        rng.shuffle(idx)
        k = (len(idx) + extra) // 2
        extra ^= len(idx) % 2
        advise_half += idx[:k]
        held[t] = idx[k:]
    order = sorted(held)
    rng.shuffle(order)
    held_out: list[int] = []
    while any(held[t] for t in order):
        for t in order:
            if held[t]:
                held_out.append(held[t].pop(0))
    return sorted(advise_half), held_out


@dataclass
class WorkloadRun:
    kind: str
    workload: Workload
    advise_idx: list[int]
    held_idx: list[int]  # measured held-out queries (a stratified prefix of the held-out half)
    wall_idx: list[int]
    held_total: int
    analysis: TableAnalysis  # of the advise half
    advice: object
    advise_seconds: float

    def subset(self, idx: list[int]) -> Workload:
        return Workload(f"{self.workload.path}[held-out]", self.workload.dialect,
                        tuple(self.workload.queries[i] for i in idx))


def prepare_workload(kind: str, cfg: Config, columns: dict, stats, params: CostParams, log) -> WorkloadRun:
    n, gen_seed = cfg.queries[kind]
    text = "".join(q + ";\n\n" for q in generate(kind, n, gen_seed, scale_factor=cfg.scale))
    wl = parse_workload(text, f"{kind}_workload.sql", schema=Schema({TABLE: columns}), tables=[TABLE])
    adv_idx, held = split_by_template(wl.queries, cfg.seed)
    wall_cap = cfg.wall_queries if kind == "tpch" else cfg.side_wall_queries
    measured = held[:cfg.max_queries]
    adv_wl = Workload(f"{kind}_workload.sql[advise]", wl.dialect, tuple(wl.queries[i] for i in adv_idx))
    t = time.perf_counter()
    analysis = analyze_table(adv_wl, TABLE, columns)
    advice = advise(adv_wl, analysis, stats, params)
    seconds = time.perf_counter() - t
    log(f"{kind}: {len(wl.queries)} queries, advise on {len(adv_idx)} in {seconds:.1f} s -> "
        f"{advice.result.best.layout.describe()}; measuring {len(measured)} of {len(held)} held out")
    return WorkloadRun(kind, wl, adv_idx, measured, measured[:wall_cap], len(held), analysis, advice, seconds)


def heldout_model(run: WorkloadRun, columns: dict, stats, params: CostParams, extra: list[TableAnalysis]
                  ) -> tuple[Workload, CostModel]:
    """The cost model over the measured held-out queries; derived attributes of the advised
    layouts (``l_commitdate < l_receiptdate``) are known to it even if no held-out query names them."""
    held = run.subset(run.held_idx)
    a = analyze_table(held, TABLE, columns)
    derived = {k: v for x in extra for k, v in x.derived.items()} | dict(a.derived)
    kinds = {k: v for x in extra for k, v in x.kinds.items()} | dict(a.kinds)
    return held, CostModel(replace(a, derived=derived, kinds=kinds), stats, params)


# ---- the layouts of the issue ------------------------------------------------------------------
@dataclass
class Spec:
    key: str  # table suffix: bench.li_<key>
    label: str
    family: str
    layout: Layout | None  # None: the plain CTAS copy (full scan, plain Parquet)
    aliases: list[str] = field(default_factory=list)  # other labels that are this very layout
    advise_cost: tuple[float, float] | None = None  # (rows, overhead) the model gave it on the TPC-H advise half


def _same(a: Layout, b: Layout) -> bool:
    return (a.partitions, a.order, dict(a.derived)) == (b.partitions, b.order, dict(b.derived))


def tpch_specs(advice, stats_table: str) -> list[Spec]:
    """Every layout the issue names, each with and without its best order; duplicates merged."""
    variants = advice.result.variants
    by_strategy: dict[str, list] = defaultdict(list)
    for c in variants:
        by_strategy[c.layout.strategy].append(c)

    def best_of(strategies: list[str]):
        pool = [c for s in strategies for c in by_strategy[s]]
        return min(pool, key=lambda c: c.total) if pool else None

    def family(strategies: list[str]):
        best = best_of(strategies)
        if best is None:
            return None, None
        same = by_strategy[best.layout.strategy]
        plain = next((c for c in same if c.layout.order.method == "none"), None)
        ordered = min((c for c in same if c.layout.order.method != "none"), key=lambda c: c.total, default=None)
        return plain, ordered

    cps = [s for s in by_strategy if s.startswith("cps:")]
    single = [s for s in cps if len(by_strategy[s][0].layout.attributes) == 1]
    multi = [s for s in cps if len(by_strategy[s][0].layout.attributes) > 1]
    months = [s for s in by_strategy if s.startswith("month ranges") or s.startswith("year ranges")]
    families = [("full", "full scan", ["no partitioning"]), ("month", "month ranges", months),
                ("amoeba", "Amoeba upfront", ["amoeba"]), ("amoebaw", "Amoeba weighted", ["amoeba-weighted"]),
                ("cps1", "best single-column CPS", single), ("cpsm", "multi-column CPS", multi),
                ("greedy", "greedy tree", ["greedy-tree"])]
    specs = [Spec("copy", "full scan (plain Parquet, CTAS copy)", "full scan", None)]
    for key, label, strategies in families:
        plain, ordered = family(strategies)
        if plain is not None and key != "full":
            specs.append(Spec(key, f"{label}: {plain.layout.strategy}", label, plain.layout))
        if ordered is not None:
            specs.append(Spec(f"{key}_o", f"{label}: {ordered.layout.strategy}, {ordered.layout.order.describe()}",
                              label, ordered.layout))
    shipdate = replace(baselines.full_scan(stats_table), order=Ordering("sort", ("l_shipdate",)))
    specs.append(Spec("sort_shipdate", "full scan sorted by l_shipdate", "full scan", shipdate))
    return merge_duplicates(specs)


def merge_duplicates(specs: list[Spec]) -> list[Spec]:
    out: list[Spec] = []
    for s in specs:
        twin = next((o for o in out if o.layout is not None and s.layout is not None and _same(o.layout, s.layout)),
                    None)
        if twin is None:
            out.append(s)
        else:
            twin.aliases.append(s.label)
    return out


def pick_spec(specs: list[Spec], pick: Layout, key: str, label: str) -> Spec:
    """The spec that is the planner's pick (an existing one, or a new one appended)."""
    for s in specs:
        if s.layout is not None and _same(s.layout, pick):
            if label not in s.aliases:
                s.aliases.append(label)
            return s
    s = Spec(key, f"{label}: {pick.strategy}, {pick.order.describe()}", label, pick)
    specs.append(s)
    return s


def with_write_hints(layout: Layout, model: CostModel, block_bytes: int) -> Layout:
    """The layout with the write hints ``planner.advice`` gives its pick, so that every layout is
    written alike: ``ceil(partition bytes / target file size)`` files per partition and the
    benchmark's row-group size."""
    row_bytes = model.stats.bytes / max(model.stats.rows, 1)
    sizes = model.partition_rows(layout)
    files = {str(p.id): math.ceil(rows * row_bytes / model.params.target_file_bytes)
             for p, rows in zip(layout.partitions, sizes)}
    hints = {"row_group_rows": model.params.row_group_rows, "parquet_block_size": block_bytes,
             "files_per_partition": {k: v for k, v in files.items() if v > 1}}
    return replace(layout, meta=tuple((dict(layout.meta) | hints).items()))


# ---- the run --------------------------------------------------------------------------------------
@dataclass
class Source:
    table: str
    columns: dict
    stats: object  # TableStats
    params: CostParams
    files: int
    row_groups: int
    bytes: int
    data: Path


def load_source(spark, cfg: Config, stamp) -> Source:
    """Generate the data, load ``<db>.lineitem``, gather its statistics (cached by snapshot)."""
    from benchmarks.tpch_build import footprint
    from hive_integration.statistics import gather_stats, table_schema
    from hive_integration.tpch import generate_lineitem, load_table

    source = f"{cfg.db}.lineitem"
    data = generate_lineitem(cfg.scale, cfg.state_dir / "data")
    spark.sql(f"CREATE DATABASE IF NOT EXISTS {cfg.db}")  # db: our own identifier, not user input
    if not (cfg.reuse and spark.catalog.tableExists(source)):
        stamp(f"loading {data} into {source} (parquet.block.size {cfg.row_group_bytes:,})")
        load_table(spark, data, source, row_group_bytes=cfg.row_group_bytes)
    files, groups, size = footprint(spark, source)
    stats = gather_stats(spark, source, sample_rows=cfg.sample_rows, cache_dir=cfg.state_dir / "stats")
    rows_per_group = max(1, round(stats.rows / max(groups, 1)))
    stamp(f"{source}: {stats.rows:,} rows, {files} files, {groups} row groups (~{rows_per_group:,} rows each), "
          f"{size / 2**20:.0f} MiB")
    return Source(source, table_schema(spark, source), stats, CostParams(row_group_rows=rows_per_group),
                  files, groups, size, data)


def choose_layouts(cfg: Config, runs: dict[str, WorkloadRun]) -> tuple[list[Spec], Spec, dict[str, list[Spec]],
                                                                        list[Spec]]:
    """(TPC-H specs, the pick, the specs measured per other workload, every spec to build)."""
    tp = runs["tpch"]
    specs = tpch_specs(tp.advice, TABLE)
    pick = pick_spec(specs, tp.advice.result.best.layout, "pick", "planner's pick")
    if cfg.layouts is not None:
        specs = [s for s in specs if s.key in ("copy",) + tuple(cfg.layouts) or s is pick]
    by_key = {s.key: s for s in specs}
    everything = list(specs)  # the TPC-H layouts plus the other workloads' own picks
    side: dict[str, list[Spec]] = {}
    for kind in cfg.workloads:
        if kind == "tpch":
            continue
        chosen = [by_key["copy"], by_key.get("sort_shipdate"), by_key.get("month"), pick]
        if kind == "adhoc":
            chosen.append(by_key.get("amoeba"))
        chosen = [s for i, s in enumerate(chosen) if s is not None and all(s is not o for o in chosen[:i])]
        own = pick_spec(everything, runs[kind].advice.result.best.layout, f"{kind}_pick", f"{kind} planner's pick")
        side[kind] = chosen + ([] if any(own is o for o in chosen) else [own])
    return specs, pick, side, everything


def build_all(spark, cfg: Config, src: Source, everything: list[Spec], pick: Spec, hint_model: CostModel,
              stamp) -> tuple[dict, dict]:
    """Every layout as ``<db>.li_<key>``, timed, and the copy and the pick timed twice more."""
    from benchmarks.tpch_build import build_copy, build_layout

    for s in everything:
        cost = hint_model.evaluate(s.layout or baselines.full_scan(TABLE))
        s.advise_cost = (cost.rows, cost.overhead)
        if s.layout is not None:
            s.layout = with_write_hints(s.layout, hint_model, cfg.row_group_bytes)
    builds = {}
    for s in everything:
        table = f"{cfg.db}.li_{s.key}"
        if s.layout is None:
            builds[s.key] = build_copy(spark, src.table, table, cfg.row_group_bytes, reuse=cfg.reuse)
        else:
            builds[s.key] = build_layout(spark, s.layout, src.columns, src.table, table, cfg.row_group_bytes,
                                         reuse=cfg.reuse)
        b = builds[s.key]
        stamp(f"built {table} ({s.label}) in {b.seconds or 0:.1f} s: {b.partitions} partitions, "
              f"{b.files} files, {b.row_groups} row groups")
    # The first builds pay for a cold JIT and ran while other layouts were built; for the target,
    # the CTAS copy and the pick are built again, alternately and twice each, on a warm JVM, and
    # the fastest run of each counts (the same rule for both).
    timings = {"ctas": [builds["copy"].seconds], "pick": [builds[pick.key].seconds]}
    if builds["copy"].seconds is not None and not cfg.quick:
        for _ in range(2):
            again = build_copy(spark, src.table, f"{cfg.db}.li_copy_again", cfg.row_group_bytes)
            timings["ctas"].append(again.seconds)
            again = build_layout(spark, pick.layout, src.columns, src.table, f"{cfg.db}.li_pick_again",
                                 cfg.row_group_bytes)
            timings["pick"].append(again.seconds)
            for t in ("li_copy_again", "li_pick_again"):
                spark.sql(f"DROP TABLE IF EXISTS {cfg.db}.{t}")  # our own names
        builds["copy"] = replace(builds["copy"], seconds=min(timings["ctas"]))
        builds[pick.key] = replace(builds[pick.key], seconds=min(timings["pick"]))
        stamp(f"build times, CTAS: {timings['ctas']}, pick: {timings['pick']}")
    return builds, timings


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
        table = f"{cfg.db}.li_{s.key}"
        tr = measure_table(spark, table, s.layout, src.columns, probes, timed, stamp, warm_up=table not in warmed)
        warmed.add(table)
        est = model.evaluate(replace(s.layout or baselines.full_scan(TABLE), table=TABLE))
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
    load_start = os.getloadavg()
    stamp = lambda msg: log(f"[{time.perf_counter() - started:7.1f}s] {msg}")  # noqa: E731
    src = load_source(spark, cfg, stamp)
    runs = {k: prepare_workload(k, cfg, src.columns, src.stats, src.params, stamp) for k in cfg.workloads}
    specs, pick, side, everything = choose_layouts(cfg, runs)
    builds, build_timings = build_all(spark, cfg, src, everything, pick,
                                      CostModel(runs["tpch"].analysis, src.stats, src.params), stamp)
    analyses = [r.analysis for r in runs.values()]
    warmed: set[str] = set()
    workloads = {kind: measure_workload(spark, cfg, src, wr, specs if kind == "tpch" else side[kind], analyses,
                                        warmed, stamp) for kind, wr in runs.items()}
    return {
        "workloads": workloads, "config": cfg,
        "source": {"table": src.table, "rows": src.stats.rows, "files": src.files, "row_groups": src.row_groups,
                   "bytes": src.bytes, "rows_per_group": src.params.row_group_rows, "data": str(src.data)},
        "specs": everything, "builds": builds, "build_timings": build_timings, "pick": pick,
        "seconds": time.perf_counter() - started, "spark_version": spark.version,
        "load": (load_start, os.getloadavg())}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.tpch_bench", description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=1.0, help="TPC-H scale factor (1; 10 for SF 10)")
    ap.add_argument("--quick", action="store_true", help="SF 0.01 and a handful of queries: a smoke run")
    ap.add_argument("--state-dir", default=None, help="Spark/metastore state and data (default /tmp/planner-tpch-bench)")
    ap.add_argument("--out", default=None, help="results folder (default benchmarks/results; --quick: <state>/results)")
    ap.add_argument("--seed", type=int, default=5, help="seed of the advise/held-out split")
    ap.add_argument("--max-queries", type=int, default=None, help="held-out queries measured per workload (100)")
    ap.add_argument("--wall-queries", type=int, default=None, help="TPC-H held-out queries timed 3 times (34)")
    ap.add_argument("--reuse", action="store_true", help="reuse tables of an earlier run (build times not re-timed)")
    args = ap.parse_args(argv)
    from benchmarks.tpch_report import write_report
    from hive_integration.session import build_spark_session

    state = Path(args.state_dir or ("/tmp/planner-tpch-bench-quick" if args.quick else "/tmp/planner-tpch-bench"))
    out = Path(args.out) if args.out else (state / "results" if args.quick else ROOT / "benchmarks" / "results")
    cfg = quick_config(state, out) if args.quick else Config(scale=args.scale, state_dir=state, out_dir=out)
    cfg = dataclasses.replace(cfg, seed=args.seed, reuse=args.reuse)
    if args.max_queries is not None:
        cfg.max_queries = args.max_queries
    if args.wall_queries is not None:
        cfg.wall_queries = args.wall_queries
    spark = build_spark_session(state, app_name="tpch-bench")
    try:
        results = run(spark, cfg, lambda m: print(m, flush=True))
    finally:
        spark.stop()
    # Kept so the report can be re-rendered without measuring again: python -m benchmarks.tpch_report <file>
    with open(state / f"{cfg.name}.results.pickle", "wb") as f:
        pickle.dump(results, f)
    paths = write_report(results, cfg.out_dir, cfg.name)
    for p in paths:
        print(f"wrote {p}")
    return 0


if __name__ == "__main__":
    # Run the imported module's main, so the pickled results name benchmarks.tpch_bench classes
    # (not __main__ ones) and ``python -m benchmarks.tpch_report`` can load them.
    from benchmarks.tpch_bench import main as _main

    sys.exit(_main())

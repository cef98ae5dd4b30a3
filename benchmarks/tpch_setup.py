"""The TPC-H set-up the lineitem benchmarks share: the table as loaded, the workloads and their
split, the advice, and the layouts compared.

* the data: TPC-H lineitem from tpchgen-cli (SF 1 by default), loaded into the Hive Parquet table
  ``<db>.lineitem`` with small row groups, in the order tpchgen writes it (``l_orderkey``): *the
  table as loaded*, the reference every layout is compared with (``load_source``);
* the three bundled workloads (TPC-H templates, Q6 variants, ad-hoc), each advised on one half
  (split per template by a seed, ``split_by_template``). TPC-H is measured on its other half; Q6
  variants and ad-hoc on the held-out half of a *fresh* draw (``MEASURED_SEEDS``), so figures are
  not tuned to one draw (``prepare_workload``);
* two picks per workload: the default (guarded: no query may read more than 1.2x its rows on the
  table as loaded) and the pick with regressions allowed;
* the layouts compared (``choose_layouts``): the table as loaded, a DBA's sort and month ranges, a
  4-column z-order, Amoeba's tree and the picks, each written with the write hints ``advise`` gives
  its own pick (``with_write_hints``).

``benchmarks.tpch_bench`` measures the held-out queries on them, ``benchmarks.tpch_build`` what
they cost to build, ``benchmarks.tree_key_bench`` and ``benchmarks.page_size_bench`` one of them
written several ways.
"""
from __future__ import annotations

import argparse
import random
import time
from collections import defaultdict
from dataclasses import dataclass, field, replace
from pathlib import Path

from devtools.workload_gen import generate
from planner.advice.ranking import Advice, advise, write_hints
from planner.analysis.table_analysis import TableAnalysis, analyze_table
from planner.costmodel import baselines
from planner.costmodel.cost import CostModel, CostParams
from planner.costmodel.current import is_current
from planner.costmodel.search import clustered_columns
from planner.model.layout import Layout, Ordering
from planner.workload import Query, Schema, Workload, parse_workload

ROOT = Path(__file__).resolve().parent.parent
TABLE = "lineitem"  # the name the workloads use
#: kind -> (queries, generator seed): the same as the checked-in files in sql/ (see sql/README.md)
WORKLOADS = {"tpch": (200, 1), "q6": (100, 2), "adhoc": (100, 3)}
#: kind -> generator seed of the fresh draw whose held-out half is measured (issue #11)
MEASURED_SEEDS = {"q6": 12, "adhoc": 13}
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
    measured_seeds: dict = field(default_factory=lambda: dict(MEASURED_SEEDS))
    max_queries: int = 100  # held-out queries measured per workload (rows, bytes, files, partitions)
    wall_queries: int = 34  # of those, the ones timed ``runs`` times (TPC-H: 2 per template)
    side_wall_queries: int = 20  # the same for the Q6 and ad-hoc workloads
    runs: int = 3
    sample_rows: int = 200_000
    reuse: bool = False  # reuse tables left by an earlier run with the same layout (builds not timed)
    layouts: tuple[str, ...] | None = None  # only these baseline keys (plus the current table and the picks)
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
    workload: Workload  # the workload the measured queries come from (a fresh draw for Q6 and ad-hoc)
    advise_idx: list[int]  # into the advised workload
    held_idx: list[int]  # measured held-out queries (a stratified prefix of the held-out half of ``workload``)
    wall_idx: list[int]
    held_total: int
    analysis: TableAnalysis  # of the advise half
    advice: Advice  # the default, guarded
    allow: Advice  # the same search with regressions allowed
    advise_seconds: float
    generator_seeds: tuple[int, int] = (0, 0)  # (advised draw, measured draw)

    def subset(self, idx: list[int]) -> Workload:
        return Workload(f"{self.workload.path}[held-out]", self.workload.dialect,
                        tuple(self.workload.queries[i] for i in idx))


def generated(kind: str, n: int, seed: int, scale: float, columns: dict) -> Workload:
    text = "".join(q + ";\n\n" for q in generate(kind, n, seed, scale_factor=scale))
    return parse_workload(text, f"{kind}_workload_seed{seed}.sql", schema=Schema({TABLE: columns}), tables=[TABLE])


def prepare_workload(kind: str, cfg: Config, columns: dict, stats, params: CostParams, log) -> WorkloadRun:
    n, gen_seed = cfg.queries[kind]
    wl = generated(kind, n, gen_seed, cfg.scale, columns)
    adv_idx, held = split_by_template(wl.queries, cfg.seed)
    measured_seed = cfg.measured_seeds.get(kind, gen_seed)
    measured_wl = wl if measured_seed == gen_seed else generated(kind, n, measured_seed, cfg.scale, columns)
    if measured_wl is not wl:
        _, held = split_by_template(measured_wl.queries, cfg.seed)
    wall_cap = cfg.wall_queries if kind == "tpch" else cfg.side_wall_queries
    measured = held[:cfg.max_queries]
    adv_wl = Workload(f"{kind}_workload.sql[advise]", wl.dialect, tuple(wl.queries[i] for i in adv_idx))
    t = time.perf_counter()
    analysis = analyze_table(adv_wl, TABLE, columns)
    advice = advise(adv_wl, analysis, stats, params)
    seconds = time.perf_counter() - t
    allow = advice.allowing_regressions()
    # their cost models hold caches the results need not keep
    advice, allow = replace(advice, guard=None), replace(allow, guard=None)
    log(f"{kind}: {len(wl.queries)} queries (seed {gen_seed}), advise on {len(adv_idx)} in {seconds:.1f} s -> "
        f"{advice.result.best.layout.describe()}; allowing regressions -> {allow.result.best.layout.describe()}; "
        f"measuring {len(measured)} of {len(held)} held out (seed {measured_seed})")
    return WorkloadRun(kind, measured_wl, adv_idx, measured, measured[:wall_cap], len(held), analysis, advice, allow,
                       seconds, (gen_seed, measured_seed))


def heldout_model(run: WorkloadRun, columns: dict, stats, params: CostParams, extra: list[TableAnalysis]
                  ) -> tuple[Workload, CostModel]:
    """The cost model over the measured held-out queries; derived attributes of the advised
    layouts (``l_commitdate < l_receiptdate``) are known to it even if no held-out query names them."""
    held = run.subset(run.held_idx)
    a = analyze_table(held, TABLE, columns)
    derived = {k: v for x in extra for k, v in x.derived.items()} | dict(a.derived)
    kinds = {k: v for x in extra for k, v in x.kinds.items()} | dict(a.kinds)
    return held, CostModel(replace(a, derived=derived, kinds=kinds), stats, params)


# ---- the layouts measured ---------------------------------------------------------------------------
@dataclass
class Spec:
    key: str  # table suffix: bench.li_<key> ("current": the table as loaded itself)
    label: str
    family: str
    layout: Layout | None  # None: the table as loaded (bench.lineitem, never rewritten)
    aliases: list[str] = field(default_factory=list)  # other labels that are this very layout
    advise_cost: tuple[float, float] | None = None  # (rows, overhead) the model gave it on the TPC-H advise half

    @property
    def is_current(self) -> bool:
        return self.layout is None


def _same(a: Layout, b: Layout) -> bool:
    return (a.partitions, a.order, dict(a.derived)) == (b.partitions, b.order, dict(b.derived))


def add_spec(specs: list[Spec], key: str, label: str, family: str, layout: Layout | None) -> Spec:
    """The spec for ``layout`` (an existing one when the layout is already there)."""
    if layout is not None and is_current(layout):
        layout = None
    for s in specs:
        if (s.layout is None and layout is None) or (s.layout is not None and layout is not None
                                                    and _same(s.layout, layout)):
            if label != s.label and label not in s.aliases:
                s.aliases.append(label)
            return s
    s = Spec(key, label, family, layout)
    specs.append(s)
    return s


def _variant(advice: Advice, strategy: str, method: str | None = None) -> Layout | None:
    """The cheapest costed variant of ``strategy`` (with an order of ``method``, when given)."""
    pool = [c for c in advice.result.variants if c.layout.strategy == strategy
            and (method is None or c.layout.order.method == method)]
    return min(pool, key=lambda c: c.total).layout if pool else None


def zorder4(analysis: TableAnalysis, stats) -> Layout:
    """A 4-column z-order of the whole table on the TPC-H workload's most filtered columns (the
    issue's "4-column z-order with no workload at all")."""
    from planner.costmodel.ordering import candidate_orderings
    from planner.costmodel.sample import SampleFrame

    sample = SampleFrame(stats.sample, analysis.derived)
    z = [o for o in candidate_orderings(sample, analysis.filter_counts()) if o.method == "zorder"]
    order = max(z, key=lambda o: len(o.columns))
    derived = tuple((c, analysis.derived[c]) for c in order.columns if c in analysis.derived)
    return replace(baselines.full_scan(TABLE), order=order, derived=derived)


def choose_layouts(cfg: Config, runs: dict[str, WorkloadRun], stats) -> tuple[list[Spec], dict[str, list[Spec]]]:
    """(every spec to build, the specs measured per workload).

    TPC-H: the table as loaded, a DBA's sort by ship date and month ranges, the 4-column z-order,
    Amoeba's tree, and the TPC-H picks (default and with regressions allowed). Q6 and ad-hoc: the
    table as loaded, the TPC-H picks, the z-order, and their own picks (ad-hoc also Amoeba's tree,
    whose paper figure is a skip ratio of 0.80 on such queries).
    """
    tp = runs["tpch"]
    specs: list[Spec] = []
    current = add_spec(specs, "current", "table as loaded (l_orderkey order)", "as loaded", None)
    month = next((c.layout.strategy for c in tp.advice.result.variants if c.layout.strategy.startswith("month")), None)
    baselines_ = {
        "sort_shipdate": ("full scan sorted by l_shipdate", "DBA",
                          replace(baselines.full_scan(TABLE), order=Ordering("sort", ("l_shipdate",)))),
        "month": ("month ranges of l_shipdate", "DBA", _variant(tp.advice, month, "none") if month else None),
        "zorder4": ("4-column z-order", "z-order", zorder4(tp.analysis, stats)),
        "amoeba": ("Amoeba's upfront tree (hybrid)", "Amoeba", _variant(tp.advice, "amoeba", "tree")),
    }
    chosen = {}
    for key, (label, family, layout) in baselines_.items():
        if layout is not None and (cfg.layouts is None or key in cfg.layouts):
            chosen[key] = add_spec(specs, key, label, family, layout)
    picks = {}
    for kind, wr in runs.items():
        picks[kind] = add_spec(specs, f"{kind}_pick", f"{kind} pick", "planner", wr.advice.result.best.layout)
        picks[kind + "_allow"] = add_spec(specs, f"{kind}_allow", f"{kind} pick, regressions allowed", "planner",
                                          wr.allow.result.best.layout)
    side = {"tpch": [current, *chosen.values(), picks["tpch"], picks["tpch_allow"]]}
    for kind in runs:
        if kind == "tpch":
            continue
        extra = [chosen.get("amoeba")] if kind == "adhoc" else [chosen.get("sort_shipdate")]
        side[kind] = [current, chosen.get("zorder4"), *extra, picks["tpch"], picks["tpch_allow"], picks[kind],
                      picks[kind + "_allow"]]
    side = {k: [s for i, s in enumerate(v) if s is not None and all(s is not o for o in v[:i])] for k, v in side.items()}
    return specs, side


def with_write_hints(layout: Layout, model: CostModel, block_bytes: int) -> Layout:
    """The layout with the write hints ``planner.advice.ranking`` gives its pick (so that every layout is
    written alike), the benchmark's row-group size and the source's clustered columns."""
    hints = write_hints(layout, model.partition_rows(layout), model.stats, model.params)
    hints |= {"parquet_block_size": block_bytes, "source_clustered": clustered_columns(model)}
    return replace(layout, meta=tuple((dict(layout.meta) | hints).items()))


# ---- the source table ---------------------------------------------------------------------------
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
    import pyarrow.parquet as pq

    from benchmarks.builds import footprint
    from devtools.tpch_data import generate_lineitem, load_table
    from hive_integration.spark.statistics_pass import gather_stats, table_schema

    source = f"{cfg.db}.lineitem"
    data = generate_lineitem(cfg.scale, cfg.state_dir / "data")
    spark.sql(f"CREATE DATABASE IF NOT EXISTS {cfg.db}")  # db: our own identifier, not user input
    # reused only when it holds this scale's rows (another scale's run may share the state dir)
    if not (cfg.reuse and spark.catalog.tableExists(source)
            and spark.table(source).count() == pq.ParquetFile(data).metadata.num_rows):
        stamp(f"loading {data} into {source} (parquet.block.size {cfg.row_group_bytes:,})")
        load_table(spark, data, source, row_group_bytes=cfg.row_group_bytes)
    files, groups, size = footprint(spark, source)
    stats = gather_stats(spark, source, sample_rows=cfg.sample_rows, cache_dir=cfg.state_dir / "stats")
    rows_per_group = max(1, round(stats.rows / max(groups, 1)))
    stamp(f"{source}: {stats.rows:,} rows, {files} files, {groups} row groups (~{rows_per_group:,} rows each), "
          f"{size / 2**20:.0f} MiB; footers read for {sum(f.row_groups is not None for f in stats.data_files or ())} "
          f"files")
    params = CostParams(row_group_rows=rows_per_group)
    if cfg.quick:
        params = tiny_params(params)
    return Source(source, table_schema(spark, source), stats, params, files, groups, size, data)


def tiny_params(params: CostParams) -> CostParams:
    """Cost parameters for a table of a few MB (SF 0.01, the smoke runs): partitions of 32 KiB, files of
    1 MiB, pages of a third of a row group, so a layout still cuts the table (as
    tests/test_estimates_vs_spark)."""
    return replace(params, min_partition_bytes=32 * 1024, target_file_bytes=1 << 20, max_partitions=200,
                   page_rows=min(params.page_rows, max(100, params.row_group_rows // 3)))


def tpch_arguments(module: str, doc: str, result: str, state_dir: str = "/tmp/planner-tpch-bench"
                   ) -> argparse.ArgumentParser:
    """The options every TPC-H build benchmark takes: ``--scale``, ``--rounds``, ``--state-dir`` (by
    default the one ``tpch_bench`` uses, so they share its data and tables) and ``--out`` (by
    default ``benchmarks/results/<result>``, ``{scale}`` filled in by ``result_file``)."""
    ap = argparse.ArgumentParser(prog=f"python -m {module}", description=doc.splitlines()[0])
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--state-dir", default=state_dir, help=f"default {state_dir}")
    ap.add_argument("--out", default=None, help=f"default benchmarks/results/{result.format(scale='<scale>')}")
    ap.set_defaults(result=result)
    return ap


def result_file(args: argparse.Namespace) -> Path:
    """Where the run writes its report: ``--out``, or the benchmark's file in benchmarks/results/."""
    from benchmarks.harness import RESULTS

    return Path(args.out) if args.out else RESULTS / args.result.format(scale=f"{args.scale:g}")


def session_conf(scale: float) -> dict[str, str]:
    """Driver memory and shuffle partitions for ``scale``: SF 1's 4g and 8 are sized for 6 M rows."""
    big = scale >= 5
    return {"spark.driver.memory": "8g" if big else "4g", "spark.sql.shuffle.partitions": "32" if big else "8"}


def layouts_with_twins(spark, cfg: Config, stamp) -> tuple[Source, list[Spec], str]:
    """(source, specs with write hints, the TPC-H pick's key): the layouts ``choose_layouts`` gives
    for the TPC-H workload, plus a Hilbert twin of each z-ordered one; with ``cfg.layouts``, only
    those (and the pick)."""
    src = load_source(spark, cfg, stamp)
    run = prepare_workload("tpch", cfg, src.columns, src.stats, src.params, stamp)
    everything, _ = choose_layouts(replace(cfg, workloads=("tpch",)), {"tpch": run}, src.stats)
    pick = next(s for s in everything if s.key == "tpch_pick" or "tpch pick" in s.aliases)
    model = CostModel(run.analysis, src.stats, src.params)
    specs = []
    for s in everything:
        if s.layout is None:
            continue
        s.layout = with_write_hints(s.layout, model, cfg.row_group_bytes)
        specs.append(s)
        if s.layout.order.method == "zorder":
            twin = replace(s.layout, order=replace(s.layout.order, method="hilbert"))
            specs.append(Spec(f"{s.key}_h", s.label.replace("zorder(", "hilbert("), s.family, twin))
    if cfg.layouts is not None:
        specs = [s for s in specs if s.key in cfg.layouts or s.key == pick.key]
    return src, specs, pick.key

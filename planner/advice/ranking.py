"""Turn a plan search into advice: the ranking, the winner explained per query, and layout.json.

The table as it is now is always the first row of the ranking. Every contender is guarded
against it (``planner.advice.guard``) on the workload and on the robustness set; the pick is
the best contender no query regresses on (possibly the table as it is: then there is nothing to
apply), unless ``CostParams.allow_regressions``. Layouts are ranked by the time the workload
takes (``planner.costmodel.timing``), with rows read beside it. The report shows the default
(guarded) pick and the pick with regressions allowed side by side, and the queries that decide
between them: those the faster layout would make noticeably slower than today.

Pure: it takes an analysed workload and statistics, and returns values and text.
"""
from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, replace
from typing import Callable, Sequence

import numpy as np
import pyarrow.compute as pc
import sqlglot
from sqlglot import exp

from planner.advice.guard import Guard
from planner.advice.index_choice import index_line, with_aggregate_index
from planner.analysis.table_analysis import TableAnalysis
from planner.costmodel import baselines
from planner.costmodel.cost import CostModel, CostParams, LayoutCost
from planner.costmodel.current import is_current
from planner.costmodel.robustness import (
    probe_columns,
    range_queries,
    robustness_analysis,
)
from planner.costmodel.search import Scorer, SearchResult, clustered_columns, search
from planner.costmodel.statistics import TableStats
from planner.costmodel.tree_order import tie_columns
from planner.model.layout import Layout, with_generation
from planner.model.write_plan import DEFAULT_SPLIT_BYTES, write_plan
from planner.pruning.hits import hit_matrix
from planner.semantics.kinds import Kind
from planner.workload import Workload


@dataclass(frozen=True)
class Advice:
    workload: Workload
    analysis: TableAnalysis
    stats: TableStats
    result: SearchResult
    full_scan_rows: float
    full_scan_bytes: float
    matching_rows: float
    params: CostParams = CostParams()
    guard: Guard | None = None
    clustered: tuple[str, ...] = ()  # columns the table is clustered on now (write_plan keeps their runs)

    @property
    def current_cost(self) -> LayoutCost | None:
        return self.result.current

    @property
    def current_seconds(self) -> float:
        cur = self.result.current
        return cur.seconds if cur is not None else 0.0

    @property
    def current_rows(self) -> float:
        cur = self.result.current
        return cur.rows if cur is not None else self.full_scan_rows

    @property
    def keeps_current(self) -> bool:
        """The pick is the table as it is: nothing to apply."""
        return is_current(self.result.best.layout)

    @property
    def best_new(self) -> Layout | None:
        """The best layout other than the table as it is (what a re-layout moves toward), if any,
        as it is recorded (``recorded``): a re-layout writes it with the same hints apply would."""
        cost = next((c for c in self.result.ranked if not is_current(c.layout)), None)
        return None if cost is None else self.recorded(cost)

    def allowing_regressions(self) -> "Advice":
        """This advice as ``--allow-regressions`` gives it (the search judged every variant already)."""
        params = replace(self.params, allow_regressions=True)
        result = self.result.unguarded()
        if self.guard is not None:
            score = Scorer(self.guard.model, self.guard, params.robustness_weight)
            result = written_where_read(result, score, self.stats, params, self.clustered)
        return replace(self, result=result, params=params)

    @property
    def layout(self) -> Layout:
        """The winner as it is recorded (``recorded``)."""
        return self.recorded(self.result.best)

    def recorded(self, cost: LayoutCost) -> Layout:
        """``cost``'s layout as it is recorded: partition ids of its own generation
        (``planner.model.layout``), the Spark types of the columns its regions name, the session it was
        advised under, and the write hints the cost model assumed (row group and page rows, files
        per partition). Written without those hints, Parquet's defaults (20,000-row pages, 128 MB
        row groups) make a layout read more than it was priced at (the drift replay on Spark,
        ``benchmarks/results/drift_replay_sf1.md``)."""
        types = tuple((a, self.analysis.types[a]) for a in cost.layout.attributes if a in self.analysis.types)
        best = with_generation(replace(cost.layout, types=types, settings=self.analysis.settings))
        meta = dict(best.meta) | {
            "workload": self.workload.path,
            "workload_fingerprint": self.workload.fingerprint(),
            "statistics_snapshot": self.stats.snapshot,
            "table_rows": self.stats.rows,
            "estimated_rows_read": round(cost.rows),
            "estimated_full_scan_rows": round(self.full_scan_rows),
        } | write_hints(best, cost.partition_rows, self.stats, self.params) | {"source_clustered": list(self.clustered)}
        return replace(best, meta=tuple(meta.items()))


def advise(workload: Workload, analysis: TableAnalysis, stats: TableStats, params: CostParams = CostParams(),
           log: Callable[[str], None] | None = None) -> Advice:
    aggregates = _aggregating_scans(workload, analysis) if params.aggregation_factor else None
    model = CostModel(analysis, stats, params, query_has_aggregation=aggregates)
    guard, clustered = None, ()
    if stats.rows == 0:
        # An empty table has no rows to place: every layout reads nothing, and the sample gives
        # no boundaries to cut at. Keep it unpartitioned rather than guess from no data.
        only = model.evaluate(baselines.full_scan(analysis.table))
        result = SearchResult((only,), (only,), ())
        analysis = replace(analysis, notes=analysis.notes + (
            "the table is empty: it is left unpartitioned; advise again once it holds data",))
    else:
        clustered = tuple(clustered_columns(model))
        guard = make_guard(model, workload, clustered)
        result = search(model, log, guard=guard, allow_regressions=params.allow_regressions,
                        robustness_weight=params.robustness_weight)
        result = written_where_read(result, Scorer(model, guard, params.robustness_weight), stats, params, clustered)
        analysis = replace(analysis, notes=analysis.notes + bucketing_notes(analysis))
        result = with_aggregate_index(result, model, workload, guard, params.allow_regressions, log)
        source = model.current().source
        if source != "footers":
            analysis = replace(analysis, notes=analysis.notes + (
                f"the table as it is was priced from {source} (its Parquet footers could not be read): "
                "its estimate, and so the guard, is approximate",))
    full_rows = model.full_scan_rows()
    full_bytes = float(model.weights @ (np.full(len(model.scans), stats.rows) * model.scan_width))
    return Advice(workload, analysis, stats, result, full_rows, full_bytes, float(model.matching_rows().sum()),
                  params, guard, clustered)


def bucketing_notes(analysis: TableAnalysis) -> tuple[str, ...]:
    """What a co-partitioned (bucketed) layout on the join keys would buy, priced for Spark.

    Hive on Tez joins two tables bucketed alike on the key without a shuffle (bucket map join,
    sort-merge-bucket join). Spark 4 reads a Hive table's buckets as plain files: Hive buckets by
    its own hash, Spark by murmur3, and Spark does not use Hive's bucketing for joins or
    aggregations (SPARK-19256, still open), so on Spark the layout saves no shuffle and costs a
    sorted write; it is priced at no gain and not offered as a contender."""
    keys = sorted({c.path.hops[0].column for c in analysis.join_columns() if c.path.hops})
    if not keys:
        return ()
    return (f"joins on {', '.join(keys)}: a layout bucketed on {'it' if len(keys) == 1 else 'them'} (CLUSTERED BY) "
            "would let Hive on Tez join without a shuffle, but Spark 4 does not use a Hive table's buckets for joins "
            "(SPARK-19256): on Spark it saves nothing, so it is not offered",)


def written_where_read(result: SearchResult, score: Scorer, stats: TableStats, params: CostParams,
                       clustered: tuple[str, ...] = ()) -> SearchResult:
    """The search's result, its pick written without a shuffle when that costs the workload little.

    An ordered layout is shuffled so that each partition holds one sorted run, the cost model's
    assumption (``planner.model.write_plan``). Written where its rows are read instead, each
    partition holds one run per input split, and the build is about a copy. The pick takes that
    write (hint ``write_runs``, which the model prices and the write plan honours) when it is
    still allowed by the guard and its score grows by at most ``local_write_tolerance``.
    """
    best = result.best
    layout = best.layout
    splits = math.ceil(stats.bytes / DEFAULT_SPLIT_BYTES)
    if is_current(layout) or layout.order.method == "none" or splits <= 1:
        return result

    def hinted(extra: dict) -> Layout:
        meta = dict(layout.meta) | write_hints(layout, best.partition_rows, stats, params) | extra | {
            "source_clustered": list(clustered)}
        return replace(layout, meta=tuple(meta.items()))

    if not write_plan(hinted({})).shuffle or write_plan(hinted({"write_runs": splits})).shuffle:
        return result  # no shuffle to save, or too many files without one
    local = score(replace(layout, meta=tuple((dict(layout.meta) | {"write_runs": splits}).items())))
    if not (local.allowed or params.allow_regressions) or \
            local.score > best.score * (1 + params.local_write_tolerance):
        return result
    return replace(result, chosen=local, ranked=tuple(local if c is best else c for c in result.ranked))


def make_guard(model: CostModel, workload: Workload, clustered: Sequence[str] | None = None) -> Guard:
    """The guard over the workload's scans and the robustness set of the model's table: ranges on
    the columns the workload filters, those the user names, and those the table is clustered on
    now (its load order serves lookups no workload file may show, and a layout must not lose them
    unnoticed)."""
    clustered = clustered_columns(model) if clustered is None else clustered
    named = (*model.params.robustness_columns, *clustered)
    queries = range_queries(model.sample, model.kinds, probe_columns(model.analysis, model.sample, named))
    robust = model.sibling(robustness_analysis(model.analysis, queries))
    labels = [workload.queries[s.query].label for s in model.scans]
    p = model.params
    return Guard(model, robust, queries, labels, p.guard_threshold, p.guard_slack_seconds, p.guard_slack_share)


def _aggregating_scans(workload: Workload, analysis: TableAnalysis) -> list[bool]:
    """Per scan: does its query aggregate (an aggregate function or GROUP BY)? CPS's g(q)."""
    memo: dict[int, bool] = {}
    for s in analysis.scans:
        if s.query not in memo:
            tree = sqlglot.parse_one(workload.queries[s.query].sql, read=workload.dialect)
            memo[s.query] = tree.find(exp.AggFunc, exp.Group) is not None
    return [memo[s.query] for s in analysis.scans]


def write_hints(layout: Layout, partition_rows, stats: TableStats, params: CostParams) -> dict:
    """How ``layout`` must be written for the cost model's assumptions to hold: row groups of
    ``row_group_rows`` rows and ``ceil(partition bytes / target file size)`` files per partition.
    The estimated rows per partition (``partition_rows``, in the layout's order) go along, for
    ``planner explain``."""
    row_bytes = stats.bytes / max(stats.rows, 1)
    files = {str(p.id): math.ceil(rows * row_bytes / params.target_file_bytes)
             for p, rows in zip(layout.partitions, partition_rows)}
    hints = {"row_group_rows": params.row_group_rows, "page_rows": params.page_rows,
             "table_bytes": stats.bytes,  # sizes the write plan (planner.model.write_plan)
             "files_per_partition": {k: v for k, v in files.items() if v > 1},
             "partition_rows": {str(p.id): round(rows) for p, rows in zip(layout.partitions, partition_rows)}}
    ranges = tie_ranges(layout, stats)
    return hints | ({"tie_ranges": ranges} if ranges else {})


def _days(v) -> int:
    d = v if isinstance(v, dt.date) else dt.date.fromisoformat(str(v))
    return (d - dt.date(1970, 1, 1)).days if not isinstance(d, dt.datetime) else (d.date() - dt.date(1970, 1, 1)).days


def tie_ranges(layout: Layout, stats: TableStats) -> dict:
    """``{column: [lo, hi, kind]}`` for a tree order's integer and date tie columns (dates as days
    since 1970-01-01): the Spark writer folds the first into its one sort key
    (``planner.emit.tree_order_sql.packed_tree_key``). The range is the Parquet footers' (the whole
    table), else the metastore's, else the sample's: any range keeps the rows correct, a tight one
    keeps them in order."""
    out = {}
    for name in tie_columns(layout.order):
        c = stats.column(name)
        if c is None or c.kind not in (Kind.INTEGER, Kind.DATE):
            continue
        bounds = _footer_range(stats, name) or (c.min, c.max)
        if None in bounds and name in stats.sample.column_names:
            bounds = pc.min_max(stats.sample[name]).values()
            bounds = tuple(b.as_py() for b in bounds)
        try:
            lo, hi = (int(v) if c.kind is Kind.INTEGER else _days(v) for v in bounds)
        except (TypeError, ValueError, OverflowError, AttributeError):
            continue  # no range, or a bound of another type than the column's: the plain sort
        out[name] = [lo, hi, c.kind.value]
    return out


def _footer_range(stats: TableStats, column: str) -> tuple | None:
    lows, highs = [], []
    for f in stats.data_files or ():
        for g in f.row_groups or ():
            chunk = g.columns.get(column)
            if chunk is not None and chunk.min is not None and chunk.max is not None:
                lows.append(chunk.min)
                highs.append(chunk.max)
    try:
        return (min(lows), max(highs)) if lows else None
    except TypeError:
        return None


def _fmt(n: float) -> str:
    for unit, div in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(n) >= div:
            return f"{n / div:.2f}{unit}"
    return f"{n:.0f}"


def order_text(layout: Layout) -> str:
    """How rows are ordered inside partitions (and the bloom filters), short enough for a terminal line."""
    from planner.costmodel.bloom import hinted

    if is_current(layout):
        return "as stored"
    if layout.order.method == "tree":
        from planner.costmodel.tree_order import describe
        text = describe(layout.order)
    else:
        text = layout.order.describe()
    filters = hinted(layout)
    return text + (f", bloom({', '.join(filters)})" if filters else "")


def describe_layout(layout: Layout) -> str:
    return f"{layout.strategy}: {layout.cut_text()}, order {order_text(layout)}"


def ranking_rows(advice: Advice) -> list[dict]:
    """One row per contender, the table as it is first: what the search ranks by (``score`` =
    ``seconds`` + ``robustness_seconds``), the rows read beside it, and the guard's verdict."""
    out = []
    best = advice.result.best
    for c in advice.result.ranked:
        v = c.verdict
        out.append({
            "strategy": c.layout.strategy,
            "partitions": c.layout.partition_count,
            "order": order_text(c.layout),
            "seconds": round(c.seconds, 3),
            "robustness_seconds": round(c.robustness, 3),
            "score": round(c.score, 3),
            "rows_read": round(c.rows),
            "overhead_rows": round(c.overhead),
            "bytes_read": round(c.bytes),
            "gain_vs_full_scan": round(advice.full_scan_rows / max(c.rows, 1.0), 2),
            "speedup_vs_current": round(advice.current_seconds / max(c.seconds, 1e-9), 2),
            "read_over_matching": round(c.rows / max(advice.matching_rows, 1.0), 2),
            "current": is_current(c.layout),
            "pick": c is best,
            "regressions": None if v is None else len(v.regressions),
            "worst_ratio": None if v is None else round(v.worst, 2),
        })
    return out


def regressions(cost: LayoutCost, limit: int | None = None) -> list[dict]:
    """The queries ``cost``'s layout would make noticeably slower than today, worst first."""
    if cost.verdict is None:
        return []
    return [{"query": r.query, "current_seconds": round(r.current, 3), "seconds": round(r.seconds, 3),
             "ratio": round(r.ratio, 2), "current_rows": round(r.current_rows), "rows": round(r.rows)}
            for r in cost.verdict.regressions[:limit]]


def per_template(advice: Advice, cost: LayoutCost) -> list[dict]:
    rows: dict[str, dict] = {}
    for sc in cost.per_scan:
        q = advice.workload.queries[sc.query]
        r = rows.setdefault(q.template, {"template": q.template, "name": q.label, "statements": set(), "scans": 0,
                                         "seconds": 0.0, "rows_read": 0.0, "bytes_read": 0.0})
        r["statements"].add(q.number)
        r["scans"] += 1
        r["seconds"] += sc.seconds
        r["rows_read"] += sc.rows
        r["bytes_read"] += sc.bytes
    for r in rows.values():  # a shape many statements share: named by its first, counted
        n = len(r.pop("statements"))
        if n > 1:
            r["name"] += f" and {n - 1} like it"
    return sorted(rows.values(), key=lambda r: -r["rows_read"])


def explain_winner(advice: Advice, limit: int = 40) -> list[str]:
    cost = advice.result.best
    layout = cost.layout
    regions = [p.conditions for p in layout.partitions]
    hits = hit_matrix(advice.analysis.scans, regions, advice.analysis.kinds)
    lines = []
    for i, scan in enumerate(advice.analysis.scans[:limit]):
        q = advice.workload.queries[scan.query]
        used = [a for a in scan.sets if a in layout.attributes]
        why = ("pruned by " + ", ".join(f"{a} IN {scan.sets[a]}" for a in used)) if used and hits[i].sum() < len(
            regions) else "no predicate on the partition attributes: reads every partition"
        lines.append(f"  {q.label}, {scan.alias}: {int(hits[i].sum())}/{len(regions)} "
                     f"partitions, ~{_fmt(cost.per_scan[i].rows)} rows; {why}")
    if len(advice.analysis.scans) > limit:
        lines.append(f"  … {len(advice.analysis.scans) - limit} more scans (see --format json)")
    return lines


def _guard_cell(r: dict) -> str:
    if r["regressions"] is None:
        return "-"
    return "ok" if r["regressions"] == 0 else f"{r['regressions']} worse"


def _seconds(t: float) -> str:
    return f"{t:.2f}s" if t < 100 else f"{t:.0f}s"


def advice_text(advice: Advice) -> str:
    s = advice.stats
    p = advice.params
    lines = [f"table {s.table}: {s.rows:,} rows, {_fmt(s.bytes)}B in {s.files} files; sample {s.sample.num_rows:,} rows",
             f"workload {advice.workload.path}: {len(advice.workload.queries)} queries, "
             f"{len(advice.analysis.scans)} scans of {s.table}",
             f"as it is the workload takes ~{_seconds(advice.current_seconds)} and reads {_fmt(advice.current_rows)} rows "
             f"(a full scan per query: {_fmt(advice.full_scan_rows)} rows); the predicates match ~"
             f"{_fmt(advice.matching_rows)}",
             f"ranked by estimated time (partitions, files, row groups, rows and bytes each query reads; "
             f"{p.time.source}) + robustness (the time ranges on any column would take, weighted "
             f"{p.robustness_weight:g}); guard: {_guard_rule(advice)}"
             + (" (regressions allowed)" if p.allow_regressions else ""),
             "",
             f"{'#':>3}  {'strategy':<36} {'parts':>5}  {'order':<40} {'est. time':>9} {'speedup':>7} "
             f"{'rows read':>9} {'read/match':>10} {'robust':>7} {'guard':>9}"]
    for i, r in enumerate(ranking_rows(advice)):
        mark = "now" if r["current"] else str(i)
        mark = ("*" if r["pick"] else "") + mark
        lines.append(f"{mark:>3}  {r['strategy'][:36]:<36} {r['partitions']:>5}  {r['order'][:40]:<40} "
                     f"{_seconds(r['seconds']):>9} {r['speedup_vs_current']:>6.2f}x {_fmt(r['rows_read']):>9} "
                     f"{r['read_over_matching']:>9}x {_seconds(r['robustness_seconds']):>7} {_guard_cell(r):>9}")
    best = advice.result.best
    lines += ["", "* = the pick; 'now' = the table as it is; speedup = est. time as it is / est. time; guard 'N worse': "
              f"queries that would get noticeably slower than today (not advised{'' if not p.allow_regressions else ' by default'})"]
    if advice.keeps_current:
        lines += ["", "winner: the table as it is: no contender is faster without making some query noticeably slower "
                  "than today; nothing to apply (--allow-regressions to trade)"]
    else:
        lines += ["", f"winner: {describe_layout(best.layout)}"]
    index = index_line(best.layout)
    if index:
        lines.append(index)
    lines += _pick_lines(advice)
    lines += _regression_lines(advice)
    lines += ["per query (winner; statements of one shape together):"]
    for r in per_template(advice, best)[:25]:
        lines.append(f"  {r['name'][:70]:<70} {r['scans']:>5} scans  {_seconds(r['seconds']):>8}  "
                     f"{_fmt(r['rows_read']):>10} rows  {_fmt(r['bytes_read']):>10}B")
    lines += ["", "why each query reads what it reads (winner):"] + explain_winner(advice)
    for note in advice.analysis.notes:
        lines.append(f"note: {note}")
    return "\n".join(lines)


def _guard_rule(advice: Advice) -> str:
    slack = advice.guard.slack if advice.guard is not None else advice.params.guard_slack_seconds
    return (f"no query takes more than {advice.params.guard_threshold:g}x its time on the table as it is and more "
            f"than {slack:.2g}s longer")


def guarded_and_allowed(advice: Advice) -> tuple[LayoutCost, LayoutCost, list[dict]]:
    """The default pick, the pick with regressions allowed, and the queries that decide between
    them: those the allowed pick makes noticeably slower than today, worst first."""
    allowed = advice if advice.params.allow_regressions else advice.allowing_regressions()
    guarded = advice.result.judged(False).best if advice.params.allow_regressions else advice.result.best
    return guarded, allowed.result.best, regressions(allowed.result.best)


def _pick_lines(advice: Advice, limit: int = 8) -> list[str]:
    if advice.guard is None:
        return []
    guarded, allowed, deciding = guarded_and_allowed(advice)
    if allowed.layout == guarded.layout:
        return ["", "the guard costs nothing here: the fastest layout makes no query noticeably slower than today"]
    out = ["", f"{'':<22} {'layout':<60} {'est. time':>9} {'rows read':>9}",
           f"{'default (guarded)':<22} {describe_layout(guarded.layout)[:60]:<60} {_seconds(guarded.seconds):>9} "
           f"{_fmt(guarded.rows):>9}",
           f"{'--allow-regressions':<22} {describe_layout(allowed.layout)[:60]:<60} {_seconds(allowed.seconds):>9} "
           f"{_fmt(allowed.rows):>9}"]
    if deciding:
        out.append(f"what decides between them: {len(deciding)} queries the faster layout makes noticeably slower:")
        out += [f"  {r['query']}: {_seconds(r['current_seconds'])} -> {_seconds(r['seconds'])} "
                f"({_fmt(r['current_rows'])} -> {_fmt(r['rows'])} rows)" for r in deciding[:limit]]
    return out


def _regression_lines(advice: Advice, limit: int = 10) -> list[str]:
    """The winner's regressions (when they were allowed)."""
    best = advice.result.best
    out = []
    if best.verdict is not None and best.verdict.regressions:
        out.append(f"queries that get noticeably slower under the winner than today ({len(best.verdict.regressions)}):")
        out += [f"  {r['query']}: {_seconds(r['current_seconds'])} -> {_seconds(r['seconds'])} ({r['ratio']}x; "
                f"{_fmt(r['current_rows'])} -> {_fmt(r['rows'])} rows)" for r in regressions(best, limit)]
    return out + [""] if out else [""]


def advice_json(advice: Advice) -> dict:
    best = advice.result.best
    return {
        "table": advice.stats.table,
        "rows": advice.stats.rows,
        "bytes": advice.stats.bytes,
        "workload": advice.workload.path,
        "queries": len(advice.workload.queries),
        "full_scan_rows": round(advice.full_scan_rows),
        "matching_rows": round(advice.matching_rows),
        "current_seconds": round(advice.current_seconds, 3),
        "time_model": advice.params.time.to_json(),
        "guard": _guard_rule(advice),
        "ranking": ranking_rows(advice),
        "keeps_current": advice.keeps_current,
        "winner": {
            "strategy": best.layout.strategy,
            "regressions": regressions(best),
            "per_template": per_template(advice, best),
            "per_scan": [
                {"statement": advice.workload.queries[sc.query].number, "seconds": round(sc.seconds, 4),
                 "rows_read": round(sc.rows), "bytes_read": round(sc.bytes), "partitions_read": sc.partitions,
                 "files_read": round(sc.files, 1), "row_groups_read": round(sc.row_groups, 1)}
                for sc in best.per_scan
            ],
        },
        "timings": dict(advice.result.timings),
    }

"""Drift benchmark (issue 15): static layout vs full re-advise vs partial re-layout, on the model.

1. TPC-H lineitem (tpchgen-cli, SF 1 by default) is sampled straight from its Parquet file (no
   Spark: this is a replay on the cost model).
2. The workload drifts over windows of ``--window`` queries: Q6/Q14/Q15/Q1 (ship-date ranges),
   then Q12/Q19/Q10 (ship modes, receipt dates, quantities, return flags), then ad-hoc 10 % ranges
   on a random column. Every strategy starts from the layout advised on the first window.
3. ``planner.advice.drift.replay`` prices every step's queries (``--step`` of them) on each strategy's
   layout and the rows each switch rewrites (c = ``--write-cost``). Every strategy decides on the
   last ``--window`` queries; full re-advise after every window, partial re-layout after every step.
4. The ¼-drift case: the layout advised on ship-date queries, then a window that filters
   ``l_quantity`` on the last quarter of the ship dates only; the partial re-layout's rows
   rewritten against the table.

Writes ``benchmarks/results/drift.md`` (and ``drift.json``, ``drift.png``), or ``drift_quick``
with ``--quick`` (SF 0.01, small windows).

    .venv/bin/python -m benchmarks.drift_bench [--scale 1] [--window 40] [--step 10] [--quick]
"""
from __future__ import annotations

import argparse
import pickle
import random
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from benchmarks.harness import RESULTS, default_first, load_average, markdown_table, write_result
from devtools.tpch_data import generate_lineitem
from devtools.workload_gen.adhoc import adhoc_workload
from devtools.workload_gen.tpch import tpch_workload
from planner.advice.drift import Strategy, hindsight, replay
from planner.advice.held_out import judged_halves, validated
from planner.advice.ranking import advise
from planner.advice.relayout_plan import model_for, plan_relayout
from planner.analysis.table_analysis import analyze_table
from planner.costmodel.cost import CostModel, CostParams
from planner.costmodel.statistics import ColumnStats, TableStats
from planner.workload import Schema, parse_workload

ROOT = Path(__file__).resolve().parent.parent
TABLE = "lineitem"
PHASES = (("ship dates", ("q06", "q14", "q15", "q01")), ("modes and receipts", ("q12", "q19", "q10")),
          ("ad-hoc", None))
ADVICE_CACHE = ROOT / ".planner" / "drift-advice.pickle"
TARGETS = {"vs static": 0.7, "vs full re-advise": 0.9, "quarter drift rewritten / table": 0.35}


def _spark_type(t: pa.DataType) -> str:
    if pa.types.is_decimal(t):
        return f"decimal({t.precision},{t.scale})"
    if pa.types.is_date(t):
        return "date"
    if pa.types.is_integer(t):
        return "bigint" if t.bit_width == 64 else "int"
    if pa.types.is_floating(t):
        return "double"
    return "string"


def table_stats(path: Path, sample_rows: int, seed: int = 7) -> TableStats:
    """Row count, widths from the footer, and a uniform sample read row group by row group."""
    f = pq.ParquetFile(path)
    md = f.metadata
    rows = md.num_rows
    sizes: dict[str, int] = {}
    for g in range(md.num_row_groups):
        rg = md.row_group(g)
        for c in range(rg.num_columns):
            name = rg.column(c).path_in_schema.lower()
            sizes[name] = sizes.get(name, 0) + rg.column(c).total_compressed_size
    rng = np.random.default_rng(seed)
    frac = min(1.0, sample_rows / max(rows, 1))
    parts = []
    for g in range(md.num_row_groups):
        t = f.read_row_group(g)
        t = t.cast(pa.schema([pa.field(x.name, pa.string() if pa.types.is_string_view(x.type) else x.type)
                              for x in t.schema]))  # Spark hands strings over as plain strings too
        keep = np.flatnonzero(rng.random(t.num_rows) < frac)
        parts.append(t.take(pa.array(keep)))
    sample = pa.concat_tables(parts)
    sample = sample.rename_columns([c.lower() for c in sample.column_names])
    cols = tuple(ColumnStats(n, _spark_type(sample.schema.field(n).type), sizes.get(n, 0) / rows)
                 for n in sample.column_names)
    return TableStats(TABLE, rows, path.stat().st_size, cols, sample, snapshot=f"{path.name}:{rows}")


def _load_cache() -> dict:
    if not ADVICE_CACHE.exists():
        return {}
    with open(ADVICE_CACHE, "rb") as f:
        return pickle.load(f)  # our own file, written by _save_cache


def _save_cache(cache: dict) -> None:
    ADVICE_CACHE.parent.mkdir(parents=True, exist_ok=True)
    with open(ADVICE_CACHE, "wb") as f:
        pickle.dump(cache, f)


def windows(count: int, size: int, seed: int, scale: float) -> list[tuple[str, str]]:
    """(phase, SQL text) per window; phases split the windows in three, the ad-hoc one last."""
    out = []
    per = max(1, count // len(PHASES))
    for i in range(count):
        phase, templates = PHASES[min(i // per, len(PHASES) - 1)]
        if templates is None:
            qs = adhoc_workload(size, seed + i, scale_factor=scale)
        else:
            qs = tpch_workload(size, seed + i, templates=templates, weights=[1.0] * len(templates))
        out.append((phase, "".join(q + ";\n" for q in qs)))
    return out


def quarter_drift(stats: TableStats, columns: dict, params: CostParams, size: int, seed: int,
                  write_cost: float) -> dict:
    """Advise on ship-date queries, then drift to quantity filters on the last quarter of dates."""
    rng = random.Random(seed)
    base_wl = parse_workload("".join(q + ";\n" for q in tpch_workload(size, seed, templates=("q06", "q14"))),
                             "ship-dates.sql", schema=Schema({TABLE: columns}), tables=[TABLE])
    base = advise(base_wl, analyze_table(base_wl, TABLE, columns), stats, params).best_new
    dates = sorted(stats.sample.column("l_shipdate").to_pylist())
    cut = dates[int(len(dates) * 0.75)]
    text = "".join(f"SELECT sum(l_extendedprice) FROM lineitem WHERE l_shipdate >= DATE '{cut}' "
                   f"AND l_quantity = {rng.randint(1, 50)};\n" for _ in range(size))
    wl = parse_workload(text, "drift.sql", schema=Schema({TABLE: columns}), tables=[TABLE])
    analysis = analyze_table(wl, TABLE, columns)
    model = CostModel(analysis, stats, params)
    target = advise(wl, analysis, stats, params).best_new
    plan = plan_relayout(model, base, target, write_cost, max_partitions=params.max_partitions)
    plan = validated(plan, judged_halves(wl, lambda w: CostModel(analyze_table(w, TABLE, columns), stats, params),
                                         lambda w, m: advise(w, m.analysis, stats, params).best_new))
    hits = model_for(model, base).evaluate(base).per_scan
    touched = sum(1 for g in plan.gains if g.reads) / max(len(plan.gains), 1)
    return {"base": base.describe(), "target": target.describe(), "cut": str(cut),
            "partitions": len(plan.gains), "touched_share": round(touched, 3),
            "recut": len(plan.chosen), "rows_rewritten": round(plan.rows_rewritten),
            "rewritten_share": round(plan.rows_rewritten / stats.rows, 3),
            "window_rows_before": round(sum(s.rows for s in hits)),
            "window_rows_after": round(model_for(model, plan.layout).evaluate(plan.layout).rows)}


def steps_of(texts: list[tuple[str, str]], step: int) -> list[str]:
    """Each window's queries, ``step`` at a time, in order (``step`` divides the window)."""
    out = []
    for _, text in texts:
        queries = [q + ";\n" for q in text.split(";\n") if q.strip()]
        if len(queries) % step:
            raise ValueError(f"a step of {step} queries does not divide a window of {len(queries)}")
        out += ["".join(queries[k:k + step]) for k in range(0, len(queries), step)]
    return out


@dataclass
class Drift:
    """The drifting workload on the model: its steps, each step's cost model, and the layouts
    advised on the sliding window (``best``), its halves (``judged``) and the first window
    (``start``); what ``run`` replays and ``benchmarks.drift_replay_check`` checks on Spark."""
    stats: TableStats
    columns: dict
    params: CostParams
    texts: list  # (phase, SQL text) per window
    steps: list  # SQL text per step
    per: int  # steps per window
    step_models: list
    recent: Callable
    best: Callable
    judged: Callable
    start: object


def drift(scale: float, count: int, size: int, step: int, sample_rows: int, seed: int, log=print,
          advice_cache: dict | None = None, data_dir: Path | None = None) -> Drift:
    """``advice_cache``: layouts advised by an earlier run of the same code and arguments, kept
    by the caller (``--reuse-advice``), so a change to a decision rule replays in a minute.
    ``data_dir``: where lineitem is generated (default ``.planner/data``)."""
    data = generate_lineitem(scale, data_dir or ROOT / ".planner" / "data")
    t0 = time.perf_counter()
    stats = table_stats(data, sample_rows)
    columns = dict(stats.schema)
    params = CostParams()
    log(f"lineitem SF {scale:g}: {stats.rows:,} rows, sample {stats.sample.num_rows:,} ({time.perf_counter() - t0:.1f} s)")
    texts = windows(count, size, seed, scale)
    steps = steps_of(texts, step)
    per = size // step  # steps per window
    schema = Schema({TABLE: columns})
    workloads: dict[tuple[int, int], tuple] = {}

    def window_model(lo: int, hi: int):
        """(workload, cost model) of steps lo..hi-1."""
        if (lo, hi) not in workloads:
            wl = parse_workload("".join(steps[lo:hi]), f"steps{lo + 1}-{hi}.sql", schema=schema, tables=[TABLE])
            workloads[(lo, hi)] = wl, CostModel(analyze_table(wl, TABLE, columns), stats, params)
        return workloads[(lo, hi)]

    def recent(i: int) -> CostModel:  # the last window's worth of queries, ending with step i
        return window_model(max(0, i + 1 - per), i + 1)[1]

    cache = {} if advice_cache is None else advice_cache  # an empty cache given is filled, not replaced
    advices: dict[tuple, object] = cache.setdefault((scale, count, size, step, sample_rows, seed), {})

    def advised(key: tuple, wl, model: CostModel, label: str):
        """The best *new* layout for ``wl``: the "current table" contender would be the table as
        generated, not the layout a strategy holds at this point."""
        if key not in advices:
            t = time.perf_counter()
            advices[key] = advise(wl, model.analysis, stats, params).best_new
            log(f"  {label}: best {advices[key].describe()} ({time.perf_counter() - t:.1f} s)")
        return advices[key]

    def best_of(lo: int, hi: int):
        return advised((lo, hi), *window_model(lo, hi), f"queries {lo * step + 1}-{hi * step}")

    def best(i: int):
        return best_of(max(0, i + 1 - per), i + 1)

    def judged(i: int):
        """The window's halves, each with the layout advised on the other (``planner.advice.held_out``)."""
        lo, hi = max(0, i + 1 - per), i + 1
        return judged_halves(
            window_model(lo, hi)[0], lambda wl: CostModel(analyze_table(wl, TABLE, columns), stats, params),
            lambda wl, model: advised(("half", lo, hi, wl.queries[0].number), wl, model,
                                      f"queries {lo * step + 1}-{hi * step}, half from query "
                                      f"{lo * step + wl.queries[0].number}"))

    step_models = [window_model(i, i + 1)[1] for i in range(len(steps))]
    return Drift(stats, columns, params, texts, steps, per, step_models, recent, best, judged, best_of(0, per))


def run(scale: float, count: int, size: int, step: int, sample_rows: int, write_cost: float, seed: int,
        log=print, advice_cache: dict | None = None, data_dir: Path | None = None) -> dict:
    """Every strategy replayed on the drift, the hindsight bound and the quarter drift."""
    t0 = time.perf_counter()
    d = drift(scale, count, size, step, sample_rows, seed, log, advice_cache, data_dir)
    stats, columns, params, per, step_models, best, start = (d.stats, d.columns, d.params, d.per, d.step_models,
                                                              d.best, d.start)  # start: advised on the first window
    strategies = {"static": Strategy("static"), "full": Strategy("full", per),
                  "partial": Strategy("partial", validated=True),
                  "partial, every window": Strategy("partial", per, validated=True),
                  "partial, in-sample": Strategy("partial"), "partitions": Strategy("partitions"),
                  "full, every step": Strategy("full")}
    traces = replay(step_models, best, recent=d.recent, start=start, write_cost=write_cost,
                    max_partitions=params.max_partitions, strategies=strategies, log=log, judged=d.judged)
    bound = hindsight(step_models, [best(i) for i in range(len(step_models) - 1)], start)
    quarter = quarter_drift(stats, columns, params, size, seed + 100, write_cost)
    log(f"quarter drift: {quarter}")
    load = load_average()

    def by_window(values: list) -> list:
        return [values[w * per:(w + 1) * per] for w in range(count)]

    return {"scale": scale, "windows": count, "window_queries": size, "step_queries": step,
            "sample_rows": stats.sample.num_rows, "rows": stats.rows, "write_cost": write_cost, "seed": seed,
            "load_avg": round(load, 2), "phases": [p for p, _ in d.texts], "seconds": round(time.perf_counter() - t0, 1),
            "strategies": {s: {"kind": x.kind, "every": x.every} for s, x in strategies.items()},
            "hindsight": [round(sum(x)) for x in by_window(bound)],
            "traces": {s: {"reads": [round(sum(x)) for x in by_window(t.reads)],
                           "rewritten": [round(sum(x)) for x in by_window(t.rewritten)],
                           "actions": ["; ".join(f"{a} after query {(w * per + k + 1) * step}"
                                                 for k, a in enumerate(acts) if a) for w, acts in
                                       enumerate(by_window(t.actions))],
                           "partitions": [p[-1] for p in by_window(t.partitions)], "total": round(t.total),
                           "weighted_total": round(t.weighted_total(write_cost))} for s, t in traces.items()},
            "quarter": quarter}


def report(result: dict, command: str) -> str:
    t = result["traces"]
    ratio_static = t["partial"]["total"] / t["static"]["total"]
    ratio_full = t["partial"]["total"] / t["full"]["total"]
    q = result["quarter"]
    step, size = result["step_queries"], result["window_queries"]
    lines = ["# Drift benchmark (issue 15)", "",
             f"Command: `{command}`. TPC-H lineitem SF {result['scale']:g} ({result['rows']:,} rows), sample "
             f"{result['sample_rows']:,} rows; {result['windows']} windows of {size} queries "
             f"(phases: {', '.join(dict.fromkeys(result['phases']))}), in steps of {step} queries; "
             f"c = {result['write_cost']:g}; load average {result['load_avg']} (row figures are model estimates "
             f"and do not depend on load; {result['seconds']} s).", "",
             f"Every strategy starts from the layout advised on window 1 and decides on the last {size} queries "
             f"(a sliding window, as Amoeba keeps one), toward the best layout `advise` finds for them. *Full* "
             f"re-advises after every window of {size} and rewrites the whole table when the best layout changed. "
             f"*Partial* checks after every {step} queries and re-cuts what gains more on the last {size} queries "
             "than c x the rows it rewrites: partitions alone (cut by the new layout's regions, in the current "
             "order) or the whole table laid out as the new layout (Amoeba's root), whichever gains more net of "
             "c x rows; and, as `planner relayout` does by default, only when the same action also pays c x "
             "rows on queries its target was not fitted to (`planner.advice.held_out`: a layout advised on every other "
             "query of the window, judged on the rest, both ways). *Partial, in-sample* is partial without that "
             "check (the rule before it). A check that rewrites nothing costs no I/O, so partial can look "
             "often; full cannot (*full, every step* below is full re-advise at partial's cadence). *Partial, "
             "every window* is partial at full's cadence; *partitions* is partial in-sample without the root. "
             "*Hindsight* reads each step under the cheapest of the layouts advised "
             "before it, switching for free. Rows read are the cost model's (partition pruning and row-group "
             "skipping); \"after\" says what a strategy rewrote during the window (each action after the query "
             "named).", "",
             "| window | phase | static read | full read | full after | partial read | partial after | "
             "partial partitions | partial, in-sample read | partial, in-sample after | partial, every window "
             "read | partitions-only read | full, every step read | hindsight read |",
             "|---:|---|---:|---:|---|---:|---|---:|---:|---|---:|---:|---:|---:|"]

    def after(s: str, i: int) -> str:
        return f"{t[s]['actions'][i]}: {t[s]['rewritten'][i]:,}" if t[s]["rewritten"][i] else ""

    for i, phase in enumerate(result["phases"]):
        lines.append(f"| {i + 1} | {phase} | {t['static']['reads'][i]:,} | {t['full']['reads'][i]:,} | "
                     f"{after('full', i)} | {t['partial']['reads'][i]:,} | {after('partial', i)} | "
                     f"{t['partial']['partitions'][i]} | {t['partial, in-sample']['reads'][i]:,} | "
                     f"{after('partial, in-sample', i)} | {t['partial, every window']['reads'][i]:,} | "
                     f"{t['partitions']['reads'][i]:,} | {t['full, every step']['reads'][i]:,} | "
                     f"{result['hindsight'][i]:,} |")
    bound = sum(result["hindsight"])
    # partial re-layout first: what `planner relayout` does by default
    lines += ["", *markdown_table(
        ["strategy", "checks after every", "rows read", "rows rewritten", "total", "total with rewrites x c",
         "/ static", "/ full"],
        [*([s, "–" if x["kind"] == "static" else f"{x['every'] * step} queries", f"{sum(t[s]['reads']):,}",
            f"{sum(t[s]['rewritten']):,}", f"{t[s]['total']:,}", f"{t[s]['weighted_total']:,}",
            f"{t[s]['total'] / t['static']['total']:.3f}", f"{t[s]['total'] / t['full']['total']:.3f}"]
           for s, x in default_first(list(result["strategies"].items()), lambda sx: sx[0] == "partial")),
         ["hindsight (rewrites free)", f"{step} queries", f"{bound:,}", "0", f"{bound:,}", f"{bound:,}",
          f"{bound / t['static']['total']:.3f}", f"{bound / t['full']['total']:.3f}"]])]
    lines += ["", "| figure | measured | target | met |", "|---|---:|---:|---|",
              f"| partial / static, rows read + rewritten | {ratio_static:.3f} | <= 0.7 | "
              f"{'yes' if ratio_static <= 0.7 else 'no'} |",
              f"| partial / full re-advise every window | {ratio_full:.3f} | <= 0.9 | "
              f"{'yes' if ratio_full <= 0.9 else 'no'} |",
              f"| rows rewritten after a drift touching {q['touched_share']:.0%} of partitions, / table | "
              f"{q['rewritten_share']:.3f} | <= 0.35 | {'yes' if q['rewritten_share'] <= 0.35 else 'no'} |",
              "", f"Quarter drift: layout `{q['base']}` ({q['partitions']} partitions) advised on Q6/Q14; the "
              f"window filters `l_quantity = v AND l_shipdate >= {q['cut']}` (its best layout: `{q['target']}`). "
              f"{q['recut']} partitions re-cut, {q['rows_rewritten']:,} rows rewritten; the window reads "
              f"{q['window_rows_before']:,} rows before and {q['window_rows_after']:,} after.", ""]
    return "\n".join(lines)


def plot(result: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for s in result["strategies"]:
        tr = result["traces"][s]
        acc, ys = 0, []
        for r, w in zip(tr["reads"], tr["rewritten"]):
            acc += r + w
            ys.append(acc / 1e6)
        ax.plot(range(1, len(ys) + 1), ys, marker="o", label=s,
                linestyle="-" if s in ("static", "full", "partial") else ":")
    ax.set_xlabel("window")
    ax.set_ylabel("cumulative rows read + rewritten (M)")
    ax.set_title(f"Drifting TPC-H workload, SF {result['scale']:g}, c = {result['write_cost']:g}")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--windows", type=int, default=9)
    ap.add_argument("--window", type=int, default=40, help="queries per window (full re-advise's cadence, and the "
                    "sliding window every strategy decides on)")
    ap.add_argument("--step", type=int, default=10, help="queries between partial re-layout's checks (divides "
                    "--window)")
    ap.add_argument("--sample-rows", type=int, default=100_000)
    ap.add_argument("--write-cost", type=float, default=4.0)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--quick", action="store_true", help="SF 0.01, 6 windows of 12 queries, steps of 4")
    ap.add_argument("--out-dir", type=Path, default=RESULTS)
    ap.add_argument("--reuse-advice", action="store_true", help="reuse the layouts advised by an earlier run "
                    f"(kept in {ADVICE_CACHE.relative_to(ROOT)}); only valid when advise's code is unchanged")
    a = ap.parse_args(argv)
    if a.quick:
        a.scale, a.windows, a.window, a.step, a.sample_rows = 0.01, 6, 12, 4, 20_000
    name = "drift_quick" if a.quick else "drift"
    cache = _load_cache() if a.reuse_advice else {}
    result = run(a.scale, a.windows, a.window, a.step, a.sample_rows, a.write_cost, a.seed, advice_cache=cache)
    _save_cache(cache)
    command = ".venv/bin/python -m benchmarks.drift_bench" + (
        " --quick" if a.quick else f" --scale {a.scale:g} --windows {a.windows} --window {a.window} --step {a.step}")
    print(write(result, command, a.out_dir, name))
    return 0


def write(result: dict, command: str, out_dir: Path, name: str) -> str:
    """``<name>.md`` (the report and its plot), ``.json`` and ``.png`` in ``out_dir``; returns the report."""
    text = report(result, command)
    write_result(name, text + f"\n![cumulative cost]({name}.png)\n", result, out_dir, indent=2)
    plot(result, out_dir / f"{name}.png")
    return text


if __name__ == "__main__":
    raise SystemExit(main())

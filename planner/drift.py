"""Replay a drifting workload against layout strategies, on the cost model (no Spark).

The workload comes in windows. Every strategy starts from the same layout (the best one for the
first window) and, after each window, may change the layout for the next:

* ``static``: never changes it;
* ``full``: re-advises on the window just seen and rewrites the whole table whenever the best
  layout differs from the current one;
* ``partial``: re-cuts only the partitions whose gain on the window just seen exceeds c × their
  rows (``planner.relayout_plan``), toward the window's best layout; the whole table is a candidate
  too (Amoeba's root), taken when its gain less c × the table's rows beats the partitions' plan;
* ``partitions`` (on request): ``partial`` without the root, each partition alone (what partial
  was before the root became a candidate; kept for comparison).

A window's cost is the rows its queries read under the layout in place (the model's rows, with
row-group skipping); a switch costs the rows it rewrites. Totals are ``reads + rewritten``, the
figure the issue asks for (a rewritten row may also be weighted by c: ``weighted_total``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

from planner.costmodel.cost import CostModel
from planner.layout import Layout
from planner.relayout_plan import DEFAULT_WRITE_COST, model_for, plan_relayout

STRATEGIES = ("static", "full", "partial")


@dataclass
class Trace:
    strategy: str
    reads: list[float] = field(default_factory=list)  # rows read per window
    rewritten: list[float] = field(default_factory=list)  # rows rewritten after each window
    partitions: list[int] = field(default_factory=list)  # partitions of the layout used per window
    actions: list[str] = field(default_factory=list)  # what changed after each window ("" for nothing)
    layouts: list[Layout] = field(default_factory=list, repr=False)  # the layout used per window

    @property
    def total(self) -> float:
        return sum(self.reads) + sum(self.rewritten)

    def weighted_total(self, write_cost: float) -> float:
        return sum(self.reads) + write_cost * sum(self.rewritten)

    def cumulative(self) -> list[float]:
        out, acc = [], 0.0
        for r, w in zip(self.reads, self.rewritten):
            acc += r + w
            out.append(acc)
        return out


def _same(a: Layout, b: Layout) -> bool:
    return [p.region for p in a.partitions] == [p.region for p in b.partitions] and a.order == b.order


def replay(models: Sequence[CostModel], best: Callable[[int], Layout], *, write_cost: float = DEFAULT_WRITE_COST,
           max_partitions: int | None = None, strategies: Sequence[str] = STRATEGIES,
           log: Callable[[str], None] | None = None) -> dict[str, Trace]:
    """``models[i]``: the cost model of window i; ``best(i)``: the best layout for window i (called
    once per window, e.g. ``advise(...).result.best.layout``). Returns one trace per strategy."""
    rows = models[0].stats.rows
    start = best(0)
    current = {s: start for s in strategies}
    traces = {s: Trace(s) for s in strategies}
    for i, model in enumerate(models):
        for s in strategies:
            layout = current[s]
            traces[s].layouts.append(layout)
            traces[s].partitions.append(len(layout.partitions))
            traces[s].reads.append(model_for(model, layout).evaluate(layout).rows)
        if i + 1 == len(models):
            for s in strategies:
                traces[s].rewritten.append(0.0)
                traces[s].actions.append("")
            break
        target = best(i)
        for s in strategies:
            written, action = 0.0, ""
            if s == "full" and not _same(current[s], target):
                current[s], written, action = target, float(rows), "table"
            elif s in ("partial", "partitions"):
                plan = plan_relayout(model, current[s], target, write_cost, max_partitions=max_partitions,
                                     whole=s == "partial")
                current[s], written = plan.layout, plan.rows_rewritten
                action = "table" if plan.whole else f"{len(plan.chosen)} partitions" if plan.chosen else ""
            traces[s].rewritten.append(written)
            traces[s].actions.append(action)
        if log:
            log(f"window {i + 1}: " + ", ".join(f"{s} read {traces[s].reads[-1]:,.0f} rewrote "
                                                f"{traces[s].rewritten[-1]:,.0f}" for s in strategies))
    return traces


def hindsight(models: Sequence[CostModel], layouts: Sequence[Layout]) -> list[float]:
    """Rows read per window by a strategy that knows each window before it runs and picks the
    cheapest of the layouts advised on the windows *before* it (``layouts[j]``: the best for window
    j; window 0 gets ``layouts[0]``, where every strategy starts), switching for free: a bound on
    what any strategy choosing among the advised layouts reaches, re-layout costs aside."""
    out = []
    for i, model in enumerate(models):
        known = layouts[:max(i, 1)]
        out.append(min(model_for(model, layout).evaluate(layout).rows for layout in known))
    return out

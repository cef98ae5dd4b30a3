"""Replay a drifting workload against layout strategies, on the cost model (no Spark).

The workload comes in *steps* of a few queries (``models[i]``: step i's queries). Every strategy
starts from the same layout (the best one for the first window) and may change it after a step.
It decides on the *recent window* ending with that step (``recent(i)``, e.g. the last 40 queries;
Amoeba keeps such a sliding window of the queries just seen), toward the best layout for that
window (``best(i)``):

* ``static``: never changes it;
* ``full``: rewrites the whole table whenever the window's best layout differs from the current one;
* ``partial``: re-cuts only the partitions whose gain on the window exceeds c × their rows
  (``planner.advice.relayout_plan``); the whole table is a candidate too (Amoeba's root), taken when its
  gain less c × the table's rows beats the partitions' plan;
* ``partitions``: ``partial`` without the root, each partition alone (kept for comparison).

A ``partial`` strategy may be *validated*: its action must also pay where its target was not
fitted (``planner.advice.held_out``: two-fold cross-validation over the window), as ``planner relayout``
requires by default.

A strategy acts after every ``every``-th step (``Strategy``). Partial re-layout can afford to look
often: its rule rewrites nothing unless the window pays c × the rows, so a check costs no I/O, and
it follows a drift a few queries after it starts instead of a window later. Full re-advise cannot:
nearly every window has a different best layout, and each switch rewrites the table.

A step's cost is the rows its queries read under the layout in place (the model's rows, with
row-group skipping); a switch costs the rows it rewrites. Totals are ``reads + rewritten``, the
figure the issue asks for (a rewritten row may also be weighted by c: ``weighted_total``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

from planner.advice.held_out import Judged, validated
from planner.advice.relayout_plan import DEFAULT_WRITE_COST, model_for, plan_relayout
from planner.costmodel.cost import CostModel
from planner.model.layout import Layout

KINDS = ("static", "full", "partial", "partitions")
STRATEGIES = ("static", "full", "partial")


@dataclass(frozen=True)
class Strategy:
    kind: str  # one of KINDS
    every: int = 1  # acts after every ``every``-th step
    validated: bool = False  # partial: an action must also pay out of sample (``planner.advice.held_out``)

    def __post_init__(self):
        if self.kind not in KINDS or self.every < 1:
            raise ValueError(f"no strategy {self.kind!r} every {self.every}")

    def due(self, step: int) -> bool:
        return (step + 1) % self.every == 0


@dataclass
class Trace:
    strategy: str
    reads: list[float] = field(default_factory=list)  # rows read per step
    rewritten: list[float] = field(default_factory=list)  # rows rewritten after each step
    partitions: list[int] = field(default_factory=list)  # partitions of the layout used per step
    actions: list[str] = field(default_factory=list)  # what changed after each step ("" for nothing)
    layouts: list[Layout] = field(default_factory=list, repr=False)  # the layout used per step

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


def same_layout(a: Layout, b: Layout) -> bool:
    """The same cuts and the same order (ids and metadata aside)."""
    return [p.region for p in a.partitions] == [p.region for p in b.partitions] and a.order == b.order


def _strategies(strategies: Sequence[str] | Mapping[str, Strategy]) -> dict[str, Strategy]:
    if isinstance(strategies, Mapping):
        return dict(strategies)
    return {s: Strategy(s) for s in strategies}


def replay(models: Sequence[CostModel], best: Callable[[int], Layout], *,
           recent: Callable[[int], CostModel] | None = None, start: Layout | None = None, write_cost: float = DEFAULT_WRITE_COST,
           max_partitions: int | None = None, strategies: Sequence[str] | Mapping[str, Strategy] = STRATEGIES,
           log: Callable[[str], None] | None = None, judged: Callable[[int], Judged] | None = None
           ) -> dict[str, Trace]:
    """``models[i]``: the cost model of step i's queries; ``recent(i)``: the model of the window a
    strategy decides on after step i (default ``models[i]``); ``best(i)``: the best layout for it
    (called at most once per step, e.g. ``advise(...).result.best.layout``); ``start``: the layout
    every strategy starts from (default ``best(0)``); ``strategies``: names of ``KINDS`` (acting
    after every step) or name -> ``Strategy``; ``judged(i)``: the halves of that window, each with
    the layout advised on the other, for validated strategies. One trace per strategy."""
    plan = _strategies(strategies)
    recent = recent or (lambda i: models[i])
    rows = models[0].stats.rows
    start = best(0) if start is None else start
    current = {s: start for s in plan}
    traces = {s: Trace(s) for s in plan}
    for i, model in enumerate(models):
        for s in plan:
            layout = current[s]
            traces[s].layouts.append(layout)
            traces[s].partitions.append(len(layout.partitions))
            traces[s].reads.append(model_for(model, layout).evaluate(layout).rows)
        for s, strategy in plan.items():
            written, action = 0.0, ""
            if i + 1 < len(models) and strategy.kind != "static" and strategy.due(i):
                target = best(i)
                if strategy.kind == "full" and not same_layout(current[s], target):
                    current[s], written, action = target, float(rows), "table"
                elif strategy.kind in ("partial", "partitions"):
                    p = plan_relayout(recent(i), current[s], target, write_cost, max_partitions=max_partitions,
                                      whole=strategy.kind == "partial")
                    if strategy.validated:
                        p = validated(p, judged(i))
                    current[s], written = p.layout, p.rows_rewritten
                    action = "table" if p.whole else f"{len(p.chosen)} partitions" if p.chosen else ""
            traces[s].rewritten.append(written)
            traces[s].actions.append(action)
        if log:
            log(f"step {i + 1}: " + ", ".join(f"{s} read {traces[s].reads[-1]:,.0f} rewrote "
                                              f"{traces[s].rewritten[-1]:,.0f}" for s in plan))
    return traces


def hindsight(models: Sequence[CostModel], layouts: Sequence[Layout], start: Layout | None = None) -> list[float]:
    """Rows read per step by a strategy that knows each step before it runs and picks the cheapest
    of the layouts advised after the steps *before* it (``layouts[j]``: the best after step j) and
    ``start`` (default ``layouts[0]``), switching for free: a bound on what any strategy choosing
    among the advised layouts reaches, re-layout costs aside."""
    start = layouts[0] if start is None else start
    out = []
    for i, model in enumerate(models):
        known = [start, *layouts[:i]]
        out.append(min(model_for(model, layout).evaluate(layout).rows for layout in known))
    return out

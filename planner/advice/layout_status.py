"""How well a laid-out table serves a recent workload: ``planner status``'s figures, as values.

* what the current layout costs the window (the model's rows read, plus partition/file overheads),
  what the best layout would cost, and a full scan;
* the rows a switch rewrites: the whole table for a full re-layout, the chosen partitions for a
  partial one (``planner.advice.relayout_plan``);
* the break-even in queries: ``c × rows rewritten / gain per query``, the number of queries like the
  window's after which the switch has paid for itself (∞ when it gains nothing);
* hot partitions (read by at least half of the window's scans), cold ones (read by none) and
  mis-cut ones (their re-cut gain exceeds c × their rows: the partial re-layout's choice);
* clustering depth per column (``planner.costmodel.clustering``), when footers were read;
* the table's aggregate index: what it keeps, its last build, and whether queries use it now
  (``IndexStatus``).

Pure: the CLI gathers statistics, the workload and footers, and prints what this returns.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

from planner.advice.relayout_plan import RelayoutPlan, model_for
from planner.costmodel.cost import CostModel, LayoutCost
from planner.model.aggregate_index import AggregateIndex, CellsState, cells_view
from planner.model.layout import Layout
from planner.model.wording import plural

HOT_SHARE = 0.5  # a partition read by at least this share of the window's scans is hot


@dataclass(frozen=True)
class Status:
    table: str
    rows: int
    queries: float  # weighted queries (scans) in the window
    current: LayoutCost = field(repr=False)
    best: LayoutCost = field(repr=False)
    full_scan_rows: float
    relayout: RelayoutPlan = field(repr=False)
    clustering: tuple = ()  # planner.costmodel.clustering.ColumnDepth per column
    measured: tuple = ()  # (statement, rows, files, bytes, partitions) per measured count form
    entropy: "FileSizeEntropy | None" = None
    index: "IndexStatus | None" = None

    @property
    def full_switch_rows(self) -> float:
        return float(self.rows)

    def break_even(self, gain: float, rows: float) -> float:
        """Queries like the window's after which rewriting ``rows`` for ``gain`` (per window) pays."""
        per_query = gain / max(self.queries, 1.0)
        return math.inf if per_query <= 0 else self.relayout.write_cost * rows / per_query

    @property
    def hot(self) -> list[int]:
        return [g.id for g in self.relayout.gains if self.queries and g.reads >= HOT_SHARE * self.queries]

    @property
    def cold(self) -> list[int]:
        return [g.id for g in self.relayout.gains if g.reads == 0]

    @property
    def miscut(self) -> list[int]:
        return list(self.relayout.chosen)

    def to_json(self) -> dict:
        full_gain = self.current.total - self.best.total
        return {
            "table": self.table, "rows": self.rows, "scans": self.queries,
            "layout": self.current.layout.describe(), "generation": self.current.layout.generation,
            "current": {"rows_read": round(self.current.rows), "cost": round(self.current.total)},
            "best": {"layout": self.best.layout.describe(), "rows_read": round(self.best.rows),
                     "cost": round(self.best.total)},
            "full_scan_rows": round(self.full_scan_rows),
            "full_relayout": {"rows_rewritten": self.rows, "gain": round(full_gain),
                              "break_even_queries": _num(self.break_even(full_gain, self.rows))},
            "partial_relayout": {"write_cost": self.relayout.write_cost, "whole_table": self.relayout.whole,
                                 "partitions": len(self.relayout.chosen),
                                 "rows_rewritten": round(self.relayout.rows_rewritten),
                                 "gain": round(self.relayout.gain),
                                 "break_even_queries": _num(self.break_even(self.relayout.gain,
                                                                            self.relayout.rows_rewritten)),
                                 **self.relayout.validation_json()},
            "partitions": {"total": self.current.layout.partition_count, "hot": self.hot, "cold": self.cold,
                           "miscut": self.miscut},
            "clustering_depth": [c.to_json() for c in self.clustering],
            "file_size_entropy": None if self.entropy is None else self.entropy.to_json(),
            "aggregate_index": None if self.index is None else self.index.to_json(),
            "measured": [dict(zip(("statement", "rows", "files", "bytes", "partitions"), m)) for m in self.measured],
        }

    def text(self) -> str:
        j = self.to_json()
        full, part = j["full_relayout"], j["partial_relayout"]
        lines = [f"table {self.table}: {self.rows:,} rows, {j['layout']} ({self.current.layout.identity})",
                 f"window: {self.queries:g} scans of the table",
                 f"current layout reads ~{_fmt(self.current.rows)} rows (cost {_fmt(self.current.total)}); "
                 f"full scans would read {_fmt(self.full_scan_rows)}",
                 f"best layout ({j['best']['layout']}) reads ~{_fmt(self.best.rows)} rows "
                 f"(cost {_fmt(self.best.total)})",
                 f"full re-layout: rewrites {self.rows:,} rows; {_break_even(full['break_even_queries'])} "
                 f"(c = {self.relayout.write_cost:g})",
                 f"partial re-layout{' (the whole table, as the best layout)' if part['whole_table'] else ''}: "
                 f"{plural(part['partitions'], 'partition')}, {part['rows_rewritten']:,} rows "
                 f"({part['rows_rewritten'] / max(self.rows, 1):.0%} of the table), gain {_fmt(part['gain'])} per "
                 f"window; {_break_even(part['break_even_queries'])}",
                 *([f"  {declined_text(self.relayout)}"] if self.relayout.declined is not None else
                   [f"  net of c x rows on queries its target was not fitted to: "
                    f"{_fmt(self.relayout.held_out_net)}"] if self.relayout.held_out_net is not None else []),
                 f"partitions: {self.current.layout.partition_count}; hot {len(self.hot)}, cold {len(self.cold)}, "
                 f"mis-cut {len(self.miscut)}"]
        for label, ids in (("hot", self.hot), ("mis-cut", self.miscut)):
            if ids:
                lines.append(f"  {label}: " + ", ".join(map(str, ids[:20])) + (" …" if len(ids) > 20 else ""))
        if self.clustering:
            lines.append("clustering depth (row groups whose [min, max] overlap one row group's, same partition; "
                         "1.0 = no overlap):")
            for c in self.clustering:
                lines.append(f"  {c.column:<24} {c.depth:6.2f}  of {c.row_groups_per_partition:.1f} row groups per "
                             f"partition; overlap {c.overlap:.0%}")
        if self.entropy is not None:
            lines.append(self.entropy.text())
        if self.index is not None:
            lines += self.index.lines()
        if self.measured:
            lines.append("measured (count forms on Spark): statement, rows, files, bytes, partitions read")
            for m in self.measured:
                lines.append("  " + "  ".join(str(x) for x in m))
        return "\n".join(lines)


@dataclass(frozen=True)
class FileSizeEntropy:
    """How far a table's files are from the target size (AutoOptimize's file size entropy): per
    partition the mean squared shortfall ``mean((target - min(size, target))^2)`` over its files,
    told as its root relative to the target (0: every file full; near 1: all tiny). Small files
    cost a query an open and a footer each (``planner.costmodel.timing``)."""

    target: int
    files: int
    partitions: int
    table: float  # the root mean squared shortfall over every file, relative to the target
    worst: tuple[tuple[str, int, float], ...]  # (partition, files, relative shortfall), worst first
    small: int  # files under a tenth of the target

    def to_json(self) -> dict:
        return {"target_bytes": self.target, "files": self.files, "partitions": self.partitions,
                "relative_shortfall": round(self.table, 3), "small_files": self.small,
                "worst_partitions": [{"partition": p, "files": n, "relative_shortfall": round(e, 3)}
                                     for p, n, e in self.worst]}

    def text(self) -> str:
        worst = ", ".join(f"{p} ({n} files, {e:.2f})" for p, n, e in self.worst[:5] if e > 0)
        return (f"file size entropy (shortfall from {self.target / 2**20:.0f} MiB files, 0 = full files): "
                f"{self.table:.2f} over {self.files} files in {self.partitions} partitions; {self.small} files under "
                f"a tenth of the target" + (f"; worst: {worst}" if worst else ""))


def file_size_entropy(files: Sequence[tuple[str, int]], target: int, limit: int = 10) -> FileSizeEntropy:
    """``files``: (partition, bytes) of every data file. A partition whose files together hold less
    than the target cannot do better than one file: its shortfall is counted from its total."""
    by_partition: dict[str, list[int]] = {}
    for partition, size in files:
        by_partition.setdefault(partition, []).append(int(size))
    squares, count, worst = 0.0, 0, []
    for partition, sizes in by_partition.items():
        goal = min(target, sum(sizes)) or 1
        mse = sum((goal - min(s, goal)) ** 2 for s in sizes) / len(sizes)
        squares += mse * len(sizes)
        count += len(sizes)
        worst.append((partition, len(sizes), math.sqrt(mse) / goal))
    worst.sort(key=lambda w: (-w[2], w[0]))
    table = math.sqrt(squares / count) / target if count else 0.0
    return FileSizeEntropy(target, count, len(by_partition), table, tuple(worst[:limit]),
                           sum(1 for _, s in files if s < target / 10))


def declined_text(plan: RelayoutPlan) -> str:
    """Why a re-cut that pays on the window was not taken (``planner.advice.held_out``)."""
    d = plan.declined
    what = "laying out the whole table as the best layout" if d.whole else f"re-cutting {len(d.chosen)} partitions"
    return (f"{what} ({d.rows_rewritten:,.0f} rows) gains {_fmt(d.gain)} on the window, "
            f"{_fmt(d.net)} more than c x rows, but fitted on half of the window and judged on the other half "
            f"its net is {_fmt(plan.held_out_net)}: declined")


def _num(x: float):
    return None if math.isinf(x) else round(x, 1)


def _break_even(x) -> str:
    """When a rewrite pays back: after N queries like the window's, or never (it gains nothing)."""
    if x is None:
        return "never pays back: it gains nothing on queries like these"
    return f"break-even after {x:,.1f} queries like these"


def _fmt(n: float) -> str:
    for unit, div in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(n) >= div:
            return f"{n / div:.2f}{unit}"
    return f"{n:.0f}"


@dataclass(frozen=True)
class IndexStatus:
    """The layout's aggregate index: what it keeps, its last build (none: ``state`` None), and
    ``why_not`` queries do not use it now ('' when they do)."""

    spec: AggregateIndex
    state: CellsState | None
    why_not: str = ""

    @property
    def used(self) -> bool:
        return self.state is not None and not self.why_not

    @property
    def view(self) -> str:
        """The view SQL saved for later reads the build's cells through ('' for a build without one)."""
        return cells_view(self.state.cells_table, self.state.stamp) if self.state is not None and self.state.view else ""

    def to_json(self) -> dict:
        s = self.state
        return {"index": self.spec.describe(), "used": self.used, "why_not": self.why_not,
                "build": None if s is None else {"stamp": s.stamp, "built_at": s.built_at, "cells_table": s.cells_table,
                                                 "cells": s.cells, "table_rows": s.table_rows, "bytes": s.bytes,
                                                 "view": self.view or None}}

    def lines(self) -> list[str]:
        out = [f"aggregate index: {self.spec.describe()}"]
        s = self.state
        if s is not None:
            size = f" ({s.bytes / 2**20:.1f} MiB)" if s.bytes else ""
            out.append(f"  last build {s.stamp} at {s.built_at or 'an unknown time'}: {s.cells:,} cells{size} for "
                       f"{s.table_rows:,} rows in {s.cells_table}")
            if self.view:
                out.append(f"  SQL saved by `planner rewrite` reads it through the view {self.view}")
        out.append("  queries answer from it" if self.used else f"  queries do not use it: {self.why_not}")
        return out


def status_of(model: CostModel, current: Layout, best: Layout, relayout: RelayoutPlan,
              clustering: tuple = (), measured: tuple = (), entropy: FileSizeEntropy | None = None,
              index: IndexStatus | None = None) -> Status:
    model = model_for(model, current, best)
    return Status(current.table, model.stats.rows, float(model.weights.sum()), model.evaluate(current),
                  model.evaluate(best), model.full_scan_rows(), relayout, tuple(clustering), tuple(measured),
                  entropy, index)

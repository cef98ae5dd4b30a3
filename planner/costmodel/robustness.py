"""The robustness set: queries no workload names, to judge a layout beyond the queries it saw.

Amoeba's case is the ad-hoc query: a range on any one column. So the set holds, for every
orderable column the workload filters (and every column the user names, ``probe_columns``),
ranges at a few selectivities and positions, cut at the sample's
quantiles: with ``SELECTIVITIES = (0.05, 0.1)`` and ``STARTS = (0.1, 0.45, 0.8)`` a column gets
``[q10, q15)``, ``[q45, q50)``, ``[q80, q85)``, ``[q10, q20)``, ``[q45, q55)`` and ``[q80, q90)``.
A column with few values gets what its quantiles allow (a single value when ``q10 == q11``).

The set serves twice: the guard compares every layout with the table as it is on it
(``planner.advice.guard``), and the search weighs what a layout reads on it into its score
(``CostParams.robustness_weight``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from planner.analysis.table_analysis import ScanAnalysis, TableAnalysis
from planner.cnf.normalize import ColumnGroups
from planner.cnf.valueset import ValueSet
from planner.costmodel.sample import SampleFrame
from planner.semantics.kinds import Kind, render

SELECTIVITIES = (0.05, 0.1)
STARTS = (0.1, 0.45, 0.8)


@dataclass(frozen=True)
class RangeQuery:
    column: str
    values: ValueSet
    selectivity: float  # intended share of rows

    def describe(self) -> str:
        iv = self.values.intervals[0]
        if iv.is_point:
            return f"{self.column} = {render(iv.lo)} (~{self.selectivity:.0%} range)"
        return f"{self.column} in [{render(iv.lo)}, {render(iv.hi)}{']' if iv.hi_closed else ')'} " \
               f"(~{self.selectivity:.0%})"


def range_queries(sample: SampleFrame, kinds, columns, selectivities=SELECTIVITIES, starts=STARTS) -> list[RangeQuery]:
    out: list[RangeQuery] = []
    for c in columns:
        kind = kinds.get(c)
        if kind is None or not kind.orderable or not sample.has(c) or c in sample.derived:
            continue
        codes = np.sort(sample.codes(c)[sample.codes(c) >= 0])
        uniq = sample.uniques(c)
        if len(uniq) < 2:
            continue
        seen: set[ValueSet] = set()
        for sel in selectivities:
            for start in starts:
                i = min(len(codes) - 1, int(start * len(codes)))
                j = min(len(codes) - 1, int((start + sel) * len(codes)))
                lo, hi = uniq[codes[i]], uniq[codes[j]]
                vs = ValueSet.points(kind, [lo]) if lo == hi else ValueSet.range(kind, lo, hi, True, False)
                if vs not in seen:
                    seen.add(vs)
                    out.append(RangeQuery(c, vs, sel))
    return out


def robustness_analysis(analysis: TableAnalysis, queries: list[RangeQuery]) -> TableAnalysis:
    """The set as scans of the table (query ``i`` is ``queries[i]``), beside ``analysis``."""
    scans = tuple(ScanAnalysis(i, "robustness", ColumnGroups(((q.column, q.values),), (), ()), (),
                               frozenset({q.column})) for i, q in enumerate(queries))
    return TableAnalysis(analysis.table, analysis.kinds, analysis.derived, scans, ())


def probe_columns(analysis: TableAnalysis, sample: SampleFrame, named=()) -> list[str]:
    """The columns the robustness set probes: those some scan of the workload filters, and those
    ``named`` (by the user), in the table's column order. Not every column of the table: a column
    no query filters (a free-text note, an id nobody looks up) must not decide the layout through
    ranges nobody runs."""
    filtered = {c for s in analysis.scans for c in s.sets} | {c.column for c in analysis.candidates}
    wanted = filtered | {c.lower() for c in named}
    return [c for c in table_columns(analysis, sample) if c in wanted]


def table_columns(analysis: TableAnalysis, sample: SampleFrame) -> list[str]:
    """The table's own orderable columns the sample holds (no derived attributes)."""
    return [c for c, k in analysis.kinds.items()
            if k is not Kind.OTHER and c not in analysis.derived and sample.has(c)]


__all__ = ["RangeQuery", "SELECTIVITIES", "STARTS", "probe_columns", "range_queries", "robustness_analysis",
           "table_columns"]

"""Pricing predicates induced through joins: a filter on orders prunes lineitem's partitions.

A scan of lineitem joined to orders, ``WHERE o_orderdate >= DATE '1995-01-01'``, reads a partition
only if some row of it joins an orders row with such a date (``planner.pruning.join_pruning``, by the
per-partition ranges of ``o_orderdate`` that apply records). To price that, the cost model needs
the joined column as if it were a column of lineitem: the statistics sample carries, for every
sampled lineitem row, the value its join path reaches (a *joined attribute*, added at the edge by
``hive_integration.spark.join_sample`` with one Spark join of the sample), and whether the row found a
partner at all (rows without one never reach an inner join's answer and are left out of the
ranges, as apply leaves them out).

A joined attribute is priced on any layout: a layout on ``l_shipdate`` gives each partition a
narrow range of ``o_orderdate``. A few-valued one may also be cut on (a *sideways* cut,
``planner.costmodel.sideways``): apply computes it through the same joins.
Per partition the sample gives that range (the min and max of the partition's joined rows, or their
value set when the column has at most ``SMALL_SET`` values, plus NULL when a joined row holds NULL:
what ``hive_integration.spark.join_ranges`` records), and a scan keeps the partition only if its induced
set overlaps it, exactly as the rewrite decides. The catch-all partition is always kept.

A sample's range is narrower than the table's (it misses the extremes), so the estimate is a little
optimistic; at 200,000 sampled rows a month of ``l_shipdate`` holds ~2,800 rows whose dates span the
partition's range to within days.

Only what the rewrite can use is priced: a join path whose column was added to the sample (unique
keys on every hop, a type apply records), read in the session the workload was analysed under (as
``planner.sql`` reads it). The table as it is has no recorded ranges and gets no join pruning.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from planner.cnf.valueset import ValueSet
from planner.costmodel.sample import interval_bounds
from planner.model.join_paths import JoinColumn, JoinPath
from planner.model.layout import CATCH_ALL, Layout
from planner.pruning.join_pruning import SMALL_SET
from planner.semantics.kinds import Kind
from planner.semantics.types import parse_type

ATTRIBUTE_PREFIX = "⋈ "  # sample columns of joined attributes: "⋈ orders(o_orderkey = l_orderkey).o_orderdate"
MATCH_PREFIX = "⋈? "  # per join path: did the sampled row find a partner at the path's end


def joined_attribute(column: JoinColumn) -> str:
    """The sample column holding ``column``'s value for each sampled row."""
    return ATTRIBUTE_PREFIX + column.describe()


def match_attribute(path: JoinPath) -> str:
    """The sample column saying whether each sampled row joins a row at ``path``'s end (boolean)."""
    return MATCH_PREFIX + path.describe()


def is_joined(name: str) -> bool:
    return name.startswith(ATTRIBUTE_PREFIX) or name.startswith(MATCH_PREFIX)


@dataclass(frozen=True)
class _Want:
    attribute: str
    match: str
    values: ValueSet


class JoinPricing:
    """Which partitions each scan's induced predicates let it skip, on the sample.

    ``types``: joined attribute -> Spark type of the end column (``TableStats.joined``); only the
    attributes named there (and present in the sample) are priced. ``settings``: the session (or
    sessions) the predicates are read in; None: both ANSI modes.
    """

    def __init__(self, scans: Sequence, sample, types: Mapping[str, str], settings=None):
        from planner.analysis.table_analysis import _analyse_predicate
        from planner.semantics.settings import Settings

        self.sample = sample
        modes = settings if settings is not None else (Settings(True), Settings(False))
        self.wants: list[list[_Want]] = []
        for s in scans:
            out = []
            for ind in getattr(s, "induced", ()):
                for name, t in types.items():
                    col = name[len(ATTRIBUTE_PREFIX):]
                    if not col.startswith(ind.path.describe() + ".") or not sample.has(name):
                        continue
                    column = col[len(ind.path.describe()) + 1:]
                    typed = {column: parse_type(t)}
                    groups, _ = _analyse_predicate(ind.predicate, typed, 200, {}, modes)
                    want = groups.column_sets.get(column)
                    if want is not None and not want.is_everything():
                        out.append(_Want(name, match_attribute(ind.path), want))
            self.wants.append(out)
        self.kinds = {name: parse_type(t).kind for name, t in types.items()}

    def __bool__(self) -> bool:
        return any(self.wants)

    def prune(self, hits: np.ndarray, layout: Layout, labels: np.ndarray) -> np.ndarray:
        """``hits`` with the partitions each scan's induced predicates exclude set to False."""
        if not self:
            return hits
        keep = self.keep(labels, len(layout.partitions))
        keep |= np.array([p.id == CATCH_ALL for p in layout.partitions], dtype=bool)
        return hits & keep

    def keep(self, labels: np.ndarray, n: int) -> np.ndarray:
        """``keep[s, g]``: scan ``s``'s induced predicates allow some row of group ``g`` (the sample
        rows labelled ``g``: a partition, or a piece of a column the search merges)."""
        out = np.ones((len(self.wants), n), dtype=bool)
        ranges: dict[str, tuple] = {}
        for i, wants in enumerate(self.wants):
            for w in wants:
                if w.attribute not in ranges:
                    ranges[w.attribute] = self._ranges(w.attribute, w.match, labels, n)
                out[i] &= self._overlap(w, ranges[w.attribute])
        return out

    def _ranges(self, attribute: str, match: str, labels: np.ndarray, n: int):
        """Per partition: min code, max code (-1 when no joined row has a value), NULL seen, and,
        for a column of few values, the code set as a (partitions x values) matrix."""
        codes = self.sample.codes(attribute)
        joined = labels >= 0
        if self.sample.has(match):  # rows that join nothing never reach the answer (nor the ranges)
            joined &= self.sample.table.column(match).fill_null(False).to_numpy(zero_copy_only=False)
        valued = joined & (codes >= 0)
        lo = np.full(n, np.iinfo(np.int64).max)
        hi = np.full(n, -1)
        np.minimum.at(lo, labels[valued], codes[valued])
        np.maximum.at(hi, labels[valued], codes[valued])
        null = np.zeros(n, dtype=bool)
        null[labels[joined & (codes < 0)]] = True
        members = None
        width = len(self.sample.uniques(attribute))
        if self.kinds[attribute] in (Kind.STRING, Kind.BOOLEAN, Kind.INTEGER) and width <= SMALL_SET:
            members = np.zeros((n, width), dtype=bool)
            members[labels[valued], codes[valued]] = True
        return lo, hi, null, members

    def _overlap(self, want: _Want, ranges) -> np.ndarray:
        lo, hi, null, members = ranges
        uniq = self.sample.uniques(want.attribute)
        out = null & want.values.null
        if members is not None:
            return out | (members & self.sample.value_mask(want.attribute, want.values)).any(axis=1)
        for start, end in interval_bounds(uniq, want.values):
            # the partition's values span [uniq[lo], uniq[hi]]: an interval holding no sampled value
            # (start == end) still overlaps a range that straddles it
            out |= (hi >= start) & (lo < end) & (hi >= 0)
        return out


__all__ = ["JoinPricing", "joined_attribute", "match_attribute", "is_joined", "ATTRIBUTE_PREFIX", "MATCH_PREFIX"]

"""Blocks: the units Parquet skips, with their min/max boxes, and which of them a scan must read.

Spark reads a Parquet file by row groups, and inside a row group by the pages of the filtered
columns (their column index; ``numOutputRows`` counts only the rows of the pages it keeps). A
*block* is the finest such unit a layout has: a row group, or a page where the writer cuts pages
smaller than row groups. Per attribute a block carries the codes of its min and max in a sorted
list of reference values (``values``) and whether it may hold NULL. A scan must read a block when
its partition may hold matches and, for every attribute it constrains, the block's box may hold a
value of the scan's set: Parquet's own rule (``StatisticsFilter``), evaluated on codes.

Two kinds of boxes:

* *exact* (``Blocks.exact``): the real min and max from the footers of the current table. The
  reference values are those very mins and maxes.
* *sampled*: a new layout's blocks are simulated on the sample; a box spans the block's sample
  values, which sit inside its real range. The real range reaches into the gaps next to the
  sample box (values no sample row has), so a box also covers the open gap below its min and the
  one above its max. Example, sample values 100 and 105 of a sorted key in neighbouring blocks:
  ``key = 102`` falls in the gap (100, 105) and is read from one of them, not from neither.
  Where a discrete domain leaves no value between two sample values (consecutive dates), a gap
  is empty and nothing is added.

A set's interval maps to a code range ``[start, end)`` of the reference values inside it; an
interval with no reference value inside is the empty range at ``k`` (it lies in gap ``k``,
between ``values[k-1]`` and ``values[k]``). Spark pushes ``IN`` lists of more than
``IN_PUSHDOWN_LIMIT`` values as ``>= min AND <= max`` (``spark.sql.parquet.pushdown.
inFilterThreshold``), so such point lists are read as their hull. Derived attributes
(``a < b``) are never pushed to Parquet and never skip a block.
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass
from decimal import Decimal
from typing import Callable, Iterator, Mapping, Sequence

import numpy as np

from planner.cnf.ir import Pred
from planner.cnf.values import Kind
from planner.cnf.valueset import Interval, ValueSet

IN_PUSHDOWN_LIMIT = 10
NO_VALUE = np.iinfo(np.int64).max  # cmin of a block with no value (only NULLs) for an attribute


@dataclass(frozen=True, eq=False)
class Blocks:
    part: np.ndarray  # int64 per block: its partition (index into the layout's partitions)
    rows: np.ndarray  # float per block: table rows it holds
    values: Mapping[str, Sequence]  # attribute -> sorted reference values the codes index
    cmin: Mapping[str, np.ndarray]  # attribute -> code of the block's min (NO_VALUE: no value)
    cmax: Mapping[str, np.ndarray]  # attribute -> code of the block's max (-1: no value)
    nulls: Mapping[str, np.ndarray]  # attribute -> the block may hold NULL
    exact: bool = False  # boxes are the real min/max (footers), not sample boxes
    unknown: Mapping[str, np.ndarray] | None = None  # attribute -> no statistics for the block

    def __len__(self) -> int:
        return len(self.part)


class LazyColumns(Mapping):
    """One part (``index``) of per-attribute tuples computed on first use and shared: blocks are
    built for every column a model might ask about, but only the asked ones are boxed."""

    def __init__(self, names, compute: Callable[[str], tuple], index: int):
        self._names, self._compute, self._index = frozenset(names), compute, index

    def __getitem__(self, attribute: str):
        if attribute not in self._names:
            raise KeyError(attribute)
        return self._compute(attribute)[self._index]

    def __contains__(self, attribute) -> bool:
        return attribute in self._names

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._names))

    def __len__(self) -> int:
        return len(self._names)


def lazy_boxes(names, compute: Callable[[str], tuple]) -> tuple[LazyColumns, ...]:
    """``(values, cmin, cmax, nulls)`` mappings over ``names`` from one cached ``compute(a)``."""
    cache: dict[str, tuple] = {}

    def once(a: str) -> tuple:
        got = cache.get(a)
        if got is None:
            got = cache[a] = compute(a)
        return got

    return tuple(LazyColumns(names, once, i) for i in range(4))


def pushed_intervals(values: ValueSet) -> tuple[Interval, ...]:
    """The intervals Parquet filters by: a list of more than ``IN_PUSHDOWN_LIMIT`` points is its hull."""
    points = [iv for iv in values.intervals if iv.is_point]
    if len(points) <= IN_PUSHDOWN_LIMIT:
        return values.intervals
    rest = [iv for iv in values.intervals if not iv.is_point]
    hull = Interval(points[0].lo, points[-1].hi, True, True)
    return tuple(ValueSet.of(values.kind, rest + [hull]).intervals)


@dataclass(frozen=True)
class CodeRange:
    start: int  # first reference value inside the interval
    end: int  # one past the last
    down: bool  # the interval reaches into the gap below values[start] (gap ``start``)
    up: bool  # the interval reaches into the gap above values[end - 1] (gap ``end``)


def code_ranges(values: Sequence, vs: ValueSet, quantum=None) -> list[CodeRange]:
    """Each pushed interval of ``vs`` as a code range over the sorted reference ``values``.

    ``quantum``: the step of a decimal column's values (0.01 for ``decimal(15,2)``): no value lies
    between 0.05 and 0.06, so ``[0.05, 0.06)`` does not reach into the gap above 0.05."""
    m = len(values)
    out = []
    for iv in pushed_intervals(vs):
        start = 0 if iv.lo is None else (bisect.bisect_left(values, iv.lo) if iv.lo_closed
                                         else bisect.bisect_right(values, iv.lo))
        end = m if iv.hi is None else (bisect.bisect_right(values, iv.hi) if iv.hi_closed
                                       else bisect.bisect_left(values, iv.hi))
        if start > end:  # an empty interval (cannot come from a normalised set)
            continue
        # Does the interval hold values strictly below values[start] (above values[end - 1])? A
        # normalised set closes integer and date bounds, so there the bound is such a value
        # itself; a decimal's next value is a quantum away; on a dense domain, an open bound below
        # values[start] leaves some between.
        if quantum is None:
            down = iv.lo is None or (start < m and iv.lo < values[start])
            up = iv.hi is None or (end >= 1 and iv.hi > values[end - 1])
        else:
            below, above = (values[start] - quantum if start < m else None), (values[end - 1] + quantum if end else None)
            down = iv.lo is None or (below is not None and (below >= iv.lo if iv.lo_closed else below > iv.lo))
            up = iv.hi is None or (above is not None and (above <= iv.hi if iv.hi_closed else above < iv.hi))
        out.append(CodeRange(start, end, down, up))
    return out


def box_overlap(blocks: Blocks, attribute: str, ranges: Sequence[CodeRange],
                owner: np.ndarray | None = None, owners: int = 1) -> np.ndarray:
    """bool[owners, blocks]: the block's box (on ``attribute``) may hold a value of one of the
    ranges of each owner (``owner[i]``: the owner of ``ranges[i]``, in ascending order; default
    all ranges belong to one owner)."""
    lo, hi = blocks.cmin[attribute], blocks.cmax[attribute]
    out = np.zeros((owners, len(blocks)), dtype=bool)
    if ranges:
        start = np.array([r.start for r in ranges])[:, None]
        end = np.array([r.end for r in ranges])[:, None]
        up = np.array([r.up for r in ranges])[:, None]
        down = np.array([r.down for r in ranges])[:, None]
        nonempty = start < end
        core = (lo < end) & (hi >= start)
        if blocks.exact:
            inside = (lo < start) & (hi >= start)  # an interval strictly inside the box's span
            hit = np.where(nonempty, core, inside)
        else:
            # Sampled boxes also cover the gaps next to them: an interval reaching into the gap
            # just below (above) a box, or lying in a gap inside or next to it.
            edge = (up & (lo == end)) | (down & (hi + 1 == start))
            gap = (lo <= start) & (hi + 1 >= start)
            hit = np.where(nonempty, core | edge, gap)
        owner = np.zeros(len(ranges), dtype=np.int64) if owner is None else np.asarray(owner)
        firsts = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])
        out[owner[firsts]] = np.logical_or.reduceat(hit, firsts, axis=0)
    out &= hi >= 0
    unknown = blocks.unknown.get(attribute) if blocks.unknown else None
    if unknown is not None:
        out |= unknown
    return out


class BlockReader:
    """Which blocks each scan reads: ``reads(scans, part_hits)``. Code ranges are cached per
    (attribute, set) in ``ranges`` (share it between readers of blocks on the same values)."""

    def __init__(self, blocks: Blocks, derived=(), ranges: dict | None = None):
        self.blocks = blocks
        self.derived = set(derived)
        self._ranges: dict[tuple[str, ValueSet], list[CodeRange]] = {} if ranges is None else ranges

    def ranges(self, attribute: str, vs: ValueSet) -> list[CodeRange]:
        key = (attribute, vs)
        got = self._ranges.get(key)
        if got is None:
            got = self._ranges[key] = code_ranges(self.blocks.values[attribute], vs, self._quantum(attribute, vs))
        return got

    def _quantum(self, attribute: str, vs: ValueSet):
        """The step of a decimal column's sampled values (its scale), for the gaps next to sampled
        boxes; ``None`` elsewhere."""
        if self.blocks.exact or vs.kind is not Kind.DECIMAL:
            return None
        key = ("quantum", attribute)
        if key not in self._ranges:
            values = self.blocks.values[attribute]
            digits = min((v.as_tuple().exponent for v in values if isinstance(v, Decimal)), default=None)
            self._ranges[key] = None if digits is None else Decimal(1).scaleb(digits)
        return self._ranges[key]

    def may_hold(self, attribute: str, vs: ValueSet) -> np.ndarray | None:
        """bool[blocks] for one attribute's set; ``None`` when blocks say nothing about it."""
        got = self.may_hold_all(attribute, [vs])
        return None if got is None else got[0]

    def may_hold_all(self, attribute: str, sets: Sequence[ValueSet]) -> np.ndarray | None:
        """bool[sets, blocks]: the blocks each set's values may lie in (NULL included)."""
        b = self.blocks
        if attribute not in b.cmin or attribute in self.derived:
            return None
        ranges, owner = [], []
        for i, vs in enumerate(sets):
            rs = self.ranges(attribute, vs)
            ranges += rs
            owner += [i] * len(rs)
        ok = box_overlap(b, attribute, ranges, np.array(owner, dtype=np.int64), len(sets))
        wants_null = np.array([vs.null for vs in sets])
        if wants_null.any():
            ok[wants_null] |= b.nulls[attribute]
        return ok

    def reads(self, scans: Sequence, part_hits: np.ndarray) -> np.ndarray:
        """bool[scans, blocks]: the block's partition may hold matches and its boxes may too."""
        hits = part_hits[:, self.blocks.part] if len(self.blocks) else np.zeros((len(scans), 0), dtype=bool)
        live = hits.any(axis=1)
        by_attribute: dict[str, list[int]] = {}
        for i, scan in enumerate(scans):
            if live[i]:
                for a in scan.sets:
                    by_attribute.setdefault(a, []).append(i)
        for a, idx in by_attribute.items():
            ok = self.may_hold_all(a, [scans[i].sets[a] for i in idx])
            if ok is not None:
                hits[idx] &= ok
        for i, scan in enumerate(scans):
            if live[i]:
                for clause in scan.groups.residual:
                    hits[i] &= self._clause(clause)
        return hits

    def _clause(self, clause) -> np.ndarray:
        """A multi-column OR pushed to Parquet: a block may satisfy it if it may satisfy an atom."""
        out = np.zeros(len(self.blocks), dtype=bool)
        for atom in clause:
            ok = self.may_hold(atom.column, atom.true) if isinstance(atom, Pred) else None
            if ok is None:
                return np.ones(len(self.blocks), dtype=bool)  # an atom Parquet cannot judge
            out |= ok
        return out


__all__ = ["Blocks", "BlockReader", "CodeRange", "IN_PUSHDOWN_LIMIT", "LazyColumns", "NO_VALUE", "box_overlap",
           "code_ranges", "lazy_boxes", "pushed_intervals"]

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

Dictionaries. Parquet also drops a whole row group whose dictionary holds no value of the
predicate (parquet-mr's ``DictionaryFilter``), where every page of the column chunk is
dictionary-encoded: the writer keeps a dictionary only where it pays on the first page
(``BlockReader._encoded``; nearly unique values, such as ``l_extendedprice`` or ``l_orderkey`` in
a layout not sorted on it, are written plain and get no such test). ``l_orderkey = 4242`` on the
table in ``l_orderkey`` order reads nothing when no order 4242 exists,
although 4242 lies between a row group's min and max; ``l_partkey = 123`` reads the ~30 row groups
holding part 123, not every one whose box spans it. Which values a row group holds the sample
cannot list, so the model counts a row group with the probability that it holds one:

    P(group reads) = 1 - (1 - f)^R,   f = the share of the group's rows whose value lies in the set

with ``R`` the group's rows not in the sample and ``f`` estimated from the sample's distribution
inside the group's box: ``f = rows(set ∩ box) / rows(box)`` (a value no sample row holds counts
``1 / ndv``); a group whose own sample rows hold a value of the set is read for certain. On a
column the group is sorted on, its box holds only its own values and ``f`` is large (a key of 4
rows in a group of 15,000 sorted keys: ``1 - e^-4``); on a column it is not sorted on, ``f`` is
the value's share of the table (``1 - e^-(15000 · 4/6M)`` = 1 %). For ranges of any width ``f``
is large and this factor is 1. Rows read are then expected rows.
"""
from __future__ import annotations

import bisect
import datetime as dt
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Callable, Iterator, Mapping, Sequence

import numpy as np

from planner.cnf.ir import Pred
from planner.cnf.valueset import Interval, ValueSet
from planner.semantics.kinds import Kind

IN_PUSHDOWN_LIMIT = 10
# The false-positive rate of a bloom filter the footers name (they do not say its rate):
# parquet-java's default. A filter tested is priced as a seek, whatever its size (planner.costmodel.timing).
FOOTER_BLOOM_FPP = 0.01
NO_VALUE = np.iinfo(np.int64).max  # cmin of a block with no value (only NULLs) for an attribute
# A simulated chunk counts as dictionary-only when its dictionary and ids take at most this share
# of its plain bytes. The writer decides chunk by chunk (``< 1``), and a column whose distinct
# values per row sit near the break-even (a key in a z-ordered layout) falls either side of it in
# the same table. Counting such a chunk as plain can only price a lookup high (the filter pays
# where the dictionary would have), never low (tests/test_bloom.py, near_break_even).
DICTIONARY_MARGIN = 0.8


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
    group: np.ndarray | None = None  # row group of each block (pages of one group); None: a block is a group
    sampled: np.ndarray | None = None  # sample rows in each block (sampled boxes only)
    members: Callable[[str], tuple] | None = None  # attribute -> (codes, groups) of the sample rows, by code
    # attribute -> whether each block's column chunk is dictionary-only (footers); None: simulated
    dictionary: Mapping[str, np.ndarray] | None = None
    group_of: np.ndarray | None = None  # each sample row's row group (-1: in none; sampled boxes only)
    # attribute -> dictionary-only per row group, as ``BlockReader._encoded`` judged it (shared by
    # every reader of these blocks)
    encoded: dict = field(default_factory=dict, repr=False)
    # attribute -> whether each block's column chunk has a bloom filter (footers); None: as the
    # reader's ``bloom`` rates say (simulated blocks)
    bloom: Mapping[str, np.ndarray] | None = None

    def __len__(self) -> int:
        return len(self.part)

    def groups(self) -> tuple[np.ndarray, np.ndarray]:
        """(group index of each block, first block of each group): groups are runs of blocks."""
        g = np.arange(len(self.part)) if self.group is None else self.group
        firsts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]]) if len(g) else np.zeros(0, dtype=np.int64)
        return np.cumsum(np.r_[True, g[1:] != g[:-1]]) - 1 if len(g) else g, firsts


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


def plain_width(values: Sequence) -> float | None:
    """Bytes a plain-encoded value of a column takes in Parquet as Spark writes it, judged from
    ``values`` (the sample's, sorted); ``None`` for booleans, which take a bit either way. The
    declared type is not known here: a BIGINT or DECIMAL(15,2) of small values counts 4 bytes,
    not 8, and the writer's rule then errs toward plain pages, i.e. toward reading the row group."""
    v = next((x for x in values if x is not None), None)
    if v is None or isinstance(v, bool):
        return None
    if isinstance(v, (int, np.integer)):
        return 4.0 if all(-2**31 <= x < 2**31 for x in (values[0], values[-1])) else 8.0
    if isinstance(v, Decimal):  # INT32 up to 9 digits, INT64 up to 18
        digits = max(len(x.as_tuple().digits) for x in (values[0], values[-1]))
        return 4.0 if digits <= 9 else 8.0
    if isinstance(v, (float, np.floating, dt.datetime)):
        return 8.0
    if isinstance(v, dt.date):
        return 4.0
    if isinstance(v, (str, bytes)):
        step = max(1, len(values) // 1000)
        return 4.0 + float(np.mean([len(x) for x in values[::step]]))
    return 8.0


def pushed_intervals(values: ValueSet) -> tuple[Interval, ...]:
    """The intervals Parquet filters by: a list of more than ``IN_PUSHDOWN_LIMIT`` points is its hull."""
    points = [iv for iv in values.intervals if iv.is_point]
    if len(points) <= IN_PUSHDOWN_LIMIT:
        return values.intervals
    rest = [iv for iv in values.intervals if not iv.is_point]
    hull = Interval(points[0].lo, points[-1].hi, True, True)
    return tuple(ValueSet.of(values.kind, rest + [hull]).intervals)


def is_lookup(vs: ValueSet) -> bool:
    """Whether Parquet can test the set value by value (a dictionary or a bloom filter, for ``=``
    and ``IN``): a few points, NULL not among them. Adjacent integers merge into a range, which a
    BETWEEN may have written: not counted."""
    return (bool(vs.intervals) and not vs.null and len(vs.intervals) <= IN_PUSHDOWN_LIMIT
            and all(iv.is_point for iv in vs.intervals))


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


class Population:
    """A sample's distribution of each attribute over its sorted values (``SampleFrame``):
    how many sample rows lie in a range of values, and the share of one value no row holds."""

    def __init__(self, sample, rows: int | None = None):
        """``rows``: the table's rows (the table's distinct values are guessed from them; without
        them, the sample's own count stands in, which counts a nearly unique column's values too
        few and its lookups too likely to hit a row group)."""
        self.sample = sample
        self.rows = sample.n if rows is None else rows
        self._cum: dict[str, np.ndarray] = {}
        self._point: dict[str, float] = {}
        self._order: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def cum(self, attribute: str) -> np.ndarray:
        """``cum[c]``: sample rows with a code below ``c`` (NULLs not counted)."""
        got = self._cum.get(attribute)
        if got is None:
            codes = self.sample.codes(attribute)
            counts = np.bincount(codes[codes >= 0], minlength=len(self.sample.uniques(attribute)))
            got = self._cum[attribute] = np.r_[0, np.cumsum(counts)]
        return got

    def pairs(self, attribute: str, group_of: np.ndarray, groups: int, max_lag: int = 16) -> np.ndarray:
        """Per group: the pairs of sample rows in it that share a value of ``attribute``
        (``group_of``: each sample row's group, -1: none). Rows are visited in the attribute's
        order, computed once; pairs of a value held by more than ``max_lag`` + 1 sample rows are
        undercounted, which only makes values look rarer (plain pages, lookups read)."""
        got = self._order.get(attribute)
        if got is None:
            codes = self.sample.codes(attribute)
            order = np.argsort(codes, kind="stable")
            order = order[codes[order] >= 0]
            got = self._order[attribute] = (order, codes[order])
        order, codes = got
        g = group_of[order]
        out = np.zeros(groups)
        for lag in range(1, min(max_lag, len(order) - 1) + 1):
            same = (codes[lag:] == codes[:-lag]) & (g[lag:] == g[:-lag]) & (g[lag:] >= 0)
            if not same.any():
                break
            out += np.bincount(g[lag:][same], minlength=groups)[:groups]
        return out

    def point(self, attribute: str) -> float:
        """The share of the table one value the sample does not hold makes: ``1 / ndv``."""
        got = self._point.get(attribute)
        if got is None:
            from planner.costmodel.selectivity import sample_ndv
            codes = self.sample.codes(attribute)
            got = self._point[attribute] = 1.0 / max(sample_ndv(codes, self.rows), 1.0)
        return got


class BlockReader:
    """Which blocks each scan reads: ``reads(scans, part_hits)``. Code ranges are cached per
    (attribute, set) in ``ranges`` (share it between readers of blocks on the same values);
    ``population`` (the sample's distributions) prices the row groups' dictionaries."""

    def __init__(self, blocks: Blocks, derived=(), ranges: dict | None = None,
                 population: Population | None = None, bloom: Mapping[str, float] | None = None):
        """``bloom``: column -> the false-positive rate of the bloom filter a simulated layout
        writes per row group (``planner.costmodel.bloom``); the current table's chunks say whether
        they have one."""
        self.blocks = blocks
        self.bloom = dict(bloom or {})
        self.bloom_reads: np.ndarray | None = None  # per scan: the filters its lookups test
        self.derived = set(derived)
        self._ranges: dict[tuple[str, ValueSet], list[CodeRange]] = {} if ranges is None else ranges
        self.population = population
        self._group = blocks.groups() if population is not None else None
        self._group_boxes: dict[str, tuple] = {}
        # A group's own sample rows tell for certain that it holds a value; where they are a few
        # percent of its rows, the probability above already says so (1 - e^-(R/m)), so they are
        # only looked up where the sample is a large part of the groups (small tables, tests).
        self._own_counts = blocks.sampled is not None and blocks.sampled.sum() >= 0.05 * blocks.rows.sum()

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

    def _sample_box(self, attribute: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Per row group: its box as sample codes ``[lo, hi)``, its sample rows inside, its rows."""
        got = self._group_boxes.get(attribute)
        if got is None:
            b, (_, firsts) = self.blocks, self._group
            lo = np.minimum.reduceat(b.cmin[attribute], firsts)
            hi = np.maximum.reduceat(b.cmax[attribute], firsts)
            rows = np.add.reduceat(b.rows, firsts)
            has = hi >= 0
            values, uniq = b.values[attribute], self.population.sample.uniques(attribute)
            if values is uniq:  # sampled boxes: codes are the sample's, and reach a code further
                lo_s, hi_s = np.where(has, np.maximum(lo - 1, 0), 0), np.where(has, np.minimum(hi + 2, len(uniq)), 0)
            else:  # the footers' min and max placed among the sample's values
                lo_s = np.array([bisect.bisect_left(uniq, values[c]) if h else 0 for c, h in zip(lo, has)])
                hi_s = np.array([bisect.bisect_right(uniq, values[c]) if h else 0 for c, h in zip(hi, has)])
            cum = self.population.cum(attribute)
            got = self._group_boxes[attribute] = (lo_s, hi_s, cum[hi_s] - cum[lo_s], rows)
        return got

    def dictionary(self, attribute: str, sets: Sequence[ValueSet]) -> np.ndarray | None:
        """float[sets, groups]: the probability that a row group's dictionary holds a value of
        each set (see the module's docstring)."""
        b = self.blocks
        if self.population is None or attribute not in b.cmin or attribute in self.derived \
                or not self.population.sample.has(attribute):
            return None
        lo, hi, inside, rows = self._sample_box(attribute)
        unseen = rows if b.sampled is None else np.maximum(rows - np.add.reduceat(b.sampled, self._group[1]), 0)
        cum, n = self.population.cum(attribute), max(self.population.sample.n, 1)
        uniq = self.population.sample.uniques(attribute)
        point = self.population.point(attribute) * n  # sample rows one unseen value stands for
        out = np.zeros((len(sets), len(lo)))
        for i, vs in enumerate(sets):
            if b.exact and not all(iv.is_point for iv in vs.intervals):
                out[i] = 1.0  # the footers' boxes are exact: only a lookup's dictionary test is left
                continue
            share = np.zeros(len(lo))
            for r in code_ranges(uniq, vs):
                if r.start < r.end:
                    a, z = np.maximum(lo, r.start), np.minimum(hi, r.end)
                    share += np.where(z > a, cum[np.maximum(z, a)] - cum[a], 0)
                else:  # a value (or gap) the sample does not hold, inside the group's box
                    share += np.where((lo <= r.start) & (hi >= r.start), point, 0.0)
            f = np.minimum(1.0, share / np.maximum(inside, 1.0))
            held = -np.expm1(unseen * np.log1p(-np.minimum(f, 1 - 1e-12)))
            if held.min() < 0.999:  # a lookup the dictionaries or bloom filters may drop groups for
                held = self._tested(attribute, vs, held)
            held = np.where(inside > 0, held, 1.0)  # no sample row in the box: no evidence, read it
            if b.members is not None and self._own_counts and held.min() < 0.999:
                held = np.maximum(held, self._own(attribute, code_ranges(uniq, vs), len(lo)))
            if b.exact:  # a footer's min and max are values of the row group
                held = np.maximum(held, self._at_edge(attribute, vs))
            out[i] = held
        return out

    def _tested(self, attribute: str, vs: ValueSet, held: np.ndarray) -> np.ndarray:
        """``held`` where a row group's chunk can tell: dictionary-only chunks by their
        dictionary (exact), plain chunks with a bloom filter by it (a group lacking every value of
        the set is still read with the chance that one of them is a false positive); 1 elsewhere."""
        encoded = self._encoded(attribute)
        bloomed, rate = self._bloomed(attribute, vs)
        if bloomed is None:
            return np.where(encoded, held, 1.0)  # plain pages: no dictionary to test
        miss = 1.0 - (1.0 - rate) ** len(vs.intervals)
        return np.where(encoded, held, np.where(bloomed, held + (1.0 - held) * miss, 1.0))

    def _bloomed(self, attribute: str, vs: ValueSet) -> tuple[np.ndarray | None, float]:
        """bool per row group: its chunk has a bloom filter the set can be tested by; and the rate."""
        if not is_lookup(vs):
            return None, 0.0
        b, (_, firsts) = self.blocks, self._group
        if b.bloom is not None and attribute in b.bloom:
            return np.logical_and.reduceat(b.bloom[attribute], firsts), FOOTER_BLOOM_FPP
        if attribute in self.bloom:
            return np.ones(len(firsts), dtype=bool), self.bloom[attribute]
        return None, 0.0

    def _encoded(self, attribute: str) -> np.ndarray:
        """bool per row group: whether its chunk of ``attribute`` is dictionary-only, so that the
        dictionary filter applies. From the footers where they say; on simulated blocks, by
        parquet-mr's rule: the writer keeps the dictionary when, on the first page, the dictionary
        and the ids take fewer bytes than plain values,

            D · w + N · ceil(log2 D) / 8 < N · w      (N rows on the page, D distinct values, w bytes a value)

        with ``DICTIONARY_MARGIN`` on the right: an estimate near the break-even counts as plain.

        else it writes plain pages and no dictionary (``l_orderkey`` in tpchgen order: 4 rows a
        key, kept; the same column in a layout sorted on other columns: nearly unique, plain).
        ``D`` is the smaller of two estimates, each of which can only err high: the values the
        page's box spans, with each value's rows spread over the box's rows at random (exact for
        a column the page is sorted on), and the page's rows over the rows a value has in its
        row group, read from the pairs of sample rows that share a value there."""
        b, (_, firsts) = self.blocks, self._group
        known = b.encoded
        got = known.get(attribute)
        if got is not None:
            return got
        if b.dictionary is not None or b.exact:
            flags = (b.dictionary or {}).get(attribute)
            got = np.ones(len(firsts), dtype=bool) if flags is None else np.logical_and.reduceat(flags, firsts)
        else:
            got = self._simulated_encoding(attribute, firsts)
        known[attribute] = got
        return got

    def _simulated_encoding(self, attribute: str, firsts: np.ndarray) -> np.ndarray:
        b, pop = self.blocks, self.population
        uniq = pop.sample.uniques(attribute)
        if isinstance(next((v for v in uniq if v is not None), None), (float, np.floating)):
            # the planner's tables store FLOAT/DOUBLE pages plain (``planner.emit.ddl``: the
            # dictionary filter tells -0.0 from +0.0), so no dictionary drops their row groups
            return np.zeros(len(firsts), dtype=bool)
        width = plain_width(uniq)
        if width is None or b.sampled is None or b.group_of is None or not len(firsts):
            return np.ones(len(firsts), dtype=bool)
        lo, hi = b.cmin[attribute][firsts], b.cmax[attribute][firsts]
        has = hi >= 0
        lo_c, hi_c = np.where(has, lo, 0), np.where(has, np.minimum(hi + 1, len(uniq)), 0)
        cum = pop.cum(attribute)
        scale = float(b.rows.sum()) / max(float(b.sampled.sum()), 1.0)
        page = b.rows[firsts]
        box_rows = np.maximum((cum[hi_c] - cum[lo_c]) * scale, 1.0)
        values = np.maximum(1.0, (hi_c - lo_c) / max(len(uniq), 1) / pop.point(attribute))
        q = np.minimum(page / box_rows, 1 - 1e-12)
        by_box = values * -np.expm1((box_rows / values) * np.log1p(-q))
        plain = has & (by_box * width + page * np.ceil(np.log2(np.maximum(by_box, 2.0))) / 8
                       >= DICTIONARY_MARGIN * page * width)
        if not plain.any():
            return np.ones(len(firsts), dtype=bool)  # the upper estimate keeps every dictionary already
        # rows a value has in the row group: 1 + 2 · pairs / (N · s²), s the group's sampling rate
        pairs = pop.pairs(attribute, b.group_of, len(firsts))
        group_rows = np.add.reduceat(b.rows, firsts)
        sampled = np.add.reduceat(b.sampled, firsts)
        rate = sampled / np.maximum(group_rows, 1.0)
        per_value = 1.0 + 2.0 * pairs / np.maximum(group_rows * rate ** 2, 1e-12)
        distinct = np.minimum(np.minimum(by_box, page / per_value), page)
        bits = np.ceil(np.log2(np.maximum(distinct, 2.0)))
        return ~has | (distinct * width + page * bits / 8 < DICTIONARY_MARGIN * page * width)

    def _at_edge(self, attribute: str, vs: ValueSet) -> np.ndarray:
        """1 for the row groups whose min or max is one of the set's points."""
        b, (_, firsts) = self.blocks, self._group
        values = b.values[attribute]
        codes = [c for iv in vs.intervals for c in [bisect.bisect_left(values, iv.lo)]
                 if c < len(values) and values[c] == iv.lo]
        lo, hi = b.cmin[attribute][firsts], b.cmax[attribute][firsts]
        return (np.isin(lo, codes) | np.isin(hi, codes)).astype(float)

    def _own(self, attribute: str, ranges: Sequence[CodeRange], groups: int) -> np.ndarray:
        """1 for the row groups whose own sample rows hold a value of ``ranges``."""
        codes, group = self.blocks.members(attribute)
        out = np.zeros(groups)
        for r in ranges:
            a, z = np.searchsorted(codes, [r.start, r.end])
            out[group[a:z]] = 1.0
        return out

    def reads(self, scans: Sequence, part_hits: np.ndarray) -> np.ndarray:
        """float[scans, blocks]: 1 where the block's partition may hold matches and its boxes may
        too, times the chance its row group's dictionaries hold a value of every set."""
        hits = part_hits[:, self.blocks.part] if len(self.blocks) else np.zeros((len(scans), 0), dtype=bool)
        live = hits.any(axis=1)
        by_attribute: dict[str, list[int]] = {}
        for i, scan in enumerate(scans):
            if live[i]:
                for a in scan.sets:
                    by_attribute.setdefault(a, []).append(i)
        chance = np.ones(hits.shape)
        self.bloom_reads = np.zeros(len(scans))
        for a, idx in by_attribute.items():
            sets = [scans[i].sets[a] for i in idx]
            distinct = list(dict.fromkeys(sets))  # scans often repeat a set: judge each once
            where = [{vs: j for j, vs in enumerate(distinct)}[vs] for vs in sets]
            ok = self.may_hold_all(a, distinct)
            if ok is not None:
                hits[idx] &= ok[where]
                if self._group is not None and (self.bloom or self.blocks.bloom):
                    self._count_bloom_checks(a, idx, [distinct[j] for j in where], hits)
            held = self.dictionary(a, [vs for vs in distinct]) if ok is not None else None
            if held is not None:
                # NULL is never in a dictionary; a set wanting NULL is judged by its null count
                wants_null = np.array([vs.null for vs in distinct])
                held[wants_null] = 1.0
                chance[idx] *= held[where][:, self._group[0]]
        for i, scan in enumerate(scans):
            if live[i]:
                for clause in scan.groups.residual:
                    hits[i] &= self._clause(clause)
        return hits * chance

    def _count_bloom_checks(self, attribute: str, idx: Sequence[int], sets: Sequence[ValueSet],
                            hits: np.ndarray) -> None:
        """The filters each lookup tests: one per row group its statistics keep, of plain chunks."""
        _, firsts = self._group
        encoded = None
        for i, vs in zip(idx, sets):
            bloomed, _ = self._bloomed(attribute, vs)
            if bloomed is None:
                continue
            if encoded is None:
                encoded = self._encoded(attribute)
            kept = np.logical_or.reduceat(hits[i], firsts) if len(firsts) else np.zeros(0, dtype=bool)
            self.bloom_reads[i] += float((kept & bloomed & ~encoded).sum())

    def _clause(self, clause) -> np.ndarray:
        """A multi-column OR pushed to Parquet: a block may satisfy it if it may satisfy an atom."""
        out = np.zeros(len(self.blocks), dtype=bool)
        for atom in clause:
            ok = self.may_hold(atom.column, atom.true) if isinstance(atom, Pred) else None
            if ok is None:
                return np.ones(len(self.blocks), dtype=bool)  # an atom Parquet cannot judge
            out |= ok
        return out


__all__ = ["Blocks", "BlockReader", "CodeRange", "FOOTER_BLOOM_FPP", "IN_PUSHDOWN_LIMIT", "is_lookup", "LazyColumns", "NO_VALUE", "box_overlap",
           "code_ranges", "lazy_boxes", "pushed_intervals"]

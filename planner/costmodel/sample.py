"""The sample, dictionary-encoded per attribute, for fast vectorised predicate evaluation.

Each attribute is encoded once: its distinct sample values sorted, and one integer code per row
(-1 for NULL). A value set is then evaluated on the sorted distinct values with bisection (a few
slices), and mapped to rows with one numpy gather:

    uniques  = [0.00, 0.01, ..., 0.10]            codes = [3, 0, 10, -1, ...]
    set [0.05, 0.07]  ->  uniq_mask = [F F F F F T T T F F F] + [null?]
    row mask          =   uniq_mask[codes]

Masks are cached per (attribute, value set); the sample keeps correlations between columns, so a
conjunction is just ``&`` of masks. Derived attributes (``l_commitdate < l_receiptdate``) are
computed from their two columns with pyarrow, NULL when either side is.

Where the sample carries its rows' positions in the table (``POSITION_COLUMNS``: data file and
row number, from ``hive_integration.spark.footers``), its rows are put in the table's own order (files
by name, rows by number) and the position columns leave the attributes. ``source_ordered`` then
says that the sample's row order *is* the table's physical order, which prices the table as it is
when its footers cannot be read (``planner.costmodel.current``).

A new layout's writer does not keep that order: Spark's sort merges its spill runs round-robin
where keys tie, so rows of an unordered partition (or of one sort key value) come interleaved from
several places of the source (a partition of lineitem written ``SORT BY planner_pid`` alternates
rows from the start and the middle of ``l_orderkey``'s range, so a range of ``l_orderkey`` reads
several times its rows). So the cost model breaks ties at random (``salt``), and the planner keeps
an order it needs by sorting on it explicitly.
"""
from __future__ import annotations

import bisect
import math
from typing import Mapping

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from planner.cnf.ir import ColumnPair
from planner.cnf.values import float_value
from planner.cnf.valueset import ValueSet
from planner.costmodel.statistics import POSITION_COLUMNS, POSITION_FILE, POSITION_ROW

_PC_OPS = {"<": pc.less, "<=": pc.less_equal, "=": pc.equal, ">": pc.greater, ">=": pc.greater_equal,
           "<>": pc.not_equal}


def _plain(table: pa.Table) -> pa.Table:
    """The sample with columns in the planner's value model.

    * string_view (as tpchgen-cli's Parquet reads back) has no index_in kernel: use string.
    * A time-zone-aware timestamp (Spark's ``toArrow`` tags TIMESTAMP with the session time zone)
      becomes the naive instant in UTC, as the planner holds TIMESTAMP values
      (``planner.cnf.values``): the same instant in every session time zone. Python cannot even
      compare an aware sample value with a naive bound (TypeError).
    """
    columns, fields = [], []
    for f, col in zip(table.schema, table.columns):
        if pa.types.is_string_view(f.type):
            col = col.cast(pa.string())
        elif pa.types.is_timestamp(f.type) and f.type.tz is not None:
            col = col.cast(pa.timestamp(f.type.unit))  # drops the zone, keeps the UTC instant
        columns.append(col)
        fields.append(pa.field(f.name, col.type))
    return pa.table(columns, schema=pa.schema(fields))


def _by_position(table: pa.Table):
    """(table in file order without the position columns, file names, file index and row number
    of each row); the last three are ``None`` when the sample has no positions."""
    if not set(POSITION_COLUMNS) <= set(table.column_names):
        return table.drop_columns([c for c in POSITION_COLUMNS if c in table.column_names]), None, None, None
    files = table.column(POSITION_FILE).combine_chunks().dictionary_encode()
    names = files.dictionary.to_pylist()
    rank = np.argsort(np.argsort(np.array(names, dtype=object)))  # dictionary index -> name order
    file_of = rank[files.indices.to_numpy(zero_copy_only=False)].astype(np.int64)
    row = table.column(POSITION_ROW).to_numpy().astype(np.int64)
    order = np.lexsort((row, file_of))
    table = table.take(pa.array(order)).drop_columns(list(POSITION_COLUMNS))
    return table, sorted(names), file_of[order], row[order]


class SampleFrame:
    MAX_CACHED_MASKS = 512  # a mask is one byte per sample row: bound the memory they hold

    def __init__(self, table: pa.Table, derived: Mapping[str, ColumnPair] | None = None):
        table, self.files, self.file_of, self.row_in_file = _by_position(table)
        self.source_ordered = self.files is not None
        self.table = table = _plain(table)
        self._names = frozenset(table.column_names)
        self.n = table.num_rows
        self.derived = dict(derived or {})
        self._codes: dict[str, np.ndarray] = {}
        self._uniques: dict[str, list] = {}
        self._masks: dict[tuple[str, ValueSet], np.ndarray] = {}
        self._non_finite: dict[str, tuple[np.ndarray, np.ndarray] | None] = {}

    @property
    def salt(self) -> np.ndarray:
        """A fixed pseudo-random integer per row: the order of rows a writer leaves unordered
        (ties of its sort key, and which of a partition's files a row goes to)."""
        if getattr(self, "_salt", None) is None:
            self._salt = np.random.default_rng(20240611).integers(0, 1 << 30, self.n)
        return self._salt

    def has(self, attribute: str) -> bool:
        return attribute in self.derived or attribute in self._names

    def _column(self, attribute: str) -> pa.ChunkedArray:
        if attribute in self.derived:
            p = self.derived[attribute]
            return _PC_OPS[p.op](self.table.column(p.left), self.table.column(p.right))
        return self.table.column(attribute)

    def _encode(self, attribute: str) -> None:
        col = self._column(attribute).combine_chunks() if self.n else pa.array([], type=pa.int64())
        floating = pa.types.is_floating(col.type)
        if floating:  # -0.0 is 0.0 in every comparison (Spark's too): one value, not two equal uniques
            col = pc.if_else(pc.equal(col, 0), pa.scalar(0.0, col.type), col)
        # NaN and infinities are left out (coded like NULL): no cut or bound may sit on them
        # (Spark orders NaN above every number; a literal cannot say infinity).
        uniq = sorted(v for v in pc.unique(col).to_pylist()
                      if v is not None and (not floating or math.isfinite(v)))
        codes = pc.index_in(col, value_set=pa.array(uniq, type=col.type)).fill_null(-1)
        if floating:
            # Doubles in the planner's value model (planner.cnf.values.float_value): the shortest
            # decimal that reads back as the same double; the mapping keeps their order.
            uniq = [float_value(v) for v in uniq]
        self._uniques[attribute] = uniq
        self._codes[attribute] = codes.to_numpy(zero_copy_only=False).astype(np.int64)

    def codes(self, attribute: str) -> np.ndarray:
        if attribute not in self._codes:
            self._encode(attribute)
        return self._codes[attribute]

    def uniques(self, attribute: str) -> list:
        if attribute not in self._uniques:
            self._encode(attribute)
        return self._uniques[attribute]

    def non_finite(self, attribute: str) -> tuple[np.ndarray, np.ndarray] | None:
        """(rows holding -infinity, rows holding NaN or +infinity) of a floating column, which the
        codes count as NULL; None for any other column. Spark orders -infinity below every
        number, and NaN and +infinity above: ``x <= 1.5`` holds for the first, ``x > 1.5`` for the
        second."""
        if attribute in self.derived or not self.n:
            return None
        if attribute not in self._non_finite:
            col = self.table.column(attribute)
            found = None
            if pa.types.is_floating(col.type):
                v = col.to_numpy(zero_copy_only=False).astype(float)  # NULL -> NaN: masked below
                valid = ~col.is_null().to_numpy(zero_copy_only=False)
                found = (valid & (v == -np.inf), valid & (np.isnan(v) | (v == np.inf)))
            self._non_finite[attribute] = found
        return self._non_finite[attribute]

    def mask(self, attribute: str, values: ValueSet) -> np.ndarray:
        """Rows of the sample whose value of ``attribute`` lies in ``values``."""
        key = (attribute, values)
        hit = self._masks.get(key)
        if hit is None:
            # codes index the distinct values; -1 (NULL) picks the slot appended at the end
            hit = np.append(self.value_mask(attribute, values), values.null)[self.codes(attribute)]
            extremes = self.non_finite(attribute)
            if extremes is not None:  # coded like NULL, but in every interval open on their side
                hit[extremes[0]] = any(iv.lo is None for iv in values.intervals)
                hit[extremes[1]] = any(iv.hi is None for iv in values.intervals)
            if len(self._masks) >= self.MAX_CACHED_MASKS:
                self._masks.pop(next(iter(self._masks)))
            self._masks[key] = hit
        return hit

    def value_mask(self, attribute: str, values: ValueSet) -> np.ndarray:
        """Which of ``attribute``'s distinct sampled values (``uniques``) lie in ``values``."""
        umask = np.zeros(len(self.uniques(attribute)), dtype=bool)
        for start, end in self.code_ranges(attribute, values):
            umask[start:end] = True
        return umask

    def code_ranges(self, attribute: str, values: ValueSet) -> list[tuple[int, int]]:
        """The set's intervals as half-open ranges of codes (indexes into ``uniques``)."""
        return [(start, end) for start, end in interval_bounds(self.uniques(attribute), values) if start < end]

    def region_mask(self, region) -> np.ndarray:
        out = np.ones(self.n, dtype=bool)
        for attribute, values in region:
            out &= self.mask(attribute, values)
        return out

    def sort_keys(self, attribute: str) -> np.ndarray:
        """Order-preserving integer keys (NULLs first, as in Spark's ascending sort)."""
        return self.codes(attribute)


def interval_bounds(uniq: list, values: ValueSet) -> list[tuple[int, int]]:
    """Each interval of ``values`` as ``[start, end)`` over the sorted values ``uniq``; an interval
    holding none of them is kept as ``start == end``, the gap between two values it lies in."""
    out = []
    for iv in values.intervals:
        start = 0 if iv.lo is None else (bisect.bisect_left(uniq, iv.lo) if iv.lo_closed
                                         else bisect.bisect_right(uniq, iv.lo))
        end = len(uniq) if iv.hi is None else (bisect.bisect_right(uniq, iv.hi) if iv.hi_closed
                                               else bisect.bisect_left(uniq, iv.hi))
        out.append((start, max(start, end)))
    return out

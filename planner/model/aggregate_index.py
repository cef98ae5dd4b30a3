"""An aggregate index: pre-aggregated cells of a laid-out table (DGFIndex's idea, on our layouts).

A *cell* is one partition of the layout cut by a grid over a few columns (the *dimensions*):

    cell = (planner_pid, bucket(l_shipdate), bucket(l_discount), bucket(l_quantity), <group columns>)

Each dimension has sorted boundaries ``b_0 < b_1 < … < b_{m-1}``; bucket ``k`` holds the values in
``[b_{k-1}, b_k)`` (``b_{-1}`` = -inf, ``b_m`` = +inf) and NULL has a bucket of its own. A
low-cardinality column gets one bucket per value (its boundaries are its values: exact), a wide
one quantiles of the sample plus the constants the workload's predicates use (so the queries
advise saw cut exactly on a boundary). The index keeps, per cell and per group value, the row
count and, per indexed expression ``e``: ``sum(e)``, ``count(e)``, ``min(e)``, ``max(e)``.

Why a grid and not the layout's row-group ranges: an aggregate query answers its interior cells
from the index and must read every other matching row from the table, exactly once. A cell
defined by *values* (partition id and buckets) can be excluded from the table scan by a predicate
on those very values; a row group's [min, max] box cannot, since the boxes of neighbouring row
groups overlap and a row of one would be dropped for lying in the other's box. The partition is
part of the cell because the layout's regions often make a whole partition lie inside a query's
box on a column the grid does not cut (a layout cut on ``l_orderkey`` ranges answers an
``l_orderkey`` range from the index in every partition the range covers).

The specification lives in the layout (``Layout.aggregate_index``, written at advise, built at
apply). What was built, and when, lives in the table's properties (``CellsState``): the *stamp*
of the build, the snapshot of the table's files it was built from, and the figures the rewrite
needs without reading the cells (the bound on ``Σ |e|`` that proves no sum can overflow).
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Mapping

from planner.cnf.values import from_json, to_json
from planner.cnf.valueset import ValueSet
from planner.errors import LayoutError
from planner.semantics.kinds import Kind
from planner.semantics.types import parse_type

INDEX_VERSION = 1
CELLS_SUFFIX = "__cells"  # the companion table: <table>__cells
STAMP_COLUMN, PART_COLUMN = "planner_stamp", "planner_part"  # its partition columns
HEAD, CELLS = "head", "cells"  # planner_part values: one row saying the stamp is valid; the cells
DIMENSION_KINDS = (Kind.INTEGER, Kind.DECIMAL, Kind.DATE, Kind.STRING)
GROUP_TYPES = ("tinyint", "smallint", "int", "bigint", "decimal", "string", "date", "boolean")
PAGE_ROWS = 1000  # cells per Parquet page of the index (a query reads whole pages)
#: Up to this many cells the build writes them unsorted: a query reads at most this many pages of
#: them whole, which costs less than sorting them at every build.
SORTED_CELLS = 20 * PAGE_ROWS


@dataclass(frozen=True)
class GridDim:
    """One dimension of the grid: a column, its Spark type and its bucket boundaries. ``by_value``:
    the column has few values, each a bucket of its own (the advisor saw so in the sample).
    ``grouped``: the column's buckets are ranges, but its values are few against the table's rows.
    Either way (``staged``) the build groups the rows by the value itself and buckets the groups,
    not every row (``planner.emit.cells_sql``); a row lands in the same bucket."""

    column: str
    type: str
    bounds: tuple  # sorted, distinct values of the column's kind
    by_value: bool = False
    grouped: bool = False

    @property
    def staged(self) -> bool:
        """The build groups the rows by this column's values before it buckets them."""
        return self.by_value or self.grouped

    @property
    def kind(self) -> Kind:
        return parse_type(self.type).kind

    @property
    def buckets(self) -> int:
        """Non-NULL buckets (NULL has one more, numbered NULL)."""
        return len(self.bounds) + 1

    def interval(self, k: int) -> tuple[Any, Any]:
        """``(lo, hi)`` of bucket ``k``: values ``lo <= v < hi``; None is unbounded."""
        return (self.bounds[k - 1] if k > 0 else None, self.bounds[k] if k < len(self.bounds) else None)

    def bucket_set(self, k: int | None) -> ValueSet:
        """The values bucket ``k`` can hold (``None``: the NULL bucket), exact for the column's type:
        a DECIMAL(p, s) column holds multiples of 10^-s only, so ``[0.05, 0.06)`` is ``{0.05}``."""
        kind = self.kind
        if k is None:
            return ValueSet.only_null(kind)
        lo, hi = self.interval(k)
        t = parse_type(self.type)
        if hi is not None and t.is_decimal:
            return ValueSet.range(kind, lo, Decimal(hi) - Decimal(1).scaleb(-t.scale), True, True)
        return ValueSet.range(kind, lo, hi, True, False)

    def bucket_of(self, value) -> int | None:
        """The bucket a value falls in (NULL: None): the number of boundaries <= value."""
        if value is None:
            return None
        import bisect
        return bisect.bisect_right(self.bounds, value)

    def to_json(self) -> dict:
        out = {"column": self.column, "type": self.type, "bounds": [to_json(v) for v in self.bounds]}
        # each flag only when set: the digest of an older index holds
        return out | ({"by_value": True} if self.by_value else {}) | ({"grouped": True} if self.grouped else {})

    @classmethod
    def from_json(cls, obj: Mapping) -> "GridDim":
        return cls(str(obj["column"]), str(obj["type"]), tuple(from_json(v) for v in obj["bounds"]),
                   bool(obj.get("by_value", False)), bool(obj.get("grouped", False)))


@dataclass(frozen=True)
class IndexedExpr:
    """An expression the index aggregates: ``sql`` is its normalised Spark SQL text
    (``planner.workload.aggregates.expression_key``), ``type`` its Spark type. A numeric one keeps
    sum, count, min and max; any other (a date, a string) count, min and max."""

    sql: str
    type: str

    @property
    def numeric(self) -> bool:
        return parse_type(self.type).is_numeric

    def to_json(self) -> dict:
        return {"sql": self.sql, "type": self.type}

    @classmethod
    def from_json(cls, obj: Mapping) -> "IndexedExpr":
        return cls(str(obj["sql"]), str(obj["type"]))


@dataclass(frozen=True)
class AggregateIndex:
    """What the index keeps: the grid, the group columns, the expressions."""

    dims: tuple[GridDim, ...]
    groups: tuple[tuple[str, str], ...] = ()  # (column, Spark type) of the GROUP BY columns kept
    exprs: tuple[IndexedExpr, ...] = ()
    version: int = INDEX_VERSION

    @property
    def digest(self) -> str:
        """Names this specification: a built index is used only by a layout asking for the same one."""
        text = json.dumps(self.to_json(), sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def dim(self, column: str) -> GridDim | None:
        return next((d for d in self.dims if d.column == column), None)

    def expr(self, sql: str) -> int | None:
        """Position of the indexed expression with normalised text ``sql`` (None: not kept)."""
        return next((i for i, e in enumerate(self.exprs) if e.sql == sql), None)

    def describe(self) -> str:
        dims = ", ".join(f"{d.column} ({d.buckets} buckets)" for d in self.dims) or "no grid"
        groups = f"; groups by {', '.join(c for c, _ in self.groups)}" if self.groups else ""
        return f"cells per partition over {dims}{groups}; {len(self.exprs)} expression(s)"

    def to_json(self) -> dict:
        return {"version": self.version, "dims": [d.to_json() for d in self.dims],
                "groups": [[c, t] for c, t in self.groups], "exprs": [e.to_json() for e in self.exprs]}

    @classmethod
    def from_json(cls, obj: Mapping) -> "AggregateIndex":
        try:
            if obj["version"] != INDEX_VERSION:
                raise LayoutError(f"aggregate index version {obj['version']} is not supported")
            return cls(tuple(GridDim.from_json(d) for d in obj["dims"]),
                       tuple((str(c), str(t)) for c, t in obj.get("groups", [])),
                       tuple(IndexedExpr.from_json(e) for e in obj.get("exprs", [])))
        except LayoutError:
            raise
        except (KeyError, TypeError, ValueError) as e:
            raise LayoutError(f"malformed aggregate index: {type(e).__name__}: {e}") from None


def sorts_cells(index: AggregateIndex, partitions: int) -> bool:
    """Whether the build sorts the cells by their key (``SORT BY``), so that a query's interior box
    reads few of their pages: only when there may be more than ``SORTED_CELLS`` of them. The bound
    is the layout's ``partitions`` (and its catch-all) times each dimension's buckets (and NULL's);
    a group column's values are not known here, so an index with groups sorts."""
    if index.groups:
        return True
    bound = partitions + 1
    for d in index.dims:
        bound *= d.buckets + 1
    return bound > SORTED_CELLS


# ---- the cells table's columns --------------------------------------------------------------------
def bucket_column(i: int) -> str:
    return f"planner_b{i}"


def group_column(i: int) -> str:
    return f"planner_g{i}"


ROWS_COLUMN = "planner_n"


def expr_columns(i: int, numeric: bool) -> dict[str, str]:
    """Partial aggregate -> column name for indexed expression ``i``."""
    cols = {"count": f"planner_e{i}_count", "min": f"planner_e{i}_min", "max": f"planner_e{i}_max"}
    if numeric:
        cols = {"sum": f"planner_e{i}_sum"} | cols
    return cols


def cells_table(table: str) -> str:
    """``db.t`` -> ``db.t__cells``."""
    db, _, name = table.rpartition(".")
    return f"{db}.{name}{CELLS_SUFFIX}" if db else f"{name}{CELLS_SUFFIX}"


def cells_view(cells: str, stamp: str) -> str:
    """``db.t__cells``, build ``S`` -> ``db.t__cells_S``: the view SQL saved for later reads that
    build's cells through (``planner.emit.cells_sql.cells_view_statement``)."""
    return f"{cells}_{stamp}"


# ---- what was built ---------------------------------------------------------------------------
PROPERTY = "planner.cells"


@dataclass(frozen=True)
class CellsState:
    """A built index, as the table's properties record it.

    ``stamp`` names the build: the cells table's rows of this build sit in partition
    ``planner_stamp = stamp``, and its one ``head`` row says they are valid; the planner drops the
    head before any write to the table (``append``, ``relayout``, ``apply``). SQL saved for later
    reads the cells through the build's view (``cells_view``), which the planner points at the
    table itself before it writes: the view then computes the cells from the rows. ``snapshot`` is the
    table's file snapshot the cells were computed from (as join ranges record theirs): a write
    that bypasses the planner changes it, and the rewrite then scans instead. ``bounds`` holds,
    per indexed expression, an upper bound of ``Σ |e|`` over the whole table (``None``: not
    numeric): what proves a sum or average of any subset cannot overflow.
    """

    stamp: str
    snapshot: str
    generation: int | None
    digest: str  # AggregateIndex.digest of the specification built
    cells_table: str
    table_rows: int
    cells: int
    bounds: tuple[float | None, ...] = ()
    types: tuple[tuple[str, str], ...] = ()  # cells column -> Spark type, as built
    built_at: str = ""
    bytes: int | None = None
    view: bool = False  # the build made its view (``cells_view``); builds before views had none

    def to_json(self) -> dict:
        return {"version": INDEX_VERSION, "stamp": self.stamp, "snapshot": self.snapshot,
                "generation": self.generation, "digest": self.digest, "cells_table": self.cells_table,
                "table_rows": self.table_rows, "cells": self.cells, "bounds": list(self.bounds),
                "types": dict(self.types), "built_at": self.built_at, "bytes": self.bytes} | \
            ({"view": True} if self.view else {})

    @classmethod
    def from_json(cls, obj: Mapping) -> "CellsState":
        if obj.get("version") != INDEX_VERSION:
            raise LayoutError(f"aggregate index state version {obj.get('version')} is not supported")
        return cls(str(obj["stamp"]), str(obj["snapshot"]), obj.get("generation"), str(obj["digest"]),
                   str(obj["cells_table"]), int(obj["table_rows"]), int(obj["cells"]),
                   tuple(None if b is None else float(b) for b in obj.get("bounds", [])),
                   tuple((str(k), str(v)) for k, v in (obj.get("types") or {}).items()),
                   str(obj.get("built_at", "")), obj.get("bytes"), bool(obj.get("view", False)))

    def properties(self) -> dict[str, str]:
        """One property, hex of the JSON (Spark redacts values matching ``(?i)url|token|…``)."""
        text = json.dumps(self.to_json(), sort_keys=True, separators=(",", ":"), default=str)
        return {PROPERTY: text.encode("ascii").hex()}

    @classmethod
    def from_properties(cls, props: Mapping[str, str]) -> "CellsState | None":
        raw = props.get(PROPERTY)
        if not raw:
            return None
        try:
            return cls.from_json(json.loads(bytes.fromhex(raw).decode("ascii")))
        except (ValueError, KeyError, TypeError, LayoutError):
            return None  # damaged or from another version: no index (queries scan)


__all__ = ["AggregateIndex", "GridDim", "IndexedExpr", "CellsState", "cells_table", "cells_view", "bucket_column",
           "group_column", "expr_columns", "ROWS_COLUMN", "STAMP_COLUMN", "PART_COLUMN", "HEAD", "CELLS",
           "CELLS_SUFFIX", "PROPERTY", "DIMENSION_KINDS", "GROUP_TYPES", "PAGE_ROWS", "SORTED_CELLS",
           "sorts_cells"]

"""Strict projection: does *every* row of a region match a scan's predicate?

``planner.pruning.hits`` answers the inclusive question ("may a row of this region match?") and
skips a region only when the answer is provably no. The aggregate index needs the strict one,
as pyiceberg's ``strict_project`` asks it of a partition: a cell whose rows all match is answered
from its pre-computed aggregates, so a wrong yes would be a wrong answer. The rule:

* the predicate must be exactly its per-attribute value sets: a conjunction of single-column
  atoms each known exactly (no clause over several columns, nothing opaque, no weakened CNF, no
  atom only approximated, e.g. under two ANSI modes that read a literal differently);
* for every attribute the predicate constrains, the values the region allows must lie inside
  the values the predicate makes TRUE. NULLs count: a region that may hold NULL in a column the
  predicate needs non-NULL is not inside (``x < 5`` is UNKNOWN on NULL, and WHERE drops it). An
  attribute the region does not constrain allows everything, NULL included.

Example (``l_discount BETWEEN 0.05 AND 0.07``, a DECIMAL(15,2) column): the bucket ``[0.05, 0.06)``
holds only 0.05, inside; ``[0.07, 0.08)`` holds 0.07, inside; ``[0.04, 0.05)`` none of it,
outside; the NULL bucket is outside. With ``l_discount >= 0.05 OR l_discount IS NULL`` the NULL
bucket is inside too.

On a grid (``planner.model.aggregate_index``) the cells of one partition are products of buckets,
so ``grid_cover`` classifies buckets one dimension at a time: per dimension the buckets inside,
and those that hold some matching values and some not (*partial*). A cell is inside when every
constrained dimension's bucket is inside; a matching row lies in a boundary cell when some
dimension's bucket is partial.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from planner.analysis.table_analysis import ScanAnalysis
from planner.cnf.valueset import ValueSet
from planner.model.aggregate_index import GridDim

Region = Mapping[str, ValueSet]


def exact(scan: ScanAnalysis) -> str:
    """'' when ``scan``'s predicate is exactly its per-attribute sets; else why not."""
    g = scan.groups
    if g.unsatisfiable:
        return ""
    if g.opaque:
        return "the predicate holds something the planner cannot read exactly"
    if g.residual:
        return "the predicate has a clause over several columns"
    if g.weakened:
        return "the predicate's CNF exceeded its budget"
    if scan.unused:
        return f"{scan.unused[0][0]}: {scan.unused[0][1]}"
    return ""


def inside(region_set: ValueSet | None, true_set: ValueSet) -> bool:
    """Every value (NULL included) ``region_set`` allows is in ``true_set`` (None: everything)."""
    if region_set is None:
        return true_set.is_everything()
    return region_set.difference(true_set).is_empty()


def strict_project(scan: ScanAnalysis, region: Region) -> bool:
    """Every row of ``region`` satisfies ``scan``'s predicate (see the module's rule)."""
    if exact(scan) or scan.groups.unsatisfiable:
        return False
    return all(inside(region.get(a), vs) for a, vs in scan.sets.items())


def strictly_matching(scan: ScanAnalysis, ids_regions: Sequence[tuple[int, Region]]) -> tuple[int, ...]:
    """Ids of the regions every row of which satisfies the scan's predicate."""
    if exact(scan) or scan.groups.unsatisfiable:
        return ()
    return tuple(pid for pid, region in ids_regions if strict_project(scan, region))


@dataclass(frozen=True)
class DimCover:
    """How one grid dimension's buckets meet the predicate inside one partition."""

    column: str
    inside: tuple[int | None, ...]  # buckets (None: the NULL bucket) whose values all match
    partial: tuple[int | None, ...]  # buckets holding matching and non-matching values

    @property
    def signature(self) -> tuple:
        return (self.column, self.inside, self.partial)


@dataclass(frozen=True)
class Cover:
    """One partition under a scan: ``whole`` (every row matches), ``none`` (no cell is inside:
    the partition is scanned as a whole), or the constrained dimensions' covers (cells inside:
    every dimension's bucket inside; boundary: some dimension's bucket partial)."""

    whole: bool = False
    none: bool = False
    dims: tuple[DimCover, ...] = ()
    reason: str = ""  # why ``none``

    @property
    def boundary_free(self) -> bool:
        """No matching row lies outside the inside cells (no dimension has a partial bucket)."""
        return self.whole or (not self.none and all(not d.partial for d in self.dims))

    @property
    def signature(self) -> tuple:
        return (self.whole, self.none, tuple(d.signature for d in self.dims))


class GridCovers:
    """``cover(region)`` for one scan and one grid, memoised per (dimension, region's set)."""

    def __init__(self, scan: ScanAnalysis, dims: Sequence[GridDim], memo: dict | None = None):
        """``memo``: shared by the covers of many scans and grids (the advisor prices hundreds);
        its keys name the whole dimension, boundaries included."""
        self.scan = scan
        self.dims = {d.column: d for d in dims}
        self.why = exact(scan)
        self._memo: dict = {} if memo is None else memo

    def cover(self, region: Region) -> Cover:
        if self.why:
            return Cover(none=True, reason=self.why)
        if self.scan.groups.unsatisfiable:
            return Cover(none=True, reason="the predicate is never TRUE")
        dims = []
        for a, want in self.scan.sets.items():
            have = region.get(a)
            dim = self.dims.get(a)
            if dim is None:
                if inside(have, want):
                    continue
                if have is None or have.overlaps(want):
                    return Cover(none=True, reason=f"{a} is not a dimension of the grid, and the partition holds "
                                                   "values of it the predicate rejects")
                return Cover(none=True, reason="the partition holds no matching row")
            got = self._dim(dim, have, want)
            if got is None:
                return Cover(none=True, reason="the partition holds no matching row")
            if not got.inside:
                return Cover(none=True, reason=f"the predicate on {a} lies inside single buckets of the grid: no cell "
                                               "lies wholly inside it")
            if got.partial or len(got.inside) < self._present(dim, have):
                dims.append(got)
            # else every bucket present is inside: no condition on this dimension
        return Cover(whole=not dims, dims=tuple(dims))

    def _present(self, dim: GridDim, have: ValueSet | None) -> int:
        key = ("present", dim, have)
        if key not in self._memo:
            self._memo[key] = sum(1 for k in [*range(dim.buckets), None] if _cell(dim, k, have) is not None)
        return self._memo[key]

    def _dim(self, dim: GridDim, have: ValueSet | None, want: ValueSet) -> DimCover | None:
        key = (dim, have, want)
        if key in self._memo:
            return self._memo[key]
        ins, part = [], []
        for k in [*range(dim.buckets), None]:
            cell = _cell(dim, k, have)
            if cell is None:
                continue
            if cell.difference(want).is_empty():
                ins.append(k)
            elif cell.overlaps(want):
                part.append(k)
        out = DimCover(dim.column, tuple(ins), tuple(part)) if ins or part else None
        self._memo[key] = out
        return out


def _cell(dim: GridDim, k: int | None, have: ValueSet | None) -> ValueSet | None:
    """The values bucket ``k`` holds in a region allowing ``have`` (None when it holds none)."""
    s = dim.bucket_set(k)
    if have is not None:
        s = s.intersect(have)
    return None if s.is_empty() else s


def runs(buckets: Sequence[int | None]) -> tuple[list[tuple[int, int]], bool]:
    """Non-NULL buckets as maximal runs ``(first, last)``, and whether the NULL bucket is in."""
    ks = sorted(k for k in buckets if k is not None)
    out: list[tuple[int, int]] = []
    for k in ks:
        if out and k == out[-1][1] + 1:
            out[-1] = (out[-1][0], k)
        else:
            out.append((k, k))
    return out, None in buckets


__all__ = ["Cover", "DimCover", "GridCovers", "exact", "inside", "strict_project", "strictly_matching", "runs"]

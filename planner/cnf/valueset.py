"""Sets of values of one column: sorted disjoint intervals plus a NULL flag.

Every single-column predicate becomes the set of values for which it is TRUE. ``x < 5`` is
``(-inf, 5)`` without NULL (a NULL makes the comparison UNKNOWN, and WHERE keeps only TRUE);
``x IS NULL`` is just NULL. Points are degenerate intervals, so one representation serves both
ranges and categorical value lists:

    x BETWEEN 10 AND 20 AND x NOT IN (15)   ->  [10, 15) ∪ (15, 20]
    on an integer column (discrete)        ->  [10, 14] ∪ [16, 20]

Sets are normalised on construction (sorted, merged, discrete bounds closed), so equal sets are
equal values and can be hashed, deduplicated and cached.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal
from typing import Iterable, Iterator

from planner.cnf.values import Value, from_json, predecessor, successor, to_json
from planner.semantics.kinds import Kind, render


@dataclass(frozen=True)
class Interval:
    """An interval of a totally ordered domain. ``None`` bounds are unbounded (and then open)."""

    lo: Value | None = None
    hi: Value | None = None
    lo_closed: bool = False
    hi_closed: bool = False

    @property
    def is_point(self) -> bool:
        return self.lo is not None and self.lo == self.hi and self.lo_closed and self.hi_closed

    def contains(self, v: Value) -> bool:
        if self.lo is not None and (v < self.lo or (v == self.lo and not self.lo_closed)):
            return False
        if self.hi is not None and (v > self.hi or (v == self.hi and not self.hi_closed)):
            return False
        return True

    def is_empty(self) -> bool:
        if self.lo is None or self.hi is None:
            return False
        return self.lo > self.hi or (self.lo == self.hi and not (self.lo_closed and self.hi_closed))

    def __str__(self) -> str:
        if self.is_point:
            return f"{{{render(self.lo)}}}"
        lo = "(-inf" if self.lo is None else ("[" if self.lo_closed else "(") + render(self.lo)
        hi = "+inf)" if self.hi is None else render(self.hi) + ("]" if self.hi_closed else ")")
        return f"{lo}, {hi}"


def _lo_key(iv: Interval):
    # Lower bounds: -inf first; at equal values a closed bound starts earlier than an open one.
    return (0,) if iv.lo is None else (1, iv.lo, 0 if iv.lo_closed else 1)


def _canonical(iv: Interval, kind: Kind) -> Interval:
    """Close the bounds of discrete domains, so ``(5, 9)`` on integers is ``[6, 8]``."""
    if kind is Kind.BOOLEAN:
        inside = [v for v in (False, True) if iv.contains(v)]
        return Interval(inside[0], inside[-1], True, True) if inside else Interval(True, False, True, True)
    if not kind.discrete:
        return iv
    lo, hi, lc, hc = iv.lo, iv.hi, iv.lo_closed, iv.hi_closed
    if kind is Kind.INTEGER:
        if isinstance(lo, Decimal):
            lo, lc = (math.ceil(lo), True) if lo != lo.to_integral_value() else (int(lo), lc)
        if isinstance(hi, Decimal):
            hi, hc = (math.floor(hi), True) if hi != hi.to_integral_value() else (int(hi), hc)
    if lo is not None and not lc:
        nxt = successor(lo, kind)
        if nxt is not None:
            lo, lc = nxt, True
    if hi is not None and not hc:
        prv = predecessor(hi, kind)
        if prv is not None:
            hi, hc = prv, True
    return Interval(lo, hi, lc, hc)


def _touches(a: Interval, b: Interval, kind: Kind) -> bool:
    """Whether ``b`` (starting at or after ``a``) overlaps or abuts ``a`` so the two can merge."""
    if a.hi is None or b.lo is None:
        return True
    if b.lo < a.hi:
        return True
    if b.lo == a.hi:
        return a.hi_closed or b.lo_closed
    return kind.discrete and kind is not Kind.BOOLEAN and successor(a.hi, kind) == b.lo


def _hi_max(a: Interval, b: Interval) -> tuple[Value | None, bool]:
    if a.hi is None or b.hi is None:
        return None, False
    if a.hi > b.hi:
        return a.hi, a.hi_closed
    if b.hi > a.hi:
        return b.hi, b.hi_closed
    return a.hi, a.hi_closed or b.hi_closed


def _normalise(intervals: Iterable[Interval], kind: Kind) -> tuple[Interval, ...]:
    ivs = sorted((c for c in (_canonical(i, kind) for i in intervals) if not c.is_empty()), key=_lo_key)
    out: list[Interval] = []
    for iv in ivs:
        if out and _touches(out[-1], iv, kind):
            prev = out[-1]
            hi, hc = _hi_max(prev, iv)
            out[-1] = Interval(prev.lo, hi, prev.lo_closed, hc)
        else:
            out.append(iv)
    if kind is Kind.BOOLEAN and any(i.contains(False) for i in out) and any(i.contains(True) for i in out):
        return (Interval(),)  # FALSE and TRUE are the whole (two-valued) domain
    return tuple(out)


@dataclass(frozen=True)
class ValueSet:
    """The values (and possibly NULL) of one column for which a predicate is TRUE."""

    intervals: tuple[Interval, ...]
    null: bool
    kind: Kind

    # ---- constructors -------------------------------------------------------------------
    @classmethod
    def of(cls, kind: Kind, intervals: Iterable[Interval] = (), null: bool = False) -> "ValueSet":
        return cls(_normalise(intervals, kind), bool(null), kind)

    @classmethod
    def everything(cls, kind: Kind) -> "ValueSet":
        return cls.of(kind, [Interval()], null=True)

    @classmethod
    def nothing(cls, kind: Kind) -> "ValueSet":
        return cls((), False, kind)

    @classmethod
    def not_null(cls, kind: Kind) -> "ValueSet":
        return cls.of(kind, [Interval()])

    @classmethod
    def only_null(cls, kind: Kind) -> "ValueSet":
        return cls((), True, kind)

    @classmethod
    def points(cls, kind: Kind, values: Iterable[Value]) -> "ValueSet":
        return cls.of(kind, [Interval(v, v, True, True) for v in values])

    @classmethod
    def compare(cls, kind: Kind, op: str, v: Value) -> "ValueSet":
        """The TRUE set of ``column <op> v``; NULL is never in it."""
        if op == "=":
            return cls.points(kind, [v])
        if op == "<>":
            return cls.of(kind, [Interval(None, v, False, False), Interval(v, None, False, False)])
        if op in ("<", "<="):
            return cls.of(kind, [Interval(None, v, False, op == "<=")])
        if op in (">", ">="):
            return cls.of(kind, [Interval(v, None, op == ">=", False)])
        raise ValueError(f"unknown comparison {op!r}")

    @classmethod
    def range(cls, kind: Kind, lo: Value | None, hi: Value | None, lo_closed=True, hi_closed=True):
        return cls.of(kind, [Interval(lo, hi, lo_closed and lo is not None, hi_closed and hi is not None)])

    # ---- algebra ------------------------------------------------------------------------
    def union(self, other: "ValueSet") -> "ValueSet":
        return ValueSet.of(self.kind, self.intervals + other.intervals, self.null or other.null)

    def intersect(self, other: "ValueSet") -> "ValueSet":
        return ValueSet.of(self.kind, list(_shared(self.intervals, other.intervals)), self.null and other.null)

    @classmethod
    def union_all(cls, kind: Kind, sets: Iterable["ValueSet"]) -> "ValueSet":
        """The union of many sets at once (sorting once, not once per set)."""
        sets = list(sets)
        return cls.of(kind, [iv for s in sets for iv in s.intervals], any(s.null for s in sets))

    @classmethod
    def intersect_all(cls, kind: Kind, sets: Iterable["ValueSet"]) -> "ValueSet":
        """The intersection of many sets: the complement of the union of their complements."""
        sets = list(sets)
        if not sets:
            return cls.everything(kind)
        return cls.union_all(kind, [s.complement() for s in sets]).complement()

    def complement(self) -> "ValueSet":
        """All values not in this set, NULL flipped too."""
        gaps: list[Interval] = []
        lo, lc = None, False
        for iv in self.intervals:
            if iv.lo is not None:
                gaps.append(Interval(lo, iv.lo, lc, not iv.lo_closed))
            if iv.hi is None:
                lo = "END"
                break
            lo, lc = iv.hi, not iv.hi_closed
        if lo != "END":
            gaps.append(Interval(lo, None, lc, False))
        return ValueSet.of(self.kind, [g for g in gaps if g.lo != "END"], not self.null)

    def difference(self, other: "ValueSet") -> "ValueSet":
        return self.intersect(other.complement())

    # ---- queries ------------------------------------------------------------------------
    def is_empty(self) -> bool:
        return not self.intervals and not self.null

    def is_everything(self) -> bool:
        return self.null and self.covers_all_values()

    def covers_all_values(self) -> bool:
        return len(self.intervals) == 1 and self.intervals[0].lo is None and self.intervals[0].hi is None

    def overlaps(self, other: "ValueSet") -> bool:
        """``not self.intersect(other).is_empty()``, without building the intersection: the sweep
        stops at the first interval the two share (pruning asks this once per partition)."""
        return (self.null and other.null) or any(not _canonical(iv, self.kind).is_empty()
                                                 for iv in _shared(self.intervals, other.intervals))

    def contains(self, v: Value | None) -> bool:
        if v is None:
            return self.null
        return any(iv.contains(v) for iv in self.intervals)

    def point_values(self) -> tuple[Value, ...] | None:
        """The listed values if the set is a finite list of points (NULL aside), else ``None``."""
        if all(iv.is_point for iv in self.intervals):
            return tuple(iv.lo for iv in self.intervals)
        return None

    def bounds(self) -> Iterator[Value]:
        for iv in self.intervals:
            if iv.lo is not None:
                yield iv.lo
            if iv.hi is not None:
                yield iv.hi

    def __str__(self) -> str:
        if self.is_everything():
            return "ANY"
        if self.is_empty():
            return "NONE"
        points = self.point_values()
        parts: list[str] = []
        if points is not None and points:
            parts.append("{" + ", ".join(render(p) for p in points) + "}")
        elif self.covers_all_values():
            parts.append("NOT NULL")
        else:
            non_null_complement = self.complement()
            cpoints = non_null_complement.point_values()
            if cpoints and len(self.intervals) >= 2:
                parts.append("NOT IN {" + ", ".join(render(p) for p in cpoints) + "}")
            else:
                parts.extend(str(iv) for iv in self.intervals)
        if self.null:
            parts.append("NULL")
        return " ∪ ".join(parts)

    def to_json(self) -> dict:
        return {
            "kind": self.kind.value,
            "null": self.null,
            "intervals": [
                [to_json(iv.lo), to_json(iv.hi), iv.lo_closed, iv.hi_closed] for iv in self.intervals
            ],
        }

    @classmethod
    def from_json(cls, obj: dict) -> "ValueSet":
        kind = Kind(obj["kind"])
        ivs = [Interval(from_json(lo), from_json(hi), lc, hc) for lo, hi, lc, hc in obj["intervals"]]
        return cls.of(kind, ivs, obj["null"])


def _shared(a: tuple[Interval, ...], b: tuple[Interval, ...]) -> Iterator[Interval]:
    """The non-empty intersections of two sorted, disjoint interval lists, in order: one merge-like
    sweep, always stepping past the interval that ends first (a 10,000-value NOT IN meets another
    in linear time)."""
    i = j = 0
    while i < len(a) and j < len(b):
        x, y = a[i], b[j]
        lo, lc = _max_lo(x, y)
        hi, hc = _min_hi(x, y)
        iv = Interval(lo, hi, lc, hc)
        if not iv.is_empty():
            yield iv
        if _ends_first(x, y):
            i += 1
        else:
            j += 1


def _ends_first(a: Interval, b: Interval) -> bool:
    """``a`` ends no later than ``b``, so the sweep can step past ``a``."""
    if a.hi is None:
        return False
    if b.hi is None or a.hi < b.hi:
        return True
    return a.hi == b.hi and (not a.hi_closed or b.hi_closed)


def _max_lo(a: Interval, b: Interval) -> tuple[Value | None, bool]:
    if a.lo is None:
        return b.lo, b.lo_closed
    if b.lo is None:
        return a.lo, a.lo_closed
    if a.lo > b.lo:
        return a.lo, a.lo_closed
    if b.lo > a.lo:
        return b.lo, b.lo_closed
    return a.lo, a.lo_closed and b.lo_closed


def _min_hi(a: Interval, b: Interval) -> tuple[Value | None, bool]:
    if a.hi is None:
        return b.hi, b.hi_closed
    if b.hi is None:
        return a.hi, a.hi_closed
    if a.hi < b.hi:
        return a.hi, a.hi_closed
    if b.hi < a.hi:
        return b.hi, b.hi_closed
    return a.hi, a.hi_closed and b.hi_closed

"""Condition-based candidate plans (CPS, Peng et al., section 4.2).

For one column, the candidate plan splits the column's domain into the coarsest set of disjoint
conditions such that every predicate the workload puts on that column is exactly a union of some
of them. The conditions come from the predicates and their negations.

Worked example on an integer column, predicates ``x BETWEEN 10 AND 20`` and ``x NOT IN (15)``:

    boundary points 10, 15, 20 cut the line into pieces
        (-inf,10) {10} (10,15) {15} (15,20) {20} (20,+inf)   and NULL on its own
    each piece is inside or outside each predicate (its *signature*):
        BETWEEN:    0    1     1     1     1    1     0
        NOT IN:     1    1     1     0     1    1     1
    adjacent pieces with equal signatures merge:
        (-inf, 9]   [10, 14]   {15}   [16, 20]   [21, +inf)   NULL

For categorical columns (strings or booleans compared only by equality) pieces with equal
signatures merge even when not adjacent, so ``shipmode IN ('MAIL','SHIP')`` and ``= 'AIR'`` give
``{'AIR'}``, ``{'MAIL','SHIP'}``, everything else, and NULL.

The pieces themselves (``Pieces``) are kept for the cost model, which merges adjacent ones.
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

from planner.cnf.valueset import Interval, ValueSet
from planner.semantics.kinds import Kind

if TYPE_CHECKING:
    import numpy as np


@dataclass(frozen=True)
class Pieces:
    """The elementary pieces of a column's domain, in order, NULL last, and who contains them.

    ``member[s, i]`` is True when distinct predicate set ``s`` contains piece ``i``.
    """

    kind: Kind
    pieces: tuple[ValueSet, ...]
    sets: tuple[ValueSet, ...]
    member: "np.ndarray"  # bool [len(sets), len(pieces)]


def _cut(kind: Kind, sets: Sequence[ValueSet]):
    """The distinct sets, the raw pieces (empty ones included) and, per set, the ``(first, last)``
    raw pieces of each of its intervals (disjoint and in order, as the set's intervals are)."""
    sets = tuple(dict.fromkeys(sets))
    points = sorted({v for s in sets for v in s.bounds()})
    n = len(points)
    # Piece 2i+1 is the point p_i; piece 2i is the open gap before it; piece 2n the gap after.
    raw: list[ValueSet] = []
    for i in range(2 * n + 1):
        if i % 2:
            raw.append(ValueSet.points(kind, [points[i // 2]]))
        else:
            lo = points[i // 2 - 1] if i else None
            hi = points[i // 2] if i // 2 < n else None
            raw.append(ValueSet.of(kind, [Interval(lo, hi, False, False)]))
    spans = []
    for s in sets:
        spans.append([(0 if iv.lo is None else 2 * bisect.bisect_left(points, iv.lo) + (1 if iv.lo_closed else 2),
                       2 * n if iv.hi is None else 2 * bisect.bisect_left(points, iv.hi) + (1 if iv.hi_closed else 0))
                      for iv in s.intervals])
    return sets, raw, spans


def elementary_pieces(kind: Kind, sets: Sequence[ValueSet]) -> Pieces:
    import numpy as np  # here, not at the top: ``planner analyze`` needs no numpy (start-up time)

    sets, raw, spans = _cut(kind, sets)
    member = np.zeros((len(sets), len(raw) + 1), dtype=bool)
    for s_idx, s in enumerate(sets):
        for start, end in spans[s_idx]:
            member[s_idx, start:end + 1] = True
        member[s_idx, -1] = s.null
    keep = [i for i, p in enumerate(raw) if not p.is_empty()]
    pieces = tuple(raw[i] for i in keep) + (ValueSet.only_null(kind),)
    return Pieces(kind, pieces, sets, member[:, keep + [len(raw)]])


def _signatures(kind: Kind, sets: Sequence[ValueSet]) -> tuple[tuple[ValueSet, ...], list[ValueSet], list[int]]:
    """``elementary_pieces`` without numpy: the distinct sets, the pieces (NULL last) and each
    piece's signature, the bit mask of the sets that contain it (bit ``s`` for ``sets[s]``)."""
    sets, raw, spans = _cut(kind, sets)
    toggles = [0] * (len(raw) + 1)
    for s_idx, s_spans in enumerate(spans):
        bit = 1 << s_idx
        for start, end in s_spans:  # a set's spans are disjoint: a bit flips on at start, off after end
            toggles[start] ^= bit
            toggles[end + 1] ^= bit
    pieces, sig, inside = [], [], 0
    for i, p in enumerate(raw):
        inside ^= toggles[i]
        if not p.is_empty():
            pieces.append(p)
            sig.append(inside)
    pieces.append(ValueSet.only_null(kind))
    sig.append(sum(1 << s_idx for s_idx, s in enumerate(sets) if s.null))
    return sets, pieces, sig


@dataclass(frozen=True)
class CandidatePlan:
    """Disjoint conditions covering a column's domain (NULL always a condition of its own)."""

    table: str
    column: str
    kind: Kind
    conditions: tuple[ValueSet, ...]
    ordered: bool  # conditions are intervals in domain order (else categorical value classes)
    queries: int  # how many scans filter on the column


def is_categorical(kind: Kind, sets: Sequence[ValueSet]) -> bool:
    if kind not in (Kind.STRING, Kind.BOOLEAN):
        return False
    for s in sets:
        non_null = ValueSet.of(kind, s.intervals)
        if non_null.point_values() is None and non_null.complement().intersect(
                ValueSet.not_null(kind)).point_values() is None:
            return False
    return True


def candidate_plan(table: str, column: str, kind: Kind, sets: Sequence[ValueSet], queries: int) -> CandidatePlan:
    distinct, pieces, sig = _signatures(kind, sets)
    body = range(len(pieces) - 1)  # NULL (last) stays on its own
    categorical = is_categorical(kind, distinct)
    # Pieces are grouped first and each group united at once: uniting one piece at a time is
    # quadratic, minutes for a 10,000-value NOT IN.
    groups: list[list[ValueSet]] = []
    if categorical:
        by_sig: dict[int, list[ValueSet]] = {}
        for i in body:
            by_sig.setdefault(sig[i], []).append(pieces[i])
        groups = list(by_sig.values())
    else:
        for i in body:
            if groups and sig[i] == sig[i - 1]:
                groups[-1].append(pieces[i])
            else:
                groups.append([pieces[i]])
    conditions = [ValueSet.union_all(kind, g) for g in groups]
    if categorical:
        conditions.sort(key=lambda v: (v.point_values() is None, str(v)))
    conditions.append(pieces[-1])
    return CandidatePlan(table, column, kind, tuple(conditions), not categorical, queries)

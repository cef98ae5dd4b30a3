"""Which partitions (or row groups) may hold rows a scan needs: the one pruning rule.

A scan may skip a region only when its predicate provably cannot be TRUE for any row of the
region. The scan's CNF (see ``planner.analysis.table_analysis``) gives, per attribute, the value set its
single-attribute clauses allow, plus residual clauses spanning several attributes. A region is
skipped when

* for some attribute both constrain, the region's set and the scan's set do not overlap, or
* some residual clause has no atom that could be TRUE inside the region, or
* the scan's predicate can never be TRUE at all.

Anything unknown (opaque atoms, attributes the region does not constrain) counts as "might
match". The cost model, the query rewriter and ``planner explain`` all call this module, so the
partitions the model charges for are exactly the partitions a rewritten query reads.

For speed the overlap test of many sets against many is vectorised: every value set on an
attribute is mapped onto the attribute's elementary pieces (``planner.analysis.cps``); a region
that is a run of pieces ``[s, e]`` overlaps a set iff the set's prefix count over the pieces grows
between ``s - 1`` and ``e``. A few sets against many are tested pair by pair (``PAIRWISE``).
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from planner.analysis.cps import elementary_pieces
from planner.analysis.table_analysis import ScanAnalysis, pair_feature
from planner.cnf.ir import ColumnPair, Pred
from planner.cnf.valueset import ValueSet
from planner.semantics.kinds import Kind

Region = Mapping[str, ValueSet]
# Few sets on one side (a query's scan against a layout's partitions): test each pair with
# ``ValueSet.overlaps``, whose sweep costs about a twentieth of mapping a set onto the pieces.
PAIRWISE = 20


def _runs(row: np.ndarray) -> list[tuple[int, int]]:
    """Maximal runs of True in a boolean row, as inclusive index pairs."""
    idx = np.flatnonzero(row)
    if idx.size == 0:
        return []
    breaks = np.flatnonzero(np.diff(idx) > 1)
    starts = np.concatenate(([idx[0]], idx[breaks + 1]))
    ends = np.concatenate((idx[breaks], [idx[-1]]))
    return list(zip(starts.tolist(), ends.tolist()))


def _overlap_by_pieces(kind: Kind, uniq_left: list[ValueSet], uniq_right: list[ValueSet]) -> np.ndarray:
    pieces = elementary_pieces(kind, uniq_left + uniq_right)
    index = {s: i for i, s in enumerate(pieces.sets)}
    m_left = pieces.member[[index[s] for s in uniq_left]]
    prefix = np.concatenate([np.zeros((len(uniq_left), 1), dtype=np.int32),
                             np.cumsum(m_left, axis=1, dtype=np.int32)], axis=1)
    out_u = np.zeros((len(uniq_left), len(uniq_right)), dtype=bool)
    for j, s in enumerate(uniq_right):
        for start, end in _runs(pieces.member[index[s]]):
            out_u[:, j] |= (prefix[:, end + 1] - prefix[:, start]) > 0
    return out_u


def overlap_matrix(kind: Kind, left: Sequence[ValueSet], right: Sequence[ValueSet]) -> np.ndarray:
    """``out[i, j]`` is True when ``left[i]`` and ``right[j]`` share a value (or NULL)."""
    uniq_left = list(dict.fromkeys(left))
    uniq_right = list(dict.fromkeys(right))
    if len(uniq_left) * len(uniq_right) <= PAIRWISE * (len(uniq_left) + len(uniq_right)):
        out_u = np.array([[a.overlaps(b) for b in uniq_right] for a in uniq_left], dtype=bool)
        out_u = out_u.reshape(len(uniq_left), len(uniq_right))
    else:
        out_u = _overlap_by_pieces(kind, uniq_left, uniq_right)
    lookup_l = {s: i for i, s in enumerate(uniq_left)}
    li = np.array([lookup_l[s] for s in left], dtype=np.int64) if left else np.zeros(0, np.int64)
    lookup_r = {s: i for i, s in enumerate(uniq_right)}
    ri = np.array([lookup_r[s] for s in right], dtype=np.int64) if right else np.zeros(0, np.int64)
    return out_u[np.ix_(li, ri)] if len(li) and len(ri) else np.zeros((len(left), len(right)), dtype=bool)


def hit_matrix(scans: Sequence[ScanAnalysis], regions: Sequence[Region],
               kinds: Mapping[str, Kind]) -> np.ndarray:
    """``hits[s, r]``: scan ``s`` may need rows of region ``r``."""
    hits = np.ones((len(scans), len(regions)), dtype=bool)
    for s_idx, scan in enumerate(scans):
        if scan.groups.unsatisfiable:
            hits[s_idx] = False
    attributes = {a for r in regions for a in r}
    for a in attributes:
        with_a = [i for i, s in enumerate(scans) if a in s.sets]
        in_regions = [j for j, r in enumerate(regions) if a in r]
        if not with_a or not in_regions:
            continue
        ov = overlap_matrix(kinds[a], [scans[i].sets[a] for i in with_a], [regions[j][a] for j in in_regions])
        hits[np.ix_(with_a, in_regions)] &= ov
    for s_idx, scan in enumerate(scans):
        for clause in scan.groups.residual:
            hits[s_idx] &= _clause_may_hold(clause, regions, kinds)
    return hits


def _clause_may_hold(clause, regions: Sequence[Region], kinds) -> np.ndarray:
    out = np.zeros(len(regions), dtype=bool)
    for atom in clause:
        if isinstance(atom, Pred):
            vals = [r.get(atom.column) for r in regions]
            idx = [j for j, v in enumerate(vals) if v is not None]
            out[[j for j, v in enumerate(vals) if v is None]] = True
            if idx:
                out[idx] |= overlap_matrix(kinds.get(atom.column, atom.true.kind), [atom.true],
                                           [vals[j] for j in idx])[0]
        elif isinstance(atom, ColumnPair):
            key, truth = pair_feature(atom)
            for j, r in enumerate(regions):
                out[j] |= key not in r or r[key].contains(truth)
        else:
            out[:] = True
        if out.all():
            break
    return out

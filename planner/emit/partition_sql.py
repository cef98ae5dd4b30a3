"""The partition of a row, as SQL: ``CASE WHEN <region 1> THEN 1 WHEN … ELSE 0 END``.

A flat CASE tries the regions in turn, so a row costs up to every partition's predicate: with 33
partitions on five attributes that is about as much CPU as the rest of the INSERT's expressions
together. With more than ``FLAT_MAX`` partitions the CASE becomes a decision tree over cuts the
regions share, and a row costs a few comparisons plus what is left to test of the few (at most
``FLAT_MAX``) partitions it can still be in:

    CASE WHEN l_shipdate < DATE '1995-06-01'
         THEN CASE WHEN <region 1> THEN 1 WHEN <region 2> THEN 2 ELSE 0 END
         ELSE CASE WHEN <region 3> THEN 3 … ELSE 0 END END

Below the cuts, a leaf tests each partition's region only where the cuts do not decide it
already (``_given``), by the value-set algebra the rewriter prunes by: a row gets partition ``p``
only if its values lie in ``p``'s region, which is all the rewriter's pruning assumes; a row no
region claims gets ``ELSE 0``, the catch-all every query reads. Spark's own comparisons are the
check: tests compare the tree with the flat CASE row by row on Spark, NULL, NaN, ±infinity, -0.0
and values equal to the cuts included.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Mapping, Sequence

from sqlglot import exp

from planner.cnf.valueset import ValueSet
from planner.emit.conditions import attribute_expr, region_predicate, valueset_predicate
from planner.model.layout import CATCH_ALL, Layout
from planner.semantics.kinds import Kind

FLAT_MAX = 8  # partitions a flat CASE tries in turn (and the largest branch left flat)
# A cut may copy at most this share of its partitions into both branches. The CASE's code grows
# with every copy, and Spark compiles a projection only up to the JVM's 64 KB per method (beyond
# it, the whole stage runs interpreted): preferring cuts without copies keeps the tree about as
# long as the flat CASE.
MAX_COPIES = 0.25


@dataclass(frozen=True)
class _Candidate:
    id: int
    region: Mapping[str, ValueSet]
    predicate: exp.Expression


def partition_case(layout: Layout, table_alias: str | None = None) -> exp.Expression:
    """The partition id of a row (``planner_pid``); the catch-all for a row no region claims."""
    derived = dict(layout.derived)
    candidates = []
    for p in layout.partitions:
        if p.id == CATCH_ALL:
            continue
        cond = region_predicate(p.region, layout.kinds, derived, table_alias)
        if cond == exp.false():
            continue
        candidates.append(_Candidate(p.id, dict(p.region), cond))

    def build(cands: Sequence[_Candidate], path: Mapping[str, ValueSet]) -> exp.Expression:
        cut = _best_cut(cands) if len(cands) > FLAT_MAX else None
        if cut is None:
            return _flat([replace(c, predicate=region_predicate(_given(c.region, path), layout.kinds, derived,
                                                                table_alias)) if path else c for c in cands])
        attribute, values, left, right = cut
        test = valueset_predicate(attribute_expr(attribute, derived, table_alias), values)
        known = path.get(attribute, ValueSet.everything(values.kind))
        # TRUE: the values in the cut's set; FALSE or NULL: the rest, NULL included unless the set holds it
        return exp.Case().when(test, build(left, {**path, attribute: known.intersect(values)}), copy=False) \
            .else_(build(right, {**path, attribute: known.difference(values)}), copy=False)

    return build(candidates, {})


def _given(region: Mapping[str, ValueSet], path: Mapping[str, ValueSet]) -> tuple[tuple[str, ValueSet], ...]:
    """``region`` as tested below cuts that leave each attribute only the values in ``path``: an
    attribute whose reachable values all lie in the region's set is not tested again, and a set is
    widened by the values the cuts already excluded where that is shorter to write (``[5, 10)``
    below ``x < 10`` is tested as ``x >= 5``). The same rows pass, by the value-set algebra the
    rewriter prunes by."""
    out = []
    for attribute, own in region.items():
        known = path.get(attribute)
        if known is None:
            out.append((attribute, own))
            continue
        if known.difference(own).is_empty():
            continue
        wider = own.union(known.complement())
        out.append((attribute, wider if _size(wider) < _size(own) else own))
    return tuple(out)


def _size(values: ValueSet) -> int:
    """About how many comparisons the set's predicate makes."""
    return sum(1 for _ in values.bounds()) + values.null


def _flat(cands: Sequence[_Candidate]) -> exp.Case:
    case = exp.Case()
    for c in cands:
        case = case.when(c.predicate.copy(), exp.Literal.number(c.id), copy=False)
    return case.else_(exp.Literal.number(CATCH_ALL), copy=False)


def _sides(cands: Sequence[_Candidate], attribute: str, values: ValueSet):
    """(candidates that can hold a row in ``values``, those that can hold one outside it)."""
    left, right = [], []
    for c in cands:
        own = c.region.get(attribute)
        if own is None or own.overlaps(values):
            left.append(c)
        if own is None or not own.difference(values).is_empty():
            right.append(c)
    return left, right


def _below_sides(cands: Sequence[_Candidate], attribute: str, bound, null_below: bool):
    """``_sides`` for ``attribute < bound`` (``OR attribute IS NULL`` with ``null_below``) from
    each set's ends, without set algebra: a set holds a value below ``bound`` iff its lowest end is
    below it, and a value at or above it iff its highest end is above it, or equal and closed."""
    left, right = [], []
    for c in cands:
        own = c.region.get(attribute)
        if own is None:
            left.append(c)
            right.append(c)
            continue
        low = bool(own.intervals) and (own.intervals[0].lo is None or own.intervals[0].lo < bound)
        last = own.intervals[-1] if own.intervals else None
        high = last is not None and (last.hi is None or last.hi > bound or (last.hi == bound and last.hi_closed))
        if low or (own.null and null_below):
            left.append(c)
        if high or (own.null and not null_below):
            right.append(c)
    return left, right


def _best_cut(cands: Sequence[_Candidate]):
    """(attribute, set, TRUE side, other side), or None: the cut that puts the fewest partitions
    on both sides (a layout cut by a tree or a grid has cuts that put none), then the most even.
    Ordered attributes are cut at their sets' ends (``attribute < b``, NULL on either side);
    booleans (and anything unordered) by one of the candidates' own sets."""
    best, best_score = None, None

    def consider(attribute, values, left, right):
        nonlocal best, best_score
        copies = len(left) + len(right) - len(cands)  # partitions on both sides: their code twice
        if len(left) == len(cands) or len(right) == len(cands) or copies > MAX_COPIES * len(cands):
            return
        score = (copies, max(len(left), len(right)))
        if best_score is None or score < best_score:
            best, best_score = (attribute, values, left, right), score

    for attribute in dict.fromkeys(a for c in cands for a in c.region):
        sets = [c.region[attribute] for c in cands if attribute in c.region]
        kind = sets[0].kind
        if kind.orderable and kind is not Kind.BOOLEAN:
            for b in sorted({b for s in sets for b in s.bounds()}):
                below = ValueSet.compare(kind, "<", b)
                consider(attribute, below, *_below_sides(cands, attribute, b, False))
                consider(attribute, below.union(ValueSet.only_null(kind)), *_below_sides(cands, attribute, b, True))
        else:
            for values in dict.fromkeys(s for s in sets if not s.is_everything()):
                consider(attribute, values, *_sides(cands, attribute, values))
    return best


__all__ = ["FLAT_MAX", "MAX_COPIES", "partition_case"]

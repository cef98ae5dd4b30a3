"""The pruning rule's own edges (``planner.pruning.hits``), on hand-built scans.

The query fixtures (``tests/test_pruning_fixtures.py``) reach the rule through the analysis; these
pin what the analysis never hands it today but the rule must still get right: an atom it does
not understand inside a residual clause, empty inputs, several scans at once.
"""
from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from test_cnf_properties import PROFILE, raw_intervals

from planner.analysis.table_analysis import ScanAnalysis
from planner.cnf.ir import ColumnPair, Opaque, Pred
from planner.cnf.normalize import ColumnGroups
from planner.cnf.valueset import Interval, ValueSet
from planner.pruning.hits import PAIRWISE, _overlap_by_pieces, hit_matrix, overlap_matrix
from planner.semantics.kinds import Kind

I = Kind.INTEGER
LOW = ValueSet.of(I, [Interval(None, 10, False, False)])  # x < 10
HIGH = ValueSet.of(I, [Interval(10, None, True, False)], True)  # x >= 10 or NULL
REGIONS = [{"x": LOW}, {"x": HIGH}, {}]
KINDS = {"x": I, "y": I, "a < b": Kind.BOOLEAN}


def pred(column, vs):
    return Pred(column, vs, vs.complement())


def scan(columns=(), residual=(), unsatisfiable=False):
    return ScanAnalysis(0, "t", ColumnGroups(tuple(columns), tuple(frozenset(c) for c in residual), (),
                                             False, unsatisfiable), ())


def test_a_column_set_skips_the_regions_it_misses():
    assert hit_matrix([scan([("x", ValueSet.points(I, [3]))])], REGIONS, KINDS).tolist() == [[True, False, True]]
    assert hit_matrix([scan([("x", ValueSet.only_null(I))])], REGIONS, KINDS).tolist() == [[False, True, True]]


TRUE, FALSE = ValueSet.points(Kind.BOOLEAN, [True]), ValueSet.points(Kind.BOOLEAN, [False])
PAIR_REGIONS = [{"a < b": TRUE, "x": LOW}, {"a < b": FALSE, "x": LOW}, {"x": LOW}, {"x": HIGH}]
X12 = pred("x", ValueSet.points(I, [12]))


def test_a_column_pair_is_false_only_where_the_region_says_so():
    # region 2 does not split on a < b: the pair may be TRUE there (issue 33's lost row, when not)
    pair = ColumnPair("a", "<", "b")
    assert hit_matrix([scan(residual=[[pair, X12]])], PAIR_REGIONS, KINDS).tolist() == [[True, False, True, True]]
    pair_false = ColumnPair("a", ">=", "b")
    assert hit_matrix([scan(residual=[[pair_false, X12]])], PAIR_REGIONS, KINDS).tolist() == [[False, True, True, True]]


def test_an_atom_the_rule_does_not_understand_might_be_true_anywhere():
    opaque = Opaque("f(y) > 1", "a function the planner does not model", frozenset({"y"}))
    assert hit_matrix([scan(residual=[[opaque, X12]])], PAIR_REGIONS, KINDS).tolist() == [[True, True, True, True]]
    # and the clause's other atoms still prune where the opaque one is not there
    assert hit_matrix([scan(residual=[[ColumnPair("a", "<", "b"), X12], [opaque, X12]])], PAIR_REGIONS,
                      KINDS).tolist() == [[True, False, True, True]]


def test_several_scans_and_a_never_true_one():
    got = hit_matrix([scan([("x", LOW)]), scan(unsatisfiable=True), scan()], REGIONS, KINDS)
    assert got.dtype == bool and got.tolist() == [[True, False, True], [False, False, False], [True, True, True]]


def test_overlap_matrix_shapes_and_empty_sides():
    sets = [LOW, HIGH, ValueSet.points(I, [10]), ValueSet.only_null(I)]
    got = overlap_matrix(I, sets, sets[::-1])
    assert got.dtype == bool and got.shape == (4, 4)
    assert got.tolist() == [[a.overlaps(b) for b in sets[::-1]] for a in sets]
    for left, right in [([], [LOW]), ([LOW], []), ([], [])]:
        out = overlap_matrix(I, left, right)
        assert out.dtype == bool and out.shape == (len(left), len(right))
    # duplicates are looked up, not recomputed, and come back in the caller's order
    dup = overlap_matrix(I, [LOW, HIGH, LOW], [HIGH, LOW, HIGH])
    assert dup.tolist() == [[False, True, False], [True, False, True], [False, True, False]]
    assert np.array_equal(overlap_matrix(I, [ValueSet.of(I, [Interval(0, 2, True, True), Interval(5, 7, True, True)])],
                                         [ValueSet.points(I, [3, 4]), ValueSet.points(I, [4, 6])]), [[False, True]])


@PROFILE
@given(kind=st.sampled_from([Kind.INTEGER, Kind.DECIMAL]), data=st.data())
def test_pairs_and_pieces_give_the_same_overlaps(kind, data):
    """A few sets against many are tested pair by pair, many against many by the pieces: both are
    the same matrix, NULL included."""
    sets = [ValueSet.of(kind, *data.draw(raw_intervals(kind))) for _ in range(data.draw(st.integers(1, 8)))]
    left, right = list(dict.fromkeys(sets)), list(dict.fromkeys(sets[::-1] + [ValueSet.only_null(kind)]))
    assert _overlap_by_pieces(kind, left, right).tolist() == [[a.overlaps(b) for b in right] for a in left]


def test_many_sets_against_many_go_by_the_pieces():
    many = [ValueSet.points(I, [k]) for k in range(3 * PAIRWISE)] + [LOW, HIGH, ValueSet.only_null(I)]
    got = overlap_matrix(I, many, many[::-1])
    assert got.tolist() == [[a.overlaps(b) for b in many[::-1]] for a in many]
    # each set itself (63), the points 0..9 with LOW and 10.. with HIGH both ways (2 * 60), HIGH with NULL both ways
    assert got.sum() == 63 + 2 * 3 * PAIRWISE + 2


def test_the_pieces_keep_runs_one_gap_apart_apart():
    # the pieces are (-inf, 1) {1} (1, 3) {3} (3, 5) {5} (5, +inf): {1, 3, 5} is three runs one
    # piece apart, and the open gaps between them are no part of it
    D = Kind.DECIMAL
    points = ValueSet.points(D, [1, 3, 5])
    gaps = [ValueSet.of(D, [Interval(1, 3)]), ValueSet.of(D, [Interval(3, 5)])]
    assert _overlap_by_pieces(D, gaps, [points]).tolist() == [[False], [False]]
    assert _overlap_by_pieces(D, [ValueSet.points(D, [2, 4])], [points]).tolist() == [[False]]
    assert _overlap_by_pieces(D, [ValueSet.of(D, [Interval(4, 6)])], [points]).tolist() == [[True]]


def test_many_scans_against_many_regions_by_the_pieces():
    scans_ = [scan([("x", ValueSet.points(I, [k]))]) for k in range(3 * PAIRWISE)]
    regions = [{"x": ValueSet.range(I, k, k + 1)} for k in range(0, 3 * PAIRWISE, 2)]
    got = hit_matrix(scans_, regions, KINDS)
    assert got.tolist() == [[r == k // 2 for r in range(len(regions))] for k in range(3 * PAIRWISE)]

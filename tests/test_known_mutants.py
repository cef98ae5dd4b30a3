"""The suite's teeth, kept: known wrong versions of the pruning rule must fail the fixtures.

Issue 33 found a lost row that every pure test let through: a column-pair atom taken as FALSE in a
partition that does not split on the pair. These install such wrong rules in place of the real
one and check that the query -> partitions fixtures (``tests/test_pruning_fixtures.py``) and the
row grid see them, so the tests that caught them cannot quietly lose the cases that did.
"""
from __future__ import annotations

import numpy as np
from test_pruning_fixtures import CASES, partitions_read

from planner.analysis.table_analysis import pair_feature
from planner.cnf.ir import ColumnPair
from planner.pruning import hits


def _pair_false_where_not_split(clause, regions, kinds):
    """Issue 33's mutant: a pair atom is FALSE wherever the region does not name the pair."""
    out = np.zeros(len(regions), dtype=bool)
    for atom in clause:
        if isinstance(atom, ColumnPair):
            key, truth = pair_feature(atom)
            out |= np.array([key in r and r[key].contains(truth) for r in regions], dtype=bool)
        else:
            out |= real_clause_may_hold(frozenset([atom]), regions, kinds)
    return out


def _no_residual_pruning(clause, regions, kinds):
    """Safe but weaker: residual clauses never prune."""
    return np.ones(len(regions), dtype=bool)


real_clause_may_hold = hits._clause_may_hold


def _differences(monkeypatch, mutant) -> list:
    monkeypatch.setattr(hits, "_clause_may_hold", mutant)
    out = []
    for layout, sql, want in CASES:
        got = partitions_read(layout, sql)
        if got != want:
            out.append((sql, want, got))
    return out


def test_the_issue_33_lost_row_fails_the_fixtures(monkeypatch):
    diffs = _differences(monkeypatch, _pair_false_where_not_split)
    lost = [(sql, set(want) - set(got)) for sql, want, got in diffs if set(want) - set(got)]
    assert ("SELECT * FROM db.t WHERE (a < b) OR (d >= DATE '1995-01-01')", {1, 4, 5}) in lost


def test_dropping_residual_clause_pruning_fails_the_fixtures(monkeypatch):
    diffs = _differences(monkeypatch, _no_residual_pruning)
    assert len(diffs) >= 5 and all(set(got) > set(want) for _, want, got in diffs)


def test_the_real_rule_passes(monkeypatch):
    assert _differences(monkeypatch, real_clause_may_hold) == []

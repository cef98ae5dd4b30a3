"""The whole table as a candidate of the partial re-layout (Amoeba's root), and the drift replay.

Same table as ``tests/test_relayout.py``: x = 0..9999, y = x mod 100; current layout: quarters of
x. A window that filters ``y = 7`` over all of x reads every quarter: cutting each quarter by y
(8 pieces) and laying the table out by y (2 partitions) rewrite the same 10,000 rows, and the
second opens a quarter of the partitions: the root wins. A window on the first quarter only keeps
the partial plan (2,500 rows rewritten beat 10,000).
"""
from __future__ import annotations

import math
from dataclasses import replace

import pytest
import sqlglot

from planner.advice.drift import Strategy, hindsight, replay
from planner.advice.relayout_plan import model_for, pieces_of, plan_relayout
from planner.emit.relayout_sql import recut_insert
from planner.model.layout import Layout, Ordering
from tests.test_relayout import COLUMNS, WINDOW, N, _by_y, _model, _quarters

EVERYWHERE = "SELECT * FROM t WHERE y = 7;\n" * 20


def _target() -> Layout:
    return replace(_by_y(), order=Ordering("sort", ("x",)))


def test_a_drift_over_the_whole_table_lays_it_out_as_the_target():
    current, target = _quarters(), _target()
    model = _model(EVERYWHERE)
    plan = plan_relayout(model, current, target)
    assert plan.whole
    assert plan.chosen == current.known_ids
    assert math.isclose(plan.rows_rewritten, N)
    assert [p.region for p in plan.layout.partitions] == [p.region for p in target.partitions]
    assert plan.layout.order == target.order  # the target's order, not the current one
    assert not set(plan.new_ids) & set(current.known_ids)
    assert plan.layout.known_ids == tuple(sorted(plan.new_ids))
    assert plan.net > 0 and plan.net == plan.gain - plan.write_cost * N
    # the partitions' plan rewrites as much and gains less
    pieces_only = plan_relayout(model, current, target, whole=False)
    assert not pieces_only.whole and len(pieces_only.chosen) == 4
    assert pieces_only.net < plan.net
    assert (model_for(model, plan.layout).evaluate(plan.layout).total
            < model_for(model, pieces_only.layout).evaluate(pieces_only.layout).total)
    assert Layout.loads(plan.layout.dumps()) == plan.layout
    # every old partition maps to the new partitions its rows can land in
    assert all(set(ids) == set(plan.new_ids) for ids in pieces_of(plan).values())


def test_a_drift_on_a_quarter_stays_partial():
    plan = plan_relayout(_model(WINDOW), _quarters(), _target())
    assert not plan.whole and len(plan.chosen) == 1 and math.isclose(plan.rows_rewritten, 2500)


def test_the_root_obeys_the_rule_too():
    assert plan_relayout(_model(EVERYWHERE), _quarters(), _target(), write_cost=1e6).chosen == ()
    # partitions named by an append (only/force) are never widened to the table
    plan = plan_relayout(_model(EVERYWHERE), _quarters(), _target(), only=[_quarters().known_ids[0]])
    assert not plan.whole and plan.chosen == (_quarters().known_ids[0],)


def test_the_whole_recut_reads_every_old_partition_and_writes_the_new_ones():
    plan = plan_relayout(_model(EVERYWHERE), _quarters(), _target())
    sql = recut_insert(plan, COLUMNS, "db.t", "db.t__planner_relayout", dialect="spark").sql("spark")
    tree = sqlglot.parse_one(sql, read="spark")
    where = tree.expression.args["where"].sql("spark")
    assert all(str(pid) in where for pid in plan.chosen)
    assert all(str(pid) in sql for pid in plan.new_ids)
    assert "SORT BY" in sql.upper() and "`x`" in sql


def _drifted(window: int) -> Layout:
    return _quarters() if window == 0 else _target()


def test_replay_partial_pays_one_rewrite_where_full_pays_one_too_and_static_none():
    # every strategy starts from best(0), the quarters; from window 2 on, the best layout is by y
    models = [_model(EVERYWHERE)] * 4
    traces = replay(models, _drifted, max_partitions=1000)
    assert traces["static"].rewritten == [0.0] * 4
    assert traces["full"].rewritten == [0.0, N, 0.0, 0.0]
    assert [round(x) for x in traces["partial"].rewritten] == [0, N, 0, 0]
    assert traces["partial"].reads == traces["full"].reads
    assert traces["partial"].total < traces["static"].total


def test_replay_partial_skips_a_switch_that_does_not_pay_c_times_the_table():
    # the target gains on the window, but less than 4 x the rows of the table: full switches anyway
    few = _model("SELECT * FROM t WHERE y = 7;\n")
    traces = replay([few] * 3, _drifted, max_partitions=1000)
    assert traces["full"].rewritten[1] == N
    assert traces["partial"].rewritten == [0.0] * 3


def test_a_strategy_acts_only_after_every_nth_step():
    # four steps; the drift is seen from step 1 on: checking every step switches after step 1,
    # every two steps after step 2 (one step later), and no strategy acts after the last step
    models = [_model(EVERYWHERE)] * 4
    traces = replay(models, _drifted, start=_quarters(), max_partitions=1000,
                    strategies={"partial": Strategy("partial"), "partial/2": Strategy("partial", 2),
                                "full/2": Strategy("full", 2), "static": Strategy("static")})
    assert [round(x) for x in traces["partial"].rewritten] == [0, N, 0, 0]
    assert [round(x) for x in traces["partial/2"].rewritten] == [0, N, 0, 0]
    assert traces["full/2"].rewritten == [0.0, N, 0.0, 0.0]
    late = replay(models, lambda i: _target(), start=_quarters(), max_partitions=1000,
                  strategies={"partial": Strategy("partial"), "partial/2": Strategy("partial", 2)})
    assert [round(x) for x in late["partial"].rewritten] == [N, 0, 0, 0]
    assert [round(x) for x in late["partial/2"].rewritten] == [0, N, 0, 0]
    assert late["partial"].reads[1] < late["partial/2"].reads[1]  # checking sooner reads less
    assert late["partial"].total < late["partial/2"].total
    with pytest.raises(ValueError):
        Strategy("sometimes")


def test_the_decision_is_made_on_the_recent_window_not_the_last_step():
    # the last step alone (one query) never pays c x the table; the recent window (20 queries) does
    one = _model("SELECT * FROM t WHERE y = 7;\n")
    traces = replay([one] * 3, lambda i: _target(), start=_quarters(), max_partitions=1000)
    assert traces["partial"].rewritten == [0.0] * 3
    traces = replay([one] * 3, lambda i: _target(), recent=lambda i: _model(EVERYWHERE), start=_quarters(),
                    max_partitions=1000)
    assert [round(x) for x in traces["partial"].rewritten] == [N, 0, 0]


def test_hindsight_picks_the_cheapest_layout_known_before_each_step():
    models = [_model(EVERYWHERE)] * 3
    reads = hindsight(models, [_target(), _target()], start=_quarters())
    on = {name: model_for(models[0], lay).evaluate(lay).rows for name, lay in
          (("quarters", _quarters()), ("target", _target()))}
    assert reads == [on["quarters"], min(on.values()), min(on.values())]


def test_status_says_when_the_partial_re_layout_is_the_whole_table():
    from planner.advice.layout_status import status_of

    model = _model(EVERYWHERE)
    plan = plan_relayout(model, _quarters(), _target())
    st = status_of(model, _quarters(), _target(), plan)
    assert st.to_json()["partial_relayout"]["whole_table"] is True
    assert "the whole table" in st.text()
    assert status_of(_model(WINDOW), _quarters(), _target(),
                     plan_relayout(_model(WINDOW), _quarters(), _target())).to_json()["partial_relayout"][
        "whole_table"] is False


def test_the_targets_write_hints_follow_its_partitions_to_their_new_ids():
    target = replace(_target(), meta=(("partition_rows", {"1": 100, "2": 9900}), ("row_group_rows", 5)))
    plan = plan_relayout(_model(EVERYWHERE), _quarters(), target)
    meta = dict(plan.layout.meta)
    assert meta["partition_rows"] == {str(plan.new_ids[0]): 100, str(plan.new_ids[1]): 9900}
    assert meta["row_group_rows"] == 5 and meta["relayout_of"] == _quarters().generation

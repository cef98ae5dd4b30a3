"""A re-layout must also pay on queries its target was not fitted to (``planner.advice.held_out``).

Same table as ``tests/test_relayout.py``: x = 0..9999, y = x mod 100, current layout quarters of x.
A window of 20 ``y = 7`` queries pays for laying the table out by y on the window; whether it
also pays out of sample depends on what a layout advised on half of those queries does for the
other half.
"""
from __future__ import annotations

import math
from dataclasses import replace

from planner.advice.drift import Strategy, replay
from planner.advice.held_out import halves, held_out_net, judged_halves, validated
from planner.advice.layout_status import declined_text, status_of
from planner.advice.relayout_plan import plan_relayout
from planner.model.layout import Layout, Ordering
from planner.workload import parse_workload
from tests.test_relayout import N, _by_y, _model, _quarters

EVERYWHERE = "SELECT * FROM t WHERE y = 7;\n" * 20
MIXED = "SELECT * FROM t WHERE y = 7;\nSELECT * FROM t WHERE x < 2000;\n" * 10


def _target() -> Layout:
    return replace(_by_y(), order=Ordering("sort", ("x",)))


def _judged(text: str, fitted) -> list:
    return judged_halves(parse_workload(text), lambda wl: _model("".join(q.sql + ";\n" for q in wl.queries)),
                         lambda wl, model: fitted(wl))


def test_halves_take_every_other_query():
    a, b = halves(parse_workload(MIXED))
    assert {q.sql for q in a.queries} == {"SELECT * FROM t WHERE y = 7"}
    assert {q.sql for q in b.queries} == {"SELECT * FROM t WHERE x < 2000"}
    assert len(a.queries) == len(b.queries) == 10


def test_a_switch_that_a_stable_window_wants_pays_out_of_sample_too():
    plan = plan_relayout(_model(EVERYWHERE), _quarters(), _target())
    assert plan.whole and plan.net > 0
    kept = validated(plan, _judged(EVERYWHERE, lambda wl: _target()))
    assert kept.chosen == plan.chosen and kept.declined is None
    # each half is judged toward the layout fitted on the other: the same layout, half the queries
    # each, so the held-out net is the window's
    assert math.isclose(kept.held_out_net, plan.net, rel_tol=1e-9)
    assert kept.to_json()["held_out_net"] == round(plan.net)


def test_a_switch_fitted_to_noise_is_declined_and_says_why():
    # each half's own best layout does nothing for the other half: the window's gain was in-sample
    plan = plan_relayout(_model(EVERYWHERE), _quarters(), _target())
    declined = validated(plan, _judged(EVERYWHERE, lambda wl: _quarters()))
    assert declined.chosen == () and declined.new_ids == () and not declined.whole
    assert declined.layout == _quarters() and declined.rows_rewritten == 0
    assert declined.declined is plan
    assert math.isclose(declined.held_out_net, -plan.write_cost * N)
    assert declined.to_json()["declined"] == {"whole": True, "partitions": 4, "rows_rewritten": N,
                                              "gain": round(plan.gain)}
    text = declined_text(declined)
    assert "laying out the whole table" in text and "declined" in text and "10,000 rows" in text
    status = status_of(_model(EVERYWHERE), _quarters(), _target(), declined)
    assert "declined" in status.text()
    assert status.to_json()["partial_relayout"]["declined"]["whole"] is True


def test_a_window_of_two_kinds_of_query_that_only_pays_in_sample_is_declined():
    # half the window filters y = 7, half x < 2000. In-sample, cutting every quarter by y gains the
    # y queries more than it costs the x queries and c x the rows. Out of sample it does not: the
    # layout fitted on the y half is judged on the x queries and loses, and the one fitted on the
    # x half (the quarters as they are) gains the y half nothing.
    plan = plan_relayout(_model(MIXED), _quarters(), _target())
    assert len(plan.chosen) == 4 and not plan.whole and plan.net > 0
    judged = _judged(MIXED, lambda wl: _target() if "y = 7" in wl.queries[0].sql else _quarters())
    (_, fitted_for_y_half), (_, fitted_for_x_half) = judged
    assert fitted_for_y_half == _quarters() and fitted_for_x_half == _target()  # fitted on the other half
    net = held_out_net(plan, judged)
    assert net < 0 < plan.net
    assert validated(plan, judged).chosen == ()
    assert "re-cutting 4 partitions" in declined_text(validated(plan, judged))


def test_a_validated_strategy_skips_a_switch_fitted_to_noise():
    models = [_model(EVERYWHERE)] * 4
    traces = replay(models, lambda i: _quarters() if i == 0 else _target(), max_partitions=1000,
                    strategies={"partial": Strategy("partial"),
                                "validated": Strategy("partial", validated=True)},
                    judged=lambda i: _judged(EVERYWHERE, lambda wl: _quarters()))
    assert [round(x) for x in traces["partial"].rewritten] == [0, N, 0, 0]
    assert traces["validated"].rewritten == [0.0] * 4
    stable = replay(models, lambda i: _quarters() if i == 0 else _target(), max_partitions=1000,
                    strategies={"validated": Strategy("partial", validated=True)},
                    judged=lambda i: _judged(EVERYWHERE, lambda wl: _target()))
    assert [round(x) for x in stable["validated"].rewritten] == [0, N, 0, 0]

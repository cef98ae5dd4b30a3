"""Binding without a schema: column kinds guessed from the literals (``planner.cnf.bind.infer_kinds``).

With no schema the planner still analyses a workload (``planner analyze`` on SQL alone); the kinds
it assumes decide how a literal is read, so they are pinned here.
"""
from __future__ import annotations

from planner.cnf.bind import column_type, infer_kinds
from planner.semantics.kinds import Kind
from planner.semantics.types import parse_type
from planner.workload import parse_workload


def kinds(where: str) -> dict[str, Kind]:
    wl = parse_workload(f"select * from t where {where}", "w.sql")
    return infer_kinds([s.predicate for q in wl.queries for s in q.scans])


def test_kinds_from_literals():
    assert kinds("a = 1 and b = 1.5 and c = 'x' and d = DATE '1995-01-01' and e = TIMESTAMP '2020-01-01 00:00:00' "
                 "and f = true and g like 'a%' and h = 1e3 and i is null") == {
        "a": Kind.DECIMAL, "b": Kind.DECIMAL, "c": Kind.STRING, "d": Kind.DATE, "e": Kind.TIMESTAMP,
        "f": Kind.BOOLEAN, "g": Kind.STRING, "h": Kind.FLOAT}


def test_the_most_specific_kind_wins_and_strings_give_way():
    assert kinds("d = '1994-01-01' or d < DATE '1996-01-01'") == {"d": Kind.DATE}  # a date column
    assert kinds("t = DATE '1994-01-01' or t < TIMESTAMP '1996-01-01 00:00:00'") == {"t": Kind.TIMESTAMP}
    assert kinds("n in (1, 2.5)") == {"n": Kind.DECIMAL}
    assert kinds("x = 1 or x = 1e3") == {"x": Kind.FLOAT}
    assert kinds("s = 'a' or s like 'b%'") == {"s": Kind.STRING}
    assert kinds("s like 'b%' or s = 5") == {"s": Kind.DECIMAL}


def test_column_pairs_and_functions_guess_nothing():
    assert kinds("a < b AND a = 1 AND upper(s) = 'X'") == {"a": Kind.DECIMAL}


def test_column_types_from_kinds_and_names():
    assert column_type(Kind.INTEGER) == parse_type("bigint")
    assert column_type(Kind.DECIMAL) == parse_type("decimal(38,10)")
    assert column_type("date") == parse_type("date")
    t = parse_type("int")
    assert column_type(t) is t

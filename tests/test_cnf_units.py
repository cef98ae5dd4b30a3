"""Small pieces of the predicate IR, case by case (``planner.cnf``): comparisons as value sets,
negation of raw comparisons, which predicates need the session time zone, which column pairs
can be a derived attribute."""
from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
import sqlglot

from planner.cnf.bind import column_pair_kinds_ok, needs_time_zone
from planner.cnf.convert import to_ir
from planner.cnf.ir import Cmp, ColumnPair, Pred, and_, or_
from planner.cnf.normalize import cnf, group_by_column, hull
from planner.cnf.valueset import ValueSet
from planner.semantics.kinds import Kind
from planner.semantics.types import parse_type

I, D = Kind.INTEGER, Kind.DATE


@pytest.mark.parametrize("op,inside,outside", [
    ("=", [5], [4, 6]), ("<>", [4, 6], [5]), ("<", [4, -100], [5, 6]), ("<=", [4, 5], [6]),
    (">", [6, 100], [4, 5]), (">=", [5, 6], [4]),
])
def test_compare_is_the_set_a_comparison_allows(op, inside, outside):
    vs = ValueSet.compare(I, op, 5)
    assert all(vs.contains(v) for v in inside) and not any(vs.contains(v) for v in outside)
    assert not vs.null  # x <op> 5 is never TRUE on NULL
    d = ValueSet.compare(D, op, dt.date(2020, 1, 5))
    assert d.contains(dt.date(2020, 1, 5)) == (op in ("=", "<=", ">="))


def test_compare_refuses_an_unknown_operator():
    with pytest.raises(ValueError, match="unknown comparison '~'"):
        ValueSet.compare(I, "~", 5)


@pytest.mark.parametrize("op,negated", [("=", "<>"), ("<>", "="), ("<", ">="), (">=", "<"), (">", "<="), ("<=", ">")])
def test_negating_a_comparison_flips_the_operator(op, negated):
    c = Cmp("x", op, (5,))
    assert c.negate() == Cmp("x", negated, (5,)) and c.negate().negate() == c


@pytest.mark.parametrize("op,values", [("in", (1, 2)), ("between", (1, 2)), ("like", ("a%",)), ("isnull", ())])
def test_negating_in_between_like_and_is_null_marks_them(op, values):
    c = Cmp("x", op, values)
    assert c.negate() == Cmp("x", op, values, True) and c.negate().negate() == c


def _ir(where: str):
    return to_ir(sqlglot.parse_one(f"SELECT * FROM t WHERE {where}", read="spark").args["where"].this,
                 lambda c: c.name.lower(), "spark")


@pytest.mark.parametrize("where,types,needed", [
    ("ts < '2020-01-01 00:00:00'", {"ts": "timestamp"}, True),        # the column's type needs it
    ("d < TIMESTAMP '2020-01-01 00:00:00'", {"d": "date"}, True),     # the literal does
    ("d < DATE '2020-01-01'", {"d": "date"}, False),
    ("n = 5 AND d < DATE '2020-01-01'", {"n": "int", "d": "date"}, False),
    ("n = 5 OR ts IS NULL", {"n": "int", "ts": "timestamp"}, True),
    ("u < TIMESTAMP '2020-01-01 00:00:00'", {}, True),                 # unknown column, zoned literal
    ("u < 5", {}, False),
    ("NOT (ts < '2020-01-01 00:00:00')", {"ts": "timestamp"}, True),  # under a NOT
    # atoms that are no comparison (pairs, functions) before the one that needs the zone
    ("(a < b) OR (c < e) OR f(x) > 1 OR upper(s) = 'A' OR ts < '2020-01-01 00:00:00'", {"ts": "timestamp"}, True),
])
def test_which_predicates_need_the_session_time_zone(where, types, needed):
    assert needs_time_zone(_ir(where), {c: parse_type(t) for c, t in types.items()}) is needed


@pytest.mark.parametrize("kinds,ok", [
    ({"a": D, "b": D}, True), ({"a": I, "b": I}, True), ({"a": D, "b": I}, False), ({"a": D}, False),
    ({"b": D}, False), ({"a": Kind.BOOLEAN, "b": Kind.BOOLEAN}, Kind.BOOLEAN.orderable),
    ({"a": Kind.OTHER, "b": Kind.OTHER}, False),
])
def test_which_column_pairs_can_be_a_derived_attribute(kinds, ok):
    assert column_pair_kinds_ok(ColumnPair("a", "<", "b"), kinds) is ok


# ---- the hull: what a CNF past its budget keeps (an upper bound of the predicate, per column) ------
def _p(column, vs):
    return Pred(column, vs, vs.complement())


def _lt(n):
    return ValueSet.compare(I, "<", n)


def _gt(n):
    return ValueSet.compare(I, ">", n)


def _hull_sets(e) -> dict:
    h = hull(e)
    atoms_ = [h] if isinstance(h, Pred) else list(h.args)
    assert all(a.false.is_empty() and not a.exact for a in atoms_)  # never claims FALSE
    return {a.column: a.true for a in atoms_}


def test_the_hull_of_a_conjunction_intersects_per_column():
    e = and_(_p("x", _lt(5)), _p("x", _gt(1)), _p("y", ValueSet.points(I, [1])))
    assert _hull_sets(e) == {"x": _lt(5).intersect(_gt(1)), "y": ValueSet.points(I, [1])}


def test_the_hull_of_a_disjunction_keeps_columns_every_branch_names():
    e = or_(and_(_p("x", _lt(5)), _p("y", ValueSet.points(I, [1]))),
            and_(_p("x", _gt(10)), _p("z", ValueSet.points(I, [2]))),
            _p("x", ValueSet.only_null(I)))
    assert _hull_sets(e) == {"x": _lt(5).union(_gt(10)).union(ValueSet.only_null(I))}
    # a branch without x (the first, the second or the last) leaves x unconstrained
    for missing in range(3):
        branches = [_p("x", _lt(5)), _p("x", _gt(10)), _p("x", ValueSet.points(I, [7]))]
        branches[missing] = _p("y", ValueSet.points(I, [1]))
        assert "x" not in _hull_sets(and_(or_(*branches), _p("z", ValueSet.points(I, [3]))))


def test_a_cnf_past_its_budget_is_weakened_to_a_bound_that_keeps_every_row():
    # (x<1 AND y<1) OR (x>10 AND y>10) OR (x=5 AND y=5): 8 clauses in CNF, past a budget of 2
    e = or_(and_(_p("x", _lt(1)), _p("y", _lt(1))), and_(_p("x", _gt(10)), _p("y", _gt(10))),
            and_(_p("x", ValueSet.points(I, [5])), _p("y", ValueSet.points(I, [5]))))
    full, weak = cnf(e), cnf(e, budget=2)
    assert not full.weakened and weak.weakened
    groups = group_by_column(weak)
    assert groups.column_sets["x"] == _lt(1).union(_gt(10)).union(ValueSet.points(I, [5]))
    assert groups.column_sets["y"] == _lt(1).union(_gt(10)).union(ValueSet.points(I, [5]))


def test_how_the_ir_prints():
    from planner.cnf.ir import FALSE, TRUE, UNKNOWN, Or
    from planner.cnf.normalize import clause_str

    assert (str(TRUE), str(FALSE), str(UNKNOWN)) == ("TRUE", "FALSE", "UNKNOWN")
    e = or_(and_(_ir("x = 1"), _ir("y = 2")), _ir("z = 3"))
    assert isinstance(e, Or) and str(e) == "(x = 1 AND y = 2) OR z = 3"
    assert str(and_(_ir("x = 1"), or_(_ir("y = 2"), _ir("z = 3")))) == "(y = 2 OR z = 3) AND x = 1"
    assert clause_str(frozenset()) == "FALSE"
    assert clause_str(frozenset({_p("x", _lt(5)), _p("y", _gt(1))})) == "x IN (-inf, 4] OR y IN [2, +inf)"


# ---- a DECIMAL(38,18) column in an IN list that needs more than 38 digits ---------------------------
def _bound(where: str, column_type: str):
    from planner.cnf.bind import bind
    from planner.semantics.settings import Settings

    return bind(_ir(where), {"x": parse_type(column_type)}, Settings(True))


@pytest.mark.parametrize("where,inside,outside", [
    # the common type keeps 23 integer digits and 15 decimals: x is rounded HALF_UP to 15 places
    ("x IN (0.123456789012345678, 12345678901234567890123)",
     ["0.123456789012345500", "0.123456789012346499"], ["0.123456789012345499", "0.123456789012346500"]),
    ("x IN (-0.123456789012345678, 12345678901234567890123)",
     ["-0.123456789012345500", "-0.123456789012346499"], ["-0.123456789012345499", "-0.123456789012346500"]),
    ("x IN (0, 12345678901234567890123)",
     ["0.000000000000000499", "-0.000000000000000499", "0"], ["0.000000000000000500", "-0.000000000000000500"]),
    ("x IN (0.5, 1.25)", ["0.5", "1.25"], ["0.500000000000000001", "1.249999999999999999"]),  # no rounding
])
def test_a_column_rounded_to_a_narrower_scale(where, inside, outside):
    from decimal import Decimal

    p = _bound(where, "decimal(38,18)")
    assert all(p.true.contains(Decimal(v)) for v in inside), p.true
    assert not any(p.true.contains(Decimal(v)) for v in outside), p.true


def test_a_date_against_a_timestamp_needs_a_zone_the_planner_knows():
    import datetime as dt

    from planner.cnf.bind import bind
    from planner.cnf.ir import Opaque
    from planner.semantics.settings import Settings

    e = _ir("d < TIMESTAMP '2020-01-01 12:00:00'")
    utc = bind(e, {"d": parse_type("date")}, Settings(True, "UTC"))
    assert isinstance(utc, Pred) and utc.true.contains(dt.date(2020, 1, 1)) and not utc.true.contains(dt.date(2020, 1, 2))
    unknown = bind(e, {"d": parse_type("date")}, Settings(True, "Nowhere/Atlantis"))
    assert isinstance(unknown, Opaque) and "time zone Nowhere/Atlantis" in unknown.reason


def test_a_comparison_read_differently_in_the_two_ansi_modes_is_their_union():
    from decimal import Decimal

    from planner.cnf.bind import bind
    from planner.semantics.settings import Settings

    both = bind(_ir("16777217 = f"), {"f": parse_type("float")}, (Settings(True), Settings(False)))
    assert isinstance(both, Pred) and both.column == "f" and both.exact is False
    assert both.true == ValueSet.points(Kind.FLOAT, [Decimal("16777216.0"), Decimal("16777217.0")])
    assert both.false == ValueSet.not_null(Kind.FLOAT)  # each reading is FALSE somewhere the other is TRUE
    for s in (Settings(True), Settings(False)):
        one = bind(_ir("16777217 = f"), {"f": parse_type("float")}, (s,))
        assert one.exact and one.true.difference(both.true).is_empty()


# ---- merging the atoms of one column, and the union of two ANSI readings -------------------------
def _text(column, vs, text, exact=True):
    return Pred(column, vs, vs.complement().intersect(ValueSet.not_null(vs.kind)), exact, text)


def test_merged_atoms_keep_both_texts_and_are_exact_only_when_every_atom_is():
    from planner.cnf.normalize import _merge_preds

    a, b = _text("x", _lt(3), "x < 3"), _text("x", ValueSet.points(I, [5]), "x = 5")
    either, both = _merge_preds([b, a], conjunctive=False), _merge_preds([b, a], conjunctive=True)
    assert (either.text, either.exact, either.column) == ("x < 3 OR x = 5", True, "x")
    assert either.true == _lt(3).union(ValueSet.points(I, [5])) and either.false == ValueSet.compare(I, ">=", 3).intersect(
        ValueSet.points(I, [5]).complement()).intersect(ValueSet.not_null(I))
    assert (both.text, both.exact) == ("x < 3 AND x = 5", True) and both.true.is_empty()
    inexact = _merge_preds([a, _text("x", _gt(7), "x LIKE '8_'", exact=False)], conjunctive=False)
    assert inexact.exact is False and inexact.text == "x < 3 OR x LIKE '8_'"
    assert _merge_preds([a], conjunctive=False) is a
    untitled = _merge_preds([Pred("x", _lt(3), _gt(2)), Pred("x", _gt(7), _lt(8))], conjunctive=False)
    assert untitled.text == "x IN (-inf, 2] OR x IN [8, +inf)"  # sorted: one text for any order


def test_the_union_of_two_readings_is_opaque_unless_both_are_atoms_of_the_column():
    from planner.cnf.bind import _union
    from planner.cnf.ir import Opaque

    one, other = _text("x", _lt(3), "x < 3"), _text("x", _lt(5), "x < 5")
    both = _union([one, other])
    assert both == Pred("x", _lt(5), ValueSet.compare(I, ">=", 3), False)
    mixed = _union([one, and_(other, _text("x", _gt(0), "x > 0"))])  # a BETWEEN read as two atoms
    assert mixed == Opaque("x IN (-inf, 2] OR x IN (-inf, 4] AND x IN [1, +inf)", "its meaning depends on the session's ANSI mode")
    assert isinstance(_union([one, _text("y", _lt(5), "y < 5")]), Opaque)


def test_unbounded_sides_are_open_and_ranges_keep_their_open_bounds():
    from planner.cnf.valueset import Interval

    for op in (">", ">="):  # an unbounded side is open, as _normalise and equality expect
        (iv,) = ValueSet.compare(Kind.STRING, op, "b").intervals
        assert iv.hi is None and iv.hi_closed is False and iv.lo_closed == (op == ">=")
    open_ = ValueSet.range(Kind.STRING, "b", "d", lo_closed=False, hi_closed=False)
    assert open_.intervals == (Interval("b", "d", False, False),)
    assert ValueSet.range(Kind.STRING, None, None, True, True).intervals == (Interval(None, None, False, False),)
    assert (str(ValueSet.everything(I)), str(ValueSet.nothing(I))) == ("ANY", "NONE")


@pytest.mark.parametrize("where", ["s LIKE 'ab%'", "s LIKE 'a_c'", "s LIKE 'abc'", "c LIKE 'abcde'", "c LIKE 'ab'",
                                   "i IN (1, 5)", "i IN (1, NULL)", "i IS NULL", "i BETWEEN 1 AND 5"])
def test_a_negated_atom_binds_to_the_negation_of_its_predicate(where):
    # The pipeline binds before it pushes NOT down (table_analysis: nnf(bind(...))), so these
    # atoms reach bind negated only through the API; bound, they must still mean NOT.
    from planner.cnf.bind import bind
    from planner.cnf.ir import Cmp

    types = {"s": parse_type("string"), "c": parse_type("char(5)"), "i": parse_type("int")}
    atom = _ir(where)
    assert isinstance(atom, Cmp) and atom.op in ("like", "in", "isnull", "between")
    plain, negated = bind(atom, types), bind(atom.negate(), types)
    if isinstance(plain, Pred):
        assert negated == plain.negate() and negated.exact == plain.exact
    else:  # BETWEEN binds to two atoms
        from planner.cnf.ir import not_
        from planner.cnf.normalize import nnf

        assert nnf(negated) == nnf(not_(plain))


# ---- an exact column compared in FLOAT (ANSI off: INT and FLOAT meet in FLOAT, binary32) -----------
@pytest.mark.parametrize("where,column,inside,outside", [
    # 2^24: the floats around it are 16777215 and 16777218; 16777217 is a tie and rounds to the even 2^24
    ("i = CAST(16777216 AS FLOAT)", "int", [16777216, 16777217], [16777215, 16777218]),
    ("i = CAST(16777218 AS FLOAT)", "int", [16777218], [16777217, 16777219]),  # both ties round away from it
    # 2^25: spacing 2 below, 4 above; a neighbour taken in binary64 instead would lose 33554431 and 33554433
    ("i = CAST(33554432 AS FLOAT)", "int", [33554431, 33554432, 33554434], [33554430, 33554435]),
    ("i = CAST(-16777218 AS FLOAT)", "int", [-16777218], [-16777217, -16777219]),
    ("i < CAST(-16777216 AS FLOAT)", "int", [-16777218, -2**31], [-16777217, -16777216]),
    ("i > CAST(16777216 AS FLOAT)", "int", [16777218, 2**31 - 1], [16777217, 16777216]),
    ("i = CAST(0 AS FLOAT)", "int", [0], [1, -1]),
    ("i >= CAST(-0.0 AS FLOAT)", "int", [0, 5], [-1]),
    ("b = CAST('3.4028235E38' AS FLOAT)", "bigint", [], [2**63 - 1]),
    ("b < CAST('-3.4028235E38' AS FLOAT)", "bigint", [], [-2**63]),
])
def test_an_exact_column_against_a_float_rounds_half_to_even_in_binary32(where, column, inside, outside):
    from planner.cnf.bind import bind
    from planner.semantics.settings import Settings

    col = where.split()[0]
    p = bind(_ir(where), {col: parse_type(column)}, Settings(False))
    assert isinstance(p, Pred) and p.exact, p
    assert all(p.true.contains(v) for v in inside), (p.true, inside)
    assert not any(p.true.contains(v) for v in outside), (p.true, outside)


def test_the_budget_counts_the_clauses_a_distribution_makes():
    def pair(n):  # (x = n AND y = n): two clauses to distribute
        return and_(_p("x", ValueSet.points(I, [n])), _p("y", ValueSet.points(I, [n])))

    two, three = or_(pair(1), pair(2)), or_(pair(1), pair(2), pair(3))  # 4 and 8 clauses
    assert not cnf(two, budget=4).weakened and cnf(two, budget=3).weakened
    assert cnf(three, budget=4).weakened and not cnf(three, budget=8).weakened
    assert not cnf(or_(pair(1), pair(2), _p("z", _lt(3))), budget=4).weakened  # one clause multiplies by 1
    # past the budget under an AND, and under an OR inside an AND inside an OR
    assert cnf(and_(_p("z", _lt(3)), three), budget=4).weakened
    assert cnf(or_(_p("w", _lt(3)), and_(_p("z", _lt(3)), three)), budget=4).weakened


def test_a_date_against_a_timestamp_binds_only_where_the_zone_databases_agree():
    from planner.cnf.bind import bind
    from planner.cnf.ir import Opaque
    from planner.semantics.settings import Settings

    ny = Settings(True, "America/New_York")
    p = bind(_ir("d < TIMESTAMP '2020-03-08 12:00:00'"), {"d": parse_type("date")}, ny)
    assert isinstance(p, Pred) and p.true.contains(dt.date(2020, 3, 8)) and not p.true.contains(dt.date(2020, 3, 9))
    # the literal itself is refused first, before the DATE's thresholds are looked for
    old = bind(_ir("d < TIMESTAMP '1800-01-01 12:00:00'"), {"d": parse_type("date")}, ny)
    assert isinstance(old, Opaque) and old.reason.endswith("time zone America/New_York at 1800-01-01 12:00:00")


def test_a_zone_dependent_atom_is_found_after_atoms_of_every_other_kind():
    # an And's operands are a set; whatever order they come in, the one that needs the zone is seen
    from planner.cnf.ir import And

    e = _ir("(a < b) AND f(x) > 1 AND n IS NULL AND ts < '2020-01-01 00:00:00'")
    types = {"ts": parse_type("timestamp"), "n": parse_type("int"), "a": parse_type("int"), "b": parse_type("int")}
    args = sorted(e.args, key=lambda a: "ts <" in str(a))  # the TIMESTAMP comparison last
    assert "ts <" in str(args[-1]) and needs_time_zone(And(tuple(args)), types)


def test_the_empty_and_the_full_set_are_plain():
    assert ValueSet.nothing(I).null is False and ValueSet.nothing(I).kind is I
    assert ValueSet.intersect_all(D, []) == ValueSet.everything(D) and ValueSet.intersect_all(D, []).kind is D


def test_a_like_prefix_is_a_half_open_range():
    from planner.cnf.bind import _prefix_range
    from planner.cnf.valueset import Interval

    assert _prefix_range("ab", Kind.STRING).intervals == (Interval("ab", "ac", True, False),)
    top = "a\U0010FFFF"
    assert _prefix_range(top, Kind.STRING).intervals == (Interval(top, "b", True, False),)
    assert _prefix_range("\U0010FFFF", Kind.STRING).intervals == (Interval("\U0010FFFF", None, True, False),)


def test_constants_fold_out_of_and_and_or():
    from planner.cnf.ir import FALSE, TRUE

    x = _p("x", _lt(3))
    assert or_(FALSE, x) == x and or_(TRUE, x) == TRUE and or_() == FALSE and or_(FALSE) == FALSE
    assert and_(TRUE, x) == x and and_(FALSE, x) == FALSE and and_() == TRUE
    assert Pred("x", _lt(3), _gt(2)).negate().text == "" and _text("x", _lt(3), "x < 3").negate().text == "NOT (x < 3)"


def test_the_hull_of_a_disjunction_drops_a_column_one_branch_lacks_wherever_that_branch_sorts():
    # the branches are a frozenset: over these variants the one without x takes every place
    for k in range(30):
        e = or_(_p("x", _lt(5)), _p("y", ValueSet.points(I, [k])), _p("x", _gt(10 + k)), _p("x", ValueSet.points(I, [7])))
        assert "x" not in _hull_sets(and_(e, _p("z", ValueSet.points(I, [3])))), str(e)


@pytest.mark.parametrize("where,ansi", [("x = NULL", True), ("x = 'abc'", False)])
def test_a_comparison_never_true_nor_false_keeps_the_column_kind(where, ansi):
    # x = NULL, and x = 'abc' where the string casts to NULL (ANSI off): both sides empty, of x's kind
    from planner.cnf.bind import bind
    from planner.semantics.settings import Settings

    p = bind(_ir(where), {"x": parse_type("INT")}, Settings(ansi))
    assert isinstance(p, Pred) and p.true == ValueSet.nothing(I) and p.false == ValueSet.nothing(I)
    assert (p.true.kind, p.false.kind) == (I, I)


@pytest.mark.parametrize("interval,want", [
    ((Decimal("1.5"), None, True, False), (2, None)), ((Decimal("-1.5"), None, False, False), (-1, None)),
    ((Decimal("2"), None, False, False), (3, None)), ((Decimal("2"), None, True, False), (2, None)),
    ((None, Decimal("2"), False, False), (None, 1)), ((None, Decimal("2"), False, True), (None, 2)),
    ((None, Decimal("2.5"), False, False), (None, 2)), ((None, Decimal("-2.5"), True, True), (None, -3)),
])
def test_decimal_bounds_on_an_integer_column_close_on_the_integers_inside(interval, want):
    from planner.cnf.valueset import Interval

    (iv,) = ValueSet.of(I, [Interval(*interval)]).intervals
    assert (iv.lo, iv.hi) == want and all(type(b) is int for b in (iv.lo, iv.hi) if b is not None)
    assert (iv.lo is None or iv.lo_closed) and (iv.hi is None or iv.hi_closed)


def test_at_one_lower_bound_the_closed_interval_starts_first_whatever_the_input_order():
    from planner.cnf.valueset import Interval

    five, seven, nine = Decimal(5), Decimal(7), Decimal(9)
    for ivs in ([Interval(five, nine), Interval(five, seven, True, True)],
                [Interval(five, seven, True, True), Interval(five, nine)]):
        vs = ValueSet.of(Kind.DECIMAL, ivs)
        assert vs.contains(five) and vs == ValueSet.of(Kind.DECIMAL, [Interval(five, nine, True, False)])


@pytest.mark.parametrize("a,b,shared", [
    ([1, 3, 5], [5], True), ([5], [1, 3, 5], True), ([1, 3, 5], [2, 4, 6], False), ([1, 3, 7], [0, 2, 4, 7], True),
    ([0, 2, 4, 7], [1, 3, 7], True),
])
def test_overlaps_sweeps_both_lists_to_their_ends(a, b, shared):
    x, y = ValueSet.points(I, a), ValueSet.points(I, b)
    assert x.overlaps(y) == shared == (not x.intersect(y).is_empty())


def _cmp(column: str, op: str, literal: str):
    from planner.cnf.preimage import comparison
    from planner.semantics.constants import from_sqlglot
    from planner.semantics.settings import Settings
    lit = from_sqlglot(sqlglot.parse_one("SELECT " + literal, read="spark").expressions[0])
    s = comparison(parse_type(column), op, lit, Settings(True))
    return str(s.true), str(s.false), s.exact


LONG_MIN_HALF, ONE_PLUS = "-9223372036854775807.5", "1.0000000000000000000000000000000000001"


@pytest.mark.parametrize("column,op,literal,true,false,exact", [
    # inside the BIGINT range Spark compares an integral column through the literal's ceiling or
    # floor (integralAndDecimalLiteral): far below a TINYINT or an INT, no value qualifies
    ("int", "<", LONG_MIN_HALF, "NONE", "NOT NULL", True),
    ("tinyint", "<=", LONG_MIN_HALF, "NONE", "NOT NULL", True),
    ("int", ">=", LONG_MIN_HALF, "NOT NULL", "NONE", True),
    ("int", ">", "9223372036854775806.5", "NONE", "NOT NULL", True),
    ("int", "<", ONE_PLUS, "(-inf, 1]", "[2, +inf)", True),  # exactly: 1 < 1.0…01 is TRUE
    # '=' is no such rule: compared widened, the literal rounds to 1 (1 = 1.0…01 is TRUE in Spark)
    ("int", "=", ONE_PLUS, "{1}", "NOT IN {1}", True),
    # 1.0…01BD may be that literal or a CAST, compared widened: both readings, marked inexact
    ("int", "<", ONE_PLUS + "BD", "(-inf, 1]", "[1, +inf)", False),
    ("int", ">=", ONE_PLUS + "BD", "[1, +inf)", "(-inf, 1]", False),
    ("int", "<=", "0.9999999999999999999999999999999999999BD", "(-inf, 1]", "[1, +inf)", False),
    ("int", "<", LONG_MIN_HALF + "BD", "NONE", "NOT NULL", True),  # both readings alike: exact
])
def test_an_integral_column_against_a_decimal_literal(column, op, literal, true, false, exact):
    assert _cmp(column, op, literal) == (true, false, exact)

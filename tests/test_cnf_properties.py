"""Property tests of the predicate pipeline against an independent three-valued evaluator.

Random predicate trees over an integer column ``i`` (a second integer column ``j`` serves the
column-pair atoms), a string column ``s`` and a date column ``d``. Literals come from small domains
so that equalities, touching bounds and NULLs happen often. The reference evaluator below works
on the *raw* tree (``Cmp`` atoms, as written) with SQL's three-valued logic; it shares no code with
the planner's value sets.

    (a) CNF(tree) is TRUE on a row iff the tree is; when weakened (or when a LIKE is only
        approximated), tree TRUE => CNF TRUE.
    (b) tree TRUE => every per-column value set of ``group_by_column`` contains the row's value.
    (c) CPS candidate conditions are disjoint, cover the domain and NULL, and every query set is
        exactly a union of conditions.
    (d) ValueSet union / intersect / complement / difference against a membership oracle, and
        normalisation: equal membership <=> equal values.
"""
from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sizes import examples

from planner.analysis.cps import _signatures, candidate_plan, elementary_pieces
from planner.cnf.bind import bind
from planner.cnf.ir import (
    And,
    Cmp,
    ColumnPair,
    Const,
    Not,
    Opaque,
    Or,
    Pred,
    and_,
    atoms,
    not_,
    or_,
)
from planner.cnf.normalize import cnf, group_by_column, nnf
from planner.cnf.valueset import Interval, ValueSet
from planner.semantics.kinds import Kind

KINDS = {"i": Kind.INTEGER, "j": Kind.INTEGER, "s": Kind.STRING, "d": Kind.DATE}
D0 = dt.date(2020, 1, 1)
INTS = list(range(0, 6))
STRS = ["", "a", "ab", "ac", "b", "ba", "c"]
DATES = [D0 + dt.timedelta(days=k) for k in range(6)]
DOMAIN = {"i": INTS, "j": INTS, "s": STRS, "d": DATES}
# Values a row may hold beyond the literal domain: outside the literal range on both sides.
ROW_VALUES = {"i": [-1, *INTS, 6], "j": [-1, *INTS, 6], "s": [*STRS, "abc", "bb", "z"],
              "d": [D0 - dt.timedelta(days=1), *DATES, D0 + dt.timedelta(days=9)]}
LIKE_PATTERNS = ["a%", "a", "ab%", "%b", "a_", "a%c", "_", "%", "b%a"]

PROFILE = settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ---- strategies ------------------------------------------------------------------------------

def literal(col: str):
    base = st.sampled_from(DOMAIN[col])
    if col in ("i", "j"):
        # A fraction on an integer column exercises discrete normalisation (i < 2.5 is i <= 2).
        base = st.one_of(base, st.sampled_from([Decimal("1.5"), Decimal("2.5"), Decimal("4.0")]))
    return base


def maybe_null(s, p_null=8):
    return st.one_of(*([s] * p_null), st.none())


@st.composite
def cmp_atom(draw, cols=("i", "s", "d")):
    col = draw(st.sampled_from(cols))
    ops = ["=", "<>", "<", "<=", ">", ">=", "in", "between", "isnull"] + (["like"] if col == "s" else [])
    op = draw(st.sampled_from(ops))
    negated = draw(st.booleans())
    if op == "isnull":
        return Cmp(col, op, (), negated)
    if op == "like":
        return Cmp(col, op, (draw(st.sampled_from(LIKE_PATTERNS)),), negated)
    if op == "in":
        vals = draw(st.lists(maybe_null(literal(col), 6), min_size=1, max_size=3))
        return Cmp(col, op, tuple(vals), negated)
    if op == "between":
        return Cmp(col, op, (draw(maybe_null(literal(col))), draw(maybe_null(literal(col)))), negated)
    # NOT on a plain comparison is spelled by Cmp.negate; keep the raw ``negated`` flag off.
    return Cmp(col, op, (draw(maybe_null(literal(col), 12)),))


def column_pair():
    return st.builds(ColumnPair, st.just("i"), st.sampled_from(["=", "<>", "<", "<=", ">", ">="]), st.just("j"))


def trees(cols=("i", "s", "d"), pairs=True):
    leaves = st.one_of(cmp_atom(cols), column_pair()) if pairs else cmp_atom(cols)
    return st.recursive(
        leaves,
        lambda kids: st.one_of(
            st.builds(lambda xs: and_(xs), st.lists(kids, min_size=2, max_size=4)),
            st.builds(lambda xs: or_(xs), st.lists(kids, min_size=2, max_size=4)),
            st.builds(not_, kids),
        ),
        max_leaves=12,
    )


def rows():
    return st.fixed_dictionaries({c: maybe_null(st.sampled_from(v), 5) for c, v in ROW_VALUES.items()})


# ---- the reference evaluator (SQL three-valued logic on raw atoms) ---------------------------

def t_not(a):
    return None if a is None else not a


def t_and(xs):
    xs = list(xs)
    if any(x is False for x in xs):
        return False
    return None if any(x is None for x in xs) else True


def t_or(xs):
    xs = list(xs)
    if any(x is True for x in xs):
        return True
    return None if any(x is None for x in xs) else False


def compare(a, op, b):
    if a is None or b is None:
        return None
    return {"=": a == b, "<>": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]


def like(value: str, pattern: str) -> bool:
    rx = "".join(".*" if ch == "%" else "." if ch == "_" else re.escape(ch) for ch in pattern)
    return re.fullmatch(rx, value, flags=re.S) is not None


def eval_raw(e, row):
    if isinstance(e, Const):
        return e.value
    if isinstance(e, And):
        return t_and(eval_raw(a, row) for a in e.args)
    if isinstance(e, Or):
        return t_or(eval_raw(a, row) for a in e.args)
    if isinstance(e, Not):
        return t_not(eval_raw(e.arg, row))
    if isinstance(e, ColumnPair):
        return compare(row[e.left], e.op, row[e.right])
    assert isinstance(e, Cmp), e
    v = row[e.column]
    if e.op == "isnull":
        out = v is None
    elif e.op == "in":
        # v IN (a, b) is v = a OR v = b.
        out = t_or(compare(v, "=", x) for x in e.values)
    elif e.op == "between":
        # v BETWEEN lo AND hi is v >= lo AND v <= hi: 1 BETWEEN 2 AND NULL is FALSE, not UNKNOWN.
        lo, hi = e.values
        out = t_and([compare(v, ">=", lo), compare(v, "<=", hi)])
    elif e.op == "like":
        out = None if v is None else like(v, e.values[0])
    else:
        out = compare(v, e.op, e.values[0])
    return t_not(out) if e.negated else out


def eval_bound_atom(a, row):
    if isinstance(a, Pred):
        v = row[a.column]
        if a.true.contains(v):
            return True
        if a.false.contains(v):
            return False
        return None
    if isinstance(a, ColumnPair):
        return compare(row[a.left], a.op, row[a.right])
    raise AssertionError(f"unexpected atom {a!r}")


def eval_cnf(form, row):
    return t_and(t_or(eval_bound_atom(a, row) for a in clause) for clause in form.clauses)


def approximated(bound) -> bool:
    return any(isinstance(a, Pred) and not a.exact for a in atoms(bound)) or any(
        isinstance(a, Opaque) for a in atoms(bound))


# ---- (a) and (b): CNF equivalence and per-column grouping ------------------------------------

@PROFILE
@given(tree=trees(), rs=st.lists(rows(), min_size=1, max_size=12), budget=st.sampled_from([2, 8, 256]))
def test_cnf_is_true_exactly_when_the_predicate_is(tree, rs, budget):
    bound = bind(tree, KINDS)
    form = cnf(nnf(bound), budget)
    exact = not form.weakened and not approximated(bound)
    for row in rs:
        want, got = eval_raw(tree, row), eval_cnf(form, row)
        if exact:
            assert (want is True) == (got is True), (str(tree), row, [[str(a) for a in c] for c in form.clauses])
        else:
            assert want is not True or got is True, (str(tree), row)


@PROFILE
@given(atom=st.one_of(cmp_atom(), column_pair()), negate=st.booleans())
def test_every_atom_binds_exactly(atom, negate):
    """One atom (or its negation) against every value its column can hold, NULL included."""
    tree = not_(atom) if negate else atom
    form = cnf(nnf(bind(tree, KINDS)))
    exact = not approximated(bind(tree, KINDS))
    cols = ("i", "j") if isinstance(atom, ColumnPair) else (atom.column,)
    base = {c: None for c in KINDS}
    for values in _combinations([[None, *ROW_VALUES[c]] for c in cols]):
        row = base | dict(zip(cols, values))
        want, got = eval_raw(tree, row), eval_cnf(form, row)
        if exact:
            assert (want is True) == (got is True), (str(tree), row, str(form))
        else:
            assert want is not True or got is True, (str(tree), row, str(form))


def _combinations(lists):
    if not lists:
        yield ()
        return
    for v in lists[0]:
        for rest in _combinations(lists[1:]):
            yield (v, *rest)


@PROFILE
@given(tree=trees(), rs=st.lists(rows(), min_size=1, max_size=12), budget=st.sampled_from([2, 256]))
def test_column_value_sets_keep_every_matching_row(tree, rs, budget):
    groups = group_by_column(cnf(nnf(bind(tree, KINDS)), budget))
    for row in rs:
        if eval_raw(tree, row) is True:
            assert not groups.unsatisfiable, (str(tree), row)
            for col, vs in groups.columns:
                assert vs.contains(row[col]), (str(tree), row, col, str(vs))


@PROFILE
@given(tree=trees(), rs=st.lists(rows(), min_size=1, max_size=12))
def test_nnf_is_exact(tree, rs):
    bound = bind(tree, KINDS)
    pushed = nnf(bound)
    assert not any(isinstance(n, Not) for n in _nodes(pushed))
    for row in rs:
        assert _eval_bound(pushed, row) == _eval_bound(bound, row) or approximated(bound)


def _nodes(e):
    yield e
    if isinstance(e, (And, Or)):
        for a in e.args:
            yield from _nodes(a)
    elif isinstance(e, Not):
        yield from _nodes(e.arg)


def _eval_bound(e, row):
    if isinstance(e, Const):
        return e.value
    if isinstance(e, And):
        return t_and(_eval_bound(a, row) for a in e.args)
    if isinstance(e, Or):
        return t_or(_eval_bound(a, row) for a in e.args)
    if isinstance(e, Not):
        return t_not(_eval_bound(e.arg, row))
    return eval_bound_atom(e, row)


# ---- (c) CPS candidate conditions ------------------------------------------------------------

@st.composite
def column_workload(draw):
    col = draw(st.sampled_from(["i", "s", "d"]))
    ts = draw(st.lists(trees(cols=(col,), pairs=False), min_size=1, max_size=6))
    sets = []
    for t in ts:
        groups = group_by_column(cnf(nnf(bind(t, KINDS))))
        if col in groups.column_sets:
            sets.append(groups.column_sets[col])
    return col, sets


@PROFILE
@given(work=column_workload())
def test_candidate_conditions_partition_the_domain(work):
    col, sets = work
    if not sets:
        return
    kind = KINDS[col]
    plan = candidate_plan("t", col, kind, sets, len(sets))
    conds = plan.conditions
    assert all(not c.is_empty() for c in conds)
    for a in range(len(conds)):
        for b in range(a + 1, len(conds)):
            assert not conds[a].overlaps(conds[b]), (str(conds[a]), str(conds[b]))
    union = ValueSet.nothing(kind)
    for c in conds:
        union = union.union(c)
    assert union.is_everything(), str(union)
    for v in [None, *ROW_VALUES[col], *(DOMAIN[col] if col != "i" else [Decimal("2.5")])]:
        if col == "i" and isinstance(v, Decimal):
            continue
        holders = [c for c in conds if c.contains(v)]
        assert len(holders) == 1, (v, [str(c) for c in conds])
        (cond,) = holders
        for s in sets:
            # Every query set is a union of conditions: it contains v iff it contains v's condition.
            assert s.contains(v) == cond.difference(s).is_empty(), (v, str(s), str(cond))


@PROFILE
@given(work=column_workload())
def test_signatures_are_the_membership_matrix(work):
    """``candidate_plan`` reads piece signatures without numpy; they must be ``elementary_pieces``'
    membership columns, bit for bit (the cost model uses the matrix)."""
    col, sets = work
    p = elementary_pieces(KINDS[col], sets)
    distinct, pieces, sig = _signatures(KINDS[col], sets)
    assert distinct == p.sets and tuple(pieces) == p.pieces
    assert sig == [sum(1 << s for s in range(len(distinct)) if p.member[s, i]) for i in range(len(pieces))]


# ---- (d) ValueSet algebra against a membership oracle ---------------------------------------

INT_PROBES = list(range(-3, 10))
DEC_PROBES = [Decimal(k) / 2 for k in range(-2, 14)]


@st.composite
def raw_intervals(draw, kind):
    bound = st.one_of(st.none(), st.integers(-1, 6)) if kind is Kind.INTEGER else st.one_of(
        st.none(), st.integers(0, 5).map(Decimal))
    if kind is Kind.INTEGER:
        bound = st.one_of(bound, st.sampled_from([Decimal("1.5"), Decimal("3.5")]))
    out = []
    for _ in range(draw(st.integers(0, 4))):
        lo, hi = draw(bound), draw(bound)
        out.append(Interval(lo, hi, draw(st.booleans()) and lo is not None, draw(st.booleans()) and hi is not None))
    return out, draw(st.booleans())


def oracle(raw, v):
    ivs, null = raw
    if v is None:
        return null
    return any(iv.contains(v) for iv in ivs)


def probes(kind):
    return [None, *(INT_PROBES if kind is Kind.INTEGER else DEC_PROBES)]


@PROFILE
@given(kind=st.sampled_from([Kind.INTEGER, Kind.DECIMAL]), data=st.data())
def test_valueset_algebra_matches_membership(kind, data):
    ra, rb = data.draw(raw_intervals(kind)), data.draw(raw_intervals(kind))
    a, b = ValueSet.of(kind, ra[0], ra[1]), ValueSet.of(kind, rb[0], rb[1])
    for v in probes(kind):
        ina, inb = oracle(ra, v), oracle(rb, v)
        assert a.contains(v) == ina, (v, str(a))
        assert a.union(b).contains(v) == (ina or inb)
        assert a.intersect(b).contains(v) == (ina and inb)
        assert a.complement().contains(v) == (not ina), (v, str(a), str(a.complement()))
        assert a.difference(b).contains(v) == (ina and not inb)
    assert a.overlaps(b) == any(oracle(ra, v) and oracle(rb, v) for v in probes(kind)) == \
        (not a.intersect(b).is_empty()), (str(a), str(b))
    assert a.complement().complement() == a
    assert a.union(b) == b.union(a) and a.intersect(b) == b.intersect(a)
    assert a.union(a.complement()).is_everything()
    assert a.intersect(a.complement()).is_empty()
    assert ValueSet.from_json(a.to_json()) == a


@PROFILE
@given(kind=st.sampled_from([Kind.INTEGER, Kind.DECIMAL]), data=st.data())
def test_valueset_normalisation_is_canonical(kind, data):
    """Equal membership <=> equal values, so sets can be hashed and deduplicated."""
    ra, rb = data.draw(raw_intervals(kind)), data.draw(raw_intervals(kind))
    a, b = ValueSet.of(kind, ra[0], ra[1]), ValueSet.of(kind, rb[0], rb[1])
    same = all(a.contains(v) == b.contains(v) for v in probes(kind))
    assert (a == b) == same, (str(a), str(b), a, b)
    if same:
        assert hash(a) == hash(b)
    for x, y in zip(a.intervals, a.intervals[1:]):
        assert x.hi is not None and y.lo is not None and (x.hi < y.lo or (x.hi == y.lo and not (
            x.hi_closed or y.lo_closed))), f"not merged: {a}"
    if kind is Kind.INTEGER:
        # Discrete domains close every finite bound: (1, 5) is [2, 4].
        assert all((iv.lo is None or iv.lo_closed) and (iv.hi is None or iv.hi_closed) for iv in a.intervals)
        assert all(not isinstance(x, Decimal) for x in a.bounds())


def test_worked_examples():
    # The valueset module's docstring example, on an integer column.
    between = ValueSet.range(Kind.INTEGER, 10, 20)
    not_15 = ValueSet.compare(Kind.INTEGER, "<>", 15)
    assert str(between.intersect(not_15)) == "[10, 14] ∪ [16, 20]"
    assert str(ValueSet.compare(Kind.DECIMAL, "<", Decimal(24))) == "(-inf, 24)"
    assert ValueSet.compare(Kind.INTEGER, ">", 5) == ValueSet.compare(Kind.INTEGER, ">=", 6)


def test_boolean_domain_has_two_values():
    """Derived column-pair attributes are booleans: {TRUE}, {FALSE} and NULL cover the domain.

    Expected to fail until booleans are treated as a closed domain (``_canonical`` skips
    Kind.BOOLEAN): today the complement of {TRUE} is the phantom ``(-inf, TRUE) ∪ (TRUE, +inf)``
    and CPS adds an empty condition ``NOT IN {FALSE, TRUE}``.
    """
    t, f = ValueSet.points(Kind.BOOLEAN, [True]), ValueSet.points(Kind.BOOLEAN, [False])
    assert t.union(f).union(ValueSet.only_null(Kind.BOOLEAN)).is_everything()
    assert t.complement() == f.union(ValueSet.only_null(Kind.BOOLEAN))
    plan = candidate_plan("t", "a < b", Kind.BOOLEAN, [t, f], 2)
    assert [str(c) for c in plan.conditions] == ["{FALSE}", "{TRUE}", "NULL"]

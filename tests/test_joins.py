"""Predicates induced through inner equi-joins (``planner.workload.joins``) and pruning by join ranges
(``planner.pruning.join_pruning``): pure, no Spark.

``tests/golden/joins_tpch.txt`` holds the induced predicates of the lineitem scans of the TPC-H
queries that filter lineitem through its joins. Regenerate with
``./dev golden`` (``python tests/update_golden.py``) and review the diff by hand.
"""
from __future__ import annotations

import datetime as dt
import random
from pathlib import Path

import sqlglot
from rewrite_entry import explain_query, rewrite_query

from devtools.workload_gen.tpch import golden_query
from planner.cnf.valueset import ValueSet
from planner.model.join_paths import Hop, JoinColumn, JoinPath
from planner.model.layout import Layout, Partition
from planner.pruning.join_pruning import JoinRange, JoinRanges
from planner.rewrite.query_rewrite import JoinContext
from planner.semantics.kinds import Kind
from planner.workload.joins import induced_scans
from planner.workload.scans import schema_from_ddl

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).resolve().parent / "golden" / "joins_tpch.txt"
SCHEMA = schema_from_ddl((ROOT / "sql" / "tpch_schema.sql").read_text())
QUERIES = ("q03", "q04", "q05", "q08", "q09", "q10", "q12", "q17", "q18", "q21")


def induced(sql: str, table: str = "lineitem", db: str | None = "tpch") -> dict[str, list[str]]:
    tree = sqlglot.parse_one(sql, read="hive")
    return {s.site.alias: [p.describe() for p in s.induced]
            for s in induced_scans(tree, SCHEMA, db, "hive", only=frozenset({table}))}


def tpch_golden() -> str:
    """The text of ``tests/golden/joins_tpch.txt``: the induced predicates of each lineitem scan."""
    lines = []
    for q in QUERIES:
        for alias, preds in induced(golden_query(q)).items():
            lines.append(f"-- {q} {alias}")
            lines += preds or ["(none)"]
    return "\n".join(lines) + "\n"


def test_tpch_golden():
    assert tpch_golden() == GOLDEN.read_text()


ORDERS = "tpch.orders(o_orderkey = l_orderkey)"


def test_inner_join_induces_on_both_sides():
    got = induced("SELECT * FROM lineitem l JOIN orders o ON l.l_orderkey = o.o_orderkey "
                  "WHERE o.o_orderdate >= DATE '1995-01-01'")
    assert got == {"l": [f"{ORDERS}: <foreign> AND o_orderdate >= DATE '1995-01-01'"]}


def test_left_join_induces_nothing_on_the_preserved_side():
    assert induced("SELECT * FROM lineitem l LEFT JOIN orders o ON l.l_orderkey = o.o_orderkey "
                   "WHERE o.o_orderdate >= DATE '1995-01-01'") == {"l": []}
    assert induced("SELECT * FROM lineitem l LEFT JOIN orders o ON l.l_orderkey = o.o_orderkey "
                   "AND o.o_orderdate >= DATE '1995-01-01'") == {"l": []}


def test_outer_join_induces_on_the_null_supplying_side():
    # lineitem rows appear only beside an orders row that passed the WHERE
    got = induced("SELECT * FROM orders o LEFT JOIN lineitem l ON l.l_orderkey = o.o_orderkey "
                  "WHERE o.o_orderdate >= DATE '1995-01-01'")
    assert len(got["l"]) == 1 and got["l"][0].startswith(ORDERS)
    got = induced("SELECT * FROM lineitem l RIGHT JOIN orders o ON l.l_orderkey = o.o_orderkey "
                  "WHERE o.o_orderdate >= DATE '1995-01-01'")
    assert len(got["l"]) == 1


def test_full_join_and_null_safe_equality_induce_nothing():
    assert induced("SELECT * FROM lineitem l FULL JOIN orders o ON l.l_orderkey = o.o_orderkey "
                   "WHERE o.o_orderdate >= DATE '1995-01-01'") == {"l": []}
    assert induced("SELECT * FROM lineitem l JOIN orders o ON l.l_orderkey <=> o.o_orderkey "
                   "WHERE o.o_orderdate >= DATE '1995-01-01'") == {"l": []}


def test_or_of_join_conditions_is_not_followed():
    assert induced("SELECT * FROM lineitem l JOIN orders o ON l.l_orderkey = o.o_orderkey OR l.l_partkey = 1 "
                   "WHERE o.o_orderdate >= DATE '1995-01-01'") == {"l": []}


def test_filter_under_or_with_the_other_table_is_not_a_filter_of_it():
    got = induced("SELECT * FROM lineitem l JOIN orders o ON l.l_orderkey = o.o_orderkey "
                  "WHERE o.o_orderdate >= DATE '1995-01-01' OR l.l_quantity < 5")
    # the OR names lineitem: for orders it is no filter (the atom on lineitem is foreign)
    assert got["l"] == [] or all("<foreign>" in p for p in got["l"])


def test_chain_and_derived_tables():
    got = induced("SELECT * FROM lineitem l, orders o, customer c, nation n WHERE l.l_orderkey = o.o_orderkey "
                  "AND o.o_custkey = c.c_custkey AND c.c_nationkey = n.n_nationkey AND n.n_name = 'FRANCE'")
    assert got["l"] == [f"{ORDERS}/tpch.customer(c_custkey = o_custkey)/tpch.nation(n_nationkey = c_nationkey)"
                        ": <foreign> AND <foreign> AND n_name = 'FRANCE'"]
    # a derived table is not looked into
    assert induced("SELECT * FROM lineitem l JOIN (SELECT * FROM orders WHERE o_orderdate > DATE '1995-01-01') o "
                   "ON l.l_orderkey = o.o_orderkey") == {"l": []}


def test_correlated_subquery_in_where():
    got = induced("SELECT count(*) FROM orders o WHERE o.o_orderdate >= DATE '1995-01-01' AND NOT EXISTS "
                  "(SELECT 1 FROM lineitem l WHERE l.l_orderkey = o.o_orderkey)")
    assert len(got["l"]) == 1 and got["l"][0].startswith(ORDERS)
    # a subquery in the SELECT list sees every outer row that passed WHERE: still sound, but we only
    # follow subqueries inside WHERE
    assert induced("SELECT (SELECT max(l_quantity) FROM lineitem l WHERE l.l_orderkey = o.o_orderkey) "
                   "FROM orders o WHERE o.o_orderdate >= DATE '1995-01-01'") == {"l": []}


# ---- pruning by recorded ranges -------------------------------------------------------------------
DATE = Kind.DATE
COL = JoinColumn(JoinPath((Hop("l_orderkey", "tpch.orders", "o_orderkey"),)), "o_orderdate")


def _layout(n: int) -> Layout:
    return Layout("tpch.lineitem", "test", tuple(Partition(i) for i in range(1, n + 1)))


def _ranges(sets: dict[int, ValueSet], snap: str = "s1") -> JoinRanges:
    return JoinRanges("tpch.lineitem", None, (("tpch.lineitem", "l1"), ("tpch.orders", snap)),
                      (JoinRange(COL, "date", tuple(sorted(sets.items()))),))


YEARS = {i: ValueSet.range(DATE, dt.date(1991 + i, 1, 1), dt.date(1991 + i, 12, 31)) for i in range(1, 8)}
Q = ("SELECT sum(l_quantity) FROM tpch.lineitem l JOIN tpch.orders o ON l.l_orderkey = o.o_orderkey "
     "WHERE o.o_orderdate >= DATE '1995-03-01' AND o.o_orderdate < DATE '1995-06-01'")
COLS = {"tpch.lineitem": {"l_orderkey": "bigint", "l_quantity": "decimal(15,2)"},
        "tpch.orders": {"o_orderkey": "bigint", "o_orderdate": "date"}}


def test_rewrite_prunes_through_the_join():
    ctx = JoinContext({"tpch.lineitem": _ranges(YEARS)}, {"tpch.lineitem": "l1", "tpch.orders": "s1"})
    sql, notes = rewrite_query(Q, {"tpch.lineitem": _layout(7)}, schema=COLS, joins=ctx)
    assert notes[0].partitions_read == (0, 4)
    assert "planner_pid" in sql
    sqlglot.parse_one(sql, read="hive")
    (ex,) = explain_query(Q, {"tpch.lineitem": _layout(7)}, schema=COLS, joins=ctx)
    assert any("o_orderdate" in u for u in ex.predicates_used)


def test_changed_snapshot_prunes_nothing_and_says_why():
    for now in ({"tpch.lineitem": "l1", "tpch.orders": "s2"}, {"tpch.lineitem": "l2", "tpch.orders": "s1"},
                {"tpch.lineitem": "l1"}):
        ctx = JoinContext({"tpch.lineitem": _ranges(YEARS)}, now)
        (ex,) = explain_query(Q, {"tpch.lineitem": _layout(7)}, schema=COLS, joins=ctx)
        assert ex.partitions_read == tuple(range(8))
        assert any("changed since the join ranges were recorded" in why or "cannot check that tpch.orders" in why
                   for _, why in ex.predicates_not_used)


def test_nulls_and_unrecorded_partitions_are_kept():
    sets = dict(YEARS)
    sets[1] = ValueSet.only_null(DATE)  # a partition whose orders all have a NULL date
    del sets[7]  # a partition without a record (e.g. appended later): always read
    ctx = JoinContext({"tpch.lineitem": _ranges(sets)}, {"tpch.lineitem": "l1", "tpch.orders": "s1"})
    q = Q.replace("o.o_orderdate >= DATE '1995-03-01' AND o.o_orderdate < DATE '1995-06-01'",
                  "o.o_orderdate IS NULL")
    (ex,) = explain_query(q, {"tpch.lineitem": _layout(7)}, schema=COLS, joins=ctx)
    assert ex.partitions_read == (0, 1, 7)
    (ex,) = explain_query(Q, {"tpch.lineitem": _layout(7)}, schema=COLS, joins=ctx)
    assert ex.partitions_read == (0, 4, 7)


def test_ranges_round_trip_through_properties():
    r = _ranges(YEARS)
    assert JoinRanges.from_properties(r.properties()) == r
    props = r.properties()
    assert set(props["planner.joinranges.0"]) <= set("0123456789abcdef")  # no word Spark redacts ("url", …)
    props["planner.joinranges.0"] = "*********(redacted)"
    assert JoinRanges.from_properties(props) is None  # damaged: nothing prunes


def test_soundness_against_a_brute_force_join():
    """Random lineitem/orders rows, ranges computed the way apply does: a partition holding a row that
    joins an order passing the filter is never skipped (NULL keys and NULL dates included)."""
    rng = random.Random(7)
    for _ in range(60):
        days = [None] + [dt.date(1995, 1, 1) + dt.timedelta(d) for d in range(0, 40, 3)]
        orders = {k: rng.choice(days) for k in range(20)}
        lines = [(rng.choice([None] + list(range(25))), rng.randint(1, 5)) for _ in range(40)]  # (orderkey, pid)
        per: dict[int, list] = {}
        for key, pid in lines:
            if key is not None and key in orders:
                per.setdefault(pid, []).append(orders[key])
        sets = {}
        for pid, vals in per.items():
            real = [v for v in vals if v is not None]
            vs = ValueSet.range(DATE, min(real), max(real)) if real else ValueSet.nothing(DATE)
            sets[pid] = vs.union(ValueSet.only_null(DATE)) if None in vals else vs
        for p in range(1, 6):
            sets.setdefault(p, ValueSet.nothing(DATE))  # rows that join nothing reach nothing
        lo = rng.choice(days[1:])
        hi = lo + dt.timedelta(rng.randint(0, 10))
        cond = rng.choice([f"o.o_orderdate BETWEEN DATE '{lo}' AND DATE '{hi}'", "o.o_orderdate IS NULL",
                           f"NOT (o.o_orderdate < DATE '{lo}') OR o.o_orderdate IS NULL"])
        q = Q.split(" WHERE ")[0] + " WHERE " + cond
        ctx = JoinContext({"tpch.lineitem": _ranges(sets)}, {"tpch.lineitem": "l1", "tpch.orders": "s1"})
        (ex,) = explain_query(q, {"tpch.lineitem": _layout(5)}, schema=COLS, joins=ctx)

        def passes(v):
            if cond.endswith("IS NULL"):
                return v is None
            if cond.startswith("NOT"):
                return v is None or v >= lo
            return v is not None and lo <= v <= hi
        needed = {pid for key, pid in lines if key is not None and key in orders and passes(orders[key])}
        assert needed <= set(ex.partitions_read), (cond, sets, needed, ex.partitions_read)

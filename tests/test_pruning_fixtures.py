"""Which partitions a query reads, pinned case by case (``tests/fixtures/pruning.sql``).

The property tests (``tests/test_rewrite.py``) say that no matching row is lost; these say exactly
what is read, so a change that reads less (a lost row) or more (lost pruning) fails in seconds,
without Spark. Every pinned expectation is also checked against a grid of rows built from the
literals the cases use (boundaries, one step either side, NULLs): each row a case's predicate
accepts must sit in a partition the case reads, so a wrong pin cannot hide a lost row.
"""
from __future__ import annotations

import datetime as dt
import itertools
import random
from decimal import Decimal
from pathlib import Path

import pytest
import sqlglot
from rewrite_entry import explain_query, rewrite_query
from sqlglot import exp
from test_emit import (
    evaluate,  # tests/ is on sys.path (pytest's rootdir-relative import)
)
from test_rewrite import WEIRD, grid_layout
from test_rewrite import layout as pairs_layout

from planner.cnf.valueset import Interval, ValueSet
from planner.emit.conditions import region_contains
from planner.model.join_paths import Hop, JoinColumn, JoinPath
from planner.model.layout import CATCH_ALL
from planner.pruning.join_pruning import JoinRange, JoinRanges
from planner.rewrite.query_rewrite import JoinContext
from planner.semantics.kinds import Kind

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "pruning.sql"
D = dt.date
PAIRS_COLUMNS = {"id": "bigint", "d": "date", "amt": "decimal(15,2)", "s": "string", "a": "date", "b": "date"}
GRID_COLUMNS = {"id": "bigint", "amt": "decimal(15,2)", "s": "string"}
SCHEMA = {"db.t": PAIRS_COLUMNS, "db.g": GRID_COLUMNS, "db.o": {"oid": "bigint", "odate": "date"}}
ODATE = JoinColumn(JoinPath((Hop("id", "db.o", "oid"),)), "odate")


def _dates(lo, hi, null=False):
    return ValueSet.of(Kind.DATE, [Interval(lo, hi, True, True)], null)


JOIN_RANGES = JoinRanges("db.t", None, (("db.o", "o-1"), ("db.t", "t-1")), (JoinRange(ODATE, "date", (
    (1, _dates(D(1994, 1, 1), D(1994, 12, 31))),
    (2, _dates(D(1995, 1, 1), D(1995, 6, 30))),
    (3, ValueSet.of(Kind.DATE, [Interval(D(1996, 1, 1), D(1996, 1, 1), True, True)], True)),
    (4, ValueSet.nothing(Kind.DATE)),
)),))
JOINS = JoinContext({"db.t": JOIN_RANGES}, {"db.o": "o-1", "db.t": "t-1"})

LAYOUTS = {"pairs": ({"db.t": pairs_layout()}, None), "constants": ({"db.t": pairs_layout()}, None),
           "grid": ({"db.g": grid_layout()}, None),
           "joined": ({"db.t": pairs_layout()}, JOINS)}


def cases() -> list[tuple[str, str, tuple[int, ...]]]:
    """``[(layout, query, partitions read)]`` from the fixture file."""
    out, layout, pending = [], None, None
    for n, line in enumerate(FIXTURES.read_text().splitlines(), 1):
        if line.startswith("# layout:"):
            layout = line.split(":", 1)[1].strip()
        elif not line.strip() or line.startswith("#"):
            continue
        elif pending is None:
            pending = line
        else:
            if not line.startswith("reads "):
                raise ValueError(f"{FIXTURES.name}:{n}: expected 'reads <ids>' after the query, got {line!r}")
            out.append((layout, pending, tuple(int(x) for x in line.split()[1:])))
            pending = None
    if pending is not None:
        raise ValueError(f"{FIXTURES.name}: the last query has no 'reads' line")
    return out


CASES = cases()


def partitions_read(layout: str, sql: str) -> tuple[int, ...]:
    layouts, joins = LAYOUTS[layout]
    (e,) = [e for e in explain_query(sql, layouts, dialect="spark", schema=SCHEMA, joins=joins)
            if e.table in layouts]
    return e.partitions_read


@pytest.mark.parametrize("layout,sql,want", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_partitions_read(layout, sql, want):
    assert partitions_read(layout, sql) == want


@pytest.mark.parametrize("layout,sql,want", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_the_rewritten_query_reads_the_same_partitions(layout, sql, want):
    layouts, joins = LAYOUTS[layout]
    new, notes = rewrite_query(sql, layouts, dialect="spark", schema=SCHEMA, joins=joins)
    (note,) = [n for n in notes if n.table in layouts]
    assert note.partitions_read == want
    if note.rewritten and len(want) < note.partitions_total:
        assert f"`planner_pid` IN ({', '.join(map(str, want))})" in new


def test_the_fixture_file_covers_every_shape():
    text = FIXTURES.read_text()
    assert len(CASES) >= 60 and {c[0] for c in CASES} == set(LAYOUTS)
    for needle in (" IS NULL", " NOT IN ", " IN (", " BETWEEN ", "a < b", "a >= b", ") OR (", " JOIN "):
        assert needle in text, needle


# ---- the pins are safe: no row a case accepts lies in a partition it skips -------------------------
def _literals(tree: exp.Expression) -> dict[str, list]:
    """Per column, the values a grid row may take: each literal compared with it, one step either side."""
    values: dict[str, set] = {}
    for lit in tree.find_all(exp.Literal):
        node = lit.parent if isinstance(lit.parent, exp.Cast) else lit
        col = next((c.name for c in node.parent.find_all(exp.Column)), None) if node.parent else None
        if col is None:
            continue
        v = _py(node)
        step = dt.timedelta(days=1) if isinstance(v, dt.date) else (Decimal("0.01") if isinstance(v, Decimal) else 1)
        values.setdefault(col, set()).update([v] if isinstance(v, str) else [v, v - step, v + step])
    return {c: sorted(vs) for c, vs in values.items()}


def _py(node: exp.Expression):
    if isinstance(node, exp.Cast):
        return D.fromisoformat(node.this.this)
    if node.is_string:
        return node.this
    return Decimal(node.this) if "." in node.this else int(node.this)


BASE = {"id": [None, 3, 9, 10, 12], "amt": [None, Decimal("5"), Decimal("19.99"), Decimal(20), Decimal(60)],
        "s": [None, "AIR", "MAIL", "SHIP", WEIRD[0], ""],
        "d": [None, D(1994, 12, 31), D(1995, 1, 1)], "a": [None, D(1995, 1, 1), D(1995, 1, 2)],
        "b": [None, D(1995, 1, 1), D(1995, 1, 2)], "odate": [None]}


def _rows(columns, tree, n=1500):
    """Grid rows over ``columns``: every combination when there are few, else a fixed random sample."""
    found = _literals(tree)
    axes = [sorted(set(BASE.get(c, [None])) | set(found.get(c, [])), key=lambda v: (v is not None, v)) for c in columns]
    total = 1
    for a in axes:
        total *= len(a)
    if total <= n:
        return [dict(zip(columns, combo)) for combo in itertools.product(*axes)]
    rng = random.Random(33)
    return [dict(zip(columns, (rng.choice(a) for a in axes))) for _ in range(n)]


def _typed(tree: exp.Expression) -> exp.Expression:
    # the emit tests' evaluator reads DATE 'x' as CAST('x' AS DATE); BETWEEN as two comparisons
    tree = tree.transform(lambda n: exp.and_(exp.GTE(this=n.this.copy(), expression=n.args["low"].copy()),
                                             exp.LTE(this=n.this.copy(), expression=n.args["high"].copy()))
                          if isinstance(n, exp.Between) else n)
    return tree


GRID_CHECKED = ("pairs", "grid")  # "joined" needs the joined rows, "constants" Spark's folding


@pytest.mark.parametrize("layout,sql,want", [c for c in CASES if c[0] in GRID_CHECKED],
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES) if c[0] in GRID_CHECKED])
def test_no_accepted_row_lies_in_a_skipped_partition(layout, sql, want):
    (lay,) = LAYOUTS[layout][0].values()
    where = _typed(sqlglot.parse_one(sql, read="spark").args["where"].this)
    columns = list(SCHEMA[lay.table])
    for row in _rows(columns, where):
        if evaluate(where, row) is True:
            part = next((p.id for p in lay.partitions if region_contains(p.region, row, lay.derived)), CATCH_ALL)
            assert part in want, (row, part)


def test_a_lost_row_of_a_column_pair_is_seen_by_the_grid():
    # The grid itself has teeth: the mutant read (0, 2, 3) for this query, and the grid
    # finds a matching row in partition 1.
    lay = pairs_layout()
    where = _typed(sqlglot.parse_one("SELECT * FROM db.t WHERE (a < b) OR (d >= DATE '1995-01-01')",
                                     read="spark").args["where"].this)
    lost = {next((p.id for p in lay.partitions if region_contains(p.region, r, lay.derived)), CATCH_ALL)
            for r in _rows(list(PAIRS_COLUMNS), where) if evaluate(where, r) is True} - {0, 2, 3}
    assert lost >= {1, 4, 5}

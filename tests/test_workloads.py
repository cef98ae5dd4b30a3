"""Tests of the bundled workload generators and the checked-in sql/ files."""

from __future__ import annotations

import collections
import datetime as dt
import re
from pathlib import Path

import pytest
import sqlglot
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlglot import exp

from devtools.workload_gen import (
    ADHOC_COLUMNS,
    ALL_TEMPLATES,
    DEFAULT_TEMPLATES,
    adhoc_workload,
    generate,
    golden_query,
    q6_variants,
    tpch_workload,
    workload_file_text,
)
from devtools.workload_gen.__main__ import main as cli_main
from devtools.workload_gen.adhoc import adhoc_query_specs
from devtools.workload_gen.q6_variants import (
    DIMENSIONS,
    PAPER_QUERY_DIMENSIONS,
    SELECTIVITIES,
    lineitem_domain,
    q6_variant_specs,
)
from devtools.workload_gen.tpch import (
    NATIONS,
    SEGMENTS,
    SHIPMODES,
    TEMPLATES,
    normalize_template_name,
)

ROOT = Path(__file__).resolve().parents[1]
SQL = ROOT / "sql"

REQUIRED_TPCH = (
    "q01", "q03", "q04", "q05", "q06", "q07", "q08", "q10", "q12", "q14", "q15", "q17", "q19", "q20", "q21",
)  # fmt: skip
LINEITEM_QUERIES = (*REQUIRED_TPCH, "q09", "q18")

CHECKED_IN = [
    ("tpch_workload.sql", "tpch", 200, 1),
    ("q6_variants.sql", "q6", 100, 2),
    ("adhoc_workload.sql", "adhoc", 100, 3),
]


def parse(sql: str) -> exp.Expression:
    tree = sqlglot.parse_one(sql, read="hive")
    assert tree is not None
    return tree


def tables(tree: exp.Expression) -> set[str]:
    return {t.name for t in tree.find_all(exp.Table)}


def day(s: str) -> dt.date:
    return dt.date.fromisoformat(s)


# --------------------------------------------------------------------------
# golden TPC-H files
# --------------------------------------------------------------------------


def test_every_lineitem_query_has_a_template():
    assert set(ALL_TEMPLATES) == set(LINEITEM_QUERIES)
    assert set(REQUIRED_TPCH) <= set(DEFAULT_TEMPLATES)


def test_golden_files_are_exactly_the_templates():
    files = sorted(p.name for p in (SQL / "tpch").glob("*.sql"))
    assert files == sorted(f"{q}.sql" for q in LINEITEM_QUERIES)
    for name in LINEITEM_QUERIES:
        text = (SQL / "tpch" / f"{name}.sql").read_text(encoding="utf-8")
        assert text == golden_query(name), f"sql/tpch/{name}.sql drifted: python -m devtools.workload_gen golden"


@pytest.mark.parametrize("name", LINEITEM_QUERIES)
def test_golden_file_parses_and_reads_lineitem(name):
    text = (SQL / "tpch" / f"{name}.sql").read_text(encoding="utf-8")
    assert text.startswith(f"-- tpch {name}\n")
    code = re.sub(r"'[^']*'", "''", "\n".join(ln for ln in text.splitlines() if not ln.startswith("--")))
    assert code == code.lower()  # lowercase SQL; only string literals carry uppercase
    tree = parse(text)
    assert "lineitem" in tables(tree)
    tpch_tables = {"lineitem", "orders", "customer", "part", "partsupp", "supplier", "nation", "region"}
    assert tables(tree) <= tpch_tables | {"revenue0"}


def test_golden_structure():
    q = {name: parse(golden_query(name)) for name in LINEITEM_QUERIES}
    assert q["q15"].find(exp.With)  # the view revenue0 as a WITH clause
    assert q["q04"].find(exp.Exists)
    assert len(list(q["q21"].find_all(exp.Exists))) == 2 and q["q21"].find(exp.Not)
    assert "l3.l_receiptdate > l3.l_commitdate" in golden_query("q21")
    assert q["q18"].find(exp.In) and q["q20"].find(exp.In)
    assert isinstance(q["q19"].args["where"].this, exp.Or)
    # validation parameters
    assert "interval '90' day" in golden_query("q01")
    assert "between 0.05 and 0.07" in golden_query("q06") and "l_quantity < 24" in golden_query("q06")
    assert "'MAIL', 'SHIP'" in golden_query("q12")
    assert "n_name = 'SAUDI ARABIA'" in golden_query("q21")
    assert "> 300" in golden_query("q18")


# --------------------------------------------------------------------------
# checked-in workload files
# --------------------------------------------------------------------------


@pytest.mark.parametrize("fname,kind,n,seed", CHECKED_IN)
def test_checked_in_workload_matches_generator(fname, kind, n, seed):
    text = (SQL / fname).read_text(encoding="utf-8")
    assert text == workload_file_text(kind, n, seed), (
        f"sql/{fname} drifted: python -m devtools.workload_gen {kind} -n {n} --seed {seed} -o sql/{fname}"
    )
    assert f"n={n}, seed={seed}" in text.splitlines()[0]
    stmts = [s for s in sqlglot.parse(text, read="hive") if s is not None]
    assert len(stmts) == n
    assert len(text.rstrip().split(";\n\n")) == n


def test_readme_mentions_every_file():
    readme = (SQL / "README.md").read_text(encoding="utf-8")
    for fname, kind, n, seed in CHECKED_IN:
        assert fname in readme
        assert f"python -m devtools.workload_gen {kind} -n {n} --seed {seed} -o sql/{fname}" in readme


# --------------------------------------------------------------------------
# determinism and parsing
# --------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["tpch", "q6", "adhoc"])
def test_deterministic_for_a_seed(kind):
    assert generate(kind, 60, 5) == generate(kind, 60, 5)
    assert generate(kind, 60, 5) != generate(kind, 60, 6)
    assert len(generate(kind, 60, 5)) == 60
    assert generate(kind, 0, 5) == []


def test_every_generated_query_parses():
    queries = tpch_workload(2 * len(ALL_TEMPLATES), 11) + q6_variants(100, 12) + adhoc_workload(100, 13)
    for sql in queries:
        tree = parse(sql)
        assert "lineitem" in tables(tree)


def test_tpch_round_robin_and_comment_line():
    queries = tpch_workload(3 * len(ALL_TEMPLATES) + 2, 4)
    names = [re.match(r"-- tpch (q\d\d)\n", q).group(1) for q in queries]
    assert names[: len(ALL_TEMPLATES)] == list(ALL_TEMPLATES)
    counts = collections.Counter(names)
    assert set(counts.values()) == {3, 4}


def test_tpch_weights_and_template_names():
    queries = tpch_workload(50, 3, templates=["Q6", 1, "q14"], weights={"q6": 1, "q1": 0, "q14": 3})
    names = collections.Counter(q.splitlines()[0] for q in queries)
    assert set(names) == {"-- tpch q06", "-- tpch q14"}
    assert normalize_template_name(" Q1 ") == "q01"
    with pytest.raises(ValueError):
        normalize_template_name("q2")  # does not read lineitem
    with pytest.raises(ValueError):
        tpch_workload(5, 1, templates=[])
    with pytest.raises(ValueError):
        tpch_workload(5, 1, templates=["q1"], weights=[1, 2])


# --------------------------------------------------------------------------
# TPC-H substitution parameters within the spec's qgen ranges (spec 2.4)
# --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sampled():
    """About 100 instances of each spot-checked template."""
    names = ("q01", "q03", "q04", "q05", "q06", "q07", "q10", "q12", "q14", "q15", "q17", "q18", "q19", "q20")
    out = collections.defaultdict(list)
    for q in tpch_workload(100 * len(names), 2024, templates=names):
        out[q.splitlines()[0].split()[-1]].append(q)
    return out


def test_q01_delta(sampled):
    deltas = [int(re.search(r"interval '(\d+)' day", q).group(1)) for q in sampled["q01"]]
    assert min(deltas) >= 60 and max(deltas) <= 120 and len(set(deltas)) > 30


def test_q03_segment_and_day(sampled):
    for q in sampled["q03"]:
        seg = re.search(r"c_mktsegment = '([A-Z]+)'", q).group(1)
        assert seg in SEGMENTS
        (d1,) = set(re.findall(r"date '([\d-]+)'", q))
        assert dt.date(1995, 3, 1) <= day(d1) <= dt.date(1995, 3, 31)


@pytest.mark.parametrize(
    "name,first,last",
    [
        ("q04", (1993, 1), (1997, 10)),
        ("q10", (1993, 2), (1995, 1)),
        ("q14", (1993, 1), (1997, 12)),
        ("q15", (1993, 1), (1997, 10)),
    ],
)
def test_month_start_parameters(sampled, name, first, last):
    seen = set()
    for q in sampled[name]:
        d = day(re.search(r"(\d{4}-\d\d-\d\d)", q).group(1))
        assert d.day == 1 and first <= (d.year, d.month) <= last
        seen.add(d)
    assert len(seen) > 10


def test_q06_parameters_via_ast(sampled):
    for q in sampled["q06"]:
        where = parse(q).args["where"]
        (between,) = list(where.find_all(exp.Between))
        lo, hi = float(between.args["low"].name), float(between.args["high"].name)
        assert hi - lo == pytest.approx(0.02)
        assert 0.02 <= round((lo + hi) / 2, 2) <= 0.09
        (lt_qty,) = [c for c in where.find_all(exp.LT) if c.this.name == "l_quantity"]
        assert int(lt_qty.expression.name) in (24, 25)
        dates = re.findall(r"l_shipdate [<>]=? '([\d-]+)'", q)
        start, end = day(dates[0]), day(dates[1])
        assert (start.month, start.day) == (1, 1) and 1993 <= start.year <= 1997
        assert end == start.replace(year=start.year + 1)


def test_q05_q07_q20_nations_regions(sampled):
    for q in sampled["q05"]:
        region = re.search(r"r_name = '([A-Z ]+)'", q).group(1)
        assert region in set(NATIONS.values())
        d = re.search(r"o_orderdate >= '([\d-]+)'", q).group(1)
        assert d.endswith("-01-01") and 1993 <= int(d[:4]) <= 1997
    for q in sampled["q07"]:
        n1, n2 = re.search(r"n1.n_name = '([A-Z ]+)' and n2.n_name = '([A-Z ]+)'", q).groups()
        assert n1 != n2 and {n1, n2} <= set(NATIONS)
    for q in sampled["q20"]:
        assert re.search(r"n_name = '([A-Z ]+)'", q).group(1) in NATIONS


def test_q12_shipmodes_and_date(sampled):
    for q in sampled["q12"]:
        m1, m2 = re.search(r"l_shipmode in \('([A-Z ]+)', '([A-Z ]+)'\)", q).groups()
        assert m1 != m2 and {m1, m2} <= set(SHIPMODES)
        d = re.search(r"l_receiptdate >= date '([\d-]+)'", q).group(1)
        assert d.endswith("-01-01") and 1993 <= int(d[:4]) <= 1997


def test_q17_q18_q19_parameters(sampled):
    for q in sampled["q17"] + sampled["q19"]:
        for brand in re.findall(r"p_brand = 'Brand#(\d\d)'", q):
            assert all(c in "12345" for c in brand)
    for q in sampled["q18"]:
        assert 312 <= int(re.search(r"sum\(l_quantity\) > (\d+)", q).group(1)) <= 315
    for q in sampled["q19"]:
        pairs = [tuple(map(int, m)) for m in re.findall(r"l_quantity >= (\d+) and l_quantity <= (\d+)", q)]
        assert len(pairs) == 3 and all(hi == lo + 10 for lo, hi in pairs)
        (a, _), (b, _), (c, _) = pairs
        assert 1 <= a <= 10 and 10 <= b <= 20 and 20 <= c <= 30


# --------------------------------------------------------------------------
# value distributions
# --------------------------------------------------------------------------


def test_date_domains_span_the_tpch_ranges():
    ship = lineitem_domain("l_shipdate")
    assert ship.literal(ship.first) == "date '1992-01-02'" and ship.literal(ship.last) == "date '1998-12-01'"
    assert ship.total == 2406 * 121
    rec = lineitem_domain("l_receiptdate")
    assert rec.literal(rec.last) == "date '1998-12-31'"
    com = lineitem_domain("l_commitdate")
    assert com.literal(com.first) == "date '1992-01-31'"
    # flat in the middle, ramps at the ends
    assert ship.weights[1000] == 121 and ship.weights[0] == 1 and ship.weights[-1] == 1


def test_extendedprice_distribution():
    e = lineitem_domain("l_extendedprice")
    assert e.literal(e.lo) == "901.00" and e.literal(e.hi) == "104949.50"
    assert e.cdf(e.lo - 1) == 0 and e.cdf(e.hi) == 1
    median = e.quantile(0.5) / 100
    assert 30_000 < median < 45_000  # right-skewed: median well below the midpoint 52,925


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    column=st.sampled_from(
        ["l_shipdate", "l_commitdate", "l_receiptdate", "l_extendedprice", "l_orderkey", "l_partkey"]
    ),
    sel=st.floats(0.01, 0.5),
)
def test_ranges_hit_the_target_selectivity(seed, column, sel):
    import random

    pred = lineitem_domain(column).range(sel, random.Random(seed))
    assert pred.selectivity == pytest.approx(sel, abs=0.003)
    parse(f"select 1 from lineitem where {pred.sql}")


# --------------------------------------------------------------------------
# Q6 variants
# --------------------------------------------------------------------------


def test_q6_variants_cover_dimension_sets_and_levels():
    specs = q6_variant_specs(2 * len(PAPER_QUERY_DIMENSIONS) * len(SELECTIVITIES), 9)
    counts = collections.Counter((s.dimensions, s.level) for s in specs)
    assert set(counts.values()) == {2}
    assert len(counts) == len(PAPER_QUERY_DIMENSIONS) * len(SELECTIVITIES)


def test_q6_variant_predicates_and_selectivities():
    discrete_ok = {"l_discount": {1 / 11, 2 / 11, 3 / 11}, "l_quantity": None}
    for s in q6_variant_specs(200, 10):
        assert s.sql.startswith(f"-- q6 variant q-{s.dimensions}")
        assert "select\n    sum(l_extendedprice * l_discount) as revenue\nfrom\n    lineitem\nwhere" in s.sql
        assert [p.column for p in s.predicates] == [DIMENSIONS[k] for k in s.dimensions]
        where = parse(s.sql).args["where"]
        assert {c.name for c in where.find_all(exp.Column)} == {DIMENSIONS[k] for k in s.dimensions}
        for p in s.predicates:
            if s.level == "point":
                assert p.kind == "point" and " = " in p.sql and p.selectivity < 0.1
            elif p.column == "l_discount":
                assert min(abs(p.selectivity - x) for x in discrete_ok["l_discount"]) < 1e-12
                assert abs(p.selectivity - s.level) <= 0.5 / 11 + 1e-9
            elif p.column == "l_quantity":
                assert abs(p.selectivity - s.level) <= 0.01 + 1e-9
            else:
                assert p.selectivity == pytest.approx(s.level, abs=0.002)
        for lit in re.findall(r"date '([\d-]+)'", s.sql):
            assert dt.date(1992, 1, 2) <= day(lit) <= dt.date(1998, 12, 2)
        for lit in re.findall(r"l_discount (?:=|between) (\d\.\d\d)(?: and (\d\.\d\d))?", s.sql):
            assert all(0 <= float(x) <= 0.10 for x in lit if x)


def test_q6_scale_factor_moves_orderkeys():
    for sf, top in ((1, 6_000_000), (10, 60_000_000), (0.01, 60_000)):
        for s in q6_variant_specs(50, 1, scale_factor=sf, dimension_sets=["o"]):
            for key in map(int, re.findall(r"l_orderkey (?:=|>=|<) (\d+)", s.sql)):
                assert 1 <= key <= top + 1


def test_q6_rejects_bad_dimensions():
    with pytest.raises(ValueError):
        q6_variants(5, 1, dimension_sets=["qdse"])
    with pytest.raises(ValueError):
        q6_variants(5, 1, dimension_sets=["x"])


# --------------------------------------------------------------------------
# ad-hoc workload
# --------------------------------------------------------------------------


def test_adhoc_one_range_predicate_at_ten_percent():
    specs = adhoc_query_specs(300, 14)
    assert {s.column for s in specs} == set(ADHOC_COLUMNS)
    for s in specs:
        where = parse(s.sql).args["where"].this
        assert isinstance(where, exp.And)
        assert isinstance(where.this, exp.GTE) and isinstance(where.expression, exp.LT)
        assert {c.name for c in where.find_all(exp.Column)} == {s.column}
        assert 0.09 <= s.selectivity <= 0.112, (s.column, s.selectivity)
        assert s.sql.startswith(f"-- adhoc {s.column}\n")
    # random positions, not always the same range
    ship = {s.sql for s in specs if s.column == "l_shipdate"}
    assert len(ship) > 10


def test_adhoc_scale_factor():
    for s in adhoc_query_specs(200, 15, scale_factor=100, columns=("l_partkey", "l_suppkey")):
        lo, hi = map(int, re.findall(r"[<>]=? (\d+)", s.sql))
        top = 20_000_000 if s.column == "l_partkey" else 1_000_000
        assert 1 <= lo < hi <= top + 1
        assert (hi - lo) == pytest.approx(0.1 * top, rel=1e-6)


# --------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------


def test_cli_writes_workload_file(tmp_path, capsys):
    out = tmp_path / "w.sql"
    assert cli_main(["q6", "-n", "7", "--seed", "3", "-o", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == workload_file_text("q6", 7, 3)
    assert cli_main(["adhoc", "-n", "2", "--seed", "1", "--scale-factor", "10"]) == 0
    printed = capsys.readouterr().out
    assert printed == workload_file_text("adhoc", 2, 1, scale_factor=10)
    assert "--scale-factor 10" in printed.splitlines()[1]


def test_cli_golden(tmp_path):
    assert cli_main(["golden", "-o", str(tmp_path)]) == 0
    for name in TEMPLATES:
        assert (tmp_path / f"{name}.sql").read_text(encoding="utf-8") == (SQL / "tpch" / f"{name}.sql").read_text(
            encoding="utf-8"
        )

"""Sideways cuts (issue 13): partitions cut on a joined table's column, pure parts.

The layout records which join column a joined attribute is; apply's SQL computes it with LEFT JOINs
and never writes it; the rewrite never prunes by it (only through recorded ranges); the search
offers such cuts when scans are filtered through joins. Spark runs them in
``tests/test_sideways_spark.py``.
"""
from __future__ import annotations

import datetime as dt

import numpy as np
import pyarrow as pa
import sqlglot
from rewrite_entry import explain_query
from sqlglot import exp

from planner.advice.relayout_plan import RelayoutPlan
from planner.analysis.table_analysis import analyze_table
from planner.cnf.valueset import ValueSet
from planner.costmodel.cost import CostModel, CostParams
from planner.costmodel.joined import joined_attribute
from planner.costmodel.search import build_contenders
from planner.costmodel.sideways import cut_attributes, split
from planner.costmodel.statistics import ColumnStats, TableStats
from planner.emit.apply_sql import JOINED_PREFIX, apply_statements
from planner.emit.relayout_sql import recut_insert
from planner.model.join_paths import Hop, JoinColumn, JoinPath
from planner.model.layout import Layout, Partition, generation_of, with_generation
from planner.semantics.kinds import Kind
from planner.workload import parse_workload
from planner.workload.scans import Schema

NATION = JoinColumn(JoinPath((Hop("l_suppkey", "db.supplier", "s_suppkey"),
                              Hop("s_nationkey", "db.nation", "n_nationkey"))), "n_name")
A = joined_attribute(NATION)
COLUMNS = {"l_orderkey": "bigint", "l_suppkey": "bigint", "l_shipdate": "date"}
LATE = ValueSet.range(Kind.DATE, dt.date(1995, 1, 1), None, True, False)
FRANCE = ValueSet.points(Kind.STRING, ["FRANCE"])


def sideways_layout() -> Layout:
    regions = [(LATE, FRANCE), (LATE, FRANCE.complement()), (LATE.complement(), ValueSet.everything(Kind.STRING))]
    parts = tuple(Partition(i, (("l_shipdate", d), (A, n))) for i, (d, n) in enumerate(regions, 1))
    return with_generation(Layout("db.lineitem", "test", parts, kinds=(("l_shipdate", Kind.DATE), (A, Kind.STRING)),
                                  joined=((A, NATION),), types=(("l_shipdate", "date"),)))


def test_the_layout_records_its_join_columns():
    layout = sideways_layout()
    back = Layout.loads(layout.dumps())
    assert back == layout and back.joined == ((A, NATION),)
    plain = Layout(layout.table, layout.strategy, layout.partitions, kinds=layout.kinds, types=layout.types)
    assert generation_of(plain) != generation_of(layout)  # the same regions through another join are another layout


def test_apply_computes_the_joined_attribute_with_left_joins_and_never_writes_it():
    *_, insert, _, _ = apply_statements(sideways_layout(), COLUMNS, "db.lineitem", "db.new", dialect="spark")
    tree = sqlglot.parse_one(insert, read="spark")
    outer = tree.expression
    assert [e.alias_or_name for e in outer.expressions] == list(COLUMNS) + ["planner_pid"]
    inner = outer.find(exp.Subquery).this
    assert inner.args["hint"].sql(dialect="spark") == "/*+ MAPJOIN(j1, j2) */"
    assert [j.args.get("side", "").upper() for j in inner.args["joins"]] == ["LEFT", "LEFT"]
    read = [inner.args.get("from") or inner.args.get("from_")] + inner.args["joins"]
    assert [r.this.name for r in read] == ["lineitem", "supplier", "nation"]
    case = outer.expressions[-1]
    assert f"{JOINED_PREFIX}1" in {c.name for c in case.find_all(exp.Column)}
    assert not any(c.name.startswith("⋈") for c in tree.find_all(exp.Column))


def test_a_partial_relayout_reads_the_partitions_it_recuts_by_the_sources_alias():
    layout = sideways_layout()
    chosen = (layout.partitions[0].id,)
    plan = RelayoutPlan(layout, layout, layout, (), chosen, 4.0, (layout.partitions[0].id,))
    insert = recut_insert(plan, COLUMNS, "db.lineitem", "db.staging", dialect="spark")
    where = next(s for s in insert.find_all(exp.Select) if s.args.get("where") is not None)
    (pid,) = [c for c in where.args["where"].find_all(exp.Column)]
    assert pid.table == "t" and {t.name for t in where.find_all(exp.Table)} >= {"lineitem", "supplier"}


def test_the_rewrite_never_prunes_by_a_joined_region():
    """Own predicates prune by the table's own columns only; the cut on the nation counts for nothing
    here (join pruning goes through the recorded ranges, with their snapshot checks)."""
    layout = sideways_layout()
    schema = Schema({"db.lineitem": COLUMNS})
    (scan,) = explain_query("SELECT count(*) FROM db.lineitem WHERE l_shipdate >= DATE '1996-01-01'",
                            {"db.lineitem": layout}, schema=schema)
    assert set(scan.partitions_read) == {0, layout.partitions[0].id, layout.partitions[1].id}


def test_split_crosses_every_partition_with_the_cut():
    layout = sideways_layout()
    own = Layout("db.lineitem", "cps:l_shipdate", (Partition(1, (("l_shipdate", LATE),)),
                                                   Partition(2, (("l_shipdate", LATE.complement()),))),
                 kinds=(("l_shipdate", Kind.DATE),))
    cut = Layout("db.lineitem", "cps:nation", (Partition(1, ((A, FRANCE),)), Partition(2, ((A, FRANCE.complement()),))),
                 kinds=((A, Kind.STRING),), joined=((A, NATION),))
    both = split(own, cut, 10)
    assert len(both.partitions) == 4 and both.joined == ((A, NATION),) and set(both.attributes) == {"l_shipdate", A}
    assert split(own, cut, 3) is None
    assert layout.joined == both.joined


# ---- the search offers sideways cuts -----------------------------------------------------------------
def joined_model(n: int = 4000) -> CostModel:
    """lineitem whose rows' supplier nations the sample carries, a workload filtering by nation only."""
    schema = Schema({"db.lineitem": COLUMNS, "db.supplier": {"s_suppkey": "bigint", "s_nationkey": "bigint"},
                     "db.nation": {"n_nationkey": "bigint", "n_name": "string"}})
    text = "".join(
        "SELECT count(*) FROM db.lineitem l JOIN db.supplier s ON l.l_suppkey = s.s_suppkey "
        f"JOIN db.nation n ON s.s_nationkey = n.n_nationkey WHERE n.n_name = '{name}';\n"
        for name in ("FRANCE", "PERU", "CHINA", "KENYA") * 3)
    wl = parse_workload(text, schema=schema, tables=["db.lineitem"])
    analysis = analyze_table(wl, "db.lineitem", COLUMNS)
    assert A in {joined_attribute(c) for c in analysis.join_columns()}
    rng = np.random.default_rng(3)
    names = np.array(["FRANCE", "PERU", "CHINA", "KENYA", "INDIA", "JAPAN"])
    sample = pa.table({"l_orderkey": pa.array(np.arange(n), pa.int64()),
                       "l_suppkey": pa.array(rng.integers(0, 100, n), pa.int64()),
                       "l_shipdate": pa.array([dt.date(1992, 1, 1) + dt.timedelta(days=int(d))
                                               for d in rng.integers(0, 2500, n)], pa.date32()),
                       A: pa.array(names[rng.integers(0, len(names), n)], pa.string())})
    stats = TableStats("db.lineitem", n * 100, n * 100 * 24, tuple(ColumnStats(c, t, 8.0) for c, t in COLUMNS.items()),
                       sample, joined=((A, "string"),), joined_rows=(("db.nation", 25), ("db.supplier", 1000)))
    return CostModel(analysis, stats, CostParams(partition_overhead_rows=0, file_overhead_rows=0,
                                                 min_partition_bytes=1, max_partitions=20))


def test_the_search_offers_a_cut_on_the_joined_column_and_prices_it():
    model = joined_model()
    assert cut_attributes(model) == [A]
    assert cut_attributes(model, max_rows=999) == []  # the supplier is too big to broadcast: a shuffle of every row
    layouts, _ = build_contenders(model)
    sideways = [layout for layout in layouts if layout.joined]
    assert sideways and all(dict(layout.joined)[A] == NATION for layout in sideways)
    best = min((model.evaluate(layout) for layout in sideways), key=lambda c: c.total)
    full = model.evaluate(layouts[1])  # no partitioning
    # each query reads about its nation's sixth of the table, not all of it
    assert best.rows < 0.4 * full.rows

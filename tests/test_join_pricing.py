"""The cost model prices predicates induced through joins (``planner.costmodel.joined``): pure.

Table ``l`` (the sample is the table, 100 rows): ``d`` is a ship date, day ``i`` of 1995 for row
``i``; each row joins the ``o`` row of key ``k``, whose order date ``od`` is day ``i - i % 7``
(0-6 days before ``d``) (the sample join ``hive_integration.spark.join_sample`` adds it as the joined attribute
``⋈ o(ok = k).od``). Rows 90-99 join nothing (their key has no partner).

    q  SELECT * FROM l JOIN o ON l.k = o.ok WHERE o.od >= DATE '1995-03-12'   (day 70 onwards)

Laid out in ten partitions of ``d`` (ten days each), the scan can skip every partition whose
joined order dates all lie before day 70: partitions 0-5 and 6 (days 60-69: order dates 56-63).
Partitions 7 (dates 70-77) and 8 (77-84) are kept; partition 9's rows join nothing: skipped too.
"""
from __future__ import annotations

import datetime as dt

import numpy as np
import pyarrow as pa

from planner.analysis.table_analysis import analyze_table
from planner.cnf.valueset import ValueSet
from planner.costmodel.cost import CostModel, CostParams
from planner.costmodel.joined import joined_attribute, match_attribute
from planner.costmodel.statistics import ColumnStats, TableStats
from planner.model.layout import CATCH_ALL, Layout, Partition
from planner.semantics.kinds import Kind
from planner.workload import parse_workload
from planner.workload.scans import Schema

DAY0 = dt.date(1995, 1, 1)
SCHEMA = Schema({"l": {"k": "int", "d": "date"}, "o": {"ok": "int", "od": "date", "os": "string"}})
PARAMS = CostParams(partition_overhead_rows=0, file_overhead_rows=0, row_group_rows=10, page_rows=10)


def _analysis(sql: str):
    wl = parse_workload(sql, schema=SCHEMA, tables=["l"])
    return analyze_table(wl, "l", {"k": "int", "d": "date"})


def _stats(analysis, *, joined: bool = True, unmatched_null: bool = False) -> TableStats:
    days = [DAY0 + dt.timedelta(days=i) for i in range(100)]
    cols = {"k": pa.array(range(100), pa.int64()), "d": pa.array(days, pa.date32())}
    types = ()
    if joined:
        (od_col, os_col) = sorted(analysis.join_columns(), key=lambda c: c.column)
        od = [d - dt.timedelta(days=i % 7) if i < 90 else None for i, d in enumerate(days)]
        cols[joined_attribute(od_col)] = pa.array(od, pa.date32())
        cols[joined_attribute(os_col)] = pa.array([("F" if i < 50 else "O") if i < 90 else None
                                                   for i in range(100)], pa.string())
        cols[match_attribute(od_col.path)] = pa.array([i < 90 for i in range(100)])
        types = ((joined_attribute(od_col), "date"), (joined_attribute(os_col), "string"))
    table = pa.table(cols)
    return TableStats("l", 100, 1000, (ColumnStats("k", "int", 4.0), ColumnStats("d", "date", 4.0)), table,
                      joined=types)


def _tens() -> Layout:
    parts = tuple(Partition(i + 1, (("d", ValueSet.range(Kind.DATE, DAY0 + dt.timedelta(days=10 * i),
                                                         DAY0 + dt.timedelta(days=10 * i + 10), True, False)),))
                  for i in range(10))
    return Layout("l", "tens", parts, kinds=(("d", Kind.DATE),))


SQL = ("SELECT * FROM l JOIN o ON l.k = o.ok WHERE o.od >= DATE '1995-03-12' AND o.os IN ('F', 'O');\n"
       "SELECT * FROM l JOIN o ON l.k = o.ok WHERE o.os = 'F';\n")


def test_induced_predicate_prunes_partitions_by_joined_ranges():
    a = _analysis(SQL)
    cost = CostModel(a, _stats(a), PARAMS).evaluate(_tens())
    by_date, by_status = cost.per_scan
    assert by_date.partitions == 2 and by_date.rows == 20  # days 70-89; 90-99 join nothing
    assert by_status.partitions == 5 and by_status.rows == 50  # status F: days 0-49


def test_without_the_sample_join_nothing_is_pruned():
    a = _analysis(SQL)
    cost = CostModel(a, _stats(a, joined=False), PARAMS).evaluate(_tens())
    assert [s.rows for s in cost.per_scan] == [100, 100]


def test_outer_join_induces_nothing():
    a = _analysis("SELECT * FROM l LEFT JOIN o ON l.k = o.ok WHERE o.od >= DATE '1995-03-12' OR o.od IS NULL;\n"
                  "SELECT * FROM l JOIN o ON l.k = o.ok WHERE o.od >= DATE '1995-03-12' AND o.os IN ('F', 'O');\n")
    m = CostModel(a, _stats(_analysis(SQL)), PARAMS)
    outer, inner = m.evaluate(_tens()).per_scan
    assert outer.rows == 100 and inner.rows == 20


def test_catch_all_is_always_read_and_the_current_table_is_not_join_pruned():
    a = _analysis(SQL)
    m = CostModel(a, _stats(a), PARAMS)
    tens = _tens()
    layout = Layout("l", "tens+rest", tens.partitions + (Partition(CATCH_ALL, (("d", ValueSet.range(
        Kind.DATE, DAY0, DAY0 + dt.timedelta(days=100), True, False).complement()),)),), kinds=tens.kinds)
    assert m.evaluate(layout).per_scan[0].partitions == 3
    assert [s.rows for s in m.evaluate(m.current().layout).per_scan] == [100, 100]


def test_a_value_no_sampled_row_holds_still_overlaps_a_range_around_it():
    # order dates are days 0, 7, 14, ...: day 52 is in none, but partition 5's dates span [49, 56]
    a = _analysis("SELECT * FROM l JOIN o ON l.k = o.ok WHERE o.od = DATE '1995-02-22';\n")
    cost = CostModel(a, _stats(_analysis(SQL)), PARAMS).evaluate(_tens())
    assert cost.per_scan[0].partitions == 1 and cost.per_scan[0].rows == 10


def test_the_merge_of_a_column_knows_which_pieces_a_join_excludes():
    from planner.costmodel.dpmerge import column_pieces

    cuts = "".join(f"SELECT * FROM l WHERE d >= DATE '{DAY0 + dt.timedelta(days=10 * i)}';\n" for i in range(1, 10))
    a = _analysis(cuts + SQL)
    m = CostModel(a, _stats(_analysis(SQL)), PARAMS)
    info = column_pieces(m, "d")
    assert info.weights.sum() == len(a.scans)
    from planner.costmodel.dpmerge import piece_labels

    labels = piece_labels(m.sample, "d", info.pieces.pieces)
    want_date = [any(70 <= i < 90 for i in np.flatnonzero(labels == k)) for k in range(len(info.pieces.pieces))]
    want_f = [any(i < 50 for i in np.flatnonzero(labels == k)) for k in range(len(info.pieces.pieces))]
    joined = info.hits[len(info.pieces.sets):-1]  # the two join scans' own classes, before "every piece"
    assert joined.tolist() == [want_date, want_f]
    assert info.weights[-1] == 0  # neither join scan is left in the "every piece" class


def test_the_advice_says_what_a_bucketed_layout_would_buy_on_spark_and_on_hive():
    from planner.advice.ranking import bucketing_notes

    (note,) = bucketing_notes(_analysis(SQL))
    assert note.startswith("joins on k:") and "Hive on Tez" in note and "SPARK-19256" in note
    assert bucketing_notes(_analysis("SELECT * FROM l WHERE d < DATE '1995-02-01';")) == ()

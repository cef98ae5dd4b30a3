"""Join-range pruning without Spark: what the recorded ranges allow, and when they must not be used.

The Spark tests (``tests/test_join_pruning_spark.py``) record the ranges from real tables; these
pin the rules on hand-made ranges (``tests/test_pruning_fixtures.py``'s "joined" layout): a stale
snapshot, an unknown one, another layout generation, a time-zone-dependent predicate and damaged
table properties each prune nothing and say why.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import replace

import pytest
from rewrite_entry import explain_query
from test_pruning_fixtures import JOIN_RANGES, ODATE, SCHEMA
from test_rewrite import layout as pairs_layout

from planner.cnf.valueset import Interval, ValueSet
from planner.errors import LayoutError
from planner.model.join_paths import Hop, JoinColumn, JoinPath
from planner.model.layout import with_generation
from planner.pruning.join_pruning import (
    CHUNK_CHARS,
    MAX_COLUMNS,
    PREFIX,
    JoinRange,
    JoinRanges,
    join_columns_of,
    stale_property_keys,
    tables_of,
    with_join_columns,
)
from planner.rewrite.query_rewrite import JoinContext
from planner.semantics.kinds import Kind
from planner.semantics.settings import Settings

Q = "SELECT x.id FROM db.t x JOIN db.o o ON x.id = o.oid WHERE o.odate >= DATE '1995-07-01'"
ALL = (0, 1, 2, 3, 4, 5)


def explain(sql=Q, ranges=JOIN_RANGES, snapshots=None, layout=None, settings=None, schema=SCHEMA):
    lay = layout or pairs_layout()
    joins = JoinContext({"db.t": ranges} if ranges is not None else {},
                        {"db.o": "o-1", "db.t": "t-1"} if snapshots is None else snapshots)
    (e,) = [e for e in explain_query(sql, {"db.t": lay}, dialect="spark", schema=schema, joins=joins,
                                     settings=settings) if e.table == "db.t"]
    return e


def test_fresh_ranges_prune_and_say_how():
    e = explain()
    assert e.partitions_read == (0, 3, 5)
    assert e.predicates_used == ("db.o(oid = id).odate IN [DATE '1995-07-01', +inf)",)
    assert e.predicates_not_used == ()


@pytest.mark.parametrize("snapshots,reason", [
    ({"db.o": "o-2", "db.t": "t-1"}, "db.o changed since the join ranges were recorded"),
    ({"db.o": "o-1", "db.t": "t-2"}, "db.t changed since the join ranges were recorded"),
    ({"db.o": None, "db.t": "t-1"}, "cannot check that db.o is unchanged"),
    ({"db.t": "t-1"}, "cannot check that db.o is unchanged"),
])
def test_a_changed_or_unknown_table_prunes_nothing(snapshots, reason):
    e = explain(snapshots=snapshots)
    assert e.partitions_read == ALL
    ((what, why),) = e.predicates_not_used
    assert what == ODATE.describe() and why.startswith(reason)


def test_ranges_of_another_generation_prune_nothing():
    lay = with_generation(pairs_layout())
    e = explain(layout=lay)  # JOIN_RANGES were recorded for generation None
    assert e.partitions_read == (0, *lay.known_ids)
    assert "recorded for another layout (generation None)" in e.predicates_not_used[0][1]
    ids = {i: p.id for i, p in enumerate(lay.partitions, 1)}
    (col,) = JOIN_RANGES.columns
    renumbered = replace(col, partitions=tuple((ids[i], vs) for i, vs in col.partitions))
    e = explain(layout=lay, ranges=replace(JOIN_RANGES, generation=lay.generation, columns=(renumbered,)))
    assert e.partitions_read == (0, ids[3], ids[5])


def test_a_time_zone_dependent_predicate_prunes_only_when_the_session_is_known():
    sql = "SELECT x.id FROM db.t x JOIN db.o o ON x.id = o.oid WHERE o.ots >= TIMESTAMP '1995-07-01 00:00:00'"
    ots = JoinColumn(JoinPath((Hop("id", "db.o", "oid"),)), "ots")
    ts = ValueSet.of(Kind.TIMESTAMP, [Interval(dt.datetime(1994, 1, 1), dt.datetime(1994, 12, 31), True, True)])
    ranges = JoinRanges("db.t", None, JOIN_RANGES.snapshots, (JoinRange(ots, "timestamp", ((1, ts),)),))
    schema = SCHEMA | {"db.o": {"oid": "bigint", "ots": "timestamp"}}
    saved = explain(sql, ranges=ranges, schema=schema)
    assert saved.partitions_read == ALL and "session time zone" in saved.predicates_not_used[0][1]
    live = explain(sql, ranges=ranges, schema=schema, settings=Settings(True, "UTC"))
    assert live.partitions_read == (0, 2, 3, 4, 5)


def test_no_ranges_or_no_join_prunes_by_the_layout_alone():
    assert explain(ranges=None).partitions_read == ALL
    e = explain("SELECT x.id FROM db.t x WHERE x.d < DATE '1995-01-01'")
    assert e.partitions_read == (0, 1) and e.predicates_not_used == ()


def test_a_predicate_that_allows_everything_is_not_reported_as_used():
    e = explain("SELECT x.id FROM db.t x JOIN db.o o ON x.id = o.oid WHERE o.odate IS NULL OR o.odate IS NOT NULL")
    assert e.partitions_read == ALL and e.predicates_used == ()


def test_two_join_predicates_intersect():
    e = explain("SELECT x.id FROM db.t x JOIN db.o o ON x.id = o.oid "
                "WHERE o.odate >= DATE '1995-01-01' AND o.odate < DATE '1995-02-01'")
    assert e.partitions_read == (0, 2, 5)


# ---- the ranges as table properties --------------------------------------------------------------
def _big_ranges(n=400) -> JoinRanges:
    parts = tuple((i, ValueSet.points(Kind.STRING, [f"valüe-{i}-{j}" for j in range(8)])) for i in range(1, n))
    return JoinRanges("db.t", 123456789, (("db.o", "o-1"), ("db.t", "t-1")), (JoinRange(ODATE, "string", parts),))


def test_properties_round_trip_in_hex_chunks():
    ranges = _big_ranges()
    props = ranges.properties()
    n = int(props[f"{PREFIX}.parts"])
    assert n >= 2 and set(props) == {f"{PREFIX}.parts", f"{PREFIX}.sha256", *(f"{PREFIX}.{i}" for i in range(n))}
    assert all(len(props[f"{PREFIX}.{i}"]) <= CHUNK_CHARS for i in range(n))
    assert all(set(props[f"{PREFIX}.{i}"]) <= set("0123456789abcdef") for i in range(n))
    assert JoinRanges.from_properties(props) == ranges
    assert JoinRanges.from_properties(JOIN_RANGES.properties()) == JOIN_RANGES
    assert stale_property_keys({**props, "other": "x"}) == sorted(props)


@pytest.mark.parametrize("damage", ["missing chunk", "redacted", "bad count", "no parts", "bad checksum"])
def test_damaged_properties_prune_nothing(damage):
    props = _big_ranges().properties()
    if damage == "missing chunk":
        del props[f"{PREFIX}.1"]
    elif damage == "redacted":
        props[f"{PREFIX}.0"] = "*********(redacted)"
    elif damage == "bad count":
        props[f"{PREFIX}.parts"] = "two"
    elif damage == "no parts":
        del props[f"{PREFIX}.parts"]
    else:
        props[f"{PREFIX}.sha256"] = "0" * 64
    assert JoinRanges.from_properties(props) is None


def test_a_checked_blob_that_does_not_decode_prunes_nothing():
    import hashlib
    import json
    import zlib

    for blob in ["zz", zlib.compress(b"not json").hex(),
                 zlib.compress(json.dumps({"version": 99}).encode()).hex(),
                 zlib.compress(json.dumps({"version": 1}).encode()).hex()]:
        props = {f"{PREFIX}.parts": "1", f"{PREFIX}.0": blob,
                 f"{PREFIX}.sha256": hashlib.sha256(blob.encode()).hexdigest()}
        assert JoinRanges.from_properties(props) is None, blob


def test_from_json_says_what_is_wrong():
    with pytest.raises(LayoutError, match="join ranges version 2 is not supported"):
        JoinRanges.from_json({**JOIN_RANGES.to_json(), "version": 2})
    with pytest.raises(LayoutError, match="malformed join ranges: KeyError"):
        JoinRanges.from_json({"version": 1, "table": "db.t"})
    obj = JOIN_RANGES.to_json()
    assert obj["version"] == 1 and obj["table"] == "db.t" and obj["generation"] is None
    assert obj["snapshots"] == {"db.o": "o-1", "db.t": "t-1"}
    assert JoinRanges.from_json(obj) == JOIN_RANGES
    assert JoinRange.from_json(JOIN_RANGES.columns[0].to_json()) == JOIN_RANGES.columns[0]


def test_join_columns_in_the_layout_meta():
    lay = pairs_layout()
    assert with_join_columns(lay, []) is lay and join_columns_of(lay) == []
    cols = [JoinColumn(JoinPath((Hop("id", f"db.o{i}", "oid"),)), "odate") for i in range(MAX_COLUMNS + 3)]
    got = with_join_columns(lay, cols)
    assert join_columns_of(got) == cols[:MAX_COLUMNS]
    assert dict(got.meta)["statistics_snapshot"] == dict(lay.meta)["statistics_snapshot"]
    two = JoinColumn(JoinPath((Hop("id", "db.o", "oid"), Hop("ocust", "db.c", "cid"))), "cname")
    assert tables_of(two, "db.t") == ["db.t", "db.o", "db.c"]


# ---- several recorded columns: one that cannot be used does not stop the others ------------------
OSTATUS = JoinColumn(ODATE.path, "ostatus")
OTS = JoinColumn(ODATE.path, "ots")
O_COLUMNS = {"oid": "bigint", "odate": "date", "ostatus": "string", "ots": "timestamp", "ocode": "string",
             "olo": "int", "ohi": "int"}


def _ranges(*columns: JoinRange, snapshots=JOIN_RANGES.snapshots) -> JoinRanges:
    return JoinRanges("db.t", None, snapshots, columns)


def _ts(*hours) -> ValueSet:
    return ValueSet.of(Kind.TIMESTAMP, [Interval(dt.datetime(1994, 12, 31, h), dt.datetime(1994, 12, 31, h), True, True)
                                        for h in hours])


ODATE_RANGE = JOIN_RANGES.columns[0]
STATUS_RANGE = JoinRange(OSTATUS, "string", ((1, ValueSet.points(Kind.STRING, ["F"])),))
TS_RANGE = JoinRange(OTS, "timestamp", ((1, _ts(18, 22)), (2, _ts(3))))


def explain_o(sql, ranges, settings=None, snapshots=None):
    return explain(sql, ranges=ranges, settings=settings, snapshots=snapshots,
                   schema=SCHEMA | {"db.o": O_COLUMNS})


def test_a_column_the_predicate_does_not_restrict_is_passed_over():
    sql = Q + " AND o.ostatus IS NOT NULL OR o.odate >= DATE '1995-07-01' AND o.odate IS NOT NULL"
    assert explain_o(Q, _ranges(STATUS_RANGE, ODATE_RANGE)).partitions_read == (0, 3, 5)
    assert explain_o(sql, _ranges(STATUS_RANGE, ODATE_RANGE)).partitions_read == (0, 3, 5)


def test_a_stale_path_does_not_stop_a_fresh_one():
    p_path = JoinPath((Hop("id", "db.p", "pid"),))
    stale = JoinRange(JoinColumn(p_path, "pdate"), "date", ((1, ODATE_RANGE.partitions[0][1]),))
    sql = ("SELECT x.id FROM db.t x JOIN db.p p ON x.id = p.pid JOIN db.o o ON x.id = o.oid "
           "WHERE p.pdate >= DATE '1990-01-01' AND o.odate >= DATE '1995-07-01'")
    schema = SCHEMA | {"db.o": O_COLUMNS, "db.p": {"pid": "bigint", "pdate": "date"}}
    for snapshots, reason in [({"db.o": "o-1", "db.t": "t-1", "db.p": "p-2"}, "db.p changed since the join ranges "
                               "were recorded (new files or a newer layout); apply or append again to refresh them"),
                              ({"db.o": "o-1", "db.t": "t-1"}, "cannot check that db.p is unchanged since the join "
                               "ranges were recorded (its snapshot is read through Spark)")]:
        ranges = _ranges(stale, ODATE_RANGE, snapshots=JOIN_RANGES.snapshots + (("db.p", "p-1"),))
        e = explain(sql, ranges=ranges, snapshots=snapshots, schema=schema)
        assert e.partitions_read == (0, 3, 5)
        assert e.predicates_not_used == (("db.p(pid = id).pdate", reason),)


def test_a_time_zone_column_does_not_stop_a_plain_one():
    sql = Q + " AND o.ots >= '1990-01-01'"
    e = explain_o(sql, _ranges(TS_RANGE, ODATE_RANGE))
    assert e.partitions_read == (0, 3, 5)
    assert e.predicates_not_used == ((OTS.describe(), "depends on the session time zone (a saved rewrite does not "
                                      "know it)"),)


def test_a_live_session_prunes_in_its_own_time_zone():
    # 05:00 in Tokyo is 20:00 UTC the day before: partition 1 (18:00 and 22:00 UTC) may match
    sql = "SELECT x.id FROM db.t x JOIN db.o o ON x.id = o.oid WHERE o.ots >= TIMESTAMP '1995-01-01 05:00:00'"
    assert explain_o(sql, _ranges(TS_RANGE), Settings(True, "Asia/Tokyo")).partitions_read == (0, 1, 3, 4, 5)
    assert explain_o(sql, _ranges(TS_RANGE), Settings(True, "UTC")).partitions_read == (0, 3, 4, 5)


def test_a_saved_rewrite_holds_in_both_ansi_modes():
    # Without ANSI, Spark reads the string '5.5' as the number 5 when it compares it with an INT;
    # with ANSI it fails the query instead. A saved rewrite does not know the mode: it must keep
    # the rows the legacy mode matches (olo > 5: partition 1's olo = 5 cannot, partition 2's 7 can).
    lo = JoinRange(JoinColumn(ODATE.path, "olo"), "int", ((1, ValueSet.points(Kind.INTEGER, [5])),
                                                          (2, ValueSet.points(Kind.INTEGER, [7]))))
    sql = "SELECT x.id FROM db.t x JOIN db.o o ON x.id = o.oid WHERE o.olo > '5.5'"
    assert explain_o(sql, _ranges(lo)).partitions_read == (0, 2, 3, 4, 5)
    assert explain_o(sql, _ranges(lo), Settings(False)).partitions_read == (0, 2, 3, 4, 5)
    assert explain_o(sql, _ranges(lo), Settings(True)).partitions_read == ALL  # the query fails: nothing to prune
    eq = sql.replace("> '5.5'", "= '5.5'")
    assert explain_o(eq, _ranges(lo)).partitions_read == (0, 1, 3, 4, 5)


def test_ranges_of_another_table_only():
    e = explain(ranges=None)
    other = JoinContext({"db.elsewhere": JOIN_RANGES}, {"db.o": "o-1", "db.t": "t-1"})
    (got,) = [x for x in explain_query(Q, {"db.t": pairs_layout()}, dialect="spark", schema=SCHEMA, joins=other)
              if x.table == "db.t"]
    assert got.partitions_read == e.partitions_read == ALL


def test_a_column_pair_on_the_joined_table():
    sql = Q + " AND o.olo < o.ohi"
    assert explain_o(sql, _ranges(ODATE_RANGE)).partitions_read == (0, 3, 5)


def test_a_saved_rewrite_keeps_both_ansi_readings_of_a_float():
    # as in test_rewrite_cases: 16777217 = f reads 16777216.0 without ANSI, 16777217.0 with it
    from decimal import Decimal

    of = JoinRange(JoinColumn(ODATE.path, "of"), "float", (
        (1, ValueSet.points(Kind.FLOAT, [Decimal("16777216.0")])),
        (2, ValueSet.points(Kind.FLOAT, [Decimal("16777217.0")])),
        (3, ValueSet.points(Kind.FLOAT, [Decimal("0.5")]))))
    sql = "SELECT x.id FROM db.t x JOIN db.o o ON x.id = o.oid WHERE 16777217 = o.of"
    schema = SCHEMA | {"db.o": O_COLUMNS | {"of": "float"}}
    read = {s: explain(sql, ranges=_ranges(of), schema=schema, settings=s).partitions_read
            for s in (None, Settings(False), Settings(True))}
    assert read == {None: (0, 1, 2, 4, 5), Settings(False): (0, 1, 4, 5), Settings(True): (0, 2, 4, 5)}


def test_two_recorded_columns_both_restrict():
    sql = Q + " AND o.ostatus = 'F'"
    assert explain_o(Q, _ranges(ODATE_RANGE)).partitions_read == (0, 3, 5)
    assert explain_o(Q.replace("o.odate >= DATE '1995-07-01'", "o.ostatus = 'F'"),
                     _ranges(STATUS_RANGE)).partitions_read == (0, 1, 2, 3, 4, 5)
    assert explain_o(sql.replace("o.odate >= DATE '1995-07-01'", "o.odate <= DATE '1994-12-31'"),
                     _ranges(ODATE_RANGE, STATUS_RANGE)).partitions_read == (0, 1, 5)
    assert explain_o(sql, _ranges(STATUS_RANGE, ODATE_RANGE)).partitions_read == (0, 3, 5)


def test_unqualified_names_join_through_the_current_database():
    sql = "SELECT x.id FROM t x JOIN o ON x.id = o.oid WHERE o.odate >= DATE '1995-07-01'"
    joins = JoinContext({"db.t": JOIN_RANGES}, {"db.o": "o-1", "db.t": "t-1"})
    (e,) = explain_query(sql, {"db.t": pairs_layout()}, dialect="spark", schema=SCHEMA, joins=joins, current_db="db")
    assert e.partitions_read == (0, 3, 5)

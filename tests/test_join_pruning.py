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
from planner.rewrite.query_rewrite import JoinContext, explain_query
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
    parts = tuple((i, ValueSet.points(Kind.STRING, [f"value-{i}-{j}" for j in range(8)])) for i in range(1, n))
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

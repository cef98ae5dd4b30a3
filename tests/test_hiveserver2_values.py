"""Rows through HiveServer2 read as Spark's ``collect()`` gives them (``hiveserver2_builds``): the
join ranges computed there must hold the very values a Spark session would record (pure: a fake
server answers ``DESCRIBE QUERY`` and the query)."""
from __future__ import annotations

import datetime as dt
from decimal import Decimal
from types import SimpleNamespace

import sqlglot

from hive_integration.metastore.hiveserver2_builds import HiveServer2Ranges, value


def test_values_come_back_typed():
    assert value("2020-01-31", "date") == dt.date(2020, 1, 31)
    assert value(dt.date(2020, 1, 31), "date") == dt.date(2020, 1, 31)
    assert value("12.50", "decimal(12,2)") == Decimal("12.50") and value(3, "decimal(5,0)") == Decimal(3)
    assert value("7", "bigint") == 7 and value(7, "int") == 7
    assert value("true", "boolean") is True and value(False, "boolean") is False
    assert value(5, "string") == "5" and value(None, "date") is None
    assert value('["a\'b","q\\"x"]', "array<string>") == ["a'b", 'q"x']
    assert value("[1,2,30000000000]", "array<bigint>") == [1, 2, 30000000000]
    assert value('["2020-01-01"]', "array<date>") == [dt.date(2020, 1, 1)]


class FakeServer:
    def __init__(self, types, rows):
        self.types, self.rows, self.sent = types, rows, []
        self.client = SimpleNamespace(database="default")

    def execute(self, sql):
        self.sent.append(sql)
        return [(n, t, None) for n, t in self.types] if sql.startswith("DESCRIBE") else self.rows


def test_arrays_are_asked_for_as_json_and_every_column_read_by_its_type():
    server = FakeServer([("pid", "int"), ("c0_min", "date"), ("c0_set", "array<string>")],
                        [(1, "2020-01-02", '["a\'b",null]')])
    q = sqlglot.parse_one("SELECT f.p AS pid, MIN(d.x) AS c0_min, COLLECT_SET(d.s) AS c0_set FROM t AS f GROUP BY f.p",
                          read="spark")
    got = HiveServer2Ranges(server, "thrift://unused:1").rows(q)
    assert got == [(1, dt.date(2020, 1, 2), ["a'b", None])]
    assert "TO_JSON(COLLECT_SET(d.s)) AS c0_set" in server.sent[-1]
    assert "TO_JSON" not in q.sql("spark")  # the caller's query is left as it was

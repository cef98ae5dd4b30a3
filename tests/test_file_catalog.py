"""A table's files read without Spark (``hive_integration.metastore.file_catalog``): a thrift
metastore's entry, the files through pyarrow, and the same snapshot as Spark's listing gives
(pure: a fake metastore client over a local folder; ``test_file_catalog_spark.py`` compares with
Spark's own listing, and with a real thrift metastore and HiveServer2)."""
from __future__ import annotations

import os
from types import SimpleNamespace
from urllib.parse import quote

from hive_integration.metastore.file_catalog import MetastoreCatalogIO
from hive_integration.metastore.layouts import MetastoreLayouts
from hive_integration.spark.catalog_cache import CatalogCache, path_key, snapshot_digest


class FakeClient:
    """``table_or_none`` and ``partition_locations`` of a thrift metastore, over ``tables``."""

    def __init__(self):
        self.tables: dict[tuple[str, str], SimpleNamespace] = {}
        self.parts: dict[tuple[str, str], list[str]] = {}
        self.calls: list[str] = []

    def add(self, db, name, location, cols=(("a", "int"),), keys=(), params=None, kind="MANAGED_TABLE", parts=()):
        col = lambda n, t: SimpleNamespace(name=n, type=t)  # noqa: E731
        self.tables[(db, name)] = SimpleNamespace(
            parameters=dict(params or {}), tableType=kind, partitionKeys=[col(*k) for k in keys],
            sd=SimpleNamespace(cols=[col(*c) for c in cols], location=location))
        self.parts[(db, name)] = list(parts)

    def table_or_none(self, db, name):
        self.calls.append(f"table {db}.{name}")
        return self.tables.get((db, name))

    def partition_locations(self, db, name):
        self.calls.append(f"partitions {db}.{name}")
        return self.parts[(db, name)]


def _file(path, data=b"x" * 10):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def _hadoop(path) -> str:
    """A local file's URI as Hadoop's ``Path.toUri()`` names it (``file:/…``, escaped)."""
    return "file:" + quote(str(path), safe="/=:@-._~!$&'()*+,;")


def _listed(*paths):
    return [(_hadoop(p), p.stat().st_size, p.stat().st_mtime_ns // 1_000_000) for p in paths]


def test_an_unpartitioned_table_s_files_give_spark_s_snapshot_hidden_files_left_out(tmp_path):
    a = _file(tmp_path / "t" / "part-0.parquet")
    b = _file(tmp_path / "t" / "sub dir" / "part-1 %.parquet", b"y" * 7)
    for hidden in ("_SUCCESS", ".part-0.parquet.crc", "_temporary/0/x.parquet", "part-2.parquet._COPYING_"):
        _file(tmp_path / "t" / hidden)
    client = FakeClient()
    client.add("db", "t", f"file://{tmp_path}/t", params={"planner.layout.sha256": "abc"})
    cache = CatalogCache(MetastoreCatalogIO(client), recheck=False)
    snap = cache.snapshot("db.t")
    # Hadoop names the files ``file:/…/sub%20dir/part-1%20%25.parquet``; pyarrow ``file:///…``: one snapshot
    assert snap == snapshot_digest(_listed(a, b), {"planner.layout.sha256": "abc"})
    assert snap != snapshot_digest(_listed(a, b), {})
    entry = cache.entry("db.t")
    assert entry.columns == {"a": "int"} and entry.partition_columns == () and not entry.view


def test_a_partitioned_table_lists_its_partitions_locations_and_watches_its_own(tmp_path):
    a = _file(tmp_path / "t" / "p=1" / "a.parquet")
    elsewhere = _file(tmp_path / "outside" / "p=2" / "b.parquet")
    _file(tmp_path / "t" / "p=3" / "not-a-partition.parquet")  # no partition names it: Spark does not read it
    client = FakeClient()
    client.add("db", "t", f"file:{tmp_path}/t", keys=(("p", "int"),),
               parts=(f"file:{tmp_path}/t/p=1", f"file:{tmp_path}/outside/p=2"))
    io = MetastoreCatalogIO(client)
    tree = io.tree(io.entries(["db.t"])["db.t"])
    assert sorted(path_key(f) for f, _, _ in tree.files) == sorted([path_key(_hadoop(a)), path_key(_hadoop(elsewhere))])
    assert [path_key(d) for d, _ in tree.watched] == [path_key(f"file:{tmp_path}/t")]
    assert sorted(path_key(s) for s in tree.watched[0][1]) == [path_key(f"file:{tmp_path}/t/p={i}") for i in (1, 3)]
    assert io.entries(["db.t"])["db.t"].columns == {"a": "int", "p": "int"}


def test_statuses_list_each_directory_and_none_when_one_is_gone(tmp_path):
    a = _file(tmp_path / "d" / "a.parquet")
    (tmp_path / "d" / "sub").mkdir()
    io = MetastoreCatalogIO(FakeClient())
    got = io.statuses([f"file:{tmp_path}/d"])
    st = a.stat()
    assert sorted(got) == sorted([(path_key(_hadoop(a)), False, st.st_size, st.st_mtime_ns // 1_000_000),
                                  (path_key(_hadoop(tmp_path / "d" / "sub")), True, 0,
                                   (tmp_path / "d" / "sub").stat().st_mtime_ns // 1_000_000)])
    assert io.statuses([f"file:{tmp_path}/d", f"file:{tmp_path}/gone"]) is None


def test_what_cannot_be_listed_has_no_snapshot(tmp_path):
    """A view (only Spark knows its files), a partition whose folder is gone, a file system pyarrow
    cannot open here: no snapshot, so nothing recorded against one is trusted."""
    _file(tmp_path / "t" / "p=1" / "a.parquet")
    client = FakeClient()
    client.add("db", "v", None, kind="VIRTUAL_VIEW")
    client.add("db", "gone", f"file:{tmp_path}/t", keys=(("p", "int"),), parts=(f"file:{tmp_path}/t/p=9",))
    client.add("db", "weird", "weird://host/t")
    cache = CatalogCache(MetastoreCatalogIO(client), recheck=False)
    assert cache.snapshots(["db.v", "db.gone", "db.weird", "db.nope"]) == \
        {"db.v": None, "db.gone": None, "db.weird": None, "db.nope": None}
    assert cache.entry("db.v").view and cache.entry("db.nope") is None


def test_metastore_layouts_read_each_table_once_and_give_its_snapshot(tmp_path):
    from planner.cnf.valueset import ValueSet
    from planner.emit.ddl import layout_properties
    from planner.model.layout import Layout, Partition
    from planner.semantics.kinds import Kind

    r = ValueSet.range(Kind.INTEGER, None, 10, True, False)
    layout = Layout("db.t", "hand", (Partition(1, (("k", r),)), Partition(2, (("k", r.complement()),))),
                    kinds=(("k", Kind.INTEGER),))
    a = _file(tmp_path / "t" / "planner_part=1" / "a.parquet")
    client = FakeClient()
    props = layout_properties(layout)
    client.add("db", "t", f"file:{tmp_path}/t", cols=(("k", "int"), ("v", "string")),
               keys=((layout.partition_column, "int"),), params=props, parts=(f"file:{tmp_path}/t/planner_part=1",))
    client.add("db", "plain", f"file:{tmp_path}/plain")
    source = MetastoreLayouts(client)
    found = source.lookup("db", "t")
    assert found.layout == layout and found.columns == {"k": "int", "v": "string"}
    assert source.lookup("db", "plain") is None and source.lookup("db", "nope") is None
    assert source.snapshots(["db.t", "DB.T"]) == {"db.t": snapshot_digest(_listed(a), props),
                                                  "DB.T": snapshot_digest(_listed(a), props)}
    assert source.entry("db.t").location == f"file:{tmp_path}/t"
    assert client.calls.count("table db.t") == 1 and client.calls.count("partitions db.t") == 1
    # a write after the index was built (here: the file's time) is the next run's snapshot, not this one's
    before = source.snapshots(["db.t"])["db.t"]
    os.utime(a, ns=(0, 0))
    assert source.snapshots(["db.t"])["db.t"] == before
    assert MetastoreLayouts(client).snapshots(["db.t"])["db.t"] != before


def test_join_ranges_are_checked_against_the_source_s_snapshots_without_spark():
    """Was: without a Spark session the joined tables' snapshots were unknown, and nothing pruned
    through joins on ``planner rewrite`` over thrift."""
    from test_pruning_fixtures import JOIN_RANGES

    from hive_integration.spark.join_ranges import join_context

    asked = []

    def snapshots_of(tables):
        asked.append(list(tables))
        return {"db.o": "o-1", "db.t": "t-1"}

    ctx = join_context(None, {"db.t": JOIN_RANGES}, ["db.t", "db.o"], snapshots_of)
    assert ctx.snapshots == {"db.o": "o-1", "db.t": "t-1"} and asked == [["db.o", "db.t"]]
    assert join_context(None, {"db.t": JOIN_RANGES}, ["db.t", "db.o"]).snapshots == {"db.o": None, "db.t": None}

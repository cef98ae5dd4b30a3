"""When ``planner.sql``'s cache of catalog entries and file snapshots reads them again (pure: a
fake metastore and file system stand in for Spark's; ``test_catalog_cache_spark.py`` runs the same
against Spark)."""
from __future__ import annotations

from dataclasses import replace

from hive_integration.spark.catalog import CatalogEntry, FileTree
from hive_integration.spark.catalog_cache import (
    CatalogCache,
    by_parent,
    files_now,
    listed_form,
    local_statuses,
    path_key,
    same_entry,
    snapshot_digest,
)


class FakeIO:
    """A metastore (``tables``: name -> entry; ``partitions``: name -> partition locations) and a
    file system (``fs``: directory -> {name: (directory?, size, mtime)}), counting the calls."""

    def __init__(self):
        self.tables: dict[str, CatalogEntry] = {}
        self.partitions: dict[str, list[str]] = {}
        self.fs: dict[str, dict[str, tuple[bool, int, int]]] = {}
        self.calls: list[str] = []

    def add(self, table: str, location: str, files: dict, partitioned: bool = False, props=None):
        self.tables[table] = CatalogEntry(table, dict(props or {}), {"a": "int"}, ("p",) if partitioned else (),
                                          location)
        self.fs[location] = {}
        for path, (size, mtime) in files.items():
            self.put(f"{location}/{path}", size, mtime)
        if partitioned:
            self.partitions[table] = [f"{location}/{n}" for n, (d, _, _) in self.fs[location].items() if d]

    def put(self, path: str, size: int, mtime: int):
        parent, _, name = path.rpartition("/")
        if parent not in self.fs:
            grand, _, dname = parent.rpartition("/")
            self.fs.setdefault(grand, {})[dname] = (True, 0, 0)
            self.fs[parent] = {}
        self.fs[parent][name] = (False, size, mtime)

    # -- CatalogIO ---------------------------------------------------------------------------------
    def entries(self, tables):
        self.calls.append("entries")
        return {t: self.tables.get(t) for t in tables}

    def _list(self, d):
        return [(f"{d}/{n}", is_dir, size, mtime) for n, (is_dir, size, mtime) in sorted(self.fs[d].items())]

    def tree(self, entry):
        self.calls.append("tree")
        roots = self.partitions[entry.table] if entry.partition_columns else [entry.location]
        files, children = [], []
        todo = list(roots)
        while todo:
            d = todo.pop()
            if d not in self.fs:
                return None
            subdirs = []
            for uri, is_dir, size, mtime in self._list(d):
                name = uri.rpartition("/")[2]
                if name.startswith(("_", ".")):
                    continue
                (subdirs if is_dir else files).append(uri if is_dir else (uri, size, mtime))
            todo += subdirs
            children.append((d, tuple(sorted(subdirs))))
        watched = ()
        if entry.partition_columns:
            watched = ((entry.location, tuple(sorted(u for u, d, _, _ in self._list(entry.location)
                                                       if d and not u.rpartition("/")[2].startswith(("_", "."))))),)
        return FileTree(tuple(sorted(files)), tuple(children), watched)

    def statuses(self, dirs):
        self.calls.append("statuses")
        if any(d not in self.fs for d in dirs):
            return None
        return [(path_key(u), is_dir, n, m) for d in dirs for u, is_dir, n, m in self._list(d)]

    def view_files(self, table):
        self.calls.append("view_files")
        return (("file:/v/x", 1, 1),)


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def _world():
    io = FakeIO()
    io.add("db.orders", "file:/w/orders", {"part-0.parquet": (100, 1), "part-1.parquet": (80, 1)})
    io.add("db.lineitem", "file:/w/lineitem", {"pid=1/a.parquet": (10, 1), "pid=2/b.parquet": (20, 1)},
           partitioned=True, props={"planner.layout.sha256": "abc"})
    clock = Clock()
    return io, clock, CatalogCache(io, ttl=30.0, clock=clock)


def _query(cache, tables=("db.orders", "db.lineitem")):
    cache.begin()
    return cache.snapshots(list(tables))


def test_a_snapshot_is_the_digest_of_the_files_and_the_layout_checksum():
    io, _, cache = _world()
    snaps = _query(cache)
    want = snapshot_digest([("file:/w/orders/part-0.parquet", 100, 1), ("file:/w/orders/part-1.parquet", 80, 1)], {})
    assert snaps["db.orders"] == want
    assert snaps["db.lineitem"] == snapshot_digest([("file:/w/lineitem/pid=1/a.parquet", 10, 1),
                                                    ("file:/w/lineitem/pid=2/b.parquet", 20, 1)],
                                                   {"planner.layout.sha256": "abc"})
    assert snapshot_digest([], {"planner.layout.sha256": "x"}) != snapshot_digest([], {})


def test_a_later_query_lists_every_directory_in_one_call_and_asks_the_metastore_nothing():
    io, clock, cache = _world()
    first = _query(cache)
    assert io.calls == ["entries", "tree", "tree"]
    io.calls.clear()
    clock.now = 10
    assert _query(cache) == first
    assert io.calls == ["statuses"]
    io.calls.clear()
    cache.snapshots(["db.orders"])  # asked again in the same query: not listed again
    assert io.calls == []


def test_a_new_file_changes_the_snapshot_at_the_next_query_and_reads_the_table_again():
    io, _, cache = _world()
    before = _query(cache)
    io.put("file:/w/orders/part-2.parquet", 5, 2)  # an INSERT
    io.calls.clear()
    after = _query(cache)
    assert after["db.orders"] != before["db.orders"] and after["db.lineitem"] == before["db.lineitem"]
    assert io.calls == ["statuses", "entries", "tree"]  # the entry, in case it changed with the files
    io.calls.clear()
    assert _query(cache) == after and io.calls == ["statuses"]


def test_a_rewritten_file_a_new_size_or_time_changes_the_snapshot():
    io, _, cache = _world()
    before = _query(cache)["db.orders"]
    io.put("file:/w/orders/part-0.parquet", 100, 9)
    touched = _query(cache)["db.orders"]
    io.put("file:/w/orders/part-0.parquet", 101, 9)
    grown = _query(cache)["db.orders"]
    assert len({before, touched, grown}) == 3


def test_files_spark_skips_change_nothing():
    io, _, cache = _world()
    before = _query(cache)
    io.put("file:/w/orders/_SUCCESS", 0, 5)
    io.put("file:/w/orders/.part-0.parquet.crc", 8, 5)
    io.put("file:/w/orders/_temporary/0/x.parquet", 8, 5)  # a write in progress
    io.put("file:/w/lineitem/.hive-staging_1/y", 8, 5)
    io.calls.clear()
    assert _query(cache) == before and io.calls == ["statuses"]


def test_a_new_subdirectory_or_partition_lists_the_table_whole():
    io, _, cache = _world()
    before = _query(cache)
    io.put("file:/w/orders/sub/more.parquet", 7, 3)
    io.calls.clear()
    after = _query(cache)
    assert after["db.orders"] != before["db.orders"]
    assert io.calls == ["statuses", "entries", "tree"]
    io.put("file:/w/lineitem/pid=3/c.parquet", 5, 3)  # an INSERT into a new partition
    io.partitions["db.lineitem"].append("file:/w/lineitem/pid=3")
    io.calls.clear()
    again = _query(cache)
    assert again["db.lineitem"] != before["db.lineitem"] and io.calls == ["statuses", "entries", "tree"]
    assert "file:/w/lineitem/pid=3/c.parquet" in {f for f, _, _ in cache._tables["db.lineitem"].tree.files}


def test_a_directory_gone_lists_every_table_whole():
    io, _, cache = _world()
    before = _query(cache)
    del io.fs["file:/w/lineitem/pid=2"]  # an apply swapped in a table with other partitions
    del io.fs["file:/w/lineitem"]["pid=2"]
    io.partitions["db.lineitem"].remove("file:/w/lineitem/pid=2")
    io.calls.clear()
    after = _query(cache)
    assert after["db.lineitem"] != before["db.lineitem"] and after["db.orders"] == before["db.orders"]
    assert io.calls == ["statuses", "entries", "tree", "tree"]


def test_a_swap_that_changes_the_entry_reads_the_new_layout():
    io, _, cache = _world()
    _query(cache)
    old = cache.version("db.lineitem")
    made = []
    assert cache.derived("db.lineitem", "layout", lambda e: made.append(1) or e.properties["planner.layout.sha256"]) \
        == "abc"
    io.tables["db.lineitem"] = replace(io.tables["db.lineitem"], properties={"planner.layout.sha256": "def"})
    io.put("file:/w/lineitem/pid=1/new.parquet", 3, 4)
    snaps = _query(cache)
    assert cache.version("db.lineitem") != old
    assert cache.derived("db.lineitem", "layout", lambda e: made.append(1) or e.properties["planner.layout.sha256"]) \
        == "def"
    assert made == [1, 1]
    assert snaps["db.lineitem"] == snapshot_digest(cache._tables["db.lineitem"].tree.files,
                                                   {"planner.layout.sha256": "def"})


def test_an_entry_is_read_again_once_older_than_the_ttl():
    io, clock, cache = _world()
    _query(cache)
    v = cache.version("db.orders")
    io.tables["db.orders"] = replace(io.tables["db.orders"], columns={"a": "int", "b": "string"})  # ADD COLUMNS
    clock.now = 29
    cache.begin()
    assert dict(cache.entry("db.orders").columns) == {"a": "int"}  # within the TTL: metastore-only changes wait
    clock.now = 31
    cache.begin()
    assert dict(cache.entry("db.orders").columns) == {"a": "int", "b": "string"}
    assert cache.version("db.orders") != v


def test_an_unchanged_entry_read_again_keeps_its_version_and_files_but_a_partitioned_table_lists_its_partitions():
    io, clock, cache = _world()
    before = _query(cache)
    versions = {t: cache.version(t) for t in before}
    outside = "file:/elsewhere/pid=9"  # ADD PARTITION … LOCATION outside the table's folder
    io.fs["file:/elsewhere"] = {}
    io.put(f"{outside}/z.parquet", 4, 4)
    io.partitions["db.lineitem"].append(outside)
    clock.now = 31
    io.calls.clear()
    after = _query(cache)
    assert {t: cache.version(t) for t in before} == versions
    assert io.calls == ["entries", "statuses", "tree"]  # orders: listed again in one call; lineitem: whole
    assert after["db.orders"] == before["db.orders"] and after["db.lineitem"] != before["db.lineitem"]


def test_forget_reads_a_table_again_at_once():
    io, _, cache = _world()
    _query(cache)
    io.tables["db.orders"] = replace(io.tables["db.orders"], properties={"planner.joinranges.parts": "1"})
    cache.begin()
    assert "planner.joinranges.parts" not in cache.entry("db.orders").properties
    cache.forget("DB.Orders")
    assert cache.entry("db.orders").properties["planner.joinranges.parts"] == "1"
    cache.forget()
    io.calls.clear()
    _query(cache)
    assert io.calls == ["entries", "tree", "tree"]


def test_one_run_reads_everything_once():
    io = _world()[0]
    cache = CatalogCache(io, ttl=float("inf"), recheck=False)
    first = _query(cache)
    io.put("file:/w/orders/part-2.parquet", 5, 2)
    io.calls.clear()
    assert _query(cache) == first and io.calls == []


def test_missing_tables_and_views():
    io, _, cache = _world()
    io.tables["db.v"] = CatalogEntry("db.v", {}, {"a": "int"}, (), None, view=True)
    cache.begin()
    assert cache.snapshots(["db.nope", "db.v"]) == {"db.nope": None, "db.v": snapshot_digest([("file:/v/x", 1, 1)], {})}
    io.calls.clear()
    _query(cache, ["db.nope", "db.v"])
    assert io.calls == ["view_files"]  # a view's files: asked of Spark every query, as before


def test_files_now_compares_paths_unescaped():
    tree = FileTree((("file:/w/t/s=a%20b/x", 1, 1),), (("file:///w/t/s=a%20b/", ()),))
    assert files_now(tree, by_parent([(("file", "", "/w/t/s=a b/x"), False, 1, 1)])) == listed_form(tree.files)
    assert files_now(tree, by_parent([(("file", "", "/w/t/s=a b/x"), False, 1, 1),
                                      (("file", "", "/w/t/s=a b/new"), True, 0, 0)])) is None
    assert files_now(tree, {}) == ()  # the directory is empty now
    assert path_key("hdfs://nn:8020/w/t/") == ("hdfs", "nn:8020", "/w/t")


def test_local_directories_are_listed_as_hadoop_lists_them(tmp_path):
    import os

    (tmp_path / "a b%").mkdir()
    f = tmp_path / "a b%" / "x.parquet"
    f.write_bytes(b"1234")
    got = local_statuses([tmp_path.as_uri(), (tmp_path / "a b%").as_uri()])
    st = os.stat(f)
    assert (("file", "", str(f)), False, 4, st.st_mtime_ns // 1_000_000) in got
    assert (("file", "", str(tmp_path / "a b%")), True) in {(k, d) for k, d, _, _ in got}
    assert local_statuses([(tmp_path / "gone").as_uri()]) is None


def test_same_entry_compares_what_the_rewrite_reads():
    a = CatalogEntry("db.t", {"k": "1"}, {"a": "int"}, (), "file:/w/t")
    assert same_entry(a, replace(a, properties={"k": "1"}))
    assert not same_entry(a, replace(a, location="file:/w/t2"))
    assert not same_entry(a, replace(a, columns={"a": "bigint"}))
    assert not same_entry(a, None) and same_entry(None, None)


def test_rewrites_are_kept_by_key_the_oldest_dropped_first():
    cache = CatalogCache(FakeIO())
    made = []
    for i in range(300):
        cache.rewrite(("q", i), lambda: made.append(1) or i)
    assert cache.rewrite(("q", 299), lambda: -1) == 299
    assert cache.rewrite(("q", 0), lambda: -1) == -1
    assert len(made) == 300

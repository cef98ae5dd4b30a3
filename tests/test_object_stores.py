"""Footers and file listings where Hive tables live (issue 34): through pyarrow's file systems.

No S3-compatible server is installed here (moto is not a dependency of the project), so these use
pyarrow's own file systems as the test double: a ``SubTreeFileSystem`` over a local folder stands
in for the bucket, reached through the same ``s3://`` code path (``object_stores._open`` is the
only function replaced). What maps Hadoop's S3A settings to pyarrow's is tested on its own.
"""
from __future__ import annotations

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest

from hive_integration.spark import object_stores
from hive_integration.spark.footers import read_metadata


@pytest.fixture
def bucket(tmp_path, monkeypatch):
    """``s3://lake/…`` served from ``tmp_path/lake``; every other scheme as before."""
    real = object_stores._open
    opened = []

    def fake(uri, hadoop):
        if object_stores.kind_of(uri) == "s3":
            opened.append(object_stores.s3_options(hadoop, "lake"))
            return pafs.SubTreeFileSystem(str(tmp_path), pafs.LocalFileSystem())
        return real(uri, hadoop)

    monkeypatch.setattr(object_stores, "_open", fake)
    monkeypatch.setattr(object_stores, "_systems", {})
    monkeypatch.setattr(object_stores, "_failures", {})
    table = pa.table({"k": list(range(300)), "s": [f"v{i}" for i in range(300)]})
    for p in (1, 2):
        folder = tmp_path / "lake" / "wh" / "t" / f"p={p}"
        folder.mkdir(parents=True)
        pq.write_table(table, folder / "part-0.parquet", row_group_size=100)
    (tmp_path / "lake" / "wh" / "t" / "_SUCCESS").write_text("")
    return opened


def test_footers_of_files_on_s3_are_read_exactly(bucket):
    """Was: footers were read for ``file:`` paths alone; on S3 the table as it is was priced from
    the sample instead."""
    uris = ["s3a://lake/wh/t/p=1/part-0.parquet", "s3a://lake/wh/t/p=2/part-0.parquet"]
    metadata = read_metadata(uris, {"fs.s3a.access.key": "AK", "fs.s3a.secret.key": "SK"})
    assert [m.num_rows for m in metadata] == [300, 300]
    assert [m.num_row_groups for m in metadata] == [3, 3]
    assert bucket[0]["access_key"] == "AK" and bucket[0]["secret_key"] == "SK"


def test_a_listing_on_s3_has_sizes_and_leaves_out_spark_files(bucket):
    files = object_stores.list_files("s3a://lake/wh/t")
    assert [f[0] for f in files] == ["s3a://lake/wh/t/p=1/part-0.parquet", "s3a://lake/wh/t/p=2/part-0.parquet"]
    assert all(size > 0 for _, size, _ in files)


def test_a_file_system_that_cannot_be_opened_is_tried_once_and_falls_back():
    assert object_stores.footer("weird://x/y.parquet") is None
    assert object_stores.kind_of("hdfs://nn:8020/x") == "hdfs"


def test_s3a_settings_map_to_pyarrow_options():
    hadoop = {"fs.s3a.access.key": "AK", "fs.s3a.secret.key": "SK", "fs.s3a.endpoint": "http://127.0.0.1:9000",
              "fs.s3a.path.style.access": "true", "fs.s3a.endpoint.region": "eu-west-1",
              "fs.s3a.bucket.other.access.key": "AK2", "fs.s3a.bucket.other.secret.key": "SK2"}
    opts = object_stores.s3_options(hadoop, "lake")
    assert opts == {"access_key": "AK", "secret_key": "SK", "scheme": "http", "endpoint_override": "127.0.0.1:9000",
                    "region": "eu-west-1"}
    assert object_stores.s3_options(hadoop, "other")["access_key"] == "AK2"  # a bucket's own first
    virtual = object_stores.s3_options({"fs.s3a.endpoint": "minio.local:9000",
                                        "fs.s3a.connection.ssl.enabled": "false"})
    assert virtual == {"scheme": "http", "endpoint_override": "minio.local:9000", "force_virtual_addressing": True}

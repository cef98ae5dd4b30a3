"""Files where Hive tables live (local, HDFS, S3, Google Cloud Storage), read with pyarrow's file
systems: the Parquet footers the cost model prices "the table as it is" from, and a folder's
file listing with sizes. No Spark job and no JVM call.

Which file system a URI goes to:

    file:/…, /…            pyarrow's LocalFileSystem
    s3://, s3a://, s3n://  S3FileSystem (Hadoop's s3a is S3: the bucket is the authority)
    gs://, gcs://          GcsFileSystem (Google's default credentials: GOOGLE_APPLICATION_CREDENTIALS)
    hdfs://, viewfs://     HadoopFileSystem, through libhdfs: needs JAVA_HOME, the Hadoop jars on
                           CLASSPATH (``hadoop classpath --glob``) and ARROW_LIBHDFS_DIR
    anything else          not read (the caller falls back: the sample prices the table)

Credentials: a session's own S3A settings (``fs.s3a.access.key``, ``.secret.key``,
``.session.token``, ``.endpoint``, ``.endpoint.region``, ``.path.style.access``,
``.connection.ssl.enabled``, and their per-bucket ``fs.s3a.bucket.<b>.*`` forms: ``s3_options``)
are handed to pyarrow, so the planner reads what Spark reads with the same keys; without them
pyarrow's AWS SDK takes its default chain (``AWS_ACCESS_KEY_ID``/``AWS_SECRET_ACCESS_KEY``,
``~/.aws``, an instance profile), as S3A's default provider chain does.

A file system that cannot be opened here (no libhdfs, no credentials) is tried once per process
and URI authority: 10,000 files of a table cost one failure, not 10,000.
"""
from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Mapping, Sequence
from urllib.parse import quote, unquote, urlsplit

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

KINDS = {"": "local", "file": "local", "s3": "s3", "s3a": "s3", "s3n": "s3", "gs": "gcs", "gcs": "gcs",
         "hdfs": "hdfs", "viewfs": "hdfs"}
REMOTE_READERS = 16  # footers read at once from an object store (each is two ranged GETs)

_lock = threading.Lock()
_systems: dict[tuple, pafs.FileSystem | None] = {}
_failures: dict[tuple, str] = {}  # why a file system could not be opened, by the same key


def kind_of(uri: str) -> str | None:
    """``local``, ``s3``, ``gcs`` or ``hdfs``; None for a scheme pyarrow is not asked about."""
    return KINDS.get(urlsplit(uri).scheme.lower())


def s3_options(hadoop: Mapping[str, str], bucket: str | None = None) -> dict:
    """``pyarrow.fs.S3FileSystem`` arguments from Hadoop's S3A settings (a bucket's own first)."""
    def get(key: str) -> str | None:
        v = (hadoop.get(f"fs.s3a.bucket.{bucket}.{key}") if bucket else None) or hadoop.get(f"fs.s3a.{key}")
        return v.strip() if isinstance(v, str) and v.strip() else None

    opts: dict = {}
    access, secret = get("access.key"), get("secret.key")
    if access and secret:
        opts.update(access_key=access, secret_key=secret)
        if get("session.token"):
            opts["session_token"] = get("session.token")
    provider = get("aws.credentials.provider") or ""
    if "Anonymous" in provider:
        opts["anonymous"] = True
    endpoint = get("endpoint")
    if endpoint:
        if "://" in endpoint:
            parts = urlsplit(endpoint)
            opts["scheme"], opts["endpoint_override"] = parts.scheme, parts.netloc + parts.path.rstrip("/")
        else:
            opts["scheme"] = "http" if get("connection.ssl.enabled") == "false" else "https"
            opts["endpoint_override"] = endpoint.rstrip("/")
        if get("path.style.access") != "true":
            opts["force_virtual_addressing"] = True  # S3A's default: bucket.endpoint, not endpoint/bucket
    region = get("endpoint.region") or get("region")
    if region:
        opts["region"] = region
    return opts


def hadoop_settings(spark) -> dict[str, str]:
    """The session's Hadoop settings that ``file_system`` uses (``fs.s3a.*``, ``fs.gs.*``); {}
    when they cannot be read (Spark Connect, a stopped session)."""
    out: dict[str, str] = {}
    try:
        conf = spark._jsc.hadoopConfiguration()
        for prefix in ("fs.s3a.", "fs.gs."):
            found = conf.getPropsWithPrefix(prefix)
            for key in list(found.keySet().toArray()):
                out[prefix + str(key)] = str(found.get(key))
    except Exception:  # noqa: BLE001 - only credentials for reading footers; pyarrow's defaults stand in
        return {}
    return out


def _key(uri: str, hadoop: Mapping[str, str]) -> tuple:
    parts = urlsplit(uri)
    kind = KINDS.get(parts.scheme.lower())
    if kind == "s3":
        return kind, parts.netloc, tuple(sorted(s3_options(hadoop, parts.netloc).items()))
    return kind, parts.netloc


def _open(uri: str, hadoop: Mapping[str, str]) -> pafs.FileSystem:
    parts = urlsplit(uri)
    kind = KINDS.get(parts.scheme.lower())
    if kind == "local":
        return pafs.LocalFileSystem()
    if kind == "s3":
        return pafs.S3FileSystem(**s3_options(hadoop, parts.netloc))
    if kind == "gcs":
        return pafs.GcsFileSystem()
    if kind == "hdfs":
        host, _, port = parts.netloc.rpartition(":") if ":" in parts.netloc else (parts.netloc, "", "")
        return pafs.HadoopFileSystem(host or "default", int(port) if port.isdigit() else 0)
    raise OSError(f"no pyarrow file system for {parts.scheme}://")


def file_system(uri: str, hadoop: Mapping[str, str] | None = None) -> tuple[pafs.FileSystem, str] | None:
    """The file system holding ``uri`` and the path in it; None where it cannot be read here
    (``failure`` says why)."""
    hadoop = hadoop or {}
    if kind_of(uri) is None:
        return None
    key = _key(uri, hadoop)
    with _lock:
        if key not in _systems:
            try:
                _systems[key] = _open(uri, hadoop)
            except (OSError, pa.ArrowException, ValueError) as e:
                _systems[key] = None
                _failures[key] = str(e).splitlines()[0][:200] if str(e) else type(e).__name__
        fs = _systems[key]
    return None if fs is None else (fs, path_in(uri))


def failure(uri: str, hadoop: Mapping[str, str] | None = None) -> str | None:
    """Why ``uri``'s file system could not be opened (None: it was, or it was never tried)."""
    return _failures.get(_key(uri, hadoop or {}))


def path_in(uri: str) -> str:
    """The path pyarrow's file system takes for ``uri``: a local path, or ``bucket/key``."""
    parts = urlsplit(uri)
    if KINDS.get(parts.scheme.lower()) == "local":
        return unquote(parts.path)
    if KINDS.get(parts.scheme.lower()) == "hdfs":
        return unquote(parts.path)
    return f"{parts.netloc}{unquote(parts.path)}"


def footer(uri: str, hadoop: Mapping[str, str] | None = None) -> pq.FileMetaData | None:
    """The Parquet footer of ``uri`` (None: not readable here, or not a Parquet file). Only the
    file's tail is read: two ranged reads on an object store."""
    found = file_system(uri, hadoop)
    if found is None:
        return None
    fs, path = found
    try:
        with fs.open_input_file(path) as f:
            return pq.ParquetFile(f).metadata
    except (OSError, pa.ArrowException):
        return None


def footers(uris: Sequence[str], hadoop: Mapping[str, str] | None = None) -> list[pq.FileMetaData | None]:
    """``footer`` of each of ``uris``, in their order; those on object stores read in parallel."""
    if all(kind_of(u) == "local" for u in uris) or len(uris) < 2:
        return [footer(u, hadoop) for u in uris]
    with ThreadPoolExecutor(max_workers=REMOTE_READERS) as pool:
        return list(pool.map(lambda u: footer(u, hadoop), uris))


def uri_of(location: str, path: str) -> str:
    """The URI, in ``location``'s form (its scheme and authority), of ``path`` as the file system of
    ``location`` (``file_system``) names it: a local or HDFS path, or ``bucket/key``."""
    parts = urlsplit(location)
    prefix = f"{parts.scheme}://{parts.netloc}" if parts.netloc else (f"{parts.scheme}:" if parts.scheme else "")
    if kind_of(location) in ("s3", "gcs") and path.startswith(parts.netloc):
        path = path[len(parts.netloc):]
    path = path if path.startswith("/") else "/" + path
    return prefix + quote(path, safe=URI_SAFE)


URI_SAFE = "/=:@-._~!$&'()*+,;"  # what a path keeps unescaped in a URI (Hadoop's ``Path.toUri()``)


def list_dir(location: str, hadoop: Mapping[str, str] | None = None) -> list[tuple[str, bool, int, int]] | None:
    """The entries of one directory (URI, directory?, bytes, modification time in ms), unsorted;
    None: it is gone, or its file system cannot be read here."""
    found = file_system(location, hadoop)
    if found is None:
        return None
    fs, path = found
    try:
        infos = fs.get_file_info(pafs.FileSelector(path.rstrip("/") or "/", recursive=False))
    except (OSError, pa.ArrowException):  # FileNotFoundError included: the directory is gone
        return None
    return [(uri_of(location, i.path), i.type == pafs.FileType.Directory, int(i.size or 0),
             int(i.mtime_ns // 1_000_000) if i.mtime_ns is not None else 0)
            for i in infos if i.type in (pafs.FileType.File, pafs.FileType.Directory)]


def list_files(location: str, hadoop: Mapping[str, str] | None = None,
               skip=None) -> list[tuple[str, int, int]] | None:
    """(URI, bytes, modification time in ms) of every file under ``location``, subfolders included,
    sorted; names ``skip(name)`` rejects (Spark's hidden files, by default) are left out, with what
    lies beneath them. None: the file system cannot be read here."""
    if skip is None:
        from hive_integration.spark.catalog import spark_skips as skip
    found = file_system(location, hadoop)
    if found is None:
        return None
    fs, root = found
    base = root.rstrip("/")
    out = []
    for info in fs.get_file_info(pafs.FileSelector(base, recursive=True, allow_not_found=True)):
        if info.type != pafs.FileType.File:
            continue
        relative = info.path[len(base):].lstrip("/")
        if any(skip(name) for name in relative.split("/")):
            continue
        mtime = int(info.mtime_ns // 1_000_000) if info.mtime_ns is not None else 0
        out.append((uri_of(location, info.path), int(info.size), mtime))
    return sorted(out)


__all__ = ["KINDS", "URI_SAFE", "failure", "file_system", "footer", "footers", "hadoop_settings", "kind_of", "list_dir",
           "list_files", "path_in", "s3_options", "uri_of"]

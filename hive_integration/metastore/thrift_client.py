"""Read-only questions to a Hive Metastore over thrift, with errors made readable.

Why a wrapper: the planner needs a handful of facts (schema, partition columns,
partition names, table parameters) and must turn thrift's exceptions into one
``MetastoreError`` that names the table.  We use pymetastore only for its
generated thrift bindings (the raw ``ThriftHiveMetastore.Client``), because:

- pymetastore 0.4.2's ``HMS.get_partitions()`` fails with an AssertionError on
  ``catName``, which Hive 2.3 does not send; the raw ``get_partitions(db, tbl, -1)``
  and ``get_partition_names`` work.
- after a failed call the connection may be left mid-message, so we reconnect
  before the next call rather than reuse it.
- pymetastore's own connection has no socket timeout; a wedged server would hang
  us forever, so we open the same transport ourselves with a timeout.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlparse

from pymetastore.hive_metastore import ThriftHiveMetastore
from pymetastore.hive_metastore.ttypes import NoSuchObjectException, UnknownDBException
from thrift.protocol.TBinaryProtocol import TBinaryProtocol
from thrift.Thrift import TException
from thrift.transport import TSocket, TTransport

from planner.errors import MetastoreError


@dataclass(frozen=True)
class PartitionInfo:
    """One partition as the metastore records it (``parameters`` hold numFiles/totalSize).

    ``name`` is built from the raw values (``day=2024-01-01``); unlike
    ``partition_names`` it is not path-escaped.
    """

    name: str
    values: tuple[str, ...]
    location: str
    parameters: dict


def parse_uri(uri_or_host: str, port: int | None = None) -> tuple[str, int]:
    """``thrift://h:p`` or ``(host, port)`` -> ``(host, port)``."""
    if port is not None:
        return uri_or_host, int(port)
    parsed = urlparse(uri_or_host)
    if parsed.scheme != "thrift" or not parsed.hostname or not parsed.port:
        raise MetastoreError(f"not a metastore uri (want thrift://host:port): {uri_or_host!r}")
    return parsed.hostname, parsed.port


def _message(exc: Exception) -> str:
    return getattr(exc, "message", None) or str(exc) or type(exc).__name__


class MetastoreClient:
    """Context manager: ``with MetastoreClient("thrift://127.0.0.1:9083") as ms: ...``."""

    def __init__(self, uri_or_host: str, port: int | None = None, *, timeout: float = 30.0):
        self.host, self.port = parse_uri(uri_or_host, port)
        self.timeout = timeout
        self._transport = None
        self._client = None

    # -- connection ----------------------------------------------------------
    def open(self) -> "MetastoreClient":
        sock = TSocket.TSocket(self.host, self.port)
        sock.setTimeout(int(self.timeout * 1000))
        transport = TTransport.TBufferedTransport(sock)
        try:
            transport.open()
        except TException as e:
            raise MetastoreError(
                f"cannot connect to metastore {self.host}:{self.port}: {_message(e)}"
            ) from e
        self._transport = transport
        self._client = ThriftHiveMetastore.Client(TBinaryProtocol(transport))
        return self

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()
        self._transport = self._client = None

    def __enter__(self) -> "MetastoreClient":
        return self.open()

    def __exit__(self, *exc) -> None:
        self.close()

    def _call(self, what: str, method: str, *args):
        """Run one raw thrift call; translate failures and reset the connection."""
        if self._client is None:
            self.open()
        try:
            return getattr(self._client, method)(*args)
        except (NoSuchObjectException, UnknownDBException) as e:
            self.close()
            raise MetastoreError(f"{what}: not found ({_message(e)})") from e
        except (TException, OSError) as e:
            self.close()
            raise MetastoreError(f"{what}: metastore call {method} failed: {_message(e)}") from e

    def _table(self, db: str, table: str):
        return self._call(f"table {db}.{table}", "get_table", db, table)

    def table_or_none(self, db: str, table: str):
        """The table's metastore object; None when the database or the table does not exist."""
        try:
            return self._table(db, table)
        except MetastoreError as e:
            if isinstance(e.__cause__, (NoSuchObjectException, UnknownDBException)):
                return None
            raise

    # -- questions -----------------------------------------------------------
    def list_databases(self) -> list[str]:
        return list(self._call("list databases", "get_all_databases"))

    def list_tables(self, db: str) -> list[str]:
        return list(self._call(f"database {db}", "get_all_tables", db))

    def table_exists(self, db: str, table: str) -> bool:
        return self.table_or_none(db, table) is not None

    def table_info(self, db: str, table: str) -> tuple[dict[str, str], list[tuple[str, str]]] | None:
        """(parameters, data columns as (name, Hive type)) of a table in one call; None when there is no such table."""
        t = self.table_or_none(db, table)
        if t is None:
            return None
        return dict(t.parameters or {}), [(c.name, c.type) for c in (t.sd.cols if t.sd else None) or []]

    def table_parameters(self, db: str, table: str) -> dict[str, str]:
        return dict(self._table(db, table).parameters or {})

    def view_text(self, db: str, table: str) -> str | None:
        """The SQL of a view (Hive's expanded text, names qualified); None for a table or no such name."""
        t = self.table_or_none(db, table)
        if t is None or (t.tableType or "").upper() != "VIRTUAL_VIEW":
            return None
        return t.viewExpandedText or t.viewOriginalText or None

    def table_location(self, db: str, table: str) -> str:
        return self._table(db, table).sd.location

    def columns(self, db: str, table: str) -> list[tuple[str, str]]:
        """Data columns (name, Hive type), partition columns excluded."""
        return [(c.name, c.type) for c in self._table(db, table).sd.cols or []]

    def partition_columns(self, db: str, table: str) -> list[tuple[str, str]]:
        return [(c.name, c.type) for c in self._table(db, table).partitionKeys or []]

    def partition_names(self, db: str, table: str) -> list[str]:
        """``["p=1/q=a", ...]`` (values escaped as in the directory names)."""
        return list(self._call(f"table {db}.{table}", "get_partition_names", db, table, -1))

    def partition_locations(self, db: str, table: str) -> list[str]:
        """Where each partition's files are, in one call."""
        return [p.sd.location for p in self._call(f"table {db}.{table}", "get_partitions", db, table, -1)]

    def partitions(self, db: str, table: str) -> list[PartitionInfo]:
        keys = [name for name, _ in self.partition_columns(db, table)]
        raw = self._call(f"table {db}.{table}", "get_partitions", db, table, -1)
        return [
            PartitionInfo(
                name="/".join(f"{k}={v}" for k, v in zip(keys, p.values)),
                values=tuple(p.values),
                location=p.sd.location,
                parameters=dict(p.parameters or {}),
            )
            for p in raw
        ]

"""Run SQL on a HiveServer2 endpoint (e.g. the Spark Thrift Server) through pyhive.

Why: applying a plan on a shared cluster means sending DDL/DML to HiveServer2,
not to our in-process Spark.  This wrapper gives statements-in, tuples-out and
turns pyhive/thrift failures into ``PlannerError``s that quote the statement.

Traps:
- ``auth`` must match the server: ``NOSASL`` against
  ``hive.server2.authentication=NOSASL`` (what SparkThriftServer starts);
  ``NONE`` with a username against the default SASL PLAIN.  A mismatch shows up
  only as ``TSocket read 0 bytes``, so the error says which mode was tried.
- ``LDAP`` and ``CUSTOM`` both send the user and password as SASL PLAIN (the server
  cannot tell them apart); pyhive wants a password with them and only with them.  A
  wrong password comes back as ``Bad status: 3 (b'Error validating the login')`` from
  the connect itself; the server's log has the reason.  ``KERBEROS`` needs a ticket
  (``kinit``) and the ``kerberos`` module for pure-sasl's GSSAPI.
- A statement without a result set (DDL, INSERT) has ``cursor.description is
  None``; calling ``fetchall()`` on it raises, so we return ``[]`` instead.
- Each session keeps its own ``SET`` values (e.g. ``hive.exec.dynamic.partition``);
  send them with ``execute_many`` on the same client, not on a fresh one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from pyhive import exc as pyhive_exc
from pyhive import hive
from thrift.Thrift import TException

from planner.errors import ApplyError, MetastoreError


def _short(sql: str, limit: int = 500) -> str:
    sql = " ".join(sql.split())
    return sql if len(sql) <= limit else sql[: limit - 3] + "..."


_NOISE = re.compile(r"^Error running query: |\borg\.apache\.[\w.$]+(Exception|Error): ")


def _reason(exc: Exception) -> str:
    """The server's message, without the Java class names and the dumped plan.

    pyhive wraps it in a thrift status struct.  Spark's messages run on with the
    unresolved plan (lines starting ``'`` or ``+-``) and an ``== SQL ==`` echo of
    the statement, which we quote ourselves, so only the lines before those stay.
    """
    args = getattr(exc, "args", ())
    if args and hasattr(args[0], "status") and getattr(args[0].status, "errorMessage", None):
        kept = []
        for line in args[0].status.errorMessage.splitlines():
            if line.startswith(("==", "'", "+-", ":-")):
                break
            line = _NOISE.sub("", line).strip()
            if line and line not in kept:
                kept.append(line)
        # "[CODE] org...Exception: [CODE] text" -> "[CODE] text"
        return re.sub(r"(\[\w+\])\s+\1", r"\1", " ".join(kept))
    return str(exc) or type(exc).__name__


def login_failure(host: str, port: int, auth: str, user: str | None, exc: BaseException) -> str:
    """One line saying why HiveServer2 ``host:port`` could not be logged in to with ``auth``."""
    text = _reason(exc) if isinstance(exc, Exception) else str(exc)
    where = f"HiveServer2 {host}:{port}"
    if "Error validating the login" in text or "Bad status: 3" in text:
        who = f" of {user}" if user else ""
        if auth in ("LDAP", "CUSTOM"):
            return f"{where} refused the login{who} (auth={auth}): wrong user or password"
        return (f"{where} refused the login{who} (auth={auth}): it checks passwords; give --hs2-auth LDAP "
                "(or CUSTOM) and the password")
    if "read 0 bytes" in text:
        return (f"cannot log in to {where} with auth={auth}: the server closed the connection, which is what "
                "a server expecting another authentication does; give its hive.server2.authentication as "
                "--hs2-auth (Hive's default is NONE)")
    if isinstance(exc, ImportError):
        return f"cannot log in to {where} with auth={auth}: {exc} (KERBEROS needs the kerberos module and a ticket)"
    return f"cannot connect to {where} (auth={auth}): {text}"


class HiveServer2Client:
    """``with HiveServer2Client("127.0.0.1", port) as hs2: hs2.execute("SELECT 1")``."""

    def __init__(self, host: str, port: int, *, database: str = "default",
                 auth: str = "NOSASL", username: str | None = None, password: str | None = None,
                 kerberos_service_name: str | None = None):
        self.host, self.port, self.database = host, int(port), database
        self.auth, self.username = auth.upper(), username
        self._password, self.kerberos_service_name = password, kerberos_service_name
        self._conn = None

    def open(self) -> "HiveServer2Client":
        secure = self.auth in ("LDAP", "CUSTOM")
        try:
            self._conn = hive.connect(
                self.host, self.port, database=self.database,
                auth=self.auth, username=self.username,
                password=self._password if secure else None,
                kerberos_service_name=self.kerberos_service_name if self.auth == "KERBEROS" else None,
            )
        except (TException, OSError, pyhive_exc.Error, ImportError) as e:
            raise MetastoreError(login_failure(self.host, self.port, self.auth, self.username, e)) from e
        return self

    def close(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            except (TException, OSError, pyhive_exc.Error):
                pass  # closing a broken session: nothing left to save
        self._conn = None

    def __enter__(self) -> "HiveServer2Client":
        return self.open()

    def __exit__(self, *exc) -> None:
        self.close()

    def execute(self, sql: str) -> list[tuple]:
        """Run one statement; its rows (``[]`` for DDL/DML)."""
        if self._conn is None:
            self.open()
        cursor = self._conn.cursor()
        try:
            cursor.execute(sql)
            if cursor.description is None:
                return []
            return [tuple(row) for row in cursor.fetchall()]
        except (pyhive_exc.Error, TException, OSError) as e:
            raise ApplyError(f"HiveServer2 failed on `{_short(sql)}`: {_reason(e)}") from e
        finally:
            try:
                cursor.close()
            except (pyhive_exc.Error, TException, OSError):
                pass

    def execute_many(self, statements: Iterable[str]) -> list[list[tuple]]:
        """Run statements in order on this session; stop at the first failure."""
        results = []
        for number, sql in enumerate(statements, start=1):
            try:
                results.append(self.execute(sql))
            except ApplyError as e:
                raise ApplyError(f"statement {number}: {e}") from e.__cause__
        return results

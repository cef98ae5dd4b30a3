"""A workload read from Spark event logs (``spark.eventLog.enabled``, ``spark.eventLog.dir``).

What Spark 4.3 writes, and what is taken from it:

* The Thrift Server (HiveServer2, beeline, JDBC/ODBC clients) posts
  ``SparkListenerThriftServerOperationStart`` with the statement's text, its session and start
  time. Every statement is kept, in order per session, so ``USE db`` still decides where the
  session's unqualified names live.
* ``SparkListenerSQLExecutionStart`` is posted for every execution. Its ``description`` is the SQL
  text when the client set it as the job description (the Thrift Server, ``spark-sql``, or an
  application calling ``setJobDescription``); executions of a Thrift Server statement share its
  ``jobGroupId`` and are not counted twice. For ``spark.sql(…)`` and DataFrame calls from an
  application, Spark 4.3 records no SQL text, only the call site (``collect at app.py:12``) and
  the physical plan: the query is rebuilt from the plan's scans, each table with the filters
  Spark pushed into its scan (``PushedFilters``, typed by the scan's ``ReadSchema``):

      SELECT … FROM db.t AS s1, db.u AS s2 WHERE s1.a > 1 AND s2.b = 'x'

  A pushed filter whose text cannot be read back is left out (a missing filter means "might read
  more"). Spark prints string values unquoted, so a value holding ``,`` reads as two IN values:
  the workload then asks for slightly different rows, which can make the advice less apt but
  never loses a row (queries are pruned by their own text when they run, not by this one).
* Only root executions count (``executionId == rootExecutionId``): nested ones belong to them.

Files: ``eventlog_v2_<app>/events_<n>_<app>[.zstd]`` (rolling logs, Spark's default) and
single ``<app>[.zstd][.inprogress]`` files; zstd (Spark's default codec) and uncompressed are read,
other codecs are refused with a message naming the setting to change. A half-written last line of
an ``.inprogress`` log is ignored.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable, Iterator

from sqlglot import exp

from planner.errors import Location, WorkloadError

THRIFT_START = "org.apache.spark.sql.hive.thriftserver.ui.SparkListenerThriftServerOperationStart"
SQL_START = "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart"
_CALL_SITE = re.compile(r"^\S+ at \S+:\d+$")
_SQL_START = re.compile(r"^\s*(\(|SELECT|WITH|FROM|INSERT|CREATE|EXPLAIN|UPDATE|DELETE|MERGE|USE|VALUES)\b", re.I)
_READABLE_CODECS = ("", "zstd")


@dataclass(frozen=True)
class Execution:
    """One statement run by Spark: when, in which session, and its SQL text."""

    time: datetime
    session: str
    sql: str
    source: str  # "thrift", "description" (the job description) or "plan" (rebuilt from the scans)


@dataclass
class EventLogSummary:
    files: int = 0
    executions: int = 0  # root executions and Thrift Server statements seen
    by_source: dict[str, int] = field(default_factory=dict)
    outside_window: int = 0
    below_min_count: int = 0
    without_scans: int = 0  # executions with no SQL text and no table scan (commands, local data)


def event_log_files(directory: str | Path) -> list[Path]:
    """The event log files under ``directory`` (itself a file, an app folder, or a log dir)."""
    root = Path(directory)
    if root.is_file():
        return [root]
    files = []
    for p in sorted(root.rglob("*")):
        if p.is_file() and not p.name.startswith(".") and not p.name.startswith("appstatus_") \
                and not p.name.endswith(".crc"):
            files.append(p)
    return files


def _codec(path: Path) -> str:
    name = path.name.removesuffix(".inprogress")
    suffix = name.rsplit(".", 1)[-1] if "." in name else ""
    return suffix if suffix in ("zstd", "lz4", "lzf", "snappy") else ""


def _lines(path: Path) -> Iterator[str]:
    codec = _codec(path)
    if codec not in _READABLE_CODECS:
        raise WorkloadError(f"the event log is compressed with {codec}, which the planner cannot read; set "
                            "spark.eventLog.compression.codec=zstd (Spark's default) or "
                            "spark.eventLog.compress=false", Location(str(path)))
    try:
        if codec == "zstd":
            import pyarrow as pa  # only here: the default CLI path never needs it

            with pa.CompressedInputStream(pa.OSFile(str(path)), "zstd") as stream:
                data = stream.read()
        else:
            data = path.read_bytes()
    except OSError as e:
        raise WorkloadError(f"cannot read the event log: {e}", Location(str(path))) from None
    except Exception as e:  # noqa: BLE001 - pyarrow raises its own ArrowInvalid for a truncated frame
        raise WorkloadError(f"cannot decompress the event log: {e}", Location(str(path))) from None
    yield from data.decode("utf-8", errors="replace").splitlines()


def _events(path: Path) -> Iterator[dict]:
    lines = list(_lines(path))
    for i, line in enumerate(lines):
        if '"Event"' not in line:
            continue
        try:
            yield json.loads(line)
        except json.JSONDecodeError:
            if i == len(lines) - 1:
                return  # the half-written end of a log still being written
            raise WorkloadError(f"line {i + 1} is not a Spark event (not JSON)", Location(str(path))) from None


def _time(ms) -> datetime:
    return datetime.fromtimestamp(int(ms) / 1000, tz=timezone.utc)


def read_executions(directory: str | Path, summary: EventLogSummary | None = None) -> list[Execution]:
    """Every statement of every application logged under ``directory``, in time order."""
    summary = summary if summary is not None else EventLogSummary()
    files = event_log_files(directory)
    if not files:
        raise WorkloadError("no Spark event logs found (is spark.eventLog.dir this folder?)", Location(str(directory)))
    out: list[Execution] = []
    for path in files:
        summary.files += 1
        thrift_groups: set[str] = set()
        pending: list[dict] = []
        for e in _events(path):
            kind = e.get("Event")
            if kind == THRIFT_START and e.get("statement"):
                thrift_groups.add(str(e.get("groupId") or e.get("id")))
                out.append(Execution(_time(e.get("startTime", 0)), f"{path.name}:{e.get('sessionId')}",
                                     e["statement"], "thrift"))
            elif kind == SQL_START:
                pending.append(e)
        for e in pending:  # after the whole file: a Thrift statement's group is known by then
            root = e.get("rootExecutionId", e.get("executionId"))
            if str(root) != str(e.get("executionId")) or str(e.get("jobGroupId")) in thrift_groups:
                continue
            text = _statement_text(e)
            if text is None:
                summary.without_scans += 1
                continue
            out.append(Execution(_time(e.get("time", 0)), f"{path.name}:app", text[0], text[1]))
    summary.executions += len(out)
    for x in out:
        summary.by_source[x.source] = summary.by_source.get(x.source, 0) + 1
    return sorted(out, key=lambda x: x.time)


def _statement_text(event: dict) -> tuple[str, str] | None:
    description = (event.get("description") or "").strip()
    if description and not _CALL_SITE.match(description) and _SQL_START.match(description):
        return description, "description"
    plan = event.get("sparkPlanInfo")
    select = plan_query(plan) if isinstance(plan, dict) else None
    return (select.sql(dialect="spark"), "plan") if select is not None else None


@dataclass(frozen=True)
class EventWindow:
    """Which executions of the event logs make the workload: started in [since, until), the
    ``last`` of them (the most recent queries: a sliding window, as ``planner relayout`` run on a
    schedule wants), and only query shapes run at least ``min_count`` times among those."""
    since: datetime | None = None
    until: datetime | None = None
    min_count: int = 1
    last: int | None = None

    @property
    def narrowed(self) -> bool:
        return bool(self.since or self.until or self.min_count > 1 or self.last)


def workload_text(executions: Iterable[Execution], window: EventWindow = EventWindow(), *, dialect: str = "hive",
                  summary: EventLogSummary | None = None) -> str:
    """The executions as a workload file: statements in time order (``USE`` put back where a
    session's database differs from the previous statement's), inside the ``window``."""
    from planner.workload.statements import split_statements, template_name

    summary = summary if summary is not None else EventLogSummary()
    kept = []
    for x in executions:
        if (window.since and x.time < window.since) or (window.until and x.time >= window.until):
            summary.outside_window += 1
            continue
        kept.append(x)
    if window.last is not None:  # the most recent queries; every USE stays, to name their databases
        queries = [i for i, x in enumerate(kept) if _use_target(x.sql) is None]
        older = set(queries[:max(0, len(queries) - window.last)])
        summary.outside_window += len(older)
        kept = [x for i, x in enumerate(kept) if i not in older]
    shapes: dict[int, str] = {}
    counts: dict[str, int] = {}
    for i, x in enumerate(kept):
        try:
            stmts = list(split_statements(x.sql, "<event log>", dialect))
        except WorkloadError:
            stmts = []
        shape = template_name((), stmts[0].tokens) if len(stmts) == 1 and stmts[0].tokens else x.sql
        shapes[i] = shape
        counts[shape] = counts.get(shape, 0) + 1
    parts: list[str] = []
    session_db: dict[str, str] = {}
    current = None
    for i, x in enumerate(kept):
        use = _use_target(x.sql)
        if use is not None:
            session_db[x.session] = use
            continue
        if counts[shapes[i]] < window.min_count:
            summary.below_min_count += 1
            continue
        db = session_db.get(x.session)
        if db is not None and db != current:
            parts.append(exp.Use(this=exp.to_identifier(db)).sql(dialect=dialect))
            current = db
        parts.append(x.sql.strip().rstrip(";"))
    return "".join(p + "\n;\n" for p in parts)


_USE = re.compile(r"^\s*USE\s+(?:`([^`]+)`|(\w+))\s*;?\s*$", re.I)


def _use_target(sql: str) -> str | None:
    m = _USE.match(sql)
    return (m.group(1) or m.group(2)).lower() if m else None


# ---- a query rebuilt from a physical plan --------------------------------------------------------
_SCAN = re.compile(r"^Scan (?:\w+ )?(?P<table>[\w.`]+)$")


def plan_query(plan: dict) -> exp.Select | None:
    """``SELECT <columns read> FROM <every table scanned> WHERE <filters pushed into each scan>``."""
    scans = []
    stack = [plan]
    while stack:
        node = stack.pop()
        m = _SCAN.match(node.get("nodeName", ""))
        meta = node.get("metadata") or {}
        if m and "ReadSchema" in meta:
            scans.append((m.group("table"), meta))
        stack.extend(reversed(node.get("children") or []))
    if not scans:
        return None
    select = exp.Select()
    conditions: list[exp.Expression] = []
    for i, (table, meta) in enumerate(scans, 1):
        alias = f"s{i}"
        parts = [p.strip("`") for p in table.split(".")]
        if len(parts) > 2:  # spark_catalog.db.t
            parts = parts[-2:]
        ref = exp.table_(exp.to_identifier(parts[-1]), db=exp.to_identifier(parts[0]) if len(parts) == 2 else None,
                         alias=alias)
        if i == 1:
            select = select.from_(ref, copy=False)
        else:
            select = select.join(ref, join_type="cross", copy=False)
        types = read_schema(meta.get("ReadSchema", ""))
        cols = [exp.column(exp.to_identifier(c, quoted=True), table=alias) for c in types] or [exp.Star()]
        select = select.select(*cols, copy=False)
        for f in _filter_list(meta.get("PushedFilters", "")):
            cond = pushed_filter(f, types, alias)
            if cond is not None:
                conditions.append(cond)
    if conditions:
        select = select.where(exp.and_(*conditions, copy=False), copy=False)
    return select


def read_schema(text: str) -> dict[str, str]:
    """``struct<a:int,b:decimal(15,2),c:string>`` -> ``{"a": "int", …}`` (nested types kept whole)."""
    text = text.strip()
    if not text.startswith("struct<") or not text.endswith(">"):
        return {}
    out: dict[str, str] = {}
    for field_ in _split_top(text[len("struct<"):-1], ","):
        name, sep, type_ = field_.partition(":")
        if sep:
            out[name.strip().strip("`")] = type_.strip().lower()
    return out


def _split_top(text: str, sep: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c in "<([":
            depth += 1
        elif c in ">)]":
            depth -= 1
        elif c == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p for p in parts if p.strip()]


def _filter_list(text: str) -> list[str]:
    text = text.strip()
    if not text.startswith("[") or not text.endswith("]"):
        return []
    return [p.strip() for p in _split_top(text[1:-1], ",")]


_COMPARE = {"EqualTo": exp.EQ, "EqualNullSafe": exp.NullSafeEQ, "GreaterThan": exp.GT,
            "GreaterThanOrEqual": exp.GTE, "LessThan": exp.LT, "LessThanOrEqual": exp.LTE}
_LIKE = {"StringStartsWith": "{}%", "StringEndsWith": "%{}", "StringContains": "%{}%"}


def pushed_filter(text: str, types: dict[str, str], alias: str) -> exp.Expression | None:
    """A Spark data source filter's text (``GreaterThan(a,1)``, ``In(b, [x,y])``, ``And(…,…)``) as
    a SQL condition on ``alias``, or None when it cannot be read back unambiguously."""
    m = re.fullmatch(r"(\w+)\((.*)\)", text.strip(), re.S)
    if not m:
        return None
    name, body = m.groups()
    if name in ("And", "Or"):
        parts = _split_top(body, ",")
        if len(parts) != 2:
            return None
        left, right = (pushed_filter(p, types, alias) for p in parts)
        if left is None or right is None:
            return None
        return (exp.and_ if name == "And" else exp.or_)(left, right, copy=False)
    if name == "Not":
        inner = pushed_filter(body, types, alias)
        return None if inner is None else exp.Not(this=exp.paren(inner, copy=False))
    if name in ("IsNull", "IsNotNull"):
        col = _column(body, types, alias)
        if col is None:
            return None
        test = exp.Is(this=col, expression=exp.Null())
        return test if name == "IsNull" else exp.Not(this=test)
    if name == "In":
        attr, sep, values = body.partition(", [")
        col = _column(attr, types, alias)
        if col is None or not sep or not values.endswith("]") or not values[:-1]:
            return None
        literals = [_literal(v, types[attr.strip()]) for v in values[:-1].split(",")]
        return None if any(v is None for v in literals) else exp.In(this=col, expressions=literals)
    if name in _COMPARE or name in _LIKE:
        attr, sep, value = body.partition(",")
        col = _column(attr, types, alias)
        if col is None or not sep:
            return None
        kind = types[attr.strip()]
        if name in _LIKE:
            if kind != "string" or any(c in value for c in "%_\\"):
                return None
            return exp.Like(this=col, expression=exp.Literal.string(_LIKE[name].format(value)))
        lit = _literal(value, kind)
        return None if lit is None else _COMPARE[name](this=col, expression=lit)
    return None


def _column(text: str, types: dict[str, str], alias: str) -> exp.Column | None:
    name = text.strip()
    if name not in types:
        return None  # a nested field or a column the schema does not list
    return exp.column(exp.to_identifier(name, quoted=True), table=alias)


_NUMERIC = re.compile(r"-?\d+(\.\d+)?([eE][-+]?\d+)?")


def _literal(value: str, kind: str) -> exp.Expression | None:
    if value == "null":
        return None
    if kind in ("string",) or kind.startswith(("varchar", "char")):
        return exp.Literal.string(value)
    if kind == "date":
        return exp.cast(exp.Literal.string(value), exp.DataType.build("DATE")) if re.fullmatch(
            r"\d{4}-\d{2}-\d{2}", value) else None
    if kind.startswith("timestamp"):
        return exp.cast(exp.Literal.string(value), exp.DataType.build("TIMESTAMP")) if re.fullmatch(
            r"\d{4}-\d{2}-\d{2}[ T][\d:.]+", value) else None
    if kind == "boolean":
        return exp.Boolean(this=value == "true") if value in ("true", "false") else None
    if kind in ("tinyint", "smallint", "int", "bigint", "float", "double") or kind.startswith("decimal"):
        return exp.Literal.number(value) if _NUMERIC.fullmatch(value) else None
    return None

"""Read a workload file: split it into statements, parse them, keep the queries.

    statements.py  the file -> numbered statements (Hive CLI commands recognised, never parsed)
    parse.py       a statement -> a query, a view, ``USE db`` or a skip (EXPLAIN, CTAS, INSERT,
                   FROM-first multi-insert unwrapped)
    views.py       views defined earlier (or in a metastore) replaced by their definitions
    pushdown.py    filters on derived tables pushed into them
    scans.py       every base-table scan of a query and the predicate that filters it

Skipped statements (SET, USE, DDL, DESCRIBE, dfs, …) are counted by kind (``USE db`` still changes
the database that unqualified table names belong to). No query is lost silently: a statement that
holds a SELECT becomes a ``Query``, with a note when it reads no table, and a view that no query of
the file reads counts as a query of its own.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterable, Iterator

from sqlglot import exp

from planner.cnf.ir import TRUE, Expr
from planner.errors import InputError, Location, SchemaError, WorkloadError
from planner.workload.parse import Parsed, classify
from planner.workload.pushdown import has_derived_sources, push_into_derived
from planner.workload.scans import Schema, iter_scans, table_name
from planner.workload.statements import Statement, comment_name, first_line, split_statements, template_name
from planner.workload.views import ViewLookup, Views

DIALECTS = ("hive", "spark")


@dataclass(frozen=True)
class Scan:
    table: str
    alias: str
    predicate: Expr
    columns: frozenset[str] | None = None  # None: every column (SELECT *)
    induced: tuple = ()  # planner.workload.joins.InducedPredicate: filters of joined tables, through inner equi-joins


@dataclass(frozen=True)
class Query:
    number: int  # statement number in the file, 1-based
    line: int
    sql: str
    template: str
    scans: tuple[Scan, ...]
    notes: tuple[str, ...] = ()
    name: str = ""  # the comment right above the statement, if any

    @property
    def label(self) -> str:
        """How reports name the query: its statement number and its name, else its first line
        (``template`` is a key for grouping, a hash where no comment names the statement)."""
        return f"statement {self.number} ({self.name or first_line(self.sql)})"


@dataclass(frozen=True)
class Workload:
    path: str
    dialect: str
    queries: tuple[Query, ...]
    skipped: tuple[tuple[str, int], ...] = ()  # (reason, count)
    errors: tuple[str, ...] = ()  # statements skipped under --on-error skip
    views: tuple[str, ...] = ()  # views followed into the queries that read them

    def tables(self) -> list[str]:
        return sorted({s.table for q in self.queries for s in q.scans})

    def fingerprint(self) -> str:
        h = hashlib.sha256()
        for q in self.queries:
            h.update(q.sql.encode())
            h.update(b"\0")
        return h.hexdigest()[:16]


def read_workload(path: str | Path, *, dialect: str = "hive", schema: Schema | None = None,
                  on_error: str = "fail", database: str | None = None,
                  tables: Iterable[str] | None = None, views: ViewLookup | None = None, joins: bool = True) -> Workload:
    """Read and parse a workload file. ``on_error`` is ``fail`` or ``skip``."""
    path = str(path)
    if dialect not in DIALECTS:
        raise InputError(f"unknown dialect {dialect!r}; use one of {', '.join(DIALECTS)}")
    text = read_text(path)
    return parse_workload(text, path, dialect=dialect, schema=schema, on_error=on_error, database=database,
                          tables=tables, views=views, joins=joins)


def read_text(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise WorkloadError("no such file", Location(path)) from None
    except IsADirectoryError:
        raise WorkloadError("cannot read the file: it is a directory", Location(path)) from None
    except (OSError, UnicodeDecodeError) as e:
        raise WorkloadError(f"cannot read the file: {e}", Location(path)) from None


def parse_workload(text: str, path: str = "<workload>", *, dialect: str = "hive", schema: Schema | None = None,
                   on_error: str = "fail", database: str | None = None,
                   tables: Iterable[str] | None = None, views: ViewLookup | None = None,
                   joins: bool = True) -> Workload:
    """Parse a workload text. ``tables`` limits scan analysis to those tables (faster); ``views``
    looks up views the file does not define (e.g. in a metastore); ``joins=False`` leaves out the
    predicates inner equi-joins induce on each scan (``Scan.induced``), for callers that show none."""
    if dialect not in DIALECTS:
        raise InputError(f"unknown dialect {dialect!r}; use one of {', '.join(DIALECTS)}")
    reader = _Reader(path, dialect, schema or Schema(), on_error, database,
                     frozenset(t.lower() for t in tables) if tables else None, Views(dialect, views), joins)
    for stmt in reader.statements(text):
        reader.read(stmt)
    return reader.workload()


class _Reader:
    """The state of one pass over a file: current database, views defined, counts."""

    def __init__(self, path, dialect, schema, on_error, database, only, views: Views, joins: bool = True):
        self.path, self.dialect, self.schema, self.on_error, self.only = path, dialect, schema, on_error, only
        self.joins = joins
        self.current_db = database.lower() if database else None
        self.views = views
        self.queries: list[Query] = []
        self.skipped: dict[str, int] = {}
        self.errors: list[str] = []
        self.view_statements: dict[str, tuple[Statement, Parsed, str | None]] = {}
        # A statement read before, word for word, in the same database and with the same views,
        # reads the same scans: query logs and generated workloads repeat statements many times.
        self.view_changes = 0
        self.seen: dict[tuple, tuple[tuple, tuple[Scan, ...], tuple[str, ...]]] = {}

    def statements(self, text: str) -> Iterator[Statement]:
        """The statements, until one cannot be tokenized (an error, or under ``skip`` the end)."""
        try:
            yield from split_statements(text, self.path, self.dialect)
        except WorkloadError as e:
            self.fail(e)

    def count(self, label: str) -> None:
        self.skipped[label] = self.skipped.get(label, 0) + 1

    def fail(self, err: InputError) -> None:
        if self.on_error != "skip":
            raise err
        self.errors.append(str(err))
        self.count("error")

    def read(self, stmt: Statement) -> None:
        memo = (stmt.sql, self.current_db, self.view_changes) if stmt.command is None else None
        if memo in self.seen:
            tokens, scans, notes = self.seen[memo]
            self.append(stmt, tokens, scans, list(notes))
            return
        where = Location(self.path, stmt.number, stmt.line)
        try:
            parsed = classify(stmt, self.dialect, self.path)
        except WorkloadError as e:
            self.fail(e)
            return
        except RecursionError:
            self.fail(WorkloadError("statement is nested too deeply to parse", where))
            return
        if parsed.kind == "use":
            self.current_db = parsed.label
            self.count("USE")
        elif parsed.kind == "skip":
            self.count(parsed.label)
        elif parsed.kind == "drop_view":
            self.views.drop(parsed.name, self.current_db)
            self.view_changes += 1
            self.count("DDL")
        elif parsed.kind == "view":
            self.view_changes += 1
            try:
                key = self.views.define(parsed.name, parsed.tree, self.current_db)
            except RecursionError:
                self.fail(WorkloadError("view is nested too deeply to follow", where))
                return
            self.view_statements[key] = (stmt, parsed, self.current_db)
        elif parsed.kind == "tables":
            self.whole_tables(stmt, parsed)
        else:
            found = self.query(stmt, parsed, where, parsed.tree)
            if found is not None and memo is not None:
                self.seen[memo] = found

    def whole_tables(self, stmt: Statement, parsed: Parsed) -> None:
        """A statement in Hive syntax sqlglot cannot parse: each table it reads is read whole."""
        scans = []
        for t in parsed.tables:
            name = table_name(t, self.current_db)
            if self.only is None or name in self.only or name.rsplit(".", 1)[-1] in self.only:
                scans.append(Scan(name, t.name.lower(), TRUE, None))
        note = (f"statement {stmt.number} uses Hive syntax the reader cannot parse (table functions, UNIQUEJOIN, "
                "TRANSFORM … ROW FORMAT, …): its tables count as read whole, its filters are ignored")
        self.queries.append(Query(stmt.number, stmt.line, stmt.sql, template_name(stmt.comments, parsed.tokens),
                                  tuple(scans), (note,), comment_name(stmt.comments)))

    def query(self, stmt: Statement, parsed: Parsed, where: Location, tree: exp.Expression,
              extra_notes: tuple[str, ...] = ()) -> tuple[tuple, tuple[Scan, ...], tuple[str, ...]] | None:
        """Read the query's scans; returns what a repetition of the statement reads (None: it failed)."""
        notes: list[str] = list(extra_notes)
        try:
            if self.views:
                tree = self.views.inline(tree, self.current_db)
            if has_derived_sources(tree):  # the tree is this reader's own: changed in place
                tree = push_into_derived(tree, self.schema, self.current_db, copy=False)
            sites = list(iter_scans(tree, self.schema, self.current_db, self.dialect, notes, self.only))
            scans = tuple(Scan(s.table, s.alias, s.predicate, s.columns) for s in sites)
            if self.joins:  # without ``only`` the sites are every scan of the query: not found again
                scans = with_induced(scans, tree, self.schema, self.current_db, self.dialect, self.only,
                                     sites if self.only is None else None)
        except SchemaError as e:
            self.fail(SchemaError(e.reason, where))
            return None
        except RecursionError:
            self.fail(WorkloadError("statement is nested too deeply to analyse", where))
            return None
        found = (parsed.tokens, scans, tuple(notes))
        self.append(stmt, parsed.tokens, scans, notes)
        return found

    def append(self, stmt: Statement, tokens: tuple, scans: tuple[Scan, ...], notes: list[str]) -> None:
        if not scans and self.only is None:
            notes.append(f"statement {stmt.number} reads no table (constants, VALUES or a table function): "
                         "nothing to lay out")
        self.queries.append(Query(stmt.number, stmt.line, stmt.sql, template_name(stmt.comments, tokens),
                                  scans, tuple(dict.fromkeys(notes)), comment_name(stmt.comments)))

    def workload(self) -> Workload:
        followed = sorted(k for k in self.view_statements if k in self.views.read)
        for key, (stmt, parsed, db) in self.view_statements.items():
            if key in self.views.read:
                self.count("CREATE VIEW")
                continue
            saved, self.current_db = self.current_db, db
            self.query(stmt, parsed, Location(self.path, stmt.number, stmt.line), parsed.tree,
                       (f"view {key} is not read by any query of the file: its definition counts as a query",))
            self.current_db = saved
        queries = sorted(self.queries, key=lambda q: q.number)
        if not queries and not self.errors:
            what = "is empty" if not self.skipped else (
                "has no queries (only " + ", ".join(sorted(self.skipped)) + " statements)")
            raise WorkloadError(f"the workload {what}", Location(self.path))
        return Workload(self.path, self.dialect, tuple(queries), tuple(sorted(self.skipped.items())),
                        tuple(self.errors), tuple(followed))


def with_induced(scans: tuple[Scan, ...], tree: exp.Expression, schema: Schema, current_db: str | None,
                 dialect: str, only, sites: list | None = None) -> tuple[Scan, ...]:
    """``scans`` with the predicates their inner equi-joins induce (``planner.workload.joins``), when the query
    reads more than one table (the scans come in the same order as ``iter_scans`` visits them).
    ``sites``: every scan of the query (all tables), when the caller has them already."""
    if not scans or (len(sites) if sites is not None else sum(1 for _ in tree.find_all(exp.Table))) < 2:
        return scans  # one table: nothing to join
    from planner.workload.joins import induced_for, induced_scans

    try:
        found = (induced_for(sites, schema, only) if sites is not None
                 else induced_scans(tree, schema, current_db, dialect, only))
    except SchemaError:
        return scans  # another table's column did not resolve: that table's filters are not ours to judge
    if len(found) != len(scans):
        return scans
    return tuple(replace(s, induced=f.induced) if f.induced else s for s, f in zip(scans, found))


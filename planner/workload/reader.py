"""Read a workload file: split it into statements, parse them, keep the queries.

Statements are split on the tokenizer's semicolons, so a ``;`` inside a string or a comment is
not a separator, and every statement keeps its 1-based number and starting line for error
messages. ``SET``, ``USE`` and DDL are skipped and counted (``USE db`` still changes the database
that unqualified table names belong to). Every SELECT, INSERT … SELECT and UNION becomes a
``Query`` with the scans of each base table it reads (see ``scans.py``).
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import TokenType

from planner.cnf.ir import Expr
from planner.errors import InputError, Location, SchemaError, WorkloadError
from planner.workload.scans import Schema, iter_scans

DIALECTS = ("hive", "spark")


@dataclass(frozen=True)
class Scan:
    table: str
    alias: str
    predicate: Expr
    columns: frozenset[str] | None = None  # None: every column (SELECT *)


@dataclass(frozen=True)
class Query:
    number: int  # statement number in the file, 1-based
    line: int
    sql: str
    template: str
    scans: tuple[Scan, ...]
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Workload:
    path: str
    dialect: str
    queries: tuple[Query, ...]
    skipped: tuple[tuple[str, int], ...] = ()  # (reason, count)
    errors: tuple[str, ...] = ()  # statements skipped under --on-error skip

    def tables(self) -> list[str]:
        return sorted({s.table for q in self.queries for s in q.scans})

    def fingerprint(self) -> str:
        h = hashlib.sha256()
        for q in self.queries:
            h.update(q.sql.encode())
            h.update(b"\0")
        return h.hexdigest()[:16]


@dataclass(frozen=True)
class Statement:
    number: int
    line: int
    sql: str
    comments: tuple[str, ...] = field(default=())
    tokens: tuple = field(default=(), repr=False, compare=False)  # reused so each statement is tokenized once


def split_statements(text: str, path: str, dialect: str = "hive") -> Iterator[Statement]:
    """The file's statements, each numbered and with its starting line.

    Text the tokenizer cannot read (an unterminated string or comment, a stray quote) raises a
    ``WorkloadError`` naming the statement and the line where the unreadable token starts, after
    the complete statements before it were yielded: nothing after it can be split reliably.
    """
    tokenizer = sqlglot.Dialect.get_or_raise(dialect).tokenizer()
    try:
        tokens = tokenizer.tokenize(text)
    except TokenError:
        read = list(tokenizer.tokens)
        ends = [i for i, t in enumerate(read) if t.token_type == TokenType.SEMICOLON]
        complete = read[:ends[-1] + 1] if ends else []
        done = list(_statements(text, complete))
        yield from done
        raise _token_error(text, path, read, len(done) + 1) from None
    yield from _statements(text, tokens)


def _token_error(text: str, path: str, read: list, statement: int) -> WorkloadError:
    """The tokenizer stopped just after the last token it read (whitespace skipped)."""
    pos = read[-1].end + 1 if read else 0
    while pos < len(text) and text[pos].isspace():
        pos += 1
    snippet = text[pos:pos + 30]
    what = ("an unterminated string or quoted name" if snippet[:1] in ("'", '"', "`")
            else "an unterminated comment" if snippet.startswith("/*") else "text that is not SQL")
    line = text.count("\n", 0, pos) + 1
    return WorkloadError(f"cannot read the SQL: {what} starting {snippet!r}", Location(path, statement, line))


def _statements(text: str, tokens: list) -> Iterator[Statement]:
    number, start = 0, None
    comments: list[str] = []
    for i, tok in enumerate(tokens + [None]):
        if tok is None or tok.token_type == TokenType.SEMICOLON:
            if start is not None:
                number += 1
                first, last = tokens[start], tokens[i - 1]
                yield Statement(number, first.line, text[first.start:last.end + 1], tuple(comments),
                                tuple(tokens[start:i]))
            start, comments = None, []
            continue
        if start is None:
            start = i
            comments = list(tok.comments or [])


_LITERAL_TOKENS = frozenset({TokenType.STRING, TokenType.NUMBER, TokenType.NATIONAL_STRING, TokenType.RAW_STRING,
                             TokenType.BIT_STRING, TokenType.HEX_STRING, TokenType.BYTE_STRING,
                             TokenType.HEREDOC_STRING, TokenType.UNICODE_STRING})


def _template(stmt: Statement) -> str:
    """The statement's name: its closest leading comment, else a hash of its shape.

    The shape is the token stream with every literal replaced by ``?`` (keywords and unquoted
    names lower-cased), so ``a < 5`` and ``A < 7`` share a template. Tokens, not the parsed tree:
    replacing 10,000 literals of an IN list in a sqlglot tree one by one costs quadratic time.
    """
    for c in reversed(stmt.comments):  # the comment closest to the statement names it
        c = c.strip()
        if c:
            return c.split("\n")[-1].strip()[:60]
    h = hashlib.sha1()
    for t in stmt.tokens:
        text = "?" if t.token_type in _LITERAL_TOKENS else (
            t.text if t.token_type == TokenType.IDENTIFIER else t.text.lower())
        h.update(f"{t.token_type.name}\x1f{text}\x1e".encode("utf-8", "surrogatepass"))
    return "T" + h.hexdigest()[:8]


_SKIP = ((exp.Set, "SET"), (exp.Use, "USE"), (exp.Create, "DDL"), (exp.Drop, "DDL"), (exp.Alter, "DDL"),
         (exp.Command, "other command"), (exp.Describe, "other command"))


def read_workload(path: str | Path, *, dialect: str = "hive", schema: Schema | None = None,
                  on_error: str = "fail", database: str | None = None,
                  tables: Iterable[str] | None = None) -> Workload:
    """Read and parse a workload file. ``on_error`` is ``fail`` or ``skip``."""
    path = str(path)
    if dialect not in DIALECTS:
        raise InputError(f"unknown dialect {dialect!r}; use one of {', '.join(DIALECTS)}")
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise WorkloadError("no such file", Location(path)) from None
    except (OSError, UnicodeDecodeError) as e:
        raise WorkloadError(f"cannot read the file: {e}", Location(path)) from None
    return parse_workload(text, path, dialect=dialect, schema=schema, on_error=on_error, database=database,
                          tables=tables)


def parse_workload(text: str, path: str = "<workload>", *, dialect: str = "hive", schema: Schema | None = None,
                   on_error: str = "fail", database: str | None = None,
                   tables: Iterable[str] | None = None) -> Workload:
    """Parse a workload text. ``tables`` limits scan analysis to those tables (faster)."""
    schema = schema or Schema()
    only = frozenset(t.lower() for t in tables) if tables else None
    queries: list[Query] = []
    skipped: dict[str, int] = {}
    errors: list[str] = []
    current_db = database.lower() if database else None
    for stmt in _readable(split_statements(text, path, dialect), on_error, errors, skipped):
        where = Location(path, stmt.number, stmt.line)
        try:
            tree = _parse(stmt, dialect)
        except (ParseError, TokenError) as e:
            _fail(WorkloadError(f"syntax error: {_first_line(e)}", where), on_error, errors, skipped)
            continue
        except RecursionError:
            _fail(WorkloadError("statement is nested too deeply to parse", where), on_error, errors, skipped)
            continue
        kind = next((label for cls, label in _SKIP if isinstance(tree, cls)), None)
        if isinstance(tree, exp.Use):
            current_db = tree.this.name.lower() if tree.this is not None else current_db
        if kind is not None or not tree.find(exp.Select):
            skipped[kind or "no SELECT"] = skipped.get(kind or "no SELECT", 0) + 1
            continue
        notes: list[str] = []
        try:
            scans = tuple(Scan(s.table, s.alias, s.predicate, s.columns) for s in iter_scans(tree, schema, current_db, dialect, notes, only))
        except SchemaError as e:
            _fail(SchemaError(e.reason, where), on_error, errors, skipped)
            continue
        except RecursionError:
            _fail(WorkloadError("statement is nested too deeply to analyse", where), on_error, errors, skipped)
            continue
        queries.append(Query(stmt.number, stmt.line, stmt.sql, _template(stmt), scans,
                             tuple(dict.fromkeys(notes))))
    if not queries and not errors:
        what = "is empty" if not skipped else "has no queries (only " + ", ".join(skipped) + " statements)"
        raise WorkloadError(f"the workload {what}", Location(path))
    return Workload(path, dialect, tuple(queries), tuple(sorted(skipped.items())), tuple(errors))


def _readable(stmts: Iterator[Statement], on_error: str, errors: list[str],
              skipped: dict[str, int]) -> Iterator[Statement]:
    """The statements, until one cannot be tokenized (an error, or under ``skip`` the end)."""
    try:
        yield from stmts
    except WorkloadError as e:
        _fail(e, on_error, errors, skipped)


def _parse(stmt: Statement, dialect: str) -> exp.Expression:
    d = sqlglot.Dialect.get_or_raise(dialect)
    trees = d.parser().parse(list(stmt.tokens), stmt.sql) if stmt.tokens else [None]
    if len(trees) != 1 or trees[0] is None:
        raise ParseError("expected exactly one statement")
    return trees[0]


def _first_line(e: Exception) -> str:
    errs = getattr(e, "errors", None)
    if errs:
        d = errs[0]
        return f"{d.get('description', '')} near {d.get('highlight', '')!r} (line {d.get('line')}, column {d.get('col')})"
    return str(e).split("\n")[0]


def _fail(err: InputError, on_error: str, errors: list[str], skipped: dict[str, int]) -> None:
    if on_error != "skip":
        raise err
    errors.append(str(err))
    skipped["error"] = skipped.get("error", 0) + 1

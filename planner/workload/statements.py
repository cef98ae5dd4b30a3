"""Split a workload file into statements, the way the Hive CLI and beeline do.

SQL statements end at the tokenizer's semicolons, so a ``;`` inside a string or a comment is not a
separator, and every statement keeps its 1-based number and starting line for error messages.

Hive CLI commands are not SQL and are never tokenized as SQL: ``dfs -cat dir/*;`` would open a
``/*`` comment that swallows the rest of the file, ``set k=`` has no value to parse. A command is
recognised by its first word at the start of a statement (``set``, ``reset``, ``dfs``,
``add``/``delete``/``list`` of jars and files, ``source``, ``compile``, ``reload``, ``crypto``,
``quit``/``exit``, and ``!shell``); it runs to the next ``;`` outside quotes (a ``!`` command also
ends at the end of its line, as in beeline). Its text is blanked out before the rest of the file is
tokenized, so lines and offsets stay those of the file.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Iterator

import sqlglot
from sqlglot.errors import TokenError
from sqlglot.tokens import TokenType

from planner.errors import Location, WorkloadError


@dataclass(frozen=True)
class Statement:
    number: int
    line: int
    sql: str
    comments: tuple[str, ...] = field(default=())
    tokens: tuple = field(default=(), repr=False, compare=False)  # tokenized once; offsets into ``source``
    command: str | None = None  # a Hive CLI command (never parsed as SQL): "SET", "DFS", "ADD", "!shell", …
    start: int = field(default=0, compare=False)  # offset of the first character in ``source``
    source: str = field(default="", repr=False, compare=False)  # the whole file's text


# First word of a statement -> the label it is counted under. ``delete`` is a CLI command only
# when it names a resource (``delete jar x``); ``DELETE FROM t`` is SQL.
_CLI = {"set": "SET", "reset": "RESET", "dfs": "DFS", "add": "ADD", "list": "LIST", "delete": "DELETE",
        "source": "SOURCE", "compile": "COMPILE", "reload": "RELOAD", "crypto": "CRYPTO", "quit": "QUIT",
        "exit": "EXIT"}
_RESOURCES = frozenset({"jar", "jars", "file", "files", "archive", "archives"})


def split_statements(text: str, path: str, dialect: str = "hive") -> Iterator[Statement]:
    """The file's statements, each numbered and with its starting line.

    Text the tokenizer cannot read (an unterminated string or comment, a stray quote) raises a
    ``WorkloadError`` naming the statement and the line where the unreadable token starts, after
    the complete statements before it were yielded: nothing after it can be split reliably.
    """
    commands = list(_cli_commands(text))
    masked = _blank(text, [(s, e) for s, e, _ in commands]) if commands else text
    tokenizer = sqlglot.Dialect.get_or_raise(dialect).tokenizer()
    error: WorkloadError | None = None
    try:
        sql = list(_sql_statements(text, tokenizer.tokenize(masked)))
        stop = len(text) + 1
    except TokenError:
        read = list(tokenizer.tokens)
        ends = [i for i, t in enumerate(read) if t.token_type == TokenType.SEMICOLON]
        sql = list(_sql_statements(text, read[:ends[-1] + 1] if ends else []))
        stop, error = _token_error(text, masked, read)
    merged = sorted([s for s in sql if s.start < stop] +
                    [_command(text, s, e, label) for s, e, label in commands if s < stop], key=lambda s: s.start)
    for number, stmt in enumerate(merged, 1):
        yield Statement(number, stmt.line, stmt.sql, stmt.comments, stmt.tokens, stmt.command, stmt.start, text)
    if error is not None:
        raise WorkloadError(error.reason, Location(path, len(merged) + 1, error.location.line)) from None


def _command(text: str, start: int, end: int, label: str) -> Statement:
    return Statement(0, text.count("\n", 0, start) + 1, text[start:end].strip(), command=label, start=start)


def _blank(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with each span replaced by spaces (newlines kept, so lines and offsets do not move)."""
    out, last = [], 0
    for s, e in spans:
        out.append(text[last:s])
        out.append("".join(c if c == "\n" else " " for c in text[s:e]))
        last = e
    out.append(text[last:])
    return "".join(out)


def _token_error(text: str, masked: str, read: list) -> tuple[int, WorkloadError]:
    """The tokenizer stopped just after the last token it read (whitespace skipped)."""
    pos = read[-1].end + 1 if read else 0
    while pos < len(masked) and masked[pos].isspace():
        pos += 1
    snippet = text[pos:pos + 30]
    what = ("an unterminated string or quoted name" if snippet[:1] in ("'", '"', "`")
            else "an unterminated comment" if snippet.startswith("/*") else "text that is not SQL")
    line = text.count("\n", 0, pos) + 1
    return pos, WorkloadError(f"cannot read the SQL: {what} starting {snippet!r}", Location("", None, line))


def _sql_statements(text: str, tokens: list) -> Iterator[Statement]:
    start, comments = None, []
    for i, tok in enumerate(tokens + [None]):
        if tok is None or tok.token_type == TokenType.SEMICOLON:
            if start is not None:
                first, last = tokens[start], tokens[i - 1]
                yield Statement(0, first.line, text[first.start:last.end + 1], tuple(comments),
                                tuple(tokens[start:i]), start=first.start, source=text)
            start, comments = None, []
            continue
        if start is None:
            start = i
            comments = list(tok.comments or [])


# One match per string, quoted name, comment or ``;``: the scan moves in C, not character by character.
_SPECIAL = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|`(?:[^`]|``)*`|--[^\n]*|/\*.*?\*/|;", re.S)


def _next_semicolon(text: str, pos: int) -> int:
    """Offset of the next ``;`` outside strings, quoted names and comments (or the text's end).
    An unterminated string or comment is left to the tokenizer to report."""
    while True:
        m = _SPECIAL.search(text, pos)
        if m is None:
            return len(text)
        if m.group() == ";":
            return m.start()
        pos = m.end()


_QUOTE_END = {"'": re.compile(r"[\\']"), '"': re.compile(r'[\\"]'), "`": re.compile(r"`")}


def _skip_quoted(text: str, pos: int) -> int:
    """The offset after the quoted string or name starting at ``pos`` (backslash escapes in strings,
    a doubled backquote in names), or the text's end when it is not closed."""
    quote, n = text[pos], len(text)
    end = _QUOTE_END[quote]
    pos += 1
    while pos < n:
        m = end.search(text, pos)
        if m is None:
            return n
        pos = m.start()
        if text[pos] == "\\":
            pos += 2
            continue
        if quote == "`" and text.startswith("``", pos):
            pos += 2
            continue
        return pos + 1
    return n


def _skip_blank(text: str, pos: int) -> int:
    """Skip whitespace and comments before a statement."""
    n = len(text)
    while pos < n:
        if text[pos].isspace():
            pos += 1
        elif text.startswith("--", pos):
            nl = text.find("\n", pos)
            pos = n if nl < 0 else nl + 1
        elif text.startswith("/*", pos):
            close = text.find("*/", pos + 2)
            pos = n if close < 0 else close + 2
        else:
            break
    return pos


def _cli_commands(text: str) -> Iterator[tuple[int, int, str]]:
    """(start, end, label) of every Hive CLI command; ``end`` is where its ``;`` (or line) is."""
    pos, n = 0, len(text)
    while pos < n:
        pos = _skip_blank(text, pos)
        if pos >= n:
            return
        label = _cli_label(text, pos)
        if label is None:
            pos = _next_semicolon(text, pos) + 1
            continue
        end = _command_end(text, pos, shell=label == "!shell")
        yield pos, end, label
        pos = end + 1


def _cli_label(text: str, pos: int) -> str | None:
    if text[pos] == "!":
        return "!shell"
    words = text[pos:pos + 64].split(None, 2)
    first = words[0].lower().rstrip(";") if words else ""
    label = _CLI.get(first)
    if label == "DELETE" and (len(words) < 2 or words[1].lower().rstrip(";") not in _RESOURCES):
        return None
    return label


def _command_end(text: str, pos: int, shell: bool) -> int:
    """The ``;`` that ends a CLI command (quotes and ``\\;`` respected, comments not: ``dfs -ls /a/*``)."""
    n = len(text)
    while pos < n:
        c = text[pos]
        if c == "\\":
            pos += 2
            continue
        if c in "'\"`":
            pos = _skip_quoted(text, pos)
            continue
        if c == ";" or (shell and c == "\n"):
            return pos
        pos += 1
    return n


# ---- templates -----------------------------------------------------------------------------------
_LITERAL_TOKENS = frozenset({TokenType.STRING, TokenType.NUMBER, TokenType.NATIONAL_STRING, TokenType.RAW_STRING,
                             TokenType.BIT_STRING, TokenType.HEX_STRING, TokenType.BYTE_STRING,
                             TokenType.HEREDOC_STRING, TokenType.UNICODE_STRING})


def comment_name(comments: tuple[str, ...]) -> str:
    """The name a statement's closest leading comment gives it ("" without one)."""
    for c in reversed(comments):  # the comment closest to the statement names it
        c = c.strip()
        if c:
            return c.split("\n")[-1].strip()[:60]
    return ""


def first_line(sql: str, width: int = 60) -> str:
    """A statement's first line of text, shortened for a report ("SELECT l_returnflag, sum(…")."""
    line = next((ln.strip() for ln in sql.splitlines() if ln.strip()), "")
    line = " ".join(line.split())
    return line if len(line) <= width else line[:width - 1] + "…"


def template_name(comments: tuple[str, ...], tokens) -> str:
    """A statement's template, the key statements of one shape share: its closest leading
    comment, else a hash of its shape. Reports name a query by ``Query.label`` instead.

    The shape is the token stream with every literal replaced by ``?`` (keywords and unquoted
    names lower-cased), so ``a < 5`` and ``A < 7`` share a template. Tokens, not the parsed tree:
    replacing 10,000 literals of an IN list in a sqlglot tree one by one costs quadratic time.
    """
    named = comment_name(comments)
    if named:
        return named
    shape = "\x1e".join(f"{t.token_type.name}\x1f" + ("?" if t.token_type in _LITERAL_TOKENS else (
        t.text if t.token_type == TokenType.IDENTIFIER else t.text.lower())) for t in tokens)
    return "T" + hashlib.sha1((shape + "\x1e").encode("utf-8", "surrogatepass")).hexdigest()[:8]

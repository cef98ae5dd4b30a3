"""What one workload statement is: a query to analyse, a view definition, ``USE db``, or skipped.

Real HiveQL files wrap their queries in other statements; each is unwrapped here so no query is
lost with its filters:

    EXPLAIN [EXTENDED|CBO [COST|JOINCOST]|VECTORIZATION …|ANALYZE|…] <statement>   the statement
    CREATE TABLE t AS SELECT …, INSERT … SELECT …                                    the SELECT
    FROM src INSERT OVERWRITE TABLE a SELECT … WHERE p1 INSERT … SELECT … WHERE p2   one scan of
        src read once for every branch: SELECT <all branches' columns> FROM src WHERE p1 OR p2
    INSERT OVERWRITE TABLE t PARTITION (…) IF NOT EXISTS SELECT …                   the SELECT
    MAP a, b USING 'script' / REDUCE …                       SELECT TRANSFORM(a, b) USING 'script'
    UPDATE t SET … WHERE p, DELETE FROM t WHERE p                  SELECT * FROM t WHERE p
    CREATE VIEW v AS SELECT …, ALTER VIEW v AS SELECT …                    a view (followed later)

Statements that cannot hold a query (DDL, DESCRIBE, SHOW, LOAD, GRANT, LOCK, EXPORT, …) are
recognised by their first keyword and skipped without parsing, so a DDL dialect sqlglot does not
know never fails the file. Parse errors become one readable line: the token and line where the
parser stopped (or "at the end of the statement"), never sqlglot's class names or token dumps.
"""
from __future__ import annotations

import logging
import re
from contextlib import contextmanager
from dataclasses import dataclass, field

import sqlglot
from sqlglot import exp
from sqlglot.errors import ErrorLevel, ParseError, TokenError
from sqlglot.tokens import Token, TokenType

from planner.errors import Location, WorkloadError
from planner.workload.statements import Statement

# Words that may follow EXPLAIN before the statement (Hive 4 and Spark 4).
EXPLAIN_OPTIONS = frozenset({
    "EXTENDED", "FORMATTED", "DEPENDENCY", "AUTHORIZATION", "LOGICAL", "CBO", "COST", "JOINCOST", "VECTORIZATION",
    "ONLY", "SUMMARY", "OPERATOR", "EXPRESSION", "DETAIL", "AST", "LOCKS", "ANALYZE", "DEBUG", "REOPTIMIZATION",
    "CODEGEN", "DDL", "PLAN", "FOR",
})
# First keywords of statements that may hold a query (anything else needs a SELECT token to be parsed).
_QUERY_STARTS = frozenset({"SELECT", "WITH", "FROM", "INSERT", "UPDATE", "DELETE", "MERGE", "(", "MAP", "REDUCE",
                           "VALUES", "TABLE"})
_DDL = frozenset({"CREATE", "DROP", "ALTER", "TRUNCATE", "COMMENT", "REFRESH", "CACHE", "UNCACHE"})
# First keywords of statements that never hold a query, even with a SELECT token (GRANT SELECT ON …).
_NEVER_QUERY = frozenset({"GRANT", "REVOKE", "SHOW", "DESC", "DESCRIBE", "LOAD", "LOCK", "UNLOCK", "EXPORT",
                          "IMPORT", "MSCK", "ANALYZE", "TRUNCATE", "ABORT", "KILL", "COMMIT", "ROLLBACK", "START",
                          "BEGIN", "REPL", "PREPARE", "EXECUTE", "DEALLOCATE", "SET", "RESET", "ADD", "LIST",
                          "RELOAD", "CLEAR", "OPTIMIZE", "VACUUM", "CALL", "DECLARE", "USE"})
# Statements with no SELECT are skipped without parsing only when they start with a known word:
# anything else (a typo such as ``SELCT``) is parsed, and an error if it cannot be.
_KNOWN_NON_QUERY = _NEVER_QUERY | _DDL


@dataclass(frozen=True)
class Parsed:
    """``kind`` is ``query``, ``view`` (``tree`` is its definition), ``drop_view``, ``use``, ``skip``,
    or ``tables`` (Hive-only syntax: only the ``tables`` it reads are known)."""

    kind: str
    tree: exp.Expression | None = None
    label: str = ""  # skip: what was skipped (SET, DDL, DESCRIBE, …); use: the database
    name: exp.Table | None = None  # view / drop_view: the view's name
    tokens: tuple = field(default=(), repr=False)  # the statement's own tokens (EXPLAIN options dropped)
    explained: bool = False
    tables: tuple[exp.Table, ...] = ()


def classify(stmt: Statement, dialect: str, path: str = "<workload>") -> Parsed:
    """What ``stmt`` is. Raises ``WorkloadError`` (naming ``path``, statement and line) when a
    statement that may hold a query cannot be parsed."""
    if stmt.command is not None:
        return Parsed("skip", label=stmt.command)
    tokens, explained = list(stmt.tokens), False
    if tokens and tokens[0].token_type == TokenType.COMMAND and tokens[0].text.upper() == "EXPLAIN":
        tokens, explained = _explained(stmt, tokens[0], dialect, path), True
        if not tokens:
            return Parsed("skip", label="EXPLAIN", explained=True)
    first = (tokens[0].text.upper().split() or [""])[0] if tokens else ""
    if first == "USE" and len(tokens) >= 2:
        return Parsed("use", label=tokens[-1].text.lower(), tokens=tuple(tokens))
    has_select = any(t.token_type == TokenType.SELECT for t in tokens)
    if first == "DROP" and len(tokens) > 2 and tokens[1].text.upper() == "VIEW":
        tree = _try_parse(tokens, stmt, dialect)
        names = (tree.args.get("tables") or [tree.this]) if isinstance(tree, exp.Drop) else []
        if names and isinstance(names[0], exp.Table):
            return Parsed("drop_view", name=names[0], label="DDL", tokens=tuple(tokens))
        return Parsed("skip", label="DDL")
    if first in _NEVER_QUERY or (not has_select and first in _KNOWN_NON_QUERY):
        return Parsed("skip", label=_label(first), explained=explained)
    tokens = _hive_clauses(tokens, stmt, dialect)
    tree = _parse(tokens, stmt, dialect, path)
    if isinstance(tree, list):
        return Parsed("tables", tables=tuple(tree), tokens=tuple(tokens), explained=explained)
    where = Location(path, stmt.number, stmt.line)
    return _what(tree, tuple(tokens), explained, first, where, stmt.sql)


def _label(first: str) -> str:
    if first in _DDL:
        return "DDL"
    if first in ("DESC", "DESCRIBE"):
        return "DESCRIBE"
    return first or "empty"


def _what(tree: exp.Expression, tokens: tuple, explained: bool, first: str, where: Location,
          sql: str) -> Parsed:
    if isinstance(tree, exp.Create):
        body = tree.expression
        kind = (tree.args.get("kind") or "").upper()
        if isinstance(body, exp.Query) and "VIEW" in kind:
            return Parsed("view", body, name=tree.this.this if isinstance(tree.this, exp.Schema) else tree.this,
                          tokens=tokens, explained=explained)
        if isinstance(body, exp.Query):
            return Parsed("query", body, tokens=tokens, explained=explained)
        return Parsed("skip", label="DDL", explained=explained)
    if isinstance(tree, exp.Alter):
        body = next((a for a in tree.args.get("actions") or [] if isinstance(a, exp.Query)), None)
        if body is not None and (tree.args.get("kind") or "").upper() == "VIEW":
            return Parsed("view", body, name=tree.this, tokens=tokens, explained=explained)
        return Parsed("skip", label="DDL", explained=explained)
    if isinstance(tree, exp.MultitableInserts):
        return Parsed("query", multi_insert_select(tree), tokens=tokens, explained=explained)
    if isinstance(tree, (exp.Update, exp.Delete)) and isinstance(tree.this, exp.Table):
        select = exp.select("*").from_(tree.this.copy())
        condition = tree.args.get("where")
        if condition is not None:
            select.set("where", condition.copy())
        return Parsed("query", select, tokens=tokens, explained=explained)
    if isinstance(tree, exp.Command):
        if not any(t.token_type == TokenType.SELECT for t in tokens):
            return Parsed("skip", label=_label(str(tree.this).upper().split()[0]), explained=explained)
        head = " ".join(sql.split()[:6])
        raise WorkloadError(f"syntax error: this form of statement is not supported: {head[:60]!r}", where)
    if isinstance(tree, exp.Insert) and tree.find(exp.Select) is None:
        return Parsed("skip", label="INSERT VALUES", explained=explained)
    if isinstance(tree, exp.Query) or tree.find(exp.Select) is not None:
        return Parsed("query", tree, tokens=tokens, explained=explained)
    return Parsed("skip", label=_label(first), explained=explained)


def session_name(stmt: Statement, dialect: str) -> str | None:
    """The name (lower case) that ``stmt`` gives to rows of its own for the rest of the session, which
    an unqualified table name then reads instead of the current database's table: a temporary view
    or table (``CREATE [OR REPLACE] TEMPORARY VIEW|TABLE x``), ``CACHE TABLE x AS …``, or an
    unqualified view. None for anything else. Only such statements are parsed (again: ``classify``
    skips some of them unparsed, e.g. a view over files); one the parser cannot read is named from
    its tokens."""
    words = [t.text.upper() for t in stmt.tokens]
    if stmt.command is not None or not words or words[0] not in ("CREATE", "CACHE"):
        return None
    if words[0] == "CREATE" and not {"TEMPORARY", "TEMP", "VIEW"} & set(words[:6]):
        return None  # a permanent table (CTAS) is the table itself
    with quiet_sqlglot():
        try:
            tree = sqlglot.parse_one(stmt.sql, read=dialect)
        except (ParseError, TokenError):
            return _session_name_from_tokens(stmt.tokens, words)
    if isinstance(tree, exp.Cache):
        table = tree.this
    elif isinstance(tree, exp.Create):
        props = [type(p) for p in (tree.args.get("properties") or exp.Properties(expressions=[])).expressions]
        kind = (tree.args.get("kind") or "").upper()
        if exp.GlobalProperty in props or not (kind == "VIEW" or exp.TemporaryProperty in props):
            return None  # a global temporary view lives in global_temp; a permanent table is the table
        table = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
    else:
        return None
    if not isinstance(table, exp.Table) or table.args.get("db") is not None:
        return None
    return table.name.lower()


def _session_name_from_tokens(tokens, words: list[str]) -> str | None:
    """The name after ``VIEW``/``TABLE`` (and ``IF NOT EXISTS``) of a statement the parser cannot read,
    unless it is global or qualified."""
    if "GLOBAL" in words[:4] or not ({"VIEW", "TABLE"} & set(words[:6])):
        return None
    i = next(i for i, w in enumerate(words) if w in ("VIEW", "TABLE")) + 1
    if words[i:i + 3] == ["IF", "NOT", "EXISTS"]:
        i += 3
    if i >= len(words) or (i + 1 < len(words) and tokens[i + 1].text == "."):
        return None
    return tokens[i].text.strip("`\"").lower()


def multi_insert_select(tree: exp.MultitableInserts) -> exp.Select:
    """Hive's ``FROM src INSERT … SELECT … WHERE p1 INSERT … SELECT … WHERE p2`` reads ``src`` once
    for all branches: as one SELECT of every branch's columns from ``src`` filtered by ``p1 OR p2``
    (no filter when a branch has none). Each branch's GROUP BY/HAVING/ORDER is left out: they do not
    change which rows are read."""
    source = tree.args["source"].copy()
    joins = source.args.get("joins") or []
    source.set("joins", None)
    select = exp.Select(expressions=[])
    select.set("from_", exp.From(this=source))
    if joins:
        select.set("joins", joins)
    filters: list[exp.Expression] | None = []
    for branch in tree.expressions:
        body = branch.expression if isinstance(branch, exp.Insert) else branch
        inner = body if isinstance(body, exp.Select) else body.find(exp.Select)
        if inner is None:
            continue
        select.set("expressions", select.expressions + [e.copy() for e in inner.expressions])
        where = inner.args.get("where")
        if where is None:
            filters = None
        elif filters is not None:
            filters.append(exp.paren(where.this.copy(), copy=False))
    if not select.expressions:
        select.set("expressions", [exp.Star()])
    if filters:
        select.set("where", exp.Where(this=exp.or_(*filters, copy=False) if len(filters) > 1 else filters[0]))
    return select


# ---- token-level edits ---------------------------------------------------------------------------
def _explained(stmt: Statement, explain: Token, dialect: str, path: str) -> list[Token]:
    """The tokens of the statement after ``EXPLAIN`` and its options (the tokenizer keeps them as
    one raw string: tokenize that part again, at its place in the file)."""
    offset = explain.end + 1
    rest = stmt.sql[offset - stmt.start:]
    try:
        tokens = _tokenize(rest, dialect, line=explain.line, start=offset)
    except TokenError as e:
        raise WorkloadError(f"cannot read the SQL after EXPLAIN: {e}", Location(path, stmt.number, stmt.line)) from None
    while len(tokens) > 1 and tokens[0].text.upper() in EXPLAIN_OPTIONS and \
            tokens[0].token_type not in (TokenType.SELECT, TokenType.WITH, TokenType.FROM) and \
            not (tokens[0].text.upper() == "ANALYZE" and tokens[1].token_type == TokenType.TABLE):
        tokens.pop(0)
    return tokens


def _tokenize(text: str, dialect: str, *, line: int, start: int) -> list[Token]:
    tokens = sqlglot.Dialect.get_or_raise(dialect).tokenizer().tokenize(text)
    for t in tokens:  # place them in the file: line and offsets of the enclosing text
        t.line += line - 1
        t.start += start
        t.end += start
    return tokens


def _hive_clauses(tokens: list[Token], stmt: Statement, dialect: str) -> list[Token]:
    """``PARTITION (…) IF NOT EXISTS`` and a view's ``PARTITIONED ON (…)`` dropped, ``MAP``/``REDUCE
    … USING`` as ``SELECT TRANSFORM(…) USING``, a window's ``(CLUSTER BY k`` as ``(PARTITION BY k``."""
    if not _EDIT_HINT.search(stmt.sql) or not any(
            t.token_type in _EDIT_TYPES or (t.token_type == TokenType.VAR and t.text.upper() in _EDIT_WORDS)
            for t in tokens):
        return tokens  # the common case: nothing to edit
    out: list[Token] = []
    i, n = 0, len(tokens)
    view = n > 1 and tokens[0].token_type == TokenType.CREATE and any(t.token_type == TokenType.VIEW for t in tokens[:6])
    while i < n:
        t = tokens[i]
        if view and t.text.upper() == "PARTITIONED" and i + 2 < n and tokens[i + 1].text.upper() == "ON" \
                and tokens[i + 2].token_type == TokenType.L_PAREN:
            close = _closing(tokens, i + 2)
            if close is not None:
                i = close + 1
                continue
        if (t.text.upper() == "IF" and i + 2 < n and tokens[i + 1].token_type == TokenType.NOT
                and tokens[i + 2].token_type == TokenType.EXISTS and out and out[-1].token_type == TokenType.R_PAREN
                and any(x.token_type == TokenType.INSERT for x in out)):
            i += 3
            continue
        if t.token_type == TokenType.CLUSTER_BY and out and out[-1].token_type == TokenType.L_PAREN and \
                len(out) > 1 and out[-2].token_type == TokenType.OVER:
            out += _made(["PARTITION BY"], t, dialect)  # Hive's window (CLUSTER BY k): rows by k
            i += 1
            continue
        if t.text.upper() in ("MAP", "REDUCE") and i + 1 < n and tokens[i + 1].token_type not in (
                TokenType.L_PAREN, TokenType.LT, TokenType.COMMA, TokenType.DOT):
            using = _matching_using(tokens, i + 1)
            if using is not None:
                out += _made(["SELECT", "TRANSFORM", "("], t, dialect)
                out += tokens[i + 1:using]
                out += _made([")"], tokens[using], dialect)
                i = using
                continue
        out.append(t)
        i += 1
    return out


_EDIT_TYPES = frozenset({TokenType.CLUSTER_BY, TokenType.MAP, TokenType.VIEW})
_EDIT_WORDS = frozenset({"IF", "REDUCE", "MAP"})
_EDIT_HINT = re.compile(r"\b(?:if|reduce|map|cluster|view)\b", re.I)  # a cheap test on the text first


def _closing(tokens: list[Token], i: int) -> int | None:
    """Index of the ``)`` that closes the ``(`` at ``i``."""
    depth = 0
    for j in range(i, len(tokens)):
        if tokens[j].token_type == TokenType.L_PAREN:
            depth += 1
        elif tokens[j].token_type == TokenType.R_PAREN:
            depth -= 1
            if depth == 0:
                return j
    return None


def _matching_using(tokens: list[Token], i: int) -> int | None:
    """Index of the USING that ends a MAP/REDUCE column list starting at ``i`` (same depth)."""
    depth = 0
    for j in range(i, len(tokens)):
        tt = tokens[j].token_type
        if tt == TokenType.L_PAREN:
            depth += 1
        elif tt == TokenType.R_PAREN:
            depth -= 1
            if depth < 0:
                return None
        elif depth == 0 and tt == TokenType.USING:
            return j
        elif depth == 0 and tt in (TokenType.FROM, TokenType.INSERT, TokenType.SELECT, TokenType.WHERE):
            return None
    return None


def _made(words: list[str], at: Token, dialect: str) -> list[Token]:
    tokens = sqlglot.Dialect.get_or_raise(dialect).tokenizer().tokenize(" ".join(words))
    for t in tokens:
        t.line, t.col, t.start, t.end = at.line, at.col, at.start, at.end
    return tokens


# ---- parsing, with readable errors ---------------------------------------------------------------
class _NoCommandFallbackWarning(logging.Filter):
    """sqlglot logs "… contains unsupported syntax. Falling back to parsing as a 'Command'" with the
    statement's text; the reader reports such statements itself."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "Falling back to parsing as a 'Command'" not in record.getMessage()


_QUIET = _NoCommandFallbackWarning()


@contextmanager
def quiet_sqlglot():
    """sqlglot's logger without the Command fallback warning (for callers parsing on their own;
    this module's parsers are quiet already: the filter is installed once, at import)."""
    log = logging.getLogger("sqlglot")
    log.addFilter(_QUIET)
    try:
        yield
    finally:
        log.removeFilter(_QUIET)


if not any(isinstance(f, _NoCommandFallbackWarning) for f in logging.getLogger("sqlglot").filters):
    logging.getLogger("sqlglot").addFilter(_NoCommandFallbackWarning())

_PARSERS: dict[tuple[str, object], object] = {}


def _parser(dialect: str, level):
    """One parser per dialect and error level, reused (``parse`` resets its state on every call)."""
    key = (dialect, level)
    if key not in _PARSERS:
        _PARSERS[key] = sqlglot.Dialect.get_or_raise(dialect).parser(error_level=level)
    return _PARSERS[key]


def _try_parse(tokens: list[Token], stmt: Statement, dialect: str) -> exp.Expression | None:
    try:
        trees = _parser(dialect, ErrorLevel.IMMEDIATE).parse(tokens, stmt.source or stmt.sql)
    except (ParseError, TokenError, RecursionError):
        return None
    return trees[0] if len(trees) == 1 else None


def _parse(tokens: list[Token], stmt: Statement, dialect: str, path: str) -> exp.Expression | list[exp.Table]:
    """The statement's tree; for Hive-only syntax sqlglot cannot parse, the tables it reads."""
    where = Location(path, stmt.number, stmt.line)
    attempt, error = tokens, None
    for _ in range(MAX_KEYWORD_RETRIES + 1):
        try:
            trees = _parsed(attempt, stmt.source or stmt.sql, dialect)
        except (ParseError, TokenError) as e:
            error = error or e
            attempt = _keyword_as_name(attempt, e) if isinstance(e, ParseError) else None
            if attempt is None:
                break
        except RecursionError:
            raise WorkloadError("statement is nested too deeply to parse", where) from None
        else:
            if len(trees) != 1 or trees[0] is None:
                raise WorkloadError("syntax error: expected exactly one statement", where)
            return trees[0]
    tables = hive_only_tables(tokens)
    if tables is not None:
        return tables
    raise WorkloadError(f"syntax error: {parse_error_text(error)}", where)


MAX_KEYWORD_RETRIES = 3


def _parsed(tokens: list[Token], sql: str, dialect: str) -> list:
    """Parse; a call with more arguments than sqlglot's signature of the function allows
    (Hive's ``last_value(x, false)``) is not a syntax error, so only such errors are let through."""
    if not tokens:
        return [None]
    try:
        return _parser(dialect, ErrorLevel.RAISE).parse(tokens, sql)
    except ParseError as e:
        if not all("number of provided arguments" in (x.get("description") or "") for x in e.errors):
            raise
        return _parser(dialect, ErrorLevel.IGNORE).parse(tokens, sql)
_NAME_TYPES = frozenset({TokenType.VAR, TokenType.IDENTIFIER, TokenType.STRING, TokenType.NUMBER})


# Keywords to sqlglot that older Hive (and Spark outside ANSI mode) accept as column and table names.
NAME_KEYWORDS = frozenset({"VALUES", "INNER", "INSERT", "OUTER", "KEY", "VALUE", "DATA", "USER", "COMMENT",
                           "LOCATION", "FORMAT", "OUTPUT", "DIRECTORY", "FUNCTION", "OPTION", "OPTIONS", "RANGE",
                           "ROWS", "SORT", "SEMI", "ANTI", "OVERWRITE", "PARTITION", "BUCKET", "BUCKETS"})


def _keyword_as_name(tokens: list[Token], e: ParseError) -> list[Token] | None:
    """Hive reserves fewer words than sqlglot (``ORDER BY key, values``, ``FROM inner``): the
    tokens again with the keyword the parser stopped at read as a name, or None."""
    errs = getattr(e, "errors", None) or [{}]
    line, col = errs[0].get("line"), errs[0].get("col")
    for i, t in enumerate(tokens):
        if t.line == line and t.col == col:
            if t.token_type in _NAME_TYPES or t.text.upper() not in NAME_KEYWORDS:
                return None
            name = Token(TokenType.VAR, t.text, t.line, t.col, t.start, t.end, t.comments)
            return tokens[:i] + [name] + tokens[i + 1:]
    return None


def hive_only_tables(tokens: list[Token]) -> list[exp.Table] | None:
    """For a statement using Hive syntax sqlglot cannot parse — table functions over a table
    (``FROM noop(ON part …)``), ``UNIQUEJOIN``, a script's typed output (``TRANSFORM … USING 'cat'
    AS (k STRING) ROW FORMAT …``), ``TABLESAMPLE (100B)``, charset literals (``_UTF-8 0x…``) —
    the tables it reads (every one read whole: its filters are not understood), else None."""
    if not _hive_only(tokens):
        return None
    ctes = {tokens[i].text.lower() for i in range(len(tokens) - 2)
            if tokens[i + 1].token_type == TokenType.ALIAS and tokens[i + 2].token_type == TokenType.L_PAREN
            and (i == 0 or tokens[i - 1].token_type in (TokenType.WITH, TokenType.COMMA))}
    out: list[exp.Table] = []
    i, n = 0, len(tokens)
    while i < n:
        t = tokens[i]
        starts = (t.token_type in (TokenType.FROM, TokenType.JOIN) and not (
            i + 1 < n and tokens[i + 1].text.upper() == "UNIQUEJOIN")) or t.text.upper() == "PRESERVE" or (
            t.token_type == TokenType.ON and i > 0 and tokens[i - 1].token_type == TokenType.L_PAREN)
        i += 1
        while starts and i < n and tokens[i].token_type in (TokenType.VAR, TokenType.IDENTIFIER):
            j, parts = i, [tokens[i].text]
            while j + 2 < n and tokens[j + 1].token_type == TokenType.DOT and tokens[j + 2].token_type in (
                    TokenType.VAR, TokenType.IDENTIFIER):
                parts.append(tokens[j + 2].text)
                j += 2
            if j + 1 < n and tokens[j + 1].token_type == TokenType.L_PAREN:
                break  # a function: the table comes after its ( ON
            if parts[-1].lower() not in ctes or len(parts) > 1:
                out.append(exp.table_(parts[-1], db=parts[-2] if len(parts) > 1 else None))
            i = j + 1
            if i < n and tokens[i].token_type == TokenType.ALIAS:
                i += 1
            if i < n and tokens[i].token_type in (TokenType.VAR, TokenType.IDENTIFIER):
                i += 1  # alias
            starts = i + 1 < n and tokens[i].token_type == TokenType.COMMA
            i += 1 if starts else 0
    return out


def _hive_only(tokens: list[Token]) -> bool:
    for i, t in enumerate(tokens):
        word = t.text.upper()
        if word in ("UNIQUEJOIN", "TRANSFORM", "TABLESAMPLE", "USING") or (
                t.token_type == TokenType.VAR and word.startswith("_") and word[1:4].isalpha() and i + 1 < len(tokens)
                and tokens[i + 1].token_type in (TokenType.DASH, TokenType.STRING, TokenType.NUMBER)):
            return True
        if t.token_type == TokenType.ON and i >= 2 and tokens[i - 1].token_type == TokenType.L_PAREN and \
                tokens[i - 2].token_type in (TokenType.VAR, TokenType.IDENTIFIER):
            return True
    return False


_OPERATORS = {"EQ": "=", "NEQ": "<>", "NullSafeEQ": "<=>", "GT": ">", "GTE": ">=", "LT": "<", "LTE": "<=",
              "And": "AND", "Or": "OR", "Not": "NOT", "Add": "+", "Sub": "-", "Mul": "*", "Div": "/", "Mod": "%",
              "Like": "LIKE", "ILike": "ILIKE", "RLike": "RLIKE", "In": "IN", "Between": "BETWEEN", "Is": "IS",
              "Alias": "AS", "Cast": "CAST", "Case": "CASE", "If": "IF", "Dot": "."}
_CLASS = re.compile(r"<class 'sqlglot\.[\w.]*\.(\w+)'>")
_TOKEN = re.compile(r"<Token token_type: TokenType\.(\w+), text: (.*?), line: \d+, col: \d+, start: \d+, end: \d+, "
                    r"comments: \[.*?\]>")
_MISSING = re.compile(r"Required keyword: '(\w+)' missing for (<class '[^']*'>|\S+)")


def parse_error_text(e: Exception) -> str:
    """One line a user can act on: what is wrong, at which token, on which line of the file."""
    errs = getattr(e, "errors", None)
    if not errs:
        return _clean(str(e).split("\n")[0]) or type(e).__name__
    d = errs[0]
    what = _clean(d.get("description") or "cannot parse")
    highlight = (d.get("highlight") or "").strip()
    place = f"line {d.get('line')}, column {d.get('col')}"
    if highlight:
        return f"{what} at {highlight[:40]!r} ({place})"
    before = " ".join((d.get("start_context") or "").split())[-30:]
    return f"{what} at the end of the statement, after {before!r} ({place})" if before else f"{what} ({place})"


def _clean(text: str) -> str:
    text = _TOKEN.sub(lambda m: repr(m.group(2)), text)
    m = _MISSING.search(text)
    if m:
        cls = _CLASS.search(m.group(2))
        name = cls.group(1) if cls else m.group(2)
        op = _OPERATORS.get(name, name.lower())
        return f"incomplete {op!r}: an operand is missing"
    return _CLASS.sub(lambda m: repr(_OPERATORS.get(m.group(1), m.group(1).lower())), text)

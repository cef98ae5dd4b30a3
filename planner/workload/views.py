"""Views a workload defines (or a metastore holds), followed into the queries that read them.

    CREATE VIEW revenue AS SELECT l_suppkey, sum(…) r FROM lineitem WHERE l_shipdate >= '1996-01-01' …;
    SELECT … FROM supplier, revenue WHERE s_suppkey = l_suppkey …;

The second query reads lineitem, with the view's filter (and the query's own filters on the
view's columns, see ``pushdown.py``). A view reference is replaced by its definition as a derived
table with the reference's alias, so the scan code sees what the engine executes.

* Views are looked up where the query runs: its database (``USE``) for unqualified names; a CTE of
  the same name hides a view, as it does in Hive.
* Unqualified tables inside a view belong to the database that was current when it was defined.
* A view defined in the file replaces one of the same name (``CREATE OR REPLACE``, ``ALTER VIEW …
  AS``); ``DROP VIEW`` forgets it. Views not defined in the file are asked of ``lookup(db, name)``
  (the metastore's view text, when one is at hand); views inside views are followed, up to
  ``MAX_DEPTH`` levels (a cycle is an error in the engine too).
"""
from __future__ import annotations

from typing import Callable

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError
from sqlglot.optimizer.scope import traverse_scope

from planner.workload.scans import table_name

#: ``(database, view) -> the view's SQL text`` or ``None`` when the name is not a view.
ViewLookup = Callable[[str, str], "str | None"]
MAX_DEPTH = 16


class Views:
    def __init__(self, dialect: str = "hive", lookup: ViewLookup | None = None):
        self.dialect = dialect
        self.lookup = lookup
        self.defined: dict[str, exp.Query] = {}  # qualified (or bare) lower-case name -> definition
        self.read: set[str] = set()  # names of views some query read
        self._fetched: dict[str, exp.Query | None] = {}

    def __bool__(self) -> bool:
        return bool(self.defined) or self.lookup is not None

    def define(self, name: exp.Table, body: exp.Query, current_db: str | None) -> str:
        key = table_name(name, current_db)
        body = _qualified(body.copy(), current_db)
        self.defined[key] = self.inline(body, current_db)
        self.read.discard(key)
        return key

    def drop(self, name: exp.Table, current_db: str | None) -> None:
        self.defined.pop(table_name(name, current_db), None)

    def inline(self, tree: exp.Expression, current_db: str | None, depth: int = 0) -> exp.Expression:
        """``tree`` (changed in place) with every view it reads replaced by the view's definition."""
        if not self or depth > MAX_DEPTH:
            return tree
        swaps: list[tuple[exp.Table, exp.Query]] = []
        for scope in traverse_scope(tree):
            for name, source in scope.sources.items():
                if not isinstance(source, exp.Table):
                    continue
                body = self._view(source, current_db, depth)
                if body is not None:
                    swaps.append((source, body))
        if not swaps:
            return tree
        for node, body in swaps:
            alias = node.args.get("alias")
            ident = alias.this.copy() if alias is not None and alias.this else exp.to_identifier(node.name)
            node.replace(exp.Subquery(this=body.copy(), alias=exp.TableAlias(this=ident)))
        return tree

    def _view(self, node: exp.Table, current_db: str | None, depth: int) -> exp.Query | None:
        key = table_name(node, current_db)
        if key in self.defined:
            self.read.add(key)
            return self.defined[key]
        if "." not in key:
            short = [k for k in self.defined if k.rsplit(".", 1)[-1] == key]
            if len(short) == 1:
                self.read.add(short[0])
                return self.defined[short[0]]
        if self.lookup is None:
            return None
        if key not in self._fetched:
            self._fetched[key] = None
            db = node.args.get("db")
            text = self.lookup(db.name if db is not None else (current_db or "default"), node.name)
            if text:
                try:
                    body = sqlglot.parse_one(text, read=self.dialect)
                except (ParseError, TokenError):
                    body = None
                if isinstance(body, exp.Query):
                    view_db = db.name.lower() if db is not None else current_db
                    self._fetched[key] = self.inline(_qualified(body, view_db), view_db, depth + 1)
        return self._fetched[key]


def _qualified(body: exp.Query, db: str | None) -> exp.Query:
    """Unqualified base tables of ``body`` named in ``db`` (CTE references left alone)."""
    if not db:
        return body
    ctes = {c.alias_or_name.lower() for c in body.find_all(exp.CTE)}
    for t in body.find_all(exp.Table):
        if t.args.get("db") is None and t.name and t.name.lower() not in ctes and isinstance(t.this, exp.Identifier):
            t.set("db", exp.to_identifier(db))
    return body

"""The partition rewrite as every caller reaches it: ``planner.rewrite.aggregate_rewrite``'s
``rewrite_statement`` and ``explain_statement`` (the CLI, ``planner.sql`` and the metastore edge
call nothing else). With no aggregate index they must answer exactly as
``planner.rewrite.query_rewrite`` does; the tests of the plain rewrite call them through these two
functions, so a slip in the entry points (an argument not passed on) fails those tests too."""
from __future__ import annotations

from planner.rewrite.aggregate_rewrite import explain_statement, rewrite_statement


def rewrite_query(sql, layouts, **kw):
    text, notes, aggregate = rewrite_statement(sql, layouts, **kw)
    assert aggregate is None, aggregate
    return text, notes


def explain_query(sql, layouts, stats=None, **kw):
    scans, aggregate = explain_statement(sql, layouts, stats, **kw)
    assert aggregate is None, aggregate
    return scans

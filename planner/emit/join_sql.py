"""LEFT JOIN chains that follow join paths from a laid-out table, shared prefixes joined once.

    FROM tpch.lineitem t
    LEFT JOIN tpch.supplier j1 ON t.l_suppkey = j1.s_suppkey
    LEFT JOIN tpch.nation j2 ON j1.s_nationkey = j2.n_nationkey

Used where a row needs a joined column's value: the per-partition ranges recorded at apply
(``hive_integration.spark.join_ranges``), the sample's joined attributes (``hive_integration.spark.join_sample``)
and a sideways cut's partition of a row (``planner.emit.apply_sql``). Each hop must join a unique
key, so the chain keeps one row per row of ``t``; the callers check that on the data.
"""
from __future__ import annotations

from typing import Sequence

from sqlglot import exp

from planner.model.join_paths import JoinColumn

SOURCE_ALIAS = "t"


def table_ref(name: str) -> exp.Table:
    """``db.t`` as a table reference, each part quoted (the join path's names are plain names)."""
    parts = name.split(".")
    return exp.Table(this=exp.to_identifier(parts[-1], quoted=True),
                     db=exp.to_identifier(parts[-2], quoted=True) if len(parts) > 1 else None)


def qualified_column(alias: str, name: str) -> exp.Column:
    """``alias.`name``` (the name quoted)."""
    return exp.column(exp.to_identifier(name, quoted=True), table=exp.to_identifier(alias))


def key_counts(table: str, key: str) -> exp.Select:
    """``SELECT count(*), count(DISTINCT key) FROM table``: a hop joins a unique key iff they are equal."""
    k = exp.column(exp.to_identifier(key, quoted=True))
    return exp.select(exp.Count(this=exp.Star()), exp.Count(this=exp.Distinct(expressions=[k]))).from_(table_ref(table))


def table_counts(table: str, keys: Sequence[str], columns: Sequence[str] = (), limit: int | None = None
                 ) -> exp.Select:
    """``SELECT count(*), count(DISTINCT k1), …, approx_count_distinct(c1), … FROM table``: each
    hop's key is unique iff its count equals the rows; the columns' estimates decide which keep
    their values as sets. One scan of the table for all of them; with ``limit``, of its first
    ``limit`` rows only (a key repeated there is not unique)."""
    ref = lambda name: exp.column(exp.to_identifier(name, quoted=True))  # noqa: E731
    q = exp.select(exp.Count(this=exp.Star()), *[exp.Count(this=exp.Distinct(expressions=[ref(k)])) for k in keys],
                   *[exp.Anonymous(this="approx_count_distinct", expressions=[ref(c)]) for c in columns])
    if limit is None:
        return q.from_(table_ref(table))
    rows = exp.select(*[ref(k) for k in dict.fromkeys([*keys, *columns])]).from_(table_ref(table)).limit(limit)
    return q.from_(rows.subquery("head"))


def join_chain(columns: Sequence[JoinColumn]) -> tuple[dict[tuple, str], list[tuple[exp.Expression, exp.EQ]]]:
    """LEFT JOINs that follow every column's join path from the laid-out table (alias ``t``), shared
    prefixes joined once: (alias of each hop prefix, the joined tables with their ON conditions)."""
    aliases: dict[tuple, str] = {(): SOURCE_ALIAS}
    joins = []
    for c in columns:
        for n in range(1, len(c.path.hops) + 1):
            prefix = c.path.hops[:n]
            if prefix in aliases:
                continue
            hop, before = prefix[-1], aliases[prefix[:-1]]
            alias = aliases[prefix] = f"j{len(aliases)}"
            on = exp.EQ(this=qualified_column(before, hop.column), expression=qualified_column(alias, hop.key))
            joins.append((exp.alias_(table_ref(hop.table), alias, table=True), on))
    return aliases, joins


def chained(q: exp.Select, source: exp.Expression, joins) -> exp.Select:
    """``q`` reading ``source`` as ``t`` with the LEFT JOINs of ``join_chain``."""
    q = q.from_(exp.alias_(source, SOURCE_ALIAS, table=True), copy=False)
    for t, on in joins:
        q = q.join(t, on=on, join_type="left", copy=False)
    return q


__all__ = ["SOURCE_ALIAS", "chained", "join_chain", "key_counts", "qualified_column", "table_counts", "table_ref"]

"""The statistics sample joined to the tables the workload filters through: joined attributes.

To price a predicate induced through a join (``planner.costmodel.joined``), the cost model needs, for
each sampled row of the laid-out table, the value its join path reaches. One Spark query joins the
sample (shipped to Spark as a temporary view) along every join path, as apply's join ranges do
(``hive_integration.spark.join_ranges``: LEFT JOINs on unique keys only, so each sampled row keeps one
row):

    SELECT t.sid, j1.o_orderdate AS c0, j1.o_orderkey IS NOT NULL AS m0, j4.r_name AS c1, …
    FROM sample t LEFT JOIN tpch.orders j1 ON t.l_orderkey = j1.o_orderkey
                  LEFT JOIN tpch.customer j2 ON j1.o_custkey = j2.c_custkey …

Each end column becomes a sample column named ``joined_attribute(column)``, each path's "found a
partner" flag ``match_attribute(path)``, and ``TableStats.joined`` names their Spark types. The
sample rows themselves are unchanged: it is the same uniform sample, each row with the values the
join gives it. A column that apply would not record (a fanning-out hop, a float or timestamp type)
is not added, so the cost model does not price pruning the rewrite could not do.
"""
from __future__ import annotations

import uuid
from dataclasses import replace
from typing import Callable, Sequence

import numpy as np
import pyarrow as pa
from sqlglot import exp

from hive_integration.spark.join_ranges import usable_columns
from planner.costmodel.joined import joined_attribute, match_attribute
from planner.costmodel.statistics import TableStats
from planner.emit.join_sql import chained, join_chain, qualified_column
from planner.model.join_paths import JoinColumn

_SID = "planner_sample_row"


def with_joined_columns(spark, stats: TableStats, columns: Sequence[JoinColumn],
                        say: Callable[[str], None] = lambda m: None) -> TableStats:
    """``stats`` whose sample carries the joined attributes of ``columns`` (those apply can record)."""
    if not columns or stats.sample.num_rows == 0:
        return stats
    hops: dict = {}
    usable = usable_columns(spark, stats.table, columns, say, hops)
    if not usable:
        return stats
    sample = stats.sample
    firsts = sorted({c.path.hops[0].column for c, _ in usable})
    missing = [f for f in firsts if f not in sample.column_names]
    if missing:
        say(f"joined columns not sampled: the sample has no column {missing[0]}")
        return stats
    keys = pa.table([pa.array(np.arange(sample.num_rows, dtype=np.int64))] + [sample.column(f) for f in firsts],
                    names=[_SID] + firsts)
    view = f"planner_sample_{uuid.uuid4().hex[:12]}"
    spark.createDataFrame(keys).createOrReplaceTempView(view)
    try:
        aliases, joins = join_chain([c for c, _ in usable])
        q = exp.select(qualified_column("t", _SID).as_("sid"))
        paths = list(dict.fromkeys(c.path for c, _ in usable))
        for i, (c, _) in enumerate(usable):
            q = q.select(qualified_column(aliases[c.path.hops], c.column).as_(f"c{i}"), copy=False)
        for i, p in enumerate(paths):
            key = qualified_column(aliases[p.hops], p.hops[-1].key)
            q = q.select(exp.Not(this=exp.Is(this=key, expression=exp.Null())).as_(f"m{i}"), copy=False)
        q = chained(q, exp.Table(this=exp.to_identifier(view)), joins)
        joined = spark.sql(q.sql(dialect="spark")).toArrow()
    finally:
        spark.catalog.dropTempView(view)
    joined = joined.take(pa.array(np.argsort(joined.column("sid").to_numpy())))
    if joined.num_rows != sample.num_rows:  # a hop fanned out after all: price nothing rather than wrongly
        say("joined columns not sampled: the sample join did not keep one row per sampled row")
        return stats
    for i, (c, _) in enumerate(usable):
        sample = sample.append_column(joined_attribute(c), joined.column(f"c{i}"))
    for i, p in enumerate(paths):
        sample = sample.append_column(match_attribute(p), joined.column(f"m{i}"))
    say(f"sample joined to {len({h.table for c, _ in usable for h in c.path.hops})} table(s) for "
        f"{len(usable)} joined column(s) the workload filters")
    rows = {h.table: hops[(h.table, h.key)][0] for c, _ in usable for h in c.path.hops}  # counted in full
    return replace(stats, sample=sample, joined=tuple((joined_attribute(c), t) for c, t in usable),
                   joined_rows=tuple(sorted(rows.items())))


__all__ = ["with_joined_columns"]

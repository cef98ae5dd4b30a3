"""Ad-hoc single-predicate range queries on ``lineitem``.

Each query has exactly ONE range predicate on a column drawn uniformly from
``ADHOC_COLUMNS``, selecting about 10% of lineitem at a random position of the
column's value distribution -- Amoeba's worst case (a query that touches one
random attribute, so no fixed partitioning serves all queries).  Ranges are
half-open: ``col >= lo and col < hi``.

Selectivities come from the TPC-H value distributions documented in
:mod:`devtools.workload_gen.q6_variants`.  Discrete columns cannot always hit 10%:
``l_discount`` (11 values) gives 9.1%, ``l_tax`` (9 values) 11.1%,
``l_quantity`` (50 values) exactly 10%.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from .q6_variants import Predicate, lineitem_domain

__all__ = ["ADHOC_COLUMNS", "AdhocQuery", "adhoc_query_specs", "adhoc_workload"]

#: Columns an ad-hoc query may filter on.
ADHOC_COLUMNS: tuple[str, ...] = (
    "l_orderkey",
    "l_partkey",
    "l_suppkey",
    "l_quantity",
    "l_extendedprice",
    "l_discount",
    "l_tax",
    "l_shipdate",
    "l_commitdate",
    "l_receiptdate",
)


@dataclass(frozen=True)
class AdhocQuery:
    """One generated ad-hoc query with its predicate."""

    predicate: Predicate
    sql: str

    @property
    def column(self) -> str:
        return self.predicate.column

    @property
    def selectivity(self) -> float:
        return self.predicate.selectivity


def _sql(pred: Predicate) -> str:
    return (
        f"-- adhoc {pred.column}\n"
        "select\n"
        "    count(*) as row_count,\n"
        "    sum(l_extendedprice * (1 - l_discount)) as revenue\n"
        "from\n"
        "    lineitem\n"
        "where\n"
        f"    {pred.sql}"
    )


def adhoc_query_specs(
    n: int,
    seed: int,
    *,
    scale_factor: float = 1,
    selectivity: float = 0.10,
    columns: tuple[str, ...] = ADHOC_COLUMNS,
) -> list[AdhocQuery]:
    """``n`` ad-hoc queries with their predicates (see the module docstring)."""
    if n < 0:
        raise ValueError("n must be >= 0")
    if not columns:
        raise ValueError("columns must not be empty")
    domains = {c: lineitem_domain(c, scale_factor) for c in columns}
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        col = rng.choice(columns)
        pred = domains[col].range(selectivity, rng, style="halfopen")
        out.append(AdhocQuery(pred, _sql(pred)))
    return out


def adhoc_workload(
    n: int,
    seed: int,
    *,
    scale_factor: float = 1,
    selectivity: float = 0.10,
    columns: tuple[str, ...] = ADHOC_COLUMNS,
) -> list[str]:
    """``n`` ad-hoc query texts (each starts with a ``-- adhoc <column>`` comment)."""
    return [
        q.sql
        for q in adhoc_query_specs(n, seed, scale_factor=scale_factor, selectivity=selectivity, columns=columns)
    ]

"""One probe per lineitem scan of a query: what that scan must read, as a query Spark can measure.

A held-out TPC-H query joins lineitem with up to seven other tables; the layout only changes how
its *lineitem scans* read. So each scan becomes a probe over the laid-out table alone:

    -- tpch q12, scan "lineitem" (pushable predicate, projected onto lineitem's own columns)
    SELECT COUNT(*) AS n, BIT_XOR(XXHASH64(`l_orderkey`, `l_shipmode`, …)) AS h
    FROM `bench`.`li_x`
    WHERE `l_shipmode` IN ('MAIL', 'SHIP') AND `l_commitdate` < `l_receiptdate` AND …

* WHERE is the scan's pushable predicate exactly as ``planner.workload`` finds it, with the atoms
  that mention other tables (join keys, correlation) replaced by TRUE after negation normal form:
  the strongest condition on lineitem's own columns the query implies. Spark pushes it into the
  Parquet reader just as it would push the lineitem-local part of the whole query.
* The select list reads the very columns the query reads from this scan, so bytes and wall time
  are those of the scan, and ``(n, h)`` is a checksum: every layout must return the same pair,
  which checks the pruning rewrite on every measured query.
* On the source table, ``n`` is the lower bound: the rows this scan cannot avoid reading.

Everything is built as sqlglot expressions and printed with the ``spark`` dialect.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from sqlglot import exp

from planner.cnf.bind import bind
from planner.cnf.convert import project
from planner.cnf.ir import And, ColumnPair, Const, Expr, Opaque, Or, Pred
from planner.cnf.normalize import nnf
from planner.emit.conditions import column_ref, valueset_predicate
from planner.emit.ddl import table_expr
from planner.semantics.kinds import Kind
from planner.workload import Query, Scan

_PAIR_OPS = {"<": exp.LT, "<=": exp.LTE, "=": exp.EQ, "<>": exp.NEQ, ">": exp.GT, ">=": exp.GTE}


@dataclass(frozen=True)
class Probe:
    query: int  # index of the query in its workload
    template: str
    scan: int  # index of the scan among the workload's lineitem scans (the cost model's order)
    predicate: exp.Expression  # TRUE when the scan has nothing lineitem-local to filter on
    columns: tuple[str, ...]  # columns the scan reads, in table order
    weakened: int  # atoms on lineitem's own columns that could not be expressed (treated as TRUE)

    def sql(self, table: str) -> str:
        """The probe over ``table`` (``db.name``), printed for Spark."""
        return probe_select(table, self.predicate, self.columns).sql(dialect="spark")


def _paren(e: exp.Expression) -> exp.Expression:
    return exp.Paren(this=e) if isinstance(e, (exp.And, exp.Or)) else e


def ir_to_sql(e: Expr, counter: list[int]) -> exp.Expression:
    """A bound, projected IR predicate in NNF as a sqlglot predicate (TRUE exactly where ``e`` is).

    Opaque atoms left after projection are this table's own (a UDF, ``x IN (subquery)``): they
    become TRUE, which is sound in NNF (the predicate only gets weaker) and counted in ``counter``.
    """
    if isinstance(e, Const):
        return exp.true() if e.value else exp.false()  # UNKNOWN keeps no row in WHERE, like FALSE
    if isinstance(e, Pred):
        return valueset_predicate(column_ref(e.column), e.true)
    if isinstance(e, ColumnPair):
        return _PAIR_OPS[e.op](this=column_ref(e.left), expression=column_ref(e.right))
    if isinstance(e, Opaque):
        counter[0] += 1
        return exp.true()
    if isinstance(e, (And, Or)):
        parts = [ir_to_sql(a, counter) for a in sorted(e.args, key=str)]  # sorted: stable SQL text
        if isinstance(e, And):
            parts = [p for p in parts if p != exp.true()]
            if any(p == exp.false() for p in parts):
                return exp.false()
            if not parts:
                return exp.true()
            return parts[0] if len(parts) == 1 else exp.and_(*[_paren(p) for p in parts])
        if any(p == exp.true() for p in parts):
            return exp.true()
        parts = [p for p in parts if p != exp.false()]
        if not parts:
            return exp.false()
        return parts[0] if len(parts) == 1 else exp.or_(*[_paren(p) for p in parts])
    raise TypeError(f"unexpected IR node {type(e).__name__} after NNF")


def scan_predicate(scan: Scan, kinds: Mapping[str, Kind]) -> tuple[exp.Expression, int]:
    counter = [0]
    return ir_to_sql(project(nnf(bind(scan.predicate, kinds))), counter), counter[0]


def probe_select(table: str, predicate: exp.Expression, columns: tuple[str, ...]) -> exp.Select:
    aggs: list[exp.Expression] = [exp.alias_(exp.Count(this=exp.Star()), "n")]
    if columns:
        h = exp.Anonymous(this="xxhash64", expressions=[column_ref(c) for c in columns])
        aggs.append(exp.alias_(exp.Anonymous(this="bit_xor", expressions=[h]), "h"))
    select = exp.select(*aggs).from_(table_expr(table, "spark"))
    if predicate != exp.true():
        select = select.where(predicate)
    return select


def probes_for(queries: tuple[Query, ...], table: str, columns: Mapping[str, str],
               kinds: Mapping[str, Kind]) -> list[Probe]:
    """One probe per scan of ``table``, in the order ``planner.analysis.table_analysis.analyze_table`` lists them."""
    out: list[Probe] = []
    order = list(columns)
    for qi, q in enumerate(queries):
        for s in q.scans:
            if s.table != table:
                continue
            pred, weakened = scan_predicate(s, kinds)
            read = order if s.columns is None else [c for c in order if c in s.columns]
            out.append(Probe(qi, q.template, len(out), pred, tuple(read), weakened))
    return out

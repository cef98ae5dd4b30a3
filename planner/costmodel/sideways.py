"""Sideways cuts (MTO, SIGMOD 2021): partitions cut on a column of a joined table.

TPC-H's Q5, Q7, Q8 and Q21 filter lineitem only through its joins: ``n_name = 'SAUDI ARABIA'`` on
the supplier's nation, ``r_name = 'AMERICA'`` on the customer's region. No column of lineitem is
correlated with them, so no cut on lineitem's own columns prunes those scans. A *sideways* cut
partitions lineitem by the joined column itself (a *joined attribute*, ``planner.costmodel.joined``):
each partition then holds the rows of a few nations, its recorded range of ``n_name`` is those
nations (``hive_integration.spark.join_ranges``), and the rewrite skips the others.

Contenders, each priced like any other layout (the sample carries the joined attribute):

* a CPS plan on the joined attribute alone (``cps:⋈ …``);
* the best single-column plans on the table's own columns, each partition split by the joined
  attribute's groups (``… × ⋈ …``): a ship-date range *and* a region.

Only joined attributes a scan's induced predicate restricts, with at most ``SMALL_SET`` values in
the sample (a nation, a region, a market segment): a cut on a wide column needs many partitions
to help any one query. Apply computes the attribute with the same LEFT JOINs the sample was drawn
with (``planner.emit.apply_sql.joined_source``); the layout records which join column it is
(``Layout.joined``).

And only through tables of at most ``BROADCAST_ROWS`` rows (``TableStats.joined_rows``), which the
write joins by broadcast: the build then costs about a copy (a scan of each small table and a hash
look-up per row). Through ``orders`` (15 M rows at SF 10) it would shuffle the whole fact table by
the join key, a second copy's worth of work the cost model does not price. So TPC-H's cuts on the
supplier's nation or region are offered; the customer's region (reached through ``orders``) and
the part's brand are not.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Sequence

from planner.costmodel.dpmerge import cps_single_column
from planner.costmodel.joined import joined_attribute
from planner.model.layout import Layout, Partition
from planner.pruning.join_pruning import SMALL_SET
from planner.semantics.kinds import Kind

CUT_KINDS = (Kind.STRING, Kind.BOOLEAN, Kind.INTEGER)
BROADCAST_ROWS = 1_000_000  # rows of the largest table a sideways cut joins (supplier at SF 100)
OWN_PLANS = 2  # the best own single-column plans that are split by each joined attribute


def cut_attributes(model, max_rows: int = BROADCAST_ROWS) -> list[str]:
    """Joined attributes some scan's induced predicate restricts, with few values, reached through
    tables of at most ``max_rows`` rows (unknown: not offered), most restricted first."""
    counts: dict[str, int] = {}
    for wants in model.joins.wants:
        for w in wants:
            counts[w.attribute] = counts.get(w.attribute, 0) + 1
    columns = {joined_attribute(c): c for c in model.analysis.join_columns()}
    rows = dict(model.stats.joined_rows)

    def small(a: str) -> bool:
        c = columns.get(a)
        return c is not None and all(rows.get(h.table, max_rows + 1) <= max_rows for h in c.path.hops)

    return [a for a, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
            if model.kinds.get(a) in CUT_KINDS and len(model.sample.uniques(a)) <= SMALL_SET and small(a)]


def with_joined(model, layout: Layout) -> Layout:
    """``layout`` recording the join column of every joined attribute its regions name."""
    columns = {joined_attribute(c): c for c in model.analysis.join_columns()}
    joined = tuple((a, columns[a]) for a in layout.attributes if a in columns)
    return replace(layout, joined=joined) if joined else layout


def split(layout: Layout, by: Layout, max_partitions: int) -> Layout | None:
    """Every partition of ``layout`` split by the regions of ``by`` (a plan on another attribute);
    None beyond ``max_partitions``."""
    if len(layout.partitions) * len(by.partitions) > max_partitions:
        return None
    parts = tuple(Partition(i, p.region + q.region)
                  for i, (p, q) in enumerate(((p, q) for p in layout.partitions for q in by.partitions), 1))
    kinds = tuple(dict(layout.kinds + by.kinds).items())
    return Layout(layout.table, f"{layout.strategy} × {by.strategy}", parts, kinds=kinds,
                  derived=layout.derived, joined=layout.joined + by.joined)


def sideways_contenders(model, singles: Sequence[Layout]) -> list[Layout]:
    """CPS plans on each cut attribute, and the best ``OWN_PLANS`` single-column plans split by them."""
    attrs = cut_attributes(model)
    if not attrs:
        return []
    own = sorted((s for s in singles if len(s.partitions) > 1 and not s.joined),
                 key=lambda s: model.evaluate(s).total)[:OWN_PLANS]
    out = []
    for a in attrs:
        cut = with_joined(model, cps_single_column(model, a))
        if len(cut.partitions) < 2 or not cut.joined:
            continue
        out.append(cut)
        out += [s for s in (split(o, cut, model.params.max_partitions) for o in own) if s is not None]
    return out


__all__ = ["BROADCAST_ROWS", "CUT_KINDS", "cut_attributes", "sideways_contenders", "split", "with_joined"]

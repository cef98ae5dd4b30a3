"""Partial re-layout: re-cut only the partitions whose gain pays for rewriting them (Amoeba §4.1).

Given the layout a table has now (``current``), the layout the recent workload would want
(``target``, e.g. the winner of ``planner.advice.ranking.advise`` on that workload) and the cost model of
that workload, each current partition ``P`` may be *re-cut* into the pieces ``P ∩ R`` for the
target's regions ``R``. Costs split by partition (a query's cost is the sum over the partitions it
reads), so the choice is made partition by partition, as in Amoeba:

    gain(P)  = Σ_q [cost_q(P) − cost_q(pieces of P)]       over the window's queries
    re-cut P   iff   gain(P) > c × rows(P)                  (c: how much dearer a written row is
                                                             than a read one; Amoeba measured 4)

Worked example: P holds 1M rows and 40 queries of the window each read it whole; cut by the new
hot column, 30 of them read 10 % of it: gain = 30 × 0.9M = 27M > 4 × 1M, so P is re-cut. A
partition 2 of 40 queries read gains at most 2M < 4M and is left alone.

Amoeba applies the rule to every subtree, the root included. Pieces of a partition keep the
current order and the current cuts (each piece is ``P ∩ R``), so when the whole workload moved they
are a poor copy of the target: every partition cut into fragments, sorted for the old queries. The
root is therefore a candidate of its own: the whole table laid out as the target, with its order:

    re-lay out the table   iff   gain(table) − c × rows(table) > 0  and beats the partitions' plan
                                 Σ_chosen [gain(P) − c × rows(P)]

(a drift from ship-date to ship-mode queries re-cuts every partition into many pieces sorted for the
old queries; laying out the whole table as the target rewrites as many rows and gains more).

The new layout stays one consistent description: the untouched partitions keep their ids (and the
generation that made them), the pieces get ids of a new generation (a digest of the new layout's
content, as ``planner.model.layout.with_generation``), and the order inside partitions stays the
current one (the root rewrites every partition, so it takes the target's order everywhere), so
``SORT BY`` of a later append or re-cut means the same everywhere. Queries rewritten for either
layout stay correct on the table in either state: an id a layout does not know is always read
(``planner.emit.conditions.partition_filter``).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Iterable, Mapping, Sequence

from planner.cnf.valueset import ValueSet
from planner.costmodel.cost import CostModel
from planner.model.layout import CATCH_ALL, Layout, Partition, generation_of, id_block
from planner.semantics.kinds import Kind

DEFAULT_WRITE_COST = 4.0  # Amoeba's c: a rewritten row costs as much as reading it four times

Region = tuple[tuple[str, ValueSet], ...]


def intersect_regions(a: Region, b: Region) -> Region | None:
    """The region both ``a`` and ``b`` hold (attributes in order of ``a``, then ``b``), or None
    when it is provably empty."""
    out = dict(a)
    for attr, vs in b:
        out[attr] = out[attr].intersect(vs) if attr in out else vs
        if out[attr].is_empty():
            return None
    return tuple(out.items())


def pieces(partition: Partition, target: Layout) -> list[Region]:
    """``partition``'s region cut by every target region it meets (the target's catch-all, which
    claims nothing of its own, is skipped). Together they cover the partition: the target's regions
    cover every row."""
    out = []
    for r in target.partitions:
        if r.id == CATCH_ALL and not r.region:
            continue
        got = intersect_regions(partition.region, r.region)
        if got is not None:
            out.append(got)
    return out or [partition.region]


@dataclass(frozen=True)
class PartitionGain:
    id: int
    rows: float  # estimated rows the partition holds now
    cost_now: float  # the window's cost on this partition (rows read + overheads), as it is
    cost_recut: float  # the same, were it cut into its pieces
    pieces: int
    reads: int  # how many of the window's scans read it now

    @property
    def gain(self) -> float:
        return self.cost_now - self.cost_recut


@dataclass(frozen=True)
class RelayoutPlan:
    current: Layout
    target: Layout
    layout: Layout  # the table's layout after the re-cut: untouched partitions + new pieces
    gains: tuple[PartitionGain, ...]  # every current partition, as costed
    chosen: tuple[int, ...]  # ids of the partitions to re-cut
    write_cost: float  # c
    new_ids: tuple[int, ...]  # ids of the pieces
    # set when the whole table is laid out as ``target`` (its cuts and order): the window's gain
    whole_gain: float | None = None
    # set by ``planner.advice.held_out.validated``: the action's net judged out of sample, and the plan it
    # declined when that net was not positive (this plan then rewrites nothing)
    held_out_net: float | None = None
    declined: RelayoutPlan | None = field(default=None, repr=False)

    @property
    def whole(self) -> bool:
        return self.whole_gain is not None

    @property
    def rows_rewritten(self) -> float:
        return sum(g.rows for g in self.gains if g.id in self.chosen)

    @property
    def gain(self) -> float:
        if self.whole_gain is not None:
            return self.whole_gain
        return sum(g.gain for g in self.gains if g.id in self.chosen)

    @property
    def net(self) -> float:
        """The window's gain less c × the rows rewritten (what the rule requires to be > 0)."""
        return self.gain - self.write_cost * self.rows_rewritten

    def validation_json(self) -> dict:
        """The held-out check's verdict (``planner.advice.held_out``): its net, and the plan it declined."""
        d = self.declined
        return {"held_out_net": None if self.held_out_net is None else round(self.held_out_net),
                "declined": None if d is None else {"whole": d.whole, "partitions": len(d.chosen),
                                                    "rows_rewritten": round(d.rows_rewritten),
                                                    "gain": round(d.gain)}}

    def to_json(self) -> dict:
        return {"chosen": list(self.chosen), "new_ids": list(self.new_ids), "write_cost": self.write_cost,
                "whole": self.whole, "rows_rewritten": round(self.rows_rewritten), "gain": round(self.gain),
                **self.validation_json(),
                "partitions": [{"id": g.id, "rows": round(g.rows), "reads": g.reads, "pieces": g.pieces,
                                "cost_now": round(g.cost_now), "cost_recut": round(g.cost_recut),
                                "gain": round(g.gain), "recut": g.id in self.chosen} for g in self.gains]}


def model_for(model: CostModel, *layouts: Layout) -> CostModel:
    """``model`` knowing the derived attributes (and their kinds) the layouts' regions name, so the
    sample can place rows in regions the window's queries never mention."""
    derived = dict(model.analysis.derived)
    kinds = dict(model.analysis.kinds)
    for layout in layouts:
        derived.update(dict(layout.derived))
        kinds.update({k: v for k, v in layout.kinds if k not in kinds})
        kinds.update({k: Kind.BOOLEAN for k, _ in layout.derived})
    if derived == dict(model.analysis.derived) and kinds == dict(model.analysis.kinds):
        return model
    analysis = replace(model.analysis, derived=derived, kinds=kinds)
    return CostModel(analysis, model.stats, model.params, weights=model.weights)


def partition_gains(model: CostModel, current: Layout, target: Layout) -> list[PartitionGain]:
    """Per current partition: what the window pays for it now and what it would pay re-cut.

    Each partition is costed as a layout of its own (rows of the sample outside it belong to no
    partition and cost nothing), so in-partition order and row-group skipping count as the model
    counts them for whole layouts."""
    model = model_for(model, current, target)
    out = []
    for p in current.partitions:
        if p.id == CATCH_ALL:
            continue
        alone = replace(current, partitions=(p,))
        now = model.evaluate(alone)
        cut = [Partition(-(i + 1), r) for i, r in enumerate(pieces(p, target))]
        recut = model.evaluate(replace(current, partitions=tuple(cut), derived=_union(current.derived, target.derived),
                                       kinds=_union(current.kinds, target.kinds)))
        out.append(PartitionGain(p.id, float(sum(now.partition_rows)), now.total, recut.total, len(cut),
                                 sum(1 for s in now.per_scan if s.partitions)))
    return out


def _union(a: Sequence[tuple], b: Sequence[tuple]) -> tuple:
    seen = dict(a)
    return tuple(seen.items()) + tuple((k, v) for k, v in b if k not in seen)


def choose(gains: Iterable[PartitionGain], write_cost: float = DEFAULT_WRITE_COST,
           only: Iterable[int] | None = None, max_partitions: int | None = None) -> tuple[int, ...]:
    """Ids whose gain exceeds ``write_cost`` × their rows (and that cut into more than one piece);
    ``only`` restricts the choice (e.g. to partitions whose order an append broke). With
    ``max_partitions``, the best gain per row rewritten goes first until the layout would hold more
    partitions than that (Hive's ``hive.exec.max.dynamic.partitions``)."""
    gains = list(gains)
    allowed = None if only is None else set(only)
    worth = [g for g in gains
             if g.pieces > 1 and g.gain > write_cost * g.rows and (allowed is None or g.id in allowed)]
    if max_partitions is None:
        return tuple(g.id for g in worth)
    count = len(gains)
    picked = set()
    for g in sorted(worth, key=lambda g: -g.gain / max(g.rows, 1.0)):
        if count + g.pieces - 1 <= max_partitions:
            picked.add(g.id)
            count += g.pieces - 1
    return tuple(g.id for g in worth if g.id in picked)


def relaid(current: Layout, target: Layout, chosen: Iterable[int]) -> tuple[Layout, tuple[int, ...]]:
    """The layout after re-cutting ``chosen``: the other partitions as they are, in place; each
    chosen one replaced by its pieces, numbered in a new generation. Returns it and the new ids."""
    chosen = set(chosen)
    derived = _union(current.derived, target.derived)
    kinds = _union(current.kinds, target.kinds)
    types = _union(current.types, target.types)
    parts: list[Partition] = []
    fresh: list[int] = []  # positions of new pieces in ``parts``
    for p in current.partitions:
        if p.id in chosen and p.id != CATCH_ALL:
            for region in pieces(p, target):
                fresh.append(len(parts))
                parts.append(Partition(-1, region))
        else:
            parts.append(p)
    draft = replace(current, partitions=tuple(parts), derived=derived, kinds=kinds, types=types,
                    joined=_union(current.joined, target.joined),
                    strategy=_strategy(current))
    if not fresh:
        return current, ()
    meta = dict(current.meta)
    for key in ("partition_rows", "files_per_partition"):
        if isinstance(meta.get(key), dict):
            meta[key] = {k: v for k, v in meta[key].items() if int(k) not in chosen}
    return _numbered(draft, fresh, {p.id for p in current.partitions}, meta, current.generation)


def _numbered(draft: Layout, fresh: Sequence[int], taken: set[int], meta: dict,
              previous: int | None) -> tuple[Layout, tuple[int, ...]]:
    """``draft`` with its partitions at positions ``fresh`` numbered in a new generation (a
    digest of ``draft``), clear of the ids in ``taken``; returns it and the new ids."""
    parts = list(draft.partitions)
    block = id_block(len(fresh))
    g = generation_of(draft)
    while any(g * block + i in taken for i in range(1, len(fresh) + 1)):
        g += 1  # a digest landing on ids in use: the next number is as good a name
    for i, pos in enumerate(fresh, 1):
        parts[pos] = Partition(g * block + i, parts[pos].region, g)
    meta = dict(meta, relayout_of=previous)
    return (replace(draft, partitions=tuple(parts), generation=g, meta=tuple(meta.items())),
            tuple(parts[pos].id for pos in fresh))


def as_target(current: Layout, target: Layout) -> tuple[Layout, tuple[int, ...]]:
    """The whole table laid out as ``target`` (its regions and order), numbered in a new generation
    clear of ``current``'s ids, so the re-cut runs as any partial one (stage, verify, swap). The
    catch-all keeps its id (every layout's ``ELSE``)."""
    draft = replace(target, partitions=tuple(Partition(-1, p.region) if p.id != CATCH_ALL else p
                                             for p in target.partitions),
                    partition_column=current.partition_column)
    fresh = [i for i, p in enumerate(target.partitions) if p.id != CATCH_ALL]
    layout, new_ids = _numbered(draft, fresh, {p.id for p in current.partitions}, dict(target.meta),
                                current.generation)
    renamed = {str(target.partitions[pos].id): str(pid) for pos, pid in zip(fresh, new_ids)}
    meta = dict(layout.meta)
    for key in ("partition_rows", "files_per_partition"):  # advise's hints, keyed by the new ids
        if isinstance(meta.get(key), dict):
            meta[key] = {renamed.get(k, k): v for k, v in meta[key].items()}
    return replace(layout, meta=tuple(meta.items())), new_ids


def _strategy(current: Layout) -> str:
    base = current.strategy.split(" + partial re-layout")[0]
    return base + " + partial re-layout"


def plan_relayout(model: CostModel, current: Layout, target: Layout, write_cost: float = DEFAULT_WRITE_COST,
                  only: Iterable[int] | None = None, force: Iterable[int] | None = None,
                  max_partitions: int | None = None, whole: bool = True) -> RelayoutPlan:
    """The partitions worth re-cutting for ``model``'s workload, and the layout after it.

    ``force``: ids re-cut whatever their gain (e.g. partitions an append left unordered: cutting
    them by their own region only re-sorts them). ``whole``: the whole table laid out as ``target``
    is a candidate too (not with ``only`` or ``force``, which name the partitions to touch); it is
    taken when its gain less c × the table's rows is positive and beats the partitions' plan."""
    gains = partition_gains(model, current, target)
    chosen = set(choose(gains, write_cost, only, max_partitions)) | set(force or ())
    ordered = tuple(g.id for g in gains if g.id in chosen)
    layout, new_ids = relaid(current, target, ordered)
    plan = RelayoutPlan(current, target, layout, tuple(gains), ordered, write_cost, new_ids)
    if whole and only is None and not force and gains:
        table = whole_plan(model, current, target, gains, write_cost)
        if table.net > max(plan.net, 0.0):
            return table
    return plan


def whole_plan(model: CostModel, current: Layout, target: Layout, gains: Sequence[PartitionGain],
               write_cost: float = DEFAULT_WRITE_COST) -> RelayoutPlan:
    """Every partition re-cut into the table laid out as ``target`` (the root of Amoeba's tree)."""
    model = model_for(model, current, target)
    gain = model.evaluate(current).total - model.evaluate(target).total
    layout, new_ids = as_target(current, target)
    return RelayoutPlan(current, target, layout, tuple(gains), tuple(g.id for g in gains), write_cost, new_ids,
                        whole_gain=gain)


def pieces_of(plan: RelayoutPlan) -> Mapping[int, tuple[int, ...]]:
    """Old id -> ids of its pieces in the new layout (in layout order)."""
    if plan.whole:
        new = [n for n in plan.layout.partitions if n.id in set(plan.new_ids)]
        return {p.id: tuple(n.id for n in new if intersect_regions(p.region, n.region) is not None)
                for p in plan.current.partitions if p.id in plan.chosen}
    out: dict[int, tuple[int, ...]] = {}
    ids = iter(plan.new_ids)
    for p in plan.current.partitions:
        if p.id in plan.chosen:
            out[p.id] = tuple(next(ids) for _ in pieces(p, plan.target))
    return out

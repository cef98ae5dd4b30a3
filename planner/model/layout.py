"""A physical layout: disjoint partitions, each defined by a region, plus an order inside them.

A *region* is a conjunction of per-attribute conditions (``{"l_shipdate": [1994-01-01, 1995-01-01),
"l_shipmode": {'MAIL'}}``); an attribute not named is unconstrained. Attributes are table columns
or derived boolean attributes such as ``l_commitdate < l_receiptdate``. CPS plans, multi-column
plans and partitioning trees are all just lists of regions, so one cost model, one SQL emitter and
one query rewriter serve them all.

Regions of one layout are pairwise disjoint and cover every row, NULLs included; the emitter adds
a catch-all partition anyway, and the rewriter always reads it, so a row that somehow escapes all
regions is still found.

**Partition ids name regions, forever.** A layout draws its ids from a block of its own
*generation* (``generation * block + 1 …``): ``with_generation`` numbers the partitions of an
advised layout, the generation being a digest of the layout's content, so two different layouts of
one table never share an id (a counter would repeat after a rollback), while the very same layout
advised twice gets the very same ids. A rewritten query then skips only partitions whose ids its
layout knows, and reads every id it does not know (``planner.emit.conditions.partition_filter``):
run against a table laid out differently (a re-apply, a rollback to ``__before_``, a partial
re-layout), it reads more, never a wrong subset. Each partition records its generation, so a layout
whose partitions come from several generations (issue 15's partial re-layouts) can say which.

The layout also records what its regions mean: the Spark types of the columns they name, and the
``Settings`` (ANSI mode, session time zone) the workload was analysed under.

**An aggregate index** (``aggregate_index``, issue 32) may ride along: pre-aggregated cells of the
layout's partitions cut by a grid (``planner.model.aggregate_index``), which apply builds beside the
table and the rewrite answers aggregate queries from. It does not change the partitions or their
ids (the generation is a digest of the regions alone).

**Sideways cuts** (MTO's join-induced cuts): a region may name a *joined attribute*, a column of a
table reached through unique-key joins (``joined``: ``"⋈ supplier(s_suppkey = l_suppkey)/nation(…).n_name"``
-> its ``JoinColumn``). Apply computes it for every row with LEFT JOINs (``planner.emit.apply_sql``),
so lineitem's rows of one supplier nation share partitions. The rewrite never prunes by such a
region (the joined table may have changed since); it prunes through the per-partition ranges of
the joined column recorded at apply, which hold only while the joined tables' snapshots do
(``planner.pruning.join_pruning``).
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace
from typing import Any, Mapping

from planner.cnf.ir import ColumnPair
from planner.cnf.values import from_json, to_json
from planner.cnf.valueset import ValueSet
from planner.errors import LayoutError
from planner.model.aggregate_index import AggregateIndex
from planner.model.join_paths import JoinColumn
from planner.model.wording import plural
from planner.semantics.kinds import Kind
from planner.semantics.settings import Settings

LAYOUT_VERSION = 2
READABLE_VERSIONS = (1, 2)  # version 1: ids 1..N shared by every layout, timestamps as wall clock
CATCH_ALL = 0  # partition id that holds any row no region claims; always read
PARTITION_COLUMN_TYPE = "BIGINT"  # generation ids are 12 digits and more
GENERATIONS = (10 ** 8, 10 ** 9)  # generation numbers are 9 digits


@dataclass(frozen=True)
class Partition:
    id: int
    region: tuple[tuple[str, ValueSet], ...] = ()
    generation: int | None = None  # the layout generation that created this partition

    @property
    def conditions(self) -> dict[str, ValueSet]:
        return dict(self.region)

    def describe(self) -> str:
        return " AND ".join(f"{k} IN {v}" for k, v in self.region) or "all rows"


@dataclass(frozen=True)
class Ordering:
    """How rows are ordered inside each partition, so Parquet row groups can be skipped."""

    method: str = "none"  # none | sort | zorder
    columns: tuple[str, ...] = ()
    # z-order only: per column, the ascending quantile boundaries that bucket values before their
    # bits are interleaved (so the emitted SQL and the cost model compute the same z-value).
    bounds: tuple[tuple, ...] = ()

    def describe(self) -> str:
        return "none" if self.method == "none" else f"{self.method}({', '.join(self.columns)})"


@dataclass(frozen=True)
class Layout:
    table: str
    strategy: str
    partitions: tuple[Partition, ...]
    order: Ordering = Ordering()
    kinds: tuple[tuple[str, Kind], ...] = ()  # kind of every attribute a region names
    derived: tuple[tuple[str, ColumnPair], ...] = ()  # derived attribute -> column comparison
    partition_column: str = "planner_pid"
    meta: tuple[tuple[str, Any], ...] = field(default=(), compare=False)
    generation: int | None = None  # None: ids as built (tests, benchmarks), not from a generation
    settings: Settings = Settings()  # the session the workload was analysed under
    types: tuple[tuple[str, str], ...] = ()  # Spark type of every column a region names
    version: int = LAYOUT_VERSION  # 1: read from an older planner (not safe to prune by)
    joined: tuple[tuple[str, JoinColumn], ...] = ()  # joined attribute -> the column it is (sideways cuts)
    # pre-aggregated cells apply builds beside the table (planner.model.aggregate_index); None: no index
    aggregate_index: AggregateIndex | None = None

    @property
    def known_ids(self) -> tuple[int, ...]:
        """The partition ids whose regions this layout vouches for (the catch-all never)."""
        return tuple(sorted({p.id for p in self.partitions} - {CATCH_ALL}))

    @property
    def identity(self) -> str:
        """A short name of the layout for messages and SQL comments."""
        return f"generation {self.generation}" if self.generation is not None else f"{self.strategy}"

    @property
    def attributes(self) -> list[str]:
        seen: dict[str, None] = {}
        for p in self.partitions:
            for k, _ in p.region:
                seen.setdefault(k)
        return list(seen)

    def kind(self, attribute: str) -> Kind:
        return dict(self.kinds)[attribute]

    @property
    def partition_count(self) -> int:
        """The partitions the layout cuts the table into: its regions, the catch-all (partition 0,
        expected empty, always read) left out. Every report counts partitions this way."""
        return len(self.known_ids)

    def cut_text(self) -> str:
        """``12 partitions on (l_shipdate, l_quantity)``, or ``1 partition (the whole table)``."""
        attrs = ", ".join(self.attributes)
        return plural(self.partition_count, "partition") + (f" on ({attrs})" if attrs else " (the whole table)")

    def describe(self) -> str:
        return f"{self.strategy}: {self.cut_text()}, order {self.order.describe()}"

    # ---- versioned JSON ---------------------------------------------------------------------
    def to_json(self) -> dict:
        return {
            "version": LAYOUT_VERSION,
            "table": self.table,
            "strategy": self.strategy,
            "generation": self.generation,
            "settings": self.settings.to_json(),
            "partition_column": self.partition_column,
            "order": {"method": self.order.method, "columns": list(self.order.columns),
                      "bounds": [[to_json(v) for v in b] for b in self.order.bounds]},
            "attributes": {k: v.value for k, v in self.kinds},
            "types": dict(self.types),
            "derived": {k: [p.left, p.op, p.right] for k, p in self.derived},
            **({"joined": {k: c.to_json() for k, c in self.joined}} if self.joined else {}),
            **({"aggregate_index": self.aggregate_index.to_json()} if self.aggregate_index is not None else {}),
            "partitions": [
                {"id": p.id, "generation": p.generation, "region": {k: v.to_json() for k, v in p.region}}
                for p in self.partitions
            ],
            "meta": dict(self.meta),
        }

    @classmethod
    def from_json(cls, obj: Mapping) -> "Layout":
        try:
            version = obj["version"]
            if version not in READABLE_VERSIONS:
                raise LayoutError(f"layout version {version} is not supported (this planner reads "
                                  f"{', '.join(map(str, READABLE_VERSIONS))})")
            return cls(
                table=obj["table"],
                strategy=obj["strategy"],
                partition_column=obj["partition_column"],
                order=Ordering(obj["order"]["method"], tuple(obj["order"]["columns"]),
                               tuple(tuple(from_json(v) for v in b) for b in obj["order"].get("bounds", []))),
                kinds=tuple((k, Kind(v)) for k, v in obj["attributes"].items()),
                derived=tuple((k, ColumnPair(*v)) for k, v in obj["derived"].items()),
                joined=tuple((k, JoinColumn.from_json(v)) for k, v in (obj.get("joined") or {}).items()),
                partitions=tuple(
                    Partition(p["id"], tuple((k, ValueSet.from_json(v)) for k, v in p["region"].items()),
                              p.get("generation"))
                    for p in obj["partitions"]
                ),
                meta=tuple(obj.get("meta", {}).items()),
                generation=obj.get("generation"),
                settings=Settings.from_json(obj.get("settings") or {}),
                types=tuple((obj.get("types") or {}).items()),
                version=version,
                aggregate_index=AggregateIndex.from_json(obj["aggregate_index"]) if obj.get("aggregate_index") else None,
            )
        except LayoutError:
            raise
        except (KeyError, TypeError, ValueError) as e:
            raise LayoutError(f"malformed layout: {type(e).__name__}: {e}") from None

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=2, sort_keys=False, ensure_ascii=False)

    @classmethod
    def loads(cls, text: str) -> "Layout":
        try:
            return cls.from_json(json.loads(text))
        except json.JSONDecodeError as e:
            raise LayoutError(f"layout is not valid JSON: {e}") from None


# ---- generations ---------------------------------------------------------------------------------
def _content(layout: Layout) -> str:
    """What the partitions mean: table, partition column, regions in order, derived attributes."""
    return json.dumps({"table": layout.table.lower(), "column": layout.partition_column.lower(),
                       "regions": [{k: v.to_json() for k, v in p.region} for p in layout.partitions],
                       "derived": {k: [d.left, d.op, d.right] for k, d in layout.derived},
                       **({"joined": {k: c.to_json() for k, c in layout.joined}} if layout.joined else {}),
                       "types": dict(layout.types)}, sort_keys=True, default=str)


def generation_of(layout: Layout) -> int:
    """A 9-digit generation number, a digest of the layout's content (equal content, equal number)."""
    digest = int(hashlib.sha256(_content(layout).encode()).hexdigest(), 16)
    lo, hi = GENERATIONS
    return lo + digest % (hi - lo)


def id_block(partitions: int) -> int:
    """Ids of one generation: ``generation * block + 1 …``; the block is a power of ten >= 1000."""
    block = 1000
    while block <= partitions:
        block *= 10
    return block


def keyed_by_id(value: Any) -> bool:
    """A meta entry keyed by partition id (``partition_rows``, ``files_per_partition``)."""
    return isinstance(value, dict) and bool(value) and all(str(x).lstrip("-").isdigit() for x in value)


def with_generation(layout: Layout, generation: int | None = None) -> Layout:
    """``layout`` with its partitions numbered in a generation of their own (the catch-all keeps 0).

    Meta entries keyed by partition id (``partition_rows``, ``files_per_partition``) follow.
    """
    g = generation_of(layout) if generation is None else generation
    regions = [p for p in layout.partitions if p.id != CATCH_ALL]
    block = id_block(len(regions))
    mapping = {p.id: g * block + i for i, p in enumerate(regions, 1)}
    parts = tuple(replace(p, id=mapping.get(p.id, p.id), generation=g if p.id in mapping else p.generation)
                  for p in layout.partitions)
    meta = {}
    for k, v in layout.meta:
        if keyed_by_id(v):
            v = {str(mapping.get(int(x), int(x))): y for x, y in v.items()}
        meta[k] = v
    return replace(layout, partitions=parts, generation=g, meta=tuple(meta.items()))


def clashing_ids(new: Layout, old: Layout) -> list[int]:
    """Ids both layouts use for *different* regions (a rewrite of one would misread the other)."""
    mine = {p.id: p.region for p in new.partitions if p.id != CATCH_ALL}
    return sorted(pid for pid, region in ((p.id, p.region) for p in old.partitions)
                  if pid in mine and mine[pid] != region)

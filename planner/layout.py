"""A physical layout: disjoint partitions, each defined by a region, plus an order inside them.

A *region* is a conjunction of per-attribute conditions (``{"l_shipdate": [1994-01-01, 1995-01-01),
"l_shipmode": {'MAIL'}}``); an attribute not named is unconstrained. Attributes are table columns
or derived boolean attributes such as ``l_commitdate < l_receiptdate``. CPS plans, multi-column
plans and partitioning trees are all just lists of regions, so one cost model, one SQL emitter and
one query rewriter serve them all.

Regions of one layout are pairwise disjoint and cover every row, NULLs included; the emitter adds
a catch-all partition anyway, and the rewriter always reads it, so a row that somehow escapes all
regions is still found.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Mapping

from planner.cnf.ir import ColumnPair
from planner.cnf.values import Kind, from_json, to_json
from planner.cnf.valueset import ValueSet
from planner.errors import LayoutError

LAYOUT_VERSION = 1
CATCH_ALL = 0  # partition id that holds any row no region claims; always read


@dataclass(frozen=True)
class Partition:
    id: int
    region: tuple[tuple[str, ValueSet], ...] = ()

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

    @property
    def attributes(self) -> list[str]:
        seen: dict[str, None] = {}
        for p in self.partitions:
            for k, _ in p.region:
                seen.setdefault(k)
        return list(seen)

    def kind(self, attribute: str) -> Kind:
        return dict(self.kinds)[attribute]

    def describe(self) -> str:
        attrs = ", ".join(self.attributes) or "-"
        return f"{self.strategy}: {len(self.partitions)} partitions on ({attrs}), order {self.order.describe()}"

    # ---- versioned JSON ---------------------------------------------------------------------
    def to_json(self) -> dict:
        return {
            "version": LAYOUT_VERSION,
            "table": self.table,
            "strategy": self.strategy,
            "partition_column": self.partition_column,
            "order": {"method": self.order.method, "columns": list(self.order.columns),
                      "bounds": [[to_json(v) for v in b] for b in self.order.bounds]},
            "attributes": {k: v.value for k, v in self.kinds},
            "derived": {k: [p.left, p.op, p.right] for k, p in self.derived},
            "partitions": [
                {"id": p.id, "region": {k: v.to_json() for k, v in p.region}} for p in self.partitions
            ],
            "meta": dict(self.meta),
        }

    @classmethod
    def from_json(cls, obj: Mapping) -> "Layout":
        try:
            version = obj["version"]
            if version != LAYOUT_VERSION:
                raise LayoutError(f"layout version {version} is not supported (this planner reads {LAYOUT_VERSION})")
            return cls(
                table=obj["table"],
                strategy=obj["strategy"],
                partition_column=obj["partition_column"],
                order=Ordering(obj["order"]["method"], tuple(obj["order"]["columns"]),
                               tuple(tuple(from_json(v) for v in b) for b in obj["order"].get("bounds", []))),
                kinds=tuple((k, Kind(v)) for k, v in obj["attributes"].items()),
                derived=tuple((k, ColumnPair(*v)) for k, v in obj["derived"].items()),
                partitions=tuple(
                    Partition(p["id"], tuple((k, ValueSet.from_json(v)) for k, v in p["region"].items()))
                    for p in obj["partitions"]
                ),
                meta=tuple(obj.get("meta", {}).items()),
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

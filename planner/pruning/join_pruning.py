"""Partitions a scan may skip through its joins, from per-partition ranges of joined columns.

At apply time (``hive_integration.spark.join_ranges``) each partition of the laid-out table records, per
*join column* (a column at the end of a join path, ``planner.workload.joins``), the values its rows reach:

    orders(o_orderkey = l_orderkey).o_orderdate   partition 17: [1994-01-03, 1994-03-29]
                                                   partition 18: [1994-02-27, 1994-05-31] ∪ NULL

(min and max, or the exact value set when it is small, plus NULL when some joined row holds NULL).
A query whose induced predicate allows ``o_orderdate`` only in 1995 cannot use a row of partition
17: every orders row it joins has a date outside 1995. Rows that join no orders row at all (no
partner, or a NULL key, which ``=`` never matches) cannot reach an inner join's answer either, so
the recorded set only needs the rows that do join.

The ranges are only as good as the data they were computed from. They record a *snapshot* of every
table involved (the laid-out table itself and each joined table: its files, sizes and modification
times, or its layout generation), and ``join_pruning`` uses a join column only when every snapshot
still matches; otherwise it says which table changed and prunes nothing through that join.
"""
from __future__ import annotations

import functools
import hashlib
import json
import zlib
from dataclasses import dataclass, replace
from typing import Iterable, Mapping, Sequence

from planner.cnf.valueset import ValueSet
from planner.errors import LayoutError
from planner.model.join_paths import JoinColumn
from planner.model.layout import CATCH_ALL, Layout
from planner.semantics.settings import Settings
from planner.semantics.types import parse_type
from planner.workload.joins import InducedPredicate

VERSION = 1
PREFIX = "planner.joinranges"
CHUNK_CHARS = 3500
SMALL_SET = 32  # at most this many distinct values are kept as a set, more as [min, max]
META_KEY = "join_columns"  # layout meta: the join columns advise found in the workload, recorded at apply
MAX_COLUMNS = 16


@dataclass(frozen=True)
class JoinRange:
    """Per partition id, the values of ``column`` reachable from the partition's rows."""

    column: JoinColumn
    type: str  # Spark type of the end column
    partitions: tuple[tuple[int, ValueSet], ...]

    @functools.cached_property
    def by_set(self) -> tuple[tuple[ValueSet, frozenset[int]], ...]:
        """The partition ids grouped by their recorded set: a query tests each distinct set once
        (a region's or a nation's keys are often the same in every partition)."""
        groups: dict[ValueSet, set[int]] = {}
        for pid, vs in self.partitions:
            groups.setdefault(vs, set()).add(pid)
        return tuple((vs, frozenset(ids)) for vs, ids in groups.items())

    @functools.cached_property
    def recorded_ids(self) -> frozenset[int]:
        """The partitions that have a recorded set (a partition without one may hold anything)."""
        return frozenset(pid for pid, _ in self.partitions)

    def to_json(self) -> dict:
        return {"column": self.column.to_json(), "type": self.type,
                "partitions": {str(p): vs.to_json() for p, vs in self.partitions}}

    @classmethod
    def from_json(cls, obj) -> "JoinRange":
        return cls(JoinColumn.from_json(obj["column"]), str(obj["type"]),
                   tuple((int(p), ValueSet.from_json(v)) for p, v in obj["partitions"].items()))


@dataclass(frozen=True)
class JoinRanges:
    table: str
    generation: int | None  # the layout generation the ranges were computed on
    snapshots: tuple[tuple[str, str], ...]  # table -> snapshot digest, the laid-out table included
    columns: tuple[JoinRange, ...]

    def to_json(self) -> dict:
        return {"version": VERSION, "table": self.table, "generation": self.generation,
                "snapshots": dict(self.snapshots), "columns": [c.to_json() for c in self.columns]}

    @classmethod
    def from_json(cls, obj) -> "JoinRanges":
        try:
            if obj["version"] != VERSION:
                raise LayoutError(f"join ranges version {obj['version']} is not supported")
            return cls(obj["table"], obj.get("generation"), tuple(sorted(obj["snapshots"].items())),
                       tuple(JoinRange.from_json(c) for c in obj["columns"]))
        except (KeyError, TypeError, ValueError) as e:
            raise LayoutError(f"malformed join ranges: {type(e).__name__}: {e}") from None

    def properties(self) -> dict[str, str]:
        """Table properties holding the ranges: zlib-compressed JSON, hex-encoded, in chunks.

        Hex, not JSON text: Spark's ``SHOW TBLPROPERTIES`` replaces a whole value by
        ``*********(redacted)`` when it matches ``spark.sql.redaction.options.regex`` (``(?i)url`` by
        default; TPC-H's ``p_name`` holds "burlywood"). Hex digits spell none of those words, and a
        value that is redacted anyway fails the checksum, so nothing prunes rather than wrongly.
        """
        text = json.dumps(self.to_json(), ensure_ascii=True, separators=(",", ":"), default=str)
        blob = zlib.compress(text.encode("ascii"), 9).hex()
        chunks = [blob[i:i + CHUNK_CHARS] for i in range(0, len(blob), CHUNK_CHARS)] or [""]
        props = {f"{PREFIX}.parts": str(len(chunks)), f"{PREFIX}.sha256": hashlib.sha256(blob.encode()).hexdigest()}
        props.update({f"{PREFIX}.{i}": c for i, c in enumerate(chunks)})
        return props

    @classmethod
    def from_properties(cls, props: Mapping[str, str]) -> "JoinRanges | None":
        """The stored ranges, or None when there are none (or they are damaged: then nothing prunes)."""
        try:
            n = int(props[f"{PREFIX}.parts"])
            blob = "".join(props[f"{PREFIX}.{i}"] for i in range(n))
        except (KeyError, ValueError):
            return None
        if hashlib.sha256(blob.encode()).hexdigest() != props.get(f"{PREFIX}.sha256"):
            return None
        return _decoded(blob)


@functools.lru_cache(maxsize=64)
def _decoded(blob: str) -> JoinRanges | None:
    """The ranges a checked blob holds, decoded once per process (every query of a laid-out table
    reads the same blob until the ranges are refreshed; the result is immutable)."""
    try:
        return JoinRanges.from_json(json.loads(zlib.decompress(bytes.fromhex(blob)).decode("ascii")))
    except (LayoutError, ValueError, zlib.error):
        return None


def stale_property_keys(props: Mapping[str, str]) -> list[str]:
    """Keys of stored ranges (to unset before new ones are written, or when they no longer hold)."""
    return sorted(k for k in props if k.startswith(PREFIX + "."))


def with_join_columns(layout: Layout, columns: Iterable[JoinColumn]) -> Layout:
    """``layout`` with the join columns to record at apply in its meta (most filtered first)."""
    cols = [c.to_json() for c in list(columns)[:MAX_COLUMNS]]
    if not cols:
        return layout
    return replace(layout, meta=tuple((dict(layout.meta) | {META_KEY: cols}).items()))


def join_columns_of(layout: Layout) -> list[JoinColumn]:
    return [JoinColumn.from_json(c) for c in dict(layout.meta).get(META_KEY) or []]


@dataclass(frozen=True)
class JoinPruning:
    """What a scan's joins allow it to skip."""

    keep: frozenset[int] | None  # partition ids that may be needed; None: no restriction
    used: tuple[str, ...] = ()
    unused: tuple[tuple[str, str], ...] = ()


def tables_of(column: JoinColumn, table: str) -> list[str]:
    """Every table whose snapshot the range of ``column`` depends on."""
    return [table] + [h.table for h in column.path.hops]


def join_pruning(induced: Sequence[InducedPredicate], ranges: JoinRanges | None, layout: Layout,
                 current: Mapping[str, str | None], settings: Settings | None = None) -> JoinPruning:
    """The partitions the scan's induced predicates leave, and what decided it.

    ``current``: each table's snapshot now (None: unknown). ``settings``: the session that runs the
    query; None for a saved rewrite (both ANSI modes, the layout's time zone).
    """
    if not induced or ranges is None:
        return JoinPruning(None)
    from planner.analysis.table_analysis import _analyse_predicate
    from planner.cnf.bind import needs_time_zone

    if ranges.generation != layout.generation:
        return JoinPruning(None, unused=tuple((p.describe(), "the join ranges were recorded for another layout "
                                               f"(generation {ranges.generation}); apply again to refresh them")
                                              for p in induced))
    recorded = dict(ranges.snapshots)
    modes = (settings,) if settings is not None else (Settings(True, layout.settings.time_zone),
                                                       Settings(False, layout.settings.time_zone))
    ids = {p.id for p in layout.partitions}
    keep: set[int] | None = None
    used: list[str] = []
    unused: list[tuple[str, str]] = []
    for ind in induced:
        for r in ranges.columns:
            if r.column.path != ind.path:
                continue
            unknown = [t for t in tables_of(r.column, ranges.table) if current.get(t) is None]
            changed = [t for t in tables_of(r.column, ranges.table) if current.get(t) != recorded.get(t)]
            if unknown:
                unused.append((r.column.describe(), f"cannot check that {unknown[0]} is unchanged since the join "
                               "ranges were recorded (its snapshot is read through Spark)"))
                continue
            if changed:
                unused.append((f"{r.column.describe()}", f"{changed[0]} changed since the join ranges were recorded "
                               "(new files or a newer layout); apply or append again to refresh them"))
                continue
            types = {r.column.column: parse_type(r.type)}
            if settings is None and needs_time_zone(ind.predicate, types):
                unused.append((r.column.describe(), "depends on the session time zone (a saved rewrite does not "
                               "know it)"))
                continue
            groups, _ = _analyse_predicate(ind.predicate, types, 200, {}, modes)
            want = groups.column_sets.get(r.column.column)
            if want is None or want.is_everything():
                continue
            mine = (ids - r.recorded_ids) | {pid for vs, pids in r.by_set if vs.overlaps(want) for pid in pids & ids}
            keep = mine if keep is None else keep & mine
            used.append(f"{r.column.describe()} IN {want}")
    if keep is not None:
        keep.add(CATCH_ALL)
    return JoinPruning(frozenset(keep) if keep is not None else None, tuple(used), tuple(unused))


__all__ = ["with_join_columns", "join_columns_of", "META_KEY", "JoinRange", "JoinRanges", "JoinPruning",
           "join_pruning", "tables_of", "stale_property_keys",
           "SMALL_SET", "PREFIX"]

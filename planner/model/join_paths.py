"""Join paths: how a laid-out table's rows reach a joined table's column (``lineitem -> orders ->
customer``), as recorded in a layout (``Layout.joined``, the join ranges) and found in queries
(``planner.workload.joins``)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Hop:
    """One equi-join step: the previous table's ``column`` equals ``table.key``."""

    column: str
    table: str  # qualified, lower case (as ``ScanSite.table``)
    key: str

    def describe(self) -> str:
        return f"{self.table}({self.key} = {self.column})"


@dataclass(frozen=True)
class JoinPath:
    hops: tuple[Hop, ...]

    @property
    def table(self) -> str:
        return self.hops[-1].table

    def describe(self) -> str:
        return "/".join(h.describe() for h in self.hops)

    def to_json(self) -> list:
        return [[h.column, h.table, h.key] for h in self.hops]

    @classmethod
    def from_json(cls, obj) -> "JoinPath":
        return cls(tuple(Hop(str(c), str(t), str(k)) for c, t, k in obj))


@dataclass(frozen=True)
class JoinColumn:
    """A column of the table at a join path's end, as seen from the laid-out table's rows."""

    path: JoinPath
    column: str

    def describe(self) -> str:
        return f"{self.path.describe()}.{self.column}"

    def to_json(self) -> dict:
        return {"path": self.path.to_json(), "column": self.column}

    @classmethod
    def from_json(cls, obj) -> "JoinColumn":
        return cls(JoinPath.from_json(obj["path"]), str(obj["column"]))


__all__ = ["Hop", "JoinColumn", "JoinPath"]

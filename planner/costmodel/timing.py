"""What a scan costs in seconds: the time a user waits, priced from the work a layout leaves.

Rows read are what a layout saves, but users wait for seconds, and the two part ways: a layout
of many small partitions reads fewer rows and can still be slower, because every partition is
fetched from the metastore and listed, every file is opened and its footer read, and every task
is scheduled. A key lookup that reads three row groups instead of one reads 3x the rows in the
same time. So a scan's time is priced from the work Spark does for it:

    seconds(q) = query                                     planning, job start, the answer
               + partition · P                              metastore and directory listing, on the driver
               + task · tasks / cores                       scheduling
               + (file · F + row_group · G + row · R + byte · B) / lanes

``P`` partitions read, ``F`` files opened (every file of a partition read has its footer read,
even when each of its row groups is then skipped), ``G`` row groups read, ``R`` rows decoded,
``B`` bytes decoded (rows times the on-disk width of the columns read). A bloom filter a lookup
tests counts in ``G``, not in ``B``: the reader seeks to it and probes one 32-byte block of it,
as it seeks to a row group's headers; nothing of it is decompressed or decoded (priced as decoded
bytes, a filter made a lookup kept by its statistics in many row groups look slower than without
it, and the search declined the filters the lookups needed). The reading is spread
over ``lanes = min(cores, tasks, max(1, G))`` cores: a lookup that reads one row group runs on one
core whatever the cluster, a full scan on all of them.

Spark packs files into tasks (``FilePartition``): the split size is
``min(maxPartitionBytes, max(openCostInBytes, total / cores))`` over the bytes of the files read
plus ``openCostInBytes`` per file, so ``tasks = ceil(total / split)``, at least one.

The coefficients depend on the machine and the cluster: ``planner calibrate`` measures them on
Spark and stores them (``TimeParams.to_json``); ``TimeParams()`` holds the defaults shipped for a
2-core local driver. Rows read stay beside the time as a figure of their own.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from typing import Any, Mapping

import numpy as np


@dataclass(frozen=True)
class TimeParams:
    """Seconds per unit of work, and the engine's parallelism. The defaults are ``planner
    calibrate`` on a 2-core local Spark 4 driver (``benchmarks/results/calibration_sf1_local2.json``):
    there, a partition, a file and a row group cost nothing the fit could tell from the tasks they
    make, so they stay at zero until a calibration on the user's cluster says otherwise."""

    query: float = 0.135  # planning, job submission, collecting the answer
    partition: float = 0.0  # one partition: metastore object and directory listing
    task: float = 0.123  # scheduling and running one task
    file: float = 0.0  # opening one file and reading its footer
    row_group: float = 0.0  # seeking to one row group and reading its column chunks' headers
    row: float = 3.4e-8  # one row decoded and filtered
    byte: float = 2.5e-8  # one byte of the columns read, decompressed and decoded
    cores: int = 2  # task slots (spark.default.parallelism on a cluster)
    split_bytes: int = 128 * 1024 * 1024  # spark.sql.files.maxPartitionBytes
    open_cost_bytes: int = 4 * 1024 * 1024  # spark.sql.files.openCostInBytes
    source: str = "defaults"  # "defaults" | "calibrated <when> on <master>"

    COEFFICIENTS = ("query", "partition", "task", "file", "row_group", "row", "byte")

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> "TimeParams":
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in obj.items() if k in known})


@dataclass(frozen=True)
class ScanWork:
    """The work scans leave Spark under a layout: one scan's numbers, or arrays of them (one entry
    per scan). Expected values, so they may be fractional."""

    partitions: Any
    files: Any
    row_groups: Any
    rows: Any
    bytes: Any
    file_bytes: Any  # bytes of the files opened (what Spark splits into tasks)

    def tasks(self, p: TimeParams) -> np.ndarray:
        total = np.asarray(self.file_bytes, dtype=float) + np.asarray(self.files, dtype=float) * p.open_cost_bytes
        split = np.minimum(p.split_bytes, np.maximum(p.open_cost_bytes, total / max(p.cores, 1)))
        return np.where(total > 0, np.maximum(1.0, np.ceil(total / np.maximum(split, 1.0))), 0.0)

    def terms(self, p: TimeParams) -> np.ndarray:
        """The terms the coefficients multiply, ``TimeParams.COEFFICIENTS`` order, on the last axis."""
        tasks = self.tasks(p)
        groups = np.asarray(self.row_groups, dtype=float)
        lanes = np.maximum(1.0, np.minimum(np.minimum(float(p.cores), tasks), np.maximum(1.0, groups)))
        one = np.ones_like(lanes)
        return np.stack([one, np.asarray(self.partitions, dtype=float) * one, tasks / max(p.cores, 1),
                         np.asarray(self.files, dtype=float) / lanes, groups / lanes,
                         np.asarray(self.rows, dtype=float) / lanes, np.asarray(self.bytes, dtype=float) / lanes],
                        axis=-1)


def scan_seconds(work: ScanWork, p: TimeParams):
    """The estimated wall time of each scan (the formula of the module's docstring)."""
    out = work.terms(p) @ coefficients(p)
    return float(out) if np.ndim(out) == 0 else out


def features(work: ScanWork, p: TimeParams) -> np.ndarray:
    """One scan's terms: what calibration fits against measured wall times."""
    return work.terms(p)


def coefficients(p: TimeParams) -> np.ndarray:
    return np.array([getattr(p, name) for name in TimeParams.COEFFICIENTS])


def nonnegative_least_squares(a: np.ndarray, b: np.ndarray, iterations: int = 200) -> np.ndarray:
    """``x >= 0`` minimising ``|a @ x - b|`` (Lawson and Hanson's active set method): a time
    coefficient is never negative, and a plain least-squares fit over a few probes makes one so."""
    m, n = a.shape
    x = np.zeros(n)
    free = np.zeros(n, dtype=bool)
    for _ in range(iterations):
        gradient = a.T @ (b - a @ x)
        candidates = np.flatnonzero(~free & (gradient > 1e-12))
        if not len(candidates):
            break
        free[candidates[np.argmax(gradient[candidates])]] = True
        while True:
            z = np.zeros(n)
            z[free] = np.linalg.lstsq(a[:, free], b, rcond=None)[0]
            if (z[free] > 0).all():
                x = z
                break
            shrinking = free & (z <= 0)
            step = np.min(x[shrinking] / np.maximum(x[shrinking] - z[shrinking], 1e-300))
            x = x + step * (z - x)
            free &= x > 1e-15
            x[~free] = 0.0
    return x


@dataclass(frozen=True)
class Fit:
    params: TimeParams
    errors: tuple[float, ...]  # |estimated - measured| / measured, per probe

    @property
    def median_error(self) -> float:
        return float(np.median(self.errors)) if self.errors else 0.0


def fit(samples: list[tuple[ScanWork, float]], base: TimeParams = TimeParams(), source: str = "calibrated") -> Fit:
    """Coefficients that price ``samples`` (work, measured seconds) best, in relative terms: each
    probe weighs by ``1 / seconds``, so a 50 ms lookup counts as much as a 5 s scan."""
    if not samples:
        return Fit(base, ())
    a = np.array([features(w, base) for w, _ in samples])
    b = np.array([t for _, t in samples])
    weight = 1.0 / np.maximum(b, 1e-3)
    x = nonnegative_least_squares(a * weight[:, None], b * weight)
    params = replace(base, source=source, **dict(zip(TimeParams.COEFFICIENTS, x.tolist())))
    estimated = a @ x
    return Fit(params, tuple((abs(estimated - b) / np.maximum(b, 1e-3)).tolist()))


__all__ = ["Fit", "ScanWork", "TimeParams", "coefficients", "features", "fit", "nonnegative_least_squares", "scan_seconds"]

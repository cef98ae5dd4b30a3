"""What a user would do without the planner: no partitioning, or a DBA's date ranges.

``date_ranges`` partitions by month (or year) of a date column, the classic hand-made layout:
``[1994-01-01, 1994-02-01)``, ``[1994-02-01, 1994-03-01)``, … with the first and last range open
towards the ends of the domain and NULL in a partition of its own, so every row has a home.
"""
from __future__ import annotations

import datetime as dt

from planner.cnf.valueset import Interval, ValueSet
from planner.costmodel.sample import SampleFrame
from planner.model.layout import Layout, Partition
from planner.semantics.kinds import Kind


def full_scan(table: str) -> Layout:
    return Layout(table, "no partitioning", (Partition(1, ()),))


def _step(d: dt.date, unit: str) -> dt.date:
    if unit == "year":
        return dt.date(d.year + 1, 1, 1)
    return dt.date(d.year + (d.month == 12), d.month % 12 + 1, 1)


def date_ranges(sample: SampleFrame, table: str, column: str, kind: Kind, unit: str = "month",
                max_partitions: int = 1000) -> Layout | None:
    if kind not in (Kind.DATE, Kind.TIMESTAMP):
        return None
    values = sample.uniques(column)
    if not values:
        return None
    lo, hi = values[0], values[-1]
    lo = dt.date(lo.year, 1 if unit == "year" else lo.month, 1)
    starts = [lo]
    while _step(starts[-1], unit) <= (hi.date() if isinstance(hi, dt.datetime) else hi):
        starts.append(_step(starts[-1], unit))
    if len(starts) + 1 > max_partitions:
        return None if unit == "year" else date_ranges(sample, table, column, kind, "year", max_partitions)
    conv = (lambda d: dt.datetime(d.year, d.month, d.day)) if kind is Kind.TIMESTAMP else (lambda d: d)
    parts = []
    for i, s in enumerate(starts):
        lo_b = None if i == 0 else conv(s)
        hi_b = None if i == len(starts) - 1 else conv(starts[i + 1])
        vs = ValueSet.of(kind, [Interval(lo_b, hi_b, lo_b is not None, False)])
        parts.append(Partition(i + 1, ((column, vs),)))
    parts.append(Partition(len(parts) + 1, ((column, ValueSet.only_null(kind)),)))
    return Layout(table, f"{unit} ranges of {column}", tuple(parts), kinds=((column, kind),))

"""How many table rows a conjunction of per-attribute value sets matches.

The sample is the primary estimate: it keeps the correlations between columns, so a conjunction
is the ``&`` of cached masks, scaled to the table (``matches / n × rows``).

A sample cannot see rare conditions: ``l_orderkey = 4242`` matches 0 or 1 of 200k sample rows,
and "0 rows" would tell the search the query is free. When the conjunction matches fewer than
``MIN_SAMPLE_MATCHES`` sample rows, the estimate falls back to independence over columns,

    rows × Π_a f(a)

where ``f(a)`` is the sample's own fraction for attribute ``a`` alone when that has enough
matches, and otherwise the column-statistics estimate

    f(a) = non-null fraction × ( points / ndv  +  Σ ranges (hi − lo) / (max − min) )
                                              (integers, dates: (hi − lo + 1) / (max − min + 1))
           + null fraction                                    (if the set holds NULL)

(a uniform histogram between the column's min and max, one bucket per distinct value for
points). ``ndv``, ``nulls``, ``min`` and ``max`` come from the metastore's column statistics
(``ANALYZE TABLE … FOR COLUMNS``) when present, else from the sample (ndv by Haas and Stokes'
Duj1 estimator, ``sample_ndv``). Ranges of strings cannot be interpolated and count as one
distinct value. A sample that holds the whole table is exact and never falls back. The fallback is capped at ``(m + 3) / n × rows`` for ``m`` sample matches (the
"rule of three" upper bound), so it never contradicts the sample by much.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal
from typing import Mapping

import numpy as np

from planner.cnf.values import coerce
from planner.cnf.valueset import ValueSet
from planner.costmodel.sample import SampleFrame
from planner.costmodel.statistics import TableStats
from planner.semantics.kinds import Kind

MIN_SAMPLE_MATCHES = 30


@dataclass(frozen=True)
class Estimate:
    rows: float
    source: str  # "sample" | "statistics"


def _numeric(v) -> float | None:
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, (int, float, Decimal)):
        return float(v)
    if isinstance(v, dt.datetime):
        return v.timestamp() if v.tzinfo else v.replace(tzinfo=dt.timezone.utc).timestamp()
    if isinstance(v, dt.date):
        return float(v.toordinal())
    return None


def sample_ndv(codes: np.ndarray, rows: int) -> float:
    """Distinct values of a table of ``rows`` rows guessed from a sample's codes: Haas and Stokes'
    smoothed jackknife Duj1, ``n d / (n - f1 + f1 n / N)`` (the estimator PostgreSQL's ANALYZE
    uses). Exact at both ends: a sample of a unique column guesses the table's rows, a sample whose
    values all repeat guesses its own distinct values; Charikar et al.'s GEE, its predecessor
    here, scaled every singleton by sqrt(N/n) and counted a key with a few rows per value too many
    distinct values (its lookups too unlikely to hit a row group)."""
    present = codes[codes >= 0]
    n = len(present)
    if n == 0:
        return 0.0
    counts = np.bincount(present)
    d = float(np.count_nonzero(counts))
    f1 = float(np.count_nonzero(counts == 1))
    rows = max(rows, n)
    return max(1.0, n * d / (n - f1 + f1 * n / rows))


class Selectivity:
    def __init__(self, sample: SampleFrame, stats: TableStats, kinds: Mapping[str, Kind],
                 min_matches: int = MIN_SAMPLE_MATCHES):
        self.sample = sample
        self.stats = stats
        self.kinds = kinds
        self.min_matches = min_matches
        self.scale = stats.rows / max(sample.n, 1)
        self._column: dict[tuple[str, ValueSet], float] = {}

    def rows(self, sets: Mapping[str, ValueSet]) -> Estimate:
        """Estimated table rows in which every attribute's value lies in its set."""
        usable = {a: vs for a, vs in sets.items() if self.sample.has(a)}
        mask = np.ones(self.sample.n, dtype=bool)
        for a, vs in usable.items():
            mask &= self.sample.mask(a, vs)
        m = int(mask.sum())
        exact = self.sample.n >= self.stats.rows  # the sample is the whole table
        if m >= self.min_matches or exact or not usable:
            return Estimate(m * self.scale, "sample")
        f = 1.0
        for a, vs in usable.items():
            f *= self.fraction(a, vs)
        cap = (m + 3) / self.sample.n
        return Estimate(min(f, cap) * self.stats.rows, "statistics")

    def fraction(self, attribute: str, values: ValueSet) -> float:
        """Fraction of the table's rows whose ``attribute`` lies in ``values`` (one column)."""
        key = (attribute, values)
        got = self._column.get(key)
        if got is None:
            m = int(self.sample.mask(attribute, values).sum())
            trusted = m >= self.min_matches or self.sample.n >= self.stats.rows
            got = m / self.sample.n if trusted else self._from_statistics(attribute, values)
            self._column[key] = got
        return got

    def _from_statistics(self, attribute: str, values: ValueSet) -> float:
        rows = max(self.stats.rows, 1)
        col = self.stats.column(attribute)
        codes = self.sample.codes(attribute)
        uniq = self.sample.uniques(attribute)
        kind = self.kinds.get(attribute, values.kind)
        null_frac = (col.nulls / rows) if col is not None and col.nulls is not None else \
            float((codes < 0).mean()) if len(codes) else 0.0
        ndv = float(col.ndv) if col is not None and col.ndv else sample_ndv(codes, rows)
        lo = _numeric(coerce(col.min, kind)) if col is not None and col.min is not None else None
        hi = _numeric(coerce(col.max, kind)) if col is not None and col.max is not None else None
        if lo is None and uniq:
            lo = _numeric(uniq[0])
        if hi is None and uniq:
            hi = _numeric(uniq[-1])
        f = 0.0
        for iv in values.intervals:
            if iv.is_point:
                f += 1.0 / max(ndv, 1.0)
                continue
            a = lo if iv.lo is None else _numeric(iv.lo)
            b = hi if iv.hi is None else _numeric(iv.hi)
            if a is None or b is None or lo is None or hi is None:
                f += 1.0 / max(ndv, 1.0)  # strings: no interpolation, count one value
            elif kind in (Kind.INTEGER, Kind.DATE):  # discrete and closed: count values
                f += max(0.0, min(b, hi) - max(a, lo) + 1) / (hi - lo + 1)
            elif hi > lo:
                f += max(0.0, min(b, hi) - max(a, lo)) / (hi - lo)
            elif a <= lo <= b:
                f += 1.0
        f = min(1.0, f) * (1.0 - null_frac)
        if values.null:
            f += null_frac
        return min(1.0, f)

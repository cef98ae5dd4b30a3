"""Q6-style multidimensional range queries on ``lineitem`` and the TPC-H value
distributions used to give their predicates a known selectivity.

The workload follows the Hive multidimensional index study (Liu et al., "A
comprehensive study of multidimensional indexes in Hive", section 7.2, Listing 2
and Table 7): the TPC-H Q6 template

    select sum(l_extendedprice * l_discount) as revenue from lineitem where <predicate>

with a conjunction of range (or, for "point" queries, equality) predicates on
1-3 of the dimensions d = l_discount, q = l_quantity, s = l_shipdate,
e = l_extendedprice, o = l_orderkey, at about point, 5%, 10%, 15% and 25%
selectivity *per predicate* (the paper's selectivities are approximate too).
By default the dimension sets are the paper's query types (Table 7):
o, qs, qds, dse, q, d, s, e, qd, ds.

Value distributions (TPC-H spec 4.2.3, dbgen, uniform data)
---------------------------------------------------------

* ``l_discount``: uniform over 0.00, 0.01, ..., 0.10 (11 values, 1/11 each).
  A range can only hit multiples of 9.1%: 5% and 10% become one value (9.1%),
  15% two values (18.2%), 25% three (27.3%).
* ``l_tax``: uniform over 0.00 .. 0.08 (9 values).
* ``l_quantity``: uniform integers 1..50 (2% each).
* ``o_orderdate``: uniform over 1992-01-01 .. 1998-08-02 (2406 days =
  ENDDATE - 151 days); ``l_shipdate`` = o_orderdate + U[1, 121] days
  (1992-01-02 .. 1998-12-01, flat in the middle with linear ramps over the
  first and last 121 days), ``l_commitdate`` = o_orderdate + U[30, 90],
  ``l_receiptdate`` = l_shipdate + U[1, 30].  These are computed exactly as
  discrete convolutions (integer day counts), not approximated.
* ``l_extendedprice`` = l_quantity * p_retailprice with l_quantity uniform in
  1..50, the part uniform, and p_retailprice = (90000 + ((partkey / 10) mod 20001)
  + 100 * (partkey mod 1000)) / 100, i.e. 900.00 .. 2098.99.  The distribution
  is right-skewed over 901.00 .. 104949.50; its CDF is computed exactly from the
  200,000 retail prices of SF 1 (other scale factors repeat the same pattern):
  p5 ~= 4,280, p25 ~= 18,710, p50 ~= 36,710, p75 ~= 55,130, p95 ~= 79,500.
* ``l_orderkey``: orders use only 8 of every 32 keys (sparse keys), the
  largest is about 6,000,000 * SF; every order has 1..7 lines uniformly, so a
  key range [a, b] selects about (b - a + 1) / (6,000,000 * SF) of lineitem.
  Point queries use an existing key (about 4 rows).
* ``l_partkey`` uniform 1..200,000 * SF; ``l_suppkey`` ~uniform 1..10,000 * SF.

All selections are made with integer arithmetic from one ``random.Random``
stream, so the same seed gives the same text on every platform.
"""

from __future__ import annotations

import bisect
import datetime as _dt
import functools
import itertools
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

__all__ = [
    "DIMENSIONS",
    "PAPER_QUERY_DIMENSIONS",
    "SELECTIVITIES",
    "Domain",
    "Predicate",
    "Q6Variant",
    "lineitem_domain",
    "q6_variant_specs",
    "q6_variants",
]

# --------------------------------------------------------------------------
# Predicates and domains
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Predicate:
    """One predicate on one column, with its expected selectivity on lineitem."""

    column: str
    sql: str
    selectivity: float
    kind: str  #: "point" or "range"


def _days_literal(start: _dt.date) -> Callable[[int], str]:
    def lit(unit: int) -> str:
        return f"date '{(start + _dt.timedelta(days=unit)).isoformat()}'"

    return lit


def _cents_literal(unit: int) -> str:
    return f"{unit // 100}.{unit % 100:02d}"


class Domain:
    """Values of one lineitem column as integer *units* (days, cents, keys...)
    with their distribution; builds point and range predicates.

    Ranges are chosen at a uniformly random position of the *distribution* (a
    random start quantile), then widened until they hold the target share of
    rows.  ``style`` is ``"between"`` (``col between lo and hi``) or
    ``"halfopen"`` (``col >= lo and col < hi``).
    """

    column: str

    def literal(self, unit: int) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def point(self, rng: random.Random) -> Predicate:  # pragma: no cover - abstract
        raise NotImplementedError

    def _range_units(self, selectivity: float, rng: random.Random) -> tuple[int, int, float]:
        raise NotImplementedError  # pragma: no cover - abstract

    def range(self, selectivity: float, rng: random.Random, *, style: str = "halfopen") -> Predicate:
        if not 0 < selectivity < 1:
            raise ValueError("selectivity must be in (0, 1)")
        lo, hi, sel = self._range_units(selectivity, rng)
        return Predicate(self.column, self._render(lo, hi, style), sel, "range")

    def _render(self, lo: int, hi: int, style: str) -> str:
        """Predicate for the closed unit interval [lo, hi]."""
        c = self.column
        if style == "between":
            return f"{c} between {self.literal(lo)} and {self.literal(hi)}"
        if style == "halfopen":
            return f"{c} >= {self.literal(lo)} and {c} < {self.literal(hi + 1)}"
        raise ValueError(f"unknown predicate style {style!r}")


class WeightedDomain(Domain):
    """Discrete domain: units ``first, first+1, ...`` with integer weights."""

    def __init__(self, column: str, first: int, weights: Sequence[int], literal: Callable[[int], str]):
        self.column = column
        self.first = first
        self.weights = list(weights)
        self.cum = [0, *itertools.accumulate(self.weights)]
        self.total = self.cum[-1]
        self._literal = literal

    def literal(self, unit: int) -> str:
        return self._literal(unit)

    @property
    def last(self) -> int:
        return self.first + len(self.weights) - 1

    def selectivity(self, lo: int, hi: int) -> float:
        """Share of rows with lo <= unit <= hi."""
        i = max(lo - self.first, 0)
        j = min(hi - self.first, len(self.weights) - 1)
        return 0.0 if j < i else (self.cum[j + 1] - self.cum[i]) / self.total

    def point(self, rng: random.Random) -> Predicate:
        x = rng.randrange(self.total)
        i = bisect.bisect_right(self.cum, x) - 1
        return Predicate(
            self.column,
            f"{self.column} = {self.literal(self.first + i)}",
            self.weights[i] / self.total,
            "point",
        )

    def _range_units(self, selectivity: float, rng: random.Random) -> tuple[int, int, float]:
        target = selectivity * self.total
        # start at a random row position among those leaving room for `target` rows
        x = rng.randrange(max(1, math.ceil(self.total - target)))
        i = bisect.bisect_right(self.cum, x) - 1
        # smallest j whose cumulative share from i reaches the target, or the one before if closer
        j = bisect.bisect_left(self.cum, self.cum[i] + target, lo=i + 1) - 1
        j = min(j, len(self.weights) - 1)
        if j > i and abs(self.cum[j] - self.cum[i] - target) <= abs(self.cum[j + 1] - self.cum[i] - target):
            j -= 1
        sel = (self.cum[j + 1] - self.cum[i]) / self.total
        return self.first + i, self.first + j, sel


class UniformIntDomain(Domain):
    """Integer keys uniform over [lo, hi] (range selectivity = width / size)."""

    def __init__(self, column: str, lo: int, hi: int, point_key: Callable[[random.Random], int] | None = None):
        self.column = column
        self.lo, self.hi = lo, hi
        self.size = hi - lo + 1
        self._point_key = point_key or (lambda rng: rng.randint(self.lo, self.hi))

    def literal(self, unit: int) -> str:
        return str(unit)

    def point(self, rng: random.Random) -> Predicate:
        return Predicate(self.column, f"{self.column} = {self._point_key(rng)}", 1 / self.size, "point")

    def _range_units(self, selectivity: float, rng: random.Random) -> tuple[int, int, float]:
        width = max(1, round(selectivity * self.size))
        start = rng.randint(self.lo, self.hi - width + 1)
        return start, start + width - 1, width / self.size


class QuantileDomain(Domain):
    """Continuous-ish domain given by an exact integer CDF over units."""

    def __init__(
        self,
        column: str,
        lo: int,
        hi: int,
        cdf: Callable[[int], float],
        literal: Callable[[int], str],
        point_value: Callable[[random.Random], int],
    ):
        self.column = column
        self.lo, self.hi = lo, hi
        self.cdf = cdf  # share of rows with unit <= x
        self._literal = literal
        self._point_value = point_value

    def literal(self, unit: int) -> str:
        return self._literal(unit)

    def quantile(self, u: float) -> int:
        """Smallest unit x with cdf(x) >= u."""
        a, b = self.lo, self.hi
        while a < b:
            m = (a + b) // 2
            if self.cdf(m) >= u:
                b = m
            else:
                a = m + 1
        return a

    def selectivity(self, lo: int, hi: int) -> float:
        return self.cdf(hi) - self.cdf(lo - 1)

    def point(self, rng: random.Random) -> Predicate:
        v = self._point_value(rng)
        return Predicate(self.column, f"{self.column} = {self.literal(v)}", self.selectivity(v, v), "point")

    def _range_units(self, selectivity: float, rng: random.Random) -> tuple[int, int, float]:
        u0 = rng.random() * (1 - selectivity)
        lo = self.quantile(u0)
        hi = max(lo, self.quantile(self.cdf(lo - 1) + selectivity) - 1)
        # hi is the last unit keeping the share at or just under the target; take one
        # more unit if that lands closer to it
        if abs(self.selectivity(lo, hi + 1) - selectivity) < abs(self.selectivity(lo, hi) - selectivity):
            hi += 1
        return lo, hi, self.selectivity(lo, hi)


# --------------------------------------------------------------------------
# TPC-H lineitem columns
# --------------------------------------------------------------------------

_STARTDATE = _dt.date(1992, 1, 1)
_ORDERDATE_DAYS = 2406  # 1992-01-01 .. 1998-08-02 (ENDDATE 1998-12-31 minus 151 days)


def _convolve_uniform(counts: list[int], lo: int, hi: int) -> list[int]:
    """Distribution of X + U[lo, hi] given counts of X over offsets 0..; result offset 0 = old 0 + lo."""
    width = hi - lo + 1
    prefix = [0, *itertools.accumulate(counts)]
    n = len(counts)
    return [prefix[min(j + 1, n)] - prefix[max(j - width + 1, 0)] for j in range(n + width - 1)]


@functools.cache
def _date_domain(column: str) -> WeightedDomain:
    counts = [1] * _ORDERDATE_DAYS
    if column == "l_shipdate":
        counts, first = _convolve_uniform(counts, 1, 121), 1
    elif column == "l_commitdate":
        counts, first = _convolve_uniform(counts, 30, 90), 30
    elif column == "l_receiptdate":
        counts = _convolve_uniform(_convolve_uniform(counts, 1, 121), 1, 30)
        first = 2
    else:  # pragma: no cover - internal
        raise KeyError(column)
    return WeightedDomain(column, first, counts, _days_literal(_STARTDATE))


def _retailprice_cents(partkey: int) -> int:
    return 90000 + (partkey // 10) % 20001 + 100 * (partkey % 1000)


@functools.cache
def _sorted_retailprices() -> list[int]:
    return sorted(_retailprice_cents(pk) for pk in range(1, 200_001))


def _extendedprice_cdf(x: int) -> float:
    """Share of lineitems with l_extendedprice <= x cents (quantity 1..50 uniform)."""
    prices = _sorted_retailprices()
    return sum(bisect.bisect_right(prices, x // q) for q in range(1, 51)) / (50 * len(prices))


def _extendedprice_domain(scale_factor: float) -> QuantileDomain:
    parts = max(1, int(200_000 * scale_factor))

    def point_value(rng: random.Random) -> int:
        return rng.randint(1, 50) * _retailprice_cents(rng.randint(1, parts))

    prices = _sorted_retailprices()
    return QuantileDomain(
        "l_extendedprice", prices[0], 50 * prices[-1], _extendedprice_cdf, _cents_literal, point_value
    )


def _orderkey_max(scale_factor: float) -> int:
    return max(1, int(6_000_000 * scale_factor))


def _orderkey_domain(scale_factor: float) -> UniformIntDomain:
    orders = max(1, int(1_500_000 * scale_factor))

    def existing_key(rng: random.Random) -> int:
        i = rng.randrange(orders)
        return (i // 8) * 32 + i % 8 + 1  # dbgen's sparse keys: 8 used of every 32

    return UniformIntDomain("l_orderkey", 1, _orderkey_max(scale_factor), existing_key)


def lineitem_domain(column: str, scale_factor: float = 1) -> Domain:
    """The value distribution of a lineitem column (see the module docstring)."""
    if column == "l_discount":
        return WeightedDomain(column, 0, [1] * 11, _cents_literal)
    if column == "l_tax":
        return WeightedDomain(column, 0, [1] * 9, _cents_literal)
    if column == "l_quantity":
        return WeightedDomain(column, 1, [1] * 50, str)
    if column in ("l_shipdate", "l_commitdate", "l_receiptdate"):
        return _date_domain(column)
    if column == "l_extendedprice":
        return _extendedprice_domain(scale_factor)
    if column == "l_orderkey":
        return _orderkey_domain(scale_factor)
    if column == "l_partkey":
        return UniformIntDomain(column, 1, max(1, int(200_000 * scale_factor)))
    if column == "l_suppkey":
        return UniformIntDomain(column, 1, max(1, int(10_000 * scale_factor)))
    raise KeyError(f"no distribution for lineitem column {column!r}")


# --------------------------------------------------------------------------
# The Q6 variants
# --------------------------------------------------------------------------

#: Dimension abbreviations of the study.
DIMENSIONS: dict[str, str] = {
    "d": "l_discount",
    "q": "l_quantity",
    "s": "l_shipdate",
    "e": "l_extendedprice",
    "o": "l_orderkey",
}
#: Query dimension sets of the study's Table 7 (Q-o-o, Q-qs-qs, Q-qds-qds, Q-dse-dse,
#: Q-q-qds, Q-d-qds, Q-s-qds, Q-e-dse, Q-qd-qds, Q-ds-qds; Q-qs-qds repeats qs).
PAPER_QUERY_DIMENSIONS: tuple[str, ...] = ("o", "qs", "qds", "dse", "q", "d", "s", "e", "qd", "ds")
#: Selectivity levels per predicate.
SELECTIVITIES: tuple[str | float, ...] = ("point", 0.05, 0.10, 0.15, 0.25)


@dataclass(frozen=True)
class Q6Variant:
    """One generated query with what it was generated from."""

    dimensions: str  #: e.g. "qds"
    level: str | float  #: "point" or the target selectivity per predicate
    predicates: tuple[Predicate, ...]
    sql: str

    @property
    def selectivity(self) -> float:
        """Expected selectivity of the conjunction, assuming independent columns."""
        s = 1.0
        for p in self.predicates:
            s *= p.selectivity
        return s


def _level_label(level: str | float) -> str:
    return "point" if level == "point" else f"{round(float(level) * 100)}%"


def _q6_sql(dims: str, level: str | float, preds: Sequence[Predicate]) -> str:
    where = "\n    and ".join(p.sql for p in preds)
    return (
        f"-- q6 variant q-{dims}, {_level_label(level)} per predicate\n"
        "select\n"
        "    sum(l_extendedprice * l_discount) as revenue\n"
        "from\n"
        "    lineitem\n"
        "where\n"
        f"    {where}"
    )


def q6_variant_specs(
    n: int,
    seed: int,
    *,
    scale_factor: float = 1,
    dimension_sets: Sequence[str] = PAPER_QUERY_DIMENSIONS,
    levels: Sequence[str | float] = SELECTIVITIES,
) -> list[Q6Variant]:
    """``n`` Q6 variants with their generating parameters.

    Every (dimension set, level) combination occurs equally often: the
    combinations are dealt in rounds, each round in a seeded random order.
    Discrete dimensions (discount, quantity) use ``between``, the others
    half-open ``>= / <`` ranges; point queries use ``=``.
    """
    if n < 0:
        raise ValueError("n must be >= 0")
    for dims in dimension_sets:
        if not dims or not 1 <= len(dims) <= 3 or len(set(dims)) != len(dims) or set(dims) - set(DIMENSIONS):
            raise ValueError(f"dimension set must be 1-3 distinct letters of {''.join(DIMENSIONS)}: {dims!r}")
    for level in levels:
        if level != "point" and not 0 < float(level) < 1:
            raise ValueError(f"bad selectivity level {level!r}")
    domains = {k: lineitem_domain(col, scale_factor) for k, col in DIMENSIONS.items()}
    rng = random.Random(seed)
    combos = list(itertools.product(dimension_sets, levels))
    out: list[Q6Variant] = []
    while len(out) < n:
        round_ = combos[:]
        rng.shuffle(round_)
        for dims, level in round_[: n - len(out)]:
            preds = []
            for k in dims:
                dom = domains[k]
                if level == "point":
                    preds.append(dom.point(rng))
                else:
                    style = "between" if k in ("d", "q") else "halfopen"
                    preds.append(dom.range(float(level), rng, style=style))
            out.append(Q6Variant(dims, level, tuple(preds), _q6_sql(dims, level, preds)))
    return out


def q6_variants(
    n: int,
    seed: int,
    *,
    scale_factor: float = 1,
    dimension_sets: Sequence[str] = PAPER_QUERY_DIMENSIONS,
    levels: Sequence[str | float] = SELECTIVITIES,
) -> list[str]:
    """``n`` Q6-style query texts (each starts with a ``-- q6 variant ...`` comment)."""
    return [
        v.sql
        for v in q6_variant_specs(
            n, seed, scale_factor=scale_factor, dimension_sets=dimension_sets, levels=levels
        )
    ]

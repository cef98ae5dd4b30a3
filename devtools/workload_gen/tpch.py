"""TPC-H query templates (HiveQL) for every query that reads ``lineitem``.

Each template has

* ``render(params)`` -- the HiveQL text for one set of substitution parameters;
* ``draw(rng)`` -- substitution parameters drawn as qgen does (TPC-H spec 2.4,
  "Substitution Parameters" of each query);
* ``validation`` -- the spec's validation (default) parameters; rendering them
  gives the golden files ``sql/tpch/qNN.sql``.

The SQL follows the Hive TPC-H ports (hive-testbench and friends): lowercase,
unqualified table names, joins kept where the spec has them (comma joins in
WHERE, and JOIN ... ON in a few queries as the Hive ports write them), the
EXISTS / IN / scalar subqueries and Q15's view as a WITH clause.  Date
arithmetic deliberately mixes the styles found in those ports:
``date 'X' +/- interval 'N' unit``, ``add_months('X', N)`` and plain string
comparisons ``l_shipdate >= '1994-01-01'`` -- so the rest of the planner sees
all of them.

Every query text starts with the comment line ``-- tpch qNN``.

The templates are trusted constants and the parameters come only from the
closed value lists below, so plain string formatting is safe here.
"""

from __future__ import annotations

import datetime as _dt
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "ALL_TEMPLATES",
    "COLORS",
    "CONTAINERS",
    "DEFAULT_TEMPLATES",
    "NATIONS",
    "REGIONS",
    "SEGMENTS",
    "SHIPMODES",
    "TEMPLATES",
    "TYPES",
    "Template",
    "golden_query",
    "normalize_template_name",
    "tpch_workload",
]

# --------------------------------------------------------------------------
# Value lists of the TPC-H spec (4.2.2.13 and 4.2.3)
# --------------------------------------------------------------------------

#: N_NAME -> R_NAME (nation table, spec 4.2.3).
NATIONS: dict[str, str] = {
    "ALGERIA": "AFRICA",
    "ARGENTINA": "AMERICA",
    "BRAZIL": "AMERICA",
    "CANADA": "AMERICA",
    "EGYPT": "MIDDLE EAST",
    "ETHIOPIA": "AFRICA",
    "FRANCE": "EUROPE",
    "GERMANY": "EUROPE",
    "INDIA": "ASIA",
    "INDONESIA": "ASIA",
    "IRAN": "MIDDLE EAST",
    "IRAQ": "MIDDLE EAST",
    "JAPAN": "ASIA",
    "JORDAN": "MIDDLE EAST",
    "KENYA": "AFRICA",
    "MOROCCO": "AFRICA",
    "MOZAMBIQUE": "AFRICA",
    "PERU": "AMERICA",
    "CHINA": "ASIA",
    "ROMANIA": "EUROPE",
    "SAUDI ARABIA": "MIDDLE EAST",
    "VIETNAM": "ASIA",
    "RUSSIA": "EUROPE",
    "UNITED KINGDOM": "EUROPE",
    "UNITED STATES": "AMERICA",
}
REGIONS: tuple[str, ...] = ("AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST")
SEGMENTS: tuple[str, ...] = ("AUTOMOBILE", "BUILDING", "FURNITURE", "MACHINERY", "HOUSEHOLD")
SHIPMODES: tuple[str, ...] = ("REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB")

_TYPE_S1 = ("STANDARD", "SMALL", "MEDIUM", "LARGE", "ECONOMY", "PROMO")
_TYPE_S2 = ("ANODIZED", "BURNISHED", "PLATED", "POLISHED", "BRUSHED")
_TYPE_S3 = ("TIN", "NICKEL", "BRASS", "STEEL", "COPPER")
#: The 150 three-syllable part types.
TYPES: tuple[str, ...] = tuple(f"{a} {b} {c}" for a in _TYPE_S1 for b in _TYPE_S2 for c in _TYPE_S3)

_CONTAINER_S1 = ("SM", "LG", "MED", "JUMBO", "WRAP")
_CONTAINER_S2 = ("CASE", "BOX", "BAG", "JAR", "PKG", "PACK", "CAN", "DRUM")
#: The 40 two-syllable containers.
CONTAINERS: tuple[str, ...] = tuple(f"{a} {b}" for a in _CONTAINER_S1 for b in _CONTAINER_S2)

#: The 92 colors used to build P_NAME.
COLORS: tuple[str, ...] = (
    "almond", "antique", "aquamarine", "azure", "beige", "bisque", "black", "blanched",
    "blue", "blush", "brown", "burlywood", "burnished", "chartreuse", "chiffon",
    "chocolate", "coral", "cornflower", "cornsilk", "cream", "cyan", "dark", "deep",
    "dim", "dodger", "drab", "firebrick", "floral", "forest", "frosted", "gainsboro",
    "ghost", "goldenrod", "green", "grey", "honeydew", "hot", "indian", "ivory", "khaki",
    "lace", "lavender", "lawn", "lemon", "light", "lime", "linen", "magenta", "maroon",
    "medium", "metallic", "midnight", "mint", "misty", "moccasin", "navajo", "navy",
    "olive", "orange", "orchid", "pale", "papaya", "peach", "peru", "pink", "plum",
    "powder", "puff", "purple", "red", "rose", "rosy", "royal", "saddle", "salmon",
    "sandy", "seashell", "sienna", "sky", "slate", "smoke", "snow", "spring", "steel",
    "tan", "thistle", "tomato", "turquoise", "violet", "wheat", "white", "yellow",
)  # fmt: skip


# --------------------------------------------------------------------------
# Small helpers
# --------------------------------------------------------------------------


def _d(year: int, month: int = 1, day: int = 1) -> str:
    return _dt.date(year, month, day).isoformat()


def _add_months(iso: str, months: int) -> str:
    d = _dt.date.fromisoformat(iso)
    m = d.month - 1 + months
    return _dt.date(d.year + m // 12, m % 12 + 1, d.day).isoformat()


def _month_start(rng: random.Random, first: tuple[int, int], last: tuple[int, int]) -> str:
    """First day of a month drawn uniformly from [first, last] (year, month), inclusive."""
    lo = first[0] * 12 + first[1] - 1
    hi = last[0] * 12 + last[1] - 1
    m = rng.randint(lo, hi)
    return _d(m // 12, m % 12 + 1)


def _brand(rng: random.Random) -> str:
    return f"Brand#{rng.randint(1, 5)}{rng.randint(1, 5)}"


def _money(x: float) -> str:
    return f"{x:.2f}"


# --------------------------------------------------------------------------
# Templates
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Template:
    """One TPC-H query template."""

    name: str  #: "q01" .. "q21"
    title: str
    render_body: Callable[[Mapping[str, Any]], str] = field(repr=False)
    draw: Callable[[random.Random], dict[str, Any]] = field(repr=False)
    validation: Mapping[str, Any] = field(default_factory=dict)

    def render(self, params: Mapping[str, Any]) -> str:
        """Query text: the ``-- tpch qNN`` comment line, then the HiveQL (no ';')."""
        return f"-- tpch {self.name}\n{self.render_body(params).strip()}"


# Q1 -- Pricing Summary Report -------------------------------------------------


def _q01(p: Mapping[str, Any]) -> str:
    return f"""
select
    l_returnflag,
    l_linestatus,
    sum(l_quantity) as sum_qty,
    sum(l_extendedprice) as sum_base_price,
    sum(l_extendedprice * (1 - l_discount)) as sum_disc_price,
    sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) as sum_charge,
    avg(l_quantity) as avg_qty,
    avg(l_extendedprice) as avg_price,
    avg(l_discount) as avg_disc,
    count(*) as count_order
from
    lineitem
where
    l_shipdate <= date '1998-12-01' - interval '{int(p["delta"])}' day
group by
    l_returnflag,
    l_linestatus
order by
    l_returnflag,
    l_linestatus
"""


def _q01_draw(rng: random.Random) -> dict[str, Any]:
    return {"delta": rng.randint(60, 120)}


# Q3 -- Shipping Priority -----------------------------------------------------


def _q03(p: Mapping[str, Any]) -> str:
    return f"""
select
    l_orderkey,
    sum(l_extendedprice * (1 - l_discount)) as revenue,
    o_orderdate,
    o_shippriority
from
    customer,
    orders,
    lineitem
where
    c_mktsegment = '{p["segment"]}'
    and c_custkey = o_custkey
    and l_orderkey = o_orderkey
    and o_orderdate < date '{p["date"]}'
    and l_shipdate > date '{p["date"]}'
group by
    l_orderkey,
    o_orderdate,
    o_shippriority
order by
    revenue desc,
    o_orderdate
limit 10
"""


def _q03_draw(rng: random.Random) -> dict[str, Any]:
    return {"segment": rng.choice(SEGMENTS), "date": _d(1995, 3, rng.randint(1, 31))}


# Q4 -- Order Priority Checking ------------------------------------------------


def _q04(p: Mapping[str, Any]) -> str:
    return f"""
select
    o_orderpriority,
    count(*) as order_count
from
    orders
where
    o_orderdate >= date '{p["date"]}'
    and o_orderdate < date '{p["date"]}' + interval '3' month
    and exists (
        select
            *
        from
            lineitem
        where
            l_orderkey = o_orderkey
            and l_commitdate < l_receiptdate
    )
group by
    o_orderpriority
order by
    o_orderpriority
"""


def _q04_draw(rng: random.Random) -> dict[str, Any]:
    return {"date": _month_start(rng, (1993, 1), (1997, 10))}


# Q5 -- Local Supplier Volume --------------------------------------------------


def _q05(p: Mapping[str, Any]) -> str:
    return f"""
select
    n_name,
    sum(l_extendedprice * (1 - l_discount)) as revenue
from
    customer,
    orders,
    lineitem,
    supplier,
    nation,
    region
where
    c_custkey = o_custkey
    and l_orderkey = o_orderkey
    and l_suppkey = s_suppkey
    and c_nationkey = s_nationkey
    and s_nationkey = n_nationkey
    and n_regionkey = r_regionkey
    and r_name = '{p["region"]}'
    and o_orderdate >= '{p["date"]}'
    and o_orderdate < '{_add_months(p["date"], 12)}'
group by
    n_name
order by
    revenue desc
"""


def _q05_draw(rng: random.Random) -> dict[str, Any]:
    return {"region": rng.choice(REGIONS), "date": _d(rng.randint(1993, 1997))}


# Q6 -- Forecasting Revenue Change ---------------------------------------------


def _q06(p: Mapping[str, Any]) -> str:
    discount = round(float(p["discount"]), 2)
    return f"""
select
    sum(l_extendedprice * l_discount) as revenue
from
    lineitem
where
    l_shipdate >= '{p["date"]}'
    and l_shipdate < '{_add_months(p["date"], 12)}'
    and l_discount between {_money(discount - 0.01)} and {_money(discount + 0.01)}
    and l_quantity < {int(p["quantity"])}
"""


def _q06_draw(rng: random.Random) -> dict[str, Any]:
    return {
        "date": _d(rng.randint(1993, 1997)),
        "discount": rng.randint(2, 9) / 100,
        "quantity": rng.randint(24, 25),
    }


# Q7 -- Volume Shipping --------------------------------------------------------


def _q07(p: Mapping[str, Any]) -> str:
    n1, n2 = p["nation1"], p["nation2"]
    return f"""
select
    supp_nation,
    cust_nation,
    l_year,
    sum(volume) as revenue
from
    (
        select
            n1.n_name as supp_nation,
            n2.n_name as cust_nation,
            year(l_shipdate) as l_year,
            l_extendedprice * (1 - l_discount) as volume
        from
            supplier,
            lineitem,
            orders,
            customer,
            nation n1,
            nation n2
        where
            s_suppkey = l_suppkey
            and o_orderkey = l_orderkey
            and c_custkey = o_custkey
            and s_nationkey = n1.n_nationkey
            and c_nationkey = n2.n_nationkey
            and (
                (n1.n_name = '{n1}' and n2.n_name = '{n2}')
                or (n1.n_name = '{n2}' and n2.n_name = '{n1}')
            )
            and l_shipdate between date '1995-01-01' and date '1996-12-31'
    ) shipping
group by
    supp_nation,
    cust_nation,
    l_year
order by
    supp_nation,
    cust_nation,
    l_year
"""


def _q07_draw(rng: random.Random) -> dict[str, Any]:
    n1, n2 = rng.sample(sorted(NATIONS), 2)
    return {"nation1": n1, "nation2": n2}


# Q8 -- National Market Share --------------------------------------------------


def _q08(p: Mapping[str, Any]) -> str:
    return f"""
select
    o_year,
    sum(case when nation = '{p["nation"]}' then volume else 0 end) / sum(volume) as mkt_share
from
    (
        select
            year(o_orderdate) as o_year,
            l_extendedprice * (1 - l_discount) as volume,
            n2.n_name as nation
        from
            part,
            supplier,
            lineitem,
            orders,
            customer,
            nation n1,
            nation n2,
            region
        where
            p_partkey = l_partkey
            and s_suppkey = l_suppkey
            and l_orderkey = o_orderkey
            and o_custkey = c_custkey
            and c_nationkey = n1.n_nationkey
            and n1.n_regionkey = r_regionkey
            and r_name = '{p["region"]}'
            and s_nationkey = n2.n_nationkey
            and o_orderdate between date '1995-01-01' and date '1996-12-31'
            and p_type = '{p["type"]}'
    ) all_nations
group by
    o_year
order by
    o_year
"""


def _q08_draw(rng: random.Random) -> dict[str, Any]:
    nation = rng.choice(sorted(NATIONS))
    return {"nation": nation, "region": NATIONS[nation], "type": rng.choice(TYPES)}


# Q9 -- Product Type Profit Measure --------------------------------------------


def _q09(p: Mapping[str, Any]) -> str:
    return f"""
select
    nation,
    o_year,
    sum(amount) as sum_profit
from
    (
        select
            n_name as nation,
            year(o_orderdate) as o_year,
            l_extendedprice * (1 - l_discount) - ps_supplycost * l_quantity as amount
        from
            part,
            supplier,
            lineitem,
            partsupp,
            orders,
            nation
        where
            s_suppkey = l_suppkey
            and ps_suppkey = l_suppkey
            and ps_partkey = l_partkey
            and p_partkey = l_partkey
            and o_orderkey = l_orderkey
            and s_nationkey = n_nationkey
            and p_name like '%{p["color"]}%'
    ) profit
group by
    nation,
    o_year
order by
    nation,
    o_year desc
"""


def _q09_draw(rng: random.Random) -> dict[str, Any]:
    return {"color": rng.choice(COLORS)}


# Q10 -- Returned Item Reporting -----------------------------------------------


def _q10(p: Mapping[str, Any]) -> str:
    return f"""
select
    c_custkey,
    c_name,
    sum(l_extendedprice * (1 - l_discount)) as revenue,
    c_acctbal,
    n_name,
    c_address,
    c_phone,
    c_comment
from
    customer
    join orders on c_custkey = o_custkey
    join lineitem on l_orderkey = o_orderkey
    join nation on c_nationkey = n_nationkey
where
    o_orderdate >= '{p["date"]}'
    and o_orderdate < add_months('{p["date"]}', 3)
    and l_returnflag = 'R'
group by
    c_custkey,
    c_name,
    c_acctbal,
    c_phone,
    n_name,
    c_address,
    c_comment
order by
    revenue desc
limit 20
"""


def _q10_draw(rng: random.Random) -> dict[str, Any]:
    return {"date": _month_start(rng, (1993, 2), (1995, 1))}


# Q12 -- Shipping Modes and Order Priority -------------------------------------


def _q12(p: Mapping[str, Any]) -> str:
    return f"""
select
    l_shipmode,
    sum(case
        when o_orderpriority = '1-URGENT' or o_orderpriority = '2-HIGH' then 1
        else 0
    end) as high_line_count,
    sum(case
        when o_orderpriority <> '1-URGENT' and o_orderpriority <> '2-HIGH' then 1
        else 0
    end) as low_line_count
from
    orders
    join lineitem on o_orderkey = l_orderkey
where
    l_shipmode in ('{p["shipmode1"]}', '{p["shipmode2"]}')
    and l_commitdate < l_receiptdate
    and l_shipdate < l_commitdate
    and l_receiptdate >= date '{p["date"]}'
    and l_receiptdate < date '{p["date"]}' + interval '1' year
group by
    l_shipmode
order by
    l_shipmode
"""


def _q12_draw(rng: random.Random) -> dict[str, Any]:
    m1, m2 = rng.sample(SHIPMODES, 2)
    return {"shipmode1": m1, "shipmode2": m2, "date": _d(rng.randint(1993, 1997))}


# Q14 -- Promotion Effect ------------------------------------------------------


def _q14(p: Mapping[str, Any]) -> str:
    return f"""
select
    100.00 * sum(case
        when p_type like 'PROMO%' then l_extendedprice * (1 - l_discount)
        else 0
    end) / sum(l_extendedprice * (1 - l_discount)) as promo_revenue
from
    lineitem
    join part on l_partkey = p_partkey
where
    l_shipdate >= date '{p["date"]}'
    and l_shipdate < date '{p["date"]}' + interval '1' month
"""


def _q14_draw(rng: random.Random) -> dict[str, Any]:
    return {"date": _month_start(rng, (1993, 1), (1997, 12))}


# Q15 -- Top Supplier (the view revenue0 as a WITH clause) ----------------------


def _q15(p: Mapping[str, Any]) -> str:
    return f"""
with revenue0 as (
    select
        l_suppkey as supplier_no,
        sum(l_extendedprice * (1 - l_discount)) as total_revenue
    from
        lineitem
    where
        l_shipdate >= '{p["date"]}'
        and l_shipdate < add_months('{p["date"]}', 3)
    group by
        l_suppkey
)
select
    s_suppkey,
    s_name,
    s_address,
    s_phone,
    total_revenue
from
    supplier,
    revenue0
where
    s_suppkey = supplier_no
    and total_revenue = (
        select
            max(total_revenue)
        from
            revenue0
    )
order by
    s_suppkey
"""


def _q15_draw(rng: random.Random) -> dict[str, Any]:
    return {"date": _month_start(rng, (1993, 1), (1997, 10))}


# Q17 -- Small-Quantity-Order Revenue ------------------------------------------


def _q17(p: Mapping[str, Any]) -> str:
    return f"""
select
    sum(l_extendedprice) / 7.0 as avg_yearly
from
    lineitem,
    part
where
    p_partkey = l_partkey
    and p_brand = '{p["brand"]}'
    and p_container = '{p["container"]}'
    and l_quantity < (
        select
            0.2 * avg(l_quantity)
        from
            lineitem
        where
            l_partkey = p_partkey
    )
"""


def _q17_draw(rng: random.Random) -> dict[str, Any]:
    return {"brand": _brand(rng), "container": rng.choice(CONTAINERS)}


# Q18 -- Large Volume Customer -------------------------------------------------


def _q18(p: Mapping[str, Any]) -> str:
    return f"""
select
    c_name,
    c_custkey,
    o_orderkey,
    o_orderdate,
    o_totalprice,
    sum(l_quantity) as sum_quantity
from
    customer,
    orders,
    lineitem
where
    o_orderkey in (
        select
            l_orderkey
        from
            lineitem
        group by
            l_orderkey
        having
            sum(l_quantity) > {int(p["quantity"])}
    )
    and c_custkey = o_custkey
    and o_orderkey = l_orderkey
group by
    c_name,
    c_custkey,
    o_orderkey,
    o_orderdate,
    o_totalprice
order by
    o_totalprice desc,
    o_orderdate
limit 100
"""


def _q18_draw(rng: random.Random) -> dict[str, Any]:
    return {"quantity": rng.randint(312, 315)}


# Q19 -- Discounted Revenue ----------------------------------------------------


def _q19(p: Mapping[str, Any]) -> str:
    q1, q2, q3 = int(p["quantity1"]), int(p["quantity2"]), int(p["quantity3"])
    return f"""
select
    sum(l_extendedprice * (1 - l_discount)) as revenue
from
    lineitem,
    part
where
    (
        p_partkey = l_partkey
        and p_brand = '{p["brand1"]}'
        and p_container in ('SM CASE', 'SM BOX', 'SM PACK', 'SM PKG')
        and l_quantity >= {q1} and l_quantity <= {q1 + 10}
        and p_size between 1 and 5
        and l_shipmode in ('AIR', 'AIR REG')
        and l_shipinstruct = 'DELIVER IN PERSON'
    )
    or (
        p_partkey = l_partkey
        and p_brand = '{p["brand2"]}'
        and p_container in ('MED BAG', 'MED BOX', 'MED PKG', 'MED PACK')
        and l_quantity >= {q2} and l_quantity <= {q2 + 10}
        and p_size between 1 and 10
        and l_shipmode in ('AIR', 'AIR REG')
        and l_shipinstruct = 'DELIVER IN PERSON'
    )
    or (
        p_partkey = l_partkey
        and p_brand = '{p["brand3"]}'
        and p_container in ('LG CASE', 'LG BOX', 'LG PACK', 'LG PKG')
        and l_quantity >= {q3} and l_quantity <= {q3 + 10}
        and p_size between 1 and 15
        and l_shipmode in ('AIR', 'AIR REG')
        and l_shipinstruct = 'DELIVER IN PERSON'
    )
"""


def _q19_draw(rng: random.Random) -> dict[str, Any]:
    return {
        "quantity1": rng.randint(1, 10),
        "quantity2": rng.randint(10, 20),
        "quantity3": rng.randint(20, 30),
        "brand1": _brand(rng),
        "brand2": _brand(rng),
        "brand3": _brand(rng),
    }


# Q20 -- Potential Part Promotion ----------------------------------------------


def _q20(p: Mapping[str, Any]) -> str:
    return f"""
select
    s_name,
    s_address
from
    supplier,
    nation
where
    s_suppkey in (
        select
            ps_suppkey
        from
            partsupp
        where
            ps_partkey in (
                select
                    p_partkey
                from
                    part
                where
                    p_name like '{p["color"]}%'
            )
            and ps_availqty > (
                select
                    0.5 * sum(l_quantity)
                from
                    lineitem
                where
                    l_partkey = ps_partkey
                    and l_suppkey = ps_suppkey
                    and l_shipdate >= '{p["date"]}'
                    and l_shipdate < add_months('{p["date"]}', 12)
            )
    )
    and s_nationkey = n_nationkey
    and n_name = '{p["nation"]}'
order by
    s_name
"""


def _q20_draw(rng: random.Random) -> dict[str, Any]:
    return {
        "color": rng.choice(COLORS),
        "date": _d(rng.randint(1993, 1997)),
        "nation": rng.choice(sorted(NATIONS)),
    }


# Q21 -- Suppliers Who Kept Orders Waiting -------------------------------------


def _q21(p: Mapping[str, Any]) -> str:
    return f"""
select
    s_name,
    count(*) as numwait
from
    supplier,
    lineitem l1,
    orders,
    nation
where
    s_suppkey = l1.l_suppkey
    and o_orderkey = l1.l_orderkey
    and o_orderstatus = 'F'
    and l1.l_receiptdate > l1.l_commitdate
    and exists (
        select
            *
        from
            lineitem l2
        where
            l2.l_orderkey = l1.l_orderkey
            and l2.l_suppkey <> l1.l_suppkey
    )
    and not exists (
        select
            *
        from
            lineitem l3
        where
            l3.l_orderkey = l1.l_orderkey
            and l3.l_suppkey <> l1.l_suppkey
            and l3.l_receiptdate > l3.l_commitdate
    )
    and s_nationkey = n_nationkey
    and n_name = '{p["nation"]}'
group by
    s_name
order by
    numwait desc,
    s_name
limit 100
"""


def _q21_draw(rng: random.Random) -> dict[str, Any]:
    return {"nation": rng.choice(sorted(NATIONS))}


_ALL: tuple[Template, ...] = (
    Template("q01", "Pricing Summary Report", _q01, _q01_draw, {"delta": 90}),
    Template("q03", "Shipping Priority", _q03, _q03_draw, {"segment": "BUILDING", "date": "1995-03-15"}),
    Template("q04", "Order Priority Checking", _q04, _q04_draw, {"date": "1993-07-01"}),
    Template("q05", "Local Supplier Volume", _q05, _q05_draw, {"region": "ASIA", "date": "1994-01-01"}),
    Template(
        "q06",
        "Forecasting Revenue Change",
        _q06,
        _q06_draw,
        {"date": "1994-01-01", "discount": 0.06, "quantity": 24},
    ),
    Template("q07", "Volume Shipping", _q07, _q07_draw, {"nation1": "FRANCE", "nation2": "GERMANY"}),
    Template(
        "q08",
        "National Market Share",
        _q08,
        _q08_draw,
        {"nation": "BRAZIL", "region": "AMERICA", "type": "ECONOMY ANODIZED STEEL"},
    ),
    Template("q09", "Product Type Profit Measure", _q09, _q09_draw, {"color": "green"}),
    Template("q10", "Returned Item Reporting", _q10, _q10_draw, {"date": "1993-10-01"}),
    Template(
        "q12",
        "Shipping Modes and Order Priority",
        _q12,
        _q12_draw,
        {"shipmode1": "MAIL", "shipmode2": "SHIP", "date": "1994-01-01"},
    ),
    Template("q14", "Promotion Effect", _q14, _q14_draw, {"date": "1995-09-01"}),
    Template("q15", "Top Supplier", _q15, _q15_draw, {"date": "1996-01-01"}),
    Template(
        "q17", "Small-Quantity-Order Revenue", _q17, _q17_draw, {"brand": "Brand#23", "container": "MED BOX"}
    ),
    Template("q18", "Large Volume Customer", _q18, _q18_draw, {"quantity": 300}),
    Template(
        "q19",
        "Discounted Revenue",
        _q19,
        _q19_draw,
        {
            "quantity1": 1,
            "quantity2": 10,
            "quantity3": 20,
            "brand1": "Brand#12",
            "brand2": "Brand#23",
            "brand3": "Brand#34",
        },
    ),
    Template(
        "q20",
        "Potential Part Promotion",
        _q20,
        _q20_draw,
        {"color": "forest", "date": "1994-01-01", "nation": "CANADA"},
    ),
    Template("q21", "Suppliers Who Kept Orders Waiting", _q21, _q21_draw, {"nation": "SAUDI ARABIA"}),
)

#: name -> Template, for every TPC-H query that reads lineitem.
TEMPLATES: dict[str, Template] = {t.name: t for t in _ALL}
#: Names of every template, in query-number order.
ALL_TEMPLATES: tuple[str, ...] = tuple(TEMPLATES)
#: The templates ``tpch_workload`` uses by default: all of them.
DEFAULT_TEMPLATES: tuple[str, ...] = ALL_TEMPLATES


def normalize_template_name(name: str | int) -> str:
    """``1``, ``"1"``, ``"q1"``, ``"Q01"`` -> ``"q01"``; ValueError for unknown templates."""
    s = str(name).strip().lower()
    if s.startswith("q"):
        s = s[1:]
    if not s.isdigit():
        raise ValueError(f"not a TPC-H query name: {name!r}")
    canon = f"q{int(s):02d}"
    if canon not in TEMPLATES:
        raise ValueError(f"no lineitem template for TPC-H {canon} (have: {', '.join(TEMPLATES)})")
    return canon


def golden_query(name: str | int) -> str:
    """The golden file text (``sql/tpch/qNN.sql``): template with validation parameters."""
    t = TEMPLATES[normalize_template_name(name)]
    params = ", ".join(f"{k} = {v}" for k, v in t.validation.items())
    body = t.render(t.validation)
    first, rest = body.split("\n", 1)
    return f"{first}\n-- TPC-H Q{int(t.name[1:])} ({t.title}), HiveQL; validation parameters: {params}\n{rest};\n"


def tpch_workload(
    n: int,
    seed: int,
    *,
    templates: Iterable[str | int] = DEFAULT_TEMPLATES,
    weights: Sequence[float] | Mapping[str, float] | None = None,
) -> list[str]:
    """``n`` TPC-H query instances with qgen-style random substitution parameters.

    Templates are used round-robin in the order given (so every template occurs
    ``n // len(templates)`` or one more times), or drawn at random with ``weights``
    (a sequence parallel to ``templates`` or a mapping name -> weight).  The result
    depends only on ``n``, ``seed``, ``templates`` and ``weights``; the first ``k``
    queries of a longer round-robin workload are not guaranteed to equal a
    shorter one's.
    """
    if n < 0:
        raise ValueError("n must be >= 0")
    names = [normalize_template_name(t) for t in templates]
    if not names:
        raise ValueError("templates must not be empty")
    rng = random.Random(seed)
    if weights is None:
        chosen = [names[i % len(names)] for i in range(n)]
    else:
        if isinstance(weights, Mapping):
            norm = {normalize_template_name(k): float(v) for k, v in weights.items()}
            w = [norm.get(name, 0.0) for name in names]
        else:
            w = [float(x) for x in weights]
            if len(w) != len(names):
                raise ValueError("weights must be parallel to templates")
        if any(x < 0 for x in w) or sum(w) <= 0:
            raise ValueError("weights must be non-negative with a positive sum")
        chosen = rng.choices(names, weights=w, k=n)
    out = []
    for name in chosen:
        t = TEMPLATES[name]
        out.append(t.render(t.draw(rng)))
    return out

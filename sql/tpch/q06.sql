-- tpch q06
-- TPC-H Q6 (Forecasting Revenue Change), HiveQL; validation parameters: date = 1994-01-01, discount = 0.06, quantity = 24
select
    sum(l_extendedprice * l_discount) as revenue
from
    lineitem
where
    l_shipdate >= '1994-01-01'
    and l_shipdate < '1995-01-01'
    and l_discount between 0.05 and 0.07
    and l_quantity < 24;

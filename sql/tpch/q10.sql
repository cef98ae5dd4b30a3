-- tpch q10
-- TPC-H Q10 (Returned Item Reporting), HiveQL; validation parameters: date = 1993-10-01
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
    o_orderdate >= '1993-10-01'
    and o_orderdate < add_months('1993-10-01', 3)
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
limit 20;

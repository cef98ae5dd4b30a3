"""Hive partition planner: workload-driven physical layouts for Hive and Spark tables.

    planner/cnf/        predicate IR, constant folding, CNF          (pure)
    planner/workload/   reading workloads: statements, scans          (pure)
    planner/costmodel/  statistics, cost model, contenders, search    (pure)
    planner/emit/       layout -> Hive/Spark SQL                      (pure)
    planner/rewrite.py  queries -> partition-pruning queries          (pure, plus planner.sql)
    hive_integration/   Spark, metastore, HiveServer2                 (I/O edge)
"""


def sql(spark, text: str, *, dialect: str = "spark"):
    """Run ``text`` on ``spark`` through the partition-pruning rewrite (see planner.rewrite)."""
    from planner.rewrite import sql as _sql

    return _sql(spark, text, dialect=dialect)


__all__ = ["sql"]

"""Hive partition planner: workload-driven physical layouts for Hive and Spark tables.

    planner/cnf/          predicate IR, constant folding, CNF                      (pure)
    planner/workload/     reading workloads: files, event logs, statements, views, scans (pure)
    planner/workload_gen/ generators of the bundled workloads (TPC-H, Q6 variants, ad hoc)
    planner/costmodel/    statistics, cost model, contenders, search               (pure)
    planner/emit/         layout -> Hive/Spark SQL, the advice folder              (pure)
    planner/rewrite.py    queries -> partition-pruning queries                     (pure)
    planner/cli/          the ``planner`` command
    hive_integration/     Spark, metastore, HiveServer2, layouts in table properties, the demo (I/O edge)
"""


def sql(spark, text: str, *, dialect: str = "spark"):
    """Run ``text`` on ``spark`` through the partition-pruning rewrite (see planner.rewrite).

    The layouts are read from the tables' properties (``hive_integration.layouts``)."""
    from hive_integration.layouts import sql as _sql

    return _sql(spark, text, dialect=dialect)


__all__ = ["sql"]

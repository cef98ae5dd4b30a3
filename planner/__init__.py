"""Hive partition planner: workload-driven physical layouts for Hive and Spark tables.

The core is a pipeline of pure stages, each importing only the ones above it in this list
(``setup.cfg``'s import-linter contracts hold it so):

    planner/semantics/   Spark's types, coercions, casts, constant folding, settings
    planner/cnf/         predicate IR, value sets, binding, NNF/CNF
    planner/model/       the values every stage passes on: Layout, join paths, the write plan
    planner/workload/    reading workloads: files, event logs, statements, views, scans, joins
    planner/analysis/    per-table analysis of the scans, CPS candidate conditions
    planner/pruning/     which partitions a scan may skip: the one rule, join ranges
    planner/costmodel/   statistics, sample, writer simulation, cost, contenders, search
    planner/advice/      guard, ranking, held-out check, drift, status, re-layout plan
    planner/emit/        SQL text: DDL, INSERT … CASE, curves, re-layout, the advice folder
    planner/rewrite/     queries -> partition-pruning queries
    planner/cli/         the ``planner`` command

The I/O edge is ``hive_integration/`` (Spark, the metastore, HiveServer2, apply and re-layout);
``devtools/`` holds what developers run (local servers, TPC-H data, workload generators, the demo).
"""


def sql(spark, text: str, *, dialect: str = "spark"):
    """Run ``text`` on ``spark`` through the partition-pruning rewrite (see planner.rewrite).

    The layouts are read from the tables' properties (``hive_integration.metastore.layouts``)."""
    from hive_integration.metastore.layouts import sql as _sql

    return _sql(spark, text, dialect=dialect)


__all__ = ["sql"]

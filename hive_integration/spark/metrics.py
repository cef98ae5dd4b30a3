"""Measured scan figures (files, bytes, rows, partitions) read from Spark's executed plan.

Why: the planner's cost model predicts what a layout makes a query read; these are
the numbers Spark actually read, to check predictions against.  They come from
the SQL metrics of the scan nodes, with no UI or REST API.

How: after an action ran *on this very DataFrame* (``collect()``, ``toPandas()``;
not ``count()``, which builds a new plan), walk
``df._jdf.queryExecution().executedPlan()``:

- ``AdaptiveSparkPlanExec`` -> ``finalPhysicalPlan()`` (AQE re-plans at run time);
- ``*QueryStageExec`` -> ``plan()``; ``ReusedExchangeExec`` / ``ReusedSubqueryExec``
  -> ``child()`` (neither lists it in ``children()``);
- every node's ``subqueries()`` (scalar / IN / EXISTS subqueries that stay
  subqueries, dynamic partition pruning), then ``children()``;

down to ``FileSourceScanExec`` (Parquet/ORC, incl. Hive Parquet tables, which
Spark converts by default) and ``HiveTableScanExec`` (Hive SerDe path).  A scan
reached twice (a reused exchange) is counted once, keyed by its metric ids.

Metric meanings (FileSourceScanExec):
- ``numFiles`` / ``filesSize``: files and bytes selected after (static and
  dynamic) partition pruning -- whole file sizes, not bytes actually fetched.
- ``numPartitions``: partitions read; absent for unpartitioned tables (-> None).
- ``numOutputRows``: rows the scan emitted.  Parquet row groups whose min/max
  statistics exclude the pushed filter are skipped and never counted; every row
  of a row group that *is* read is counted, because record-level filtering
  (``spark.sql.parquet.recordLevelFilter.enabled``) is off by default and the
  Filter node above the scan drops the non-matching rows.  So on sorted data a
  selective filter shows ``rows`` well below the table's row count.

Row-group size is the Hadoop/parquet-mr knob ``parquet.block.size`` (bytes).
Spark copies session confs into the Hadoop conf of each write, so
``spark.conf.set("parquet.block.size", n)`` or
``df.write.option("parquet.block.size", n)`` both work;
``spark.hadoop.parquet.block.size`` at session build time sets the default.
parquet-mr checks the buffered size only every 100..10000 rows
(``parquet.page.size.row.check.min/max``), so row groups never get below ~100 rows.

AQE can replace a plan whose stage came back empty by an ``EmptyRelation`` (its
``AQEPropagateEmptyRelation`` rule); the scans that ran then vanish from the final
plan. ``run_measured`` excludes that one rule while it runs a query, so every scan
stays visible; scans, pruning and row-group skipping are unchanged by it.

``HiveTableScanExec`` only has ``numOutputRows``: its files/bytes are reported
as 0 and partitions as the number of pruned partitions (None if unpartitioned).
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass

from pyspark.sql import DataFrame, Row, SparkSession

from hive_integration.spark.spark_errors import spark_errors


@dataclass(frozen=True)
class ScanMetrics:
    """What one scan node read. ``table`` is ``db.table`` (lower case) or a path."""

    table: str
    files: int
    bytes: int
    rows: int
    partitions: int | None


_FILE_SCANS = {"FileSourceScanExec"}
_HIVE_SCANS = {"HiveTableScanExec"}
_WRAPPED_BY_CHILD = {"ReusedExchangeExec", "ReusedSubqueryExec"}


def _seq(scala_seq) -> list:
    """A Scala Seq as a Python list of Py4J objects."""
    return [scala_seq.apply(i) for i in range(scala_seq.size())]


def _metric(node, name: str) -> int | None:
    metrics = node.metrics()
    return int(metrics.apply(name).value()) if metrics.contains(name) else None


def _metric_ids(node) -> tuple[int, ...]:
    """Accumulator ids of a node's metrics: stable identity across plan wrappers."""
    metrics = node.metrics()
    return tuple(sorted(int(metrics.apply(k).id()) for k in _seq(metrics.keys().toSeq())))


def _table_name(node, kind: str) -> str:
    if kind in _HIVE_SCANS:
        ident = node.relation().tableMeta().identifier()
    else:
        opt = node.tableIdentifier()
        if not opt.isDefined():  # path-based scan, e.g. spark.read.parquet(path)
            roots = _seq(node.relation().location().rootPaths())
            return ",".join(str(p.toString()) for p in roots)
        ident = opt.get()
    db = ident.database()
    name = ident.table()
    return (f"{db.get()}.{name}" if db.isDefined() else name).lower()


def _scan_metrics(node, kind: str) -> ScanMetrics:
    rows = _metric(node, "numOutputRows") or 0
    if kind in _HIVE_SCANS:
        partitions = None
        if node.relation().isPartitioned():
            partitions = int(node.prunedPartitions().size())
        return ScanMetrics(_table_name(node, kind), 0, 0, rows, partitions)
    return ScanMetrics(
        table=_table_name(node, kind),
        files=_metric(node, "numFiles") or 0,
        bytes=_metric(node, "filesSize") or 0,
        rows=rows,
        partitions=_metric(node, "numPartitions"),
    )


def _inner_plans(node, kind: str) -> list:
    """Plans below ``node``, including those not listed in ``children()``."""
    if kind == "AdaptiveSparkPlanExec":
        return [node.finalPhysicalPlan()]
    if kind.endswith("QueryStageExec"):
        return [node.plan()]
    if kind in _WRAPPED_BY_CHILD:
        return [node.child()]
    return _seq(node.subqueries()) + _seq(node.children())


def scan_metrics_of_plan(plan) -> list[ScanMetrics]:
    """All scans under a (Py4J) SparkPlan, in pre-order, each counted once."""
    found: list[ScanMetrics] = []
    seen: set[tuple[int, ...]] = set()
    stack = [plan]
    while stack:
        node = stack.pop()
        kind = node.getClass().getSimpleName()
        if kind in _FILE_SCANS or kind in _HIVE_SCANS:
            key = _metric_ids(node)
            if key not in seen:
                seen.add(key)
                found.append(_scan_metrics(node, kind))
            continue
        stack.extend(reversed(_inner_plans(node, kind)))
    return found


def shuffle_bytes_of_plan(plan) -> int:
    """Bytes the shuffles under a (Py4J) SparkPlan wrote (``shuffleBytesWritten`` of each
    exchange, counted once; after an action on the plan's query)."""
    total, seen, stack = 0, set(), [plan]
    while stack:
        node = stack.pop()
        kind = node.getClass().getSimpleName()
        if kind == "ShuffleExchangeExec":
            key = _metric_ids(node)
            if key not in seen:
                seen.add(key)
                total += _metric(node, "shuffleBytesWritten") or 0
        stack.extend(_inner_plans(node, kind))
    return total


def collect_scan_metrics(df: DataFrame) -> list[ScanMetrics]:
    """Scan metrics of ``df``'s executed plan; call only after an action on ``df``."""
    return scan_metrics_of_plan(df._jdf.queryExecution().executedPlan())


_EXCLUDED_RULES = "spark.sql.adaptive.optimizer.excludedRules"
_EMPTY_RELATION_RULE = "org.apache.spark.sql.execution.adaptive.AQEPropagateEmptyRelation"


@contextmanager
def scans_kept(spark: SparkSession):
    """While inside, AQE keeps the scans of stages that came back empty in the final plan."""
    previous = spark.conf.get(_EXCLUDED_RULES, None)
    rules = [r for r in (previous or "").split(",") if r] + [_EMPTY_RELATION_RULE]
    spark.conf.set(_EXCLUDED_RULES, ",".join(dict.fromkeys(rules)))
    try:
        yield
    finally:
        if previous is None:
            spark.conf.unset(_EXCLUDED_RULES)
        else:
            spark.conf.set(_EXCLUDED_RULES, previous)


def run_measured(spark: SparkSession, sql_text: str) -> tuple[list[Row], list[ScanMetrics]]:
    """Run ``sql_text``, collect its rows, and return them with the scans' metrics."""
    with spark_errors(f"running `{' '.join(sql_text.split())[:300]}`"), scans_kept(spark):
        df = spark.sql(sql_text)
        rows = df.collect()
        return rows, collect_scan_metrics(df)

"""SQL emitted for a layout: region predicates, CREATE TABLE, the apply/append statements."""
from planner.emit.apply_sql import append_statements, apply_statements, partition_case, zorder_expr
from planner.emit.conditions import literal, region_contains, region_predicate, valueset_predicate
from planner.emit.ddl import create_table_sql, layout_from_properties, layout_properties

__all__ = ["append_statements", "apply_statements", "partition_case", "zorder_expr", "literal",
           "region_contains", "region_predicate", "valueset_predicate", "create_table_sql",
           "layout_from_properties", "layout_properties"]

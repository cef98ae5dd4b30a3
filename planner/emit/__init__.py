"""SQL emitted for a layout: region predicates, CREATE TABLE, the apply/append statements.

Names are imported from their modules on first use (PEP 562): ``planner.emit.conditions`` alone
(what the rewriter needs) must not pull in the apply statements, hence numpy and pyarrow.
"""
import importlib

_WHERE = {
    "append_statements": "apply_sql", "apply_statements": "apply_sql", "partition_case": "partition_sql",
    "zorder_expr": "apply_sql", "literal": "conditions", "region_contains": "conditions",
    "region_predicate": "conditions", "valueset_predicate": "conditions", "create_table_sql": "ddl",
    "layout_from_properties": "ddl", "layout_properties": "ddl",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str):
    if name not in _WHERE:
        raise AttributeError(f"module 'planner.emit' has no attribute {name!r}")
    return getattr(importlib.import_module(f"planner.emit.{_WHERE[name]}"), name)

"""Reading workloads: statements, queries, and the scans each query makes."""
from planner.workload.reader import Query, Scan, Workload, parse_workload, read_workload
from planner.workload.scans import Schema

__all__ = ["Query", "Scan", "Workload", "Schema", "parse_workload", "read_workload"]

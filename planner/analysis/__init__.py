"""Per-table analysis of a workload's scans: per-column CNF, the CPS candidate conditions."""

"""Benchmarks: scripts that print a table and keep their results in benchmarks/results/."""

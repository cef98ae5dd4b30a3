"""Queries in, partition-pruning queries out."""

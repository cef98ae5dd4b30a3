"""Lay a table out (write, verify, swap) and re-lay out parts of it."""

"""The Spark session and what is read through it: errors, metrics, catalog, columns, footers, statistics."""

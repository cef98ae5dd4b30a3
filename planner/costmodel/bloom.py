"""Parquet bloom filters as part of a layout: what one costs, which lookups it serves, when it pays.

A lookup (``=``, a short ``IN``, ``<=>``) on a nearly unique column reads every row group whose
min and max span the value; in a layout not sorted on the column that is every row group. A
dictionary would drop the groups that lack the value, but the writer keeps no dictionary for
nearly unique values (``planner.costmodel.blocks``). A bloom filter per column chunk answers
"certainly not here" for all but a false-positive share ``fpp`` of those groups, so the lookup
reads the groups that hold the value and about ``fpp`` of the rest.

What the writer does (parquet-java, ``BlockSplitBloomFilter``): a filter of
``optimalNumOfBits(ndv, fpp) = -8 · ndv / ln(1 - fpp^(1/8))`` bits, rounded up to a power of two
bytes between 32 bytes and ``parquet.bloom.filter.max.bytes`` (1 MiB), per column chunk whose
pages are not all dictionary-encoded (a dictionary-encoded chunk is tested by its dictionary, which
is exact). Spark tests it for ``=`` and ``IN`` lists of at most
``spark.sql.parquet.pushdown.inFilterThreshold`` values (longer lists are pushed as a range). The
filters sit after the row groups, so a scan that does not look a value up never reads them; one
that does reads one filter per row group its statistics and dictionaries keep.

A layout asks for filters through its write hints (``bloom_filters``: column -> expected distinct
values per row group and the false-positive rate), which the laid-out table carries as table
properties (``planner.emit.ddl.bloom_filter_properties``: ``parquet.bloom.filter.enabled#<column>``,
``.expected.ndv#<column>``, ``.fpp#<column>``; ``orc.bloom.filter.columns`` for ORC), honoured by
every write of the table on Spark's writer and Hive's. Without the expected count parquet-java
writes 1 MiB per column chunk.
"""
from __future__ import annotations

import math
from dataclasses import replace
from typing import Mapping

from planner.costmodel.blocks import FOOTER_BLOOM_FPP, is_lookup
from planner.model.layout import Layout
from planner.semantics.kinds import Kind

FPP = FOOTER_BLOOM_FPP  # parquet.bloom.filter.fpp's default
LOWER_BYTES, UPPER_BYTES = 32, 1 << 20  # parquet-java's bounds; UPPER is parquet.bloom.filter.max.bytes
BITS_PER_BLOCK = 256
HINT = "bloom_filters"
# Kinds Spark pushes an equality of to Parquet as a value the filter hashes: integers, decimals
# (as INT32/INT64/binary), strings, dates. Never FLOAT or DOUBLE: parquet-java hashes a double's
# bits, so ``x = 0.0`` drops the row group that holds only -0.0, which Spark's SQL counts as equal
# (apache/parquet-format#407): a lost row. Timestamps are written as INT96 by default, which Spark
# does not push; booleans have two values and a dictionary.
KINDS = (Kind.INTEGER, Kind.DECIMAL, Kind.STRING, Kind.DATE)


def filter_bytes(ndv: float, fpp: float = FPP, max_bytes: int = UPPER_BYTES) -> int:
    """Bytes of one column chunk's filter sized for ``ndv`` distinct values at ``fpp``."""
    if ndv <= 0:
        return LOWER_BYTES
    bits = -8.0 * ndv / math.log(1.0 - fpp ** (1.0 / 8.0))
    bits = min(bits, max_bytes * 8.0)
    nbytes = max(LOWER_BYTES, int(math.ceil(math.ceil(bits / BITS_PER_BLOCK) * BITS_PER_BLOCK / 8.0)))
    power = 1 << (nbytes - 1).bit_length()
    return int(min(max(power, LOWER_BYTES), max_bytes))


def false_positive_rate(ndv: float, nbytes: int) -> float:
    """A split-block filter's false-positive rate (8 bits set per value in one 256-bit block):
    ``(1 - e^(-8 · ndv / bits))^8``, the approximation parquet-java sizes by."""
    if ndv <= 0:
        return 0.0
    return float((1.0 - math.exp(-8.0 * ndv / (nbytes * 8.0))) ** 8)


def hinted(layout: Layout) -> dict[str, dict]:
    """The layout's bloom filters: column -> {"ndv": expected distinct values per row group, "fpp"}."""
    return {str(c): dict(v) for c, v in (dict(layout.meta).get(HINT) or {}).items()}


def rates(layout: Layout) -> dict[str, float]:
    """Column -> the false-positive rate its filters have (at the size the writer gives them), for
    the block reader."""
    out = {}
    for column, spec in hinted(layout).items():
        ndv = float(spec.get("ndv", 0))
        out[column] = false_positive_rate(ndv, filter_bytes(ndv, float(spec.get("fpp", FPP))))
    return out


SUFFIX = " + bloom filters"


def with_bloom_filters(layout: Layout, filters: Mapping[str, float], fpp: float = FPP) -> Layout:
    """``layout`` with a filter on each of ``filters`` (column -> expected distinct values per row
    group). It is a contender of its own in the ranking: its strategy says so."""
    meta = dict(layout.meta)
    spec = {c: {"ndv": int(math.ceil(n)), "fpp": fpp} for c, n in sorted(filters.items())}
    strategy = layout.strategy.removesuffix(SUFFIX)
    if spec:
        meta[HINT] = spec
        strategy += SUFFIX
    else:
        meta.pop(HINT, None)
    return replace(layout, meta=tuple(meta.items()), strategy=strategy)


def lookup_columns(scans, kinds: Mapping[str, Kind], derived=()) -> list[str]:
    """Columns some scan looks values up on, a filter could serve; most looked-up first."""
    counts: dict[str, int] = {}
    for s in scans:
        for column, vs in s.sets.items():
            if column not in derived and kinds.get(column) in KINDS and is_lookup(vs):
                counts[column] = counts.get(column, 0) + 1
    return sorted(counts, key=lambda c: (-counts[c], c))


__all__ = ["FPP", "HINT", "SUFFIX", "KINDS", "false_positive_rate", "filter_bytes", "hinted", "lookup_columns",
           "rates", "with_bloom_filters"]

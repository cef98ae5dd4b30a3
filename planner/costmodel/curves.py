"""Space-filling curve values over bucketed columns: the z-value and the Hilbert value.

Both curves work on cells, not values. Each of the ``k`` columns (2–4) is first cut into at most
64 buckets (``Z_BUCKET_BITS`` = 6 bits); a row's cell is its tuple of bucket numbers.

* **z-value**: bit ``b`` of column ``j``'s bucket moves to bit ``b*k + j``. Because no two
  columns share a bit position, the z-value is the *sum* of each column's ``spread`` bucket, so
  the emitted SQL maps a value straight to its spread bucket and adds them up: no bit
  arithmetic per row at all.
* **Hilbert value**: read the z-value from its top ``k`` bits down, one *digit* of ``k`` bits per
  level (bit ``j`` of the digit is column ``j``'s bit). A small automaton, Hamilton's
  formulation of the Butz algorithm (C. Hamilton, "Compact Hilbert indices", 2006), turns each
  digit into the Hilbert digit of the sub-cube it names, given the orientation (*state*) the
  previous digits left; the states reachable from the start are few (4 for k=2, 12 for k=3, 32 for
  k=4... see ``hilbert_table``). The automaton is one table ``T`` indexed by ``state << k | digit``
  holding ``next state << k | Hilbert digit``, so a level costs one array lookup, one AND and one
  OR, the same few operations in numpy (the cost model) and in SQL (the writer):

      q0 = T[digit0]                 (start state 0)
      q1 = T[(q0 & S) | digit1]      (S keeps the state bits of q0)
      …
      h  = Σ_level (q_level & (2^k - 1)) << (k * (5 - level))

Consecutive Hilbert values name cells that differ by one bucket in exactly one column (the curve
never jumps), which the tests check for k = 2, 3, 4.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

Z_BUCKET_BITS = 6
MAX_BUCKETS = 1 << Z_BUCKET_BITS
CURVE_COLUMNS = (2, 3, 4)  # columns a z-order or Hilbert ordering may interleave


def spread(bucket: int, j: int, k: int) -> int:
    """Bucket ``bucket`` of column ``j`` of ``k`` with its bits moved to z-order positions."""
    return sum(((bucket >> bit) & 1) << (bit * k + j) for bit in range(Z_BUCKET_BITS))


def z_value(buckets: tuple[int, ...]) -> int:
    k = len(buckets)
    return sum(spread(b, j, k) for j, b in enumerate(buckets))


# ---- the Hilbert automaton ----------------------------------------------------------------------
def _rotr(x: int, r: int, k: int) -> int:
    r %= k
    return ((x >> r) | (x << (k - r))) & ((1 << k) - 1)


def _rotl(x: int, r: int, k: int) -> int:
    return _rotr(x, k - (r % k), k)


def _gray(i: int) -> int:
    return i ^ (i >> 1)


def _gray_inverse(g: int, k: int) -> int:
    i, shift = g, 1
    while shift < k:
        i ^= i >> shift
        shift <<= 1
    return i


def _trailing_ones(i: int) -> int:
    n = 0
    while i & 1:
        i >>= 1
        n += 1
    return n


def _entry(w: int) -> int:
    return 0 if w == 0 else _gray(2 * ((w - 1) // 2))


def _direction(w: int, k: int) -> int:
    if w == 0:
        return 0
    return (_trailing_ones(w - 1) if w % 2 == 0 else _trailing_ones(w)) % k


@lru_cache(maxsize=None)
def hilbert_table(k: int) -> tuple[int, ...]:
    """The automaton for ``k`` columns: ``T[state << k | digit] = next_state << k | hilbert_digit``.

    States are the (entry corner, direction) pairs of Hamilton's algorithm reachable from (0, 0),
    numbered in the order they are first met, so state 0 is the start.
    """
    if k < 1:
        raise ValueError("a curve needs at least one column")
    states = {(0, 0): 0}
    queue = [(0, 0)]
    rows: dict[int, list[int]] = {}
    while queue:
        e, d = queue.pop(0)
        row = []
        for digit in range(1 << k):
            w = _gray_inverse(_rotr(digit ^ e, d + 1, k), k)
            nxt = (e ^ _rotl(_entry(w), d + 1, k), (d + _direction(w, k) + 1) % k)
            if nxt not in states:
                states[nxt] = len(states)
                queue.append(nxt)
            row.append((states[nxt] << k) | w)
        rows[states[(e, d)]] = row
    return tuple(v for s in range(len(states)) for v in rows[s])


def state_mask(k: int) -> int:
    """The bits of a table entry that hold the next state (for ``(q & mask) | digit``)."""
    states = len(hilbert_table(k)) >> k
    return ((1 << max(1, (states - 1).bit_length())) - 1) << k


def hilbert_from_z(z: np.ndarray, k: int) -> np.ndarray:
    """Hilbert values of cells given by their z-values (uint64 in, uint64 out)."""
    table = np.asarray(hilbert_table(k), dtype=np.uint64)
    z = np.asarray(z, dtype=np.uint64)
    digit_mask, smask = np.uint64((1 << k) - 1), np.uint64(state_mask(k))
    h = np.zeros(z.shape, dtype=np.uint64)
    q = None
    for level in range(Z_BUCKET_BITS):
        shift = np.uint64(k * (Z_BUCKET_BITS - 1 - level))
        digit = (z >> shift) & digit_mask
        q = table[digit if q is None else (q & smask) | digit]
        h |= (q & digit_mask) << shift
    return h


def hilbert_value(buckets: tuple[int, ...]) -> int:
    """The Hilbert value of one cell (a reference for tests)."""
    k = len(buckets)
    return int(hilbert_from_z(np.array([z_value(buckets)], dtype=np.uint64), k)[0])

"""NumPy's default generator (PCG64) and its shuffle, one stream per table, in numba.

The reference engines draw every random choice as ``rng.permutation(k)`` or
``rng.shuffle(x)`` from ``numpy.random.default_rng(seed)``. These functions
reproduce those draws bit for bit, so a batched table dealt from the same seed
plays the same game as the AEC env (RULES.md: "Random" always means drawn from
the environment's seeded RNG).

A table's stream is one row of a uint64 array ``rng[N, 5]``: the 128-bit state
(high, low), the 128-bit increment (high, low) and the buffered half of the
last 64-bit draw (bit 32 set when a 32-bit half is waiting), exactly the
fields of ``numpy.random.PCG64().state``.
"""

from __future__ import annotations

import numpy as np
from numba import njit, uint64

# PCG64's 128-bit multiplier (PCG_DEFAULT_MULTIPLIER_128), split in halves.
_MUL_HI = np.uint64(0x2360ED051FC65DA4)
_MUL_LO = np.uint64(0x4385DF649FCCF645)
_LOW32 = np.uint64(0xFFFFFFFF)
_HAS32 = np.uint64(1 << 32)
_MASK64 = (1 << 64) - 1

RNG_WIDTH = 5


def seed_rows(rng: np.ndarray, rows: np.ndarray, seeds: np.ndarray) -> None:
    """Set each row's stream to ``numpy.random.default_rng(seed)``'s (SeedSequence and all)."""
    for row, seed in zip(rows.tolist(), seeds.tolist()):
        st = np.random.PCG64(seed).state
        s, inc = st["state"]["state"], st["state"]["inc"]
        rng[row, 0] = s >> 64
        rng[row, 1] = s & _MASK64
        rng[row, 2] = inc >> 64
        rng[row, 3] = inc & _MASK64
        rng[row, 4] = (1 << 32 | st["uinteger"]) if st["has_uint32"] else 0


@njit(cache=True, inline="always")
def _mul64(a, b):
    """Full 128-bit product of two uint64, as (high, low)."""
    a_lo = a & _LOW32
    a_hi = a >> uint64(32)
    b_lo = b & _LOW32
    b_hi = b >> uint64(32)
    lo_lo = a_lo * b_lo
    hi_lo = a_hi * b_lo
    lo_hi = a_lo * b_hi
    hi_hi = a_hi * b_hi
    cross = (lo_lo >> uint64(32)) + (hi_lo & _LOW32) + lo_hi
    high = hi_hi + (hi_lo >> uint64(32)) + (cross >> uint64(32))
    low = (cross << uint64(32)) | (lo_lo & _LOW32)
    return high, low


@njit(cache=True)
def next64(rng, t):
    """One 64-bit output of table t's PCG64 (XSL-RR): step the LCG, then mix the new state."""
    s_hi = rng[t, 0]
    s_lo = rng[t, 1]
    hi, lo = _mul64(s_lo, _MUL_LO)
    hi += s_hi * _MUL_LO + s_lo * _MUL_HI
    lo2 = lo + rng[t, 3]
    carry = uint64(1) if lo2 < lo else uint64(0)
    hi = hi + rng[t, 2] + carry
    rng[t, 0] = hi
    rng[t, 1] = lo2
    x = hi ^ lo2
    rot = hi >> uint64(58)
    return (x >> rot) | (x << ((uint64(64) - rot) & uint64(63)))


@njit(cache=True)
def next32(rng, t):
    """NumPy's next_uint32: the low half of a fresh 64-bit draw, the high half kept for next time."""
    buffered = rng[t, 4]
    if buffered & _HAS32:
        rng[t, 4] = uint64(0)
        return buffered & _LOW32
    v = next64(rng, t)
    rng[t, 4] = _HAS32 | (v >> uint64(32))
    return v & _LOW32


@njit(cache=True)
def interval(rng, t, most):
    """NumPy's random_interval: uniform in [0, most] by masked rejection (most < 2**32 here)."""
    if most == 0:
        return np.int64(0)
    mask = uint64(most)
    mask |= mask >> uint64(1)
    mask |= mask >> uint64(2)
    mask |= mask >> uint64(4)
    mask |= mask >> uint64(8)
    mask |= mask >> uint64(16)
    while True:
        v = next32(rng, t) & mask
        if v <= uint64(most):
            return np.int64(v)


@njit(cache=True)
def shuffle(rng, t, cards, k):
    """``rng.shuffle(cards[:k])``; also ``cards[:k][rng.permutation(k)]``, which makes the same swaps."""
    for i in range(k - 1, 0, -1):
        j = interval(rng, t, i)
        c = cards[i]
        cards[i] = cards[j]
        cards[j] = c

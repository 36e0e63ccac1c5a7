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

import copy

import numpy as np
from numba import njit, uint64

# PCG64's 128-bit multiplier (PCG_DEFAULT_MULTIPLIER_128), split in halves.
_MUL_HI = np.uint64(0x2360ED051FC65DA4)
_MUL_LO = np.uint64(0x4385DF649FCCF645)
_LOW32 = np.uint64(0xFFFFFFFF)
_HAS32 = np.uint64(1 << 32)
_MASK64 = (1 << 64) - 1

RNG_WIDTH = 5


def seed_rows_numpy(rng: np.ndarray, rows: np.ndarray, seeds: np.ndarray) -> None:
    """`seed_rows` through NumPy itself (slower; the tests check that both agree)."""
    for row, seed in zip(rows.tolist(), seeds.tolist()):
        set_row(rng, row, np.random.PCG64(seed).state)


def set_row(rng: np.ndarray, row: int, state: dict) -> None:
    """Put a ``numpy.random.PCG64().state`` dict into one row: the row then draws what that
    generator would draw next, bit for bit."""
    s, inc = state["state"]["state"], state["state"]["inc"]
    rng[row, 0] = s >> 64
    rng[row, 1] = s & _MASK64
    rng[row, 2] = inc >> 64
    rng[row, 3] = inc & _MASK64
    rng[row, 4] = (1 << 32 | state["uinteger"]) if state["has_uint32"] else 0


def copy_stream(rng: np.ndarray, row: int, generator: np.random.Generator) -> bool:
    """Row ``row`` continues ``generator``'s stream, which is left untouched. A PCG64 generator
    (what ``default_rng`` makes) is copied exactly: True. Another bit generator cannot be
    copied; the row is then seeded from a draw of a copy of it (the same uniform law, other
    draws): False."""
    if type(generator.bit_generator) is np.random.PCG64:
        set_row(rng, row, generator.bit_generator.state)
        return True
    seed = int(copy.deepcopy(generator).integers(2**63))
    set_row(rng, row, np.random.PCG64(seed).state)
    return False


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


@njit(cache=True, inline="always")
def _step(rng, t):
    """PCG64's LCG step: state = state * multiplier + increment (mod 2**128)."""
    s_hi = rng[t, 0]
    s_lo = rng[t, 1]
    hi, lo = _mul64(s_lo, _MUL_LO)
    hi += s_hi * _MUL_LO + s_lo * _MUL_HI
    lo2 = lo + rng[t, 3]
    carry = uint64(1) if lo2 < lo else uint64(0)
    rng[t, 0] = hi + rng[t, 2] + carry
    rng[t, 1] = lo2


@njit(cache=True, inline="always")
def next64(rng, t):
    """One 64-bit output of table t's PCG64 (XSL-RR): step the LCG, then mix the new state."""
    _step(rng, t)
    hi = rng[t, 0]
    x = hi ^ rng[t, 1]
    rot = hi >> uint64(58)
    return (x >> rot) | (x << ((uint64(64) - rot) & uint64(63)))


@njit(cache=True, inline="always")
def next32(rng, t):
    """NumPy's next_uint32: the low half of a fresh 64-bit draw, the high half kept for next time."""
    buffered = rng[t, 4]
    if buffered & _HAS32:
        rng[t, 4] = uint64(0)
        return buffered & _LOW32
    v = next64(rng, t)
    rng[t, 4] = _HAS32 | (v >> uint64(32))
    return v & _LOW32


@njit(cache=True, inline="always")
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


@njit(cache=True, inline="always")
def below(rng, t, k):
    """``rng.integers(k)`` for 1 <= k < 2**32: NumPy's bounded draw by Lemire's method on 32-bit
    draws (`next32`), with no draw at all for k == 1."""
    if k == 1:
        return np.int64(0)
    span = uint64(k)
    m = next32(rng, t) * span
    leftover = m & _LOW32
    if leftover < span:
        threshold = (_LOW32 - span + uint64(1)) % span  # (2**32 - k) % k
        while leftover < threshold:
            m = next32(rng, t) * span
            leftover = m & _LOW32
    return np.int64(m >> uint64(32))


@njit(cache=True, inline="always")
def shuffle(rng, t, cards, k):
    """``rng.shuffle(cards[:k])``; also ``cards[:k][rng.permutation(k)]``, which makes the same swaps."""
    for i in range(k - 1, 0, -1):
        j = interval(rng, t, i)
        c = cards[i]
        cards[i] = cards[j]
        cards[j] = c


# -- seeding: numpy.random.SeedSequence(seed).generate_state(4, uint64), then PCG64's set-up ----

_INIT_A = np.uint64(0x43B0D7E5)
_MULT_A = np.uint64(0x931E8875)
_INIT_B = np.uint64(0x8B51F9DD)
_MULT_B = np.uint64(0x58F38DED)
_MIX_L = np.uint64(0xCA01F9DD)
_MIX_R = np.uint64(0x4973F715)
_M32 = np.uint64(0xFFFFFFFF)
_POOL = 4
_16 = np.uint64(16)


@njit(cache=True)
def _seed_sequence(seed):
    """SeedSequence(seed) for 0 <= seed < 2**64: the 8 uint32 words of generate_state(4, uint64)."""
    entropy = np.zeros(2, np.uint64)
    entropy[0] = seed & _M32
    entropy[1] = seed >> uint64(32)
    n_entropy = 2 if entropy[1] else 1
    pool = np.zeros(_POOL, np.uint64)
    h = _INIT_A
    for i in range(_POOL):  # hashmix of each entropy word (0 past the end)
        v = entropy[i] if i < n_entropy else np.uint64(0)
        v ^= h
        h = (h * _MULT_A) & _M32
        v = (v * h) & _M32
        v ^= v >> _16
        pool[i] = v
    for i_src in range(_POOL):
        for i_dst in range(_POOL):
            if i_src != i_dst:
                v = pool[i_src] ^ h
                h = (h * _MULT_A) & _M32
                v = (v * h) & _M32
                v ^= v >> _16
                r = (_MIX_L * pool[i_dst] - _MIX_R * v) & _M32
                r ^= r >> _16
                pool[i_dst] = r
    words = np.zeros(8, np.uint64)
    h = _INIT_B
    for i in range(8):
        v = pool[i % _POOL] ^ h
        h = (h * _MULT_B) & _M32
        v = (v * h) & _M32
        v ^= v >> _16
        words[i] = v
    return words


@njit(cache=True)
def seed_rows(rng, rows, seeds):
    """Set each row's stream to ``numpy.random.default_rng(seed)``'s (0 <= seed < 2**64)."""
    for k in range(rows.shape[0]):
        t = rows[k]
        w = _seed_sequence(uint64(seeds[k]))
        # uint32 words, little-endian, make the uint64s; each 128-bit value is (high, low).
        s_hi = w[0] | (w[1] << uint64(32))
        s_lo = w[2] | (w[3] << uint64(32))
        i_hi = w[4] | (w[5] << uint64(32))
        i_lo = w[6] | (w[7] << uint64(32))
        # pcg_setseq_128_srandom_r: inc = 2 * initseq + 1; step; state += initstate; step.
        rng[t, 0] = uint64(0)
        rng[t, 1] = uint64(0)
        rng[t, 2] = (i_hi << uint64(1)) | (i_lo >> uint64(63))
        rng[t, 3] = (i_lo << uint64(1)) | uint64(1)
        rng[t, 4] = uint64(0)
        _step(rng, t)
        lo = rng[t, 1] + s_lo
        carry = uint64(1) if lo < s_lo else uint64(0)
        rng[t, 0] = rng[t, 0] + s_hi + carry
        rng[t, 1] = lo
        _step(rng, t)


@njit(cache=True)
def reseed_and_shuffle(rng, rows, seeds, cards, counts, tops):
    """Each row's stream becomes ``default_rng(seeds[k])``'s, then shuffles the row's first
    ``counts[row]`` cards with it (``cards`` None: the stream alone), and where ``tops[k] >= 0``
    the first card of that kind changes places with the top one: `Engine.shuffle_unseen`."""
    seed_rows(rng, rows, seeds)
    if cards is not None:
        for k in range(rows.shape[0]):
            t = rows[k]
            n = counts[t]
            shuffle(rng, t, cards[t], n)
            if tops[k] >= 0:
                for i in range(n):
                    if cards[t, i] == tops[k]:
                        c = cards[t, i]
                        cards[t, i] = cards[t, n - 1]
                        cards[t, n - 1] = c
                        break

"""`envs.belief.sample_world`, into batch rows: the same worlds from the same draws, no engine built.

Search draws many worlds from one information state. `sample_world` builds an engine for
each (about 150–250 µs in Neu and Ma's Jong), more than its play-outs cost on the batched
engine. Here the information state's representative world is packed once (the game's
``pack_row``), and each row takes a copy of it with the hidden cards redealt in compiled code:

1. the draw pile and the other seats' hands are pooled in sorted order and shuffled with
   ``rng.permutation`` (`envs.vector.rng.shuffle` makes the same swaps from the same bits);
2. each other seat, in seat order, takes its hand size from the front, and the draw pile is
   the rest, in order: what the engine's ``shuffle_hidden`` does;
3. a redeal that leaves the player to act without a legal move is redealt again, up to
   `envs.belief.SAMPLE_TRIES` times (the engine's rejection loop);
4. the row's chance stream is ``default_rng(rng.integers(2**63))``: `rng.integers(2**63)` is
   NumPy's bounded draw by Lemire's method, which for the bound ``2**63`` is one 64-bit draw
   shifted right by one bit, and `envs.vector.rng.seed_rows` seeds as ``default_rng`` does.

The caller's generator is read into a stream row, used here, and its state put back, so it
stands exactly where ``count`` calls of `sample_world` would leave it (tests/test_load_rows.py
compares the rows and the generator with `sample_world` and `VectorEnv.load_rows`).
A game takes part through its kernel module: ``sample_layout(engine)`` says where its packed
row keeps the hands, their sizes and the draw pile (None where its redeal does more than move
cards, as Ma's Jong's with ``steal_phase="eligible"``), and a thin ``sample_rows`` kernel calls
`sample_rows` here with its ``unpack_rows``, ``_legal`` and a redeal: `redeal_hands` here, or
the game's own where its ``shuffle_hidden`` deals more than hands and a pile (Deadfall's face-down
door cards, Not For Me's hidden offer; their redeals draw with `envs.vector.rng.below` too). As with `envs.vector.loops`, numba's
cache does not notice an edit here in the kernels that inline it: after one, delete
``envs/vector/__pycache__``.
"""

from __future__ import annotations

import numpy as np
from numba import njit, uint64

from envs.vector import rng as R

_MASK64 = (1 << 64) - 1


def stream_of(generator: np.random.Generator) -> np.ndarray:
    """A stream row ``[1, RNG_WIDTH]`` that draws what `generator` (a PCG64 one) draws next."""
    if type(generator.bit_generator) is not np.random.PCG64:
        raise ValueError(f"sampling in rows needs a PCG64 generator (numpy.random.default_rng), "
                         f"got {type(generator.bit_generator).__name__}")
    row = np.zeros((1, R.RNG_WIDTH), np.uint64)
    R.set_row(row, 0, generator.bit_generator.state)
    return row


def put_back(generator: np.random.Generator, row: np.ndarray) -> None:
    """Set `generator` to the stream row's state: it draws next what the row would."""
    hi, lo, inc_hi, inc_lo, buffered = (int(x) for x in row[0])
    generator.bit_generator.state = {
        "bit_generator": "PCG64",
        "state": {"state": (hi << 64) | lo, "inc": (inc_hi << 64) | inc_lo},
        "has_uint32": int(bool(buffered >> 32)), "uinteger": buffered & 0xFFFFFFFF,
    }


@njit(cache=True, inline="always")
def add_hands(flat, seat, n, kinds, hands_at, counts):
    """``counts`` += the packed hands (``kinds`` counts per seat from ``hands_at``) of every seat but `seat`."""
    for s in range(n):
        if s != seat:
            for k in range(kinds):
                counts[k] += flat[hands_at + s * kinds + k]


@njit(cache=True, inline="always")
def sorted_pool(counts, pool):
    """``pool[:m]`` = the counted cards, kind by kind (the engines pool their hidden cards sorted); returns m."""
    m = 0
    for k in range(counts.shape[0]):
        for _ in range(counts[k]):
            pool[m] = k
            m += 1
    return m


@njit(cache=True, inline="always")
def deal_hand(flat, out, s, kinds, hands_at, sizes_at, pool, j):
    """Seat `s`'s packed hand in `out` = as many cards as it holds in `flat`, taken from ``pool[j:]``;
    returns the index after them (the engines deal each redealt hand from the front of the pool)."""
    for k in range(kinds):
        out[hands_at + s * kinds + k] = 0
    for _ in range(flat[sizes_at + s]):
        out[hands_at + s * kinds + pool[j]] += 1
        j += 1
    return j


@njit(cache=True, inline="always")
def read_blocks(dest, t, flat, j):
    """``dest[t]`` (seats x kinds) = the packed blocks at ``flat[j:]``, seat by seat; returns the index after them."""
    for s in range(dest.shape[1]):
        for k in range(dest.shape[2]):
            dest[t, s, k] = flat[j + k]
        j += dest.shape[2]
    return j


@njit(cache=True, inline="always")
def redeal_hands(flat, out, stream, seat, layout, counts, pool):
    """`out` = `flat` with the other seats' hands and the draw pile redealt (steps 1 and 2), with
    ``layout = (n, kinds, hands_at, sizes_at, draw_at, nd)``."""
    n, kinds, hands_at, sizes_at, draw_at, nd = layout[0], layout[1], layout[2], layout[3], layout[4], layout[5]
    out[:] = flat
    counts[:] = 0
    for c in range(nd):
        counts[flat[draw_at + c]] += 1
    add_hands(flat, seat, n, kinds, hands_at, counts)
    m = sorted_pool(counts, pool)
    R.shuffle(stream, 0, pool, m)
    j = 0
    for s in range(n):
        if s != seat:
            j = deal_hand(flat, out, s, kinds, hands_at, sizes_at, pool, j)
    for c in range(m - j):
        out[draw_at + c] = pool[j + c]


@njit(cache=True, inline="always")
def sample_rows(st, tables, flat, seat, stream, layout, tries, scratch, unpack, legal, redeal):
    """Tables ``tables[i]`` take redeals of the packed world `flat` (the module docstring), with
    ``layout = (n, kinds, ...)``, what `redeal` reads (`redeal_hands`, or a game's own);
    ``legal(st, t, scratch)`` counts the legal moves of the player to act. Returns -1, or the
    index of the first table for which `tries` redeals left the player to act without a legal move."""
    out = np.empty_like(flat)
    counts = np.zeros(layout[1], np.int64)
    pool = np.empty(flat.shape[0], np.int64)
    start = np.zeros(1, np.int64)
    one = np.zeros(1, np.int64)
    seed = np.zeros(1, np.uint64)
    for i in range(tables.shape[0]):
        one[0] = tables[i]
        ok = False
        for _ in range(tries):
            redeal(flat, out, stream, seat, layout, counts, pool)
            unpack(st, one, out, start)
            if legal(st, tables[i], scratch) > 0:
                ok = True
                break
        if not ok:
            return i
        seed[0] = R.next64(stream, 0) >> uint64(1)  # rng.integers(2**63)
        R.seed_rows(st.rng, one, seed)
    return -1

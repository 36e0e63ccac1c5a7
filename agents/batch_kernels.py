"""The batched protocol's compiled pieces: the check that every row has a legal move, and
`RandomAgent.act_batch`, NumPy's ``Generator.integers(k)`` over PCG64, per batch row.

The AEC agent draws ``rng.integers(len(legal))``. For an int64 result below
2**32 NumPy takes Lemire's bounded draw on 32-bit outputs
(``buffered_bounded_lemire_uint32``), and draws nothing when one move is
legal; `bounded` is that function on the PCG64 streams of `envs.vector.rng`,
so the compiled draws are NumPy's bit for bit (tests/test_batched_agents.py).
"""

from __future__ import annotations

import numpy as np
from numba import njit, uint64

from envs.vector import rng as R

_LOW32 = np.uint64(0xFFFFFFFF)
_32 = np.uint64(32)


@njit(cache=True, inline="always")
def bounded(rng, s, count):
    """``Generator.integers(count)`` on stream ``s`` (1 <= count < 2**32)."""
    most = uint64(count - 1)
    if most == uint64(0):
        return np.int64(0)
    span = most + uint64(1)
    m = R.next32(rng, s) * span
    leftover = m & _LOW32
    if leftover < span:
        threshold = (_LOW32 - most) % span
        while leftover < threshold:
            m = R.next32(rng, s) * span
            leftover = m & _LOW32
    return np.int64(m >> _32)


@njit(cache=True, inline="always")
def draw_one(row, rng, s):
    """The k-th legal move of one mask row, k drawn from stream ``s`` as NumPy would; -1 (and
    no draw) when no move is legal."""
    count = 0
    for a in range(row.shape[0]):
        count += row[a] != 0
    if count == 0:
        return np.int64(-1)
    k = bounded(rng, s, count)
    a = 0
    while row[a] == 0 or k > 0:
        k -= row[a] != 0
        a += 1
    return np.int64(a)


@njit(cache=True)
def _draw(mask, stream_of_row, rng, out):
    """The k-th legal move of each row, k drawn as NumPy would; -1 where no move is legal."""
    for t in range(mask.shape[0]):
        out[t] = draw_one(mask[t], rng, stream_of_row[t])


def _words(generator: np.random.Generator) -> np.ndarray:
    st = generator.bit_generator.state
    if st["bit_generator"] != "PCG64":
        raise ValueError(f"act_batch needs a PCG64 generator (numpy.random.default_rng), got {st['bit_generator']}")
    s, inc = st["state"]["state"], st["state"]["inc"]
    mask = (1 << 64) - 1
    buffered = (1 << 32 | st["uinteger"]) if st["has_uint32"] else 0
    return np.array([[s >> 64, s & mask, inc >> 64, inc & mask, buffered]], dtype=np.uint64)


def _set_words(generator: np.random.Generator, w: np.ndarray) -> None:
    st = generator.bit_generator.state
    st["state"]["state"] = int(w[0]) << 64 | int(w[1])
    st["state"]["inc"] = int(w[2]) << 64 | int(w[3])
    st["has_uint32"] = int(w[4] >> 32 & 1)
    st["uinteger"] = int(w[4] & 0xFFFFFFFF)
    generator.bit_generator.state = st


def draw_rows(mask: np.ndarray, seat: np.ndarray, generator=None, streams=None, seeded=None, rows=None) -> np.ndarray:
    """One uniform legal action per row: from ``generator`` (rows in order, its state advanced),
    or from ``streams[rows[i], seat[i]]`` (see `RandomAgent`; ``rows`` defaults to 0, 1, ...)."""
    out = np.empty(mask.shape[0], np.int64)
    if generator is not None:
        words = _words(generator)
        _draw(mask, np.zeros(mask.shape[0], np.int64), words, out)
        _set_words(generator, words[0])
        return out
    rows = np.arange(mask.shape[0], dtype=np.int64) if rows is None else np.asarray(rows, dtype=np.int64).reshape(-1)
    if rows.shape != seat.shape:
        raise ValueError(f"act_batch: rows must name one batch row per given row ({seat.size}), got {rows.size}")
    known, num_players = streams.shape[0], streams.shape[1]
    unseeded = (rows < 0) | (rows >= known)
    unseeded[~unseeded] = ~seeded[rows[~unseeded]]
    if unseeded.any():
        raise ValueError(f"act_batch: batch row(s) {rows[unseeded][:10].tolist()} were never given seeds by seed_rows")
    if seat.size and (seat.min() < 0 or seat.max() >= num_players):
        raise ValueError(f"act_batch: seats must be in [0, {num_players})")
    flat = streams.reshape(known * num_players, R.RNG_WIDTH)
    _draw(mask, rows * num_players + seat, flat, out)
    return out


def seed_streams(streams, seeded, rows, seeds, num_players: int):
    """`RandomAgent.seed_rows`: (streams, seeded) with the rows' streams set, grown as needed."""
    rows = np.asarray(rows, dtype=np.int64).reshape(-1)
    seeds = np.asarray(seeds)
    if seeds.shape != (rows.size, num_players) or not np.issubdtype(seeds.dtype, np.integer):
        raise ValueError(f"seed_rows: seeds must be an integer array of shape ({rows.size}, {num_players}), got {seeds.dtype} {seeds.shape}")
    if rows.size and rows.min() < 0:
        raise ValueError("seed_rows: rows must be >= 0")
    if seeds.size and (seeds.min() < 0 or int(seeds.max()) >= 2**64):
        raise ValueError("seed_rows: seeds must be in [0, 2**64)")
    need = int(rows.max()) + 1 if rows.size else 0
    if streams is None or streams.shape[0] < need:
        size = max(need, 0 if streams is None else streams.shape[0])
        grown = np.zeros((size, num_players, R.RNG_WIDTH), np.uint64)
        grown_seeded = np.zeros(size, np.bool_)
        if streams is not None:
            grown[: streams.shape[0]] = streams
            grown_seeded[: seeded.shape[0]] = seeded
        streams, seeded = grown, grown_seeded
    flat = streams.reshape(-1, R.RNG_WIDTH)
    R.seed_rows(flat, (rows[:, None] * num_players + np.arange(num_players)).reshape(-1), seeds.astype(np.uint64).reshape(-1))
    seeded[rows] = True
    return streams, seeded


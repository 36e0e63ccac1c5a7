"""`agents.heuristic.hand_distance`, compiled: `shanten` and `shanten_each` over int arrays.

The readable module combines suits with a small dynamic programme whose state
maps (sets, pair) to the most blocks; here that state is an int array
``[4, 2]`` (sets 0..3, pair 0/1; -1 where no split reaches it, as the readable
``nxt.get(k, -1) < b`` treats a missing entry). What one suit can offer comes
from the readable ``_suit_options`` itself, for all 4**5 suit codes, as a table
(`suit_options`), so the two cannot disagree about a suit.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from functools import lru_cache
from pathlib import Path

import numpy as np
from numba import njit

import agents.heuristic.hand_distance as readable
from envs.not_your_mas_jong import COPIES, NUM_TYPES, POW4, RANKS

CODES = 4**RANKS
MAX_OPTIONS = 8
_POW4 = np.array(POW4, np.int64)


@lru_cache(maxsize=None)
def suit_options() -> tuple[np.ndarray, np.ndarray]:
    """(options [CODES, MAX_OPTIONS, 3] of (sets, blocks, pair), count [CODES]) from the readable
    `_suit_options`. Building it takes a few seconds, so it is kept next to this file, under a
    name that changes with the readable module's source."""
    digest = hashlib.sha1(Path(readable.__file__).read_bytes()).hexdigest()[:16]
    path = Path(__file__).parent / "__pycache__" / f"suit_options-{digest}.npy"
    try:
        table = np.load(path)
    except (OSError, ValueError):
        table = np.full((CODES, MAX_OPTIONS + 1, 3), -1, np.int64)
        for code in range(CODES):
            counts = [(code // POW4[r]) % 4 for r in range(RANKS)]
            if max(counts) > COPIES:
                continue
            opts = readable._suit_options(code)
            assert len(opts) <= MAX_OPTIONS, code
            table[code, 0, 0] = len(opts)
            table[code, 1 : 1 + len(opts)] = opts
        try:  # written whole or not at all: another process may be reading
            path.parent.mkdir(exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".npy")
            with os.fdopen(fd, "wb") as f:
                np.save(f, table)
            os.replace(tmp, path)
        except OSError:
            pass
    return np.ascontiguousarray(table[:, 1:]), np.ascontiguousarray(np.maximum(table[:, 0, 0], 0))


@njit(cache=True, inline="always")
def _start(st):
    st[:, :] = -1
    st[0, 0] = 0


@njit(cache=True, inline="always")
def _exchange(need, sets, pair, blocks):
    """Cards to exchange from (sets, pair, blocks): each missing set costs two cards, or one if
    a block waits for it; a missing pair costs one (readable._cards_to_exchange)."""
    room = need - sets
    return 2 * room - min(room, blocks) + 1 - pair


@njit(cache=True, inline="always")
def _add_suit(src, code, need, opts, count, dst, build=True):
    """readable._add_suit: the state `src` with one more suit, into `dst`. With build=False,
    `dst` is left alone and the result is readable._distance_with, the distance of that state,
    taken straight from the (sets, pair, blocks) reached (a distance is a minimum over them)."""
    result = 99
    if build:
        dst[:, :] = -1
    for s1 in range(4):
        for p1 in range(2):
            b1 = src[s1, p1]
            if b1 < 0:
                continue
            for j in range(count[code]):
                s2, b2, p2 = opts[code, j, 0], opts[code, j, 1], opts[code, j, 2]
                if p1 + p2 > 1:
                    continue
                b = min(b1 + b2, need)
                if b < 0:
                    continue  # only when need < 0: never stored, as in the readable dict
                sets, pair = min(s1 + s2, need), p1 + p2
                if build:
                    if dst[sets, pair] < b:
                        dst[sets, pair] = b
                else:
                    result = min(result, _exchange(need, sets, pair, b))
    return result


@njit(cache=True, inline="always")
def _cards_to_exchange(st, need):
    result = 99
    for sets in range(4):
        for pair in range(2):
            if st[sets, pair] >= 0:
                result = min(result, _exchange(need, sets, pair, st[sets, pair]))
    return result


@njit(cache=True, inline="always")
def _code(counts, s):
    c = 0
    for r in range(RANKS):
        c += counts[s * RANKS + r] * _POW4[r]
    return c


@njit(cache=True)
def shanten(counts, locked_sets, opts, count, scratch):
    """readable.shanten; `scratch` is an int64 array [4, 4, 2]."""
    need = 3 - locked_sets
    cur, nxt = 0, 1
    _start(scratch[cur])
    for s in range(NUM_TYPES // RANKS):
        code = _code(counts, s)
        if code:
            _add_suit(scratch[cur], code, need, opts, count, scratch[nxt])
            cur, nxt = nxt, cur
    return _cards_to_exchange(scratch[cur], need)


@njit(cache=True)
def shanten_each(counts, locked_sets, change, opts, count, scratch, out):
    """readable.shanten_each into `out` [25], with -1 for the readable's None."""
    need = 3 - locked_sets
    prefix, a, b, tmp = scratch[0], scratch[1], scratch[2], scratch[3]
    _start(prefix)
    suits = NUM_TYPES // RANKS
    for s in range(suits):
        a[:, :] = prefix
        for o in range(s + 1, suits):
            other = _code(counts, o)
            if other:
                _add_suit(a, other, need, opts, count, b)
                a[:, :] = b
        code = _code(counts, s)
        for r in range(RANKS):
            k = s * RANKS + r
            if 0 <= counts[k] + change <= COPIES:
                changed = code + change * _POW4[r]
                if changed:
                    out[k] = _add_suit(a, changed, need, opts, count, tmp, False)
                else:
                    out[k] = _cards_to_exchange(a, need)
            else:
                out[k] = -1
        if code:
            _add_suit(prefix, code, need, opts, count, tmp)
            prefix[:, :] = tmp

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
def _add_suit(src, code, need, opts, count, dst):
    """readable._add_suit: the state `src` with one more suit, into `dst`."""
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
                if dst[sets, pair] < b:
                    dst[sets, pair] = b


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


# The combination of suits is a dynamic programme over states (`_add_suit`), and there are
# few states: 4, 17, 64 and 181 for need 0..3 (every sequence of suits reaches no others). So
# each state gets an id per need, and both steps become tables (`tables`): adding a suit is
# one look-up, and so is the distance once a suit joins. A distance then costs a few dozen
# look-ups where the loops over states and options cost thousands of operations.
NEEDS = 4  # need = 3 - locked sets, 0..3
MAX_STATES = 256  # ids per need (181 used at need 3)
_KEY_BASE = 5  # a state's key: its 8 entries (-1..3, plus one) as base-5 digits


@njit(cache=True, inline="always")
def _key(st):
    k = 0
    for s in range(4):
        for p in range(2):
            k = k * _KEY_BASE + st[s, p] + 1
    return k


@njit(cache=True)
def _build_tables(opts, count, add, dist):
    """Every state reachable from no suits, per need, by adding suits: `add[need, id, code]` is
    the id after suit `code` joins (code 0: the same id), `dist[need, id, code]` the cards to
    exchange then. Returns the states found per need."""
    found = np.zeros(NEEDS, np.int64)
    states = np.empty((MAX_STATES, 4, 2), np.int64)
    ids = np.full(_KEY_BASE**8, -1, np.int64)
    dst = np.empty((4, 2), np.int64)
    for need in range(NEEDS):
        ids[:] = -1
        _start(states[0])
        ids[_key(states[0])] = 0
        n, sid = 1, 0
        while sid < n:  # breadth first: each found state is extended by every suit code
            add[need, sid, 0] = sid
            dist[need, sid, 0] = _cards_to_exchange(states[sid], need)
            for code in range(1, CODES):
                if count[code] == 0:
                    continue  # not a suit (a rank held more than three times)
                _add_suit(states[sid], code, need, opts, count, dst)
                k = _key(dst)
                if ids[k] < 0:
                    if n == MAX_STATES:
                        raise ValueError("hand_distance: more states than MAX_STATES")
                    ids[k] = n
                    states[n] = dst
                    n += 1
                add[need, sid, code] = ids[k]
                dist[need, sid, code] = _cards_to_exchange(dst, need)
            sid += 1
        found[need] = n
    return found


@lru_cache(maxsize=None)
def tables() -> tuple[np.ndarray, np.ndarray]:
    """(add [NEEDS, MAX_STATES, CODES] int16, dist [NEEDS, MAX_STATES, CODES] int8), built from
    `suit_options` (the readable `_suit_options`) once per process: what `shanten` and
    `shanten_each` take."""
    opts, count = suit_options()
    add = np.zeros((NEEDS, MAX_STATES, CODES), np.int16)
    dist = np.full((NEEDS, MAX_STATES, CODES), 99, np.int8)
    _build_tables(opts, count, add, dist)
    return add, dist


@njit(cache=True)
def _beyond(counts, need):
    """More sets locked than a hand holds (need < 0, never in play): as the readable, no split
    of a card survives the cap, so only an empty hand keeps its start."""
    for k in range(NUM_TYPES):
        if counts[k]:
            return 99
    return _exchange(need, 0, 0, 0)


@njit(cache=True)
def shanten(counts, locked_sets, add, dist):
    """readable.shanten, from `tables` (`add`, `dist`)."""
    need = 3 - locked_sets
    if need < 0:
        return _beyond(counts, need)
    sid = 0
    for s in range(NUM_TYPES // RANKS):
        sid = add[need, sid, _code(counts, s)]
    return np.int64(dist[need, sid, 0])


@njit(cache=True)
def shanten_each(counts, locked_sets, change, add, dist, out):
    """readable.shanten_each into `out` [25], with -1 for the readable's None."""
    need = 3 - locked_sets
    if need < 0:
        for k in range(NUM_TYPES):
            if 0 <= counts[k] + change <= COPIES:
                counts[k] += change
                out[k] = _beyond(counts, need)
                counts[k] -= change
            else:
                out[k] = -1
        return
    suits = NUM_TYPES // RANKS
    prefix = 0  # the suits before s, combined
    for s in range(suits):
        others = prefix
        for o in range(s + 1, suits):
            others = add[need, others, _code(counts, o)]
        code = _code(counts, s)
        for r in range(RANKS):
            k = s * RANKS + r
            if 0 <= counts[k] + change <= COPIES:
                out[k] = dist[need, others, code + change * _POW4[r]]
            else:
                out[k] = -1
        prefix = add[need, prefix, code]

"""Distance of a Not Your Ma's Jong hand to a complete one: how many cards it still has to exchange.

Strategy, not rules (the engine only needs `is_complete_concealed`): the
heuristic and `agents.features` use it to choose discards and steals.
"""

from __future__ import annotations

from functools import lru_cache

from envs.not_your_mas_jong import COPIES, NUM_TYPES, POW4, RANKS, suit_codes


@lru_cache(maxsize=None)
def _suit_shapes(code: int) -> tuple[tuple[int, int, int, int], ...]:
    """Pareto list of (sets, pair, partial sets, unused) for one suit's counts.

    Sets are complete sets, pair is 0/1, partials are pairs or two-card
    sequence pieces (each one card short of a set)."""
    counts = [(code // POW4[r]) % 4 for r in range(RANKS)]
    best: set[tuple[int, int, int]] = set()

    def go(i: int, sets: int, pairs: int, partials: int) -> None:
        while i < RANKS and counts[i] == 0:
            i += 1
        if i == RANKS:
            best.add((sets, pairs, partials))
            return
        if counts[i] >= 3:
            counts[i] -= 3
            go(i, sets + 1, pairs, partials)
            counts[i] += 3
        if i + 2 < RANKS and counts[i + 1] and counts[i + 2]:
            for j in (i, i + 1, i + 2):
                counts[j] -= 1
            go(i, sets + 1, pairs, partials)
            for j in (i, i + 1, i + 2):
                counts[j] += 1
        if counts[i] >= 2:
            counts[i] -= 2
            go(i, sets, pairs + 1, partials)
            counts[i] += 2
        for gap in (1, 2):
            if i + gap < RANKS and counts[i + gap]:
                counts[i] -= 1
                counts[i + gap] -= 1
                go(i, sets, pairs, partials + 1)
                counts[i] += 1
                counts[i + gap] += 1
        counts[i] -= 1
        go(i, sets, pairs, partials)  # leave this card unused
        counts[i] += 1

    go(0, 0, 0, 0)
    return tuple(sorted(best))


@lru_cache(maxsize=None)
def _suit_options(code: int) -> tuple[tuple[int, int, int], ...]:
    """(sets, blocks, pair) a suit can offer, pair = 1 when it supplies the hand's pair;
    blocks are pairs or sequence pieces waiting to become sets."""
    options = set()
    for sets, pairs, partials in _suit_shapes(code):
        options.add((min(sets, 3), min(pairs + partials, 3), 0))
        if pairs:
            options.add((min(sets, 3), min(pairs - 1 + partials, 3), 1))
    return tuple(o for o in options if not any(p != o and all(x >= y for x, y in zip(p, o)) for p in options))


# The combination of suits is a small dynamic programme whose state is a tuple of
# ((sets, pair), most blocks) items. There are few such states, so each one gets a
# small integer id and both steps are memoised on ints: hashing the nested tuples on
# every lookup was most of the cost of a distance. A key packs (state id, suit code
# < 4**5, need <= 3) into one int.
_STATES: list[tuple] = [(((0, 0), 0),)]  # state id -> state; id 0: no suits yet
_STATE_ID: dict[tuple, int] = {_STATES[0]: 0}
_ADD: dict[int, int] = {}  # key -> state id after adding the suit
_DISTANCE: dict[int, int] = {}  # key -> cards to exchange after adding the suit


def _add_suit(sid: int, code: int, need: int) -> int:
    """Extend a state (most blocks for each (sets, pair), over the suits seen so far)
    by one more suit. More blocks never hurt, so the most is all there is to keep."""
    key = (sid << 12) | (code << 2) | need
    out = _ADD.get(key)
    if out is not None:
        return out
    nxt: dict[tuple[int, int], int] = {}
    for (s1, p1), b1 in _STATES[sid]:
        for s2, b2, p2 in _suit_options(code):
            if p1 + p2 > 1:
                continue
            k = (min(s1 + s2, need), p1 + p2)
            b = min(b1 + b2, need)
            if nxt.get(k, -1) < b:
                nxt[k] = b
    state = tuple(sorted(nxt.items()))
    out = _STATE_ID.get(state)
    if out is None:
        out = _STATE_ID[state] = len(_STATES)
        _STATES.append(state)
    _ADD[key] = out
    return out


def _cards_to_exchange(sid: int, need: int) -> int:
    result = 99
    for (sets, pair), blocks in _STATES[sid]:
        room = need - sets
        result = min(result, 2 * room - min(room, blocks) + 1 - pair)
    return result


def _distance_with(sid: int, code: int, need: int) -> int:
    """Cards to exchange once suit `code` joins state `sid` (code 0: nothing joins)."""
    key = (sid << 12) | (code << 2) | need
    out = _DISTANCE.get(key)
    if out is None:
        out = _DISTANCE[key] = _cards_to_exchange(_add_suit(sid, code, need) if code else sid, need)
    return out


def shanten(counts, locked_sets: int = 0) -> int:
    """Cards still to exchange before the hand is complete (0 = complete). Sets
    needed are 3 minus the locked ones; each missing set costs two cards, or one
    if a block (a pair or a two-card sequence piece) waits for it, and a missing
    pair costs one."""
    need = 3 - locked_sets
    sid = 0
    for code in suit_codes(counts):
        if code:
            sid = _add_suit(sid, code, need)
    return _distance_with(sid, 0, need)


def shanten_each(counts, locked_sets: int, change: int) -> list[int | None]:
    """`shanten` of the hand with one more (change=+1) or one fewer (change=-1) card of
    each type; None where that type cannot be added (already 3) or removed (none held).

    One card changes one suit only, so the other four suits are combined once per
    suit instead of once per card: about five times less work than 25 `shanten` calls,
    which is what a discard choice or an acceptance count asks for. The order in which
    suits are combined does not change the result (sums capped at `need` commute), so
    suits before the changed one come from a running prefix."""
    need = 3 - locked_sets
    codes = suit_codes(counts)
    out: list[int | None] = [None] * NUM_TYPES
    added, distances = _ADD, _DISTANCE  # the memo lookups of _add_suit/_distance_with, inlined: this is the hot loop
    prefix = 0  # suits 0 .. s-1 combined
    for s, code in enumerate(codes):
        others = prefix
        for other in codes[s + 1 :]:
            if other:
                nxt = added.get((others << 12) | (other << 2) | need)
                others = _add_suit(others, other, need) if nxt is None else nxt
        base = s * RANKS
        for r in range(RANKS):
            if 0 <= counts[base + r] + change <= COPIES:
                changed = code + change * POW4[r]
                d = distances.get((others << 12) | (changed << 2) | need)
                out[base + r] = _distance_with(others, changed, need) if d is None else d
        if code:
            prefix = _add_suit(prefix, code, need)
    return out

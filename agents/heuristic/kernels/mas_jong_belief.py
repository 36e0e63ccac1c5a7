"""Ma's Jong worlds as the heuristic's hands look: a Metropolis walk over redeals, in batch rows.

A uniform redeal of the unseen cards gives the other seats hands far from complete. The
heuristic keeps what fits its hand, so its hands are much closer: in 4-player self-play with
ten cards left to draw, 77% of its hidden hands are one exchange from complete, against 7% of
a uniform redeal's. The belief here is the uniform one tilted, seat by seat, by the ratio
``w[progress, distance]`` of the two (`agents.heuristic.not_your_mas_jong.BELIEF_TILT`): each
other seat's hand distance then has the heuristic's own distribution at that point of the
round.

Two more factors read the seats' public moves. The heuristic throws what it does not need,
so a type on a seat's discard pile that would bring its hand closer now costs ``e^beta``. And
it always steals to win, so a type it let go with the hand it holds now (the engine's public
``passed_on``: nobody stole that discard, and the seat's hand has not changed since) that
would have completed that hand costs ``e^gamma``, which all but rules such a hand out.

`tilt_rows` walks each row's world towards that belief: a proposal swaps one card of an
other seat's hand with one other hidden card (a card of another hidden hand, or of the draw
pile), both chosen uniformly, which is symmetric, so accepting with probability
``min(1, w(after) / w(before))`` leaves exactly the tilted belief invariant. Cards only move
between hidden places, so the seat's own view, the public piles and the hand sizes stay as
they are.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from agents.heuristic.kernels.hand_distance import shanten, shanten_each
from agents.heuristic.kernels.walk import card_at, seat_holding
from envs.not_your_mas_jong import NUM_TYPES, POW4, RANKS

_POW4 = np.array(POW4, np.int64)


@njit(cache=True, inline="always")
def _energy(st, t, s, hand, after, locked_sets, row, beta, passed, gamma, add, dist, cap):
    """Seat s's log weight: ``row[distance]``, plus `beta` per card type on its discard pile that
    would bring its hand closer now (the heuristic throws what it does not need), plus `gamma`
    per type it let go with this hand (``passed[s]``) that would have completed it (the
    heuristic always steals to win)."""
    for k in range(NUM_TYPES):
        hand[k] = st.hands[t, s, k]
    d = min(shanten(hand, locked_sets[s], add, dist), cap)
    e = row[d]
    if beta != 0.0 or gamma != 0.0:
        shanten_each(hand, locked_sets[s], 1, add, dist, after)
        for k in range(NUM_TYPES):
            if st.discards[t, s, k] > 0 and 0 <= after[k] < d:
                e += beta
            if passed[s, k] > 0 and after[k] == 0:
                e += gamma
    return e


@njit(cache=True, inline="always")
def _move(st, t, s, out_card, in_card):
    st.hands[t, s, out_card] -= 1
    st.codes[t, s, out_card // RANKS] -= _POW4[out_card % RANKS]
    st.hands[t, s, in_card] += 1
    st.codes[t, s, in_card // RANKS] += _POW4[in_card % RANKS]


@njit(cache=True)
def tilt_rows(st, rows, seat, logw, beta, passed, gamma, width, add, dist, sweeps, seed):
    """Walk each of tables `rows` (`sweeps` proposals per card in the other hands) towards the
    belief uniform x prod over the other seats of ``exp(logw[min(ndraw // width, last), distance]
    + beta * ... + gamma * ...)`` (`_energy`; ``passed[seat, type]``: the types each seat let go
    with its hand, the same in every row). Returns the proposals accepted."""
    np.random.seed(seed)
    n = st.hands.shape[1]
    cap = logw.shape[1] - 1
    hand = np.zeros(NUM_TYPES, np.int64)
    after = np.zeros(NUM_TYPES, np.int64)
    locked_sets = np.zeros(n, np.int64)
    d = np.zeros(n)  # each other seat's log weight
    accepted = 0
    for i in range(rows.size):
        t = rows[i]
        row = logw[min(st.ndraw[t] // width, logw.shape[0] - 1)]
        held = 0
        for s in range(n):
            if s == seat:
                continue
            locked_sets[s] = 0
            for k in range(NUM_TYPES):
                locked_sets[s] += st.locked[t, s, k]
            locked_sets[s] //= 3
            d[s] = _energy(st, t, s, hand, after, locked_sets, row, beta, passed, gamma, add, dist, cap)
            held += st.sizes[t, s]
        nd = st.ndraw[t]
        if held == 0:
            continue
        for _ in range(sweeps * held):
            # x: a card of another seat's hand, uniformly
            s, j = seat_holding(st, t, seat, seat, np.random.randint(held))
            a = card_at(st, t, s, j)
            # y: any other hidden card outside s's hand, uniformly
            y = np.random.randint(nd + held - st.sizes[t, s])
            if y < nd:
                b = st.draw[t, y]
                if b == a:
                    continue
                _move(st, t, s, a, b)
                ds = _energy(st, t, s, hand, after, locked_sets, row, beta, passed, gamma, add, dist, cap)
                if np.log(np.random.random()) < ds - d[s]:
                    st.draw[t, y] = a
                    d[s] = ds
                    accepted += 1
                else:
                    _move(st, t, s, b, a)
                continue
            q, y = seat_holding(st, t, seat, s, y - nd)
            b = card_at(st, t, q, y)
            if b == a:
                continue
            _move(st, t, s, a, b)
            _move(st, t, q, b, a)
            ds = _energy(st, t, s, hand, after, locked_sets, row, beta, passed, gamma, add, dist, cap)
            dq = _energy(st, t, q, hand, after, locked_sets, row, beta, passed, gamma, add, dist, cap)
            if np.log(np.random.random()) < ds - d[s] + dq - d[q]:
                d[s], d[q] = ds, dq
                accepted += 1
            else:
                _move(st, t, s, b, a)
                _move(st, t, q, a, b)
    return accepted

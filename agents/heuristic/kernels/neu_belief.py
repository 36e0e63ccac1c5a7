"""Neu worlds as the heuristic's hands look: a Metropolis walk over redeals, in batch rows.

The heuristic spends large numbers early and keeps the cards that are safe at high totals, so
its hidden hands hold more Pass, Turn, -10 and -1 cards, and fewer 10s and 101s, than a
uniform redeal of the unseen cards puts there (`agents.heuristic.neu.BELIEF_TILT`, fitted in
heuristic self-play). The belief here is the uniform one tilted by ``prod w[kind]`` over the
cards in the other seats' hands.

`tilt_rows` walks each row's world towards it: a proposal swaps a card of an other seat's hand
with a card of the draw pile, both chosen uniformly (a symmetric proposal), accepted with
probability ``min(1, w[in] / w[out])``. Cards only move between hidden places, so the seat's
own view, the public piles and the hand sizes stay as they are.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from agents.heuristic.kernels.walk import card_at, seat_holding


@njit(cache=True)
def tilt_rows(st, rows, seat, logw, sweeps, seed):
    """Walk each of tables `rows` (`sweeps` proposals per card in the other hands) towards the
    belief uniform x ``exp(sum of logw[kind])`` over the other seats' cards. Returns the
    proposals accepted."""
    np.random.seed(seed)
    n = st.hands.shape[1]
    accepted = 0
    for i in range(rows.size):
        t = rows[i]
        held = 0
        for s in range(n):
            if s != seat:
                held += st.sizes[t, s]
        nd = st.ndraw[t]
        if held == 0 or nd == 0:
            continue
        for _ in range(sweeps * held):
            s, j = seat_holding(st, t, seat, seat, np.random.randint(held))
            a = card_at(st, t, s, j)
            y = np.random.randint(nd)
            b = st.draw[t, y]
            if b == a:
                continue
            if np.log(np.random.random()) < logw[b] - logw[a]:
                st.hands[t, s, a] -= 1
                st.hands[t, s, b] += 1
                st.draw[t, y] = a
                accepted += 1
    return accepted

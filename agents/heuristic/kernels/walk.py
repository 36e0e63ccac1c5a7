"""What the belief walks (`neu_belief`, `mas_jong_belief`) share: finding a hidden card by its index.

The other seats' hands are counts per kind (``st.hands[t, seat, kind]``, ``st.sizes[t, seat]``);
a proposal picks a card uniformly by an index over all of them, and these find it.
"""

from __future__ import annotations

from numba import njit


@njit(cache=True, inline="always")
def seat_holding(st, t, skip, also_skip, j):
    """The seat (neither `skip` nor `also_skip`) whose hand holds card `j` of all the others' cards
    counted seat by seat, and the card's index within that hand."""
    for q in range(st.sizes.shape[1]):
        if q == skip or q == also_skip:
            continue
        if j < st.sizes[t, q]:
            return q, j
        j -= st.sizes[t, q]
    return -1, j


@njit(cache=True, inline="always")
def card_at(st, t, s, j):
    """The kind of card `j` of seat `s`'s hand, counting kind by kind."""
    for k in range(st.hands.shape[2]):
        c = st.hands[t, s, k]
        if j < c:
            return k
        j -= c
    return -1

"""Neu's batched kernel: `envs/neu.py`'s rules over arrays, one row per table (RULES.md §3).

`envs/neu.py` defines the rules; this module plays the same moves in numba,
and tests/test_vector.py checks move by move that both agree. Card kinds,
action indices and the observation layout are the reference engine's.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from envs import neu as ref
from envs.vector import rng as R
from envs.vector import loops, sampling

NUM_KINDS = ref.NUM_KINDS
DECK_SIZE = len(ref.DECK)  # the largest deck (the standard game's); a preset's deck is in the state
VALUES = np.array(ref.NUMBER_VALUES, dtype=np.int64)
ACTION_KIND = np.array(ref.ACTION_KIND, dtype=np.int64)
CARD_101, PASS, TURN, SHOT, DOUBLE = ref.CARD_101, ref.PASS, ref.TURN, ref.SHOT, ref.DOUBLE
A_SHOT = ref.A_SHOT
TOTAL_FLOOR = ref.TOTAL_FLOOR

State = namedtuple(
    "State",
    "rng hands sizes chips out elim draw ndraw played nplayed pcounts total direction owed rnd dealer cur deck rules",
)


def make_state(num_envs: int, num_players: int, options: dict) -> State:
    n, i16 = num_players, np.int16
    # The rule option `rules` (the standard game or the small preset): its deck, starting chips,
    # hand size and whether an empty pile is reshuffled, from the reference's PRESETS.
    copies, chips, hand_size, reshuffles = ref.PRESETS[options.get("rules", "standard")]
    deck = np.array([k for k in range(NUM_KINDS) for _ in range(copies[k])], dtype=i16)
    return State(
        rng=np.zeros((num_envs, R.RNG_WIDTH), np.uint64),
        hands=np.zeros((num_envs, n, NUM_KINDS), i16),
        sizes=np.zeros((num_envs, n), i16),
        chips=np.zeros((num_envs, n), i16),
        out=np.zeros((num_envs, n), np.bool_),
        elim=np.zeros((num_envs, n), i16),  # order of elimination; later ranks higher
        draw=np.zeros((num_envs, DECK_SIZE), i16),  # top of the pile is draw[ndraw - 1]
        ndraw=np.zeros(num_envs, i16),
        played=np.zeros((num_envs, DECK_SIZE), i16),
        nplayed=np.zeros(num_envs, i16),
        pcounts=np.zeros((num_envs, NUM_KINDS), i16),
        total=np.zeros(num_envs, np.int32),
        direction=np.zeros(num_envs, i16),
        owed=np.zeros(num_envs, i16),
        rnd=np.zeros(num_envs, i16),
        dealer=np.zeros(num_envs, i16),
        cur=np.zeros(num_envs, i16),
        deck=deck,
        rules=np.array([chips, hand_size, reshuffles], dtype=i16),
    )


# -- set-up -------------------------------------------------------------------


@njit(cache=True, inline="always")
def _next_seat(st, t, seat, direction):
    n = st.out.shape[1]
    s = (seat + direction) % n
    while st.out[t, s]:
        s = (s + direction) % n
    return s


@njit(cache=True, inline="always")
def _new_round(st, t):
    """RULES.md §3 round set-up: shuffle the deck, 3 cards to each player still in from the
    dealer's left (one block each, as the reference deals), the rest is the draw pile."""
    n = st.out.shape[1]
    st.rnd[t] += 1
    st.total[t] = 0
    st.direction[t] = 1
    st.owed[t] = 1
    st.nplayed[t] = 0
    st.pcounts[t, :] = 0
    st.hands[t, :, :] = 0
    st.sizes[t, :] = 0
    draw = st.draw[t]
    size = st.deck.shape[0]
    for i in range(size):  # element by element: a slice copy would allocate
        draw[i] = st.deck[i]
    R.shuffle(st.rng, t, draw, size)
    top = size
    for k in range(n):
        s = (st.dealer[t] + 1 + k) % n
        if st.out[t, s]:
            continue
        for _ in range(st.rules[1]):
            top -= 1
            st.hands[t, s, draw[top]] += 1
            st.sizes[t, s] += 1
    st.ndraw[t] = top
    st.cur[t] = st.dealer[t]  # the dealer plays first


@njit(cache=True)
def reset_rows(st, rows):
    n = st.out.shape[1]
    for t in rows:
        st.chips[t, :] = st.rules[0]
        st.out[t, :] = False
        st.elim[t, :] = n
        st.rnd[t] = 0
        st.dealer[t] = 0  # RULES.md §3 [D]: player_0 deals the first round
        _new_round(st, t)


def load_row(st, t, engine: ref.Neu) -> None:
    """Table t takes the state of a readable engine mid-game (`envs.vector.VectorEnv.load_rows`
    checks the engine and copies its random stream)."""
    st.hands[t] = engine.hands
    st.sizes[t] = engine.hand_sizes
    st.chips[t] = engine.chips
    st.out[t] = engine.out
    st.elim[t] = engine.eliminated_at
    st.draw[t, : len(engine.draw)] = engine.draw  # the same order: the top is the last card
    st.ndraw[t] = len(engine.draw)
    st.played[t, : len(engine.played)] = engine.played  # in order: a reshuffle keeps the last one out
    st.nplayed[t] = len(engine.played)
    st.pcounts[t] = engine.played_counts
    st.total[t] = engine.total
    st.direction[t] = engine.direction
    st.owed[t] = engine.owed
    st.rnd[t] = engine.round
    st.dealer[t] = engine.dealer
    st.cur[t] = engine.current_player


def pack_row(engine: ref.Neu) -> list:
    """`load_row`'s state as one list of ints (`VectorEnv.load_rows` packs many worlds and reads
    them in one compiled call, `unpack_rows`: the same tables as `load_row`, faster)."""
    e = engine
    flat = [e.total, e.direction, e.owed, e.round, e.dealer, e.current_player, len(e.draw), len(e.played)]
    for hand in e.hands:
        flat += hand
    flat += e.hand_sizes
    flat += e.chips
    flat += e.out
    flat += e.eliminated_at
    flat += e.played_counts
    flat += e.draw
    flat += e.played
    return flat


@njit(cache=True)
def unpack_rows(st, tables, flat, starts):
    """Tables ``tables[i]`` take the packed state at ``flat[starts[i]:]`` (`pack_row`)."""
    n, kinds = st.hands.shape[1], st.hands.shape[2]
    for i in range(tables.shape[0]):
        t, j = tables[i], starts[i]
        st.total[t], st.direction[t], st.owed[t] = flat[j], flat[j + 1], flat[j + 2]
        st.rnd[t], st.dealer[t], st.cur[t] = flat[j + 3], flat[j + 4], flat[j + 5]
        nd, np_ = flat[j + 6], flat[j + 7]
        st.ndraw[t], st.nplayed[t] = nd, np_
        j += 8
        for s in range(n):
            for k in range(kinds):
                st.hands[t, s, k] = flat[j + k]
            j += kinds
        for s in range(n):
            st.sizes[t, s], st.chips[t, s], st.out[t, s] = flat[j + s], flat[j + n + s], flat[j + 2 * n + s] != 0
            st.elim[t, s] = flat[j + 3 * n + s]
        j += 4 * n
        for k in range(kinds):
            st.pcounts[t, k] = flat[j + k]
        j += kinds
        for c in range(nd):
            st.draw[t, c] = flat[j + c]
        j += nd
        for c in range(np_):
            st.played[t, c] = flat[j + c]


def sample_layout(engine: ref.Neu) -> tuple:
    """Where `pack_row` keeps what a redeal moves (`envs.vector.sampling`): (players, kinds,
    hands, hand sizes, draw pile, draw pile's length)."""
    n = engine.num_players
    hands_at = 8
    sizes_at = hands_at + n * NUM_KINDS
    return n, NUM_KINDS, hands_at, sizes_at, sizes_at + 4 * n + NUM_KINDS, len(engine.draw)


@njit(cache=True)
def sample_rows(st, tables, flat, seat, stream, layout, tries, scratch):
    """`envs.vector.sampling.sample_rows` for Neu."""
    return sampling.sample_rows(st, tables, flat, seat, stream, layout, tries, scratch, unpack_rows, _legal,
                                sampling.redeal_hands)


# -- legality -------------------------------------------------------------------


@njit(cache=True, inline="always")
def _legal(st, t, row):
    """The reference's legal mask for the player to act, into row; returns how many are legal."""
    n = st.out.shape[1]
    seat = st.cur[t]
    hand = st.hands[t, seat]
    room = 101 - st.total[t]
    count = 0
    for k in range(CARD_101):  # number cards: only if the total stays at or under 101
        ok = hand[k] > 0 and VALUES[k] <= room
        row[k] = ok
        count += ok
    row[13] = hand[CARD_101] > 0
    row[14] = hand[PASS] > 0
    row[15] = hand[TURN] > 0
    row[16] = hand[DOUBLE] > 0 and st.owed[t] == 1  # no Double as the first of two plays
    count += row[13] + row[14] + row[15] + row[16]
    for r in range(1, n):  # Shot names any other player still in the game
        ok = hand[SHOT] > 0 and not st.out[t, (seat + r) % n]
        row[A_SHOT + r - 1] = ok
        count += ok
    return count


# -- play -----------------------------------------------------------------------


@njit(cache=True, inline="always")
def _draw(st, t, seat):
    if st.ndraw[t] == 0:
        # RULES.md §3 [D]: the played cards except the last are shuffled into a new pile;
        # with nothing to shuffle, no card is drawn; the small preset never reshuffles.
        m = st.nplayed[t]
        if m <= 1 or st.rules[2] == 0:
            return
        last = st.played[t, m - 1]
        for i in range(m - 1):
            st.draw[t, i] = st.played[t, i]
        R.shuffle(st.rng, t, st.draw[t], m - 1)
        st.ndraw[t] = m - 1
        st.played[t, 0] = last
        st.nplayed[t] = 1
        st.pcounts[t, :] = 0
        st.pcounts[t, last] = 1
    st.ndraw[t] -= 1
    st.hands[t, seat, st.draw[t, st.ndraw[t]]] += 1
    st.sizes[t, seat] += 1


@njit(cache=True, inline="always")
def _lose(st, t, loser, rewards, done, final_scores, final_ranks):
    """The loser pays a chip (RULES.md §3 "Losing"); zero-sum rewards over those still in."""
    n = st.out.shape[1]
    taking_part = 0
    for s in range(n):
        taking_part += not st.out[t, s]
    mean = -1.0 / taking_part
    for s in range(n):
        if not st.out[t, s]:
            rewards[t, s] = (-1.0 if s == loser else 0.0) - mean
    st.chips[t, loser] -= 1
    if st.chips[t, loser] == 0:
        st.out[t, loser] = True
        outs = 0
        for s in range(n):
            outs += st.out[t, s]
        st.elim[t, loser] = outs - 1
    if taking_part - st.out[t, loser] == 1:  # one player has chips left: the game ends
        done[t] = True
        for s in range(n):
            final_scores[t, s] = st.chips[t, s]
            rank = 1
            for o in range(n):
                if st.chips[t, o] > st.chips[t, s] or (
                    st.chips[t, o] == st.chips[t, s] and st.elim[t, o] > st.elim[t, s]
                ):
                    rank += 1
            final_ranks[t, s] = rank
        return
    # The loser deals and plays first; if out, the next player still in does.
    st.dealer[t] = loser if not st.out[t, loser] else _next_seat(st, t, loser, 1)
    _new_round(st, t)


@njit(cache=True, inline="always")
def _move(st, t, action, rewards, done, final_scores, final_ranks, scratch):
    """One table's move: a card played (a shot names its target), then the draw."""
    n = st.out.shape[1]
    seat = st.cur[t]
    target = 0
    if action >= A_SHOT:
        kind = SHOT
        target = (seat + action - A_SHOT + 1) % n
    else:
        kind = ACTION_KIND[action]
    st.hands[t, seat, kind] -= 1
    st.sizes[t, seat] -= 1
    st.played[t, st.nplayed[t]] = kind
    st.nplayed[t] += 1
    st.pcounts[t, kind] += 1
    first_of_two = st.owed[t] == 2
    if kind < CARD_101:
        st.total[t] += VALUES[kind]
    elif kind == CARD_101:
        st.total[t] = 101
    elif kind == TURN:
        st.direction[t] = -st.direction[t]
    _draw(st, t, seat)
    if kind == PASS or kind == TURN or kind == SHOT:
        # RULES.md §3 Double details: the obligation moves on to whoever plays next.
        st.cur[t] = target if kind == SHOT else _next_seat(st, t, seat, st.direction[t])
        st.owed[t] = 2 if first_of_two else 1
    elif kind == DOUBLE:
        st.cur[t] = _next_seat(st, t, seat, st.direction[t])
        st.owed[t] = 2
    elif first_of_two:
        st.owed[t] = 1  # the same player makes the second play
    else:
        st.cur[t] = _next_seat(st, t, seat, st.direction[t])
        st.owed[t] = 1
    if _legal(st, t, scratch) == 0:
        _lose(st, t, st.cur[t], rewards, done, final_scores, final_ranks)


@njit(cache=True, _nrt=False)  # no reference counting: see envs.vector
def step_rows(st, rows, actions, rewards, done, final_scores, final_ranks, scratch):
    loops.step_rows(st, rows, actions, rewards, done, final_scores, final_ranks, scratch, _move)


# -- views ----------------------------------------------------------------------


@njit(cache=True, inline="always")
def _public(st, t, seat, v, i):
    for k in range(NUM_KINDS):
        v[i + k] = st.pcounts[t, k]
    i += NUM_KINDS
    v[i] = max(st.total[t], TOTAL_FLOOR)  # the reference's observation stops there
    v[i + 1] = st.direction[t]
    v[i + 2] = st.owed[t]
    v[i + 3] = st.ndraw[t]
    v[i + 4] = st.rnd[t]
    i += 5
    n = st.out.shape[1]
    for r in range(n):
        s = (seat + r) % n
        v[i] = st.chips[t, s]
        v[i + 1] = not st.out[t, s]
        v[i + 2] = st.sizes[t, s]
        v[i + 3] = s == st.cur[t]
        v[i + 4] = s == st.dealer[t]
        i += 5


@njit(cache=True, _nrt=False)  # no reference counting: see envs.vector
def write_views(st, rows, seats, obs, mask, write_mask):
    """Observation of seats[i] at table rows[i]; with write_mask, the mask of the player to act."""
    loops.write_views(st, rows, seats, obs, mask, write_mask, NUM_KINDS, loops.hand_only, _public, _legal)


@njit(cache=True, inline="always")
def _hidden(st, t, v, i):
    _public(st, t, 0, v, loops.draw_counts(st, t, v, i))


@njit(cache=True, _nrt=False)  # no reference counting: see envs.vector
def write_state(st, rows, out):
    """Every hand, the draw pile's counts, player_0's public view."""
    loops.write_state(st, rows, out, NUM_KINDS, _hidden)


def scores(st: State) -> np.ndarray:
    return st.chips.astype(np.int64)


@njit(cache=True, inline="always")
def table_events(st, t):
    """`score_events` of one table, for compiled loops (`loops.play_out`)."""
    return np.int64(st.rnd[t])


def score_events(st: State, rows: np.ndarray) -> np.ndarray:
    """`VectorEnv.score_events`: every loss ends the round (and a new one is dealt), so the rounds."""
    return st.rnd[rows].astype(np.int64)

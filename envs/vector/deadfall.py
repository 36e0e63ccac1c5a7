"""Deadfall's batched kernel: `envs/deadfall.py`'s rules over arrays, one row per table (RULES.md §2).

`envs/deadfall.py` defines the rules; this module plays the same moves in
numba, and tests/test_vector.py checks move by move that both agree. Ranks,
actions and the observation layout are the reference engine's.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from envs import deadfall as ref
from envs.engine import kind_counts
from envs.vector import rng as R
from envs.vector import loops, sampling

NUM_RANKS, A_DEAD = ref.NUM_RANKS, ref.A_DEAD
DOOR, PLAY = ref.DOOR, ref.PLAY
OBS_SEATS, SEAT_BLOCK, SEAT_STACK = ref.OBS_SEATS, ref.SEAT_BLOCK, ref.SEAT_STACK
SEAT_CHIPS, SEAT_HAND_SIZE, SEAT_TOP, SEAT_DOOR = ref.SEAT_CHIPS, ref.SEAT_HAND_SIZE, ref.SEAT_TOP, ref.SEAT_DOOR
SEAT_TO_ACT, SEAT_STARTER, SEAT_PICKED = ref.SEAT_TO_ACT, ref.SEAT_STARTER, ref.SEAT_PICKED

State = namedtuple(
    "State",
    "rng order deck copies "
    "hand_size starting_chips rounds "
    "hands sizes chips chips_before stacks tops first_door picks aside "
    "pot hand_number phase layer starter cur lowest",
)


def make_state(num_envs: int, num_players: int, options: dict) -> State:
    n, N = num_players, num_envs
    # The rule option `rules` (the standard game or the small preset) sets the deck, the hand
    # size and the number of hands: the reference engine's, read from one built with the options.
    engine = ref.Deadfall(n, **options)
    return State(
        rng=np.zeros((N, R.RNG_WIDTH), np.uint64),
        order=np.zeros(len(engine.deck), np.int16),  # scratch for the shuffle
        deck=np.array(engine.deck, dtype=np.int16),  # a card id is its rank
        copies=np.array(engine.copies, dtype=np.int8),  # copies of each rank in the deck
        hand_size=engine.hand_size,
        starting_chips=int(engine.options["starting_chips"]),
        rounds=int(engine.options["rounds"]),
        hands=np.zeros((N, n, NUM_RANKS), np.int8),
        sizes=np.zeros((N, n), np.int8),
        chips=np.zeros((N, n), np.int32),
        chips_before=np.zeros((N, n), np.int32),  # chips before this hand's ante
        stacks=np.zeros((N, n, NUM_RANKS), np.int8),  # face-up cards per seat, count per rank
        tops=np.zeros((N, n), np.int8),
        first_door=np.zeros((N, n), np.int8),
        picks=np.zeros((N, n), np.int8),  # face-down door cards of this layer
        aside=np.zeros((N, NUM_RANKS), np.int8),  # set-aside cards, count per rank
        pot=np.zeros(N, np.int32),
        hand_number=np.zeros(N, np.int32),
        phase=np.zeros(N, np.int8),
        layer=np.zeros(N, np.int16),
        starter=np.zeros(N, np.int8),
        cur=np.zeros(N, np.int16),
        lowest=np.zeros(n, np.bool_),  # scratch shared by the tables
    )


# -- set-up -------------------------------------------------------------------


@njit(cache=True, inline="always")
def _new_hand(st, t, done, final_scores, final_ranks):
    """RULES.md §2 hand set-up: everyone antes 1; the shuffled deck deals hand_size cards each."""
    n = st.sizes.shape[1]
    lowest = st.chips[t, 0]
    for s in range(n):
        lowest = min(lowest, st.chips[t, s])
    if st.hand_number[t] >= st.rounds or lowest < 1:
        # RULES.md §2 [D]: `rounds` hands, or fewer if a player cannot ante. Score = chips.
        loops.end_game(t, st.chips, done, final_scores, final_ranks)
        return
    st.hand_number[t] += 1
    for s in range(n):
        st.chips_before[t, s] = st.chips[t, s]
        st.chips[t, s] -= 1  # the ante
    st.pot[t] = n
    st.stacks[t, :, :] = 0
    st.tops[t, :] = 0
    st.first_door[t, :] = 0
    st.picks[t, :] = 0
    st.hands[t, :, :] = 0
    st.aside[t, :] = 0
    h = st.hand_size
    st.sizes[t, :] = h
    order = st.order
    for i in range(order.shape[0]):  # element by element: a slice copy would allocate
        order[i] = st.deck[i]
    R.shuffle(st.rng, t, order, order.shape[0])
    for i in range(order.shape[0]):
        if i < n * h:
            st.hands[t, i // h, order[i] - 1] += 1  # card i goes to seat i // hand_size
        else:
            st.aside[t, order[i] - 1] += 1
    st.phase[t] = DOOR
    st.layer[t] = 1
    st.starter[t] = -1
    st.cur[t] = 0  # door cards are placed in seat order from player_0


@njit(cache=True)
def reset_rows(st, rows):
    done = np.zeros(1, np.bool_)
    nothing = np.zeros((1, 1), np.int64)
    for t in rows:
        st.chips[t, :] = st.starting_chips
        st.hand_number[t] = 0
        _new_hand(st, t, done, nothing, nothing)


def load_row(st, t, engine: ref.Deadfall) -> None:
    """Table t takes the state of a readable engine mid-game (`envs.vector.VectorEnv.load_rows`
    checks the engine and copies its random stream)."""
    st.hands[t] = engine.hands
    st.sizes[t] = engine.hand_sizes
    st.chips[t] = engine.chips
    st.chips_before[t] = engine.chips_before_hand
    # A card id is its rank; the kernel keeps counts, since only the top and first door card
    # of a stack matter to the rules (both kept apart), and the set-aside cards' order never does.
    st.stacks[t] = [kind_counts(stack, NUM_RANKS + 1)[1:] for stack in engine.stacks]
    st.tops[t] = engine.tops
    st.first_door[t] = engine.first_door
    st.picks[t] = engine.door_picks
    st.aside[t] = kind_counts(engine.set_aside, NUM_RANKS + 1)[1:]
    st.pot[t] = engine.pot
    st.hand_number[t] = engine.hand_number
    st.phase[t] = engine.phase
    st.layer[t] = engine.layer
    st.starter[t] = engine.starter
    st.cur[t] = engine.current_player


def pack_row(engine: ref.Deadfall) -> list:
    """`load_row`'s state as one list of ints (`VectorEnv.load_rows` packs many worlds and reads
    them in one compiled call, `unpack_rows`: the same tables as `load_row`, faster)."""
    e = engine
    flat = [e.pot, e.hand_number, e.phase, e.layer, e.starter, e.current_player]
    for hand in e.hands:
        flat += hand
    flat += e.hand_sizes
    flat += e.chips
    flat += e.chips_before_hand
    for stack in e.stacks:
        flat += kind_counts(stack, NUM_RANKS + 1)[1:]
    flat += e.tops
    flat += e.first_door
    flat += e.door_picks
    flat += kind_counts(e.set_aside, NUM_RANKS + 1)[1:]
    return flat


@njit(cache=True)
def unpack_rows(st, tables, flat, starts):
    """Tables ``tables[i]`` take the packed state at ``flat[starts[i]:]`` (`pack_row`)."""
    n = st.hands.shape[1]
    for i in range(tables.shape[0]):
        t, j = tables[i], starts[i]
        st.pot[t], st.hand_number[t], st.phase[t] = flat[j], flat[j + 1], flat[j + 2]
        st.layer[t], st.starter[t], st.cur[t] = flat[j + 3], flat[j + 4], flat[j + 5]
        j = sampling.read_blocks(st.hands, t, flat, j + 6)
        for s in range(n):
            st.sizes[t, s], st.chips[t, s], st.chips_before[t, s] = flat[j + s], flat[j + n + s], flat[j + 2 * n + s]
        j = sampling.read_blocks(st.stacks, t, flat, j + 3 * n)
        for s in range(n):
            st.tops[t, s], st.first_door[t, s], st.picks[t, s] = flat[j + s], flat[j + n + s], flat[j + 2 * n + s]
        j += 3 * n
        for k in range(NUM_RANKS):
            st.aside[t, k] = flat[j + k]


def sample_layout(engine: ref.Deadfall) -> tuple:
    """Where `pack_row` keeps what a redeal moves (`envs.vector.sampling`): (players, kinds,
    hands, hand sizes, door picks, set-aside counts)."""
    n = engine.num_players
    hands_at = 6
    sizes_at = hands_at + n * NUM_RANKS
    picks_at = sizes_at + 3 * n + n * NUM_RANKS + 2 * n
    return n, NUM_RANKS, hands_at, sizes_at, picks_at, picks_at + n


@njit(cache=True, inline="always")
def _redeal(flat, out, stream, seat, layout, counts, pool):
    """The engine's `shuffle_hidden` on a packed world: the set-aside cards, the other seats'
    hands and their face-down door picks pooled in sorted order and shuffled; each other seat,
    in seat order, takes its hand from the front and then (if it has placed one) its door pick
    from the back; the set-aside cards are what is left."""
    n, kinds, hands_at, sizes_at, picks_at, aside_at = layout[0], layout[1], layout[2], layout[3], layout[4], layout[5]
    out[:] = flat
    counts[:] = 0
    for k in range(kinds):
        counts[k] += flat[aside_at + k]
    sampling.add_hands(flat, seat, n, kinds, hands_at, counts)
    for s in range(n):
        if s != seat and flat[picks_at + s] > 0:
            counts[flat[picks_at + s] - 1] += 1  # a pick is a rank, 1..10
    m = sampling.sorted_pool(counts, pool)
    R.shuffle(stream, 0, pool, m)
    front, back = 0, m
    for s in range(n):
        if s == seat:
            continue
        front = sampling.deal_hand(flat, out, s, kinds, hands_at, sizes_at, pool, front)
        if flat[picks_at + s] > 0:
            back -= 1
            out[picks_at + s] = pool[back] + 1
    for k in range(kinds):
        out[aside_at + k] = 0
    for c in range(front, back):
        out[aside_at + pool[c]] += 1


@njit(cache=True)
def sample_rows(st, tables, flat, seat, stream, layout, tries, scratch):
    """`envs.vector.sampling.sample_rows` for Deadfall, with its own redeal (door picks)."""
    return sampling.sample_rows(st, tables, flat, seat, stream, layout, tries, scratch, unpack_rows, _legal, _redeal)


# -- legality -------------------------------------------------------------------


@njit(cache=True, inline="always")
def _legal(st, t, row):
    """Play any rank held; DEAD on another player's top card, only once play has started."""
    n = st.sizes.shape[1]
    seat = st.cur[t]
    count = 0
    for k in range(NUM_RANKS):
        ok = st.hands[t, seat, k] > 0
        row[k] = ok
        row[A_DEAD + k] = 0
        count += ok
    if st.phase[t] == PLAY:
        for s in range(n):
            top = st.tops[t, s]
            if s != seat and top > 0:
                count += row[A_DEAD + top - 1] == 0
                row[A_DEAD + top - 1] = 1
    return count


# -- play -----------------------------------------------------------------------


@njit(cache=True, inline="always")
def _put_on_stack(st, t, seat, rank):
    st.stacks[t, seat, rank - 1] += 1
    st.tops[t, seat] = rank
    if st.first_door[t, seat] == 0:
        st.first_door[t, seat] = rank


@njit(cache=True, inline="always")
def _start_play(st, t, seat):
    st.phase[t] = PLAY
    st.starter[t] = seat
    st.cur[t] = seat


@njit(cache=True, inline="always")
def _reveal_layer(st, t):
    """RULES.md §2 door cards: the single lowest card starts; on a tie, later layers decide."""
    n = st.sizes.shape[1]
    low = NUM_RANKS + 1
    for s in range(n):
        r = st.picks[t, s]
        if r > 0:
            _put_on_stack(st, t, s, r)  # door cards become top cards
            low = min(low, r)
    lowest = st.lowest
    tied = 0
    for s in range(n):
        lowest[s] = st.picks[t, s] == low
        tied += lowest[s]
    st.picks[t, :] = 0
    if tied > 1 and st.layer[t] > 1:
        # Among players tied on a later layer, the lowest first door card starts.
        first = NUM_RANKS + 1
        for s in range(n):
            if lowest[s]:
                first = min(first, st.first_door[t, s])
        for s in range(n):
            lowest[s] = lowest[s] and st.first_door[t, s] == first
    tied = 0
    can_add = False
    first_tied = -1
    for s in range(n):
        if lowest[s]:
            tied += 1
            if first_tied < 0:
                first_tied = s
            can_add = can_add or st.sizes[t, s] > 0
    if tied == 1 or not can_add:
        # RULES.md §2 [D]: if no tied player can add a card, the tied player nearest
        # clockwise from player_0 starts.
        _start_play(st, t, first_tied)
        return
    st.layer[t] += 1
    # Every player with a card left adds one; tied players have one, so someone does.
    for s in range(n):
        if st.sizes[t, s] > 0:
            st.cur[t] = s
            return


@njit(cache=True, inline="always")
def _dead(st, t, caller, rank, rewards, done, final_scores, final_ranks):
    """RULES.md §2 Resolution: the target is the nearest player to the caller's right showing the rank."""
    n = st.sizes.shape[1]
    target = -1
    for k in range(1, n):
        s = (caller - k) % n
        if st.tops[t, s] == rank:
            target = s
            break
    held = 0
    for s in range(n):
        held += st.hands[t, s, rank - 1]  # the caller's own hand counts
    if held == 0:
        payer, winner = target, caller
    else:
        payer, winner = caller, target
    paid = min(rank, st.chips[t, payer])  # RULES.md §2 [D]: pay what you have
    st.chips[t, payer] -= paid
    st.chips[t, winner] += paid + st.pot[t]
    st.pot[t] = 0
    # Zero-sum already: the chips only move between players (the pot holds their antes).
    total = 0
    for s in range(n):
        total += st.chips[t, s] - st.chips_before[t, s]
    mean = total / n
    for s in range(n):
        rewards[t, s] = st.chips[t, s] - st.chips_before[t, s] - mean
    _new_hand(st, t, done, final_scores, final_ranks)


@njit(cache=True, inline="always")
def _move(st, t, action, rewards, done, final_scores, final_ranks, scratch):
    """One table's move: a card to the stack or a door pick, or a dead call."""
    n = st.sizes.shape[1]
    seat = st.cur[t]
    if action >= A_DEAD:
        _dead(st, t, seat, action - A_DEAD + 1, rewards, done, final_scores, final_ranks)
        return
    rank = action + 1
    st.hands[t, seat, action] -= 1
    st.sizes[t, seat] -= 1
    if st.phase[t] == DOOR:
        st.picks[t, seat] = rank
        nxt = seat + 1
        while nxt < n and st.sizes[t, nxt] == 0:
            nxt += 1
        if nxt < n:
            st.cur[t] = nxt
        else:
            _reveal_layer(st, t)
        return
    _put_on_stack(st, t, seat, rank)
    st.cur[t] = (seat + 1) % n


@njit(cache=True, _nrt=False)  # no reference counting: see envs.vector
def step_rows(st, rows, actions, rewards, done, final_scores, final_ranks, scratch):
    loops.step_rows(st, rows, actions, rewards, done, final_scores, final_ranks, scratch, _move)


# -- views ----------------------------------------------------------------------


@njit(cache=True, inline="always")
def _public(st, t, seat, v, i):
    """From the pot on: pot, hand number, phase, layer, seat's own door pick, the seat blocks."""
    n = st.sizes.shape[1]
    v[i] = st.pot[t]
    v[i + 1] = st.hand_number[t]
    v[i + 2] = st.phase[t]
    v[i + 3] = st.layer[t]
    v[i + 4] = st.picks[t, seat]
    i += 5
    for r in range(n):
        s = (seat + r) % n
        v[i + SEAT_CHIPS] = st.chips[t, s]
        v[i + SEAT_HAND_SIZE] = st.sizes[t, s]
        v[i + SEAT_TOP] = st.tops[t, s]
        v[i + SEAT_DOOR] = st.first_door[t, s]
        v[i + SEAT_TO_ACT] = s == st.cur[t]
        v[i + SEAT_STARTER] = s == st.starter[t]
        v[i + SEAT_PICKED] = st.picks[t, s] > 0
        for k in range(NUM_RANKS):
            v[i + SEAT_STACK + k] = st.stacks[t, s, k]
        i += SEAT_BLOCK


@njit(cache=True, inline="always")
def _unseen(st, t, seat, v, i):
    """After the seat's hand, the copies of each rank it has not seen; returns where the rest starts."""
    n = st.sizes.shape[1]
    for k in range(NUM_RANKS):
        # All copies less those face up, in this hand, or its own door pick.
        face_up = 0
        for s in range(n):
            face_up += st.stacks[t, s, k]
        v[i + k] = st.copies[k] - face_up - st.hands[t, seat, k] - (st.picks[t, seat] == k + 1)
    return i + NUM_RANKS


@njit(cache=True, _nrt=False)  # no reference counting: see envs.vector
def write_views(st, rows, seats, obs, mask, write_mask):
    """Observation of seats[i] at table rows[i]; with write_mask, the mask of the player to act."""
    loops.write_views(st, rows, seats, obs, mask, write_mask, NUM_RANKS, _unseen, _public, _legal)


@njit(cache=True, inline="always")
def _hidden(st, t, v, i):
    n = st.sizes.shape[1]
    for k in range(NUM_RANKS):
        v[i + k] = st.aside[t, k]
    i += NUM_RANKS
    for s in range(n):
        v[i + s] = st.picks[t, s]
    _public(st, t, 0, v, i + n)


@njit(cache=True, _nrt=False)  # no reference counting: see envs.vector
def write_state(st, rows, out):
    """Every hand, the cards set aside, each seat's door pick, player_0's public view."""
    loops.write_state(st, rows, out, NUM_RANKS, _hidden)


def scores(st: State) -> np.ndarray:
    # A player's ante in the unsettled pot still counts as theirs (the reference's scores).
    return st.chips.astype(np.int64) + 1


@njit(cache=True, inline="always")
def table_events(st, t):
    """`score_events` of one table, for compiled loops (`loops.play_out`)."""
    return np.int64(st.hand_number[t])


def score_events(st: State, rows: np.ndarray) -> np.ndarray:
    """`VectorEnv.score_events`: every DEAD call settles the hand and deals the next, so the hands."""
    return st.hand_number[rows].astype(np.int64)

"""Not Your Ma's Jong's batched kernel: `envs/not_your_mas_jong.py`'s rules over arrays (RULES.md §4).

`envs/not_your_mas_jong.py` defines the rules; this module plays the same
moves in numba, and tests/test_vector.py checks move by move that both agree.
Card types, actions, the observation layout and the hand checker (one base-4
code per suit, looked up in the reference's `SUIT_STATUS`) are the reference
engine's.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from envs import not_your_mas_jong as ref
from envs.engine import kind_counts
from envs.vector import rng as R
from envs.vector import loops, sampling

NUM_TYPES, RANKS, SUITS = ref.NUM_TYPES, ref.RANKS, len(ref.SUITS)
TOKENS = ref.TOKENS
A_PASS, A_STEAL_WIN, A_STEAL_IDENTICAL = ref.A_PASS, ref.A_STEAL_WIN, ref.A_STEAL_IDENTICAL
A_STEAL_LOWEST, A_STEAL_MIDDLE, A_STEAL_HIGHEST = ref.A_STEAL_LOWEST, ref.A_STEAL_MIDDLE, ref.A_STEAL_HIGHEST
DISCARD, STEAL = ref.DISCARD, ref.STEAL
OBS_SEATS, SEAT_BLOCK = ref.OBS_SEATS, ref.SEAT_BLOCK
SEAT_DISCARDS, SEAT_LOCKED, SEAT_TOKENS = ref.SEAT_DISCARDS, ref.SEAT_LOCKED, ref.SEAT_TOKENS
SEAT_HAND_SIZE, SEAT_IS_MA, SEAT_DISCARDER = ref.SEAT_HAND_SIZE, ref.SEAT_IS_MA, ref.SEAT_DISCARDER
SUIT_STATUS = np.array(ref.SUIT_STATUS, dtype=np.int64)
POW4 = np.array(ref.POW4, dtype=np.int64)

State = namedtuple(
    "State",
    "rng order deck hand_size extra_rounds redeal ask_everyone round_limit hands codes sizes tokens discards locked draw ndraw "
    "rnd final_round ma phase current_discard discarder claims ask ask_pos ask_len pending cur deltas",
)


def make_state(num_envs: int, num_players: int, options: dict) -> State:
    n, N, i8 = num_players, num_envs, np.int8
    # The rule option `rules` (the standard game or the small preset) sets the deck, the hand
    # size, the rounds and the tie-break: the reference engine's, read from one built with the options.
    engine = ref.NotYourMasJong(n, **{"steal_phase": "every_player", **options})
    deck = np.array(engine.deck, dtype=i8)
    return State(
        rng=np.zeros((N, R.RNG_WIDTH), np.uint64),
        order=np.zeros(len(deck), i8),  # scratch for the shuffle
        deck=deck,
        hand_size=engine.hand_size,
        extra_rounds=engine.extra_rounds,
        redeal=engine.redeal,  # the small preset deals again when the Ma's hand is complete
        # Before the `steal_phase` option, only players holding a legal steal were asked.
        ask_everyone=options.get("steal_phase", "eligible") == "every_player",
        round_limit=engine.round_limit,
        hands=np.zeros((N, n, NUM_TYPES), i8),
        codes=np.zeros((N, n, SUITS), np.int16),  # base-4 code of each suit's counts
        sizes=np.zeros((N, n), i8),
        tokens=np.zeros((N, n), np.int16),
        discards=np.zeros((N, n, NUM_TYPES), i8),
        locked=np.zeros((N, n, NUM_TYPES), i8),
        draw=np.zeros((N, len(deck)), i8),  # top of the pile is draw[ndraw - 1]
        ndraw=np.zeros(N, i8),
        rnd=np.zeros(N, np.int16),
        final_round=np.zeros(N, np.int16),  # -1 until the game reaches its end, before any tie-break
        ma=np.zeros(N, i8),
        phase=np.zeros(N, i8),
        current_discard=np.zeros(N, i8),
        discarder=np.zeros(N, i8),
        claims=np.zeros((N, n), i8),  # steal decision per seat on the current discard (hidden)
        ask=np.zeros((N, n), i8),  # seats to ask about the current discard, in order
        ask_pos=np.zeros(N, i8),
        ask_len=np.zeros(N, i8),
        pending=np.zeros((N, n), np.int16),  # a Ma's win on the first deal, paid out with the first step
        cur=np.zeros(N, i8),
        deltas=np.zeros(n, np.int64),  # scratch shared by the tables
    )


# -- cards in hands -------------------------------------------------------------------


@njit(cache=True, inline="always")
def _give(st, t, seat, card):
    st.hands[t, seat, card] += 1
    st.codes[t, seat, card // RANKS] += POW4[card % RANKS]
    st.sizes[t, seat] += 1


@njit(cache=True, inline="always")
def _take(st, t, seat, card):
    st.hands[t, seat, card] -= 1
    st.codes[t, seat, card // RANKS] -= POW4[card % RANKS]
    st.sizes[t, seat] -= 1


@njit(cache=True, inline="always")
def _complete_with(st, t, seat, card):
    """Would the concealed hand plus `card` (-1: nothing) split into sets and one pair?"""
    total = 0
    for suit in range(SUITS):
        code = st.codes[t, seat, suit]
        if card >= 0 and suit == card // RANKS:
            code += POW4[card % RANKS]
        total += SUIT_STATUS[code]
    return total == 1


@njit(cache=True, inline="always")
def _set_offsets(which):
    """RULES.md §4, Stealing: the two cards a set steal takes from the hand, as rank offsets
    from the discard (same suit), for A_STEAL_IDENTICAL + which."""
    if which == 0:
        return 0, 0  # identical
    if which == 1:
        return 1, 2  # the discard is the lowest of a sequence
    if which == 2:
        return -1, 1  # the middle
    return -2, -1  # the highest


@njit(cache=True, inline="always")
def _holds_set_steal(st, t, seat, card, which):
    """Does seat hold the two cards of set steal `which` (0..3) on `card`, inside its suit?"""
    o1, o2 = _set_offsets(which)
    r = card % RANKS
    if r + o1 < 0 or r + o2 >= RANKS:
        return False
    if o1 == o2:
        return st.hands[t, seat, card] >= 2
    return st.hands[t, seat, card + o1] >= 1 and st.hands[t, seat, card + o2] >= 1


@njit(cache=True, inline="always")
def _can_steal(st, t, seat, card):
    for which in range(4):
        if _holds_set_steal(st, t, seat, card, which):
            return True
    return _complete_with(st, t, seat, card)


# -- rounds ---------------------------------------------------------------------------


@njit(cache=True, inline="always")
def _new_round(st, t):
    """RULES.md §4 round set-up: the Ma gets 11 cards, everyone else 10, dealt from the end of
    the shuffled deck; the rest is the draw pile. Returns whether the Ma's hand is complete."""
    n = st.sizes.shape[1]
    st.rnd[t] += 1
    st.hands[t, :, :] = 0
    st.codes[t, :, :] = 0
    st.sizes[t, :] = 0
    st.discards[t, :, :] = 0
    st.locked[t, :, :] = 0
    st.phase[t] = DISCARD
    st.current_discard[t] = -1
    st.discarder[t] = -1
    st.ask_pos[t] = 0
    st.ask_len[t] = 0
    st.claims[t, :] = -1
    draw = st.draw[t]
    while True:
        for i in range(draw.shape[0]):  # element by element: a slice copy would allocate
            draw[i] = st.deck[i]
        R.shuffle(st.rng, t, draw, draw.shape[0])
        top = draw.shape[0]
        for s in range(n):
            size = st.hand_size + (1 if s == st.ma[t] else 0)
            for i in range(top - size, top):
                _give(st, t, s, draw[i])
            top -= size
        if not (st.redeal and _complete_with(st, t, st.ma[t], -1)):
            break
        # The small preset deals again when the Ma's hand is complete (as the reference does).
        st.hands[t, :, :] = 0
        st.codes[t, :, :] = 0
        st.sizes[t, :] = 0
    st.ndraw[t] = top
    st.cur[t] = st.ma[t]
    return _complete_with(st, t, st.ma[t], -1)


@njit(cache=True, inline="always")
def _pay(st, t, winner, by_draw, deltas):
    """RULES.md §4 Payment: the winner is paid; a player who cannot pay in full pays what they have."""
    n = st.sizes.shape[1]
    ma = st.ma[t]
    paid_to_winner = 0
    for s in range(n):
        if s == winner:
            continue
        if winner == ma or s == ma:
            owed = 4 if by_draw else 2
        else:
            owed = 2 if by_draw else 1
        paid = min(owed, st.tokens[t, s])
        deltas[s] -= paid
        st.tokens[t, s] -= paid
        paid_to_winner += paid
    deltas[winner] += paid_to_winner
    st.tokens[t, winner] += paid_to_winner


@njit(cache=True, _nrt=False)  # called, not inlined (it ends a round): see envs.vector
def _end_round(st, t, deltas, done, final_scores, final_ranks):
    """The game ends, or the Ma passes on and a new round is dealt (where a Ma dealt a
    complete hand wins at once, as a win by draw, which ends that round too)."""
    n = st.sizes.shape[1]
    while True:
        lowest = st.tokens[t, 0]
        top = st.tokens[t, 0]
        for s in range(n):
            lowest = min(lowest, st.tokens[t, s])
            top = max(top, st.tokens[t, s])
        if st.final_round[t] < 0 and (lowest == 0 or st.rnd[t] >= st.round_limit):
            # RULES.md §4: the game ends when a player has no tokens or at the round limit.
            st.final_round[t] = st.rnd[t]
        leaders = 0
        for s in range(n):
            leaders += st.tokens[t, s] == top
        # RULES.md §4 [D]: however it ended, tied leaders play up to 3 extra rounds, then the tie stands.
        if st.final_round[t] >= 0 and (leaders == 1 or st.rnd[t] >= st.final_round[t] + st.extra_rounds):
            loops.end_game(t, st.tokens, done, final_scores, final_ranks)
            return
        st.ma[t] = (st.ma[t] + 1) % n
        if not _new_round(st, t):
            return
        _pay(st, t, st.ma[t], True, deltas)  # RULES.md §4 [D]: a Ma dealt a complete hand wins


@njit(cache=True, _nrt=False)  # called, not inlined (it ends a round): see envs.vector
def _win(st, t, winner, by_draw, deltas, done, final_scores, final_ranks):
    _pay(st, t, winner, by_draw, deltas)
    _end_round(st, t, deltas, done, final_scores, final_ranks)


@njit(cache=True)
def reset_rows(st, rows):
    n = st.sizes.shape[1]
    done = np.zeros(1, np.bool_)
    nothing = np.zeros((1, 1), np.int64)
    deltas = np.zeros(n, np.int64)
    for t in rows:
        st.tokens[t, :] = TOKENS
        st.rnd[t] = 0
        st.final_round[t] = -1
        st.ma[t] = 0  # RULES.md §4 [D]: player_0 is the Ma of round 1
        deltas[:] = 0
        if _new_round(st, t):
            # A Ma dealt a complete hand wins before anyone acts: paid out with the first step.
            _win(st, t, st.ma[t], True, deltas, done, nothing, nothing)
        st.pending[t, :] = deltas


@njit(cache=True, inline="always")
def _next_turn(st, t, seat, deltas, done, final_scores, final_ranks):
    n = st.sizes.shape[1]
    p = (seat + 1) % n
    if st.ndraw[t] == 0:
        # RULES.md §4 [D]: an empty draw pile ends the round with no winner and no payment.
        _end_round(st, t, deltas, done, final_scores, final_ranks)
        return
    st.ndraw[t] -= 1
    _give(st, t, p, st.draw[t, st.ndraw[t]])
    st.cur[t] = p
    st.phase[t] = DISCARD
    if _complete_with(st, t, p, -1):
        # RULES.md §4 [D]: a complete hand right after drawing wins at once.
        _win(st, t, p, True, deltas, done, final_scores, final_ranks)


@njit(cache=True, inline="always")
def _discard(st, t, seat, card, deltas, done, final_scores, final_ranks):
    n = st.sizes.shape[1]
    _take(st, t, seat, card)
    st.discards[t, seat, card] += 1
    # Seat order after the discarder: every other player (pass-only where they cannot
    # steal), or with steal_phase="eligible" only those holding a legal steal.
    count = 0
    for r in range(1, n):
        s = (seat + r) % n
        if st.ask_everyone or _can_steal(st, t, s, card):
            st.ask[t, count] = s
            count += 1
    if count == 0:
        _next_turn(st, t, seat, deltas, done, final_scores, final_ranks)
        return
    st.phase[t] = STEAL
    st.current_discard[t] = card
    st.discarder[t] = seat
    st.claims[t, :] = -1
    st.cur[t] = st.ask[t, 0]
    st.ask_pos[t] = 1
    st.ask_len[t] = count


@njit(cache=True, inline="always")
def _resolve_steals(st, t, deltas, done, final_scores, final_ranks):
    """RULES.md §4 [D]: a winning steal beats set steals; the nearest after the discarder gets the card."""
    n = st.sizes.shape[1]
    card = st.current_discard[t]
    discarder = st.discarder[t]
    st.phase[t] = DISCARD
    st.current_discard[t] = -1
    st.discarder[t] = -1
    st.ask_pos[t] = 0
    st.ask_len[t] = 0
    winner = -1
    setter = -1
    claim = -1
    for r in range(1, n):
        s = (discarder + r) % n
        c = st.claims[t, s]
        if winner < 0 and c > A_PASS and _complete_with(st, t, s, card):
            winner = s
        if setter < 0 and c > A_STEAL_WIN and _holds_set_steal(st, t, s, card, c - A_STEAL_IDENTICAL):
            setter = s
            claim = c
    st.claims[t, :] = -1
    if winner >= 0:
        st.discards[t, discarder, card] -= 1
        _give(st, t, winner, card)
        _win(st, t, winner, False, deltas, done, final_scores, final_ranks)
        return
    if setter < 0:
        _next_turn(st, t, discarder, deltas, done, final_scores, final_ranks)
        return
    st.discards[t, discarder, card] -= 1
    for o in _set_offsets(claim - A_STEAL_IDENTICAL):
        _take(st, t, setter, card + o)
        st.locked[t, setter, card + o] += 1
    st.locked[t, setter, card] += 1
    # The stealer discards next; the players in between are skipped.
    st.cur[t] = setter


@njit(cache=True, inline="always")
def _move(st, t, action, rewards, done, final_scores, final_ranks, scratch):
    """One table's move: a discard, or a steal decision on the current discard; rewards are the token changes."""
    n = st.sizes.shape[1]
    deltas = st.deltas
    seat = st.cur[t]
    for s in range(n):
        deltas[s] = st.pending[t, s]
        st.pending[t, s] = 0
    if st.phase[t] == DISCARD:
        _discard(st, t, seat, action, deltas, done, final_scores, final_ranks)
    else:
        st.claims[t, seat] = action
        if st.ask_pos[t] < st.ask_len[t]:
            st.cur[t] = st.ask[t, st.ask_pos[t]]
            st.ask_pos[t] += 1
        else:
            _resolve_steals(st, t, deltas, done, final_scores, final_ranks)
    # Tokens only change hands, so the mean change is 0 and rewards are the changes.
    total = 0
    for s in range(n):
        total += deltas[s]
    mean = total / n
    for s in range(n):
        rewards[t, s] = deltas[s] - mean


@njit(cache=True, _nrt=False)  # no reference counting: see envs.vector
def step_rows(st, rows, actions, rewards, done, final_scores, final_ranks, scratch):
    loops.step_rows(st, rows, actions, rewards, done, final_scores, final_ranks, scratch, _move)


# -- loading ------------------------------------------------------------------------


def load_row(st, t, engine: ref.NotYourMasJong) -> None:
    """Table t takes the state of a readable engine mid-game (`envs.vector.VectorEnv.load_rows`
    checks the engine and copies its random stream)."""
    n = engine.num_players
    hands = np.array(engine.hands, np.int64)
    st.hands[t] = hands
    st.codes[t] = (hands.reshape(n, SUITS, RANKS) * POW4).sum(axis=2)  # the hand checker's codes
    st.sizes[t] = engine.hand_sizes
    st.tokens[t] = engine.tokens
    # Counts per card type: the order of a discard pile or of the locked sets never matters.
    st.discards[t] = [kind_counts(pile, NUM_TYPES) for pile in engine.discard_piles]
    st.locked[t] = [kind_counts([c for cards in sets for c in cards], NUM_TYPES) for sets in engine.locked_sets]
    st.draw[t, : len(engine.draw)] = engine.draw  # the same order: the top is the last card
    st.ndraw[t] = len(engine.draw)
    st.rnd[t] = engine.round
    st.final_round[t] = -1 if engine.final_round is None else engine.final_round
    st.ma[t] = engine.ma
    st.phase[t] = engine.phase
    st.current_discard[t] = engine.current_discard
    st.discarder[t] = engine.discarder
    st.claims[t] = engine.claims
    # Seats still to be asked about the discard, in order (the one asked now is `cur`).
    st.ask[t] = -1
    st.ask[t, : len(engine.to_ask)] = engine.to_ask
    st.ask_pos[t] = 0
    st.ask_len[t] = len(engine.to_ask)
    # A Ma's win on the first deal is paid out with the first step, in both engines.
    pending = engine._pending_event
    st.pending[t] = 0 if pending is None else pending.deltas
    st.cur[t] = engine.current_player


def pack_row(engine: ref.NotYourMasJong) -> list:
    """`load_row`'s state as one list of ints (`VectorEnv.load_rows` packs many worlds and reads
    them in one compiled call, `unpack_rows`: the same tables as `load_row`, faster)."""
    e = engine
    pending = e._pending_event
    flat = [e.round, -1 if e.final_round is None else e.final_round, e.ma, e.phase, e.current_discard, e.discarder,
            e.current_player, len(e.draw), len(e.to_ask)]
    for hand in e.hands:
        flat += hand
    flat += e.hand_sizes
    flat += e.tokens
    flat += e.claims
    flat += [0] * e.num_players if pending is None else pending.deltas
    flat += e.to_ask
    flat += e.draw
    for pile in e.discard_piles:
        flat.append(len(pile))
        flat += pile
    for sets in e.locked_sets:
        flat.append(sum(len(cards) for cards in sets))
        for cards in sets:
            flat += cards
    return flat


@njit(cache=True)
def unpack_rows(st, tables, flat, starts):
    """Tables ``tables[i]`` take the packed state at ``flat[starts[i]:]`` (`pack_row`)."""
    n = st.hands.shape[1]
    for i in range(tables.shape[0]):
        t, j = tables[i], starts[i]
        st.rnd[t], st.final_round[t], st.ma[t] = flat[j], flat[j + 1], flat[j + 2]
        st.phase[t], st.current_discard[t], st.discarder[t] = flat[j + 3], flat[j + 4], flat[j + 5]
        st.cur[t] = flat[j + 6]
        nd, na = flat[j + 7], flat[j + 8]
        st.ndraw[t], st.ask_pos[t], st.ask_len[t] = nd, 0, na
        j += 9
        for s in range(n):
            for k in range(NUM_TYPES):
                st.hands[t, s, k] = flat[j + k]
            for u in range(SUITS):  # the hand checker's base-4 codes
                code = 0
                for r in range(RANKS):
                    code += flat[j + u * RANKS + r] * POW4[r]
                st.codes[t, s, u] = code
            j += NUM_TYPES
        for s in range(n):
            st.sizes[t, s], st.tokens[t, s] = flat[j + s], flat[j + n + s]
            st.claims[t, s], st.pending[t, s] = flat[j + 2 * n + s], flat[j + 3 * n + s]
        j += 4 * n
        st.ask[t, :] = -1
        for c in range(na):
            st.ask[t, c] = flat[j + c]
        j += na
        for c in range(nd):
            st.draw[t, c] = flat[j + c]
        j += nd
        for s in range(n):  # counts per card type: the order of a pile or of the locked sets never matters
            st.discards[t, s, :] = 0
            for c in range(flat[j]):
                st.discards[t, s, flat[j + 1 + c]] += 1
            j += 1 + flat[j]
        for s in range(n):
            st.locked[t, s, :] = 0
            for c in range(flat[j]):
                st.locked[t, s, flat[j + 1 + c]] += 1
            j += 1 + flat[j]


def sample_layout(engine: ref.NotYourMasJong) -> tuple | None:
    """Where `pack_row` keeps what a redeal moves (`envs.vector.sampling`): (players, kinds,
    hands, hand sizes, draw pile, draw pile's length). None with ``steal_phase="eligible"``,
    where a redeal mid-steal also changes who is still to be asked."""
    if not engine.ask_everyone:
        return None
    n = engine.num_players
    hands_at = 9
    sizes_at = hands_at + n * NUM_TYPES
    return n, NUM_TYPES, hands_at, sizes_at, sizes_at + 4 * n + len(engine.to_ask), len(engine.draw)


@njit(cache=True)
def sample_rows(st, tables, flat, seat, stream, layout, tries, scratch):
    """`envs.vector.sampling.sample_rows` for Ma's Jong."""
    return sampling.sample_rows(st, tables, flat, seat, stream, layout, tries, scratch, unpack_rows, _legal,
                                sampling.redeal_hands)


# -- views ----------------------------------------------------------------------------


@njit(cache=True, inline="always")
def _legal(st, t, row):
    row[:] = 0
    seat = st.cur[t]
    if st.phase[t] == DISCARD:
        count = 0
        for k in range(NUM_TYPES):
            if st.hands[t, seat, k] > 0:
                row[k] = 1
                count += 1
        return count
    card = st.current_discard[t]
    row[A_PASS] = 1
    count = 1
    if _complete_with(st, t, seat, card):
        row[A_STEAL_WIN] = 1
        count += 1
    for which in range(4):
        if _holds_set_steal(st, t, seat, card, which):
            row[A_STEAL_IDENTICAL + which] = 1
            count += 1
    return count


@njit(cache=True, inline="always")
def _public(st, t, seat, v, i):
    """Everything `seat` may see except its own hand (observation index 25 on)."""
    n = st.sizes.shape[1]
    v[i : i + NUM_TYPES] = 0
    if st.phase[t] == STEAL:
        v[i + st.current_discard[t]] = 1
    i += NUM_TYPES
    v[i] = st.phase[t] == STEAL
    v[i + 1] = st.rnd[t]
    v[i + 2] = st.ndraw[t]
    i += 3
    for r in range(n):
        s = (seat + r) % n
        for k in range(NUM_TYPES):
            v[i + SEAT_DISCARDS + k] = st.discards[t, s, k]
            v[i + SEAT_LOCKED + k] = st.locked[t, s, k]
        v[i + SEAT_TOKENS] = st.tokens[t, s]
        v[i + SEAT_HAND_SIZE] = st.sizes[t, s]
        v[i + SEAT_IS_MA] = s == st.ma[t]
        v[i + SEAT_DISCARDER] = s == st.discarder[t]
        i += SEAT_BLOCK
    return i


@njit(cache=True, _nrt=False)  # no reference counting: see envs.vector
def write_views(st, rows, seats, obs, mask, write_mask):
    """Observation of seats[i] at table rows[i]; with write_mask, the mask of the player to act."""
    loops.write_views(st, rows, seats, obs, mask, write_mask, NUM_TYPES, loops.hand_only, _public, _legal)


@njit(cache=True, inline="always")
def _hidden(st, t, v, i):
    n = st.sizes.shape[1]
    i = _public(st, t, 0, v, loops.draw_counts(st, t, v, i))
    for s in range(n):
        c = st.claims[t, s]
        v[i + s] = c - A_PASS if c >= 0 else -1
        v[i + n + s] = s == st.cur[t]


@njit(cache=True, _nrt=False)  # no reference counting: see envs.vector
def write_state(st, rows, out):
    """Every hand, the draw pile's counts, player_0's public view, the pending claims, the seat to act."""
    loops.write_state(st, rows, out, NUM_TYPES, _hidden)


def scores(st: State) -> np.ndarray:
    return st.tokens.astype(np.int64)


@njit(cache=True, inline="always")
def table_events(st, t):
    """`score_events` of one table, for compiled loops (`loops.play_out`)."""
    pending = False
    for s in range(st.pending.shape[1]):
        pending = pending or st.pending[t, s] != 0
    return 2 * np.int64(st.rnd[t]) + (0 if pending else 1)


def score_events(st: State, rows: np.ndarray) -> np.ndarray:
    """`VectorEnv.score_events`: every round scores when it ends (a draw with no payment), then
    the next is dealt; and a game whose first Ma was dealt a complete hand pays that win with
    its first step, in the second round. Twice the rounds, plus one once nothing is pending."""
    return 2 * st.rnd[rows].astype(np.int64) + ~st.pending[rows].any(axis=1)

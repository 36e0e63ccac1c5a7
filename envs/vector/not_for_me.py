"""Not For Me's batched kernel: `envs/not_for_me.py`'s rules over arrays, one row per table (RULES.md §1).

`envs/not_for_me.py` defines the rules; this module plays the same moves in
numba, and tests/test_vector.py checks move by move that both agree. Card
kinds, the action layout and the observation layout are the reference engine's.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from envs import not_for_me as ref
from envs.vector import rng as R
from envs.vector import loops, sampling

NUMBERS, WILD, NUM_KINDS = ref.NUMBERS, ref.WILD, ref.NUM_KINDS
STEP = ref.NUM_WILDS + 1  # plays of one (number, count) differ by the wilds they hold
WILDS_ONLY, SUPPLY_SLOTS = ref.WILDS_ONLY, ref.SUPPLY_SLOTS
PLAY, ANSWER, DRAW = ref.PLAY, ref.ANSWER, ref.DRAW
OBS_SEATS, SEAT_FIELDS = ref.OBS_SEATS, ref.SEAT_FIELDS
# Positions in the `layout` array (the reference's ActionLayout, which depends on the player count).
L_COPIES, L_WILDS, L_FOR_YOU, L_ACCEPT, L_REFUSE, L_DRAW, L_DRAW_PILE, L_PLAIN_PASS = range(8)

State = namedtuple(
    "State",
    "rng deck hand_size supply_size layout marks rounds max_steps hands sizes penalties played supply draw ndraw "
    "field_count field_number field_player passes phase giver target offer_kind offer_size draws_owed "
    "rnd round_steps start cur work",
)


def make_state(num_envs: int, num_players: int, options: dict) -> State:
    n, N, i16 = num_players, num_envs, np.int16
    actions = ref.ActionLayout.for_players(n)
    # The rule option `rules` (the standard game or the small preset) sets the deck, the hand
    # size, the supply and the number of rounds: the reference engine's, read from one built with the options.
    engine = ref.NotForMe(n, **options)
    deck = np.array(engine.deck, dtype=i16)
    scalar = lambda dtype=i16: np.zeros(N, dtype)  # noqa: E731
    return State(
        rng=np.zeros((N, R.RNG_WIDTH), np.uint64),
        deck=deck,
        hand_size=engine.hand_size,
        supply_size=engine.supply_size,
        layout=np.array([actions.copies, actions.wilds, actions.for_you, actions.accept, actions.refuse, actions.draw,
                         actions.draw_pile, actions.plain_pass], np.int64),
        marks=np.array(options["hand_marks"], np.int64),
        rounds=engine.rounds,
        max_steps=engine.max_round_steps,
        hands=np.zeros((N, n, NUM_KINDS), i16),
        sizes=np.zeros((N, n), i16),
        penalties=np.zeros((N, n), np.int32),
        played=np.zeros((N, NUM_KINDS), i16),
        supply=np.zeros((N, SUPPLY_SLOTS), i16),  # -1: empty slot
        draw=np.zeros((N, len(deck)), i16),  # top of the pile is draw[ndraw - 1]
        ndraw=scalar(),
        field_count=scalar(),  # 0: the field is empty
        field_number=scalar(),
        field_player=scalar(),
        passes=scalar(),
        phase=scalar(),
        giver=scalar(),
        target=scalar(),
        offer_kind=scalar(),
        offer_size=scalar(),
        draws_owed=scalar(),
        rnd=scalar(),
        round_steps=scalar(np.int32),
        start=scalar(),
        cur=scalar(),
        work=np.zeros(n, np.int64),  # scratch shared by the tables
    )


# -- set-up -------------------------------------------------------------------


@njit(cache=True, inline="always")
def _new_round(st, t):
    """RULES.md §1 round set-up: shuffle, 8 cards each, 3 face up as the supply, the rest the draw pile
    (the small preset: 2 cards each and 1 face up)."""
    n, h, k = st.sizes.shape[1], st.hand_size, st.supply_size
    st.rnd[t] += 1
    st.round_steps[t] = 0
    st.hands[t, :, :] = 0
    st.sizes[t, :] = h
    st.played[t, :] = 0
    st.field_count[t] = 0
    st.field_number[t] = 0
    st.field_player[t] = -1
    st.passes[t] = 0
    st.phase[t] = PLAY
    st.giver[t] = -1
    st.target[t] = -1
    st.offer_kind[t] = -1
    st.offer_size[t] = 0
    st.draws_owed[t] = 0
    order = st.draw[t]
    for i in range(order.shape[0]):  # element by element: a slice copy would allocate
        order[i] = st.deck[i]
    R.shuffle(st.rng, t, order, order.shape[0])
    for s in range(n):
        for i in range(s * h, (s + 1) * h):
            st.hands[t, s, order[i]] += 1
    first = n * h
    for i in range(SUPPLY_SLOTS):
        st.supply[t, i] = order[first + i] if i < k else -1
    rest = order.shape[0] - first - k
    for i in range(rest):  # move the draw pile to the front (left, so in place)
        order[i] = order[first + k + i]
    st.ndraw[t] = rest
    st.cur[t] = st.start[t]


@njit(cache=True)
def reset_rows(st, rows):
    for t in rows:
        st.penalties[t, :] = 0
        st.rnd[t] = 0
        st.start[t] = 0  # RULES.md §1 [D]: player_0 starts round 1
        _new_round(st, t)


def load_row(st, t, engine: ref.NotForMe) -> None:
    """Table t takes the state of a readable engine mid-game (`envs.vector.VectorEnv.load_rows`
    checks the engine and copies its random stream)."""
    st.hands[t] = engine.hands
    st.sizes[t] = engine.hand_sizes
    st.penalties[t] = engine.penalties
    st.played[t] = engine.played
    st.supply[t] = engine.supply  # -1: an empty slot, as in the engine
    st.draw[t, : len(engine.draw)] = engine.draw  # the same order: the top is the last card
    st.ndraw[t] = len(engine.draw)
    st.field_count[t] = engine.field_count
    st.field_number[t] = engine.field_number
    st.field_player[t] = engine.field_player
    st.passes[t] = engine.passes
    st.phase[t] = engine.phase
    st.giver[t] = engine.giver
    st.target[t] = engine.target
    st.offer_kind[t] = engine.offer_kind
    st.offer_size[t] = engine.offer_size
    st.draws_owed[t] = engine.draws_owed
    st.rnd[t] = engine.round
    st.round_steps[t] = engine.round_steps
    st.start[t] = engine.start_player
    st.cur[t] = engine.current_player


def pack_row(engine: ref.NotForMe) -> list:
    """`load_row`'s state as one list of ints (`VectorEnv.load_rows` packs many worlds and reads
    them in one compiled call, `unpack_rows`: the same tables as `load_row`, faster)."""
    e = engine
    flat = [e.field_count, e.field_number, e.field_player, e.passes, e.phase, e.giver, e.target, e.offer_kind,
            e.offer_size, e.draws_owed, e.round, e.round_steps, e.start_player, e.current_player, len(e.draw)]
    flat += e.supply
    for hand in e.hands:
        flat += hand
    flat += e.hand_sizes
    flat += e.penalties
    flat += e.played
    flat += e.draw
    return flat


@njit(cache=True)
def unpack_rows(st, tables, flat, starts):
    """Tables ``tables[i]`` take the packed state at ``flat[starts[i]:]`` (`pack_row`)."""
    n = st.hands.shape[1]
    for i in range(tables.shape[0]):
        t, j = tables[i], starts[i]
        st.field_count[t], st.field_number[t], st.field_player[t] = flat[j], flat[j + 1], flat[j + 2]
        st.passes[t], st.phase[t], st.giver[t], st.target[t] = flat[j + 3], flat[j + 4], flat[j + 5], flat[j + 6]
        st.offer_kind[t], st.offer_size[t], st.draws_owed[t] = flat[j + 7], flat[j + 8], flat[j + 9]
        st.rnd[t], st.round_steps[t], st.start[t], st.cur[t] = flat[j + 10], flat[j + 11], flat[j + 12], flat[j + 13]
        nd = flat[j + 14]
        st.ndraw[t] = nd
        j += 15
        for k in range(SUPPLY_SLOTS):
            st.supply[t, k] = flat[j + k]
        j = sampling.read_blocks(st.hands, t, flat, j + SUPPLY_SLOTS)
        for s in range(n):
            st.sizes[t, s], st.penalties[t, s] = flat[j + s], flat[j + n + s]
        j += 2 * n
        for k in range(NUM_KINDS):
            st.played[t, k] = flat[j + k]
        j += NUM_KINDS
        for c in range(nd):
            st.draw[t, c] = flat[j + c]


P_GIVER, P_OFFER_KIND, P_OFFER_SIZE = 5, 7, 8  # where pack_row keeps the pending offer


def sample_layout(engine: ref.NotForMe) -> tuple:
    """Where `pack_row` keeps what a redeal moves (`envs.vector.sampling`): (players, kinds,
    hands, hand sizes, draw pile, draw pile's length)."""
    n = engine.num_players
    hands_at = 15 + SUPPLY_SLOTS
    sizes_at = hands_at + n * NUM_KINDS
    return n, NUM_KINDS, hands_at, sizes_at, sizes_at + 2 * n + NUM_KINDS, len(engine.draw)


@njit(cache=True, inline="always")
def _redeal(flat, out, stream, seat, layout, counts, pool):
    """The engine's `shuffle_hidden` on a packed world, draw for draw: the draw pile, the other
    hands and (unless `seat` made it) a pending offer pooled in sorted order and shuffled. A
    hidden offer takes a number held at least offer-size times (``rng.integers`` over them),
    its first cards in the shuffled order; the giver's hand the first other cards (too few: the
    whole redeal again, up to 100 times, then the world as it was); the other seats, in seat
    order, take their hands from the front, and the rest is the draw pile."""
    n, kinds, hands_at, sizes_at, draw_at, nd = layout[0], layout[1], layout[2], layout[3], layout[4], layout[5]
    giver, offer_kind, offer_size = flat[P_GIVER], flat[P_OFFER_KIND], flat[P_OFFER_SIZE]
    hide = offer_size > 0 and seat != giver
    out[:] = flat
    counts[:] = 0
    for c in range(nd):
        counts[flat[draw_at + c]] += 1
    sampling.add_hands(flat, seat, n, kinds, hands_at, counts)
    if hide:
        counts[offer_kind] += offer_size
    held = np.zeros(kinds, np.int64)
    for _ in range(100):
        m = sampling.sorted_pool(counts, pool)
        R.shuffle(stream, 0, pool, m)
        kind = offer_kind
        if hide:
            options = 0
            for k in range(NUMBERS):
                options += counts[k] >= offer_size
            pick = R.below(stream, 0, options)
            for k in range(NUMBERS):
                if counts[k] >= offer_size:
                    if pick == 0:
                        kind = k
                        break
                    pick -= 1
            # The offer's cards: the first `offer_size` of that number, out of the pool.
            left, w = offer_size, 0
            for c in range(m):
                if pool[c] == kind and left > 0:
                    left -= 1
                else:
                    pool[w] = pool[c]
                    w += 1
            m = w
            # The giver's hand: the first cards of another kind (the giver gave all of `kind`).
            need = flat[sizes_at + giver]
            held[:] = 0
            w = 0
            for c in range(m):
                if need > 0 and pool[c] != kind:
                    held[pool[c]] += 1
                    need -= 1
                else:
                    pool[w] = pool[c]
                    w += 1
            if need > 0:
                continue
            m = w
            for k in range(kinds):
                out[hands_at + giver * kinds + k] = held[k]
        j = 0
        for s in range(n):
            if s != seat and not (hide and s == giver):
                j = sampling.deal_hand(flat, out, s, kinds, hands_at, sizes_at, pool, j)
        for c in range(m - j):
            out[draw_at + c] = pool[j + c]
        out[P_OFFER_KIND] = kind
        return


@njit(cache=True)
def sample_rows(st, tables, flat, seat, stream, layout, tries, scratch):
    """`envs.vector.sampling.sample_rows` for Not For Me, with its own redeal (a hidden offer)."""
    return sampling.sample_rows(st, tables, flat, seat, stream, layout, tries, scratch, unpack_rows, _legal, _redeal)


# -- legality -------------------------------------------------------------------


@njit(cache=True, inline="always")
def _legal(st, t, row):
    """The reference's legal mask for the player to act, into row; returns how many are legal."""
    row[:] = 0
    n = st.sizes.shape[1]
    lay = st.layout
    if st.phase[t] == ANSWER:
        row[lay[L_ACCEPT]] = 1
        row[lay[L_REFUSE]] = 1
        return 2
    if st.phase[t] == DRAW:
        count = 0
        for i in range(SUPPLY_SLOTS):
            if st.supply[t, i] >= 0:
                row[lay[L_DRAW] + i] = 1
                count += 1
        if st.ndraw[t] > 0:
            row[lay[L_DRAW_PILE]] = 1
            count += 1
        return count
    seat = st.cur[t]
    hand = st.hands[t, seat]
    size = st.sizes[t, seat]
    wilds = hand[WILD]
    c = st.field_count[t]
    fv = st.field_number[t]
    copies = lay[L_COPIES]
    count = 0
    for v in range(1, NUMBERS + 1):
        held = hand[v - 1]
        if held == 0 or v == fv:
            continue
        # RULES.md §1 Play: on an empty field any count; more cards only with a smaller
        # number; the same count only with a greater one.
        if c == 0 or v < fv:
            low, high = c + 1, held + wilds
        else:
            low, high = c, c
        base = (v - 1) * copies * STEP
        for k in range(max(low, 1), high + 1):
            for w in range(max(0, k - held), min(wilds, k - 1) + 1):
                if w > 0 and k == size:
                    continue  # you cannot go out on a wild
                row[base + (k - w - 1) * STEP + w] = 1
                count += 1
    # Wilds only count as 7s (RULES.md §1 [D]): on an empty field, or on the same count below 7.
    if wilds > 0:
        if c == 0:
            for k in range(1, min(wilds, size - 1) + 1):
                row[lay[L_WILDS] + k - 1] = 1
                count += 1
        elif fv < WILDS_ONLY and c <= wilds and c < size:
            row[lay[L_WILDS] + c - 1] = 1
            count += 1
    if c > 0:
        # For You (RULES.md §1 [D]: only when the field is not empty; wilds are never given).
        for v in range(NUMBERS):
            if hand[v] > 0:
                for r in range(n - 1):
                    row[lay[L_FOR_YOU] + v * (n - 1) + r] = 1
                    count += 1
    if count == 0:
        row[lay[L_PLAIN_PASS]] = 1  # RULES.md §1 [D]: no legal play and no number card to offer
        count = 1
    return count


# -- play -----------------------------------------------------------------------


@njit(cache=True, inline="always")
def _can_draw(st, t):
    if st.ndraw[t] > 0:
        return True
    for i in range(SUPPLY_SLOTS):
        if st.supply[t, i] >= 0:
            return True
    return False


@njit(cache=True, inline="always")
def _clear_offer(st, t):
    st.giver[t] = -1
    st.target[t] = -1
    st.offer_kind[t] = -1
    st.offer_size[t] = 0


@njit(cache=True, inline="always")
def _passed(st, t, seat):
    """`seat` passed (For You done, or plain pass); the turn moves on, maybe clearing the field."""
    n = st.sizes.shape[1]
    st.phase[t] = PLAY
    st.giver[t] = -1
    st.draws_owed[t] = 0
    nxt = (seat + 1) % n
    if st.field_count[t] > 0:
        st.passes[t] += 1
        if nxt == st.field_player[t]:
            # Everyone else passed since that play: the field clears and its player leads.
            st.field_count[t] = 0
            st.field_number[t] = 0
            st.passes[t] = 0
            st.field_player[t] = -1
    st.cur[t] = nxt


@njit(cache=True, _nrt=False)  # called, not inlined (it ends a round): see envs.vector
def _next_round_or_end(st, t, done, final_scores, final_ranks):
    n = st.sizes.shape[1]
    if st.rnd[t] >= st.rounds:
        done[t] = True
        for s in range(n):
            final_scores[t, s] = -st.penalties[t, s]
            rank = 1
            for o in range(n):
                rank += st.penalties[t, o] < st.penalties[t, s]  # lowest total penalty wins
            final_ranks[t, s] = rank
    else:
        _new_round(st, t)


@njit(cache=True, _nrt=False)  # called, not inlined (it ends a round): see envs.vector
def _end_round(st, t, went_out, rewards, done, final_scores, final_ranks):
    """RULES.md §1 Round end: (hand marks of the number cards) x (1 + wilds held) each."""
    n = st.sizes.shape[1]
    pen = st.work
    mean = 0.0
    for s in range(n):
        marks = 0
        for k in range(NUMBERS):
            marks += st.hands[t, s, k] * st.marks[k]
        pen[s] = marks * (1 + st.hands[t, s, WILD])
        st.penalties[t, s] += pen[s]
        mean -= pen[s]
    mean /= n
    for s in range(n):
        rewards[t, s] = -pen[s] - mean
    # Next start player: most penalty this round; ties go to the tied player nearest
    # clockwise after the player who went out (RULES.md §1 [D]).
    best = -1
    for r in range(n):
        s = (went_out + 1 + r) % n
        if best < 0 or pen[s] > pen[best]:
            best = s
    st.start[t] = best
    _next_round_or_end(st, t, done, final_scores, final_ranks)


@njit(cache=True, inline="always")
def _play(st, t, seat, number, cards, wilds, rewards, done, final_scores, final_ranks):
    n = st.sizes.shape[1]
    if cards > 0:
        st.hands[t, seat, number - 1] -= cards
        st.played[t, number - 1] += cards
    st.hands[t, seat, WILD] -= wilds
    st.played[t, WILD] += wilds
    st.sizes[t, seat] -= cards + wilds
    st.field_count[t] = cards + wilds
    st.field_number[t] = number
    st.field_player[t] = seat
    st.passes[t] = 0
    if st.sizes[t, seat] == 0:
        _end_round(st, t, seat, rewards, done, final_scores, final_ranks)
        return True
    st.cur[t] = (seat + 1) % n
    return False


@njit(cache=True, inline="always")
def _move(st, t, action, rewards, done, final_scores, final_ranks, scratch):
    """One table's move: a play, an offer, its answer, a draw or a pass."""
    n = st.sizes.shape[1]
    lay = st.layout
    seat = st.cur[t]
    st.round_steps[t] += 1
    scored = False
    if action < lay[L_FOR_YOU]:
        if action >= lay[L_WILDS]:
            number, cards, wilds = WILDS_ONLY, 0, action - lay[L_WILDS] + 1
        else:
            q, wilds = divmod(action, STEP)
            v, m = divmod(q, lay[L_COPIES])
            number, cards = v + 1, m + 1
        scored = _play(st, t, seat, number, cards, wilds, rewards, done, final_scores, final_ranks)
    elif action < lay[L_ACCEPT]:
        v, r = divmod(action - lay[L_FOR_YOU], n - 1)
        st.giver[t] = seat
        st.target[t] = (seat + r + 1) % n
        st.offer_kind[t] = v
        st.offer_size[t] = st.hands[t, seat, v]
        st.hands[t, seat, v] = 0
        st.sizes[t, seat] -= st.offer_size[t]
        st.phase[t] = ANSWER
        st.cur[t] = st.target[t]
    elif action == lay[L_ACCEPT]:
        giver, size = st.giver[t], st.offer_size[t]
        st.hands[t, seat, st.offer_kind[t]] += size
        st.sizes[t, seat] += size
        _clear_offer(st, t)
        if st.sizes[t, giver] == 0:
            # RULES.md §1 [D]: an accepted For You can empty a hand.
            _end_round(st, t, giver, rewards, done, final_scores, final_ranks)
            scored = True
        else:
            _passed(st, t, giver)
    elif action == lay[L_REFUSE]:
        giver = st.giver[t]
        st.hands[t, giver, st.offer_kind[t]] += st.offer_size[t]
        st.sizes[t, giver] += st.offer_size[t]
        st.draws_owed[t] = st.offer_size[t]
        _clear_offer(st, t)  # no offer is pending while the giver draws
        st.phase[t] = DRAW
        st.cur[t] = giver
        if not _can_draw(st, t):
            _passed(st, t, giver)
    elif action < lay[L_PLAIN_PASS]:
        if action == lay[L_DRAW_PILE]:
            st.ndraw[t] -= 1
            kind = st.draw[t, st.ndraw[t]]
        else:
            slot = action - lay[L_DRAW]
            kind = st.supply[t, slot]
            # A taken supply card is replaced from the draw pile at once.
            if st.ndraw[t] > 0:
                st.ndraw[t] -= 1
                st.supply[t, slot] = st.draw[t, st.ndraw[t]]
            else:
                st.supply[t, slot] = -1
        st.hands[t, seat, kind] += 1
        st.sizes[t, seat] += 1
        st.draws_owed[t] -= 1
        if st.draws_owed[t] == 0 or not _can_draw(st, t):
            _passed(st, t, seat)  # RULES.md §1 [D]: with supply and pile empty nothing more is drawn
    else:
        _passed(st, t, seat)
    if not scored and st.round_steps[t] >= st.max_steps:
        # RULES.md §1 [D]: the round ends with no penalties; the seat after its start player starts next.
        st.start[t] = (st.start[t] + 1) % n
        _next_round_or_end(st, t, done, final_scores, final_ranks)


@njit(cache=True, _nrt=False)  # no reference counting: see envs.vector
def step_rows(st, rows, actions, rewards, done, final_scores, final_ranks, scratch):
    loops.step_rows(st, rows, actions, rewards, done, final_scores, final_ranks, scratch, _move)


# -- views ----------------------------------------------------------------------


@njit(cache=True, inline="always")
def _public(st, t, seat, v, i):
    v[i] = st.field_count[t]
    v[i + 1] = st.field_number[t]
    v[i + 2] = st.passes[t]
    i += 3
    v[i : i + SUPPLY_SLOTS * NUM_KINDS] = 0
    for slot in range(SUPPLY_SLOTS):
        if st.supply[t, slot] >= 0:
            v[i + slot * NUM_KINDS + st.supply[t, slot]] = 1
    i += SUPPLY_SLOTS * NUM_KINDS
    v[i] = st.ndraw[t]
    v[i + 1] = st.rnd[t]
    v[i + 2] = st.rounds
    v[i + 3 : i + 6] = 0
    v[i + 3 + st.phase[t]] = 1
    i += 6
    v[i] = st.offer_size[t]
    # The number inside an offer only in the giver's own observation.
    v[i + 1] = st.offer_kind[t] + 1 if seat == st.giver[t] and st.offer_size[t] > 0 else 0
    v[i + 2] = st.draws_owed[t]
    i += 3
    for k in range(NUM_KINDS):
        v[i + k] = st.played[t, k]
    i += NUM_KINDS
    n = st.sizes.shape[1]
    for r in range(n):
        s = (seat + r) % n
        v[i] = st.sizes[t, s]
        v[i + 1] = st.penalties[t, s]
        v[i + 2] = s == st.field_player[t]
        v[i + 3] = s == st.giver[t]
        v[i + 4] = s == st.target[t]
        v[i + 5] = s == st.cur[t]
        i += SEAT_FIELDS


@njit(cache=True, _nrt=False)  # no reference counting: see envs.vector
def write_views(st, rows, seats, obs, mask, write_mask):
    """Observation of seats[i] at table rows[i]; with write_mask, the mask of the player to act."""
    loops.write_views(st, rows, seats, obs, mask, write_mask, NUM_KINDS, loops.hand_only, _public, _legal)


@njit(cache=True, inline="always")
def _hidden(st, t, v, i):
    i = loops.draw_counts(st, t, v, i)
    v[i] = st.offer_kind[t] + 1
    _public(st, t, 0, v, i + 1)


@njit(cache=True, _nrt=False)  # no reference counting: see envs.vector
def write_state(st, rows, out):
    """Every hand, the draw pile's counts, the kind on offer, player_0's public view."""
    loops.write_state(st, rows, out, NUM_KINDS, _hidden)


def scores(st: State) -> np.ndarray:
    return -st.penalties.astype(np.int64)


@njit(cache=True, inline="always")
def table_events(st, t):
    """`score_events` of one table, for compiled loops (`loops.play_out`)."""
    return np.int64(st.rnd[t])


def score_events(st: State, rows: np.ndarray) -> np.ndarray:
    """`VectorEnv.score_events`: a round scores when it ends (with no penalties when it is cut
    short), and the next one is dealt, so the rounds."""
    return st.rnd[rows].astype(np.int64)

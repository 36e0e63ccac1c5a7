"""Ma's Jong worlds that the whole round's public moves make likely, with the heuristic in the
other seats: chains of redeals that replay each seat's round (pimc's ``belief=history``).

A uniform redeal of the unseen cards ignores what the others did. When they play the
heuristic, which is deterministic, their moves say much about their hands: a seat discards the
card that keeps its hand closest (ties: the most live draws, then the most copies in sight),
always steals to win, and steals for a set only when that brings it closer. A hand is read by
its whole history, not only its last move: a set stolen late needs its two cards in the hand
from whenever they came, and each earlier discard was made with them held.

**The world.** The seat knows its own cards; the rest of the deck (its hidden cards) lies in the
other seats' *slots*: each seat's dealt hand (10 cards, 11 for the Ma) and one slot per draw it
made this round, in order; what is left is the draw pile. Every arrangement of the hidden cards
in these places is equally likely before anyone moves. Given an arrangement, each other seat's
hand at each of its moves follows from its slots and its public moves (the round's record,
``info["log"]``, `NotYourMasJong.public_log`), and so does the chance of each move under the
heuristic: 1 when the heuristic makes it, ``eps`` when it would make another (so a player that is
not the heuristic only tilts the belief), and ``e^VIOLATION`` where the arrangement cannot have
happened at all (a discard or a set card not held; a hand complete after a draw, which wins at
once). The belief is the prior times these chances.

**The chains.** `HistoryBelief` keeps ``chains`` arrangements and walks each by Metropolis
steps: a slot's card swapped with any other hidden card (another slot's or one of the pile),
chosen uniformly; the prior is uniform over arrangements, so each step is accepted with the
ratio of the two arrangements' chances, which only the one or two seats whose slots changed
need replaying for. The chains persist through the round: at each decision the record's new
moves are appended (a new draw slot takes the card its seat discards next when the hand lacks
it, else a card of the pile), a set card or a discard the hand cannot have held is brought into
the dealt hand by the best of the swaps that would do it, and then every chain takes
``sweeps`` steps per hidden slot. Each chain's hands and pile are one world for search.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from agents.heuristic.kernels.hand_distance import shanten, tables
from agents.heuristic.kernels.not_your_mas_jong import STEALS, _best_discard, _steal_or_pass
from envs.not_your_mas_jong import (A_PASS, A_STEAL_WIN, COPIES, HAND_SIZE, LOG_DISCARD, LOG_DRAW, LOG_LET_GO, LOG_SET,
                                    LOG_WIN, NUM_ACTIONS, NUM_TYPES, POW4, RANKS, SET_STEALS)

K_DRAW, K_DISCARD, K_STEAL = 0, 1, 2  # a seat's moves as the replay reads them
MUST_PASS, MUST_TAKE, MUST_NOT_WIN = 0, 1, 2  # what a seat's hidden steal decision is known to be
VIOLATION = -25.0  # log chance of a move the arrangement cannot have made
MAX_SLOTS = HAND_SIZE + 1 + 48  # a dealt hand and every draw a seat can make in a round
_POW4 = np.array(POW4, np.int64)
# the two hand cards of each set steal, as offsets from the stolen card (row: action - A_STEAL_WIN - 1)
SET_PAIRS = np.array([SET_STEALS[a] for a in range(A_STEAL_WIN + 1, NUM_ACTIONS)], np.int64)


@njit(cache=True, inline="always")
def _discard_of(hand, locked_sets, seen, add, dist, mask, unseen, each, after):
    """The heuristic's discard from `hand` (counts) with `locked_sets`, `seen` the copies on the table."""
    legal, first = 0, -1
    for k in range(NUM_TYPES):
        mask[0, k] = hand[k] > 0
        if hand[k] > 0:
            legal += 1
            first = k if first < 0 else first
        unseen[k] = max(0, COPIES - hand[k] - int(seen[k]))
    if legal <= 1:
        return first
    return _best_discard(mask, 0, hand, locked_sets, unseen, seen, add, dist, each, after)


@njit(cache=True, inline="always")
def _steal_of(hand, locked_sets, card, add, dist, mask, after):
    """The heuristic's steal decision on `card` with `hand`: A_STEAL_WIN, a set steal or A_PASS."""
    hand[card] += 1
    wins = shanten(hand, locked_sets, add, dist) == 0
    hand[card] -= 1
    if wins:
        return A_STEAL_WIN
    for a in range(NUM_ACTIONS):
        mask[0, a] = 0
    mask[0, A_PASS] = 1
    for j in range(4):
        a, first, second = STEALS[card, j, 0], STEALS[card, j, 1], STEALS[card, j, 2]
        if a < 0:
            break
        if (hand[first] >= 2) if first == second else (hand[first] >= 1 and hand[second] >= 1):
            mask[0, a] = 1
    return _steal_or_pass(mask, 0, hand, locked_sets, card, add, dist, after)


@njit(cache=True)
def replay(cards, c, q, init, kind, card, arg, action, locked, length, seen, eps_log, add, dist, hand, need):
    """Seat q's log chance of its moves in chain c's arrangement; `hand` ends as its hand now, and
    ``need[0]`` is the first card it had to give and did not hold (-1: none)."""
    need[0] = -1
    mask = np.zeros((1, NUM_ACTIONS), np.int8)
    unseen = np.zeros(NUM_TYPES, np.int64)
    each = np.zeros(NUM_TYPES, np.int64)
    after = np.zeros(NUM_TYPES, np.int64)
    for k in range(NUM_TYPES):
        hand[k] = 0
    for s in range(init[q]):
        hand[cards[c, q, s]] += 1
    ll = 0.0
    if init[q] == HAND_SIZE + 1 and shanten(hand, 0, add, dist) == 0:
        ll += VIOLATION  # a Ma dealt a complete hand wins before anyone moves
    for j in range(length[q]):
        k, x, held = kind[q, j], card[q, j], locked[q, j]
        if k == K_DRAW:
            hand[cards[c, q, arg[q, j]]] += 1
            if shanten(hand, held, add, dist) == 0:
                ll += VIOLATION  # complete after a draw: it would have won at once
        elif k == K_DISCARD:
            if hand[x] == 0:
                ll += VIOLATION
                need[0] = x if need[0] < 0 else need[0]
                continue
            if _discard_of(hand, held, seen[arg[q, j]], add, dist, mask, unseen, each, after) != x:
                ll += eps_log
            hand[x] -= 1
        else:
            a = _steal_of(hand, held, x, add, dist, mask, after)
            code = arg[q, j]
            if code == MUST_PASS:
                fits = a == A_PASS
            elif code == MUST_NOT_WIN:
                fits = a != A_STEAL_WIN
            else:
                fits = a == action[q, j]
                for i in range(2):
                    y = x + SET_PAIRS[action[q, j] - A_STEAL_WIN - 1, i]
                    if hand[y] > 0:
                        hand[y] -= 1
                    else:
                        ll += VIOLATION
                        need[0] = y if need[0] < 0 else need[0]
            if not fits:
                ll += eps_log
    return ll


@njit(cache=True, inline="always")
def _random_card(counts):
    """A card of the multiset `counts`, uniformly by copies (-1 when empty)."""
    total = 0
    for k in range(NUM_TYPES):
        total += counts[k]
    if total == 0:
        return -1
    u = np.random.randint(total)
    for k in range(NUM_TYPES):
        if u < counts[k]:
            return k
        u -= counts[k]
    return -1


@njit(cache=True)
def place(cards, pool, seat, init, old, new, kind, card, arg, action, length, seed):
    """Give every chain's new slots (seat q's slots ``old[q]`` to ``new[q] - 1``) a card from its
    pile: a draw slot the card its seat discards next when the hand lacks it, a dealt slot a card
    that a discard or set steal of the seat needs and no earlier slot gave; the rest at random."""
    np.random.seed(seed)
    hand = np.zeros(NUM_TYPES, np.int64)
    for c in range(cards.shape[0]):
        for q in range(cards.shape[1]):
            if q == seat or new[q] == old[q]:
                continue
            for k in range(NUM_TYPES):
                hand[k] = 0
            dealt = min(old[q], init[q])  # dealt slots already given
            for s in range(dealt):
                hand[cards[c, q, s]] += 1
            for j in range(length[q]):
                k, x = kind[q, j], card[q, j]
                if k == K_DRAW:
                    s = arg[q, j]
                    if s >= old[q]:
                        y = -1
                        if j + 1 < length[q] and kind[q, j + 1] == K_DISCARD:
                            x = card[q, j + 1]
                            if hand[x] == 0 and pool[c, x] > 0:
                                y = x
                        if y < 0:
                            y = _random_card(pool[c])
                        cards[c, q, s] = y
                        pool[c, y] -= 1
                    hand[cards[c, q, s]] += 1
                    continue
                wanted = 1
                if k == K_STEAL:
                    if arg[q, j] != MUST_TAKE:
                        continue
                    wanted = 2
                for i in range(wanted):
                    y = x if k == K_DISCARD else x + SET_PAIRS[action[q, j] - A_STEAL_WIN - 1, i]
                    if hand[y] == 0 and dealt < init[q] and pool[c, y] > 0:
                        cards[c, q, dealt] = y
                        pool[c, y] -= 1
                        hand[y] += 1
                        dealt += 1
                    if hand[y] > 0:
                        hand[y] -= 1
            while dealt < init[q]:
                y = _random_card(pool[c])
                cards[c, q, dealt] = y
                pool[c, y] -= 1
                dealt += 1


@njit(cache=True)
def withdraw(cards, pool, seat, slots, card, seed):
    """The seat drew `card`: every chain gives up a copy, from its pile, else from a slot that held
    it (which takes a card of the pile instead)."""
    np.random.seed(seed)
    for c in range(cards.shape[0]):
        if pool[c, card] > 0:
            pool[c, card] -= 1
            continue
        for q in range(cards.shape[1]):
            if q == seat:
                continue
            for s in range(slots[q]):
                if cards[c, q, s] == card:
                    y = _random_card(pool[c])
                    cards[c, q, s] = y
                    pool[c, y] -= 1
                    break
            else:
                continue
            break


@njit(cache=True)
def mend(cards, pool, ll, seat, init, kind, card, arg, action, locked, length, seen, eps_log, add, dist):
    """Where a chain's seat lacks a card its moves need (a set steal's or a discard's card), try
    each swap of a dealt slot with a copy of that card from the pile and keep the best, if it is
    better: so chains follow a new move at once, which random Metropolis steps would find only
    rarely."""
    hand = np.zeros(NUM_TYPES, np.int64)
    need = np.zeros(1, np.int64)
    for c in range(cards.shape[0]):
        for q in range(cards.shape[1]):
            if q == seat:
                continue
            for _ in range(3):  # a set steal may need two cards
                if ll[c, q] > VIOLATION / 2:
                    break
                replay(cards, c, q, init, kind, card, arg, action, locked, length, seen, eps_log, add, dist, hand, need)
                y = need[0]
                if y < 0 or pool[c, y] == 0:
                    break
                best, best_ll = -1, ll[c, q]
                for s in range(init[q]):
                    x = cards[c, q, s]
                    if x == y:
                        continue
                    cards[c, q, s] = y
                    v = replay(cards, c, q, init, kind, card, arg, action, locked, length, seen, eps_log, add, dist,
                               hand, need)
                    cards[c, q, s] = x
                    if v > best_ll:
                        best, best_ll = s, v
                if best < 0:
                    break
                pool[c, cards[c, q, best]] += 1
                pool[c, y] -= 1
                cards[c, q, best] = y
                ll[c, q] = best_ll


@njit(cache=True)
def walk(cards, pool, ll, seat, init, slots, kind, card, arg, action, locked, length, seen, eps_log, add, dist,
         steps, seed):
    """`steps` Metropolis steps per chain (module docstring). Returns the steps accepted."""
    np.random.seed(seed)
    n = cards.shape[1]
    hand = np.zeros(NUM_TYPES, np.int64)
    need = np.zeros(1, np.int64)
    total = 0
    for q in range(n):
        if q != seat:
            total += slots[q]
    accepted = 0
    for c in range(cards.shape[0]):
        piled = 0
        for k in range(NUM_TYPES):
            piled += pool[c, k]
        if total == 0:
            continue
        for _ in range(steps):
            # a: a slot, uniformly; b: any other hidden place, uniformly (a slot or a card of the pile)
            a = np.random.randint(total)
            q, i = 0, a
            while q == seat or i >= slots[q]:
                if q != seat:
                    i -= slots[q]
                q += 1
            b = np.random.randint(total + piled - 1)
            if b >= a:
                b += 1
            x = cards[c, q, i]
            if b < total:
                r, j = 0, b
                while r == seat or j >= slots[r]:
                    if r != seat:
                        j -= slots[r]
                    r += 1
                y = cards[c, r, j]
                if x == y:
                    continue
                cards[c, q, i], cards[c, r, j] = y, x
                vq = replay(cards, c, q, init, kind, card, arg, action, locked, length, seen, eps_log, add, dist, hand, need)
                vr = vq if r == q else replay(cards, c, r, init, kind, card, arg, action, locked, length, seen,
                                              eps_log, add, dist, hand, need)
                gain = vq - ll[c, q] + (0.0 if r == q else vr - ll[c, r])
                if np.log(np.random.random()) < gain:
                    ll[c, q], ll[c, r] = vq, vr
                    accepted += 1
                else:
                    cards[c, q, i], cards[c, r, j] = x, y
                continue
            u = b - total
            y = 0
            while u >= pool[c, y]:
                u -= pool[c, y]
                y += 1
            if x == y:
                continue
            cards[c, q, i] = y
            vq = replay(cards, c, q, init, kind, card, arg, action, locked, length, seen, eps_log, add, dist, hand,
                        need)
            if np.log(np.random.random()) < vq - ll[c, q]:
                pool[c, y] -= 1
                pool[c, x] += 1
                ll[c, q] = vq
                accepted += 1
            else:
                cards[c, q, i] = x
    return accepted


@njit(cache=True)
def score(cards, ll, seat, init, kind, card, arg, action, locked, length, seen, eps_log, add, dist, hands):
    """Every chain's log chance per seat (into `ll`) and each other seat's hand now (into `hands`)."""
    need = np.zeros(1, np.int64)
    for c in range(cards.shape[0]):
        for q in range(cards.shape[1]):
            if q != seat:
                ll[c, q] = replay(cards, c, q, init, kind, card, arg, action, locked, length, seen, eps_log, add, dist,
                                  hands[c, q], need)


@njit(cache=True)
def fill_rows(st, rows, seat, hands, pool, chosen, seed):
    """Table `rows[i]` takes chain `chosen[i]`: the other seats' hands and a shuffled pile of its
    cards. Returns -1, or the first row whose hand sizes or pile size do not match."""
    np.random.seed(seed)
    n = st.hands.shape[1]
    for i in range(rows.size):
        t, p = rows[i], chosen[i]
        size = 0
        for k in range(NUM_TYPES):
            size += pool[p, k]
        if size != st.ndraw[t]:
            return i
        for q in range(n):
            if q == seat:
                continue
            held = 0
            for k in range(NUM_TYPES):
                held += hands[p, q, k]
            if held != st.sizes[t, q]:
                return i
            for s in range(st.codes.shape[2]):
                st.codes[t, q, s] = 0
            for k in range(NUM_TYPES):
                st.hands[t, q, k] = hands[p, q, k]
                st.codes[t, q, k // RANKS] += hands[p, q, k] * _POW4[k % RANKS]
        j = 0
        for k in range(NUM_TYPES):
            for _ in range(pool[p, k]):
                st.draw[t, j] = k
                j += 1
        for j in range(size - 1, 0, -1):
            r = np.random.randint(j + 1)
            st.draw[t, j], st.draw[t, r] = st.draw[t, r], st.draw[t, j]
    return -1


class HistoryBelief:
    """One seat's chains over one round at a time (module docstring): `update` reads the
    information state's record; `fill_rows` is pimc's ``adjust`` hook."""

    def __init__(self, num_players: int, chains: int = 32, eps: float = 0.01, sweeps: float = 4.0,
                 seed: int = 0) -> None:
        if not 0 < eps < 1:
            raise ValueError(f"belief=history: eps must be in (0, 1), got {eps}")
        self.n, self.chains, self.eps_log, self.sweeps = num_players, chains, float(np.log(eps)), sweeps
        self.rng = np.random.default_rng(seed)
        self.add, self.dist = tables()
        self.read: list | None = None  # the record read so far (this round's)
        self.round: tuple | None = None
        self.rounds = self.steps = self.accepted = 0

    def _seed(self) -> int:
        return int(self.rng.integers(2**31))

    def update(self, info: dict) -> None:
        """Read the record's new moves and walk the chains."""
        log = info.get("log")
        if log is None:
            raise ValueError("belief=history needs the information state's round record (info['log']); "
                             "this game keeps none")
        if info["options"].get("rules", "standard") != "standard":
            raise ValueError("belief=history reads rounds of the standard game only (its hand size and deal)")
        log = [tuple(move) for move in log]
        rep, seat = info["representative"], int(info["seat"])
        round_ = (rep["round"], rep["ma"], tuple(rep["tokens"]))  # tokens move only when a round ends
        if self.read is not None and round_ == self.round and log == self.read:
            return
        fresh = self.read is None or round_ != self.round or log[: len(self.read)] != self.read
        old = np.zeros(self.n, np.int64) if fresh else self.slots.copy()
        before = None if fresh else self.hidden
        self._moves(log, rep, seat)
        if before is not None:  # the seat's own draws since: those cards are no longer hidden
            for k in np.flatnonzero(before > self.hidden):
                for _ in range(before[k] - self.hidden[k]):
                    withdraw(self.cards, self.pool, seat, old, int(k), self._seed())
        if fresh:
            self.round, self.rounds = round_, self.rounds + 1
            self.cards = np.zeros((self.chains, self.n, MAX_SLOTS), np.int64)
            self.pool = np.tile(self.hidden, (self.chains, 1))
            self.ll = np.zeros((self.chains, self.n))
        self.read = log
        args = (self.kind, self.card, self.arg, self.action, self.locked, self.length, self.seen, self.eps_log,
                self.add, self.dist)
        place(self.cards, self.pool, seat, self.init, old, self.slots, self.kind, self.card, self.arg, self.action,
              self.length, self._seed())
        self.hands = np.zeros((self.chains, self.n, NUM_TYPES), np.int64)
        score(self.cards, self.ll, seat, self.init, *args, self.hands)
        mend(self.cards, self.pool, self.ll, seat, self.init, *args)
        steps = int(self.sweeps * sum(self.slots[q] for q in range(self.n) if q != seat))
        self.accepted += walk(self.cards, self.pool, self.ll, seat, self.init, self.slots, *args, steps, self._seed())
        self.steps += steps * self.chains
        score(self.cards, self.ll, seat, self.init, *args, self.hands)

    def log_chance(self, info: dict, dealt: list, draws: list) -> np.ndarray:
        """Each other seat's log chance of its moves in `info`'s record (this belief's model) when
        the round was dealt `dealt` (per seat, a list of cards) and each seat drew `draws[seat]`
        (cards, in order): 0 where the heuristic made every move; the seat's own entry is 0."""
        seat = int(info["seat"])
        self._moves([tuple(m) for m in info["log"]], info["representative"], seat)
        cards = np.zeros((1, self.n, MAX_SLOTS), np.int64)
        for q in range(self.n):
            if q != seat:
                placed = list(dealt[q]) + list(draws[q])
                if len(placed) != self.slots[q]:
                    raise ValueError(f"log_chance: seat {q} has {self.slots[q]} slots in the record, {len(placed)} cards given")
                cards[0, q, : len(placed)] = placed
        ll = np.zeros((1, self.n))
        score(cards, ll, seat, self.init, self.kind, self.card, self.arg, self.action, self.locked, self.length,
              self.seen, self.eps_log, self.add, self.dist, np.zeros((1, self.n, NUM_TYPES), np.int64))
        return ll[0]

    def _moves(self, log: list, rep: dict, seat: int) -> None:
        """The record as each other seat's moves in order (`replay`'s arrays), and the hidden cards."""
        n = self.n
        ma = int(rep["ma"])
        self.init = np.array([HAND_SIZE + (q == ma) if q != seat else 0 for q in range(n)], np.int64)
        own = np.array(rep["hands"][seat], np.int64)  # back to the seat's dealt hand, its draws kept aside
        drawn = np.zeros(NUM_TYPES, np.int64)
        moves: list[list[tuple]] = [[] for _ in range(n)]
        seen, rows = np.zeros(NUM_TYPES, np.float32), []
        locked, draws = [0] * n, [0] * n
        last = None
        for move in log:
            kind, s, c, a = move
            if kind == LOG_DRAW:
                if s == seat:
                    own[c] -= 1
                    drawn[c] += 1
                else:
                    moves[s].append((K_DRAW, -1, self.init[s] + draws[s], -1, locked[s]))
                    draws[s] += 1
            elif kind == LOG_DISCARD:
                if s == seat:
                    own[c] += 1
                else:
                    moves[s].append((K_DISCARD, c, len(rows), -1, locked[s]))
                    rows.append(seen.copy())
                seen[c] += 1
            elif kind in (LOG_LET_GO, LOG_SET):
                # asked in order after the discarder: before a set stealer each passed, after it
                # none claimed a win (a win comes first); a discard let go, everyone passed
                discarder = s if kind == LOG_LET_GO else last[1]
                for r in range(1, n):
                    q = (discarder + r) % n
                    if kind == LOG_SET and q == s:
                        for o in SET_STEALS[a]:
                            seen[c + o] += 1
                            if q == seat:
                                own[c + o] += 1
                        if q != seat:
                            moves[q].append((K_STEAL, c, MUST_TAKE, a, locked[q]))
                        locked[q] += 1
                    elif q != seat:
                        after = kind == LOG_SET and r > (s - discarder) % n
                        moves[q].append((K_STEAL, c, MUST_NOT_WIN if after else MUST_PASS, -1, locked[q]))
            elif kind == LOG_WIN:
                break
            last = move
        self.hidden = COPIES - own - drawn
        if self.hidden.min() < 0:
            raise ValueError("belief=history: the record does not fit the seat's hand")
        width = max(1, max(len(m) for m in moves))
        fields = np.full((5, n, width), -1, np.int64)
        for q in range(n):
            for j, move in enumerate(moves[q]):
                fields[:, q, j] = move
        self.kind, self.card, self.arg, self.action, self.locked = fields
        self.length = np.array([len(m) for m in moves], np.int64)
        self.slots = self.init + np.array(draws, np.int64)
        self.seen = np.array(rows, np.float32).reshape(-1, NUM_TYPES) if rows else np.zeros((1, NUM_TYPES), np.float32)

    def fill_rows(self, venv, rows: np.ndarray, info: dict, rng: np.random.Generator) -> None:
        """pimc's ``adjust``: the worlds in tables `rows` become chains, in a random order (each
        chain once before any twice)."""
        self.update(info)
        others = [q for q in range(self.n) if q != info["seat"]]
        whole = np.flatnonzero((self.ll[:, others] > VIOLATION / 2).all(axis=1))  # chains that can have happened
        self.whole = whole.size
        if whole.size == 0:
            return  # none yet: the uniform worlds stay
        count = len(rows)
        chosen = np.concatenate([rng.permutation(whole) for _ in range(-(-count // whole.size))])[:count]
        bad = fill_rows(venv._st, np.asarray(rows, np.int64), int(info["seat"]), self.hands, self.pool,
                        chosen.astype(np.int64), int(rng.integers(2**31)))
        if bad >= 0:
            raise RuntimeError(f"belief=history: a chain does not fit the table it was drawn for (row {bad})")
        venv.views(rows)

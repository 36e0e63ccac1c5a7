"""Not Your Ma's Jong rules engine — docs/RULES.md §4. No PettingZoo here; see `envs/not_your_mas_jong_v0.py`.

Draw and discard to build three sets and a pair (11 cards, locked sets
included). Any discard may be stolen to win or to complete a set, which skips
the players in between. The winner of a round is paid in tokens; most tokens
after 8 rounds (4 players) / 9 rounds (3 players) wins.

The hand checker is a table lookup: suits never mix in a set, so a hand is
complete exactly when every suit splits into sets and exactly one suit into
sets plus a pair. Each suit's five counts (0..3) are kept as one base-4 code,
and `SUIT_STATUS[code]` says which of the two shapes that suit has.
"""

from __future__ import annotations

import numpy as np

from envs.engine import (
    Bounds,
    Engine,
    ScoreEvent,
    check_deal_keys,
    plain_words,
    kind_counts,
    parse_hands,
    shuffled,
    shuffled_hidden_pool,
)
from envs.small import stacked_deals

# -- cards ------------------------------------------------------------------------
# Card type k = 5 * suit + (rank - 1); the observation's hand counts use this order.
SUITS = ("Red", "Blue", "Green", "Seasons", "Emotions")
RANKS = 5
NUM_TYPES = 25
COPIES = 3
# RULES.md [D]: the Seasons and Emotions cards are named by this project.
CARD_NAMES = (
    tuple(f"{s} {r}" for s in ("Red", "Blue", "Green") for r in range(1, 6))
    + ("Spring", "Summer", "Autumn", "Winter", "Solstice")
    + ("Love", "Joy", "Anger", "Sorrow", "Fear")
)
DECK = tuple(k for k in range(NUM_TYPES) for _ in range(COPIES))  # 75 cards

TOKENS = 10
HAND_SIZE = 10  # the Ma gets one more
ROUND_LIMIT = {3: 9, 4: 8}
HAND_MAX = 11  # concealed cards: the Ma's deal, or a hand right after a draw
RESULT_NAMES = ("none", "win by draw", "win by steal", "exhausted")  # codes of infos["result"]
MAX_EXTRA_ROUNDS = 3
# The small preset (rules="small", RULES.md "Not Your Ma's Jong, small preset"): two players, one
# round, no tie-break; Red 1-3 three times each and Red 4 twice (11 cards); hands of 4 (the Ma 5),
# a winning hand of one set and a pair, a draw pile of 2; a deal that gives the Ma a complete hand
# is dealt again. Small enough to solve exactly (experiments.solve), with the observation layout
# and actions of the game.
SMALL_DECK = (0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3)
SMALL_HAND_SIZE = 4
PRESETS = ("standard", "small")

# -- actions ----------------------------------------------------------------------
# 0..24 discard card type k; then pass, steal to win, and the four set steals.
A_PASS = 25
A_STEAL_WIN = 26
A_STEAL_IDENTICAL = 27
A_STEAL_LOWEST = 28  # the stolen card is the lowest of a sequence (needs rank+1, rank+2)
A_STEAL_MIDDLE = 29
A_STEAL_HIGHEST = 30
NUM_ACTIONS = 31
STEAL_NAMES = ("pass", "steal win", "steal identical", "steal as lowest", "steal as middle", "steal as highest")
# RULES.md §4, Stealing: each set steal and the two cards it takes from the hand, as rank
# offsets from the discard (same suit). The one statement of the set-steal shapes.
SET_STEALS = {
    A_STEAL_IDENTICAL: (0, 0),
    A_STEAL_LOWEST: (1, 2),
    A_STEAL_MIDDLE: (-1, 1),
    A_STEAL_HIGHEST: (-2, -1),
}
# For each card type: (action, hand card, hand card) of the set steals that fit inside its suit.
SET_STEAL_CARDS = tuple(
    tuple(
        (a, k + o1, k + o2)
        for a, (o1, o2) in SET_STEALS.items()
        if 0 <= k % RANKS + o1 < RANKS and 0 <= k % RANKS + o2 < RANKS
    )
    for k in range(NUM_TYPES)
)


def holds_set_steal(hand, first: int, second: int) -> bool:
    """Does a hand (counts per card type) hold the two cards a set steal takes from it?"""
    return hand[first] >= 2 if first == second else hand[first] >= 1 and hand[second] >= 1

_ONE_IF_HELD = bytes([0, 1, 1, 1]) + bytes(252)  # bytes.translate table: count -> 0/1
_NO_STEALS = bytes(NUM_ACTIONS - NUM_TYPES)

# Phases
DISCARD, STEAL = 0, 1
# The kinds of move in a round's public record (`NotYourMasJong.public_log`).
LOG_KINDS = ("draw", "discard", "let go", "set steal", "win by steal")
LOG_DRAW, LOG_DISCARD, LOG_LET_GO, LOG_SET, LOG_WIN = range(len(LOG_KINDS))
STEAL_PHASES = ("every_player", "eligible")  # the `steal_phase` rule option

# -- observation layout (seat-relative; seat r is r seats after the observer) ------
OBS_HAND = 0  # 25 counts: own concealed hand
OBS_DISCARD = 25  # 25: one-hot of the discard waiting for steal decisions (steal phase only)
OBS_PHASE = 50  # 0 = discard phase, 1 = steal decision
OBS_ROUND = 51  # round number, 1-based
OBS_DRAW_PILE = 52  # cards left in the draw pile
OBS_SEATS = 53  # then one block of SEAT_BLOCK values per seat r = 0 .. n-1
SEAT_DISCARDS = 0  # 25 counts: that seat's discard pile
SEAT_LOCKED = 25  # 25 counts: cards in that seat's locked sets
SEAT_TOKENS = 50
SEAT_HAND_SIZE = 51  # concealed cards held
SEAT_IS_MA = 52
SEAT_DISCARDER = 53  # made the discard now waiting for steal decisions
SEAT_BLOCK = 54


def parse_card(card) -> int:
    """Card notation: "Red 3" (also "R3", "red3"), "Blue 1" / "B1", "Green 5" / "G5",
    "Spring" … "Solstice", "Love" … "Fear", and "Seasons 2" / "Emotions 4" by rank."""
    if not isinstance(card, str):
        raise TypeError(card)
    return _NAME_TO_TYPE[" ".join(card.strip().lower().split())]


def _names() -> dict[str, int]:
    names = {name.lower(): k for k, name in enumerate(CARD_NAMES)}
    for s, suit in enumerate(SUITS):
        for r in range(1, RANKS + 1):
            k = 5 * s + r - 1
            names[f"{suit.lower()} {r}"] = k
            names[f"{suit.lower()}{r}"] = k
            if s < 3:
                names[f"{suit[0].lower()}{r}"] = k
    return names


_NAME_TO_TYPE = _names()


# -- the hand checker ---------------------------------------------------------------
POW4 = tuple(4**r for r in range(RANKS))
_POW4 = np.array(POW4, np.int64)
SETS_ONLY, SETS_AND_PAIR, NO_SHAPE = 0, 1, 9  # a complete hand's suit statuses sum to exactly 1


def _splits(counts: tuple[int, ...], need_pair: bool) -> bool:
    """Can one suit's counts be split into sets (and one pair if need_pair)? Plain search."""
    i = next((r for r, c in enumerate(counts) if c), None)
    if i is None:
        return not need_pair
    c = list(counts)
    if c[i] >= 3:
        c[i] -= 3
        if _splits(tuple(c), need_pair):
            return True
        c[i] += 3
    if need_pair and c[i] >= 2:
        c[i] -= 2
        if _splits(tuple(c), False):
            return True
        c[i] += 2
    # The lowest card left, if not in an identical set or the pair, must start a sequence.
    if i + 2 < len(c) and c[i + 1] and c[i + 2]:
        c[i] -= 1
        c[i + 1] -= 1
        c[i + 2] -= 1
        return _splits(tuple(c), need_pair)
    return False


def _suit_status_table() -> tuple[int, ...]:
    table = []
    for code in range(4**RANKS):
        counts = tuple((code // POW4[r]) % 4 for r in range(RANKS))
        size = sum(counts)
        if size % 3 == 0 and _splits(counts, False):
            table.append(SETS_ONLY)
        elif size % 3 == 2 and _splits(counts, True):
            table.append(SETS_AND_PAIR)
        else:
            table.append(NO_SHAPE)
    return tuple(table)


SUIT_STATUS = _suit_status_table()


def suit_codes(counts) -> list[int]:
    """Base-4 code of each suit's five counts."""
    c = [int(x) for x in counts]
    return [c[i] + 4 * c[i + 1] + 16 * c[i + 2] + 64 * c[i + 3] + 256 * c[i + 4] for i in (0, 5, 10, 15, 20)]


def is_complete_concealed(counts) -> bool:
    """Do these concealed counts (25 values) split into sets plus exactly one pair?

    Locked sets are already sets, so a hand is a winning hand exactly when its
    concealed part passes this test (RULES.md §4: three sets and a pair, 11 cards,
    counting locked sets)."""
    return sum(SUIT_STATUS[c] for c in suit_codes(counts)) == 1


class NotYourMasJong(Engine):
    game_name = "not_your_mas_jong"
    display_name = "Not Your Ma's Jong"
    deck = DECK
    card_names = dict(enumerate(CARD_NAMES))
    # Only a player holding a legal steal may be asked about a discard (steal_phase="eligible"),
    # so who decides on a steal is kept from the others, whatever the option.
    secret_actions = frozenset(range(A_PASS, NUM_ACTIONS))
    OBS_PARTS = {"hand": OBS_HAND, "discard": OBS_DISCARD, "phase": OBS_PHASE, "round": OBS_ROUND,
                 "draw_pile": OBS_DRAW_PILE, "seats": OBS_SEATS}
    SEAT_PARTS = {"discards": SEAT_DISCARDS, "locked": SEAT_LOCKED, "tokens": SEAT_TOKENS,
                  "hand_size": SEAT_HAND_SIZE, "is_ma": SEAT_IS_MA, "discarder": SEAT_DISCARDER}
    SEAT_BLOCK = SEAT_BLOCK
    min_players, max_players, default_players = 3, 4, 4
    PRESET_PLAYERS = {"small": 2}
    # RULES.md §4 fixes tokens (10), hand sizes and the round limits. Who is asked for a steal
    # decision is this project's choice (see the shim's page, "Turn order and steal decisions").
    OPTIONS = {
        "steal_phase": (
            "every_player",
            lambda v: isinstance(v, str) and v in STEAL_PHASES,
            "'every_player' (every other player decides on every discard) or 'eligible' "
            "(only players holding a legal steal are asked; faster, but who is asked tells about their hands)",
        ),
        "rules": ("standard", lambda v: isinstance(v, str) and v in PRESETS,
                  "'standard' (RULES.md §4) or 'small' (two players, one round, 11 cards; "
                  "RULES.md \"Not Your Ma's Jong, small preset\")"),
    }
    num_actions = NUM_ACTIONS

    def __init__(self, num_players: int | None = None, **rule_options) -> None:
        super().__init__(num_players, **rule_options)
        n = self.num_players
        self.obs_size = OBS_SEATS + SEAT_BLOCK * n
        # state: every hand (absolute seats), the draw pile's counts, the public
        # block seen by player_0, each seat's pending steal claim, the seat to act.
        self.state_size = NUM_TYPES * n + NUM_TYPES + (self.obs_size - OBS_DISCARD) + 2 * n
        if self.options["rules"] == "small":
            self.deck, self.hand_size, self.round_limit, self.extra_rounds = SMALL_DECK, SMALL_HAND_SIZE, 1, 0
            self.redeal = True  # a deal that gives the Ma a complete hand is dealt again
        else:
            self.redeal = False
            self.deck, self.hand_size, self.round_limit, self.extra_rounds = DECK, HAND_SIZE, ROUND_LIMIT[n], MAX_EXTRA_ROUNDS
        self.ask_everyone = self.options["steal_phase"] == "every_player"
        self.set_bounds()

    INFO_SEATS = frozenset({"winner", "ma", "then_winner", "then_ma"})
    INFO_CODES = {"result": RESULT_NAMES, "then_result": RESULT_NAMES}
    conserves = "transfer"
    hidden_decisions = "the steal decisions on one discard, resolved together when all are in"
    # The game in progress (Engine.STATE_FIELDS); `hands`, `draw` and the others' `claims` are what
    # shuffle_hidden and hide_decisions redeal or forget. `table` is the public part of the
    # observation, per seat; the hand checker's suit codes are rebuilt from the hands (`refresh`).
    STATE_FIELDS = ("tokens", "out", "game_over", "round", "ma", "final_round", "hands", "hand_sizes", "table",
                    "locked_sets", "discard_piles", "phase", "current_discard", "discarder", "to_ask", "claims", "draw",
                    "current_player", "_pending_event", "passed_on")

    @property
    def max_game_length(self) -> int:
        # Per round at most every draw-pile card drawn and discarded, each discard answered by
        # the n-1 others, plus at most 3 set steals (each with its own discard) per player;
        # at most 9 + 3 rounds.
        n = self.num_players
        return 12 * (len(self.deck) + 3 * n + 1) * n

    def hidden_decision_key(self):
        if self.phase != 1 or self.game_over:
            return None
        return (self.round, self.discarder, self.current_discard, len(self.draw), sum(map(len, self.discard_piles)))

    def info_defaults(self) -> dict:
        # The round that ended: its number, result code (RESULT_NAMES), winner and Ma
        # (seats, -1 = none). When the next Ma wins on the deal in the same step,
        # the then_* keys describe that second round; otherwise they are absent.
        one = {"round": 0, "result": 0, "winner": -1, "ma": -1}
        return {**one, **{f"then_{k}": v for k, v in one.items()}}

    def event_sentence(self, details: dict) -> str:
        d = {**self.info_defaults(), **details}
        sentence = self._round_sentence(d["round"], d["result"], d["winner"], d["ma"])
        if d["then_result"]:  # the next Ma won on the deal in the same step
            sentence += " " + self._round_sentence(d["then_round"], d["then_result"], d["then_winner"], d["then_ma"])
        return sentence

    @staticmethod
    def _round_sentence(round_: int, result: int, winner: int, ma: int) -> str:
        name = RESULT_NAMES[result]
        if name == "exhausted":
            return f"Round {round_}: the draw pile ran out, no winner and no payment (Ma player_{ma})."
        return f"Round {round_}: player_{winner} won by {name[len('win by '):]} (Ma player_{ma})."

    def _bounds(self) -> tuple[Bounds, Bounds]:
        n = self.num_players
        tokens = TOKENS * n  # tokens only move between players
        deal = self.hand_size * n + 1
        public = Bounds().flags(NUM_TYPES).flags().add(1, self.round_limit + self.extra_rounds).add(0, len(self.deck) - deal)
        for _ in range(n):
            public.add(0, COPIES, 2 * NUM_TYPES).add(0, tokens).add(0, HAND_MAX).flags(2)
        obs = Bounds().add(0, COPIES, NUM_TYPES).extend(public.low, public.high)
        state = Bounds().add(0, COPIES, NUM_TYPES * (n + 1)).extend(public.low, public.high)
        state.add(-1, NUM_ACTIONS - A_PASS - 1, n).flags(n)
        return obs, state

    # -- set-up ------------------------------------------------------------------
    def reset(self, rng: np.random.Generator, deal: dict | None = None) -> None:
        n = self.num_players
        self.rng = rng
        self.tokens = [TOKENS] * n
        self.out = [False] * n
        self.game_over = False
        self.round = 0
        self.ma = 0  # RULES.md [D]: player_0 is the Ma of round 1
        self.final_round: int | None = None  # the round at which the game reached its end, before any tie-break
        # A Ma dealt a complete hand wins before anyone acts; reset() cannot
        # report it, so the event is handed out by the first step().
        self._pending_event = self._new_round(deal)

    @property
    def scores(self) -> list[int]:
        return self.tokens

    def _new_round(self, deal: dict | None = None) -> ScoreEvent | None:
        n = self.num_players
        self.round += 1
        self.round_log = []
        self.hands = [[0] * NUM_TYPES for _ in range(n)]
        self.codes = [[0] * len(SUITS) for _ in range(n)]
        self.hand_sizes = [0] * n
        # The public table: one observation block per seat (absolute order), kept
        # up to date as cards move so that observe() only has to rotate it.
        self.table = np.zeros((n, SEAT_BLOCK), np.float32)
        self.table[:, SEAT_TOKENS] = self.tokens
        self.table[self.ma, SEAT_IS_MA] = 1
        self.locked_sets: list[list[tuple[int, int, int]]] = [[] for _ in range(n)]
        self.discard_piles: list[list[int]] = [[] for _ in range(n)]
        self.phase = DISCARD
        self.current_discard = -1
        self.discarder = -1
        self.to_ask: list[int] = []  # seats still to decide on the current discard
        self.claims = [-1] * n  # steal decision per seat on the current discard (hidden)
        # Public: per seat, the discards nobody stole since its hand last changed (it let each
        # go with this very hand). Search's belief reads it (a heuristic always steals to win).
        self.passed_on: list[list[int]] = [[] for _ in range(n)]
        if deal is None:
            deal = self.chance_deal()  # a deal given by take_chance, else None: from the stream
        if deal is None:
            while True:
                order = shuffled(self.deck, self.rng)
                for s in range(n):
                    size = self.hand_size + (1 if s == self.ma else 0)
                    for c in order[-size:]:
                        self._give(s, c)
                    del order[-size:]
                if not (self.redeal and self._complete(self.ma)):
                    break
                # The small preset deals again when the Ma's hand is complete: a one-round game
                # would otherwise end before anyone acts.
                for s in range(n):
                    for c in range(NUM_TYPES):
                        while self.hands[s][c]:
                            self._take(s, c)
            self.draw = order  # top of the pile is the end of the list
        else:
            self._stacked_deal(deal)
            if self.redeal and self._complete(self.ma):
                raise ValueError(f"{self.game_name}: rules='small' never deals the Ma a complete hand; "
                                 f"this deal does ({', '.join(self.hand_names(self.ma))})")
        self.current_player = self.ma
        self._mask = None
        if self._complete(self.ma):
            # RULES.md [D]: a Ma dealt a complete hand wins at once, as a win by draw.
            return self._win(self.ma, by="draw")
        return None

    def _stacked_deal(self, deal: dict) -> None:
        g = self.game_name
        n = self.num_players
        check_deal_keys(deal, {"hands", "draw_pile"}, g)
        sizes = self._hand_sizes_dealt()
        parsed = parse_hands(
            deal,
            sizes,
            parse_card,
            g,
            size_rule=lambda seat, size: ("the Ma's hand" if seat == self.ma else "every other hand") + f" has {size}",
            seat_note=" (player_0 is the Ma)",
        )
        self.give_stacked_deal(deal, parsed, parse_card, lambda k: CARD_NAMES[k])

    def _hand_sizes_dealt(self) -> list[int]:
        return [self.hand_size + (1 if i == self.ma else 0) for i in range(self.num_players)]

    def deal_parts(self) -> tuple[list[int], list[tuple[str, list[int] | int]]]:
        return list(self.deck), [("hands", self._hand_sizes_dealt())]

    def deals(self) -> list[tuple[float, dict]]:
        """Every first deal of the small preset with its probability, as stacked deals (``reset(rng,
        deal=...)``): the two hands, less those that give the Ma a complete hand (dealt again);
        every draw from the pile is a chance event of its own. For exact solving (experiments.solve)."""
        if self.options["rules"] != "small":
            raise ValueError("not_your_mas_jong: deals() lists the first deals of rules='small' only")
        out = []
        for p, d in stacked_deals(self.deck, [self.hand_size + 1, self.hand_size], lambda k: CARD_NAMES[k]):
            ma = [0] * NUM_TYPES
            for card in d["hands"][0]:
                ma[parse_card(card)] += 1
            if not is_complete_concealed(ma):
                out.append((p, d))
        total = sum(p for p, _ in out)
        return [(p / total, d) for p, d in out]

    def _give(self, seat: int, card: int) -> None:
        self.hands[seat][card] += 1
        self.codes[seat][card // 5] += POW4[card % 5]
        self.hand_sizes[seat] += 1

    def _take(self, seat: int, card: int) -> None:
        self.hands[seat][card] -= 1
        self.codes[seat][card // 5] -= POW4[card % 5]
        self.hand_sizes[seat] -= 1

    # -- the hand checker on live hands ----------------------------------------------
    def _complete(self, seat: int) -> bool:
        c = self.codes[seat]
        return SUIT_STATUS[c[0]] + SUIT_STATUS[c[1]] + SUIT_STATUS[c[2]] + SUIT_STATUS[c[3]] + SUIT_STATUS[c[4]] == 1

    def _complete_with(self, seat: int, card: int) -> bool:
        c = self.codes[seat]
        code = c[card // 5]
        st = SUIT_STATUS
        return st[c[0]] + st[c[1]] + st[c[2]] + st[c[3]] + st[c[4]] - st[code] + st[code + POW4[card % 5]] == 1

    def steal_options(self, seat: int, card: int) -> list[int]:
        """Legal steal actions (besides pass) of `seat` on `card` (RULES.md §4, Stealing)."""
        hand = self.hands[seat]
        options = [A_STEAL_WIN] if self._complete_with(seat, card) else []
        options += [a for a, i, j in SET_STEAL_CARDS[card] if holds_set_steal(hand, i, j)]
        return options

    def _can_steal(self, seat: int, card: int) -> bool:
        hand = self.hands[seat]
        for _, i, j in SET_STEAL_CARDS[card]:
            if holds_set_steal(hand, i, j):
                return True
        return self._complete_with(seat, card)

    # -- legality ------------------------------------------------------------------
    def legal_mask(self) -> np.ndarray:
        if self._mask is None:
            mask = np.zeros(NUM_ACTIONS, np.int8)
            seat = self.current_player
            if self.game_over:
                pass
            elif self.phase == DISCARD:
                mask = np.frombuffer(bytearray(bytes(self.hands[seat]).translate(_ONE_IF_HELD) + _NO_STEALS), np.int8)
            else:
                mask[A_PASS] = 1
                for a in self.steal_options(seat, self.current_discard):
                    mask[a] = 1
            self._mask = mask
        return self._mask

    # -- play ----------------------------------------------------------------------
    def step(self, action: int) -> ScoreEvent | None:
        event = self._step(action)
        if self._pending_event is not None:
            event = _merge(self._pending_event, event)
            self._pending_event = None
        return event

    def _step(self, action: int) -> ScoreEvent | None:
        self._mask = None
        seat = self.current_player
        if self.phase == DISCARD:
            return self._discard(seat, action)
        self.claims[seat] = action
        if self.to_ask:
            self.current_player = self.to_ask.pop(0)
            return None
        return self._resolve_steals()

    def _discard(self, seat: int, card: int) -> ScoreEvent | None:
        self._log(LOG_DISCARD, seat, card)
        self._take(seat, card)
        self.passed_on[seat] = []
        self.table[seat, SEAT_DISCARDS + card] += 1
        self.discard_piles[seat].append(card)
        n = self.num_players
        # Seat order after the discarder. Asking only the players who hold a legal steal would
        # tell everyone, through who is asked, something about their hands; "every_player" asks
        # all, with a pass-only mask for those who cannot steal.
        if self.ask_everyone:
            asked = [s % n for s in range(seat + 1, seat + n)]
        else:
            asked = [s % n for s in range(seat + 1, seat + n) if self._can_steal(s % n, card)]
        if not asked:
            self._log(LOG_LET_GO, seat, card)
            self._let_go(seat, card)
            return self._next_turn(seat)
        self.phase = STEAL
        self.current_discard = card
        self.discarder = seat
        self.table[seat, SEAT_DISCARDER] = 1
        self.claims = [-1] * n
        self.current_player = asked[0]
        self.to_ask = asked[1:]
        return None

    def _resolve_steals(self) -> ScoreEvent | None:
        n = self.num_players
        card, discarder = self.current_discard, self.discarder
        order = [(discarder + r) % n for r in range(1, n)]
        claims = self.claims
        # Claims are checked again here so that a hand redealt by shuffle_hidden
        # can never make an illegal steal happen.
        winners = [s for s in order if claims[s] > A_PASS and self._complete_with(s, card)]
        self.phase = DISCARD
        self.current_discard = -1
        self.table[discarder, SEAT_DISCARDER] = 0
        self.discarder = -1
        self.claims = [-1] * n
        self.to_ask = []
        if winners:
            # RULES.md [D]: a steal that completes the hand is a win by steal however it
            # was claimed; it beats set steals; the nearest after the discarder wins.
            w = winners[0]
            self._log(LOG_WIN, w, card)
            self._steal_card(discarder, card)
            self._give(w, card)
            return self._win(w, by="steal")
        setters = [s for s in order if claims[s] > A_STEAL_WIN and claims[s] in self.steal_options(s, card)]
        if not setters:
            self._log(LOG_LET_GO, discarder, card)
            self._let_go(discarder, card)
            return self._next_turn(discarder)
        s = setters[0]
        self._log(LOG_SET, s, card, claims[s])
        self.passed_on[s] = []
        self._steal_card(discarder, card)
        o1, o2 = SET_STEALS[claims[s]]
        from_hand = (card + o1, card + o2)
        cards = tuple(sorted((card, *from_hand)))
        for c in from_hand:
            self._take(s, c)
        for c in cards:
            self.table[s, SEAT_LOCKED + c] += 1
        self.locked_sets[s].append(cards)
        # The stealer discards next; the players in between are skipped.
        self.current_player = s
        return None

    # -- the round's public record ----------------------------------------------------
    round_log: list | None = None  # none in a world built from fields: nothing reads its log

    def _log(self, kind: int, seat: int, card: int, action: int = -1) -> None:
        if self.round_log is not None:
            self.round_log.append((kind, seat, card, action))

    def public_log(self, seat: int) -> list[tuple[int, int, int, int]] | None:
        """This round's moves as `seat` saw them, in order: ``(kind, seat, card, action)`` rows,
        kinds `LOG_KINDS`; a draw's card is -1 unless `seat` drew it. Steal decisions show only
        as their outcome (a set locked, a win, or the discard let go by everyone), as at the
        table. Search's filtered belief reads it (`agents.heuristic.kernels.mas_jong_filter`)."""
        if self.round_log is None:
            return None
        return [(k, s, c if k != LOG_DRAW or s == seat else -1, a) for k, s, c, a in self.round_log]

    def _let_go(self, discarder: int, card: int) -> None:
        """Nobody stole `card`: every other seat let it go with the hand it holds."""
        for s in range(self.num_players):
            if s != discarder:
                self.passed_on[s].append(card)

    def _steal_card(self, discarder: int, card: int) -> None:
        self.table[discarder, SEAT_DISCARDS + card] -= 1
        self.discard_piles[discarder].pop()

    def _next_turn(self, seat: int) -> ScoreEvent | None:
        p = (seat + 1) % self.num_players
        if not self.draw:
            # RULES.md [D]: an empty draw pile ends the round with no winner and no payment.
            return self._end_round({"round": self.round, "result": RESULT_NAMES.index("exhausted"), "winner": -1, "ma": self.ma}, [0] * self.num_players)
        card = self.chance_draw(self.draw)
        self._give(p, card)
        self._log(LOG_DRAW, p, card)
        self.passed_on[p] = []
        self.current_player = p
        self.phase = DISCARD
        if self._complete(p):
            # RULES.md [D]: a complete hand right after drawing wins at once.
            return self._win(p, by="draw")
        return None

    def _win(self, winner: int, by: str) -> ScoreEvent:
        n = self.num_players
        ma = self.ma
        deltas = [0] * n
        for s in range(n):
            if s == winner:
                continue
            if winner == ma:
                owed = 4 if by == "draw" else 2
            elif s == ma:
                owed = 4 if by == "draw" else 2
            else:
                owed = 2 if by == "draw" else 1
            # RULES.md [D]: a player who cannot pay in full pays what they have.
            paid = min(owed, self.tokens[s])
            deltas[s] -= paid
            deltas[winner] += paid
        for s in range(n):
            self.tokens[s] += deltas[s]
        self.table[:, SEAT_TOKENS] = self.tokens
        details = {"round": self.round, "result": RESULT_NAMES.index(f"win by {by}"), "winner": winner, "ma": ma}
        return self._end_round(details, deltas)

    def _end_round(self, details: dict, deltas: list[int]) -> ScoreEvent:
        n = self.num_players
        event = ScoreEvent(deltas, [True] * n, details)
        tokens = self.tokens
        if self.final_round is None and (min(tokens) == 0 or self.round >= self.round_limit):
            # RULES.md: the game ends when a player has no tokens or at the round limit.
            self.final_round = self.round
        # RULES.md [D]: however it ended, tied leaders play up to 3 extra rounds, all seated (a
        # player with no tokens too, paying what it has: nothing), then the tie stands.
        if self.final_round is not None and (
            tokens.count(max(tokens)) == 1 or self.round >= self.final_round + self.extra_rounds
        ):
            self.game_over = True
            self.current_player = -1
            self.phase = DISCARD
            self._mask = None
            return event
        self.ma = (self.ma + 1) % n
        nxt = self._new_round()
        return _merge(event, nxt)

    # -- views -------------------------------------------------------------------
    def _public_into(self, out: np.ndarray, seat: int) -> None:
        """Write everything `seat` may see except its own hand (observation index 25 on)."""
        n = self.num_players
        out[: OBS_PHASE - OBS_DISCARD] = 0
        if self.phase == STEAL:
            out[self.current_discard] = 1
            out[OBS_PHASE - OBS_DISCARD] = 1
        else:
            out[OBS_PHASE - OBS_DISCARD] = 0
        out[OBS_ROUND - OBS_DISCARD] = self.round
        out[OBS_DRAW_PILE - OBS_DISCARD] = len(self.draw)
        table = self.table
        table[:, SEAT_HAND_SIZE] = self.hand_sizes
        flat = table.ravel()
        # Seat-relative order is a rotation of the absolute table.
        cut = SEAT_BLOCK * seat
        rest = SEAT_BLOCK * n - cut
        base = OBS_SEATS - OBS_DISCARD
        out[base : base + rest] = flat[cut:]
        out[base + rest :] = flat[:cut]

    def observe(self, seat: int) -> np.ndarray:
        obs = np.empty(self.obs_size, np.float32)
        obs[:NUM_TYPES] = self.hands[seat]
        self._public_into(obs[NUM_TYPES:], seat)
        return obs

    def state(self) -> np.ndarray:
        n = self.num_players
        draw_counts = kind_counts(self.draw, NUM_TYPES)
        hands = [c for h in self.hands for c in h]
        to_act = [1 if s == self.current_player else 0 for s in range(n)]
        claims = [c - A_PASS if c >= 0 else -1 for c in self.claims]
        out = np.empty(self.state_size, np.float32)
        head = NUM_TYPES * (n + 1)
        out[:head] = hands + draw_counts
        self._public_into(out[head : head + self.obs_size - OBS_DISCARD], 0)
        out[head + self.obs_size - OBS_DISCARD :] = claims + to_act
        return out

    def card_places(self) -> dict[str, list[int]]:
        places = {}
        for s in range(self.num_players):
            places[f"hand {s}"] = [k for k in range(NUM_TYPES) for _ in range(self.hands[s][k])]
            places[f"locked {s}"] = [c for cards in self.locked_sets[s] for c in cards]
            places[f"discards {s}"] = list(self.discard_piles[s])
        places["draw_pile"] = list(self.draw)
        return places

    def hide_decisions(self, seat: int) -> None:
        # The others' steal decisions on this discard are hidden until resolved: forgotten here
        # (-1, as if not yet asked), so a sampled world treats them as passes (docs/search.md).
        self.claims = [c if s == seat else -1 for s, c in enumerate(self.claims)]

    def refresh(self) -> None:
        super().refresh()
        # Each suit's base-4 code: the hand's counts by suit and rank, times 4**rank.
        self.codes = (np.array(self.hands, np.int64).reshape(self.num_players, len(SUITS), RANKS) @ _POW4).tolist()
        self.table[:, SEAT_HAND_SIZE] = self.hand_sizes

    def shuffle_hidden(self, seat: int, rng: np.random.Generator) -> None:
        n = self.num_players
        others = [s for s in range(n) if s != seat]
        pool = shuffled_hidden_pool(self.draw, self.hands, others, rng)
        for s in others:
            size = self.hand_sizes[s]
            self.hands[s] = [0] * NUM_TYPES
            self.codes[s] = [0] * len(SUITS)
            self.hand_sizes[s] = 0
            for k in pool[:size]:
                self._give(s, k)
            pool = pool[size:]
        self.draw = pool
        if self.phase == STEAL and not self.ask_everyone:
            # Who is still to be asked depends on the redealt hands.
            card = self.current_discard
            after = [(self.current_player + r) % n for r in range(1, n)]
            after = after[: after.index(self.discarder)] if self.discarder in after else after
            self.to_ask = [s for s in after if self._can_steal(s, card)]
        self._mask = None

    def action_name(self, action: int, seat: int) -> str:
        if action < NUM_TYPES:
            return f"discard {CARD_NAMES[action]}"
        return STEAL_NAMES[action - A_PASS]

    def explain_action(self, action: int, seat: int) -> str:
        if action < NUM_TYPES:
            return f"discard {CARD_NAMES[action]}; every other player may then steal it"
        card = CARD_NAMES[self.current_discard]
        if action == A_PASS:
            return f"let player_{self.discarder}'s {card} go"
        if action == A_STEAL_WIN:
            return f"steal player_{self.discarder}'s {card} to complete your winning hand: you win the round"
        shape = {A_STEAL_IDENTICAL: "three of a kind", A_STEAL_LOWEST: "a sequence, as its lowest card",
                 A_STEAL_MIDDLE: "a sequence, as its middle card", A_STEAL_HIGHEST: "a sequence, as its highest card"}[action]
        return (f"steal player_{self.discarder}'s {card} to lock a set with two of your cards ({shape}); "
                f"you then discard, and the players between you and player_{self.discarder} are skipped")

    def public_action_name(self, action: int, seat: int) -> str:
        # RULES.md [D]: steal decisions are made without seeing the others'; the
        # outcome shows when the steal is resolved (a locked set, a win, or the next draw).
        return "decides on the steal" if action >= A_PASS else self.action_name(action, seat)

    def view(self, seat: int) -> str:
        """The table as `seat` sees it: own hand, everyone's locked sets, discards and tokens."""
        n = self.num_players
        extra = self._extra_round_note()
        lines = [f"Not Your Ma's Jong round {self.round}{extra}: Ma player_{self.ma}, draw pile {len(self.draw)}; you are player_{seat}"]
        if self.phase == STEAL and not self.game_over:
            lines.append(f"  discard up for stealing: {CARD_NAMES[self.current_discard]} from player_{self.discarder}")
        for r in range(n):
            s = (seat + r) % n
            locked = ["/".join(CARD_NAMES[c] for c in cards) for cards in self.locked_sets[s]]
            hand = plain_words(self.hand_names(s)) if s == seat else f"{self.hand_sizes[s]} cards"
            lines.append(
                f"  player_{s}: tokens {self.tokens[s]}, hand {hand}; locked {plain_words(locked)}; "
                f"discards {plain_words([CARD_NAMES[c] for c in self.discard_piles[s]])}"
            )
        return "\n".join(lines)

    def _extra_round_note(self) -> str:
        past = self.round - self.final_round if self.final_round is not None else 0
        return f" (extra round {past})" if past > 0 else ""

    def hand_names(self, seat: int) -> list[str]:
        return [CARD_NAMES[k] for k in range(NUM_TYPES) for _ in range(self.hands[seat][k])]

    def render(self) -> str:
        extra = self._extra_round_note()
        lines = [f"Not Your Ma's Jong round {self.round}{extra}: Ma player_{self.ma}, draw pile {len(self.draw)}"]
        if self.phase == STEAL and not self.game_over:
            lines.append(f"  discard up for stealing: {CARD_NAMES[self.current_discard]} from player_{self.discarder}")
        for s in range(self.num_players):
            mark = ">" if s == self.current_player and not self.game_over else " "
            locked = ["/".join(CARD_NAMES[c] for c in cards) for cards in self.locked_sets[s]]
            lines.append(
                f"{mark} player_{s}: tokens {self.tokens[s]}, hand {plain_words(self.hand_names(s))}; "
                f"locked {plain_words(locked)}; discards {plain_words([CARD_NAMES[c] for c in self.discard_piles[s]])}"
            )
        if self.game_over:
            ranks = self.ranks()
            lines.append("  game over: " + ", ".join(f"player_{s} rank {ranks[s]}" for s in range(self.num_players)))
        return "\n".join(lines)


def _merge(first: ScoreEvent | None, second: ScoreEvent | None) -> ScoreEvent | None:
    """One step can end a round and see the next Ma win on the deal: report both as one event."""
    if first is None or second is None:
        return first or second
    deltas = [a + b for a, b in zip(first.deltas, second.deltas)]
    return ScoreEvent(deltas, first.players, {**first.details, **{f"then_{k}": v for k, v in second.details.items()}})

"""Not For Me (ノットフォーミー) rules engine — docs/RULES.md §1. No PettingZoo here; see `envs/not_for_me_v0.py`.

A climbing / shedding game where "pass" is replaced by For You: a player who
does not play offers all their cards of one number, face down, to another
player, who answers Accept or Not For Me without seeing them. The first player
with an empty hand goes out; the others take penalty points.

Card kinds are 0..5 for the numbers 1..6 and 6 for a wild (`WILD`). Hands are
lists of 7 counts. Layout constants (`OBS_*`, `SEAT_*`, `ActionLayout`) are
exported so that agents can decode their own observation.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from envs.engine import (Bounds, Engine, ScoreEvent, check_against_deck, check_deal_keys, is_int_between,
                         kind_counts, parse_cards, parse_hands, plain_words, shuffled)
from envs.small import stacked_deals

NUMBERS = 6
WILD = 6  # card kind of a wild
NUM_KINDS = 7
NUM_WILDS = 5
WILDS_ONLY = 7  # RULES.md [D]: a play made only of wilds counts as that many 7s
HAND_SIZE = 8
SUPPLY_SLOTS = 3
KIND_NAMES = ("1", "2", "3", "4", "5", "6", "W")
# The small preset (rules="small", RULES.md "Not For Me, small preset"): two players, one round,
# numbers 1 to 3 twice each and one wild (7 cards), hands of 2, one supply card and a draw pile
# of 2: small enough to solve exactly (experiments.solve), with the same observation layout and
# actions as the two-player game.
SMALL_DECK = (0, 0, 1, 1, 2, 2, WILD)
SMALL_HAND_SIZE = 2
SMALL_SUPPLY = 1
PRESETS = ("standard", "small")

# Phases: whose decision the current player makes.
PLAY, ANSWER, DRAW = 0, 1, 2
PHASE_NAMES = ("play", "answer", "draw")


def copies_per_number(num_players: int) -> int:
    """RULES.md §1: 10 of each number; 3 players remove 2 of each, 2 players 3."""
    return {2: 7, 3: 8}.get(num_players, 10)


def make_deck(num_players: int) -> tuple[int, ...]:
    c = copies_per_number(num_players)
    return tuple(k for k in range(NUMBERS) for _ in range(c)) + (WILD,) * NUM_WILDS


def parse_card(card) -> int:
    """Card notation: "1".."6" (or the integers 1..6) and "W" / "wild" for a wild."""
    if isinstance(card, (int, np.integer)) and not isinstance(card, bool):
        if not 1 <= card <= NUMBERS:
            raise ValueError(card)
        return int(card) - 1
    if not isinstance(card, str):
        raise TypeError(card)
    key = card.strip().lower()
    if key in ("w", "wild"):
        return WILD
    if key in ("1", "2", "3", "4", "5", "6"):
        return int(key) - 1
    raise ValueError(card)


class ActionLayout(NamedTuple):
    """Where each kind of action starts in the fixed Discrete space (depends on the player count).

    play m cards of number v plus w wilds: ``play + ((v-1)*copies + (m-1))*(NUM_WILDS+1) + w``
    play k wilds (as k 7s):               ``wilds + k - 1``
    For You, number v to the seat r clockwise: ``for_you + (v-1)*(n-1) + (r-1)``
    then ``accept``, ``refuse`` (Not For Me), ``draw`` + slot (0..2), ``draw_pile``, ``plain_pass``.
    """

    num_players: int
    copies: int
    play: int
    wilds: int
    for_you: int
    accept: int
    refuse: int
    draw: int
    draw_pile: int
    plain_pass: int
    size: int

    @classmethod
    def for_players(cls, n: int) -> "ActionLayout":
        c = copies_per_number(n)
        wilds = NUMBERS * c * (NUM_WILDS + 1)
        for_you = wilds + NUM_WILDS
        accept = for_you + NUMBERS * (n - 1)
        return cls(n, c, 0, wilds, for_you, accept, accept + 1, accept + 2, accept + 5, accept + 6, accept + 7)

    def play_action(self, number: int, cards: int, wilds: int) -> int:
        """Play `cards` number cards of `number` (1..6) joined by `wilds` wilds."""
        return ((number - 1) * self.copies + cards - 1) * (NUM_WILDS + 1) + wilds

    def wilds_action(self, k: int) -> int:
        return self.wilds + k - 1

    def for_you_action(self, number: int, rel_target: int) -> int:
        return self.for_you + (number - 1) * (self.num_players - 1) + rel_target - 1

    def decode_play(self, action: int) -> tuple[int, int, int]:
        """(number, number cards, wilds) of a play action; number 7 for wilds only."""
        if action >= self.wilds:
            return WILDS_ONLY, 0, action - self.wilds + 1
        q, w = divmod(action, NUM_WILDS + 1)
        v, m = divmod(q, self.copies)
        return v + 1, m + 1, w


# Observation layout (seat-relative), see the shim docstring for the table.
OBS_HAND = 0  # 7 counts: numbers 1..6, wilds
OBS_FIELD_COUNT = 7
OBS_FIELD_NUMBER = 8  # 1..6, 7 for wilds only, 0 when the field is empty
OBS_PASSES = 9
OBS_SUPPLY = 10  # 3 slots x 7 one-hot kinds (all zero: empty slot)
OBS_DRAW_PILE = 31
OBS_ROUND = 32
OBS_ROUNDS = 33
OBS_PHASE = 34  # 3 one-hot: play, answer, draw
OBS_OFFER_SIZE = 37
OBS_OFFER_NUMBER = 38  # only in the giver's own observation
OBS_DRAWS_OWED = 39
OBS_PLAYED = 40  # 7 counts of cards played this round
OBS_SEATS = 47
SEAT_FIELDS = 6
SEAT_HAND, SEAT_PENALTY, SEAT_FIELD_PLAYER, SEAT_GIVER, SEAT_TARGET, SEAT_TO_ACT = range(SEAT_FIELDS)

_ONE_HOT = [[0] * NUM_KINDS] + [[1 if j == k else 0 for j in range(NUM_KINDS)] for k in range(NUM_KINDS)]
_PHASE_HOT = ([1, 0, 0], [0, 1, 0], [0, 0, 1])


# Bounds keep penalty totals (at most ~50 cards x 10 marks x 6 x 100 rounds) inside the Box.
MAX_MARK, MAX_ROUNDS, MAX_ROUND_STEPS = 10, 100, 100_000


def _is_marks(x) -> bool:
    return isinstance(x, (list, tuple)) and len(x) == NUMBERS and all(is_int_between(m, 0, MAX_MARK) for m in x)


def _is_rounds(x) -> bool:
    return is_int_between(x, 1, MAX_ROUNDS)


def _is_round_steps(x) -> bool:
    return is_int_between(x, 1, MAX_ROUND_STEPS)


_PLAYS: dict[tuple, list[int]] = {}  # memo of _number_plays; bounded by the few values each key takes


def _number_plays(copies: int, v: int, held: int, wilds: int, c: int, more: bool, size: int) -> list[int]:
    """Legal plays of number v: `more` = empty field or v below the field number, else v above it."""
    step = NUM_WILDS + 1
    base = (v - 1) * copies * step
    low, high = (c + 1, held + wilds) if more else (c, c)
    out = []
    for k in range(max(low, 1), high + 1):
        for w in range(max(0, k - held), min(wilds, k - 1) + 1):
            if w and k == size:
                continue  # you cannot go out on a wild
            out.append(base + (k - w - 1) * step + w)
    return out


class NotForMe(Engine):
    game_name = "not_for_me"
    display_name = "Not For Me"
    card_names = dict(enumerate(KIND_NAMES))
    OBS_PARTS = {"hand": OBS_HAND, "field_count": OBS_FIELD_COUNT, "field_number": OBS_FIELD_NUMBER,
                 "passes": OBS_PASSES, "supply": OBS_SUPPLY, "draw_pile": OBS_DRAW_PILE, "round": OBS_ROUND,
                 "rounds": OBS_ROUNDS, "phase": OBS_PHASE, "offer_size": OBS_OFFER_SIZE,
                 "offer_number": OBS_OFFER_NUMBER, "draws_owed": OBS_DRAWS_OWED, "played": OBS_PLAYED,
                 "seats": OBS_SEATS}
    SEAT_PARTS = {"hand": SEAT_HAND, "penalty": SEAT_PENALTY, "field_player": SEAT_FIELD_PLAYER,
                  "giver": SEAT_GIVER, "target": SEAT_TARGET, "to_act": SEAT_TO_ACT}
    SEAT_BLOCK = SEAT_FIELDS
    min_players, max_players, default_players = 2, 5, 4
    PRESET_PLAYERS = {"small": 2}
    OPTIONS = {
        "hand_marks": (
            (1,) * NUMBERS,
            _is_marks,
            f"a list of 6 integers from 0 to {MAX_MARK}: the hand marks of one card of 1, 2, ..., 6",
        ),
        "rounds": (None, _is_rounds, f"an integer from 1 to {MAX_ROUNDS} (default: the number of players)"),
        "max_round_steps": (2000, _is_round_steps, f"an integer from 1 to {MAX_ROUND_STEPS} (agent steps per round)"),
        "rules": ("standard", lambda v: isinstance(v, str) and v in PRESETS,
                  "'standard' (RULES.md §1) or 'small' (two players, one round, 7 cards; RULES.md \"Not For Me, small preset\")"),
    }

    def default_for(self, name: str):
        if name == "rounds":
            return self.num_players  # RULES.md: one round per player by default
        return super().default_for(name)

    def __init__(self, num_players: int | None = None, **rule_options) -> None:
        super().__init__(num_players, **rule_options)
        n = self.num_players
        self.hand_marks = tuple(int(m) for m in self.options["hand_marks"])
        self.options["hand_marks"] = self.hand_marks
        self.rounds = int(self.options["rounds"])
        self.max_round_steps = int(self.options["max_round_steps"])
        self.deck = make_deck(n)
        self.hand_size, self.supply_size = HAND_SIZE, SUPPLY_SLOTS
        if self.options["rules"] == "small":
            if rule_options.get("rounds", 1) != 1:
                raise ValueError(f"not_for_me: rules='small' plays one round, got rounds={rule_options['rounds']}")
            self.options["rounds"] = self.rounds = 1
            self.deck, self.hand_size, self.supply_size = SMALL_DECK, SMALL_HAND_SIZE, SMALL_SUPPLY
        self.layout = ActionLayout.for_players(n)
        self.num_actions = self.layout.size
        self.obs_size = OBS_SEATS + SEAT_FIELDS * n
        self.state_size = NUM_KINDS * n + NUM_KINDS + 1 + self.obs_size - NUM_KINDS
        # For You actions per number kind (one per target seat), for the mask.
        first = [self.layout.for_you_action(v, 1) for v in range(1, NUMBERS + 1)]
        self._offers = [list(range(f, f + n - 1)) for f in first]
        self._seat_order = [[(seat + r) % n for r in range(n)] for seat in range(n)]  # seat-relative views
        self.out = [False] * n
        self.set_bounds()

    def _bounds(self) -> tuple[Bounds, Bounds]:
        n, c, deck = self.num_players, copies_per_number(self.num_players), len(self.deck)
        counts = [c] * NUMBERS + [NUM_WILDS]
        # A round's penalty is at most every number card's marks times (1 + every wild).
        worst_round = c * sum(self.hand_marks) * (1 + NUM_WILDS)
        public = (
            Bounds()
            .add(0, c + NUM_WILDS)  # field count
            .add(0, WILDS_ONLY)  # field number
            .add(0, n - 1)  # passes since the field's play
            .flags(3 * NUM_KINDS)  # supply
            .add(0, deck)  # draw pile
            .add(1, self.rounds)
            .add(self.rounds, self.rounds)
            .flags(3)  # phase
            .add(0, c)  # offer size
            .add(0, NUMBERS)  # offer number
            .add(0, c)  # draws owed
            .extend([0] * NUM_KINDS, counts)  # played this round
        )
        for _ in range(n):
            public.add(0, deck).add(0, self.rounds * worst_round).flags(4)
        obs = Bounds().extend([0] * NUM_KINDS, counts).extend(public.low, public.high)
        state = Bounds()
        for _ in range(n + 1):  # every hand, then the draw pile
            state.extend([0] * NUM_KINDS, counts)
        state.add(0, NUMBERS).extend(public.low, public.high)
        return obs, state

    INFO_SEATS = frozenset({"went_out"})
    conserves = "penalty"
    # The game in progress (Engine.STATE_FIELDS); `hands` and `draw` are what shuffle_hidden redeals.
    STATE_FIELDS = ("out", "penalties", "game_over", "round", "start_player", "round_steps", "hands", "hand_sizes",
                    "played", "field_count", "field_number", "field_player", "passes", "phase", "giver", "target",
                    "offer_kind", "offer_size", "draws_owed", "supply", "draw", "current_player")

    @property
    def max_game_length(self) -> int:
        # Every round ends by max_round_steps steps (docs/RULES.md §1).
        return self.rounds * (self.max_round_steps + 1)

    def info_defaults(self) -> dict:
        # round: 1-based; went_out: seat (-1 = none); round_penalties: per seat;
        # round_truncated: 1 when the round hit max_round_steps with nobody out.
        return {"round": 0, "went_out": -1, "round_penalties": [0] * self.num_players, "round_truncated": 0}

    def event_sentence(self, details: dict) -> str:
        d = {**self.info_defaults(), **details}
        if d["round_truncated"] or d["went_out"] < 0:
            return f"Round {d['round']} hit its step limit with nobody out: no penalty points."
        pens = [f"player_{s} {p}" for s, p in enumerate(d["round_penalties"]) if p]
        took = f"penalty points: {', '.join(pens)}" if pens else "nobody took penalty points"
        return f"Round {d['round']}: player_{d['went_out']} went out; {took}."

    # -- set-up --------------------------------------------------------------
    def reset(self, rng: np.random.Generator, deal: dict | None = None) -> None:
        n = self.num_players
        self.rng = rng
        self.penalties = [0] * n
        self.game_over = False
        self.round = 0
        self.start_player = 0  # RULES.md [D]: player_0 starts round 1
        self._new_round(deal)

    @property
    def scores(self) -> list[int]:
        return [-p for p in self.penalties]

    def _new_round(self, deal: dict | None = None) -> None:
        n = self.num_players
        self.round += 1
        self.round_steps = 0
        self.hands = [[0] * NUM_KINDS for _ in range(n)]
        self.hand_sizes = [self.hand_size] * n
        self.played = [0] * NUM_KINDS
        self.field_count = 0  # 0: the field is empty
        self.field_number = 0
        self.field_player = -1
        self.passes = 0
        self.phase = PLAY
        self.giver = -1
        self.target = -1
        self.offer_kind = -1
        self.offer_size = 0
        self.draws_owed = 0
        if deal is None:
            deal = self.chance_deal()  # a deal given by take_chance, else None: from the stream
        if deal is None:
            order = shuffled(self.deck, self.rng)
            h, k = self.hand_size, self.supply_size
            for s in range(n):
                for c in order[s * h : (s + 1) * h]:
                    self.hands[s][c] += 1
            rest = order[n * h :]
            self.supply = rest[:k] + [-1] * (SUPPLY_SLOTS - k)  # -1: an empty slot (the small preset has one card)
            self.draw = rest[k:]  # top of the pile is the end of the list
        else:
            self._stacked_deal(deal)
        self.current_player = self.start_player
        self._mask = None

    def deal_parts(self) -> tuple[list[int], list[tuple[str, list[int] | int]]]:
        return list(self.deck), [("hands", [self.hand_size] * self.num_players), ("supply", self.supply_size)]

    def deals(self) -> list[tuple[float, dict]]:
        """Every first deal of the small preset with its probability, as stacked deals (``reset(rng,
        deal=...)``): two hands and the supply; the draw pile's order is no part of a deal, as every
        draw from it is a chance event of its own. For exact solving (experiments.solve)."""
        if self.options["rules"] != "small":
            raise ValueError("not_for_me: deals() lists the first deals of rules='small' only")
        sizes = [self.hand_size] * self.num_players + [self.supply_size]
        return [(p, {"hands": d["hands"][:-1], "supply": d["hands"][-1], "draw_pile": d["draw_pile"]})
                for p, d in stacked_deals(self.deck, sizes, lambda k: KIND_NAMES[k])]

    def _stacked_deal(self, deal: dict) -> None:
        g, n = self.game_name, self.num_players
        check_deal_keys(deal, {"hands", "supply", "draw_pile"}, g)
        parsed = parse_hands(deal, [self.hand_size] * n, parse_card, g)
        slots = self.supply_size
        supply = None
        if "supply" in deal:
            supply = parse_cards(deal["supply"], parse_card, "supply", g)
            if len(supply) != slots:
                raise ValueError(f"{g}: deal supply has {len(supply)} cards; the supply has {slots}")
        top = parse_cards(deal.get("draw_pile", []), parse_card, "draw_pile", g)
        named = [c for h in parsed for c in h] + (supply or []) + top
        rest = check_against_deck(named, self.deck, lambda k: KIND_NAMES[k], g)
        for s, h in enumerate(parsed):
            for k in h:
                self.hands[s][k] += 1
        # Cards the deal does not name are shuffled; the supply comes from them if not named.
        rest = shuffled(rest, self.rng)
        if supply is None:
            supply, rest = rest[:slots], rest[slots:]
        self.supply = supply + [-1] * (SUPPLY_SLOTS - slots)
        self.draw = rest + top[::-1]

    # -- legality ------------------------------------------------------------
    def legal_mask(self) -> np.ndarray:
        if self._mask is None:
            mask = bytearray(self.num_actions)  # faster than np.zeros + fancy indexing for a few moves
            for a in self._legal_actions():
                mask[a] = 1
            self._mask = np.frombuffer(mask, dtype=np.int8)
        return self._mask

    def _legal_actions(self) -> list[int]:
        L = self.layout
        seat = self.current_player
        if self.phase == ANSWER:
            return [L.accept, L.refuse]
        if self.phase == DRAW:
            legal = [L.draw + i for i in range(SUPPLY_SLOTS) if self.supply[i] >= 0]
            if self.draw:
                legal.append(L.draw_pile)
            return legal
        hand = self.hands[seat]
        size = self.hand_sizes[seat]
        wilds = hand[WILD]
        c, fv = self.field_count, self.field_number
        copies = L.copies
        legal = []
        for v in range(1, NUMBERS + 1):
            held = hand[v - 1]
            if not held or v == fv:
                continue
            # Only the size matters for "no going out on a wild", and only when it can be reached.
            key = (copies, v, held, wilds, c, c == 0 or v < fv, size if size <= held + wilds else 0)
            plays = _PLAYS.get(key)
            if plays is None:
                plays = _PLAYS[key] = _number_plays(*key)
            legal += plays
        # Wilds only count as 7s: legal on an empty field, or on the same count below 7.
        if wilds:
            if c == 0:
                legal.extend(L.wilds + k - 1 for k in range(1, min(wilds, size - 1) + 1))
            elif fv < WILDS_ONLY and c <= wilds and c < size:
                legal.append(L.wilds + c - 1)
        if c:
            # For You (RULES.md [D]: only when the field is not empty; wilds are never given).
            offers = self._offers
            for v in range(NUMBERS):
                if hand[v]:
                    legal += offers[v]
        if not legal:
            legal.append(L.plain_pass)  # RULES.md [D]: no legal play and no number card to offer
        return legal

    # -- play ------------------------------------------------------------------
    def step(self, action: int) -> ScoreEvent | None:
        L = self.layout
        seat = self.current_player
        self._mask = None
        self.round_steps += 1
        event = None
        if action < L.for_you:
            v, m, w = L.decode_play(action)
            event = self._play(seat, v, m, w)
        elif action < L.accept:
            v, self.target = self._offer(action, seat)
            self.giver = seat
            self.offer_kind = v
            self.offer_size = self.hands[seat][v]
            self.hands[seat][v] = 0
            self.hand_sizes[seat] -= self.offer_size
            self.phase = ANSWER
            self.current_player = self.target
        elif action == L.accept:
            giver, size = self.giver, self.offer_size
            self.hands[seat][self.offer_kind] += size
            self.hand_sizes[seat] += size
            self._clear_offer()
            if self.hand_sizes[giver] == 0:
                event = self._end_round(giver)  # RULES.md [D]: an accepted For You can empty a hand
            else:
                self._passed(giver)
        elif action == L.refuse:
            giver = self.giver
            self.hands[giver][self.offer_kind] += self.offer_size
            self.hand_sizes[giver] += self.offer_size
            self.draws_owed = self.offer_size
            self._clear_offer()  # no offer is pending while the giver draws
            self.phase = DRAW
            self.current_player = giver
            if not self._can_draw():
                self._passed(giver)
        elif action < L.plain_pass:
            if action == L.draw_pile:
                kind = self.chance_draw(self.draw)
            else:
                slot = action - L.draw
                kind = self.supply[slot]
                # A taken supply card is replaced from the draw pile at once.
                self.supply[slot] = self.chance_draw(self.draw) if self.draw else -1
            self.hands[seat][kind] += 1
            self.hand_sizes[seat] += 1
            self.draws_owed -= 1
            if not self.draws_owed or not self._can_draw():
                self._passed(seat)  # RULES.md [D]: with supply and pile empty nothing more is drawn
        else:
            self._passed(seat)
        if event is None and self.round_steps >= self.max_round_steps:
            event = self._truncate_round()
        return event

    def _clear_offer(self) -> None:
        self.giver = self.target = self.offer_kind = -1
        self.offer_size = 0

    def _can_draw(self) -> bool:
        return bool(self.draw) or any(k >= 0 for k in self.supply)

    def _play(self, seat: int, number: int, cards: int, wilds: int) -> ScoreEvent | None:
        hand = self.hands[seat]
        if cards:
            hand[number - 1] -= cards
            self.played[number - 1] += cards
        hand[WILD] -= wilds
        self.played[WILD] += wilds
        self.hand_sizes[seat] -= cards + wilds
        self.field_count = cards + wilds
        self.field_number = number
        self.field_player = seat
        self.passes = 0
        if self.hand_sizes[seat] == 0:
            return self._end_round(seat)
        self.current_player = (seat + 1) % self.num_players
        return None

    def _passed(self, seat: int) -> None:
        """`seat` passed (For You done, or plain pass); the turn moves on, maybe clearing the field."""
        self.phase = PLAY
        self.giver = -1
        self.draws_owed = 0
        nxt = (seat + 1) % self.num_players
        if self.field_count:
            self.passes += 1
            if nxt == self.field_player:
                # Everyone else passed since that play: the field clears and its player leads.
                self.field_count = self.field_number = self.passes = 0
                self.field_player = -1
        self.current_player = nxt

    def _end_round(self, went_out: int) -> ScoreEvent:
        n = self.num_players
        marks = self.hand_marks
        round_pen = []
        for s in range(n):
            h = self.hands[s]
            round_pen.append(sum(h[k] * marks[k] for k in range(NUMBERS)) * (1 + h[WILD]))
        for s in range(n):
            self.penalties[s] += round_pen[s]
        details = {"round": self.round, "went_out": went_out, "round_penalties": round_pen, "round_truncated": 0}
        # Next start player: most penalty this round; ties go to the tied player
        # nearest clockwise after the player who went out (RULES.md [D]).
        self.start_player = max(range(n), key=lambda s: (round_pen[s], -((s - went_out - 1) % n)))
        self._next_round_or_end()
        return ScoreEvent([-p for p in round_pen], [True] * n, details)

    def _truncate_round(self) -> ScoreEvent:
        n = self.num_players
        details = {"round": self.round, "went_out": -1, "round_penalties": [0] * n, "round_truncated": 1}
        # Nobody went out and nobody scored: the seat after this round's start player starts next.
        self.start_player = (self.start_player + 1) % n
        self._next_round_or_end()
        return ScoreEvent([0] * n, [True] * n, details)

    def _next_round_or_end(self) -> None:
        if self.round >= self.rounds:
            self.game_over = True
            self.current_player = -1
            self._mask = None
        else:
            self._new_round()

    # -- views -------------------------------------------------------------------
    def _public(self, seat: int) -> list[int]:
        v = [self.field_count, self.field_number, self.passes]
        for k in self.supply:
            v += _ONE_HOT[k + 1]
        v += [len(self.draw), self.round, self.rounds]
        v += _PHASE_HOT[self.phase]
        v += [self.offer_size, self.offer_kind + 1 if seat == self.giver and self.offer_size else 0, self.draws_owed]
        v += self.played
        sizes, pens = self.hand_sizes, self.penalties
        fp, giver, target, cur = self.field_player, self.giver, self.target, self.current_player
        for s in self._seat_order[seat]:
            # ints, not bools: np.array converts a list mixing the two much more slowly
            v += (sizes[s], pens[s], 1 if s == fp else 0, 1 if s == giver else 0, 1 if s == target else 0, 1 if s == cur else 0)
        return v

    def state(self) -> np.ndarray:
        hands = [c for h in self.hands for c in h]
        draw_counts = kind_counts(self.draw, NUM_KINDS)
        return np.array(hands + draw_counts + [self.offer_kind + 1] + self._public(0), dtype=np.float32)

    def card_places(self) -> dict[str, list[int]]:
        places = {f"hand {s}": [k for k in range(NUM_KINDS) for _ in range(h[k])] for s, h in enumerate(self.hands)}
        places["supply"] = [k for k in self.supply if k >= 0]
        places["draw_pile"] = list(self.draw)
        places["played"] = [k for k in range(NUM_KINDS) for _ in range(self.played[k])]
        places["offer"] = [self.offer_kind] * self.offer_size
        return places

    def shuffle_hidden(self, seat: int, rng: np.random.Generator) -> None:
        """Redeal other hands, the draw pile and (unless `seat` made it) the number of a pending offer."""
        n = self.num_players
        others = [s for s in range(n) if s != seat]
        hide_offer = self.offer_size > 0 and seat != self.giver
        pool = list(self.draw)
        for s in others:
            pool += [k for k in range(NUM_KINDS) for _ in range(self.hands[s][k])]
        if hide_offer:
            pool += [self.offer_kind] * self.offer_size
        for _ in range(100):
            cards = shuffled(sorted(pool), rng)  # sorted: the redeal depends only on what `seat` knows
            offer_kind = self.offer_kind
            if hide_offer:
                # The giver handed over *all* cards of that number, so the giver keeps none.
                options = [k for k in range(NUMBERS) if cards.count(k) >= self.offer_size]
                offer_kind = options[int(rng.integers(len(options)))]
                for _ in range(self.offer_size):
                    cards.remove(offer_kind)
                giver_cards = [k for k in cards if k != offer_kind][: self.hand_sizes[self.giver]]
                if len(giver_cards) < self.hand_sizes[self.giver]:
                    continue
                for k in giver_cards:
                    cards.remove(k)
            hands = {}
            for s in others:
                if hide_offer and s == self.giver:
                    take = giver_cards
                else:
                    take, cards = cards[: self.hand_sizes[s]], cards[self.hand_sizes[s] :]
                hands[s] = [take.count(k) for k in range(NUM_KINDS)]
            for s, h in hands.items():
                self.hands[s] = h
            self.offer_kind = offer_kind
            self.draw = cards
            break
        self._mask = None

    def _offer(self, action: int, seat: int) -> tuple[int, int]:
        """A For You action's number (card kind) and the seat it is offered to."""
        v, r = divmod(action - self.layout.for_you, self.num_players - 1)
        return v, (seat + r + 1) % self.num_players

    def action_name(self, action: int, seat: int) -> str:
        L = self.layout
        if action < L.for_you:
            v, m, w = L.decode_play(action)
            if v == WILDS_ONLY:
                return f"play {w} wild" + ("s" if w > 1 else "")
            return f"play {m} of {v}" + (f" + {w} wild" + ("s" if w > 1 else "") if w else "")
        if action < L.accept:
            v, target = self._offer(action, seat)
            return f"for you {v + 1}s to player_{target}"
        return ("accept", "not for me", "draw supply 0", "draw supply 1", "draw supply 2", "draw pile", "pass")[
            action - L.accept
        ]

    def explain_action(self, action: int, seat: int) -> str:
        L = self.layout
        if action < L.for_you:
            if self.field_count == 0:
                return "lead with these cards onto the empty field: any number and count"
            field = f"{self.field_count} × {'7' if self.field_number == WILDS_ONLY else self.field_number}"
            return f"play onto the field ({field}): the same count with a higher number, or more cards with a lower one"
        if action < L.accept:
            v, target = self._offer(action, seat)
            who, size = f"player_{target}", self.hands[seat][v]
            return (f"For You: hand {who} all your {v + 1}s ({size} card{'s' if size != 1 else ''}), face down; "
                    f"they accept them, or say Not For Me and you draw {size} card{'s' if size != 1 else ''}")
        k = action - L.accept
        offer = f"{self.offer_size} card{'s' if self.offer_size != 1 else ''}"
        if k == 0:
            return f"take player_{self.giver}'s {offer} into your hand"
        if k == 1:
            return f"refuse: the {offer} go back to player_{self.giver}, who then draws {self.offer_size}"
        if k < 5:
            return f"take the face-up {KIND_NAMES[self.supply[k - 2]]} from the supply (the draw pile refills it)"
        if k == 5:
            return "take the top card of the draw pile, unseen"
        return "pass: you have no legal play and no number card to offer"

    def public_action_name(self, action: int, seat: int) -> str:
        # The number inside a For You offer is secret: others see only how many cards.
        L = self.layout
        if L.for_you <= action < L.accept:
            v, target = self._offer(action, seat)
            size = self.hands[seat][v]
            return f"for you: {size} card{'s' if size != 1 else ''} to player_{target}"
        return self.action_name(action, seat)

    def hand_names(self, seat: int) -> str:
        return " ".join(KIND_NAMES[k] for k in range(NUM_KINDS) for _ in range(self.hands[seat][k])) or "-"

    def view(self, seat: int) -> str:
        return self.render(viewer=seat)

    def render(self, viewer: int | None = None) -> str:
        """The whole table; with `viewer`, only what that seat may see (for a human player)."""
        if self.field_count:
            shown = "W" if self.field_number == WILDS_ONLY else str(self.field_number)
            field = f"{self.field_count} x {shown} by player_{self.field_player}, {self.passes} passes since"
        else:
            field = "empty"
        supply = plain_words([KIND_NAMES[k] if k >= 0 else "-" for k in self.supply])
        lines = [
            f"Not For Me round {self.round}/{self.rounds}: field {field}; supply {supply}; draw pile {len(self.draw)}"
        ]
        for s in range(self.num_players):
            mark = ">" if s == self.current_player and not self.game_over else " "
            note = ""
            if s == self.giver and self.offer_size:
                note = f" (offers {self.offer_size} card{'' if self.offer_size == 1 else 's'} to player_{self.target})"
            elif mark == ">" and self.phase == DRAW:
                note = f" (draws {self.draws_owed} more)"
            if viewer is None or s == viewer:
                held = f"hand {plain_words(self.hand_names(s).split(), '-')}"
            else:
                held = f"{self.hand_sizes[s]} cards"
            you = " (you)" if s == viewer else ""
            lines.append(f"{mark} player_{s}{you}: penalty {self.penalties[s]}, {held}{note}")
        if self.game_over:
            best = min(self.penalties)
            winners = ", ".join(f"player_{s}" for s in range(self.num_players) if self.penalties[s] == best)
            lines.append(f"  game over: lowest penalty {best}: {winners}")
        return "\n".join(lines)

"""Neu (ノイ) rules engine — docs/RULES.md §3. No PettingZoo here; see `envs/neu_v0.py`.

Keep the running total at or under 101. A player who must play and has no
legal card loses the round and pays one chip; the last player with chips wins.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from envs.engine import (Bounds, Engine, ScoreEvent, check_deal_keys, kind_counts, parse_hands, plain_words,
                         ranks_from_keys, shuffled, shuffled_hidden_pool)
from envs.small import stacked_deals

# Card kinds, in the order of the observation's hand counts.
NUMBER_VALUES = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 50, -10, -1)  # kinds 0..12 add their value
CARD_101, PASS, TURN, SHOT, DOUBLE = 13, 14, 15, 16, 17
NUM_KINDS = 18
COPIES = (3,) * 9 + (6, 2, 4, 2, 5, 4, 4, 2, 2)  # 58 cards
KIND_NAMES = tuple(str(v) for v in NUMBER_VALUES) + ("101", "pass", "turn", "shot", "double")
DECK = tuple(k for k in range(NUM_KINDS) for _ in range(COPIES[k]))

# Actions: 0..13 play a number card or 101 (same index as the card kind),
# 14 pass, 15 turn, 16 double, 17.. shot at the player 1, 2, ... seats clockwise.
A_PASS, A_TURN, A_DOUBLE, A_SHOT = 14, 15, 16, 17
ACTION_KIND = tuple(range(14)) + (PASS, TURN, DOUBLE)

_ALIASES = {"p": PASS, "t": TURN, "s": SHOT, "d": DOUBLE}
_KIND_OF_NAME = {name: k for k, name in enumerate(KIND_NAMES)}
CHIPS = 3
HAND_SIZE = 3
# The small preset (rules="small", RULES.md "Neu, small preset"): two players, one chip each (one
# round decides), two cards in hand, seven cards used once (no reshuffle), small enough to solve
# exactly (experiments.solve). Kinds: 50 50 10 -10 101 pass double.
SMALL_COPIES = (0,) * 9 + (1, 2, 1, 0, 1, 1, 0, 0, 1)
PRESETS = {"standard": (COPIES, CHIPS, HAND_SIZE, True), "small": (SMALL_COPIES, 1, 2, False)}
# Observations show the running total clipped at this floor, so that it stays inside
# the observation bounds. Each pass through the deck adds more than its -10s and -1s
# take away, so real games stay far above it; the rules use the true total.
TOTAL_FLOOR = -200

# Observation layout (seat-relative), see the shim docstring for the table.
OBS_HAND = 0  # own hand: count per card kind
OBS_PLAYED = OBS_HAND + NUM_KINDS  # played pile since the last reshuffle: count per kind
OBS_TOTAL = OBS_PLAYED + NUM_KINDS  # running total, clipped at TOTAL_FLOOR
OBS_DIRECTION = OBS_TOTAL + 1  # +1 clockwise, -1 counter-clockwise
OBS_OWED = OBS_TOTAL + 2  # plays owed by the player to act
OBS_DRAW_PILE = OBS_TOTAL + 3
OBS_ROUND = OBS_TOTAL + 4
OBS_SEATS = OBS_TOTAL + 5  # then one block per seat, seat-relative (0 = self)
# Offsets inside a seat block.
SEAT_CHIPS, SEAT_IN_GAME, SEAT_HAND_SIZE, SEAT_TO_ACT, SEAT_DEALER = range(5)
SEAT_BLOCK = 5


def playable(kind: int, total: int, owed: int) -> bool:
    """May a card of `kind` be played at running total `total`, with `owed` plays still owed
    this turn (RULES.md §3)? Number cards (1..10, 50, -10, -1) only if the total stays at or
    under 101; a Double not as the first of two plays; 101, Pass, Turn and Shot always."""
    if kind < CARD_101:
        return total + NUMBER_VALUES[kind] <= 101
    if kind == DOUBLE:
        return owed == 1
    return True


@lru_cache(maxsize=4096)  # the totals met in play are few
def _playable_row(total: int, owed: int) -> tuple[bool, ...]:
    return tuple(playable(k, total, owed) for k in range(NUM_KINDS))


def parse_card(card) -> int:
    """Card notation: "1".."10", "50", "-10", "-1", "101", "pass", "turn", "shot", "double"
    (or P/T/S/D); integers are read as number cards."""
    if isinstance(card, (int, np.integer)) and not isinstance(card, bool):
        card = str(int(card))
    if not isinstance(card, str):
        raise TypeError(card)
    key = card.strip().lower()
    if key in _ALIASES:
        return _ALIASES[key]
    return _KIND_OF_NAME[key]


class Neu(Engine):
    game_name = "neu"
    display_name = "Neu"
    deck = DECK
    min_players, max_players, default_players = 2, 7, 4
    PRESET_PLAYERS = {"small": 2}
    OPTIONS = {
        "rules": ("standard", lambda v: isinstance(v, str) and v in PRESETS,
                  "'standard' (RULES.md §3) or 'small' (two players, a 7-card deck used once; RULES.md \"Neu, small preset\")"),
    }
    INFO_SEATS = frozenset({"round_loser"})
    conserves = "box"
    # The game in progress (Engine.STATE_FIELDS); `hands` and `draw` are what shuffle_hidden redeals.
    STATE_FIELDS = ("chips", "out", "eliminated_at", "game_over", "round", "dealer", "total", "direction", "owed",
                    "played", "played_counts", "hands", "hand_sizes", "draw", "current_player")
    # The rules set no limit (-10, -1, Pass, Turn, Shot and Double can in principle go on for
    # ever), so this is a statistical bound for random and heuristic play: the longest of 1,200
    # random 2-7 player games took 358 steps (about 270 on average at 7 players).
    max_game_length = 10_000
    card_names = dict(enumerate(KIND_NAMES))
    OBS_PARTS = {"hand": OBS_HAND, "played": OBS_PLAYED, "total": OBS_TOTAL, "direction": OBS_DIRECTION,
                 "owed": OBS_OWED, "draw_pile": OBS_DRAW_PILE, "round": OBS_ROUND, "seats": OBS_SEATS}
    SEAT_PARTS = {"chips": SEAT_CHIPS, "in_game": SEAT_IN_GAME, "hand_size": SEAT_HAND_SIZE,
                  "to_act": SEAT_TO_ACT, "dealer": SEAT_DEALER}
    SEAT_BLOCK = SEAT_BLOCK

    def __init__(self, num_players: int | None = None, **rule_options) -> None:
        super().__init__(num_players, **rule_options)
        n = self.num_players
        self.copies, self.start_chips, self.hand_size, self.reshuffles = PRESETS[self.options["rules"]]
        self.deck = tuple(k for k in range(NUM_KINDS) for _ in range(self.copies[k]))
        self.num_actions = A_SHOT + n - 1
        self.obs_size = OBS_SEATS + SEAT_BLOCK * n
        self.state_size = NUM_KINDS * n + self.obs_size  # every hand, the draw pile, the public block (obs without a hand)
        self._order = [[(seat + r) % n for r in range(n)] for seat in range(n)]  # seat-relative views
        self._no_shots = [0] * (n - 1)
        self.set_bounds()

    def _bounds(self) -> tuple[Bounds, Bounds]:
        n = self.num_players
        # Every round costs its loser one chip: at most 3(n-1) + 2 rounds.
        copies, chips, hand_size = self.copies, self.start_chips, self.hand_size
        public = (
            Bounds()
            .extend([0] * NUM_KINDS, copies)  # played pile
            .add(TOTAL_FLOOR, 101)
            .add(-1, 1)  # direction
            .add(1, 2)  # plays owed
            .add(0, len(self.deck) - 2 * hand_size)  # draw pile: at least two hands are dealt
            .add(1, chips * n - 1)  # round
        )
        for _ in range(n):
            public.add(0, chips).flags().add(0, hand_size).flags(2)
        hand = [min(hand_size, c) for c in copies]
        obs = Bounds().extend([0] * NUM_KINDS, hand).extend(public.low, public.high)
        state = Bounds()
        for _ in range(n):
            state.extend([0] * NUM_KINDS, hand)
        state.extend([0] * NUM_KINDS, copies).extend(public.low, public.high)
        return obs, state

    def info_defaults(self) -> dict:
        # round_loser: seat (-1 = none); round: 1-based; total: the total that beat the loser.
        return {"round_loser": -1, "round": 0, "total": 0}

    def event_sentence(self, details: dict) -> str:
        d = {**self.info_defaults(), **details}
        return (f"Round {d['round']}: at a total of {d['total']}, player_{d['round_loser']} had no card "
                f"that keeps it at or under 101 and lost a chip.")

    # -- set-up --------------------------------------------------------------
    def reset(self, rng: np.random.Generator, deal: dict | None = None) -> None:
        n = self.num_players
        self.rng = rng
        self.chips = [self.start_chips] * n
        self.out = [False] * n
        self.eliminated_at = [n] * n  # later elimination ranks higher
        self.game_over = False
        self.round = 0
        self.dealer = 0  # RULES.md [D]: player_0 deals the first round
        self._new_round(deal)

    @property
    def scores(self) -> list[int]:
        return self.chips

    def _new_round(self, deal: dict | None = None) -> None:
        n = self.num_players
        self.round += 1
        self.total = 0
        self.direction = 1
        self.owed = 1  # plays the current player still owes this turn (2 after a Double)
        self.played: list[int] = []
        self.played_counts = [0] * NUM_KINDS
        self.hands = [[0] * NUM_KINDS for _ in range(n)]
        self.hand_sizes = [0] * n
        if deal is None:
            deal = self.chance_deal()  # a deal given by take_chance, else None: from the stream
        if deal is None:
            order = shuffled(self.deck, self.rng)
            # The dealer deals one card at a time starting at their left; with a
            # shuffled deck only the count matters, so deal 3 in a block each.
            for s in self._seats_in_game_from(self.dealer + 1):
                for _ in range(self.hand_size):
                    self._give(s, order.pop())
            self.draw = order  # top of the pile is the end of the list
        else:
            self._stacked_deal(deal)
        self.current_player = self.dealer
        self._mask = self._legal = None

    def _stacked_deal(self, deal: dict) -> None:
        g = self.game_name
        check_deal_keys(deal, {"hands", "draw_pile"}, g)
        parsed = parse_hands(deal, self._hand_sizes_dealt(), parse_card, g,
                             size_rule=lambda seat, size: f"a seat out of the game gets no cards, every other seat {self.hand_size}")
        self.give_stacked_deal(deal, parsed, parse_card, lambda k: KIND_NAMES[k])

    def _hand_sizes_dealt(self) -> list[int]:
        return [0 if out else self.hand_size for out in self.out]

    def deal_parts(self) -> tuple[list[int], list[tuple[str, list[int] | int]]]:
        return list(self.deck), [("hands", self._hand_sizes_dealt())]

    def deals(self) -> list[tuple[float, dict]]:
        """Every first deal of the small preset with its probability, as stacked deals (``reset(rng,
        deal=...)``): two hands (their order within a hand does not matter) and the pile's order.
        For exact solving (experiments.solve); the standard deck has far too many."""
        if self.reshuffles or self.start_chips != 1:
            raise ValueError("neu: deals() lists the first deals of rules='small' only")
        return stacked_deals(self.deck, [self.hand_size] * self.num_players, lambda k: KIND_NAMES[k])

    def _give(self, seat: int, kind: int) -> None:
        self.hands[seat][kind] += 1
        self.hand_sizes[seat] += 1

    def _seats_in_game_from(self, start: int) -> list[int]:
        n = self.num_players
        return [s % n for s in range(start, start + n) if not self.out[s % n]]

    def _next_seat(self, seat: int, direction: int) -> int:
        n = self.num_players
        s = (seat + direction) % n
        while self.out[s]:
            s = (s + direction) % n
        return s

    # -- legality ------------------------------------------------------------
    def legal_mask(self) -> np.ndarray:
        if self._mask is None:
            if self._legal is None:
                self._legal = self._legal_list()
            # bytearray + frombuffer: several times cheaper than np.array on a list of 0/1
            self._mask = np.frombuffer(bytearray(self._legal), dtype=np.int8)
        return self._mask

    def _legal_list(self) -> list[int]:
        seat = self.current_player
        hand = self.hands[seat]
        ok = _playable_row(self.total, self.owed)
        legal = [1 if hand[k] and ok[k] else 0 for k in ACTION_KIND]
        if hand[SHOT]:
            out = self.out
            legal += [0 if out[s] else 1 for s in self._order[seat][1:]]
        else:
            legal += self._no_shots
        return legal

    # -- play ------------------------------------------------------------------
    def step(self, action: int) -> ScoreEvent | None:
        seat = self.current_player
        if action >= A_SHOT:
            kind = SHOT
            target = (seat + action - A_SHOT + 1) % self.num_players
        else:
            kind = ACTION_KIND[action]
        self.hands[seat][kind] -= 1
        self.hand_sizes[seat] -= 1
        self.played.append(kind)
        self.played_counts[kind] += 1
        first_of_two = self.owed == 2

        if kind < CARD_101:
            self.total += NUMBER_VALUES[kind]
        elif kind == CARD_101:
            self.total = 101
        elif kind == TURN:
            self.direction = -self.direction
        self._draw(seat)

        if kind in (PASS, TURN, SHOT):
            # The obligation of a Double moves on to whoever plays next.
            self.current_player = target if kind == SHOT else self._next_seat(seat, self.direction)
            self.owed = 2 if first_of_two else 1
        elif kind == DOUBLE:
            self.current_player = self._next_seat(seat, self.direction)
            self.owed = 2
        elif first_of_two:
            self.owed = 1  # same player makes the second play
        else:
            self.current_player = self._next_seat(seat, self.direction)
            self.owed = 1
        legal = self._legal_list()
        if 1 not in legal:
            return self._lose(self.current_player)
        self._mask = None
        self._legal = legal
        return None

    def _draw(self, seat: int) -> None:
        if not self.draw:
            # RULES.md [D]: shuffle the played cards except the last into a new pile (the small
            # preset uses its deck once: nobody draws from an empty pile).
            if len(self.played) <= 1 or not self.reshuffles:
                return
            last = self.played[-1]
            rest = self.played[:-1]
            self.chance_reshuffle()
            self.draw = shuffled(rest, self.rng)
            self.played = [last]
            self.played_counts = [0] * NUM_KINDS
            self.played_counts[last] = 1
        self._give(seat, self.chance_draw(self.draw))

    def _lose(self, loser: int) -> ScoreEvent:
        n = self.num_players
        players = [not o for o in self.out]
        deltas = [0] * n
        deltas[loser] = -1
        self.chips[loser] -= 1
        details = {"round_loser": loser, "round": self.round, "total": self.total}
        if self.chips[loser] == 0:
            self.out[loser] = True
            self.eliminated_at[loser] = sum(self.out) - 1
        if sum(1 for o in self.out if not o) == 1:
            self.game_over = True
            self.current_player = -1
            self._mask = self._legal = None
            return ScoreEvent(deltas, players, details)
        # The loser deals and plays first; if out, the next player still in does.
        self.dealer = loser if not self.out[loser] else self._next_seat(loser, 1)
        self._new_round()
        return ScoreEvent(deltas, players, details)

    # -- views -------------------------------------------------------------------
    def _public(self, seat: int) -> list[int]:
        v = self.played_counts + [max(self.total, TOTAL_FLOOR), self.direction, self.owed, len(self.draw), self.round]
        chips, out, sizes, cur, dealer = self.chips, self.out, self.hand_sizes, self.current_player, self.dealer
        for s in self._order[seat]:
            v += (chips[s], 0 if out[s] else 1, sizes[s], 1 if s == cur else 0, 1 if s == dealer else 0)
        return v

    def state(self) -> np.ndarray:
        hands = [c for h in self.hands for c in h]
        draw_counts = kind_counts(self.draw, NUM_KINDS)
        return np.array(hands + draw_counts + self._public(0), dtype=np.float32)

    def card_places(self) -> dict[str, list[int]]:
        places = {f"hand {s}": [k for k in range(NUM_KINDS) for _ in range(h[k])] for s, h in enumerate(self.hands)}
        places["draw_pile"] = list(self.draw)
        places["played"] = list(self.played)
        return places

    def refresh(self) -> None:
        super().refresh()
        self._legal = None

    def shuffle_hidden(self, seat: int, rng: np.random.Generator) -> None:
        others = [s for s in range(self.num_players) if s != seat]
        pool = shuffled_hidden_pool(self.draw, self.hands, others, rng)
        for s in others:
            size = self.hand_sizes[s]
            self.hands[s] = [0] * NUM_KINDS
            for k in pool[:size]:
                self.hands[s][k] += 1
            pool = pool[size:]
        self.draw = pool
        self._mask = self._legal = None

    def ranks(self) -> list[int]:
        return ranks_from_keys([(c, e) for c, e in zip(self.chips, self.eliminated_at)])

    def action_name(self, action: int, seat: int) -> str:
        if action >= A_SHOT:
            return f"shot player_{(seat + action - A_SHOT + 1) % self.num_players}"
        kind = ACTION_KIND[action]
        return f"play {KIND_NAMES[kind]}" if kind <= CARD_101 else KIND_NAMES[kind]

    def explain_action(self, action: int, seat: int) -> str:
        if action >= A_SHOT:
            target = (seat + action - A_SHOT + 1) % self.num_players
            return f"the total stays at {self.total}; player_{target} plays next, and play goes on from them"
        kind = ACTION_KIND[action]
        if kind < CARD_101:
            value = NUMBER_VALUES[kind]
            verb = f"adds {value} to" if value > 0 else f"takes {-value} from"
            return f"{verb} the running total: {self.total} becomes {self.total + value} (it may never go over 101)"
        return {CARD_101: f"sets the running total to 101 (from {self.total})",
                PASS: f"the total stays at {self.total}; the next player plays",
                TURN: f"the total stays at {self.total}; the direction of play reverses",
                DOUBLE: f"the total stays at {self.total}; the next player must make two plays"}[kind]

    def hand_names(self, seat: int) -> list[str]:
        return [KIND_NAMES[k] for k in range(NUM_KINDS) for _ in range(self.hands[seat][k])]

    def view(self, seat: int) -> str:
        direction = "clockwise" if self.direction == 1 else "counter-clockwise"
        lines = [f"Neu round {self.round}: total {self.total}, {direction}, draw pile {len(self.draw)}"]
        for s in range(self.num_players):
            state = "out" if self.out[s] else f"chips {self.chips[s]}, {self.hand_sizes[s]} cards"
            you = " (you)" if s == seat else ""
            lines.append(f"  player_{s}{you}: {state}")
        owes = " - you owe two plays (no Double first)" if self.current_player == seat and self.owed == 2 else ""
        lines.append(f"Your hand: {plain_words(self.hand_names(seat))}{owes}")
        return "\n".join(lines)

    def render(self) -> str:
        direction = "clockwise" if self.direction == 1 else "counter-clockwise"
        lines = [f"Neu round {self.round}: total {self.total}, {direction}, draw pile {len(self.draw)}"]
        for s in range(self.num_players):
            if self.out[s]:
                lines.append(f"  player_{s}: out")
                continue
            mark = ">" if s == self.current_player and not self.game_over else " "
            owes = f" (owes {self.owed} plays)" if mark == ">" and self.owed == 2 else ""
            lines.append(f"{mark} player_{s}: chips {self.chips[s]}, hand {plain_words(self.hand_names(s))}{owes}")
        if self.game_over:
            lines.append(f"  game over: player_{self.chips.index(max(self.chips))} wins")
        return "\n".join(lines)

"""Deadfall rules engine — docs/RULES.md §2. No PettingZoo here; see `envs/deadfall_v0.py`.

A bluffing / counting game with a Pairs deck (rank r has r copies). Each hand
starts with door cards placed simultaneously, layer by layer, until one
player starts. Then each player in turn plays a card onto their own stack or
calls DEAD on a value shown by another player's top card, claiming that no
hand at the table holds that value. The call settles the hand.
"""

from __future__ import annotations

import numpy as np

from envs.engine import (
    Bounds,
    Engine,
    ScoreEvent,
    check_against_deck,
    check_deal_keys,
    is_int_between,
    plain_words,
    kind_counts,
    parse_cards,
    parse_hands,
    shuffled,
)
from envs.small import stacked_deals

NUM_RANKS = 10
RANKS = tuple(range(1, NUM_RANKS + 1))
DECK = tuple(r for r in RANKS for _ in range(r))  # 55 cards; a card id is its rank
HAND_SIZE = {2: 7, 7: 5}  # RULES.md: 6 cards each, 7 with 2 players, 5 with 7 players
DEFAULT_HAND_SIZE = 6
# The small preset (rules="small", RULES.md "Deadfall, small preset"): two players, one hand,
# ranks 1 to 4 only (10 cards), hands of 2 and 6 cards set aside: small enough to solve exactly
# (experiments.solve), with the same observation layout and actions.
SMALL_DECK = tuple(r for r in range(1, 5) for _ in range(r))
SMALL_HAND_SIZE = 2
PRESETS = ("standard", "small")

# Actions: 0..9 play a card of rank 1..10 (during the door phase: place it as
# this layer's door card); 10..19 call DEAD on rank 1..10.
A_DEAD = NUM_RANKS
NUM_ACTIONS = 2 * NUM_RANKS

DOOR, PLAY = 0, 1  # phases of a hand

# Building the legal mask as bytes
_ANY_TO_ONE = bytes([0] + [1] * 255)  # translate table: 0 stays 0, any count becomes 1
_NO_DEAD = bytes(NUM_RANKS)
_INT8 = np.dtype(np.int8)

# Observation layout (see the shim docstring for the table).
OBS_HAND = 0  # own hand: count per rank
OBS_UNSEEN = OBS_HAND + NUM_RANKS  # copies per rank this seat cannot see
OBS_POT = OBS_UNSEEN + NUM_RANKS
OBS_HAND_NUMBER = OBS_POT + 1
OBS_PHASE = OBS_POT + 2  # 0 door cards, 1 play
OBS_LAYER = OBS_POT + 3  # door layer (1-based)
OBS_MY_DOOR_PICK = OBS_POT + 4  # own face-down door card of this layer, 0 if none
OBS_SEATS = OBS_POT + 5  # then one block per seat, seat-relative (0 = self)
# Offsets inside a seat block.
SEAT_CHIPS, SEAT_HAND_SIZE, SEAT_TOP, SEAT_DOOR, SEAT_TO_ACT, SEAT_STARTER, SEAT_PICKED = range(7)
SEAT_STACK = 7  # count per rank of the seat's stack
SEAT_BLOCK = SEAT_STACK + NUM_RANKS


def parse_card(card) -> int:
    """Card notation: the rank, as an integer 1..10 or a string "1".."10"."""
    if isinstance(card, (int, np.integer)) and not isinstance(card, bool):
        rank = int(card)
    elif isinstance(card, str) and card.strip().isdigit():
        rank = int(card.strip())
    else:
        raise ValueError(card)
    if rank not in RANKS:
        raise ValueError(card)
    return rank


def dead_target(tops, caller: int, rank: int) -> int:
    """Who a DEAD call on `rank` is aimed at (RULES.md): of the seats whose top card (`tops`,
    one value per seat, 0 = none) shows `rank`, the one nearest to the caller's right
    (seats caller-1, caller-2, ...); -1 if none."""
    n = len(tops)
    for k in range(1, n):
        s = (caller - k) % n
        if tops[s] == rank:
            return s
    return -1


# Bounds keep every chip count (at most 7 x MAX_CHIPS) inside the observation Box.
MAX_CHIPS, MAX_HANDS = 100_000, 100_000


def _is_chips(v) -> bool:
    return is_int_between(v, 1, MAX_CHIPS)


def _is_hands(v) -> bool:
    return is_int_between(v, 1, MAX_HANDS)


class Deadfall(Engine):
    game_name = "deadfall"
    display_name = "Deadfall"
    deck = DECK
    card_names = {r: str(r) for r in RANKS}
    OBS_PARTS = {"hand": OBS_HAND, "unseen": OBS_UNSEEN, "pot": OBS_POT, "hand_number": OBS_HAND_NUMBER,
                 "phase": OBS_PHASE, "layer": OBS_LAYER, "my_door_pick": OBS_MY_DOOR_PICK, "seats": OBS_SEATS}
    SEAT_PARTS = {"chips": SEAT_CHIPS, "hand_size": SEAT_HAND_SIZE, "top": SEAT_TOP, "door": SEAT_DOOR,
                  "to_act": SEAT_TO_ACT, "starter": SEAT_STARTER, "picked": SEAT_PICKED, "stack": SEAT_STACK}
    SEAT_BLOCK = SEAT_BLOCK
    min_players, max_players, default_players = 2, 7, 4
    PRESET_PLAYERS = {"small": 2}
    OPTIONS = {
        "starting_chips": (50, _is_chips, f"an integer from 1 to {MAX_CHIPS} (chips each player starts with)"),
        "rounds": (10, _is_hands, f"an integer from 1 to {MAX_HANDS} (number of hands; RULES.md [D] default 10)"),
        "rules": ("standard", lambda v: isinstance(v, str) and v in PRESETS,
                  "'standard' (RULES.md §2) or 'small' (two players, one hand, ranks 1-4; RULES.md \"Deadfall, small preset\")"),
    }

    def __init__(self, num_players: int | None = None, **rule_options) -> None:
        super().__init__(num_players, **rule_options)
        n = self.num_players
        self.hand_size = HAND_SIZE.get(n, DEFAULT_HAND_SIZE)
        if self.options["rules"] == "small":
            if rule_options.get("rounds", 1) != 1:
                raise ValueError(f"deadfall: rules='small' plays one hand, got rounds={rule_options['rounds']}")
            self.options["rounds"] = 1
            self.deck, self.hand_size = SMALL_DECK, SMALL_HAND_SIZE
        self.copies = [self.deck.count(r) for r in RANKS]
        self.num_actions = NUM_ACTIONS
        self.obs_size = OBS_SEATS + SEAT_BLOCK * n
        # Every hand and every face-down door card, the set-aside counts, then
        # the public part of player_0's view.
        self.state_size = NUM_RANKS * n + NUM_RANKS + n + 5 + SEAT_BLOCK * n
        # The table: every number any observation shows, each kept once, in
        # absolute seat order, as float32. A step writes only the entries it
        # changes and observe(seat) picks its entries with one precomputed
        # index: building a list of ~100 numbers and converting it to float32
        # on every observe cost more than the rest of a step. Layout: hand
        # counts per seat, unseen counts per seat, pot / hand number / phase /
        # layer, door pick per seat, then one SEAT_BLOCK per seat (the to-act
        # flag stays 0; observe sets it). `_fill_table` defines every entry;
        # code that sets the game's lists directly must call it afterwards.
        self._at_hand = [NUM_RANKS * s for s in range(n)]
        self._at_unseen = [NUM_RANKS * (n + s) for s in range(n)]
        self._at_pot = 2 * NUM_RANKS * n
        self._at_hand_number = self._at_pot + OBS_HAND_NUMBER - OBS_POT
        self._at_phase = self._at_pot + OBS_PHASE - OBS_POT
        self._at_layer = self._at_pot + OBS_LAYER - OBS_POT
        self._at_pick = [self._at_pot + OBS_MY_DOOR_PICK - OBS_POT + s for s in range(n)]
        self._at_seat = [self._at_pick[0] + n + SEAT_BLOCK * s for s in range(n)]
        self._obs_index = [self._observation_entries(seat) for seat in range(n)]
        self._others = [[s for s in range(n) if s != seat] for seat in range(n)]
        self._table = np.zeros(self._at_seat[0] + SEAT_BLOCK * n, dtype=np.float32)
        self._cells = memoryview(self._table)  # one entry written through this costs half a numpy item write
        # Dealing: card i of the shuffled deck goes to seat i // hand_size, so
        # rank r of that card counts at table index 10 * seat + r - 1.
        self._deal_offsets = np.repeat(np.arange(n) * NUM_RANKS - 1, self.hand_size)
        self._all_copies = np.tile(np.array(self.copies), n)  # copies of each rank, once per seat
        # The seat blocks at the start of a hand: all zero but the hand size.
        self._seats_at_deal = np.zeros(n + SEAT_BLOCK * n, dtype=np.float32)  # door picks, then the blocks
        self._seats_at_deal[n + SEAT_HAND_SIZE :: SEAT_BLOCK] = self.hand_size
        self._deck_array = np.array(self.deck, dtype=np.int64)
        self._order = self._deck_array.copy()  # the deck, shuffled in place every hand
        self.set_bounds()

    INFO_SEATS = frozenset({"caller", "target"})
    conserves = "pot"
    hidden_decisions = "the door cards of one layer, shown together when the layer is complete"
    # The game in progress (Engine.STATE_FIELDS); `hands`, `door_picks` and `set_aside` are what
    # shuffle_hidden redeals. The observation table is rebuilt from them (`refresh`), and the
    # shuffled deck of the hand (`_order`) is scratch space, never part of a state.
    STATE_FIELDS = ("chips", "out", "game_over", "hand_number", "last_call", "chips_before_hand", "pot", "stacks",
                    "tops", "first_door", "door_picks", "hand_sizes", "hands", "set_aside", "phase", "layer", "tied",
                    "starter", "current_player")

    @property
    def max_game_length(self) -> int:
        # A hand is at most every dealt card played (door cards included) and one DEAD call.
        return int(self.options["rounds"]) * (len(self.deck) + 1)

    def hidden_decision_key(self):
        return (self.hand_number, self.layer) if self.phase == 0 and not self.game_over else None

    def info_defaults(self) -> dict:
        # The DEAD call that ended a hand: seats (-1 = none), the value called,
        # call_right 0/1, copies found in hands, chips paid, the pot taken, hand number.
        return {"caller": -1, "target": -1, "value": 0, "call_right": 0, "copies_in_hands": 0,
                "paid": 0, "pot": 0, "hand": 0}

    def event_sentence(self, details: dict) -> str:
        d = {**self.info_defaults(), **details}
        call = f"Hand {d['hand']}: player_{d['caller']} called DEAD {d['value']} on player_{d['target']}"
        if d["call_right"]:
            return (f"{call}, rightly (no {d['value']} in any hand): player_{d['target']} paid {d['paid']} "
                    f"chips and player_{d['caller']} took the pot of {d['pot']}.")
        return (f"{call}, wrongly ({d['copies_in_hands']} still in hands): player_{d['caller']} paid "
                f"{d['paid']} chips and player_{d['target']} took the pot of {d['pot']}.")

    def _bounds(self) -> tuple[Bounds, Bounds]:
        n, size = self.num_players, self.hand_size
        chips = n * self.options["starting_chips"]  # chips only move between players and the pot
        copies = self.copies
        held = [min(c, size) for c in copies]
        public = Bounds().add(0, chips).add(1, self.options["rounds"]).flags().add(1, size).add(0, NUM_RANKS)
        for _ in range(n):
            public.add(0, chips).add(0, size).add(0, NUM_RANKS).add(0, NUM_RANKS).flags(3).extend([0] * NUM_RANKS, copies)
        obs = Bounds().extend([0] * NUM_RANKS, held).extend([0] * NUM_RANKS, copies).extend(public.low, public.high)
        state = Bounds()
        for _ in range(n):
            state.extend([0] * NUM_RANKS, held)
        state.extend([0] * NUM_RANKS, copies).add(0, NUM_RANKS, n).extend(public.low, public.high)
        return obs, state

    def __getstate__(self) -> dict:
        # A memoryview cannot be pickled or deep-copied: copies make their own.
        state = dict(self.__dict__)
        del state["_cells"]
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._cells = memoryview(self._table)

    # -- set-up ----------------------------------------------------------------
    def reset(self, rng: np.random.Generator, deal: dict | None = None) -> None:
        n = self.num_players
        self.rng = rng
        self.chips = [int(self.options["starting_chips"])] * n
        self.out = [False] * n  # nobody is eliminated in Deadfall
        self.game_over = False
        self.hand_number = 0
        self.last_call: dict | None = None
        self._new_hand(deal)

    def _new_hand(self, deal: dict | None = None) -> None:
        n = self.num_players
        if self.hand_number >= self.options["rounds"] or min(self.chips) < 1:
            # RULES.md [D]: `rounds` hands, or fewer if a player cannot ante.
            self._end_game()
            return
        self.hand_number += 1
        self.chips_before_hand = list(self.chips)
        for s in range(n):
            self.chips[s] -= 1  # the ante
        self.pot = n
        self.stacks: list[list[int]] = [[] for _ in range(n)]
        self.tops = [0] * n
        self.first_door = [0] * n
        self.door_picks = [0] * n  # face-down door cards of the current layer
        h = self.hand_size
        self.hand_sizes = [h] * n
        if deal is None:
            deal = self.chance_deal()  # a deal given by take_chance, else None: from the stream
        if deal is None:
            # The same draws as rng.permutation(deck) (a copy, then this
            # shuffle), without allocating a new array every hand.
            order = self._order
            order[:] = self._deck_array
            self.rng.shuffle(order)
            hand_counts = np.bincount(order[: n * h] + self._deal_offsets, minlength=NUM_RANKS * n)
            self.hands = hand_counts.reshape(n, NUM_RANKS).tolist()
            self.set_aside = order[n * h :].tolist()
        else:
            self.hands = [[0] * NUM_RANKS for _ in range(n)]
            self._stacked_deal(deal)
            hand_counts = np.array(self.hands).ravel()
        self.phase = DOOR
        self.layer = 1
        self.tied = list(range(n))  # seats still in contention to start
        self.starter = -1
        self.current_player = 0  # door cards are placed in seat order from player_0
        self._mask = None
        self._table_for_new_hand(hand_counts)

    def _stacked_deal(self, deal: dict) -> None:
        g = self.game_name
        n, h = self.num_players, self.hand_size
        check_deal_keys(deal, {"hands", "set_aside"}, g)
        parsed = parse_hands(
            deal, [h] * n, parse_card, g, size_rule=lambda seat, size: f"with {n} players every hand has {size}"
        )
        named = [c for hand in parsed for c in hand]
        aside = None
        if "set_aside" in deal:
            aside = parse_cards(deal["set_aside"], parse_card, "set_aside", g)
            if len(aside) != len(self.deck) - n * h:
                raise ValueError(
                    f"{g}: deal set_aside has {len(aside)} cards; it must hold the "
                    f"{len(self.deck) - n * h} cards not dealt"
                )
            named += aside
        rest = check_against_deck(named, self.deck, str, g)
        for s, hand in enumerate(parsed):
            for r in hand:
                self.hands[s][r - 1] += 1
        self.set_aside = aside if aside is not None else shuffled(rest, self.rng)

    def deal_parts(self) -> tuple[list[int], list[tuple[str, list[int] | int]]]:
        return list(self.deck), [("hands", [self.hand_size] * self.num_players)]

    def deals(self) -> list[tuple[float, dict]]:
        """Every first deal of the small preset with its probability, as stacked deals (``reset(rng,
        deal=...)``): two hands and the cards set aside (their order never matters). For exact
        solving (experiments.solve); the standard deck has far too many."""
        if self.options["rules"] != "small":
            raise ValueError("deadfall: deals() lists the first deals of rules='small' only")
        return [(p, {"hands": d["hands"], "set_aside": d["draw_pile"]})
                for p, d in stacked_deals(self.deck, [self.hand_size] * self.num_players, str)]

    def _end_game(self) -> None:
        self.game_over = True
        self.current_player = -1
        self.pot = 0
        self._mask = None
        # The last hand's table stays on view: only the settled chips and the empty pot change.
        cells = self._cells
        cells[self._at_pot] = 0
        for at, chips in zip(self._at_seat, self.chips):
            cells[at + SEAT_CHIPS] = chips

    @property
    def scores(self) -> list[int]:
        # A player's ante in the unsettled pot still counts as theirs, so the
        # score changes only when a hand is settled (see the shim docstring).
        if self.game_over:
            return list(self.chips)
        return [c + 1 for c in self.chips]

    # -- legality ----------------------------------------------------------------
    def legal_mask(self) -> np.ndarray:
        if self._mask is None:
            # bytearray + frombuffer: several times cheaper than np.array on a
            # list of 0/1 (and a dtype passed by position, not keyword, is cheaper still)
            self._mask = np.frombuffer(self._legal_bytes(), _INT8)
        return self._mask

    def _legal_bytes(self) -> bytearray:
        if self.game_over:
            return bytearray(NUM_ACTIONS)
        seat = self.current_player
        # play v: the hand's count of v as a byte (counts are small), any count -> 1;
        # then DEAD, none before the door cards settle
        mask = bytearray(self.hands[seat]).translate(_ANY_TO_ONE) + _NO_DEAD
        if self.phase == PLAY:
            tops = self.tops
            for s in self._others[seat]:
                if tops[s]:
                    mask[A_DEAD + tops[s] - 1] = 1
        return mask

    # -- play ------------------------------------------------------------------------
    def step(self, action: int) -> ScoreEvent | None:
        seat = self.current_player
        self._mask = None
        if action >= A_DEAD:
            return self._dead(seat, action - A_DEAD + 1)
        rank = action + 1
        self.hands[seat][action] -= 1
        self.hand_sizes[seat] -= 1
        cells, at = self._cells, self._at_seat[seat]
        cells[self._at_hand[seat] + action] = self.hands[seat][action]
        cells[at + SEAT_HAND_SIZE] = self.hand_sizes[seat]
        if self.phase == DOOR:
            self.door_picks[seat] = rank
            cells[self._at_pick[seat]] = rank
            cells[at + SEAT_PICKED] = 1
            nxt = seat + 1
            while nxt < self.num_players and not self.hand_sizes[nxt]:
                nxt += 1
            if nxt < self.num_players:
                self.current_player = nxt
            else:
                self._reveal_layer()
            return None
        self._put_on_stack(seat, rank)
        self.current_player = (seat + 1) % self.num_players
        return None

    def _put_on_stack(self, seat: int, rank: int) -> None:
        self.stacks[seat].append(rank)
        self.tops[seat] = rank
        cells, at = self._cells, self._at_seat[seat]
        cells[at + SEAT_STACK + rank - 1] += 1
        cells[at + SEAT_TOP] = rank
        if not self.first_door[seat]:
            self.first_door[seat] = rank
            cells[at + SEAT_DOOR] = rank
        # The card is now face up: one unseen copy fewer for every other seat.
        # (For `seat` it leaves its hand or door pick, so its count stays.)
        for other in self._others[seat]:
            cells[self._at_unseen[other] + rank - 1] -= 1

    def _reveal_layer(self) -> None:
        picks = {s: r for s, r in enumerate(self.door_picks) if r}
        self.door_picks = [0] * self.num_players
        cells = self._cells
        for s, r in picks.items():
            cells[self._at_pick[s]] = 0
            cells[self._at_seat[s] + SEAT_PICKED] = 0
            self._put_on_stack(s, r)  # door cards become top cards
        low = min(picks.values())
        lowest = [s for s, r in picks.items() if r == low]
        if len(lowest) > 1 and self.layer > 1:
            # RULES.md: among players tied on a later layer, the lowest first door card starts.
            first = min(self.first_door[s] for s in lowest)
            lowest = [s for s in lowest if self.first_door[s] == first]
        if len(lowest) == 1:
            self._start_play(lowest[0])
            return
        self.tied = lowest
        if not any(self.hand_sizes[s] for s in lowest):
            # RULES.md [D]: no tied player can add a card -> the tied player
            # nearest clockwise from player_0 (player_0 itself included) starts.
            self._start_play(min(lowest))
            return
        self.layer += 1
        cells[self._at_layer] = self.layer
        # Every player with a card left adds one; tied players have one, so someone does.
        self.current_player = next(s for s in range(self.num_players) if self.hand_sizes[s])

    def _start_play(self, seat: int) -> None:
        self.phase = PLAY
        self.starter = seat
        self.tied = [seat]
        self.current_player = seat
        self._cells[self._at_phase] = PLAY
        self._cells[self._at_seat[seat] + SEAT_STARTER] = 1

    def _dead(self, caller: int, rank: int) -> ScoreEvent:
        n = self.num_players
        target = dead_target(self.tops, caller, rank)
        held = sum(hand[rank - 1] for hand in self.hands)  # the caller's own hand counts
        right = held == 0
        payer, winner = (target, caller) if right else (caller, target)
        paid = min(rank, self.chips[payer])  # RULES.md [D]: pay what you have
        pot = self.pot
        self.chips[payer] -= paid
        self.chips[winner] += paid + pot
        self.pot = 0
        deltas = [c - b for c, b in zip(self.chips, self.chips_before_hand)]
        self.last_call = {
            "caller": f"player_{caller}",
            "target": f"player_{target}",
            "value": rank,
            "call_right": right,
            "copies_in_hands": held,
            "paid": paid,
            "pot": pot,
            "hand": self.hand_number,
        }
        details = {"caller": caller, "target": target, "value": rank, "call_right": int(right),
                   "copies_in_hands": held, "paid": paid, "pot": pot, "hand": self.hand_number}
        self._new_hand()
        return ScoreEvent(deltas, [True] * n, details)

    # -- views -------------------------------------------------------------------
    def _observation_entries(self, seat: int) -> np.ndarray:
        """Where each entry of `seat`'s observation lies in the table (see `_fill_table`)."""
        n = self.num_players
        own = [self._at_hand[seat] + k for k in range(NUM_RANKS)]
        own += [self._at_unseen[seat] + k for k in range(NUM_RANKS)]
        common = [self._at_pot + k for k in range(OBS_MY_DOOR_PICK - OBS_POT)] + [self._at_pick[seat]]
        seats = [self._at_seat[(seat + r) % n] + k for r in range(n) for k in range(SEAT_BLOCK)]
        return np.array(own + common + seats, dtype=np.intp)

    def _fill_table(self) -> None:
        """Write the whole table from the game state (after `shuffle_hidden`).

        This is the one full definition of what the observations show; steps
        write the few entries they change, and `_table_for_new_hand` writes
        the same values as this at the start of a hand, only faster.
        """
        n = self.num_players
        stack_counts = [kind_counts(stack, NUM_RANKS + 1)[1:] for stack in self.stacks]  # a card id is its rank
        face_up = [sum(column) for column in zip(*stack_counts)]
        values = [c for hand in self.hands for c in hand]
        for s in range(n):
            # unseen: copies of the rank, less those face up, in this hand, or its own door pick
            pick = self.door_picks[s]
            values += [c - f - h - (1 if r == pick else 0)
                       for r, c, f, h in zip(RANKS, self.copies, face_up, self.hands[s])]
        values += [self.pot, self.hand_number, self.phase, self.layer]
        values += self.door_picks
        for s in range(n):
            # SEAT_TO_ACT stays 0 here: `observe` marks the player to act, who changes every step.
            values += (self.chips[s], self.hand_sizes[s], self.tops[s], self.first_door[s], 0,
                       1 if s == self.starter else 0, 1 if self.door_picks[s] else 0)
            values += stack_counts[s]
        self._table[:] = values

    def _table_for_new_hand(self, hand_counts: np.ndarray) -> None:
        """What `_fill_table` writes at the start of a hand, in a few slice writes (a hand starts every ~7 steps).

        Nothing is face up and nobody has a door pick yet, so a seat's unseen
        copies are all copies less its own hand, and each seat block holds
        only chips and hand size.
        """
        n, table = self.num_players, self._table
        table[: NUM_RANKS * n] = hand_counts
        table[NUM_RANKS * n : 2 * NUM_RANKS * n] = self._all_copies - hand_counts
        table[self._at_pick[0] :] = self._seats_at_deal
        cells = self._cells
        cells[self._at_pot] = self.pot
        cells[self._at_hand_number] = self.hand_number
        cells[self._at_phase] = DOOR
        cells[self._at_layer] = 1
        for at, chips in zip(self._at_seat, self.chips):
            cells[at + SEAT_CHIPS] = chips

    def observe(self, seat: int) -> np.ndarray:
        return self._observation(seat)

    def _observation(self, seat: int) -> np.ndarray:
        # `state()` calls this, not `observe`, which tests may patch.
        obs = self._table.take(self._obs_index[seat])  # a new array: the caller may keep or change it
        if self.current_player >= 0:  # -1 once the game has ended normally
            ahead = (self.current_player - seat) % self.num_players
            obs[OBS_SEATS + SEAT_BLOCK * ahead + SEAT_TO_ACT] = 1
        return obs

    def state(self) -> np.ndarray:
        aside = kind_counts(self.set_aside, NUM_RANKS + 1)[1:]  # a card id is its rank
        n, table = self.num_players, self._table
        hands = table[: NUM_RANKS * n]
        picks = table[self._at_pick[0] : self._at_pick[0] + n]
        return np.concatenate((hands, np.array(aside, dtype=np.float32), picks, self._observation(0)[OBS_POT:]))

    def card_places(self) -> dict[str, list[int]]:
        n = self.num_players
        places = {}
        for s in range(n):
            places[f"hand {s}"] = [r for r in RANKS for _ in range(self.hands[s][r - 1])]
            places[f"stack {s}"] = list(self.stacks[s])
            places[f"door_pick {s}"] = [self.door_picks[s]] if self.door_picks[s] else []
        places["set_aside"] = list(self.set_aside)
        return places

    def refresh(self) -> None:
        super().refresh()
        self._fill_table()

    def shuffle_hidden(self, seat: int, rng: np.random.Generator) -> None:
        others = [s for s in range(self.num_players) if s != seat]
        pool = list(self.set_aside)
        for s in others:
            pool += [r for r in RANKS for _ in range(self.hands[s][r - 1])]
            if self.door_picks[s]:
                pool.append(self.door_picks[s])
        pool = shuffled(sorted(pool), rng)  # sorted: the redeal depends only on what `seat` knows
        for s in others:
            size = self.hand_sizes[s]
            self.hands[s] = [0] * NUM_RANKS
            for r in pool[:size]:
                self.hands[s][r - 1] += 1
            pool = pool[size:]
            if self.door_picks[s]:
                self.door_picks[s] = pool.pop()
        self.set_aside = pool
        self._mask = None
        self._fill_table()

    def action_name(self, action: int, seat: int) -> str:
        if action >= A_DEAD:
            return f"DEAD {action - A_DEAD + 1}"
        return f"play {action + 1}"

    def explain_action(self, action: int, seat: int) -> str:
        if action >= A_DEAD:
            rank = action - A_DEAD + 1
            target = dead_target(self.tops, seat, rank)
            return (f"claim that no hand at the table, yours included, holds a {rank}, at player_{target}'s top card: "
                    f"if right, player_{target} pays you {rank} chips and you take the pot ({self.pot}); "
                    f"if wrong, you pay player_{target} {rank} chips and they take the pot")
        if self.phase == DOOR:
            return (f"place your {action + 1} as a door card, face down until every player has placed one: "
                    f"the lowest door card starts (a tie for lowest adds another layer)")
        return f"lay your {action + 1} face up on your stack, where it becomes your top card"

    def public_action_name(self, action: int, seat: int) -> str:
        # A door card stays face down until the whole layer is revealed.
        if self.phase == DOOR:
            return "places a door card face down"
        return self.action_name(action, seat)

    def hand_names(self, seat: int) -> list[int]:
        return [r for r in RANKS for _ in range(self.hands[seat][r - 1])]

    def view(self, seat: int) -> str:
        return self.render(viewer=seat)

    def render(self, viewer: int | None = None) -> str:
        """The whole table; with `viewer`, only what that seat may see (for a human player)."""
        if self.game_over:
            head = f"Deadfall: game over after {self.hand_number} hand(s)"
        elif self.phase == DOOR:
            head = f"Deadfall hand {self.hand_number}: door cards, layer {self.layer}, pot {self.pot}"
        else:
            head = f"Deadfall hand {self.hand_number}: play, player_{self.starter} started, pot {self.pot}"
        lines = [head]
        for s in range(self.num_players):
            mark = ">" if s == self.current_player and not self.game_over else " "
            sees = viewer is None or s == viewer
            pick = ""
            if self.door_picks[s]:
                pick = f"; door card face down: {self.door_picks[s] if sees else '?'}"
            top = self.tops[s] or "-"
            held = f"hand {plain_words(self.hand_names(s))}" if sees else f"{self.hand_sizes[s]} cards"
            you = " (you)" if s == viewer else ""
            lines.append(
                f"{mark} player_{s}{you}: chips {self.chips[s]}, top {top}; stack {plain_words(self.stacks[s])}; {held}{pick}"
            )
        if self.last_call is not None:
            c = self.last_call
            verdict = "right" if c["call_right"] else "wrong"
            lines.append(
                f"  last call (hand {c['hand']}): {c['caller']} DEAD {c['value']} on {c['target']}, "
                f"{verdict} ({c['copies_in_hands']} in hands), paid {c['paid']} + pot {c['pot']}"
            )
        if self.game_over:
            best = max(self.chips)
            lines.append(f"  winner(s): {', '.join(f'player_{s}' for s in range(self.num_players) if self.chips[s] == best)}")
        return "\n".join(lines)

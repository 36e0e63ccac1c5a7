"""What every rules engine in cardzoo provides, and the helpers they share.

A rules engine knows one game and nothing about PettingZoo. The shared adapter
(`envs.adapter.CardGameEnv`) turns any engine into an AEC environment, so a new
game is a new `Engine` subclass plus a short `<game>_v0.py` shim.

An engine is a plain object:

* ``__init__(num_players=None, **rule_options)`` checks its options and raises
  ``ValueError`` naming the valid choices.
* ``reset(rng, deal=None)`` starts a new game from a ``numpy.random.Generator``;
  ``deal`` (optional) fixes the first round, see each game's docstring.
* ``current_player`` is the seat that must act; ``game_over`` says the game
  ended; ``out[seat]`` says a seat was eliminated before the end (Neu).
* ``legal_mask()`` is an int8 vector over the fixed action space for
  ``current_player``.
* ``step(action)`` applies a *legal* action and returns a `ScoreEvent` when
  scores changed (or a round ended) and ``None`` otherwise.
* ``observe(seat)`` / ``state()`` build float32 vectors of fixed size
  ``obs_size`` / ``state_size``: what that seat may know, and everything.
  ``obs_low`` / ``obs_high`` and ``state_low`` / ``state_high`` are float32
  arrays of those sizes that bound every index in every reachable state
  (set by `set_bounds`; the property tests check them).
* ``info_defaults()`` lists the facts a `ScoreEvent` reports, each a number
  or a per-seat list, with the value that stands for "absent" on steps
  without an event; ``INFO_SEATS`` names the facts that hold a seat (-1 =
  none) and ``INFO_CODES`` those that hold a code, with a readable name per
  code. The adapter puts these facts in every agent's ``infos`` at every
  step and keeps a readable copy in ``env.last_event``. ``event_sentence(details)``
  says what an event's facts mean in one sentence in the game's words (the web page's
  round results).
* ``action_name(action, seat)`` / ``action_from_name(name, seat)`` translate;
  ``explain_action(action, seat)`` says what a move does now, ``hand_cards(seat)`` lists a hand.
* ``render()`` returns the whole table as text (a spectator's view);
  ``view(seat)`` what one seat may see (lists as plain words, `plain_words`);
  ``ranks()`` the final ranks.
* ``deck`` (tuple of card ids) and ``card_places()`` (place name -> list of
  card ids, e.g. ``"hand 0"``, ``"draw_pile"``) let tests check that every card
  is in exactly one place.
* ``shuffle_hidden(seat, rng)`` redeals, in place, everything ``seat`` cannot
  see (other hands, draw-pile order), keeping every place's size; the
  information-leak tests check that ``observe(seat)`` does not change.
* chance (`envs.chance`): every draw is ``chance_draw(pile)``, deals and reshuffles say
  so; ``step_outcomes(action)`` lists every way a move turns out, with exact
  probabilities; the information-set key (`envs.history`): ``keep_history()``, then
  ``information_key(seat)``.

Facts about the game as a whole, as OpenSpiel's ``GameInfo`` states them, which
`envs.testing` checks at every step of the tests and the soak run:

* ``max_game_length``: the most steps (decisions) a game can take with these
  options;
* ``conserves``: how the score currency moves (see `CONSERVES`);
* ``hidden_decisions``: decisions made one seat after another that stay hidden
  until they are resolved, and ``hidden_decision_key()``, which names the one
  under way (None outside one);
* ``secret_actions``: the actions whose *taker* is kept from the other seats
  (who is asked can tell about a hand), so that a seat's view shows them
  without the seat;
* ``card_names``: each card id's name in the game's card notation;
* ``OBS_PARTS`` / ``SEAT_PARTS`` / ``SEAT_BLOCK``: the observation's named parts
  (each part's first index, from the engine module's ``OBS_*`` / ``SEAT_*``
  constants), read as slices through ``obs_layout()`` and ``seat_layout()``.

`envs.info(game)` gathers these facts without building an env.
"""

from __future__ import annotations

import copy
from collections import Counter
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

from envs import small
from envs.chance import Chance, ChanceEvent, NeedChance  # noqa: F401 (part of the engine protocol)
from envs.history import History


class ScoreEvent(NamedTuple):
    """A change of scores (RULES.md, "Scores and rewards")."""

    deltas: Sequence[int]  # raw score change per seat
    players: Sequence[bool]  # seats still in the game at this event
    details: dict[str, Any]  # public facts about the event (numbers, see `Engine.info_defaults`)


def plain_copy(value: Any) -> Any:
    """A deep copy of plain state (numbers, strings, None, lists, tuples, numpy arrays), several times
    faster than ``copy.deepcopy`` (search copies a state per world); anything else: deepcopy."""
    kind = type(value)
    if kind is int or kind is bool or kind is float or kind is str or value is None:
        return value
    if kind is list:
        return [x if type(x) is int else plain_copy(x) for x in value]
    if kind is tuple:
        return tuple(plain_copy(x) for x in value)
    if kind is np.ndarray:
        return value.copy()
    return copy.deepcopy(value)


def zero_sum_rewards(event: ScoreEvent) -> list[float]:
    """Each taking part gets its own change minus the mean change of those taking part (RULES.md
    [D]: rewards sum to zero at every event; seats not in the game get 0)."""
    taking_part = [d for d, p in zip(event.deltas, event.players) if p]
    mean = sum(taking_part) / len(taking_part) if taking_part else 0.0
    return [float(d - mean) if p else 0.0 for d, p in zip(event.deltas, event.players)]


def ranks_from_keys(keys: Sequence[Any]) -> list[int]:
    """Competition ranks (1 = best) from sort keys where larger is better; ties share."""
    return [1 + sum(1 for other in keys if other > k) for k in keys]


# How a game's score currency may move (`Engine.conserves`):
CONSERVES = {
    "box": "chips only leave, to the box: every score event is one seat paying one chip",
    "pot": "chips + pot stay constant at every step, and every score event sums to zero",
    "transfer": "tokens are paid from player to player: every score event sums to zero",
    "penalty": "penalty points are created, not moved: a score (minus the penalty) never goes up",
}


_BOUNDS: dict = {}  # (engine class, players, options) -> the four bound arrays (Engine.set_bounds)


class Engine(Chance, History):
    """Base class: the declarative facts about a game plus shared plumbing."""

    game_name = ""
    display_name = ""  # the game's name for people ("Not Your Ma's Jong")
    min_players = 2
    max_players = 7
    default_players = 4
    # Per-index bounds of observe() and state(), read-only float32 arrays set by set_bounds().
    obs_low: np.ndarray
    obs_high: np.ndarray
    state_low: np.ndarray
    state_high: np.ndarray
    # Facts of a ScoreEvent that hold a seat (-1 = none) or a code (name per code).
    INFO_SEATS: frozenset[str] = frozenset()
    INFO_CODES: dict[str, tuple[str, ...]] = {}
    # What the score currency conserves, one of CONSERVES; None states nothing.
    conserves: str | None = None
    # Decisions taken in seat order that the others may not see until they are resolved
    # (in words; None when the game has none); hidden_decision_key() says which is under way.
    hidden_decisions: str | None = None
    # Actions whose taker is kept from the other seats (see the module docstring).
    secret_actions: frozenset[int] = frozenset()
    # Card id -> its name in the game's card notation (stacked deals, rendering).
    card_names: dict[int, str] = {}
    # The observation's parts in order: name -> first index. A part runs to the next one's
    # start; the last part holds one block of SEAT_BLOCK values per seat, seat-relative,
    # whose parts SEAT_PARTS names the same way.
    OBS_PARTS: dict[str, int] = {}
    SEAT_PARTS: dict[str, int] = {}
    SEAT_BLOCK = 0

    num_players: int
    num_actions: int
    obs_size: int
    state_size: int
    current_player: int
    game_over: bool
    out: list[bool]
    scores: list[int]

    # The player count each preset of the rule option `rules` fixes (a small preset is two players:
    # RULES.md "Small presets"), maybe outside min_players..max_players.
    PRESET_PLAYERS: dict[str, int] = {}

    player_range = classmethod(small.player_range)  # the counts the game takes with these rule options
    preset_for = classmethod(small.preset_for)  # the preset of a count outside the game's range

    def __init__(self, num_players: int | None = None, **rule_options: Any) -> None:
        low, high = self.player_range(rule_options)
        if num_players is None:
            num_players = low if low == high else self.default_players
        if isinstance(num_players, bool) or not isinstance(num_players, (int, np.integer)):
            raise ValueError(
                f"{self.game_name}: num_players must be an integer from "
                f"{self.min_players} to {self.max_players}, got {num_players!r}"
            )
        if (low, high) != (self.min_players, self.max_players) and num_players != low:
            words = {2: "two", 3: "three", 4: "four"}
            raise ValueError(f"{self.game_name}: rules={rule_options['rules']!r} is a {words.get(low, low)}-player "
                             f"preset, got num_players={num_players}")
        if not low <= num_players <= high:
            raise ValueError(
                f"{self.game_name}: num_players must be from {self.min_players} to "
                f"{self.max_players}, got {num_players}"
            )
        self.num_players = int(num_players)
        self.options = self.parse_options(rule_options)

    # -- rule options -----------------------------------------------------
    # Subclasses list their options as {name: (default, check, description)};
    # check(value) returns True when the value is valid.
    OPTIONS: dict[str, tuple[Any, Callable[[Any], bool], str]] = {}

    def default_for(self, name: str) -> Any:
        """Default value of an option; subclasses override for defaults that depend on players."""
        return self.OPTIONS[name][0]

    def parse_options(self, given: dict[str, Any]) -> dict[str, Any]:
        unknown = sorted(set(given) - set(self.OPTIONS))
        if unknown:
            valid = ", ".join(sorted(self.OPTIONS)) or "none"
            raise ValueError(
                f"{self.game_name}: unknown rule option(s) {', '.join(unknown)}; "
                f"valid options: {valid}"
            )
        options = {}
        for name, (_, check, description) in self.OPTIONS.items():
            value = given.get(name, None)
            if value is None:
                value = self.default_for(name)
            try:
                ok = check(value)
            except (TypeError, ValueError):
                ok = False
            if not ok:
                raise ValueError(
                    f"{self.game_name}: bad rule option {name}={value!r}; expected {description}"
                )
            options[name] = value
        return options

    # -- interface every engine implements ------------------------------
    def reset(self, rng: np.random.Generator, deal: dict | None = None) -> None:
        raise NotImplementedError

    def legal_mask(self) -> np.ndarray:
        raise NotImplementedError

    def step(self, action: int) -> ScoreEvent | None:
        raise NotImplementedError

    def observe(self, seat: int) -> np.ndarray:
        """By default the seat's hand counts, then the public block as that seat sees it
        (``_public(seat)``); a game with another layout overrides this."""
        return np.array(self.hands[seat] + self._public(seat), dtype=np.float32)

    def state(self) -> np.ndarray:
        raise NotImplementedError

    def action_name(self, action: int, seat: int) -> str:
        """The action's name for people; every game names its own (this is the fallback)."""
        return f"action {action}"

    def hand_cards(self, seat: int) -> list[str]:
        """`seat`'s hand as card names ("Red 3", "-10", "W"); its length is public, its names are not."""
        names = self.hand_names(seat)  # a list, or one string ("-" for an empty hand)
        return [c for c in names.split() if c != "-"] if isinstance(names, str) else [str(c) for c in names]

    def explain_action(self, action: int, seat: int) -> str:
        """What the action does now, in the game's words, told from what `seat` may know (every game
        explains its own; this fallback is the name)."""
        return self.action_name(action, seat)

    def public_action_name(self, action: int, seat: int) -> str:
        """How `seat`'s action looks to everyone else (secret parts left out).

        Default: the action name. Games with secret choices (a face-down
        door card, the number inside a For You offer) override this, and the
        terminal player shows other seats' moves through it.
        """
        return self.action_name(action, seat)

    def action_from_name(self, name: str, seat: int) -> int:
        """Inverse of `action_name` (names depend only on the action and the seat)."""
        wanted = " ".join(str(name).lower().split())
        cache = self.__dict__.setdefault("_action_of_name", {})
        if seat not in cache:
            cache[seat] = {self.action_name(a, seat).lower(): a for a in range(self.num_actions)}
        if wanted in cache[seat]:
            return cache[seat][wanted]
        examples = ", ".join(repr(self.action_name(a, seat)) for a in range(min(4, self.num_actions)))
        raise ValueError(f"{self.game_name}: unknown action name {name!r}; names look like {examples}")

    def render(self) -> str:
        raise NotImplementedError

    def view(self, seat: int) -> str:
        """What `seat` may see, as text, for a human player (never another hand).

        Games override this with a readable table; the fallback prints the
        seat's own observation vector, which by construction hides nothing it should not.
        """
        values = " ".join(f"{v:g}" for v in self.observe(seat))
        return f"{self.game_name}: you are player_{seat}; your observation: {values}"

    deck: tuple[int, ...] = ()

    def card_places(self) -> dict[str, list[int]]:
        raise NotImplementedError

    def shuffle_hidden(self, seat: int, rng: np.random.Generator) -> None:
        raise NotImplementedError

    def hide_decisions(self, seat: int) -> None:
        """Forget, in place, the hidden decisions of the other seats that are under way (see
        ``hidden_decisions``); a game without any has nothing to forget."""

    # The attributes that hold a game in progress, public and hidden alike. Every other
    # attribute is built by __init__ from the player count and the options, or is a cache
    # (or scratch space) that `refresh` rebuilds from these. An information state's
    # representative holds exactly these, after the hidden ones were redealt, so nothing else
    # an engine keeps (the deck as shuffled for the hand, a cache of the real hands) can carry
    # the real deal into it.
    STATE_FIELDS: tuple[str, ...] = ()

    def refresh(self) -> None:
        """Rebuild the caches from the `STATE_FIELDS` after they were set from outside
        (`from_fields`); a game with caches of its own extends this."""
        self._mask = None  # the legal mask, computed when first asked for

    def fields(self) -> dict:
        """The `STATE_FIELDS`, copied: plain lists, numbers and arrays (picklable)."""
        return {name: plain_copy(getattr(self, name)) for name in self.STATE_FIELDS}

    @classmethod
    def from_fields(cls, num_players: int, options: dict, fields: dict) -> "Engine":
        """An engine in the game that `fields` (`Engine.fields`) describes, built from nothing
        else: a new engine for the player count and options, the fields set, the caches rebuilt.
        Its chance stream ``rng`` is None until the caller gives one."""
        missing = [name for name in cls.STATE_FIELDS if name not in fields]
        extra = sorted(set(fields) - set(cls.STATE_FIELDS))
        if missing or extra:
            raise ValueError(f"{cls.game_name}: a game state needs the fields {', '.join(cls.STATE_FIELDS)}; "
                             + (f"missing {', '.join(missing)}" if missing else f"unknown {', '.join(extra)}"))
        engine = cls(num_players, **options)
        for name in cls.STATE_FIELDS:
            setattr(engine, name, plain_copy(fields[name]))
        engine.rng = None
        engine.refresh()
        return engine

    def information_state(self, seat: int) -> dict:
        """Everything `seat` knows, as a plain picklable dict (`envs.belief` documents it):
        the same for every arrangement of the cards the seat cannot see."""
        # Only the STATE_FIELDS cross into the representative world, and its hidden ones are
        # redealt there from a fixed stream (shuffle_hidden pools the unseen cards in sorted
        # order), so it depends only on what the seat knows.
        world = self.from_fields(self.num_players, self.options, self.fields())
        world.hide_decisions(seat)
        world.shuffle_hidden(seat, np.random.default_rng(0))
        world.refresh()
        to_act = not self.game_over and self.current_player == seat
        return {
            "game": self.game_name, "seat": int(seat), "num_players": self.num_players,
            "options": dict(self.options), "hand": self.card_places()[f"hand {seat}"],
            "observation": self.observe(seat).tolist(),
            "legal": np.flatnonzero(self.legal_mask()).tolist() if to_act else [],
            "representative": world.fields(),
            "key": self.information_key(seat),  # None unless the engine keeps its history
            "log": self.public_log(seat),
        }

    def next_draw_counts(self) -> dict[int, int]:
        """The next draw's chance outcomes: card kind -> its count in the draw pile ``draw`` (empty
        for a game without one); a kind comes next with probability count / pile size."""
        return dict(Counter(getattr(self, "draw", None) or ()))

    def shuffle_unseen(self, rng: np.random.Generator, top: int | None = None) -> None:
        """Redeal, in place, what no seat can see: the draw pile's order (with a card of kind
        `top` drawn next, when given) and the stream ``rng`` that later chance events (reshuffles,
        new hands) draw from. Every seat's ``observe`` is unchanged (tested); the luck-adjusted
        estimator (`experiments.tournament.luck`) samples chance outcomes with it."""
        pile = getattr(self, "draw", None)
        if pile:
            pile = shuffled(pile, rng)
            if top is not None:
                i = pile.index(top)  # ValueError: no such card in the pile
                pile[i], pile[-1] = pile[-1], pile[i]
            self.draw = pile
        elif top is not None:
            raise ValueError(f"{self.game_name}: no draw pile to draw {top!r} from")
        self.rng = rng

    def give_stacked_deal(self, deal: dict, parsed: list[list[int]], parse_card: Callable[[Any], int],
                          card_label: Callable[[int], str]) -> None:
        """Give each seat its hand of a stacked deal (`parsed`, card by card through the engine's
        ``_give``) and build the draw pile: the deal's pile on top, every card the deal does not
        name shuffled under it."""
        named = [c for h in parsed for c in h]
        self.draw = draw_pile_from_deal(deal, named, self.deck, parse_card, card_label, self.game_name, self.rng)
        for s, h in enumerate(parsed):
            for c in h:
                self._give(s, c)

    def ranks(self) -> list[int]:
        """Final rank per seat, 1 = best, ties share (default: by score)."""
        return ranks_from_keys(self.scores)

    @property
    def max_game_length(self) -> int:
        """The most steps (decisions) a game can take with this engine's options."""
        raise NotImplementedError

    def hidden_decision_key(self) -> Any:
        """A key naming the group of hidden decisions under way (equal for every decision of
        the group, see `hidden_decisions`), or None when the current decision is not one."""
        return None

    def obs_layout(self) -> dict[str, slice]:
        """The observation's named parts as slices of ``observe(seat)``, covering it in order."""
        return _slices(self.OBS_PARTS, self.obs_size)

    def seat_layout(self) -> dict[str, slice]:
        """The parts of one seat block as slices of that block (``SEAT_BLOCK`` values)."""
        return _slices(self.SEAT_PARTS, self.SEAT_BLOCK)

    def info_defaults(self) -> dict[str, Any]:
        """The facts every `ScoreEvent` of this game reports, with their "absent" values.

        An event's ``details`` holds some of these keys (the rest keep their
        absent values); values are ints, or lists of one int per seat.
        """
        return {}

    def event_sentence(self, details: dict[str, Any]) -> str:
        """One sentence in the game's words about the `ScoreEvent` whose ``details`` are given
        (the keys of `info_defaults`; absent keys keep their absent values), seats as player_k."""
        return "The round is over."

    def set_bounds(self) -> None:
        """Store the per-index bounds that the engine's ``_bounds()`` builds (``Bounds`` for
        the observation and the state). They depend only on the class, the player count and
        the rule options, so they are built once per such triple and shared, read-only: every
        sampled world and every env makes an engine, and building them cost more than the
        rest of a construction."""
        key = (type(self), self.num_players, repr(sorted(self.options.items())))
        arrays = _BOUNDS.get(key)
        if arrays is None:
            obs, state = self._bounds()
            for name, b, size in (("observation", obs, self.obs_size), ("state", state, self.state_size)):
                if len(b.low) != size:
                    raise AssertionError(f"{self.game_name}: {name} bounds cover {len(b.low)} indices, not {size}")
            arrays = (*obs.arrays(), *state.arrays())
            for a in arrays:
                a.flags.writeable = False
            _BOUNDS[key] = arrays
        self.obs_low, self.obs_high, self.state_low, self.state_high = arrays

    # -- shared helpers ----------------------------------------------------
    def relative(self, seat: int, other: int) -> int:
        """Seat `other` as seen from `seat`: 0 = self, 1 = next clockwise, ..."""
        return (other - seat) % self.num_players


def _slices(starts: dict[str, int], end: int) -> dict[str, slice]:
    """{name: first index} in order -> {name: slice up to the next part's first index (or end)}."""
    names, firsts = list(starts), list(starts.values())
    return {name: slice(a, b) for name, a, b in zip(names, firsts, firsts[1:] + [end])}


class Bounds:
    """Builds per-index low/high lists in the order of an observation's layout."""

    def __init__(self) -> None:
        self.low: list[float] = []
        self.high: list[float] = []

    def add(self, low: float | Sequence[float], high: float | Sequence[float], count: int = 1) -> "Bounds":
        """`count` indices between `low` and `high` (numbers, or sequences of `count` numbers)."""
        lows = list(low) if isinstance(low, (list, tuple)) else [low] * count
        highs = list(high) if isinstance(high, (list, tuple)) else [high] * count
        if len(lows) != count or len(highs) != count:
            raise AssertionError("bounds: low/high lengths differ from count")
        self.low += lows
        self.high += highs
        return self

    def flags(self, count: int = 1) -> "Bounds":
        return self.add(0, 1, count)

    def extend(self, low: Sequence[float], high: Sequence[float]) -> "Bounds":
        return self.add(list(low), list(high), len(low))

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        low, high = np.array(self.low, np.float32), np.array(self.high, np.float32)
        if np.any(low > high):
            raise AssertionError("bounds: a low above its high")
        # Every range includes 0, so that zero padding (frame stacking before the
        # first frames, an absent entry) stays inside the space.
        return np.minimum(low, 0), np.maximum(high, 0)


def plain_words(items: Sequence[Any], empty: str = "none") -> str:
    """Items for a text view as plain words ("3, 6, 9"), without a list's brackets or quotes."""
    return ", ".join(str(x) for x in items) or empty


def is_int_between(x: Any, low: int, high: int) -> bool:
    """Rule-option check: a true integer (not bool, not float) in [low, high] (upper bounds keep
    every observation inside its Box and float32-exact)."""
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)) and low <= x <= high


# -- stacked deals ------------------------------------------------------------


def parse_cards(cards: Any, parse_one: Callable[[Any], int], where: str, game: str) -> list[int]:
    """Turn a list written in the game's card notation into card ids, with clear errors."""
    if isinstance(cards, (str, bytes)) or not isinstance(cards, (list, tuple)):
        raise ValueError(f"{game}: deal {where} must be a list of cards, got {cards!r}")
    out = []
    for c in cards:
        try:
            out.append(parse_one(c))
        except (KeyError, ValueError, TypeError):
            raise ValueError(f"{game}: deal {where} has unknown card {c!r}") from None
    return out


def parse_hands(
    deal: dict,
    sizes: Sequence[int],
    parse_one: Callable[[Any], int],
    game: str,
    size_rule: Callable[[int, int], str] = lambda seat, size: f"every hand has {size}",
    seat_note: str = "",
) -> list[list[int]]:
    """Parse ``deal["hands"]``: one list per seat, seat i holding exactly ``sizes[i]`` cards."""
    hands = deal.get("hands")
    n = len(sizes)
    if not isinstance(hands, (list, tuple)) or len(hands) != n:
        raise ValueError(f"{game}: deal['hands'] must list {n} hands, one per seat{seat_note}")
    parsed = [parse_cards(h, parse_one, f"hands[{i}]", game) for i, h in enumerate(hands)]
    for i, (h, size) in enumerate(zip(parsed, sizes)):
        if len(h) != size:
            raise ValueError(f"{game}: deal hands[{i}] has {len(h)} cards; {size_rule(i, size)}")
    return parsed


def draw_pile_from_deal(
    deal: dict,
    named: Sequence[int],
    deck: Sequence[int],
    parse_one: Callable[[Any], int],
    card_label: Callable[[int], str],
    game: str,
    rng: np.random.Generator,
) -> list[int]:
    """The draw pile of a stacked deal, top at the end of the list: ``deal["draw_pile"]`` (top
    first, optional) lies on top; every card of the deck the deal does not name (``named`` + the
    pile) is shuffled under it."""
    top = parse_cards(deal.get("draw_pile", []), parse_one, "draw_pile", game)
    rest = check_against_deck(list(named) + top, deck, card_label, game)
    return shuffled(rest, rng) + top[::-1]


def kind_counts(cards: Sequence[int], num_kinds: int) -> list[int]:
    """How many cards of each kind (card ids 0..num_kinds-1) a pile holds."""
    counts = [0] * num_kinds
    for k in cards:
        counts[k] += 1
    return counts


def shuffled(cards: Sequence[int], rng: np.random.Generator) -> list[int]:
    """A new list with the cards in a random order from the env's seeded RNG."""
    return [cards[i] for i in rng.permutation(len(cards))]


def shuffled_hidden_pool(draw: Sequence[int], hands: Sequence[Sequence[int]], seats: Sequence[int],
                         rng: np.random.Generator) -> list[int]:
    """For `shuffle_hidden`: the draw pile and the hands of `seats` (a count per card kind), as
    one list in a random order. Sorted before the shuffle, so that the redeal depends only on
    what the seat that keeps its cards knows and on rng: two games that look the same to that
    seat are redealt the same way."""
    pool = list(draw) + [k for s in seats for k, count in enumerate(hands[s]) for _ in range(count)]
    return shuffled(sorted(pool), rng)


def check_against_deck(named: list[int], deck: Sequence[int], card_label: Callable[[int], str], game: str) -> list[int]:
    """Check that the named cards fit in the deck; return the deck's remaining cards."""
    left = Counter(deck)
    used = Counter(named)
    too_many = [
        f"{card_label(c)} x{n} (the deck has {left[c]})" for c, n in sorted(used.items()) if n > left[c]
    ]
    if too_many:
        raise ValueError(f"{game}: deal names more copies than the deck holds: {', '.join(too_many)}")
    left.subtract(used)
    return sorted(left.elements())


def check_deal_keys(deal: Any, allowed: set[str], game: str) -> dict:
    if not isinstance(deal, dict):
        raise ValueError(f"{game}: options['deal'] must be a dict, got {type(deal).__name__}")
    unknown = sorted(set(deal) - allowed)
    if unknown:
        raise ValueError(
            f"{game}: unknown deal key(s) {', '.join(map(repr, unknown))}; valid keys: {', '.join(sorted(allowed))}"
        )
    return deal

"""Every cardzoo game as an OpenSpiel game (the optional extra ``openspiel``).

    import pyspiel
    import envs.openspiel        # registers cardzoo_not_for_me, cardzoo_deadfall, cardzoo_neu
                                 # and cardzoo_not_your_mas_jong with pyspiel
    game = pyspiel.load_game("cardzoo_neu", {"players": 2, "rules": "small"})

    from open_spiel.python import policy
    from open_spiel.python.algorithms import exploitability
    exploitability.nash_conv(game, policy.UniformRandomPolicy(game))   # 0.394..., as experiments.solve

A game's parameters are ``players`` and every rule option of its engine whose default is a number,
a bool or a word (Neu's ``rules``, Deadfall's ``starting_chips`` and ``rounds``, Ma's Jong's
``steal_phase``, Not For Me's ``max_round_steps``), with the engine's defaults.

What OpenSpiel sees:

* **Chance nodes come from the engine** (`envs.chance`). A deal is dealt card by card: each chance
  node names the next card of a hand (or of Not For Me's supply), in seat order, with probability
  (copies left) / (cards left), as a shuffled deck would deal it; the cards no part names go to
  the draw pile (or Deadfall's set-aside) unseen. Every draw from a pile is a chance node of its
  own, over the kinds it holds. A chance outcome is a card id (`envs.info(game).card_names`).
  A move that meets chance is applied when its last chance node is; its reward comes then.
* **Information states** are the engine's information-set key (`Engine.information_key`): the
  seat's own observations and moves and the public history in order, as a hex string. Two states
  share one exactly when the seat has seen the same things in the same order; exact solving
  (`experiments.solve`) uses the same key, so OpenSpiel's exploitability agrees with it.
* **Observations** are the env's observation vector (``observation_tensor``), and its text is the
  seat's own view in the game's notation.
* **Rewards** are the env's (RULES.md "Scores and rewards": each seat's score change minus the
  mean, at every score event), so the game is zero-sum and ``returns()`` is the sum of a seat's
  rewards. cardzoo states no bound on a game's total reward, so ``min_utility`` and
  ``max_utility`` are ∓10⁶, far beyond what any game moves.

The games are Python games: fine for OpenSpiel's tree algorithms on a small preset (CFR,
exploitability) and for sampling (ISMCTS, MCCFR, NFSP), slow beside cardzoo's own engines for
anything that plays millions of games.
"""

from __future__ import annotations

import copy
import pickle
from collections import Counter

import numpy as np

try:
    import pyspiel
except ImportError:  # pragma: no cover - the message is the point
    raise ImportError("envs.openspiel needs OpenSpiel: pip install 'cardzoo[openspiel]'") from None

import envs
from envs.chance import NeedChance
from envs.engine import plain_copy, zero_sum_rewards

PREFIX = "cardzoo_"
_PARAM_TYPES = (bool, int, float, str)
UTILITY_BOUND = 1e6


def short_name(game: str) -> str:
    """The name a cardzoo game is registered under with pyspiel (``cardzoo_<game>``)."""
    return PREFIX + game


def _parameters(engine_cls) -> dict:
    out = {"players": int(engine_cls.default_players)}
    for name, (default, _, _) in engine_cls.OPTIONS.items():
        if type(default) in _PARAM_TYPES:
            out[name] = default
    return out


class CardzooGame(pyspiel.Game):
    """One cardzoo game with its parameters (a subclass per game is registered)."""

    game = ""  # the cardzoo name, set on each registered subclass
    game_type: pyspiel.GameType

    def __init__(self, params=None):
        engine_cls = envs.engine_class(self.game)
        defaults = _parameters(engine_cls)
        given = dict(params or {})  # pyspiel has already refused a name it does not know
        values = {**defaults, **given}
        # pyspiel hands over every parameter, defaults included; the engine gets those that differ,
        # since a preset refuses an option it fixes (Deadfall's small preset plays one hand).
        options = {k: v for k, v in values.items() if k != "players" and v != defaults[k]}
        self.engine = engine_cls(int(values["players"]), **options)  # ValueError names a bad option
        e = self.engine
        n = e.num_players
        self.first_deals = _first_deals(e)
        info = pyspiel.GameInfo(
            num_distinct_actions=int(e.num_actions),
            max_chance_outcomes=max(int(max(e.card_names)) + 1, len(self.first_deals or ())),
            num_players=n,
            min_utility=-UTILITY_BOUND,
            max_utility=UTILITY_BOUND,
            utility_sum=0.0,
            max_game_length=int(e.max_game_length),
        )
        super().__init__(self.game_type, info, {k: values[k] for k in given} if given else {})

    def new_initial_state(self):
        return CardzooState(self)

    def make_py_observer(self, iig_obs_type=None, params=None):
        if params:
            raise ValueError(f"{short_name(self.game)}: observer parameters are not supported, got {params}")
        perfect_recall = iig_obs_type is not None and iig_obs_type.perfect_recall
        return CardzooObserver(self.engine.obs_size, perfect_recall)


def _first_deals(engine) -> list | None:
    """A small preset's first deals, each with its probability (the engine's ``deals()``), or
    None where the engine lists none."""
    try:
        return engine.deals()
    except (AttributeError, ValueError):
        return None


class CardzooState(pyspiel.State):
    """A cardzoo engine, plus the chance under way: a move (or the first deal) waiting on chance
    nodes, with the outcomes taken so far, and a deal being dealt card by card."""

    def __init__(self, game: CardzooGame):
        super().__init__(game)
        # OpenSpiel clones a state by building a new initial state and deep-copying each attribute
        # into it. So the start is built once per game, and what never changes in place (the
        # engine: every move steps a copy of it; the outcomes) is held in a `_Shared`, which a
        # deep copy shares.
        start = game.__dict__.get("_start")
        if start is None:
            n = game.engine.num_players
            engine = pickle.loads(pickle.dumps(game.engine))
            engine.keep_history()
            self._box = _Shared(engine)
            self._waiting: int | None = -1  # -1: the first deal; a move id; None: nothing waits
            self._taken = _Shared(())  # the chance outcomes taken so far for what waits
            self._dealing: dict | None = None  # the deal being dealt, card by card
            self._chance = _Shared(())  # the chance node's outcomes and probabilities
            self._rewards = np.zeros(n)
            self._returns = np.zeros(n)
            if game.first_deals:  # a preset: one chance node over its listed first deals
                self._chance = _Shared(tuple((i, p) for i, (p, _) in enumerate(game.first_deals)))
            else:
                self._advance()
            game._start = dict(self.__dict__)
        else:
            self.__dict__.update(start)  # nothing in it is changed in place

    @property
    def engine(self):
        """The cardzoo engine at this state (read it, never step it): at a chance node, the
        engine before the move or deal that waits on chance."""
        return self._box.value

    @property
    def _engine(self):
        return self._box.value

    # -- chance --------------------------------------------------------------
    def _advance(self) -> None:
        """Run what waits with the outcomes taken so far: it ends (the engine moves on) or meets
        the next chance node."""
        e = _copy(self._engine)
        e._forced, e._enumerating = list(self._taken.value), True
        try:
            if self._waiting == -1:
                e.reset(np.random.default_rng(0))
                event = None
            else:
                event = e.step(self._waiting)
        except NeedChance as need:
            if need.event.kind == "deal":
                deck, parts = e.deal_parts()
                self._dealing = {"left": Counter(deck), "parts": parts, "part": 0, "seat": 0, "cards": [], "deal": {}}
                self._settle()
            else:
                self._chance = _Shared(tuple(zip(need.event.outcomes, need.event.probabilities)))
            return
        e._forced, e._enumerating = None, False
        self._box, self._waiting, self._taken, self._chance = _Shared(e), None, _Shared(()), _Shared(())
        if event is not None:
            self._rewards = np.asarray(zero_sum_rewards(event), np.float64)
            self._returns = self._returns + self._rewards

    def _take(self, outcome) -> None:
        self._taken = _Shared(self._taken.value + (outcome,))

    def _listing_first_deals(self) -> bool:
        return self._waiting == -1 and not self._taken.value and bool(self.get_game().first_deals)

    def _dealing_outcomes(self) -> None:
        left = self._dealing["left"]
        total = sum(left.values())
        self._chance = _Shared(tuple((k, c / total) for k, c in sorted(left.items()) if c))

    def _deal_card(self, card: int) -> None:
        # A new dict, not the old one changed: a clone may share the old one.
        d = self._dealing
        left = d["left"].copy()
        left[card] -= 1
        self._dealing = {**d, "left": left, "cards": d["cards"] + [card],
                         "deal": {k: list(v) for k, v in d["deal"].items()}}
        self._settle()

    def _settle(self) -> None:
        """Close every slot the deal has filled (a seat out of the game takes none), then offer the
        next card, or, the deal complete, hand it to what waits."""
        d = self._dealing
        while d["part"] < len(d["parts"]):
            key, sizes = d["parts"][d["part"]]
            size = sizes[d["seat"]] if isinstance(sizes, list) else sizes
            if len(d["cards"]) < size:
                break
            names = [self._engine.card_names[c] for c in d["cards"]]
            d["cards"] = []
            if isinstance(sizes, list):
                d["deal"].setdefault(key, []).append(names)
                d["seat"] += 1
                if d["seat"] < len(sizes):
                    continue
            else:
                d["deal"][key] = names
            d["part"], d["seat"] = d["part"] + 1, 0
        if d["part"] == len(d["parts"]):
            self._take(d["deal"])
            self._dealing = None
            self._advance()
        else:
            self._dealing_outcomes()

    # -- the OpenSpiel API ---------------------------------------------------
    def current_player(self):
        if self._waiting is not None:
            return pyspiel.PlayerId.CHANCE
        if self._engine.game_over:
            return pyspiel.PlayerId.TERMINAL
        return int(self._engine.current_player)

    def _legal_actions(self, player):
        if player != self._engine.current_player:
            return []
        return [int(a) for a in np.flatnonzero(self._engine.legal_mask())]

    def chance_outcomes(self):
        return [(int(k), float(p)) for k, p in self._chance.value]

    def _apply_action(self, action):
        action = int(action)
        self._rewards = np.zeros(len(self._returns))  # the rewards of this action only
        if self._waiting is None:
            self._waiting, self._taken = action, _Shared(())
            self._advance()
        elif self._dealing is not None:
            self._deal_card(action)
        elif self._listing_first_deals():
            self._take(self.get_game().first_deals[action][1])
            self._advance()
        else:
            self._take(action)
            self._advance()

    def _action_to_string(self, player, action):
        if player == pyspiel.PlayerId.CHANCE:
            if self._listing_first_deals():
                hands = self.get_game().first_deals[int(action)][1]["hands"]
                return "deal " + " / ".join(" ".join(map(str, h)) for h in hands)
            word = "deal" if self._dealing is not None else "draw"
            return f"{word} {self._engine.card_names[int(action)]}"
        return self._engine.action_name(int(action), int(player))

    def is_terminal(self):
        return self._waiting is None and bool(self._engine.game_over)

    def rewards(self):
        return list(self._rewards)

    def returns(self):
        return list(self._returns)

    def _dealt(self) -> bool:
        return self._waiting != -1  # the first deal is done: the engine has a table

    def information_state_string(self, player=None):
        if player is None:
            player = self.current_player()
        if not self._dealt():
            return "before the deal"
        key = self._engine.information_key(int(player)).hex()
        # A move of this seat's waiting on chance: the seat knows it made it.
        if self._waiting is not None and self._waiting >= 0 and self._engine.current_player == player:
            return f"{key} moved {self._waiting}"
        return key

    def observation_string(self, player=None):
        if player is None:
            player = self.current_player()
        return _view_text(self._engine, int(player)) if self._dealt() else "before the deal"

    def observation_tensor(self, player=None):
        if player is None:
            player = self.current_player()
        return list(_observation(self, int(player)))

    def __str__(self):
        return self._engine.render() if self._dealt() else "before the deal"


def _copy(engine):
    """A copy of `engine` to step: its game fields copied (`Engine.STATE_FIELDS`), its caches
    rebuilt from them (`Engine.refresh`), the rest (built from the players and options) shared;
    several times faster than pickling. The history, a list of tuples that only grows, shares
    its tuples. An engine not yet dealt (no game fields yet) is pickled."""
    if "game_over" not in engine.__dict__:
        return pickle.loads(pickle.dumps(engine, pickle.HIGHEST_PROTOCOL))
    clone = copy.copy(engine)
    for name in engine.STATE_FIELDS:
        setattr(clone, name, plain_copy(getattr(engine, name)))
    # The stream is shared, not copied: every chance outcome is taken from OpenSpiel, so all the
    # engine's own stream still does is order the cards of a pile nobody sees (a draw from it
    # is a chance node over the kinds it holds).
    history = engine.__dict__.get("_history")
    clone._history = None if history is None else list(history)
    clone.refresh()
    return clone


class _Shared:
    """A value that is never changed in place, so that a deep copy (OpenSpiel's clone) shares it."""

    __slots__ = ("value",)

    def __init__(self, value) -> None:
        self.value = value

    def __deepcopy__(self, memo) -> "_Shared":
        return self


def _observation(state: CardzooState, seat: int) -> np.ndarray:
    if not state._dealt():
        return np.zeros(state._engine.obs_size, np.float32)
    return np.asarray(state._engine.observe(seat), np.float32)


def _view_text(engine, seat: int) -> str:
    hand = getattr(engine, "hand_names", None)
    words = [f"player_{seat}"]
    if callable(hand):
        words.append("hand " + " ".join(map(str, hand(seat))))
    words.append("scores " + " ".join(map(str, engine.scores)))
    return " | ".join(words)


class CardzooObserver:
    """OpenSpiel's observer (`make_py_observer`): the env's observation vector as the tensor; as
    a string, the seat's view, or with perfect recall its information-set key."""

    def __init__(self, size: int, perfect_recall: bool):
        self.perfect_recall = perfect_recall
        self.tensor = np.zeros(0 if perfect_recall else size, np.float32)
        self.dict = {"observation": self.tensor}

    def set_from(self, state, player):
        if not self.perfect_recall:
            self.tensor[:] = _observation(state, int(player))

    def string_from(self, state, player):
        if self.perfect_recall:
            return state.information_state_string(player)
        return state.observation_string(player)


def _register(game: str) -> None:
    engine_cls = envs.engine_class(game)
    game_type = pyspiel.GameType(
        short_name=short_name(game),
        long_name=f"cardzoo {engine_cls.display_name}",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.ZERO_SUM,
        reward_model=pyspiel.GameType.RewardModel.REWARDS,
        max_num_players=int(engine_cls.max_players),
        min_num_players=int(min(engine_cls.min_players, *engine_cls.PRESET_PLAYERS.values())),  # a preset's count too
        provides_information_state_string=True,
        provides_information_state_tensor=False,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=_parameters(engine_cls),
    )
    cls = type(f"{engine_cls.__name__}OpenSpielGame", (CardzooGame,), {"game": game, "game_type": game_type})
    pyspiel.register_game(game_type, cls)


for _game in envs.GAMES:
    if short_name(_game) not in {g.short_name for g in pyspiel.registered_games()}:
        _register(_game)

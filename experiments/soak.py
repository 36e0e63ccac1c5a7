"""Soak test: play many games in every env and check the invariants at every step.

    python -m experiments.soak --deals 100000
    python -m experiments.soak --game neu --players 4 --agents random --seed 17 --deals 1   # replay one

Games cycle over every available env (`envs.available_games()`), every player
count and every agent kind (uniform random; the game's heuristic where
`agents.make_agent("heuristic", ...)` works; and a mix: heuristic on even
seats, random on odd); ``--game NAME`` or ``--games A,B`` and ``--players``
narrow that. Game ``i`` of a run uses seed ``--seed + i`` for the
deal, the agents and the checks, so a failure is replayed exactly by the
command printed next to it. The exit status is 1 if any game failed.

This module is also the one place where the invariants live: the property,
leak and fuzz tests (`tests/test_properties.py`, `tests/test_leaks.py`,
`tests/test_fuzz.py`) import the checks below, so the soak and the tests hold
the envs to the same rules.

What is checked on every agent step (`GameChecker`):

* cards: the multiset of all cards in ``engine.card_places()`` is the deck;
* score currency, per `SCORE_CONSERVATION` (see there);
* masks: the agent to act has a non-empty mask equal to the engine's legal
  mask; every other agent's mask is all zeros; observations are finite
  float32 vectors of the documented size;
* masked-out actions are refused: ``raw_env`` raises ValueError and nothing
  changes (a sample of them, every step);
* masked-in actions are accepted: each one applied to a deep copy of the
  engine leaves a consistent state (every ``--deep-every`` steps);
* rewards sum to zero; a step's rewards are the zero-sum transform of the
  ``score_changes`` of ``env.last_event``, which every agent's numeric
  ``infos`` repeat; scores never change without such an event;
  ``last()``'s reward is what the agent collected since it last acted;
* truncation is never used; eliminated seats stay in ``agents`` (flagged in
  ``infos``) and are never selected; at the end every agent is terminated
  with ``final_ranks`` / ``final_scores`` in its infos;
* the game ends within `step_bound` agent steps;
* information leaks (every ``--leak-every`` steps): the acting agent's and
  one other seat's observation do not change when what they cannot see is
  redealt (`find_leaks`).
"""

from __future__ import annotations

import math
import pickle
import sys
import time
import traceback
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import envs
from experiments import cli
from experiments.cli import ArgumentParser

# -- the per-game facts the checks need --------------------------------------

# How each game's score currency moves (RULES.md). Kept small and explicit:
#   "box"      Neu: chips only leave, to the box, exactly one per lost round;
#              every score event is one seat losing one chip.
#   "pot"      Deadfall: chips + pot is constant at every step (antes and
#              payments move chips, never create them), and every score
#              event sums to zero.
#   "transfer" Not Your Ma's Jong: tokens are paid from player to player;
#              every score event sums to zero.
#   "penalty"  Not For Me: penalty points are created, not moved, so only
#              their sign is checked (score = -penalty never goes up).
SCORE_CONSERVATION: dict[str, str] = {
    "not_for_me": "penalty",
    "deadfall": "pot",
    "neu": "box",
    "not_your_mas_jong": "transfer",
}


def step_bound(engine) -> int:
    """The most agent steps (None-steps of finished agents included) a game may take.

    * not_for_me: every round ends by ``max_round_steps`` engine steps (RULES.md
      §1); plus one None-step per agent at the end.
    * deadfall: a hand is at most every dealt card played (door cards
      included) plus one DEAD call; ``rounds`` hands.
    * neu: RULES.md sets no limit (−10, −1, Pass, Turn, Shot and Double can in
      principle go on for ever), so this is a statistical bound for random and
      heuristic play: 10,000 steps, against a longest game of 358 steps in
      1,200 random 2–7 player games (about 270 on average at 7 players).
    * not_your_mas_jong: per round at most every draw-pile card drawn and
      discarded, each discard answered by the n−1 others, plus at most 3 set
      steals (each with its own discard) per player; at most 9 + 3 rounds.
    """
    name = engine.game_name
    n = engine.num_players
    opts = getattr(engine, "options", {})
    if name == "not_for_me":
        return int(opts.get("rounds", n)) * (int(opts.get("max_round_steps", 2000)) + 1) + n
    if name == "deadfall":
        return int(opts.get("rounds", 10)) * (len(engine.deck) + 1) + n
    if name == "neu":
        return 10_000
    if name == "not_your_mas_jong":
        per_round = (len(engine.deck) + 3 * n + 1) * n
        return 12 * per_round + n
    return 100_000  # a game not yet in this table: generous, but still a bound


class InvariantError(AssertionError):
    """An env broke one of the invariants; the message says which and where."""


# Checks that an open bug report currently fails, by name, with the report.
# `GameChecker` skips them (so that everything else is still checked) and the
# tests hold each one in its own `xfail(strict=True)` test, which starts to
# fail, as a reminder to delete the entry, the day the bug is fixed. Names
# used: "masks_during_none_steps" (fixed in 1723a0b, like the others found so far).
KNOWN_ISSUES: dict[str, str] = {}


def clone(obj):
    """A deep copy by a pickle round trip: several times faster than copy.deepcopy here."""
    return pickle.loads(pickle.dumps(obj, pickle.HIGHEST_PROTOCOL))


# -- stateless checks ---------------------------------------------------------


def check_cards(engine) -> None:
    """Every card is in exactly one place, and all places together are the deck."""
    places = engine.card_places()
    seen: Counter = Counter()
    for cards in places.values():
        seen.update(cards)
    deck = Counter(engine.deck)
    if seen != deck:
        missing = deck - seen
        extra = seen - deck
        raise InvariantError(
            f"cards not conserved: missing {dict(missing)}, extra {dict(extra)}; "
            f"place sizes {{{', '.join(f'{k}: {len(v)}' for k, v in places.items())}}}"
        )


def check_observations(env, none_step_masks: bool = True) -> None:
    """Masks and observation vectors of every agent still in `env.agents`.

    ``none_step_masks``: also require all-zeros masks for every other agent
    while a terminated agent takes its None-step (see `KNOWN_ISSUES`).
    """
    game = env.unwrapped.game
    n_act = game.num_actions
    selected = env.agent_selection
    none_step = selected in env.terminations and env.terminations[selected]
    for agent in env.agents:
        obs = env.observe(agent)
        vec, mask = obs["observation"], obs["action_mask"]
        if vec.dtype != np.float32 or vec.shape != (game.obs_size,):
            raise InvariantError(f"{agent}: observation {vec.dtype}{vec.shape}, expected float32({game.obs_size},)")
        if not np.all((game.obs_low <= vec) & (vec <= game.obs_high)):  # False for NaN too
            bad = np.flatnonzero(~((game.obs_low <= vec) & (vec <= game.obs_high))).tolist()
            raise InvariantError(f"{agent}: observation not finite or outside its per-index bounds at {bad}")
        if mask.dtype != np.int8 or mask.shape != (n_act,) or (mask.size and (mask.min() < 0 or mask.max() > 1)):
            raise InvariantError(f"{agent}: action mask {mask.dtype}{mask.shape} is not a 0/1 int8 vector of {n_act}")
        acting = agent == selected and not env.terminations[agent] and not game.game_over
        if acting:
            if not mask.any():
                raise InvariantError(f"{agent} must act but its action mask is all zeros")
            if not np.array_equal(mask, game.legal_mask()):
                raise InvariantError(f"{agent}: observed mask differs from the engine's legal mask")
            if env.possible_agents[game.current_player] != agent:
                raise InvariantError(f"{agent} selected but the engine says player_{game.current_player} acts")
        elif mask.any() and (none_step_masks or not none_step):
            what = f"{selected} takes its None-step" if none_step else f"{selected} acts"
            raise InvariantError(f"{agent} does not act ({what}) but its mask allows {np.flatnonzero(mask).tolist()}")
    for agent, t in env.truncations.items():
        if t:
            raise InvariantError(f"{agent} truncated: RULES.md allows no truncation")


def check_legal_actions_accepted(engine) -> None:
    """Every masked-in action, applied to a deep copy of the engine, gives a consistent state."""
    mask = engine.legal_mask()
    for a in np.flatnonzero(mask):
        g = clone(engine)
        try:
            g.step(int(a))
        except Exception as e:
            raise InvariantError(
                f"legal action {int(a)} ({engine.action_name(int(a), engine.current_player)!r}) "
                f"raised {type(e).__name__}: {e}"
            ) from e
        check_cards(g)
        if not g.game_over and not g.legal_mask().any():
            raise InvariantError(
                f"after legal action {engine.action_name(int(a), engine.current_player)!r} the player "
                f"to act (player_{g.current_player}) has no legal action"
            )


def _env_view(env) -> tuple:
    agent = env.agent_selection
    obs = env.observe(agent)
    return (
        agent,
        obs["observation"].tobytes(),
        obs["action_mask"].tobytes(),
        tuple(sorted(env._cumulative_rewards.items())),
        tuple(env.agents),
    )


def check_illegal_refused(env, rng: np.random.Generator, samples: int = 2) -> None:
    """A sample of masked-out actions: the bare env raises ValueError and nothing changes."""
    base = env.unwrapped
    mask = base.game.legal_mask()
    illegal = np.flatnonzero(mask == 0)
    if illegal.size == 0:
        return
    before = _env_view(env)
    mode = base.illegal_move
    base.illegal_move = "raise"
    try:
        for a in rng.choice(illegal, size=min(samples, illegal.size), replace=False):
            try:
                base.step(int(a))
            except ValueError:
                pass
            else:
                raise InvariantError(f"masked-out action {int(a)} was accepted by raw_env")
            if _env_view(env) != before:
                raise InvariantError(f"refusing masked-out action {int(a)} changed the env")
    finally:
        base.illegal_move = mode


def check_illegal_penalised(env, rng: np.random.Generator) -> None:
    """On a deep copy of an `env()`: a masked-out action ends the game, offender −1, others 0."""
    e = clone(env.unwrapped)
    e.illegal_move = "penalise"
    illegal = np.flatnonzero(e.game.legal_mask() == 0)
    if illegal.size == 0 or e.terminations[e.agent_selection]:
        return
    offender = e.agent_selection
    pending = dict(e._cumulative_rewards)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e.step(int(rng.choice(illegal)))
    if not all(e.terminations.values()):
        raise InvariantError("after a masked-out action in env() not every agent is terminated")
    for k in e.agents:
        want = -1.0 if k == offender else 0.0
        if e.rewards[k] != want:
            raise InvariantError(f"illegal move by {offender}: {k} got {e.rewards[k]}, expected {want}")
        # PettingZoo's TerminateIllegalWrapper: the offender's return restarts at -1,
        # the others keep what they had not collected yet.
        cum = -1.0 if k == offender else pending[k]
        if not _close(e._cumulative_rewards[k], cum):
            raise InvariantError(f"illegal move by {offender}: {k}'s cumulative reward is {e._cumulative_rewards[k]}, expected {cum}")
        if e.infos[k]["illegal_move"] != e.possible_agents.index(offender):
            raise InvariantError(f"illegal move by {offender}: infos[{k}] does not name the offender")
    for _ in range(len(e.possible_agents) + 1):
        if not e.agents:
            break
        e.step(None)
    if e.agents:
        raise InvariantError("after an illegal move the None-steps do not end the game")


def find_leaks(engine, seat: int, rng: np.random.Generator, trials: int = 3, changed: set | None = None) -> list[str]:
    """What `seat` sees that depends on information hidden from it; [] when nothing leaks.

    Each trial redeals, on a deep copy, everything `seat` cannot see
    (``engine.shuffle_hidden``: other hands, draw-pile order) and compares
    ``observe(seat)`` (and the legal mask when `seat` acts) with the original.
    The redealt copy must still hold the deck, with `seat`'s own hand and every
    place's size unchanged. Names of places whose contents the redeal changed
    are added to `changed`, so callers can check the redeal is not a no-op.
    """
    leaks = []
    obs = engine.observe(seat)
    acting = not engine.game_over and engine.current_player == seat
    mask = engine.legal_mask().copy() if acting else None
    places = engine.card_places()
    own = f"hand {seat}"
    for t in range(trials):
        g = clone(engine)
        g.shuffle_hidden(seat, rng)
        check_cards(g)
        after = g.card_places()
        if {k: len(v) for k, v in after.items()} != {k: len(v) for k, v in places.items()}:
            raise InvariantError(f"shuffle_hidden({seat}) changed the size of a place")
        if own in places and Counter(after[own]) != Counter(places[own]):
            raise InvariantError(f"shuffle_hidden({seat}) changed {own}, which that seat can see")
        if changed is not None:
            changed.update(k for k in places if after[k] != places[k])
        other = g.observe(seat)
        if other.shape != obs.shape:
            leaks.append(f"trial {t}: observation length {obs.shape} -> {other.shape}")
        elif not np.array_equal(other, obs):
            idx = np.flatnonzero(other != obs)[:8].tolist()
            leaks.append(f"trial {t}: observation of player_{seat} changed at indices {idx}")
        if acting and not np.array_equal(g.legal_mask(), mask):
            leaks.append(f"trial {t}: legal mask of player_{seat} changed at {np.flatnonzero(g.legal_mask() != mask).tolist()}")
    return leaks


def _deadfall_door_layer(g):
    return (g.hand_number, g.layer) if g.phase == 0 and not g.game_over else None


def _mas_jong_steal_decisions(g):
    if g.phase != 1 or g.game_over:
        return None
    return (g.round, g.discarder, g.current_discard, len(g.draw), sum(map(len, g.discard_piles)))


# Simultaneous decisions (RULES.md): Deadfall's door cards of one layer and
# Ma's Jong's steal decisions on one discard are made in seat order but must
# stay hidden until the layer / the steal is resolved. Each entry maps an
# engine to a key of the current hidden phase (None outside it).
HIDDEN_DECISIONS: dict[str, Callable] = {
    "deadfall": _deadfall_door_layer,
    "not_your_mas_jong": _mas_jong_steal_decisions,
}


def find_decision_leaks(engine) -> list[str]:
    """What the others see of the acting player's decision while it must stay hidden; [] when nothing.

    Every legal action of the player to act is applied to its own deep copy.
    Among the copies still in the same hidden phase (same `HIDDEN_DECISIONS`
    key), every other seat's observation, and the next actor's legal mask,
    must be the same whatever the decision was.
    """
    key_fn = HIDDEN_DECISIONS.get(engine.game_name)
    if key_fn is None or engine.game_over:
        return []
    key = key_fn(engine)
    if key is None:
        return []
    actor = engine.current_player
    first, first_action, leaks = None, None, []
    for a in np.flatnonzero(engine.legal_mask()):
        g = clone(engine)
        g.step(int(a))
        if g.game_over or key_fn(g) != key:
            continue
        view = {f"player_{s}'s observation": g.observe(s).tobytes() for s in range(engine.num_players) if s != actor}
        view["the next actor"] = g.current_player
        if g.current_player != actor:
            view["the next actor's mask"] = g.legal_mask().tobytes()
        if first is None:
            first, first_action = view, int(a)
            continue
        for what, v in view.items():
            if v != first[what]:
                names = [engine.action_name(x, actor) for x in (first_action, int(a))]
                leaks.append(f"{what} depends on player_{actor}'s hidden decision ({names[0]!r} vs {names[1]!r})")
    return leaks


# -- the per-game checker -----------------------------------------------------


def _zero_sum(deltas: dict[str, float], taking_part: list[str]) -> dict[str, float]:
    """RULES.md: own change minus the mean change of the players in the game at the event."""
    mean = sum(deltas[k] for k in taking_part) / len(taking_part)
    return {k: deltas[k] - mean for k in taking_part}


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


@dataclass
class GameChecker:
    """Follows one game step by step; `before(action)` / `after(action)` around each `env.step`.

    Every check raises `InvariantError`. ``deep_every`` / ``leak_every``: check
    every masked-in action / information leaks every that many steps (0 = never);
    ``illegal_samples`` masked-out actions are tried on every live step.
    """

    env: Any
    rng: np.random.Generator
    deep_every: int = 1
    leak_every: int = 0
    illegal_samples: int = 2
    skip: frozenset = frozenset(KNOWN_ISSUES)
    steps: int = 0
    events: int = 0
    bound: int = 0
    _scores: list = field(default_factory=list)
    _since_acted: dict = field(default_factory=dict)
    _taking_part: list = field(default_factory=list)
    _currency: float = 0.0

    def __post_init__(self) -> None:
        game = self.env.unwrapped.game
        self.game = game
        self.rule = SCORE_CONSERVATION.get(game.game_name)
        self.bound = step_bound(game)
        self.start()

    def start(self) -> None:
        """Call right after `env.reset`."""
        game = self.game
        self.steps = 0
        self.events = 0
        self._scores = list(game.scores)
        pending = getattr(game, "_pending_event", None)
        if pending is not None:
            # Not Your Ma's Jong: a Ma dealt a complete hand wins during reset(),
            # which cannot report it; the first step() hands the event out.
            self._scores = [s - d for s, d in zip(self._scores, pending.deltas)]
        self._since_acted = {k: 0.0 for k in self.env.agents}
        self._currency = self._currency_total()
        check_cards(game)
        check_observations(self.env, "masks_during_none_steps" not in self.skip)
        if self.rule in ("box", "transfer", "pot") and min(game.scores) < 0:
            raise InvariantError(f"negative score at the start: {game.scores}")

    def _currency_total(self) -> float:
        if self.rule == "pot":
            return sum(self.game.chips) + self.game.pot
        return sum(self.game.scores)

    def before(self, action) -> None:
        env, game = self.env, self.game
        agent = env.agent_selection
        _, reward, term, trunc, _ = env.last()
        if not _close(reward, self._since_acted.get(agent, 0.0)):
            raise InvariantError(
                f"last() gives {agent} reward {reward}, but it collected {self._since_acted.get(agent)} since it last acted"
            )
        self._since_acted[agent] = 0.0
        if term or trunc:
            if action is not None:
                raise InvariantError("the driver passed an action for a terminated agent")
            return
        if action is None:
            return
        mask = game.legal_mask()
        if not (0 <= action < game.num_actions) or not mask[action]:
            raise InvariantError(f"the agent chose masked-out action {action}")
        live = self.steps
        if self.deep_every and live % self.deep_every == 0:
            check_legal_actions_accepted(game)
        if self.illegal_samples:
            check_illegal_refused(env, self.rng, self.illegal_samples)
        if self.leak_every and live % self.leak_every == 0:
            seats = {game.current_player, int(self.rng.integers(game.num_players))}
            for seat in seats:
                leaks = find_leaks(game, seat, self.rng, trials=1)
                if leaks:
                    raise InvariantError("information leak: " + "; ".join(leaks))
            leaks = find_decision_leaks(game)
            if leaks:
                raise InvariantError("information leak: " + "; ".join(leaks))
        self._taking_part = [k for k in env.agents if not env.terminations[k] and not game.out[env.possible_agents.index(k)]]

    def after(self, action) -> None:
        env, game = self.env, self.game
        self.steps += 1
        if self.steps > self.bound:
            raise InvariantError(f"the game did not end within its bound of {self.bound} agent steps")
        rewards = env.rewards
        if not _close(sum(rewards.values()), 0.0):
            raise InvariantError(f"rewards do not sum to zero: {rewards}")
        for k, r in rewards.items():
            self._since_acted[k] = self._since_acted.get(k, 0.0) + r
        scores = list(game.scores)
        actual = {a: scores[i] - self._scores[i] for i, a in enumerate(env.possible_agents)}
        if action is None:
            if any(actual.values()) or any(rewards.values()):
                raise InvariantError("a None-step of a terminated agent changed scores or rewards")
        else:
            event = env.last_event
            reported = event.get("score_changes") if event else None
            numeric = list(reported.values()) if reported else [0] * len(scores)
            for k in env.agents:
                info = env.infos[k]
                if info["scored"] != (reported is not None) or list(info["score_changes"]) != numeric:
                    raise InvariantError(f"infos[{k}] disagree with the readable event {event}")
            if reported is None:
                if any(actual.values()):
                    raise InvariantError(f"scores changed without a score event in infos: {actual}")
                if any(rewards.values()):
                    raise InvariantError(f"rewards without a score event: {rewards}")
            else:
                self._check_event(reported, actual, scores, rewards)
        if self.rule == "pot" and not _close(self._currency_total(), self._currency):
            raise InvariantError(f"chips + pot went from {self._currency} to {self._currency_total()}")
        self._scores = scores
        check_cards(game)
        for s, o in enumerate(game.out):
            agent = env.possible_agents[s]
            if o and not game.game_over and env.agent_selection == agent:
                raise InvariantError(f"{agent} is out of the game but selected to act")
            if agent in env.agents and env.infos[agent]["eliminated"] != int(o):
                raise InvariantError(f"infos[{agent}]['eliminated'] is not {int(o)}")
        if game.game_over:
            self._check_end()
        if env.agents:
            check_observations(env, "masks_during_none_steps" not in self.skip)

    def _check_event(self, reported, actual, scores, rewards) -> None:
        env = self.env
        self.events += 1
        if reported != actual:
            raise InvariantError(f"infos report score changes {reported}, but scores changed by {actual}")
        for k in env.agents:
            if list(env.infos[k]["scores"]) != scores:
                raise InvariantError(f"infos[{k}]['scores'] is not the running scores {scores}")
        want = _zero_sum(reported, self._taking_part)
        for k in env.agents:
            if not _close(rewards[k], want.get(k, 0.0)):
                raise InvariantError(f"{k} got reward {rewards[k]}, the zero-sum score change is {want.get(k, 0.0)}")
        deltas = list(reported.values())
        if self.rule == "box" and sorted(deltas) != [-1] + [0] * (len(deltas) - 1):
            raise InvariantError(f"Neu: a score event must be one seat paying one chip to the box, got {reported}")
        if self.rule in ("transfer", "pot") and sum(deltas) != 0:
            raise InvariantError(f"tokens are only transferred, but the changes sum to {sum(deltas)}: {reported}")
        if self.rule == "penalty" and max(deltas) > 0:
            raise InvariantError(f"penalties only grow (score = -penalty), got {reported}")
        if self.rule in ("box", "transfer", "pot") and min(scores) < 0:
            raise InvariantError(f"a score went negative: {scores}")

    def _check_end(self) -> None:
        env, game = self.env, self.game
        scores = list(game.scores)
        for k in env.agents:
            if not env.terminations[k]:
                raise InvariantError(f"game over but {k} is not terminated")
            info = env.infos[k]
            if info["illegal_move"] >= 0:
                continue
            if not any(info["final_ranks"]):
                raise InvariantError(f"game over but infos[{k}] lacks final_ranks")
            if list(info["final_scores"]) != scores:
                raise InvariantError(f"final_scores {info['final_scores']} differ from the scores {scores}")
            ranks = list(info["final_ranks"])
            n = len(ranks)
            if min(ranks) != 1 or max(ranks) > n:
                raise InvariantError(f"final ranks {ranks} are not 1..{n}")
            for i in range(n):
                for j in range(n):
                    if scores[i] > scores[j] and not ranks[i] < ranks[j]:
                        raise InvariantError(f"final ranks {ranks} do not follow the scores {scores}")


# -- playing games ------------------------------------------------------------


@dataclass
class GameResult:
    steps: int
    events: int
    scores: list


def make_agents(kind: str, game: str, n: int, seed: int) -> list:
    """One agent per seat: "random", "heuristic", or "mixed" (heuristic on even seats)."""
    from agents import make_agent

    def one(k, seat):
        return make_agent(k, game, n, seed=seed * 8 + seat)

    if kind == "mixed":
        return [one("heuristic" if s % 2 == 0 else "random", s) for s in range(n)]
    return [one(kind, s) for s in range(n)]


def play_checked_game(
    game: str,
    num_players: int,
    seed: int,
    agent_kind: str = "random",
    rule_options: dict | None = None,
    deep_every: int = 1,
    leak_every: int = 0,
    illegal_samples: int = 2,
    penalise_at: int | None = None,
    wrapped: bool = True,
    skip: frozenset = frozenset(KNOWN_ISSUES),
) -> GameResult:
    """Play one whole game, checking every invariant at every step; raises InvariantError."""
    env = (envs.make if wrapped else envs.make_raw)(game, num_players=num_players, **(rule_options or {}))
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    bots = make_agents(agent_kind, game, num_players, seed)
    for b in bots:
        b.reset()
    checker = GameChecker(
        env, rng, deep_every=deep_every, leak_every=leak_every, illegal_samples=illegal_samples, skip=skip
    )
    try:
        for agent in env.agent_iter(max_iter=checker.bound + 1):
            obs, _, term, trunc, _ = env.last()
            action = None if term or trunc else int(bots[env.possible_agents.index(agent)].act(obs))
            if penalise_at is not None and checker.steps == penalise_at and action is not None:
                check_illegal_penalised(env, rng)
            checker.before(action)
            env.step(action)
            checker.after(action)
        if env.agents:
            raise InvariantError(f"the game did not end within its bound of {checker.bound} agent steps")
        if not env.unwrapped.game.game_over:
            raise InvariantError("every agent is done but the engine says the game is not over")
    except InvariantError as e:
        where = f"{game} {num_players}p {agent_kind} seed {seed} options {rule_options or {}}, agent step {checker.steps}"
        replay = "" if rule_options else f" (replay: {replay_command(game, num_players, agent_kind, seed)})"
        raise InvariantError(f"{where}: {e}{replay}") from e
    return GameResult(checker.steps, checker.events, list(env.unwrapped.game.scores))


# -- command line ---------------------------------------------------------------


def player_counts(game: str) -> list[int]:
    engine_cls = envs.module(game).raw_env.engine_cls
    return list(range(engine_cls.min_players, engine_cls.max_players + 1))


def heuristic_available(game: str, n: int) -> bool:
    try:
        make_agents("heuristic", game, n, 0)
    except (ValueError, ImportError, NotImplementedError):
        return False
    return True


def replay_command(game: str, n: int, kind: str, seed: int) -> str:
    return f"python -m experiments.soak --game {game} --players {n} --agents {kind} --seed {seed} --deals 1"


def _parse_args(argv):
    p = ArgumentParser(prog="python -m experiments.soak", description=__doc__.split("\n\n")[0])
    p.add_argument("--deals", type=cli.count, default=1000, help="games to play, each on a new deal")
    p.add_argument("--game", action="append", help="only this game (repeatable; default: every available game)")
    p.add_argument("--games", default=None, help="only these games, comma-separated (default: every available game)")
    p.add_argument("--players", type=cli.count, action="append", help="only this player count (repeatable)")
    p.add_argument("--agents", default="random,heuristic,mixed", help="comma-separated: random, heuristic, mixed")
    p.add_argument("--seed", type=cli.seed, default=0, help="game i uses seed SEED + i")
    p.add_argument("--deep-every", type=cli.count_or_zero, default=10, help="check every masked-in action every K steps (0 = never)")
    p.add_argument("--leak-every", type=cli.count_or_zero, default=10, help="check information leaks every K steps (0 = never)")
    p.add_argument("--max-failures", type=cli.count, default=20, help="stop after this many failed games")
    p.add_argument("--time-limit", type=cli.seconds, default=0, help="stop after this many seconds (0 = no limit)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = p.parse_args(argv)
    available = envs.available_games()
    if not available:
        p.error("no game is implemented yet")
    games = list(args.game or [])
    if args.games is not None:
        games += cli.parse_games(args.games, p)
    args.game = games or None
    games = games or available
    for g in games:
        if g not in available:
            p.error(f"unknown or unavailable game {g!r}; available: {', '.join(available)}")
    kinds = [k.strip() for k in args.agents.split(",") if k.strip()]
    for k in kinds:
        if k not in ("random", "heuristic", "mixed"):
            p.error(f"unknown agent kind {k!r}; valid: random, heuristic, mixed")
    if not kinds:
        p.error("--agents is empty; valid: random, heuristic, mixed")
    combos = []
    for g in games:
        counts = player_counts(g)
        for n in args.players or counts:
            if n not in counts:
                if args.game and args.players:
                    p.error(f"{g} is played by {counts[0]} to {counts[-1]} players, not {n}")
                continue
            for k in kinds:
                if k == "random" or heuristic_available(g, n):
                    combos.append((g, n, k))
    if not combos:
        p.error("nothing to play: no available game/player count/agent kind combination")
    return args, combos


def main(argv=None) -> int:
    args, combos = _parse_args(argv)
    from tqdm import tqdm

    failures = []
    per_game: Counter = Counter()
    steps = 0
    start = time.perf_counter()
    bar = tqdm(total=args.deals, unit="game", disable=args.no_progress, dynamic_ncols=True)
    played = 0
    for i in range(args.deals):
        if args.time_limit and time.perf_counter() - start > args.time_limit:
            break
        game, n, kind = combos[i % len(combos)]
        seed = args.seed + i
        try:
            result = play_checked_game(
                game, n, seed, kind, deep_every=args.deep_every, leak_every=args.leak_every, illegal_samples=1
            )
            steps += result.steps
        except Exception as e:  # noqa: BLE001 - any crash is a failure to report, not a reason to stop
            if isinstance(e, InvariantError):
                detail = str(e).split(": ", 1)[1].rsplit(" (replay: ", 1)[0]
            else:
                detail = f"{type(e).__name__}: {e}"
            if args.deals == 1:
                detail += "\n" + traceback.format_exc()
            failures.append((game, n, kind, seed, detail))
            bar.write(f"FAIL {game} {n}p {kind} seed {seed}: {detail.splitlines()[0]}")
            if len(failures) >= args.max_failures:
                played += 1
                per_game[game] += 1
                bar.update(1)
                bar.write(f"stopping after {len(failures)} failures (--max-failures)")
                break
        played += 1
        per_game[game] += 1
        bar.update(1)
    bar.close()
    elapsed = time.perf_counter() - start
    rate = played / elapsed if elapsed > 0 else math.inf
    print(
        f"soak: {played} games ({', '.join(f'{g} {c}' for g, c in per_game.items())}), "
        f"{steps} agent steps in {elapsed:.1f}s: {rate:.1f} games/s, {steps / max(elapsed, 1e-9):.0f} steps/s "
        f"(with checks); {len(failures)} failure(s)"
    )
    for game, n, kind, seed, detail in failures:
        print(f"FAILED {game} {n}p {kind} seed {seed}: {detail}")
        print(f"  replay: {replay_command(game, n, kind, seed)}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

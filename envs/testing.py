"""Invariant checks for cardzoo envs, as `pettingzoo.test` holds PettingZoo's own: the tests and
the soak run (`python -m experiments.soak`) hold every env to these same checks.

    from envs.testing import play_checked_game
    play_checked_game("neu", 4, seed=0)    # one whole game of random moves, every check at every step

A game's own facts come from its engine (`envs.engine.Engine`): its step bound
(``max_game_length``), what its score currency conserves (``conserves``) and
its hidden decisions (``hidden_decision_key()``). What is checked on every
agent step (`GameChecker`):

* cards: the multiset of all cards in ``engine.card_places()`` is the deck;
* score currency, per the engine's ``conserves`` (`envs.engine.CONSERVES`);
* masks: the agent to act has a non-empty mask equal to the engine's legal
  mask; every other agent's mask is all zeros, also while a finished agent
  takes its None-step; observations are float32 vectors of the documented size
  inside their per-index bounds;
* masked-out actions are refused: ``raw_env`` raises ValueError and nothing
  changes (a sample of them, every step);
* masked-in actions are accepted: each one applied to a deep copy of the
  engine leaves a consistent state (every ``deep_every`` steps);
* rewards sum to zero; a step's rewards are the zero-sum transform of the
  ``score_changes`` of ``env.last_event``, which every agent's numeric
  ``infos`` repeat; scores never change without such an event;
  ``last()``'s reward is what the agent collected since it last acted;
* truncation is never used; eliminated seats stay in ``agents`` (flagged in
  ``infos``) and are never selected; at the end every agent is terminated
  with ``final_ranks`` / ``final_scores`` in its infos;
* the game ends within `step_bound` agent steps;
* information leaks (every ``leak_every`` steps): the acting agent's and one
  other seat's observation do not change when what they cannot see is
  redealt (`find_leaks`), and nobody sees a hidden decision before it is
  resolved (`find_decision_leaks`).
"""

from __future__ import annotations

import pickle
import random
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np


def step_bound(engine) -> int:
    """The most agent steps a game may take: the engine's ``max_game_length`` decisions plus
    one None-step per agent at the end."""
    return engine.max_game_length + engine.num_players


class InvariantError(AssertionError):
    """An env broke one of the invariants; the message says which and where."""


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


def check_observations(env) -> None:
    """Masks and observation vectors of every agent still in `env.agents`."""
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
        elif mask.any():
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


def env_view(env) -> tuple:
    """What an agent could notice of the env: the selected agent, its observation and mask, the
    cumulative rewards and the agents still in the game (compared before and after a step that
    must change nothing)."""
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
    before = env_view(env)
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
            if env_view(env) != before:
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


def find_decision_leaks(engine) -> list[str]:
    """What the others see of the acting player's decision while it must stay hidden; [] when nothing.

    Every legal action of the player to act is applied to its own deep copy.
    Among the copies still in the same hidden phase (same
    ``hidden_decision_key()``), every other seat's observation, and the next actor's legal mask,
    must be the same whatever the decision was.
    """
    key = None if engine.game_over else engine.hidden_decision_key()
    if key is None:
        return []
    actor = engine.current_player
    first, first_action, leaks = None, None, []
    for a in np.flatnonzero(engine.legal_mask()):
        g = clone(engine)
        g.step(int(a))
        if g.game_over or g.hidden_decision_key() != key:
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
        self.rule = game.conserves
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
        check_observations(self.env)
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
            check_observations(env)

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


# -- playing a checked game ---------------------------------------------------


@dataclass
class GameResult:
    steps: int
    events: int
    scores: list


def play_checked_game(game: str, num_players: int, seed: int, policies: Sequence[Callable[[dict], int]] | None = None,
                      rule_options: dict | None = None, deep_every: int = 1, leak_every: int = 0, illegal_samples: int = 2,
                      penalise_at: int | None = None, wrapped: bool = True, where: str = "") -> GameResult:
    """Play one whole game, checking every invariant at every step; raises InvariantError.

    ``policies``: one function per seat from an observation to an action (default: uniform
    random legal moves drawn from ``random.Random(seed)``). ``penalise_at``: at that step, also
    check on a copy that a masked-out action ends an ``env()`` game. ``where`` is added to the
    message of a failure (e.g. how to replay it)."""
    import envs

    env = (envs.make if wrapped else envs.make_raw)(game, num_players=num_players, **(rule_options or {}))
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    if policies is None:
        rnd = random.Random(seed)

        def pick(obs: dict) -> int:
            legal = np.flatnonzero(obs["action_mask"])
            return int(legal[rnd.randrange(legal.size)])

        policies = [pick] * num_players
    checker = GameChecker(env, rng, deep_every=deep_every, leak_every=leak_every, illegal_samples=illegal_samples)
    try:
        for agent in env.agent_iter(max_iter=checker.bound + 1):
            obs, _, term, trunc, _ = env.last()
            action = None if term or trunc else int(policies[env.possible_agents.index(agent)](obs))
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
        at = f"{game} {num_players}p seed {seed} options {rule_options or {}}, agent step {checker.steps}"
        raise InvariantError(f"{at}: {e}{where}") from e
    return GameResult(checker.steps, checker.events, list(env.unwrapped.game.scores))

"""One seat of a card game as a single-agent `gymnasium.Env`; the other seats are played by opponents.

    import envs
    env = envs.make_single_agent("neu", num_players=4, seat=0, opponents="heuristic")
    obs, info = env.reset(seed=0)
    while True:
        legal = info["action_mask"].nonzero()[0]
        obs, reward, terminated, truncated, info = env.step(int(legal[0]))
        if terminated or truncated:
            break

With sb3-contrib, no wrapper is needed: ``MaskablePPO("MlpPolicy", env).learn(10_000)``
reads the mask from ``env.action_masks()``.

| what               | value                                                            |
|--------------------|------------------------------------------------------------------|
| observation        | the seat's float32 vector, a `Box` with the game's bounds        |
| action             | `Discrete(num_actions)`, the game's action space                 |
| legal actions      | `env.action_masks()` (bool) and `info["action_mask"]` (int8)     |
| reward             | everything the seat receives from its move until its next        |
|                    | decision or the end (the sum of its AEC rewards over that span)  |
| terminated         | at the game's end; in Neu also when the seat is eliminated       |
| truncated          | never: no game has a move limit                                  |
| info               | the seat's AEC `infos` at that point, plus `action_mask`         |

Opponents (``opponents=``), one spec for every other seat, or a list with one
spec per other seat in seat order:

* ``"random"``, ``"heuristic"``, ``"ppo"`` (the shipped checkpoint for the game
  and player count), ``"ppo:PATH"`` (a checkpoint file): built with
  `agents.make_agent`;
* an object with ``act(observation) -> int``, such as an `agents.Agent`;
* a callable ``observation -> action``.

An opponent sees what its seat sees in the AEC env: the dict
``{"observation": float32 vector, "action_mask": int8 vector}``.

Seeding: ``reset(seed=s)`` deals the same game as ``envs.make(game).reset(seed=s)``
and reseeds every opponent with a seed derived from ``s`` (objects with a
``seed(int)`` method, as `agents.Agent` has), so the same seed and the same
actions replay the same game. ``reset()`` without a seed goes on drawing from
the streams of the last seeded reset.

A masked-out action follows PettingZoo classic's convention (the env's
``env()``): the game ends, the seat gets -1 and ``info["illegal_move"] = 1``.
Rewards the seat receives before its first decision (a round can end before
it acts) are added to its first step's reward, so that the returns of an
episode add up to the seat's AEC return.
"""

from __future__ import annotations

import os
import warnings
from typing import Any, Callable

import numpy as np
import gymnasium
from gymnasium import spaces

import envs

OPPONENT_KINDS = ("random", "heuristic", "ppo", "ppo:PATH")


def opponent_seeds(seed: int, num_players: int, seat: int) -> dict[int, int]:
    """The seed each opponent seat gets from ``reset(seed=seed)``; the learner's seat has none."""
    children = np.random.SeedSequence(seed).spawn(num_players)
    return {s: int(children[s].generate_state(1, np.uint64)[0]) for s in range(num_players) if s != seat}


def resolve_opponents(game: str, num_players: int, seat: int, opponents: Any) -> dict[int, Any]:
    """Turn an ``opponents`` spec into {seat: object with act() or callable} for every other seat."""
    others = [s for s in range(num_players) if s != seat]
    if isinstance(opponents, (list, tuple)):
        if len(opponents) != len(others):
            raise ValueError(
                f"opponents: a list needs one spec per other seat ({len(others)} for seats {others}), got {len(opponents)}"
            )
        specs = list(opponents)
    else:
        specs = [opponents] * len(others)
    resolved: dict[int, Any] = {}
    for s, spec in zip(others, specs):
        if isinstance(spec, str):
            resolved[s] = _agent_from_name(spec, game, num_players)  # a string is one agent per seat
        elif callable(getattr(spec, "act", None)) or callable(spec):
            resolved[s] = spec  # an object given once for every seat stays one object
        else:
            raise ValueError(
                f"opponent for seat {s} must be one of {', '.join(OPPONENT_KINDS)}, an object with "
                f"act(observation), or a callable observation -> action; got {spec!r}"
            )
    return resolved


def _agent_from_name(spec: str, game: str, num_players: int):
    # Imported here, not at module level: `agents` imports `envs`, and imports run
    # one way (agents -> envs), so a string opponent is resolved only when asked for.
    from agents import make_agent

    if spec.startswith("ppo:"):
        path = spec[len("ppo:"):]
        if not os.path.isfile(path):
            raise ValueError(f"opponent {spec!r}: no checkpoint file at {path!r}")
        return make_agent("ppo", game, num_players, checkpoint=path)
    if spec not in ("random", "heuristic", "ppo"):
        raise ValueError(f"unknown opponent {spec!r}; valid: {', '.join(OPPONENT_KINDS)}, an agent object or a callable")
    try:
        return make_agent(spec, game, num_players)
    except FileNotFoundError as e:  # no shipped checkpoint for this game and player count
        raise ValueError(str(e).splitlines()[0]) from None


class SingleAgentEnv(gymnasium.Env):
    """One seat of a cardzoo game against fixed opponents; see the module docstring."""

    metadata = {"render_modes": ["human", "ansi"], "render_fps": 4}

    def __init__(self, game: str, num_players: int | None = 4, seat: int = 0, opponents: Any = "heuristic",
                 render_mode: str | None = None, **rule_options: Any) -> None:
        self.aec = envs.make_raw(game, num_players=num_players, render_mode=render_mode, **rule_options)
        n = self.aec.game.num_players
        if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not 0 <= seat < n:
            raise ValueError(f"seat must be an integer from 0 to {n - 1} ({n} players), got {seat!r}")
        self.game_name = game
        self.num_players = n
        self.seat = int(seat)
        self.agent = self.aec.possible_agents[self.seat]
        self.render_mode = render_mode
        self.opponents = resolve_opponents(game, n, self.seat, opponents)
        # By agent name, the key the AEC env selects by; a callable stands in for act().
        self._act: dict[str, Callable[[dict], Any]] = {
            self.aec.possible_agents[s]: (o.act if callable(getattr(o, "act", None)) else o) for s, o in self.opponents.items()
        }
        space = self.aec.observation_space(self.agent)
        self.observation_space = space["observation"]
        self.action_space = spaces.Discrete(self.aec.game.num_actions)
        self._mask = np.zeros(self.aec.game.num_actions, np.int8)
        self._done = True
        self._seeded = False

    # -- gymnasium API ---------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        if seed is None and not self._seeded:
            # gymnasium seeded np_random from entropy; derive everything from one draw of it.
            seed = int(self.np_random.integers(2**63))
        if seed is not None:
            if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
                raise ValueError(f"seed must be an integer or None, got {seed!r}")
            self._seeded = True
            self.aec.reset(seed=int(seed), options=options)
            seeds = opponent_seeds(int(seed), self.num_players, self.seat)
            done: set[int] = set()
            for s, opp in self.opponents.items():
                if id(opp) not in done and callable(getattr(opp, "seed", None)):
                    opp.seed(seeds[s])  # a shared object takes the lowest such seat's seed
                    done.add(id(opp))
        else:
            self.aec.reset(options=options)
        done = set()
        for opp in self.opponents.values():
            if id(opp) not in done and callable(getattr(opp, "reset", None)):
                opp.reset()
                done.add(id(opp))
        self._done = False
        self._pending = self._advance()
        if self._done:
            raise RuntimeError(f"{self.agent} had no decision before the game ended")
        return self._observe()

    def step(self, action: Any):
        if self._done:
            raise RuntimeError("the episode is over; call reset() to play again")
        n = self.action_space.n
        a = action if type(action) is int else _as_action(action, n)
        if not 0 <= a < n:
            raise ValueError(f"action {a} is outside the action space [0, {n})")
        aec = self.aec
        reward = self._pending
        self._pending = 0.0
        if not self._mask[a]:
            warnings.warn(f"{self.agent} made an illegal move; the game ends and it gets -1.", stacklevel=2)
            self._done = True
            obs, info = self._observe()
            info["illegal_move"] = 1
            return obs, reward - 1.0, True, False, info
        aec.step(a)
        reward += aec.rewards.get(self.agent, 0.0)
        if not self._is_over():
            reward += self._advance()
        obs, info = self._observe()
        return obs, float(reward), self._done, False, info

    def action_masks(self) -> np.ndarray:
        """Legal actions of the seat now (sb3-contrib's convention): bool, all False once the episode is over."""
        return self._mask.astype(bool)

    def render(self):
        return self.aec.render()

    def close(self) -> None:
        self.aec.close()

    # -- play the other seats ----------------------------------------------
    def _is_over(self) -> bool:
        # `out` covers Neu's eliminations whether or not the AEC env has selected the seat yet.
        game = self.aec.game
        over = game.game_over or game.out[self.seat]
        if over:
            self._done = True
        return over

    def _advance(self) -> float:
        """Play the other seats until the learner must decide or its game is over; its rewards meanwhile."""
        aec, me, act = self.aec, self.agent, self._act
        terminations, rewards = aec.terminations, aec.rewards
        reward = 0.0
        while True:
            agent = aec.agent_selection
            if agent == me:
                if terminations[me]:
                    self._done = True
                return reward
            if terminations[agent]:
                aec.step(None)
            else:
                aec.step(_as_action(act[agent](aec.observe(agent)), self.action_space.n))
            reward += rewards.get(me, 0.0)
            if self._is_over():
                return reward

    def _observe(self):
        aec = self.aec
        view = aec.observe(self.agent)
        self._mask = view["action_mask"] if not self._done else np.zeros_like(self._mask)
        info = dict(aec.infos.get(self.agent, {}))
        info["action_mask"] = self._mask.copy()
        return view["observation"], info


def _as_action(action: Any, n: int) -> int:
    if type(action) is int:
        return action
    if isinstance(action, np.ndarray) and action.shape in ((), (1,)) and np.issubdtype(action.dtype, np.integer):
        return int(action.reshape(()))
    if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
        raise TypeError(f"action must be an integer in [0, {n}), got {action!r} ({type(action).__name__})")
    return int(action)


def make_single_agent(game: str, num_players: int | None = 4, seat: int = 0, opponents: Any = "heuristic",
                      render_mode: str | None = None, **rule_options: Any) -> SingleAgentEnv:
    """`envs.make_single_agent("neu", num_players=4, seat=0, opponents="heuristic", **rule_options)`.

    A `gymnasium.Env` in which the agent plays ``seat`` and ``opponents`` play every
    other seat; see `envs.single_agent` for observation, reward, masks and seeding.
    """
    return SingleAgentEnv(game, num_players=num_players, seat=seat, opponents=opponents,
                          render_mode=render_mode, **rule_options)

"""Wrappers that reshape a cardzoo env for libraries that cannot read Dict observations.

    import envs
    env = envs.box_obs(envs.make("neu", num_players=4))
    env.reset(seed=0)
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()   # obs: float32 vector
        mask = info["action_mask"]                     # int8, 1 = legal
        env.step(None if term or trunc else env.action_space(agent).sample(mask))

`box_obs(env)` (class `BoxObservation`) makes each observation the plain
float32 vector, whose space is a ``Box`` with the game's per-index bounds, and
puts the action mask in ``infos[agent]["action_mask"]``, the convention
PettingZoo documents for masks outside the observation. Observation wrappers
that need a ``Box`` (SuperSuit's ``flatten_v0``, ``frame_stack_v1``,
``normalize_obs_v0``, ``dtype_v0``) work on top of it; the mask keeps its
place in infos through them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils.wrappers import BaseWrapper

from envs.adapter import CardGameEnv


class BoxObservation(BaseWrapper):
    """Observation = the float32 vector (a Box); the mask is in ``infos[agent]["action_mask"]``."""

    def __init__(self, env: AECEnv):
        if not isinstance(env.unwrapped, CardGameEnv):
            raise ValueError(f"box_obs wraps a cardzoo env, got {type(env.unwrapped).__name__}")
        if isinstance(env, BoxObservation):
            raise ValueError("this env already has Box observations")
        super().__init__(env)
        self._raw = env.unwrapped
        self._infos: dict[str, dict[str, Any]] | None = None

    def observation_space(self, agent: str) -> spaces.Box:
        return self.env.observation_space(agent)["observation"]

    def observe(self, agent: str) -> np.ndarray:
        return self.env.observe(agent)["observation"]

    @property
    def infos(self) -> dict[str, dict[str, Any]]:
        # Built once per step from the env's own infos (which it never mutates), so that
        # every read between two steps returns the same objects, as PettingZoo's api_test expects.
        if self._infos is None:
            raw = self._raw
            self._infos = {agent: {**info, "action_mask": raw.action_mask(agent)} for agent, info in self.env.infos.items()}
        return self._infos

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        self._infos = None
        self.env.reset(seed=seed, options=options)

    def step(self, action: Any) -> None:
        self._infos = None
        self.env.step(action)

    def last(self, observe: bool = True):
        # the env's own last(), with this wrapper's observation and infos (mask included)
        _, reward, termination, truncation, _ = self.env.last(observe=False)
        agent = self.agent_selection
        return self.observe(agent) if observe else None, reward, termination, truncation, self.infos[agent]


def box_obs(env: AECEnv) -> BoxObservation:
    """Wrap a cardzoo env so that observations are float32 Box vectors and masks live in infos."""
    return BoxObservation(env)

"""The observation keys RLlib's action-masking RLModule reads, on any cardzoo AEC env.

RLlib's ``ActionMaskingTorchRLModule`` (``ray.rllib.examples.rl_modules.classes.
action_masking_rlm``) expects each observation as ``{"observations": ...,
"action_mask": ...}``; cardzoo's are ``{"observation": ..., "action_mask": ...}``
(PettingZoo classic's keys). This wrapper renames the one key, nothing else, so RLlib's own ``PettingZooEnv`` can take the env as is:

    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
    from envs.rllib import rllib_env
    env = PettingZooEnv(rllib_env("neu", num_players=4))

``experiments/recipes/rllib_ppo.py`` trains one shared policy for every seat
this way. This module does not import ray.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo.utils.wrappers import BaseWrapper


class RLlibObservationKeys(BaseWrapper):
    """AEC wrapper: observations become ``{"observations": float32 vector, "action_mask": int8 0/1}``."""

    def __init__(self, env):
        super().__init__(env)
        self._spaces: dict[str, spaces.Dict] = {}
        for agent in env.possible_agents:
            inner = env.observation_space(agent)
            self._spaces[agent] = spaces.Dict({"observations": inner["observation"], "action_mask": inner["action_mask"]})

    def observation_space(self, agent: str) -> spaces.Dict:
        return self._spaces[agent]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        obs = self.env.observe(agent)
        return {"observations": obs["observation"], "action_mask": obs["action_mask"]}


def rllib_env(game: str, num_players: int | None = 4, **rule_options: Any) -> RLlibObservationKeys:
    """`envs.make(game, ...)` with RLlib's observation keys; pass it to RLlib's `PettingZooEnv`."""
    import envs

    return RLlibObservationKeys(envs.make(game, num_players=num_players, **rule_options))

"""The one Agent interface: an agent maps an observation dict to an action, and is seeded."""

from __future__ import annotations

import numpy as np


class Agent:
    """Base class for every baseline (random, heuristic, PPO).

    An agent is built for one game and player count, because observation
    layouts depend on both. It sees only what the env gives its seat: the
    observation dict ``{"observation": float32 vector, "action_mask": int8 vector}``.
    """

    name = "agent"

    def __init__(self, game: str, num_players: int, seed: int | None = None) -> None:
        self.game = game
        self.num_players = num_players
        self.seed(seed)

    def seed(self, seed: int | None) -> None:
        self.rng = np.random.default_rng(seed)

    def reset(self) -> None:
        """Called at the start of every game (for agents with memory)."""

    def act(self, observation: dict) -> int:
        raise NotImplementedError

    def legal_actions(self, observation: dict) -> np.ndarray:
        legal = np.flatnonzero(observation["action_mask"])
        if legal.size == 0:
            raise ValueError(f"{self.name}: asked to act with an all-zeros action mask")
        return legal

    def __repr__(self) -> str:
        return f"{type(self).__name__}(game={self.game!r}, num_players={self.num_players})"


class RandomAgent(Agent):
    """Uniform over the legal actions."""

    name = "random"

    def act(self, observation: dict) -> int:
        legal = self.legal_actions(observation)
        return int(legal[self.rng.integers(legal.size)])

"""What every heuristic shares for the batched protocol: ``act_batch`` through its compiled kernel.

A heuristic class that defines a game's strategy names its kernel module
(``kernel = "agents.heuristic.kernels.<game>"``); that module's
``act_batch(obs, mask, num_players, *params)`` makes, for every batch row, the
move the class's ``act`` makes (-1 where the mask is all zeros) (tests/test_batched_agents.py plays thousands of
games through both). ``kernel_params`` names the class attributes the kernel
takes as arguments (a subclass may change those and keep ``act_batch``).

A subclass that overrides anything else the class defines (``act`` or a
method it calls) changes the strategy in a way the kernel cannot know, so it
loses ``act_batch`` and ``play_kernel`` (set to ``None``: `agents.can_act_batch` is then false and
tools play it one move at a time).
"""

from __future__ import annotations

import importlib
from functools import lru_cache
from typing import Any

import numpy as np

import envs
from agents.base import Agent, batch_arrays, checked_moves


@lru_cache(maxsize=None)
def _sizes(game: str, num_players: int) -> tuple[int, int]:
    info = envs.info(game, num_players)
    return info.obs_size, info.num_actions


class KernelHeuristic(Agent):
    """A heuristic whose ``act`` has a compiled twin over batches (see the module docstring)."""

    kernel: str = ""
    kernel_params: tuple[str, ...] = ()
    _definition: type | None = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "kernel" in cls.__dict__:
            cls._definition = cls
            return
        d = cls._definition
        kept = set(d.kernel_params) | {"name"}
        for name in [*vars(d), "legal_actions"]:
            if name.startswith("__") or name in kept:
                continue
            owner = next(k for k in cls.__mro__ if name in vars(k))
            if owner is not d and not issubclass(d, owner):
                cls.act_batch = cls.play_kernel = None
                return

    def act_batch(self, obs: Any, mask: Any, seat: Any) -> np.ndarray:
        obs, mask, seat = batch_arrays(obs, mask, seat, *_sizes(self.game, self.num_players))
        module = importlib.import_module(self.kernel)
        return checked_moves(module.act_batch(obs, mask, self.num_players, *(getattr(self, p) for p in self.kernel_params)))

    def play_kernel(self) -> tuple:
        """The compiled play-out of this strategy in every seat (`envs.vector.VectorEnv.play_out`):
        ``(kernel, params)``."""
        module = importlib.import_module(self.kernel)
        return module.play_rows, module.play_params(self.num_players, *(getattr(self, p) for p in self.kernel_params))

"""What every heuristic shares for the batched protocol: ``act_batch`` through its compiled kernel.

A heuristic class that defines a game's strategy names its kernel module
(``kernel = "agents.heuristic.kernels.<game>"``); that module's
``act_batch(obs, mask, num_players, *params)`` makes, for every batch row, the
move the class's ``act`` makes (-1 where the mask is all zeros) (tests/test_batched_agents.py plays thousands of
games through both). ``kernel_params`` names the class attributes the kernel
takes as arguments (a subclass may change those and keep ``act_batch``).

A kernel plays only for the code it was compiled from (`compiled_strategy` says when):

* a subclass that overrides anything else the class defines (``act`` or a method it calls)
  changes the strategy in a way the kernel cannot know: it loses the inherited ``act_batch``
  and ``play_kernel`` (set to ``None``: `agents.can_act_batch` is then false and tools play it
  one move at a time), but keeps an ``act_batch`` it defines itself;
* a subclass that defines its own ``act_batch`` (or ``play_kernel``) is played by that method,
  never by the kernel;
* an instance that sets one of its class's methods or strategy constants on itself
  (``bot.act = my_act``) is no longer the compiled strategy: the inherited ``act_batch`` then
  calls its ``act`` row by row, and compiled tables and play-outs do not take it.
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

    _compiled = True  # the class plays exactly the strategy of its kernel (see the module docstring)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "kernel" in cls.__dict__:
            cls._definition, cls._compiled = cls, True
            return
        d = cls._definition
        kept = set(d.kernel_params) | {"name"}

        def owner(name: str) -> type:
            return next(k for k in cls.__mro__ if name in vars(k))

        changed = any(owner(name) is not d and not issubclass(d, owner(name))
                      for name in [*vars(d), "legal_actions"] if not name.startswith("__") and name not in kept)
        own = {name for name in ("act_batch", "play_kernel") if owner(name) is not KernelHeuristic}
        cls._compiled = not changed and not own
        # What it inherits would run the kernel: none of it for a changed strategy, and no
        # compiled play-out beside an act_batch of its own.
        for name in ({"act_batch", "play_kernel"} if changed else {"play_kernel"} if own else set()) - own:
            setattr(cls, name, None)

    def act_batch(self, obs: Any, mask: Any, seat: Any) -> np.ndarray:
        obs, mask, seat = batch_arrays(obs, mask, seat, *_sizes(self.game, self.num_players))
        if not compiled_strategy(self):  # the instance changed the strategy: its own act, row by row
            checked_moves(np.where((mask > 0).any(axis=1), 0, -1))  # ValueError naming all-zeros rows
            return np.array([self.act({"observation": o, "action_mask": m}) for o, m in zip(obs, mask)], np.int64)
        module = importlib.import_module(self.kernel)
        return checked_moves(module.act_batch(obs, mask, self.num_players, *(getattr(self, p) for p in self.kernel_params)))

    def play_kernel(self) -> tuple:
        """The compiled play-out of this strategy in every seat (`envs.vector.VectorEnv.play_out`):
        ``(kernel, params)``. ValueError for an agent that is not the compiled strategy."""
        if not compiled_strategy(self):
            raise ValueError(f"{type(self).__name__}: the instance changes the strategy ({', '.join(shadowed(self))} "
                             "set on it), so the compiled play-out does not play for it")
        module = importlib.import_module(self.kernel)
        return module.play_rows, module.play_params(self.num_players, *(getattr(self, p) for p in self.kernel_params))


def shadowed(agent: Any) -> list[str]:
    """The names an instance sets over its class's own attributes (a method such as ``act``, or a
    strategy constant), apart from the kernel's parameters and the label: what makes it another
    strategy than its class's."""
    cls = type(agent)
    kept = set(getattr(cls, "kernel_params", ())) | {"name"}
    return sorted(k for k in vars(agent) if k not in kept and hasattr(cls, k))


def compiled_strategy(agent: Any) -> bool:
    """Does `agent` play exactly the strategy its kernel was compiled from? A compiled heuristic
    whose class overrides nothing of the strategy and whose instance sets nothing over it. Only
    such an agent is played by its kernel (compiled tables, play-outs, ``act_batch``)."""
    return isinstance(agent, KernelHeuristic) and type(agent)._compiled and not shadowed(agent)

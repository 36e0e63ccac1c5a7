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

`box_obs(parallel_env)` (class `ParallelBoxObservation`) does the same for the
parallel form, ``<game>_v0.parallel_env()``: ``reset()`` and ``step()`` return
float32 vectors, each agent's mask is in its ``infos[agent]["action_mask"]``
(never empty, as in the parallel env). SuperSuit's parallel wrappers
(``black_death_v3``, ``frame_stack_v1``, ...) and libraries that read the mask
from infos take it.

``box_obs(env, mask_form="list")`` puts each mask in infos as a list of ints
instead of an int8 array. AgileRL (2.58) needs it: it looks for agents with no
mask by ``None in masks``, which compares a NumPy array elementwise and raises
"The truth value of an array ... is ambiguous".
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv, ParallelEnv
from pettingzoo.utils.wrappers import BaseWrapper

from envs.adapter import CardGameEnv
from envs.parallel import ParallelCardGameEnv


MASK_FORMS = ("array", "list")


def check_mask_form(form: str) -> str:
    if form not in MASK_FORMS:
        raise ValueError(f"mask_form must be one of {MASK_FORMS}, got {form!r}")
    return form


def mask_in(form: str, mask: np.ndarray) -> np.ndarray | list[int]:
    """A mask as infos carry it: the int8 array, or (``mask_form="list"``) a list of ints."""
    return mask.tolist() if form == "list" else mask


class BoxObservation(BaseWrapper):
    """Observation = the float32 vector (a Box); the mask is in ``infos[agent]["action_mask"]``."""

    def __init__(self, env: AECEnv, mask_form: str = "array"):
        if not isinstance(env.unwrapped, CardGameEnv):
            raise ValueError(f"box_obs wraps a cardzoo env, got {type(env.unwrapped).__name__}")
        if isinstance(env, BoxObservation):
            raise ValueError("this env already has Box observations")
        super().__init__(env)
        self._raw, self.mask_form = env.unwrapped, check_mask_form(mask_form)
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
            self._infos = {agent: {**info, "action_mask": mask_in(self.mask_form, raw.action_mask(agent))}
                           for agent, info in self.env.infos.items()}
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


class ParallelBoxObservation(ParallelEnv):
    """`BoxObservation` for the parallel form: vectors out, each agent's mask in its infos."""

    def __init__(self, env: ParallelCardGameEnv, mask_form: str = "array"):
        if isinstance(env, ParallelBoxObservation):
            raise ValueError("this env already has Box observations")
        self.env, self.mask_form = env, check_mask_form(mask_form)
        self.possible_agents = list(env.possible_agents)
        self.metadata = env.metadata
        self.render_mode = env.render_mode
        self.state_space = env.state_space

    @property
    def agents(self) -> list[str]:
        return self.env.agents

    @property
    def unwrapped(self) -> CardGameEnv:
        return self.env.unwrapped

    def observation_space(self, agent: str) -> spaces.Box:
        return self.env.observation_space(agent)["observation"]

    def action_space(self, agent: str):
        return self.env.action_space(agent)

    def _split(self, observations: dict, infos: dict) -> tuple[dict, dict]:
        return ({a: o["observation"] for a, o in observations.items()},
                {a: {**infos.get(a, {}), "action_mask": mask_in(self.mask_form, o["action_mask"])} for a, o in observations.items()})

    def reset(self, seed: int | None = None, options: dict | None = None):
        return self._split(*self.env.reset(seed=seed, options=options))

    def step(self, actions: dict[str, Any]):
        observations, rewards, terminations, truncations, infos = self.env.step(actions)
        observations, infos = self._split(observations, infos)
        return observations, rewards, terminations, truncations, infos

    def render(self):
        return self.env.render()

    def state(self) -> np.ndarray:
        return self.env.state()

    def close(self) -> None:
        self.env.close()


def box_obs(env: AECEnv | ParallelEnv, mask_form: str = "array") -> BoxObservation | ParallelBoxObservation:
    """Wrap a cardzoo env (``env()`` or ``parallel_env()``) so that observations are float32 Box
    vectors and masks live in infos (``mask_form``: "array", int8, or "list", of ints)."""
    if isinstance(env, (ParallelCardGameEnv, ParallelBoxObservation)):
        return ParallelBoxObservation(env, mask_form)
    if isinstance(env, ParallelEnv):
        raise ValueError(f"box_obs wraps a cardzoo env() or parallel_env(), got {type(env).__name__}")
    return BoxObservation(env, mask_form)

"""sb3-contrib's ``MaskablePPO`` on SuperSuit's vector envs, as PettingZoo's SB3 tutorials build them.

PettingZoo's tutorials turn a parallel env into a Stable-Baselines3 vector env with SuperSuit,
one row per seat of every table. ``envs.box_obs`` gives the Box observations SuperSuit needs and
puts each seat's mask in its infos; ``VecActionMasks`` hands those masks to MaskablePPO, which
asks the vector env for them with ``has_attr("action_masks")`` and ``env_method("action_masks")``,
methods SuperSuit's vector envs do not have:

    import supersuit as ss
    from sb3_contrib import MaskablePPO
    import envs
    from envs import neu_v0
    from envs.sb3 import VecActionMasks

    env = envs.box_obs(neu_v0.parallel_env(num_players=4))
    env = ss.black_death_v3(env)
    env = ss.pettingzoo_env_to_vec_env_v1(env)
    env = ss.concat_vec_envs_v1(env, 2, num_cpus=1, base_class="stable_baselines3")
    env = VecActionMasks(env)
    MaskablePPO("MlpPolicy", env, seed=0).learn(10_000)

A seat that is not to act has a mask that allows action 0 only, which is ignored (`envs.parallel`),
so its row adds nothing to the policy gradient. ``seed()`` (which SB3 calls for ``seed=``) is kept
for the next ``reset()``, which deals table ``i`` the game of ``seed + i``; SuperSuit's own wrapper
has no ``seed()``. This module imports Stable-Baselines3.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from stable_baselines3.common.vec_env import VecEnvWrapper
from stable_baselines3.common.vec_env.base_vec_env import VecEnvIndices

METHOD = "action_masks"  # the name sb3-contrib asks a vector env for


class VecActionMasks(VecEnvWrapper):
    """A SuperSuit SB3 vector env (``concat_vec_envs_v1(..., base_class="stable_baselines3")``)
    over ``envs.box_obs(<game>_v0.parallel_env())``, with ``env_method("action_masks")`` read from
    the rows' ``infos["action_mask"]``."""

    def __init__(self, venv) -> None:
        super().__init__(venv)
        self._masks: np.ndarray | None = None
        self._seed: int | None = None

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        self._seed = seed
        return [None if seed is None else seed + i for i in range(self.num_envs)]

    def reset(self):
        # SuperSuit's SB3 wrapper seeds through a seed() it lacks, so a seed goes to the vector env under it.
        observations, infos = self.venv.venv.reset(seed=self._seed)
        self._seed = None
        self.venv.reset_infos = infos
        self.reset_infos = infos
        self._masks = self._read(infos)
        return observations

    def step_wait(self):
        observations, rewards, dones, infos = self.venv.step_wait()
        self._masks = self._read(infos)
        return observations, rewards, dones, infos

    @staticmethod
    def _read(infos: list[dict]) -> np.ndarray:
        if not all("action_mask" in info for info in infos):
            raise ValueError("VecActionMasks reads infos['action_mask']: wrap the parallel env in envs.box_obs()")
        return np.stack([info["action_mask"] for info in infos]).astype(bool)

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        if attr_name == "render_mode":  # asked while building; SuperSuit's SB3 wrapper cannot pass it on
            return [self.venv.render_mode for _ in self._get_indices(indices)]
        return self.venv.get_attr(attr_name, indices)

    def has_attr(self, attr_name: str) -> bool:
        return attr_name == METHOD  # the only attribute SuperSuit's vector envs can answer for

    def env_method(self, method_name: str, *method_args, indices: VecEnvIndices = None, **method_kwargs) -> list[Any]:
        if method_name != METHOD:
            return self.venv.env_method(method_name, *method_args, indices=indices, **method_kwargs)
        if self._masks is None:
            raise RuntimeError("call reset() before action_masks()")
        return [self._masks[i] for i in self._get_indices(indices)]

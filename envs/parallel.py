"""Any cardzoo game in PettingZoo's parallel API: ``envs.<game>_v0.parallel_env()``.

    from envs import neu_v0
    env = neu_v0.parallel_env(num_players=4)
    observations, infos = env.reset(seed=0)
    while env.agents:
        acting = env.possible_agents[infos[env.agents[0]]["acting_seat"]]
        actions = {a: env.action_space(a).sample() for a in env.agents}   # only the acting seat's is played
        observations, rewards, terminations, truncations, infos = env.step(actions)

The games are turn-based, so one ``step()`` plays one decision: the action of
the seat to act (``infos[agent]["acting_seat"]``, an int, the same in every
agent's infos; -1 once the game is over). The other agents' actions are
ignored, and an agent may leave its action out. Once the game is over, a
``step({})`` (no agent left to act) returns five empty dicts, as PettingZoo's
``aec_to_parallel`` does and SuperSuit's ``black_death_v3`` expects; a step
with actions raises until ``reset()``. This is PettingZoo's
``turn_based_aec_to_parallel`` over ``env()``, with two differences: infos hold
numbers only (the converter's ``"active_agent"`` is a string, which replay
buffers such as TorchRL's cannot store), and the agents that have to step with
``None`` (the game is over) do so inside the same ``step()``.

Every agent gives an action at every step, so no agent gets an empty mask: a
seat that is not to act (or any seat once the game is over) has a mask that
allows action 0 only, and that action is ignored. A masked policy samples it
with probability 1, so its log-probability and entropy are 0 and those seats
add nothing to a policy gradient; ``acting_seat`` says whose move counts.

Every agent has the same observation space (the AEC env's Dict of
``"observation"`` and ``"action_mask"``) and equal action spaces;
``action_space(agent).sample()`` draws a legal move for the seat to act (see
`envs.adapter`). Rewards are those of the AEC step that played the decision. A
masked-out action ends the game with -1 for the offender, as in ``env()``.

Options besides the rules: ``max_cycles`` (at most this many ``step()`` calls,
then every agent is truncated), ``minimal_infos`` (infos hold only
``acting_seat``) and ``render_mode``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from pettingzoo import ParallelEnv

if TYPE_CHECKING:  # the adapter builds this class: a run-time import would be a circle
    from envs.adapter import CardGameEnv


class ParallelCardGameEnv(ParallelEnv):
    """A cardzoo AEC env (``env()``) stepped one decision per ``step()``; see the module docstring."""

    def __init__(self, aec_env: CardGameEnv) -> None:
        # max_cycles counts step() calls here, each one decision, so the AEC env itself runs without one.
        self.max_cycles = aec_env.max_cycles
        aec_env.max_cycles = None
        self.aec_env = aec_env
        self.possible_agents = list(aec_env.possible_agents)
        self.agents: list[str] = []
        self.metadata = {**aec_env.metadata, "is_parallelizable": True}
        self.render_mode = aec_env.render_mode
        self.state_space = aec_env.state_space
        self._cycles = 0

    @property
    def unwrapped(self) -> CardGameEnv:
        return self.aec_env

    def observation_space(self, agent: str):
        return self.aec_env.observation_space(agent)

    def action_space(self, agent: str):
        return self.aec_env.action_space(agent)

    def reset(self, seed: int | None = None, options: dict | None = None):
        aec = self.aec_env
        aec.reset(seed=seed, options=options)
        self._cycles = 0
        self.agents = list(aec.agents)
        return {a: self._observe(a) for a in self.agents}, self._infos()

    def step(self, actions: dict[str, Any]):
        aec = self.aec_env
        if not isinstance(actions, dict):
            raise TypeError(f"actions must be a dict {{agent: action}}, got {type(actions).__name__}")
        if not self.agents:
            if not actions:  # as PettingZoo's aec_to_parallel answers it; SuperSuit's black_death_v3 relies on it
                return {}, {}, {}, {}, {}
            raise RuntimeError("the game is over and every agent is done; call reset() to play again")
        acting = aec.agent_selection
        if acting not in actions:
            raise ValueError(f"actions has no action for {acting}, the agent to act")
        aec.step(actions[acting])
        self._cycles += 1
        rewards = {a: float(aec.rewards.get(a, 0.0)) for a in self.agents}
        terminations = {a: bool(aec.terminations.get(a, True)) for a in self.agents}
        truncations = {a: bool(aec.truncations.get(a, False)) for a in self.agents}
        if self.max_cycles is not None and self._cycles >= self.max_cycles and aec.agents and not aec.game.game_over:
            aec.truncate()
            truncations = dict.fromkeys(self.agents, True)
        observations = {a: self._observe(a) for a in self.agents}
        infos = self._infos()
        if all(terminations[a] or truncations[a] for a in self.agents):
            while aec.agents:  # the None-steps of the AEC API, taken here
                aec.step(None)
            for info in infos.values():
                info["acting_seat"] = -1
            self.agents = []
        return observations, rewards, terminations, truncations, infos

    def _observe(self, agent: str) -> dict[str, np.ndarray]:
        obs = self.aec_env.observe(agent)
        if not obs["action_mask"].any():
            obs["action_mask"][0] = 1  # nothing to decide: one ignored action, never an empty mask
        return obs

    def _infos(self) -> dict[str, dict[str, Any]]:
        aec = self.aec_env
        seat = -1 if not aec.agents or aec.game.game_over else self.possible_agents.index(aec.agent_selection)
        if aec.minimal_infos:
            return {a: {"acting_seat": seat} for a in self.agents}
        return {a: {**aec.infos.get(a, {}), "acting_seat": seat} for a in self.agents}

    def render(self):
        return self.aec_env.render()

    def state(self) -> np.ndarray:
        return self.aec_env.state()

    def close(self) -> None:
        self.aec_env.close()

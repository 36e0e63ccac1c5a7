"""Example agents: small, readable, and deliberately weak, for trying out the tools.

    python -m experiments.exploit --game neu --players 4 --target agents.examples:LowestActionAgent

`LowestActionAgent` always plays the legal action with the lowest index. In
every game the first indices are plays and the last ones are passes, calls and
steals (`envs.info(game).action_names` lists them in order): in Neu it plays
its lowest card and passes, turns, doubles or shoots only when it has no card
to play; in Deadfall it plays its lowest rank and calls "DEAD" only when it
cannot play; in Not For Me it makes the legal play of the lowest number with the fewest
cards and wilds; in Ma's Jong it discards the first tile in the tile order (Red 1 first)
and passes on every steal. Anyone who knows that can plan around it: it is the
example of an agent that a best response exploits far more than the
heuristic (`experiments.exploit`). It is not a baseline.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.base import Agent, batch_arrays


class LowestActionAgent(Agent):
    """Always the legal action with the lowest index (deterministic, no memory)."""

    name = "lowest"

    def act(self, observation: dict) -> int:
        return int(self.legal_actions(observation)[0])

    def act_batch(self, obs: Any, mask: Any, seat: Any) -> np.ndarray:
        _, mask, _ = batch_arrays(obs, mask, seat)  # ValueError for a row with no legal action
        return mask.argmax(axis=1).astype(np.int64)  # argmax of 0/1 is the first 1

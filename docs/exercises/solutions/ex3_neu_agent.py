"""Exercise 3, a solution: add as little as possible to the total, and keep the special
cards (pass, turn, double, shot, -10, -1, 101) for when no number card is legal."""

import numpy as np

import envs

FACTS = envs.info("neu", num_players=4)
VALUE = {a: int(name[5:]) for a, name in enumerate(FACTS.action_names)
         if name.startswith("play ") and name[5:].isdigit()}


class NeuAgent:
    def act(self, observation: dict) -> int:
        legal = np.flatnonzero(observation["action_mask"])
        numbers = [a for a in legal if a in VALUE]
        if numbers:
            return int(min(numbers, key=VALUE.get))
        return int(legal[0])

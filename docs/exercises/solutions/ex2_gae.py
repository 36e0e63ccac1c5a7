"""Exercise 2, a solution: one backward pass over the table's moves, one running
advantage per seat."""

import numpy as np


def gae(seats: np.ndarray, rewards: np.ndarray, values: np.ndarray, gamma: float, lam: float) -> np.ndarray:
    seats, rewards, values = np.asarray(seats), np.asarray(rewards, dtype=np.float64), np.asarray(values, dtype=np.float64)
    num_players = rewards.shape[1]
    advantages = np.zeros(len(seats))
    pending = np.zeros(num_players)     # rewards a seat received since its next decision (going backwards)
    next_value = np.zeros(num_players)  # value at that seat's next decision (0 after its last)
    next_adv = np.zeros(num_players)
    for t in range(len(seats) - 1, -1, -1):
        pending += rewards[t]
        p = seats[t]
        delta = pending[p] + gamma * next_value[p] - values[t]
        next_adv[p] = advantages[t] = delta + gamma * lam * next_adv[p]
        next_value[p], pending[p] = values[t], 0.0
    return advantages

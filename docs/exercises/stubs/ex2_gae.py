"""Exercise 2: generalised advantage estimation along one seat's own decisions.

In a turn-based game a seat's "time steps" are its own decisions, not the table's moves.
One game of a table is given as arrays over the table's moves t = 0 … T-1:

* `seats[t]`: the seat that moved at t;
* `rewards[t, p]`: what seat p received from move t (every seat gets a reward from every move);
* `values[t]`: the critic's value of the mover's observation at t.

The game ends after move T-1 (the value after a seat's last decision is 0). For seat p with
decisions at t_1 < t_2 < … < t_K:

* its reward for decision k is everything p receives from move t_k up to, not including,
  move t_{k+1} (up to the end for the last one);
* delta_k = reward_k + gamma * values[t_{k+1}] - values[t_k]   (values[t_{K+1}] = 0);
* advantage_k = delta_k + gamma * lam * advantage_{k+1}        (advantage_{K+1} = 0).

Write `gae` to return the advantage of every move t (for the seat that moved at t).

Check your work:  python -m experiments.exercises check 2 --file THIS_FILE
"""

import numpy as np


def gae(seats: np.ndarray, rewards: np.ndarray, values: np.ndarray, gamma: float, lam: float) -> np.ndarray:
    """seats int [T], rewards float [T, P], values float [T] -> advantages float [T]."""
    raise NotImplementedError("exercise 2: write gae()")

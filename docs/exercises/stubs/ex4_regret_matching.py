"""Exercise 4: regret matching, the step at the heart of CFR.

CFR keeps, for every information set and action, a regret: how much better that action would
have done than the policy played, summed over the iterations so far. Regret matching turns the
regrets into the next policy: each legal action is played with probability proportional to its
positive regret; when no legal action has a positive regret, every legal action is equally likely.
Illegal actions are never played.

The check compares your function with the definition, then runs CFR+ (`train.cfr.CFRPlus`) with
it on the small Neu preset (RULES.md "Neu, small preset") and checks that the average policy
comes within 0.001 of an equilibrium (NashConv).

Check your work:  python -m experiments.exercises check 4 --file THIS_FILE
"""

import numpy as np


def regret_matching(regrets: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """regrets float [I, A], legal bool [I, A] (every row has a legal action) -> policy float [I, A],
    each row summing to 1."""
    raise NotImplementedError("exercise 4: write regret_matching()")

"""Exercise 1: sample legal actions from a masked softmax.

A policy network gives one logit per action, for many tables at once. Only the actions
whose mask entry is 1 are legal. Write `sample` so that each row's action is drawn from the
softmax of that row's logits over its legal actions only: an illegal action is never drawn,
and the legal ones keep their relative probabilities.

Check your work:  python -m experiments.exercises check 1 --file THIS_FILE
"""

import numpy as np


def sample(logits: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """logits float [N, A], mask int8 or bool [N, A], rng a NumPy Generator -> int64 actions [N].

    A row with no legal action is a ValueError.
    """
    raise NotImplementedError("exercise 1: write sample()")

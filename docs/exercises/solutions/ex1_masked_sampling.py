"""Exercise 1, a solution: the Gumbel-max trick restricted to the legal actions.

argmax(logits + Gumbel noise) is a sample from softmax(logits); giving the illegal actions
-inf first makes it a sample from the softmax over the legal ones.
"""

import numpy as np


def sample(logits: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    legal = np.asarray(mask) != 0
    if not legal.any(axis=1).all():
        raise ValueError("a row has no legal action")
    noisy = np.asarray(logits, dtype=np.float64) + rng.gumbel(size=legal.shape)
    return np.where(legal, noisy, -np.inf).argmax(axis=1).astype(np.int64)

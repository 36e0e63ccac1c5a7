"""A batched env pickles mid-game (worker processes, a run's checkpoint) and plays on identically."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import envs

pytest.importorskip("numba")


def test_vector_env_pickles_mid_game_and_plays_on_the_same():
    venv = envs.vector_env("neu", num_envs=8, num_players=4, seed=3)
    obs, mask, seat = venv.reset()
    rng = np.random.default_rng(0)

    def legal_moves(mask):
        return (rng.random(mask.shape) * mask).argmax(1)

    for _ in range(20):
        obs, mask, seat, _, _ = venv.step(legal_moves(mask))
    copy = pickle.loads(pickle.dumps(venv))
    for _ in range(200):  # long enough for tables to finish and restart
        actions = legal_moves(mask)
        a, b = venv.step(actions), copy.step(actions)
        for x, y in zip(a, b):
            assert np.array_equal(x, y)
        mask = a[1]

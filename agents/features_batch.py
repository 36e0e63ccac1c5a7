"""`agents.features.mas_jong_features`, compiled with numba over a batch of observations.

The readable function stays the definition: this kernel computes the same 81
values for every row of ``obs [N, obs_size]`` (float32, the arrays of
`envs.vector_env`), from the seat's own view only, with the compiled hand
distances of `agents.heuristic.kernels.hand_distance` (which agree with the
readable search). tests/test_learn.py compares both on the views of whole
games. A policy that reads these features runs on the batched engine without
a Python call per view.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from agents.actor_kernels import ppo_moves
from agents.heuristic.kernels import not_your_mas_jong as heuristic
from agents.heuristic.kernels.hand_distance import shanten, shanten_each, tables
from agents.heuristic.kernels.not_your_mas_jong import STEALS, discarded_card, distance_after_steal, read_view
from envs.not_your_mas_jong import A_STEAL_IDENTICAL, NUM_TYPES, OBS_PHASE

FAR = 9  # agents.features._FAR: a discard or steal that is not possible (the worst hand is 8 away)
SIZE = 81


@njit(cache=True)
def _rows(obs, n, add, dist, out):
    hand = np.zeros(NUM_TYPES, np.int64)
    unseen = np.zeros(NUM_TYPES, np.int64)
    seen = np.zeros(NUM_TYPES, np.float32)
    each = np.zeros(NUM_TYPES, np.int64)
    draws = np.zeros(NUM_TYPES, np.int64)
    for t in range(obs.shape[0]):
        locked_sets = read_view(obs, t, n, hand, seen, unseen)
        out[t, :] = FAR
        out[t, 0] = shanten(hand, locked_sets, add, dist)
        shanten_each(hand, locked_sets, -1, add, dist, each)
        closest = FAR
        for k in range(NUM_TYPES):
            if each[k] >= 0:
                out[t, 1 + k] = each[k]
                closest = min(closest, each[k])
        out[t, 30] = 0.0
        if obs[t, OBS_PHASE] == 1:
            card = discarded_card(obs, t)
            hand[card] += 1
            out[t, 30] = 1.0 if shanten(hand, locked_sets, add, dist) == 0 else 0.0
            hand[card] -= 1
            for j in range(4):  # readable distance_after_steal for each row of SET_STEAL_CARDS
                a, first, second = STEALS[card, j, 0], STEALS[card, j, 1], STEALS[card, j, 2]
                if a < 0:
                    break
                d = distance_after_steal(hand, locked_sets, first, second, add, dist, draws)
                if d >= 0:
                    out[t, 26 + a - A_STEAL_IDENTICAL] = d
        for k in range(NUM_TYPES):
            out[t, 31 + k] = unseen[k]
            out[t, 56 + k] = 0.0
        for k in range(NUM_TYPES):  # acceptance of each discard that keeps the hand closest
            if hand[k] and out[t, 1 + k] == closest:
                hand[k] -= 1
                shanten_each(hand, locked_sets, 1, add, dist, draws)
                total = 0
                for u in range(NUM_TYPES):
                    if draws[u] >= 0 and draws[u] < closest:
                        total += unseen[u]
                out[t, 56 + k] = total
                hand[k] += 1


def mas_jong_features_batch(obs: np.ndarray, num_players: int) -> np.ndarray:
    """[N, 81] float32: `agents.features.mas_jong_features` of every row of `obs` [N, obs_size]."""
    obs = np.ascontiguousarray(obs, dtype=np.float32)
    if obs.ndim != 2:
        raise ValueError(f"obs must be [rows, observation size], got shape {obs.shape}")
    out = np.empty((obs.shape[0], SIZE), np.float32)
    _rows(obs, num_players, *tables(), out)
    return out


def features_into(obs: np.ndarray, num_players: int, out: np.ndarray) -> None:
    """`mas_jong_features_batch` written into `out` [N, 81] (float32, C-ordered) for float32 C-ordered
    `obs`, unchecked: the one-view path of `agents.ppo.PPOAgent.act`, which has checked them."""
    _rows(obs, num_players, *tables(), out)


def with_features(obs: np.ndarray, num_players: int) -> np.ndarray:
    """[N, obs_size + 81]: each row followed by its features, as `agents.features.featurizer` gives one view."""
    return np.concatenate([np.asarray(obs, np.float32), mas_jong_features_batch(obs, num_players)], axis=1)


@njit(cache=True, inline="always")
def features(obs, n, fparams, out):
    """`_rows` with the hand-distance tables as one argument (``fparams``: ``tables()``)."""
    _rows(obs, n, fparams[0], fparams[1], out)


@njit(cache=True)
def network_moves(obs, mask, n, hparams, net, dims, flags, fparams, out):
    """A greedy `agents.ppo.PPOAgent`'s moves for every row, for a network that reads these
    features (and the heuristic's move, with ``flags[1]``): the inputs and the actor in one
    compiled call (`agents.actor_kernels.ppo_moves`)."""
    ppo_moves(obs, mask, np.arange(obs.shape[0]), n, hparams, net, dims, flags, fparams, heuristic._policy, features, out)

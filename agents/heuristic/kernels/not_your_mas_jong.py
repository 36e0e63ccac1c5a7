"""`agents.heuristic.not_your_mas_jong.NotYourMasJongHeuristic`, compiled over a batch
(see `agents.heuristic.kernels`); the hand distances come from `agents.heuristic.kernels.hand_distance`."""

from __future__ import annotations

import numpy as np
from numba import njit

from agents.heuristic.kernels.common import legal_count_and_first
from agents.heuristic.kernels.hand_distance import shanten, shanten_each, tables as distance_tables
from envs.vector import not_your_mas_jong as V
from envs.vector import loops
from envs.not_your_mas_jong import (A_PASS, A_STEAL_WIN, COPIES, NUM_TYPES, OBS_DISCARD, OBS_HAND, OBS_PHASE, OBS_SEATS,
                                    SEAT_BLOCK, SEAT_DISCARDS, SEAT_LOCKED, SET_STEAL_CARDS)

# SET_STEAL_CARDS as an array: per card type, up to 4 rows (action, hand card, hand card), -1 past the end.
STEALS = np.full((NUM_TYPES, 4, 3), -1, np.int64)
for _k, _rows in enumerate(SET_STEAL_CARDS):
    STEALS[_k, : len(_rows)] = _rows


@njit(cache=True, inline="always")
def _acceptance(hand, locked_sets, distance, unseen, add, dist, each):
    shanten_each(hand, locked_sets, 1, add, dist, each)
    total = 0
    for k in range(NUM_TYPES):
        if each[k] >= 0 and each[k] < distance:
            total += unseen[k]
    return total


@njit(cache=True, inline="always")
def _best_discard(mask, t, hand, locked_sets, unseen, seen, add, dist, each, after):
    shanten_each(hand, locked_sets, -1, add, dist, after)
    d, closest = 99, 0
    for k in range(NUM_TYPES):
        if mask[t, k]:
            if after[k] < d:
                d, closest = after[k], 0
            if after[k] == d:
                closest += 1
    best, best_accept, best_seen = -1, -1, -1.0
    for k in range(NUM_TYPES):
        if mask[t, k] and after[k] == d:
            if closest == 1:
                return k
            hand[k] -= 1
            accept = _acceptance(hand, locked_sets, d, unseen, add, dist, each)
            hand[k] += 1
            # readable key (-acceptance, -seen, k), smallest first
            if accept > best_accept or (accept == best_accept and seen[k] > best_seen):
                best, best_accept, best_seen = k, accept, seen[k]
    return best


@njit(cache=True, inline="always")
def read_view(obs, t, n, hand, seen, unseen):
    """The readable read_view of row t: the hand, the copies of each card seen on the table and
    those unseen (into the arrays given); returns the seat's locked sets."""
    locked = np.float32(0.0)
    for k in range(NUM_TYPES):
        hand[k] = int(obs[t, OBS_HAND + k])
        locked += obs[t, OBS_SEATS + SEAT_LOCKED + k]
        s = np.float32(0.0)
        for r in range(n):
            s += obs[t, OBS_SEATS + SEAT_BLOCK * r + SEAT_DISCARDS + k]
        for r in range(n):
            s += obs[t, OBS_SEATS + SEAT_BLOCK * r + SEAT_LOCKED + k]
        seen[k] = s
        unseen[k] = int(max(0.0, COPIES - obs[t, OBS_HAND + k] - s))
    return int(locked) // 3


@njit(cache=True, inline="always")
def discarded_card(obs, t):
    """The card on offer in a steal decision (the one-hot discard of row t)."""
    card = 0
    for k in range(1, NUM_TYPES):
        if obs[t, OBS_DISCARD + k] > obs[t, OBS_DISCARD + card]:
            card = k
    return card


@njit(cache=True, inline="always")
def distance_after_steal(hand, locked_sets, first, second, add, dist, draws):
    """The readable distance_after_steal of the steal that uses `first` and `second` from the hand:
    -1 when the hand lacks them or would hold no card after it."""
    if not (hand[first] >= 2 if first == second else hand[first] >= 1 and hand[second] >= 1):
        return -1
    hand[first] -= 1
    hand[second] -= 1
    left = 0
    for k in range(NUM_TYPES):
        left += hand[k]
    d = -1
    if left:
        shanten_each(hand, locked_sets + 1, -1, add, dist, draws)
        d = 99
        for k in range(NUM_TYPES):
            if draws[k] >= 0 and draws[k] < d:
                d = draws[k]
    hand[first] += 1
    hand[second] += 1
    return d


@njit(cache=True, inline="always")
def _steal_or_pass(mask, t, hand, locked_sets, card, add, dist, after):
    best_action = A_PASS
    best_distance = shanten(hand, locked_sets, add, dist)
    for j in range(4):
        a, first, second = STEALS[card, j, 0], STEALS[card, j, 1], STEALS[card, j, 2]
        if a < 0:
            break
        if mask[t, a] == 0:
            continue
        # readable worth_stealing
        d = distance_after_steal(hand, locked_sets, first, second, add, dist, after)
        if d >= 0 and d < best_distance:
            best_action, best_distance = a, d
    return best_action


@njit(cache=True)
def _act_rows(obs, mask, n, add, dist, out):
    hand = np.zeros(NUM_TYPES, np.int64)
    unseen = np.zeros(NUM_TYPES, np.int64)
    seen = np.zeros(NUM_TYPES, np.float32)
    each = np.zeros(NUM_TYPES, np.int64)
    after = np.zeros(NUM_TYPES, np.int64)
    for t in range(obs.shape[0]):
        legal, first = legal_count_and_first(mask, t)
        if legal <= 1:  # first is -1 when nothing is legal
            out[t] = first
            continue
        locked_sets = read_view(obs, t, n, hand, seen, unseen)
        if obs[t, OBS_PHASE] == 1:
            if mask[t, A_STEAL_WIN]:
                out[t] = A_STEAL_WIN
                continue
            card = discarded_card(obs, t)
            out[t] = _steal_or_pass(mask, t, hand, locked_sets, card, add, dist, after)
        else:
            out[t] = _best_discard(mask, t, hand, locked_sets, unseen, seen, add, dist, each, after)


def act_batch(obs: np.ndarray, mask: np.ndarray, num_players: int) -> np.ndarray:
    out = np.empty(obs.shape[0], np.int64)
    _act_rows(obs, mask, num_players, *distance_tables(), out)
    return out


# The compiled play-out (`envs.vector.VectorEnv.play_out`): this strategy in every seat, no
# Python between steps.
@njit(cache=True, inline="always")
def _policy(obs, mask, n, params, out):
    _act_rows(obs, mask, n, params[0], params[1], out)


@njit(cache=True)
def play_rows(st, rows, actions, values, round_only, limit, rewards, done, final_scores, final_ranks, scratch,
              obs, mask, who, tables, active, start, params):
    return loops.play_out(st, rows, actions, values, round_only, limit, rewards, done, final_scores, final_ranks,
                          scratch, obs, mask, who, tables, active, start, V.step_rows, V.write_views, V.table_events,
                          _policy, params)


def play_params(num_players: int) -> tuple:
    """The `play_rows` policy parameters, as `act_batch` takes them."""
    return distance_tables()

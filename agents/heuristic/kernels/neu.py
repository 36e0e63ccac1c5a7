"""`agents.heuristic.neu.NeuHeuristic`, compiled over a batch (see `agents.heuristic.kernels`).

The weights ``attack_weight`` and ``future_weight`` are arguments, so a
subclass that only changes them keeps its ``act_batch``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from agents.heuristic.kernels.common import COMB
from agents.heuristic.neu import HIGH_TOTALS
from envs.vector import neu as V
from envs.vector import loops
from envs.neu import (A_DOUBLE, A_PASS, A_SHOT, A_TURN, CARD_101, COPIES, DOUBLE, NUM_KINDS, NUMBER_VALUES, OBS_DIRECTION,
                     OBS_HAND, OBS_OWED, OBS_PLAYED, OBS_SEATS, OBS_TOTAL, PASS, SEAT_BLOCK, SEAT_CHIPS, SEAT_HAND_SIZE,
                     SEAT_IN_GAME, SHOT, TURN)

_COPIES = np.array(COPIES, np.int64)
_VALUES = np.array(NUMBER_VALUES, np.int64)
_HIGH = np.array(HIGH_TOTALS, np.int64)


@njit(cache=True, inline="always")
def _playable(kind, total, owed):
    # envs.neu.playable
    if kind < CARD_101:
        return total + _VALUES[kind] <= 101
    if kind == DOUBLE:
        return owed == 1
    return True


@njit(cache=True, inline="always")
def _unseen_unplayable(unseen, u_all, t, o):
    s = 0
    for k in range(NUM_KINDS):
        if _playable(k, t, o):
            s += unseen[k]
    return u_all - s


@njit(cache=True, inline="always")
def _stuck_chance(obs, row, seat, unseen, u_all, t, o):
    hand_size = int(obs[row, OBS_SEATS + SEAT_BLOCK * seat + SEAT_HAND_SIZE])
    if hand_size == 0:
        return 1.0
    if u_all < hand_size:
        return 0.0
    return COMB[_unseen_unplayable(unseen, u_all, t, o), hand_size] / COMB[u_all, hand_size]


@njit(cache=True, inline="always")
def _my_stuck(rest, unseen, u_all, u, t, o):
    for k in range(NUM_KINDS):
        if rest[k] and _playable(k, t, o):
            return 0.0
    return _unseen_unplayable(unseen, u_all, t, o) / u


@njit(cache=True, inline="always")
def _next_from(obs, row, n, r, d):
    s = (r + d) % n
    while not obs[row, OBS_SEATS + SEAT_BLOCK * s + SEAT_IN_GAME] > 0:
        s = (s + d) % n
    return s


@njit(cache=True)
def _act_rows(obs, mask, n, attack_weight, future_weight, out):
    hand = np.zeros(NUM_KINDS, np.int64)
    unseen = np.zeros(NUM_KINDS, np.int64)
    rest = np.zeros(NUM_KINDS, np.int64)
    for row in range(obs.shape[0]):
        u_all = 0
        for k in range(NUM_KINDS):
            hand[k] = int(obs[row, OBS_HAND + k])
            unseen[k] = max(_COPIES[k] - hand[k] - int(obs[row, OBS_PLAYED + k]), 0)
            u_all += unseen[k]
        total, direction, owed = int(obs[row, OBS_TOTAL]), int(obs[row, OBS_DIRECTION]), int(obs[row, OBS_OWED])
        u = max(u_all, 1)
        best, best_score = -1, -np.inf
        for a in range(mask.shape[1]):
            if mask[row, a] == 0:
                continue
            if a >= A_SHOT:
                kind = SHOT
            elif a == A_PASS:
                kind = PASS
            elif a == A_TURN:
                kind = TURN
            elif a == A_DOUBLE:
                kind = DOUBLE
            else:
                kind = a
            for k in range(NUM_KINDS):
                rest[k] = hand[k]
            rest[kind] -= 1
            t = total
            if kind <= 12:
                t = total + _VALUES[kind]
            elif kind == CARD_101:
                t = 101
            if kind == PASS or kind == TURN or kind == SHOT:
                d = -direction if kind == TURN else direction
                target = a - A_SHOT + 1 if kind == SHOT else _next_from(obs, row, n, 0, d)
                attack = _stuck_chance(obs, row, target, unseen, u_all, t, owed)
                now = 0.0
            elif owed == 2:
                attack = 0.0
                now = _my_stuck(rest, unseen, u_all, u, t, 1)
            else:
                target = _next_from(obs, row, n, 0, direction)
                attack = _stuck_chance(obs, row, target, unseen, u_all, t, 2 if kind == DOUBLE else 1)
                now = 0.0
            future = 0.0
            for i in range(_HIGH.shape[0]):
                dt = _HIGH[i]
                future += _my_stuck(rest, unseen, u_all, u, min(101, t + dt) if dt < 101 else 101, 1)
            future /= _HIGH.shape[0]
            score = attack_weight * attack - now - future_weight * future
            if a >= A_SHOT:
                score += 1e-3 * np.float64(obs[row, OBS_SEATS + SEAT_BLOCK * (a - A_SHOT + 1) + SEAT_CHIPS])
            if a <= 10:
                score += 1e-4 * _VALUES[a]
            if best < 0 or score > best_score:
                best, best_score = a, score
        out[row] = best


def act_batch(obs: np.ndarray, mask: np.ndarray, num_players: int, attack_weight: float, future_weight: float) -> np.ndarray:
    out = np.empty(obs.shape[0], np.int64)
    _act_rows(obs, mask, num_players, float(attack_weight), float(future_weight), out)
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


def play_params(num_players: int, attack_weight: float, future_weight: float) -> tuple:
    """The `play_rows` policy parameters, as `act_batch` takes them."""
    return (float(attack_weight), float(future_weight))

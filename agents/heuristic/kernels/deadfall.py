"""`agents.heuristic.deadfall.DeadfallHeuristic`, compiled over a batch (see `agents.heuristic.kernels`)."""

from __future__ import annotations

import numpy as np
from numba import njit

from agents.heuristic.deadfall import CALL_MARGIN, KEEP_CARDS
from agents.heuristic.kernels.common import COMB
from envs.vector import deadfall as V
from envs.vector import loops
from envs.deadfall import (A_DEAD, DOOR, NUM_RANKS, OBS_HAND, OBS_PHASE, OBS_POT, OBS_SEATS, OBS_UNSEEN, SEAT_BLOCK,
                           SEAT_CHIPS, SEAT_HAND_SIZE, SEAT_PICKED, SEAT_TOP)


@njit(cache=True, inline="always")
def no_hidden_copy(unseen_of_rank, unseen_total, in_other_hands):
    if unseen_of_rank <= 0:
        return 1.0
    if in_other_hands <= 0:
        return 1.0
    if unseen_total - unseen_of_rank < in_other_hands:
        return 0.0
    return COMB[unseen_total - unseen_of_rank, in_other_hands] / COMB[unseen_total, in_other_hands]


@njit(cache=True, inline="always")
def _target(obs, t, n, v):
    # envs.deadfall.dead_target from seat 0: the nearest seat to my right showing v, else n - 1.
    for k in range(1, n):
        s = n - k
        if obs[t, OBS_SEATS + SEAT_BLOCK * s + SEAT_TOP] == v:
            return s
    return n - 1


@njit(cache=True)
def _act_rows(obs, mask, n, out):
    hand = np.zeros(NUM_RANKS, np.int64)
    unseen = np.zeros(NUM_RANKS, np.int64)
    for t in range(obs.shape[0]):
        total_unseen = 0
        cards_left = 0
        for i in range(NUM_RANKS):
            hand[i] = int(obs[t, OBS_HAND + i])
            unseen[i] = int(obs[t, OBS_UNSEEN + i])
            total_unseen += unseen[i]
            cards_left += hand[i]
        pot = np.float64(obs[t, OBS_POT])
        my_chips = np.float64(obs[t, OBS_SEATS + SEAT_CHIPS])
        hidden = 0
        for r in range(1, n):
            hidden += int(obs[t, OBS_SEATS + SEAT_BLOCK * r + SEAT_HAND_SIZE]) + int(obs[t, OBS_SEATS + SEAT_BLOCK * r + SEAT_PICKED])
        # -- DEAD
        best_call, best_call_value = -1, -np.inf
        for v in range(1, NUM_RANKS + 1):
            if mask[t, A_DEAD + v - 1] == 0:
                continue
            p = 0.0 if hand[v - 1] else no_hidden_copy(unseen[v - 1], total_unseen, hidden)
            target = _target(obs, t, n, v)
            gain = min(np.float64(v), np.float64(obs[t, OBS_SEATS + SEAT_BLOCK * target + SEAT_CHIPS])) + pot
            loss = min(np.float64(v), my_chips)
            value = p * gain - (1 - p) * loss
            if value > best_call_value:
                best_call, best_call_value = A_DEAD + v - 1, value
        any_play = False
        for v in range(1, NUM_RANKS + 1):
            any_play |= mask[t, v - 1] != 0
        if not any_play:
            out[t] = best_call
            continue
        if best_call >= 0:
            rank = best_call - A_DEAD + 1
            certain = (best_call_value >= 0 and not hand[rank - 1]
                       and no_hidden_copy(unseen[rank - 1], total_unseen, hidden) == 1.0)
            if certain or best_call_value > pot / n + CALL_MARGIN:
                out[t] = best_call
                continue
        # -- play (or door card)
        if obs[t, OBS_PHASE] == DOOR and hand[0]:
            out[t] = 0
            continue
        best_play, best_value = -1, -np.inf
        for v in range(1, NUM_RANKS + 1):
            if mask[t, v - 1] == 0:
                continue
            p = 0.0 if hand[v - 1] > 1 else no_hidden_copy(unseen[v - 1], total_unseen, hidden)
            if v == 1:
                p = 1.0
            value = (1 - p) * (v + pot) - p * v
            if cards_left == 1:
                value -= KEEP_CARDS
            if value > best_value:
                best_play, best_value = v, value
        out[t] = best_play - 1


def act_batch(obs: np.ndarray, mask: np.ndarray, num_players: int) -> np.ndarray:
    out = np.empty(obs.shape[0], np.int64)
    _act_rows(obs, mask, num_players, out)
    return out


# The compiled play-out (`envs.vector.VectorEnv.play_out`): this strategy in every seat, no
# Python between steps.
@njit(cache=True, inline="always")
def _policy(obs, mask, n, params, out):
    _act_rows(obs, mask, n, out)


@njit(cache=True)
def play_rows(st, rows, actions, values, round_only, limit, rewards, done, final_scores, final_ranks, scratch,
              obs, mask, who, tables, active, start, params):
    return loops.play_out(st, rows, actions, values, round_only, limit, rewards, done, final_scores, final_ranks,
                          scratch, obs, mask, who, tables, active, start, V.step_rows, V.write_views, V.table_events,
                          _policy, params)


def play_params(num_players: int) -> tuple:
    """The `play_rows` policy parameters, as `act_batch` takes them."""
    return (0,)  # (no parameters: a one-element tuple, as numba types it)

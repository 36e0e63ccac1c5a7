"""`agents.heuristic.not_for_me.NotForMeHeuristic`, compiled over a batch (see `agents.heuristic.kernels`)."""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numba import njit

from agents.heuristic.kernels.common import legal_count_and_first
from agents.heuristic.not_for_me import CLOSE_TO_OUT
from envs.vector import not_for_me as V
from envs.vector import loops
from envs.not_for_me import (ANSWER, DRAW, NUM_KINDS, NUM_WILDS, NUMBERS, OBS_FIELD_COUNT, OBS_HAND, OBS_OFFER_SIZE,
                             OBS_PHASE, OBS_SEATS, OBS_SUPPLY, SEAT_FIELDS, SEAT_GIVER, SEAT_HAND, SUPPLY_SLOTS, WILD,
                             WILDS_ONLY, ActionLayout)

# Where each kind of action starts (envs.not_for_me.ActionLayout), as one int array per player count.
COPIES, WILDS, FOR_YOU, ACCEPT, REFUSE, DRAW_SLOT, DRAW_PILE = range(7)


@lru_cache(maxsize=None)
def layout_array(num_players: int) -> np.ndarray:
    L = ActionLayout.for_players(num_players)
    return np.array([L.copies, L.wilds, L.for_you, L.accept, L.refuse, L.draw, L.draw_pile], np.int64)


@njit(cache=True, inline="always")
def _seat(obs, t, r, field):
    return obs[t, OBS_SEATS + r * SEAT_FIELDS + field]


@njit(cache=True, inline="always")
def _answer(obs, t, n, L):
    giver = 1
    while giver < n and _seat(obs, t, giver, SEAT_GIVER) == 0:
        giver += 1
    giver_left = _seat(obs, t, giver, SEAT_HAND)
    mine = _seat(obs, t, 0, SEAT_HAND)
    if obs[t, OBS_OFFER_SIZE] == 1 and giver_left > CLOSE_TO_OUT + 2 and mine >= 6 and obs[t, OBS_HAND + WILD] == 0:
        return L[ACCEPT]
    return L[REFUSE]


@njit(cache=True, inline="always")
def _draw(obs, mask, t, L):
    best = L[DRAW_PILE]
    best_score = 0.5 if mask[t, L[DRAW_PILE]] else -1e9
    for slot in range(SUPPLY_SLOTS):
        a = L[DRAW_SLOT] + slot
        if mask[t, a] == 0:
            continue
        kind = 0  # np.argmax of the slot's one-hot
        for k in range(1, NUM_KINDS):
            if obs[t, OBS_SUPPLY + slot * NUM_KINDS + k] > obs[t, OBS_SUPPLY + slot * NUM_KINDS + kind]:
                kind = k
        held = obs[t, OBS_HAND + kind]
        if kind == WILD:
            score = -1.0
        elif held:
            score = 1.0 + held
        elif kind <= 1:
            score = 0.8
        else:
            score = 0.0
        if score > best_score:
            best, best_score = a, score
    return best


@njit(cache=True, inline="always")
def _offer(obs, mask, t, n, L, kind, first_offer):
    threat, threat_size = 1, _seat(obs, t, 1, SEAT_HAND)
    biggest, biggest_size = 1, threat_size
    for r in range(2, n):
        size = _seat(obs, t, r, SEAT_HAND)
        if size < threat_size:
            threat, threat_size = r, size
        if size > biggest_size:
            biggest, biggest_size = r, size
    target = threat if threat_size <= CLOSE_TO_OUT else biggest
    a = L[FOR_YOU] + kind * (n - 1) + target - 1
    return a if mask[t, a] else first_offer


@njit(cache=True, inline="always")
def _play(obs, mask, t, n, L):
    size = 0
    for k in range(NUM_KINDS):
        size += int(obs[t, OBS_HAND + k])
    wilds = int(obs[t, OBS_HAND + WILD])
    field_empty = obs[t, OBS_FIELD_COUNT] == 0
    best_play, best_score = -1, -1e9
    first_offer = -1
    for a in range(L[ACCEPT]):
        if mask[t, a] == 0:
            continue
        if a >= L[FOR_YOU]:
            if first_offer < 0:
                first_offer = a
            continue
        if a >= L[WILDS]:  # ActionLayout.decode_play
            number, cards, used_wilds = WILDS_ONLY, 0, a - L[WILDS] + 1
        else:
            q, w = divmod(a, NUM_WILDS + 1)
            v, m = divmod(q, L[COPIES])
            number, cards, used_wilds = v + 1, m + 1, w
        k = cards + used_wilds
        if k == size:
            return a
        score = 10.0 * k
        if number != WILDS_ONLY:
            if cards == obs[t, OBS_HAND + number - 1]:
                score += 5.0
            if number <= 2 and field_empty:
                score -= 6.0
            score += 0.1 * number
        if used_wilds:
            score += (4.0 if size - k <= 4 + wilds else -12.0) * used_wilds
        if number == WILDS_ONLY and field_empty:
            score += 3.0
        if score > best_score:
            best_play, best_score = a, score
    if first_offer < 0:
        if best_play >= 0:
            return best_play
        for a in range(mask.shape[1]):
            if mask[t, a]:
                return a
    held_numbers, only = 0, -1
    give, give_count = -1, 0.0  # fewest cards, then the highest number
    for v in range(NUMBERS):
        c = obs[t, OBS_HAND + v]
        if c:
            held_numbers += 1
            only = v
            if give < 0 or c <= give_count:
                give, give_count = v, c
    if held_numbers == 1 and wilds == 0:
        return _offer(obs, mask, t, n, L, only, first_offer)
    if best_play >= 0 and best_score > 0:
        return best_play
    return _offer(obs, mask, t, n, L, give, first_offer)


@njit(cache=True)
def _act_rows(obs, mask, n, L, out):
    for t in range(obs.shape[0]):
        legal, first = legal_count_and_first(mask, t)
        if legal <= 1:  # first is -1 when nothing is legal
            out[t] = first
        elif obs[t, OBS_PHASE + ANSWER]:
            out[t] = _answer(obs, t, n, L)
        elif obs[t, OBS_PHASE + DRAW]:
            out[t] = _draw(obs, mask, t, L)
        else:
            out[t] = _play(obs, mask, t, n, L)


def act_batch(obs: np.ndarray, mask: np.ndarray, num_players: int) -> np.ndarray:
    out = np.empty(obs.shape[0], np.int64)
    _act_rows(obs, mask, num_players, layout_array(num_players), out)
    return out


# The compiled play-out (`envs.vector.VectorEnv.play_out`): this strategy in every seat, no
# Python between steps.
@njit(cache=True, inline="always")
def _policy(obs, mask, n, params, out):
    _act_rows(obs, mask, n, params[0], out)


@njit(cache=True)
def play_rows(st, rows, actions, values, round_only, limit, rewards, done, final_scores, final_ranks, scratch,
              obs, mask, who, tables, active, start, params):
    return loops.play_out(st, rows, actions, values, round_only, limit, rewards, done, final_scores, final_ranks,
                          scratch, obs, mask, who, tables, active, start, V.step_rows, V.write_views, V.table_events,
                          _policy, params)


def play_params(num_players: int) -> tuple:
    """The `play_rows` policy parameters, as `act_batch` takes them."""
    return (layout_array(num_players),)

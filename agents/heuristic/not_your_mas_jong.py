"""Heuristic for Not Your Ma's Jong: discard towards the closest complete hand, steal to win or to gain.

Strategy (a mahjong player's "shanten and acceptance" play, from the agent's own
observation only):

* **Distance.** A hand's distance is the number of cards it still has to
  exchange to become three sets and a pair (`agents.heuristic.hand_distance.shanten`:
  each missing set costs two cards, one if a pair or a two-card sequence piece
  is waiting for it; a missing pair costs one; locked sets count as sets).
* **Discard.** Throw the card whose removal leaves the smallest distance.
  Among equally close hands, keep the one with the most *live* improving
  draws: card types that would lower the distance, weighted by how many copies
  are still unseen (3 minus own hand, every discard pile and every locked set).
  Remaining ties: throw the card with the most copies already visible, since
  it is the least likely to be wanted later.
* **Steal.** Always steal when it wins. Otherwise steal for a set only when the
  locked set plus the best discard afterwards leaves a strictly smaller
  distance than passing (so a steal never breaks a better shape), and among
  such set options take the one with the smallest resulting distance.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from agents.heuristic.batch import KernelHeuristic
from agents.heuristic.hand_distance import shanten, shanten_each
from envs.not_your_mas_jong import (
    A_PASS,
    A_STEAL_WIN,
    COPIES,
    NUM_TYPES,
    OBS_DISCARD,
    OBS_HAND,
    OBS_PHASE,
    OBS_SEATS,
    SEAT_BLOCK,
    SEAT_DISCARDS,
    SEAT_LOCKED,
    SET_STEAL_CARDS,
    holds_set_steal,
)


@lru_cache(maxsize=200_000)
def hand_distance(counts: tuple[int, ...], locked_sets: int) -> int:
    """`shanten`, cached: the heuristic and `agents.features` ask about the same hands over and over."""
    return shanten(counts, locked_sets)


@lru_cache(maxsize=200_000)
def improving_draws(counts: tuple[int, ...], locked_sets: int, distance: int) -> tuple[int, ...]:
    """Card types whose draw would lower the hand's distance below `distance`. Cached: a seat's
    hand stays the same across the steal decisions between its turns, and the heuristic and
    `agents.features` ask about the same hands."""
    return tuple(t for t, d in enumerate(shanten_each(counts, locked_sets, +1)) if d is not None and d < distance)


def acceptance(hand: list[int], locked_sets: int, distance: int, unseen) -> int:
    """Unseen copies of the card types whose draw would lower the hand's distance."""
    return sum(unseen[t] for t in improving_draws(tuple(hand), locked_sets, distance))


def read_view(obs: np.ndarray, num_players: int) -> tuple[list[int], int, np.ndarray, list[int]]:
    """From a seat's observation: its concealed hand, its locked sets, the copies of each card
    type seen face up (every discard pile and locked set), and the copies still unseen."""
    own = obs[OBS_HAND : OBS_HAND + NUM_TYPES]
    blocks = obs[OBS_SEATS:].reshape(num_players, SEAT_BLOCK)
    locked_sets = int(blocks[0, SEAT_LOCKED : SEAT_LOCKED + NUM_TYPES].sum()) // 3
    seen = blocks[:, SEAT_DISCARDS : SEAT_DISCARDS + NUM_TYPES].sum(axis=0)
    seen = seen + blocks[:, SEAT_LOCKED : SEAT_LOCKED + NUM_TYPES].sum(axis=0)
    # whole-array arithmetic: counts are small integers, exact in float32
    unseen = np.maximum(0.0, COPIES - own - seen).astype(int).tolist()
    return own.astype(int).tolist(), locked_sets, seen, unseen


def distance_after_steal(hand: list[int], locked_sets: int, taken: tuple[int, int]) -> int | None:
    """Distance after a set steal that takes the cards `taken` from the hand (a row of
    `envs.not_your_mas_jong.SET_STEAL_CARDS`) and the best discard that follows; None when the
    hand lacks those two cards."""
    if not holds_set_steal(hand, *taken):
        return None
    after = list(hand)
    for k in taken:
        after[k] -= 1
    if not any(after):
        return None
    return min(d for d in shanten_each(after, locked_sets + 1, -1) if d is not None)


class NotYourMasJongHeuristic(KernelHeuristic):
    name = "heuristic"
    kernel = "agents.heuristic.kernels.not_your_mas_jong"  # act_batch: this strategy compiled

    def act(self, observation: dict) -> int:
        obs = observation["observation"]
        legal = self.legal_actions(observation)
        if len(legal) == 1:
            # e.g. a steal decision with nothing to steal (asked so that who is asked tells nothing)
            return int(legal[0])
        hand, locked_sets, seen, unseen = read_view(obs, self.num_players)
        if obs[OBS_PHASE] == 1:
            card = int(np.argmax(obs[OBS_DISCARD : OBS_DISCARD + NUM_TYPES]))
            if A_STEAL_WIN in legal:
                return A_STEAL_WIN
            return self._steal_or_pass(hand, locked_sets, card, legal)
        return self._best_discard(hand, locked_sets, legal, unseen, seen)[0]

    # -- discarding ------------------------------------------------------------------
    def _best_discard(self, hand, locked_sets, legal, unseen, seen):
        """(action, distance) of the discard that keeps the hand closest to complete."""
        after_discard = shanten_each(hand, locked_sets, -1)
        distances = {int(k): after_discard[k] for k in legal if k < NUM_TYPES}
        d = min(distances.values())
        closest = [k for k, dk in distances.items() if dk == d]
        return self.choose_discard(closest, hand, locked_sets, d, unseen, seen), d

    def choose_discard(self, closest: list[int], hand: list[int], locked_sets: int, distance: int, unseen, seen) -> int:
        """Among the discards `closest` that all leave the hand `distance` from complete: the one
        that keeps the most live improving draws, then the one with the most copies in sight."""
        if len(closest) == 1:
            return closest[0]
        best = None
        for k in closest:
            hand[k] -= 1
            key = (-acceptance(hand, locked_sets, distance, unseen), -int(seen[k]), k)
            hand[k] += 1
            if best is None or key < best[0]:
                best = (key, k)
        return best[1]

    # -- stealing ------------------------------------------------------------------
    def _steal_or_pass(self, hand, locked_sets, card, legal) -> int:
        # Passing keeps the hand as it is (one card short of a full turn).
        best_action, best_distance = A_PASS, hand_distance(tuple(hand), locked_sets)
        for a, first, second in SET_STEAL_CARDS[card]:
            if a not in legal:
                continue
            d = distance_after_steal(hand, locked_sets, (first, second))
            if d is not None and self.worth_stealing(best_distance, d):
                best_action, best_distance = a, d
        return best_action

    def worth_stealing(self, distance: int, distance_after: int) -> bool:
        """Steal for a set only when it leaves the hand strictly closer to complete."""
        return distance_after < distance

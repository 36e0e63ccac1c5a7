"""Deadfall heuristic: count the cards, call DEAD when it pays, keep your own top card safe.

The strategy of a careful Pairs player, made exact by counting:

* **Count the cards.** Rank r has r copies; the observation already gives, per
  rank, the copies this seat cannot see (r − on the stacks − own hand − own
  face-down door card). Those ``k`` unseen copies of a rank lie among the
  ``U`` unseen cards, of which ``H`` are in the other players' hands (their
  hand sizes are public) and the rest are set aside. The chance that no other
  hand holds the rank is hypergeometric: ``C(U − k, H) / C(U, H)``; it is 1
  when ``k == 0`` ("no copy can be hidden").
* **Call DEAD v when it pays.** Never on a rank I hold (my own hand counts).
  With ``p`` the chance the call is right, the call is worth
  ``p·(min(v, target's chips) + pot) − (1 − p)·min(v, my chips)`` to me,
  settled now. Playing on instead keeps roughly my fair share of the pot,
  ``pot / n``, minus the risk on my own top card. I call when the call is
  certain, or when its value beats playing on by ``CALL_MARGIN``. With an
  empty hand I must call: I take the best value.
* **Keep my top card hard to call.** A top card whose rank I still hold is a
  trap: any DEAD on it is wrong and pays me v plus the pot. Otherwise the
  risk is the chance that no hidden hand holds the rank. Each candidate card
  is scored by what a DEAD on it would be worth to me:
  ``(1 − p)·(v + pot) − p·v``; the best one is played, with a small bonus
  for keeping cards in hand (an empty hand can only call).
* **Door cards.** The 1 is the single lowest card, so it always starts and
  can be covered at once: I place it when I hold it. Otherwise the door card
  is chosen like any play (it becomes my top card and others may call on it
  before I move), leaning to ranks I hold twice.

Only the agent's own observation is used; the layout constants come from
`envs.deadfall` (table in `envs/deadfall_v0.py`).
"""

from __future__ import annotations

from math import comb

import numpy as np

from agents.heuristic.batch import KernelHeuristic
from envs.deadfall import (A_DEAD, DOOR, NUM_RANKS, OBS_HAND, OBS_PHASE, OBS_POT, OBS_SEATS, OBS_UNSEEN, SEAT_BLOCK,
                           SEAT_CHIPS, SEAT_HAND_SIZE, SEAT_PICKED, SEAT_TOP, dead_target)

CALL_MARGIN = 0.0  # how much better than playing on a call must look
KEEP_CARDS = 0.5  # value of not emptying my hand with this play


def no_hidden_copy(unseen_of_rank: int, unseen_total: int, in_other_hands: int) -> float:
    """Chance that none of `unseen_of_rank` copies lies in the other hands (hypergeometric)."""
    if unseen_of_rank <= 0:
        return 1.0
    if in_other_hands <= 0:
        return 1.0
    if unseen_total - unseen_of_rank < in_other_hands:
        return 0.0
    return comb(unseen_total - unseen_of_rank, in_other_hands) / comb(unseen_total, in_other_hands)


class DeadfallHeuristic(KernelHeuristic):
    name = "heuristic"
    kernel = "agents.heuristic.kernels.deadfall"  # act_batch: this strategy compiled

    def act(self, observation: dict) -> int:
        obs = observation["observation"]
        mask = observation["action_mask"]
        n = self.num_players
        hand = [int(obs[OBS_HAND + i]) for i in range(NUM_RANKS)]
        unseen = [int(obs[OBS_UNSEEN + i]) for i in range(NUM_RANKS)]
        pot = float(obs[OBS_POT])
        seats = [obs[OBS_SEATS + SEAT_BLOCK * r : OBS_SEATS + SEAT_BLOCK * (r + 1)] for r in range(n)]
        my_chips = float(seats[0][SEAT_CHIPS])
        # Cards hidden in other hands, counting face-down door cards of this layer.
        hidden = sum(int(seats[r][SEAT_HAND_SIZE]) + int(seats[r][SEAT_PICKED]) for r in range(1, n))
        total_unseen = sum(unseen)

        def p_right(rank: int) -> float:
            return no_hidden_copy(unseen[rank - 1], total_unseen, hidden)

        # -- DEAD ----------------------------------------------------------------
        best_call, best_call_value = None, -np.inf
        for v in range(1, NUM_RANKS + 1):
            if not mask[A_DEAD + v - 1]:
                continue
            if hand[v - 1]:
                p = 0.0
            else:
                p = p_right(v)
            target = self._target(seats, v)
            gain = min(v, float(seats[target][SEAT_CHIPS])) + pot
            loss = min(v, my_chips)
            value = p * gain - (1 - p) * loss
            if value > best_call_value:
                best_call, best_call_value = A_DEAD + v - 1, value

        plays = [v for v in range(1, NUM_RANKS + 1) if mask[v - 1]]
        if not plays:
            return int(best_call)
        if best_call is not None:
            certain = best_call_value >= 0 and not hand[best_call - A_DEAD] and p_right(best_call - A_DEAD + 1) == 1.0
            if certain or best_call_value > pot / n + CALL_MARGIN:
                return int(best_call)

        # -- play (or door card) ---------------------------------------------------------
        door = obs[OBS_PHASE] == DOOR
        if door and hand[0]:
            return 0  # the 1 always starts, and I can cover it at once
        best_play, best_value = plays[0], -np.inf
        cards_left = sum(hand)
        for v in plays:
            still_held = hand[v - 1] > 1
            p = 0.0 if still_held else p_right(v)
            if v == 1:
                p = 1.0  # a 1 on top is always a right call
            value = (1 - p) * (v + pot) - p * v
            if cards_left == 1:
                value -= KEEP_CARDS
            if value > best_value:
                best_play, best_value = v, value
        return int(best_play - 1)

    def _target(self, seats, v: int) -> int:
        """Seat-relative index of the DEAD target (relative n−1 when nobody shows `v`)."""
        target = dead_target([int(seats[r][SEAT_TOP]) for r in range(self.num_players)], 0, v)
        return self.num_players - 1 if target < 0 else target

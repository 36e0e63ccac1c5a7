"""Neu heuristic: play the card that leaves the next player most likely stuck
and yourself least likely stuck.

The strategy a careful human plays, made a little more exact by counting cards:

* **Count the unseen cards.** What is neither in my hand nor on the played pile
  (observation 18…35, which restarts at every reshuffle) is in another hand or
  the draw pile. From those counts the chance that a hidden hand of ``h`` cards
  holds no legal card at total ``T`` is hypergeometric: ``C(I, h) / C(U, h)``
  with ``I`` of the ``U`` unseen cards illegal at ``T``.
* **Keep the cards that are safe at high totals** (−10, −1, 101, Pass, Turn,
  Shot, Double): spending one costs future safety. My own risk after a play is
  the chance that my remaining cards plus one unknown draw are all illegal,
  averaged over the totals I may face next (the new total, a bit higher, 101).
  Large numbers are exactly the cards that become unplayable, so they are
  **spent while the total is low**.
* **Near 101, pass the pressure on**: Pass / Turn / Shot leave the high total
  to someone else, and 101 sets it to the top; each is scored by how likely the
  player who must play next is stuck.
* **Double and Shot against whoever is most likely stuck**: a Double makes the
  next player owe two plays (a Double is then useless to them on the first);
  a Shot picks the target with the highest stuck chance (fewest cards; ties go
  to the chip leader, the main rival). Owing two plays myself, a Pass / Turn /
  Shot first moves the whole obligation on, which is scored the same way.
* **Owing two plays**, a number first must leave me a legal second play:
  that immediate risk counts in full.

Only the agent's own observation is used (the layout constants come from `envs.neu`,
table in `envs/neu_v0.py`).
"""

from __future__ import annotations

from math import comb

import numpy as np

from agents.heuristic.batch import KernelHeuristic
from envs.neu import (A_DOUBLE, A_PASS, A_SHOT, A_TURN, CARD_101, COPIES, DOUBLE, NUM_KINDS, NUMBER_VALUES, OBS_DIRECTION,
                     OBS_HAND, OBS_OWED, OBS_PLAYED, OBS_SEATS, OBS_TOTAL, PASS, SEAT_BLOCK, SEAT_CHIPS, SEAT_HAND_SIZE,
                     SEAT_IN_GAME, SHOT, TURN, playable)

KIND_OF_ACTION = {A_PASS: PASS, A_TURN: TURN, A_DOUBLE: DOUBLE}

ATTACK = 1.0  # value of making the next player stuck (they lose the round now)
FUTURE_RISK = 0.6  # my stuck chance at my next turn, discounted: someone may fail first
HIGH_TOTALS = (0, 10, 25, 101)  # future totals: new total + these (101 = "at the top")


class NeuHeuristic(KernelHeuristic):
    name = "heuristic"
    kernel = "agents.heuristic.kernels.neu"  # act_batch: this strategy compiled
    kernel_params = ("attack_weight", "future_weight")
    attack_weight = ATTACK
    future_weight = FUTURE_RISK

    def act(self, observation: dict) -> int:
        seats = observation["observation"][OBS_SEATS:].reshape(self.num_players, SEAT_BLOCK)
        best, best_score = None, -np.inf
        for a, (attack, now, future) in self.terms(observation).items():
            score = self.attack_weight * attack - now - self.future_weight * future
            if a >= A_SHOT:
                # tie-break between targets: the chip leader, the main rival
                score += 1e-3 * float(seats[a - A_SHOT + 1, SEAT_CHIPS])
            # Spend big numbers early: among otherwise equal plays, the larger number.
            if a <= 10:
                score += 1e-4 * NUMBER_VALUES[a]
            if best is None or score > best_score:
                best, best_score = a, score
        return best

    def terms(self, observation: dict) -> dict[int, tuple[float, float, float]]:
        """For each legal action: (attack, now, future), the three chances the score weighs
        (the next player stuck; me stuck on my own second play; me stuck later)."""
        obs = observation["observation"]
        legal = self.legal_actions(observation)
        n = self.num_players
        # Python ints, not numpy scalars: this loop runs for every move of every heuristic seat.
        hand = [int(x) for x in obs[OBS_HAND : OBS_HAND + NUM_KINDS]]
        played = obs[OBS_PLAYED : OBS_PLAYED + NUM_KINDS]
        unseen = [max(COPIES[k] - hand[k] - int(played[k]), 0) for k in range(NUM_KINDS)]
        total, direction, owed = int(obs[OBS_TOTAL]), int(obs[OBS_DIRECTION]), int(obs[OBS_OWED])
        seats = obs[OBS_SEATS:].reshape(n, SEAT_BLOCK)
        in_game = seats[:, SEAT_IN_GAME] > 0
        u_all = sum(unseen)
        playable_cache: dict[tuple[int, int], tuple[list[int], int]] = {}

        def playable_at(t: int, o: int) -> tuple[list[int], int]:
            """The card kinds playable at total t (o plays owed), and how many unseen cards are not;
            asked many times per move, so computed once per (t, o)."""
            if (t, o) not in playable_cache:
                kinds = [k for k in range(NUM_KINDS) if playable(k, t, o)]
                playable_cache[t, o] = kinds, u_all - sum(unseen[k] for k in kinds)
            return playable_cache[t, o]

        def next_from(r: int, d: int) -> int:
            s = (r + d) % n
            while not in_game[s]:
                s = (s + d) % n
            return s

        def stuck_chance(seat: int, t: int, o: int) -> float:
            kinds, unseen_unplayable = playable_at(t, o)
            return self.stuck_chance(seat, int(seats[seat, SEAT_HAND_SIZE]), kinds, unseen_unplayable, u_all)

        u = max(u_all, 1)

        def my_stuck(rest: list[int], t: int, o: int) -> float:
            """P(my remaining cards plus one unknown draw are all unplayable at t)."""
            kinds, unseen_unplayable = playable_at(t, o)
            if any(rest[k] for k in kinds):
                return 0.0
            return unseen_unplayable / u

        out = {}
        for a in legal:
            a = int(a)
            kind = SHOT if a >= A_SHOT else KIND_OF_ACTION.get(a, a)
            rest = list(hand)
            rest[kind] -= 1
            t = total
            if kind <= 12:
                t = total + NUMBER_VALUES[kind]
            elif kind == CARD_101:
                t = 101
            if kind in (PASS, TURN) or kind == SHOT:
                d = -direction if kind == TURN else direction
                target = a - A_SHOT + 1 if kind == SHOT else next_from(0, d)
                attack = stuck_chance(target, t, owed)  # a double obligation moves on too
                now = 0.0
            elif owed == 2:
                attack = 0.0  # I play again myself; the attack comes with my second card
                now = my_stuck(rest, t, 1)
            else:
                target = next_from(0, direction)
                attack = stuck_chance(target, t, 2 if kind == DOUBLE else 1)
                now = 0.0
            future = sum(my_stuck(rest, min(101, t + dt) if dt < 101 else 101, 1) for dt in HIGH_TOTALS) / len(HIGH_TOTALS)
            out[a] = (attack, now, future)
        return out

    def stuck_chance(self, seat: int, hand_size: int, kinds: list[int], unseen_unplayable: int, unseen: int) -> float:
        """P(the hidden hand of relative `seat`, `hand_size` cards, holds none of the playable card
        `kinds`), from the odds: all its cards drawn from the `unseen_unplayable` of the `unseen`."""
        if hand_size == 0:
            return 1.0
        if unseen < hand_size:
            return 0.0
        return comb(unseen_unplayable, hand_size) / comb(unseen, hand_size)

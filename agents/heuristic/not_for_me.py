"""Heuristic for Not For Me (docs/RULES.md §1): shed big groups, keep the blockers, refuse gifts.

What a good player does, from the agent's own observation only (decoded with
the layout constants of `envs.not_for_me`):

* **Go out when you can.** A play that empties the hand is taken at once; so is
  a For You of the last number held (it ends the round if accepted).
* **Shed the biggest group.** Among legal plays, more cards is better, and a
  play that uses *all* cards of a number is better than one that splits it.
* **Keep low numbers to block.** 1s and 2s are what lets you answer a big
  group ("more cards must be lower") and what blocks others (a pair of 1s
  forbids triples), so leading with them costs a little.
* **Never get stuck holding wilds.** A wild cannot go out and multiplies the
  penalty, so wilds are spent while the hand is still big enough to play them
  with other cards, and thrown out on their own (as 7s) when leading.
* **For You:** when no play is worth making, offer the number that hurts least
  if it comes back (fewest cards, highest number — high cards block nothing),
  to the opponent with the most cards (least reason to refuse), unless an
  opponent is about to go out: then the gift goes to them, to slow them down.
* **Accept / Not For Me:** a refusal costs the giver cards and costs us
  nothing, so we say Not For Me — always when the giver is close to going out
  (an accepted offer could end the round for them). We accept only a single
  card when we are far from going out and the giver is not a threat, which
  keeps the refusal threat credible without making us a dumping ground.
* **Draws after Not For Me:** take a face-up card that joins a number we hold
  (bigger groups), else a 1 or a 2 (blockers), else the unknown top of the pile.
"""

from __future__ import annotations

import numpy as np

from agents.heuristic.batch import KernelHeuristic
from envs import not_for_me as nfm

CLOSE_TO_OUT = 3  # hand size at which a player is a threat to go out


class NotForMeHeuristic(KernelHeuristic):
    name = "heuristic"
    kernel = "agents.heuristic.kernels.not_for_me"  # act_batch: this strategy compiled

    def __init__(self, game: str, num_players: int, seed: int | None = None) -> None:
        super().__init__(game, num_players, seed)
        self.layout = nfm.ActionLayout.for_players(num_players)

    # -- decoding -----------------------------------------------------------------
    def _seat_field(self, obs: np.ndarray, r: int, field: int) -> float:
        return obs[nfm.OBS_SEATS + r * nfm.SEAT_FIELDS + field]

    def act(self, observation: dict) -> int:
        obs = observation["observation"]
        legal = self.legal_actions(observation)
        if legal.size == 1:
            return int(legal[0])
        L = self.layout
        if obs[nfm.OBS_PHASE + nfm.ANSWER]:
            return self._answer(obs)
        if obs[nfm.OBS_PHASE + nfm.DRAW]:
            return self._draw(obs, legal)
        return self._play(obs, legal, L)

    # -- phases -------------------------------------------------------------------
    def _answer(self, obs: np.ndarray) -> int:
        L = self.layout
        n = self.num_players
        giver = next(r for r in range(1, n) if self._seat_field(obs, r, nfm.SEAT_GIVER))
        giver_left = self._seat_field(obs, giver, nfm.SEAT_HAND)  # cards on offer are not counted
        mine = self._seat_field(obs, 0, nfm.SEAT_HAND)
        size = obs[nfm.OBS_OFFER_SIZE]
        if size == 1 and giver_left > CLOSE_TO_OUT + 2 and mine >= 6 and obs[nfm.OBS_HAND + nfm.WILD] == 0:
            return L.accept
        return L.refuse

    def _draw(self, obs: np.ndarray, legal: np.ndarray) -> int:
        L = self.layout
        hand = obs[nfm.OBS_HAND : nfm.OBS_HAND + nfm.NUM_KINDS]
        best, best_score = L.draw_pile, 0.5 if L.draw_pile in legal else -1e9
        for slot in range(nfm.SUPPLY_SLOTS):
            a = L.draw + slot
            if a not in legal:
                continue
            onehot = obs[nfm.OBS_SUPPLY + slot * nfm.NUM_KINDS : nfm.OBS_SUPPLY + (slot + 1) * nfm.NUM_KINDS]
            kind = int(np.argmax(onehot))
            if kind == nfm.WILD:
                score = -1.0  # another penalty multiplier
            elif hand[kind]:
                score = 1.0 + hand[kind]  # joins a group we hold
            elif kind <= 1:
                score = 0.8  # a blocker
            else:
                score = 0.0
            if score > best_score:
                best, best_score = a, score
        return int(best)

    def _play(self, obs: np.ndarray, legal: np.ndarray, L: nfm.ActionLayout) -> int:
        hand = obs[nfm.OBS_HAND : nfm.OBS_HAND + nfm.NUM_KINDS]
        size = int(hand.sum())
        wilds = int(hand[nfm.WILD])
        field_empty = obs[nfm.OBS_FIELD_COUNT] == 0
        best_play, best_score = None, -1e9
        offers = []
        for a in legal:
            a = int(a)
            if a >= L.for_you:
                if a < L.accept:
                    offers.append(a)
                continue
            number, cards, used_wilds = L.decode_play(a)
            k = cards + used_wilds
            if k == size:
                return a  # go out
            score = 10.0 * k
            if number != nfm.WILDS_ONLY:
                if cards == hand[number - 1]:
                    score += 5.0  # keeps no broken group behind
                if number <= 2 and field_empty:
                    score -= 6.0  # blockers are kept for later
                score += 0.1 * number  # same size: the higher number goes first
            # Wilds: spend them while there is still room; hoarding them is what loses.
            if used_wilds:
                score += (4.0 if size - k <= 4 + wilds else -12.0) * used_wilds
            if number == nfm.WILDS_ONLY and field_empty:
                score += 3.0
            if score > best_score:
                best_play, best_score = a, score
        if not offers:
            return int(best_play) if best_play is not None else int(legal[0])
        # Offering the last number held ends the round if accepted.
        held_numbers = [v for v in range(nfm.NUMBERS) if hand[v]]
        if len(held_numbers) == 1 and wilds == 0:
            return self._offer(obs, held_numbers[0], offers)
        if best_play is not None and best_score > 0:
            return int(best_play)
        give = min(held_numbers, key=lambda v: (hand[v], -v))
        return self._offer(obs, give, offers)

    def _offer(self, obs: np.ndarray, kind: int, offers: list[int]) -> int:
        n = self.num_players
        sizes = {r: self._seat_field(obs, r, nfm.SEAT_HAND) for r in range(1, n)}
        threat = min(sizes, key=lambda r: (sizes[r], r))
        target = threat if sizes[threat] <= CLOSE_TO_OUT else max(sizes, key=lambda r: (sizes[r], -r))
        a = self.layout.for_you_action(kind + 1, target)
        return a if a in offers else offers[0]

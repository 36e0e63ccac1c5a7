"""CFR+ and the exact best responses on Kuhn poker, a game whose solution is known.

Kuhn poker (Kuhn 1950): three cards (J, Q, K), one to each of two players, who ante 1 each.
Player 0 checks or bets 1; after a check player 1 checks (showdown for 1) or bets 1, which
player 0 folds (player 1 wins 1) or calls (showdown for 2); after a bet player 1 folds
(player 0 wins 1) or calls (showdown for 2). The game's value for player 0 is -1/18.

The engine below is written here, in the tests, with nothing from cardzoo's games: the tree
builder and the solver of `train.cfr` only ask it what any engine answers. So this checks the
solver against the literature, not against itself.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from envs.engine import Engine, ScoreEvent
from train import cfr

PASS, BET = 0, 1  # check or fold; bet or call


class Kuhn(Engine):
    game_name = "kuhn"
    min_players = max_players = default_players = 2
    num_actions = 2
    obs_size = 3 + 3 * 2  # own card, then each of the (at most three) moves so far, one-hot

    def deals(self):
        """Every first deal, (probability, deal): the six ordered pairs of different cards."""
        return [(1 / 6, {"cards": pair}) for pair in itertools.permutations(range(3), 2)]

    def reset(self, rng, deal=None):
        self.cards = list(deal["cards"]) if deal else list(rng.permutation(3)[:2])
        self.moves: list[int] = []
        self.current_player, self.game_over = 0, False
        self.out, self.scores = [False, False], [0, 0]

    def legal_mask(self):
        return np.ones(2, np.int8)

    def observe(self, seat):
        obs = np.zeros(self.obs_size, np.float32)
        obs[self.cards[seat]] = 1
        for i, m in enumerate(self.moves):
            obs[3 + 2 * i + m] = 1
        return obs

    def step(self, action):
        self.moves.append(int(action))
        m = self.moves
        if m in ([PASS, PASS], [BET, BET], [PASS, BET, BET]):  # showdown
            stake = 1 if m == [PASS, PASS] else 2
            win = 0 if self.cards[0] > self.cards[1] else 1
            return self._end(stake if win == 0 else -stake)
        if m == [BET, PASS]:
            return self._end(1)
        if m == [PASS, BET, PASS]:
            return self._end(-1)
        self.current_player = 1 - self.current_player
        return None

    def _end(self, to_seat_0):
        self.game_over = True
        self.scores = [to_seat_0, -to_seat_0]
        return ScoreEvent(deltas=self.scores, players=[True, True], details={})


@pytest.fixture(scope="module")
def tree():
    return cfr.build_tree(Kuhn())


def test_the_tree_is_kuhn_poker(tree):
    # 6 deals; per deal 1 + 2 + 1 decisions; 12 information sets (3 cards x 4 histories)
    assert len(tree.node_player) == 6 * 4 and tree.num_infos == 12
    assert cfr.score_range(tree) == 4.0  # from -2 to +2


def test_cfr_plus_finds_the_value_minus_one_eighteenth_and_nash_conv_falls_to_zero(tree):
    solver = cfr.CFRPlus(tree)
    curve = []
    for _ in range(4):
        for _ in range(250):
            solver.iterate()
        curve.append(cfr.nash_conv(tree, solver.average_policy())[0])
    assert curve[-1] < 1e-3 and curve[-1] < curve[0], curve
    policy = solver.average_policy()
    assert cfr.game_value(tree, policy) == pytest.approx(-1 / 18, abs=2e-3)


def test_known_equilibrium_facts(tree):
    """At every equilibrium player 1 calls a bet with the K and folds the J, and player 0 never
    bets the Q first; player 0 bets the K three times as often as the J (alpha and 3 alpha)."""
    solver = cfr.CFRPlus(tree)
    for _ in range(2000):
        solver.iterate()
    policy = solver.average_policy()

    def info(seat, card, moves):
        obs = np.zeros(9, np.float32)
        obs[card] = 1
        for i, m in enumerate(moves):
            obs[3 + 2 * i + m] = 1
        for i, (o, _) in enumerate(tree.info_obs):
            if tree.info_player[i] == seat and np.array_equal(o, obs):
                return policy[i]
        raise AssertionError((seat, card, moves))

    J, Q, K = 0, 1, 2
    assert info(1, K, [BET])[BET] == pytest.approx(1, abs=1e-2)
    assert info(1, J, [BET])[BET] == pytest.approx(0, abs=1e-2)
    assert info(0, Q, [])[BET] == pytest.approx(0, abs=2e-2)
    alpha = info(0, J, [])[BET]
    assert 0 <= alpha <= 1 / 3 + 1e-2
    assert info(0, K, [])[BET] == pytest.approx(3 * alpha, abs=3e-2)


def test_the_best_response_to_always_bet_is_exact(tree):
    """Against a player 1 that always calls or bets, player 0's best response bets the K, checks
    and folds the J, and checks and calls with the Q: computed by hand, its value is 1/3."""
    policy = cfr.uniform(tree)
    ones = tree.info_player == 1
    policy[ones] = [0.0, 1.0]
    value, _ = cfr.best_response(tree, policy, 0)
    # J: check, player 1 bets, fold: -1.  Q: check, player 1 bets, call: vs J +2, vs K -2 -> 0.
    # K: bet, player 1 calls: +2.  Each card with probability 1/3: (-1 + 0 + 2) / 3.
    assert value == pytest.approx(1 / 3, abs=1e-12)

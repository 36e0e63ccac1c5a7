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
    """Kuhn poker for `num_players` (2 or 3), as OpenSpiel's ``kuhn_poker`` plays it: n + 1 cards,
    one each, an ante of 1. In seat order each player checks or bets 1; once a player bets, each
    other player in turn after it folds or calls 1. The highest card among those who did not fold
    (everyone, if nobody bet) takes the pot."""

    game_name = "kuhn"
    min_players, max_players, default_players = 2, 3, 2
    num_actions = 2

    def __init__(self, num_players=None):
        super().__init__(num_players)
        n = self.num_players
        self.obs_size = (n + 1) + 2 * (2 * n - 1)  # own card, then each move so far (at most 2n - 1), one-hot

    def deals(self):
        """Every first deal, (probability, deal): the ordered choices of n different cards of n + 1."""
        orders = list(itertools.permutations(range(self.num_players + 1), self.num_players))
        return [(1 / len(orders), {"cards": cards}) for cards in orders]

    def reset(self, rng, deal=None):
        n = self.num_players
        self.cards = list(deal["cards"]) if deal else list(rng.permutation(n + 1)[:n])
        self.moves: list[int] = []
        self.bettor = None
        self.current_player, self.game_over = 0, False
        self.out, self.scores = [False] * n, [0] * n

    def legal_mask(self):
        return np.ones(2, np.int8)

    def observe(self, seat):
        obs = np.zeros(self.obs_size, np.float32)
        obs[self.cards[seat]] = 1
        for i, m in enumerate(self.moves):
            obs[self.num_players + 1 + 2 * i + m] = 1
        return obs

    def step(self, action):
        n, seat = self.num_players, self.current_player
        self.moves.append(int(action))
        if self.bettor is None and action == BET:
            self.bettor = seat
        if self.bettor is None and len(self.moves) == n:
            return self._end(list(range(n)), [1] * n)  # everyone checked
        if self.bettor is not None and len(self.moves) - self.moves.index(BET) == n:  # everyone answered the bet
            first = self.moves.index(BET)
            answers = {(self.bettor + 1 + i) % n: m for i, m in enumerate(self.moves[first + 1:])}
            stakes = [1 + (s == self.bettor or answers.get(s) == BET) for s in range(n)]
            return self._end([s for s in range(n) if stakes[s] == 2], stakes)
        self.current_player = (seat + 1) % n
        return None

    def _end(self, showdown, stakes):
        self.game_over = True
        winner = max(showdown, key=lambda s: self.cards[s])
        self.scores = [sum(stakes) - stakes[s] if s == winner else -stakes[s] for s in range(self.num_players)]
        return ScoreEvent(deltas=self.scores, players=[True] * self.num_players, details={})


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


# ---- three players: NashConv stays exact (CFR+ keeps no guarantee there) ----


@pytest.fixture(scope="module")
def tree3():
    return cfr.build_tree(Kuhn(3))


def test_the_three_player_tree_is_kuhn_poker(tree3):
    # 24 deals of 3 cards out of 4; each seat acts at 4 histories with each of 4 cards: 48 sets
    assert tree3.num_players == 3 and sum(p for p, _ in Kuhn(3).deals()) == pytest.approx(1.0)
    assert tree3.num_infos == 48 and all(np.sum(tree3.info_player == s) == 16 for s in range(3))
    assert np.allclose(tree3.edge_reward.sum(1), 0.0)  # zero-sum on every move
    assert cfr.score_range(tree3) == 6.0  # a seat wins at most 2 + 2 (both others call), or loses 2
    assert cfr.game_values(tree3, cfr.uniform(tree3)).sum() == pytest.approx(0.0, abs=1e-12)


def _brute_force_best(tree, policy, seat):
    """`seat`'s best value against `policy` by trying every pure plan of each of its cards: a card's
    information sets share no path with another card's, so the best plans per card add up."""
    pol = policy.copy()
    n = tree.num_players
    for card in range(n + 1):
        sets = [i for i in range(tree.num_infos) if tree.info_player[i] == seat and tree.info_obs[i][0][card] == 1]
        best = None
        for plan in itertools.product((PASS, BET), repeat=len(sets)):
            pol[sets] = np.eye(2)[list(plan)]
            value = cfr.game_value(tree, pol, seat)
            if best is None or value > best[0]:
                best = (value, plan)
        pol[sets] = np.eye(2)[list(best[1])]
    return cfr.game_value(tree, pol, seat)


@pytest.mark.parametrize("kind", ["uniform", "always_bet", "cfr"])
def test_three_player_best_responses_match_brute_force(tree3, kind):
    policy = cfr.uniform(tree3)
    if kind == "always_bet":
        policy[:] = [0.0, 1.0]
    elif kind == "cfr":
        solver = cfr.CFRPlus(tree3)
        for _ in range(50):
            solver.iterate()
        policy = solver.average_policy()
    for seat in range(3):
        assert cfr.best_response(tree3, policy, seat)[0] == pytest.approx(_brute_force_best(tree3, policy, seat), abs=1e-12)


def test_three_player_nash_conv_sums_each_seats_gain(tree3):
    """NashConv is the sum over seats of best-response value minus value, 0 at no policy here;
    CFR+ still drives it down in three-player Kuhn poker, without a guarantee."""
    policy = cfr.uniform(tree3)
    nc, br = cfr.nash_conv(tree3, policy)
    gains = [br[s] - cfr.game_value(tree3, policy, s) for s in range(3)]
    assert min(gains) > 0 and nc == pytest.approx(sum(gains), abs=1e-12)
    solver = cfr.CFRPlus(tree3)
    for _ in range(500):
        solver.iterate()
    assert cfr.nash_conv(tree3, solver.average_policy())[0] < nc / 20

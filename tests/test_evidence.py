"""pimc's evidence belief (``belief=evidence``): worlds weighted by the others' public moves
under the play-out policy (`NotYourMasJongHeuristic.evidence`: each other seat's top discard
was a discard the heuristic could make from that world's hand).

The real game is never ruled out when heuristics play it, uniform worlds often are, the
kept worlds agree with the evidence more often than uniform ones, and pimc's values with it
still depend only on its seat's information state."""

from __future__ import annotations

import copy
import random

import numpy as np
import pytest

pytest.importorskip("numba")

import envs  # noqa: E402
from agents.heuristic import heuristic_class  # noqa: E402
from agents.search import PIMCAgent  # noqa: E402
from envs.belief import sample_world  # noqa: E402

GAME = "not_your_mas_jong"


def heuristic_decisions(seed: int, count: int, num_players: int = 4):
    """Copies of a Ma's Jong engine at decisions with a choice, in games heuristics play."""
    e = envs.engine_class(GAME)(num_players)
    e.reset(np.random.default_rng(seed))
    players = [heuristic_class(GAME)(GAME, num_players, s) for s in range(num_players)]
    rnd, out = random.Random(seed), []
    while len(out) < count:
        if e.game_over:
            e.reset(np.random.default_rng(rnd.randrange(2**32)))
        s = e.current_player
        if np.count_nonzero(e.legal_mask()) > 1 and rnd.random() < 0.3:
            out.append(copy.deepcopy(e))
        e.step(int(players[s].act({"observation": e.observe(s), "action_mask": e.legal_mask()})))
    return out


@pytest.mark.parametrize("num_players", [3, 4])
def test_the_real_game_always_fits_and_uniform_worlds_often_do_not(num_players):
    judge = heuristic_class(GAME)(GAME, num_players, 0)
    states = heuristic_decisions(seed=num_players, count=40, num_players=num_players)
    assert all(judge.evidence(e, e.current_player) == 1.0 for e in states)
    rng = np.random.default_rng(1)
    fits = [judge.evidence(sample_world(e.information_state(e.current_player), rng), e.current_player) == 1.0
            for e in states for _ in range(10)]
    assert 0.1 < np.mean(fits) < 0.8  # the discards say something about the hands


def test_kept_worlds_fit_the_evidence_more_often():
    judge = heuristic_class(GAME)(GAME, 4, 0)
    uniform = PIMCAgent(GAME, 4, seed=3, worlds=8)
    weighted = PIMCAgent(GAME, 4, seed=3, worlds=8, belief="evidence")
    fit = {"uniform": [], "evidence": []}
    for e in heuristic_decisions(seed=9, count=15):
        info, seat = e.information_state(e.current_player), e.current_player
        for name, agent in (("uniform", uniform), ("evidence", weighted)):
            fit[name] += [judge.evidence(w, seat) == 1.0 for w in agent.draw_worlds(info, 8)]
    assert np.mean(fit["evidence"]) > np.mean(fit["uniform"]) + 0.2
    assert weighted.short < 0.2 * len(fit["evidence"])


def test_values_with_evidence_depend_only_on_the_information_state():
    for k, e in enumerate(heuristic_decisions(seed=4, count=3)):
        seat = e.current_player
        twin = copy.deepcopy(e)
        twin.shuffle_hidden(seat, np.random.default_rng(k + 1))
        twin.refresh()
        twin.rng = np.random.default_rng(k + 2)
        values = []
        for g in (e, twin):
            agent = PIMCAgent(GAME, 4, seed=5, worlds=4, belief="evidence")
            agent.inform(g.information_state(seat))
            view = {"observation": g.observe(seat), "action_mask": g.legal_mask()}
            agent.act(view)
            values.append(agent.option_values(view))
        np.testing.assert_array_equal(values[0], values[1])


def test_a_policy_without_evidence_draws_uniform_worlds():
    e = heuristic_decisions(seed=2, count=1)[0]
    info = e.information_state(e.current_player)
    plain = PIMCAgent(GAME, 4, seed=1, worlds=4, rollout="random", belief="evidence")
    other = PIMCAgent(GAME, 4, seed=1, worlds=4, rollout="random")
    assert [w.hands for w in plain.draw_worlds(info, 4)] == [w.hands for w in other.draw_worlds(info, 4)]

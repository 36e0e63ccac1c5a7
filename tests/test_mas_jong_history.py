"""pimc's ``belief=history`` in Ma's Jong (`agents.heuristic.kernels.mas_jong_history`) and the
round record it reads (`NotYourMasJong.public_log`)."""

import numpy as np
import pytest

from agents.heuristic.kernels.mas_jong_history import VIOLATION, HistoryBelief
from agents.heuristic.not_your_mas_jong import NotYourMasJongHeuristic
from agents.search import PIMCAgent
from envs.belief import informed
from envs.not_your_mas_jong import LOG_DISCARD, LOG_DRAW, LOG_SET, NUM_TYPES, NotYourMasJong

N = 4


def _heuristic_rounds(seed, players=N):
    """Heuristic self-play: at every decision of seat 0 with a choice, yield the engine, the hands
    dealt this round and every seat's real draws so far."""
    e = NotYourMasJong(players)
    e.reset(np.random.default_rng(seed))
    h = NotYourMasJongHeuristic("not_your_mas_jong", players)
    dealt, round_ = None, None
    while not e.game_over:
        if e.round != round_:
            round_, dealt = e.round, [[k for k in range(NUM_TYPES) for _ in range(e.hands[s][k])] for s in range(players)]
        s = e.current_player
        if s == 0 and e.legal_mask().sum() > 1:
            draws = [[c for kind, q, c, _ in e.round_log if kind == LOG_DRAW and q == seat] for seat in range(players)]
            yield e, dealt, draws
        e.step(h.act({"observation": e.observe(s), "action_mask": e.legal_mask()}))


def test_the_record_shows_each_seat_only_its_own_draws():
    seen_other_draw = False
    for e, _, draws in _heuristic_rounds(3):
        log = e.information_state(0)["log"]
        mine = [c for kind, q, c, _ in log if kind == LOG_DRAW and q == 0]
        assert mine == draws[0] and all(c >= 0 for c in mine)
        others = [c for kind, q, c, _ in log if kind == LOG_DRAW and q != 0]
        seen_other_draw |= bool(others)
        assert all(c == -1 for c in others)
        # the discards nobody stole are the piles, in order
        piles, discarder = [[] for _ in range(N)], None
        for kind, q, c, _ in log:
            if kind == LOG_DISCARD:
                piles[q].append(c)
                discarder = q
            elif kind == LOG_SET:
                assert piles[discarder].pop() == c
        assert piles == e.discard_piles
    assert seen_other_draw


def test_the_real_round_has_every_move_made_by_the_heuristic():
    """The true deal and draws replay every other seat's moves as the heuristic's (log chance 0),
    so the record is read as it happened; a swapped card makes some seat's moves less likely."""
    belief = HistoryBelief(N, chains=1)
    checked = lowered = 0
    for e, dealt, draws in _heuristic_rounds(5):
        info = e.information_state(0)
        ll = belief.log_chance(info, dealt, draws)
        assert np.all(ll == 0.0), ll
        checked += 1
        changed = [list(h) for h in dealt]
        changed[1][0], changed[2][0] = changed[2][0], changed[1][0]
        lowered += changed[1][0] != changed[2][0] and belief.log_chance(info, changed, draws).min() < 0
    assert checked > 30 and lowered > 0


def test_chains_keep_the_hidden_cards_and_fit_the_table():
    belief = HistoryBelief(N, chains=8, seed=1)
    for e, _, _ in _heuristic_rounds(7):
        info = e.information_state(0)
        belief.update(info)
        others = [q for q in range(N) if q != 0]
        for c in range(belief.chains):
            # every hidden card is in one place: a slot or the pile
            counts = np.zeros(NUM_TYPES, np.int64)
            for q in others:
                counts += np.bincount(belief.cards[c, q, : belief.slots[q]], minlength=NUM_TYPES)
            assert np.array_equal(counts + belief.pool[c], belief.hidden)
            if (belief.ll[c, others] > VIOLATION / 2).all():
                assert [belief.hands[c, q].sum() for q in others] == [e.hand_sizes[q] for q in others]
                assert belief.pool[c].sum() == len(e.draw)


def _search_game(seed):
    e = NotYourMasJong(N)
    e.reset(np.random.default_rng(seed))
    e.keep_history()
    agent = PIMCAgent("not_your_mas_jong", N, seed=11, worlds=8, belief="history")
    agent.reset()
    h = NotYourMasJongHeuristic("not_your_mas_jong", N)
    move = informed(agent, e, 0)
    moves = []
    while not e.game_over and e.round <= 2:
        s = e.current_player
        obs = {"observation": e.observe(s), "action_mask": e.legal_mask()}
        a = move(obs) if s == 0 else h.act(obs)
        moves.append(a)
        e.step(a)
    return moves, agent


def test_search_with_the_history_belief_plays_and_repeats():
    moves, agent = _search_game(2)
    assert agent.searched > 0 and agent.history.rounds >= 1
    assert _search_game(2)[0] == moves


def test_the_history_belief_needs_a_record():
    agent = PIMCAgent("not_your_mas_jong", N, seed=0, belief="history")
    e = NotYourMasJong(N)
    e.reset(np.random.default_rng(0))
    info = e.information_state(0)
    with pytest.raises(ValueError, match="round record"):
        agent.history.update({**info, "log": None})
    with pytest.raises(ValueError, match="belief=history needs"):
        PIMCAgent("neu", N, belief="history")

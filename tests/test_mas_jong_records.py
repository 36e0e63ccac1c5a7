"""What Ma's Jong's engine keeps of a round for its seats: the record in each seat's information
state (only its own draws shown) and ``passed_on`` (the discards each seat let go)."""

from __future__ import annotations

import numpy as np

import envs
from agents.heuristic.kernels.hand_distance import shanten, tables
from agents.heuristic.not_your_mas_jong import NotYourMasJongHeuristic
from agents.search.evaluators import rollout_policy
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


def test_the_engine_keeps_what_each_seat_let_go_and_the_heuristic_never_lets_a_win_go():
    """``passed_on[s]``: the discards nobody stole since seat s's hand last changed. After any
    move it is empty for a seat whose hand changed, and otherwise what it was, plus the discard
    just settled when nobody stole it. With heuristics everywhere no seat's list ever holds a
    card that completes its hand (the heuristic steals to win): what the tilted belief leans on."""
    add, dist = tables()
    policy = rollout_policy("heuristic", "not_your_mas_jong", 4)
    grew = 0
    for seed in range(3):
        e = envs.engine_class("not_your_mas_jong")(4)
        e.reset(np.random.default_rng(seed))
        while not e.game_over:
            before, hands, rnd = [list(q) for q in e.passed_on], [list(h) for h in e.hands], e.round
            card, discarder = e.current_discard, e.discarder
            locked = [len(x) for x in e.locked_sets]
            p = e.current_player
            e.step(policy.act({"observation": e.observe(p), "action_mask": e.legal_mask()}))
            if e.game_over:
                break
            if e.round != rnd:
                assert e.passed_on == [[] for _ in range(4)]
                continue
            settled = e.discarder == -1 and discarder >= 0 and not any(len(x) > n for x, n in zip(e.locked_sets, locked))
            for s in range(4):
                if e.hands[s] != hands[s]:
                    assert e.passed_on[s] == []
                elif settled and s != discarder:
                    assert e.passed_on[s] == before[s] + [card]
                    grew += 1
                else:
                    assert e.passed_on[s] == before[s]
                counts = np.array(e.hands[s], np.int64)
                for k in set(e.passed_on[s]):
                    counts[k] += 1
                    assert shanten(counts, len(e.locked_sets[s]), add, dist) > 0
                    counts[k] -= 1
    assert grew > 100

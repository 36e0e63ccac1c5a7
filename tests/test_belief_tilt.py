"""pimc's ``belief=tilted``: worlds walked from a uniform redeal towards the heuristic's hands.

The walks (`agents.heuristic.kernels.neu_belief`, `agents.heuristic.kernels.mas_jong_belief`)
are Metropolis chains over redeals of the hidden cards. Tested here: on deals small enough to
enumerate, the rows they leave follow the tilted belief exactly (total variation against the
enumeration); on real information states they move only hidden cards, so the seat's view and
everything public stay as they were; and pimc with this belief still moves only on what its
seat knows.
"""

from __future__ import annotations

import itertools
from collections import Counter, namedtuple

import numpy as np
import pytest

import envs
from agents.heuristic.kernels.hand_distance import shanten, shanten_each, tables
from agents.heuristic.kernels.mas_jong_belief import tilt_rows as mas_jong_tilt
from agents.heuristic.kernels.neu_belief import tilt_rows as neu_tilt
from agents.search.evaluators import rollout_policy
from agents.search.pimc import PIMCAgent
from envs.not_your_mas_jong import NUM_TYPES, POW4, RANKS
from tests.helpers import redealt_twin
from tests.test_evaluators import decisions

ROWS = 20_000


def _exact(pool: list[int], size: int, weight) -> dict:
    """The tilted belief over the hand (a sorted tuple) of `size` cards drawn from the labelled
    `pool`: uniform over which cards, times ``weight(hand)``."""
    p = Counter()
    for pick in itertools.combinations(range(len(pool)), size):
        hand = tuple(sorted(pool[i] for i in pick))
        p[hand] += weight(hand)
    z = sum(p.values())
    return {h: w / z for h, w in p.items()}


def _total_variation(rows: list[tuple], exact: dict) -> float:
    seen = Counter(rows)
    return 0.5 * sum(abs(seen[h] / len(rows) - exact.get(h, 0.0)) for h in set(seen) | set(exact))


NeuRows = namedtuple("NeuRows", "hands sizes draw ndraw")


def test_the_neu_walk_leaves_the_tilted_belief():
    """Seat 0 sees its own hand; seat 1 holds 3 of 8 hidden cards, the draw pile the rest.
    Every row starts from the same deal; after the walk, seat 1's hands follow
    uniform x exp(sum of logw) to within sampling noise (and a uniform walk would not)."""
    kinds = 6
    logw = np.array([0.0, 0.8, -0.6, 0.3, -1.2, 0.5])
    pool = [0, 0, 1, 2, 3, 3, 4, 5]
    st = NeuRows(np.zeros((ROWS, 2, kinds), np.int16), np.zeros((ROWS, 2), np.int16),
                 np.zeros((ROWS, 8), np.int16), np.zeros(ROWS, np.int16))
    st.hands[:, 0, 5] = 2  # the seat's own cards: never touched
    st.sizes[:, 0], st.sizes[:, 1] = 2, 3
    for k in (0, 0, 1):
        st.hands[:, 1, k] += 1
    st.draw[:, :5] = [2, 3, 3, 4, 5]
    st.ndraw[:] = 5
    accepted = neu_tilt(st, np.arange(ROWS, dtype=np.int64), 0, logw, 10, 7)
    assert accepted > 0
    hands = [tuple(sorted(k for k in range(kinds) for _ in range(st.hands[r, 1, k]))) for r in range(ROWS)]
    exact = _exact(pool, 3, lambda h: np.exp(sum(logw[k] for k in h)))
    assert _total_variation(hands, exact) < 0.02
    assert _total_variation(hands, _exact(pool, 3, lambda h: 1.0)) > 0.05  # the tilt is visible
    assert (st.hands[:, 0, 5] == 2).all() and (st.hands[:, 1].sum(axis=1) == 3).all()
    for r in range(0, ROWS, 997):  # the cards are the same cards, only moved
        assert sorted(hands[r] + tuple(st.draw[r, :5])) == pool


MasJongRows = namedtuple("MasJongRows", "hands codes sizes locked discards draw ndraw")


def test_the_mas_jong_walk_leaves_the_tilted_belief():
    """Three seats: seat 0 searches; seats 1 and 2 have locked two sets each and hold 4 of the 11
    hidden cards each, the draw pile the other 3 (so cards move between hands too). The rows
    follow uniform x prod over seats 1, 2 of exp(logw[distance] + beta x the types on the
    seat's discard pile that would bring it closer + gamma x the types it let go that would
    complete it), with distances from the compiled hand checker: the joint law of the two
    seats' (distance, such types) and seat 1's hands match the enumeration to within sampling
    noise."""
    add, dist = tables()
    logw = np.zeros((2, 7))
    logw[:, :] = [0.0, 0.0, -0.7, -1.5, -2.5, -3.0, -3.0]
    beta, gamma = -1.1, -2.0
    pool = [0, 0, 1, 2, 5, 6, 7, 10, 10, 11, 12]
    discarded = {1: (3, 8), 2: (13, 4)}
    let_go = {1: (1, 11), 2: (0, 6)}  # each seat's passed_on
    passed = np.zeros((3, NUM_TYPES), np.int64)
    for seat, cards in let_go.items():
        passed[seat, list(cards)] = 1
    n = 3
    st = MasJongRows(np.zeros((ROWS, n, NUM_TYPES), np.int8), np.zeros((ROWS, n, 5), np.int16),
                     np.zeros((ROWS, n), np.int8), np.zeros((ROWS, n, NUM_TYPES), np.int8),
                     np.zeros((ROWS, n, NUM_TYPES), np.int8), np.zeros((ROWS, 75), np.int8), np.zeros(ROWS, np.int8))
    for seat, cards in ((1, pool[:4]), (2, pool[4:8])):
        for k in cards:
            st.hands[:, seat, k] += 1
        st.sizes[:, seat] = 4
        st.discards[:, seat, list(discarded[seat])] = 1
        st.locked[:, seat, [20 + seat, 16 + seat]] = 3  # two identical sets
    st.draw[:, :3] = pool[8:]
    st.ndraw[:] = 3
    st.codes[:] = (st.hands.reshape(ROWS, n, 5, RANKS) * np.array(POW4)).sum(axis=3)

    def features(hand, seat):
        counts = np.bincount(np.array(hand, np.int64), minlength=NUM_TYPES)
        d = min(shanten(counts, 2, add, dist), 6)
        after = np.zeros(NUM_TYPES, np.int64)
        shanten_each(counts, 2, 1, add, dist, after)
        return d, sum(1 for k in discarded[seat] if 0 <= after[k] < d), sum(1 for k in let_go[seat] if after[k] == 0)

    def energy(hand, seat):
        d, m, w = features(hand, seat)
        return logw[0, d] + beta * m + gamma * w

    exact_joint, exact_hand = Counter(), Counter()
    for one in itertools.combinations(range(11), 4):
        rest = [i for i in range(11) if i not in one]
        for two in itertools.combinations(rest, 4):
            h1, h2 = tuple(sorted(pool[i] for i in one)), tuple(sorted(pool[i] for i in two))
            w = np.exp(energy(h1, 1) + energy(h2, 2))
            exact_joint[features(h1, 1) + features(h2, 2)] += w
            exact_hand[h1] += w
    for exact in (exact_joint, exact_hand):
        z = sum(exact.values())
        for key in exact:
            exact[key] /= z

    accepted = mas_jong_tilt(st, np.arange(ROWS, dtype=np.int64), 0, logw, beta, passed, gamma, 5, add, dist, 10, 11)
    assert accepted > 0
    hand = lambda r, seat: tuple(sorted(k for k in range(NUM_TYPES) for _ in range(st.hands[r, seat, k])))
    joint = [features(hand(r, 1), 1) + features(hand(r, 2), 2) for r in range(ROWS)]
    assert _total_variation(joint, exact_joint) < 0.02
    assert _total_variation([hand(r, 1) for r in range(ROWS)], exact_hand) < 0.04
    uniform = Counter()
    for one in itertools.combinations(range(11), 4):
        rest = [i for i in range(11) if i not in one]
        for two in itertools.combinations(rest, 4):
            uniform[features(tuple(sorted(pool[i] for i in one)), 1) + features(tuple(sorted(pool[i] for i in two)), 2)] += 1
    z = sum(uniform.values())
    assert _total_variation(joint, {k: v / z for k, v in uniform.items()}) > 0.05  # the tilt is visible
    np.testing.assert_array_equal(st.codes, (st.hands.reshape(ROWS, n, 5, RANKS) * np.array(POW4)).sum(axis=3))


@pytest.mark.parametrize("game", ["neu", "not_your_mas_jong"])
def test_the_walk_moves_only_hidden_cards(game):
    """On real information states: the seat's observation and mask, every public field and the
    hand sizes are unchanged; only the other hands and the draw pile differ, card for card."""
    policy = rollout_policy("heuristic", game, 4)
    venv = envs.vector_env(game, 64, 4, seed=0)
    venv.reset()
    rows = np.arange(64)
    moved = 0
    for e in decisions(game, 4, seed=21, count=4):
        seat = e.current_player
        info = e.information_state(seat)
        venv.sample_rows(rows, info, np.random.default_rng(3))
        before = {f: np.array(getattr(venv._st, f)[rows]) for f in venv._st._fields
                  if isinstance(getattr(venv._st, f), np.ndarray) and getattr(venv._st, f).shape[:1] == (venv.num_envs,)}
        obs, mask, who = (np.copy(a) for a in venv.views(rows))
        policy.tilt_rows(venv, rows, info, np.random.default_rng(4))
        after_obs, after_mask, after_who = venv.views(rows)
        np.testing.assert_array_equal(after_obs, obs)
        np.testing.assert_array_equal(after_mask, mask)
        for field, was in before.items():
            now = getattr(venv._st, field)[rows]
            if field in ("hands", "draw", "codes", "rng"):
                continue
            np.testing.assert_array_equal(now, was, err_msg=field)
        hands, draw = venv._st.hands[rows], venv._st.draw[rows]
        np.testing.assert_array_equal(hands[:, seat], before["hands"][:, seat])
        np.testing.assert_array_equal(hands.sum(axis=2), before["hands"].sum(axis=2))
        for r in range(64):
            nd = int(venv._st.ndraw[r])
            cards = lambda h, d: Counter(np.repeat(np.arange(h.shape[1]), h.sum(axis=0)).tolist()) + Counter(d[:nd].tolist())
            assert cards(hands[r], draw[r]) == cards(before["hands"][r], before["draw"][r])
        moved += int((hands != before["hands"]).any())
    assert moved > 0


@pytest.mark.parametrize("game", ["neu", "not_your_mas_jong"])
def test_pimc_with_the_tilted_belief_moves_only_on_what_its_seat_knows(game):
    for k, e in enumerate(decisions(game, 4, seed=6, count=3)):
        seat = e.current_player
        twin = redealt_twin(e, seat, k)
        seen = set()
        for g in (e, twin):
            agent = PIMCAgent(game, 4, seed=5, worlds=4, belief="tilted")
            agent.inform(g.information_state(seat))
            view = {"observation": g.observe(seat), "action_mask": g.legal_mask()}
            seen.add((agent.act(view), tuple(np.nan_to_num(agent.option_values(view), nan=-99.0))))
        assert len(seen) == 1


def test_the_tilted_belief_is_refused_where_it_cannot_work():
    with pytest.raises(ValueError, match="belief=tilted"):
        PIMCAgent("deadfall", 4, belief="tilted")
    with pytest.raises(ValueError, match="belief=tilted"):
        PIMCAgent("neu", 4, belief="tilted", evaluator="readable")


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

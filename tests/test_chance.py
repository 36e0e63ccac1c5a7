"""Chance as part of the engine protocol (`Engine.chance_draw`, `step_outcomes`, `record_chance`).

* Every draw is a chance event whose outcomes are the kinds in the pile, with probabilities
  count / size that sum to 1, and what came is one of them.
* `step_outcomes` lists every way a move can turn out: the probabilities sum to 1, the first
  draw's outcomes are exactly the pile's kinds, each branch took the outcome it names, and a
  move that meets a deal of a new round is refused.
* Recording the events changes no game (the goldens in tests/golden hold the games as they
  were before chance went through these methods).
"""

from __future__ import annotations

import copy
import random
from collections import Counter

import numpy as np
import pytest

import envs
from tests.conftest import GAMES
from tests.helpers import deal_from_cards, first_deal_parts
from tests.test_belief import _states


def _random_states(game: str, seed: int, n: int, every: int = 1):
    return _states(game, seed, n, every=every)


@pytest.mark.parametrize("game", GAMES)
def test_every_draw_is_a_chance_event_with_exact_probabilities(game):
    kinds = Counter()
    for seed in range(3):
        log: list = []
        e = envs.engine_class(game)(4)
        e.record_chance(log)
        e.reset(np.random.default_rng(seed))
        rnd = random.Random(seed)
        while not e.game_over:
            e.step(int(rnd.choice(np.flatnonzero(e.legal_mask()))))
        for event in log:
            kinds[event.kind] += 1
            if event.kind == "draw":
                assert abs(sum(event.probabilities) - 1) < 1e-12 and min(event.probabilities) > 0
                assert event.outcome in event.outcomes and len(set(event.outcomes)) == len(event.outcomes)
            else:
                assert event.outcomes == () and event.probabilities == ()
    assert kinds["deal"] >= 3  # the first deal of every game, at least
    if game != "deadfall":  # Deadfall draws nothing within a hand
        assert kinds["draw"] > 10, kinds


@pytest.mark.parametrize("game", GAMES)
def test_recording_chance_changes_no_game(game):
    def play(record: bool):
        e = envs.engine_class(game)(3)
        if record:
            e.record_chance([])
        e.reset(np.random.default_rng(5))
        rnd, seen = random.Random(5), []
        while not e.game_over:
            seen.append(e.state().tobytes())
            e.step(int(rnd.choice(np.flatnonzero(e.legal_mask()))))
        return seen, e.scores

    assert play(True) == play(False)


@pytest.mark.parametrize("game", [g for g in GAMES if g != "deadfall"])
def test_step_outcomes_list_every_draw_with_its_probability(game):
    checked = 0
    for e in _random_states(game, 11, 3, every=2):
        if checked >= 40:
            break
        for action in np.flatnonzero(e.legal_mask()):
            pile = list(getattr(e, "draw", []))
            try:
                branches = e.step_outcomes(int(action))
            except ValueError as err:
                assert "deal" in str(err)  # a move that ends a round meets the next deal
                continue
            assert list(e.draw) == pile  # the engine itself is left as it was
            total = sum(p for p, *_ in branches)
            assert abs(total - 1) < 1e-12, total
            drawn = [outcomes for _, _, _, outcomes in branches]
            assert len(set(drawn)) == len(drawn)  # each way once
            if any(drawn):
                first = {o[0] for o in drawn if o}
                assert first == set(pile), (first, set(pile))
                counts = Counter(pile)
                for p, after, _, outcomes in branches:
                    if len(outcomes) == 1:  # one draw: its probability is its count over the pile's size
                        assert p == pytest.approx(counts[outcomes[0]] / len(pile))
                checked += 1
    assert checked >= 10


def test_a_draw_branch_is_the_game_with_that_card_drawn():
    """In Neu: a play that makes the player draw has one branch per kind in the pile, each with
    the pile's count of it over the pile's size, and in each the player holds that card."""
    for e in _random_states("neu", 3, 2):
        seat = e.current_player
        try:
            branches = e.step_outcomes(int(np.flatnonzero(e.legal_mask())[0]))
        except ValueError:
            continue
        if len(branches) < 2 or any(len(o) != 1 for *_, o in branches):
            continue
        counts = Counter(e.draw)
        for p, after, _, (kind, *rest) in branches:
            assert p == pytest.approx(counts[kind] / len(e.draw))
            before = list(e.hands[seat])
            assert after.hands[seat][kind] >= 1 and sum(after.hands[seat]) == sum(before)  # played one, drew one
        return
    raise AssertionError("no draw met")


def test_take_chance_forces_the_next_draw_and_refuses_a_kind_not_in_the_pile():
    e = envs.engine_class("not_your_mas_jong")(4)
    e.reset(np.random.default_rng(0))
    rnd = random.Random(0)
    while e.phase != 0 or len(set(e.draw)) < 2:
        e.step(int(rnd.choice(np.flatnonzero(e.legal_mask()))))
    wanted = min(e.draw)
    twin = copy.deepcopy(e)
    twin.take_chance([wanted])
    assert twin.chance_draw(twin.draw) == wanted
    absent = next(k for k in range(25) if k not in e.draw)
    e.take_chance([absent])
    with pytest.raises(ValueError, match="cannot draw"):
        e.chance_draw(e.draw)


def test_a_move_that_deals_a_new_round_cannot_be_listed():
    for e in _random_states("neu", 1, 3):
        for action in np.flatnonzero(e.legal_mask()):
            twin = copy.deepcopy(e)
            twin.step(int(action))
            if twin.round > e.round and not twin.game_over:
                with pytest.raises(ValueError, match="meets a deal, whose outcomes are too many to list"):
                    e.step_outcomes(int(action))
                return
    raise AssertionError("no round ended")


@pytest.mark.parametrize("game", GAMES)
def test_take_chance_with_a_deal_stacks_the_next_deal_as_reset_would(game):
    # A deal built from deal_parts (the cards and the parts the deal names), given through
    # take_chance, deals exactly what reset(rng, deal=...) deals; at a draw it is refused.
    probe, deck, parts = first_deal_parts(game, 3)
    deal = deal_from_cards(probe.card_names, parts, list(np.random.default_rng(5).permutation(deck)))
    stacked, forced = envs.engine_class(game)(3), envs.engine_class(game)(3)
    stacked.reset(np.random.default_rng(1), deal=deal)
    forced.take_chance([deal])
    forced.reset(np.random.default_rng(1))
    for seat in range(3):
        np.testing.assert_array_equal(forced.observe(seat), stacked.observe(seat))
    mask = forced.legal_mask()
    assert np.array_equal(mask, stacked.legal_mask())
    other = envs.engine_class(game)(3)
    other.reset(np.random.default_rng(1))
    assert any(not np.array_equal(other.observe(s), stacked.observe(s)) for s in range(3))
    forced.take_chance([deal])
    with pytest.raises(ValueError, match="a deal was given where the game draws a card"):
        forced.chance_draw([0, 1])

"""Information-leak tests: a player's observation depends only on what that player may know.

Two checks, both in `envs.testing` (the soak run uses them too):

* `find_leaks(engine, p, rng)`: on deep copies, redeal everything hidden from
  seat p with the engine's ``shuffle_hidden(p, rng)`` (the other hands, the
  draw-pile order, Deadfall's face-down door picks, Not For Me's face-down
  offer) and compare ``observe(p)`` (and p's legal mask when p acts) with the
  original. The redeal must keep the deck, every place's size and p's hand.
* `find_decision_leaks(engine)`: for simultaneous decisions (Deadfall's door
  cards of one layer, Ma's Jong's steal decisions on one discard), try every
  legal decision of the player to act on a copy; while the phase is unresolved
  every other seat's observation, and the next actor's mask, must not depend
  on which decision was made.

A third check, here: who is asked to act. With Ma's Jong's default
``steal_phase="every_player"`` the seats asked after a discard do not change
when the discarder's hidden cards are redealt; with ``"eligible"`` they do
(its documented leak). Both steal phases go through the checks above.

The checks are shown to catch leaks by planting some (`test_planted_*`):
the engine's ``observe`` is monkeypatched to append (a) an opponent's hand
counts, (b) the top card of the hidden pile, (c) the full ``state()``; each
test asserts that the check reports a leak at some mid-game state, and that
the same check reports nothing at the same states without the plant. The
main test itself was also checked by hand: a scratch script replaced
``envs.neu.Neu.observe`` with one that appends the next seat's hand counts
and then ran ``pytest tests/test_leaks.py -k "hidden_cards and neu-4"``; it
failed at once ("neu 4p seed 0, live step 0: trial 0: observation of
player_0 changed at indices [61, 67, 70, 71]").
"""

from __future__ import annotations

import copy
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import envs
from envs import testing
from tests.conftest import GAME_COUNTS, GAMES, scaled


def _states(game: str, n: int, seed: int, every: int = 1, **rule_options):
    """Yield the engine at every `every`-th live step of a random game."""
    env = envs.make_raw(game, num_players=n, **rule_options)
    env.reset(seed=seed)
    rnd = random.Random(seed)
    for i, agent in enumerate(env.agent_iter(max_iter=100_000)):
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        if i % every == 0:
            yield env.unwrapped.game
        env.step(int(rnd.choice(np.flatnonzero(obs["action_mask"]))))


# Every game at every player count with default rules, plus Ma's Jong's other steal phase.
LEAK_CASES = [(g, n, {}) for g, n in GAME_COUNTS] + [("not_your_mas_jong", 4, {"steal_phase": "eligible"})]


@pytest.mark.parametrize("game,n,rules", LEAK_CASES)
@settings(max_examples=scaled(2))
@given(seed=st.integers(0, 2**32 - 1))
def test_observation_does_not_depend_on_hidden_cards(game, n, rules, seed):
    rng = np.random.default_rng(seed)
    changed: set = set()
    hands_seen: set = set()
    for step, engine in enumerate(_states(game, n, seed, every=2, **rules)):
        seats = {engine.current_player, int(rng.integers(n))}
        for seat in seats:
            leaks = testing.find_leaks(engine, seat, rng, trials=2, changed=changed)
            assert not leaks, f"{game} {n}p seed {seed}, live step {2 * step}: " + "; ".join(leaks)
            hands_seen.update(k for k, v in engine.card_places().items() if k.startswith("hand ") and k != f"hand {seat}" and v)
        leaks = testing.find_decision_leaks(engine)
        assert not leaks, f"{game} {n}p seed {seed}, live step {2 * step}: " + "; ".join(leaks)
    # The check is not vacuous: the redeal really moved other players' cards.
    assert hands_seen <= changed, (
        f"shuffle_hidden never changed {sorted(hands_seen - changed)}: the leak check would see nothing there"
    )


# -- the checks catch planted leaks ------------------------------------------------


def _plant(monkeypatch, engine_cls, extra):
    original = engine_cls.observe

    def leaky_observe(self, seat):
        return np.concatenate([original(self, seat), np.asarray(extra(self, seat), dtype=np.float32)])

    monkeypatch.setattr(engine_cls, "observe", leaky_observe)


def _opponent_hand(engine, seat):
    """Counts per card id of the next seat's hand: a planted leak."""
    cards = engine.card_places()[f"hand {(seat + 1) % engine.num_players}"]
    return np.bincount(np.asarray(cards, dtype=np.int64), minlength=max(engine.deck) + 1)


def _hidden_pile_top(engine, seat):
    places = engine.card_places()
    pile = next((places[k] for k in ("draw_pile", "set_aside") if k in places), [])
    return [pile[-1] if pile else -1]


def _count_detections(game, n, monkeypatch, extra, max_states=40):
    """(states where the check found a leak with the plant, and without it) over one random game."""
    engine_cls = envs.module(game).raw_env.engine_cls
    rng = np.random.default_rng(0)
    states = [testing.clone(g) for _, g in zip(range(max_states), _states(game, n, 1, every=3))]
    clean = sum(bool(testing.find_leaks(g, g.current_player, rng, trials=3)) for g in states)
    with monkeypatch.context() as m:
        _plant(m, engine_cls, extra)
        found = sum(bool(testing.find_leaks(g, g.current_player, rng, trials=3)) for g in states)
    return found, clean, len(states)


@pytest.mark.parametrize("game", GAMES)
def test_planted_opponent_hand_leak_is_caught(game, monkeypatch):
    found, clean, total = _count_detections(game, 3 if game != "not_your_mas_jong" else 4, monkeypatch, _opponent_hand)
    assert clean == 0
    assert found >= total // 2, f"the leak check caught the planted opponent-hand leak in only {found} of {total} states"


@pytest.mark.parametrize("game", GAMES)
def test_planted_hidden_pile_leak_is_caught(game, monkeypatch):
    found, clean, total = _count_detections(game, 3 if game != "not_your_mas_jong" else 4, monkeypatch, _hidden_pile_top)
    assert clean == 0
    assert found >= 1, f"the leak check never caught the planted top-of-pile leak in {total} states"


@pytest.mark.parametrize("game,rules", [(g, r) for g in GAMES if envs.module(g).raw_env.engine_cls.hidden_decisions for r in
                                        ([{}, {"steal_phase": "eligible"}] if g == "not_your_mas_jong" else [{}])])
def test_planted_simultaneous_decision_leak_is_caught(game, rules, monkeypatch):
    """Appending the whole state() to observe() exposes pending door picks / steal claims."""
    n = 4
    engine_cls = envs.module(game).raw_env.engine_cls
    states = []
    for seed in range(30):
        for g in _states(game, n, seed, **rules):
            if g.hidden_decision_key() is not None and g.legal_mask().sum() >= 2:
                states.append(testing.clone(g))
            if len(states) >= 15:
                break
        if len(states) >= 15:
            break
    assert states, f"no {game} state with a pending simultaneous decision was reached"
    clean = sum(bool(testing.find_decision_leaks(g)) for g in states)
    with monkeypatch.context() as m:
        _plant(m, engine_cls, lambda self, seat: self.state())
        found = sum(bool(testing.find_decision_leaks(g)) for g in states)
    assert clean == 0
    assert found >= 1, f"the decision-leak check never caught the planted state() leak in {len(states)} states"


@pytest.mark.parametrize("game", ["neu", "not_your_mas_jong"])
def test_redeal_depends_only_on_what_the_seat_knows(game):
    # What lab.headroom's fair searches rely on: two games that look the same to seat 0,
    # redealt with the same rng, come out the same.
    checked = 0
    for g in _states(game, 4, seed=11, every=7):
        a, b = copy.deepcopy(g), copy.deepcopy(g)
        b.shuffle_hidden(0, np.random.default_rng(99))  # same view for seat 0, other hidden cards
        checked += b.hands != a.hands
        a.shuffle_hidden(0, np.random.default_rng(5))
        b.shuffle_hidden(0, np.random.default_rng(5))
        assert (a.hands, a.draw) == (b.hands, b.draw)
        if checked >= 5:
            return
    raise AssertionError(f"only {checked} states where the hidden cards could be redealt differently")


# -- who is asked to act -------------------------------------------------------------


def _steal_askers(env, discard: int) -> list[str]:
    """agent_selection through the steal phase after `discard`, every decision a pass."""
    game = env.unwrapped.game
    env.step(discard)
    asked = []
    while game.phase == 1 and not game.game_over:
        asked.append(env.agent_selection)
        env.step(env.unwrapped.action_from_name("pass"))
    return asked


def _askers_over_redeals(steal_phase: str, seeds=range(3), redeals: int = 3):
    """For each discard of a few random games: the seats asked after it, in the real deal and in
    redeals of everything the discarder cannot see."""
    rng = np.random.default_rng(0)
    for seed in seeds:
        env = envs.make_raw("not_your_mas_jong", num_players=4, steal_phase=steal_phase)
        env.reset(seed=seed)
        rnd = random.Random(seed)
        game = env.unwrapped.game
        for _ in env.agent_iter(max_iter=600):
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            action = int(rnd.choice(np.flatnonzero(obs["action_mask"])))
            if game.phase == 0:
                sequences = []
                for t in range(redeals + 1):
                    trial = copy.deepcopy(env)
                    if t:
                        trial.unwrapped.game.shuffle_hidden(game.current_player, rng)
                    sequences.append(_steal_askers(trial, action))
                yield sequences
            env.step(action)


def test_every_player_steal_phase_asks_the_same_seats_whatever_the_hidden_hands():
    phases = 0
    for sequences in _askers_over_redeals("every_player"):
        assert all(s == sequences[0] for s in sequences), f"who is asked depends on hidden hands: {sequences}"
        phases += bool(sequences[0])
    assert phases > 100


def test_eligible_steal_phase_tells_who_holds_a_steal():
    # The documented leak of steal_phase="eligible": who is asked depends on the hidden hands.
    differ = sum(any(s != sequences[0] for s in sequences) for sequences in _askers_over_redeals("eligible", seeds=[0]))
    assert differ >= 5

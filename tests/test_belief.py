"""The belief sampler (`envs.belief`): information states and the worlds drawn from them.

* The information state hides what it must: it is unchanged when the cards its seat cannot
  see are redealt (``shuffle_hidden``), and when the player to act makes a different hidden
  decision (Deadfall's door cards, Ma's Jong's steal decisions), as the leak tests check
  for observations. The planted test shows the first check catches a record that holds
  another seat's hand.
* Every sampled world agrees with the view: the seat's ``observe``, legal mask and
  information state are those of the real game (``scaled`` samples per game: a few
  hundred under the ``ci`` profile, 40 times more under ``large``).
* It reads only the record: a redeal that keeps the seat's view gives the same samples for
  the same RNG seed.
* It draws the right distribution: on a late state, the frequencies of the next seat's
  hidden hand match the exact hypergeometric law of a uniform deal of the unseen cards
  (chi-squared test at p = 0.01, the critical value by the Wilson-Hilferty approximation).
  Checked by hand: a Neu sampler that keeps the unseen cards in sorted order one redeal in
  ten fails it (chi2 1121 over 303 cells).
"""

from __future__ import annotations

import copy
import math
import pickle
import random
from collections import Counter
from itertools import product

import numpy as np
import pytest

import envs
from envs.belief import informed, sample_world
from tests.conftest import GAMES, scaled


def _states(game: str, seed: int, n: int = 4, every: int = 5, **rules):
    """The engine at every `every`-th step of a random game (the engine itself, not a copy)."""
    e = envs.engine_class(game)(n, **rules)
    e.reset(np.random.default_rng(seed))
    rnd = random.Random(seed)
    for i in range(100_000):
        if e.game_over:
            return
        if i % every == 0:
            yield e
        e.step(int(rnd.choice(np.flatnonzero(e.legal_mask()))))


def _record(info: dict) -> bytes:
    return pickle.dumps(info)


@pytest.mark.parametrize("game", GAMES)
def test_information_state_survives_a_redeal(game):
    checked = 0
    for seed in range(2):
        for e in _states(game, seed):
            for seat in range(e.num_players):
                info = e.information_state(seat)
                twin = copy.deepcopy(e)
                twin.shuffle_hidden(seat, np.random.default_rng(checked))
                twin.rng = np.random.default_rng(checked + 1)  # the chance stream is hidden too
                assert _record(twin.information_state(seat)) == _record(info), f"{game} seed {seed}, seat {seat}"
                checked += 1
    assert checked > 20


class _SwappedDeal(np.random.Generator):
    """The same stream as ``default_rng(seed)``, except that the first shuffle (the deal) has
    two of its places swapped: a genuinely different real deal, made by the engine itself."""

    def __init__(self, seed: int, pick: random.Random):
        super().__init__(np.random.PCG64(seed))
        self.pick, self.done = pick, False

    def _swap(self, order):
        if not self.done:
            self.done = True
            i, j = self.pick.sample(range(len(order)), 2)
            order[i], order[j] = order[j], order[i]
        return order

    def permutation(self, x):
        return self._swap(super().permutation(x))

    def shuffle(self, x, axis=0):
        super().shuffle(x, axis)
        self._swap(x)


def _plain(x):
    """A value as nested lists, numbers and strings, arrays with their dtype, for ==."""
    if isinstance(x, np.ndarray):
        return ["array", x.dtype.str, x.tolist()]
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    return x.item() if isinstance(x, np.generic) else x


@pytest.mark.parametrize("game", GAMES)
def test_information_state_is_the_same_for_two_real_deals_that_look_the_same(game):
    """Two real games, each dealt by the engine from the same stream but for two swapped cards,
    are played with the same moves. Wherever a seat has seen the same thing in both while the
    real cards differ, its information state is the same in both, at every kind of decision
    (phase and whether the seat is the one to act) that the games reached."""
    cls, pick = envs.engine_class(game), random.Random(0)
    reached, compared = set(), Counter()
    for trial in range(scaled(40)):
        n = (cls.min_players, cls.default_players)[trial % 2]
        a, b = cls(n), cls(n)
        a.keep_history(), b.keep_history()  # the information-set key is part of the record: it must hide as much
        a.reset(np.random.default_rng(trial))
        b.reset(_SwappedDeal(trial, pick))
        rnd, same = random.Random(trial), set(range(n))
        for _ in range(400):
            if a.game_over or b.game_over or a.current_player != b.current_player:
                break
            reached.add((getattr(a, "phase", None), True))
            reached.add((getattr(a, "phase", None), False))
            if a.card_places() != b.card_places():  # genuinely different real states
                same &= {s for s in range(n) if np.array_equal(a.observe(s), b.observe(s))}
                for s in same:
                    kind = (getattr(a, "phase", None), s == a.current_player)
                    assert _plain(a.information_state(s)) == _plain(b.information_state(s)), \
                        f"{game} trial {trial}: player_{s}'s information state shows the real deal at {kind}"
                    compared[kind] += 1
                    assert a.information_key(s) is not None
            if not same:
                break
            legal = np.flatnonzero(a.legal_mask())
            if not np.array_equal(legal, np.flatnonzero(b.legal_mask())):
                break
            action = int(rnd.choice(legal))
            a.step(action)
            b.step(action)
    assert sum(compared.values()) > 50 and set(compared) == reached, (compared, reached)
    assert any(to_act for _, to_act in compared) and not all(to_act for _, to_act in compared)


@pytest.mark.parametrize("game", ["deadfall", "not_your_mas_jong"])
def test_information_state_hides_decisions_under_way(game):
    """The others' records do not depend on which hidden decision the player to act made."""
    compared = 0
    for e in _states(game, 3, every=1):
        key = e.hidden_decision_key()
        if key is None or compared > 60:
            continue
        actor = e.current_player
        records = {}
        for a in np.flatnonzero(e.legal_mask()):
            g = copy.deepcopy(e)
            g.step(int(a))
            if g.game_over or g.hidden_decision_key() != key:
                continue
            records[int(a)] = [_record(g.information_state(s)) for s in range(e.num_players) if s != actor]
        if len(records) > 1:
            first = next(iter(records.values()))
            assert all(r == first for r in records.values()), f"{game}: a record shows player_{actor}'s hidden decision"
            compared += 1
    assert compared > 0


def test_planted_hand_in_the_record_is_caught(monkeypatch):
    """A record that carries the next seat's real hand fails the redeal check."""
    real = envs.engine_class("neu").information_state

    def leaky(self, seat):
        info = real(self, seat)
        info["leak"] = list(self.hands[(seat + 1) % self.num_players])
        return info

    monkeypatch.setattr(envs.engine_class("neu"), "information_state", leaky)
    with pytest.raises(AssertionError):
        test_information_state_survives_a_redeal("neu")


@pytest.mark.parametrize("game", GAMES)
def test_every_sample_agrees_with_the_view(game):
    per_state = max(1, scaled(10))
    samples = 0
    rng = np.random.default_rng(7)
    states = (state for seed in (11, 12) for state in _states(game, seed, every=3))
    for e, _ in zip(states, range(30)):
        seat = e.current_player
        info = e.information_state(seat)
        record, obs, mask = _record(info), e.observe(seat), e.legal_mask()
        other = (seat + 1) % e.num_players
        for _ in range(per_state):
            w = sample_world(info, rng)
            assert np.array_equal(w.observe(seat), obs)
            assert np.array_equal(w.legal_mask(), mask)
            assert _record(w.information_state(seat)) == record
            assert w.current_player == seat and w.scores == e.scores
            assert sorted(c for cards in w.card_places().values() for c in cards) == sorted(e.deck)
            samples += 1
        # the worlds play on: a sampled world is a whole game, not only a view
        w.step(int(np.flatnonzero(w.legal_mask())[0]))
        assert w.observe(other).shape == e.observe(other).shape
    assert samples >= 10 * per_state


@pytest.mark.parametrize("game", GAMES)
def test_samples_do_not_depend_on_the_true_hidden_cards(game):
    for e in _states(game, 5, every=13):
        seat = e.current_player
        twin = copy.deepcopy(e)
        twin.shuffle_hidden(seat, np.random.default_rng(99))
        for k in range(3):
            a = sample_world(e.information_state(seat), np.random.default_rng(k))
            b = sample_world(twin.information_state(seat), np.random.default_rng(k))
            assert a.card_places() == b.card_places()
            assert np.array_equal(a.state(), b.state())
            assert a.rng.integers(2**62) == b.rng.integers(2**62)


def test_a_record_is_not_a_sampler_input():
    with pytest.raises(ValueError, match="information_state"):
        sample_world({"game": "neu"}, np.random.default_rng(0))


def _late_state(game: str):
    """A late state with few unseen cards and the next seat holding a hidden hand (no pending
    Not For Me offer, whose constraints the plain law does not have)."""
    best = None
    for seed in range(6):
        for e in _states(game, seed, every=1):
            seat, nxt = e.current_player, (e.current_player + 1) % e.num_players
            places = e.card_places()
            if getattr(e, "offer_size", 0) or any(places.get(f"door_pick {s}") for s in range(e.num_players)):
                continue
            hidden = len(places["draw_pile"])
            hidden += sum(len(places[f"hand {s}"]) for s in range(e.num_players) if s != seat)
            size = len(places[f"hand {nxt}"])
            if 2 <= size <= 4 and 6 <= hidden <= 40 and (best is None or hidden < best[0]):
                best = (hidden, copy.deepcopy(e))
    return best[1]


def _chi2_critical(df: int, z: float = 2.3263) -> float:
    """The chi-squared value exceeded with probability 0.01 (Wilson-Hilferty)."""
    return df * (1 - 2 / (9 * df) + z * math.sqrt(2 / (9 * df))) ** 3


@pytest.mark.parametrize("game", ["not_for_me", "neu", "not_your_mas_jong"])
def test_sampled_hands_follow_the_uniform_deal(game):
    e = _late_state(game)
    seat, nxt = e.current_player, (e.current_player + 1) % e.num_players
    places = e.card_places()
    pool = Counter(places["draw_pile"] + [c for s in range(e.num_players) if s != seat for c in places[f"hand {s}"]])
    size = len(places[f"hand {nxt}"])
    kinds = sorted(pool)
    total = sum(pool.values())
    exact = {}
    for counts in product(*(range(min(pool[k], size) + 1) for k in kinds)):
        if sum(counts) == size:
            ways = math.prod(math.comb(pool[k], c) for k, c in zip(kinds, counts))
            exact[tuple(k for k, c in zip(kinds, counts) for _ in range(c))] = ways / math.comb(total, size)
    draws = 4000
    rng = np.random.default_rng(2026)
    info = e.information_state(seat)
    seen = Counter(tuple(sorted(sample_world(info, rng).card_places()[f"hand {nxt}"])) for _ in range(draws))
    assert set(seen) <= set(exact)
    # bins with an expected count of 5 or more; the rest pooled in one
    big = [h for h, p in exact.items() if p * draws >= 5]
    rest_p = 1 - sum(exact[h] for h in big)
    cells = [(seen[h], exact[h] * draws) for h in big]
    if rest_p * draws >= 5:
        cells.append((draws - sum(seen[h] for h in big), rest_p * draws))
    chi2 = sum((o - x) ** 2 / x for o, x in cells)
    assert len(cells) >= 3, f"{game}: too few cells for a test"
    assert chi2 < _chi2_critical(len(cells) - 1), f"{game}: chi2 {chi2:.1f} over {len(cells)} cells"


class _Recorder:
    """Remembers what the hooks were given, and that act came after them."""

    def __init__(self):
        self.infos, self.engines, self.acted = [], [], []

    def inform(self, info):
        self.infos.append(info)

    def cheat_inform(self, engine):
        self.engines.append(engine)

    def act(self, observation):
        self.acted.append((len(self.infos), len(self.engines)))
        return 7


def test_informed_hands_over_the_record_and_a_copy_only_to_an_upper_bound():
    e = envs.engine_class("neu")(4)
    e.reset(np.random.default_rng(0))
    r = _Recorder()
    assert informed(r, e, 2)({}) == 7  # a fair seat: the record, never the engine
    assert r.infos[0]["seat"] == 2 and _record(r.infos[0]) == _record(e.information_state(2))
    assert r.engines == [] and r.acted == [(1, 0)]
    assert informed(r, e, 2, upper_bound=True)({}) == 7
    assert r.engines[0] is not e and np.array_equal(r.engines[0].state(), e.state()) and r.acted[-1] == (2, 1)
    informed(r, e, 2)({})
    assert len(r.engines) == 1  # a method named cheat_inform alone gets nothing
    assert informed(object(), e, 2, policy=lambda obs: 3)({}) == 3  # an agent without hooks is left alone


def test_the_aec_env_gives_the_record():
    env = envs.make("neu", num_players=4)
    env.reset(seed=3)
    agent = env.agent_selection
    info = env.unwrapped.information_state(agent)
    assert info["seat"] == env.possible_agents.index(agent)
    assert np.array_equal(np.asarray(info["observation"], np.float32), env.observe(agent)["observation"])

"""The batched engines (`envs.vector_env`) against the reference engines, move by move.

Each table of a vector env is paired with its own AEC env reset with the same
seed; random legal moves drawn from the vector env's masks go to both, and
observations (of every seat), masks, the seat to act, rewards, scores, the
global state and the final scores and ranks must be equal at every step.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst

pytest.importorskip("numba")

import envs  # noqa: E402
from envs.vector import KERNELS  # noqa: E402
from tests.conftest import scaled  # noqa: E402
from tests.helpers import same  # noqa: E402

BATCHED = [g for g in envs.GAMES if g in KERNELS]


def OPTIONS_OF(game: str) -> dict:
    return envs.module(game).raw_env.engine_cls.OPTIONS


def player_counts(game: str) -> list[int]:
    cls = envs.module(game).raw_env.engine_cls
    return list(range(cls.min_players, cls.max_players + 1))


class Pair:
    """A vector env and one AEC raw_env per table, kept in step."""

    def __init__(self, game, num_envs, num_players, seed, **options):
        self.venv = envs.vector_env(game, num_envs, num_players, seed, **options)
        self.aec = [envs.make_raw(game, num_players=num_players, **options) for _ in range(num_envs)]
        self.games = [0] * num_envs
        self.finished = 0
        for i, e in enumerate(self.aec):
            e.reset(seed=self.venv.table_seed(i, 0))

    def live_agent(self, e):
        # Eliminated agents may take their None step first (PettingZoo's convention).
        while e.agents and e.terminations[e.agent_selection]:
            e.step(None)
        return e.agent_selection

    def check_views(self, obs, mask, seat, every_seat=True):
        venv = self.venv
        n = venv.num_players
        want_seat = np.empty_like(seat)
        want_obs, want_mask, want_state = np.empty_like(obs), np.empty_like(mask), venv.state()
        want_scores = np.empty((venv.num_envs, n), np.int64)
        want_others = np.empty((n, *obs.shape), np.float32) if every_seat else None
        for i, e in enumerate(self.aec):
            agent = self.live_agent(e)
            game = e.unwrapped.game
            want_seat[i] = e.unwrapped._seat[agent]
            view = e.observe(agent)
            want_obs[i], want_mask[i] = view["observation"], view["action_mask"]
            want_state[i], want_scores[i] = e.state(), game.scores
            if every_seat:
                for k in range(n):
                    want_others[k, i] = game.observe(k)
        same("seat", seat, want_seat)
        same("observation", obs, want_obs)
        same("mask", mask, want_mask)
        same("state", venv.state(), want_state)
        some = np.arange(venv.num_envs)[::-2]  # a few tables, out of order
        same("state of some tables", venv.state(some), want_state[some])
        same("scores", venv.scores(), want_scores)
        if every_seat:
            for k in range(n):
                same(f"observation of seat {k}", venv.observe(k), want_others[k])

    def play(self, steps, rnd, every_seat=True, min_games=0, max_steps=None):
        """At least `steps` steps, and on until `min_games` games have finished (or `max_steps`)."""
        venv = self.venv
        obs, mask, seat = venv.reset()
        self.check_views(obs, mask, seat, every_seat)
        for step in range(max_steps or steps):
            if step >= steps and self.finished >= min_games:
                break
            actions = np.array([rnd.choice(np.flatnonzero(m)) for m in mask], dtype=np.int64)
            obs, mask, seat, rewards, done = venv.step(actions)
            want_rewards = np.empty_like(rewards)
            for i, e in enumerate(self.aec):
                e.step(int(actions[i]))
                want_rewards[i] = [e.rewards.get(a, 0.0) for a in e.possible_agents]
                over = e.unwrapped.game.game_over
                assert done[i] == over, f"table {i}: done {done[i]}, the reference's game_over {over}"
                if over:
                    info = e.infos[e.agents[0]]
                    assert list(venv.final_scores[i]) == list(info["final_scores"]), i
                    assert list(venv.final_ranks[i]) == list(info["final_ranks"]), i
                    self.games[i] += 1
                    self.finished += 1
                    e.reset(seed=venv.table_seed(i, self.games[i]))
            same("rewards", rewards, want_rewards)
            self.check_views(obs, mask, seat, every_seat)
        return self.finished


# Rule options besides the defaults: short games (more restarts), other marks, truncated rounds.
VARIANTS = {
    "not_your_mas_jong": [{"steal_phase": "eligible"}] if "steal_phase" in OPTIONS_OF("not_your_mas_jong") else [],
    "deadfall": [{"rounds": 3}, {"starting_chips": 4, "rounds": 30}],
    "not_for_me": [{"rounds": 1}, {"rounds": 2, "max_round_steps": 30, "hand_marks": (0, 1, 2, 3, 4, 10)}],
}
CASES = [(g, n, {}) for g in BATCHED for n in player_counts(g)] + [
    (g, n, options) for g in BATCHED for options in VARIANTS.get(g, []) for n in player_counts(g)
] + [(g, 2, {"rules": "small"}) for g in BATCHED]  # the small presets (two players only)


# Each case plays at least 250 steps at 8 tables, and on until 25 games have finished (x40 under the
# `large` hypothesis profile: thousands of games per case); the whole grid compares about 3,000 games.
MIN_GAMES = scaled(25)


@pytest.mark.parametrize("game, num_players, options", CASES, ids=lambda x: str(x).replace(" ", ""))
def test_agrees_with_the_reference_engine(game, num_players, options):
    rnd = np.random.default_rng(num_players)
    pair = Pair(game, num_envs=8, num_players=num_players, seed=1000 * num_players, **options)
    finished = pair.play(steps=250, rnd=rnd, every_seat=num_players <= 4, min_games=MIN_GAMES, max_steps=scaled(20_000))
    assert finished >= MIN_GAMES  # whole games were compared, and the tables that restarted


def test_same_seed_same_arrays():
    a, b = envs.vector_env("neu", 16, 3, seed=5), envs.vector_env("neu", 16, 3, seed=5)
    rnd_a, rnd_b = np.random.default_rng(0), np.random.default_rng(0)
    ra, rb = a.reset(), b.reset()
    for _ in range(300):
        for x, y in zip(ra, rb):
            np.testing.assert_array_equal(x, y)
        act_a = np.array([rnd_a.choice(np.flatnonzero(m)) for m in ra[1]])
        act_b = np.array([rnd_b.choice(np.flatnonzero(m)) for m in rb[1]])
        ra, rb = a.step(act_a), b.step(act_b)


@pytest.mark.parametrize("game", BATCHED)
def test_bad_input_is_a_clear_error(game):
    venv = envs.vector_env(game, num_envs=4, num_players=3)
    with pytest.raises(RuntimeError, match="reset"):
        venv.step(np.zeros(4, np.int64))
    obs, mask, seat = venv.reset()
    with pytest.raises(ValueError, match=r"shape \(4,\)"):
        venv.step(np.zeros(3, np.int64))
    with pytest.raises(ValueError, match=r"shape \(4,\)"):
        venv.step(np.zeros(4, np.float32))
    bad = np.array([np.flatnonzero(m)[0] for m in mask])
    bad[2] = np.flatnonzero(mask[2] == 0)[0]
    before = venv.state()
    with pytest.raises(ValueError, match=r"table\(s\) 2 "):
        venv.step(bad)
    np.testing.assert_array_equal(venv.state(), before)  # nothing moved
    bad[2] = venv.num_actions
    with pytest.raises(ValueError, match=r"table\(s\) 2 "):
        venv.step(bad)
    with pytest.raises(ValueError, match="num_envs"):
        envs.vector_env(game, num_envs=0)
    with pytest.raises(ValueError, match="num_players"):
        envs.vector_env(game, num_envs=2, num_players=99)
    with pytest.raises(ValueError, match="unknown rule option"):
        envs.vector_env(game, num_envs=2, no_such_rule=1)
    with pytest.raises(ValueError, match="seats"):
        venv.observe(np.full(4, 3))


def test_unknown_game():
    with pytest.raises(ValueError, match="valid games"):
        envs.vector_env("chess", num_envs=2)


def test_rng_is_numpys_stream():
    from envs.vector import rng as R

    seeds = np.array([0, 1, 2**32 - 1, 2**32, 2**40 + 7, 2**63 + 5, 2**64 - 1], dtype=np.uint64)
    ours, numpys = (np.zeros((len(seeds), R.RNG_WIDTH), np.uint64) for _ in range(2))
    R.seed_rows(ours, np.arange(len(seeds)), seeds)
    R.seed_rows_numpy(numpys, np.arange(len(seeds)), seeds)
    np.testing.assert_array_equal(ours, numpys)
    st = np.zeros((3, R.RNG_WIDTH), np.uint64)
    R.seed_rows(st, np.arange(3), np.array([0, 1, 2**40]))
    for t, seed in enumerate([0, 1, 2**40]):
        g = np.random.default_rng(seed)
        for k in (58, 1, 2, 3, 200, 63, 64, 65):
            cards = np.arange(k, dtype=np.int16)
            R.shuffle(st, t, cards, k)
            np.testing.assert_array_equal(cards, g.permutation(k))
        # rng.integers(k), interleaved with the shuffles' 32-bit draws (NumPy keeps half a
        # 64-bit draw for the next 32-bit one): bounds that reject often and never
        for k in (1, 2, 3, 5, 6, 7, 1000, 2**31 + 5, 2**32 - 1):
            got = [R.below(st, t, k) for _ in range(50)]
            assert got == [int(g.integers(k)) for _ in range(50)], k
            cards = np.arange(9, dtype=np.int16)
            R.shuffle(st, t, cards, 9)
            np.testing.assert_array_equal(cards, g.permutation(9))


@pytest.mark.parametrize("game", BATCHED)
def test_memory_per_table(game):
    venv = envs.vector_env(game, num_envs=64, num_players=4)
    assert venv.state_bytes_per_table() <= 2048


# -- properties of the batched engines themselves ------------------------------------


def deck_counts(game: str, num_players: int) -> np.ndarray:
    engine = envs.module(game).raw_env.engine_cls(num_players)
    deck = list(engine.deck)
    if game == "deadfall":  # a card id is its rank
        deck = [r - 1 for r in deck]
    return np.bincount(deck)


def cards_in_state(game: str, n: int, state: np.ndarray) -> np.ndarray:
    """Every card of each table, counted per kind from the global state vectors."""
    if game == "neu":
        k = 18
        return state[:, : n * k].reshape(-1, n, k).sum(1) + state[:, n * k : n * k + k] + state[:, n * k + k : n * k + 2 * k]
    if game == "not_for_me":
        k, base = 7, n * 7 + 8  # hands, draw pile, offer number, then player_0's public view
        supply = state[:, base + 3 : base + 24].reshape(-1, 3, k).sum(1)
        offer = np.zeros_like(supply)
        rows = np.flatnonzero(state[:, base + 30] > 0)
        offer[rows, state[rows, n * k + k].astype(int) - 1] = state[rows, base + 30]
        return state[:, : n * k].reshape(-1, n, k).sum(1) + state[:, n * k : n * k + k] + supply + state[:, base + 33 : base + 40] + offer
    if game == "deadfall":
        k, base = 10, n * 10 + 10 + n + 5  # hands, set aside, door picks, then the seat blocks
        cards = state[:, : n * k].reshape(-1, n, k).sum(1) + state[:, n * k : n * k + k]
        picks = state[:, n * k + k : n * k + k + n].astype(int)
        for s in range(n):
            rows = np.flatnonzero(picks[:, s])
            cards[rows, picks[rows, s] - 1] += 1
            cards += state[:, base + 17 * s + 7 : base + 17 * s + 17]
        return cards
    k, base = 25, n * 25 + 25 + 28  # hands, draw pile, then player_0's public view from its seat blocks
    cards = state[:, : n * k].reshape(-1, n, k).sum(1) + state[:, n * k : n * k + k]
    for s in range(n):
        cards += state[:, base + 54 * s : base + 54 * s + 50].reshape(-1, 2, k).sum(1)  # discards, locked sets
    return cards


@pytest.mark.parametrize("game", BATCHED)
@settings(max_examples=3, deadline=None)
@given(seed=hst.integers(0, 2**31), players=hst.integers(0, 10))
def test_properties_of_random_play(game, seed, players):
    counts = player_counts(game)
    n = counts[players % len(counts)]
    venv = envs.vector_env(game, num_envs=32, num_players=n, seed=seed)
    rnd = np.random.default_rng(seed)
    deck = deck_counts(game, n)
    obs, mask, seat = venv.reset()
    total = venv.scores().sum(1)
    for _ in range(300):
        assert (mask.sum(1) >= 1).all() and ((seat >= 0) & (seat < n)).all()
        np.testing.assert_array_equal(cards_in_state(game, n, venv.state()), np.broadcast_to(deck, (32, len(deck))))
        obs, mask, seat, rewards, done = venv.step(np.array([rnd.choice(np.flatnonzero(m)) for m in mask]))
        assert np.abs(rewards.sum(1)).max() < 1e-4  # zero-sum at every event
        if game in ("deadfall", "not_your_mas_jong"):  # chips and tokens only change hands
            now = venv.scores().sum(1)
            assert (now[~done] == total[~done]).all()
        for t in np.flatnonzero(done):
            scores, ranks = venv.final_scores[t], venv.final_ranks[t]
            better = (scores[None, :] > scores[:, None]).sum(1)
            if game == "neu":  # equal chips (0) are ranked by the order of elimination
                assert (ranks >= 1 + better).all() and sorted(ranks) == list(range(1, n + 1))
            else:
                np.testing.assert_array_equal(ranks, 1 + better)


# -- leaks: a seat's observation depends only on what it may see ----------------------


def _counts_to_cards(counts):
    return [k for k, c in enumerate(counts) for _ in range(int(c))]


def redeal_hidden(game, st, t, seat, rnd):
    """Redeal, in the batch arrays of table t, every card `seat` cannot see (other hands,
    the draw pile's order, the set-aside cards, other door picks), keeping every size.
    Returns False where the table holds a hidden card this does not redeal (an offer)."""
    n = st.hands.shape[1]
    others = [s for s in range(n) if s != seat]
    if game == "not_for_me" and st.offer_size[t] > 0:
        return False
    pool, sizes = [], []
    for s in others:
        cards = _counts_to_cards(st.hands[t, s])
        sizes.append(len(cards))
        pool += cards
    if game == "deadfall":
        pool += _counts_to_cards(st.aside[t])
        picks = [s for s in others if st.picks[t, s] > 0]
        pool += [int(st.picks[t, s]) - 1 for s in picks]
    else:
        pool += st.draw[t, : st.ndraw[t]].tolist()
    pool = [pool[i] for i in rnd.permutation(len(pool))]
    for s, size in zip(others, sizes):
        hand = np.bincount(pool[:size], minlength=st.hands.shape[2]) if size else np.zeros(st.hands.shape[2], int)
        st.hands[t, s] = hand
        if game == "not_your_mas_jong":  # the hand checker's base-4 code per suit
            st.codes[t, s] = (hand.reshape(5, 5) * 4 ** np.arange(5)).sum(1)
        pool = pool[size:]
    if game == "deadfall":
        for s in picks:
            st.picks[t, s] = pool.pop() + 1
        st.aside[t] = np.bincount(pool, minlength=st.aside.shape[1])
    else:
        st.draw[t, : len(pool)] = pool
    return True


@pytest.mark.parametrize("game", BATCHED)
def test_redealing_what_a_seat_cannot_see_leaves_its_observation(game):
    rnd = np.random.default_rng(11)
    venv = envs.vector_env(game, num_envs=16, num_players=4, seed=21)
    obs, mask, seat = venv.reset()
    changed = 0
    for step in range(120):
        if step % 10 == 9:
            for s in range(4):
                saved = [a.copy() if isinstance(a, np.ndarray) else a for a in venv._st]
                before, state = venv.observe(s), venv.state()
                for t in range(venv.num_envs):
                    redeal_hidden(game, venv._st, t, s, rnd)
                np.testing.assert_array_equal(venv.observe(s), before, err_msg=f"seat {s}")
                changed += (venv.state() != state).any(axis=1).sum()
                for a, b in zip(venv._st, saved):  # play on from the real deal
                    if isinstance(a, np.ndarray):
                        a[...] = b
        obs, mask, seat, *_ = venv.step(np.array([rnd.choice(np.flatnonzero(m)) for m in mask]))
    assert changed > 100  # the redeals did change hidden cards


@pytest.mark.parametrize("bad", [[1, 2], [-1, 0, 0], np.array([2**64 - 1, 0, 0], np.uint64), [0.5, 1, 2]])
def test_a_refused_reset_leaves_the_env_as_it_was(bad):
    from envs.vector import VectorEnv

    a, b = VectorEnv("neu", 3, 3, seed=4), VectorEnv("neu", 3, 3, seed=4)
    oa, ma, _ = a.reset()
    b.reset()
    rng = np.random.default_rng(0)
    finished = 0
    for step in range(4000):
        if step == 300:
            with pytest.raises(ValueError, match="seeds must"):
                b.reset(seeds=bad)
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in ma])
        oa, ma, _, _, done = a.step(actions)
        ob, mb, _, _, _ = b.step(actions)
        assert np.array_equal(oa, ob) and np.array_equal(ma, mb), f"step {step}: the refused reset changed the games"
        finished += int(done.sum()) if step > 300 else 0
    assert finished >= 3

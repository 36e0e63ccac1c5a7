"""The batched agent protocol (`agents.base`): ``act_batch`` makes the moves ``act`` makes.

* The random agent's compiled draws are NumPy's: one stream serves the rows in
  order as ``act`` would, and per-(row, seat) streams after ``seed_rows`` give
  the moves of one seeded agent per game and seat.
* Each heuristic's kernel makes the readable heuristic's move: games are played
  on `envs.vector_env` (every game, every player count, rule options besides the
  defaults), and at every step the kernel's move for every row is compared with
  ``act()`` on that row's observation, whoever is to move there (half the seats
  play the kernel's move, half a random one, so the games reach varied states).
  Under ``HYPOTHESIS_PROFILE=large`` each case plays 40 times as many games.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba")

import envs  # noqa: E402
from agents import RandomAgent, can_act_batch, make_agent  # noqa: E402
from agents.base import Agent, act_by_agent  # noqa: E402
from agents.heuristic import HEURISTICS, heuristic_class  # noqa: E402
from agents.heuristic.neu import NeuHeuristic  # noqa: E402
from tests.conftest import player_counts, scaled  # noqa: E402


def random_masks(rnd, rows: int, actions: int) -> np.ndarray:
    mask = (rnd.random((rows, actions)) < rnd.random()).astype(np.int8)
    mask[np.arange(rows), rnd.integers(0, actions, rows)] = 1  # every row has a legal move
    return mask


def same_stream(a: np.random.Generator, b: np.random.Generator) -> bool:
    sa, sb = a.bit_generator.state, b.bit_generator.state
    # NumPy keeps a stale buffered half when none is waiting: only a waiting one counts.
    return sa["state"] == sb["state"] and sa["has_uint32"] == sb["has_uint32"] and (not sa["has_uint32"] or sa["uinteger"] == sb["uinteger"])


def test_random_one_stream_is_act_row_after_row():
    rnd = np.random.default_rng(0)
    for trial in range(100):
        rows, actions = int(rnd.integers(1, 40)), int(rnd.integers(1, 70))
        batched, plain = RandomAgent("neu", 4, seed=trial), RandomAgent("neu", 4, seed=trial)
        for _ in range(3):
            mask = random_masks(rnd, rows, actions)
            got = batched.act_batch(np.zeros((rows, 5), np.float32), mask.astype(bool) if trial % 2 else mask, np.zeros(rows, np.int64))
            assert got.dtype == np.int64
            assert got.tolist() == [plain.act({"observation": None, "action_mask": m}) for m in mask]
            assert same_stream(batched.rng, plain.rng)  # act and act_batch may be mixed
    # and after a reseed the agent is back on one stream
    batched.seed_rows([0], [[1, 2, 3, 4]])
    batched.seed(7)
    mask = random_masks(rnd, 9, 12)
    fresh = RandomAgent("neu", 4, seed=7)
    assert batched.act_batch(np.zeros((9, 1), np.float32), mask, np.zeros(9, np.int64)).tolist() == [fresh.act({"action_mask": m}) for m in mask]


def test_random_row_streams_are_one_agent_per_game_and_seat():
    rnd = np.random.default_rng(1)
    rows, n = 25, 4
    seeds = rnd.integers(0, 2**63, (rows, n))
    batched = RandomAgent("neu", n, seed=0)
    batched.seed_rows(np.arange(rows), seeds)
    per_game = [[RandomAgent("neu", n, seed=int(seeds[r, s])) for s in range(n)] for r in range(rows)]
    for step in range(200):
        if step % 37 == 5:  # some rows start new games, with new seeds
            again = rnd.choice(rows, 6, replace=False)
            fresh = rnd.integers(0, 2**64, (6, n), dtype=np.uint64)
            batched.seed_rows(again, fresh)
            for r, row_seeds in zip(again, fresh):
                per_game[r] = [RandomAgent("neu", n, seed=int(x)) for x in row_seeds]
        mask = random_masks(rnd, rows, 30)
        seat = rnd.integers(0, n, rows)
        got = batched.act_batch(np.zeros((rows, 3), np.float32), mask, seat)
        assert got.tolist() == [per_game[r][seat[r]].act({"action_mask": mask[r]}) for r in range(rows)]


def test_protocol_errors_are_clear():
    bot = RandomAgent("neu", 3, seed=0)
    mask = np.ones((4, 5), np.int8)
    mask[2] = 0
    with pytest.raises(ValueError, match=r"all-zeros action mask at batch row\(s\) \[2\]"):
        bot.act_batch(np.zeros((4, 2), np.float32), mask, np.zeros(4, np.int64))
    with pytest.raises(ValueError, match="obs \\[N, obs_size\\]"):
        bot.act_batch(np.zeros((3, 2), np.float32), np.ones((4, 5)), np.zeros(4, np.int64))
    bot.seed_rows([0, 1], [[1, 2, 3], [4, 5, 6]])
    with pytest.raises(ValueError, match=r"row\(s\) \[2, 3\] were never given seeds"):
        bot.act_batch(np.zeros((4, 2), np.float32), np.ones((4, 5), np.int8), np.zeros(4, np.int64))
    with pytest.raises(ValueError, match="shape \\(2, 3\\)"):
        bot.seed_rows([0, 1], [1, 2])


def test_can_act_batch():
    class OneAtATime(Agent):
        def act(self, observation):
            return int(self.legal_actions(observation)[0])

    assert can_act_batch(make_agent("random", "neu", 4, seed=0))
    assert not can_act_batch(OneAtATime("neu", 4))


# -- the heuristics' kernels against the readable heuristics ------------------------------------

# Rule options besides the defaults: short games (more restarts), other marks, truncated rounds.
VARIANTS = {
    "deadfall": [{"rounds": 2}, {"starting_chips": 3, "rounds": 30}],
    "not_for_me": [{"rounds": 1}, {"rounds": 2, "max_round_steps": 30, "hand_marks": (0, 1, 2, 3, 4, 10)}],
    "not_your_mas_jong": [{"steal_phase": "eligible"}],
}
HEURISTIC_CASES = [(g, n, {}) for g in HEURISTICS for n in player_counts(g)] + [
    (g, n, o) for g in HEURISTICS for o in VARIANTS.get(g, []) for n in player_counts(g)]
# Per case: tables, games to finish (x40 under `large`) and a cap on steps; Ma's Jong games are
# long and its readable heuristic the slowest, so it gets fewer tables.
BUDGET = {"not_your_mas_jong": (8, 8, 3000)}


def play_and_compare(game: str, num_players: int, options: dict, bot, seed: int = 0) -> tuple[int, int]:
    """Play on a vector env, comparing ``bot.act_batch`` with ``bot.act`` on every row at every
    step; returns (games finished, moves compared)."""
    tables, games, steps = BUDGET.get(game, (16, 24, 1500))
    venv = envs.vector_env(game, tables, num_players, seed=1000 * num_players + seed, **options)
    rnd = np.random.default_rng(seed)
    rows = np.arange(tables)
    obs, mask, seat = venv.reset()
    finished = compared = 0
    for step in range(scaled(steps)):
        if finished >= scaled(games):
            break
        got = bot.act_batch(obs, mask, seat)
        want = np.array([bot.act({"observation": obs[t], "action_mask": mask[t]}) for t in rows])
        bad = np.flatnonzero(got != want)
        if bad.size:
            t = bad[0]
            raise AssertionError(
                f"{game} {num_players}p {options} step {step}: kernel and readable heuristic differ at rows "
                f"{bad.tolist()}; row {t}: kernel {got[t]}, readable {want[t]}, legal {np.flatnonzero(mask[t]).tolist()}, "
                f"observation {obs[t].tolist()}")
        compared += tables
        random_moves = np.array([rnd.choice(np.flatnonzero(m)) for m in mask])
        obs, mask, seat, _, done = venv.step(np.where((seat + rows) % 2 == 0, got, random_moves))
        finished += int(done.sum())
    return finished, compared


@pytest.mark.parametrize("game, num_players, options", HEURISTIC_CASES, ids=lambda x: str(x).replace(" ", ""))
def test_heuristic_kernel_makes_the_readable_move(game, num_players, options):
    bot = make_agent("heuristic", game, num_players, seed=0)
    assert can_act_batch(bot)
    finished, compared = play_and_compare(game, num_players, options, bot)
    assert finished >= 1 and compared > 0


def test_subclasses_keep_act_batch_only_when_the_kernel_knows_the_change():
    bolder = type("Bolder", (NeuHeuristic,), {"attack_weight": 2.0, "future_weight": 0.1})
    assert can_act_batch(bolder("neu", 4))
    finished, _ = play_and_compare("neu", 4, {}, bolder("neu", 4), seed=1)
    assert finished >= 1

    class Cautious(NeuHeuristic):
        def stuck_chance(self, *args):
            return 0.0

    class Mixin:
        def act(self, observation):
            return super().act(observation)

    assert not can_act_batch(Cautious("neu", 4))
    assert not can_act_batch(type("Mixed", (Mixin, NeuHeuristic), {})("neu", 4))
    for game in HEURISTICS:  # a new name or a new helper alone changes nothing
        cls = heuristic_class(game)
        assert can_act_batch(type("Renamed", (cls,), {"name": "mine", "helper": lambda self: 0})(game, 4 if game != "not_your_mas_jong" else 3))


def test_heuristic_act_batch_checks_its_input():
    bot = make_agent("heuristic", "deadfall", 4, seed=0)
    venv = envs.vector_env("deadfall", 3, 3)
    obs, mask, seat = venv.reset()
    with pytest.raises(ValueError, match="observations have"):
        bot.act_batch(obs, mask, seat)


@pytest.mark.parametrize("game", list(HEURISTICS))
def test_a_batched_table_plays_the_games_of_one_seeded_agent_per_game_and_seat(game):
    """Heuristic, random, heuristic, random at every table: `act_by_agent` on the batched engine,
    with the random agent reseeded per row whenever a row starts a game, plays move for move
    the AEC games of agents built for each game and seat with those seeds."""
    n, tables = 4 if game != "not_your_mas_jong" else 3, 6
    lineup = [make_agent("heuristic", game, n, seed=0), make_agent("random", game, n, seed=0)]
    who_at = np.array([s % 2 for s in range(n)])  # seat -> index into lineup
    venv = envs.vector_env(game, tables, n, seed=11)
    seeds = np.random.default_rng(2).integers(0, 2**63, (tables, 50, n))  # per row, game and seat
    games = np.zeros(tables, np.int64)
    aec = [envs.make_raw(game, num_players=n) for _ in range(tables)]

    def start(t):
        lineup[1].seed_rows([t], seeds[t, games[t]][None])
        aec[t].reset(seed=venv.table_seed(t, int(games[t])))
        per_seat = [make_agent("heuristic" if who_at[s] == 0 else "random", game, n, seed=int(seeds[t, games[t], s])) for s in range(n)]
        return per_seat

    bots = [start(t) for t in range(tables)]
    obs, mask, seat = venv.reset()
    finished = 0
    for _ in range(scaled(3000)):
        if finished >= scaled(12):
            break
        moves = act_by_agent(lineup, who_at[seat], obs, mask, seat)
        for t, e in enumerate(aec):
            while e.agents and e.terminations[e.agent_selection]:
                e.step(None)
            s = e.unwrapped._seat[e.agent_selection]
            assert s == seat[t]
            assert bots[t][s].act(e.observe(e.agent_selection)) == moves[t]
            e.step(int(moves[t]))
        obs, mask, seat, _, done = venv.step(moves)
        for t in np.flatnonzero(done):
            assert list(venv.final_scores[t]) == list(aec[t].infos[aec[t].agents[0]]["final_scores"])
            games[t] += 1
            finished += 1
            bots[t] = start(t)
    assert finished >= scaled(12)


def test_hand_distance_kernel_is_the_readable_search():
    from agents.heuristic.hand_distance import shanten, shanten_each
    from agents.heuristic.kernels import hand_distance as K

    add, dist = K.tables()
    out = np.zeros(25, np.int64)
    rnd = np.random.default_rng(3)
    for _ in range(scaled(1500)):
        counts = np.minimum(np.bincount(rnd.integers(0, 25, rnd.integers(0, 12)), minlength=25), 3)
        locked = int(rnd.integers(0, 4))
        assert K.shanten(counts, locked, add, dist) == shanten(counts.tolist(), locked)
        for change in (1, -1):
            K.shanten_each(counts, locked, change, add, dist, out)
            assert out.tolist() == [-1 if d is None else d for d in shanten_each(counts.tolist(), locked, change)]


def test_speed_script_runs():
    from agents.heuristic.kernels.__main__ import measure

    m = measure("deadfall", 3, tables=8, batches=1, sample=20, repeats=1)
    assert m["kernel_moves_per_s"] > 0 and m["readable_moves_per_s"] > 0


@pytest.mark.parametrize("game", list(HEURISTICS))
def test_heuristic_act_batch_names_rows_without_a_legal_move(game):
    n = 3
    bot = make_agent("heuristic", game, n, seed=0)
    obs, mask, seat = envs.vector_env(game, 4, n).reset()
    mask[1] = 0
    with pytest.raises(ValueError, match=r"all-zeros action mask at batch row\(s\) \[1\]"):
        bot.act_batch(obs, mask, seat)

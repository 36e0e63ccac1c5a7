"""The batched agent protocol (`agents.base`): ``act_batch`` makes the moves ``act`` makes.

* The random agent's compiled draws are NumPy's: one stream serves the rows in
  order as ``act`` would, and per-(row, seat) streams after ``seed_rows`` give
  the moves of one seeded agent per game and seat.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba")

from agents import RandomAgent, can_act_batch, make_agent  # noqa: E402
from agents.base import Agent  # noqa: E402


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

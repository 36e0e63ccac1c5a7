"""The compiled Ma's Jong features (agents/features_batch.py) against the readable ones."""

from __future__ import annotations

import numpy as np
import pytest

from agents.features import mas_jong_features
from agents.features_batch import SIZE, mas_jong_features_batch, with_features
from envs import not_your_mas_jong as mj
from envs import not_your_mas_jong_v0
from tests.helpers import heuristic_decisions, play_random_game


def _views(players: int, seeds, heuristic: bool):
    env = not_your_mas_jong_v0.env(num_players=players)
    views = []
    for seed in seeds:
        games = heuristic_decisions(env, seed) if heuristic else play_random_game(env, seed)
        views += [obs["observation"] for _, obs, action in games if action is not None]
    return np.stack(views)


@pytest.mark.parametrize("players", [3, 4])
@pytest.mark.parametrize("heuristic", [True, False], ids=["heuristic", "random"])
def test_batch_features_are_the_readable_ones(players, heuristic):
    # heuristic games reach close hands and steal phases with live steals; random ones far hands
    obs = _views(players, range(3), heuristic)
    want = np.stack([mas_jong_features(o, players) for o in obs])
    got = mas_jong_features_batch(obs, players)
    assert got.shape == (len(obs), SIZE) and got.dtype == np.float32
    bad = np.flatnonzero((got != want).any(axis=1))
    assert bad.size == 0, f"{bad.size} of {len(obs)} views differ, first row {bad[0]}: {got[bad[0]]} vs {want[bad[0]]}"
    # the views cover what the features describe: steal phases with a possible steal, complete hands
    assert (obs[:, mj.OBS_PHASE] == 1).any() and (want[:, 26:30] < 9).any()
    if heuristic:
        assert (want[:, 0] <= 1).any() and (want[:, 56:81] > 0).any()


def test_with_features_appends_to_each_row_and_refuses_a_single_view():
    obs = _views(4, [5], True)[:7]
    both = with_features(obs, 4)
    assert np.array_equal(both[:, : obs.shape[1]], obs)
    assert np.array_equal(both[:, obs.shape[1] :], np.stack([mas_jong_features(o, 4) for o in obs]))
    with pytest.raises(ValueError, match="rows, observation size"):
        mas_jong_features_batch(obs[0], 4)


def test_batched_teacher_records_the_heuristics_decisions_with_features_and_whole_games():
    from agents import make_agent
    from train.ppo_features import VectorTeacher
    from train.ppo_warmstart import Args

    args = Args(game="not_your_mas_jong", players=4, num_envs=3, workers=1, features=True)
    data = VectorTeacher(args, {"steal_phase": "eligible"}, reward_scale=0.5).collect(None, [], seed=(1, 0), num_steps=600)
    obs, masks, actions = data["obs"], data["masks"], data["actions"]
    assert data["env_steps"] >= 600 and len(actions) > 100 and data["critic_in"].shape == (0, 0)
    assert (masks.sum(1) > 1).all()  # only decisions with a choice
    plain = obs[:, :269]
    assert np.array_equal(obs[:, 269:], np.stack([mas_jong_features(o, 4) for o in plain]))
    teacher = make_agent("heuristic", "not_your_mas_jong", 4, seed=0)
    assert actions.tolist() == [teacher.act({"observation": o, "action_mask": m.astype(np.int8)}) for o, m in zip(plain, masks)]
    # every stream goes forward and ends with its game; a game's tokens add up to zero over its seats
    # (but for the rare reward that reaches a seat before its first decision with a choice in a game)
    nxt, dones = data["next_index"], data["dones"]
    assert ((nxt > np.arange(len(nxt))) | dones).all() and (nxt[dones] == -1).all()
    r = data["rewards"]
    assert (r != 0).any() and abs(r.sum()) <= 0.02 * np.abs(r).sum()


def test_ppo_features_trains_a_policy_that_acts_the_same_one_view_and_many_at_a_time(tmp_path):
    from agents import PPOAgent
    from train import ppo_features

    export = tmp_path / "mj.pt"
    args = ppo_features.parse_args(["--game", "not_your_mas_jong", "--players", "3", "--features", "--imitation-steps", "1500",
                                    "--imitation-epochs", "2", "--steps", "600", "--rollout-steps", "600", "--num-envs", "2",
                                    "--workers", "0", "--hidden", "16", "--engine", "aec", "--out", str(tmp_path / "run"),
                                    "--export", str(export)])
    ppo_features.main(args)
    bot, many = PPOAgent.load(export), PPOAgent.load(export)
    assert many._batch_features
    obs = _views(3, [2], True)
    masks = np.stack([np.ones(mj.NUM_ACTIONS, np.int8)] * len(obs))  # every action legal: the logits decide alone
    want = [bot.act({"observation": o, "action_mask": m}) for o, m in zip(obs, masks)]
    assert many.act_batch(obs, masks, np.zeros(len(obs), np.int64)).tolist() == want
    with pytest.raises(SystemExit):
        ppo_features.parse_args(["--game", "neu", "--features", "--imitation-steps", "100"])

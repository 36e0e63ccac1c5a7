"""envs.make_single_agent: the gymnasium checkers, rewards against the AEC env, seeding, opponents, errors."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import warnings

import numpy as np
import pytest

import envs
from envs.single_agent import SingleAgentEnv, opponent_seeds, resolve_opponents
from tests.conftest import GAMES


def play(env: SingleAgentEnv, seed: int):
    """One episode with random legal moves; returns (actions, rewards, final info)."""
    rnd = random.Random(seed)
    obs, info = env.reset(seed=seed)
    actions, rewards = [], []
    while True:
        assert env.observation_space.contains(obs)
        mask = env.action_masks()
        assert mask.dtype == bool and mask.any()
        assert np.array_equal(mask, info["action_mask"].astype(bool))
        legal = np.flatnonzero(mask)
        a = int(legal[rnd.randrange(legal.size)])
        obs, r, terminated, truncated, info = env.step(a)
        assert isinstance(r, float) and not truncated
        actions.append(a)
        rewards.append(r)
        if terminated:
            assert not env.action_masks().any() and not info["action_mask"].any()
            return actions, rewards, info


def aec_rewards(game: str, seat: int, opponents: str, seed: int, actions: list[int]):
    """Replay the same game in the AEC env: the seat's reward summed from each of its moves to its next decision."""
    env = envs.make(game, num_players=4)
    bots = resolve_opponents(game, 4, seat, opponents)
    env.reset(seed=seed)
    for s, seat_seed in opponent_seeds(seed, 4, seat).items():
        bots[s].seed(seat_seed)
        bots[s].reset()
    me = env.possible_agents[seat]
    sums = [0.0]  # sums[0]: what the seat receives before its first decision
    moves = iter(actions)
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            action = None
        elif agent == me:
            action = next(moves)
            sums.append(0.0)
        else:
            action = bots[env.possible_agents.index(agent)].act(obs)
        env.step(action)
        sums[-1] += env.rewards.get(me, 0.0)
        if env.game.game_over or env.game.out[seat]:
            break
    assert next(moves, None) is None, "the single-agent episode went on after the seat's game ended"
    return [sums[0] + sums[1]] + sums[2:], env.game


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("seat", [0, 3])
def test_rewards_are_the_aec_rewards_between_decisions(game, seat):
    env = envs.make_single_agent(game, num_players=4, seat=seat, opponents="heuristic")
    for seed in range(3):
        actions, rewards, _ = play(env, seed)
        expected, engine = aec_rewards(game, seat, "heuristic", seed, actions)
        assert rewards == pytest.approx(expected, abs=1e-9)
        # The episode ended exactly when the seat's game did.
        assert engine.game_over or engine.out[seat]


def test_neu_episode_ends_when_the_seat_is_eliminated():
    env = envs.make_single_agent("neu", num_players=4, seat=2, opponents="heuristic")
    eliminated = 0
    for seed in range(20):
        play(env, seed)
        game = env.aec.game
        if not game.game_over:
            assert game.out[2]
            eliminated += 1
    assert eliminated > 0, "no episode ended by elimination in 20 games"


@pytest.mark.parametrize("checker", ["gymnasium.utils.env_checker", "stable_baselines3.common.env_checker"])
@pytest.mark.parametrize("game", GAMES)
def test_gymnasium_and_sb3_checkers(game, checker):
    check_env = pytest.importorskip(checker).check_env

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(envs.make_single_agent(game, num_players=4))


@pytest.mark.parametrize("game", GAMES)
def test_maskable_ppo_trains_with_no_wrapper(game):
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO

    model = MaskablePPO("MlpPolicy", envs.make_single_agent(game), n_steps=32, batch_size=32, n_epochs=1, seed=0)
    model.learn(64)
    assert model.num_timesteps >= 64


def test_spaces_are_the_aec_spaces():
    env = envs.make_single_agent("deadfall", num_players=3, seat=1)
    aec = envs.make("deadfall", num_players=3)
    assert env.observation_space == aec.observation_space("player_1")["observation"]
    assert env.action_space == aec.action_space("player_1")


@pytest.mark.parametrize("game", GAMES)
def test_same_seed_same_game_and_unseeded_resets_continue_the_stream(game):
    a, b = (envs.make_single_agent(game, opponents="heuristic") for _ in range(2))
    assert play(a, 5)[:2] == play(b, 5)[:2]
    for _ in range(2):  # reset() without a seed: both go on from the same streams
        oa, _ = a.reset()
        ob, _ = b.reset()
        assert np.array_equal(oa, ob)
    assert play(a, 5)[:2] == play(b, 5)[:2]
    firsts = {a.reset(seed=s)[0].tobytes() for s in range(6)}
    assert len(firsts) > 1, "different seeds dealt the same game"


def test_same_deal_as_the_aec_env():
    env = envs.make_single_agent("not_for_me", seat=0, opponents="random")
    aec = envs.make("not_for_me")
    obs, _ = env.reset(seed=11)
    aec.reset(seed=11)
    assert np.array_equal(obs, aec.observe("player_0")["observation"])


def test_illegal_move_ends_the_game_with_minus_one():
    env = envs.make_single_agent("neu", seat=0, opponents="random")
    _, info = env.reset(seed=0)
    illegal = int(np.flatnonzero(info["action_mask"] == 0)[0])
    with pytest.warns(UserWarning, match="illegal move"):
        _, r, terminated, truncated, info = env.step(illegal)
    assert (r, terminated, truncated, info["illegal_move"]) == (-1.0, True, False, 1)
    with pytest.raises(RuntimeError, match="call reset"):
        env.step(0)


def test_numpy_actions_are_accepted():
    env = envs.make_single_agent("deadfall", opponents="random")
    _, info = env.reset(seed=0)
    a = np.flatnonzero(info["action_mask"])[0]
    env.step(np.int64(a))
    _, info = env.reset(seed=0)
    env.step(np.array(a))


def test_opponent_objects_callables_and_one_per_seat():
    seen = []

    def first_legal(observation):
        seen.append(observation)
        return int(np.flatnonzero(observation["action_mask"])[0])

    from agents import make_agent

    bot = make_agent("random", "neu", 4)
    env = envs.make_single_agent("neu", seat=1, opponents=[first_legal, bot, "heuristic"])
    assert env.opponents[0] is first_legal and env.opponents[2] is bot and env.opponents[3].name == "heuristic"
    play(env, 0)
    assert seen and all(set(o) == {"observation", "action_mask"} and o["action_mask"].any() for o in seen)
    # One object for every seat stays one object.
    env = envs.make_single_agent("neu", seat=0, opponents=bot)
    assert {id(o) for o in env.opponents.values()} == {id(bot)}
    play(env, 1)


def test_ppo_opponents():
    pytest.importorskip("torch")
    from agents.ppo import checkpoint_path

    env = envs.make_single_agent("neu", seat=0, opponents="ppo")
    play(env, 0)
    env = envs.make_single_agent("neu", seat=0, opponents=f"ppo:{checkpoint_path('neu', 4)}")
    play(env, 0)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"seat": 4}, "seat must be an integer from 0 to 3"),
        ({"seat": -1}, "seat must be an integer from 0 to 3"),
        ({"seat": "0"}, "seat must be an integer from 0 to 3"),
        ({"opponents": "alphazero"}, "unknown opponent 'alphazero'"),
        ({"opponents": 42}, "opponent for seat 1 must be one of"),
        ({"opponents": ["random", "random"]}, "one spec per other seat (3 for seats [1, 2, 3]), got 2"),
        ({"opponents": "ppo:/nowhere/neu.pt"}, "no checkpoint file at '/nowhere/neu.pt'"),
        ({"num_players": 9}, "num_players must be from 2 to 7"),
        ({"colour": "red"}, "unknown rule option(s) colour"),
    ],
)
def test_bad_arguments_are_one_line_value_errors(kwargs, message):
    with pytest.raises(ValueError) as e:
        envs.make_single_agent("neu", **kwargs)
    assert message in str(e.value) and "\n" not in str(e.value)


def test_unknown_game_and_missing_checkpoint():
    with pytest.raises(ValueError, match="unknown game 'chess'"):
        envs.make_single_agent("chess")
    with pytest.raises(ValueError, match="no PPO checkpoint for deadfall with 3 players"):
        envs.make_single_agent("deadfall", num_players=3, opponents="ppo")


def test_envs_does_not_import_agents():
    code = "import sys, envs, envs.single_agent; assert 'agents' not in sys.modules, 'envs imported agents'"
    subprocess.run([sys.executable, "-c", code], check=True, env=dict(os.environ))

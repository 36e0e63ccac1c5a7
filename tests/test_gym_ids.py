"""One seat of every game through gymnasium's registry: gym.make, check_env, gym.make_vec in both autoreset modes."""

from __future__ import annotations

import pickle
import subprocess
import sys
import warnings

import numpy as np
import pytest

import envs
from tests.conftest import GAMES

gym = pytest.importorskip("gymnasium")
from gymnasium.utils.env_checker import check_env  # noqa: E402
from gymnasium.vector import AutoresetMode  # noqa: E402


def test_ids_name_the_games():
    assert [envs.gym_id(g) for g in envs.available_games()] == [
        "cardzoo/NotForMe-v0", "cardzoo/Deadfall-v0", "cardzoo/Neu-v0", "cardzoo/NotYourMasJong-v0"]
    assert all(envs.gym_id(g) in gym.registry for g in GAMES)
    with pytest.raises(ValueError, match="unknown game 'chess'"):
        envs.gym_id("chess")


def test_registering_imports_no_higher_floor():
    code = ("import sys, gymnasium, envs; assert 'cardzoo/Neu-v0' in gymnasium.registry; "
            "assert 'agents' not in sys.modules, 'registering the gymnasium ids imported agents'")
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("game", GAMES)
def test_check_env_passes_without_warnings(game):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(gym.make(envs.gym_id(game), num_players=4, opponents="heuristic").unwrapped)
        # With a render mode, check_env also makes the env through its spec in every declared mode.
        check_env(gym.make(envs.gym_id(game), render_mode="ansi").unwrapped)


def test_make_passes_the_single_agent_keywords():
    env = gym.make("cardzoo/Deadfall-v0", num_players=3, seat=1, opponents=["random", "heuristic"], rounds=2)
    single = env.unwrapped
    assert (single.num_players, single.seat, single.aec.game.options["rounds"]) == (3, 1, 2)
    assert env.observation_space.shape == (envs.info("deadfall", 3).obs_size,)
    obs, info = env.reset(seed=0)
    assert env.action_space.contains(int(env.action_space.sample()))
    assert info["action_mask"][env.action_space.sample()]  # sample() draws a legal move
    assert type(pickle.loads(pickle.dumps(env.action_space))).__name__ == "Discrete"


def _masked_rollout(game: str, mode, steps: int, num_envs: int = 3) -> int:
    """Sample from info["action_mask"] as CleanRL-style masked PPO does; every row must offer a move."""
    venv = gym.make_vec(envs.gym_id(game), num_envs=num_envs, vectorization_mode="sync",
                        vector_kwargs={"autoreset_mode": mode}, opponents="random")
    _, info = venv.reset(seed=0)
    rng = np.random.default_rng(0)
    episodes = 0
    for _ in range(steps):
        mask = info["action_mask"]
        assert mask.shape == (num_envs, venv.single_action_space.n) and mask.any(axis=1).all()
        actions = np.array([rng.choice(np.flatnonzero(row)) for row in mask])
        _, _, terminated, truncated, info = venv.step(actions)
        episodes += int(terminated.sum())
        if mode == AutoresetMode.SAME_STEP and terminated.any():
            assert "final_obs" in info and "final_info" in info
    venv.close()
    return episodes


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP], ids=["next_step", "same_step"])
@pytest.mark.parametrize("game", ["deadfall", "neu"])  # the two with the shortest episodes
def test_make_vec_masks_are_never_all_zero(game, mode):
    assert _masked_rollout(game, mode, 250) >= 3, "too few episodes ended to test the autoreset"


@pytest.mark.parametrize("game", ["not_for_me", "not_your_mas_jong"])
def test_make_vec_runs_every_game(game):
    _masked_rollout(game, AutoresetMode.SAME_STEP, 30, num_envs=2)


def test_minimal_infos_leave_only_the_mask():
    full, small = (gym.make("cardzoo/Neu-v0", opponents="random", minimal_infos=m) for m in (False, True))
    (obs_a, info_a), (obs_b, info_b) = full.reset(seed=1), small.reset(seed=1)
    assert set(info_b) == {"action_mask"} and len(info_a) > 5
    assert np.array_equal(obs_a, obs_b) and np.array_equal(info_a["action_mask"], info_b["action_mask"])


def test_a_game_that_is_not_the_ids_is_refused():
    with pytest.raises(ValueError, match=r"game='deadfall' does not match the gymnasium id, which is 'neu''s: use 'cardzoo/Deadfall-v0'"):
        gym.make("cardzoo/Neu-v0", game="deadfall", opponents="random")
    assert gym.make("cardzoo/Neu-v0", game="neu", opponents="random").unwrapped.game_name == "neu"

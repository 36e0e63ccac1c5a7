"""experiments/recipes: each trains for a tiny budget when its library is installed (skipped otherwise)."""

from __future__ import annotations

import re
import warnings

import pytest

from experiments.recipes import common

TINY = ["--game", "neu", "--players", "4", "--eval-games", "4"]


def run_recipe(module, steps: int, capsys, extra=()):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert module.main([*TINY, "--steps", str(steps), *extra]) == 0
    illegal = [str(w.message) for w in caught if "illegal move" in str(w.message)]
    assert not illegal, f"the trained policy or its opponents made illegal moves: {illegal[:3]}"
    out = capsys.readouterr().out
    done = re.search(r"neu, 4 players, (\d+) environment steps", out)
    assert done and int(done.group(1)) >= steps, out
    score = re.search(r"random players over 4 games: ([-+]\d+\.\d+)", out)
    assert score, out
    return float(score.group(1))


def test_sb3_maskable_ppo(capsys):
    pytest.importorskip("sb3_contrib")
    from experiments.recipes import sb3_maskable_ppo

    run_recipe(sb3_maskable_ppo, 64, capsys)


def test_rllib_ppo(capsys):
    pytest.importorskip("ray.rllib")
    from experiments.recipes import rllib_ppo

    run_recipe(rllib_ppo, 128, capsys)


def test_tianshou_dqn(capsys):
    pytest.importorskip("tianshou")
    from experiments.recipes import tianshou_dqn

    run_recipe(tianshou_dqn, 100, capsys)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--game", "chess"], "unknown game 'chess'"),
        (["--players", "9"], "num_players must be from 2 to 7"),
        (["--steps", "0"], "argument --steps: must be a whole number from 1"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(argv, message, capsys):
    with pytest.raises(SystemExit) as e:
        common.parse_args("sb3_maskable_ppo", "test", argv, steps=10)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_missing_library_names_the_extra(monkeypatch, capsys):
    def no_such_module(name):
        raise ImportError(f"No module named {name!r}")

    monkeypatch.setattr(common.importlib, "import_module", no_such_module)
    with pytest.raises(SystemExit) as e:
        common.require("tianshou_dqn", ["tianshou"], "tianshou")
    assert e.value.code == 2
    assert "needs tianshou: pip install 'cardzoo[tianshou]'" in capsys.readouterr().err


def test_score_vs_random_ranks_the_heuristic_above_random_play():
    import numpy as np
    from agents import make_agent

    rng = np.random.default_rng(0)
    uniform = common.score_vs_random(lambda obs, mask: rng.choice(np.flatnonzero(mask)), "neu", 4, 40, seed=0)
    bot = make_agent("heuristic", "neu", 4, seed=0)
    heuristic = common.score_vs_random(lambda obs, mask: bot.act({"observation": obs, "action_mask": mask}), "neu", 4, 40, seed=0)
    assert heuristic > uniform + 0.5


def test_rllib_keys_wrapper_passes_pettingzoo_api_test_and_imports_no_ray():
    import os
    import subprocess
    import sys

    import numpy as np
    from pettingzoo.test import api_test

    from envs.rllib import rllib_env

    env = rllib_env("neu", num_players=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(env, num_cycles=300)
    env.reset(seed=3)
    obs = env.observe(env.agent_selection)
    assert set(obs) == {"observations", "action_mask"} and obs["action_mask"].any()
    assert env.observation_space(env.agent_selection)["observations"].contains(obs["observations"])
    plain = __import__("envs").make("neu", num_players=4)
    plain.reset(seed=3)
    assert np.array_equal(obs["observations"], plain.observe(plain.agent_selection)["observation"])
    code = "import sys, envs.rllib; assert 'ray' not in sys.modules, 'envs.rllib imported ray'"
    subprocess.run([sys.executable, "-c", code], check=True, env=dict(os.environ))

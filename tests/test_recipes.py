"""experiments/recipes: each trains for a tiny budget when its library is installed (skipped otherwise)."""

from __future__ import annotations

import re
import warnings

import pytest

from experiments.recipes import common

GAMES = ["not_for_me", "deadfall", "neu", "not_your_mas_jong"]


# A few thousand environment steps: each recipe trains on every game in CI.
STEPS = 2000


def run_recipe(module, steps: int, capsys, extra=(), game: str = "neu"):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert module.main(["--game", game, "--players", "4", "--eval-games", "4", "--steps", str(steps), *extra]) == 0
    illegal = [str(w.message) for w in caught if "illegal move" in str(w.message)]
    assert not illegal, f"the trained policy or its opponents made illegal moves: {illegal[:3]}"
    out = capsys.readouterr().out
    done = re.search(rf"{game}, 4 players, (\d+) environment steps", out)
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


@pytest.mark.parametrize("game", GAMES)
def test_torchrl_ppo(game, capsys):
    pytest.importorskip("torchrl")
    from experiments.recipes import torchrl_ppo

    run_recipe(torchrl_ppo, STEPS, capsys, game=game)


def test_torchrl_ppo_trains_the_same_policy_on_the_parallel_form(capsys):
    """The parallel env plays the same games one decision per step, and the recipe counts the same
    acting seats, so the same seed trains the same policy and it scores the same."""
    pytest.importorskip("torchrl")
    from experiments.recipes import torchrl_ppo

    scores = []
    for form in ("aec", "parallel"):
        assert torchrl_ppo.main(["--game", "deadfall", "--steps", "600", "--eval-games", "12", "--form", form]) == 0
        out = capsys.readouterr().out
        assert f"({form} env, one shared policy): deadfall, 4 players, 600 environment steps" in out
        scores.append(re.search(r"over 12 games: (.*) \(random", out).group(1))
    assert scores[0] == scores[1]


@pytest.mark.parametrize("game", GAMES)
def test_cleanrl_ppo(game, capsys):
    from experiments.recipes import cleanrl_ppo

    run_recipe(cleanrl_ppo, STEPS, capsys, game=game)


@pytest.mark.parametrize("game", GAMES)
def test_pufferlib_ppo(game, capsys):
    pytest.importorskip("pufferlib.emulation")
    from experiments.recipes import pufferlib_ppo

    run_recipe(pufferlib_ppo, STEPS, capsys, game=game)


def test_pufferlib_ppo_in_worker_processes(capsys):
    pytest.importorskip("pufferlib.emulation")
    from experiments.recipes import pufferlib_ppo

    run_recipe(pufferlib_ppo, 300, capsys, extra=["--backend", "multiprocessing", "--workers", "2"])


def test_pufferlib_ppo_workers_must_divide_the_tables(capsys):
    pytest.importorskip("pufferlib.emulation")
    from experiments.recipes import pufferlib_ppo

    assert pufferlib_ppo.main(["--backend", "multiprocessing", "--workers", "3"]) == 2
    assert "--workers must divide 8" in capsys.readouterr().err


def test_cleanrl_agent_samples_only_legal_moves_and_masks_their_gradient():
    import torch

    from experiments.recipes.cleanrl_ppo import Agent

    torch.manual_seed(0)
    agent = Agent(5, 7)
    x = torch.randn(500, 5)
    mask = torch.rand(500, 7) < 0.3
    mask[torch.arange(500), torch.randint(0, 7, (500,))] = True  # at least one legal move a row
    action, logprob, entropy, value = agent.get_action_and_value(x, mask)
    assert mask[torch.arange(500), action].all()
    assert torch.isfinite(logprob).all() and torch.isfinite(entropy).all() and value.shape == (500, 1)
    # One legal move: probability 1, entropy 0.
    only = torch.zeros(1, 7, dtype=torch.bool)
    only[0, 3] = True
    a, lp, ent, _ = agent.get_action_and_value(x[:1], only)
    assert a.item() == 3 and abs(lp.item()) < 1e-6 and abs(ent.item()) < 1e-6


def test_ppo_update_ignores_the_policy_terms_of_rows_that_did_not_act():
    """Rows whose action was not played (another seat's turn) must not move the actor:
    changing their actions and advantages leaves the update unchanged; changing an acting row's does not."""
    import copy

    import torch

    from experiments.recipes.cleanrl_ppo import Agent, Args, ppo_update

    torch.manual_seed(1)
    base = Agent(4, 3)
    n = 64
    batch = {"obs": torch.randn(n, 4), "masks": torch.ones(n, 3, dtype=torch.bool),
             "actions": torch.randint(0, 3, (n,)), "advantages": torch.randn(n), "returns": torch.randn(n),
             "values": torch.randn(n)}
    with torch.no_grad():
        _, batch["logprobs"], _, _ = base.get_action_and_value(batch["obs"], batch["masks"], batch["actions"])
    acting = torch.arange(n) % 4 == 0
    args = Args(num_minibatches=1, update_epochs=1, ent_coef=0.01)

    def actor_after(b):
        agent = copy.deepcopy(base)
        torch.manual_seed(2)
        ppo_update(agent, torch.optim.SGD(agent.parameters(), lr=0.1), args, b, acting=acting)
        return torch.cat([p.flatten() for p in agent.actor.parameters()])

    reference = actor_after(batch)
    idle = dict(batch, advantages=torch.where(acting, batch["advantages"], batch["advantages"] * -50),
                actions=torch.where(acting, batch["actions"], (batch["actions"] + 1) % 3))
    assert torch.allclose(actor_after(idle), reference)
    played = dict(batch, advantages=torch.where(acting, batch["advantages"] * -5, batch["advantages"]))
    assert not torch.allclose(actor_after(played), reference)


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


def test_cleanrl_episode_logging_under_same_step_reads_final_info(capsys):
    """CleanRL's `"episode" in infos` sees nothing under SAME_STEP; the recipe's finished_games
    finds every game that ended, with its return and length, in final_info."""
    import gymnasium as gym
    import numpy as np

    import envs
    from experiments.recipes.cleanrl_ppo import finished_games

    vec = gym.make_vec(envs.gym_id("deadfall"), num_envs=3, vectorization_mode="sync",
                       vector_kwargs={"autoreset_mode": gym.vector.AutoresetMode.SAME_STEP},
                       wrappers=[gym.wrappers.RecordEpisodeStatistics], minimal_infos=True)
    _, info = vec.reset(seed=2)
    rng = np.random.default_rng(2)
    running, lengths, expected, logged, top_level = np.zeros(3), np.zeros(3, int), [], [], 0
    for _ in range(600):
        _, reward, term, trunc, info = vec.step([int(rng.choice(np.flatnonzero(m))) for m in info["action_mask"]])
        running += reward
        lengths += 1
        for i in np.flatnonzero(term | trunc):
            expected.append((float(running[i]), int(lengths[i])))
            running[i], lengths[i] = 0, 0
        top_level += "episode" in info
        logged += finished_games(info)
    vec.close()
    assert len(expected) >= 5 and top_level == 0  # CleanRL's check would log nothing
    assert len(logged) == len(expected) and np.allclose(sorted(logged), sorted(expected))
    from experiments.recipes import cleanrl_ppo

    assert cleanrl_ppo.main(["--game", "neu", "--players", "4", "--eval-games", "2", "--steps", "600"]) == 0
    games = [int(g) for g in re.findall(r"games=(\d+), episodic_return", capsys.readouterr().out)]
    assert games and games[-1] > 0


def _recipes_block(needle: str) -> str:
    from tests.test_docs import ROOT, python_blocks

    blocks = [b["source"] for b in python_blocks(ROOT / "docs" / "recipes.md") if needle in b["source"]]
    assert len(blocks) == 1, f"docs/recipes.md has {len(blocks)} python blocks with {needle!r}"
    return blocks[0]


def _run_logging_snippet(capsys, mode: str, steps: int) -> list[tuple[int, float, int]]:
    snippet = _recipes_block("gym.wrappers.vector.RecordEpisodeStatistics(vec)")
    snippet = snippet.replace("range(0, 4 * 100, 4)", f"range(0, 4 * {steps}, 4)").replace("SAME_STEP", mode)
    capsys.readouterr()
    exec(compile(snippet, "docs/recipes.md", "exec"), {"__name__": "__main__"})
    line = re.compile(r"global_step=(\d+), episodic_return=(-?[\d.]+), episodic_length=(\d+)")
    return [(int(s), float(r), int(n)) for s, r, n in line.findall(capsys.readouterr().out)]


def test_cleanrl_logging_snippet_logs_every_finished_game_with_its_return_and_length(capsys):
    """The recipe's loop (docs/recipes.md, "Logging finished games under gymnasium 1.x"), run for 60
    steps, prints exactly the games a plain replay of the same steps sees end."""
    import gymnasium as gym
    import numpy as np

    import envs

    logged = _run_logging_snippet(capsys, "SAME_STEP", 60)
    vec = gym.make_vec(envs.gym_id("deadfall"), num_envs=4, vectorization_mode="sync",
                       vector_kwargs={"autoreset_mode": gym.vector.AutoresetMode.SAME_STEP},
                       num_players=4, seat=0, opponents="heuristic", minimal_infos=True)
    _, infos = vec.reset(seed=0)
    rng = np.random.default_rng(0)
    returns, lengths, expected = np.zeros(4), np.zeros(4, int), []
    for global_step in range(0, 4 * 60, 4):
        actions = [rng.choice(np.flatnonzero(mask)) for mask in infos["action_mask"]]
        _, rewards, terminations, truncations, infos = vec.step(actions)
        returns += rewards
        lengths += 1
        for i in np.flatnonzero(terminations | truncations):
            expected.append((global_step, float(returns[i]), int(lengths[i])))
            returns[i], lengths[i] = 0, 0
    vec.close()
    assert len(expected) >= 4 and logged == expected
    next_step = _run_logging_snippet(capsys, "NEXT_STEP", 60)  # the same loop in gymnasium's default mode
    assert len(next_step) >= 4 and all(n > 0 for _, _, n in next_step)


def test_cleanrl_gymnasium_0_29_loop_fails_or_logs_nothing_under_gymnasium_1():
    """What docs/recipes.md says of CleanRL's final_info loop, checked against gymnasium itself."""
    import gymnasium as gym
    import numpy as np

    import envs

    failing = _recipes_block('for info in infos["final_info"]:')
    for mode in ("SAME_STEP", "NEXT_STEP"):
        vec = gym.make_vec(envs.gym_id("deadfall"), num_envs=2, vectorization_mode="sync",
                           vector_kwargs={"autoreset_mode": getattr(gym.vector.AutoresetMode, mode)},
                           wrappers=[gym.wrappers.RecordEpisodeStatistics], minimal_infos=True)
        _, infos = vec.reset(seed=0)
        ended = 0
        for global_step in range(200):
            _, _, terminations, truncations, infos = vec.step([int(np.flatnonzero(m)[0]) for m in infos["action_mask"]])
            ended += int((terminations | truncations).sum())
            if mode == "NEXT_STEP":
                assert "final_info" not in infos  # the loop has nothing to walk
                continue
            assert "episode" not in infos  # SAME_STEP: `if "episode" in infos` logs nothing
            if "final_info" in infos:
                with pytest.raises(TypeError, match="string indices must be integers"):
                    exec(failing, {"infos": infos, "global_step": global_step})
                break
        vec.close()
        assert ended >= 1


@pytest.mark.parametrize("game", GAMES)
def test_agilerl_ippo(game, capsys):
    # AgileRL needs an environment of its own (pettingzoo<1.27): this runs there, and skips in CI.
    pytest.importorskip("agilerl")
    from experiments.recipes import agilerl_ippo

    run_recipe(agilerl_ippo, 512, capsys, game=game)


def test_agilerl_ippo_without_agilerl_says_where_to_install_it(capsys, monkeypatch):
    import sys

    from experiments.recipes import agilerl_ippo

    monkeypatch.setitem(sys.modules, "agilerl", None)  # an import of it fails, as when it is absent
    with pytest.raises(SystemExit) as stop:
        agilerl_ippo.main(["--steps", "10"])
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "needs agilerl" in err and "virtual environment" in err, err

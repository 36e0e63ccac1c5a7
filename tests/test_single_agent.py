"""The single-agent env (envs.single_agent, built from specs by agents.make_single_agent): the gymnasium checkers, rewards against the AEC env, seeding, opponents, errors."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import warnings

import numpy as np
import pytest

import envs
from agents import make_single_agent
from agents.opponents import make_opponents
from envs.single_agent import OpponentError, SingleAgentEnv, opponent_seeds
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
            # No move is played once the episode is over: every action is as good (never an empty mask).
            assert env.action_masks().all() and info["action_mask"].all()
            return actions, rewards, info


def aec_rewards(game: str, seat: int, opponents: str, seed: int, actions: list[int]):
    """Replay the same game in the AEC env: the seat's reward summed from each of its moves to its next decision."""
    env = envs.make(game, num_players=4)
    others = [s for s in range(4) if s != seat]
    bots = dict(zip(others, make_opponents(game, 4, opponents, 3)))
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
    env = make_single_agent(game, num_players=4, seat=seat, opponents="heuristic")
    for seed in range(3):
        actions, rewards, _ = play(env, seed)
        expected, engine = aec_rewards(game, seat, "heuristic", seed, actions)
        assert rewards == pytest.approx(expected, abs=1e-9)
        # The episode ended exactly when the seat's game did.
        assert engine.game_over or engine.out[seat]


def test_neu_episode_ends_when_the_seat_is_eliminated():
    env = make_single_agent("neu", num_players=4, seat=2, opponents="heuristic")
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
        check_env(make_single_agent(game, num_players=4))


@pytest.mark.parametrize("game", GAMES)
def test_maskable_ppo_trains_with_no_wrapper(game):
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO

    model = MaskablePPO("MlpPolicy", make_single_agent(game), n_steps=32, batch_size=32, n_epochs=1, seed=0)
    model.learn(64)
    assert model.num_timesteps >= 64


def test_spaces_are_the_aec_spaces():
    env = make_single_agent("deadfall", num_players=3, seat=1)
    aec = envs.make("deadfall", num_players=3)
    assert env.observation_space == aec.observation_space("player_1")["observation"]
    assert env.action_space == aec.action_space("player_1")


@pytest.mark.parametrize("game", GAMES)
def test_same_seed_same_game_and_unseeded_resets_continue_the_stream(game):
    a, b = (make_single_agent(game, opponents="heuristic") for _ in range(2))
    assert play(a, 5)[:2] == play(b, 5)[:2]
    for _ in range(2):  # reset() without a seed: both go on from the same streams
        oa, _ = a.reset()
        ob, _ = b.reset()
        assert np.array_equal(oa, ob)
    assert play(a, 5)[:2] == play(b, 5)[:2]
    firsts = {a.reset(seed=s)[0].tobytes() for s in range(6)}
    assert len(firsts) > 1, "different seeds dealt the same game"


def test_same_deal_as_the_aec_env():
    env = make_single_agent("not_for_me", seat=0, opponents="random")
    aec = envs.make("not_for_me")
    obs, _ = env.reset(seed=11)
    aec.reset(seed=11)
    assert np.array_equal(obs, aec.observe("player_0")["observation"])


def test_illegal_move_ends_the_game_with_minus_one():
    env = make_single_agent("neu", seat=0, opponents="random")
    _, info = env.reset(seed=0)
    illegal = int(np.flatnonzero(info["action_mask"] == 0)[0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # reward and info say it; checkers make such moves on purpose
        _, r, terminated, truncated, info = env.step(illegal)
    assert (r, terminated, truncated, info["illegal_move"]) == (-1.0, True, False, 1)
    with pytest.raises(RuntimeError, match="call reset"):
        env.step(0)


def test_numpy_actions_are_accepted():
    env = make_single_agent("deadfall", opponents="random")
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
    env = make_single_agent("neu", seat=1, opponents=[first_legal, bot, "heuristic"])
    assert env.opponents[0] is first_legal and env.opponents[2] is bot and env.opponents[3].name == "heuristic"
    play(env, 0)
    assert seen and all(set(o) == {"observation", "action_mask"} and o["action_mask"].any() for o in seen)
    # One object for every seat stays one object.
    env = make_single_agent("neu", seat=0, opponents=bot)
    assert {id(o) for o in env.opponents.values()} == {id(bot)}
    play(env, 1)


def test_ppo_opponents():
    pytest.importorskip("torch")
    from agents.ppo import checkpoint_path

    env = make_single_agent("neu", seat=0, opponents="ppo")
    play(env, 0)
    env = make_single_agent("neu", seat=0, opponents=f"ppo:{checkpoint_path('neu', 4)}")
    play(env, 0)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"seat": 4}, "seat must be an integer from 0 to 3"),
        ({"seat": -1}, "seat must be an integer from 0 to 3"),
        ({"seat": "0"}, "seat must be an integer from 0 to 3"),
        ({"opponents": "alphazero"}, "unknown agent kind 'alphazero'"),
        ({"opponents": 42}, "opponent for seat 1 must be an object with act(observation) or a callable"),
        ({"opponents": ["random", "random"]}, "one opponent per other seat (3 for seats [1, 2, 3]), got 2"),
        ({"opponents": "ppo:/nowhere/neu.pt"}, "no checkpoint file at '/nowhere/neu.pt'"),
        ({"num_players": 9}, "num_players must be from 2 to 7"),
        ({"colour": "red"}, "unknown rule option(s) colour"),
    ],
)
def test_bad_arguments_are_one_line_value_errors(kwargs, message):
    with pytest.raises(ValueError) as e:
        make_single_agent("neu", **kwargs)
    assert message in str(e.value) and "\n" not in str(e.value)


def test_unknown_game_and_missing_checkpoint():
    with pytest.raises(ValueError, match="unknown game 'chess'"):
        make_single_agent("chess")
    with pytest.raises(ValueError, match="no PPO checkpoint for deadfall with 3 players"):
        make_single_agent("deadfall", num_players=3, opponents="ppo")


def test_envs_does_not_import_agents():
    code = "import sys, envs, envs.single_agent; assert 'agents' not in sys.modules, 'envs imported agents'"
    subprocess.run([sys.executable, "-c", code], check=True, env=dict(os.environ))


def test_no_file_in_envs_imports_a_higher_floor():
    """Not even inside a function: envs is the lowest floor (the gymnasium ids name agents by string)."""
    import ast
    from pathlib import Path

    for path in Path(envs.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            for name in names:
                assert name.split(".")[0] not in ("agents", "train", "experiments"), f"{path} imports {name}"


def test_strings_are_refused_by_the_env_with_the_way_to_build_them():
    with pytest.raises(ValueError, match=r"agents.make_single_agent\(game, opponents='heuristic'\)") as e:
        envs.make_single_agent("neu", opponents="heuristic")
    assert "\n" not in str(e.value)


# -- an opponent that fails -----------------------------------------------------------


class Failing:
    """Plays the first legal move, then fails on its `after`-th call by `how`."""

    def __init__(self, how, after=0):
        self.how, self.after, self.calls = how, after, 0

    def act(self, observation):
        self.calls += 1
        legal = np.flatnonzero(observation["action_mask"])
        if self.calls <= self.after:
            return int(legal[0])
        if self.how == "raise":
            raise KeyError("boom")
        if self.how == "exit":
            raise SystemExit(3)
        if self.how == "illegal":
            return int(np.flatnonzero(observation["action_mask"] == 0)[0])
        if self.how == "tampered":  # rewrites its own copy of the mask, then plays what the env rules out
            bad = int(np.flatnonzero(observation["action_mask"] == 0)[0])
            observation["action_mask"][:] = 1
            return bad
        return {"none": None, "float": float(legal[0]), "out of range": 10_000}[self.how]


PROBLEMS = {"raise": "raised KeyError: 'boom'", "exit": "raised SystemExit(3)", "illegal": "rules out",
            "tampered": "rules out", "none": "returned None (NoneType), not an integer action",
            "float": "not an integer action", "out of range": "outside 0.."}


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("how", sorted(PROBLEMS))
def test_a_failing_opponent_is_named_and_the_env_stops_until_reset(game, how):
    bot = Failing(how, after=2)
    env = envs.make_single_agent(game, seat=0, opponents=[make_opponents(game, 4, "random", 1)[0], bot, make_opponents(game, 4, "random", 1)[0]])
    with pytest.raises(OpponentError) as e:
        for seed in range(50):  # some games end before the opponent's third move
            play(env, seed)
    assert (e.value.seat, e.value.opponent) == (2, "Failing") and PROBLEMS[how] in e.value.problem
    assert "seat 2" in str(e.value) and "player_2" in str(e.value) and "\n" not in str(e.value)
    # Mid-turn for player_2: the next step must not be played as its move.
    with pytest.raises(RuntimeError, match="episode stopped: opponent at seat 2.*call reset"):
        env.step(0)
    assert env.aec.agent_selection == "player_2"
    bot.how, bot.after = "none", 10**9
    play(env, 0)  # a reset plays on as normal


@pytest.mark.parametrize("game", GAMES)
def test_a_failure_inside_reset_is_named_and_step_refused(game):
    # Seat 3 moves after three opponents, so reset() plays the failing one.
    env = envs.make_single_agent(game, seat=3, opponents=Failing("raise"))
    with pytest.raises(OpponentError, match="opponent at seat 0 .*raised KeyError"):
        env.reset(seed=0)
    with pytest.raises(RuntimeError, match="call reset"):
        env.step(0)
    fresh = envs.make_single_agent(game, seat=3, opponents=Failing("raise"))
    with pytest.raises(RuntimeError, match="call reset"):  # never reset at all: no AttributeError either
        fresh.step(0)


def test_an_opponent_failing_in_its_reset_is_named():
    class BadReset(Failing):
        def reset(self):
            raise OSError("no table")

    env = envs.make_single_agent("neu", seat=0, opponents=[lambda o: 0, BadReset("none"), lambda o: 0])
    with pytest.raises(OpponentError, match=r"seat 2 \(player_2, BadReset\) raised OSError: no table"):
        env.reset(seed=0)
    with pytest.raises(RuntimeError, match="episode stopped: opponent at seat 2"):
        env.step(0)


def test_a_spec_based_env_refuses_max_cycles():
    with pytest.raises(ValueError, match="max_cycles is not an option of the single-agent env"):
        envs.make_single_agent("neu", opponents=lambda o: 0, max_cycles=3)


def test_os_exit_of_an_opponent_is_refused_and_named(tmp_path):
    # In a child process: if the guard failed, the test process would end.
    code = (
        "import os, envs\n"
        "from envs.single_agent import OpponentError\n"
        "env = envs.make_single_agent('neu', seat=3, opponents=lambda obs: os._exit(7))\n"
        "try:\n    env.reset(seed=0)\nexcept OpponentError as e:\n    print('named:', e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "named: opponent at seat 0 (player_0, <lambda>) called os._exit(7)" in out.stdout, out


def test_move_timeout_holds_against_an_opponent_that_catches_exception():
    import time

    def stubborn(observation):
        end = time.perf_counter() + 30
        while time.perf_counter() < end:  # a retry loop that swallows every Exception
            try:
                time.sleep(0.01)
            except Exception:
                pass
        return 0

    env = envs.make_single_agent("neu", seat=3, opponents=stubborn, move_timeout=0.2)
    start = time.perf_counter()
    with pytest.raises(OpponentError, match=r"seat 0 .*took more than 0.2 s to move"):
        env.reset(seed=0)
    assert time.perf_counter() - start < 5
    with pytest.raises(RuntimeError, match="call reset"):
        env.step(0)


def test_move_timeout_takes_effect_when_a_long_c_call_returns():
    import time

    def slow_c(observation):
        start = time.perf_counter()
        while time.perf_counter() - start < 0.4:
            sum(range(2 * 10**6))  # one call into C: the alarm waits for it
        return int(np.flatnonzero(observation["action_mask"])[0])

    env = envs.make_single_agent("neu", seat=3, opponents=slow_c, move_timeout=0.1)
    with pytest.raises(OpponentError, match="took more than 0.1 s"):
        env.reset(seed=0)
    # Within the limit nothing changes: the same games as without one.
    a = envs.make_single_agent("neu", seat=1, opponents=make_opponents("neu", 4, "heuristic", 3), move_timeout=5)
    b = envs.make_single_agent("neu", seat=1, opponents=make_opponents("neu", 4, "heuristic", 3))
    assert play(a, 3)[:2] == play(b, 3)[:2]


@pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf"), "1", True])
def test_bad_move_timeout_is_a_one_line_value_error(bad):
    with pytest.raises(ValueError, match="move_timeout must be a positive number of seconds"):
        envs.make_single_agent("neu", opponents=lambda o: 0, move_timeout=bad)


@pytest.mark.parametrize("game", GAMES)
def test_render_shows_the_seat_view_only(game):
    env = make_single_agent(game, seat=1, opponents="random", render_mode="ansi")
    env.reset(seed=2)
    text = env.render()
    engine = env.aec.game
    assert text == engine.view(1) and text != engine.render()
    # Redealing every card seat 1 cannot see leaves its render unchanged.
    engine.shuffle_hidden(1, np.random.default_rng(0))
    assert env.render() == text


def test_human_render_prints_the_seat_view_only(capsys):
    env = make_single_agent("neu", seat=0, opponents="random", render_mode="human")
    env.reset(seed=0)
    env.step(int(np.flatnonzero(env.action_masks())[0]))
    printed = capsys.readouterr().out
    assert env.aec.game.view(0) in printed and env.aec.game.render() not in printed

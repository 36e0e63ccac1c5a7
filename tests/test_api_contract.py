"""The env contract, held for every game: the one home of PettingZoo's own api/seed/render
tests, the spaces, the registry, the documentation pages and the shared adapter's behaviour.

Each test is parametrised over every game (and player count where it matters),
so a new game is held to the contract as soon as its shim exists. Game-specific
rules live in tests/test_<game>.py; determinism in tests/test_properties.py;
information leaks in tests/test_leaks.py; golden playthroughs in
tests/test_playthroughs.py.
"""

from __future__ import annotations

import copy
import pickle
import random
import warnings

import numpy as np
import pettingzoo
import pytest
from gymnasium import spaces

import envs
from tests.conftest import GAME_COUNTS, GAMES, player_counts
from tests.helpers import play_random_game, random_action



@pytest.mark.parametrize("game", GAMES)
def test_constructors_and_registry(game):
    mod = envs.module(game)
    engine = mod.raw_env.engine_cls
    e = mod.env()
    assert e.possible_agents == [f"player_{i}" for i in range(engine.default_players)]
    assert isinstance(envs.make(game), mod.raw_env)
    assert isinstance(mod.raw_env(), pettingzoo.AECEnv)
    assert mod.__doc__ and len(mod.__doc__) > 500, "the shim docstring is the env's documentation page"
    for section in ("Action space", "Observation", "Rewards", "Rule options", "[D]", "Version history"):
        assert section in mod.__doc__, f"{game}_v0 docstring lacks a {section!r} section"
    made = pettingzoo.make("aec", f"cardzoo/{game}-v0", num_players=engine.max_players)
    assert made.possible_agents[-1] == f"player_{engine.max_players - 1}"
    parallel = pettingzoo.make("parallel", f"cardzoo/{game}-v0", num_players=engine.max_players)
    assert isinstance(parallel, pettingzoo.ParallelEnv) and parallel.possible_agents == made.possible_agents


@pytest.mark.parametrize("game,n", GAME_COUNTS)
def test_pettingzoo_api_seed_and_render_tests(game, n):
    from pettingzoo.test import api_test, render_test, seed_test

    mod = envs.module(game)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(mod.env(num_players=n), num_cycles=60)
        seed_test(lambda: mod.env(num_players=n), num_cycles=60)
        render_test(lambda render_mode=None: mod.env(num_players=n, render_mode=render_mode))


@pytest.mark.parametrize("game", GAMES)
def test_bad_options_name_what_is_wrong(game):
    mod = envs.module(game)
    engine = mod.raw_env.engine_cls
    with pytest.raises(ValueError, match=f"{engine.min_players}.*{engine.max_players}"):
        mod.env(num_players=engine.max_players + 1)
    with pytest.raises(ValueError, match="num_players"):
        mod.env(num_players="four")
    with pytest.raises(ValueError, match="no_such_rule"):
        mod.env(no_such_rule=3)
    with pytest.raises(ValueError, match="render_mode"):
        mod.env(render_mode="video")
    with pytest.raises(ValueError, match="unknown game"):
        envs.make("chess")


@pytest.mark.parametrize("game,n", GAME_COUNTS)
def test_spaces_are_fixed_objects(game, n):
    e = envs.make(game, num_players=n)
    e.reset(seed=0)
    for a in e.possible_agents:
        obs_space = e.observation_space(a)
        assert obs_space is e.observation_space(a)
        assert e.action_space(a) is e.action_space(a)
        assert isinstance(obs_space, spaces.Dict)
        assert obs_space["observation"].dtype == np.float32 and len(obs_space["observation"].shape) == 1
        assert obs_space["action_mask"].dtype == np.int8
        assert isinstance(e.action_space(a), spaces.Discrete)
        assert obs_space["action_mask"].shape == (e.action_space(a).n,)


@pytest.mark.parametrize("game,n", GAME_COUNTS)
def test_masks_state_and_observations_over_a_game(game, n):
    e = envs.make(game, num_players=n)
    state_size = e.state_space.shape[0]
    for agent, obs, action in play_random_game(e, seed=n):
        assert e.observation_space(agent).contains(obs)
        if action is None:
            continue
        assert obs["action_mask"].any(), f"{agent} must act with an all-zeros mask"
        for other in e.agents:
            if other != agent:
                assert not e.observe(other)["action_mask"].any(), f"{other} has moves while {agent} acts"
        state = e.state()
        assert state.dtype == np.float32 and state.shape == (state_size,)
    # The game ended: final ranks and scores reached every agent's infos.


@pytest.mark.parametrize("game,n", GAME_COUNTS)
def test_rewards_zero_sum_and_final_infos(game, n):
    e = envs.make(game, num_players=n)
    e.reset(seed=3)
    rnd = random.Random(3)
    totals = {a: 0.0 for a in e.possible_agents}
    final = None
    for agent in e.agent_iter():
        obs, _, term, trunc, info = e.last()
        if any(info["final_ranks"]):
            assert term, "final ranks before the game's end"
            final = info
        e.step(None if term or trunc else random_action(obs, rnd))
        assert abs(sum(e.rewards.values())) < 1e-9
        for a, r in e.rewards.items():
            totals[a] += r
    assert final is not None, "no agent saw final_ranks in its infos"
    ranks, scores = final["final_ranks"], final["final_scores"]
    assert len(ranks) == len(scores) == n
    assert min(ranks) == 1 and max(ranks) <= n
    assert list(scores) == e.unwrapped.game.scores
    top = max(range(n), key=lambda s: (scores[s], -ranks[s]))
    assert ranks[top] == 1
    readable = e.unwrapped.last_event
    assert readable["final_ranks"] == dict(zip(e.possible_agents, ranks))
    assert abs(sum(totals.values())) < 1e-6


@pytest.mark.parametrize("game", GAMES)
def test_action_names_round_trip(game):
    e = envs.make(game)
    for agent, obs, action in play_random_game(e, seed=5, max_steps=10_000):
        if action is None:
            continue
        u = e.unwrapped
        for a in np.flatnonzero(obs["action_mask"]):
            name = u.action_name(int(a))
            assert isinstance(name, str) and name
            assert u.action_from_name(name) == a
    with pytest.raises(ValueError):
        e.reset(seed=0)
        e.unwrapped.action_from_name("no such move")


@pytest.mark.parametrize("game", GAMES)
def test_render_modes(game, capsys):
    e = envs.make(game, render_mode="ansi")
    e.reset(seed=0)
    text = e.render()
    assert isinstance(text, str) and "player_0" in text
    h = envs.make(game, render_mode="human")
    h.reset(seed=0)
    assert h.render() is None
    assert "player_0" in capsys.readouterr().out


@pytest.mark.parametrize("game", GAMES)
def test_bad_actions(game):
    raw = envs.make_raw(game)
    with pytest.raises(RuntimeError, match="reset"):
        raw.step(0)
    raw.reset(seed=0)
    n = raw.action_space(raw.agent_selection).n
    with pytest.raises(ValueError, match="outside"):
        raw.step(n)
    with pytest.raises(ValueError, match="outside"):
        raw.step(-1)
    for junk in (1.5, "0", None, [0], float("nan"), True):
        with pytest.raises(TypeError, match="integer"):
            raw.step(junk)
    mask = raw.observe(raw.agent_selection)["action_mask"]
    illegal = np.flatnonzero(mask == 0)
    if illegal.size:
        with pytest.raises(ValueError, match="illegal"):
            raw.step(int(illegal[0]))
        # raw_env refused it: nothing changed.
        assert np.array_equal(raw.observe(raw.agent_selection)["action_mask"], mask)


@pytest.mark.parametrize("game", GAMES)
def test_env_penalises_illegal_moves_pettingzoo_style(game):
    e = envs.make(game)
    e.reset(seed=1)
    offender = e.agent_selection
    mask = e.observe(offender)["action_mask"]
    illegal = np.flatnonzero(mask == 0)
    if not illegal.size:
        pytest.skip("every action legal at the first step")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e.step(int(illegal[0]))
    assert all(e.terminations.values())
    assert e.rewards[offender] == -1.0
    assert all(r == 0 for a, r in e.rewards.items() if a != offender)
    seat = e.possible_agents.index(offender)
    assert all(info["illegal_move"] == seat for info in e.infos.values())
    assert e.unwrapped.last_event == {"illegal_move": offender}
    for agent in e.agent_iter():
        with pytest.raises(ValueError, match="None"):
            e.step(0)
        e.step(None)
    assert e.agents == []


@pytest.mark.parametrize("game", GAMES)
def test_calls_before_reset_say_so(game):
    raw = envs.make_raw(game, render_mode="ansi")
    for call in (raw.last, raw.state, lambda: raw.observe("player_0"), raw.render):
        with pytest.raises(RuntimeError, match="reset"):
            call()


# -- a refused call changes nothing ---------------------------------------------


def _card_token(game: str) -> dict[int, object]:
    """A name in the game's deal notation for every card id (found by asking the game's own parser)."""
    mod = envs.module(game).raw_env.engine_cls.__module__
    engine_module = __import__(mod, fromlist=["parse_card"])
    names = [str(k) for k in range(-10, 102)] + ["W"]
    for attr in ("CARD_NAMES", "KIND_NAMES"):
        names += [str(x) for x in getattr(engine_module, attr, ())]
    out: dict[int, object] = {}
    for t in names:
        try:
            out.setdefault(engine_module.parse_card(t), t)
        except (KeyError, ValueError, TypeError):
            pass
    return out


def _valid_deal(game: str, n: int) -> dict:
    """The first round of a seeded game, written as a stacked deal."""
    env = envs.make_raw(game, num_players=n)
    env.reset(seed=3)
    token = _card_token(game)
    places = env.unwrapped.game.card_places()
    return {"hands": [[token[c] for c in places[f"hand {s}"]] for s in range(n)]}


def _bad_deals(game: str, n: int) -> dict[str, object]:
    good = _valid_deal(game, n)
    hands = good["hands"]
    first = hands[0][0]
    extra_key = {"not_for_me": "draw_pile", "deadfall": "set_aside", "neu": "draw_pile", "not_your_mas_jong": "draw_pile"}[game]
    return {
        "not a dict": [hands],
        "a string": "hands",
        "unknown key": {**good, "jokers": []},
        "no hands": {},
        "hands not a list": {"hands": "all of them"},
        "one hand missing": {"hands": hands[:-1]},
        "a hand not a list": {"hands": ["x" * len(hands[0])] + hands[1:]},
        "a hand one card short": {"hands": [hands[0][:-1]] + hands[1:]},
        "a hand one card long": {"hands": [hands[0] + [first]] + hands[1:]},
        "unknown card": {"hands": [["Zebra 99"] + hands[0][1:]] + hands[1:]},
        "unhashable card": {"hands": [[[1]] + hands[0][1:]] + hands[1:]},
        "more copies than the deck": {"hands": [[first] * len(h) for h in hands]},
        f"bad {extra_key}": {**good, extra_key: ["Zebra 99"]},
        f"{extra_key} not a list": {**good, extra_key: 7},
    }


def _snapshot(env) -> tuple:
    seats = env.possible_agents
    return (
        env.agent_selection if env._has_reset else None,
        [env.observe(a)["observation"].tobytes() for a in seats] if env._has_reset else None,
        [env.observe(a)["action_mask"].tobytes() for a in seats] if env._has_reset else None,
        env.state().tobytes() if env._has_reset else None,
        copy.deepcopy(env.__dict__.get("rewards")),
        copy.deepcopy(env.__dict__.get("_cumulative_rewards")),
        copy.deepcopy(env.__dict__.get("infos")),
        copy.deepcopy(env.__dict__.get("terminations")),
        list(env.__dict__.get("agents", [])),
        env._has_reset,
    )


def _play_on(env, steps: int = 40) -> list:
    """What the env does from here: a few legal steps, then a new unseeded game."""
    rnd = random.Random(0)
    seen = []
    for _ in range(2):
        for _, agent in zip(range(steps), env.agent_iter()):
            obs, r, term, trunc, _ = env.last()
            a = None if term or trunc else random_action(obs, rnd)
            seen.append((agent, a, r, obs["observation"].tobytes()))
            env.step(a)
        env.reset()
    return seen


@pytest.mark.parametrize("game,n", [(g, n) for g in GAMES for n in sorted({player_counts(g)[0], player_counts(g)[-1]})])
def test_a_refused_deal_leaves_the_env_as_it_was(game, n):
    for name, deal in _bad_deals(game, n).items():
        for moves in (0, 7):  # before any reset, and in the middle of a game
            env = envs.make_raw(game, num_players=n)
            if moves:
                env.reset(seed=1)
                rnd = random.Random(1)
                for _ in range(moves):
                    obs, *_ = env.last()
                    env.step(random_action(obs, rnd))
            before = _snapshot(env)
            twin = copy.deepcopy(env)
            for seed in (None, 5):
                with pytest.raises(ValueError, match=game):
                    env.reset(seed=seed, options={"deal": deal})
                assert _snapshot(env) == before, f"{game} {n}p, {name}, seed {seed}: the refused reset changed the env"
            if moves:
                assert _play_on(env) == _play_on(twin), f"{game} {n}p, {name}: the env plays on differently"
            else:
                with pytest.raises(RuntimeError, match="reset"):
                    env.last()
    # The base deal itself is accepted, so each bad one is bad for the reason it names.
    envs.make_raw(game, num_players=n).reset(seed=0, options={"deal": _valid_deal(game, n)})


@pytest.mark.parametrize("game", GAMES)
def test_a_refused_action_changes_nothing(game):
    env = envs.make_raw(game)
    rnd = random.Random(0)
    refused = 0
    for seed in range(20):
        env.reset(seed=seed)
        for agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            illegal = np.flatnonzero(obs["action_mask"] == 0)
            if any(env.rewards.values()) and illegal.size:
                # Right after a scoring step, when the rewards of that step are still to be read.
                before = _snapshot(env)
                with pytest.raises(ValueError, match="illegal"):
                    env.step(int(illegal[0]))
                assert _snapshot(env) == before, f"{game} seed {seed}: a refused action changed the env"
                refused += 1
            env.step(random_action(obs, rnd))
        if refused >= 3:
            return
    raise AssertionError(f"{game}: only {refused} scoring steps followed by a refusable action in 20 games")


@pytest.mark.parametrize("game", GAMES)
def test_unknown_agents_are_named_as_such(game):
    env = envs.make_raw(game)
    env.reset(seed=0)
    for bad in ("player_99", "", 0, None, ("player_0",), ["player_0"]):
        calls = [env.observe, env.action_mask, env.seat_of, env.observation_space, env.action_space]
        if bad is not None:  # None names the agent to act in these two
            calls += [lambda a: env.action_name(0, a), lambda a: env.action_from_name("x", a)]
        for call in calls:
            with pytest.raises(ValueError, match=r"unknown agent .*player_0"):
                call(bad)
    assert [env.seat_of(a) for a in env.possible_agents] == list(range(len(env.possible_agents)))
    for agent in env.agent_iter():  # play to the end: every agent leaves
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0]))
    with pytest.raises(ValueError, match="reset"):
        env.last()


def test_each_game_module_is_an_attribute_of_envs_after_a_plain_import():
    """As the docs write it: `import envs` then `envs.neu_v0.env(...)` and `help(envs.neu_v0)`."""
    import subprocess
    import sys

    code = ("import envs\n"
            "for g in envs.GAMES:\n"
            "    m = getattr(envs, g + '_v0')\n"
            "    assert m.__name__ == 'envs.' + g + '_v0' and callable(m.env) and callable(m.parallel_env)\n"
            "try:\n    envs.nothing_v0\nexcept AttributeError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "module 'envs' has no attribute 'nothing_v0'"

"""`envs.info`: every game's facts without an env, checked against a real env."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import envs

PLAYERS = {"not_for_me": (2, 5), "deadfall": (2, 7), "neu": (2, 7), "not_your_mas_jong": (3, 4)}


@pytest.mark.parametrize("game", envs.available_games())
@pytest.mark.parametrize("end", [0, 1])
def test_sizes_and_bounds_equal_the_env_spaces(game, end):
    n = PLAYERS[game][end]
    facts = envs.info(game, num_players=n)
    env = envs.make(game, num_players=n)
    agent = env.possible_agents[0]
    assert facts.name == game and facts.num_players == n == len(env.possible_agents)
    assert env.action_space(agent).n == facts.num_actions
    assert env.observation_space(agent)["observation"].shape == (facts.obs_size,)
    assert env.observation_space(agent)["action_mask"].shape == (facts.num_actions,)
    assert env.unwrapped.state_space.shape == (facts.state_size,)
    assert facts.max_steps == env.unwrapped.game.max_game_length
    assert facts.rules == env.unwrapped.game.options
    assert facts.action_names == tuple(env.unwrapped.action_name(a, agent) for a in range(facts.num_actions))


def test_rule_options_change_the_facts_and_bad_ones_are_refused():
    assert envs.info("not_for_me", rounds=2).rules["rounds"] == 2
    assert envs.info("not_for_me", rounds=2).max_steps < envs.info("not_for_me", rounds=4).max_steps
    with pytest.raises(ValueError, match="unknown rule option"):
        envs.info("neu", rounds=2)


def test_unknown_game_is_one_line_naming_the_games():
    with pytest.raises(ValueError) as e:
        envs.info("chess")
    assert "\n" not in str(e.value)
    assert all(g in str(e.value) for g in envs.available_games())


@pytest.mark.parametrize("game", envs.available_games())
def test_layout_names_the_observation_as_the_engine_fills_it(game):
    facts = envs.info(game)
    parts = list(facts.obs_layout.values())
    # The parts cover the observation in order, without gaps; the last holds one block per seat.
    assert parts[0].start == 0 and parts[-1].stop == facts.obs_size
    assert all(a.stop == b.start and a.stop > a.start for a, b in zip(parts, parts[1:]))
    assert list(facts.obs_layout)[-1] == "seats"
    seats = facts.obs_layout["seats"]
    assert seats.stop - seats.start == facts.seat_block * facts.num_players
    block = list(facts.seat_layout.values())
    assert block[0].start == 0 and block[-1].stop == facts.seat_block
    assert all(a.stop == b.start for a, b in zip(block, block[1:]))
    # Played through: the "hand" part is the seat's own card counts, and where a seat block has
    # "to_act", exactly the seat to act (seat-relative) has it.
    env = envs.make(game, num_players=facts.num_players)
    env.reset(seed=3)
    game_engine = env.unwrapped.game
    rng = np.random.default_rng(0)
    for agent in env.agent_iter(200):
        obs, _, term, trunc, _ = env.last()
        seat = env.possible_agents.index(agent)
        vec = obs["observation"]
        assert list(vec[facts.obs_layout["hand"]]) == list(game_engine.hands[seat])
        if "to_act" in facts.seat_layout and not term:
            to_act = vec[seats].reshape(facts.num_players, facts.seat_block)[:, facts.seat_layout["to_act"]]
            assert to_act.ravel().tolist() == [1.0 if r == 0 else 0.0 for r in range(facts.num_players)]
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))


@pytest.mark.parametrize("game", envs.available_games())
def test_card_names_are_the_notation_of_stacked_deals(game):
    facts = envs.info(game)
    engine_module = importlib.import_module(f"envs.{game}")
    assert facts.card_names, game
    for card, name in facts.card_names.items():
        assert engine_module.parse_card(name) == card
    assert set(facts.card_names) == set(envs.engine_class(game).deck or engine_module.make_deck(4))


def test_secret_actions_look_the_same_to_the_others():
    """A secret action's public name must not tell which one it was, nor be taken for another move."""
    for game in envs.available_games():
        facts = envs.info(game)
        assert (game == "not_your_mas_jong") == bool(facts.secret_actions), game
    facts = envs.info("not_your_mas_jong")
    env = envs.make("not_your_mas_jong")
    env.reset(seed=0)
    public = {a: env.unwrapped.game.public_action_name(a, 1) for a in range(facts.num_actions)}
    secret_names = {public[a] for a in facts.secret_actions}
    assert len(secret_names) == 1
    assert secret_names.isdisjoint(public[a] for a in range(facts.num_actions) if a not in facts.secret_actions)

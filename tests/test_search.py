"""Search agents (`agents.search`): they play whole games through every runner, see only their
seat's information state, and are deterministic for a seed. Strength is measured by
`experiments.search_ladder`, not here."""

from __future__ import annotations

import random

import numpy as np
import pytest

import envs
from agents import make_agent
from agents.base import can_act_batch
from agents.search import PIMCAgent, parse_search_options
from agents.search.evaluators import BatchedEvaluator, ReadableEvaluator, make_evaluator
from agents.spec import spec_label
from envs.belief import sample_world
from experiments.tournament.match import play_game
from tests.conftest import GAMES


@pytest.mark.parametrize("game", GAMES)
def test_pimc_plays_a_whole_game(game):
    env = envs.make(game, num_players=4)
    bots = [make_agent("pimc:worlds=1", game, 4, seed=0)] + [make_agent("heuristic", game, 4, seed=s) for s in (1, 2, 3)]
    record = play_game(env, bots, seed=3)
    assert len(record["ranks"]) == 4 and record["forfeit"] is None
    assert bots[0].steps > 0  # it searched


def test_pimc_cheat_plays_through_the_tournament_path():
    env = envs.make("neu", num_players=4)
    bots = [make_agent("pimc_cheat:worlds=2", "neu", 4, seed=0)] + [make_agent("heuristic", "neu", 4, seed=s) for s in (1, 2, 3)]
    play_game(env, bots, seed=1)
    assert bots[0].steps > 0


def _decisions(game: str, seed: int, count: int):
    """Engines at decisions with a choice, from a random game."""
    e = envs.engine_class(game)(4)
    e.reset(np.random.default_rng(seed))
    rnd = random.Random(seed)
    found = 0
    while not e.game_over and found < count:
        legal = np.flatnonzero(e.legal_mask())
        if legal.size > 1 and rnd.random() < 0.3:
            found += 1
            yield e
        e.step(int(rnd.choice(legal)))


def test_pimc_is_deterministic_for_a_seed():
    e = next(_decisions("neu", 0, 1))
    seat = e.current_player
    moves = set()
    for _ in range(2):
        agent = make_agent("pimc:worlds=3", "neu", 4, seed=9)
        agent.inform(e.information_state(seat))
        moves.add(agent.act({"observation": e.observe(seat), "action_mask": e.legal_mask()}))
    assert len(moves) == 1


def test_common_random_numbers_score_equal_options_equally():
    """The same move listed twice gets the same values: the same worlds, chance streams and seeds."""
    e = next(_decisions("not_your_mas_jong", 1, 1))
    seat = e.current_player
    info = e.information_state(seat)
    worlds = [sample_world(info, np.random.default_rng(k)) for k in range(4)]
    a = int(np.flatnonzero(e.legal_mask())[0])
    for kind in ("batched", "readable"):
        evaluator = make_evaluator(kind, "not_your_mas_jong", 4)
        values = evaluator.evaluate(worlds, seat, [a, a], [11, 12, 13, 14])
        assert np.array_equal(values[:, 0], values[:, 1]) and evaluator.steps > 0


def test_pimc_needs_its_information_state():
    e = next(_decisions("neu", 0, 1))
    agent = PIMCAgent("neu", 4, seed=0)
    with pytest.raises(ValueError, match="inform"):
        agent.act({"observation": e.observe(e.current_player), "action_mask": e.legal_mask()})


def test_pimc_in_the_single_agent_env():
    env = envs.make_single_agent("neu", 4, seat=0, opponents=make_agent("pimc:worlds=1", "neu", 4, seed=1))
    obs, info = env.reset(seed=2)
    for _ in range(500):
        legal = np.flatnonzero(env.action_masks())
        obs, r, term, trunc, info = env.step(int(legal[0]))
        if term or trunc:
            break
    assert term or trunc


def test_specs_and_their_errors():
    assert spec_label("pimc:worlds=8") == "pimc:worlds=8"
    agent = make_agent("pimc:worlds=8,horizon=game", "deadfall", 4, seed=0)
    assert (agent.worlds, agent.horizon) == (8, "game")
    assert not can_act_batch(agent)
    assert isinstance(agent.evaluator, BatchedEvaluator)
    assert isinstance(make_agent("pimc:evaluator=readable", "deadfall", 4, seed=0).evaluator, ReadableEvaluator)
    for bad, words in [("worlds=0", "whole number"), ("horizon=week", "horizon"), ("depth=3", "valid options"),
                       ("evaluator=gpu", "evaluator must be one of batched, readable")]:
        with pytest.raises(ValueError, match=words):
            parse_search_options(bad)


def test_the_ladder_command_writes_a_new_record_each_run(tmp_path, capsys):
    from experiments import search_ladder

    args = ["--game", "neu", "--agent", "pimc:worlds=1", "--deals", "2", "--seed", "5", "--out", str(tmp_path)]
    first = search_ladder.main(args)
    search_ladder.main(args)
    assert len(list(tmp_path.glob("*.json"))) == 2  # the second run did not replace the first
    assert first["deals"] == 2 and first["decisions"] > 0 and "pimc:worlds=1 - heuristic" in capsys.readouterr().out


def test_random_rollouts_keep_common_random_numbers():
    """With a policy that draws per row (the random agent), the same move twice scores the same."""
    e = next(_decisions("deadfall", 2, 1))
    seat = e.current_player
    info = e.information_state(seat)
    worlds = [sample_world(info, np.random.default_rng(k)) for k in range(3)]
    a = int(np.flatnonzero(e.legal_mask())[0])
    for kind in ("batched", "readable"):
        values = make_evaluator(kind, "deadfall", 4, rollout="random", horizon="game").evaluate(worlds, seat, [a, a], [1, 2, 3])
        assert np.array_equal(values[:, 0], values[:, 1])


def test_search_speed_prints_a_row_per_game(capsys):
    from experiments.speed.search import print_search_speed

    print_search_speed(["neu"], repeats=1, count=2)
    row = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| neu |")]
    assert len(row) == 1 and row[0].endswith("x |")  # Neu has the readable search's ratio

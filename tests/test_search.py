"""Search agents (`agents.search`): they play whole games through every runner, see only their
seat's information state, and are deterministic for a seed. Strength is measured by
`experiments.search_ladder`, not here."""

from __future__ import annotations

import json
import os
import random
import time

import numpy as np
import pytest

import envs
from agents import make_agent
from agents.base import can_act_batch
from agents.search import PIMCAgent, parse_search_options
from agents.search.options import MAX_WORLDS
from agents.search.evaluators import BatchedEvaluator, ReadableEvaluator, make_evaluator
from agents.spec import spec_label
from envs.belief import sample_world
from experiments.tournament.match import play_game
from tests.conftest import GAME_COUNTS, GAMES


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
    assert len(first["differences"]) == 2 and first["difference"]["mean"] == pytest.approx(np.mean(first["differences"]))
    # the record says what ran: the spec's worlds and the game's own bound (Neu's z=1)
    assert first["settings"]["worlds"] == 1 and first["settings"]["z"] == 1.0 and first["settings"]["choice"] == "safe"
    assert json.loads(next(tmp_path.glob("*.json")).read_text())["settings"] == first["settings"]


def test_the_ladder_names_its_record_safely_when_the_spec_holds_a_path(tmp_path):
    from experiments import search_ladder

    spec = f"pimc:worlds=1,rollout=ppo:{os.path.abspath('agents/checkpoints/neu_2p.pt')}"
    search_ladder.main(["--game", "neu", "--players", "2", "--agent", spec, "--deals", "2", "--out", str(tmp_path / "rec"),
                        "--quiet"])
    [record] = list((tmp_path / "rec").iterdir())  # one file, in --out itself, whatever the spec's slashes
    assert record.suffix == ".json" and json.loads(record.read_text())["agent"] == spec


def test_the_ladder_can_seat_the_agent_in_every_seat_of_a_deal():
    """--seats all plays each deal with the agent in each seat in turn: the baseline against itself
    differs by exactly 0 in every deal; random takes every seat (about n times the decisions of
    one seat a deal) and loses."""
    from experiments.search_ladder import ladder

    same = ladder("deadfall", "heuristic", 3, 7, num_players=3, seats="all")
    assert same["differences"] == [0.0, 0.0, 0.0] and same["seats"] == "all"
    one = ladder("deadfall", "random", 4, 7, num_players=3, seats="one")
    every = ladder("deadfall", "random", 4, 7, num_players=3, seats="all")
    assert every["decisions"] > 2 * one["decisions"]
    assert every["difference"]["mean"] < 0 and len(every["differences"]) == 4


def test_the_ladder_times_the_first_decision_apart():
    """The first decision with a choice pays for one-time loading: it is recorded apart, and the
    per-decision times are those of the rest (a first move that sleeps 0.2 s shows only there)."""
    from experiments.search_ladder import Timed

    class SlowStart:
        def __init__(self):
            self.inner, self.choices = make_agent("heuristic", "neu", 4, seed=0), 0

        def act(self, observation):
            if np.count_nonzero(observation["action_mask"]) > 1:
                self.choices += 1
                if self.choices == 1:
                    time.sleep(0.2)
            return self.inner.act(observation)

    timed = Timed(SlowStart())
    play_game(envs.make("neu", num_players=4), [timed] + [make_agent("heuristic", "neu", 4, seed=s) for s in (1, 2, 3)], seed=3)
    assert timed.first is not None and timed.first[0] >= 0.2
    assert timed.decisions == timed.agent.choices - 1 > 0 and timed.seconds < 0.2


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
    assert len(row) == 1 and len(row[0].split("|")) == 13 and "x |" in row[0]  # ten columns, the batched/readable ratio among them


# ---- pimc's move choice: the policy's move stands unless another is clearly better ----

class NoiseEvaluator:
    """A stand-in evaluator: every move's value in every world is noise around ``means[move]``
    (drawn from the world's seed), and it counts its play-outs per move."""

    def __init__(self, means=None, spread=1.0):
        self.means, self.spread, self.steps, self.played = dict(means or {}), spread, 0, {}

    def evaluate(self, worlds, seat, first_moves, seeds=None):
        out = np.zeros((len(worlds), len(first_moves), 4))
        for w, seed in enumerate(seeds):
            rng = np.random.default_rng(int(seed))
            for m, move in enumerate(first_moves):
                noise = rng.normal(0, self.spread)  # a fresh draw per move: no common random numbers help
                out[w, m, seat] = self.means.get(int(move), 0.0) + noise
                self.played[int(move)] = self.played.get(int(move), 0) + 1
        return out


def _wide_decision(seed=4):
    """A Not For Me decision with many legal moves, and its observation."""
    for e in _decisions("not_for_me", seed, 40):
        if e.legal_mask().sum() >= 6:
            seat = e.current_player
            return e, {"observation": e.observe(seat), "action_mask": e.legal_mask()}
    raise AssertionError("no wide decision")


def _moves(choice, means=None, agents=30, worlds=8):
    e, observation = _wide_decision()
    out = []
    for k in range(agents):
        agent = PIMCAgent("not_for_me", 4, seed=k, worlds=worlds, choice=choice)
        agent.evaluator = NoiseEvaluator(means)
        agent.inform(e.information_state(e.current_player))
        out.append(agent.act(observation))
    return out, int(agent.policy.act(observation)), agent


def test_noise_alone_moves_max_off_the_policys_move_but_not_safe():
    """Every move is worth the same: the best total is a lucky move (the winner's curse), the
    safe rule keeps the policy's move."""
    maxed, own, _ = _moves("max", agents=40)
    safe, _, _ = _moves("safe", agents=40)
    assert sum(m != own for m in maxed) >= 28, maxed
    assert sum(m != own for m in safe) <= 6, safe  # a one-sided 95% bound: about 2 of 40


def test_safe_takes_a_clearly_better_move_and_spends_the_budget_on_the_doubtful():
    e, observation = _wide_decision()
    legal = np.flatnonzero(observation["action_mask"])
    own = int(PIMCAgent("not_for_me", 4, seed=0).policy.act(observation))
    better = int(next(a for a in legal if a != own))
    worse = [int(a) for a in legal if a not in (own, better)]
    means = {better: 1.5, **{a: -3.0 for a in worse}}
    moves, _, agent = _moves("safe", means, agents=5)
    assert set(moves) == {better}
    played = agent.evaluator.played
    assert sum(played.values()) <= 8 * legal.size + 2 * legal.size  # about worlds x moves play-outs
    assert played[own] == played[better] > max(played[a] for a in worse)  # the survivors got the most worlds
    values = agent.option_values(observation)
    assert np.isnan(values[observation["action_mask"] == 0]).all() and np.isfinite(values[legal]).all()
    assert values[better] > values[own] > max(values[a] for a in worse)


def test_max_reproduces_the_best_total():
    e, observation = _wide_decision()
    legal = np.flatnonzero(observation["action_mask"])
    means = {int(a): 1.0 * k for k, a in enumerate(legal)}
    moves, _, _ = _moves("max", means, agents=3, worlds=64)
    assert set(moves) == {int(legal[-1])}


class BusyEvaluator(NoiseEvaluator):
    """Burns CPU as the batched evaluator does: about a millisecond a call (a play-out's length of
    steps), plus a little per play-out."""

    def evaluate(self, worlds, seat, first_moves, seeds=None):
        end = time.thread_time() + 1e-3 + 2e-5 * len(worlds) * len(first_moves)
        while time.thread_time() < end:
            pass
        return super().evaluate(worlds, seat, first_moves, seeds)


@pytest.mark.parametrize("choice", ["safe", "max"])
def test_an_ms_budget_bounds_the_decision(choice):
    e, observation = _wide_decision()
    spent = {}
    for ms in (10, 40):
        agent = make_agent(f"pimc:ms={ms},choice={choice}", "not_for_me", 4, seed=0)
        assert agent.worlds == MAX_WORLDS  # the time alone bounds it
        agent.evaluator = BusyEvaluator()
        agent.inform(e.information_state(e.current_player))
        start = time.thread_time()
        agent.act(observation)
        seconds = time.thread_time() - start
        assert seconds < ms / 1000 + 0.008, (ms, seconds)  # the last look at the clock, and a round's first play-outs
        spent[ms] = sum(agent.evaluator.played.values())
    assert spent[40] > 2 * spent[10]


def test_option_values_and_action_probs():
    e, observation = _wide_decision()
    legal = observation["action_mask"] != 0
    for spec in ("pimc:worlds=4", "pimc:worlds=4,choice=max", "ismcts:iterations=24", "pimc_cheat:worlds=2"):
        agent = make_agent(spec, "not_for_me", 4, seed=1)
        agent.inform(e.information_state(e.current_player))
        if spec.startswith("pimc_cheat"):
            agent.cheat_inform(e)
        move = agent.act(observation)
        values, probs = agent.option_values(observation), agent.action_probs(observation)
        assert values.shape == probs.shape == legal.shape and np.isnan(values[~legal]).all()
        assert np.isfinite(values[move]) and probs[move] == 1.0 and probs.sum() == 1.0
        soft = agent.action_probs(observation, temperature=1.0)
        assert np.isclose(soft.sum(), 1.0) and (soft[~legal] == 0).all() and soft[np.nanargmax(values)] == soft.max()
    # Asked first, before act: it decides then, as act would.
    first, second = (make_agent("pimc:worlds=4", "not_for_me", 4, seed=3) for _ in range(2))
    for a in (first, second):
        a.inform(e.information_state(e.current_player))
    assert np.argmax(first.action_probs(observation)) == second.act(observation)
    # A forced move: no search, no values.
    forced = {"observation": observation["observation"], "action_mask": np.eye(legal.size, dtype=np.int8)[move]}
    assert agent.act(forced) == move and np.isnan(agent.option_values(forced)).all()
    assert agent.action_probs(forced)[move] == 1.0


def test_search_options_and_their_errors():
    agent = make_agent("pimc:worlds=16,choice=max,z=2", "neu", 4, seed=0)
    assert (agent.worlds, agent.choice, agent.z, agent.ms) == (16, "max", 2.0, None)
    assert make_agent("pimc", "neu", 4).choice == "safe"
    # the defaults, and a game's own (GAME_DEFAULTS) where the spec leaves them out
    assert (make_agent("pimc", "deadfall", 4).worlds, make_agent("pimc", "deadfall", 4).z) == (256, 1.645)
    assert (make_agent("pimc", "not_for_me", 4).worlds, make_agent("pimc", "not_for_me", 4).z) == (32, 1.645)
    assert (make_agent("pimc", "not_your_mas_jong", 3).worlds, make_agent("pimc", "not_your_mas_jong", 3).z) == (32, 1.645)
    assert (make_agent("pimc", "not_your_mas_jong", 4).worlds) == 32
    assert (make_agent("pimc", "neu", 4).worlds, make_agent("pimc", "neu", 4).z) == (256, 1.0)
    assert (make_agent("pimc:worlds=8,z=1.645", "neu", 4).worlds, make_agent("pimc:z=2", "neu", 4).z) == (8, 2.0)
    assert make_agent("pimc:ms=20", "neu", 4).worlds == MAX_WORLDS
    tree = make_agent("ismcts:iterations=32,c=1.5,batch=4,horizon=game", "neu", 4, seed=0)
    assert (tree.iterations, tree.c, tree.batch, tree.horizon) == (32, 1.5, 4, "game")
    assert spec_label("ismcts:iterations=32") == "ismcts:iterations=32"
    for kind, bad, words in [("pimc", "choice=best", "choice must be one of safe, max"), ("pimc", "z=-1", "z must be"),
                             ("pimc", "ms=0", "ms must be a number above 0"), ("pimc", "iterations=3", "valid options"),
                             ("ismcts", "iterations=0", "whole number"), ("ismcts", "c=wide", "c must be"),
                             ("ismcts", "worlds=8", "valid options")]:
        with pytest.raises(ValueError, match=words):
            parse_search_options(bad, kind)
    with pytest.raises(ValueError, match="worlds must be"):
        PIMCAgent("neu", 4, worlds=0)


# ---- ismcts ----

@pytest.mark.parametrize("game, num_players", [(g, n) for g, n in GAME_COUNTS if n <= 4])
def test_ismcts_plays_a_whole_game(game, num_players):
    env = envs.make(game, num_players=num_players)
    bots = [make_agent("ismcts:iterations=6,batch=3", game, num_players, seed=0)]
    bots += [make_agent("heuristic", game, num_players, seed=s) for s in range(1, num_players)]
    record = play_game(env, bots, seed=3)
    assert len(record["ranks"]) == num_players and record["forfeit"] is None
    assert bots[0].steps > 0


def test_ismcts_is_deterministic_and_plays_isolated_as_in_process():
    from experiments.tournament.runner import run_tournament

    e = next(_decisions("deadfall", 0, 1))
    seat = e.current_player
    moves, values = set(), []
    for _ in range(2):
        agent = make_agent("ismcts:iterations=20", "deadfall", 4, seed=9)
        agent.inform(e.information_state(seat))
        view = {"observation": e.observe(seat), "action_mask": e.legal_mask()}
        moves.add(agent.act(view))
        values.append(agent.option_values(view))
    assert len(moves) == 1 and np.array_equal(*values, equal_nan=True)
    agents = ["ismcts:iterations=4,batch=2", "random"]
    here = run_tournament("neu", agents, num_players=2, deals=1, progress=False, engine="aec")
    isolated = run_tournament("neu", agents, num_players=2, deals=1, progress=False, isolate=True)
    assert isolated["records"] == here["records"] and sum(isolated["forfeits"].values()) == 0


def test_the_ladder_command_says_what_is_wrong_in_one_line(capsys):
    from experiments import search_ladder
    from tests.helpers import cli_error_line

    line = cli_error_line(search_ladder.main, ["--game", "neu", "--agent", "pimc:worlds=x"], capsys)
    assert line.startswith("python -m experiments.search_ladder: error: --agent 'pimc:worlds=x'") and "worlds" in line
    assert "--deals must be at least 2" in cli_error_line(search_ladder.main, ["--game", "neu", "--deals", "1"], capsys)
    with pytest.raises(SystemExit):
        search_ladder.main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "usage: python -m experiments.search_ladder" in text and "(default: 910000)" in text and "pimc_cheat" in text

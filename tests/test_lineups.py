"""A tournament table's agents as one compiled policy (`agents.lineups`,
`envs.vector.VectorEnv.play_games`): the records are the Python loop's, game by game, in every
game; tables it cannot compile play from Python; a failure there falls back to the loop."""

from __future__ import annotations

import pytest

import envs
from agents import PPOAgent
from agents.heuristic.neu import NeuHeuristic
from agents.lineups import HEURISTIC, PPO, RANDOM, lineup_kernel
from agents.spec import make_from_spec
from envs.vector.compiling import game_of
from experiments.tournament import run_tournament, vector

GAMES = envs.GAMES


def _both(monkeypatch, game, agents, n=4, deals=12, **kw):
    """The records of the compiled path (checked to have played every batch) and of the loop."""
    calls = []
    compiled = vector._play_compiled

    def spy(*a):
        out = compiled(*a)
        calls.append(out is not None)
        return out

    monkeypatch.setattr(vector, "_play_compiled", spy)
    fast = run_tournament(game, agents, n, deals=deals, seed=7, progress=False, engine="vector", **kw)
    monkeypatch.setattr(vector, "_play_compiled", lambda *a: None)
    slow = run_tournament(game, agents, n, deals=deals, seed=7, progress=False, engine="vector", **kw)
    return calls, fast, slow


@pytest.mark.parametrize("game", GAMES)
def test_a_compiled_table_plays_the_loops_games(game, monkeypatch):
    calls, fast, slow = _both(monkeypatch, game, ["heuristic", "random"])
    assert calls and all(calls)
    assert fast["records"] == slow["records"] and fast["pairwise"] == slow["pairwise"]


@pytest.mark.parametrize("game", GAMES)
def test_a_shipped_network_plays_compiled_beside_the_heuristic_and_random(game, monkeypatch):
    calls, fast, slow = _both(monkeypatch, game, ["ppo", "heuristic", "random"], deals=8)
    assert calls and all(calls)
    assert fast["records"] == slow["records"]


def test_a_network_that_reads_features_and_a_hint_plays_compiled(tmp_path, monkeypatch):
    from tests.test_ppo import tiny, train

    export = tmp_path / "fh.pt"
    train(tiny(tmp_path, run_name="fh", game="not_your_mas_jong", players=4, steps=1, rollout_steps=1, hidden=64,
               features=True, hint=True, export=str(export)))
    bot = PPOAgent.load(export)
    assert bot._features is not None and bot._hinter is not None
    kinds = lineup_kernel([bot, make_from_spec("random", "not_your_mas_jong", 4)], "not_your_mas_jong", 4)[1]
    assert kinds.tolist() == [PPO, RANDOM]
    calls, fast, slow = _both(monkeypatch, "not_your_mas_jong", [f"ppo:{export}", "random"], deals=6)
    assert calls and all(calls)
    assert fast["records"] == slow["records"]


def test_tables_that_do_not_compile_play_from_python():
    game, n = "neu", 4
    heuristic, rand = make_from_spec("heuristic", game, n), make_from_spec("random", game, n)
    assert lineup_kernel([heuristic, rand], game, n)[1].tolist() == [HEURISTIC, RANDOM]
    lowest = make_from_spec("agents.examples:LowestActionAgent", game, n)
    assert lineup_kernel([heuristic, lowest], game, n) is None  # an agent in Python
    sampling = PPOAgent.for_game(game, n, greedy=False)
    assert lineup_kernel([sampling, rand], game, n) is None  # draws from generators the kernel does not keep

    class Bolder(NeuHeuristic):
        attack_weight = 2 * NeuHeuristic.attack_weight

    bold = Bolder(game, n)
    assert lineup_kernel([bold, rand], game, n)[1].tolist() == [HEURISTIC, RANDOM]  # one strategy: its own weights
    assert lineup_kernel([bold, heuristic], game, n) is None  # two strategies in one loop


def test_a_failed_compiled_batch_is_played_again_by_the_loop(monkeypatch):
    seen = []

    def fails(self, rows, kernel, params, limit=20_000):
        seen.append(len(rows))
        return 0  # "the policy could not choose at table 0"

    calls, fast, slow = _both(monkeypatch, "deadfall", ["heuristic", "random"], deals=4)
    monkeypatch.undo()  # the compiled path back, with a loop that always fails
    monkeypatch.setattr(envs.vector.VectorEnv, "play_games", fails)
    again = run_tournament("deadfall", ["heuristic", "random"], 4, deals=4, seed=7, progress=False, engine="vector")
    assert seen and again["records"] == slow["records"]


def test_the_compile_notice_names_the_game_of_a_lineup_loop():
    assert game_of("agents.lineups", "not_your_mas_jong") == "not_your_mas_jong"
    assert game_of("agents.lineups", "_neu") == "neu"
    assert game_of("agents.lineups", "lineup_moves") is None
    assert game_of("envs.vector.deadfall", "step_rows") == "deadfall"


def test_the_cycle_collector_pauses_only_while_batched_records_are_made(monkeypatch):
    """Batched tables' records are made with Python's cycle collector paused (thousands of small
    dicts with no cycle among them), the AEC path's games with it running, and it is running again
    after every run, also one that fails."""
    import gc

    from experiments.tournament import match

    seen = {"batched": [], "aec": []}
    record, play_game = match.game_record, match.play_game

    def spy_record(*a):
        seen["batched"].append(gc.isenabled())
        return record(*a)

    def spy_game(*a, **k):
        seen["aec"].append(gc.isenabled())
        return play_game(*a, **k)

    monkeypatch.setattr(match, "game_record", spy_record)
    monkeypatch.setattr(match, "play_game", spy_game)
    run_tournament("neu", ["heuristic", "random"], 4, deals=3, seed=1, progress=False, engine="vector")
    assert seen["batched"] and not any(seen["batched"]) and gc.isenabled()
    seen["batched"].clear()
    run_tournament("neu", ["heuristic", "random"], 4, deals=3, seed=1, progress=False, engine="aec")
    assert seen["aec"] and all(seen["aec"]) and all(seen["batched"]) and gc.isenabled()
    monkeypatch.setattr(vector, "_play_compiled", lambda *a: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        run_tournament("neu", ["heuristic", "random"], 4, deals=3, seed=1, progress=False, engine="vector")
    assert gc.isenabled()

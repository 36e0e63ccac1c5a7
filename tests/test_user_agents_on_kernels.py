"""A kernel plays only for the code it was compiled from: a user's agent built on a shipped
heuristic plays its own code on the batched engine too (agents/heuristic/batch.py).

Three real user agents, each a different strategy from the heuristic's, play the same
tournament on ``--engine aec`` and ``--engine vector``: the records must be the same game for
game, and the batched run must have called the user's own code."""

from __future__ import annotations

import numpy as np
import pytest

from agents.heuristic import heuristic_class
from agents.heuristic.batch import compiled_strategy
from agents.search.evaluators import BatchedEvaluator
from experiments import tournament as T
from experiments.tournament import AgentSpec

GAMES = ["neu", "deadfall", "not_for_me", "not_your_mas_jong"]
CALLS: dict[str, int] = {}


def last_legal(observation) -> int:
    return int(np.flatnonzero(observation["action_mask"])[-1])


def last_legal_batch(obs, mask, seat, *rows):
    CALLS["batch"] = CALLS.get("batch", 0) + 1
    return (mask.shape[1] - 1 - np.argmax(mask[:, ::-1], axis=1)).astype(np.int64)


def replaced_on_the_instance(game, num_players, seed=None):
    """The shipped heuristic with ``act`` and ``act_batch`` set on the instance."""
    bot = heuristic_class(game)(game, num_players, seed=seed)
    bot.act, bot.act_batch = last_legal, last_legal_batch
    return bot


def replaced_act_only(game, num_players, seed=None):
    """The shipped heuristic with only ``act`` set on the instance: the inherited ``act_batch``
    must then play that ``act``."""
    bot = heuristic_class(game)(game, num_players, seed=seed)
    bot.act = last_legal
    return bot


def own_act_batch(game, num_players, seed=None):
    """A subclass that defines only ``act_batch`` (the shipped move, made row by row and counted)."""

    class Counted(heuristic_class(game)):
        def act_batch(self, obs, mask, seat):
            CALLS["batch"] = CALLS.get("batch", 0) + 1
            return np.array([self.act({"observation": o, "action_mask": m}) for o, m in zip(obs, mask)], np.int64)

    return Counted(game, num_players, seed=seed)


def own_act_and_act_batch(game, num_players, seed=None):
    """A subclass that defines ``act`` and ``act_batch``: another strategy, in both forms."""

    class Last(heuristic_class(game)):
        def act(self, observation):
            return last_legal(observation)

        def act_batch(self, obs, mask, seat):
            return last_legal_batch(obs, mask, seat)

    return Last(game, num_players, seed=seed)


CASES = [replaced_on_the_instance, replaced_act_only, own_act_batch, own_act_and_act_batch]


@pytest.mark.parametrize("factory", CASES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("game", GAMES)
def test_a_user_agent_on_a_shipped_heuristic_plays_its_own_code_on_both_engines(game, factory):
    n = 3 if game == "not_your_mas_jong" else 4
    bot = factory(game, n, seed=0)
    assert not compiled_strategy(bot)
    common = dict(num_players=n, deals=2, seed=5, progress=False)
    agents = [AgentSpec("mine", factory), "heuristic"]
    aec = T.run_tournament(game, agents, engine="aec", **common)
    CALLS.clear()
    vec = T.run_tournament(game, agents, engine="vector", **common)
    assert vec["engine"] == "vector"
    assert vec["records"] == aec["records"] and vec["overall"] == aec["overall"]
    if factory is not replaced_act_only:
        assert CALLS.get("batch", 0) > 0, "the user's act_batch was never called"
    # the shipped heuristic scores otherwise: the user's code made a difference
    shipped = T.run_tournament(game, ["heuristic", "heuristic"], engine="vector", **common)
    assert [r["scores"] for r in shipped["records"]] != [r["scores"] for r in vec["records"]] or factory is own_act_batch


@pytest.mark.parametrize("factory", CASES, ids=lambda f: f.__name__)
def test_search_play_outs_never_run_the_kernel_for_a_user_agent(factory):
    evaluator = BatchedEvaluator("neu", 4, rollout=factory("neu", 4, seed=0))
    assert not evaluator.compiled
    assert BatchedEvaluator("neu", 4, rollout=heuristic_class("neu")("neu", 4, seed=0)).compiled


def test_a_subclass_keeps_the_act_batch_it_defines():
    cls = type(own_act_and_act_batch("neu", 4))
    assert cls.act_batch is not None and cls.play_kernel is None
    assert type(own_act_batch("neu", 4)).play_kernel is None
    bot = replaced_act_only("neu", 4)
    with pytest.raises(ValueError, match="act set on it"):
        bot.play_kernel()

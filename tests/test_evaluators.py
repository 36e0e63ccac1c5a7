"""Evaluators (`agents.search.evaluators`): the batched play-outs give the readable ones' values.

The readable play-outs (`agents.search.rollout`) are the reference: copies of the readable
engines, the heuristic's ``act`` (its definition) or its kernel in lockstep. The batched
evaluator loads the same worlds into a `VectorEnv` and must give every seat the same summed
rewards, to the bit, on the same worlds and seeds, in every game, at both horizons, from
several seats' views and player counts. Also here: pimc's move depends only on what its seat
knows, a play-out is never counted past its horizon (the tables that went on to a new game),
and `sample_world` never hands back a world whose player to act has no legal move.
"""

from __future__ import annotations

import copy
import random

import numpy as np
import pytest

pytest.importorskip("numba")

import envs  # noqa: E402
from agents.base import Agent  # noqa: E402
from agents.search import ISMCTSAgent, PIMCAgent  # noqa: E402
from agents.search.evaluators import BatchedEvaluator, ReadableEvaluator, evaluate  # noqa: E402
from envs import belief  # noqa: E402
from envs.belief import sample_world  # noqa: E402
from tests.conftest import GAMES, scaled  # noqa: E402
from tests.helpers import redealt_twin, stuck_neu_view  # noqa: E402


def decisions(game: str, num_players: int, seed: int, count: int, every: float = 0.3):
    """Copies of an engine at decisions with a choice, along random games from `seed`."""
    e = envs.engine_class(game)(num_players)
    e.reset(np.random.default_rng(seed))
    rnd = random.Random(seed)
    out = []
    while len(out) < count:
        if e.game_over:
            e.reset(np.random.default_rng(rnd.randrange(2**32)))
        legal = np.flatnonzero(e.legal_mask())
        if legal.size > 1 and rnd.random() < every:
            out.append(copy.deepcopy(e))
        e.step(int(rnd.choice(legal)))
    return out


def worlds_and_moves(e, viewer: int, count: int, seed: int):
    """`count` worlds drawn from `viewer`'s information state, and the moves of the player to
    act that are legal in all of them (seen from another seat, the hand to act is redealt)."""
    info = e.information_state(viewer)
    rng = np.random.default_rng(seed)
    worlds = [sample_world(info, rng) for _ in range(count)]
    legal = np.logical_and.reduce([w.legal_mask() for w in worlds])
    return worlds, np.flatnonzero(legal)


# (game, players, the viewer's seat relative to the player to act, horizon): the other seat's
# view at 2 or 3 players, Ma's Jong at its minimum of 3, Neu at 3 (a mean loss of 1/3, not a
# binary fraction, so the float32 rewards are rounded exactly as the kernels round them).
CASES = [(g, n, v, h) for g in GAMES for (n, v) in ([(4, 0), (3, 1)] if g in ("neu", "not_your_mas_jong") else [(4, 0), (2, 1)])
         for h in ("round", "game")]


@pytest.mark.parametrize("game, num_players, viewer, horizon", CASES)
def test_batched_values_are_the_readable_values(game, num_players, viewer, horizon):
    batched = BatchedEvaluator(game, num_players, horizon=horizon)
    lockstep = ReadableEvaluator(game, num_players, horizon=horizon)
    definition = ReadableEvaluator(game, num_players, horizon=horizon, lockstep=False)
    played = differ = 0
    for k, e in enumerate(decisions(game, num_players, seed=11 * num_players + len(horizon), count=12)):
        seat = e.current_player
        worlds, moves = worlds_and_moves(e, (seat + viewer) % num_players, 4 - 2 * viewer, seed=k)
        if not moves.size or played == 5:
            continue
        seeds = [7 * k + w for w in range(len(worlds))]
        values = batched.evaluate(worlds, seat, moves, seeds)
        assert values.shape == (len(worlds), moves.size, num_players) and values.dtype == np.float64
        np.testing.assert_array_equal(values, lockstep.evaluate(worlds, seat, moves, seeds))
        if k == 0 or horizon == "round":  # the definition, move by move (slower)
            np.testing.assert_array_equal(values, definition.evaluate(worlds, seat, moves, seeds))
        np.testing.assert_allclose(values.sum(axis=2), 0, atol=1e-5)  # zero-sum at every event
        # The check can fail: other chance streams give other values.
        for w in worlds:
            w.rng = np.random.default_rng(99)
        differ += not np.array_equal(values, evaluate(worlds, seat, moves, seeds, horizon=horizon))
        played += 1
    assert played >= 2 and batched.steps == lockstep.steps
    if horizon == "game":
        assert differ >= 1


@pytest.mark.parametrize("game, num_players", [(g, 4) for g in GAMES] + [("neu", 3), ("deadfall", 2)])
def test_pairs_of_worlds_and_moves_get_the_readable_values(game, num_players):
    """evaluate_pairs (ismcts's leaves): one first move per world, whoever is to act there; the
    batched values are the readable ones', move by move and in lockstep, at both horizons."""
    worlds, moves = [], []
    for k, e in enumerate(decisions(game, num_players, seed=21 + num_players, count=8, every=0.5)):
        world = sample_world(e.information_state((e.current_player + k) % num_players), np.random.default_rng(k))
        worlds.append(world)  # drawn from several seats' views; the player to act differs
        moves.append(int(np.random.default_rng(k).choice(np.flatnonzero(world.legal_mask()))))
    assert len({w.current_player for w in worlds}) > 1
    seeds = [3 * k + 1 for k in range(len(worlds))]
    for horizon in ("round", "game"):
        got = BatchedEvaluator(game, num_players, horizon=horizon).evaluate_pairs(worlds, moves, seeds)
        assert got.shape == (len(worlds), num_players)
        np.testing.assert_array_equal(got, ReadableEvaluator(game, num_players, horizon=horizon).evaluate_pairs(worlds, moves, seeds))
        if horizon == "round":
            definition = ReadableEvaluator(game, num_players, horizon=horizon, lockstep=False)
            np.testing.assert_array_equal(got, definition.evaluate_pairs(worlds, moves, seeds))
        # The same as a one-world evaluate from each world's player to act.
        one = BatchedEvaluator(game, num_players, horizon=horizon)
        for k in (0, len(worlds) - 1):
            np.testing.assert_array_equal(got[k], one.evaluate([worlds[k]], worlds[k].current_player, [moves[k]], [seeds[k]])[0, 0])
    with pytest.raises(ValueError, match="one first move and one seed per world"):
        BatchedEvaluator(game, num_players).evaluate_pairs(worlds, moves[:-1], seeds)


@pytest.mark.parametrize("game", GAMES)
def test_random_play_outs_agree_too(game):
    """A policy that draws (the random agent, one stream per table and seat): the same draws."""
    e = decisions(game, 4, seed=3, count=1)[0]
    seat = e.current_player
    worlds, moves = worlds_and_moves(e, seat, 4, seed=1)
    want = ReadableEvaluator(game, 4, rollout="random", horizon="game", lockstep=False).evaluate(worlds, seat, moves, [1, 2, 3, 4])
    got = evaluate(worlds, seat, moves, [1, 2, 3, 4], rollout="random", horizon="game")
    np.testing.assert_array_equal(got, want)
    assert not np.array_equal(got, evaluate(worlds, seat, moves, [5, 6, 7, 8], rollout="random", horizon="game"))


def test_a_round_is_one_score_event_and_a_game_ends_at_its_end():
    """Rows past the horizon are not counted: at ``round`` every Neu play-out holds exactly one
    loss (one seat -3/4, three +1/4), and at ``game`` a play-out stops when the loaded game
    ends, though its table goes on to a new game: the values are the game's, the steps the
    readable play-outs' own."""
    cases = decisions("neu", 4, seed=5, count=6)
    for e in cases:
        worlds, moves = worlds_and_moves(e, e.current_player, 4, seed=2)
        values = evaluate(worlds, e.current_player, moves, horizon="round").reshape(-1, 4)
        losers, winners = values < 0, values > 0
        assert (losers.sum(axis=1) == 1).all()
        k = winners.sum(axis=1) + 1  # the seats taking part; one loss: -(k - 1)/k and 1/k each
        np.testing.assert_array_equal(values.max(axis=1), np.float32(1 / k))
        np.testing.assert_array_equal(values.min(axis=1), np.float32(-1 + 1 / k))
    # Near the end of a game: every seat but the one to act on its last chip.
    e = next(e for e in cases if not any(e.out))
    e.chips = [1 if s != e.current_player else 3 for s in range(4)]
    e.refresh()
    worlds, moves = worlds_and_moves(e, e.current_player, 6, seed=3)
    batched = BatchedEvaluator("neu", 4, horizon="game")
    readable = ReadableEvaluator("neu", 4, horizon="game")
    values = batched.evaluate(worlds, e.current_player, moves)
    np.testing.assert_array_equal(values, readable.evaluate(worlds, e.current_player, moves))
    assert batched.steps == readable.steps
    # Every table went on to a new game (its first round), which was neither played nor counted.
    assert (batched.venv.score_events(np.arange(values.size // 4)) == 1).all()


@pytest.mark.parametrize("game", GAMES)
def test_pimc_moves_do_not_change_with_the_hidden_cards(game):
    """Redeal the other seats' cards of a real engine (and its chance stream): pimc's move is the
    same, with either evaluator, and both evaluators choose alike."""
    for k, e in enumerate(decisions(game, 4, seed=6, count=3)):
        seat = e.current_player
        twin = redealt_twin(e, seat, k)
        moves = set()
        for g in (e, twin):
            for kind in ("batched", "readable"):
                agent = PIMCAgent(game, 4, seed=5, worlds=4, evaluator=kind)
                agent.inform(g.information_state(seat))
                moves.add(agent.act({"observation": g.observe(seat), "action_mask": g.legal_mask()}))
        assert len(moves) == 1


@pytest.mark.parametrize("game", GAMES)
def test_ismcts_moves_do_not_change_with_the_hidden_cards(game):
    """As pimc's: ismcts's move and values depend only on the seat's information state, and both
    evaluators give the same tree."""
    for k, e in enumerate(decisions(game, 4, seed=7, count=2)):
        seat = e.current_player
        twin = redealt_twin(e, seat, k)
        seen = []
        for g in (e, twin):
            for kind in ("batched", "readable"):
                agent = ISMCTSAgent(game, 4, seed=5, iterations=12, batch=4, evaluator=kind)
                agent.inform(g.information_state(seat))
                view = {"observation": g.observe(seat), "action_mask": g.legal_mask()}
                seen.append((agent.act(view), agent.option_values(view)))
        assert len({m for m, _ in seen}) == 1
        for _, values in seen[1:]:
            np.testing.assert_array_equal(values, seen[0][1])


def test_pimc_keeps_one_env_and_grows_it():
    e = decisions("deadfall", 4, seed=1, count=1)[0]
    seat = e.current_player
    agent = PIMCAgent("deadfall", 4, seed=0, worlds=2, choice="max")  # every move on every world at once
    observation = {"observation": e.observe(seat), "action_mask": e.legal_mask()}
    agent.inform(e.information_state(seat))
    agent.act(observation)
    venv = agent.evaluator.venv
    agent.act(observation)
    assert agent.evaluator.venv is venv  # the same env for the next decision
    agent.worlds = 20
    agent.act(observation)
    assert agent.evaluator.venv.num_envs >= 20 * int(e.legal_mask().sum())


def test_evaluators_refuse_what_they_cannot_play():
    e = decisions("neu", 4, seed=2, count=1)[0]
    worlds, moves = worlds_and_moves(e, e.current_player, 2, seed=0)
    with pytest.raises(ValueError, match="seat .* must be to act"):
        evaluate(worlds, (e.current_player + 1) % 4, moves)
    with pytest.raises(ValueError, match="one seed per world"):
        evaluate(worlds, e.current_player, moves, seeds=[1])

    class Plain(Agent):  # no act_batch
        def act(self, observation):
            return int(np.flatnonzero(observation["action_mask"])[0])

    with pytest.raises(ValueError, match="evaluator=readable"):
        BatchedEvaluator("neu", 4, rollout=Plain)
    ReadableEvaluator("neu", 4, rollout=Plain).evaluate(worlds, e.current_player, moves)
    with pytest.raises(ValueError, match="masked-out"):
        evaluate(worlds, e.current_player, [int(np.flatnonzero(worlds[0].legal_mask() == 0)[0])])


def test_sample_world_redraws_a_world_whose_player_to_act_has_no_move():
    """Seen from a seat that is not to act, a plain Neu redeal leaves the player to act without a
    legal card about 4% of the time; sample_world redraws those (a real state always has one)."""
    plain_stuck = sampled = 0
    for e in decisions("neu", 4, seed=8, count=30, every=0.5):
        viewer = (e.current_player + 1) % 4
        info = e.information_state(viewer)
        rng = np.random.default_rng(0)
        for _ in range(20):
            world = sample_world(info, rng)
            assert world.legal_mask().any()
            assert np.array_equal(world.observe(viewer), e.observe(viewer))
            plain = envs.engine_class("neu").from_fields(4, info["options"], info["representative"])
            plain.shuffle_hidden(viewer, rng)
            plain.refresh()
            plain_stuck += not plain.legal_mask().any()
            sampled += 1
    assert plain_stuck >= 5, (plain_stuck, sampled)  # the rejection was needed
    # No redeal can help: every unseen card is a 10 and the total is 101.
    _, info = stuck_neu_view(decisions("neu", 4, seed=9, count=1)[0])
    with pytest.raises(ValueError, match=f"none of {belief.SAMPLE_TRIES} redeals"):
        sample_world(info, np.random.default_rng(0))


@pytest.mark.parametrize("game", GAMES)
def test_the_compiled_play_out_is_the_step_by_step_one(game):
    """A compiled heuristic plays whole play-outs in one call (VectorEnv.play_out): the same
    values and agent-steps as stepping from Python, at both horizons, and the tables end as
    the steps left them (a table whose game ended has started its next one)."""
    for horizon in ("round", "game"):
        fast, slow = BatchedEvaluator(game, 4, horizon=horizon), BatchedEvaluator(game, 4, horizon=horizon, compiled=False)
        assert fast.compiled and not slow.compiled
        for k, e in enumerate(decisions(game, 4, seed=5 + len(horizon), count=4, every=0.5)):
            seat = e.current_player
            worlds, moves = worlds_and_moves(e, seat, 6, seed=k)
            seeds = [11 * k + w for w in range(len(worlds))]
            np.testing.assert_array_equal(fast.evaluate(worlds, seat, moves, seeds), slow.evaluate(worlds, seat, moves, seeds))
            rows = np.arange(len(worlds) * moves.size)
            for got, want in zip(fast.venv.views(rows), slow.venv.views(rows)):
                np.testing.assert_array_equal(got, want)
            np.testing.assert_array_equal(fast.venv.state()[rows], slow.venv.state()[rows])
        assert fast.steps == slow.steps > 0
    with pytest.raises(ValueError, match="masked-out first move"):
        e = decisions(game, 4, seed=1, count=1)[0]
        venv = envs.vector_env(game, 2, 4)
        venv.reset()
        venv.load_rows([0], [e])
        venv.play_out([0], [int(np.flatnonzero(~e.legal_mask().astype(bool))[0])], *fast._kernel)


@pytest.mark.parametrize("game", GAMES)
def test_worlds_drawn_in_rows_give_the_values_of_sample_world(game):
    """evaluate_sampled draws its worlds straight into batch rows: the same values as evaluate on
    sample_world's worlds with the seeds drawn after them, and the generator left alike; so
    pimc plays the same moves and values either way."""
    ev = BatchedEvaluator(game, 4)
    for e in decisions(game, 4, seed=12, count=scaled(6)):
        seat = e.current_player
        info = e.information_state(seat)
        moves = np.flatnonzero(e.legal_mask())
        mine, theirs = np.random.default_rng(4), np.random.default_rng(4)
        got = ev.evaluate_sampled(info, seat, moves, 5, mine)
        worlds = [sample_world(info, theirs) for _ in range(5)]
        want = ev.evaluate(worlds, seat, moves, theirs.integers(2**62, size=5))
        assert np.array_equal(got, want)
        assert mine.integers(2**62) == theirs.integers(2**62)
    with pytest.raises(ValueError, match="must be seat"):
        ev.evaluate_sampled(info, (seat + 1) % 4, moves, 2, mine)
    fast, slow = PIMCAgent(game, 4, seed=3, worlds=4), PIMCAgent(game, 4, seed=3, worlds=4)
    slow.sample_in_rows = False
    assert fast.sample_in_rows
    for e in decisions(game, 4, seed=13, count=scaled(4)):
        s = e.current_player
        obs = {"observation": e.observe(s), "action_mask": e.legal_mask()}
        for agent in (fast, slow):
            agent.inform(e.information_state(s))
        assert fast.act(obs) == slow.act(obs)
        assert np.array_equal(fast.option_values(obs), slow.option_values(obs), equal_nan=True)

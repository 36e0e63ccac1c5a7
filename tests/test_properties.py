"""Property tests (hypothesis) held over every available game at every player count.

Each example plays one whole game from a drawn seed, rule options and agent
kind, and checks at every agent step (see `envs.testing.GameChecker`,
shared with the soak run):

* conservation: the cards in ``card_places()`` are exactly the deck; score
  currency per the engine's ``conserves`` (Neu: one chip to the box
  per lost round; Deadfall: chips + pot constant; Ma's Jong: transfers only;
  Not For Me: penalties only grow);
* masks: the agent to act has a non-empty mask, every other agent all zeros;
  every masked-in action is accepted by a copy of the engine; sampled
  masked-out actions are refused by ``raw_env`` (ValueError, nothing changes)
  and, once per game, end an ``env()`` game with −1 for the offender;
* rewards sum to zero at every step, equal the zero-sum transform of the
  ``score_changes`` in ``infos``, and scores never change without one;
* termination within `envs.testing.step_bound` agent steps (the engine's
  ``max_game_length``); truncation is never used (RULES.md allows none);
* determinism: same seed + same actions give identical observations, masks,
  rewards, infos and states; so does continuing a deep copy or a pickle taken
  mid-game.

A failure names the seed and, for default options, a one-command replay.
"""

from __future__ import annotations

import copy
import pickle
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import envs
from agents import make_agents
from envs.testing import play_checked_game
from tests.conftest import GAME_COUNTS, scaled

# Rule options worth drawing, per game; a game not listed plays its defaults.
# Small values on purpose: few chips end Deadfall early ("cannot ante", "pays
# what they have"); few max_round_steps make Not For Me truncate rounds.
OPTION_STRATEGIES = {
    "not_for_me": st.fixed_dictionaries(
        {},
        optional={
            "hand_marks": st.lists(st.integers(0, 9), min_size=6, max_size=6),
            "rounds": st.integers(1, 2),
            "max_round_steps": st.one_of(st.integers(1, 40), st.integers(100, 2000)),
        },
    ),
    "deadfall": st.fixed_dictionaries(
        {}, optional={"starting_chips": st.integers(1, 60), "rounds": st.integers(1, 10)}
    ),
}

AGENT_KINDS = ["random", "heuristic", "mixed"]  # `agents.make_agents`


def draw_game(data, game: str):
    """A seed, rule options and the kind of agents for one hypothesis example."""
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    options = data.draw(OPTION_STRATEGIES.get(game, st.just({})), label="rule options")
    return seed, options, data.draw(st.sampled_from(AGENT_KINDS), label="agents")


@pytest.mark.parametrize("game,n", GAME_COUNTS)
@settings(max_examples=scaled(3))
@given(data=st.data())
def test_invariants_hold_at_every_step(game, n, data):
    seed, options, kind = draw_game(data, game)
    penalise_at = data.draw(st.integers(0, 40), label="illegal move tried at step")
    policies = [bot.act for bot in make_agents(kind, game, n, seed)]
    result = play_checked_game(game, n, seed, policies, options, deep_every=2, illegal_samples=2, penalise_at=penalise_at)
    assert result.steps > 0


def test_neu_masks_are_all_zeros_for_others_during_none_steps():
    """While terminated agents take their None-steps, nobody may move; eliminated seats are never selected."""
    for seed in range(10):
        play_checked_game("neu", 4, seed, deep_every=0, illegal_samples=0)


# -- observation bounds ------------------------------------------------------------


def _check_bounds(env, where: str) -> None:
    game = env.unwrapped.game
    space = env.observation_space(env.possible_agents[0])["observation"]
    for agent in env.possible_agents:
        obs = game.observe(env.possible_agents.index(agent))
        low, high = obs < space.low, obs > space.high
        if low.any() or high.any():
            bad = np.flatnonzero(low | high)
            raise AssertionError(f"{where}: {agent}'s observation leaves its bounds at {bad.tolist()}: "
                                 f"{obs[bad].tolist()} not in {list(zip(space.low[bad], space.high[bad]))}")
    state = game.state()
    out = np.flatnonzero((state < env.state_space.low) | (state > env.state_space.high))
    assert not out.size, f"{where}: state leaves its bounds at {out.tolist()}: {state[out].tolist()}"


@pytest.mark.parametrize("game,n", GAME_COUNTS)
@settings(max_examples=scaled(3))
@given(data=st.data())
def test_observations_and_states_stay_inside_their_bounds(game, n, data):
    """Every seat's observation and the state, at every step, lie inside the per-index Box bounds."""
    seed, options, kind = draw_game(data, game)
    env = envs.make(game, num_players=n, **options)
    space = env.observation_space(env.possible_agents[0])["observation"]
    assert np.all(space.low > -1e5) and np.all(space.high < 1e7), "bounds are placeholders"
    env.reset(seed=seed)
    bots = make_agents(kind, game, n, seed)
    _check_bounds(env, f"seed {seed} reset")
    for i, agent in enumerate(env.agent_iter()):
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else bots[env.possible_agents.index(agent)].act(obs))
        if env.agents:
            _check_bounds(env, f"seed {seed} step {i}")


# -- termination ------------------------------------------------------------


def test_not_for_me_round_limit_is_reported_in_infos_not_as_truncation():
    """RULES.md §1: a round reaching max_round_steps ends without penalties, reported in infos."""
    env = envs.make("not_for_me", num_players=3, max_round_steps=3, rounds=2)
    env.reset(seed=0)
    rnd = random.Random(0)
    truncated_rounds = 0
    for agent in env.agent_iter(max_iter=100):
        obs, _, term, trunc, _ = env.last()
        assert not any(env.truncations.values())
        env.step(None if term or trunc else int(rnd.choice(np.flatnonzero(obs["action_mask"]))))
        info = env.infos.get(agent)
        if info is not None and info["scored"]:
            assert not any(info["score_changes"]) and info["round_truncated"] == 1
            truncated_rounds += 1
    assert not env.agents and truncated_rounds == 2


# -- determinism ----------------------------------------------------------------


def _record(env, actions: list | None, rnd: random.Random | None, limit: int) -> tuple[list, list]:
    """Step `env` on (given `actions`, else random legal ones); return the actions and every observable fact."""
    facts, taken = [], []
    i = 0
    while env.agents and i < limit:
        agent = env.agent_selection
        obs, reward, term, trunc, info = env.last()
        if actions is not None:
            action = actions[i]
        elif term or trunc:
            action = None
        else:
            action = int(rnd.choice(np.flatnonzero(obs["action_mask"])))
        env.step(action)
        taken.append(action)
        facts.append(
            (
                agent,
                obs["observation"].tobytes(),
                obs["action_mask"].tobytes(),
                reward,
                term,
                trunc,
                repr(info),
                repr(sorted(env.rewards.items())),
                repr(sorted(env.infos.items())),
                env.state().tobytes() if env.agents else b"",
            )
        )
        i += 1
    return taken, facts


def _first_difference(a: list, b: list) -> str:
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            fields = ["agent", "observation", "mask", "reward", "termination", "truncation", "info", "rewards", "infos", "state"]
            return f"step {i}: {[f for f, p, q in zip(fields, x, y) if p != q]} differ"
    return f"lengths {len(a)} vs {len(b)}"


@pytest.mark.parametrize("game,n", GAME_COUNTS)
@settings(max_examples=scaled(2))
@given(seed=st.integers(0, 2**32 - 1), cut=st.integers(0, 200))
def test_same_seed_same_actions_same_game_and_copies_continue_identically(game, n, seed, cut):
    env = envs.make(game, num_players=n)
    env.reset(seed=seed)
    actions, facts = _record(env, None, random.Random(seed), 100_000)
    assert not env.agents

    again = envs.make(game, num_players=n)
    again.reset(seed=seed)
    _, facts2 = _record(again, actions, None, len(actions))
    assert facts2 == facts, f"seed {seed}: replay differs at {_first_difference(facts, facts2)}"

    cut = min(cut, len(actions) - 1)
    live = envs.make(game, num_players=n)
    live.reset(seed=seed)
    _record(live, actions[:cut], None, cut)
    deep = copy.deepcopy(live)
    pickled = pickle.loads(pickle.dumps(live))
    _, rest = _record(live, actions[cut:], None, len(actions))
    assert rest == facts[cut:]
    for name, other in (("deepcopy", deep), ("pickle", pickled)):
        _, got = _record(other, actions[cut:], None, len(actions))
        assert got == facts[cut:], f"seed {seed}: {name} at step {cut} continues differently: {_first_difference(facts[cut:], got)}"


@pytest.mark.parametrize("game,n", GAME_COUNTS[:1] + [gc for gc in GAME_COUNTS if gc[1] == 3][:3])
def test_reset_without_seed_continues_the_seeded_stream(game, n):
    """reset() with no seed after a seeded reset gives the same sequence of games every time."""
    runs = []
    for _ in range(2):
        env = envs.make(game, num_players=n)
        env.reset(seed=11)
        rnd = random.Random(11)
        games = []
        for g in range(2):
            if g:
                env.reset()
            games.append(_record(env, None, rnd, 100_000)[1])
        runs.append(games)
    assert runs[0] == runs[1]
    assert runs[0][0] != runs[0][1]


# -- the engines' facts ----------------------------------------------------------


@pytest.mark.parametrize("game", envs.GAMES)
def test_every_engine_states_its_facts(game):
    """What envs.testing checks against: the step bound, the currency, the hidden decisions (a
    random game meets one exactly when the engine says it has them)."""
    from envs.engine import CONSERVES

    env = envs.make_raw(game)
    engine = env.unwrapped.game
    assert engine.conserves in CONSERVES
    assert isinstance(engine.max_game_length, int) and engine.max_game_length > 0
    met = set()
    for seed in range(3):
        env.reset(seed=seed)
        rnd = random.Random(seed)
        for agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            met.add(engine.hidden_decision_key() is not None)
            env.step(None if term or trunc else int(rnd.choice(np.flatnonzero(obs["action_mask"]))))
    assert (True in met) == bool(engine.hidden_decisions)

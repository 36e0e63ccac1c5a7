"""cardzoo's games as OpenSpiel games (envs.openspiel), run through OpenSpiel's own API and
algorithms; skipped when OpenSpiel (the extra ``openspiel``) is absent."""

from __future__ import annotations

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

import envs  # noqa: E402
import envs.openspiel  # noqa: E402,F401  (registers the games)
from agents.openspiel import AgentPolicy  # noqa: E402
from agents.spec import make_from_spec  # noqa: E402
from experiments import solve  # noqa: E402
from open_spiel.python import policy  # noqa: E402
from open_spiel.python.algorithms import exploitability  # noqa: E402
from tests.helpers import deal_from_cards, first_deal_parts  # noqa: E402
from train import cfr  # noqa: E402

GAMES = list(envs.GAMES)


@pytest.mark.parametrize("game", GAMES)
def test_openspiels_own_random_simulation_passes(game):
    # OpenSpiel's API checks: chance outcomes sum to 1, clones behave, legal actions, returns.
    players = 3 if game == "not_your_mas_jong" else 4  # the shortest Ma's Jong table, for time
    pyspiel.random_sim_test(pyspiel.load_game(envs.openspiel.short_name(game), {"players": players}),
                            num_sims=1, serialize=False, verbose=False)


def _play(game: str, players: int, seed: int):
    """A game through OpenSpiel with random moves and chance drawn from its outcomes."""
    rng = np.random.default_rng(seed)
    state = pyspiel.load_game(envs.openspiel.short_name(game), {"players": players}).new_initial_state()
    steps, total = [], np.zeros(players)
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes())
            assert abs(sum(probs) - 1) < 1e-12 and min(probs) > 0
            a = int(rng.choice(outcomes, p=probs))
        else:
            a = int(rng.choice(state.legal_actions()))
        steps.append((state.current_player(), a, state.action_to_string(state.current_player(), a)))
        state.apply_action(a)
        total += state.rewards()
    # returns() is the sum of the rewards, and a whole game moves some score.
    np.testing.assert_allclose(state.returns(), total)
    assert np.any(total != 0)
    return state, steps


@pytest.mark.parametrize("game", GAMES)
def test_a_game_replays_on_the_engine_from_its_chance_outcomes(game):
    # The deal is dealt as documented (hands in seat order, then the other parts), the moves and
    # draws are the engine's: the same observations and rewards on a plain engine told the outcomes.
    players = 3
    state, steps = _play(game, players, seed=7)
    e, deck, parts = first_deal_parts(game, players)
    need = sum(sum(sizes) if isinstance(sizes, list) else sizes for _, sizes in parts)
    assert all(seat == pyspiel.PlayerId.CHANCE for seat, _, _ in steps[:need])
    deal = deal_from_cards(e.card_names, parts, [a for _, a, _ in steps[:need]])
    plain = envs.engine_class(game)(players)
    plain.take_chance([deal])
    plain.reset(np.random.default_rng(1))
    replay = pyspiel.load_game(envs.openspiel.short_name(game), {"players": players}).new_initial_state()
    for _, a, _ in steps[:need]:
        replay.apply_action(a)
    for s in range(players):
        np.testing.assert_array_equal(plain.observe(s), replay.observation_tensor(s))
    # Then each move with the draws that follow it, up to the first deal after the first.
    rest, moves = steps[need:], 0
    while rest and not plain.game_over:
        seat, a, _ = rest[0]
        assert seat == plain.current_player
        chance = []
        j = 1
        while j < len(rest) and rest[j][0] == pyspiel.PlayerId.CHANCE:
            chance.append(rest[j])
            j += 1
        if any(text.startswith("deal") for _, _, text in chance):
            break
        plain.take_chance([c for _, c, _ in chance])
        event = plain.step(a)
        for _, b, _ in rest[:j]:
            replay.apply_action(b)
        rewards = envs.engine.zero_sum_rewards(event) if event is not None else [0.0] * players
        np.testing.assert_allclose(replay.rewards(), rewards)
        for s in range(players):
            np.testing.assert_array_equal(plain.observe(s), replay.observation_tensor(s))
        rest, moves = rest[j:], moves + 1
    assert moves >= 10, moves


@pytest.mark.parametrize("game", GAMES)
def test_returns_are_the_summed_zero_sum_rewards_and_seeds_repeat(game):
    state, steps = _play(game, 3, seed=3)
    again, steps_again = _play(game, 3, seed=3)
    assert steps == steps_again and state.returns() == again.returns()
    assert abs(sum(state.returns())) < 1e-9
    decisions = sum(1 for seat, _, _ in steps if seat >= 0)
    assert decisions <= state.get_game().max_game_length()


def test_a_clone_is_independent_of_its_original():
    state, steps = _play("neu", 3, seed=5)
    game = state.get_game()
    s = game.new_initial_state()
    for _, a, _ in steps[:30]:
        s.apply_action(a)
    while s.is_chance_node():
        s.apply_action(s.chance_outcomes()[0][0])
    before = [s.observation_tensor(p) for p in range(3)], s.information_state_string(s.current_player())
    c = s.clone()
    for _ in range(10):
        if c.is_terminal():
            break
        c.apply_action(c.chance_outcomes()[-1][0] if c.is_chance_node() else c.legal_actions()[-1])
    assert ([s.observation_tensor(p) for p in range(3)], s.information_state_string(s.current_player())) == before


def test_information_states_hide_the_others_cards():
    # Two deals that differ only in another seat's hand give seat 0 the same information state.
    game = pyspiel.load_game("cardzoo_neu", {"players": 2, "rules": "small"})
    root = game.new_initial_state()
    deals = game.first_deals
    by_own = {}
    for i, (_, deal) in enumerate(deals):
        s = root.child(i)
        by_own.setdefault(tuple(sorted(deal["hands"][0])), set()).add(s.information_state_string(0))
    assert all(len(keys) == 1 for keys in by_own.values()) and len(by_own) > 1


def test_unknown_parameters_and_bad_options_are_refused():
    with pytest.raises(Exception, match="Unknown parameter 'colour'"):
        pyspiel.load_game("cardzoo_neu", {"colour": 1})
    with pytest.raises(ValueError, match="num_players must be from 2 to 7"):
        pyspiel.load_game("cardzoo_neu", {"players": 9})


# Per preset, the agents compared, as many as the time allows: OpenSpiel takes about 30 s a policy
# on Neu's and 50 s on Ma's Jong's, so their mixed CFR+ policy and the heuristic (the cases of
# AgentPolicy) are left to Deadfall's (a second a policy). Not For Me's (11 s) and Ma's Jong's have
# draws after the deal: chance nodes mid-game.
PRESET_AGENTS = {"neu": ("random",), "deadfall": ("random", "heuristic", "cfr"),
                 "not_for_me": ("random", "heuristic"), "not_your_mas_jong": ("random",)}


@pytest.mark.parametrize("game", sorted(PRESET_AGENTS))
def test_nash_conv_agrees_with_exact_solving_on_the_small_presets(game, tmp_path):
    # OpenSpiel's exploitability walks its own tree of the OpenSpiel game; experiments.solve walks
    # the engine's. Uniform random (OpenSpiel's own policy), the heuristic and a mixed CFR+ policy
    # (through agents.openspiel.AgentPolicy) get the same NashConv from both.
    assert set(PRESET_AGENTS) == set(solve.games_with_a_small_preset())
    tree = cfr.build_tree(envs.engine_class(game)(2, rules="small"))
    solver = cfr.CFRPlus(tree)
    for _ in range(20):
        solver.iterate()
    solve.save_policy(tmp_path / "policy.npz", game, tree, solver.average_policy())
    os_game = pyspiel.load_game(envs.openspiel.short_name(game), {"players": 2, "rules": "small"})
    for kind in PRESET_AGENTS[game]:
        spec = f"cfr:{tmp_path / 'policy.npz'}" if kind == "cfr" else kind
        agent = make_from_spec(spec, game, 2, seed=0)
        exact = solve.exploitability(tree, solve.agent_policy(agent, tree))["nash_conv"]
        theirs = exploitability.nash_conv(os_game, policy.UniformRandomPolicy(os_game) if kind == "random"
                                          else AgentPolicy(os_game, agent))
        assert theirs == pytest.approx(exact, abs=1e-9), kind


def test_nash_conv_agrees_on_three_player_kuhn_poker():
    # More than two players: train.cfr's NashConv (the sum of each seat's best-response gain)
    # against OpenSpiel's on its own kuhn_poker with players=3, for uniform, always-bet and a mixed
    # CFR+ policy (mapped by OpenSpiel's information-state strings: the card, then p/b per move).
    from tests.test_kuhn import Kuhn

    tree = cfr.build_tree(Kuhn(3))
    os_game = pyspiel.load_game("kuhn_poker", {"players": 3})
    solver = cfr.CFRPlus(tree)
    for _ in range(30):
        solver.iterate()
    mixed = solver.average_policy()
    theirs = policy.TabularPolicy(os_game)
    for i, (obs, _) in enumerate(tree.info_obs):
        moves = obs[4:].reshape(-1, 2)
        name = str(int(np.argmax(obs[:4]))) + "".join("pb"[int(np.argmax(m))] for m in moves if m.any())
        theirs.policy_for_key(name)[:] = mixed[i]
    assert len(tree.info_obs) == len(theirs.state_lookup)
    bet = policy.TabularPolicy(os_game)
    bet.action_probability_array[:] = [0.0, 1.0]
    always_bet = cfr.uniform(tree)
    always_bet[:] = [0.0, 1.0]
    for ours, os_policy in [(cfr.uniform(tree), policy.UniformRandomPolicy(os_game)), (always_bet, bet), (mixed, theirs)]:
        assert exploitability.nash_conv(os_game, os_policy) == pytest.approx(cfr.nash_conv(tree, ours)[0], abs=1e-12)

"""Exact solving of the small presets (train.cfr, experiments.solve, agents.cfr): the tree agrees
with the engine on every path, CFR+ finds a known value, the exact best response computed two
independent ways agrees, NashConv falls with iterations, and the solved policy plays as an agent."""

from __future__ import annotations

import re
import copy
import itertools
import json

import numpy as np
import pytest

import envs
from agents.spec import make_from_spec
from envs.engine import Engine, ScoreEvent, zero_sum_rewards
from envs.deadfall import Deadfall
from envs.neu import Neu
from envs.not_for_me import NotForMe
from envs.not_for_me import parse_card as parse_nfm_card
from envs.not_your_mas_jong import NotYourMasJong
from envs.not_your_mas_jong import parse_card as parse_mj_card
from envs.testing import find_leaks, play_checked_game
from train import cfr


class MatrixGame(Engine):
    """A 2x2 zero-sum matrix game as an engine: seat 0 picks a row, unseen by seat 1, who picks a
    column. PAYOFF is seat 0's score; its value is (ad - bc) / (a + d - b - c) = 0.2 and seat 0
    plays row 0 with probability (d - c) / (a + d - b - c) = 0.4."""

    game_name = "matrix"
    min_players = max_players = default_players = 2
    PAYOFF = ((2, -1), (-1, 1))
    num_actions = 2
    obs_size = 1

    def deals(self):
        return [(1.0, {})]

    def reset(self, rng, deal=None):
        self.row, self.current_player, self.game_over = None, 0, False

    def legal_mask(self):
        return np.ones(2, np.int8)

    def observe(self, seat):
        return np.array([seat], np.float32)  # nothing about the row

    def public_action_name(self, action, seat):
        return "picks a row"  # the row stays hidden from seat 1 (its information-set key)

    def step(self, action):
        if self.row is None:
            self.row, self.current_player = action, 1
            return None
        self.game_over, self.current_player = True, -1
        x = self.PAYOFF[self.row][action]
        return ScoreEvent([x, -x], [True, True], {})


@pytest.fixture(scope="module")
def neu():
    return Neu(2, rules="small")


@pytest.fixture(scope="module")
def neu_tree(neu):
    return cfr.build_tree(neu)


def _paths(tree):
    """(deal index, moves, node or -1, summed rewards, one per seat) for every decision node and every game end;
    a move is (action, the draws it met), the draws read from the chance edge that follows it."""
    out = {}
    by_parent = {}
    for e, p in enumerate(tree.edge_parent):
        by_parent.setdefault(int(p), []).append(e)
    roots = np.flatnonzero(tree.node_depth == 0)
    for d, root in enumerate(roots):
        stack = [(int(root), (), np.zeros(tree.num_players))]
        while stack:
            n, moves, r = stack.pop()
            chance = tree.node_player[n] == cfr.CHANCE
            if not chance:
                out[(d, moves)] = (n, r)
            for e in by_parent[n]:
                child, rr = int(tree.edge_child[e]), r + tree.edge_reward[e]
                # at a chance node, the move that led here gets the draws of this outcome
                step = moves[:-1] + ((moves[-1][0], tree.edge_draws[e]),) if chance else moves + ((int(tree.edge_action[e]), ()),)
                if child < 0:
                    out[(d, step)] = (-1, rr)
                else:
                    stack.append((child, step, rr))
    return out


def _replay_every_path(cls, tree, deals):
    """Replay every path of the tree on a fresh engine (no copies): the seat to act, its legal
    moves, where the game ends and the rewards summed along the way are the engine's. Returns
    the game ends met and the cards drawn on the way."""
    paths = _paths(tree)
    moves = {}
    for p, a in zip(tree.edge_parent.tolist(), tree.edge_action.tolist()):
        if tree.node_player[p] != cfr.CHANCE:
            moves.setdefault(p, []).append(a)
    ends, drawn = 0, 0
    for (d, actions), (n, reward) in paths.items():
        eng = cls(2, rules="small")
        eng.reset(np.random.default_rng(0), deal=deals[d][1])
        total = np.zeros(tree.num_players)
        for a, draws in actions:
            assert eng.legal_mask()[a] == 1
            eng.take_chance(draws)
            drawn += len(draws)
            event = eng.step(a)
            total += zero_sum_rewards(event) if event is not None else 0.0
        assert total == pytest.approx(reward)  # every seat's
        if n < 0:
            assert eng.game_over
            ends += 1
            continue
        assert not eng.game_over and eng.current_player == tree.node_player[n]
        legal = tree.info_legal[tree.node_info[n]]
        assert np.array_equal(eng.legal_mask() > 0, legal)
        # every legal move of the engine is in the tree, and nothing else
        assert sorted(moves[n]) == np.flatnonzero(eng.legal_mask()).tolist()
    assert ends == int(np.sum(tree.edge_child < 0))
    return ends, drawn


def test_tree_agrees_with_the_engine_on_every_path(neu, neu_tree):
    ends, drawn = _replay_every_path(Neu, neu_tree, neu.deals())
    assert ends > 1000 and drawn > 1000


def test_every_node_of_an_information_set_looks_the_same_to_its_seat(neu_tree):
    counts = np.bincount(neu_tree.node_info, minlength=neu_tree.num_infos)
    assert counts.max() > 1  # sets really merge decisions that the seat cannot tell apart
    sizes = [int(np.sum(neu_tree.info_player == s)) for s in (0, 1)]
    assert max(sizes) <= 10**6 and sum(sizes) == neu_tree.num_infos


def test_small_preset_deals_and_options():
    deals = Neu(2, rules="small").deals()
    # combinations of two 2-card hands from the 7 cards (two 50s): 130 distinct deals
    assert sum(p for p, _ in deals) == pytest.approx(1.0) and len(deals) == 130
    with pytest.raises(ValueError, match="two-player preset"):
        Neu(4, rules="small")
    with pytest.raises(ValueError, match="rules"):
        Neu(2, rules="tiny")
    with pytest.raises(ValueError, match="small"):
        Neu(2).deals()


def _preset_played_and_leak_free(game: str):
    """Twenty checked games of the game's small preset (every check on, leaks looked for at every
    step), then a preset engine just dealt, from which seat 0 learns nothing hidden."""
    for seed in range(20):
        play_checked_game(game, 2, seed, rule_options={"rules": "small"}, leak_every=1)
    eng = envs.engine_class(game)(2, rules="small")
    eng.reset(np.random.default_rng(3))
    assert find_leaks(eng, 0, np.random.default_rng(1)) == []
    return eng


def test_small_preset_plays_as_an_env_and_hides_hands():
    eng = _preset_played_and_leak_free("neu")
    assert len(eng.deck) == 7 and len(eng.draw) == 3
    env = envs.make("neu", num_players=2, rules="small")
    env.reset(seed=1)
    assert env.unwrapped.game.options["rules"] == "small"


def test_cfr_plus_reaches_the_matrix_game_value():
    tree = cfr.build_tree(MatrixGame(2))
    solver = cfr.CFRPlus(tree)
    for _ in range(2000):  # NashConv falls about as 1/iterations here: 0.015 at 100, 8e-4 at 2000
        solver.iterate()
    policy = solver.average_policy()
    row = policy[tree.info_player == 0][0]
    col = policy[tree.info_player == 1][0]
    assert cfr.game_value(tree, policy) == pytest.approx(0.2, abs=1e-3)
    assert row[0] == pytest.approx(0.4, abs=1e-2) and col[0] == pytest.approx(0.4, abs=1e-2)
    nc, br = cfr.nash_conv(tree, policy)
    assert nc < 1e-3 and br[0] == pytest.approx(0.2, abs=1e-3) and br[1] == pytest.approx(-0.2, abs=1e-3)
    # a pure row is exploited: against row 0 the column player takes column 1 (seat 0 gets -1)
    pure = cfr.uniform(tree)
    pure[tree.info_player == 0] = [1.0, 0.0]
    assert cfr.best_response(tree, pure, 1)[0] == pytest.approx(1.0)


def _walk_value(engine, policy_of) -> float:
    """Seat 0's expected reward from `engine` by recursion on engine copies (no tree arrays), the
    draws averaged over every card the pile can give; policy_of(seat, key) gives the move
    probabilities."""
    if engine.game_over:
        return 0.0
    seat = engine.current_player
    obs, mask = engine.observe(seat), engine.legal_mask().copy()
    p = policy_of(seat, engine.information_key(seat))
    total = 0.0
    for a in np.flatnonzero(mask):
        if p[a] == 0:
            continue
        for q, child, event, _ in engine.step_outcomes(int(a)):
            r = zero_sum_rewards(event)[0] if event is not None else 0.0
            total += p[a] * q * (r + _walk_value(child, policy_of))
    return total


# (game, first deal, responding seat): deals whose responder has 8 to 256 pure strategies. Ma's
# Jong's Ma (seat 0) has either a handful or millions, so only its seat 1 is listed.
BRUTE_FORCE_CASES = [("neu", 39, 0), ("neu", 46, 0), ("neu", 112, 1), ("neu", 23, 1), ("deadfall", 0, 0),
                     ("deadfall", 3, 1), ("not_for_me", 5, 0), ("not_for_me", 1, 1), ("not_your_mas_jong", 2, 1),
                     ("not_your_mas_jong", 5, 1)]


@pytest.mark.parametrize("game, deal, seat", BRUTE_FORCE_CASES)
def test_best_response_value_agrees_with_a_brute_force_over_pure_strategies(game, seat, deal):
    # Route 1: backward induction over information sets on the tree arrays. Route 2: every pure
    # strategy of the responder, each played out by recursion on engine copies; the best of them.
    # One first deal at a time (the draws still chance), so that the pure strategies can be
    # listed: 8 to 256 of them for these deals.
    cls = envs.engine_class(game)
    deal = cls(2, rules="small").deals()[deal][1]
    tree = cfr.build_tree(cls(2, rules="small"), deals=[(1.0, deal)])
    rng = np.random.default_rng(seat)
    policy = np.where(tree.info_legal, rng.random(tree.info_legal.shape), 0.0)
    policy /= policy.sum(1, keepdims=True)
    value, _ = cfr.best_response(tree, policy, seat)
    index = {k: i for i, k in enumerate(tree.info_keys)}
    mine = [i for i in range(tree.num_infos) if tree.info_player[i] == seat]
    choices = [np.flatnonzero(tree.info_legal[i]) for i in mine]
    assert 8 <= np.prod([len(c) for c in choices]) <= 256
    best = -np.inf
    for pick in itertools.product(*choices):
        pure = policy.copy()
        pure[mine] = 0.0
        pure[mine, pick] = 1.0
        eng = cls(2, rules="small")
        eng.keep_history()
        eng.reset(np.random.default_rng(0), deal=deal)
        v = _walk_value(eng, lambda s, key, pure=pure: pure[index[key]])
        best = max(best, v if seat == 0 else -v)
    assert value == pytest.approx(best, abs=1e-12)


def test_nash_conv_falls_with_iterations(neu_tree):
    solver = cfr.CFRPlus(neu_tree)
    seen = [cfr.nash_conv(neu_tree, cfr.uniform(neu_tree))[0]]
    for n in (2, 10, 60):
        while solver.iterations < n:
            solver.iterate()
        seen.append(cfr.nash_conv(neu_tree, solver.average_policy())[0])
    assert all(b < a for a, b in zip(seen, seen[1:])), seen
    assert seen[-1] < 1e-3 * cfr.score_range(neu_tree)


def test_solve_writes_a_fresh_run_and_a_playable_agent(tmp_path):
    from experiments import solve

    out = tmp_path / "run"
    assert solve.main(["--game", "neu", "--minutes", "0.5", "--out", str(out), "--quiet"]) == 0
    result = json.loads((out / "result.json").read_text())
    assert result["nash_conv_of_range"] <= 1e-3 and result["score_range"] == 1.0
    assert result["iterations"] > 0 and len(result["best_response_value"]) == 2
    with pytest.raises(SystemExit):  # never over an earlier run
        solve.main(["--game", "neu", "--minutes", "0.5", "--out", str(out), "--quiet"])
    spec = f"cfr:{out / 'policy.npz'}"
    ex = tmp_path / "ex"
    assert solve.main(["--game", "neu", "--exploit", spec, "--out", str(ex), "--quiet"]) == 0
    again = json.loads((ex / "result.json").read_text())
    assert again["nash_conv"] == pytest.approx(result["nash_conv"], abs=1e-6)  # float32 policy file
    # without --out: a folder under results/ whose name holds no part of the path's slashes
    import os

    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        assert solve.main(["--game", "neu", "--exploit", spec, "--quiet"]) == 0
    finally:
        os.chdir(here)
    (made,) = (tmp_path / "results").iterdir()
    assert made.name.startswith("exploit_neu_cfr_") and (made / "result.json").is_file()
    # the agent plays the preset in a tournament (and under --isolate), knowing every information set it meets
    from experiments.tournament import run_tournament

    for isolate in (False, True):
        res = run_tournament("neu", [spec, "random"], num_players=2, deals=10, progress=False, engine="aec",
                             rule_options={"rules": "small"}, isolate=isolate, on_error="raise")
        assert res["games_played"] == 20 and sum(res["forfeits"].values()) == 0
    with pytest.raises(ValueError, match="needs inform"):  # without its information-set key it refuses to guess
        make_from_spec(spec, "neu", 2, seed=0).act({"observation": np.zeros(51, np.float32), "action_mask": np.ones(20, np.int8)})


def test_solve_refuses_a_game_without_a_small_preset_in_one_line(capsys, monkeypatch):
    from experiments import solve

    assert "neu" in solve.games_with_a_small_preset()
    # Every game has a preset now; the refusal is checked with Ma's Jong's taken away.
    monkeypatch.setattr(solve, "games_with_a_small_preset", lambda: ["neu"])
    with pytest.raises(SystemExit):
        solve.main(["--game", "not_your_mas_jong", "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "no small preset" in err and "neu" in err
    with pytest.raises(SystemExit):
        solve.main(["--game", "neu", "--exploit", "nosuchagent", "--quiet"])
    assert "unknown agent kind" in capsys.readouterr().err


def test_exploit_of_random_is_the_uniform_policys(neu_tree, tmp_path):
    from experiments import solve

    random_policy = solve.agent_policy(make_from_spec("random", "neu", 2, seed=0), neu_tree)
    assert np.allclose(random_policy, cfr.uniform(neu_tree))
    heuristic = solve.agent_policy(make_from_spec("heuristic", "neu", 2, seed=0), neu_tree)
    assert set(np.unique(heuristic)) <= {0.0, 1.0}
    nc, br = cfr.nash_conv(neu_tree, heuristic)
    assert nc > 0.01 and br[0] + br[1] == pytest.approx(nc)


def test_small_preset_works_everywhere_a_game_works(tmp_path):
    # parallel env, the gymnasium id, tournaments on both engines, and the web page's options
    import gymnasium

    from experiments.tournament import run_tournament
    from experiments.web import setup

    par = envs.neu_v0.parallel_env(num_players=2, rules="small")
    obs, _ = par.reset(seed=0)
    while par.agents:
        acts = {a: int(np.flatnonzero(obs[a]["action_mask"])[0]) for a in par.agents if obs[a]["action_mask"].any()}
        obs, *_ = par.step(acts)
    single = gymnasium.make(envs.gym_id("neu"), num_players=2, opponents="random", rules="small")
    obs, _ = single.reset(seed=0)
    assert np.asarray(obs)[:18].sum() == 2  # a 2-card hand
    for engine in ("aec", "vector"):
        summary = run_tournament("neu", ["heuristic", "random"], num_players=2, deals=20, progress=False,
                                 rule_options={"rules": "small"}, engine=engine)
        assert len(summary["records"]) == 40
    neu_entry = next(g for g in setup()["games"] if g["game"] == "neu")
    assert [o["name"] for o in neu_entry["rule_options"]] == ["rules"]
    from experiments.web.games import OpenGames

    opened = OpenGames().create({"game": "neu", "players": 2, "human": 0, "bots": ["heuristic", "heuristic"],
                                 "rule_options": {"rules": "small"}})
    assert opened["rule_options"] == {"rules": "small"} and len(opened["frames"][-1]["hands"][0]) == 2


def _policy_file(path, **change):
    """A policy.npz shaped like experiments.solve's for the Neu preset, with `change` applied."""
    infos, actions = 4, envs.engine_class("neu")(2, rules="small").num_actions
    data = dict(game=np.array("neu"), num_players=np.array(2), keys=np.arange(infos * 16, dtype=np.uint8).reshape(infos, 16),
                probs=np.full((infos, actions), 1.0 / actions, np.float32), option_names=np.array(["rules"]),
                option_values=np.array(["small"]))
    data.update(change)
    np.savez_compressed(path, **{k: v for k, v in data.items() if v is not None})
    return str(path)


@pytest.mark.parametrize("change, message", [
    ({"probs": np.ones(18, np.float32)}, "probs has shape (18,), expected 2 dimensions"),
    ({"probs": np.ones((4, 5), np.float32)}, "probs has 5 actions per information set"),
    ({"probs": np.ones((3, 18), np.float32)}, "probs has shape (3, 18); dimension 0 should be 4"),
    ({"probs": np.full((4, 18), -1.0, np.float32)}, "not negative"),
    ({"keys": np.zeros((4, 16), np.uint8)}, "an information set's key appears twice"),
    ({"keys": np.array([object()] * 4)}, "keys holds Python objects (a pickle), refused unread"),
    ({"option_values": np.array(["huge"])}, "its rule options do not make a game"),
])
def test_a_bad_policy_file_is_refused_in_one_line(tmp_path, change, message):
    from agents.cfr import CFRAgent

    with pytest.raises(ValueError, match=re.escape(message)):
        CFRAgent("neu", 2, 0, path=_policy_file(tmp_path / "policy.npz", **change))
    CFRAgent("neu", 2, 0, path=_policy_file(tmp_path / "good.npz"))  # the unchanged file loads


def test_a_policy_file_that_claims_a_huge_array_is_refused_from_its_index(tmp_path, monkeypatch):
    from agents import cfr

    path = _policy_file(tmp_path / "policy.npz", probs=np.zeros((4, 18), np.float32) + 1 / 18)
    monkeypatch.setattr(cfr, "MAX_POLICY_BYTES", 200)
    with pytest.raises(ValueError, match="uncompressed, more than the 200 bytes"):
        cfr.CFRAgent("neu", 2, 0, path=path)


def test_the_information_key_tells_apart_two_orders_of_the_same_moves(neu):
    """After a Double the other seat plays twice; its two cards are face up in the order played.
    A key of the seat's own observations and moves alone (the counts it sees) merges the two
    orders; the engine's key, which holds the public history in order, keeps them apart, and
    the tree has that many more information sets (6,902 against 6,644)."""
    import hashlib

    own_keys: dict = {}
    for _, deal in neu.deals():
        eng = copy.deepcopy(neu)
        eng.keep_history()
        eng.reset(np.random.default_rng(0), deal=deal)
        stack = [(eng, [b"", b""])]
        while stack:
            e, own = stack.pop()
            if e.game_over:
                continue
            seat = e.current_player
            obs, mask = e.observe(seat), e.legal_mask()
            old = hashlib.blake2b(own[seat] + obs.tobytes() + mask.tobytes(), digest_size=16).digest()
            public = sorted(str(x[:3]) for x in e._history if x[0] != seat)
            own_keys.setdefault(old, {}).setdefault(e.information_key(seat), set()).add(tuple(public))
            for a in np.flatnonzero(mask):
                for _, child, _, _ in e.step_outcomes(int(a)):
                    nxt = list(own)
                    nxt[seat] = own[seat] + obs.tobytes() + int(a).to_bytes(2, "little")
                    stack.append((child, nxt))
    split = {old: keys for old, keys in own_keys.items() if len(keys) > 1}
    assert split, "no information set of the old key was split"
    for keys in split.values():  # what splits them is only the order: the same moves, as multisets
        assert len(set().union(*keys.values())) == 1
    assert sum(len(k) for k in own_keys.values()) - len(own_keys) == 258
    tree = cfr.build_tree(neu)
    assert tree.num_infos == 6902


def _replays_and_solves(cls, tree, chance_drawn: bool) -> None:
    """Every path of a preset's tree (hundreds of them) replays on the engine (with the draws after the deal as
    chance nodes where the game has them), and CFR+ drives NashConv below 10^-3 of the range."""
    ends, drawn = _replay_every_path(cls, tree, cls(2, rules="small").deals())
    assert ends > 400 and (drawn > 1000 if chance_drawn else drawn == 0)
    solver = cfr.CFRPlus(tree)
    seen = [cfr.nash_conv(tree, cfr.uniform(tree))[0]]
    for n in (10, 200):
        while solver.iterations < n:
            solver.iterate()
        seen.append(cfr.nash_conv(tree, solver.average_policy())[0])
    assert seen[0] > seen[1] > seen[2] and seen[2] < 1e-3 * cfr.score_range(tree), seen


def _runs_everywhere(game: str, num_players=2) -> dict:
    """A preset's 20-deal tournament on both engines, and its entry on the web page's setup."""
    from experiments.tournament import run_tournament
    from experiments.web import setup

    for engine in ("aec", "vector"):
        summary = run_tournament(game, ["heuristic", "random"], num_players=num_players, deals=20, progress=False,
                                 rule_options={"rules": "small"}, engine=engine)
        assert len(summary["records"]) == 40
    entry = next(g for g in setup()["games"] if g["game"] == game)
    assert "rules" in [o["name"] for o in entry["rule_options"]]
    return entry


# --- Deadfall's small preset (RULES.md "Deadfall, small preset") ----------------------------------


@pytest.fixture(scope="module")
def deadfall_tree():
    return cfr.build_tree(Deadfall(2, rules="small"))


def test_deadfall_preset_deals_are_every_split_of_the_deck_by_brute_force():
    # Independently: every way to pick the two 2-card hands from the 10 cards as distinct
    # positions (C(10,2) * C(8,2) = 1,260, equally likely), grouped by what each hand holds.
    eng = Deadfall(2, rules="small")
    deck = eng.deck
    assert sorted(deck) == [1, 2, 2, 3, 3, 3, 4, 4, 4, 4] and eng.hand_size == 2
    count = {}
    for first in itertools.combinations(range(10), 2):
        rest = [i for i in range(10) if i not in first]
        for second in itertools.combinations(rest, 2):
            key = (tuple(sorted(deck[i] for i in first)), tuple(sorted(deck[i] for i in second)))
            count[key] = count.get(key, 0) + 1
    deals = {tuple(tuple(sorted(int(c) for c in h)) for h in d["hands"]): p for p, d in eng.deals()}
    assert deals.keys() == count.keys()
    for key, n in count.items():
        assert deals[key] == pytest.approx(n / 1260)
    with pytest.raises(ValueError, match="two-player preset"):
        Deadfall(3, rules="small")
    with pytest.raises(ValueError, match="plays one hand, got rounds=3"):
        Deadfall(2, rules="small", rounds=3)
    with pytest.raises(ValueError, match="small"):
        Deadfall(2).deals()


def test_deadfall_preset_plays_one_hand_as_an_env_and_hides_hands():
    eng = _preset_played_and_leak_free("deadfall")
    assert len(eng.set_aside) == 6 and eng.options["rounds"] == 1
    obs = eng.observe(0)
    hand, unseen = obs[:10], obs[10:20]
    # unseen: the preset's copies (1, 2, 3, 4 of ranks 1-4, none above) less the own hand
    assert np.array_equal(hand + unseen, [1, 2, 3, 4, 0, 0, 0, 0, 0, 0])
    rnd = np.random.default_rng(0)
    while not eng.game_over:
        eng.step(int(rnd.choice(np.flatnonzero(eng.legal_mask()))))
    assert eng.hand_number == 1


def test_deadfall_preset_tree_agrees_with_the_engine_and_cfr_solves_it(deadfall_tree):
    _replays_and_solves(Deadfall, deadfall_tree, chance_drawn=False)  # the deal is all the chance


def test_deadfall_preset_works_everywhere_a_game_works():
    from experiments import solve

    _runs_everywhere("deadfall")
    assert {"neu", "deadfall"} <= set(solve.games_with_a_small_preset())


# --- Not For Me's small preset (RULES.md "Not For Me, small preset") ------------------------------


@pytest.fixture(scope="module")
def not_for_me_tree():
    return cfr.build_tree(NotForMe(2, rules="small"))


def test_not_for_me_preset_deals_are_every_split_of_the_deck_by_brute_force():
    # Independently: every way to pick the two 2-card hands and the supply card from the 7 cards
    # as distinct positions (C(7,2) * C(5,2) * 3 = 630, equally likely), grouped by their kinds.
    eng = NotForMe(2, rules="small")
    deck = eng.deck
    assert sorted(deck) == [0, 0, 1, 1, 2, 2, 6] and eng.hand_size == 2 and eng.supply_size == 1
    count = {}
    for first in itertools.combinations(range(7), 2):
        rest = [i for i in range(7) if i not in first]
        for second in itertools.combinations(rest, 2):
            for up in (i for i in rest if i not in second):
                key = (tuple(sorted(deck[i] for i in first)), tuple(sorted(deck[i] for i in second)), deck[up])
                count[key] = count.get(key, 0) + 1
    names = lambda cards: tuple(sorted(parse_nfm_card(c) for c in cards))  # noqa: E731
    deals = {(names(d["hands"][0]), names(d["hands"][1]), parse_nfm_card(d["supply"][0])): p for p, d in eng.deals()}
    assert deals.keys() == count.keys()
    for key, n in count.items():
        assert deals[key] == pytest.approx(n / 630)
    with pytest.raises(ValueError, match="two-player preset"):
        NotForMe(3, rules="small")
    with pytest.raises(ValueError, match="plays one round, got rounds=2"):
        NotForMe(2, rules="small", rounds=2)
    with pytest.raises(ValueError, match="small"):
        NotForMe(2).deals()


def test_not_for_me_preset_plays_one_round_as_an_env_and_hides_hands():
    eng = _preset_played_and_leak_free("not_for_me")
    # one supply card (the other two slots empty), a draw pile of two
    assert eng.supply[1:] == [-1, -1] and eng.supply[0] >= 0 and len(eng.draw) == 2 and eng.rounds == 1
    obs = eng.observe(0)
    assert obs[:7].sum() == 2 and obs[10:31].sum() == 1  # a 2-card hand; one supply slot shown
    rnd = np.random.default_rng(0)
    while not eng.game_over:
        eng.step(int(rnd.choice(np.flatnonzero(eng.legal_mask()))))
    assert eng.round == 1


def test_not_for_me_preset_tree_agrees_with_the_engine_and_cfr_solves_it(not_for_me_tree):
    _replays_and_solves(NotForMe, not_for_me_tree, chance_drawn=True)  # draws after a Not For Me


def test_not_for_me_preset_works_everywhere_a_game_works():
    from experiments import solve

    _runs_everywhere("not_for_me")
    assert {"neu", "deadfall", "not_for_me"} <= set(solve.games_with_a_small_preset())


# --- Ma's Jong's small preset (RULES.md "Not Your Ma's Jong, small preset") ------------------------


@pytest.fixture(scope="module")
def mas_jong_tree():
    return cfr.build_tree(NotYourMasJong(2, rules="small"))


def test_mas_jong_preset_deals_are_every_split_without_a_complete_ma_by_brute_force():
    # Independently: every way to pick the Ma's 5 cards and the other's 4 from the 11 as distinct
    # positions (C(11,5) * C(6,4) = 6,930, equally likely), grouped by their kinds, less the deals
    # whose Ma holds a set and a pair (checked here by trying every set), renormalised.
    eng = NotYourMasJong(2, rules="small")
    deck = eng.deck
    assert sorted(deck) == [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3] and eng.hand_size == 4

    def complete(cards):  # one set (three alike, or three in a row) and a pair
        for s in [(k, k, k) for k in range(4)] + [(k, k + 1, k + 2) for k in range(2)]:
            rest = list(cards)
            if all(rest.count(c) >= s.count(c) for c in set(s)):
                for c in s:
                    rest.remove(c)
                if rest[0] == rest[1]:
                    return True
        return False

    count, kept = {}, 0
    for ma in itertools.combinations(range(11), 5):
        hand = sorted(deck[i] for i in ma)
        left = [i for i in range(11) if i not in ma]
        for other in itertools.combinations(left, 4):
            if complete(hand):
                continue
            key = (tuple(hand), tuple(sorted(deck[i] for i in other)))
            count[key] = count.get(key, 0) + 1
            kept += 1
    assert 0 < kept < 6930
    names = lambda cards: tuple(sorted(parse_mj_card(c) for c in cards))  # noqa: E731
    deals = {(names(d["hands"][0]), names(d["hands"][1])): p for p, d in eng.deals()}
    assert deals.keys() == count.keys()
    for key, n in count.items():
        assert deals[key] == pytest.approx(n / kept)
    with pytest.raises(ValueError, match="two-player preset"):
        NotYourMasJong(4, rules="small")
    with pytest.raises(ValueError, match="from 3 to 4"):
        NotYourMasJong(2)
    with pytest.raises(ValueError, match="never deals the Ma a complete hand"):
        eng.reset(np.random.default_rng(0), deal={"hands": [["Red 1"] * 3 + ["Red 2"] * 2, ["Red 3"] * 3 + ["Red 4"]]})
    with pytest.raises(ValueError, match="small"):
        NotYourMasJong(3).deals()


def test_mas_jong_preset_plays_one_round_as_an_env_and_hides_hands():
    eng = _preset_played_and_leak_free("not_your_mas_jong")
    assert eng.hand_sizes == [5, 4] and len(eng.draw) == 2 and eng.round_limit == 1
    for seed in range(200):  # the stream's deal never gives the Ma a complete hand: it deals again
        eng.reset(np.random.default_rng(seed))
        assert not eng._complete(eng.ma) and not eng.game_over
    env = envs.make("not_your_mas_jong", rules="small")  # the preset's own player count
    env.reset(seed=1)
    assert env.unwrapped.game.num_players == 2 and env.possible_agents == ["player_0", "player_1"]
    # one round, and a tie (the pile runs out) stands: no extra round is dealt
    rnd = np.random.default_rng(0)
    ties = 0
    for seed in range(30):
        eng.reset(np.random.default_rng(seed))
        while not eng.game_over:
            eng.step(int(rnd.choice(np.flatnonzero(eng.legal_mask()))))
        assert eng.round == 1
        ties += eng.tokens == [10, 10]
    assert ties > 0


def test_mas_jong_preset_tree_agrees_with_the_engine_and_cfr_solves_it(mas_jong_tree):
    _replays_and_solves(NotYourMasJong, mas_jong_tree, chance_drawn=True)  # every draw from the pile


def test_mas_jong_preset_works_everywhere_a_game_works():
    from experiments import solve
    from experiments.tournament import run_tournament

    entry = _runs_everywhere("not_your_mas_jong", num_players=None)  # the preset's two, though the game takes 3 or 4
    with pytest.raises(ValueError, match="players must be from 2 to 2"):
        run_tournament("not_your_mas_jong", ["heuristic", "random"], num_players=4, deals=2, progress=False,
                       rule_options={"rules": "small"})
    assert entry["presets"] == {"small": 2} and "heuristic" in entry["bots"][2]
    # An agent built for two players alone reads the preset's sizes; the player range is the preset's.
    assert envs.info("not_your_mas_jong", 2).obs_size == NotYourMasJong(2, rules="small").obs_size
    assert NotYourMasJong.player_range({"rules": "small"}) == (2, 2) and NotYourMasJong.player_range() == (3, 4)
    with pytest.raises(ValueError, match="from 3 to 4"):
        envs.info("not_your_mas_jong", 5)
    assert set(solve.games_with_a_small_preset()) == set(envs.GAMES)


def test_the_tree_builder_reports_progress_per_deal():
    # experiments.solve draws a bar over the first deals from these calls (Ma's Jong's preset
    # takes about 20 s to enumerate).
    calls = []
    eng = NotForMe(2, rules="small")
    deals = eng.deals()[:5]
    cfr.build_tree(eng, deals=deals, progress=lambda *total: calls.append(total))
    assert calls == [(5,)] + [()] * 5


@pytest.mark.parametrize("tree_fixture", ["neu_tree", "deadfall_tree", "not_for_me_tree", "mas_jong_tree"])
def test_every_preset_ranks_random_above_the_heuristic_above_the_solution_in_exploitability(tree_fixture, request):
    # The exact exploitability (NashConv) of each: the uniform policy gives away the most, the rules-of-thumb
    # heuristic less, and a few hundred CFR+ iterations almost nothing (under 1% of the score range).
    from experiments.solve import agent_policy

    tree = request.getfixturevalue(tree_fixture)
    game = tree_fixture.removesuffix("_tree").replace("mas_jong", "not_your_mas_jong")
    heuristic = agent_policy(make_from_spec("heuristic", game, 2, seed=0), tree)
    solver = cfr.CFRPlus(tree)
    while solver.iterations < 200:
        solver.iterate()
    random_nc, heuristic_nc, solved_nc = (cfr.nash_conv(tree, p)[0]
                                          for p in (cfr.uniform(tree), heuristic, solver.average_policy()))
    assert random_nc > heuristic_nc > solved_nc, (random_nc, heuristic_nc, solved_nc)
    assert solved_nc < 0.01 * cfr.score_range(tree)

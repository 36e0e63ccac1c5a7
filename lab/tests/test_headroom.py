"""lab.headroom: heuristic variants against the standard heuristic."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import envs
from agents import make_agent
from lab import headroom as H
from tests.helpers import cli_error_line, heuristic_decisions


def test_a_variant_that_changes_nothing_finishes_first_exactly_a_quarter_of_each_deal(monkeypatch):
    # Duplicate deals with deterministic heuristics: the same game four times, the variant in
    # each seat once. Wrong seating or seeding would break the exact 1/4.
    monkeypatch.setitem(H.VARIANTS["neu"], "unchanged", H._neu())
    monkeypatch.setitem(H.VARIANTS["not_your_mas_jong"], "unchanged", H._variant(H.NotYourMasJongHeuristic))
    for game in ("neu", "not_your_mas_jong"):
        for deal in range(3):
            assert H.play_deal((game, "unchanged", 0, deal)) == 0.25


def test_variants_change_play():
    shares = [H.play_deal(("neu", "attack x2", 0, d)) for d in range(12)]
    assert any(s != 0.25 for s in shares)


def test_only_the_cheat_reads_real_hands():
    env = envs.make_raw("neu", num_players=4)
    cheat = H.NeuCheat(0, env.game)
    honest = make_agent("heuristic", "neu", 4, seed=0)
    fractional = 0
    for agent, o, _ in heuristic_decisions(env, seed=3, max_iter=300):
        if env.possible_agents.index(agent) == 0:
            for a, (attack, _, _) in cheat.terms(o).items():
                assert attack in (0.0, 1.0)  # it knows, it does not estimate
            fractional += any(0 < t[0] < 1 for t in honest.terms(o).values())
    assert fractional > 0


def test_the_slow_searches_run_only_when_named(monkeypatch):
    played = []
    monkeypatch.setattr(H, "play_deal", lambda job: played.append(job[1]) or 0.25)
    H.headroom("neu", deals=2, progress=False)
    H.headroom("not_your_mas_jong", deals=2, progress=False)
    searches = {name for variants in H.VARIANTS.values() for name in variants if "search" in name}
    assert played and not searches & set(played) and len(searches) == 3
    for name in searches:
        game = next(g for g, variants in H.VARIANTS.items() if name in variants)
        H.headroom(game, deals=2, variants=[name], progress=False)
        assert played[-1] == name


@pytest.mark.parametrize("game, make_search", [("neu", H._neu_search), ("not_your_mas_jong", H._mas_jong_search)])
def test_a_fair_search_knows_only_its_seat(game, make_search):
    # Its move must not depend on the cards it cannot see nor on the engine's RNG (the order of
    # later reshuffles): play each searched decision of seat 0 against the real game and against
    # a copy with those redealt, with the same search seed.
    search = make_search(samples=4)
    env = envs.make_raw(game, num_players=4)
    real = env.game
    decisions = deviations = redealt = 0
    for seed in range(20):
        for agent, o, heuristic_move in heuristic_decisions(env, seed=seed):
            if agent != "player_0" or not search(0, real).searches(o, [int(a) for a in np.flatnonzero(o["action_mask"])]):
                continue
            before = (copy.deepcopy(real.hands), list(real.draw), real.rng.bit_generator.state)
            twin = copy.deepcopy(real)
            twin.shuffle_hidden(0, np.random.default_rng(decisions))
            twin.rng = np.random.default_rng(10_000 + decisions)
            redealt += twin.hands != real.hands
            move = search(0, real).act(o)
            assert search(0, twin).act(o) == move
            assert (real.hands, real.draw, real.rng.bit_generator.state) == before  # the real game is untouched
            decisions += 1
            deviations += move != heuristic_move
            if decisions == 24:
                break
        if decisions == 24:
            break
    assert decisions == 24 and redealt >= 12
    assert deviations > 0  # it does search: sometimes it leaves the heuristic's move


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--game", "chess"], "no variants for game 'chess'"),
        (["--game", "neu", "--variants", "foo"], "unknown variant 'foo' for neu"),
        (["--game", "neu", "--deals", "1"], "--deals must be at least 2"),
        (["--game", "neu", "--workers", "0"], "--workers must be at least 1"),
    ],
)
def test_bad_arguments_one_line(argv, message, capsys):
    assert message in cli_error_line(H.main, argv, capsys)


def test_cli_prints_a_table(capsys):
    assert H.main(["--game", "not_your_mas_jong", "--deals", "2", "--variants", "never steals for a set", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "| never steals for a set | " in out and "| 2 |" in out


def test_mas_jong_cheat_avoids_feeding_a_winning_steal_only_when_an_equally_close_discard_does():
    from agents.heuristic.hand_distance import shanten_each
    from envs.not_your_mas_jong import NUM_TYPES, OBS_PHASE, is_complete_concealed

    env = envs.make_raw("not_your_mas_jong", num_players=4)
    game = env.game
    cheat = H.MasJongCheat(0, game)

    def feeds(card):  # independent of the cheat's own loop: every opponent, by brute force
        return any(is_complete_concealed([c + (t == card) for t, c in enumerate(game.hands[s])]) for s in (1, 2, 3))

    checked = dodged = 0
    for seed in range(6):
        for agent, o, action in heuristic_decisions(env, seed=seed):
            if agent != "player_0" or o["observation"][OBS_PHASE] == 1:  # discard decisions of seat 0
                continue
            mine = cheat.act(o)
            legal = [k for k in range(NUM_TYPES) if o["action_mask"][k]]
            after = shanten_each(list(game.hands[0]), len(game.locked_sets[0]), -1)
            closest = min(after[k] for k in legal)
            safe = [k for k in legal if after[k] == closest and not feeds(k)]
            checked += 1
            if safe:
                assert not feeds(mine)
                dodged += feeds(action)  # the honest heuristic would have fed a win here
            else:
                assert mine == action  # nothing to avoid: the cheat plays like the heuristic
    assert checked > 100 and dodged > 0

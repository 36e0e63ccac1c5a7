"""experiments.headroom: heuristic variants against the standard heuristic."""

from __future__ import annotations

import pytest

import envs
from agents import make_agent
from experiments import headroom as H
from tests.helpers import heuristic_decisions


def test_a_variant_that_changes_nothing_finishes_first_exactly_a_quarter_of_each_deal(monkeypatch):
    # Duplicate deals with deterministic heuristics: the same game four times, the variant in
    # each seat once. Wrong seating or seeding would break the exact 1/4.
    monkeypatch.setitem(H.VARIANTS["neu"], "unchanged", H._neu())
    monkeypatch.setitem(H.VARIANTS["not_your_mas_jong"], "unchanged", H._mas_jong())
    for game in ("neu", "not_your_mas_jong"):
        for deal in range(3):
            assert H.play_deal((game, "unchanged", 0, deal)) == 0.25


def test_variants_change_play():
    shares = [H.play_deal(("neu", "attack x2", 0, d)) for d in range(12)]
    assert any(s != 0.25 for s in shares)


def test_only_the_cheat_reads_real_hands():
    assert make_agent("heuristic", "neu", 4, seed=0).peek is None  # the standard heuristic plays on the odds
    env = envs.make_raw("neu", num_players=4)
    cheat = H._neu_cheat(0, env.game)
    honest = make_agent("heuristic", "neu", 4, seed=0)
    fractional = 0
    for agent, o, _ in heuristic_decisions(env, seed=3, max_iter=300):
        if env.possible_agents.index(agent) == 0:
            for a, (attack, _, _) in cheat.terms(o).items():
                assert attack in (0.0, 1.0)  # it knows, it does not estimate
            fractional += any(0 < t[0] < 1 for t in honest.terms(o).values())
    assert fractional > 0


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
    with pytest.raises(SystemExit) as e:
        H.main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]


def test_cli_prints_a_table(capsys):
    assert H.main(["--game", "not_your_mas_jong", "--deals", "2", "--variants", "never steals for a set", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "| never steals for a set | " in out and "| 2 |" in out

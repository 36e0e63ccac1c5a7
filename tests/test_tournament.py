"""The tournament harness: tables, duplicate-deal rotation, determinism across workers, statistics, CLI errors."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest

from experiments import tournament as T
from experiments.tournament import AgentSpec, make_tables, mean_ci, seat_lineup, win_shares
from tests.helpers import cli_error_line

H, R = AgentSpec.of("heuristic"), AgentSpec.of("random")


def names(tables):
    return [tuple(s.name for s in t) for t in tables]


# -- tables ---------------------------------------------------------------------
def test_fill_mode_last_agent_fills_the_remaining_seats():
    assert names(make_tables(["heuristic", "random"], 4)) == [("heuristic", "random", "random", "random")]
    assert names(make_tables(["random", "heuristic"], 2)) == [("random", "heuristic")]
    # seat by seat says the same thing
    assert names(make_tables(["heuristic", "random", "random", "random"], 4)) == [("heuristic", "random", "random", "random")]


def test_round_robin_and_one_vs_rest():
    a, b, c = AgentSpec("a", "random"), AgentSpec("b", "random"), AgentSpec("c", "random")
    assert names(make_tables([a, b, c], 2)) == [("a", "b"), ("a", "c"), ("b", "c")]  # more agents than seats
    assert names(make_tables([a, b], 4, "one-vs-rest")) == [("a", "b", "b", "b"), ("b", "a", "a", "a")]
    assert names(make_tables([a, b, c], 2, "one-vs-rest")) == [("a", "b"), ("a", "c"), ("b", "c")]
    with pytest.raises(ValueError, match="valid modes"):
        make_tables([a, b], 2, "swiss")
    with pytest.raises(ValueError, match="at most 2"):
        make_tables([a, b, c], 2, "fill")


def test_rotation_puts_every_agent_in_every_seat():
    table = ("a", "b", "c", "d")
    seats = [seat_lineup(table, r) for r in range(4)]
    for name in table:
        assert sorted(s.index(name) for s in seats) == [0, 1, 2, 3]


def test_duplicate_deals_replay_one_seed_in_every_rotation():
    recs = T.play("neu", make_tables([H, R], 4), 4, range(3), seed=5, progress=False)
    assert len(recs) == 3 * 4
    for deal in range(3):
        rot = [r for r in recs if r["deal"] == deal]
        assert [r["rotation"] for r in rot] == [0, 1, 2, 3]
        assert len({r["deal_seed"] for r in rot}) == 1, "every rotation of a deal uses the same seed"
        assert sorted(r["agents"].index("heuristic") for r in rot) == [0, 1, 2, 3]
    assert len({r["deal_seed"] for r in recs}) == 3, "deals differ"
    # The seed of a deal depends only on (seed, deal), so other tables and runs share it.
    assert recs[0]["deal_seed"] == T.deal_seed(5, 0)
    plain = T.play("neu", make_tables([H, R], 4), 4, range(2), seed=5, duplicate=False, progress=False)
    assert len({r["deal_seed"] for r in plain}) == len(plain), "--plain: a new deal every game"


def test_same_deal_same_cards_in_every_rotation():
    import envs

    env = envs.make_raw("neu", num_players=4)
    first = []
    for r in range(4):
        env.reset(seed=T.deal_seed(1, 7, r))
        first.append(env.state().copy())
    assert all(np.array_equal(first[0], s) for s in first)


def test_same_seed_same_results_for_one_and_two_workers():
    a = T.run_tournament("neu", ["heuristic", "random"], 2, deals=6, seed=3, workers=1, progress=False)
    b = T.run_tournament("neu", ["heuristic", "random"], 2, deals=6, seed=3, workers=2, progress=False)
    assert a["records"] == b["records"]
    assert a["overall"] == b["overall"] and a["pairwise"] == b["pairwise"]
    c = T.run_tournament("neu", ["heuristic", "random"], 2, deals=6, seed=4, workers=1, progress=False)
    assert c["records"] != a["records"], "a different seed plays different games"


def test_records_are_sane_and_rewards_zero_sum():
    res = T.run_tournament("neu", ["heuristic", "random"], 4, deals=3, seed=0, progress=False)
    for rec in res["records"]:
        assert abs(sum(rec["rewards"])) < 1e-9
        assert min(rec["ranks"]) == 1
        assert sum(rec["scores"]) > 0  # the winner keeps chips
    assert res["overall"]["heuristic"]["games"] == 12 and res["overall"]["random"]["games"] == 12


# -- statistics -------------------------------------------------------------------
def test_mean_ci_matches_the_normal_formula():
    x = [1.0, 2.0, 3.0, 4.0, 5.0]
    s = mean_ci(x)
    half = 1.959963984540054 * math.sqrt(2.5) / math.sqrt(5)  # sd(ddof=1) of 1..5 is sqrt(2.5)
    assert s["mean"] == pytest.approx(3.0)
    assert s["half_width"] == pytest.approx(half)
    assert (s["ci_low"], s["ci_high"]) == pytest.approx((3 - half, 3 + half))
    assert math.isnan(mean_ci([2.0])["half_width"])


def _rec(table, deal, rotation, agents, scores, ranks, rewards=None):
    return {"table": table, "deal": deal, "rotation": rotation, "deal_seed": deal, "agents": agents,
            "scores": scores, "ranks": ranks, "rewards": rewards or [0.0] * len(agents)}


def test_stats_are_over_per_deal_means():
    rng = np.random.default_rng(0)
    recs, per_deal = [], []
    for d in range(10):
        sa = rng.integers(0, 4, size=2)  # agent a's score in the two rotations of deal d
        recs.append(_rec(0, d, 0, ["a", "b"], [int(sa[0]), 0], [1, 2]))
        recs.append(_rec(0, d, 1, ["b", "a"], [0, int(sa[1])], [2, 1]))
        per_deal.append(sa.mean())
    s = T.agent_stats(recs)["a"]["score"]
    x = np.array(per_deal)
    assert s["mean"] == pytest.approx(x.mean())
    assert s["half_width"] == pytest.approx(1.959963984540054 * x.std(ddof=1) / np.sqrt(len(x)))
    assert s["n"] == 10


def test_win_rate_shares_ties():
    assert win_shares([1, 1, 3, 4]) == [0.5, 0.5, 0.0, 0.0]
    assert win_shares([2, 1, 3]) == [0.0, 1.0, 0.0]
    assert win_shares([1, 1, 1]) == pytest.approx([1 / 3] * 3)
    recs = [
        _rec(0, 0, 0, ["a", "b", "b", "b"], [2, 2, 0, 0], [1, 1, 3, 3]),  # a shares first place with a b
        _rec(0, 1, 0, ["a", "b", "b", "b"], [3, 0, 0, 0], [1, 2, 2, 2]),
    ]
    st = T.agent_stats(recs)
    assert st["a"]["win"]["mean"] == pytest.approx((0.5 + 1.0) / 2)
    # b's three seats share: deal 0 gives b (0.5 + 0 + 0) / 3, deal 1 gives 0
    assert st["b"]["win"]["mean"] == pytest.approx((0.5 / 3 + 0.0) / 2)
    pw = T.pairwise(recs, ["a", "b"])
    # a vs each b seat: deal 0: tie (1/2), ahead, ahead; deal 1: ahead ×3
    assert pw["a vs b"]["ahead"] == pytest.approx((0.5 + 1 + 1 + 3) / 6)


def test_variance_reduction_formula():
    rng = np.random.default_rng(1)
    recs = []
    for d in range(40):
        luck = rng.normal() * 3  # a deal that favours seat 0 for everyone who sits there
        for r in range(2):
            noise = rng.normal()
            s0, s1 = luck + noise, -luck - noise
            agents = ["a", "b"] if r == 0 else ["b", "a"]
            recs.append(_rec(0, d, r, agents, [s0, s1], [1 if s0 >= s1 else 2, 1 if s1 >= s0 else 2]))
    pw = T.pairwise(recs, ["a", "b"])["a vs b"]
    per_game = np.array([(r["scores"][r["agents"].index("a")] - r["scores"][r["agents"].index("b")]) for r in recs])
    per_deal = per_game.reshape(40, 2).mean(axis=1)
    assert pw["var_plain"] == pytest.approx(per_game.var(ddof=1) / 80)
    assert pw["var_duplicate"] == pytest.approx(per_deal.var(ddof=1) / 40)
    assert pw["variance_reduction"] > 5, "seat luck cancels within a duplicate deal"
    assert pw["score_diff"]["mean"] == pytest.approx(per_deal.mean())


def test_identical_agents_cancel_exactly_and_the_report_says_so():
    # Two agents that make the same moves: each deal's rotations give equal and opposite differences,
    # so the per-deal means are 0 up to rounding while single games still differ.
    recs = []
    for d in range(5):
        luck = 0.1 * (d + 1) + 1 / 3
        for r in range(2):
            agents = ["a", "b"] if r == 0 else ["b", "a"]
            recs.append(_rec(0, d, r, agents, [luck, -luck], [1, 2]))
    pw = T.pairwise(recs, ["a", "b"])["a vs b"]
    assert pw["var_plain"] > 0 and pw["variance_reduction"] == float("inf")
    assert T.variance_reduction(4.0, 1.0) == 4.0 and np.isnan(T.variance_reduction(0.0, 0.0))
    res = T.run_tournament("neu", [H, R], 2, deals=2, progress=False)
    res["pairwise"]["heuristic vs random"]["variance_reduction"] = pw["variance_reduction"]
    row = next(line for line in T.markdown([res]).splitlines() if "heuristic vs random" in line)
    assert row.split("|")[6].strip() == "∞"


def test_openskill_only_with_more_than_two_agents(tmp_path):
    two = T.run_tournament("neu", ["heuristic", "random"], 2, deals=2, progress=False)
    assert two["openskill"] is None
    three = T.run_tournament("neu", [H, R, AgentSpec("random2", "random")], 2, deals=3, progress=False)
    assert set(three["openskill"]) == {"heuristic", "random", "random2"}
    assert len(three["tables"]) == 3
    written = T.write_reports([three], tmp_path)
    assert {p.name for p in written} >= {"results.json", "results.md", "neu_2p.csv", "neu_2p_ratings.png", "neu_2p_winrate.png"}


# -- command line -------------------------------------------------------------------
def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "experiments.tournament", *args], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize(
    "args, expected",
    [
        (["--game", "chess"], "valid games: "),
        (["--agents", "heuristic,alphago"], "valid agents: random, heuristic, ppo"),
        (["--players", "9"], "from 2 to 7"),
        (["--agents", "ppo:/nowhere/neu.pt,heuristic"], "no checkpoint file at '/nowhere/neu.pt'"),
    ],
)
def test_cli_bad_input_is_one_line_exit_2(args, expected, capsys):
    line = cli_error_line(T.main, args, capsys)
    assert expected in line
    if "valid games" in expected:
        assert "neu" in line


def test_cli_bad_input_from_the_shell_has_no_traceback():
    r = run_cli("--game", "neu", "--players", "9")
    assert r.returncode == 2
    assert "Traceback" not in r.stderr
    assert r.stderr.strip().splitlines() == ["python -m experiments.tournament: error: neu: players must be from 2 to 7, got 9"]


def test_cli_writes_reports(tmp_path, capsys):
    assert T.main(["--game", "neu", "--players", "2", "--deals", "2", "--quiet", "--out", str(tmp_path)]) == 0
    assert "heuristic vs random" in capsys.readouterr().out
    assert (tmp_path / "results.json").exists() and (tmp_path / "neu_2p_games.csv").exists()


def test_cli_plays_a_checkpoint_file(tmp_path, capsys):
    from agents.ppo import checkpoint_path

    path = checkpoint_path("neu", 2)
    args = ["--game", "neu", "--players", "2", "--agents", f"ppo:{path},heuristic", "--deals", "2", "--quiet", "--out", str(tmp_path)]
    assert T.main(args) == 0
    assert f"ppo:{path} vs heuristic" in capsys.readouterr().out


def test_deadline_keeps_whole_deals_equal_to_a_shorter_run():
    import time

    tables = make_tables([H, R], 2, "one-vs-rest")
    cut = T.play("neu", tables, 2, range(40), seed=2, progress=False, deadline=time.perf_counter())
    deals = sorted({r["deal"] for r in cut})
    assert 1 <= len(deals) < 40 and deals == list(range(len(deals)))
    assert cut == T.play("neu", tables, 2, range(len(deals)), seed=2, progress=False)

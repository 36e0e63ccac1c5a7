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


def test_seeds_of_many_rows_are_numpys_seed_sequence():
    rng = np.random.default_rng(0)
    deals = rng.integers(0, 2**32, size=40)
    rotations = rng.integers(0, 7, size=40)
    for seed in (0, 5, 2**32 + 3, 2**63 - 1):
        assert T.seeds_of(seed, deals).tolist() == [T.deal_seed(seed, int(d)) for d in deals]
        assert T.seeds_of(seed, deals, 3, rotations, 2, 2).tolist() == [T.agent_seed(seed, int(d), 3, int(r), 2) for d, r in zip(deals, rotations)]
    big = deals + 2**32  # words past 32 bits take the one-by-one path
    assert T.seeds_of(1, big).tolist() == [T.deal_seed(1, int(d)) for d in big]


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


def test_ratings_and_reports(tmp_path):
    two = T.run_tournament("neu", ["heuristic", "random"], 2, deals=2, progress=False)
    assert set(two["ratings"]) == {"heuristic", "random"}
    three = T.run_tournament("neu", [H, R, AgentSpec("random2", "random")], 2, deals=3, progress=False)
    assert set(three["ratings"]) == {"heuristic", "random", "random2"}
    assert abs(sum(r["rating"] for r in three["ratings"].values())) < 1e-6, "the agents average 0"
    assert all(r["ci_low"] <= r["ci_high"] for r in three["ratings"].values())
    assert len(three["tables"]) == 3
    written = T.write_reports([three], tmp_path)
    assert {p.name for p in written} >= {"results.json", "results.md", "neu_2p.csv", "neu_2p_ratings.png", "neu_2p_winrate.png"}


def _comparison_records(p_ahead: float, games: int, seed: int = 0) -> list[dict]:
    """Two-player games where 'a' finishes ahead of 'b' with probability p_ahead, over deals of 2 rotations."""
    rng = np.random.default_rng(seed)
    recs = []
    for g in range(games):
        a_first = rng.random() < p_ahead
        agents = ["a", "b"] if g % 2 == 0 else ["b", "a"]
        ranks = [1, 2] if (agents[0] == "a") == a_first else [2, 1]
        recs.append(_rec(0, g // 2, g % 2, agents, [0, 0], ranks))
    return recs


def test_bradley_terry_recovers_a_known_strength_gap():
    recs = _comparison_records(0.64, 4000)
    r = T.bradley_terry(recs, ["a", "b"])
    gap = r["a"]["rating"] - r["b"]["rating"]
    share = np.mean([rec["ranks"][rec["agents"].index("a")] == 1 for rec in recs])
    assert gap == pytest.approx(400 * np.log10(share / (1 - share)), abs=2.0)  # the MLE of two agents, up to the prior
    assert 70 < gap < 130 and r["a"]["ci_low"] < r["a"]["rating"] < r["a"]["ci_high"]


def test_ratings_do_not_depend_on_the_order_of_the_games_and_a_copy_rates_level():
    import random

    res = T.run_tournament("neu", [H, AgentSpec("copy", "heuristic"), R], 3, deals=30, seed=4, progress=False, mode="one-vs-rest")
    names, rated = res["agents"], res["ratings"]
    for order in (list(reversed(res["records"])), random.Random(0).sample(res["records"], len(res["records"]))):
        assert T.bradley_terry(order, names) == rated
    h, c = rated["heuristic"], rated["copy"]
    assert c["ci_low"] <= h["rating"] <= c["ci_high"] and h["ci_low"] <= c["rating"] <= h["ci_high"]
    assert rated["random"]["ci_high"] < min(h["ci_low"], c["ci_low"])


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
    cut = T.play("neu", tables, 2, range(40), seed=2, progress=False, deadline=time.perf_counter(), engine="aec")
    deals = sorted({r["deal"] for r in cut})
    assert 1 <= len(deals) < 40 and deals == list(range(len(deals)))
    assert cut == T.play("neu", tables, 2, range(len(deals)), seed=2, progress=False)  # on the batched engine


# -- the batched engine ---------------------------------------------------------------
class LastLegal:
    """A user agent with both protocols: the last legal action, one game or many."""

    def act(self, observation):
        return int(np.flatnonzero(observation["action_mask"])[-1])

    def act_batch(self, obs, mask, seat):
        return mask.shape[1] - 1 - np.argmax(mask[:, ::-1], axis=1)


class SometimesIllegal(LastLegal):
    """Now and then (on a hash of what it sees) plays a masked-out action."""

    @staticmethod
    def _bad(observation_row, mask_row):
        return int(float(observation_row.sum()) * 1000) % 23 == 0 and not mask_row.all()

    def act(self, observation):
        o, m = observation["observation"], observation["action_mask"]
        return int(np.flatnonzero(m == 0)[0]) if self._bad(o, m) else super().act(observation)

    def act_batch(self, obs, mask, seat):
        out = super().act_batch(obs, mask, seat)
        for t in range(len(out)):
            if self._bad(obs[t], mask[t]):
                out[t] = int(np.flatnonzero(mask[t] == 0)[0])
        return out


def test_vector_env_reset_with_seeds_deals_the_aec_games():
    import envs
    from envs.vector import KERNELS, VectorEnv

    rng = np.random.default_rng(0)
    for game in KERNELS:
        seeds = np.array([T.deal_seed(3, d) for d in range(3)], np.int64)
        venv = VectorEnv(game, 3, 3, seed=99)
        obs, mask, seat = venv.reset(seeds=seeds)
        aec = [envs.make_raw(game, num_players=3) for _ in seeds]
        for e, s in zip(aec, seeds):
            e.reset(seed=int(s))
        live = [True] * 3
        for _ in range(5000):
            actions = np.array([rng.choice(np.flatnonzero(m)) for m in mask])
            for i, e in enumerate(aec):
                if live[i]:
                    o = e.observe(e.agent_selection)
                    assert np.array_equal(o["observation"], obs[i]) and np.array_equal(o["action_mask"], mask[i]), (game, i)
                    e.step(int(actions[i]))
            obs, mask, seat, rewards, done = venv.step(actions)
            for i, e in enumerate(aec):
                if live[i] and done[i]:
                    info = e.infos[e.possible_agents[0]]
                    assert list(venv.final_scores[i]) == list(info["final_scores"]), game
                    live[i] = False
            if not any(live):
                break
        assert not any(live)
    with pytest.raises(ValueError, match=r"seeds must be an integer array of shape \(3,\)"):
        venv.reset(seeds=[1, 2])


@pytest.mark.parametrize("game", ["neu", "deadfall", "not_for_me", "not_your_mas_jong"])
def test_the_same_tournament_on_both_engines_gives_identical_records(game, tmp_path):
    common = dict(num_players=4, deals=3, seed=7, progress=False, mode="one-vs-rest")
    agents = ["heuristic", "random", AgentSpec("last", LastLegal)]
    aec = T.run_tournament(game, agents, engine="aec", save_replays=tmp_path / "aec", **common)
    vec = T.run_tournament(game, agents, engine="auto", save_replays=tmp_path / "vec", **common)
    assert (aec["engine"], vec["engine"]) == ("aec", "vector")
    assert vec["records"] == aec["records"] and len(vec["records"]) == 6 * 3 * 4
    for key in ("overall", "pairwise", "forfeits", "tables"):
        assert vec[key] == aec[key], key
    names = sorted(p.name for p in (tmp_path / "aec").iterdir())
    assert names and names == sorted(p.name for p in (tmp_path / "vec").iterdir())
    assert all((tmp_path / "aec" / n).read_text() == (tmp_path / "vec" / n).read_text() for n in names)


def test_forfeits_and_workers_on_the_batched_engine():
    args = ("neu", [AgentSpec("odd", SometimesIllegal), "random"], 3)
    kw = dict(deals=4, seed=2, progress=False, on_error="forfeit")
    aec = T.run_tournament(*args, engine="aec", **kw)
    vec = T.run_tournament(*args, engine="vector", workers=2, **kw)
    assert 0 < aec["forfeits"]["odd"] < aec["games_played"]
    assert vec["records"] == aec["records"]
    with pytest.raises(T.AgentError, match=r"agent 'odd' \(seat \d, deal \d, rotation \d, move \d+\) returned action \d+, which the action mask"):
        T.run_tournament(*args, engine="vector", deals=4, seed=2, progress=False)


def test_engine_vector_needs_batched_agents_and_auto_falls_back():
    class OneAtATime:
        def act(self, observation):
            return int(np.flatnonzero(observation["action_mask"])[0])

    with pytest.raises(ValueError, match="engine 'vector': agent 'OneAtATime' has no act_batch"):
        T.run_tournament("neu", [OneAtATime, "random"], 2, deals=1, progress=False, engine="vector")
    res = T.run_tournament("neu", [OneAtATime, "random"], 2, deals=1, progress=False)
    assert res["engine"] == "aec"
    mixed = T.run_tournament("neu", [OneAtATime, "random", "heuristic"], 2, deals=1, progress=False)
    assert mixed["engine"] == "vector+aec"
    assert "played on: aec" in T.markdown([res]) and "played on: vector+aec" in T.markdown([mixed])
    timed = T.run_tournament("neu", ["heuristic", "random"], 2, deals=1, progress=False, move_timeout=5)
    assert timed["engine"] == "aec", "timed moves are single moves"


def test_cli_engine_flag(capsys, tmp_path):
    line = cli_error_line(T.main, ["--engine", "vector", "--agents", f"{__file__}:OneMove,random", "--deals", "1"], capsys)
    assert "engine 'vector': agent 'OneMove' has no act_batch" in line
    assert T.main(["--engine", "aec", "--players", "2", "--deals", "1", "--quiet", "--no-plots", "--out", str(tmp_path / "o")]) == 0
    assert "played on: aec" in (tmp_path / "o" / "results.md").read_text()


class OneMove:
    def act(self, observation):
        return int(np.flatnonzero(observation["action_mask"])[0])


class PeekRows(LastLegal):
    """Keeps state per batch row (reset_rows), and writes down every (row, seat) it is handed."""

    handed: list = []

    def reset_rows(self, rows):
        pass

    def act_batch(self, obs, mask, seat, rows=None):
        rows = np.arange(len(seat)) if rows is None else np.asarray(rows)
        PeekRows.handed += list(zip(rows.tolist(), np.asarray(seat).tolist()))
        return super().act_batch(obs, mask, seat)


@pytest.mark.parametrize("game", ["neu", "deadfall", "not_for_me", "not_your_mas_jong"])
def test_a_row_keeping_agent_is_handed_only_the_rows_where_it_is_to_act(game):
    """Another seat's observation (its hand) is never given to an agent with reset_rows, on the batched engine."""
    PeekRows.handed = []
    res = T.run_tournament(game, [AgentSpec("peek", PeekRows), "random"], 4, deals=3, seed=5, progress=False, engine="vector")
    by_row = {r["deal"] * 4 + r["rotation"]: r["agents"] for r in res["records"]}
    assert PeekRows.handed
    assert all(by_row[row][s] == "peek" for row, s in PeekRows.handed), "handed a row where another seat is to act"


# -- forked processes, isolated output, constructors that exit --------------------------------
def test_a_child_forked_during_a_guarded_move_exits_normally():
    import os
    import signal

    from envs.move_guard import guarded_act

    def forks(_):
        pid = os.fork()
        if pid == 0:
            try:
                os._exit(3)
            finally:  # only reached if the guard refused the child's exit: never run the test suite twice
                os.kill(os.getpid(), signal.SIGKILL)
        return os.waitpid(pid, 0)[1]

    status = guarded_act(forks, None)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 3, "the child's os._exit was refused"
    with pytest.raises(T.match.AgentExit):  # the moving call itself is still guarded
        guarded_act(lambda _: os._exit(4), None)


FORKING_AGENTS = '''
import os, sys, time, multiprocessing
import numpy as np

def _helper(q):
    q.put(1)

class Forker:
    """Runs a multiprocessing helper (forked) in every move."""
    def act(self, observation):
        ctx = multiprocessing.get_context("fork")
        q = ctx.Queue()
        p = ctx.Process(target=_helper, args=(q,))
        p.start(); q.get(); p.join()
        return int(np.flatnonzero(observation["action_mask"])[0])

class Leaver:
    """Forks a grandchild that would sleep for ever, and writes its pid down."""
    def act(self, observation):
        pid = os.fork()
        if pid == 0:
            time.sleep(600)
            os._exit(0)
        with open(os.environ["LEAVER_PIDS"], "a") as f:
            f.write(f"{pid}\\n")
        return int(np.flatnonzero(observation["action_mask"])[0])

class Flood:
    def act(self, observation):
        for _ in range(40):
            sys.stdout.write("x" * 100000 + "\\n")
        sys.stdout.flush()
        return int(np.flatnonzero(observation["action_mask"])[0])

class ExitsWhenBuilt:
    def __init__(self):
        os._exit(9)
    def act(self, observation):
        return 0
'''


def _run_cli(tmp_path, agents, *extra, env=None):
    import os

    path = tmp_path / "forking_agents.py"
    path.write_text(FORKING_AGENTS)
    cmd = [sys.executable, "-m", "experiments.tournament", "--game", "neu", "--players", "2", "--deals", "1", "--engine", "aec",
           "--no-plots", "--agents", ",".join(f"{path}:{a}" if a[0].isupper() else a for a in agents), "--out", str(tmp_path / "out"), *extra]
    return subprocess.run(cmd, capture_output=True, timeout=300, env={**os.environ, **(env or {})})


def test_an_agent_that_forks_a_helper_plays_one_tournament(tmp_path):
    out = _run_cli(tmp_path, ["Forker", "random"])
    text = out.stdout.decode() + out.stderr.decode()
    assert out.returncode == 0, text
    assert "could not write" not in text and (tmp_path / "out" / "results.md").exists()
    assert out.stdout.decode().count("played on:") <= 1


def test_isolated_agents_leave_no_process_of_their_group_behind(tmp_path):
    import os

    pids_file = tmp_path / "pids"
    out = _run_cli(tmp_path, ["Leaver", "random"], "--isolate", env={"LEAVER_PIDS": str(pids_file)})
    assert out.returncode == 0, out.stderr.decode()
    pids = [int(p) for p in pids_file.read_text().split()]
    assert pids

    def alive(pid):
        try:
            state = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]
        except OSError:
            return False
        return state != "Z"

    assert not [p for p in pids if alive(p)], "grandchildren of an isolated agent outlived the run"


def test_isolated_output_is_capped_and_a_flooding_agent_forfeits(tmp_path):
    out = _run_cli(tmp_path, ["Flood", "random"], "--isolate", "--on-error", "forfeit")
    assert out.returncode == 0, out.stderr.decode()[-2000:]
    assert len(out.stdout) + len(out.stderr) < 3 << 20, "the child's output was not capped"
    assert "forfeited" in (tmp_path / "out" / "results.md").read_text()
    named = _run_cli(tmp_path, ["Flood", "random"], "--isolate", "--out", str(tmp_path / "raised"))
    err = named.stderr.decode()
    assert named.returncode == 1 and "agent 'Flood'" in err and "wrote more than 1048576 bytes of output" in err, err[-2000:]


def test_a_constructor_that_calls_os_exit_is_named(tmp_path):
    out = _run_cli(tmp_path, ["ExitsWhenBuilt", "random"])
    err = out.stderr.decode()
    assert out.returncode not in (0, 9) and "agent 'ExitsWhenBuilt' could not be built: called os._exit(9)" in err, (out.returncode, err)
    assert len(err.strip().splitlines()) == 1, err


class ObjectInts(LastLegal):
    def act_batch(self, obs, mask, seat):
        return np.array([int(a) for a in super().act_batch(obs, mask, seat)], dtype=object)


class ObjectStrings(LastLegal):
    def act_batch(self, obs, mask, seat):
        return np.array([str(a) for a in super().act_batch(obs, mask, seat)], dtype=object)


def test_act_batch_may_return_an_object_array_of_ints_and_other_dtypes_are_named():
    kw = dict(deals=2, seed=3, progress=False, engine="vector")
    ints = T.run_tournament("neu", [AgentSpec("last", ObjectInts), "random"], 2, **kw)
    plain = T.run_tournament("neu", [AgentSpec("last", LastLegal), "random"], 2, **kw)
    assert ints["records"] == plain["records"]
    with pytest.raises(T.AgentError, match=r"agent 'last' .* returned act_batch actions of dtype object holding a str$"):
        T.run_tournament("neu", [AgentSpec("last", ObjectStrings), "random"], 2, **kw)


def test_an_agent_without_games_has_no_rating_and_groups_that_never_met_are_rated_apart():
    recs = _comparison_records(0.7, 400)  # a and b
    recs += [dict(r, table=1, agents=["c" if x == "a" else "d" for x in r["agents"]]) for r in _comparison_records(0.5, 400)]
    rated = T.bradley_terry(recs, ["a", "b", "c", "d", "idle"])
    assert "idle" not in rated, "an agent with no games was given a rating"
    assert {rated[n]["group"] for n in "ab"} == {1} and {rated[n]["group"] for n in "cd"} == {2}
    assert rated["a"]["rating"] + rated["b"]["rating"] == pytest.approx(0) and rated["c"]["rating"] + rated["d"]["rating"] == pytest.approx(0)
    res = {"game": "neu", "num_players": 2, "agents": ["a", "b", "c", "d", "idle"], "ratings": rated,
           "overall": {n: {k: {"mean": 0.0, "ci_low": 0.0, "ci_high": 0.0, "half_width": 0.0} for k in ("score", "reward", "win", "rank")}
                       | {"games": 0} for n in ["a", "b", "c", "d", "idle"]}, "pairwise": {}, "tables": []}
    text = T.markdown([res])
    assert "fall into 2 groups that never met" in text and "group 1: a, b; group 2: c, d" in text


def test_the_rating_statistics_grow_with_the_pairs_that_meet_not_with_agents_squared():
    from experiments.tournament.ratings import comparisons

    names = [f"a{i}" for i in range(300)]
    recs = [{"table": t, "deal": d, "agents": [names[2 * t], names[2 * t + 1]], "ranks": [1, 2]} for t in range(150) for d in range(20)]
    pairs, unit, pair, stats = comparisons(recs, names)
    assert len(pairs) == 150 and len(stats) == 150 * 20 and stats[:, 0].sum() == 150 * 20
    rated = T.bradley_terry(recs, names, bootstrap=20)
    assert len(rated) == 300 and {r["group"] for r in rated.values()} == set(range(1, 151))


def test_the_bootstrap_shortcut_agrees_with_newtons_steps():
    from experiments.tournament import ratings as RT

    rng = np.random.default_rng(1)
    k = 6
    pairs = np.array([(i, j) for i in range(k) for j in range(i + 1, k)])
    met = rng.integers(20, 40, size=(30, len(pairs))).astype(float)
    wins = rng.binomial(met.astype(int), 0.6).astype(float)
    full = RT.fit(pairs, wins.mean(0), met.mean(0), k)
    chord = RT.fit(pairs, wins, met, k, full, RT._curvature(pairs, met.mean(0), full, k))
    assert np.abs(chord - RT._newton(pairs, wins, met, k, None)).max() < 1e-8

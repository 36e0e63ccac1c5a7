"""Benchmarking your own agent: specs, bad agents, workers from any script, the SQLite record,
the leaderboard, reproducible and all-or-nothing reports, and counts checked up front.

Every subprocess here has a timeout, so a hang fails a test instead of the suite.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from experiments import tournament as T
from experiments.tournament import AgentError, AgentSpec, run_tournament

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}

BOTS = '''
import numpy as np
from agents import Agent


class FirstLegal:
    """Any class with act(); no base class needed."""

    def act(self, observation):
        return int(np.flatnonzero(observation["action_mask"])[0])


class Greedy(Agent):
    name = "greedy"

    def act(self, observation):
        return int(np.flatnonzero(observation["action_mask"])[-1])


def make_last_legal(game, num_players):
    return Greedy(game, num_players)


def not_an_agent():
    return 3
'''


@pytest.fixture
def bots(tmp_path):
    path = tmp_path / "bots.py"
    path.write_text(BOTS)
    return path


def run_py(code: str, cwd, timeout: float = 120, stdin: str | None = None, args=("-",)):
    """Run Python code in a fresh interpreter, bounded by `timeout`."""
    if args == ("-",):
        return subprocess.run([sys.executable, "-"], input=code, capture_output=True, text=True, timeout=timeout, cwd=cwd, env=ENV)
    return subprocess.run([sys.executable, *args], input=stdin, capture_output=True, text=True, timeout=timeout, cwd=cwd, env=ENV)


class FirstLegal:
    def act(self, observation):
        return int(np.flatnonzero(observation["action_mask"])[0])


# -- agent specs ------------------------------------------------------------------
def test_every_kind_of_spec_builds_an_agent(bots, monkeypatch):
    from agents import make_agent, spec_label

    obs = {"observation": np.zeros(3, np.float32), "action_mask": np.array([0, 1, 1], np.int8)}
    assert make_agent("random", "neu", 4, seed=0).act(obs) in (1, 2)
    assert make_agent(f"{bots}:FirstLegal", "neu", 4, seed=0).act(obs) == 1
    assert make_agent(f"mine={bots}:Greedy", "neu", 4, seed=0).act(obs) == 2
    assert make_agent(f"{bots}:make_last_legal", "neu", 4, seed=0).act(obs) == 2
    monkeypatch.syspath_prepend(str(bots.parent))
    assert make_agent("bots:FirstLegal", "neu", 4).act(obs) == 1
    seen = {}

    def factory(game, seed):  # only the keywords it names are passed
        seen.update(game=game, seed=seed)
        return FirstLegal()

    make_agent(factory, "deadfall", 2, seed=7)
    assert seen == {"game": "deadfall", "seed": 7}
    original = FirstLegal()
    copies = [make_agent(original, "neu", 4, seed=s) for s in range(2)]
    assert copies[0] is not original and copies[0] is not copies[1]
    assert [spec_label(s) for s in ("heuristic", "ppo:x.pt", f"{bots}:Greedy", "mine=random", FirstLegal, factory, original)] == [
        "heuristic", "ppo:x.pt", "Greedy", "mine", "FirstLegal", "factory", "FirstLegal",
    ]


@pytest.mark.parametrize(
    "spec, message",
    [
        ("alphago", "unknown agent kind 'alphago'; valid kinds: random, heuristic, ppo"),
        ("nowhere.py:Bot", "agent file 'nowhere.py' does not exist"),
        ("{bots}:Nobody", "has no 'Nobody'"),
        ("no_such_module_xyz:Bot", "cannot import 'no_such_module_xyz'"),
        ("{bots}:np", "'np' is a module, not a class or factory"),
        ("{bots}:not_an_agent", "built int, which has no act(observation) method"),
    ],
)
def test_bad_specs_say_what_is_wrong(spec, message, bots):
    from agents import make_agent

    with pytest.raises((ValueError, TypeError), match=message.replace("(", r"\(").replace(")", r"\)")):
        make_agent(spec.format(bots=bots), "neu", 4)


def test_run_tournament_takes_classes_objects_and_names():
    res = run_tournament("neu", [FirstLegal, "random"], num_players=3, deals=2, progress=False)
    assert res["agents"] == ["FirstLegal", "random"]
    res = run_tournament("neu", [AgentSpec("first", FirstLegal()), "heuristic"], num_players=2, deals=2, progress=False)
    assert res["agents"] == ["first", "heuristic"] and res["games_played"] == 4


# -- bad agents -------------------------------------------------------------------
class Raises:
    def act(self, observation):
        raise KeyError("boom")


class MaskedOut:
    def act(self, observation):
        return int(np.flatnonzero(observation["action_mask"] == 0)[0])


class NotAnInt:
    def act(self, observation):
        return float(np.flatnonzero(observation["action_mask"])[0])


class Slow:
    def act(self, observation):
        time.sleep(5)
        return int(np.flatnonzero(observation["action_mask"])[0])


@pytest.mark.parametrize(
    "bad, problem, timeout",
    [
        (Raises, "raised KeyError: 'boom'", None),
        (MaskedOut, "which the action mask rules out", None),
        (NotAnInt, "(float), not an integer action", None),
        (Slow, "took more than 0.2 s to move", 0.2),
    ],
)
def test_a_failing_agent_is_named_with_its_seat_deal_and_move(bad, problem, timeout):
    with pytest.raises(AgentError) as e:
        run_tournament("neu", [bad, "random"], num_players=2, deals=1, progress=False, move_timeout=timeout)
    msg = str(e.value)
    assert msg.startswith(f"agent '{bad.__name__}' (seat ") and ", deal 0, rotation 0, move " in msg and problem in msg


def test_forfeit_scores_the_game_as_lost_and_goes_on():
    res = run_tournament("neu", [Raises, "random"], num_players=3, deals=2, progress=False, on_error="forfeit")
    assert res["games_played"] == 6 and res["forfeits"] == {"Raises": 6, "random": 0}
    assert res["overall"]["Raises"]["rank"]["mean"] == 3 and res["overall"]["random"]["win"]["mean"] == 0.5
    assert all(abs(sum(r["rewards"])) < 1e-9 for r in res["records"])
    assert "6 forfeited" in T.markdown([res])


def test_cli_reports_a_failing_agent_in_one_line(tmp_path, bots):
    (tmp_path / "bad.py").write_text("class Bad:\n    def act(self, observation):\n        return -1\n")
    r = run_py("", tmp_path, args=("-m", "experiments.tournament", "--agents", "bad.py:Bad,random", "--deals", "1", "--quiet", "--out", "o"))
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr.strip() == "error: agent 'Bad' (seat 0, deal 0, rotation 0, move 0) returned action -1, outside 0..19"
    assert not (tmp_path / "o").exists()


# -- workers from any script ---------------------------------------------------------
SCRIPT = """
import numpy as np
from experiments.tournament import markdown, run_tournament


class FirstLegal:
    def act(self, observation):
        return int(np.flatnonzero(observation["action_mask"])[0])


result = run_tournament("neu", [FirstLegal, "random"], num_players=4, deals=4, workers=2, progress=False)
print(markdown([result], notes=False))
"""


def test_workers_from_a_script_without_main_guard_and_from_stdin(tmp_path):
    (tmp_path / "script.py").write_text(SCRIPT)
    as_file = run_py("", tmp_path, timeout=90, args=("script.py",))
    from_stdin = run_py(SCRIPT, tmp_path, timeout=90)
    for r in (as_file, from_stdin):
        assert r.returncode == 0, r.stderr[-2000:]
        assert "| neu | 4 | FirstLegal |" in r.stdout and "bootstrapping" not in r.stderr
    assert as_file.stdout == from_stdin.stdout


def test_workers_that_cannot_start_say_so_in_one_line(tmp_path):
    # With spawn (the default outside Linux) an unguarded script re-runs itself in each worker.
    script = 'import experiments.tournament.runner as R\nR.start_method = lambda: "spawn"\n' + SCRIPT
    (tmp_path / "script.py").write_text(script)
    r = run_py("", tmp_path, timeout=90, args=("script.py",))
    assert r.returncode != 0
    # multiprocessing's resource tracker may warn at exit, after our line, about the failed pool's semaphores.
    ours = [line for line in r.stderr.strip().splitlines() if "resource_tracker" not in line]
    assert "use workers=1" in ours[-1]
    assert "if __name__ == '__main__':" in ours[-1]


def test_the_docstring_example_runs_as_written(tmp_path):
    doc = T.__doc__
    block = doc[doc.index("As a library") :].split("\n\n")[1]
    code = textwrap.dedent(block)
    assert "run_tournament(" in code and "workers=2" in code
    r = run_py(code, tmp_path, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "| neu | 4 | heuristic |" in r.stdout


def test_same_results_for_one_and_two_workers_with_user_agents():
    one = run_tournament("neu", [FirstLegal, "random"], num_players=3, deals=3, workers=1, progress=False)
    two = run_tournament("neu", [FirstLegal, "random"], num_players=3, deals=3, workers=2, progress=False)
    assert one["records"] == two["records"]


# -- counts are lazy and checked ---------------------------------------------------------
@pytest.mark.parametrize("engine, batch", [("aec", 50), ("vector", 2048 // 2)])
def test_a_huge_deal_range_costs_no_memory_up_front(engine, batch):
    import tracemalloc

    tables = T.make_tables(["random", "random"], 2)
    tracemalloc.start()
    recs = T.play("neu", tables, 2, range(10**12), seed=0, progress=False, deadline=time.perf_counter(), engine=engine)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert 1 <= len({r["deal"] for r in recs}) <= batch  # one batch of deals, then the deadline
    assert peak < 50e6


@pytest.mark.parametrize(
    "module, args, message",
    [
        ("experiments.compare", ["--seed", "-1"], "argument --seed: must be a whole number from 0"),
        ("experiments.tournament", ["--seed", "-1"], "argument --seed: must be a whole number from 0"),
        ("experiments.play", ["--game", "neu", "--seed", "-1"], "argument --seed: must be a whole number from 0"),
        ("experiments.soak", ["--seed", "-1"], "argument --seed: must be a whole number from 0"),
        ("experiments.compare", ["--deals", "1e8"], "argument --deals: must be a whole number from 1 to 1,000,000,000"),
        ("experiments.tournament", ["--deals", "100000000000"], "argument --deals: must be a whole number from 1 to 1,000,000,000"),
        ("experiments.tournament", ["--workers", "0"], "argument --workers: must be a whole number from 1"),
        ("experiments.tournament", ["--move-timeout", "nan"], "argument --move-timeout: must be a finite number"),
        ("experiments.compare", ["--max-deals", "0"], "unrecognized arguments: --max-deals 0"),
        ("experiments.speed", ["--seconds", "nan"], "argument --seconds: must be a finite number"),
        ("experiments.play", ["--game", "neu", "--delay", "-1"], "argument --delay: must be a finite number of seconds from 0"),
        ("experiments.soak", ["--time-limit", "inf"], "argument --time-limit: must be a finite number"),
        ("experiments.leaderboard", ["--db", "missing.sqlite"], "--db 'missing.sqlite': no such file"),
    ],
)
def test_counts_seeds_and_durations_are_checked_before_anything_runs(module, args, message, tmp_path):
    r = run_py("", tmp_path, timeout=60, args=("-m", module, *args))
    assert r.returncode == 2, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and message in r.stderr


@pytest.mark.parametrize("module", ["compare", "tournament", "soak", "play", "speed", "leaderboard"])
def test_help_shows_every_default(module, capsys):
    import importlib

    mod = importlib.import_module(f"experiments.{module}")
    with pytest.raises(SystemExit):
        mod.main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    for flag, default in {
        "compare": [("--seed", "0"), ("--agents", "ppo,heuristic,random"), ("--on-error", "raise")],
        "tournament": [("--deals", "500"), ("--game", "neu"), ("--workers", "1")],
        "soak": [("--deals", "1000"), ("--seed", "0")],
        "play": [("--delay", "0.0"), ("--bots", "heuristic")],
        "speed": [("--seconds", "1.0"), ("--repeats", "5")],
        "leaderboard": [("--game", "every game in the record")],
    }[module]:
        assert flag in text and f"(default: {default})" in text, (flag, default)


# -- report folders ---------------------------------------------------------------------
def compare_args(*extra):
    return ["--games", "neu", "--players", "2", "--agents", "heuristic,random", "--deals", "2", "--workers", "1", "--no-plots", *extra]


def test_two_runs_in_the_same_second_get_two_folders(tmp_path, monkeypatch):
    from experiments import compare

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(time, "strftime", lambda fmt, *a: "20260101-000000" if "%Y%m%d" in fmt else "2026-01-01T00:00:00Z")
    assert compare.main(compare_args()) == 0
    assert compare.main(compare_args("--seed", "1")) == 0
    folders = sorted(p.name for p in (tmp_path / "results").iterdir() if not p.name.startswith("."))
    assert folders == ["20260101-000000", "20260101-000000-2", "latest"]
    seeds = [json.loads((tmp_path / "results" / f / "results.json").read_text())[0]["seed"] for f in folders[:2]]
    assert seeds == [0, 1]
    assert os.readlink(tmp_path / "results" / "latest") == "20260101-000000-2"


def test_out_that_is_a_file_is_refused_before_any_game(tmp_path, capsys):
    from experiments import compare

    f = tmp_path / "taken"
    f.write_text("mine")
    t0 = time.perf_counter()
    with pytest.raises(SystemExit) as e:
        compare.main(["--out", str(f)])  # the full default job: refused before its first game
    assert e.value.code == 2 and time.perf_counter() - t0 < 20
    assert "is a file, not a folder" in capsys.readouterr().err and f.read_text() == "mine"
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("")
    with pytest.raises(SystemExit):
        compare.main(["--out", str(tmp_path / "full")])
    assert "already holds files" in capsys.readouterr().err


def test_ctrl_c_while_reports_are_written_leaves_nothing(tmp_path, monkeypatch):
    from experiments import compare

    monkeypatch.chdir(tmp_path)
    assert compare.main(compare_args()) == 0
    before = os.readlink(tmp_path / "results" / "latest")

    def interrupted(res, out):
        raise KeyboardInterrupt

    from experiments.tournament import reports

    monkeypatch.setattr(reports, "plot", interrupted)
    out = tmp_path / "new"
    for extra in (["--out", str(out)], []):
        try:
            rc = compare.main([a for a in compare_args() if a != "--no-plots"] + extra)
        except KeyboardInterrupt:
            rc = 130
        assert rc == 130
    assert not out.exists()
    assert sorted(p.name for p in (tmp_path / "results").iterdir()) == sorted([before, "latest"])
    assert os.readlink(tmp_path / "results" / "latest") == before


def test_same_command_twice_gives_identical_statistics(tmp_path):
    from experiments import compare

    outs = [tmp_path / "a", tmp_path / "b"]
    for out, workers in zip(outs, ("1", "2")):
        args = ["--games", "neu,deadfall", "--agents", "best=heuristic,random", "--deals", "3", "--no-plots", "--out", str(out)]
        assert compare.main(args + ["--workers", workers]) == 0
    a, b = (json.loads((o / "results.json").read_text()) for o in outs)
    drop = {"run", "workers"}
    assert [{k: v for k, v in r.items() if k not in drop} for r in a] == [{k: v for k, v in r.items() if k not in drop} for r in b]
    assert a[0]["agents"] == ["best", "random"]
    run = a[0]["run"]
    assert run["seed"] == 0 and run["deals"] == {"neu_4p": 3, "deadfall_4p": 3}
    assert "python -m experiments.compare --games neu,deadfall" in run["command"]
    for key in ("cardzoo_version", "numpy", "torch", "pettingzoo", "git_commit", "python"):
        assert key in run
    assert run["numpy"] == np.__version__


def test_default_deal_counts_are_fixed(capsys):
    from experiments import compare

    assert set(compare.DEFAULT_DEALS) >= {"neu", "deadfall", "not_for_me", "not_your_mas_jong"}
    assert all(isinstance(v, int) and v > 0 for v in compare.DEFAULT_DEALS.values())


# -- the SQLite record and the leaderboard ------------------------------------------------
def test_user_agent_from_the_cli_appears_by_label_everywhere_and_on_the_leaderboard(tmp_path, bots):
    db = tmp_path / "r.sqlite"
    for i, agents in enumerate([f"mine={bots}:FirstLegal,heuristic", f"mine={bots}:FirstLegal,random,heuristic"]):
        out = tmp_path / f"out{i}"
        r = run_py("", tmp_path, args=("-m", "experiments.tournament", "--agents", agents, "--players", "3", "--deals", "2",
                                       "--quiet", "--db", str(db), "--out", str(out)))
        assert r.returncode == 0, r.stderr
        assert json.loads((out / "results.json").read_text())[0]["agents"][0] == "mine"
        assert "| neu | 3 | mine |" in (out / "results.md").read_text()
    con = sqlite3.connect(db)
    assert con.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 2
    assert con.execute("SELECT COUNT(DISTINCT agent) FROM games WHERE agent = 'mine'").fetchone()[0] == 1
    # fill mode: one table, 2 deals, 3 rotations, 3 seats; round robin: 1 table of 3 distinct agents
    assert con.execute("SELECT COUNT(*) FROM games").fetchone()[0] == 2 * 3 * 3 * 2
    con.close()
    r = run_py("", tmp_path, args=("-m", "experiments.leaderboard", "--db", str(db)))
    assert r.returncode == 0, r.stderr
    assert "## neu, 3 players: 12 games from 2 run(s)" in r.stdout
    rows = [line for line in r.stdout.splitlines() if line.startswith("| ") and line.split("|")[1].strip().isdigit()]
    assert {row.split("|")[2].strip() for row in rows} == {"mine", "heuristic", "random"}
    assert "Head to head" in r.stdout


def test_head_to_head_counts_games_not_pairs_of_seats():
    from experiments.leaderboard import leaderboard

    # 80 games, two heuristic seats and two random ones each: four pairs of seats a game
    records = [{"table": 0, "deal": g, "rotation": 0, "deal_seed": g, "agents": ["heuristic", "random", "heuristic", "random"],
                "scores": [3, 1, 0, -4], "ranks": [1, 2, 3, 4], "rewards": [1.0, 0.5, -0.5, -1.0], "forfeit": None,
                "run_id": 1} for g in range(80)]
    h = leaderboard(records)["head_to_head"]["heuristic vs random"]
    assert h["games"] == 80 and h["seat_pairs"] == 320 and h["ahead"] == 0.75


def test_a_run_killed_while_writing_leaves_the_database_consistent(tmp_path):
    db = tmp_path / "r.sqlite"
    code = """
import os, signal, sys
from experiments import record, tournament
record.CHUNK = 7
kill = sys.argv[1] == "kill"
real = record._insert_chunk
calls = []
def insert(con, rows):
    real(con, rows)
    calls.append(1)
    if kill and len(calls) == 2:
        os.kill(os.getpid(), signal.SIGKILL)  # half of this run's rows are written
record._insert_chunk = insert
res = tournament.run_tournament("neu", ["heuristic", "random"], num_players=4, deals=3, progress=False)
record.write_run(sys.argv[2], [res], {"seed": 0, "command": "test"})
"""
    (tmp_path / "w.py").write_text(code)
    ok = run_py("", tmp_path, args=("w.py", "keep", str(db)))
    assert ok.returncode == 0, ok.stderr
    killed = run_py("", tmp_path, args=("w.py", "kill", str(db)))
    assert killed.returncode == -signal.SIGKILL
    con = sqlite3.connect(db)
    runs = con.execute("SELECT run_id, games FROM runs").fetchall()
    assert len(runs) == 1
    (run_id, games), = runs
    assert con.execute("SELECT COUNT(*) FROM games").fetchone()[0] == games * 4 == 3 * 4 * 4
    assert con.execute("SELECT COUNT(*) FROM games WHERE run_id != ?", (run_id,)).fetchone()[0] == 0
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_db_that_is_a_folder_is_refused_up_front(tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        T.main(["--db", str(tmp_path), "--deals", "1"])
    assert e.value.code == 2 and "is a folder, not a database file" in capsys.readouterr().err


# -- plots ------------------------------------------------------------------------------
def test_plots_use_the_tables_intervals_and_wrap_long_labels(tmp_path, monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    long = "ppo:runs/some_long_run_name/checkpoints/final.pt"
    res = run_tournament("neu", [AgentSpec(long, "random"), "heuristic", "random"], num_players=3, deals=2, progress=False)
    saved = []
    real_savefig = plt.Figure.savefig

    def savefig(fig, *a, **k):
        saved.append(fig)
        return real_savefig(fig, *a, **k)

    monkeypatch.setattr(plt.Figure, "savefig", savefig)
    T.plot(res, tmp_path)
    ratings, heat = saved
    (line,) = [c for c in ratings.axes[0].containers]
    bars = line.lines[2][0].get_segments()
    rated = [res["ratings"][n] for n in res["agents"]]
    assert [(round(b[0][1], 6), round(b[1][1], 6)) for b in bars] == [(round(r["ci_low"], 6), round(r["ci_high"], 6)) for r in rated]
    ticks = [t.get_text() for t in heat.axes[0].get_xticklabels()]
    assert all(len(line) <= 16 for t in ticks for line in t.split("\n"))
    assert [t.replace("\n", "") for t in ticks] == [long, "heuristic", "random"]  # every agent by its label
    # text on dark cells is white
    texts = {t.get_text(): t.get_color() for t in heat.axes[0].texts}
    assert set(texts.values()) <= {"white", "black"}


# -- agents that fight the harness ---------------------------------------------------------
HOSTILE = '''
import os, sys, time
import numpy as np


class Stubborn:
    """Sleeps in a retry loop that catches Exception: a timeout derived from Exception never gets out."""

    def act(self, observation):
        while True:
            try:
                time.sleep(0.5)
            except Exception:
                continue


class Exits:
    def act(self, observation):
        os._exit(3)


class RaisesSystemExit:
    def act(self, observation):
        raise SystemExit(4)


class LongCCall:
    """One call into C that no signal handler interrupts."""

    def act(self, observation):
        return sum(range(10**11))


class SwallowsEverything:
    def act(self, observation):
        while True:
            try:
                time.sleep(0.5)
            except BaseException:
                continue


class KillsItself:
    def act(self, observation):
        import signal
        os.kill(os.getpid(), signal.SIGKILL)


agent = {"stubborn": Stubborn, "exits": Exits, "systemexit": RaisesSystemExit, "ccall": LongCCall,
         "swallows": SwallowsEverything, "kills": KillsItself}[sys.argv[1]]
from experiments.tournament import AgentError, run_tournament
try:
    res = run_tournament("neu", [agent, "random"], num_players=2, deals=2, workers=int(sys.argv[2]), progress=False,
                         on_error=sys.argv[3], move_timeout=0.2, isolate=sys.argv[4:] == ["isolate"])
except AgentError as e:
    print("error:", e)
    sys.exit(1)
print("forfeits:", res["forfeits"][agent.__name__], "of", res["games_played"])
'''


@pytest.mark.parametrize("kind, problem", [("stubborn", "took more than 0.2 s to move"), ("exits", "called os._exit(3)"),
                                           ("systemexit", "raised SystemExit(4)")])
@pytest.mark.parametrize("workers", [1, 2])
def test_an_agent_that_outlasts_exits_or_raises_systemexit_is_named_or_forfeited(tmp_path, kind, problem, workers):
    (tmp_path / "hostile.py").write_text(HOSTILE)
    forfeit = run_py("", tmp_path, timeout=60, args=("hostile.py", kind, str(workers), "forfeit"))
    assert forfeit.returncode == 0, forfeit.stdout + forfeit.stderr[-2000:]
    assert forfeit.stdout.strip() == "forfeits: 4 of 4"
    named = run_py("", tmp_path, timeout=60, args=("hostile.py", kind, str(workers), "raise"))
    assert named.returncode == 1, named.stdout + named.stderr[-2000:]
    line = named.stdout.strip()
    assert line.startswith("error: agent '") and "(seat " in line and ", deal 0, rotation 0, move " in line and line.endswith(problem)


@pytest.mark.parametrize("kind, problem", [("ccall", "took more than 0.2 s to move"), ("swallows", "took more than 0.2 s to move"),
                                           ("kills", "ended its process (exit code -9)"), ("systemexit", "raised SystemExit(4)")])
def test_isolated_agents_are_held_by_the_move_limit_whatever_they_do(tmp_path, kind, problem):
    (tmp_path / "hostile.py").write_text(HOSTILE)
    forfeit = run_py("", tmp_path, timeout=60, args=("hostile.py", kind, "2", "forfeit", "isolate"))
    assert forfeit.returncode == 0, forfeit.stdout + forfeit.stderr[-2000:]
    assert forfeit.stdout.strip() == "forfeits: 4 of 4"
    named = run_py("", tmp_path, timeout=60, args=("hostile.py", kind, "1", "raise", "isolate"))
    assert named.returncode == 1, named.stdout + named.stderr[-2000:]
    line = named.stdout.strip()
    assert line.startswith("error: agent '") and ", deal 0, rotation 0, move " in line and line.endswith(problem)


def test_isolated_agents_play_the_same_games():
    here = run_tournament("neu", [FirstLegal, "random"], num_players=3, deals=2, progress=False, engine="aec")
    isolated = run_tournament("neu", [FirstLegal, "random"], num_players=3, deals=2, progress=False, isolate=True)
    assert isolated["records"] == here["records"]


class EditsItsMask:
    """Marks every action legal in its own copy of the observation, then plays one the env rules out."""

    def act(self, observation):
        masked_out = int(np.flatnonzero(observation["action_mask"] == 0)[0])
        observation["action_mask"][:] = 1
        return masked_out


def test_the_harness_checks_the_envs_mask_not_the_agents_copy():
    with pytest.raises(AgentError, match=r"agent 'EditsItsMask' \(seat \d, deal 0, rotation 0, move \d+\) returned action \d+, "
                                         r"which the action mask rules out"):
        run_tournament("neu", [EditsItsMask, "random"], num_players=2, deals=1, progress=False)
    res = run_tournament("neu", [EditsItsMask, "random"], num_players=2, deals=2, progress=False, on_error="forfeit")
    assert res["forfeits"] == {"EditsItsMask": 4, "random": 0}
    assert all("which the action mask rules out" in r["forfeit"]["error"] for r in res["records"])


class ZeroDimensional:
    def act(self, observation):
        return np.array(np.flatnonzero(observation["action_mask"])[0])  # a 0-d integer array, as the env takes


def test_a_zero_dimensional_integer_array_is_an_action():
    res = run_tournament("neu", [ZeroDimensional, "random"], num_players=2, deals=2, progress=False)
    assert res["forfeits"] == {"ZeroDimensional": 0, "random": 0} and res["games_played"] == 4


def test_two_runs_with_one_out_folder_the_second_is_refused_before_it_plays(tmp_path, monkeypatch, capsys):
    command = sys.modules[T.main.__module__]

    out, db = tmp_path / "out", tmp_path / "r.sqlite"
    args = ["--players", "2", "--deals", "2", "--quiet", "--no-plots", "--out", str(out), "--db", str(db)]
    real = command.run_tournament
    second = {}

    def first_run_plays(*a, **k):
        # While the first run plays, a second one with the same --out starts.
        assert out.is_dir(), "the folder is claimed before any game"
        played = []
        monkeypatch.setattr(command, "run_tournament", lambda *a, **k: played.append(1))
        with pytest.raises(SystemExit) as e:
            command.main(args)
        second.update(code=e.value.code, played=played, err=capsys.readouterr().err)
        monkeypatch.setattr(command, "run_tournament", real)
        return real(*a, **k)

    monkeypatch.setattr(command, "run_tournament", first_run_plays)
    assert command.main(args) == 0
    assert second["code"] == 2 and not second["played"] and "already holds files" in second["err"]
    assert sorted(p.name for p in out.iterdir()) == ["neu_2p.csv", "neu_2p_games.csv", "results.json", "results.md"]
    con = sqlite3.connect(db)
    assert con.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 1
    con.close()


def test_a_run_whose_reports_fail_is_not_recorded(tmp_path, monkeypatch):
    from experiments.cli import ReportFolder

    db, out = tmp_path / "r.sqlite", tmp_path / "out"

    def broken_commit(self):
        raise OSError("disk full")

    monkeypatch.setattr(ReportFolder, "commit", broken_commit)
    assert T.main(["--players", "2", "--deals", "1", "--quiet", "--no-plots", "--out", str(out), "--db", str(db)]) == 1
    assert not out.exists()
    con = sqlite3.connect(db)
    assert con.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0
    con.close()


def test_a_foreign_database_is_refused_and_left_as_it_was(tmp_path, capsys):
    from experiments import leaderboard

    foreign = tmp_path / "theirs.sqlite"
    con = sqlite3.connect(foreign)
    con.execute("CREATE TABLE notes (id INTEGER, text TEXT)")
    con.execute("INSERT INTO notes VALUES (1, 'mine')")
    con.commit()
    con.close()
    before = foreign.read_bytes()
    for main, extra in ((T.main, ["--deals", "1"]), (leaderboard.main, [])):
        with pytest.raises(SystemExit) as e:
            main(["--db", str(foreign), *extra])
        assert e.value.code == 2
        assert "is not a cardzoo record" in capsys.readouterr().err
        assert foreign.read_bytes() == before


def test_the_leaderboard_only_reads(tmp_path, capsys):
    from experiments import leaderboard

    db = tmp_path / "r.sqlite"
    assert T.main(["--players", "2", "--deals", "1", "--quiet", "--no-plots", "--out", str(tmp_path / "o"), "--db", str(db)]) == 0
    before = db.read_bytes()
    os.chmod(db, 0o444)
    try:
        assert leaderboard.main(["--db", str(db)]) == 0
    finally:
        os.chmod(db, 0o644)
    assert "## neu, 2 players" in capsys.readouterr().out
    assert db.read_bytes() == before and not list(tmp_path.glob("r.sqlite-*"))

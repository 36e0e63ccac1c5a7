"""What an agent cannot break out of: answers from an isolated agent cross as plain bytes, the
``inform`` hook is part of the move, and only cardzoo's own upper bounds see the real game.

Each hostile agent here is real (a ``__reduce__`` answer, an ``inform`` that exits or stalls, a
``cheat_inform`` on a user's class) and runs in a fresh interpreter with a timeout, so a hang
fails a test instead of the suite.
"""

from __future__ import annotations

import json
import sqlite3
import time

import numpy as np
import pytest

from experiments.tournament import run_tournament
from tests.test_benchmarking import run_py

HOSTILE = '''
import os, sys, time
import numpy as np

MARK = os.path.abspath("ran-in.txt")


def _mark_and_stall():
    with open(MARK, "a") as f:
        f.write(str(os.getpid()) + "\\n")
    time.sleep(30)
    return 0


class Answer:
    """Unpickled, it would write its file from the unpickling process and stall it for 30 s."""

    def __reduce__(self):
        return (_mark_and_stall, ())


class ReduceAnswer:
    def act(self, observation):
        return Answer()


class ExitsInInform:
    def inform(self, info):
        os._exit(3)

    def act(self, observation):
        return int(np.flatnonzero(observation["action_mask"])[0])


class StallsInInform(ExitsInInform):
    def inform(self, info):
        time.sleep(30)


class Sneaky:
    """A user's agent that claims the upper bound's hook."""

    def inform(self, info):
        pass

    def cheat_inform(self, engine):
        with open(MARK, "a") as f:
            f.write("engine\\n")

    def act(self, observation):
        return int(np.flatnonzero(observation["action_mask"])[0])


agent = {"reduce": ReduceAnswer, "exits": ExitsInInform, "stalls": StallsInInform, "sneaky": Sneaky}[sys.argv[1]]
from experiments.tournament import AgentError, run_tournament
try:
    res = run_tournament("neu", [agent, "random"], num_players=2, deals=2, workers=1, progress=False,
                         on_error=sys.argv[2], move_timeout=0.5, isolate=sys.argv[3] == "isolate")
except AgentError as e:
    print("error:", e)
    sys.exit(1)
print("forfeits:", res["forfeits"][agent.__name__], "of", res["games_played"])
'''


def _run(tmp_path, kind: str, on_error: str, isolate: bool):
    (tmp_path / "hostile.py").write_text(HOSTILE)
    start = time.monotonic()
    done = run_py("", tmp_path, timeout=90, args=("hostile.py", kind, on_error, "isolate" if isolate else "here"))
    return done, time.monotonic() - start


def test_an_isolated_agents_answer_is_never_unpickled(tmp_path):
    done, seconds = _run(tmp_path, "reduce", "forfeit", isolate=True)
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
    assert done.stdout.strip() == "forfeits: 4 of 4"
    assert not (tmp_path / "ran-in.txt").exists(), "the answer ran code when it was read"
    assert seconds < 60  # four 30 s stalls would take two minutes
    named, _ = _run(tmp_path, "reduce", "raise", isolate=True)
    assert named.returncode == 1
    assert named.stdout.strip().endswith("(Answer), not an integer action"), named.stdout
    assert not (tmp_path / "ran-in.txt").exists()


@pytest.mark.parametrize("isolate", [False, True])
@pytest.mark.parametrize("kind, problem", [("exits", "called os._exit(3)"), ("stalls", "took more than 0.5 s to move")])
def test_inform_is_part_of_the_move(tmp_path, kind, problem, isolate):
    if isolate and kind == "exits":
        problem = "ended its process (exit code 3)"
    forfeit, seconds = _run(tmp_path, kind, "forfeit", isolate)
    assert forfeit.returncode == 0, forfeit.stdout + forfeit.stderr[-2000:]
    assert forfeit.stdout.strip() == "forfeits: 4 of 4" and seconds < 60
    named, _ = _run(tmp_path, kind, "raise", isolate)
    assert named.returncode == 1, named.stdout + named.stderr[-2000:]
    line = named.stdout.strip()
    assert line.startswith("error: agent 'ExitsInInform'" if kind == "exits" else "error: agent 'StallsInInform'")
    assert line.endswith(problem), line


@pytest.mark.parametrize("isolate", [False, True])
def test_a_users_cheat_inform_is_never_called(tmp_path, isolate):
    done, _ = _run(tmp_path, "sneaky", "raise", isolate)
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
    assert done.stdout.strip() == "forfeits: 0 of 4"
    assert not (tmp_path / "ran-in.txt").exists(), "a user's agent was handed the real engine"


def test_pimc_plays_isolated_the_games_it_plays_in_process():
    agents = ["pimc:worlds=2,horizon=round", "random"]
    here = run_tournament("neu", agents, num_players=2, deals=1, progress=False, engine="aec")
    isolated = run_tournament("neu", agents, num_players=2, deals=1, progress=False, isolate=True)
    assert isolated["records"] == here["records"]
    assert sum(isolated["forfeits"].values()) == 0


def test_the_upper_bound_is_marked_in_every_result(tmp_path):
    from agents import is_upper_bound, make_agent, spec_label
    from agents.search import PIMCCheat

    assert spec_label("pimc_cheat") == "pimc_cheat (upper bound)"
    assert spec_label("mine=pimc_cheat:worlds=2") == "mine (upper bound)"  # a label does not hide it
    assert spec_label("pimc") == "pimc"
    cheat = make_agent("pimc_cheat:worlds=2", "neu", 2, seed=0)
    assert is_upper_bound(cheat) and not is_upper_bound(make_agent("pimc", "neu", 2, seed=0))

    class Claims(PIMCCheat):  # a subclass is not cardzoo's own upper bound
        pass

    assert not is_upper_bound(Claims("neu", 2, 0))
    out, db = tmp_path / "run", tmp_path / "r.sqlite"
    r = run_py("", tmp_path, timeout=120, args=("-m", "experiments.tournament", "--agents", "pimc_cheat:worlds=2,random",
                                                "--players", "2", "--deals", "1", "--quiet", "--db", str(db), "--out", str(out)))
    assert r.returncode == 0, r.stderr[-2000:]
    label = "pimc_cheat:worlds=2 (upper bound)"
    results = json.loads((out / "results.json").read_text())
    assert results[0]["agents"][0] == label and sum(results[0]["forfeits"].values()) == 0  # it saw the real game
    assert f"| {label} |" in (out / "results.md").read_text()
    con = sqlite3.connect(db)
    assert con.execute("SELECT COUNT(*) FROM games WHERE agent = ?", (label,)).fetchone()[0] > 0
    con.close()
    board = run_py("", tmp_path, args=("-m", "experiments.leaderboard", "--db", str(db)))
    assert board.returncode == 0 and f" {label} " in board.stdout, board.stdout + board.stderr[-2000:]

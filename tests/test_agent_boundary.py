"""What an agent cannot break out of: answers from an isolated agent cross as plain bytes, the
``inform`` hook is part of the move, and only cardzoo's own upper bounds see the real game.

Each hostile agent here is real (a ``__reduce__`` answer, an ``inform`` that exits or stalls, a
``cheat_inform`` on a user's class) and runs in a fresh interpreter with a timeout, so a hang
fails a test instead of the suite.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from experiments.tournament import run_tournament
from tests.test_benchmarking import ENV, run_py

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


class HalfAnswer:
    """Writes the start of an answer frame on every pipe it holds, then stalls."""

    def act(self, observation):
        import struct
        for fd in os.listdir("/proc/self/fd"):
            try:
                os.write(int(fd), struct.pack("<II", 1, 100) + b"A")
            except OSError:
                pass
        time.sleep(30)


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


agent = {"reduce": ReduceAnswer, "exits": ExitsInInform, "stalls": StallsInInform, "sneaky": Sneaky,
         "half": HalfAnswer}[sys.argv[1]]
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


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the agent finds its pipes in /proc")
def test_half_an_answer_then_silence_is_a_timeout(tmp_path):
    done, seconds = _run(tmp_path, "half", "forfeit", isolate=True)
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
    assert done.stdout.strip() == "forfeits: 4 of 4" and seconds < 60  # four 30 s stalls would take two minutes
    named, _ = _run(tmp_path, "half", "raise", isolate=True)
    assert named.returncode == 1 and named.stdout.strip().endswith("took more than 0.5 s to move"), named.stdout


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


@pytest.mark.parametrize("search", ["pimc:worlds=2,horizon=round", "pimc_cheat:worlds=2"])
def test_pimc_plays_isolated_the_games_it_plays_in_process(search):
    agents = [search, "random"]
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


# -- interrupts and what is left behind ---------------------------------------------
SLOW = '''
import os, time
import numpy as np


class Slow:
    def act(self, observation):
        time.sleep(0.02)
        return int(np.flatnonzero(observation["action_mask"])[0])


class Spawner(Slow):
    """Starts a helper that leaves its group and session (setsid) and forks again, once per process."""

    started = False

    def act(self, observation):
        if not Spawner.started:
            Spawner.started = True
            if os.fork() == 0:
                os.setsid()
                if os.fork() == 0:
                    with open("helpers.txt", "a") as f:
                        f.write(f"{os.getpid()}\\n")
                    time.sleep(120)
                os._exit(0)
        return super().act(observation)
'''


def _dead(pid: int) -> bool:
    """Gone, or a zombie (killed, waiting for a parent that does not reap it)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] == b"Z"
    except OSError:
        return True


def _session(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != pid:
            try:
                if os.getsid(int(entry)) == pid and not _dead(int(entry)):
                    out.append(int(entry))
            except OSError:
                pass
    return out


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="process trees are read from /proc")
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_isolated_run_with_workers_exits_and_leaves_nothing(tmp_path, signum):
    (tmp_path / "slow.py").write_text(SLOW)
    out = tmp_path / "out"
    p = subprocess.Popen([sys.executable, "-m", "experiments.tournament", "--agents", "slow.py:Spawner,random",
                          "--players", "2", "--deals", "200", "--isolate", "--workers", "2", "--quiet", "--out", str(out)],
                         cwd=tmp_path, env={**ENV, "PYTHONFAULTHANDLER": "1"}, stderr=subprocess.PIPE, text=True,
                         start_new_session=True,
                         # Ctrl-C as at a terminal: pytest started in the background (`&`, nohup) ignores
                         # SIGINT, and a child keeps that, as a command run with `&` should.
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    lines: list[str] = []  # drained as it comes: a full pipe would block the run's writes
    reader = threading.Thread(target=lambda: lines.extend(p.stderr), daemon=True)
    reader.start()
    hung = ""
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "helpers.txt").exists() and time.monotonic() < deadline:
            time.sleep(0.2)  # playing: the isolated agents have started their helpers
        time.sleep(0.5)
        os.kill(p.pid, signum)
        p.wait(60)  # a hang guard: on a loaded CI machine, stopping workers mid-import took over 20 s
    except subprocess.TimeoutExpired:
        # Say where it hangs: the process tree, and every thread's stack (faulthandler prints them on SIGABRT).
        hung = subprocess.run(["ps", "-o", "pid,ppid,pgid,stat,wchan:20,args", "-s", str(p.pid)],
                              capture_output=True, text=True).stdout
        os.kill(p.pid, signal.SIGABRT)
        time.sleep(2)
    finally:
        if hung or p.poll() is None:  # the whole group: workers outlive a main process that SIGABRT ended
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()
    reader.join(5)
    err = "".join(lines)
    assert not hung, f"no exit 60 s after the signal; processes:\n{hung}\nstderr:\n{err[-6000:]}"
    assert p.returncode == 130 and "interrupted; nothing was written" in err, err[-3000:]
    time.sleep(0.5)
    assert _session(p.pid) == [], "workers or isolated agents outlived the run"
    helpers = [int(x) for x in (tmp_path / "helpers.txt").read_text().split()]
    assert helpers and all(_dead(h) for h in helpers), "a helper that left with setsid() outlived the run"
    assert not out.exists()  # the folder it made is gone: the same command runs again


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="process trees are read from /proc")
@pytest.mark.parametrize("workers", ["1", "2"])
def test_helpers_that_left_with_setsid_do_not_outlive_a_finished_run(tmp_path, workers):
    (tmp_path / "slow.py").write_text(SLOW)
    done = run_py("", tmp_path, timeout=90, args=("-m", "experiments.tournament", "--agents", "slow.py:Spawner,random",
                                                  "--players", "2", "--deals", "2", "--isolate", "--workers", workers,
                                                  "--quiet", "--out", str(tmp_path / "out")))
    assert done.returncode == 0, done.stderr[-2000:]
    time.sleep(0.5)
    helpers = [int(x) for x in (tmp_path / "helpers.txt").read_text().split()]
    assert helpers and all(_dead(h) for h in helpers)


def test_a_claim_left_by_a_dead_run_is_named_stale_with_the_command_that_clears_it(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (out / ".cardzoo-run").write_text(f"{dead.pid}\n")
    (out / f".partial-{dead.pid}-0123456789ab").mkdir()
    r = run_py("", tmp_path, args=("-m", "experiments.tournament", "--agents", "random,random", "--players", "2",
                                   "--deals", "1", "--quiet", "--out", str(out)))
    assert r.returncode == 2
    line = r.stderr.strip().splitlines()[-1]
    assert f"was claimed by a run (pid {dead.pid}) that is no longer running" in line and "rm -r " in line
    subprocess.run(line.split("clear it with: ", 1)[1], shell=True, check=True)  # the command it gives works
    again = run_py("", tmp_path, args=("-m", "experiments.tournament", "--agents", "random,random", "--players", "2",
                                       "--deals", "1", "--quiet", "--out", str(out)))
    assert again.returncode == 0, again.stderr


@pytest.mark.parametrize("module, argv", [
    ("experiments.solve", ["--game", "neu", "--exploit", "pimc"]),
    ("experiments.exploit", ["--game", "neu", "--players", "2", "--target", "pimc:worlds=2", "--steps", "2000"]),
])
def test_runners_that_cannot_tell_a_search_agent_its_state_refuse_it_before_any_work(module, argv, tmp_path, capsys):
    import importlib

    out = tmp_path / "run"
    with pytest.raises(SystemExit) as e:
        importlib.import_module(module).main(argv + ["--out", str(out)])
    assert e.value.code == 2
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert "needs its seat's information state before every move" in line and "experiments.tournament" in line
    assert not out.exists()


@pytest.mark.parametrize("worlds", ["99999999999999999999", "٣", "0", "-1", "3.5"])
def test_pimc_worlds_must_be_a_small_ascii_whole_number(worlds):
    from agents import make_agent

    with pytest.raises(ValueError, match="worlds must be a whole number from 1 to 4096"):
        make_agent(f"pimc:worlds={worlds}", "neu", 2, seed=0)


def test_agents_lists_keep_a_search_agents_options_together():
    from experiments.tournament.command import split_agents

    assert split_agents("pimc:worlds=2,horizon=round,random") == ["pimc:worlds=2,horizon=round", "random"]
    assert split_agents("mine=pimc:worlds=2,rollout=random, heuristic,x=random") == [
        "mine=pimc:worlds=2,rollout=random", "heuristic", "x=random"]
    assert split_agents("worlds=random,heuristic") == ["worlds=random", "heuristic"]  # a label, after no search agent
    assert split_agents("ismcts:iterations=8,c=1,heuristic") == ["ismcts:iterations=8,c=1", "heuristic"]


@pytest.mark.parametrize("module", ["experiments.tournament", "experiments.compare"])
def test_help_lists_every_kind_of_agent(module, tmp_path):
    done = run_py("", tmp_path, args=("-m", module, "--help"))
    text = " ".join(done.stdout.split())
    for form in ("pimc,", "pimc:worlds=N", "pimc_cheat (an upper bound)", "cfr:PATH", "ppo:PATH", "FILE.py:Name"):
        assert form in text, form

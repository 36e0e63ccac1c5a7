"""The exercises check themselves: a blank stub fails with a hint, the shipped solution passes,
and a wrong answer is caught (each planted mistake below is one a student makes)."""

from __future__ import annotations

import textwrap

import pytest

from experiments import exercises

NUMBERS = sorted(exercises.CHECKS)


@pytest.mark.parametrize("number", NUMBERS)
def test_the_stub_fails_with_a_hint(number, capsys):
    assert not exercises.check(number, exercises.exercise_file(number, solution=False))
    out = capsys.readouterr().out
    assert "FAILED" in out and "Hint:" in out


@pytest.mark.parametrize("number", NUMBERS)
def test_the_solution_passes(number, capsys):
    assert exercises.check(number, exercises.exercise_file(number, solution=True))
    assert capsys.readouterr().out.rstrip().endswith("passed")


WRONG = {
    # Samples from the softmax over every action: illegal ones come out.
    (1, "mask"): """
        import numpy as np
        def sample(logits, mask, rng):
            p = np.exp(logits - logits.max(axis=1, keepdims=True)); p /= p.sum(axis=1, keepdims=True)
            return np.array([rng.choice(len(row), p=row) for row in p])
    """,
    # Uniform over the legal actions: never illegal, but ignores the logits.
    (1, "softmax"): """
        import numpy as np
        def sample(logits, mask, rng):
            if not (np.asarray(mask) != 0).any(axis=1).all():
                raise ValueError("empty")
            return np.array([rng.choice(np.flatnonzero(row)) for row in mask])
    """,
    # GAE over the table's moves as if one agent made them all.
    (2, "seat 0's first decision"): """
        import numpy as np
        def gae(seats, rewards, values, gamma, lam):
            r = rewards[np.arange(len(seats)), seats]
            adv, nxt, nv = np.zeros(len(seats)), 0.0, 0.0
            for t in range(len(seats) - 1, -1, -1):
                nxt = adv[t] = r[t] + gamma * nv - values[t] + gamma * lam * nxt
                nv = values[t]
            return adv
    """,
    # Regret matching without clipping: negative regrets give negative "probabilities".
    (4, "negative regrets count as 0"): """
        import numpy as np
        def regret_matching(regrets, legal):
            r = np.where(legal, regrets, 0.0)
            total = r.sum(axis=1, keepdims=True)
            return np.where(total != 0, r / np.where(total != 0, total, 1.0), legal / legal.sum(axis=1, keepdims=True))
    """,
    # Uniform over every action when no regret is positive, illegal ones included.
    (4, "uniformly over the legal actions"): """
        import numpy as np
        def regret_matching(regrets, legal):
            r = np.where(legal, np.maximum(regrets, 0.0), 0.0)
            total = r.sum(axis=1, keepdims=True)
            return np.where(total > 0, r / np.where(total > 0, total, 1.0), 1.0 / regrets.shape[1])
    """,
    # Plays the last legal action: spends its specials (shots, doubles, turns) first and gets stuck.
    (3, "CI reaches 0"): """
        import numpy as np
        class NeuAgent:
            def act(self, observation):
                return int(np.flatnonzero(observation["action_mask"])[-1])
    """,
}


@pytest.mark.parametrize("number,hint", list(WRONG), ids=[f"{n}-{h.split()[0]}" for n, h in WRONG])
def test_a_wrong_answer_fails_with_the_matching_hint(number, hint, tmp_path, capsys):
    path = tmp_path / "mine.py"
    path.write_text(textwrap.dedent(WRONG[number, hint]), encoding="utf-8")
    assert not exercises.check(number, path)
    out = capsys.readouterr().out
    assert "FAILED" in out and hint in out, out


def test_the_command_line(tmp_path, capsys):
    assert exercises.main(["check", "2", "--solution"]) == 0
    assert exercises.main(["check", "2"]) == 1
    assert exercises.main(["list"]) == 0
    assert "ex3_neu_agent.py" in capsys.readouterr().out
    with pytest.raises(SystemExit) as e:
        exercises.main(["check", "1", "--file", str(tmp_path / "missing.py")])
    assert e.value.code == 2


CHEATS = {
    # Exits at import with status 0.
    "exit_at_import": ("import sys\nsys.exit(0)\n", "importing", "raised SystemExit"),
    # Prints the verdict itself, then ends its process before the check can say otherwise.
    "prints_passed": ("import os\nprint('passed')\nos._exit(0)\n", "ended its process (exit code 0) while importing", "Hint:"),
    "exits_in_a_call": ("import os\ndef gae(*a):\n    os._exit(0)\n", "ended its process (exit code 0)", "Hint:"),
    # Borrows the checker's own reference answer.
    "imports_the_reference": ("from experiments.exercises import reference_advantages as gae\n", "checker's reference", "Hint:"),
    # Loads the shipped solution file.
    "loads_the_solution": ("import importlib.util, pathlib, experiments\n"
                           "p = pathlib.Path(experiments.__file__).parent.parent / 'docs/exercises/solutions/ex2_gae.py'\n"
                           "s = importlib.util.spec_from_file_location('x', p); m = importlib.util.module_from_spec(s)\n"
                           "s.loader.exec_module(m); gae = m.gae\n", "shipped solution", "Hint:"),
    "interrupts": ("def gae(*a):\n    raise KeyboardInterrupt\n", "raised KeyboardInterrupt", "Hint:"),
    "base_exception": ("class Odd(BaseException): pass\ndef gae(*a):\n    raise Odd('no')\n", "raised Odd: no", "Hint:"),
    "returns_a_string": ("def gae(seats, *a):\n    return 'x' * len(seats)\n", "FAILED", "Hint:"),
    # An answer that, unpickled, would print the verdict and end the checker with status 0.
    "reduce_answer": ("import os\nclass Verdict:\n    def __reduce__(self):\n"
                      "        return (os.system, ('echo passed',))\n"
                      "def gae(*a):\n    return Verdict()\n", "returned Verdict, not an integer or an array of numbers", "Hint:"),
    # Walks up the frames to the checker's globals (there are none in a fresh process).
    "reads_the_checkers_frames": ("import sys\nf = sys._getframe()\nwhile f is not None and 'reference_advantages' not in f.f_globals:\n"
                                  "    f = f.f_back\ngae = f.f_globals['reference_advantages']\n", "raised AttributeError", "Hint:"),
    # A hard link of the shipped solution under a new name.
    "links_the_solution": ("import importlib.util, os, pathlib, tempfile, experiments\n"
                           "p = pathlib.Path(experiments.__file__).parent.parent / 'docs/exercises/solutions/ex2_gae.py'\n"
                           "q = pathlib.Path(tempfile.mkdtemp()) / 'mine_too.py'\nos.link(p, q)\n"
                           "s = importlib.util.spec_from_file_location('x', q); m = importlib.util.module_from_spec(s)\n"
                           "s.loader.exec_module(m); gae = m.gae\n", "shipped solution", "Hint:"),
    # Reads the shipped solution through a folder's descriptor (os.open's dir_fd), and runs its text.
    "reads_through_dir_fd": ("import os, experiments\n"
                             "d = os.open(os.path.join(os.path.dirname(os.path.dirname(experiments.__file__)), 'docs', 'exercises'), os.O_RDONLY)\n"
                             "f = os.open('solutions/ex2_gae.py', os.O_RDONLY, dir_fd=d)\n"
                             "exec(os.read(f, 1 << 20).decode())\n", "shipped solution", "Hint:"),
    # The same from an unrelated folder, climbing with "..".
    "climbs_from_a_dir_fd": ("import os, tempfile, experiments\n"
                             "t = os.path.join(tempfile.mkdtemp(), 'a', 'b', 'c'); os.makedirs(t); d = os.open(t, os.O_RDONLY)\n"
                             "up = os.path.relpath(os.path.join(os.path.dirname(os.path.dirname(experiments.__file__)), "
                             "'docs', 'exercises', 'solutions', 'ex2_gae.py'), t)\n"
                             "f = os.open(up, os.O_RDONLY, dir_fd=d)\n"
                             "exec(os.read(f, 1 << 20).decode())\n", "shipped solution", "Hint:"),
    # The checker's own source through a descriptor of its folder.
    "reads_the_checker_through_dir_fd": ("import os, experiments\n"
                                         "d = os.open(os.path.dirname(experiments.__file__), os.O_RDONLY)\n"
                                         "f = os.open('exercises.py', os.O_RDONLY, dir_fd=d)\n"
                                         "text = os.read(f, 1 << 20)\ndef gae(*a):\n    return 0\n", "the checker's", "Hint:"),
    # Starts a process that would outlive the check.
    "starts_a_process": ("import subprocess\nsubprocess.Popen(['sleep', '77'])\ndef gae(*a):\n    return 0\n",
                         "may not start a process", "Hint:"),
    "forks": ("import os\nif os.fork() == 0:\n    import time; time.sleep(77)\ndef gae(*a):\n    return 0\n",
              "may not start a process", "Hint:"),
}


@pytest.mark.parametrize("name", list(CHEATS))
def test_a_file_that_exits_cheats_or_breaks_fails_in_one_line_with_a_hint(name, tmp_path, capsys):
    code, words, hint = CHEATS[name]
    path = tmp_path / "mine.py"
    path.write_text(code, encoding="utf-8")
    assert not exercises.check(2, path)
    out = capsys.readouterr().out
    verdict = out.split("\n", 1)[1]
    assert verdict.startswith("FAILED") and words in verdict and hint in verdict and "Traceback" not in out, out
    assert "passed" not in verdict and len(verdict.strip().splitlines()) == 2, out  # the failure, then its hint


def test_a_hanging_solution_fails_at_the_time_limit(tmp_path, capsys):
    path = tmp_path / "mine.py"
    path.write_text("import time\ndef gae(*a):\n    time.sleep(600)\n", encoding="utf-8")
    assert not exercises.check(2, path, time_limit=3)
    assert "took more than 3 s in all" in capsys.readouterr().out


def test_exercise_three_refuses_cardzoos_own_players(tmp_path, capsys):
    path = tmp_path / "mine.py"
    path.write_text("from agents.heuristic import heuristic_class\nH = heuristic_class('neu')\n"
                    "class NeuAgent:\n    def __init__(self):\n        self.h = H('neu', 4, 0)\n"
                    "    def act(self, observation):\n        return self.h.act(observation)\n", encoding="utf-8")
    assert not exercises.check(3, path)
    out = capsys.readouterr().out
    assert "FAILED" in out and "out of reach" in out and "Hint:" in out


def test_exercise_three_refuses_an_agent_that_plays_the_heuristics_moves(capsys):
    """However it got them (copied source, say): the check compares moves."""
    from types import SimpleNamespace

    from agents import make_agent

    class Copy:
        def __init__(self):
            self.h = make_agent("heuristic", "neu", 4, seed=3)

        def act(self, observation):
            return self.h.act(observation)

    with pytest.raises(exercises.Failed, match="plays the shipped heuristic's move at"):
        exercises.check_3(SimpleNamespace(NeuAgent=Copy))
    solution = exercises.load(exercises.exercise_file(3, solution=True))
    same, decisions = exercises.agreement_with_heuristic(solution.NeuAgent())
    assert decisions > 300 and same < 0.5 * decisions  # the reference solution is its own work


def test_nothing_the_file_started_outlives_the_check(tmp_path):
    import subprocess

    path = tmp_path / "mine.py"
    path.write_text("import subprocess\ntry:\n    subprocess.Popen(['sleep', '78'])\nexcept PermissionError:\n    pass\n"
                    "def gae(*a):\n    raise ValueError('no')\n", encoding="utf-8")
    assert not exercises.check(2, path)
    left = subprocess.run(["pgrep", "-f", "sleep 78"], capture_output=True, text=True).stdout.split()
    assert left == []

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

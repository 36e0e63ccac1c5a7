"""`python -m X --help` answers without importing torch, for every command of the project.

torch takes about a second to import; a command imports it when it runs, not to print its usage.
The commands are found in the tree (a package's ``__main__.py``, a module with a main guard), so a
new one is checked too. One fresh interpreter plays every command's --help in turn and notes after
each whether torch is loaded: torch never unloads, so the first command that pulls it in is the one
named, and a module imported earlier cannot hide a later one's import.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FLOORS = ("envs", "agents", "train", "experiments")
MAIN_GUARD = re.compile(r"^if __name__ == ['\"]__main__['\"]:", re.M)
NOT_COMMANDS = {
    "experiments.exercise_child": "the process `experiments.exercises` starts for a student's file; it takes no flags",
}
TORCH_AT_IMPORT = {
    # CleanRL's single-file shape: its network class (an nn.Module) is defined at module level, to be read top to bottom.
    "experiments.recipes.cleanrl_ppo",
}

CHILD = r"""
import contextlib, io, json, runpy, sys, warnings

warnings.simplefilter("ignore", RuntimeWarning)  # runpy: "found in sys.modules" for a package's submodule
results = []
for name in json.loads(sys.argv[1]):
    sys.argv = [name, "--help"]
    text, code = io.StringIO(), 0
    with contextlib.redirect_stdout(text), contextlib.redirect_stderr(text):
        try:
            runpy.run_module(name, run_name="__main__", alter_sys=True)
        except SystemExit as e:
            code = e.code or 0
        except BaseException as e:  # noqa: BLE001 - reported, not raised
            code = repr(e)
    results.append({"module": name, "code": code, "usage": "usage:" in text.getvalue(),
                    "output": text.getvalue()[-500:], "torch": "torch" in sys.modules})
print(json.dumps(results), file=sys.__stdout__)
"""


def commands() -> list[str]:
    """Every module of the four packages that `python -m` runs as a command."""
    found = []
    for floor in FLOORS:
        for path in sorted((ROOT / floor).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__main__":
                found.append(".".join(parts[:-1]))
            elif parts[-1] != "__init__" and MAIN_GUARD.search(path.read_text()):
                found.append(".".join(parts))
    return [m for m in found if m not in NOT_COMMANDS]


def test_the_commands_are_found():
    found = commands()
    for name in ("experiments.play", "experiments.exploit", "experiments.tournament", "experiments.speed",
                 "experiments.solve", "train.ppo", "train.ppo_search"):
        assert name in found
    assert set(TORCH_AT_IMPORT) <= set(found)


def test_help_of_every_command_answers_without_torch():
    order = sorted(commands(), key=lambda m: m in TORCH_AT_IMPORT)  # the ones that load torch come last
    r = subprocess.run([sys.executable, "-c", CHILD, json.dumps(order)], capture_output=True, text=True,
                       cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr
    results = json.loads(r.stdout)
    assert [x["module"] for x in results] == order
    failed = [f"{x['module']}: exit {x['code']}, output ends {x['output']!r}" for x in results
              if x["code"] != 0 or not x["usage"]]
    assert failed == []
    pulled = [x["module"] for x in results if x["torch"]]
    assert pulled == [m for m in order if m in TORCH_AT_IMPORT], (
        f"{pulled[0]}'s --help imported torch (the commands after it were not checked): "
        "import it in the function that runs the command")

"""No command works in silence: each long-running one shows a progress bar that moves, or lines that
say what it is doing, from its start. Checked on tiny budgets (a timing test would be noise here):
a bar must start at 0 and count up; without one, there must be lines beyond the final report."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.test_benchmarking import ENV

COMMANDS = {
    "tournament (batched engine)": ["experiments.tournament", "--game", "neu", "--agents", "heuristic,random", "--deals", "10",
                                    "--engine", "vector"],
    "tournament (AEC)": ["experiments.tournament", "--game", "neu", "--agents", "heuristic,random", "--deals", "10",
                         "--engine", "aec"],
    "compare": ["experiments.compare", "--games", "deadfall", "--agents", "heuristic,random", "--deals", "10"],
    "compare --estimator adjusted": ["experiments.compare", "--games", "deadfall", "--agents", "heuristic,random", "--deals",
                                     "10", "--estimator", "adjusted"],
    "search_ladder": ["experiments.search_ladder", "--game", "deadfall", "--agent", "pimc:worlds=4", "--deals", "2"],
    "solve": ["experiments.solve", "--game", "deadfall", "--minutes", "0.05"],
    "exploit": ["experiments.exploit", "--game", "neu", "--players", "2", "--target", "random", "--steps", "2048", "--deals",
                "20", "--curve-points", "2", "--curve-deals", "10", "--warm-start-steps", "2000"],
    "train": ["train.ppo", "--game", "neu", "--players", "2", "--steps", "2048"],
    "expert iteration": ["train.expert_iteration", "--game", "neu", "--players", "3", "--teacher", "pimc:worlds=2", "--rounds",
                         "1", "--imitation-steps", "300", "--steps", "600", "--rollout-steps", "300", "--num-envs", "4",
                         "--workers", "0", "--validation-deals", "4"],
}
BAR = re.compile(r"(\d+)/(\d+) \[")  # tqdm's "n/total [" as it redraws


@pytest.mark.parametrize("name", COMMANDS)
def test_every_long_command_says_what_it_is_doing(name, tmp_path):
    done = subprocess.run([sys.executable, "-m", *COMMANDS[name], "--out", str(tmp_path / "out")], cwd=tmp_path, env=ENV,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    counts = [(int(a), int(b)) for a, b in BAR.findall(done.stderr)]
    lines = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    if counts:  # a bar: it starts at 0 and moves (a bar that clears itself at the end may skip its last count)
        assert counts[0][0] == 0 and max(a for a, _ in counts) > 0, counts[:3] + counts[-3:]
    else:  # lines: what it will do, then what it did
        assert len(lines) >= 2, lines

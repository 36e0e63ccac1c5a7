"""lab.critic_fit: returns along each seat's stream, held-out explained variance, CLI errors."""

from __future__ import annotations

import numpy as np
import pytest

from lab import critic_fit as C
from tests.helpers import cli_error_line


def test_returns_follow_each_seats_own_stream():
    # Two seats interleaved: A = 0 -> 2 -> 4 (done), B = 1 -> 3 (done).
    batch = {
        "rewards": np.array([1.0, 10.0, 0.0, 20.0, 2.0]),
        "dones": np.array([False, False, False, True, True]),
        "next_index": np.array([2, 3, 4, -1, -1]),
    }
    ret, stream = C.returns_and_streams(batch, gamma=0.5)
    assert ret.tolist() == pytest.approx([1 + 0.5 * (0 + 0.5 * 2), 10 + 0.5 * 20, 0 + 0.5 * 2, 20, 2])
    assert stream.tolist() == [0, 1, 0, 1, 0]


def test_explained_variance():
    y = np.array([1.0, 2.0, 3.0, 4.0])
    assert C.explained_variance(y, y) == 1.0
    assert C.explained_variance(np.full(4, y.mean()), y) == pytest.approx(0.0)
    assert C.explained_variance(-y, y) < 0


def test_cli_runs_on_a_shipped_checkpoint(capsys):
    assert C.main(["--checkpoint", "agents/checkpoints/neu_4p.pt", "--steps", "300", "--epochs", "2", "--gamma", "0.9"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].startswith("neu, 4 players, policy vs heuristic, gamma 0.9:")
    assert "checkpoint's critic" in lines[1]
    assert len(lines[2].split(": ")[1].split(", ")) == 2  # one number per epoch
    assert lines[3].startswith("linear (ridge) fit")


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--checkpoint", "missing.pt"], "missing.pt does not exist"),
        (["--checkpoint", "agents/checkpoints/neu_4p.pt", "--gamma", "1.5"], "--gamma must be in [0, 1]"),
        (["--checkpoint", "agents/checkpoints/neu_4p.pt", "--steps", "5"], "--steps must be at least 100"),
        (["--checkpoint", "agents/checkpoints/neu_4p.pt", "--epochs", "0"], "--epochs must be at least 1"),
    ],
)
def test_bad_arguments_one_line(argv, message, capsys):
    assert message in cli_error_line(C.main, argv, capsys)

"""lab.belief_tilt: the fit of the tilted belief's tables."""

from __future__ import annotations

import numpy as np

from tests.helpers import cli_error_line


def test_the_fit_brings_the_walked_hands_towards_the_real_ones(capsys):
    """lab.belief_tilt, tiny: each iteration's worst kind ratio (Neu) and the
    distance laws' gap (Ma's Jong) shrink from the uniform start, and it prints the tables."""
    from lab import belief_tilt

    got = belief_tilt.main(["--game", "neu", "--games", "4", "--iterations", "2"])
    out = capsys.readouterr().out
    worst = [float(line.split("worst ")[1].split(":")[0]) for line in out.splitlines() if "iteration" in line]
    assert len(worst) == 3 and worst[-1] < worst[0] / 2
    assert "BELIEF_TILT = np.array([" in out and got["logw"].shape == (18,)
    got = belief_tilt.main(["--game", "not_your_mas_jong", "--players", "3", "--games", "2", "--iterations", "2"])
    out = capsys.readouterr().out
    gaps = [float(line.split("laws ")[1].split(";")[0]) for line in out.splitlines() if "iteration" in line]
    assert gaps[-1] < gaps[0] / 2 and got["beta"] < 0
    assert (np.diff(got["logw"][:, 1:], axis=1) <= 0).all()  # farther is never likelier


def test_the_fit_says_what_is_wrong_in_one_line(capsys):
    from lab import belief_tilt

    assert "invalid choice: 'deadfall'" in cli_error_line(belief_tilt.main, ["--game", "deadfall"], capsys)
    assert "not_your_mas_jong" in cli_error_line(belief_tilt.main, ["--game", "not_your_mas_jong", "--players", "7"], capsys)

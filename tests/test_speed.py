"""experiments.speed: the table it prints, and its errors (never its numbers: speed is not a test)."""

from __future__ import annotations

import pytest

from experiments import speed


def test_prints_a_row_per_env_and_api_with_a_peer_ratio(capsys):
    assert speed.main(["--games", "neu,deadfall", "--seconds", "0.05", "--repeats", "2"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| ") and "steps/s" not in line]
    names = [(r.split("|")[1].strip(), r.split("|")[2].strip()) for r in rows]
    assert ("neu", "env()") in names and ("deadfall", "raw_env") in names
    if speed.leduc_maker() is not None:
        assert names[0][0] == "leduc_holdem_v4 (peer)" and all(r.rstrip(" |").endswith("x") for r in rows)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--games", "chess"], "unknown game(s) chess"),
        (["--repeats", "0"], "argument --repeats: must be a whole number from 1"),
        (["--seconds", "nan"], "argument --seconds: must be a finite number of seconds"),  # nan never ended the timing loop
        (["--seconds", "0"], "argument --seconds: must be more than 0"),
    ],
)
def test_bad_arguments(argv, message, capsys):
    with pytest.raises(SystemExit):
        speed.main(argv)
    assert message in capsys.readouterr().err


def test_tournament_speed_on_both_paths(capsys):
    assert speed.main(["--tournament", "--games", "neu", "--deals", "2", "--repeats", "1", "--workers", "1"]) == 0
    out = capsys.readouterr().out
    rows = [line.split("|")[1:-1] for line in out.splitlines() if line.startswith("| neu ")]
    assert [(r[0].strip(), r[1].strip()) for r in rows] == [("neu", "aec"), ("neu", "vector")]
    assert rows[1][4].strip().endswith("x") and "same games" in out


def test_agent_speed_has_a_row_per_shipped_checkpoint_beside_torch(capsys):
    assert speed.main(["--agents", "--games", "neu", "--repeats", "1", "--num-envs", "64"]) == 0
    out = capsys.readouterr().out
    rows = [line.split("|")[1:-1] for line in out.splitlines() if line.startswith("| neu_")]
    assert [r[0].strip() for r in rows] == ["neu_2p", "neu_4p"] and all(r[1].strip() == "observation" for r in rows)
    assert all(r[4].strip().endswith("x") and r[7].strip().endswith("x") for r in rows)


def test_the_package_runs_as_a_module():
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "experiments.speed", "--help"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "--agents" in done.stdout and "--tournament" in done.stdout

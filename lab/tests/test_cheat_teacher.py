"""lab.cheat_teacher: an upper bound's decisions as a teacher file for train.ppo_search."""

from __future__ import annotations

import numpy as np
import pytest

import envs
from lab import cheat_teacher
from train import ppo_search
from tests.helpers import cli_error_line

pytest.importorskip("numba")

SPEC = "pimc_cheat:worlds=2"


@pytest.fixture(scope="module")
def data():
    return cheat_teacher.collect("neu", 3, games=3, spec=SPEC, seed=40)


def test_the_file_holds_the_teachers_decisions_with_a_choice_one_game_after_another(data):
    rows = len(data["actions"])
    assert rows > 10 and data["obs"].shape == (rows, envs.info("neu", 3).obs_size)
    assert (data["masks"].sum(1) >= 2).all() and data["masks"][np.arange(rows), data["actions"]].all()
    # Three games: three ends, each carrying its seat's whole return; every other reward is 0.
    assert data["dones"].sum() == 3 and data["dones"][-1] and (data["rewards"][~data["dones"]] == 0).all()
    assert (data["next_index"][~data["dones"]] == np.flatnonzero(~data["dones"]) + 1).all()
    assert (data["next_index"][data["dones"]] == -1).all()
    assert data["env_steps"] > rows


def test_the_file_does_not_depend_on_the_workers(data):
    again = cheat_teacher.collect("neu", 3, games=3, spec=SPEC, seed=40, workers=2)
    for key in ("obs", "masks", "actions", "rewards", "dones", "next_index", "env_steps"):
        np.testing.assert_array_equal(again[key], data[key])


def test_ppo_search_distils_the_file(data, tmp_path):
    path = tmp_path / "teacher.npz"
    np.savez_compressed(path, **data)
    args = ppo_search.Args(game="neu", players=3, teacher_data=str(path), steps=1, rollout_steps=1, hidden=16,
                           workers=0, num_envs=2, out=str(tmp_path / "run"))
    read = ppo_search.read_teacher_data(args)
    assert len(read["actions"]) == len(data["actions"])


@pytest.mark.parametrize("argv, message", [
    (["--teacher", "heuristic"], "--teacher must be an upper-bound search that sees every hand"),
    (["--out", "x.csv"], "--out must name a .npz file"),
    (["--games", "0"], "--games and --workers must be 1 or more"),
])
def test_bad_arguments_get_one_clear_line(argv, message, capsys, tmp_path):
    out = ["--out", str(tmp_path / "t.npz")]
    line = cli_error_line(cheat_teacher.main, ["--game", "neu", "--players", "3"] + out + argv, capsys)
    assert message in line


def test_an_existing_file_is_never_overwritten(tmp_path, capsys):
    path = tmp_path / "t.npz"
    path.write_bytes(b"earlier run")
    line = cli_error_line(cheat_teacher.main, ["--game", "neu", "--players", "3", "--out", str(path)], capsys)
    assert "already exists" in line and path.read_bytes() == b"earlier run"

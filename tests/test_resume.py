"""A run is continued from its own checkpoint however long it has run: the loader's bound counts
the opponent pool a resumable checkpoint carries (agents/checkpoint.py `tensor_budget`), and the
exported sidecar says how to make the run from nothing."""

from __future__ import annotations

import json

import pytest
import torch

from agents.checkpoint import CheckpointError, POOL_SNAPSHOTS, read_checkpoint, save_checkpoint
from train import ppo

# Every table against a past snapshot, so the pool fills; a wide network, so the pool is most of the file.
RUN = ["--game", "neu", "--players", "2", "--rollout-steps", "1000", "--num-envs", "16", "--hidden", "512",
       "--self-play", "0", "--vs-heuristic", "0", "--vs-random", "0", "--seed", "1"]


def test_a_run_of_twenty_updates_resumes_twice_and_exports_the_command_from_nothing(tmp_path, capsys):
    out = str(tmp_path / "run")
    assert ppo.run_cli([*RUN, "--steps", "40000", "--out", out]) == 0
    first = read_checkpoint(tmp_path / "run" / "checkpoint.pt")
    assert first["meta"]["update"] >= 20 and len(first["meta"]["pool"]) >= 6  # what the old bound refused
    assert ppo.run_cli([*RUN, "--steps", "60000", "--out", out, "--resume"]) == 0
    second = read_checkpoint(tmp_path / "run" / "checkpoint.pt")
    assert second["meta"]["update"] > first["meta"]["update"]
    export = str(tmp_path / "policy.pt")
    assert ppo.run_cli([*RUN, "--steps", "80000", "--out", out, "--resume", "--export", export]) == 0
    third = read_checkpoint(tmp_path / "run" / "checkpoint.pt")
    assert third["meta"]["update"] > second["meta"]["update"]
    sidecar = json.loads((tmp_path / "policy.json").read_text())
    assert "--resume" not in sidecar["made_by"]["command"] and sidecar["args"]["resume"] is False
    assert sidecar["reproduce"] is None or "--resume" not in sidecar["reproduce"]
    capsys.readouterr()
    assert ppo.run_cli([*RUN, "--steps", "80000", "--out", out, "--resume"]) == 0  # nothing left to train
    said = capsys.readouterr().out
    assert "nothing left to train" in said and "done," not in said


def test_the_bound_still_refuses_a_header_that_lies_about_its_network(tmp_path):
    """A checkpoint whose tensors are more than its header's network and a full pool can hold."""
    out = str(tmp_path / "run")
    assert ppo.run_cli([*RUN, "--steps", "1000", "--hidden", "8", "--out", out]) == 0
    ckpt = torch.load(tmp_path / "run" / "checkpoint.pt", weights_only=False)
    full = [{k: v.clone() for k, v in ckpt["model"].items()} for _ in range(POOL_SNAPSHOTS)]
    save_checkpoint({**ckpt, "meta": {**ckpt["meta"], "pool": full}}, tmp_path / "full.pt")
    assert len(read_checkpoint(tmp_path / "full.pt")["meta"]["pool"]) == POOL_SNAPSHOTS  # within the bound
    ckpt["meta"]["pool"] = full + [{"extra": torch.zeros(1_000_000)}]
    save_checkpoint(ckpt, tmp_path / "lying.pt")
    with pytest.raises(CheckpointError, match=r"lying.pt: refused unread: \d+ bytes of tensors"):
        read_checkpoint(tmp_path / "lying.pt")


def test_the_sidecar_command_drops_resume_in_any_spelling():
    from train.export import from_nothing

    assert from_nothing(["--game", "neu", "--resume", "--resu", "--steps", "5"]) == ["--game", "neu", "--steps", "5"]

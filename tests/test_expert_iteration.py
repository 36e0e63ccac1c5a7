"""train.expert_iteration: rounds of search-taught networks, each the next round's play-out policy,
a validation edge per round, the stopping rule, and --resume bit for bit from any checkpoint."""

import csv
import dataclasses
import json
import re

import pytest

torch = pytest.importorskip("torch")

import envs  # noqa: E402
from agents import make_agent  # noqa: E402
from agents.checkpoint import read_checkpoint  # noqa: E402
from experiments.tournament.match import play_game  # noqa: E402
from train import expert_iteration as ei  # noqa: E402
from train import ppo  # noqa: E402


def tiny(tmp_path, name="run", **kw):
    base = dict(game="neu", players=3, teacher="pimc:worlds=2", rounds=2, imitation_steps=300, steps=1200, rollout_steps=300,
                num_envs=4, workers=0, hidden=16, seed=3, validation_deals=6, out=str(tmp_path / name))
    return ei.Args(**{**base, **kw})


def rounds(folder, drop=("wall_seconds",)):
    with open(folder / "rounds.csv", newline="") as f:
        return [{k: v for k, v in r.items() if k not in drop} for r in csv.DictReader(f)]


def weights(path):
    return read_checkpoint(path)["model"]


def same_weights(a, b):
    wa, wb = weights(a), weights(b)
    return wa.keys() == wb.keys() and all(torch.equal(wa[k], wb[k]) for k in wa)


def test_each_round_searches_with_the_last_network_and_final_is_the_best_round(tmp_path, capsys):
    rows = ei.main(tiny(tmp_path), say=lambda *_: None)
    bars = re.findall(r"teacher (pimc[^:]*:[^ ]*?): +(\d+)%.*?(\d+)/300", capsys.readouterr().err)
    assert {b[0][:13] for b in bars} == {"pimc:worlds=2"} and bars[0][2] == "0"  # the teacher's games show a bar
    folder = tmp_path / "run"
    assert [int(r["round"]) for r in rows] == [0, 1] and len(rounds(folder)) == 2
    assert rows[0]["teacher"] == "pimc:worlds=2"
    assert rows[1]["teacher"] == f"pimc:worlds=2,rollout=ppo:{folder / 'round_0' / 'final.pt'}"
    # each round's checkpoint says which search taught it
    assert read_checkpoint(folder / "round_1" / "final.pt")["made_by"]["teacher"] == rows[1]["teacher"]
    best = [r for r in rows if r["best"] == "1"][-1]
    assert same_weights(folder / "final.pt", folder / f"round_{best['round']}" / "final.pt")
    assert all(-100 < float(r["edge_vs_heuristic"]) < 100 and float(r["edge_ci"]) > 0 for r in rows)
    text = (folder / "command.txt").read_text().splitlines()
    assert text[1].startswith("python -m train.expert_iteration --game neu --players 3 ") and text[3] == text[1] + " --resume"


def test_the_search_plays_the_networks_move_when_no_other_move_can_pass_its_bound(tmp_path):
    ei.main(tiny(tmp_path, rounds=1), say=lambda *_: None)
    path = tmp_path / "run" / "round_0" / "final.pt"
    net = make_agent(f"ppo:{path}", "neu", 3, seed=0)
    search = make_agent(f"pimc:worlds=4,z=1000,rollout=ppo:{path}", "neu", 3, seed=0)
    assert type(search.policy).__name__ == "PPOAgent"

    class Checked:
        """The search in every seat, each move compared with the network's."""

        moves = 0

        def inform(self, info):
            search.inform(info)

        def act(self, observation):
            action = search.act(observation)
            assert action == net.act(observation)
            Checked.moves += 1
            return action

    play_game(envs.make("neu", num_players=3), [Checked() for _ in range(3)], seed=11)
    assert Checked.moves > 10 and search.searched > 0  # moves with a choice were searched, and all kept


def test_a_round_that_does_not_gain_ends_the_run(tmp_path):
    rows = ei.main(tiny(tmp_path, rounds=4, min_gain=1000.0, export=str(tmp_path / "best.pt")), say=lambda *_: None)
    assert same_weights(tmp_path / "best.pt", tmp_path / "run" / "round_0" / "final.pt")  # round 1 did not gain
    sidecar = json.loads((tmp_path / "best.json").read_text())
    assert sidecar["args"]["rounds"] == 4 and sidecar["made_by"]["teacher"] == "pimc:worlds=2"
    assert sidecar["reproduce"].startswith("python -m train.expert_iteration ") and "--resume" not in sidecar["reproduce"]
    again = ei.main(tiny(tmp_path, rounds=4, min_gain=1000.0, export=str(tmp_path / "again.pt"), resume=True), say=lambda *_: None)
    assert again == rows and same_weights(tmp_path / "again.pt", tmp_path / "best.pt")  # a finished run, exported again
    assert json.loads((tmp_path / "again.json").read_text())["args"]["resume"] is False
    assert [r["best"] for r in rows] == ["1", "0"]  # round 1 cannot gain 1000 a game: rounds 2 and 3 never start
    assert not (tmp_path / "run" / "round_2").exists()


@pytest.mark.parametrize("stop_after", [2, 5])  # a checkpoint of round 0, the distilled clone of round 1
def test_an_interrupted_run_resumed_equals_the_uninterrupted_run_bit_for_bit(tmp_path, monkeypatch, stop_after):
    ei.main(tiny(tmp_path, "whole"), say=lambda *_: None)
    real_save, saved = ppo.save_checkpoint, []

    def save_then_stop(obj, path):
        real_save(obj, path)
        if str(path).endswith("checkpoint.pt"):
            saved.append(path)
            if len(saved) == stop_after:
                raise KeyboardInterrupt

    monkeypatch.setattr(ppo, "save_checkpoint", save_then_stop)
    args = tiny(tmp_path, "cut")
    with pytest.raises(KeyboardInterrupt):
        ei.main(args, say=lambda *_: None)
    monkeypatch.setattr(ppo, "save_checkpoint", real_save)
    assert ("round_1" in str(saved[-1])) == (stop_after == 5)
    ei.main(dataclasses.replace(args, resume=True), say=lambda *_: None)
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    drop = ("wall_seconds", "teacher")  # the teacher names its own folder's round_0
    assert rounds(whole, drop) == rounds(cut, drop) and len(rounds(cut)) == 2
    for name in ("round_0/final.pt", "round_1/final.pt", "final.pt"):
        assert same_weights(whole / name, cut / name), name


def test_bad_arguments_are_refused_in_one_line_and_runs_are_never_overwritten(tmp_path):
    for kw, words in ((dict(teacher="heuristic"), "fair search spec"), (dict(teacher="pimc_cheat"), "fair search spec"),
                      (dict(teacher="pimc:rollout=random"), "must not set rollout="), (dict(out=""), "needs --out"),
                      (dict(teacher_data=str(tmp_path / "t.npz")), "--teacher-data is refused"),
                      (dict(rounds=0), "--rounds"), (dict(min_gain=float("nan")), "--min-gain")):
        with pytest.raises(ValueError, match=words):
            ei.main(tiny(tmp_path, **kw))
    with pytest.raises(ValueError, match="no expert iteration run to continue"):
        ei.main(tiny(tmp_path, "none", resume=True))
    (tmp_path / "kept").mkdir()
    (tmp_path / "kept" / "notes.txt").write_text("mine")
    for kw in ({}, {"overwrite": True}):
        with pytest.raises(ValueError, match="already holds a run|does not hold an expert iteration run"):
            ei.main(tiny(tmp_path, "kept", **kw))
    assert (tmp_path / "kept" / "notes.txt").read_text() == "mine"

"""train.ppo_search: distilling a teacher (any agent spec, with or without option values), the
strength log, command.txt and --resume that continues a run bit for bit."""

from __future__ import annotations

import csv
import dataclasses
import shlex

import zipfile

import numpy as np
import pytest
import torch

import envs
from agents.network import ActorCritic, input_size, policy_input
from train import ppo, ppo_search
from train.distill import TeacherGames, heuristic_moves, soft_targets, with_hint
from train.ppo_search import Args, main
from tests.helpers import cli_error_line, heuristic_decisions


@pytest.fixture(autouse=True)
def few_scale_games():
    before, ppo.SCALE_GAMES = ppo.SCALE_GAMES, 4
    yield
    ppo.SCALE_GAMES = before


class LowestTeacher:
    """A fake search agent: it values each legal move at -0.5 * its index and plays the best (the
    lowest legal action); `option_values` gives those values after each act, as a search would."""

    def __init__(self, game=None, num_players=None, seed=None):
        pass

    @staticmethod
    def values(mask):
        return np.where(np.asarray(mask) != 0, -0.5 * np.arange(len(mask)), np.nan).astype(np.float32)

    def act(self, observation):
        return int(np.flatnonzero(observation["action_mask"])[0])

    def option_values(self, observation):
        return self.values(observation["action_mask"])


class LowestTeacherBatched(LowestTeacher):
    def act_batch(self, obs, mask, seat):
        return np.asarray(mask).astype(bool).argmax(1)

    def option_values_batch(self, obs, mask, seat):
        return np.stack([self.values(m) for m in mask])


def tiny(tmp_path, run_name="run", **kw):
    base = dict(game="neu", players=3, steps=1200, rollout_steps=300, num_envs=4, workers=0, hidden=16, seed=3,
                imitation_steps=1500, out=str(tmp_path / run_name))
    base.update(kw)
    return Args(**base)


def weights(net):
    return {k: v.clone() for k, v in net.state_dict().items()}


def held_out_agreement(net, game, n, seed, games=6):
    """Share of the heuristic's decisions in fresh AEC games (small seeds: never a training deal) where
    the net's top legal action is the heuristic's."""
    same = total = 0
    env = envs.make_raw(game, num_players=n)
    for g in range(games):
        for _, obs, action in heuristic_decisions(env, seed + g):
            with torch.no_grad():
                logits = net.masked_logits(torch.as_tensor(obs["observation"])[None],
                                           torch.as_tensor(obs["action_mask"].astype(bool))[None])
            same += int(logits.argmax().item() == action)
            total += 1
    return same / total


def test_a_clone_of_the_heuristic_agrees_with_it_on_held_out_decisions(tmp_path, capsys):
    args = tiny(tmp_path, game="deadfall", players=3, hidden=64, imitation_steps=6000, imitation_epochs=20,
                learning_rate=3e-3, steps=1, rollout_steps=1)
    untrained = ActorCritic(envs.info("deadfall", 3).obs_size, envs.info("deadfall", 3).num_actions,
                            envs.info("deadfall", 3).obs_size, 64)
    clone = main(args)
    out = capsys.readouterr().out
    assert "the teacher heuristic plays with act_batch" in out and "targets the teacher's moves" in out
    before, after = held_out_agreement(untrained, "deadfall", 3, 900), held_out_agreement(clone, "deadfall", 3, 900)
    assert after > 0.75 and after > before + 0.2, (before, after)


def test_a_teacher_without_act_batch_plays_the_same_games_on_aec_tables():
    aec = TeacherGames("tests.test_ppo_search:LowestTeacher", "neu", 3, tables=5, reward_scale=0.5)
    batched = TeacherGames("tests.test_ppo_search:LowestTeacherBatched", "neu", 3, tables=5, reward_scale=0.5)
    assert aec.path.startswith("AEC tables") and batched.path.startswith("the batched engine")
    assert batched.target.batched and "offers its option values" in batched.path
    one, two = aec.collect(400, seed=1), batched.collect(400, seed=1)
    assert set(one) == set(two) and "values" in one
    for key in one:  # an AEC table ends an eliminated seat's stream at once, the batched engine at the game's end
        if key != "dones":
            assert np.array_equal(np.asarray(one[key]), np.asarray(two[key]), equal_nan=True), key
    returns = [ppo.gae(d["rewards"], np.zeros_like(d["rewards"]), d["dones"], d["next_index"], 0.9, 1.0)[1] for d in (one, two)]
    assert np.allclose(*returns)
    legal = one["masks"]
    assert (one["actions"] == legal.argmax(1)).all() and one["env_steps"] >= 400
    assert (legal.sum(1) > 1).all() and 0 < len(legal) < one["env_steps"]  # decisions with a choice only
    assert np.isnan(one["values"][~legal]).all() and np.isfinite(one["values"][legal]).all()
    assert one["dones"].sum() >= 5 and np.isclose(one["rewards"].sum(), 0.0, atol=1e-4)  # Neu: every lost chip is one seat's


def test_soft_targets_follow_the_option_values():
    data = {"values": np.array([[0.0, 1.0, np.nan], [np.nan, np.nan, np.nan]], np.float32),
            "masks": np.array([[True, True, True], [True, False, True]]), "actions": np.array([1, 2])}
    t = soft_targets(data, weight=0.5, temperature=1.0).numpy()
    p = np.exp([0.0, 1.0]) / np.exp([0.0, 1.0]).sum()
    assert np.allclose(t[0], [0.5 * p[0], 0.5 + 0.5 * p[1], 0.0])  # an unvalued action gets nothing from the values
    assert np.allclose(t[1], [0, 0, 1])  # no values: the teacher's move
    assert soft_targets(data, 0.0, 1.0) is None and soft_targets({"masks": data["masks"]}, 0.5, 1.0) is None


def legal_probs(net, data):
    with torch.no_grad():
        return torch.softmax(net.masked_logits(torch.as_tensor(data["obs"]), torch.as_tensor(data["masks"])), -1).numpy()


def test_a_teacher_with_option_values_is_distilled_with_soft_targets(tmp_path, capsys):
    teacher = "tests.test_ppo_search:LowestTeacher"
    kw = dict(teacher=teacher, imitation_steps=3000, imitation_epochs=40, imitation_smoothing=0.0, learning_rate=3e-3,
              steps=1, rollout_steps=1, value_temperature=4.0, hidden=32)
    soft = main(tiny(tmp_path, "soft", soft_targets=1.0, **kw))
    assert "targets soft (option values)" in capsys.readouterr().out
    hard = main(tiny(tmp_path, "hard", soft_targets=0.0, **kw))
    fresh = TeacherGames(teacher, "neu", 3, tables=4, reward_scale=1.0).collect(600, seed=77)  # held-out decisions
    want = soft_targets(fresh, 1.0, 4.0).numpy()
    choice = fresh["masks"].sum(1) > 1  # decisions with a choice
    for net, close in ((soft, True), (hard, False)):
        p = legal_probs(net, fresh)
        agree = (p.argmax(1) == fresh["actions"]).mean()
        tv = 0.5 * np.abs(p - want).sum(1)[choice].mean()  # total variation from softmax(values)
        assert agree > (0.8 if close else 0.95), agree  # soft targets this flat blur near ties a little
        assert (tv < 0.15) if close else (tv > 0.3), tv


@pytest.mark.parametrize("engine,stop_after", [("auto", 3), ("aec", 1)])
def test_an_interrupted_run_resumed_equals_the_uninterrupted_run_bit_for_bit(tmp_path, monkeypatch, engine, stop_after):
    """stop_after: checkpoints written before the interruption (the first is the distillation's, update 0)."""
    kw = dict(steps=2400, engine=engine, kl_clone=0.5, vs_heuristic=0.3, self_play=0.3, strength_every=2, strength_deals=6)
    whole = weights(main(tiny(tmp_path, "whole", **kw)))
    real_save, saved = ppo.save_checkpoint, []

    def save_then_stop(obj, path):
        real_save(obj, path)
        if path.endswith("checkpoint.pt"):
            saved.append(obj["meta"]["update"])
            if len(saved) == stop_after:
                raise KeyboardInterrupt

    monkeypatch.setattr(ppo, "save_checkpoint", save_then_stop)
    args = tiny(tmp_path, "cut", **kw)
    with pytest.raises(KeyboardInterrupt):
        main(args)
    monkeypatch.setattr(ppo, "save_checkpoint", real_save)
    assert saved == list(range(stop_after))
    resumed = weights(main(dataclasses.replace(args, resume=True)))
    assert all(torch.equal(whole[k], resumed[k]) for k in whole)

    def table(path, drop=("steps_per_second", "rollout_steps_per_second", "wall_seconds", "eval_seconds")):
        with open(path, newline="") as f:
            return [{k: v for k, v in r.items() if k not in drop} for r in csv.DictReader(f)]

    for name in ("progress.csv", "strength.csv"):
        assert table(tmp_path / "whole" / name) == table(tmp_path / "cut" / name), name
    rows = table(tmp_path / "whole" / "strength.csv")
    updates = [int(r["update"]) for r in table(tmp_path / "whole" / "progress.csv")]
    assert max(updates) > saved[-1]  # the resumed run had updates left to play
    assert [int(r["update"]) for r in rows] == [0] + [u for u in updates if u % 2 == 0] and len(rows) >= 2
    assert {"global_step", "edge_vs_heuristic", "edge_ci", "first_place"} <= set(rows[0])
    # the strength log draws nothing from the run's random streams: without it, the same network
    plain = weights(main(tiny(tmp_path, "plain", **{**kw, "strength_every": 0})))
    assert all(torch.equal(whole[k], plain[k]) for k in whole)
    assert not (tmp_path / "plain" / "strength.csv").exists()


def test_command_txt_says_how_to_continue_and_parses_back(tmp_path):
    args = tiny(tmp_path, steps=300, kl_clone=1.0, soft_targets=0.25)
    main(args)
    lines = (tmp_path / "run" / "command.txt").read_text().splitlines()
    started, resume = lines[1], lines[3]
    assert started.startswith("python -m train.ppo_search --game neu --players 3 ") and resume == started + " --resume"
    made_by = torch.load(tmp_path / "run" / "final.pt", weights_only=True)["made_by"]
    assert made_by["command"] == started and made_by["teacher"] == "heuristic" and made_by["steps"] >= 1500 + 300
    assert ppo_search.parse_args(shlex.split(started)[3:]) == args
    assert ppo_search.parse_args(shlex.split(resume)[3:]) == dataclasses.replace(args, resume=True)
    again = shlex.split(lines[5])[3:]
    assert again[again.index("--teacher-data") + 1] == str(tmp_path / "run" / "teacher.npz")
    with np.load(tmp_path / "run" / "teacher.npz") as f:
        assert int(f["env_steps"]) >= 1500 and 0 < len(f["actions"]) <= int(f["env_steps"])


def test_teacher_data_is_distilled_again_without_playing(tmp_path, capsys):
    first = main(tiny(tmp_path, "a", steps=1, rollout_steps=1))
    again = main(tiny(tmp_path, "b", steps=1, rollout_steps=1, imitation_steps=0,
                      teacher_data=str(tmp_path / "a" / "teacher.npz")))
    assert "decisions read from" in capsys.readouterr().out
    assert all(torch.equal(v, weights(again)[k]) for k, v in weights(first).items())
    made_by = torch.load(tmp_path / "b" / "final.pt", weights_only=True)["made_by"]
    assert made_by["teacher"] == f"heuristic (decisions read from {tmp_path / 'a' / 'teacher.npz'})"
    # the run folder goes on without the file it was distilled from: it continues from its own copy
    resume = (tmp_path / "b" / "command.txt").read_text().splitlines()[3]
    (tmp_path / "a" / "teacher.npz").unlink()
    continued = ppo_search.parse_args(shlex.split(resume)[3:])
    assert continued.resume and continued.teacher_data == str(tmp_path / "b" / "teacher.npz")
    assert all(torch.equal(v, weights(main(continued))[k]) for k, v in weights(again).items())


def test_hint_is_added_to_the_teachers_views_and_read_by_the_strength_log(tmp_path):
    # The teacher file holds views without the hint; a --hint run appends the heuristic's move, one-hot.
    main(tiny(tmp_path, "a", steps=1, rollout_steps=1))
    net = main(tiny(tmp_path, "b", steps=1, rollout_steps=1, imitation_steps=0, hint=True, imitation_epochs=30,
                    teacher_data=str(tmp_path / "a" / "teacher.npz"), strength_every=1, strength_deals=4))
    facts = envs.info("neu", 3)
    assert net.actor[0].in_features == facts.obs_size + facts.num_actions
    with np.load(tmp_path / "a" / "teacher.npz") as f:
        obs, masks, actions = f["obs"], f["masks"], f["actions"]
    x = with_hint("neu", 3, obs, obs, masks)
    one = policy_input("neu", 3, hint=True)
    assert all(np.array_equal(x[i], one(obs[i], masks[i].astype(np.int8))) for i in range(0, len(obs), 37))
    # the heuristic is its own teacher here: a network told its move learns to play it
    with torch.no_grad():
        agree = (net.masked_logits(torch.as_tensor(x), torch.as_tensor(masks)).argmax(-1).numpy() == actions).mean()
    assert agree > 0.97, agree
    assert (tmp_path / "b" / "strength.csv").read_text().count("\n") >= 2


def test_kl_clone_holds_the_policy_near_a_clone_distilled_from_teacher_data(tmp_path):
    # --teacher-data is a distillation too: --kl-clone needs no --imitation-steps beside it, and the penalty runs.
    main(tiny(tmp_path, "a", steps=1, rollout_steps=1))
    argv = ["--game", "neu", "--players", "3", "--imitation-steps", "0", "--kl-clone", "1", "--steps", "600",
            "--rollout-steps", "300", "--num-envs", "4", "--workers", "0", "--hidden", "16",
            "--teacher-data", str(tmp_path / "a" / "teacher.npz"), "--out", str(tmp_path / "b")]
    main(ppo_search.parse_args(argv))
    with open(tmp_path / "b" / "progress.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert rows and float(rows[0]["kl_clone_weight"]) == 1.0 and all(float(r["kl_clone"]) >= 0 for r in rows)
    with pytest.raises(ValueError, match="needs --imitation-steps or --teacher-data"):
        ppo_search.check_args(dataclasses.replace(ppo_search.parse_args(argv), teacher_data=""))


@pytest.mark.parametrize("argv,message", [
    (["--hint", "--imitation-steps", "10", "--engine", "vector"], "--engine vector needs a policy that reads the plain"),
    ([], "give --imitation-steps N or --teacher-data PATH"),
    (["--imitation-steps", "10", "--teacher", "nosuch.py:Bot"], "does not exist"),
    (["--imitation-steps", "10", "--soft-targets", "2"], "--soft-targets must be in [0, 1]"),
    (["--imitation-steps", "10", "--value-temperature", "0"], "--value-temperature must be"),
    (["--imitation-steps", "10", "--teacher-data", "nowhere.npz"], "nowhere.npz: no such file"),
    (["--imitation-steps", "10", "--departure-weight", "0"], "--departure-weight must be a finite number above 0"),
])
def test_bad_arguments_get_one_clear_line(argv, message, capsys):
    assert message in cli_error_line(ppo_search.parse_args, argv, capsys)


def _teacher_file(path, **change):
    """A well-formed teacher.npz for Neu at 3 players (plain inputs), with `change` applied."""
    facts = envs.info("neu", 3)
    rows, width = 5, input_size(facts, False)
    masks = np.ones((rows, facts.num_actions), bool)
    data = dict(obs=np.zeros((rows, width), np.float32), masks=masks, actions=np.zeros(rows, np.int64),
                rewards=np.zeros(rows, np.float32), dones=np.zeros(rows, bool), next_index=np.full(rows, -1, np.int64),
                critic_in=np.zeros((0, 0), np.float32), env_steps=np.int64(10))
    data.update(change)
    np.savez_compressed(path, **{k: v for k, v in data.items() if v is not None})
    return path


@pytest.mark.parametrize("change, message", [
    ({"obs": np.array([object()] * 5, dtype=object)}, "obs holds Python objects (a pickle), refused unread"),
    ({"obs": np.zeros((5, 7), np.float32)}, "obs has shape (5, 7); dimension 1 should be"),
    ({"actions": np.zeros(4, np.int64)}, "actions has shape (4,); dimension 0 should be 5"),
    ({"actions": np.full(5, 99, np.int64)}, "an action is outside the game's actions"),
    ({"rewards": np.full(5, np.nan, np.float32)}, "hold a NaN or an infinity"),
    ({"values": np.full((5, 19), np.inf, np.float32)}, "values hold an infinity"),
    ({"next_index": np.full(5, 9, np.int64)}, "next_index points outside the file"),
    ({"env_steps": np.int64(-1)}, "env_steps is negative"),
    ({"dones": None}, "missing dones"),
    ({"extra": np.zeros(3)}, "unknown extra"),
])
def test_a_bad_teacher_file_is_refused_in_one_line_and_leaves_no_run_folder(tmp_path, capsys, change, message):
    bad = str(_teacher_file(tmp_path / "teacher.npz", **change))
    args = ["--game", "neu", "--players", "3", "--imitation-steps", "0", "--teacher-data", bad, "--out", str(tmp_path / "run")]
    assert message in cli_error_line(ppo_search.parse_args, args, capsys)  # values too, column by column
    assert not (tmp_path / "run").exists()


def test_a_teacher_file_that_is_not_a_zip_or_claims_too_much_is_refused_unread(tmp_path, capsys, monkeypatch):
    cut = tmp_path / "cut.npz"
    cut.write_bytes(_teacher_file(tmp_path / "whole.npz").read_bytes()[:100])
    args = ["--game", "neu", "--players", "3", "--imitation-steps", "0", "--out", str(tmp_path / "run"), "--teacher-data"]
    assert "not an .npz file" in cli_error_line(ppo_search.parse_args, args + [str(cut)], capsys)
    monkeypatch.setattr(ppo_search, "MAX_TEACHER_BYTES", 1000)  # the index's sizes are read before any data
    assert "uncompressed, more than the 1,000 bytes" in cli_error_line(ppo_search.parse_args, args + [str(tmp_path / "whole.npz")], capsys)
    assert not (tmp_path / "run").exists()
    # A well-formed file that decompresses to more than twice the largest real teacher file (a 1.5 GB
    # obs column of zeros, a few MB on disk): refused from its index, before anything is written.
    huge = tmp_path / "huge.npz"
    rows = 7_000_000
    with zipfile.ZipFile(tmp_path / "whole.npz") as src, zipfile.ZipFile(huge, "w", zipfile.ZIP_DEFLATED) as z:
        for name in src.namelist():
            if name != "obs.npy":
                z.writestr(name, src.read(name))
        with z.open("obs.npy", "w", force_zip64=True) as f:
            np.lib.format.write_array_header_1_0(f, {"descr": "<f4", "fortran_order": False, "shape": (rows, 56)})
            chunk = bytes(1 << 24)
            for _ in range(rows * 56 * 4 // len(chunk)):
                f.write(chunk)
            f.write(bytes(rows * 56 * 4 % len(chunk)))
    assert huge.stat().st_size < 10 << 20 and ppo_search.MAX_TEACHER_BYTES <= 1 << 30
    monkeypatch.undo()
    line = cli_error_line(ppo_search.parse_args, args + [str(huge)], capsys)
    assert "uncompressed, more than the" in line
    assert not (tmp_path / "run").exists()


def test_a_search_agent_teaches_on_aec_tables_told_its_information_state(tmp_path):
    for teacher in ("pimc:worlds=2", "ismcts:iterations=8"):
        games = TeacherGames(teacher, "neu", 3, tables=2, reward_scale=1.0)
        assert games.path.startswith("AEC tables") and games.with_values
        data = games.collect(120, seed=0)
        assert data["env_steps"] >= 120 and len(data["actions"]) > 0
        chosen = np.arange(len(data["actions"])), data["actions"]
        assert data["masks"][chosen].all()
        # Its values: one per action, NaN off the legal moves, and the move it played valued.
        assert np.isnan(data["values"][~data["masks"]]).all() and np.isfinite(data["values"][chosen]).all()
        targets = soft_targets(data, 0.5, 1.0).numpy()
        assert np.allclose(targets.sum(1), 1) and (targets[~data["masks"]] == 0).all()
    # what a search taught, written as a run writes it, is read again by --teacher-data (NaN: no value)
    path = tmp_path / "teacher.npz"
    np.savez_compressed(path, **data)
    args = ppo_search.parse_args(["--game", "neu", "--players", "3", "--imitation-steps", "0", "--teacher-data", str(path),
                                  "--out", str(tmp_path / "run")])
    assert np.array_equal(ppo_search.read_teacher_data(args)["actions"], data["actions"])


def test_several_teacher_files_are_read_as_one(tmp_path):
    # decisions one after another, each file's links shifted by the rows before it, env steps summed
    main(tiny(tmp_path, "a", steps=1, rollout_steps=1))
    main(tiny(tmp_path, "b", steps=1, rollout_steps=1, seed=5))
    a, b = (str(tmp_path / r / "teacher.npz") for r in "ab")
    args = ppo_search.parse_args(["--game", "neu", "--players", "3", "--imitation-steps", "0", "--teacher-data", f"{a},{b}",
                                  "--out", str(tmp_path / "run")])
    both = ppo_search.read_teacher_data(args)
    with np.load(a) as fa, np.load(b) as fb:
        n = len(fa["actions"])
        assert np.array_equal(both["actions"], np.concatenate([fa["actions"], fb["actions"]]))
        assert np.array_equal(both["next_index"][:n], fa["next_index"])
        links = fb["next_index"] >= 0
        assert links.any() and np.array_equal(both["next_index"][n:][links], fb["next_index"][links] + n)
        assert (both["next_index"][n:][~links] == -1).all()
        assert int(both["env_steps"]) == int(fa["env_steps"]) + int(fb["env_steps"])
    with_values = str(_teacher_file(tmp_path / "v.npz", values=np.zeros((5, 19), np.float32)))
    with pytest.raises(ValueError, match="some files hold option values and some do not"):
        ppo_search.read_teacher_data(dataclasses.replace(args, teacher_data=f"{a},{with_values}"))


def test_the_teachers_departures_from_the_heuristic_weigh_more_when_asked(tmp_path, capsys):
    # One view, recorded 100 times: the teacher plays the heuristic's move 70 times and another 30.
    # Unweighted, the clone plays the heuristic's move; departures weighing 5 (150 against 70) turn it.
    main(tiny(tmp_path, "a", steps=1, rollout_steps=1))
    with np.load(tmp_path / "a" / "teacher.npz") as f:
        row = int(np.flatnonzero(f["masks"].sum(1) >= 2)[0])
        obs, mask = f["obs"][row], f["masks"][row]
    move = int(heuristic_moves("neu", 3, obs[None], mask[None])[0])
    other = int(next(a for a in np.flatnonzero(mask) if a != move))
    actions = np.where(np.arange(100) < 70, move, other)
    path = _teacher_file(tmp_path / "split.npz", obs=np.repeat(obs[None], 100, 0), masks=np.repeat(mask[None], 100, 0),
                         actions=actions, rewards=np.zeros(100, np.float32), dones=np.ones(100, bool),
                         next_index=np.full(100, -1, np.int64))
    followed = {}
    for w in (1.0, 5.0):
        main(tiny(tmp_path, f"w{w:g}", steps=1, rollout_steps=1, imitation_steps=0, imitation_epochs=40,
                  teacher_data=str(path), departure_weight=w))
        line = next(x for x in capsys.readouterr().out.splitlines() if "leaves the heuristic's move on" in x)
        assert "on 30.0% of them" in line
        followed[w] = line.split("teacher's move on ")[1]
    assert followed[1.0].startswith("0.0%") and followed[5.0].startswith("100.0%"), followed


def test_steps_0_distils_only_and_final_pt_is_the_clone(tmp_path, capsys):
    # No PPO update: the clone is written as update 0's checkpoint and as final.pt, and nothing else is played.
    net = main(tiny(tmp_path, "a", steps=0))
    assert "--steps 0: no update" in capsys.readouterr().out
    final = torch.load(tmp_path / "a" / "final.pt", weights_only=True)
    ckpt = torch.load(tmp_path / "a" / "checkpoint.pt", weights_only=True)
    assert ckpt["meta"]["update"] == 0 and (tmp_path / "a" / "progress.csv").read_text().count("\n") <= 1
    assert all(torch.equal(v, final["model"][k]) for k, v in ckpt["model"].items())
    assert all(torch.equal(v, final["model"][k]) for k, v in weights(net).items())
    # a run with no warm start has nothing to do at --steps 0
    with pytest.raises(ValueError, match="--steps 0 plays no update"):
        ppo.main(ppo.Args(game="neu", players=3, steps=0, out=str(tmp_path / "b")))

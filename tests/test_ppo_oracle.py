"""train.ppo_oracle: the oracle block, its dropout schedule, and that the policy that plays never reads it."""

from __future__ import annotations

import csv
import dataclasses
import random
import shlex

import numpy as np
import pytest
import torch

import envs
from agents import PPOAgent
from agents.checkpoint import CheckpointError
from agents.network import oracle_size
from train import ppo, ppo_oracle
from train.rollout import RolloutConfig
from train.rollout_vector import VectorRollout
from tests.helpers import cli_error_line, redealt_twin

pytest.importorskip("numba")


@pytest.fixture(autouse=True)
def few_scale_games():
    before, ppo.SCALE_GAMES = ppo.SCALE_GAMES, 4
    yield
    ppo.SCALE_GAMES = before


def tiny(tmp_path, run_name="run", **kw):
    base = dict(game="neu", players=3, steps=4000, rollout_steps=300, num_envs=4, workers=0, hidden=16, seed=3,
                oracle_full=0.25, oracle_fade=0.25, out=str(tmp_path / run_name))
    base.update(kw)
    return ppo_oracle.Args(**base)


def test_the_schedule_shows_all_then_fades_then_nothing():
    s = ppo_oracle.Schedule(1000, 0.3, 0.4)
    assert [s(x) for x in (0, 299, 300, 500, 699, 700, 999)] == pytest.approx([1, 1, 1, 0.5, 1 / 400, 0, 0])


def test_the_oracle_block_is_the_state_and_the_seat_each_entry_kept_with_the_share_asked():
    config = RolloutConfig("neu", 3, "global", 16, 4, 0, 300, 0.3, 0.3, 0.1, 1.0, oracle=True)
    collector = VectorRollout(config)
    venv = envs.vector_env("neu", 64, 3, seed=1)
    obs, _, seat = venv.reset()
    hide = np.random.default_rng(0)
    facts = envs.info("neu", 3)
    x = collector.with_oracle(obs, venv, seat, hide)
    assert x.shape == (64, facts.obs_size + oracle_size(facts)) == (64, collector.obs_size)
    np.testing.assert_array_equal(x[:, : facts.obs_size], obs)
    np.testing.assert_array_equal(x[:, facts.obs_size : facts.obs_size + facts.state_size], venv.state())
    np.testing.assert_array_equal(x[:, facts.obs_size + facts.state_size :].argmax(1), seat)
    collector.oracle_keep = 0.5
    half = collector.with_oracle(obs, venv, seat, hide)[:, facts.obs_size :]
    shown = x[:, facts.obs_size :] != 0
    kept = (half[shown] != 0).mean()
    assert 0.45 < kept < 0.55, kept  # each entry on its own: a share of about a half
    assert ((half == 0) | (half == x[:, facts.obs_size :])).all()
    collector.oracle_keep = 0.0
    np.testing.assert_array_equal(collector.with_oracle(obs, venv, seat, hide)[:, facts.obs_size :], 0)


def test_stripping_the_block_changes_no_logit_or_value_where_it_is_hidden():
    from agents.network import ActorCritic

    facts = envs.info("neu", 4)
    plain, block, extra = facts.obs_size, oracle_size(facts), facts.state_size + facts.num_players
    torch.manual_seed(0)
    net = ActorCritic(plain + block, facts.num_actions, plain + block + extra, 32)
    with torch.no_grad():  # normalisers that are not the identity, as a trained run's are
        for name in ("obs_mean", "obs_std", "critic_mean", "critic_std"):
            getattr(net, name).uniform_(0.5, 2.0)
        net.obs_mean[plain:] = 0.0
        net.critic_mean[plain : plain + block] = 0.0
    stripped = ppo_oracle.strip(net, "neu", 4)
    obs = torch.rand(50, plain) * 3
    rest = torch.rand(50, extra)
    mask = torch.rand(50, facts.num_actions) < 0.5
    mask[:, 0] = True
    hidden_block = torch.zeros(50, block)
    with torch.no_grad():
        want = net.masked_logits(torch.cat([obs, hidden_block], 1), mask)
        got = stripped.masked_logits(obs, mask)
        torch.testing.assert_close(got, want, rtol=0, atol=1e-5)
        torch.testing.assert_close(stripped.get_value(torch.cat([obs, rest], 1)),
                                   net.get_value(torch.cat([obs, hidden_block, rest], 1)), rtol=0, atol=1e-5)
        # ... and the block did matter to the network that read it
        shown = net.masked_logits(torch.cat([obs, torch.rand(50, block)], 1), mask)
        assert (shown - want).abs().max() > 1e-3


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("oracle")
    before, ppo.SCALE_GAMES = ppo.SCALE_GAMES, 4
    try:
        args = tiny(tmp, strength_every=3, strength_deals=4)
        net = ppo_oracle.main(args)
    finally:
        ppo.SCALE_GAMES = before
    return tmp / "run", args, net


def test_the_log_follows_the_schedule_and_final_pt_is_a_plain_policy(run):
    folder, args, net = run
    with open(folder / "progress.csv") as f:
        rows = list(csv.DictReader(f))
    keep = [float(r["oracle_keep"]) for r in rows]
    steps = [int(r["global_step"]) for r in rows]
    schedule = ppo_oracle.Schedule(args.steps, args.oracle_full, args.oracle_fade)
    assert keep == pytest.approx([schedule(s) for s in [0] + steps[:-1]])  # each rollout: the share at its start
    assert keep[0] == 1.0 and keep[-1] == 0.0 and any(0 < k < 1 for k in keep)
    played = PPOAgent.load(folder / "final.pt", "neu", 3)
    facts = envs.info("neu", 3)
    assert played.net.obs_mean.numel() == facts.obs_size  # the observation only
    assert "oracle" not in torch.load(folder / "final.pt", weights_only=True)
    assert played.info["made_by"]["command"].startswith("python -m train.ppo_oracle --game neu --players 3 ")
    # command.txt: the command that started the run (what final.pt says) and the one that continues it
    lines = (folder / "command.txt").read_text().splitlines()
    assert lines[1] == played.info["made_by"]["command"] and lines[3] == lines[1] + " --resume"
    assert ppo_oracle.parse_args(shlex.split(lines[1])[3:]) == args
    # strength.csv: the played policy (the network without the block) every 3 updates, on 4 deals
    with open(folder / "strength.csv") as f:
        strength = list(csv.DictReader(f))
    assert [int(r["update"]) for r in strength] == [u for u in range(1, len(rows) + 1) if u % 3 == 0]
    assert len(strength) >= 2 and all(r["deals"] == "4" and np.isfinite(float(r["edge_vs_heuristic"])) for r in strength)


def test_the_loader_refuses_a_network_that_reads_the_oracle(run):
    folder, _, _ = run
    with pytest.raises(CheckpointError, match="checkpoint.pt: the policy reads the oracle input .* cannot play"):
        PPOAgent.load(folder / "checkpoint.pt")
    ckpt = torch.load(folder / "checkpoint.pt", weights_only=True)
    assert ckpt["oracle"] is True and ckpt["model"]["obs_mean"].numel() > envs.info("neu", 3).obs_size


def test_a_resumed_run_keeps_its_oracle_and_a_plain_run_cannot_resume_it(run, tmp_path):
    folder, args, _ = run
    copy_dir = tmp_path / "copy"
    copy_dir.mkdir()
    for name in ("checkpoint.pt", "progress.csv"):
        (copy_dir / name).write_bytes((folder / name).read_bytes())
    more = dataclasses.replace(args, steps=args.steps + 600, resume=True, out=str(copy_dir))
    ppo_oracle.main(more)
    assert PPOAgent.load(copy_dir / "final.pt").net.obs_mean.numel() == envs.info("neu", 3).obs_size
    plain = ppo.Args(**{f.name: getattr(more, f.name) for f in dataclasses.fields(ppo.Args)})
    with pytest.raises(ValueError, match="trained with oracle True, not False"):
        ppo.main(plain)


def test_the_played_policy_moves_alike_on_every_redeal_and_the_oracle_network_would_not(run):
    """The redeal leak test on the run's final.pt: every card the seat cannot see is redealt, and its
    move stays. The same check on the training network with the block shown finds a change, so
    the check can fail."""
    folder, _, _ = run
    played = PPOAgent.load(folder / "final.pt", seed=0)
    ckpt = torch.load(folder / "checkpoint.pt", weights_only=True)
    from agents.checkpoint import build_network

    oracle_net = build_network({**ckpt, "oracle": True})
    e = envs.engine_class("neu")(3)
    e.reset(np.random.default_rng(11))
    rnd = random.Random(11)
    oracle_moved = checked = 0
    while checked < 40:
        if e.game_over:
            e.reset(np.random.default_rng(rnd.randrange(2**32)))
        legal = np.flatnonzero(e.legal_mask())
        seat = e.current_player
        if legal.size > 1:
            moves, oracle_moves = set(), set()
            for k in range(4):
                g = e if k == 0 else redealt_twin(e, seat, k)
                obs, mask = g.observe(seat), g.legal_mask()
                moves.add(played.act({"observation": obs, "action_mask": mask}))
                block = np.zeros(oracle_size(envs.info("neu", 3)), np.float32)
                block[: g.state().size], block[g.state().size + seat] = g.state(), 1.0
                with torch.no_grad():
                    x = torch.as_tensor(np.concatenate([obs, block]))[None]
                    logits = oracle_net.masked_logits(x, torch.as_tensor(mask.astype(bool))[None])
                oracle_moves.add(tuple(np.round(logits[0, legal].numpy(), 4)))
            assert len(moves) == 1
            oracle_moved += len(oracle_moves) > 1
            checked += 1
        e.step(int(rnd.choice(legal)))
    assert oracle_moved > 0


@pytest.mark.parametrize("argv, message", [
    (["--oracle-full", "0.6", "--oracle-fade", "0.4"], "--oracle-full + --oracle-fade must leave part of the run without the oracle"),
    (["--oracle-fade", "1.5"], "--oracle-fade must be a share of --steps from 0 to 1, got 1.5"),
    (["--engine", "aec"], "train.ppo_oracle plays on the batched engine"),
])
def test_bad_arguments_get_one_clear_line(argv, message, capsys):
    line = cli_error_line(ppo_oracle.run_cli, ["--game", "neu", "--steps", "1000"] + argv, capsys)
    assert message in line


def test_the_oracle_run_is_reproducible(tmp_path):
    a = ppo_oracle.main(tiny(tmp_path, "a", steps=1200))
    b = ppo_oracle.main(tiny(tmp_path, "b", steps=1200))
    assert all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values()))
    assert a.obs_mean.numel() == envs.info("neu", 3).obs_size  # what main returns is the network that plays


def test_a_distilled_start_fits_the_observation_and_leaves_the_block_unread_until_ppo(tmp_path):
    """--imitation-steps: the clone's block columns are 0 (it plays alike whatever the block holds),
    its update-0 checkpoint keeps the oracle input for --resume, and PPO then learns weights for it."""
    # The distillation's steps count in --steps (as every warm start's): the block is shown after it.
    args = tiny(tmp_path, "d", steps=8000, oracle_full=0.5, imitation_steps=3000, strength_every=100, strength_deals=4)
    ppo_oracle.main(args)
    facts = envs.info("neu", 3)
    block = slice(facts.obs_size, facts.obs_size + oracle_size(facts))
    ckpt = torch.load(tmp_path / "d" / "checkpoint.pt", weights_only=True)
    assert ckpt["oracle"] is True and ckpt["meta"]["update"] >= 0
    clone = ckpt["meta"]["pool"][0]  # the network right after the distillation
    assert (clone["actor.0.weight"][:, block] == 0).all() and (clone["critic.0.weight"][:, block] == 0).all()
    assert clone["actor.0.weight"][:, : facts.obs_size].abs().sum() > 0
    assert (ckpt["model"]["actor.0.weight"][:, block] != 0).any()  # PPO's update reads the block
    with open(tmp_path / "d" / "strength.csv") as f:
        assert [r["update"] for r in csv.DictReader(f)][0] == "0"  # the clone's own strength first
    lines = (tmp_path / "d" / "command.txt").read_text().splitlines()
    assert lines[1].startswith("python -m train.ppo_oracle ") and "--teacher-data" in lines[5]

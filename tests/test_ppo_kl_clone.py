"""The warm-start variant's --kl-clone (KL toward the frozen imitation clone) and --rules options."""

from __future__ import annotations

import csv

import numpy as np
import pytest
import torch

from agents.network import ActorCritic
from train import ppo, ppo_warmstart
from train.cli import parse_rules
from train.ppo_warmstart import ClonePenalty, legal_kl
from tests.helpers import cli_error_line


@pytest.fixture(autouse=True)
def few_scale_games():
    before, ppo.SCALE_GAMES = ppo.SCALE_GAMES, 4
    yield
    ppo.SCALE_GAMES = before


def net_and_batch(seed=0, rows=64, obs_size=12, actions=9):
    torch.manual_seed(seed)
    net = ActorCritic(obs_size, actions, obs_size, 16)
    rng = np.random.default_rng(seed)
    masks = rng.random((rows, actions)) < 0.5
    masks[np.arange(rows), rng.integers(actions, size=rows)] = True  # never all illegal
    return net, torch.randn(rows, obs_size), torch.from_numpy(masks)


def test_the_kl_term_is_zero_at_the_clone_and_grows_as_the_policy_moves():
    net, obs, masks = net_and_batch()
    penalty = ClonePenalty(2.0, 2.0)
    pool = [{k: v.clone() for k, v in net.state_dict().items()}]  # the first snapshot is the clone
    assert penalty(net, obs, masks, 1, 10, pool).item() == pytest.approx(0.0, abs=1e-6)
    noise = torch.randn(net.actor[-1].weight.shape, generator=torch.Generator().manual_seed(5))
    kls = []
    for step in (0.1, 0.3, 1.0):
        net.load_state_dict(pool[0])
        with torch.no_grad():
            net.actor[-1].weight.add_(step * noise)
        kls.append(penalty(net, obs, masks, 1, 10, pool).item() / 2.0)
    assert 0 < kls[0] < kls[1] < kls[2], kls
    # the clone stays frozen: the penalty has a gradient for the policy only
    net.load_state_dict(pool[0])
    with torch.no_grad():
        net.actor[-1].bias.add_(torch.linspace(-1, 1, net.actor[-1].bias.numel()))
    penalty(net, obs, masks, 1, 10, pool).backward()
    assert net.actor[-1].bias.grad.abs().sum() > 0
    assert all(p.grad is None for p in penalty.clone.parameters())


def test_kl_counts_legal_actions_only_and_matches_the_formula():
    logits_p, logits_q = torch.randn(5, 6), torch.randn(5, 6)
    mask = torch.tensor([[True, True, False, False, True, False]] * 5)
    masked = lambda x: torch.log_softmax(torch.where(mask, x, torch.full_like(x, -1e8)), -1)
    kl = legal_kl(masked(logits_p), masked(logits_q), mask)
    p, q = (torch.softmax(x[:, [0, 1, 4]], -1) for x in (logits_p, logits_q))
    assert torch.allclose(kl, (p * (p.log() - q.log())).sum(-1), atol=1e-6)
    # what the illegal logits say makes no difference
    other = logits_p.clone()
    other[:, 2] = 50.0
    assert torch.allclose(legal_kl(masked(other), masked(logits_q), mask), kl)


def test_the_weight_decays_linearly_from_start_to_final():
    penalty = ClonePenalty(1.0, 0.1)
    assert [round(penalty.weight(u, 10), 6) for u in (1, 10)] == [1.0, 0.1]
    steps = np.diff([penalty.weight(u, 10) for u in range(1, 11)])
    assert np.allclose(steps, -0.1)
    assert ClonePenalty(0.5, 0.0).weight(1, 1) == 0.5  # a single update keeps the starting weight


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--kl-clone", "nan", "--imitation-steps", "10"], "--kl-clone must be a finite number from 0 to"),
        (["--kl-clone", "inf", "--imitation-steps", "10"], "--kl-clone must be a finite number from 0 to"),
        (["--kl-clone=-1", "--imitation-steps", "10"], "--kl-clone must be a finite number from 0 to"),
        (["--kl-clone", "1", "--kl-clone-final=-0.1", "--imitation-steps", "10"], "--kl-clone-final must be a finite number"),
        (["--kl-clone", "0.1", "--kl-clone-final", "0.5", "--imitation-steps", "10"], "must be at most --kl-clone"),
        (["--kl-clone", "1"], "it needs --imitation-steps"),
        (["--rules", "steal_phase"], "--rules takes name=value pairs"),
        (["--rules", "a=1,a=2"], "--rules gives 'a' twice"),
        (["--game", "not_your_mas_jong", "--rules", "steal_phase=sometimes"], "bad rule option steal_phase='sometimes'"),
    ],
)
def test_bad_kl_and_rule_flags_get_one_clear_line(argv, message, capsys):
    assert message in cli_error_line(ppo_warmstart.parse_args, argv, capsys)


def test_parse_rules():
    assert parse_rules("") == {}
    assert parse_rules("steal_phase=eligible, n=3,x=0.5,flag=True") == {"steal_phase": "eligible", "n": 3, "x": 0.5, "flag": True}


def mj_run(tmp_path, name, **kw):
    base = dict(game="not_your_mas_jong", players=3, steps=800, rollout_steps=400, num_envs=2, workers=0, hidden=16,
                seed=3, imitation_steps=600, imitation_epochs=2, engine="aec", out=str(tmp_path / name) if tmp_path else "")
    base.update(kw)
    return ppo_warmstart.Args(**base)


def test_a_kl_run_logs_the_kl_and_the_weight_and_eligible_rules_skip_pass_only_decisions(tmp_path):
    ppo_warmstart.main(mj_run(tmp_path, "kl", kl_clone=1.0, kl_clone_final=0.2, rules="steal_phase=eligible"))
    with open(tmp_path / "kl" / "progress.csv") as f:
        rows = list(csv.DictReader(f))
    assert [float(r["kl_clone_weight"]) for r in rows] == pytest.approx([1.0, 0.2])
    assert all(np.isfinite(float(r["kl_clone"])) and float(r["kl_clone"]) >= 0 for r in rows)


def test_rules_reach_every_env_of_the_rollout():
    """steal_phase=eligible: the envs the workers play skip the pass-only decisions the default rules ask."""
    from train.rollout import RolloutConfig, RolloutWorkers

    forced = {}
    for rules in ("", "steal_phase=eligible"):
        args = mj_run(None, "unused", rules=rules, out="")
        workers = RolloutWorkers(RolloutConfig.of(args, ppo_warmstart.variant(args), 1.0), ppo_warmstart.TeacherWorker)
        phase = workers.local.envs[0].game.options["steal_phase"]
        net = ActorCritic(workers.local.obs_size, workers.local.num_actions, workers.local.critic_size, 16)
        batch = workers.collect(net.state_dict(), [], seed=(1, 0), num_steps=1500)
        forced[phase] = float((batch["masks"].sum(1) == 1).mean())
    assert forced["eligible"] < 0.5 * forced["every_player"], forced


def test_without_the_new_flags_a_run_is_unchanged(tmp_path):
    """--kl-clone 0 and no --rules: the same weights and log as before the options existed (no extra columns)."""
    a = ppo_warmstart.main(mj_run(tmp_path, "a"))
    with open(tmp_path / "a" / "progress.csv") as f:
        assert "kl_clone" not in f.readline()
    b = ppo_warmstart.main(mj_run(tmp_path, "b", kl_clone=0.0, kl_clone_final=0.0, rules=""))
    assert all(torch.equal(a.state_dict()[k], b.state_dict()[k]) for k in a.state_dict())

"""PPO: action masking, turn-based reward attribution, GAE, reproducible tiny runs, checkpoints, CLI."""

from __future__ import annotations

import copy

import dataclasses
import json
import os
import random
import shlex
from types import SimpleNamespace
from pathlib import Path

import numpy as np
import pytest
import torch

import envs
from agents import PPOAgent, make_agent
from agents.network import MASKED_LOGIT, ActorCritic, sample
from agents.ppo import CHECKPOINT_DIR, CheckpointError
from train import ppo, ppo_warmstart
from train.ppo import Args, Plan, gae, main, parse_args
from train.rollout import Buffer, Table
from tests.helpers import cli_error_line, heuristic_decisions


# ---------------------------------------------------------------- masking
def random_masks(rng, rows: int, actions: int) -> torch.Tensor:
    masks = rng.random((rows, actions)) < 0.3
    masks[np.arange(rows), rng.integers(actions, size=rows)] = True  # never all zeros
    return torch.from_numpy(masks)


def test_no_illegal_action_in_a_million_draws():
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    net = ActorCritic(10, 20, 10, hidden=16)
    with torch.no_grad():
        net.actor[-1].weight.mul_(1000)  # make illegal actions very attractive before masking
    masks = random_masks(rng, 1000, 20)
    logits = net.masked_logits(torch.randn(1000, 10), masks)
    draws = torch.distributions.Categorical(logits=logits).sample((1000,))  # 10^6 draws, one call
    assert masks.gather(1, draws.T).all()
    # the sampler the rollouts use, on 10^6 rows at once
    probs = torch.softmax(logits, -1).repeat(1000, 1)
    picked = sample(probs, torch.Generator().manual_seed(0))
    assert masks.repeat(1000, 1).gather(1, picked[:, None]).all()


def test_masked_log_probs_and_entropy_over_legal_actions():
    torch.manual_seed(1)
    rng = np.random.default_rng(1)
    net = ActorCritic(6, 8, 6, hidden=16)
    obs, masks = torch.randn(64, 6), random_masks(rng, 64, 8)
    logp = torch.log_softmax(net.masked_logits(obs, masks), -1)
    assert (logp[~masks] <= -1e6).all()
    assert torch.isfinite(logp).all()  # a large constant, not -inf: no NaN anywhere
    assert (net.masked_logits(obs, masks)[~masks] == MASKED_LOGIT).all()
    _, _, entropy, _ = net.get_action_and_value(obs, masks, obs, action=torch.zeros(64, dtype=torch.long))
    raw = net.actor((obs - net.obs_mean) / net.obs_std)
    for i in range(64):
        legal_only = torch.distributions.Categorical(logits=raw[i][masks[i]])
        assert entropy[i].item() == pytest.approx(legal_only.entropy().item(), abs=1e-5)


# ---------------------------------------------------------------- turn-based rewards
class ScriptedEnv:
    """A tiny AEC stand-in: each step the script says who acts next, the rewards, who is out."""

    def __init__(self, script):
        self.possible_agents = ["player_0", "player_1", "player_2"]
        self.script = script
        self.final = (1, 3, 2)  # final ranks per seat, as in the envs' infos

    def reset(self, seed=None):
        self.agents = list(self.possible_agents)
        self.terminations = dict.fromkeys(self.agents, False)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self.infos = {a: {} for a in self.agents}
        self.agent_selection = "player_0"
        self.i = 0

    def step(self, action):
        for a in self.rewards:
            self.rewards[a] = 0.0
        if action is None:  # dead step of a terminated agent
            self.agents.remove(self.agent_selection)
            del self.terminations[self.agent_selection], self.rewards[self.agent_selection]
            self.agent_selection = self.script[self.i - 1]["next"]
            return
        step = self.script[self.i]
        self.i += 1
        self.rewards.update(step.get("rewards", {}))
        for a in step.get("out", []):
            self.terminations[a] = True
        if step["next"] is None:  # game over
            for a in self.agents:
                self.terminations[a] = True
            self.infos = {a: {"final_ranks": self.final} for a in self.agents}
        live = [a for a in self.agents if self.terminations[a]]
        self.agent_selection = live[0] if live else step["next"]


def play_script(win_bonus: float = 0.0):
    # player_0 and player_1 are learner seats; player_2 is an opponent.
    script = [
        {"next": "player_1"},  # p0 acts (transition A)
        {"next": "player_2", "rewards": {"player_0": -1.0, "player_1": 0.5, "player_2": 0.5}},  # p1 acts (B): round lost by p0
        {"next": "player_0", "rewards": {"player_1": -2.0, "player_2": 1.0, "player_0": 1.0}, "out": ["player_1"]},  # p2 knocks p1 out
        {"next": None, "rewards": {"player_0": 3.0, "player_2": -3.0}},  # p0 acts again (C), game over
    ]
    env = ScriptedEnv(script)
    table, buf = Table(env, win_bonus), Buffer()
    table.start(0, ["learner", "learner", "random"], "test", {})
    transitions = {}
    while table.advance(buf):
        agent = env.agent_selection
        seat = env.possible_agents.index(agent)
        if table.controllers[seat] == "learner":
            k = buf.add(np.zeros(1), np.ones(1, bool), None, 0, 0.0, 0.0)
            table.decided(seat, k, buf)
            transitions.setdefault(agent, []).append(k)
        env.step(0)
        table.add_rewards(buf, scale=1.0)
    return table, buf, transitions


def test_rewards_reach_the_right_seat_whoever_acts():
    table, buf, transitions = play_script()
    assert transitions == {"player_0": [0, 2], "player_1": [1]}
    # A collects the round loss that came on p1's turn, then +1 on p2's turn; C collects the end.
    assert buf.rewards == [-1.0 + 1.0, 0.5 - 2.0, 3.0]
    assert buf.next_index[0] == 2 and buf.dones == [False, True, True]  # p1's stream ends at its elimination
    assert table.returns == [3.0, -1.5, -1.5]
    assert table.final_ranks() == [1, 3, 2]


def test_win_bonus_goes_to_the_first_place_seat_only():
    _, buf, _ = play_script(win_bonus=2.5)
    assert buf.rewards == [0.0, -1.5, 3.0 + 2.5]  # p0 finished first; p1's closed stream is untouched
    env = ScriptedEnv([{"next": "player_1"}, {"next": None, "rewards": {"player_0": 1.0, "player_1": 1.0}}])
    env.final = (1, 1, 3)  # a tie for first shares the bonus
    table, buf = Table(env, 4.0), Buffer()
    table.start(0, ["learner", "learner", "random"], "tie", {})
    while table.advance(buf):
        seat = env.possible_agents.index(env.agent_selection)
        table.decided(seat, buf.add(np.zeros(1), np.ones(1, bool), None, 0, 0.0, 0.0), buf)
        env.step(0)
        table.add_rewards(buf, scale=1.0)
    assert buf.rewards == [1.0 + 2.0, 1.0 + 2.0]


def test_gae_follows_each_seat_stream():
    # two seats interleaved: seat a = [0, 2, 3], seat b = [1, 4]
    rewards = np.array([0.0, 1.0, 0.5, 2.0, -1.0], np.float32)
    values = np.array([0.1, 0.2, 0.3, 0.4, 0.5], np.float32)
    dones = np.array([False, False, False, True, True])
    nxt = np.array([2, 4, 3, -1, -1])
    adv, ret = gae(rewards, values, dones, nxt, gamma=0.9, lam=0.8)

    def one(r, v):
        a, out = 0.0, []
        for t in reversed(range(len(r))):
            nv = v[t + 1] if t + 1 < len(r) else 0.0
            a = r[t] + 0.9 * nv - v[t] + 0.9 * 0.8 * a
            out.append(a)
        return out[::-1]

    np.testing.assert_allclose(adv[[0, 2, 3]], one(rewards[[0, 2, 3]], values[[0, 2, 3]]), rtol=1e-6)
    np.testing.assert_allclose(adv[[1, 4]], one(rewards[[1, 4]], values[[1, 4]]), rtol=1e-6)
    np.testing.assert_allclose(ret, adv + values)


# ---------------------------------------------------------------- tiny training runs
@pytest.fixture(scope="module", autouse=True)
def few_scale_games():
    """Tiny runs measure the input scales on 4 random games instead of 40 (it only sets the normalisers)."""
    before, ppo.SCALE_GAMES = ppo.SCALE_GAMES, 4
    yield
    ppo.SCALE_GAMES = before


WARM_START = {"features", "hint", "win_bonus", "imitation_steps", "imitation_epochs", "imitation_smoothing"}


def tiny(tmp_path, run_name="run", **kw):
    base = dict(game="neu", players=3, steps=600, rollout_steps=300, num_envs=2, workers=0, hidden=16, seed=3,
                out=str(tmp_path / run_name))
    base.update(kw)
    return (ppo_warmstart.Args if WARM_START & set(kw) else Args)(**base)


def train(args):
    """The variant's main for warm-start arguments, the core's otherwise."""
    return ppo_warmstart.main(args) if isinstance(args, ppo_warmstart.Args) else main(args)


def weights(net):
    return {k: v.clone() for k, v in net.state_dict().items()}


@pytest.mark.parametrize("engine", ["aec", "auto"])
def test_same_seed_same_weights(tmp_path, capsys, engine):
    a = weights(train(tiny(tmp_path, run_name="a", steps=700, engine=engine)))
    printed = capsys.readouterr().out.splitlines()
    b = weights(train(tiny(tmp_path, run_name="b", steps=700, engine=engine)))
    c = weights(train(tiny(tmp_path, run_name="c", seed=4, steps=700, engine=engine)))
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert not all(torch.equal(a[k], c[k]) for k in a)
    rows = (tmp_path / "a" / "progress.csv").read_text().splitlines()
    assert len(rows) >= 2 and "winrate_vs_heuristic" in rows[0] and "steps_per_second" in rows[0]
    # The run says where it plays, where it writes, how --steps was rounded and what the progress labels mean.
    folder = str(tmp_path / "a")
    assert printed[0] == f"train.ppo: neu, 3 players, run folder {folder}"
    if engine == "aec":
        assert len(rows) == 3
        assert printed[1] == "  rollouts: AEC tables, 2 per worker, in this process"
        assert "--steps 700 is 2 update(s) of --rollout-steps 300 = 600 env steps (rounded down to whole rollouts" in printed[2]
    else:
        assert printed[1] == "  rollouts: the batched engine (envs.vector_env), 2 tables in this process"
        assert "--steps 700: each update plays whole games on every table" in printed[2]
    assert "progress.csv" in printed[3] and "checkpoint.pt" in printed[3]
    tensorboard = f"tensorboard --logdir {folder}" in printed[3]
    assert tensorboard or "TensorBoard: skipped, the tensorboard package is not installed (pip install tensorboard)" in printed[3]
    assert "vs_h = " in printed[4]
    assert printed[-1].startswith("train.ppo: done, ")
    assert printed[-1].endswith(f"{folder} holds progress.csv, checkpoint.pt, final.pt" + (", TensorBoard events" if tensorboard else ""))


def test_global_critic_resume_and_export(tmp_path):
    export = tmp_path / "neu_3p.pt"
    args = tiny(tmp_path, run_name="g", critic="global", steps=300, export=str(export), engine="aec")
    train(args)
    resumed = train(dataclasses.replace(args, steps=600, resume=True))  # one more update from the checkpoint
    lines = (tmp_path / "g" / "progress.csv").read_text().splitlines()
    assert [line.split(",")[0] for line in lines[1:]] == ["1", "2"]
    assert resumed.critic_mean.numel() > resumed.obs_mean.numel()  # the critic sees env.state() too
    sidecar = json.loads(export.with_suffix(".json").read_text())
    assert {"reproduce", "env_steps", "wall_seconds", "machine"} <= set(sidecar)
    bot = PPOAgent.load(export, seed=0)
    assert bot.info["critic"] == "global"
    # The header states the command (flags that differ from the defaults; it parses back to the
    # run's arguments), no teacher, and the env steps played.
    made_by = bot.info["made_by"]
    assert made_by["teacher"] == "" and made_by["steps"] == sidecar["env_steps"] > 300
    assert made_by["command"].startswith("python -m train.ppo --game neu --players 3 --steps 600 ")
    assert ppo.parse_args(shlex.split(made_by["command"])[3:]) == dataclasses.replace(args, steps=600, resume=False)
    assert torch.load(tmp_path / "g" / "checkpoint.pt", weights_only=True)["made_by"]["steps"] == made_by["steps"]
    play_one_game(bot, 3)


def test_worker_processes(tmp_path):
    net = train(tiny(tmp_path, run_name="w", workers=2, steps=300, engine="aec"))
    assert all(torch.isfinite(v).all() for v in net.state_dict().values())


def agreement_with_heuristic(net, game: str, n: int, seed: int, games: int = 4) -> tuple[float, float]:
    """Share of a heuristic's decisions (in fresh games, not the training data) that the net's top
    action matches, and the net's mean entropy over legal actions on those decisions."""
    env = envs.make_raw(game, num_players=n)
    teacher = make_agent("heuristic", game, n, seed=seed)
    same = total = 0
    entropy = 0.0
    for g in range(games):
        env.reset(seed=seed + g)
        for agent in env.agent_iter():
            o, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            a = teacher.act(o)
            mask = torch.as_tensor(o["action_mask"].astype(bool))[None]
            with torch.no_grad():
                mine = net.masked_logits(torch.as_tensor(o["observation"])[None], mask)
            p = torch.softmax(mine, -1)[mask]
            entropy -= float((p * p.clamp_min(1e-12).log()).sum())
            same += int(mine.argmax().item() == a)
            total += 1
            env.step(a)
    return same / total, entropy / total


def test_imitation_warm_start_copies_the_heuristic(tmp_path, capsys):
    before = train(tiny(tmp_path, run_name="none", game="deadfall", players=3, steps=1, rollout_steps=1, hidden=64))
    after = train(tiny(tmp_path, run_name="bc", game="deadfall", players=3, steps=1, rollout_steps=1, hidden=64,
                      imitation_steps=6000, imitation_epochs=20, learning_rate=3e-3))
    assert "imitation:" in capsys.readouterr().out  # the agreement on the training data is reported
    (untrained, _), (cloned, entropy) = (agreement_with_heuristic(net, "deadfall", 3, seed=900) for net in (before, after))
    assert cloned > 0.75 and cloned > untrained + 0.2, (untrained, cloned)
    # label smoothing (default 0.1) keeps some exploration; without it the copy of a deterministic heuristic collapses
    assert entropy > 0.1, entropy
    exact = train(tiny(tmp_path, run_name="bc0", game="deadfall", players=3, steps=1, rollout_steps=1, hidden=64,
                      imitation_steps=6000, imitation_epochs=20, learning_rate=3e-3, imitation_smoothing=0.0))
    assert agreement_with_heuristic(exact, "deadfall", 3, seed=900)[1] < entropy


@pytest.mark.parametrize("game,players", [("neu", 4), ("not_for_me", 3)])
def test_the_teachers_games_on_the_batched_engine_record_the_heuristics_moves(game, players):
    from agents.network import ActorCritic
    from train.ppo import Variant
    from train.rollout import RolloutConfig

    args = Args(game=game, players=players, num_envs=4, workers=0, hidden=16)
    teacher = ppo_warmstart.TeacherVector(RolloutConfig.of(args, Variant(), 1.0))
    net = ActorCritic(teacher.obs_size, teacher.num_actions, teacher.critic_size, 16)
    batch = teacher.collect(net.state_dict(), [], seed=(1, 0), num_steps=400)
    heuristic = make_agent("heuristic", game, players, seed=0)
    views = [{"observation": o, "action_mask": m.astype(np.int8)} for o, m in zip(batch["obs"], batch["masks"])]
    assert len(views) == batch["env_steps"] >= 400  # every seat is the teacher: every decision is recorded
    assert batch["actions"].tolist() == [heuristic.act(v) for v in views]
    assert batch["dones"].sum() == len(batch["episodes"]["self"])  # one stream per seat and game, each ending


def test_hint_is_the_heuristics_move_and_a_hinted_policy_learns_to_follow_it(tmp_path):
    from agents.network import policy_input

    env = envs.make_raw("deadfall", num_players=3)
    to_input = policy_input("deadfall", 3, features=False, hint=True)
    decisions = 0
    for _, o, a in heuristic_decisions(env, seed=4, max_iter=300):
        x, obs = to_input(o["observation"], o["action_mask"]), o["observation"]
        assert np.array_equal(x[: obs.size], obs)
        assert np.flatnonzero(x[obs.size :]).tolist() == [a] and x[obs.size + a] == 1.0
        decisions += 1
    assert decisions > 100

    export = tmp_path / "hint.pt"
    train(tiny(tmp_path, run_name="h", game="deadfall", players=3, steps=1, rollout_steps=1, hidden=64, hint=True,
              imitation_steps=3000, imitation_epochs=20, learning_rate=3e-3, export=str(export)))
    bot = PPOAgent.load(export, seed=0)
    size = env.game.obs_size + env.game.num_actions
    assert bot.net.obs_mean.numel() == size and torch.load(export, weights_only=True)["hint"] is True
    # With the heuristic's move in its input, a short warm start copies it almost exactly
    # (without it, twice this budget is held only to 0.75 in test_imitation_warm_start_copies_the_heuristic).
    same = total = 0
    for seed in range(900, 903):
        for _, o, a in heuristic_decisions(env, seed):
            same += int(bot.act(o) == a)
            total += 1
    assert same / total > 0.93, same / total


def test_mas_jong_features_agree_with_shanten_and_the_heuristic():
    from agents.features import featurizer
    from agents.heuristic.hand_distance import shanten
    from envs.not_your_mas_jong import NUM_TYPES, OBS_HAND, OBS_PHASE

    env = envs.make_raw("not_your_mas_jong", num_players=4)
    to_input = featurizer("not_your_mas_jong", 4)
    discards = steals = 0
    for agent, o, a in heuristic_decisions(env, seed=11):
        obs = o["observation"]
        x = to_input(obs, o["action_mask"])
        f = x[obs.size :]
        assert np.array_equal(x[: obs.size], obs) and f.shape == (81,)
        hand = obs[OBS_HAND : OBS_HAND + NUM_TYPES].astype(int)
        locked = len(env.unwrapped.game.locked_sets[env.possible_agents.index(agent)])  # from the engine, not the obs
        if obs[OBS_PHASE] == 0:
            discards += 1
            for k in np.flatnonzero(hand):
                after = hand.copy()
                after[k] -= 1
                assert f[1 + k] == shanten(after, locked)
            held = np.flatnonzero(hand)
            assert f[1 + a] == f[1 + held].min()  # the heuristic throws a card that keeps the hand closest
            closest = held[f[1 + held] == f[1 + held].min()]
            assert f[56 + a] == f[56 + closest].max()  # ... and, among those, keeps the most live draws
            assert np.all(f[56:81][np.setdiff1d(np.arange(NUM_TYPES), closest)] == 0)
            assert np.all(f[1:26][hand == 0] == 9)
        else:
            steals += 1
            assert f[30] == float(o["action_mask"][26] == 1)  # "completes my hand" is exactly when steal-win is legal
    assert discards > 50 and steals > 0


def test_neu_features_are_the_heuristics_chances_for_each_legal_move():
    from agents.features import featurizer
    from agents.heuristic import neu as heuristic_neu
    from envs.neu import A_SHOT, NUMBER_VALUES, OBS_SEATS, SEAT_BLOCK

    env = envs.make_raw("neu", num_players=4)
    to_input = featurizer("neu", 4)
    decisions = 0
    for _, o, a in heuristic_decisions(env, seed=21, max_iter=400):
        obs, mask = o["observation"], o["action_mask"]
        x = to_input(obs, mask)
        assert np.array_equal(x[: obs.size], obs)
        f = x[obs.size :].reshape(len(mask), 3)
        assert np.all(f[mask == 0] == 0) and np.all((0 <= f) & (f <= 1))
        # The heuristic's own score, rebuilt from the features, picks the heuristic's move.
        seats = obs[OBS_SEATS:].reshape(4, SEAT_BLOCK)
        score = {}
        for b in np.flatnonzero(mask):
            attack, now, future = (float(v) for v in f[b])
            score[b] = heuristic_neu.ATTACK * attack - now - heuristic_neu.FUTURE_RISK * future
            score[b] += 1e-3 * float(seats[b - A_SHOT + 1, 0]) if b >= A_SHOT else 0.0
            score[b] += 1e-4 * NUMBER_VALUES[b] if b <= 10 else 0.0
        assert score[a] >= max(score.values()) - 1e-6
        decisions += 1
    assert decisions > 100


def test_features_run_end_to_end_and_only_where_a_game_has_them(tmp_path):
    export = tmp_path / "mj.pt"
    train(tiny(tmp_path, run_name="f", game="not_your_mas_jong", players=3, features=True, export=str(export)))
    bot = PPOAgent.load(export, seed=0)
    assert bot.net.obs_mean.numel() == envs.make_raw("not_your_mas_jong", num_players=3).game.obs_size + 81
    play_one_game(bot, 3, game="not_your_mas_jong")
    with pytest.raises(ValueError, match="no hand-made features for 'deadfall'"):
        train(tiny(tmp_path, run_name="nf", game="deadfall", features=True))


def play_one_game(bot, n, game="neu"):
    env = envs.make(game, num_players=n)
    env.reset(seed=5)
    others = [make_agent("random", game, n, seed=i) for i in range(n)]
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        seat = env.possible_agents.index(agent)
        action = bot.act(obs) if seat == 0 else others[seat].act(obs)
        assert obs["action_mask"][action]
        env.step(action)
        assert env.infos.get(agent, {"illegal_move": -1})["illegal_move"] == -1


# ---------------------------------------------------------------- checkpoints
@pytest.fixture(scope="module")
def ckpt(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ckpt")
    path = tmp / "neu_3p.pt"
    train(tiny(tmp, run_name="c", steps=300, export=str(path)))
    return path


def test_bad_checkpoints_name_the_file_and_the_mismatch(ckpt, tmp_path):
    garbage = tmp_path / "garbage.pt"
    garbage.write_bytes(b"not a checkpoint at all" * 10)
    with pytest.raises(CheckpointError, match="garbage.pt"):
        PPOAgent.load(garbage)
    truncated = tmp_path / "truncated.pt"
    truncated.write_bytes(ckpt.read_bytes()[: ckpt.stat().st_size // 2])
    with pytest.raises(CheckpointError, match="truncated.pt"):
        PPOAgent.load(truncated)
    with pytest.raises(CheckpointError, match="trained for game 'neu', not 'deadfall'"):
        PPOAgent.load(ckpt, game="deadfall")
    with pytest.raises(CheckpointError, match="trained for 3 players, not 4"):
        PPOAgent.load(ckpt, num_players=4)
    data = torch.load(ckpt, weights_only=True)
    data["obs_size"] += 1
    wrong = tmp_path / "wrong_obs.pt"
    torch.save(data, wrong)
    with pytest.raises(CheckpointError, match=r"wrong_obs.pt: obs size 57 in the checkpoint.*has 56"):
        PPOAgent.load(wrong)
    data = torch.load(ckpt, weights_only=True)
    data["model"]["actor.0.weight"] = torch.zeros(3, 3)
    torch.save(data, wrong)
    with pytest.raises(CheckpointError, match="do not fit"):
        PPOAgent.load(wrong)
    with pytest.raises(FileNotFoundError, match="no PPO checkpoint for neu with 7 players"):
        PPOAgent.for_game("neu", 7)
    assert PPOAgent.for_game("neu", 3, checkpoint=ckpt).num_players == 3


def test_agent_sampling_is_legal_and_seeded(ckpt):
    a = PPOAgent.load(ckpt, seed=1, greedy=False)
    b = PPOAgent.load(ckpt, seed=1, greedy=False)
    env = envs.make("neu", num_players=3)
    env.reset(seed=0)
    obs = env.last()[0]
    assert [a.act(obs) for _ in range(20)] == [b.act(obs) for _ in range(20)]
    play_one_game(a, 3)


@pytest.mark.parametrize("path", sorted(CHECKPOINT_DIR.glob("*.pt")), ids=lambda p: p.name)
def test_shipped_checkpoints(path: Path):
    assert path.stat().st_size < 5 * 2**20
    sidecar = json.loads(path.with_suffix(".json").read_text())
    assert sidecar["reproduce"].startswith(("python -m train.ppo", "python -m train.expert_iteration "))
    bot = PPOAgent.load(path, seed=0)
    # Its header says how it was made: the sidecar's command and steps, and the heuristic as the
    # teacher exactly when the run imitated it first; for expert iteration, the round that made it
    # (its own train.ppo_search command) and the search that taught it.
    made_by = bot.info["made_by"]
    assert made_by == sidecar["made_by"] and made_by["steps"] == sidecar["env_steps"]
    if sidecar["reproduce"].startswith("python -m train.expert_iteration "):
        assert made_by["command"].startswith("python -m train.ppo_search ") and made_by["teacher"] == sidecar["args"]["teacher"]
    elif sidecar["reproduce"].startswith("python -m train.ppo_search "):  # a teacher's decisions read from a file in the repository
        assert made_by["command"] == sidecar["reproduce"] and (Path(__file__).parents[1] / sidecar["args"]["teacher_data"]).is_file()
        assert made_by["teacher"] == f"{sidecar['args']['teacher']} (decisions read from {sidecar['args']['teacher_data']})"
    else:
        assert made_by["command"] == sidecar["reproduce"]
        assert made_by["teacher"] == ("heuristic" if sidecar["args"].get("imitation_steps") else "")
    play_one_game(bot, bot.num_players, bot.game)


# ---------------------------------------------------------------- command line
@pytest.mark.parametrize(
    "argv, message",
    [
        (["--game", "chess"], "invalid choice: 'chess'"),
        (["--players", "99"], "num_players must be from 2 to 7"),
        (["--critic", "oracle"], "invalid choice: 'oracle'"),
        (["--steps", "0"], "--steps 0 plays no update: it is for a run that only distils a teacher"),
        (["--steps", "-1"], "--steps must be a whole number from 0 to"),
        (["--imitation-steps", "-5"], "--imitation-steps must be a whole number from 0 to 2,000,000"),
        (["--imitation-smoothing", "1.5"], "--imitation-smoothing must be in [0, 1)"),
        (["--imitation-smoothing", "nan"], "--imitation-smoothing must be in [0, 1)"),
        (["--self-play", "0.9", "--vs-random", "0.5"], "sum to at most 1"),
        (["--win-bonus", "-1"], "--win-bonus must be a finite number, 0 or more"),
        (["--win-bonus", "inf"], "--win-bonus must be a finite number, 0 or more"),
        # the older spellings are gone: one spelling per flag
        (["--run-name", "x"], "unrecognized arguments: --run-name x"),
        (["--run-dir", "runs"], "unrecognized arguments: --run-dir runs"),
        (["--num-workers", "1"], "unrecognized arguments: --num-workers 1"),
        # every number is finite and in range, every count bounded, before anything runs
        (["--max-grad-norm", "-1"], "--max-grad-norm must be a finite number in (0,"),
        (["--clip-coef", "nan"], "--clip-coef must be a finite number in (0,"),
        (["--vs-random", "nan"], "--vs-random must be a finite number in [0, 1]"),
        (["--self-play", "-0.1"], "--self-play must be a finite number in [0, 1]"),
        (["--learning-rate", "inf"], "--learning-rate must be a finite number in (0, 1]"),
        (["--gamma", "0"], "--gamma must be a finite number in (0, 1]"),
        (["--gae-lambda", "1.5"], "--gae-lambda must be a finite number in [0, 1]"),
        (["--ent-coef=-inf"], "--ent-coef must be a finite number in [0,"),
        (["--vf-coef", "nan"], "--vf-coef must be a finite number in [0,"),
        (["--seed", "-1"], "--seed must be a whole number from 0 to"),
        (["--rollout-steps", "1000000000000"], "--rollout-steps must be a whole number from 1 to 1,000,000"),
        (["--rollout-steps", "1e12"], "--rollout-steps must be a whole number from 1 to 1,000,000"),
        (["--steps", "1e15"], "--steps must be a whole number from 0 to"),
        (["--num-envs", "100000"], "--num-envs must be a whole number from 1 to 4,096"),
        (["--workers", "-1"], "--workers must be a whole number from 0 to 64"),
        (["--workers", "1000"], "--workers must be a whole number from 0 to 64"),
        (["--hidden", "20000"], "--hidden must be a whole number from 1 to 4,096"),
        (["--update-epochs", "0"], "--update-epochs must be a whole number from 1 to 100"),
        (["--steps", "2.5"], "invalid integer value: '2.5'"),
        (["--resume", "--overwrite"], "give one of them"),
        (["--export", "nowhere/x.pt"], "--export: folder 'nowhere' does not exist"),
        (["--export", "agents/checkpoints"], "--export names the policy file to write, ending in .pt"),
    ],
)
def test_bad_arguments_get_one_clear_line(argv, message, capsys):
    assert message in cli_error_line(ppo_warmstart.parse_args, argv, capsys)


def test_counts_take_underscores_and_exponents():
    assert parse_args(["--steps", "2_000_000"]).steps == 2_000_000
    assert parse_args(["--steps", "2e6", "--rollout-steps", "16_384"]).steps == 2_000_000


def test_help_shows_defaults_rounding_and_progress_labels():
    text = " ".join(ppo.build_parser().format_help().split())
    assert "--steps STEPS env agent-steps (all seats) to play, rounded down to whole rollouts" in text
    assert "(default: 2000000)" in text and "(default: 0.995)" in text
    for label in ("sps =", "ret =", "vs_h =", "pool ="):
        assert label in text
    assert len([f for f in dataclasses.fields(Args)]) <= 26
    assert "--imitation-steps" not in text and "--imitation-steps" in ppo.build_parser(ppo_warmstart.Args).format_help()


def test_the_seed_defaults_to_0_as_in_every_other_command():
    assert parse_args([]).seed == 0 and ppo.run_folder(parse_args([])) == os.path.join("runs", "neu_4p_plain_s0")


# ---------------------------------------------------------------- run folders
def test_an_existing_run_is_kept_unless_resumed_or_overwritten(tmp_path, capsys):
    args = tiny(tmp_path, steps=300)
    train(args)
    before = {p.name: p.read_bytes() for p in (tmp_path / "run").iterdir()}
    with pytest.raises(ValueError, match=r"already holds a run \(progress.csv, checkpoint.pt, final.pt\); add --resume"):
        train(args)
    assert {p.name: p.read_bytes() for p in (tmp_path / "run").iterdir()} == before  # nothing touched
    argv = ["--game", "neu", "--players", "3", "--out", str(tmp_path / "run"), "--workers", "0"]
    assert "already holds a run" in cli_error_line(ppo.run_cli, argv, capsys)
    train(dataclasses.replace(args, overwrite=True, seed=4))  # replaced on request
    assert (tmp_path / "run" / "final.pt").read_bytes() != before["final.pt"]
    (tmp_path / "file").write_text("x")
    with pytest.raises(ValueError, match="is a file, not a run folder"):
        train(tiny(tmp_path, run_name="file"))


def test_a_lock_keeps_a_second_trainer_out_and_a_stale_one_is_taken_over(tmp_path, capsys):
    import subprocess
    import sys

    folder = tmp_path / "run"
    folder.mkdir()
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        (folder / "trainer.lock").write_text(str(alive.pid))
        with pytest.raises(ValueError, match=f"another trainer \\(pid {alive.pid}\\) is using"):
            train(tiny(tmp_path, steps=300))
        assert sorted(p.name for p in folder.iterdir()) == ["trainer.lock"]  # nothing written
    finally:
        alive.kill()
        alive.wait()
    # the same pid, now dead (killed): the lock is stale, the run goes ahead and says so
    train(tiny(tmp_path, steps=300))
    assert f"taking over a stale trainer.lock (pid {alive.pid} is no longer running)" in capsys.readouterr().out
    assert not (folder / "trainer.lock").exists()  # released at the end


def test_resume_cuts_the_log_back_to_the_checkpoint_and_refuses_another_network(tmp_path):
    args = tiny(tmp_path, steps=300, engine="aec")
    train(args)
    log = tmp_path / "run" / "progress.csv"
    rows = log.read_text().splitlines()
    # a trainer killed after logging update 2 but before its checkpoint leaves a row the checkpoint does not know
    log.write_text("\n".join(rows + [rows[-1].replace("1,", "2,", 1)]) + "\n")
    train(dataclasses.replace(args, steps=600, resume=True))
    assert [line.split(",")[0] for line in log.read_text().splitlines()[1:]] == ["1", "2"]
    for change, message in ((dict(hidden=32), "trained with hidden 16, not 32"),
                            (dict(critic="global"), "trained with critic 'plain', not 'global'")):
        with pytest.raises(ValueError, match=message):
            train(dataclasses.replace(args, resume=True, steps=1200, **change))
    with pytest.raises(ValueError, match="trained with features False, not True"):
        train(tiny(tmp_path, game="neu", features=True, resume=True, steps=1200))
    with pytest.raises(ValueError, match="no checkpoint.pt in .* to continue from"):
        train(tiny(tmp_path, run_name="never", resume=True))
    assert not (tmp_path / "never").exists()


def test_resume_refuses_an_exported_policy(tmp_path, ckpt):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "checkpoint.pt").write_bytes(ckpt.read_bytes())
    with pytest.raises(ValueError, match="checkpoint.pt is an exported policy \\(no optimizer state\\)"):
        train(tiny(tmp_path, resume=True))


def test_export_folder_is_checked_before_training(tmp_path, capsys):
    argv = ["--game", "neu", "--players", "3", "--out", str(tmp_path / "run"), "--export", str(tmp_path / "no" / "x.pt")]
    assert "--export: folder" in cli_error_line(ppo.run_cli, argv, capsys)
    assert not (tmp_path / "run").exists()


# ---------------------------------------------------------------- hostile checkpoints
def edited(ckpt, tmp_path, name, edit):
    data = torch.load(ckpt, weights_only=True)
    edit(data)
    path = tmp_path / name
    torch.save(data, path)
    return path


@pytest.mark.parametrize(
    "name, edit, message",
    [
        ("huge.pt", lambda d: d.update(hidden=20000), r"huge.pt: field 'hidden' must be a whole number from 1 to 4096, got 20000"),
        ("negative.pt", lambda d: d.update(hidden=-1), r"negative.pt: field 'hidden' must be a whole number"),
        ("wide.pt", lambda d: d.update(hidden=32), r"wide.pt: weights do not fit the network: 'model.actor.0.weight' has shape \(16, 56\)"),
        ("listgame.pt", lambda d: d.update(game=["neu"]), r"listgame.pt: field 'game' must be one of .*got \['neu'\]"),
        ("players.pt", lambda d: d.update(num_players="3"), r"players.pt: field 'num_players' must be a whole number"),
        ("critic.pt", lambda d: d.update(critic_size=10**9), r"critic.pt: field 'critic_size' must be a whole number"),
        ("nan.pt", lambda d: d["model"]["actor.2.weight"].fill_(float("nan")), r"nan.pt: field 'model.actor.2.weight' holds NaN"),
        ("inf.pt", lambda d: d["model"]["critic_mean"].fill_(float("inf")), r"inf.pt: field 'model.critic_mean' holds NaN"),
        ("std0.pt", lambda d: d["model"]["obs_std"].zero_(), r"std0.pt: field 'model.obs_std' holds values outside \[1e-08, 1e\+06\] \(a normaliser's std"),
        # finite but degenerate: every logit would be NaN, and greedy play would take the first legal move
        ("tiny_std.pt", lambda d: d["model"]["obs_std"].fill_(1e-45), r"tiny_std.pt: field 'model.obs_std' holds values outside \[1e-08, 1e\+06\].*degenerate, refused"),
        ("huge_w.pt", lambda d: d["model"]["actor.0.weight"].fill_(3e38), r"huge_w.pt: field 'model.actor.0.weight' holds values outside \[-10000, 10000\] \(a weight; from 3e\+38 to 3e\+38\)"),
        ("huge_mean.pt", lambda d: d["model"]["critic_mean"].fill_(-1e30), r"huge_mean.pt: field 'model.critic_mean' holds values outside \[-1e\+06, 1e\+06\]"),
        ("stdnan.pt", lambda d: d["model"]["obs_std"].fill_(float("nan")), r"stdnan.pt: field 'model.obs_std' holds NaN"),
        ("extra.pt", lambda d: d["model"].update(extra=torch.zeros(1)), r"extra.pt: weights do not fit the network \(missing none, unexpected \['extra'\]\)"),
        ("flag.pt", lambda d: d.update(hint="yes"), r"flag.pt: field 'hint' must be true or false"),
        ("made.pt", lambda d: d["made_by"].update(by="me"), r"made.pt: field 'made_by' must hold exactly command, teacher and steps, got \['by', 'command'"),
        ("steps.pt", lambda d: d["made_by"].update(steps=-1), r"steps.pt: field 'made_by.steps' must be a whole number of env steps, got -1"),
        ("command.pt", lambda d: d["made_by"].update(command="x" * 9000), r"command.pt: field 'made_by.command' must be text of at most 8000"),
    ],
)
def test_a_damaged_checkpoint_is_refused_before_anything_is_built(ckpt, tmp_path, name, edit, message, monkeypatch):
    path = edited(ckpt, tmp_path, name, edit)
    built = []
    monkeypatch.setattr("agents.network.ActorCritic", lambda *a: built.append(a))
    with pytest.raises(CheckpointError, match=message):
        PPOAgent.load(path)
    assert built == []


def test_weights_that_overflow_together_are_refused_by_the_probe(ckpt, tmp_path, monkeypatch):
    """Bounds on each number can miss a combination that overflows: the logits on probe inputs must be finite."""
    monkeypatch.setattr("agents.checkpoint.MAX_WEIGHT", float("inf"))
    path = edited(ckpt, tmp_path, "overflow.pt", lambda d: d["model"]["actor.4.weight"].fill_(3e38))
    with pytest.raises(CheckpointError, match=r"overflow.pt: field 'model': the network's logits or value are not finite on probe inputs"):
        PPOAgent.load(path)


# Fixed seeds, so a run is repeatable: about 3 in 100 of these noises decode to a code instruction
# before they break, which a scan that stops at the first such instruction would call code.
NOISE = [random.Random(seed).randbytes(n) for seed, n in [(s, 4096) for s in range(200)] + [(1, 64), (2, 200)]]


@pytest.mark.parametrize("contents", [NOISE[:200], [b"\x80\x04" + NOISE[200]], [b"PK\x03\x04" + NOISE[201]], [b""]],
                         ids=["random", "pickle-header", "zip-header", "empty"])
def test_random_bytes_are_a_corrupt_file_not_code(tmp_path, contents):
    path = tmp_path / "noise.pt"
    for content in contents:
        path.write_bytes(content)
        with pytest.raises(CheckpointError) as e:
            PPOAgent.load(path)
        text = str(e.value)
        assert text.startswith(f"{path}: not a PPO checkpoint: the file is corrupt or of another kind") and "\n" not in text


def test_a_pickle_that_would_run_code_is_refused_in_one_clear_sentence(tmp_path):
    class Payload:
        def __reduce__(self):
            return (os.system, ("echo this must never run",))

    path = tmp_path / "evil.pt"
    torch.save({"format": "cardzoo-ppo-1", "model": Payload()}, path)
    with pytest.raises(CheckpointError) as e:
        PPOAgent.load(path)
    text = str(e.value)
    assert text.startswith(f"{path}: refused: the file would run code when loaded")
    assert "system" in text and text.endswith(")") and "weights_only" not in text and "\n" not in text
    import pickle

    path.write_bytes(pickle.dumps({"model": Payload()}, protocol=4))  # a bare pickle, not torch's zip
    with pytest.raises(CheckpointError, match="refused: the file would run code when loaded"):
        PPOAgent.load(path)


# ---------------------------------------------------------------- shipped checkpoints
GOLDEN = np.load(Path(__file__).parent / "golden" / "ppo_decisions.npz")


@pytest.mark.parametrize("path", sorted(CHECKPOINT_DIR.glob("*.pt")), ids=lambda p: p.stem)
def test_shipped_checkpoints_decide_as_when_they_were_trained(path: Path):
    """Recorded views (observation, mask) and the moves each shipped policy chose on them, greedy and sampled."""
    views = [{"observation": o, "action_mask": m} for o, m in zip(GOLDEN[f"{path.stem}.observation"], GOLDEN[f"{path.stem}.action_mask"])]
    greedy, sampled = PPOAgent.load(path, seed=0), PPOAgent.load(path, seed=7, greedy=False)
    assert [greedy.act(v) for v in views] == GOLDEN[f"{path.stem}.action"].tolist()
    assert [sampled.act(v) for v in views] == GOLDEN[f"{path.stem}.sampled_seed7"].tolist()


def views_of(path: Path, more: int = 150) -> tuple[np.ndarray, np.ndarray]:
    """The golden views of a shipped checkpoint and `more` decisions of random play."""
    from tests.helpers import play_random_game

    bot = PPOAgent.load(path, seed=0)
    obs, masks = list(GOLDEN[f"{path.stem}.observation"]), list(GOLDEN[f"{path.stem}.action_mask"])
    env = envs.make_raw(bot.game, num_players=bot.num_players)
    seed = 0
    while len(obs) < len(GOLDEN[f"{path.stem}.action"]) + more:
        for _, o, a in play_random_game(env, seed):
            if a is not None and np.count_nonzero(o["action_mask"]) > 1:  # decisions with a choice
                obs.append(o["observation"])
                masks.append(o["action_mask"])
        seed += 1
    return np.stack(obs).astype(np.float32), np.stack(masks)


@pytest.mark.parametrize("path", sorted(CHECKPOINT_DIR.glob("*.pt")), ids=lambda p: p.stem)
def test_the_numpy_actor_is_the_network_and_act_batch_chooses_as_act(path: Path):
    """act's numpy actor gives ActorCritic's logits, and act_batch makes act's choices row by row
    (greedy, and sampling with the same seed), on every shipped checkpoint."""
    obs, masks = views_of(path)
    bot = PPOAgent.load(path, seed=0)
    x = np.stack([bot._to_input(o, m) for o, m in zip(obs, masks)])
    with torch.no_grad():
        want = bot.net.masked_logits(torch.from_numpy(x), torch.from_numpy(masks.astype(bool))).numpy()
    legal = masks.astype(bool)
    np.testing.assert_allclose(bot._logits(x)[legal], want[legal], rtol=1e-4, atol=1e-4)
    # Ma's Jong's features (and hint) reach act and act_batch from compiled calls, never the readable
    # path one view at a time; they are the readable values, bit for bit.
    assert bot._plain or bot._batch_features or bot.game != "not_your_mas_jong"
    if bot._batch_features:
        assert np.array_equal(bot._batch_input(obs, masks), x)
    seats = np.zeros(len(obs), np.int64)
    for greedy in (True, False):
        one, many = (PPOAgent.load(path, seed=11, greedy=greedy) for _ in range(2))
        row_by_row = [one.act({"observation": o, "action_mask": m}) for o, m in zip(obs, masks)]
        batch = many.act_batch(obs, masks, seats)
        assert batch.shape == (len(obs),) and batch.tolist() == row_by_row
        assert many.act_batch(obs[5:9], masks[5:9], seats[5:9]).tolist() == [one.act({"observation": o, "action_mask": m}) for o, m in zip(obs[5:9], masks[5:9])]
    with pytest.raises(ValueError, match="act_batch expects obs"):
        bot.act_batch(obs[0], masks[0], seats[:1])
    # A stream per (row, seat), as the per-game agents would draw (agents/base.py's seed_rows)
    rows = np.arange(4)
    seeds = np.arange(4 * bot.num_players).reshape(4, bot.num_players) + 100
    seat = np.arange(4) % bot.num_players
    batched = PPOAgent.load(path, greedy=False)
    batched.seed_rows(rows, seeds)
    per_game = [PPOAgent.load(path, seed=int(seeds[t, seat[t]]), greedy=False) for t in rows]
    for _ in range(3):
        assert batched.act_batch(obs[:4], masks[:4], seat).tolist() == [
            a.act({"observation": o, "action_mask": m}) for a, o, m in zip(per_game, obs[:4], masks[:4])]


@pytest.mark.parametrize("path", sorted(CHECKPOINT_DIR.glob("*.pt")), ids=lambda p: p.stem)
def test_a_rows_logits_are_the_same_bits_in_any_batch(path: Path):
    """The compiled actor gives a row the bits it gets alone (act's one observation) in batches of
    1, 7, 64 and 4,096 rows drawn from the views, so no engine, batch size or worker count can
    break a near-tie another way; and those logits are the network's, as close to its float64
    values as torch's own float32 forward comes (within 4x its largest error)."""
    obs, masks = views_of(path, more=50)
    bot = PPOAgent.load(path, seed=0)
    x = np.stack([bot._to_input(o, m) for o, m in zip(obs, masks)])
    alone = np.stack([bot._logits(row) for row in x])
    chosen = np.array([bot.act({"observation": o, "action_mask": m}) for o, m in zip(obs, masks)])
    with torch.no_grad():  # the network in float64 is the truth; torch's float32 forward is the yardstick
        want = bot.net.actor((torch.from_numpy(x) - bot.net.obs_mean) / bot.net.obs_std).numpy()
        exact = copy.deepcopy(bot.net).double()
        exact = exact.actor((torch.from_numpy(x).double() - exact.obs_mean) / exact.obs_std).numpy()
    np.testing.assert_allclose(alone, exact, rtol=1e-5, atol=5e-5)
    assert np.abs(alone - exact).max() <= 4 * np.abs(want - exact).max() + 1e-6
    rng = np.random.default_rng(0)
    for size in (1, 7, 64, 4096):
        pick = rng.integers(len(x), size=size)
        assert np.array_equal(bot._logits(x[pick]).view(np.int64), alone[pick].view(np.int64)), size
        assert bot.act_batch(obs[pick], masks[pick], np.zeros(size, np.int64)).tolist() == chosen[pick].tolist(), size


def test_the_compiled_tanh_is_tanh_to_float32_rounding():
    """The actor's tanh (exp written out, so that a layer vectorises) against numpy's in float64:
    odd, exactly +-1 past 9, and within 2e-7 everywhere, tiny inputs and both zeros included."""
    from numba import njit

    from agents.actor_kernels import _tanh

    @njit
    def tanh_all(y, out):
        for i in range(y.shape[0]):
            out[i] = _tanh(y[i])

    grid = np.linspace(-12, 12, 400_001)
    tiny = np.geomspace(1e-30, 1, 20_000)
    y = np.concatenate([grid, tiny, -tiny, [0.0, -0.0, 9.0, 50.0, -50.0]]).astype(np.float32)
    out = np.empty_like(y)
    tanh_all(y, out)
    assert np.abs(out - np.tanh(y.astype(np.float64))).max() < 2e-7
    assert np.array_equal(out[:len(grid)], -out[:len(grid)][::-1])
    assert out[-3:].tolist() == [1.0, 1.0, -1.0] and np.all(np.abs(out) <= 1)


def test_greedy_moves_compute_the_legal_logits_only_and_get_the_same_bits():
    """A row with few legal moves gets only their logits in the last layer: each the same bits as
    the full layer's, so the greedy move is the same, alone or four rows at a time."""
    from agents.actor_kernels import actor_logits, greedy_moves, layer_table

    rng = np.random.default_rng(5)
    n_in, hidden, actions = 40, 32, 390
    weights = [rng.normal(0, 0.3, (n_in, hidden)), rng.normal(0, 0.3, (hidden, hidden)), rng.normal(0, 0.3, (hidden, actions))]
    biases = [rng.normal(0, 0.1, hidden), rng.normal(0, 0.1, hidden), rng.normal(0, 0.1, actions)]
    table, dims = layer_table(rng.normal(0, 1, n_in), rng.uniform(0.5, 2, n_in), weights, biases)
    x = (rng.normal(0, 1, (23, n_in)) * (rng.random((23, n_in)) < 0.4)).astype(np.float32)
    mask = np.zeros((23, actions), np.int8)
    for r in range(23):  # from one legal move to all of them, so both last layers run, in blocks of 4 and alone
        mask[r, rng.choice(actions, size=[1, 2, 5, 48, 49, 390][r % 6], replace=False)] = 1
    full = np.empty((23, actions), np.float32)
    actor_logits(x, table, dims, full)
    for rows in (slice(0, 23), slice(0, 4), slice(3, 4), slice(12, 23)):
        out, moves = np.empty((len(x[rows]), actions), np.float32), np.empty(len(x[rows]), np.int64)
        greedy_moves(x[rows], mask[rows], table, dims, out, moves)
        legal = mask[rows] != 0
        assert np.array_equal(out[legal].view(np.int32), full[rows][legal].view(np.int32))
        want = [int(np.flatnonzero(m)[np.argmax(f[m != 0])]) for f, m in zip(full[rows], mask[rows])]
        assert moves.tolist() == want


def test_act_and_act_batch_refuse_an_empty_or_misshapen_mask_in_one_line():
    bot = PPOAgent.for_game("neu", 4)
    obs, mask = np.zeros((2, bot._obs_size), np.float32), np.zeros((2, envs.info("neu", 4).num_actions), np.int8)
    mask[0, 3] = 1
    with pytest.raises(ValueError, match="asked to act with an all-zeros action mask"):
        bot.act({"observation": obs[1], "action_mask": mask[1]})
    with pytest.raises(ValueError, match=r"all-zeros action mask at batch row\(s\) \[1\]"):
        bot.act_batch(obs, mask, np.zeros(2, np.int64))
    with pytest.raises(ValueError, match=r"action mask has shape \(19,\), the policy expects \(20,\)"):
        bot.act({"observation": obs[0], "action_mask": mask[0, :-1]})
    assert bot.act({"observation": obs[0], "action_mask": mask[0].astype(bool)}) == 3


@pytest.mark.parametrize("path", sorted(CHECKPOINT_DIR.glob("*.json")), ids=lambda p: p.stem)
def test_shipped_commands_still_parse_to_the_recorded_arguments(path: Path):
    import shlex

    sidecar = json.loads(path.read_text())
    words = shlex.split(sidecar["reproduce"])
    modules = ("train.ppo", "train.ppo_warmstart", "train.ppo_features", "train.expert_iteration", "train.ppo_search")
    assert words[:2] == ["python", "-m"] and words[2] in modules
    from train import expert_iteration, ppo_features, ppo_search

    module = dict(zip(modules, (ppo, ppo_warmstart, ppo_features, expert_iteration, ppo_search)))[words[2]]
    args = dataclasses.asdict(module.parse_args(words[3:]))
    recorded = {{"num_workers": "workers"}.get(k, k): v for k, v in sidecar["args"].items()}
    if "run_dir" in recorded:  # files trained before --out was the run folder's flag
        recorded["out"] = os.path.join(recorded.pop("run_dir"), recorded.pop("run_name"))
    assert {k: recorded.get(k, v) for k, v in args.items()} == args  # every argument the command sets, as recorded
    added_since = {"features", "hint", "win_bonus", "overwrite", "kl_clone", "kl_clone_final", "rules", "engine",
                   "departure_weight"}
    assert set(args) - set(recorded) <= added_since  # options added since, at their defaults


def test_a_policy_that_reads_the_heuristics_move_ships_only_under_a_hint_name():
    """The plain name (what make_agent("ppo", ...) plays) is a policy that reads only its observation."""
    shipped = sorted(CHECKPOINT_DIR.glob("*.pt"))
    hinted = {p.name for p in shipped if torch.load(p, weights_only=True).get("hint", False)}
    assert hinted and all(name.endswith("_hint.pt") for name in hinted), hinted
    assert all(not torch.load(p, weights_only=True).get("hint", False) for p in shipped if not p.stem.endswith("_hint"))
    with pytest.raises(FileNotFoundError, match="not_your_mas_jong_4p_hint.pt"):  # the error lists what is shipped
        make_agent("ppo", game="neu", num_players=3)


def test_agents_never_import_train():
    import ast

    for source in Path(__file__).parent.parent.joinpath("agents").rglob("*.py"):
        for node in ast.walk(ast.parse(source.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            assert not any(n == "train" or n.startswith("train.") for n in names), source


def test_training_threads_spin_briefly_unless_told_otherwise():
    """torch's long-spinning OpenMP threads slow a 2-core update many times when other processes are busy."""
    import subprocess
    import sys

    code = "import train, os; print(os.environ.get('GOMP_SPINCOUNT'))"
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    run = lambda e: subprocess.run([sys.executable, "-c", code], env=e, capture_output=True, text=True, check=True).stdout.strip()
    assert run(env) == "10000"
    assert run({**env, "GOMP_SPINCOUNT": "5"}) == "5"
    assert run({**env, "OMP_WAIT_POLICY": "ACTIVE"}) == "None"  # the user's own policy is left alone


def _rezip(src, dst, compress):
    import zipfile

    with zipfile.ZipFile(src) as a, zipfile.ZipFile(dst, "w", compress) as b:
        for info in a.infolist():
            b.writestr(info.filename, a.read(info.filename))
    return dst


def test_a_checkpoint_bomb_is_refused_unread(ckpt, tmp_path, monkeypatch):
    """An extra top-level key, data beyond what the header's network holds, compressed members: refused
    before any tensor is read (torch.load is never called)."""
    import zipfile

    extra = edited(ckpt, tmp_path, "extra_key.pt", lambda d: d.update(payload=torch.zeros(10)))
    sliced = edited(ckpt, tmp_path, "sliced.pt", lambda d: d["model"].update(
        {"obs_mean": torch.zeros(2_000_000)[: d["model"]["obs_mean"].numel()]}))
    bomb = _rezip(edited(ckpt, tmp_path, "raw.pt", lambda d: d.update(payload=torch.zeros(5_000_000))),
                  tmp_path / "bomb.pt", zipfile.ZIP_DEFLATED)
    assert bomb.stat().st_size < 1_000_000
    loads = []
    monkeypatch.setattr("torch.load", lambda *a, **k: loads.append(a))
    with pytest.raises(CheckpointError, match=r"extra_key.pt: refused unread: unknown top-level key\(s\) 'payload'"):
        PPOAgent.load(extra)
    with pytest.raises(CheckpointError, match=r"sliced.pt: refused unread: \d+ bytes of tensors, more than the \d+ the header's network \(hidden 16\) can hold"):
        PPOAgent.load(sliced)
    with pytest.raises(CheckpointError, match=r"bomb.pt: refused unread: member '.*' is compressed"):
        PPOAgent.load(bomb)
    assert loads == []


def test_a_stored_rezip_of_a_good_checkpoint_still_loads(ckpt, tmp_path):
    import zipfile

    PPOAgent.load(_rezip(ckpt, tmp_path / "stored.pt", zipfile.ZIP_STORED))


def test_ma_jongs_features_and_hint_reach_the_compiled_actor_as_the_readable_inputs(tmp_path):
    # A checkpoint that reads both (none is shipped): its compiled inputs are `_to_input`'s, bit for bit,
    # and act and act_batch choose alike, greedy and sampling.
    export = tmp_path / "fh.pt"
    train(tiny(tmp_path, run_name="fh", game="not_your_mas_jong", players=4, steps=1, rollout_steps=1, hidden=64,
               features=True, hint=True, export=str(export)))
    obs, masks = views_of(CHECKPOINT_DIR / "not_your_mas_jong_4p.pt", more=100)  # Ma's Jong 4p views
    bot = PPOAgent.load(export, seed=0)
    assert bot._batch_features and bot._hinter is not None
    x = np.stack([bot._to_input(o, m) for o, m in zip(obs, masks)])
    assert np.array_equal(bot._batch_input(obs, masks), x) and np.array_equal(bot._batch_input(obs[3:4], masks[3:4]), x[3:4])
    seats = np.zeros(len(obs), np.int64)
    for greedy in (True, False):
        one, many = (PPOAgent.load(export, seed=5, greedy=greedy) for _ in range(2))
        assert many.act_batch(obs, masks, seats).tolist() == [one.act({"observation": o, "action_mask": m}) for o, m in zip(obs, masks)]


def test_the_update_count_follows_the_steps_batched_rollouts_play_and_aec_runs_say_how_far_they_go():
    # Rollouts of about twice --rollout-steps (Ma's Jong's): on the batched engine the run still ends at or
    # below --steps, and a plan rebuilt on resume from (update, steps played) is the one a run never stopped
    # holds. On AEC tables the count stays fixed (a shipped command trains the same network again), and the
    # run says after its first update what --steps will really play.
    args = SimpleNamespace(steps=100_000, rollout_steps=1_000)
    plan, played, update = Plan(args, True), 0, 0
    assert plan.num_updates == 100
    while update < plan.num_updates:
        update += 1
        plan.record(update, 2_000 + 37 * (update % 3))
        played += 2_000 + 37 * (update % 3)
        assert Plan(args, True, done=update, played=played).num_updates == plan.num_updates
    assert played <= args.steps < played + 2_100 and update == plan.num_updates < 55
    aec = Plan(args, False)
    aec.record(1, 2_000)
    assert aec.num_updates == 100 and Plan(args, False, done=1, played=2_000).num_updates == 100
    assert aec.overshoot(2_000) == ("update 1 played 2,000 env steps, 2.0x --rollout-steps (each rollout finishes its "
                                    "tables' games): --steps 100,000 will play about 200,000; for about 100,000, give "
                                    "--steps 50,000 (or fewer --num-envs)")
    assert aec.overshoot(1_100) is None and plan.overshoot(2_000) is None

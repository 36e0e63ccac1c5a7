"""The batched self-play rollout (train/rollout_vector.py) builds the batch the AEC rollout builds."""

from __future__ import annotations

import dataclasses
from collections import Counter

import numpy as np
import pytest
import torch

pytest.importorskip("numba")

import envs  # noqa: E402
from train.ppo import Args, Variant, gae, main, parse_args  # noqa: E402
from train.rollout import Buffer, RolloutConfig, Table  # noqa: E402
from train.rollout_vector import VectorRollout, uses_vector_env  # noqa: E402

SCALE = 0.01


def config(args, variant=None) -> RolloutConfig:
    return RolloutConfig.of(args, variant or Variant(), SCALE)


def self_play(game="neu", players=4, num_envs=3, critic="plain", **kw):
    return Args(game=game, players=players, num_envs=num_envs, workers=0, hidden=16, critic=critic, self_play=1.0,
                vs_heuristic=0.0, vs_random=0.0, **kw)


class Greedy(VectorRollout):
    """The learner's most likely legal move: the same move whichever collector asks."""

    @torch.no_grad()
    def decide(self, obs, mask, crit, gen):
        logits = self.net.masked_logits(torch.from_numpy(obs), torch.from_numpy(mask))
        a = logits.argmax(-1)
        logp = torch.log_softmax(logits, -1).gather(-1, a[:, None])[:, 0]
        return a.numpy(), logp.numpy(), self.net.get_value(torch.from_numpy(crit)).numpy()


def policy(rollout: VectorRollout, seed: int = 0) -> dict:
    torch.manual_seed(seed)
    net = type(rollout.net)(rollout.obs_size, rollout.num_actions, rollout.critic_size, 16)
    return {k: v.clone() for k, v in net.state_dict().items()}


def aec_batch(rollout: Greedy, game: str, players: int, seeds: list[int], critic: str,
              seating: list | None = None, snapshots: list | None = None) -> dict:
    """The same games through train/rollout.py's Table and Buffer: every table plays one game, all
    live tables decide once per loop, in table order, as `RolloutWorker.collect` does.
    `seating[t]` is table t's controllers (default: self-play); a ("snapshot", k) seat plays
    `greedy_snapshot` with `snapshots[k]`."""
    from agents import make_agent
    from agents.network import critic_input

    heuristic = make_agent("heuristic", game, players, seed=0)
    buf = Buffer()
    tables = [Table(envs.make_raw(game, num_players=players)) for _ in seeds]
    for i, (t, s) in enumerate(zip(tables, seeds)):
        t.start(s, seating[i] if seating else ["learner"] * players, "", {})
    live = tables
    while live:
        live = [t for t in live if t.advance(buf)]
        for t in live:
            agent = t.env.agent_selection
            seat = t.env.possible_agents.index(agent)
            view = t.env.observe(agent)
            obs, mask = view["observation"].astype(np.float32), view["action_mask"].astype(bool)
            if t.controllers[seat] == "learner":
                crit = critic_input(t.env, agent, obs, critic).astype(np.float32)
                a, logp, v = rollout.decide(obs[None], mask[None], crit[None], None)
                k = buf.add(obs, mask, crit if critic == "global" else None, int(a[0]), float(logp[0]), float(v[0]))
                t.decided(seat, k, buf)
            elif t.controllers[seat] == "heuristic":
                a = [heuristic.act(view)]
            else:
                a = greedy_snapshot(snapshots[t.controllers[seat][1]], obs[None], mask[None], None)
            t.env.step(int(a[0]))
            t.add_rewards(buf, SCALE)
    return buf.arrays(rollout.obs_size, rollout.num_actions, rollout.critic_size)


@torch.no_grad()
def greedy_snapshot(net, obs, masks, gen):
    return net.masked_logits(torch.from_numpy(obs), torch.from_numpy(masks)).argmax(-1)


@pytest.mark.parametrize("game,players,critic", [("neu", 4, "plain"), ("neu", 3, "global"), ("deadfall", 4, "plain"),
                                                 ("not_for_me", 4, "plain"), ("not_your_mas_jong", 4, "global")])
def test_transitions_are_the_aec_rollouts_on_the_same_games(game, players, critic):
    args = self_play(game, players, critic=critic)
    rollout = Greedy(config(args))
    # A share of one step per table: every table plays exactly its first game, recorded.
    batch = rollout.collect(policy(rollout), [], seed=(5, 1), num_steps=args.num_envs)
    ref = aec_batch(rollout, game, players, [rollout.table_seed + t for t in range(args.num_envs)], critic)
    assert len(batch["episodes"]["self"]) == args.num_envs * players
    assert batch["env_steps"] == len(ref["actions"]) == len(batch["actions"])
    for key in ("obs", "masks", "critic_in", "actions", "dones", "next_index"):
        assert np.array_equal(batch[key], ref[key]), key
    for key in ("logprobs", "values", "rewards"):
        np.testing.assert_allclose(batch[key], ref[key], rtol=1e-5, atol=1e-5, err_msg=key)


def chains(batch) -> list[list[int]]:
    pointed = set(batch["next_index"][batch["next_index"] >= 0].tolist())
    out = []
    for head in range(len(batch["actions"])):
        if head not in pointed:
            chain = [head]
            while not batch["dones"][chain[-1]]:
                chain.append(int(batch["next_index"][chain[-1]]))
                assert chain[-1] > chain[-2]  # a seat's next decision comes later
            out.append(chain)
    return out


def test_every_seat_stream_gets_its_rewards_and_ends_with_its_game():
    args = self_play("neu", 4, num_envs=8, rollout_steps=2000)
    rollout = VectorRollout(config(args))
    batch = rollout.collect(policy(rollout), [], seed=(2, 3))
    streams = chains(batch)
    # Every transition is on exactly one stream; one stream per seat per finished game, each ends done.
    assert sorted(i for c in streams for i in c) == list(range(len(batch["actions"])))
    episodes = batch["episodes"]["self"]
    assert len(streams) == len(episodes) == batch["dones"].sum()
    # A stream collects every reward of its seat, also those that arrive on other seats' turns:
    # its rewards add up to the seat's return (Neu's chips move on the turn of the seat that pays).
    # A reward before a seat's first decision has no transition to go to (as in train/rollout.py);
    # in these seeded games none comes that early, which is why every sum matches here.
    stream_returns = sorted(round(float(batch["rewards"][c].sum()) / SCALE, 3) for c in streams)
    assert stream_returns == sorted(round(e["return"], 3) for e in episodes)
    assert any(e["return"] != 0 for e in episodes)
    # GAE runs along each stream alone, and stops at its end.
    adv, _ = gae(batch["rewards"], batch["values"], batch["dones"], batch["next_index"], 0.9, 0.8)
    c = max(streams, key=len)
    a, want = 0.0, []
    for i, j in zip(c[::-1], [None] + c[::-1][:-1]):
        nv = 0.0 if j is None else batch["values"][j]
        a = batch["rewards"][i] + 0.9 * nv - batch["values"][i] + 0.9 * 0.8 * a
        want.append(a)
    np.testing.assert_allclose(adv[c[::-1]], want, rtol=1e-5, atol=1e-6)


def test_same_seed_same_batch_and_the_size_follows_the_budget():
    args = self_play("deadfall", 3, num_envs=5, rollout_steps=600)
    rollout = VectorRollout(config(args))
    pol = policy(rollout)
    a, b, c = (rollout.collect(pol, [], seed=s) for s in ((1, 1), (1, 1), (1, 2)))
    assert all(np.array_equal(a[k], b[k]) for k in a if isinstance(a[k], np.ndarray))
    assert not np.array_equal(a["actions"][:50], c["actions"][:50])
    assert 0.8 * 600 < a["env_steps"] < 1.5 * 600


@pytest.mark.parametrize("share", [1.0, 0.5])
def test_ppo_plays_self_play_and_snapshot_tables_on_the_batched_engine(tmp_path, monkeypatch, share):
    args = self_play("neu", 3, num_envs=4, steps=1200, rollout_steps=300, seed=3, out=str(tmp_path / "run"))
    args = dataclasses.replace(args, self_play=share)
    assert uses_vector_env(config(args))
    collected = []
    original = VectorRollout.collect
    monkeypatch.setattr(VectorRollout, "collect", lambda self, *a, **k: collected.append(1) or original(self, *a, **k))
    net = main(args)
    assert len(collected) >= 2 and (tmp_path / "run" / "final.pt").is_file()
    again = main(dataclasses.replace(args, out=str(tmp_path / "again")))
    assert all(torch.equal(v, again.state_dict()[k]) for k, v in net.state_dict().items())


def test_every_opponent_mix_takes_the_batched_engine_unless_the_policy_reads_more_than_its_view(tmp_path, capsys):
    from train import ppo_warmstart
    from train.ppo import open_collector

    for argv in ([], ["--self-play", "1", "--vs-heuristic", "0", "--vs-random", "0"], ["--vs-heuristic", "1", "--self-play", "0", "--vs-random", "0"]):
        assert uses_vector_env(config(parse_args(argv)))  # the default mix has the heuristic and random
    hinted = ppo_warmstart.parse_args(["--hint"])
    assert not uses_vector_env(config(hinted, ppo_warmstart.variant(hinted)))
    with pytest.raises(ValueError, match="plain observation only"):
        VectorRollout(config(hinted, ppo_warmstart.variant(hinted)))
    with pytest.raises(SystemExit):
        ppo_warmstart.parse_args(["--hint", "--engine", "vector"])
    assert "--engine vector needs a policy that reads the plain observation" in capsys.readouterr().err
    # --engine aec keeps the AEC tables, and the start-up line says which path plays
    aec = parse_args(["--engine", "aec", "--workers", "0"])
    collector, path = open_collector(aec, config(aec))
    assert path == "AEC tables, 64 per worker, in this process" and not isinstance(collector, VectorRollout)


@pytest.mark.parametrize("game,players", [("neu", 4), ("deadfall", 3), ("not_for_me", 4)])
def test_snapshot_tables_record_only_the_learners_seat(game, players, monkeypatch):
    import train.rollout_vector as rv

    monkeypatch.setattr(rv, "snapshot_moves", greedy_snapshot)  # the same moves whichever collector asks
    args = dataclasses.replace(self_play(game, players, num_envs=12), self_play=0.0)
    rollout = Greedy(config(args))
    pool = [policy(rollout, seed=1), policy(rollout, seed=2)]
    batch = rollout.collect(policy(rollout), pool, seed=(4, 2), num_steps=args.num_envs)
    assert [t for t, _, _ in rollout.seating] == list(range(args.num_envs))  # one recorded game per table
    assert {k for _, _, k in rollout.seating} == {0, 1} and all(s >= 0 for _, s, _ in rollout.seating)

    # The same games through train/rollout.py's Table: the learner in its seat, the snapshot in the others.
    snapshots = [rollout.make_net() for _ in pool]
    for net, weights in zip(snapshots, pool):
        net.load_state_dict(weights)
    seating = []
    for t, learner, k in rollout.seating:
        seating.append([("snapshot", k)] * players)
        seating[-1][learner] = "learner"
    seeds = [rollout.table_seed + t for t, _, _ in rollout.seating]
    ref = aec_batch(rollout, game, players, seeds, "plain", seating, snapshots)
    for key in ("obs", "masks", "actions", "dones", "next_index"):
        assert np.array_equal(batch[key], ref[key]), key
    np.testing.assert_allclose(batch["rewards"], ref["rewards"], rtol=1e-5, atol=1e-6)
    # One episode per game, the learner's seat only, logged under the snapshot it played.
    labels = {label: len(eps) for label, eps in batch["episodes"].items()}
    assert labels == dict(Counter(f"snapshot_{k}" for _, _, k in rollout.seating))
    assert batch["env_steps"] > len(batch["actions"])  # the snapshots' moves are played, not recorded
    assert batch["mean_return"] == pytest.approx(np.mean([e["return"] for eps in batch["episodes"].values() for e in eps]))


def test_self_play_and_snapshot_tables_mix_in_one_rollout():
    args = dataclasses.replace(self_play("neu", 4, num_envs=16, rollout_steps=4000), self_play=0.5)
    rollout = VectorRollout(config(args))
    batch = rollout.collect(policy(rollout), [policy(rollout, 1)], seed=(3, 3))
    kinds = {s < 0 for _, s, _ in rollout.seating}
    assert kinds == {True, False}  # both kinds of table were drawn
    games = len(rollout.seating)
    self_games = sum(s < 0 for _, s, _ in rollout.seating)
    assert len(batch["episodes"]["self"]) == 4 * self_games
    assert len(batch["episodes"]["snapshot_0"]) == games - self_games
    assert len(chains(batch)) == 4 * self_games + (games - self_games)  # a stream per learner seat per game


def test_steps_mean_what_they_say_on_the_batched_engine(tmp_path, capsys):
    """A rollout there finishes a game on every table, far more than --rollout-steps here (4 tables of
    Neu games against 50 steps): the updates are counted from the steps played, and the run stops at
    or below --steps instead of playing steps // rollout_steps = 12 such rollouts."""
    import csv

    args = self_play("neu", 3, num_envs=4, steps=600, rollout_steps=50, seed=3, out=str(tmp_path / "run"))
    main(args)
    printed = capsys.readouterr().out
    assert "rollouts: the batched engine (envs.vector_env), 4 tables in this process" in printed
    assert "updates are counted from the steps played: about 12 update(s) for now" in printed
    with open(tmp_path / "run" / "progress.csv") as f:
        steps = [int(r["global_step"]) for r in csv.DictReader(f)]
    per_update = np.diff([0] + steps)
    assert per_update.min() > 3 * args.rollout_steps  # whole games on every table
    assert steps[-1] <= args.steps < steps[-1] + per_update.max()  # no room for another update
    assert f"now {len(steps)} update(s) in all" in printed


@pytest.mark.parametrize("game,players", [("neu", 4), ("deadfall", 3), ("not_for_me", 4), ("not_your_mas_jong", 4)])
def test_heuristic_tables_are_the_aec_rollouts_with_the_readable_heuristic(game, players):
    """The heuristic's seats act through its compiled act_batch; the same games through
    train/rollout.py's Table with the readable heuristic's act() give the same batch."""
    args = dataclasses.replace(self_play(game, players, num_envs=6), self_play=0.0, vs_heuristic=1.0)
    rollout = Greedy(config(args))
    batch = rollout.collect(policy(rollout), [policy(rollout, seed=1)], seed=(6, 1), num_steps=args.num_envs)
    assert [t for t, _, _ in rollout.seating] == list(range(args.num_envs))
    assert {k for _, _, k in rollout.seating} == {"heuristic"}
    seating = []
    for t, learner, _ in rollout.seating:
        seating.append(["heuristic"] * players)
        seating[-1][learner] = "learner"
    ref = aec_batch(rollout, game, players, [rollout.table_seed + t for t in range(args.num_envs)], "plain", seating)
    for key in ("obs", "masks", "actions", "dones", "next_index"):
        assert np.array_equal(batch[key], ref[key]), key
    np.testing.assert_allclose(batch["rewards"], ref["rewards"], rtol=1e-5, atol=1e-6)
    assert set(batch["episodes"]) == {"heuristic"} and len(batch["episodes"]["heuristic"]) == args.num_envs


def test_random_tables_play_legal_moves_and_are_reproducible():
    args = dataclasses.replace(self_play("neu", 4, num_envs=8, rollout_steps=1500), self_play=0.2, vs_heuristic=0.3, vs_random=0.5)
    rollout = VectorRollout(config(args))
    a, b = (rollout.collect(policy(rollout), [policy(rollout, 1)], seed=(7, 1)) for _ in range(2))
    assert all(np.array_equal(a[k], b[k]) for k in a if isinstance(a[k], np.ndarray))
    assert {"random", "heuristic"} <= set(a["episodes"])
    assert len(chains(a)) == sum(len(e) for e in a["episodes"].values())

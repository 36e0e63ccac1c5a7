"""How much of a seat's return can a value function predict? A held-out check of the critic.

    python -m lab.critic_fit --checkpoint agents/checkpoints/not_your_mas_jong_4p_hint.pt
    python -m lab.critic_fit --checkpoint agents/checkpoints/neu_4p.pt --gamma 0.9

PPO's advantage is "return minus the critic's guess". When the critic explains
little of the return, the advantage of a single move is mostly the noise of
later cards, and PPO needs many more samples to see which move was better.
`train/ppo.py` logs the critic's explained variance on each new rollout; this
script asks the sharper question: how much could *any* critic of this width
explain, from the same inputs?

It plays the checkpoint's policy in one seat against three heuristics (the
4-player bar's table; `--opponents self` puts it in every seat instead),
computes each seat's discounted return (`--gamma`, default the checkpoint's),
and then

* scores the checkpoint's own critic on those returns (meaningful when gamma is
  the one it was trained with), and
* fits a fresh critic of the same width on 80% of the seat-games and reports
  its explained variance on the other 20% after each epoch (whole seat-games
  are held out, so a game's neighbouring decisions cannot leak into the test
  set), and a linear (ridge) fit on the same inputs, which cannot memorise.

Explained variance: 1 − Var(return − prediction) / Var(return); 0 is no better
than a constant, below 0 worse.
"""

from __future__ import annotations

import dataclasses
import sys
from typing import Sequence

import numpy as np

from experiments.cli import ArgumentParser


def returns_and_streams(batch: dict, gamma: float) -> tuple[np.ndarray, np.ndarray]:
    """Discounted return of each transition along its seat's own stream, and a stream id per
    transition (one stream = one learner seat in one game; `next_index` links its decisions)."""
    n = len(batch["rewards"])
    ret = np.zeros(n, np.float64)
    for i in range(n - 1, -1, -1):
        ret[i] = batch["rewards"][i] + (0.0 if batch["dones"][i] else gamma * ret[batch["next_index"][i]])
    stream = np.full(n, -1, np.int64)
    count = 0
    for i in range(n):
        if stream[i] < 0:
            j = i
            while True:
                stream[j] = count
                if batch["dones"][j]:
                    break
                j = batch["next_index"][j]
            count += 1
    return ret.astype(np.float32), stream


def explained_variance(pred: np.ndarray, target: np.ndarray) -> float:
    var = float(np.var(target))
    return float("nan") if var == 0 else 1.0 - float(np.var(target - pred)) / var


def critic_fit(path: str, steps: int, gamma: float | None, epochs: int, opponents: str, seed: int = 0) -> dict:
    import torch

    from agents.ppo import PPOAgent, read_checkpoint
    from agents.network import ActorCritic
    from train.ppo_warmstart import Args, variant
    from train.rollout import RolloutConfig, RolloutWorker, measure_scales

    PPOAgent.load(path)  # every check on the file, with its clear errors
    ckpt = read_checkpoint(path)
    # Checkpoints from before an option existed lack it: the option's default is what they used.
    args = {**dataclasses.asdict(Args()), **ckpt["args"]}
    if opponents == "heuristic":
        args.update(self_play=0.0, vs_heuristic=1.0, vs_random=0.0)
    else:
        args.update(self_play=1.0, vs_heuristic=0.0, vs_random=0.0)
    gamma = args["gamma"] if gamma is None else gamma
    torch.manual_seed(seed)
    scales = measure_scales(args["game"], args["players"], args["critic"], seed=args["seed"], games=args["scale_games"],
                            features=args["features"], hint=args.get("hint", False))
    known = {f.name for f in dataclasses.fields(Args)}
    run_args = Args(**{k: v for k, v in args.items() if k in known})
    worker = RolloutWorker(RolloutConfig.of(run_args, variant(run_args), scales["reward_scale"]), num_envs=64)
    batch = worker.collect(ckpt["model"], [ckpt["model"]], seed=(seed, 1), num_steps=steps)
    ret, stream = returns_and_streams(batch, gamma)
    x = torch.as_tensor(batch["critic_in"] if args["critic"] == "global" else batch["obs"])
    y = torch.as_tensor(ret)

    own = ActorCritic(batch["obs"].shape[1], batch["masks"].shape[1], x.shape[1], args["hidden"])
    own.load_state_dict(ckpt["model"])
    with torch.no_grad():
        own_ev = explained_variance(own.get_value(x).numpy(), ret)

    # Hold out whole seat-games; the fresh critic keeps the checkpoint's input normalisation.
    rng = np.random.default_rng(seed)
    streams = rng.permutation(stream.max() + 1)
    test = np.isin(stream, streams[: max(1, len(streams) // 5)])
    train_idx, test_idx = np.flatnonzero(~test), np.flatnonzero(test)
    fresh = ActorCritic(batch["obs"].shape[1], batch["masks"].shape[1], x.shape[1], args["hidden"])
    fresh.load_state_dict({k: v for k, v in ckpt["model"].items() if k.endswith(("_mean", "_std"))}, strict=False)
    optimizer = torch.optim.Adam(fresh.critic.parameters(), lr=3e-4)
    per_epoch = []
    for _ in range(epochs):
        order = torch.as_tensor(rng.permutation(train_idx))
        for start in range(0, len(order), 1024):
            mb = order[start : start + 1024]
            loss = ((fresh.get_value(x[mb]) - y[mb]) ** 2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        with torch.no_grad():
            per_epoch.append(explained_variance(fresh.get_value(x[test_idx]).numpy(), ret[test_idx]))
    # A linear (ridge) fit on the same normalised inputs: it cannot memorise the way an MLP does.
    mean, std = (ckpt["model"][f"{'critic' if args['critic'] == 'global' else 'obs'}_{k}"].numpy() for k in ("mean", "std"))
    z = np.hstack([(x.numpy() - mean) / std, np.ones((len(ret), 1), np.float32)]).astype(np.float64)
    a = z[train_idx]
    w = np.linalg.solve(a.T @ a + 1e-3 * len(train_idx) * np.eye(z.shape[1]), a.T @ ret[train_idx])
    linear_ev = explained_variance(z[test_idx] @ w, ret[test_idx])
    return {
        "game": args["game"], "players": args["players"], "gamma": gamma, "opponents": opponents,
        "transitions": len(ret), "seat_games": int(stream.max() + 1), "held_out_transitions": len(test_idx),
        "return_std": float(ret.std()), "own_critic_ev": own_ev, "fresh_critic_ev": per_epoch, "linear_ev": linear_ev,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = ArgumentParser(prog="python -m lab.critic_fit", description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", required=True, help="a train.ppo checkpoint or exported policy (.pt)")
    parser.add_argument("--steps", type=int, default=60_000, help="env steps of play to collect")
    parser.add_argument("--gamma", type=float, default=None, help="discount per own decision (default: the checkpoint's)")
    parser.add_argument("--epochs", type=int, default=5, help="passes of the fresh critic over its 80%%")
    parser.add_argument("--opponents", default="heuristic", choices=("heuristic", "self"))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.steps < 100:
        parser.error(f"--steps must be at least 100, got {args.steps}")
    if args.gamma is not None and not 0.0 <= args.gamma <= 1.0:
        parser.error(f"--gamma must be in [0, 1], got {args.gamma}")
    if args.epochs < 1:
        parser.error(f"--epochs must be at least 1, got {args.epochs}")
    from agents.ppo import CheckpointError

    try:
        r = critic_fit(args.checkpoint, args.steps, args.gamma, args.epochs, args.opponents, args.seed)
    except (CheckpointError, FileNotFoundError) as e:
        parser.error(str(e))
    print(f"{r['game']}, {r['players']} players, policy vs {r['opponents']}, gamma {r['gamma']}: "
          f"{r['transitions']} decisions in {r['seat_games']} seat-games, return std {r['return_std']:.3f}")
    print(f"checkpoint's critic, explained variance: {r['own_critic_ev']:+.3f}")
    print(f"fresh critic on {r['held_out_transitions']} held-out decisions, explained variance by epoch: "
          + ", ".join(f"{v:+.3f}" for v in r["fresh_critic_ev"]))
    print(f"linear (ridge) fit on the same inputs, held-out explained variance: {r['linear_ev']:+.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""PPO self-play for any cardzoo game, in one file you can read top to bottom.

    python -m train.ppo --game neu --players 4 --steps 2_000_000

The shape follows CleanRL's ppo.py: a dataclass of arguments, a small
actor-critic network, then the loop: collect a rollout, compute advantages
(GAE), update with the clipped PPO objective, log, checkpoint.

What is special about card games, and where it is handled:

* Illegal actions: the network's logits for masked-out actions are set to a
  large negative constant (-1e8, not -inf, so no NaN appears when a softmax
  or an entropy touches them); the entropy counts legal actions only; and
  every transition stores its mask, which the update applies again.
* Turn-based rewards: a card game is an AEC env, so a seat's reward often
  arrives while another seat is acting (someone else's card makes you lose
  the round). Each learner seat keeps its own stream of transitions and a
  reward is added to that seat's latest transition, whoever's turn it was
  (`train/rollout.py`, `Table.add_rewards`). GAE then runs along each
  seat's own stream (`next_index`).
* Self-play: one network plays every seat the learner holds; the other seats
  are frozen past snapshots, the game's heuristic (when it exists) or random.
  A snapshot joins the pool when it beat the previous snapshot.
* `--critic global`: the value function also sees `env.state()` (every
  hand) while the policy sees only its own observation (PerfectDou's
  "perfect-information distillation"). Only training uses the critic.
* Observations are raw counts and totals; a fixed per-feature mean/std,
  measured on random play before training, normalises them and is saved
  inside the network (and so inside every checkpoint). Rewards are scaled by
  one fixed number measured the same way, so one set of hyper-parameters
  fits games whose scores differ by orders of magnitude.
* The env's rewards are chips and tokens, but a 4-player game is won by
  finishing first. `--win-bonus B` adds B (in score units) to the first
  seat's last transition when a game ends, so the return also counts wins.

Rollouts (whole games, many tables side by side, one forward pass for all
waiting decisions, worker processes) live in `train/rollout.py`.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import os
import platform
import sys
import time
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn as nn

import envs
from agents.features import featurizer
from train.rollout import RolloutWorkers, input_size, measure_scales

CHECKPOINT_FORMAT = "cardzoo-ppo-1"
MASKED_LOGIT = -1e8  # "large negative", not -inf: softmax gives exactly 0, and nothing turns NaN


# ---------------------------------------------------------------- arguments
@dataclass
class Args:
    game: str = field(default="neu", metadata={"help": "which game (envs.available_games())"})
    players: int = field(default=4, metadata={"help": "number of players"})
    steps: int = field(default=2_000_000, metadata={"help": "total env agent-steps (all seats) to play"})
    seed: int = field(default=1, metadata={"help": "seed for everything (runs are reproducible on CPU)"})
    critic: str = field(default="plain", metadata={"help": "plain: value sees the observation; global: also env.state()", "choices": ("plain", "global")})
    features: bool = field(default=False, metadata={"help": "the network also reads the game's hand-made features (agents/features.py)"})
    win_bonus: float = field(default=0.0, metadata={"help": "extra reward, in the game's own score units, for finishing first (ties share it); 0: the env's rewards only"})
    hint: bool = field(default=False, metadata={"help": "the network also reads the heuristic's move for its view, one-hot (agents.features.hinter)"})
    # rollouts
    num_workers: int = field(default=2, metadata={"help": "rollout processes (0: collect in this process)"})
    num_envs: int = field(default=64, metadata={"help": "tables played side by side in each worker"})
    rollout_steps: int = field(default=32_768, metadata={"help": "env agent-steps per update (all workers)"})
    # opponents: each table is self-play (learner in every seat) or one learner seat vs one kind of opponent
    self_play: float = field(default=0.3, metadata={"help": "share of tables where the learner holds every seat"})
    vs_heuristic: float = field(default=0.3, metadata={"help": "share of tables vs the game's heuristic (moves to snapshots when there is none)"})
    vs_random: float = field(default=0.1, metadata={"help": "share of tables vs random; the rest is vs past snapshots"})
    imitation_steps: int = field(default=0, metadata={"help": "env steps of heuristic play to imitate before PPO starts (warm start; 0: off)"})
    imitation_epochs: int = field(default=8, metadata={"help": "passes over the imitation data"})
    imitation_smoothing: float = field(default=0.1, metadata={"help": "probability the imitator spreads over all legal actions, so PPO can still explore"})
    pool_size: int = field(default=8, metadata={"help": "most recent snapshots kept as opponents"})
    scale_games: int = field(default=40, metadata={"help": "random games played to measure the observation and reward scales"})
    # PPO
    learning_rate: float = field(default=1e-3, metadata={"help": "Adam learning rate, annealed linearly to 0"})
    gamma: float = field(default=0.995, metadata={"help": "discount per own decision"})
    gae_lambda: float = field(default=0.95, metadata={"help": "GAE lambda"})
    num_minibatches: int = field(default=4, metadata={"help": "minibatches per epoch"})
    update_epochs: int = field(default=4, metadata={"help": "passes over each rollout"})
    clip_coef: float = field(default=0.2, metadata={"help": "PPO ratio clip"})
    ent_coef: float = field(default=0.01, metadata={"help": "entropy bonus"})
    vf_coef: float = field(default=0.5, metadata={"help": "value loss weight"})
    max_grad_norm: float = field(default=0.5, metadata={"help": "gradient norm clip"})
    hidden: int = field(default=128, metadata={"help": "width of the two hidden layers"})
    # output
    run_dir: str = field(default="runs", metadata={"help": "where runs/<name>/ goes (CSV, TensorBoard, checkpoints)"})
    run_name: str = field(default="", metadata={"help": "default: <game>_<players>p_<critic>_s<seed>"})
    checkpoint_every: int = field(default=10, metadata={"help": "save runs/<name>/checkpoint.pt every N updates"})
    resume: bool = field(default=False, metadata={"help": "continue from runs/<name>/checkpoint.pt"})
    export: str = field(default="", metadata={"help": "at the end, also write the policy here (+ a .json sidecar)"})
    progress: bool = field(default=True, metadata={"help": "show a tqdm progress bar"})
    torch_threads: int = field(default=0, metadata={"help": "torch threads for the update; 0: one per rollout worker, which all wait while it runs (at least 1)"})


class OneLineParser(argparse.ArgumentParser):
    def error(self, message: str):  # one clear line, not the whole usage block
        self.exit(2, f"{self.prog}: error: {message}\n")


def integer(text: str) -> int:
    return int(text.replace("_", ""))  # so that --steps 2_000_000 works


def parse_args(argv: list[str] | None = None) -> Args:
    parser = OneLineParser(prog="python -m train.ppo", description=__doc__.split("\n\n")[0])
    for f in dataclasses.fields(Args):
        flag = "--" + f.name.replace("_", "-")
        if f.type in ("bool", bool):
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=f.default, help=f.metadata["help"])
            continue
        kind = {"int": int, "float": float, "str": str}[f.type if isinstance(f.type, str) else f.type.__name__]
        choices = f.metadata.get("choices")
        if f.name == "game":
            choices = envs.available_games()
        parser.add_argument(flag, type=integer if kind is int else kind,
                            default=f.default, choices=choices, help=f.metadata["help"])
    args = Args(**vars(parser.parse_args(argv)))
    try:
        check_args(args)
    except ValueError as e:
        parser.error(str(e))
    return args


def check_args(args: Args) -> None:
    """ValueError with a clear message for arguments that cannot work."""
    if args.game not in envs.available_games():
        raise ValueError(f"unknown game {args.game!r}; valid games: {', '.join(envs.available_games())}")
    envs.make_raw(args.game, num_players=args.players)  # ValueError names the valid player range
    if args.features:
        featurizer(args.game, args.players)  # ValueError names the games that have features
    if not 0 <= args.win_bonus < float("inf"):
        raise ValueError(f"--win-bonus must be 0 or more, got {args.win_bonus}")
    if not 0 <= args.imitation_smoothing < 1:
        raise ValueError(f"--imitation-smoothing must be in [0, 1), got {args.imitation_smoothing}")
    if args.imitation_steps < 0:
        raise ValueError(f"--imitation-steps must be 0 or more, got {args.imitation_steps}")
    if args.run_name and (os.path.isabs(args.run_name) or os.sep in args.run_name or args.run_name in (".", "..")):
        raise ValueError(f"--run-name is a folder name inside --run-dir, not a path: got {args.run_name!r}")
    if args.imitation_steps or args.hint:
        from agents.heuristic import heuristic_class

        heuristic_class(args.game)  # ValueError when the game has no heuristic to imitate or hint with
    for name in ("steps", "imitation_epochs", "num_envs", "rollout_steps", "num_minibatches", "update_epochs", "hidden", "checkpoint_every", "pool_size", "scale_games"):
        if getattr(args, name) < 1:
            raise ValueError(f"--{name.replace('_', '-')} must be at least 1, got {getattr(args, name)}")
    if args.num_workers < 0 or args.torch_threads < 0:
        raise ValueError(f"--num-workers and --torch-threads must be 0 or more, got {args.num_workers} and {args.torch_threads}")
    shares = (args.self_play, args.vs_heuristic, args.vs_random)
    if min(shares) < 0 or sum(shares) > 1:
        raise ValueError("--self-play, --vs-heuristic and --vs-random must be >= 0 and sum to at most 1")
    if not (0 < args.gamma <= 1 and 0 <= args.gae_lambda <= 1 and args.learning_rate > 0):
        raise ValueError("need 0 < gamma <= 1, 0 <= gae-lambda <= 1 and learning-rate > 0")


# ---------------------------------------------------------------- the network
def layer(n_in: int, n_out: int, std: float = np.sqrt(2)) -> nn.Linear:
    lin = nn.Linear(n_in, n_out)
    nn.init.orthogonal_(lin.weight, std)
    nn.init.constant_(lin.bias, 0.0)
    return lin


class ActorCritic(nn.Module):
    """Policy over the fixed action space, and a value estimate.

    The policy reads the seat's observation; the critic reads `critic_input`,
    which is the same observation (plain critic) or observation + env.state()
    + the seat (global critic). Both inputs are normalised by fixed buffers
    saved with the weights.
    """

    def __init__(self, obs_size: int, num_actions: int, critic_size: int, hidden: int = 256):
        super().__init__()
        self.register_buffer("obs_mean", torch.zeros(obs_size))
        self.register_buffer("obs_std", torch.ones(obs_size))
        self.register_buffer("critic_mean", torch.zeros(critic_size))
        self.register_buffer("critic_std", torch.ones(critic_size))
        self.actor = nn.Sequential(
            layer(obs_size, hidden), nn.Tanh(), layer(hidden, hidden), nn.Tanh(), layer(hidden, num_actions, std=0.01)
        )
        self.critic = nn.Sequential(
            layer(critic_size, hidden), nn.Tanh(), layer(hidden, hidden), nn.Tanh(), layer(hidden, 1, std=1.0)
        )

    def masked_logits(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        logits = self.actor((obs - self.obs_mean) / self.obs_std)
        return torch.where(mask, logits, torch.full_like(logits, MASKED_LOGIT))

    def get_value(self, critic_in: torch.Tensor) -> torch.Tensor:
        return self.critic((critic_in - self.critic_mean) / self.critic_std).squeeze(-1)

    def get_action_and_value(self, obs, mask, critic_in, action=None, generator=None):
        logits = self.masked_logits(obs, mask)
        logp_all = torch.log_softmax(logits, dim=-1)
        # exp() of the masked -1e8 entries takes CPU's slow underflow path (20-60x slower with
        # Not For Me's 390 actions), so exponentiate 0 there instead and zero it: same bits.
        probs = torch.where(mask, logp_all, torch.zeros_like(logp_all)).exp() * mask
        if action is None:
            action = sample(probs, generator)
        logp = logp_all.gather(-1, action.unsqueeze(-1)).squeeze(-1)
        # Entropy over the legal actions only: illegal ones have p = 0 and must not add 0 * -1e8 noise.
        entropy = -(probs * logp_all).where(mask, torch.zeros_like(logp_all)).sum(-1)
        return action, logp, entropy, self.get_value(critic_in)


def sample(probs: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
    """One action per row by inverse CDF (much faster than torch.multinomial for small batches).

    An action with probability exactly 0 (masked) is never picked: the cumulative
    sum does not rise at it, so the first entry above u is always a legal one.
    """
    cdf = probs.cumsum(-1)
    u = torch.rand(probs.shape[:-1] + (1,), generator=generator) * cdf[..., -1:]
    return (cdf <= u).sum(-1).clamp_(max=probs.shape[-1] - 1)


# ---------------------------------------------------------------- advantages
def gae(rewards, values, dones, next_index, gamma: float, lam: float):
    """Generalised advantage estimation along each seat's own stream of decisions.

    Transitions of many seats and tables are interleaved in one batch;
    `next_index[i]` is the index of the same seat's next decision (always > i),
    and `dones[i]` marks the last decision of a seat (eliminated or game over).
    Rollouts are whole games, so nothing is cut off and nothing is bootstrapped.
    """
    advantages = np.zeros_like(values)
    for i in range(len(values) - 1, -1, -1):
        if dones[i]:
            next_value, next_adv = 0.0, 0.0
        else:
            j = next_index[i]
            next_value, next_adv = values[j], advantages[j]
        delta = rewards[i] + gamma * next_value - values[i]
        advantages[i] = delta + gamma * lam * next_adv
    return advantages, advantages + values


# ---------------------------------------------------------------- imitation warm start
def imitate(agent: ActorCritic, optimizer, workers, args: Args, bar=None) -> int:
    """Behaviour cloning: fit the policy to the heuristic's decisions and the critic to its returns.

    From scratch, a learner seat facing three heuristics almost never wins a
    round of a set-collection game, so PPO sees next to no signal. Starting
    from a copy of the heuristic (AlphaStar and OpenAI Five also began from
    imitation) PPO only has to find where the heuristic can be beaten.
    The heuristic plays every seat; each decision is a (observation, mask,
    action) example, and its discounted return is the critic's target.
    The target keeps `imitation_smoothing` of its probability spread over the
    legal actions (label smoothing): a deterministic heuristic copied exactly
    leaves a policy with near-zero entropy, and PPO could no longer explore.
    """
    data = workers.collect(agent.state_dict(), [], seed=(args.seed, 0), num_steps=args.imitation_steps, teacher=True)
    _, returns = gae(data["rewards"], np.zeros_like(data["rewards"]), data["dones"], data["next_index"], args.gamma, 1.0)
    obs, masks = torch.as_tensor(data["obs"]), torch.as_tensor(data["masks"])
    critic_in = torch.as_tensor(data["critic_in"]) if args.critic == "global" else obs
    actions, returns = torch.as_tensor(data["actions"]), torch.as_tensor(returns)
    n = len(actions)
    minibatch_size = 1024
    shuffle = torch.Generator().manual_seed(args.seed)
    for epoch in range(args.imitation_epochs):
        for mb in torch.randperm(n, generator=shuffle).split(minibatch_size):
            logp = torch.log_softmax(agent.masked_logits(obs[mb], masks[mb]), -1)
            legal = masks[mb].float()
            target = (1 - args.imitation_smoothing) * nn.functional.one_hot(actions[mb], legal.shape[-1])
            target = target + args.imitation_smoothing * legal / legal.sum(-1, keepdim=True)
            # cross-entropy with the smoothed heuristic; illegal actions have target 0
            policy_loss = -(target * logp.where(masks[mb], torch.zeros_like(logp))).sum(-1).mean()
            value_loss = 0.5 * ((agent.get_value(critic_in[mb]) - returns[mb]) ** 2).mean()
            optimizer.zero_grad()
            (policy_loss + args.vf_coef * value_loss).backward()
            nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
            optimizer.step()
    with torch.no_grad():
        agree = (agent.masked_logits(obs, masks).argmax(-1) == actions).float().mean().item()
    message = f"imitation: {n} heuristic decisions, the policy's top action agrees on {agree:.1%}"
    (bar.write if bar is not None else print)(message)
    return data["env_steps"]


# ---------------------------------------------------------------- checkpoints
def checkpoint_dict(agent: ActorCritic, args: Args, meta: dict, optimizer=None) -> dict:
    """What a checkpoint holds: plain tensors and primitives, so torch.load(weights_only=True) reads it."""
    probe = envs.make_raw(args.game, num_players=args.players)
    return {
        "format": CHECKPOINT_FORMAT,
        "game": args.game,
        "num_players": args.players,
        "obs_size": int(probe.game.obs_size),
        "num_actions": int(probe.game.num_actions),
        "critic": args.critic,
        "features": bool(args.features),  # the policy's input is obs + agents.features for the game
        "hint": bool(args.hint),  # ... + a one-hot of the heuristic's move
        "critic_size": int(agent.critic_mean.numel()),
        "hidden": args.hidden,
        "model": agent.state_dict(),
        "args": dataclasses.asdict(args),
        "meta": meta,
        **({"optimizer": optimizer.state_dict()} if optimizer is not None else {}),
    }


def save(obj: dict, path: str) -> None:
    tmp = path + ".tmp"
    torch.save(obj, tmp)
    os.replace(tmp, path)  # never leave a half-written checkpoint behind


# ---------------------------------------------------------------- training
def main(args: Args) -> ActorCritic:
    check_args(args)
    run_name = args.run_name or f"{args.game}_{args.players}p_{args.critic}_s{args.seed}"
    run_path = os.path.join(args.run_dir, run_name)
    os.makedirs(run_path, exist_ok=True)
    torch.manual_seed(args.seed)
    # The update runs while the rollout workers wait for the next rollout, so it may use their cores.
    torch.set_num_threads(args.torch_threads or max(1, args.num_workers))

    # Fixed normalisation, measured once on random play (seeded, so reproducible).
    scales = measure_scales(args.game, args.players, args.critic, seed=args.seed, games=args.scale_games, features=args.features,
                            hint=args.hint)
    probe = envs.make_raw(args.game, num_players=args.players)
    agent = ActorCritic(input_size(probe.game, args.features, args.hint), probe.game.num_actions, scales["critic_mean"].size, args.hidden)
    with torch.no_grad():
        for name in ("obs_mean", "obs_std", "critic_mean", "critic_std"):
            getattr(agent, name).copy_(torch.as_tensor(scales[name]))
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)
    num_updates = max(1, args.steps // args.rollout_steps)

    # The opponent pool: frozen copies of the network (state dicts). The first is the untrained one.
    pool = [{k: v.clone() for k, v in agent.state_dict().items()}]
    start_update, global_step, wall_before = 1, 0, 0.0
    ckpt_path = os.path.join(run_path, "checkpoint.pt")
    if args.resume:
        if not os.path.exists(ckpt_path):
            raise FileNotFoundError(f"--resume: no checkpoint at {ckpt_path}")
        ckpt = torch.load(ckpt_path, weights_only=True)
        agent.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        pool = ckpt["meta"]["pool"]
        start_update = ckpt["meta"]["update"] + 1
        global_step = ckpt["meta"]["global_step"]
        wall_before = ckpt["meta"]["wall_seconds"]

    writer = None
    try:
        from torch.utils.tensorboard import SummaryWriter

        writer = SummaryWriter(run_path)
    except ImportError:
        pass
    csv_path = os.path.join(run_path, "progress.csv")
    csv_file = open(csv_path, "a" if args.resume else "w", newline="")
    csv_out = None

    workers = RolloutWorkers(args, reward_scale=scales["reward_scale"])
    bar = None
    if args.progress:
        from tqdm import tqdm

        bar = tqdm(total=num_updates * args.rollout_steps, initial=global_step, unit="step", dynamic_ncols=True)
    t_start = time.time()
    try:
        if args.imitation_steps and not args.resume:
            imitation_steps = imitate(agent, optimizer, workers, args, bar)
            global_step += imitation_steps  # heuristic play counts in the training budget
            if bar is not None:
                bar.total += imitation_steps
                bar.update(imitation_steps)
            pool = [{k: v.clone() for k, v in agent.state_dict().items()}]  # the imitator is the first snapshot
        for update in range(start_update, num_updates + 1):
            t0 = time.time()
            # Linear learning-rate annealing from learning_rate to 0.
            lr = args.learning_rate * (1.0 - (update - 1.0) / num_updates)
            optimizer.param_groups[0]["lr"] = lr

            # ---- rollout: whole games, learner seats' decisions become transitions
            rollout_policy = {k: v.clone() for k, v in agent.state_dict().items()}
            batch = workers.collect(rollout_policy, pool, seed=(args.seed, update))
            global_step += batch["env_steps"]
            t_rollout = time.time() - t0
            advantages, returns = gae(
                batch["rewards"], batch["values"], batch["dones"], batch["next_index"], args.gamma, args.gae_lambda
            )
            b_obs = torch.as_tensor(batch["obs"])
            b_masks = torch.as_tensor(batch["masks"])
            b_critic = torch.as_tensor(batch["critic_in"]) if args.critic == "global" else b_obs
            b_actions = torch.as_tensor(batch["actions"])
            b_logprobs = torch.as_tensor(batch["logprobs"])
            b_advantages = torch.as_tensor(advantages)
            b_returns = torch.as_tensor(returns)
            b_values = torch.as_tensor(batch["values"])

            # ---- PPO update
            batch_size = len(b_actions)
            minibatch_size = -(-batch_size // args.num_minibatches)
            shuffle = torch.Generator().manual_seed(args.seed * 1_000_003 + update)
            clipfracs, approx_kl = [], torch.tensor(0.0)
            for epoch in range(args.update_epochs):
                order = torch.randperm(batch_size, generator=shuffle)
                for start in range(0, batch_size, minibatch_size):
                    mb = order[start : start + minibatch_size]
                    _, newlogprob, entropy, newvalue = agent.get_action_and_value(
                        b_obs[mb], b_masks[mb], b_critic[mb], b_actions[mb]
                    )
                    logratio = newlogprob - b_logprobs[mb]
                    ratio = logratio.exp()
                    with torch.no_grad():
                        approx_kl = ((ratio - 1) - logratio).mean()  # http://joschu.net/blog/kl-approx.html
                        clipfracs.append(((ratio - 1.0).abs() > args.clip_coef).float().mean().item())
                    mb_adv = b_advantages[mb]
                    mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std() + 1e-8)
                    pg_loss = torch.max(-mb_adv * ratio, -mb_adv * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)).mean()
                    v_loss = 0.5 * ((newvalue - b_returns[mb]) ** 2).mean()
                    entropy_loss = entropy.mean()
                    loss = pg_loss - args.ent_coef * entropy_loss + args.vf_coef * v_loss
                    optimizer.zero_grad()
                    loss.backward()
                    nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                    optimizer.step()

            # ---- self-play pool: the rollout's policy joins when it beat the latest snapshot
            vs_latest = batch["episodes"].get(f"snapshot_{len(pool) - 1}", [])
            joined = len(vs_latest) >= 8 and float(np.mean([e["return"] for e in vs_latest])) > 0
            if joined:
                pool.append(rollout_policy)
                pool = pool[:1] + pool[1:][-args.pool_size :]

            # ---- logging
            elapsed = time.time() - t0
            var_y = b_returns.var()
            row = {
                "update": update,
                "global_step": global_step,
                "episode_return": batch["mean_return"],
                "winrate_vs_random": winrate(batch["episodes"].get("random")),
                "winrate_vs_heuristic": winrate(batch["episodes"].get("heuristic")),
                "policy_loss": pg_loss.item(),
                "value_loss": v_loss.item(),
                "entropy": entropy_loss.item(),
                "approx_kl": approx_kl.item(),
                "clipfrac": float(np.mean(clipfracs)),
                "explained_variance": float("nan") if var_y == 0 else float(1 - (b_returns - b_values).var() / var_y),
                "learning_rate": lr,
                "pool_size": len(pool) - 1,
                "transitions": batch_size,
                "steps_per_second": batch["env_steps"] / elapsed,
                "rollout_steps_per_second": batch["env_steps"] / t_rollout,
                "wall_seconds": wall_before + time.time() - t_start,
            }
            if csv_out is None:
                csv_out = csv.DictWriter(csv_file, fieldnames=list(row))
                if not args.resume:
                    csv_out.writeheader()
            csv_out.writerow(row)
            csv_file.flush()
            if writer is not None:
                for key, value in row.items():
                    if key not in ("update", "global_step") and value == value:  # skip NaN
                        writer.add_scalar(f"charts/{key}", value, global_step)
            if bar is not None:
                bar.update(batch["env_steps"])
                bar.set_postfix(sps=f"{row['steps_per_second']:.0f}", ret=f"{row['episode_return']:+.2f}",
                                vs_h=f"{row['winrate_vs_heuristic']:.2f}", pool=len(pool) - 1)

            meta = {"update": update, "global_step": global_step, "wall_seconds": row["wall_seconds"], "pool": pool}
            if update % args.checkpoint_every == 0 or update == num_updates:
                save(checkpoint_dict(agent, args, meta, optimizer), ckpt_path)
    finally:
        workers.close()
        csv_file.close()
        if writer is not None:
            writer.close()
        if bar is not None:
            bar.close()

    final = {"global_step": global_step, "wall_seconds": wall_before + time.time() - t_start}
    save(checkpoint_dict(agent, args, final), os.path.join(run_path, "final.pt"))
    if args.export:
        export(agent, args, final, csv_path)
    return agent


def winrate(episodes) -> float:
    """First places of the learner's seat in games against one kind of opponent (NaN: none played)."""
    return float(np.mean([e["rank"] == 1 for e in episodes])) if episodes else float("nan")


def export(agent: ActorCritic, args: Args, final: dict, csv_path: str) -> None:
    """Write a shipped checkpoint (weights only, no optimizer) and its .json sidecar."""
    save(checkpoint_dict(agent, args, {"global_step": final["global_step"]}), args.export)
    command = "python -m train.ppo " + " ".join(a for a in sys.argv[1:]) if sys.argv[0].endswith("ppo.py") else None
    sidecar = {
        "checkpoint": os.path.basename(args.export),
        "game": args.game,
        "num_players": args.players,
        "critic": args.critic,
        "reproduce": command,
        "args": dataclasses.asdict(args),
        "env_steps": final["global_step"],
        "wall_seconds": round(final["wall_seconds"], 1),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPU cores, torch {torch.__version__}, {platform.platform()}",
        "learning_curve_csv": os.path.relpath(csv_path),
    }
    with open(os.path.splitext(args.export)[0] + ".json", "w") as f:
        json.dump(sidecar, f, indent=2)
    plot_learning_curve(csv_path, os.path.splitext(args.export)[0] + "_curve.png", f"{args.game}, {args.players} players", args.players)


def plot_learning_curve(csv_path: str, png_path: str, title: str, num_players: int) -> None:
    """Win rate (first place) of the learner's seat vs the heuristic and vs random, against env steps."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    with open(csv_path) as f:
        rows = list(csv.DictReader(f))
    steps = np.array([float(r["global_step"]) for r in rows])
    fig, ax = plt.subplots(figsize=(6, 3.5))
    for key, label in (("winrate_vs_heuristic", "vs heuristic"), ("winrate_vs_random", "vs random")):
        y = np.array([float(r[key]) for r in rows])
        if np.isnan(y).all():
            continue
        smooth = np.array([np.nanmean(y[max(0, i - 4) : i + 1]) for i in range(len(y))])  # mean of the last 5 updates
        ax.plot(steps, smooth, label=label)
    ax.axhline(1 / num_players, color="grey", lw=0.8, ls="--", label="chance (1/N)")
    ax.set(xlabel="env agent-steps", ylabel="first place, 1 learner seat", title=f"PPO learning curve: {title}", ylim=(0, 1))
    ax.legend()
    fig.tight_layout()
    fig.savefig(png_path, dpi=80)
    plt.close(fig)


if __name__ == "__main__":
    main(parse_args())

"""PPO with a warm start: `train/ppo.py` plus what helped where PPO from scratch fell short.

    python -m train.ppo_warmstart --game neu --players 4 --imitation-steps 300_000 --vs-heuristic 0.6

Every flag of `python -m train.ppo` works here too; this variant adds:

* ``--imitation-steps N``: before PPO, the game's heuristic plays every seat
  for N env steps and the policy is fitted to its moves (behaviour cloning)
  and the critic to its returns; PPO then only has to find where the
  heuristic can be beaten. ``--imitation-smoothing`` keeps part of the
  target spread over the legal moves: an exact copy of a deterministic
  heuristic has near-zero entropy, and PPO could no longer explore.
* ``--features``: the policy also reads the game's hand-made features
  (`agents/features.py`; Ma's Jong and Neu have them).
* ``--hint``: the policy also reads the heuristic's move for its own view,
  one-hot, and can learn where to deviate from it.
* ``--win-bonus B``: B score units go to the first-place seat's last
  reward of a game, so the return also counts wins.
* ``--kl-clone C`` (with ``--kl-clone-final F``): keep what the warm start
  learned. The policy right after imitation is frozen (the clone), and every
  PPO minibatch adds ``c * KL(pi || pi_clone)`` to the loss, the KL taken over
  the legal actions of each decision; ``c`` falls linearly from C at the
  first update to F at the last. The policy can then move away from the
  clone only where the advantages pay for it, more freely as training goes
  on (the human-regularised self-play of piKL). Needs ``--imitation-steps``.
* ``--rules name=value,...``: rule options of the games the run plays, for
  example ``steal_phase=eligible`` in Ma's Jong, which skips the pass-only
  decisions (observations and real decisions are the same as under the
  default rules, and a game takes 2.2 to 2.6 times fewer env steps).

A checkpoint records features and hint, and `agents.PPOAgent` recomputes them
when it plays. Without these flags the run is exactly `python -m train.ppo`'s.

All of it reaches the core loop through one `ppo.Variant` (`variant(args)`):
the policy's extra inputs, the win bonus, the rule options, the warm start
(`imitate`, which collects the teacher's games with `TeacherWorker` on AEC
tables or `TeacherVector` on the batched engine) and the KL penalty.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from train import cli, ppo
from train.cli import parse_rules
from train.rollout import Buffer, RolloutWorker, Table
from train.rollout_vector import VectorRollout

# torch is imported when training starts, so --help is quick.
if TYPE_CHECKING:
    import torch

MAX_IMITATION_STEPS = 2_000_000  # the heuristic's decisions are held in memory, like a rollout


@dataclass
class Args(ppo.Args):
    features: bool = field(default=False, metadata={"help": "the policy also reads the game's hand-made features (agents/features.py)"})
    hint: bool = field(default=False, metadata={"help": "the policy also reads the heuristic's move for its view, one-hot"})
    win_bonus: float = field(default=0.0, metadata={"help": "extra reward, in the game's score units, for finishing first (ties share it)"})
    imitation_steps: int = field(default=0, metadata={"help": f"env steps of heuristic play to imitate before PPO (0: off; at most {MAX_IMITATION_STEPS:,})"})
    imitation_epochs: int = field(default=8, metadata={"help": "passes over the imitation data"})
    imitation_smoothing: float = field(default=0.1, metadata={"help": "share of the imitation target spread over all legal actions, so PPO can still explore"})
    kl_clone: float = field(default=0.0, metadata={"help": "weight of KL(policy || frozen imitation clone) in the PPO loss at the first update (0: off)"})
    kl_clone_final: float = field(default=0.0, metadata={"help": "that weight at the last update; it falls linearly from --kl-clone (at most --kl-clone)"})
    rules: str = field(default="", metadata={"help": "rule options of the games played in training, name=value pairs separated by commas"})


def check_args(args: Args) -> None:
    ppo.check_args(args, variant(args))
    ppo.check_numbers(args, {"imitation_steps": (0, MAX_IMITATION_STEPS), "imitation_epochs": (1, 1000)}, {})
    if not (math.isfinite(args.win_bonus) and args.win_bonus >= 0):
        raise ValueError(f"--win-bonus must be a finite number, 0 or more, got {args.win_bonus}")
    if not (math.isfinite(args.imitation_smoothing) and 0 <= args.imitation_smoothing < 1):
        raise ValueError(f"--imitation-smoothing must be in [0, 1), got {args.imitation_smoothing}")
    for name in ("kl_clone", "kl_clone_final"):
        value = getattr(args, name)
        if not (math.isfinite(value) and 0 <= value <= 1e6):
            raise ValueError(f"--{name.replace('_', '-')} must be a finite number from 0 to 1,000,000, got {value}")
    if args.kl_clone_final > args.kl_clone:
        raise ValueError(f"--kl-clone-final ({args.kl_clone_final}) must be at most --kl-clone ({args.kl_clone}): the weight decays")
    if args.kl_clone and not (args.imitation_steps or getattr(args, "teacher_data", "")):  # (train.ppo_search's flag)
        raise ValueError("--kl-clone keeps the policy near the imitation clone: it needs --imitation-steps"
                         + (" or --teacher-data" if hasattr(args, "teacher_data") else ""))
    if args.features:
        from agents.features import featurizer

        featurizer(args.game, args.players)  # ValueError names the games that have features
    if args.imitation_steps or args.hint:
        from agents.heuristic import heuristic_class

        heuristic_class(args.game)  # ValueError when the game has no heuristic to imitate or hint with


def parse_args(argv: list[str] | None = None) -> Args:
    return ppo.parse_args(argv, Args, check_args, prog="python -m train.ppo_warmstart", description=__doc__.split("\n\n")[0])


class TeacherWorker(RolloutWorker):
    """A rollout worker whose tables are the heuristic in every seat, each of its decisions recorded
    as a transition (the imitation data): the teacher's games."""

    SCRIPTED = {"teacher": "heuristic"}

    def seat(self, rng, pool_len: int):
        return ["teacher"] * self.n, "teacher"

    def answer(self, key, idx: list[int], live: list[Table], views: list, buf: Buffer, gen, actions: list) -> None:
        from agents.network import critic_input

        for i in idx:  # the heuristic decides, and its decision is recorded to be imitated
            t, (agent, seat, view, x) = live[i], views[i]
            a = t.scripted[seat].act(view)
            crit = critic_input(t.env, agent, x, self.critic) if self.critic == "global" else None
            k = buf.add(x, view["action_mask"].astype(bool), crit, a, 0.0, 0.0)  # x is a fresh array
            t.decided(seat, k, buf)
            actions[i] = a


class TeacherVector(VectorRollout):
    """The teacher's games on the batched engine: the heuristic (compiled, the same moves as its
    act()) holds every seat, and each of its decisions is recorded as a transition."""

    def __init__(self, config) -> None:
        from agents import make_agent

        super().__init__(dataclasses.replace(config, self_play=1.0, vs_heuristic=0.0, vs_random=0.0))
        self.teacher = make_agent("heuristic", config.game, config.players, seed=0)

    def decide(self, obs, mask, crit, gen):
        zeros = np.zeros(len(obs), np.float32)  # the teacher's log-probability and value are never read
        return self.teacher.act_batch(obs, mask, np.zeros(len(obs), np.int64)), zeros, zeros


def imitate(agent, optimizer, args: Args, open_collector, say=print) -> int:
    """Behaviour cloning: fit the policy to the heuristic's decisions and the critic to its returns.

    The heuristic plays every seat; each decision is a (observation, mask,
    action) example, and its discounted return is the critic's target. The
    target keeps `imitation_smoothing` of its probability spread over the
    legal actions (label smoothing). Returns the env steps played.
    """
    teacher = open_collector(TeacherWorker, TeacherVector)
    try:
        data = teacher.collect(agent.state_dict(), [], seed=(args.seed, 0), num_steps=args.imitation_steps)
    finally:
        teacher.close()
    agree = fit(agent, optimizer, args, data)
    say(f"imitation: {len(data['actions'])} heuristic decisions, the policy's top action agrees on {agree:.1%}")
    return data["env_steps"]


def fit(agent, optimizer, args, data: dict, targets=None) -> float:
    """Fit the policy to a teacher's decisions and the critic to their discounted returns; returns the
    share of the decisions where the policy's top action is the teacher's.

    `data` holds the columns a teacher collector returns (obs, masks, actions, rewards, dones,
    next_index, critic_in); `targets` [n, num_actions], rows summing to 1 over legal actions, replace
    the one-hot of the teacher's move (soft targets, `train/ppo_search.py`). Either way
    `args.imitation_smoothing` of each target is spread over the legal actions. An optional column
    ``weights`` [n] weighs each decision's policy loss (a minibatch's weighted mean). Reads args'
    imitation_epochs, imitation_smoothing, gamma, vf_coef, max_grad_norm, seed and critic."""
    import torch

    _, returns = ppo.gae(data["rewards"], np.zeros_like(data["rewards"]), data["dones"], data["next_index"], args.gamma, 1.0)
    obs, masks = torch.as_tensor(data["obs"]), torch.as_tensor(data["masks"])
    critic_in = torch.as_tensor(data["critic_in"]) if args.critic == "global" else obs
    actions, returns = torch.as_tensor(data["actions"]), torch.as_tensor(returns)
    n = len(actions)
    weights = torch.as_tensor(data["weights"], dtype=torch.float32) if "weights" in data else None
    shuffle = torch.Generator().manual_seed(args.seed)
    for epoch in range(args.imitation_epochs):
        for mb in torch.randperm(n, generator=shuffle).split(1024):
            logp = torch.log_softmax(agent.masked_logits(obs[mb], masks[mb]), -1)
            legal = masks[mb].float()
            base = torch.nn.functional.one_hot(actions[mb], legal.shape[-1]) if targets is None else targets[mb]
            target = (1 - args.imitation_smoothing) * base
            target = target + args.imitation_smoothing * legal / legal.sum(-1, keepdim=True)
            # cross-entropy with the smoothed heuristic; illegal actions have target 0
            per_row = -(target * logp.where(masks[mb], torch.zeros_like(logp))).sum(-1)
            policy_loss = per_row.mean() if weights is None else (weights[mb] * per_row).sum() / weights[mb].sum()
            value_loss = 0.5 * ((agent.get_value(critic_in[mb]) - returns[mb]) ** 2).mean()
            optimizer.zero_grad()
            (policy_loss + args.vf_coef * value_loss).backward()
            torch.nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
            optimizer.step()
    with torch.no_grad():
        return (agent.masked_logits(obs, masks).argmax(-1) == actions).float().mean().item()


def legal_kl(logp: torch.Tensor, logq: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """KL(p || q) of each row, over the legal actions only (log-probabilities in, one number per row)."""
    import torch

    zero = torch.zeros_like(logp)
    p = logp.where(mask, zero).exp() * mask
    return (p * (logp - logq)).where(mask, zero).sum(-1)


class ClonePenalty:
    """The --kl-clone loss term: weight(update) * mean KL(policy || clone) over a minibatch.

    The clone is the policy as the warm start left it, which `train.ppo` keeps
    as the first snapshot of the opponent pool (also across --resume); it is
    copied once, frozen, at the first minibatch.
    """

    def __init__(self, start: float, final: float) -> None:
        self.start, self.final = start, final
        self.clone = None
        self.last_kl, self.last_weight = float("nan"), float("nan")

    def weight(self, update: int, num_updates: int) -> float:
        """Linear from `start` at update 1 to `final` at update `num_updates`."""
        if num_updates <= 1:
            return self.start
        return self.start + (self.final - self.start) * (update - 1) / (num_updates - 1)

    def freeze(self, agent, clone_weights: dict) -> None:
        self.clone = copy.deepcopy(agent)
        self.clone.load_state_dict(clone_weights)
        self.clone.requires_grad_(False)

    def __call__(self, agent, obs, masks, update: int, num_updates: int, pool: list) -> torch.Tensor:
        import torch

        if self.clone is None:
            self.freeze(agent, pool[0])
        with torch.no_grad():
            clone_logp = torch.log_softmax(self.clone.masked_logits(obs, masks), -1)
        kl = legal_kl(torch.log_softmax(agent.masked_logits(obs, masks), -1), clone_logp, masks).mean()
        self.last_kl, self.last_weight = kl.item(), self.weight(update, num_updates)
        return self.last_weight * kl

    def log(self) -> dict:
        """progress.csv columns: the last minibatch's KL to the clone, and the weight it had."""
        return {"kl_clone": self.last_kl, "kl_clone_weight": self.last_weight}


def variant(args: Args) -> ppo.Variant:
    """This variant's flags, as the one object the core trainer reads (ValueError for malformed --rules)."""
    return ppo.Variant(module="train.ppo_warmstart", features=args.features, hint=args.hint, win_bonus=args.win_bonus,
                       rules=parse_rules(args.rules), warm_start=imitate if args.imitation_steps else None,
                       teacher="heuristic" if args.imitation_steps else "",
                       penalty=ClonePenalty(args.kl_clone, args.kl_clone_final) if args.kl_clone else None)


def main(args: Args):
    check_args(args)
    return ppo.main(args, variant(args))


def run_cli(argv=None) -> int:
    return ppo.run_cli(argv, parse=parse_args, variant_of=variant)


if __name__ == "__main__":
    sys.exit(cli.as_command(run_cli))

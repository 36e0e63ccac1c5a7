"""PPO with oracle guiding (Suphx): the policy first sees every hand, then less and less, then none.

    python -m train.ppo_oracle --game not_your_mas_jong --players 4 --steps 100_000_000

A policy that sees the other hands and the draw pile learns faster what a
good move is: the outcome of a move depends less on luck it cannot see. Suphx
(Li et al. 2020) trains such an *oracle agent* first, then drops the hidden
information gradually, so that the network's weights carry over to a policy
that reads only its own observation. Here:

* the policy's input is the observation followed by the **oracle block**:
  `env.state()` (every hand, the pile) and a one-hot of the seat
  (`agents.network.oracle_size`). The block is scaled but not centred, so a
  hidden entry is 0 and adds nothing to the first layer;
* each entry of the block is shown with probability ``keep`` and set to 0
  otherwise, drawn afresh for every decision (the oracle dropout). ``keep``
  is 1 for the first ``--oracle-full`` share of ``--steps``, falls linearly to
  0 over the next ``--oracle-fade`` share, and stays 0 for the rest: the end
  of the run trains the policy as it will play;
* with ``--imitation-steps N`` (or ``--teacher-data``) the run first distils
  ``--teacher`` (default the heuristic) as `train.ppo_search` does, into the
  observation's columns, the block's weights at 0: PPO then starts from a
  clone that plays as if the block were hidden, and learns to read it.
  ``--kl-clone`` holds the policy near that clone;
* the critic is ``--critic global`` by default: it always sees the whole state
  (PerfectDou's perfect-information critic); it never plays;
* ``final.pt`` and ``--export`` hold the network **without** the oracle
  block: its columns of the first layer are removed, which changes nothing
  once ``keep`` is 0. The agent that plays reads only its observation.
  ``checkpoint.pt`` keeps the block, so that ``--resume`` continues the run;
  `agents.PPOAgent.load` refuses it.

Rollouts play on the batched engine only (the oracle block is written for a
whole batch at once). ``progress.csv`` has an ``oracle_keep`` column: the share
shown in each update's rollout; ``command.txt`` says how the run started and
how to continue it; ``--strength-every N`` logs, every N updates, the edge of
the policy that would play (the network without the block) over the
heuristic in ``strength.csv``, as `train.ppo_search` does. Everything else is
`train.ppo`: its flags, run folder, ``--resume`` and determinism.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import sys
from dataclasses import dataclass, field

import envs
from train import cli, ppo, ppo_search, ppo_warmstart


@dataclass
class Args(ppo_search.Args):
    critic: str = field(default="global", metadata={"help": "global: the value also reads env.state() (the default here); plain: the value reads the policy's input", "choices": ("plain", "global")})
    imitation_steps: int = field(default=0, metadata={"help": "env steps of --teacher's games to distil before PPO, as train.ppo_search does (0: start untrained)"})
    oracle_full: float = field(default=0.3, metadata={"help": "share of --steps in which the policy sees the whole oracle block (every hand)"})
    oracle_fade: float = field(default=0.4, metadata={"help": "share of --steps over which the share of the oracle block shown falls linearly to 0; the rest of the run sees none"})


def distils(args: Args) -> bool:
    return bool(args.imitation_steps or args.teacher_data)


def check_args(args: Args, variant: ppo.Variant | None = None) -> None:
    if distils(args):  # its fit reads the observation only, whichever critic PPO trains (fit_observation_columns)
        ppo_search.check_args(dataclasses.replace(args, critic="plain"))
    else:
        ppo_warmstart.check_args(args)
    ppo.check_numbers(args, {"strength_every": (0, 10**9), "strength_deals": (2, 10**6)}, {})
    from agents.features import has_batch_features

    if args.hint or (args.features and not has_batch_features(args.game)):
        raise ValueError("train.ppo_oracle: the policy reads its observation (with --features only where the game has "
                         "them for a whole batch: Ma's Jong) and the oracle block; --hint is refused")
    for name in ("oracle_full", "oracle_fade"):
        value = getattr(args, name)
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"--{name.replace('_', '-')} must be a share of --steps from 0 to 1, got {value}")
    if args.oracle_full + args.oracle_fade >= 1.0:
        raise ValueError(f"--oracle-full + --oracle-fade must leave part of the run without the oracle (below 1), "
                         f"got {args.oracle_full + args.oracle_fade:g}: the network that plays never sees it")
    from envs.vector import KERNELS  # numba loads here, only when asked

    if args.engine == "aec" or args.game not in KERNELS:
        raise ValueError("train.ppo_oracle plays on the batched engine (the oracle block is written for a whole batch): "
                         f"{'drop --engine aec' if args.engine == 'aec' else f'{args.game} has none'}")


def parse_args(argv: list[str] | None = None) -> Args:
    return ppo.parse_args(argv, Args, check_args, prog="python -m train.ppo_oracle", description=__doc__.split("\n\n")[0])


class Schedule:
    """global_step -> the share of the oracle block shown: 1, then a linear fall to 0, then 0."""

    def __init__(self, steps: int, full: float, fade: float) -> None:
        self.start, self.end = full * steps, (full + fade) * steps
        self.last = 1.0  # the share given for the latest rollout

    def __call__(self, global_step: int) -> float:
        share = 1.0 if global_step < self.start else 0.0 if global_step >= self.end else \
            1.0 - (global_step - self.start) / (self.end - self.start)
        self.last = share
        return share


def variant(args: Args) -> ppo.Variant:
    schedule = Schedule(args.steps, args.oracle_full, args.oracle_fade)

    def without_oracle(net):
        if schedule.last > 0:  # the updates were too few for a part without it (a short run)
            print(f"train.ppo_oracle: note: the last update still saw {schedule.last:.0%} of the oracle block; final.pt "
                  "plays without it, so it is not quite the policy trained (give more --steps)")
        return strip(net, args.game, args.players, args.features)

    v = ppo_search.variant(args) if distils(args) else ppo_warmstart.variant(args)
    v.module, v.oracle, v.strip, v.after_update = "train.ppo_oracle", schedule, without_oracle, AfterUpdate(args)
    if distils(args):
        v.warm_start = functools.partial(ppo_search.distil, variant_of=variant, fit=fit_observation_columns)
    return v


class Padded:
    """`net` as a network of the plain observation: every input it lacks (the oracle block, and the
    global critic's state) is 0."""

    def __init__(self, net) -> None:
        self.net = net

    @staticmethod
    def pad(x, width: int):
        import torch

        return torch.cat([x, x.new_zeros(x.shape[0], width - x.shape[1])], 1)

    def masked_logits(self, obs, masks):
        return self.net.masked_logits(self.pad(obs, self.net.obs_mean.numel()), masks)

    def get_value(self, x):
        return self.net.get_value(self.pad(x, self.net.critic_mean.numel()))

    def parameters(self):
        return self.net.parameters()


def fit_observation_columns(agent, optimizer, args, data: dict, targets=None) -> float:
    """The distillation's fit (`ppo_warmstart.fit`) of the teacher's observations, with the oracle
    block's weights at 0 first: the clone plays the same whatever the block holds, until PPO teaches
    it to read it. The teacher's games record no state, so the value is fitted on the observation."""
    import torch

    from agents.network import input_size, oracle_size

    facts = envs.info(args.game, args.players)
    start = input_size(facts, args.features)
    block = slice(start, start + oracle_size(facts))
    with torch.no_grad():
        agent.actor[0].weight[:, block] = 0.0
        agent.critic[0].weight[:, block] = 0.0
    return ppo_warmstart.fit(Padded(agent), optimizer, dataclasses.replace(args, critic="plain"), data, targets)


class AfterUpdate:
    """After each update: command.txt (how the run started and how to continue it), and with
    --strength-every the strength log of the policy that would play (the network without the block)."""

    def __init__(self, args: Args) -> None:
        self.args, self.strength = args, ppo_search.StrengthLog(args) if args.strength_every else None

    def __call__(self, agent, row: dict) -> None:
        folder = ppo.run_folder(self.args)
        if not os.path.isfile(os.path.join(folder, "command.txt")):  # a run that distils wrote it first
            ppo_search.write_command(self.args, folder, "train.ppo_oracle")
        if self.strength is not None:
            self.strength(strip(agent, self.args.game, self.args.players, self.args.features), row)


def strip(net, game: str, num_players: int, features: bool = False):
    """The same network without the oracle block's input columns (in the actor and the critic):
    the same logits and values as `net` on any input whose block is 0."""
    import torch

    from agents.network import ActorCritic, input_size, oracle_size

    facts = envs.info(game, num_players)
    plain, block = input_size(facts, features), oracle_size(facts)
    kept = torch.ones(net.obs_mean.numel(), dtype=torch.bool)
    kept[plain : plain + block] = False
    critic_kept = torch.ones(net.critic_mean.numel(), dtype=torch.bool)
    critic_kept[plain : plain + block] = False  # the critic reads the policy's input first
    out = ActorCritic(plain, net.actor[-1].out_features, int(critic_kept.sum()), net.actor[0].out_features)
    state = {k: v.clone() for k, v in net.state_dict().items()}
    for name, columns in (("obs_mean", kept), ("obs_std", kept), ("critic_mean", critic_kept), ("critic_std", critic_kept)):
        state[name] = state[name][columns]
    state["actor.0.weight"] = state["actor.0.weight"][:, kept]
    state["critic.0.weight"] = state["critic.0.weight"][:, critic_kept]
    out.load_state_dict(state)
    return out


def main(args: Args):
    check_args(args)
    return ppo.main(args, variant(args))


def run_cli(argv=None) -> int:
    return ppo.run_cli(argv, parse=parse_args, variant_of=variant)


if __name__ == "__main__":
    sys.exit(cli.as_command(run_cli))

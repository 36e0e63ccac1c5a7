"""The warm-start variant with the heuristic's games played on the batched engine (Ma's Jong with `--features`).

    python -m train.ppo_features --game not_your_mas_jong --players 4 --features --imitation-steps 1_000_000

Every flag of `python -m train.ppo_warmstart` works here and means the same;
the one difference is where the teacher's games play. `train.ppo_warmstart`
plays them on AEC tables, computing the heuristic's move and the features one
view at a time (about 1,000 decisions a second); here the heuristic sits in
every seat of `--num-envs` x `--workers` tables of `envs.vector_env`, its
moves come from its compiled `act_batch` and the features from
`agents.features_batch` (the same values as `agents.features`), so a
warm start of millions of decisions takes minutes. Only decisions with a
choice are recorded (a pass-only steal decision teaches nothing); every
reward goes to each seat's latest recorded decision (one that reaches a seat
before its first decision with a choice in a game is dropped: rare), and a table stops
recording when its share of `--imitation-steps` is used up and its game ends,
so every stream ends with its game. The fit is `train.ppo_warmstart.imitate`'s.
PPO after the warm start plays where `train.ppo_warmstart` plays.
"""

from __future__ import annotations

import sys

import numpy as np

import envs
from train import cli, ppo, ppo_warmstart
from train.cli import parse_rules
from train.rollout import measure_scales
from train.rollout_vector import GrowingColumns

# agents.features loads numba: it is imported where a check or the teacher needs it, so --help is quick.


class VectorTeacher:
    """The heuristic in every seat of a batched engine, each of its decisions with a choice recorded
    (the collector `train.ppo_warmstart.imitate` reads: `collect(...)` returns the same columns)."""

    def __init__(self, args, rules: dict, reward_scale: float) -> None:
        from agents import make_agent
        from agents.features import BATCH_FEATURES, has_batch_features

        if not has_batch_features(args.game):
            raise ValueError(f"train.ppo_features needs batched features, which {args.game} has none of; "
                             f"games with them: {', '.join(BATCH_FEATURES)}")
        self.args, self.rules, self.reward_scale = args, rules, reward_scale
        self.n, self.num_tables = args.players, args.num_envs * max(1, args.workers)
        self.heuristic = make_agent("heuristic", args.game, self.n, seed=0)

    def collect(self, policy, pool, seed, num_steps: int) -> dict:
        from agents.features_batch import with_features

        if self.args.critic != "plain":
            raise ValueError("train.ppo_features: the batched teacher fits the plain critic only (--critic plain)")
        N, n = self.num_tables, self.n
        rng = np.random.default_rng([*seed, 1])
        venv = envs.vector_env(self.args.game, N, n, seed=int(rng.integers(2**40)), **self.rules)
        facts = envs.info(self.args.game, n, **self.rules)
        size = facts.obs_size + 81
        buf = GrowingColumns({"obs": ((size,), np.float32), "masks": ((facts.num_actions,), bool),
                              "actions": ((), np.int64), "rewards": ((), np.float32), "dones": ((), bool),
                              "next_index": ((), np.int64)})
        open_ = np.full((N, n), -1, np.int64)  # each seat's latest recorded decision at each table
        live = np.ones(N, bool)
        table_steps = np.zeros(N, np.int64)
        share, steps = num_steps / N, 0
        obs, mask, seat = venv.reset()
        while live.any():
            actions = self.heuristic.act_batch(obs, mask, seat)
            choice = live & (mask.astype(bool).sum(1) > 1)
            rows = np.flatnonzero(choice)
            if rows.size:
                k = buf.reserve(rows.size)
                c = buf.cols
                c["obs"][k] = with_features(obs[rows], n)
                c["masks"][k], c["actions"][k] = mask[rows].astype(bool), actions[rows]
                prev = open_[rows, seat[rows]]
                c["next_index"][prev[prev >= 0]] = k[prev >= 0]
                open_[rows, seat[rows]] = k
            obs, mask, seat, rewards, done = venv.step(actions)
            steps += int(live.sum())
            table_steps[live] += 1
            hit = (open_ >= 0) & (rewards != 0) & live[:, None]
            buf.cols["rewards"][open_[hit]] += rewards[hit] * np.float32(self.reward_scale)
            ended = np.flatnonzero(done & live)
            if ended.size:
                o_end = open_[ended]
                buf.cols["dones"][o_end[o_end >= 0]] = True
                open_[ended] = -1
                live[ended] = table_steps[ended] < share
        out = buf.arrays()
        out["critic_in"] = np.zeros((0, 0), np.float32)
        out["env_steps"] = steps
        return out

    def close(self) -> None:
        pass


def batched_imitate(agent, optimizer, args, open_collector, say=print) -> int:
    """`train.ppo_warmstart.imitate` with the teacher's games on the batched engine."""
    rules = parse_rules(args.rules)
    scale = measure_scales(args.game, args.players, args.critic, seed=args.seed, games=ppo.SCALE_GAMES, rules=rules,
                           features=args.features, hint=args.hint)["reward_scale"]
    return ppo_warmstart.imitate(agent, optimizer, args, lambda *classes: VectorTeacher(args, rules, scale), say)


def variant(args) -> ppo.Variant:
    v = ppo_warmstart.variant(args)
    v.module = "train.ppo_features"
    if args.imitation_steps:
        v.warm_start = batched_imitate
    return v


def check_args(args) -> None:
    from agents.features import BATCH_FEATURES, has_batch_features

    ppo_warmstart.check_args(args)
    if args.imitation_steps and (not has_batch_features(args.game) or not args.features or args.hint):
        raise ValueError(f"train.ppo_features plays the teacher on the batched engine for a game with batched "
                         f"features ({', '.join(BATCH_FEATURES)}), with --features and without --hint")


def parse_args(argv=None):
    return ppo.parse_args(argv, ppo_warmstart.Args, check_args, prog="python -m train.ppo_features",
                          description=__doc__.split("\n\n")[0])


def main(args):
    check_args(args)
    return ppo.main(args, variant(args))


def run_cli(argv=None) -> int:
    return ppo.run_cli(argv, parse=parse_args, variant_of=variant)


if __name__ == "__main__":
    sys.exit(cli.as_command(run_cli))

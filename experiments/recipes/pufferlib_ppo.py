"""Train one masked PPO policy shared by every seat on PufferLib's vectorisation of the parallel env.

    pip install 'cardzoo[pufferlib]'
    python -m experiments.recipes.pufferlib_ppo --game neu --players 4 --steps 20000 --backend multiprocessing

PufferLib's `PettingZooPufferEnv` takes ``<game>_v0.parallel_env()`` as it
is, and `pufferlib.vector.make` steps many of them, in this process
(``--backend serial``) or in worker processes (``multiprocessing``). PufferLib
packs the Dict observation into one row of bytes per seat;
`pufferlib.pytorch.nativize_tensor` unpacks it into the float32
``"observation"`` and the int8 ``"action_mask"``.

Every row is one seat of one table, and one policy plays them all (self-play).
Only the seat to act plays its move: ``infos[agent]["acting_seat"]`` names it
(``minimal_infos=True`` keeps the infos to that one int), and the others'
masks allow only the ignored action 0. The PPO update is the CleanRL recipe's
(`experiments.recipes.cleanrl_ppo`), with its policy and entropy terms limited
to the acting rows; every row's value is fitted, since rewards reach seats
that did not act. PufferLib resets a finished table on the step after its last
one (that step's actions are ignored), so that step is stored like any other
row that did not act. Afterwards the policy plays every seat in turn against
random players.

The extra installs ``pufferlib-core`` 3.0.7, PufferLib's environment and
vectorisation layer (numpy, gymnasium and psutil only), which leaves the
installed torch alone. The full ``pufferlib`` package builds from source and
downloads raylib while building, and the later ``pufferlib-core`` releases
either pin ``torch==2.9.0`` or bring PufferLib's trainer, whose advantage
kernel has to be compiled for the installed torch; this recipe needs neither.
"""

from __future__ import annotations

import sys
import time
from dataclasses import replace
from functools import partial

import numpy as np

from experiments.cli import count
from experiments.recipes.common import parse_args, report, require, score_vs_random


def add_options(p) -> None:
    p.add_argument("--backend", choices=["serial", "multiprocessing"], default="serial",
                   help="PufferLib's vectorisation: serial (this process) or multiprocessing (worker processes)")
    p.add_argument("--workers", type=count, default=2, help="worker processes for --backend multiprocessing")


def puffer_table(game: str, players: int, buf=None, seed: int = 0):
    """One table for `pufferlib.vector.make`: the game's parallel env in PufferLib's emulation layer."""
    import pufferlib.emulation

    import envs

    env = envs.module(game).parallel_env(num_players=players, minimal_infos=True)
    return pufferlib.emulation.PettingZooPufferEnv(env=env, buf=buf, seed=seed)


def main(argv=None) -> int:
    cli = parse_args("pufferlib_ppo", __doc__.splitlines()[0], argv, steps=20_000, extra=add_options)
    require("pufferlib_ppo", ["pufferlib.emulation", "pufferlib.vector", "pufferlib.pytorch"], "pufferlib")
    import pufferlib.pytorch
    import pufferlib.vector
    import torch
    from torch import optim

    from experiments.recipes.cleanrl_ppo import Agent, Args, gae, greedy, ppo_update

    args = replace(Args(), num_envs=8, num_steps=64)
    if cli.backend == "multiprocessing" and args.num_envs % cli.workers:
        sys.stderr.write(f"python -m experiments.recipes.pufferlib_ppo: error: --workers must divide {args.num_envs}\n")
        return 2
    np.random.seed(cli.seed)
    torch.manual_seed(cli.seed)
    torch.set_num_threads(1)  # a few hundred rows a minibatch: one thread is fastest
    players = cli.players

    make_table = partial(puffer_table, cli.game, players)  # module-level: worker processes unpickle it
    if cli.backend == "serial":
        vecenv = pufferlib.vector.make(make_table, num_envs=args.num_envs, backend=pufferlib.vector.Serial)
    else:
        # batch_size = every table: each step returns all of them, in table order (so their infos line up).
        vecenv = pufferlib.vector.make(make_table, num_envs=args.num_envs, backend=pufferlib.vector.Multiprocessing,
                                       num_workers=cli.workers, batch_size=args.num_envs)
    native = pufferlib.pytorch.nativize_dtype(vecenv.emulated)
    rows = args.num_envs * players
    n_actions = int(vecenv.single_action_space.n)

    def unpack(raw_obs, infos):
        """Observation [rows, obs], mask [rows, actions] and acting [rows] of one vecenv step."""
        fields = pufferlib.pytorch.nativize_tensor(torch.as_tensor(np.asarray(raw_obs)), native)
        acting = torch.zeros(rows, dtype=torch.bool)
        for table, info in enumerate(infos):  # one dict {agent: info} per table, in table order
            seat = next(iter(info.values()))["acting_seat"]
            if seat >= 0:
                acting[table * players + seat] = True
        return fields["observation"].float().clone(), fields["action_mask"].bool().clone(), acting

    raw, infos = vecenv.reset(seed=cli.seed)
    next_obs, next_mask, next_acting = unpack(raw, infos)
    n_obs = next_obs.shape[1]
    agent = Agent(n_obs, n_actions)
    optimizer = optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)
    obs = torch.zeros((args.num_steps, rows, n_obs))
    masks = torch.zeros((args.num_steps, rows, n_actions), dtype=torch.bool)
    acting = torch.zeros((args.num_steps, rows), dtype=torch.bool)
    actions = torch.zeros((args.num_steps, rows), dtype=torch.long)
    logprobs, rewards, dones, values = (torch.zeros((args.num_steps, rows)) for _ in range(4))
    next_done = torch.zeros(rows)

    decisions, start = 0, time.time()
    iterations = 0
    while decisions < cli.steps:
        iterations += 1
        for step in range(args.num_steps):
            obs[step], masks[step], acting[step], dones[step] = next_obs, next_mask, next_acting, next_done
            with torch.no_grad():
                action, logprob, _, value = agent.get_action_and_value(next_obs, next_mask)
            actions[step], logprobs[step], values[step] = action, logprob, value.flatten()
            decisions += int(next_acting.sum())
            raw, reward, terminal, truncation, infos = vecenv.step(action.numpy())
            rewards[step] = torch.as_tensor(np.asarray(reward), dtype=torch.float32)
            next_done = torch.as_tensor(np.logical_or(terminal, truncation), dtype=torch.float32)
            next_obs, next_mask, next_acting = unpack(raw, infos)

        with torch.no_grad():
            advantages, returns = gae(rewards, values, dones, agent.get_value(next_obs).reshape(1, -1), next_done,
                                      args.gamma, args.gae_lambda)
        ppo_update(agent, optimizer, args, {
            "obs": obs.reshape((-1, n_obs)), "masks": masks.reshape((-1, n_actions)), "actions": actions.reshape(-1),
            "logprobs": logprobs.reshape(-1), "advantages": advantages.reshape(-1), "returns": returns.reshape(-1),
            "values": values.reshape(-1),
        }, acting=acting.reshape(-1))
    seconds = time.time() - start
    vecenv.close()

    score = score_vs_random(greedy(agent), cli.game, players, cli.eval_games, seed=10_000 + cli.seed)
    report(f"PufferLib {cli.backend} + CleanRL-style PPO (one shared policy)", cli, decisions, seconds, score)
    return 0


if __name__ == "__main__":
    sys.exit(main())

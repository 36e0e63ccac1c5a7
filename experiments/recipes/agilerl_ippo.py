"""Train AgileRL's IPPO on every seat at once (shared networks), the loop of AgileRL's IPPO example.

    python -m experiments.recipes.agilerl_ippo --game neu --players 4 --steps 20000

AgileRL (2.58) cannot share an environment with cardzoo's pinned extras: it
requires ``pettingzoo<1.27`` and ``tensordict==0.13``, and imports ``peft``
without declaring it. Give it a virtual environment of its own (CPU torch
first, so that pip never pulls a CUDA build)::

    python -m venv agilerl-env && . agilerl-env/bin/activate
    pip install torch==2.13.0
    pip install agilerl==2.58.0 peft==0.21.0 'pettingzoo==1.26.1'
    pip install -e . --no-deps && pip install numba tqdm matplotlib pillow==11.3.0

The env is the parallel form with Box observations and each mask in infos as a
list of ints (``envs.box_obs(..., mask_form="list")``): IPPO looks for agents
without a mask by ``None in masks``, which fails on NumPy arrays. The agents'
names (player_0, player_1, ...) put every seat in one group, so one actor and
one critic play them all. The loop is written out, as in AgileRL's IPPO
example, rather than `train_multi_agent_on_policy`: that function's
single-env wrapper resets a finished game but hands on the finished game's
infos, so the first move of each new game is chosen under stale masks, and its
vectorised envs stack the masks into arrays, which fail the same ``None in``
test. Afterwards the policy plays every seat in turn against random players.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from experiments.recipes.common import parse_args, report, require, score_vs_random


def main(argv=None) -> int:
    args = parse_args("agilerl_ippo", __doc__.splitlines()[0], argv, steps=20_000)
    require("agilerl_ippo", ["agilerl"], "", how="install AgileRL in a virtual environment of its own (see --help)")
    import torch
    from agilerl.algorithms import IPPO

    import envs

    torch.manual_seed(args.seed)
    env = envs.box_obs(envs.module(args.game).parallel_env(num_players=args.players), mask_form="list")
    agents = env.possible_agents
    learn_step = min(256, max(32, args.steps))
    ippo = IPPO([env.observation_space(a) for a in agents], [env.action_space(a) for a in agents], agent_ids=agents,
                learn_step=learn_step, batch_size=min(64, learn_step))

    def batched(d: dict) -> dict:
        return {a: np.asarray(v)[None] for a, v in d.items()}

    start, steps, games = time.time(), 0, 0
    obs, info = env.reset(seed=args.seed)
    done = {a: np.zeros(1) for a in agents}
    while steps < args.steps:
        fields = states, actions, log_probs, rewards, dones, values = tuple({a: [] for a in agents} for _ in range(6))
        for _ in range(learn_step):
            action, log_prob, _, value = ippo.get_action(obs=batched(obs), infos=info)
            next_obs, reward, term, trunc, info = env.step({a: int(np.asarray(action[a]).reshape(-1)[0]) for a in agents})
            for a in agents:
                for field, x in zip(fields, (np.asarray(obs[a])[None], action[a], log_prob[a], np.array([reward[a]]), done[a], value[a])):
                    field[a].append(x)
            done = {a: np.array([float(term[a] or trunc[a])]) for a in agents}
            obs, steps = next_obs, steps + 1
            if not env.agents:  # the game is over: a new deal, with its own masks
                obs, info = env.reset(seed=args.seed + 1 + games)
                games += 1
                done = {a: np.zeros(1) for a in agents}
        ippo.learn((states, actions, log_probs, rewards, dones, values, batched(obs), done))
    seconds = time.time() - start

    def act(observation, action_mask):
        with torch.no_grad():
            chosen, *_ = ippo.get_action(obs={agents[0]: observation[None]}, infos={agents[0]: {"action_mask": action_mask.tolist()}})
        return int(np.asarray(chosen[agents[0]]).reshape(-1)[0])

    ippo.set_training_mode(False)
    score = score_vs_random(act, args.game, args.players, args.eval_games, seed=10_000 + args.seed)
    report("AgileRL IPPO (every seat, shared networks) vs random", args, steps, seconds, score)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Train one seat with a one-file, CleanRL-style masked PPO over gymnasium.make_vec, against heuristic players.

    python -m experiments.recipes.cleanrl_ppo --game neu --players 4 --steps 20000

No extra needed: only gymnasium and torch. The shape is CleanRL's ``ppo.py``
(an ``Args`` dataclass of hyperparameters, ``layer_init``, an ``Agent`` with
``get_value`` / ``get_action_and_value``, fixed-size rollout storage, GAE,
minibatch epochs with clipped policy and value losses), with invalid-action
masking: the logits of illegal moves are pushed to -1e8 before sampling, so
illegal moves get probability 0 and no gradient.

The envs come from gymnasium's registry: ``gym.make_vec(envs.gym_id(game))``
(``"cardzoo/Neu-v0"``), in ``AutoresetMode.SAME_STEP``. In that mode a step
that ends a game already returns the next game's first observation and mask,
which is what CleanRL's storage layout assumes: every stored step is a real
decision, and ``next_done`` marks where one game ends. The mask is read from
``info["action_mask"]``; ``minimal_infos=True`` keeps the infos to that key.

Episode logging: as in CleanRL, each env is wrapped in gymnasium's
``RecordEpisodeStatistics``. CleanRL's ``if "episode" in infos`` sees nothing
in ``SAME_STEP`` mode: the step that ends a game returns the next game's infos,
and the finished game's (``"episode"`` included) are in ``info["final_info"]``,
its rows flagged by ``info["final_info"]["_episode"]``. The recipe logs from
there (`finished_games`). Afterwards the policy plays every seat in turn
against random players.
"""

from __future__ import annotations

import random
import sys
import time
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn, optim
from torch.distributions.categorical import Categorical

from experiments.recipes.common import parse_args, report, score_vs_random


@dataclass
class Args:
    """CleanRL's PPO hyperparameters (its names; total_timesteps and seed come from the command line)."""

    num_envs: int = 4
    num_steps: int = 128
    learning_rate: float = 2.5e-4
    anneal_lr: bool = True
    gamma: float = 0.99
    gae_lambda: float = 0.95
    num_minibatches: int = 4
    update_epochs: int = 4
    norm_adv: bool = True
    clip_coef: float = 0.2
    clip_vloss: bool = True
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    opponents: str = "heuristic"


def layer_init(layer, std=np.sqrt(2), bias_const=0.0):
    torch.nn.init.orthogonal_(layer.weight, std)
    torch.nn.init.constant_(layer.bias, bias_const)
    return layer


class Agent(nn.Module):
    """CleanRL's separate actor and critic MLPs; the actor's logits are masked to the legal moves."""

    def __init__(self, n_obs: int, n_actions: int, hidden: int = 128):
        super().__init__()
        self.critic = nn.Sequential(
            layer_init(nn.Linear(n_obs, hidden)), nn.Tanh(),
            layer_init(nn.Linear(hidden, hidden)), nn.Tanh(),
            layer_init(nn.Linear(hidden, 1), std=1.0),
        )
        self.actor = nn.Sequential(
            layer_init(nn.Linear(n_obs, hidden)), nn.Tanh(),
            layer_init(nn.Linear(hidden, hidden)), nn.Tanh(),
            layer_init(nn.Linear(hidden, n_actions), std=0.01),
        )

    def get_value(self, x):
        return self.critic(x)

    def masked_logits(self, x, mask):
        return self.actor(x).masked_fill(~mask, -1e8)  # illegal moves: probability 0, no gradient

    def get_action_and_value(self, x, mask, action=None):
        probs = Categorical(logits=self.masked_logits(x, mask))
        if action is None:
            action = probs.sample()
        return action, probs.log_prob(action), probs.entropy(), self.critic(x)


def finished_games(info: dict) -> list[tuple[float, int]]:
    """(return, length) of each game that ended at this step, from RecordEpisodeStatistics'
    ``"episode"``, which SAME_STEP autoreset moves into ``info["final_info"]``."""
    final = info.get("final_info", {})
    if "episode" not in final:
        return []
    episode = final["episode"]
    return [(float(episode["r"][i]), int(episode["l"][i])) for i in np.flatnonzero(final["_episode"])]


def gae(rewards, values, dones, next_value, next_done, gamma: float, gae_lambda: float):
    """Advantages and returns over a rollout [steps, rows]; dones[t] = 1 where obs[t] starts a new game."""
    advantages = torch.zeros_like(rewards)
    lastgaelam = 0
    num_steps = rewards.shape[0]
    for t in reversed(range(num_steps)):
        if t == num_steps - 1:
            nextnonterminal = 1.0 - next_done
            nextvalues = next_value
        else:
            nextnonterminal = 1.0 - dones[t + 1]
            nextvalues = values[t + 1]
        delta = rewards[t] + gamma * nextvalues * nextnonterminal - values[t]
        advantages[t] = lastgaelam = delta + gamma * gae_lambda * nextnonterminal * lastgaelam
    return advantages, advantages + values


def ppo_update(agent: Agent, optimizer, args: Args, b: dict, acting=None) -> None:
    """CleanRL's minibatch epochs over one flattened rollout `b` (obs, masks, actions, logprobs,
    advantages, returns, values). `acting` (bool per row, optional) limits the policy and entropy
    terms to the rows whose action was played; the value is fitted on every row."""
    batch_size = b["obs"].shape[0]
    minibatch_size = batch_size // args.num_minibatches
    b_inds = np.arange(batch_size)
    for epoch in range(args.update_epochs):
        np.random.shuffle(b_inds)
        for start in range(0, batch_size, minibatch_size):
            mb_inds = b_inds[start:start + minibatch_size]
            _, newlogprob, entropy, newvalue = agent.get_action_and_value(
                b["obs"][mb_inds], b["masks"][mb_inds], b["actions"][mb_inds])
            logratio = newlogprob - b["logprobs"][mb_inds]
            ratio = logratio.exp()
            w = torch.ones_like(ratio) if acting is None else acting[mb_inds].float()
            n = w.sum().clamp_min(1)

            mb_advantages = b["advantages"][mb_inds]
            if args.norm_adv:
                mean = (mb_advantages * w).sum() / n
                std = (((mb_advantages - mean) ** 2 * w).sum() / n).sqrt()
                mb_advantages = (mb_advantages - mean) / (std + 1e-8)

            pg_loss1 = -mb_advantages * ratio
            pg_loss2 = -mb_advantages * torch.clamp(ratio, 1 - args.clip_coef, 1 + args.clip_coef)
            pg_loss = (torch.max(pg_loss1, pg_loss2) * w).sum() / n

            newvalue = newvalue.view(-1)
            mb_returns, mb_values = b["returns"][mb_inds], b["values"][mb_inds]
            if args.clip_vloss:
                v_loss_unclipped = (newvalue - mb_returns) ** 2
                v_clipped = mb_values + torch.clamp(newvalue - mb_values, -args.clip_coef, args.clip_coef)
                v_loss_clipped = (v_clipped - mb_returns) ** 2
                v_loss = 0.5 * torch.max(v_loss_unclipped, v_loss_clipped).mean()
            else:
                v_loss = 0.5 * ((newvalue - mb_returns) ** 2).mean()

            entropy_loss = (entropy * w).sum() / n
            loss = pg_loss - args.ent_coef * entropy_loss + v_loss * args.vf_coef
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
            optimizer.step()


def greedy(agent: Agent):
    """The trained policy as `act(observation, action_mask) -> action`: its most likely legal move."""
    def act(observation, action_mask):
        x = torch.as_tensor(observation, dtype=torch.float32)[None]
        with torch.no_grad():
            logits = agent.masked_logits(x, torch.as_tensor(action_mask, dtype=torch.bool)[None])[0]
        return int(logits.argmax())

    return act


def main(argv=None) -> int:
    cli = parse_args("cleanrl_ppo", __doc__.splitlines()[0], argv, steps=20_000)
    import gymnasium as gym

    import envs

    args = Args()
    batch_size = args.num_envs * args.num_steps
    num_iterations = -(-cli.steps // batch_size)  # whole rollouts, at least --steps env steps

    random.seed(cli.seed)
    np.random.seed(cli.seed)
    torch.manual_seed(cli.seed)
    torch.set_num_threads(1)  # a few hundred rows a minibatch: one thread is fastest
    device = torch.device("cpu")

    vec = gym.make_vec(
        envs.gym_id(cli.game), num_envs=args.num_envs, vectorization_mode="sync",
        vector_kwargs={"autoreset_mode": gym.vector.AutoresetMode.SAME_STEP},
        num_players=cli.players, seat=0, opponents=args.opponents, minimal_infos=True,
        wrappers=[gym.wrappers.RecordEpisodeStatistics],  # CleanRL's episode statistics, per env
    )
    assert isinstance(vec.single_action_space, gym.spaces.Discrete), "only discrete action spaces are supported"
    n_obs = int(np.prod(vec.single_observation_space.shape))
    n_actions = int(vec.single_action_space.n)

    agent = Agent(n_obs, n_actions).to(device)
    optimizer = optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)

    obs = torch.zeros((args.num_steps, args.num_envs, n_obs)).to(device)
    masks = torch.zeros((args.num_steps, args.num_envs, n_actions), dtype=torch.bool).to(device)
    actions = torch.zeros((args.num_steps, args.num_envs), dtype=torch.long).to(device)
    logprobs = torch.zeros((args.num_steps, args.num_envs)).to(device)
    rewards = torch.zeros((args.num_steps, args.num_envs)).to(device)
    dones = torch.zeros((args.num_steps, args.num_envs)).to(device)
    values = torch.zeros((args.num_steps, args.num_envs)).to(device)

    global_step = 0
    episodes: list[tuple[float, int]] = []  # (return, length) of every finished training game
    start_time = time.time()
    next_obs, info = vec.reset(seed=cli.seed)
    next_obs = torch.Tensor(next_obs).to(device)
    next_mask = torch.as_tensor(info["action_mask"], dtype=torch.bool, device=device)
    next_done = torch.zeros(args.num_envs).to(device)

    for iteration in range(1, num_iterations + 1):
        if args.anneal_lr:
            frac = 1.0 - (iteration - 1.0) / num_iterations
            optimizer.param_groups[0]["lr"] = frac * args.learning_rate

        for step in range(args.num_steps):
            global_step += args.num_envs
            obs[step] = next_obs
            masks[step] = next_mask
            dones[step] = next_done
            with torch.no_grad():
                action, logprob, _, value = agent.get_action_and_value(next_obs, next_mask)
                values[step] = value.flatten()
            actions[step] = action
            logprobs[step] = logprob

            next_obs, reward, terminations, truncations, info = vec.step(action.cpu().numpy())
            next_done = np.logical_or(terminations, truncations)
            rewards[step] = torch.tensor(reward, dtype=torch.float32).to(device).view(-1)
            next_obs, next_done = torch.Tensor(next_obs).to(device), torch.Tensor(next_done).to(device)
            next_mask = torch.as_tensor(info["action_mask"], dtype=torch.bool, device=device)
            episodes += finished_games(info)

        if episodes:  # CleanRL's episodic_return, from final_info (see the module docstring)
            recent = episodes[-100:]
            print(f"global_step={global_step}, games={len(episodes)}, "
                  f"episodic_return (last {len(recent)})={np.mean([r for r, _ in recent]):+.3f}")

        # GAE, bootstrapped from the value of the observation after the rollout.
        with torch.no_grad():
            next_value = agent.get_value(next_obs).reshape(1, -1)
            advantages, returns = gae(rewards, values, dones, next_value, next_done, args.gamma, args.gae_lambda)
        ppo_update(agent, optimizer, args, {
            "obs": obs.reshape((-1, n_obs)), "masks": masks.reshape((-1, n_actions)), "actions": actions.reshape(-1),
            "logprobs": logprobs.reshape(-1), "advantages": advantages.reshape(-1), "returns": returns.reshape(-1),
            "values": values.reshape(-1),
        })

    seconds = time.time() - start_time
    vec.close()

    score = score_vs_random(greedy(agent), cli.game, cli.players, cli.eval_games, seed=10_000 + cli.seed)
    report(f"CleanRL-style masked PPO (seat 0 vs {args.opponents})", cli, global_step, seconds, score)
    return 0


if __name__ == "__main__":
    sys.exit(main())

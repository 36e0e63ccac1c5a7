"""Train one masked PPO policy shared by every seat with TorchRL, in the shape of TorchRL's multi-agent PPO tutorial.

    pip install 'cardzoo[torchrl]'
    python -m experiments.recipes.torchrl_ppo --game neu --players 4 --steps 20000

TorchRL's own `PettingZooWrapper` takes the AEC env (``use_mask=True``, which
AEC envs require). Three settings fit it to a turn-based card game:

* ``group_map=MarlGroupMapType.ALL_IN_ONE_GROUP`` stacks every seat in one
  group, ``"agents"``, so one `MultiAgentMLP` with shared parameters plays
  them all (self-play);
* the observation is the Dict's ``"observation"`` entry, so its key is nested:
  ``("agents", "observation", "observation")``; the wrapper moves the Dict's
  ``"action_mask"`` to ``("agents", "action_mask")``, which TorchRL's
  `MaskedCategorical` reads;
* only one seat acts at each step (``("agents", "mask")``). Every seat's value
  is trained at every step, since rewards reach seats that did not act, but
  the policy and entropy terms count only the acting seat: the wrapper gives
  the others an all-true action mask and their sampled actions are not played.

``--form parallel`` wraps ``<game>_v0.parallel_env()`` instead, the same game
one decision per step. There every seat is live, so the wrapper's ``"mask"``
is all true, and the seat to act is ``("agents", "info", "acting_seat")``;
the other seats' action masks allow only action 0, which is ignored.

The env is made with ``minimal_infos=True``: the wrapper copies every info key
into the tensordict at every step, and the recipe needs none of them (the
parallel form keeps ``acting_seat``).
Afterwards the policy plays every seat in turn against random players.
"""

from __future__ import annotations

import math
import sys
import time

import numpy as np

from experiments.recipes.common import parse_args, report, require, score_vs_random

GROUP = "agents"  # the one group of MarlGroupMapType.ALL_IN_ONE_GROUP


def add_options(p) -> None:
    p.add_argument("--form", choices=["aec", "parallel"], default="aec",
                   help="wrap the AEC env (env()) or the parallel env (parallel_env())")


def main(argv=None) -> int:
    args = parse_args("torchrl_ppo", __doc__.splitlines()[0], argv, steps=20_000, extra=add_options)
    require("torchrl_ppo", ["torchrl", "tensordict"], "torchrl")
    import torch
    from tensordict.nn import TensorDictModule
    from torch import nn
    from torchrl.collectors import Collector
    from torchrl.data.replay_buffers import ReplayBuffer
    from torchrl.data.replay_buffers.samplers import SamplerWithoutReplacement
    from torchrl.data.replay_buffers.storages import LazyTensorStorage
    from torchrl.envs import RewardSum, TransformedEnv
    from torchrl.envs.libs.pettingzoo import PettingZooWrapper
    from torchrl.envs.utils import MarlGroupMapType
    from torchrl.modules import MaskedCategorical, MultiAgentMLP, ProbabilisticActor
    from torchrl.objectives import ClipPPOLoss, ValueEstimators

    import envs

    torch.manual_seed(args.seed)
    torch.set_num_threads(1)  # one table's step at a time and minibatches of a few hundred rows: one thread is fastest
    frames_per_batch = min(1000, args.steps)
    n_iters = math.ceil(args.steps / frames_per_batch)
    num_epochs, minibatch_size = 4, min(256, frames_per_batch)

    if args.form == "aec":
        game_env = envs.make(args.game, num_players=args.players, minimal_infos=True)
    else:
        game_env = envs.module(args.game).parallel_env(num_players=args.players, minimal_infos=True)
    base = PettingZooWrapper(
        game_env,
        use_mask=True,
        group_map=MarlGroupMapType.ALL_IN_ONE_GROUP,
        categorical_actions=True,
        seed=args.seed,
    )
    env = TransformedEnv(base, RewardSum(in_keys=[base.reward_key], out_keys=[(GROUP, "episode_reward")]))
    obs_key = (GROUP, "observation", "observation")
    n_obs = env.observation_spec[obs_key].shape[-1]
    n_actions = env.full_action_spec[base.action_key].space.n

    # Policy: one MLP shared by every seat (share_params=True), each seat seeing only its own observation.
    policy_net = MultiAgentMLP(
        n_agent_inputs=n_obs, n_agent_outputs=n_actions, n_agents=args.players,
        centralised=False, share_params=True, depth=2, num_cells=128, activation_class=nn.Tanh,
    )
    policy = ProbabilisticActor(
        module=TensorDictModule(policy_net, in_keys=[obs_key], out_keys=[(GROUP, "logits")]),
        in_keys={"logits": (GROUP, "logits"), "mask": (GROUP, "action_mask")},
        out_keys=[base.action_key],
        distribution_class=MaskedCategorical,
        return_log_prob=True,
        log_prob_key=(GROUP, "sample_log_prob"),
    )
    # Critic: a decentralised value per seat (IPPO). centralised=True would give MAPPO's critic,
    # which sees every seat's observation (hidden cards included) during training only.
    critic_net = MultiAgentMLP(
        n_agent_inputs=n_obs, n_agent_outputs=1, n_agents=args.players,
        centralised=False, share_params=True, depth=2, num_cells=128, activation_class=nn.Tanh,
    )
    critic = TensorDictModule(critic_net, in_keys=[obs_key], out_keys=[(GROUP, "state_value")])

    collector = Collector(env, policy, frames_per_batch=frames_per_batch, total_frames=n_iters * frames_per_batch)
    replay_buffer = ReplayBuffer(
        storage=LazyTensorStorage(frames_per_batch), sampler=SamplerWithoutReplacement(), batch_size=minibatch_size
    )
    # reduction="none": the per-seat terms are reduced below, the policy's over the acting seat only.
    loss_module = ClipPPOLoss(actor_network=policy, critic_network=critic, clip_epsilon=0.2,
                              entropy_coeff=0.01, normalize_advantage=False, reduction="none")
    loss_module.loss_mask_key = None
    loss_module.set_keys(
        reward=base.reward_key, action=base.action_key, sample_log_prob=(GROUP, "sample_log_prob"),
        value=(GROUP, "state_value"), done=(GROUP, "done"), terminated=(GROUP, "terminated"),
    )
    loss_module.make_value_estimator(ValueEstimators.GAE, gamma=0.99, lmbda=0.95)
    gae = loss_module.value_estimator
    optim = torch.optim.Adam(loss_module.parameters(), lr=3e-4)

    seats = torch.arange(args.players)

    def acting_seats(batch):
        """[batch, seats] 1.0 where the seat's action was played."""
        if args.form == "aec":
            return batch[GROUP, "mask"].float()
        return (batch[GROUP, "info", "acting_seat"] == seats).float()

    start, frames = time.time(), 0
    for data in collector:
        frames += data.numel()
        with torch.no_grad():
            gae(data, params=loss_module.critic_network_params, target_params=loss_module.target_critic_network_params)
        replay_buffer.extend(data.reshape(-1))
        for _ in range(num_epochs):
            for _ in range(frames_per_batch // minibatch_size):
                batch = replay_buffer.sample()
                acting = acting_seats(batch)
                losses = loss_module(batch)
                turns = acting.sum().clamp_min(1)
                loss = ((losses["loss_objective"] * acting).sum() / turns
                        + (losses["loss_entropy"] * acting).sum() / turns
                        + losses["loss_critic"].mean())
                optim.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(loss_module.parameters(), 1.0)
                optim.step()
        collector.update_policy_weights_()
    seconds = time.time() - start
    collector.shutdown()

    def act(observation, action_mask):
        # MultiAgentMLP takes one row per seat; with shared parameters and no centralisation each row is independent.
        obs = torch.as_tensor(observation, dtype=torch.float32).expand(args.players, -1)
        with torch.no_grad():
            logits = policy_net(obs)[0].numpy()
        return int(np.flatnonzero(action_mask)[np.argmax(logits[action_mask.astype(bool)])])

    score = score_vs_random(act, args.game, args.players, args.eval_games, seed=10_000 + args.seed)
    report(f"TorchRL PPO ({args.form} env, one shared policy)", args, frames, seconds, score)
    return 0


if __name__ == "__main__":
    sys.exit(main())
